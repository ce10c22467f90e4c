"""Verbatim spans: the parts of a sentence a translation must carry over unchanged (URLs, e-mail
addresses, file paths and names, command lines, phone numbers, IBANs and other grouped numbers,
numbers, codes, versions, hashtags, @handles, IP addresses, placeholders, ICU MessageFormat arguments
and printf directives),
and what no model should be asked to translate: runs of one non-letter character or short unit
(``-----``, ``1 1 1 1``), words over ``MAX_WORD`` characters, and characters the bundle's
vocabulary cannot represent (emoji, rare symbols: ``symbol``).

``find_spans`` returns non-overlapping spans in text order. Each kind is one regular expression;
where matches overlap, the earliest wins, then the longest, then the kind listed first in ``KINDS``.
A word over ``MAX_WORD`` characters that no single span covers becomes one ``long`` span. Every
pattern is linear in the text's length (docs/quality.md, Pathological input).
"""
from __future__ import annotations

import re
import unicodedata
from bisect import bisect_left, bisect_right
from dataclasses import dataclass
from typing import Callable

from .english_words import COMMON

RUN_LENGTH = 50  # repeats of one character (half as many of a 2-4 character unit) that make a run span
MAX_WORD = 100  # characters: a longer word is copied through as one span

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
# conversions; %m of glibc, %@ of Objective-C; gettext's <PRIx64> macros), %% , Python %(name)s, Qt %1.
_PRINTF = (r"%(?:\d+\$)?[-+#0']*(?:\d+|\*)?(?:\.(?:\d+|\*))?<PRI\w+>"  # gettext's "%" PRIx64 (%<PRIx64>, %08<PRIx32>)
           r"|%(?:\d+\$)?[-+#0']*(?:\d+|\*(?:\d+\$)?)?(?:\.(?:\d+|\*(?:\d+\$)?))?(?:hh|ll|I64|I32|[hlLzjtq])?"
           r"[diouxXeEfFgGaAcCsSpnmr@]"
           r"|%\(\w+\)[-+#0 ]*\d*(?:\.\d+)?[diouxXeEfFgGcrsa]|%%|%[1-9]\d?(?![\d$])")
# Command words that open a command line (``pip install --upgrade requests``) when an option, a
# subcommand or a path-like argument follows; bare words after those are its arguments.
_COMMANDS = ("git|pip3?|pipx|npm|npx|yarn|pnpm|apt|apt-get|dnf|yum|pacman|brew|snap|flatpak|docker|podman|"
             "kubectl|helm|make|cmake|cargo|rustc|python3?|node|deno|ls|cd|cp|mv|rm|mkdir|rmdir|chmod|chown|chgrp|cat|"
             "grep|sed|awk|find|curl|wget|ssh|scp|rsync|tar|unzip|gzip|systemctl|journalctl|conda|poetry|uv|pytest|"
             "tox|nmt|gcc|clang|javac|mvn|gradle|dotnet|terraform|ansible|vim|nano|echo|export|ps|df|du|ln|xargs|"
             "openssl|gpg|ffmpeg|sudo|gmake|cvs|svn|hg")
_SUBCOMMANDS = ("status|install|uninstall|upgrade|update|add|commit|push|pull|clone|checkout|switch|branch|merge|"
                "rebase|log|diff|fetch|init|run|build|start|stop|restart|enable|disable|reload|exec|ps|logs|apply|"
                "get|describe|delete|create|test|remove|rm|list|ls|show|info|search|config|login|logout|publish|"
                "inspect|images|tag|clean|all|check|compose|venv|freeze|reset|stash|cherry-pick|bisect|revert|"
                "autoremove|dist-upgrade|version|help")
_STOP = ("the|a|an|and|or|but|to|in|on|at|of|for|from|with|by|as|if|when|then|than|before|after|first|again|"
         "now|once|is|are|was|were|be|it|this|that|these|those|which|so|also|too|instead|here|there|command|"
         "will|can|should|must|may|might|you|we|they|he|she|i|your|our|my|not|only|until|while|every|each")
