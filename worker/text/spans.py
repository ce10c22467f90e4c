"""Verbatim spans: the parts of a sentence a translation must carry over unchanged (URLs, e-mail
addresses, file paths and names, command lines, phone numbers, IBANs and other grouped numbers,
numbers, codes, versions, hashtags, @handles, IP addresses, placeholders and printf directives).

``find_spans`` returns non-overlapping spans in text order. Each kind is one regular expression;
where matches overlap, the earliest wins, then the longest, then the kind listed first in ``KINDS``.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

# A span never runs into a neighbouring word: these lookarounds stand in for \b where a kind can
# begin or end with punctuation.
_L = r"(?<![\w@#$%&/\\.-])"
_R = r"(?![\w@/\\-])"
_TRAIL = ".,;:!?'\"»”’"  # sentence punctuation stripped from the end of URLs, paths and e-mails

_EXTENSIONS = ("diff|patch|rs|go|rb|php|pl|kt|kts|swift|scala|lua|ipynb|jsx|tsx|vue|scss|sass|whl|jar|war|ps1|cs|"
               "hs|ex|exs|erl|dart|gradle|proto|rst|tex|sln|csproj|webp|mkv|mov|flac|ogg|epub|rtf|dmg|pkg|img|"
               "qcow2|vmdk|service|socket|timer|desktop|plist|properties|mod|sum|xz|bz2|7z|rar|zst|sqlite3?|"
               "parquet|onnx|pt|pth|npz|npy|pkl|wasm|pub|asc|gpg|ics|vcf|"
               "txt|csv|tsv|json|ya?ml|xml|html?|css|js|ts|py|java|cpp|c|h|sh|bat|exe|dll|so|zip|gz|tar|tgz|"
               "pdf|docx?|xlsx?|pptx?|odt|png|jpe?g|gif|svg|mp3|mp4|wav|log|ini|cfg|conf|toml|md|sql|db|"
               "apk|deb|rpm|iso|msi|bin|dat|bak|tmp|lock|env|pem|key|crt")

# One printf directive: C (flags, width and precision incl. * and positional n$, length modifiers,
# conversions; %m of glibc, %@ of Objective-C), %% , Python %(name)s, Qt %1.
_PRINTF = (r"%(?:\d+\$)?[-+#0']*(?:\d+|\*(?:\d+\$)?)?(?:\.(?:\d+|\*(?:\d+\$)?))?(?:hh|ll|I64|I32|[hlLzjtq])?"
           r"[diouxXeEfFgGaAcCsSpnm@]"
           r"|%\(\w+\)[-+#0 ]*\d*(?:\.\d+)?[diouxXeEfFgGcrsa]|%%|%[1-9]\d?(?![\d$])")
# Command words that open a command line (``pip install --upgrade requests``) when an option, a
# subcommand or a path-like argument follows; bare words after those are its arguments.
_COMMANDS = ("git|pip3?|pipx|npm|npx|yarn|pnpm|apt|apt-get|dnf|yum|pacman|brew|snap|flatpak|docker|podman|"
             "kubectl|helm|make|cmake|cargo|rustc|python3?|node|deno|ls|cd|cp|mv|rm|mkdir|rmdir|chmod|chown|chgrp|cat|"
             "grep|sed|awk|find|curl|wget|ssh|scp|rsync|tar|unzip|gzip|systemctl|journalctl|conda|poetry|uv|pytest|"
             "tox|nmt|gcc|clang|javac|mvn|gradle|dotnet|terraform|ansible|vim|nano|echo|export|ps|df|du|ln|xargs|"
             "openssl|gpg|ffmpeg|sudo")
_SUBCOMMANDS = ("status|install|uninstall|upgrade|update|add|commit|push|pull|clone|checkout|switch|branch|merge|"
                "rebase|log|diff|fetch|init|run|build|start|stop|restart|enable|disable|reload|exec|ps|logs|apply|"
                "get|describe|delete|create|test|remove|rm|list|ls|show|info|search|config|login|logout|publish|"
                "inspect|images|tag|clean|all|check|compose|venv|freeze|reset|stash|cherry-pick|bisect|revert|"
                "autoremove|dist-upgrade|version|help")
_STOP = ("the|a|an|and|or|but|to|in|on|at|of|for|from|with|by|as|if|when|then|than|before|after|first|again|"
         "now|once|is|are|was|were|be|it|this|that|these|those|which|so|also|too|instead|here|there|command|"
         "will|can|should|must|may|might|you|we|they|he|she|i|your|our|my|not|only|until|while|every|each")
_OPTION = r"-{1,2}[A-Za-z0-9][\w-]*(?:=[^\s`'\"]+)?"
_ARG_LIKE = r"(?=[^\s`'\"]*(?:[/~=$@]|[.:]\w))[^\s`'\"<>]*[^\s`'\"<>.,;:!?)]"  # paths, URLs, files, versions
_BARE = r"(?!(?:" + _STOP + r")(?![\w-]))[a-z][\w.+-]*(?=\s|$|[.,;!?)](?:\s|$))"
_COMMAND_ARG = r"(?:" + _OPTION + r"|(?:" + _SUBCOMMANDS + r")(?![\w-])|" + _ARG_LIKE + r")"

PATTERNS: dict[str, str] = {
    "placeholder": (
        r"\{\{\s*[\w.]+\s*\}\}"  # {{var}}
        r"|\$\{\w+(?:[:#%/][^{}\s]*)?\}"  # ${VAR} ${VAR:-x}
        r"|%\{\w+\}|%<\w+>[-+#0]*\d*(?:\.\d+)?[sdifxXeEgGbBoc]"  # Ruby %{name} %<name>s
        r"|\{[\w.]*(?:\[\w*\])?(?:![rsa])?(?::[^{}\s]*)?\}"  # {name} {0} {} {0:.2f} {value!r:>10}
        # printf directives, runs of them and the letters glued to them (SIG%s, 0x%x, %sK, %s%s%s, %d%%)
        r"|(?<![\w%])\w*(?:" + _PRINTF + r")+\w*"
        r"|(?<![\w$])\$[A-Z_][A-Z0-9_]*\b"  # $HOME
        r"|(?<![\w:/]):[a-z_][a-z0-9_]*\b(?!:)"  # :name
    ),
    "url": r"(?<![\w@.])(?i:(?:https?|ftp)://|www\.)[^\s<>\"'`]+",
    "email": r"(?<![\w.+-])[A-Za-z0-9][A-Za-z0-9._%+-]*@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}\b",
    "ip": (
        r"(?<![\w.:])(?:(?:25[0-5]|2[0-4]\d|1?\d?\d)\.){3}(?:25[0-5]|2[0-4]\d|1?\d?\d)(?:/\d{1,2}|:\d{1,5})?(?![\w.]\w)"
        # IPv6: eight groups, or fewer with one "::"
        r"|(?<![\w:])(?:[0-9a-fA-F]{1,4}:){7}[0-9a-fA-F]{1,4}(?![\w:])"
        r"|(?<![\w:])(?=[0-9a-fA-F:]*::)(?:[0-9a-fA-F]{1,4})?(?::[0-9a-fA-F]{0,4}){2,7}(?<=[0-9a-fA-F:])(?![\w:])"
    ),
    "path": (
        r"(?<![\w/\\.])(?:~|\.{1,2})?/(?:[\w.+@-]+/)*[\w.+@-]+/?"  # /usr/bin/x, ~/x, ./x
        r"|\b[A-Za-z]:\\(?:[\w .+@-]*[\w+@-]\\)*[\w.+@-]*"  # C:\Users\x
        r"|" + _L + r"(?=[\w./+@-]*[A-Za-z])[\w.-]+(?:/[\w.+@-]+){2,}/?"  # src/app/main, a/b/c/
        r"|" + _L + r"[\w.-]+(?:/[\w.+@-]+)*/[\w+@-]+\.[A-Za-z0-9]{1,5}(?![\w.]\w|\w)"  # src/main.py
        r"|" + _L + r"[\w-]+(?:\.[\w-]+)*\.(?i:" + _EXTENSIONS + r")(?![\w.]\w|\w)"  # report.pdf
        r"|(?<![\w.-])(?:Makefile|Dockerfile|Containerfile|Jenkinsfile|Vagrantfile|Gemfile|Procfile|Rakefile"
        r"|CMakeLists\.txt)(?![\w.]\w|\w)"
        r"|(?<![\w./-])\.[a-z][\w-]*(?:\.[\w-]+)*(?![\w.]\w|\w)"  # .venv .gitignore .env.local
    ),
    # a command in backticks; a command line: a command word, then options, subcommands, paths
    "command": (
        r"`[^`\n]+`"
        r"|(?<![\w./-])(?:sudo\s+)?(?:" + _COMMANDS + r")(?=\s+" + _COMMAND_ARG + r"(?![\w-]))"
        r"(?:\s+" + _COMMAND_ARG + r"(?:\s+" + _BARE + r"){0,3})+(?<![.,;:!?])"
    ),
    # phone numbers with spaces: +49 30 1234567, +49 (0)89 1234 5678, 0800 123 456, 0171 234 5678
    "phone": (
        r"(?<![\w+])\+\d{1,3}(?:\s\(0\)\s?\d{1,5}|[\s.-]\d{1,8})(?:[\s.-]\d{1,8}){0,5}(?![\w])(?![.,]\d)"
        r"|(?<![\w.,+-])0\d{2,4}(?:[\s/-]\d{2,8}){1,4}(?![\w])(?![.,]\d)"
    ),
    # grouped numbers: IBANs (DE89 3704 0044 0532 0130 00), card numbers, RF references
    "grouped": (
        r"(?<![\w-])[A-Z]{2}\d{2}(?:\s[A-Z0-9]{4}){2,7}(?:\s[A-Z0-9]{1,3})?(?![\w-])"
        r"|(?<![\w.,-])\d{4}(?:\s\d{4}){2,4}(?![\w])(?![.,]\d)"
    ),
    "version": r"(?<![\w.])v\d+(?:\.\d+)*(?:-[0-9A-Za-z.]+)?\b|(?<![\w.])\d+\.\d+\.\d+(?:\.\d+)?(?:-[0-9A-Za-z.]+)*\b(?!\.\d)",
    "hashtag": r"(?<![\w#&])#[A-Za-z_][\w-]*\w",
    "handle": r"(?<![\w@.])@[A-Za-z0-9_](?:[\w.]*\w)?",
    "code": (  # letters and digits mixed (XJ-4000, INV-2023-0042, A4, B2B), snake_case identifiers
        r"(?<![\w-])(?!\d+(?:st|nd|rd|th)\b)(?=[\w-]*[0-9])(?=[\w-]*[A-Za-z])[A-Za-z0-9]+(?:[-_][A-Za-z0-9]+)*(?![\w-])"
        r"|(?<![\w-])[A-Za-z][A-Za-z0-9]*_[A-Za-z0-9_]*[A-Za-z0-9](?![\w-])"
    ),
    "number": (
        r"(?<![\w.,])[-+−]?[$€£¥]?(?:"
        r"\d{4}-\d{2}-\d{2}"  # ISO date
        r"|\d{1,2}:\d{2}(?::\d{2})?"  # time
        r"|\d+(?:[-/]\d+)+"  # 555-1234, 10-20, 10/05/2023
        r"|\d{1,3}(?:,\d{3})+(?:\.\d+)?"  # 1,234.56
        r"|\d{1,3}(?:\.\d{3})+(?:,\d+)?"  # 1.234,56
        r"|\d+(?:[.,]\d+)?"  # 12, 3.5, 3,5
        r")%?(?![\w])(?![.,]\d)"
    ),
}
KINDS = tuple(PATTERNS)
COMMAND_WORDS = frozenset(_COMMANDS.split("|"))
PLACEHOLDER = "placeholder"
GLOSSARY = "glossary"  # the kind of a glossary term's span (worker.text.glossary); find_spans never returns it
_COMPILED = {kind: re.compile(pattern) for kind, pattern in PATTERNS.items()}


@dataclass(frozen=True)
class Span:
    kind: str  # one of KINDS
    start: int  # character [start, end) in the sentence
    end: int
    text: str
    target: str | None = None  # what goes back in the translation, when not ``text`` (a glossary term's)

    @property
    def replacement(self) -> str:
        """The text put in place of this span's stand-in in the translation."""
        return self.text if self.target is None else self.target

    def to_json(self) -> dict:
        return {"kind": self.kind, "text": self.text, "source": [self.start, self.end]}


def find_spans(text: str) -> list[Span]:
    """The verbatim spans of ``text``, non-overlapping, in order."""
    candidates = []
    for rank, (kind, pattern) in enumerate(_COMPILED.items()):
        for match in pattern.finditer(text):
            start, end = match.span()
            if kind in ("url", "path", "email"):
                end = _trim(text, start, end)
            if end > start:
                candidates.append((start, -(end - start), rank, Span(kind, start, end, text[start:end])))
    spans: list[Span] = []
    for _, _, _, span in sorted(candidates):
        if not spans or span.start >= spans[-1].end:
            spans.append(span)
    return spans


def _trim(text: str, start: int, end: int) -> int:
    """End of a URL or path without the sentence punctuation after it; a closing bracket stays
    only when the span opened it (``https://en.wikipedia.org/wiki/Python_(language)``)."""
    while end > start:
        last = text[end - 1]
        if last in _TRAIL:
            end -= 1
        elif last in ")]}" and text[start:end].count(last) > text[start:end].count("([{"[")]}".index(last)]):
            end -= 1
        else:
            break
    return end
