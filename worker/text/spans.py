"""Verbatim spans: the parts of a sentence a translation must carry over unchanged (URLs, e-mail
addresses, file paths, numbers, codes, versions, hashtags, @handles, IP addresses, placeholders).

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

_EXTENSIONS = ("txt|csv|tsv|json|ya?ml|xml|html?|css|js|ts|py|java|cpp|c|h|sh|bat|exe|dll|so|zip|gz|tar|tgz|"
               "pdf|docx?|xlsx?|pptx?|odt|png|jpe?g|gif|svg|mp3|mp4|wav|log|ini|cfg|conf|toml|md|sql|db|"
               "apk|deb|rpm|iso|msi|bin|dat|bak|tmp|lock|env|pem|key|crt")

PATTERNS: dict[str, str] = {
    "placeholder": (
        r"\{\{\s*[\w.]+\s*\}\}"  # {{var}}
        r"|\$\{\w+\}"  # ${VAR}
        r"|\{[\w.]*(?::[^{}\s]*)?\}"  # {name} {0} {} {0:.2f}
        r"|(?<![\w%])%(?:\d+\$)?[-+ #0]?\d*(?:\.\d+)?[sdifuxXeEgGc@](?![a-zA-Z])"  # %s %1$s %d %.2f
        r"|(?<![\w%])%\(\w+\)[sdif]"  # %(name)s
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
    ),
    "version": r"(?<![\w.])v\d+(?:\.\d+)*(?:-[0-9A-Za-z.]+)?\b|(?<![\w.])\d+\.\d+\.\d+(?:\.\d+)?(?:-[0-9A-Za-z.]+)?\b(?!\.\d)",
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