# a lone single-dash setting of five letters or more (stty's -parenb): an option where it is no prose
_LONE_SETTING = r"-[a-z][a-z0-9]{4,}"
# an option's quoted value (--info-script='changevol $TAR_ARCHIVE')
_QUOTED_VALUE = r"'[^'\n]{1,200}'|\"[^\"\n]{1,200}\""
# an option, with its value (--info-script=FILE), a quoted one too
_OPTION = r"-{1,2}[A-Za-z0-9][\w-]*(?:[=:](?:" + _QUOTED_VALUE + r"|[^\s`'\"]+))?"
_ARG_LIKE = r"(?=[^\s`'\"]*(?:[/~=$@]|[.:]\w))[^\s`'\"<>]*[^\s`'\"<>.,;:!?)]"  # paths, URLs, files, versions
_BARE = r"(?!(?:" + _STOP + r")(?![\w-]))[a-z][\w.+-]*(?=\s|$|[.,;!?)](?:\s|$))"
# an environment assignment (LC_ALL=en_US.utf-8, CFLAGS=-maix64, AR='ar -X64'); a quoted value not
# closed on the line runs to its end
_ASSIGNMENT = (r"[A-Z][A-Za-z0-9_]*=(?:'[^'\n]{0,80}(?:'|$)|\"[^\"\n]{0,80}(?:\"|$)"
               r"|[^\s'\"`<>,;]*[^\s'\"`<>,;.:!?)])")
# a quoted argument (sed 's/ *|$//'): one with a slash, a dollar or a star, or a sed script
_QUOTED_ARG = r"'(?=[^'\n]{0,200}?[/$*\\^])[^'\n]{1,200}'|\"(?=[^\"\n]{0,200}?[/$*\\^])[^\"\n]{1,200}\""
# a sed script of line addresses and one command, unquoted (sed 12,18d, sed -n 12,18p, sed '$d' aside)
_SED_SCRIPT = r"(?:\d+|\$)(?:[,~](?:\d+|\$))?!?[pdqPD=](?![\w-])"
_COMMAND_ARG = (r"(?:" + _ASSIGNMENT + r"|" + _OPTION + r"|(?:" + _SUBCOMMANDS + r")(?![\w-])|" + _QUOTED_ARG + r"|"
                + _ARG_LIKE + r")")

PATTERNS: dict[str, str] = {
    "placeholder": (
        r"\{\{\s*[\w.]+\s*\}\}"  # {{var}}
        r"|\$\{\w+(?:[:#%/][^{}\s]*)?\}"  # ${VAR} ${VAR:-x}
        r"|%\{\w+\}|%<\w+>[-+#0]*\d*(?:\.\d+)?[sdifxXeEgGbBoc]"  # Ruby %{name} %<name>s
        r"|\{[\w.]*(?:\[\w*\])?(?:![rsa])?(?::[^{}\s]*)?\}"  # {name} {0} {} {0:.2f} {value!r:>10}
        r"|\{\w+(?:-\w+)+\}"  # a --help metavariable: sed's {script-only-if-no-other-script}
        # printf directives, runs of them, the letters glued to them, and an attribute read from a
        # named one (%(class_name)s.allow_future: one span, or two stand-ins the model runs together)
        r"|(?<![\w%])\w*(?:(?:" + _PRINTF + r")\w*)+(?:\.[A-Za-z_]\w*)*"
        r"|(?<![\w$])\$[A-Z_][A-Z0-9_]*\b"  # $HOME
        # the metavariables of --help texts (print NUM lines, read PATTERNS from FILE): the option
        # beside them keeps its own (--before-context=NUM), so the description keeps them too
        r"|(?<![\w$=-])(?:NUM|N|FILE|FILES|PATTERN|PATTERNS|DIR|DIRECTORY|PATH|NAME|SIZE|TYPE|WHEN|LABEL"
        r"|COMMAND|ACTION|STRING|KEY|VALUE|NUMBER|COUNT|MODE|FORMAT|LIST|PROGRAM|PROG|ARG|ARGS|SEP|CHARS|BYTES"
        r"|LINES|SECS|SECONDS|USER|GROUP|OWNER|EXPR|REGEX|REGEXP|DEST|SOURCE|TARGET|PID|FD|CMD|DEVICE|LEVEL"
        r"|METHOD|SCRIPT|WORD|DELIM|CHAR|OFFSET|LENGTH|WIDTH|PREFIX|SUFFIX|TEMPLATE|OPTION|OPTS|VAR|ENV)(?![\w-])"
        r"|(?<![\w:/]):[a-z_][a-z0-9_]*\b(?!:)"  # :name
    ),
    "url": r"(?<![\w@.])(?i:(?:https?|ftp|git|ssh|svn|rsync|file)://|www\.)[^\s<>\"'`]+",
    # an address, with its angle brackets when it has them (``Michael Dorman <mdorman@debian.org>``)
    "email": (r"<[A-Za-z0-9][A-Za-z0-9._%+-]*@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}>"
              r"|(?<![\w.+-])(?:mailto:)?[A-Za-z0-9][A-Za-z0-9._%+-]*@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}\b"),
    "ip": (
        r"(?<![\w.:])(?:(?:25[0-5]|2[0-4]\d|1?\d?\d)\.){3}(?:25[0-5]|2[0-4]\d|1?\d?\d)(?:/\d{1,2}|:\d{1,5})?(?![\w.]\w)"
        # IPv6: eight groups, or fewer with one "::"
        r"|(?<![\w:])(?:[0-9a-fA-F]{1,4}:){7}[0-9a-fA-F]{1,4}(?![\w:])"
        r"|(?<![\w:])(?=[0-9a-fA-F:]*::)(?:[0-9a-fA-F]{1,4})?(?::[0-9a-fA-F]{0,4}){2,7}(?<=[0-9a-fA-F:])(?![\w:])"
    ),
    "path": (
        r"(?<![\w/\\.])(?:~|\.{1,2})?/(?:[\w.+@-]+/)*[\w.+@-]+/?"  # /usr/bin/x, ~/x, ./x
        r"|\b[A-Za-z]:\\(?:[\w .+@-]*[\w+@-]\\)*[\w.+@-]*"  # C:\Users\x
        # src/app/main, a/b/c/ (the look-ahead is bounded: unbounded, a run of "+" costs its square)
        r"|" + _L + r"(?=[\w./+@-]{0,200}?[A-Za-z])[\w.-]+(?:/[\w.+@-]+){2,}/?"
        r"|" + _L + r"[\w.-]+(?:/[\w.+@*?-]+)*/[\w+@*?-]+\.[A-Za-z0-9]{1,5}(?![\w.]\w|\w)"  # src/main.py, m4/*.m4
        r"|" + _L + r"[\w-]+(?:[*?][\w-]*)*(?:\.[\w-]+)*\.(?i:" + _EXTENSIONS + r")(?![\w.]\w|\w)"  # report.pdf, pth_*.c
        r"|(?<![\w.-])(?:Makefile(?:\.(?:am|in|inc|def))*|GNUmakefile|Dockerfile|Containerfile|Jenkinsfile|Vagrantfile"
        r"|Gemfile|Procfile|Rakefile|CMakeLists\.txt)(?![\w.]\w|\w)"
        r"|(?<![\w/*])\*(?:\.[\w-]+)+(?![\w.]\w|\w)"  # *.o, *.tar.gz
        r"|(?<![\w./-])\.[a-z][\w-]*(?:\.[\w-]+)*(?![\w.]\w|\w)"  # .venv .gitignore .env.local
        # a regular expression between slashes, with its operators: /%(-_)?\d*N/
        r"|(?<![\w/])/(?=[^\s/]{0,80}?[\\()\[\]*?+^$|])[^\s/]{1,80}/(?![\w/])"
    ),
    # a command in backticks; a command line: a command word, then options, subcommands, paths
    "command": (
        r"``[^`\n]+``"  # reStructuredText's literal: ``==``
        r"|`(?:[^`'\n]|'(?=[\w`]))+`"  # (an apostrophe inside before a word or the backtick only)
        # a word in GNU's old quotes, a backtick closed by an apostrophe: wget's `-n%c', `%s'
        r"|`[^`'\s]{1,80}'(?!\w)"
        # sed with its options and an unquoted script, then its files
        r"|(?<![\w./-])sed(?:\s+" + _OPTION + r")*\s+" + _SED_SCRIPT + r"(?:\s+(?:" + _ARG_LIKE + r"|" + _BARE
        + r")){0,3}(?<![.,;:!?])"
        r"|(?<![\w./-])(?:sudo\s+)?(?:" + _COMMANDS + r")(?=\s+" + _COMMAND_ARG + r"(?![\w-]))"
        r"(?:\s+" + _COMMAND_ARG + r"(?:\s+" + _BARE + r"){0,3})+(?<![.,;:!?])"
    ),
    # command-line options (--no-messages, --binary-files=without-match, -s, -rf), one or several in a
    # row; ``find_spans`` adds the program name before them (ifconfig -a) when it is no English word
    # A single-dash word of more than four letters is one only in a run of them (stty's settings,
    # ``-ignbrk -brkint``) or written as optional (``[-]icanon``): alone, its dash may be a dash.
    # ``-t a,``: a one-letter argument (od's types), where nothing but punctuation follows it.
    "option": (
        r"(?<![\w-])(?:--[A-Za-z0-9][\w-]*(?:=(?:" + _QUOTED_VALUE + r"|[^\s`'\"<>,;)\]]+))?|-[A-Za-z][A-Za-z0-9]{0,3}(?: [a-z](?=[,;]))?)(?![\w-])"
        r"(?:\s+(?:--[A-Za-z0-9][\w-]*(?:=[^\s`'\"<>,;)\]]+)?|-[A-Za-z][A-Za-z0-9]{0,3})(?![\w-]))*"
        # a run of single-dash settings, bare ones between them (stty's ``-ignbrk brkint -inlcr``)
        r"|(?<![\w\]-])-[A-Za-z][A-Za-z0-9]*(?:\s+(?:(?!(?:" + _STOP + r")\s)[a-z][a-z0-9]*\s+)?-[A-Za-z][A-Za-z0-9]*)+"
        r"(?![\w-])"
        r"|(?<![\w-])\[-\][A-Za-z][A-Za-z0-9]*(?![\w-])"
        r"|(?<![\w-])-[A-Z][A-Z0-9_]+(?![\w-])"  # a metavariable as an option: kill's -SIGNAL
        # a lone single-dash word of five letters or more after a space (stty's ``same as -parenb
        # cs8``, X's ``-display``): English prose puts no dash right before a word (the training
        # catalogues hold these settings, so no word list tells them from English words);
        # ``find_spans`` drops it where it is prose (``_prose_dash``: a pair's second half, a function word)
        r"|(?<=\s)" + _LONE_SETTING + r"(?![\w-])"
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
    "version": (r"(?<![\w.])v?\d+(?:\.\d+)*\.[x*](?![\w-]|\.\d)"  # a series: 1.4.x, v2.x, 2.*
                r"|(?<![\w.])v\d+(?:\.\d+)*(?:-[0-9A-Za-z.]+)*\b"
                r"|(?<![\w.])\d+\.\d+[A-Za-z]+\d*(?![\w-]|\.\d)"  # 4.0d, 3.0r1, 2.4GHz: no number and word
                r"|(?<![\w.])\d+\.\d+\.\d+(?:\.\d+)*(?:[A-Za-z]+\d*)?(?:-[0-9A-Za-z.]+)*\b(?!\.\d)"
                r"|(?<![\w.+-])[A-Za-z]\w*(?:\+\+)?-\d+(?:\.\d+)+[a-z]?(?:-[0-9A-Za-z]+)*(?![\w-]|\.\d)"  # bash-4.4, glibc-2.1
                r"|(?<![\w.-])[A-Z][A-Z0-9]+\.\d+(?:[.-]\d+)*(?![\w-]|\.\d)"),  # a standard's part: POSIX.2, POSIX.1-2008
    "hashtag": r"(?<![\w#&])#[A-Za-z_][\w-]*\w",
    "handle": r"(?<![\w@.])@[A-Za-z0-9_](?:[\w.]*\w)?",
    # key combinations: Ctrl+F, Ctrl+Shift+T, Alt-F4, Cmd+S, Shift+Tab
    "key": (r"(?<![\w+-])(?:Ctrl|Control|Alt|AltGr|Shift|Cmd|Command|Option|Opt|Meta|Super|Win|Fn)"
            r"(?:\s?[+-]\s?(?:Ctrl|Control|Alt|AltGr|Shift|Cmd|Command|Option|Opt|Meta|Super|Win|Fn|F\d{1,2}|Tab|Enter|"
            r"Return|Esc|Escape|Space|Backspace|Delete|Del|Insert|Ins|Home|End|PgUp|PgDn|PageUp|PageDown|Up|Down|"
            r"Left|Right|[A-Z0-9]|[^\w\s]))+(?![\w])"),
    # a function call (setuid(), os.path.join(a, b)) and a dotted name (os.path.join, sys.argv)
    # a function call (setuid(), os.path.join(a, b), re_compile(x)) and a dotted name (os.path.join, sys.argv)
    "call": (r"(?<![\w.])[A-Za-z_]\w*\(\)"
             r"|(?<![\w.])[a-z][\w.+-]*\([1-9][a-z]{0,3}\)"  # a manual page: printenv(1), printf(3p)
             # a dotted name of classes: GNU.Gettext.GettextResourceManager, System.Resources.ResourceManager
             r"|(?<![\w.@/-])(?=[\w.]{0,120}?(?:[a-z0-9_][A-Z]|\.[A-Za-z_]\w+\.[A-Za-z_]|\.[A-Z][A-Z0-9_]*[a-z]))"
             r"[A-Z][A-Za-z0-9_]+(?:\.[A-Za-z_][A-Za-z0-9_]+)+(?![\w@/(-]|\.\w)"
             r"|(?<![\w.])(?=[\w.]{0,80}(?:[._][a-z]|[a-z][A-Z]))[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*\((?:[\w.*, ]{0,120}[\w*])?\)"
             # a Python signature, as Sphinx heads an entry (getpass.getpass(prompt='Password: ', stream=None))
             r"|(?<![\w.])[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+\((?:[\w.*, =]|'[^'\n]{0,60}'|\"[^\"\n]{0,60}\"){0,120}\)"
             # lower-case parts, the last one a class: java.lang.Object, getpass.GetPassWarning (not "end.Then")
             r"|(?<![\w.@/-])[a-z_][a-z0-9_]+(?:(?:\.[a-z_][A-Za-z0-9_]+)+(?:\.[A-Z][A-Za-z0-9_]+)?"
             r"|(?:\.[a-z_][A-Za-z0-9_]+)*\.[A-Z][a-z0-9]*[A-Z]\w*)(?![\w@/(-]|\.\w)"),
    "code": (  # letters and digits mixed (XJ-4000, INV-2023-0042, A4, B2B), snake_case, _private and camelCase identifiers
        # (first, as the longer match at its start) an environment assignment; a locale: tr_TR.utf8, cs_CZ.UTF-8
        r"(?<![\w.$-])" + _ASSIGNMENT +
        r"|(?<![\w.-])[a-z]{2,3}_[A-Z]{2}(?:\.[A-Za-z0-9-]+)?(?:@[a-z]+)?(?![\w-])"
        r"|(?<![\w/-])[A-Za-z][A-Za-z0-9]*_\w*[A-Za-z0-9](?:/[A-Za-z][A-Za-z0-9]*_\w*[A-Za-z0-9])+(?![\w/-])"  # SEEK_DATA/SEEK_HOLE
        r"|(?<![\w-])[A-Z][a-z0-9]+(?:[A-Z][a-z0-9]+){2,8}(?![\w-])"  # UpperCamelCase of 3 to 9 parts: GetPassWarning
        r"|(?<![\w-])(?!\d+(?:st|nd|rd|th)\b)(?=[\w-]*[0-9])(?=[\w-]*[A-Za-z])[A-Za-z0-9]+(?:[-_][A-Za-z0-9]+)*(?![\w-])"
        r"|(?<![\w-])[A-Za-z][A-Za-z0-9]*_[A-Za-z0-9_]*[A-Za-z0-9](?![\w-])"
        r"|(?<![\w-])_+[A-Za-z][A-Za-z0-9_]*(?![\w-])"  # _private, __init__
        # a lower-case abbreviation of three letters or more, dotted: a.k.a, w.r.t. (not e.g., i.e.: German has its own)
        r"|(?<![\w.])[a-z](?:\.[a-z]){2,}\.?(?![\w.])"
        # lowerCamelCase: xslDropCall, getElementById, iPhone, and before a compound's word: rST-style
        r"|(?<![\w-])[a-z][a-z0-9]*(?:[A-Z][a-z0-9]*)+(?!\w|-(?![A-Za-z]))"
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
RUN = "run"  # a run of one character or short unit (find_spans adds these, LONG and SYMBOL after KINDS)
LONG = "long"  # a word over MAX_WORD characters
SYMBOL = "symbol"  # characters the vocabulary cannot represent (find_spans with ``represented``)
COMMAND_WORDS = frozenset(_COMMANDS.split("|"))
# The programs of GNU coreutils (the list in its README) and a few of util-linux and procps (none an
# English word: "more", "free", "top" are prose more often): READMEs
# and manuals list them bare, and a list of program names is not prose (worker.text.verbatim).
_PROGRAMS = ("[ arch b2sum base32 base64 basename basenc cat chcon chgrp chmod chown chroot cksum comm coreutils "
             "cp csplit cut date dd df dir dircolors dirname du echo env expand expr factor false fmt fold groups "
             "head hostid hostname id install join kill link ln logname ls md5sum mkdir mkfifo mknod mktemp mv "
             "nice nl nohup nproc numfmt od paste pathchk pinky pr printenv printf ptx pwd readlink realpath rm "
             "rmdir runcon seq sha1sum sha224sum sha256sum sha384sum sha512sum shred shuf sleep sort split stat "
             "stdbuf stty sum sync tac tail tee test timeout touch tr true truncate tsort tty uname unexpand uniq "
             "unlink uptime users vdir wc who whoami yes "
             "umount lsblk blkid fdisk findmnt losetup dmesg pkill pgrep pmap vmstat sysctl")
PROGRAM_NAMES = COMMAND_WORDS | frozenset(_PROGRAMS.split())
PLACEHOLDER = "placeholder"
GLOSSARY = "glossary"  # the kind of a glossary term's span (worker.text.glossary); find_spans never returns it
_COMPILED = {kind: re.compile(pattern) for kind, pattern in PATTERNS.items()}
# The head of an ICU MessageFormat argument with a type: {count, plural, ...}, {price, number, currency},
# {gender, select, ...}, {d, date, short}. The whole argument, to its matching brace, is one placeholder:
# its cases nest braces, which no regular expression of PATTERNS can match.
_ICU_HEAD = re.compile(r"\{\s*\w+\s*,\s*(?:plural|selectordinal|select|number|date|time|choice|spellout|ordinal"
                       r"|duration)\s*[,}]")
_BRACE = re.compile(r"[{}]")
# A run: one non-letter character (or a unit of 2-4) repeated, single spaces allowed between.
_RUN = re.compile(r"(?P<one>[^\w\s]|[\d_])(?:\s?(?P=one)){%d,}"
                  r"|(?P<unit>(?:[^\w\s]|[\d_]){2,4}?)(?:\s?(?P=unit)){%d,}" % (RUN_LENGTH - 1, RUN_LENGTH // 2 - 1))


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


def find_spans(text: str, represented: Callable[[str], bool] | None = None) -> list[Span]:
    """The verbatim spans of ``text``, non-overlapping, in order. ``represented(character)``:
    whether the vocabulary can carry it (None: every character)."""
    candidates = []
    for rank, (kind, pattern) in enumerate(_COMPILED.items()):
        for match in pattern.finditer(text):
            start, end = match.span()
            if kind in ("url", "path", "email", "option"):
                end = _trim(text, start, end)
            if kind == "option":
                if _prose_dash(text, start, end):
                    continue
                start = _program_before(text, start)
                end = _setting_after(text, start, end)
            if end > start:
                candidates.append((start, -(end - start), rank, Span(kind, start, end, text[start:end])))
    candidates += [(a, a - b, 0, Span(PLACEHOLDER, a, b, text[a:b])) for a, b in _icu_arguments(text)]
    candidates += [(m.start(), m.start() - m.end(), len(KINDS), Span(RUN, *m.span(), m.group()))
                   for m in _RUN.finditer(text)]
    if represented is not None:
        candidates += [(a, a - b, len(KINDS) + 1, Span(SYMBOL, a, b, text[a:b]))
                       for a, b in _unrepresented(text, represented)]
    spans: list[Span] = []
    for _, _, _, span in sorted(candidates):
        if not spans or span.start >= spans[-1].end:
            spans.append(span)
    return _long_words(text, spans)


_LONE_SETTING_WORD = re.compile(_LONE_SETTING)
_PAIR_BEFORE = re.compile(r"(?<!\S)([^\s,]+)(?:,|\s+(?:and|or|und|oder|bis|sowie|bzw\.))\s+$")


# English words that are never a program's option: a dash typed before one is prose (``He left -without
# a word``). Options are the names of things and actions (-group, -delete, -depth, -display, -parenb).
_PROSE_WORDS = frozenset("without within about through during against between among never always perhaps "
                         "maybe just really very even almost already still rather quite".split())


def _prose_dash(text: str, start: int, end: int) -> bool:
    """Whether the lone single-dash word ``text[start:end]`` is prose, not an option: the second half
    of a pair of words after a conjunction (German ``Tabellenzeilen oder -spalten``, read in a
    translation by the consistency check; not ``-execdir and -okdir``, whose first half is an
    option), or a function word (``_STOP_WORDS``, ``_PROSE_WORDS``) after a typed dash."""
    if not _LONE_SETTING_WORD.fullmatch(text, start, end):
        return False
    if text[start + 1:end] in _STOP_WORDS or text[start + 1:end] in _PROSE_WORDS:
        return True
    found = _PAIR_BEFORE.search(text, max(0, start - 60), start)
    return found is not None and not found.group(1).startswith("-")


_WORD_BEFORE = re.compile(r"(?<![\w./-])([a-z][\w.+-]*[a-z0-9])\s+$")


def _program_before(text: str, start: int) -> int:
    """Where an option span starts once the program name before it is taken in (``ifconfig -a``,
    ``ping -c``): a lower-case word right before the options that is a command word or no common
    English word (not ``use -rf`` or ``the -s option``)."""
    found = _WORD_BEFORE.search(text, max(0, start - 40), start)
    if found and (found.group(1) in COMMAND_WORDS or found.group(1) not in COMMON):
        return found.start(1)
    return start


_SETTINGS_RUN = re.compile(r"-[A-Za-z][A-Za-z0-9]*\s+(?:\S+\s+)*?-[A-Za-z][A-Za-z0-9]*")
_WORD_AFTER = re.compile(r"\s+([a-z][a-z0-9]*)(?=$|\s|[.,;:!?)](?:\s|$))")
_STOP_WORDS = frozenset(_STOP.split("|"))


def _setting_after(text: str, start: int, end: int) -> int:
    """Where a run of single-dash settings ends once a bare setting after it is taken in
    (stty's ``-inlcr -igncr icrnl``): a lower-case word that is no common English word."""
    if "--" in text[start:end] or not _SETTINGS_RUN.search(text, start, end):
        return end
    found = _WORD_AFTER.match(text, end)
    if found and found.group(1) not in COMMON and found.group(1) not in _STOP_WORDS:
        return found.end(1)
    return end


def _icu_arguments(text: str) -> list[tuple[int, int]]:
    """[start, end) of each ICU MessageFormat argument with a type, from its ``{`` to the matching
    ``}`` (one pass over the text; an argument whose braces never close is not one; an argument
    inside another is part of it)."""
    heads = [m.start() for m in _ICU_HEAD.finditer(text)]
    if not heads:
        return []
    closing: dict[int, int] = {}
    opened: list[int] = []
    for brace in _BRACE.finditer(text):
        if brace.group() == "{":
            opened.append(brace.start())
        elif opened:
            closing[opened.pop()] = brace.end()
    arguments: list[tuple[int, int]] = []
    for start in heads:
        if start in closing and (not arguments or start >= arguments[-1][1]):  # the outermost only
            arguments.append((start, closing[start]))
    return arguments


_LONG_WORD = re.compile(r"\S{%d,}" % (MAX_WORD + 1))
_EDGE = _TRAIL + "()[]{}<>"


def _long_words(text: str, spans: list[Span]) -> list[Span]:
    """``spans`` with each word over MAX_WORD characters as one ``long`` span (with the spans it
    overlaps), unless one span covers it but for punctuation around it (a long URL)."""
    starts = [s.start for s in spans]
    ranges: list[list[int]] = []  # [start, end) of the long spans, in order, merged
    for match in _LONG_WORD.finditer(text):
        start, end = match.span()
        core = match.group().strip(_EDGE)
        core_start = start + match.group().find(core[:1]) if core else start
        inside = spans[max(0, bisect_right(starts, start) - 1):bisect_left(starts, end)]
        inside = [s for s in inside if s.start < end and start < s.end]
        if core and any(s.start <= core_start and s.end >= core_start + len(core) for s in inside):
            continue
        start, end = min([start] + [s.start for s in inside]), max([end] + [s.end for s in inside])
        if ranges and start < ranges[-1][1]:
            ranges[-1][1] = max(ranges[-1][1], end)
        else:
            ranges.append([start, end])
    if not ranges:
        return spans
    out, k = [], 0
    for span in spans:
        while k < len(ranges) and ranges[k][1] <= span.start:
            k += 1
        if k == len(ranges) or span.end <= ranges[k][0]:
            out.append(span)
    out += [Span(LONG, a, b, text[a:b]) for a, b in ranges]
    return sorted(out, key=lambda s: s.start)


# Characters that join or modify the symbol before them (emoji ZWJ sequences, skin tones,
# variation selectors, combining marks): a symbol span takes them along.
_JOINING = {"Mn", "Me", "Cf", "Sk"}


def _unrepresented(text: str, represented: Callable[[str], bool]) -> list[tuple[int, int]]:
    """[start, end) of runs of characters ``represented`` refuses (with the joiners, modifiers and
    single spaces between them); a run of invisible characters alone is none."""
    runs: list[tuple[int, int]] = []
    k, n = 0, len(text)
    while k < n:
        if text[k].isspace() or represented(text[k]):
            k += 1
            continue
        start = end = k
        while k < n:
            c = text[k]
            if not c.isspace() and not represented(c):
                k += 1
                end = k
            elif unicodedata.category(c) in _JOINING:
                k += 1
                end = k
            elif c == " " and k + 1 < n and not text[k + 1].isspace() and not represented(text[k + 1]):
                k += 1
            else:
                break
        if any(unicodedata.category(c) not in ("Cf", "Cc") for c in text[start:end] if not c.isspace()):
            if unicodedata.category(text[start])[0] in "LM" or unicodedata.category(text[end - 1])[0] in "LM":
                # a letter it lacks ("Gdańsk"): the model cannot spell the word, so the word is the span
                while start and _in_word(text[start - 1]):
                    start -= 1
                while end < n and _in_word(text[end]):
                    end += 1
            runs.append((start, end))
        k = max(k, end)
    return runs


def _in_word(c: str) -> bool:
    return c.isalnum() or c == "_" or unicodedata.category(c) in ("Mn", "Mc")


def _trim(text: str, start: int, end: int) -> int:
    """End of a URL or path without the sentence punctuation after it; a closing bracket or quote
    stays only when the span opened it (``https://en.wikipedia.org/wiki/Python_(language)``)."""
    while end > start:
        last = text[end - 1]
        if last in "'\"" and text[start:end].count(last) % 2 == 0:
            break  # the quote that closes an option's quoted value (--info-script='changevol $TAR_VOLUME')
        if last in _TRAIL:
            end -= 1
        elif last in ")]}" and text[start:end].count(last) > text[start:end].count("([{"[")]}".index(last)]):
            end -= 1
        else:
            break
    return end
