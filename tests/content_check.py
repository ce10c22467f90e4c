"""Content checks for a translated document: compares a source document with its English->German output,
unit by unit in document order, and reports what format validators miss (translated code, swapped links,
lost options, numbers, words, whitespace, symbols, charset). Independent of worker/formats: every format is
read with its own library (html5lib as a browser, markdown-it-py, polib + msgfmt, lxml, zipfile, srt, webvtt-py).
"""
from __future__ import annotations

import difflib
import functools
import io
import re
import subprocess
import tempfile
import unicodedata
import zipfile
import zlib
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

CHECKS = ("parse", "structure", "code", "links", "spans", "tags", "words", "whitespace", "entities", "charset",
          "target", "msgfmt")
FORMATS = ("html", "markdown", "po", "xliff", "docx", "srt", "vtt", "txt")
OBJECT = "\ufffc"  # stands for a code piece inside prose, so spans and words never reach across it


@dataclass(frozen=True)
class Finding:
    check: str   # one of CHECKS
    where: str   # a locator a human can find: "p #12", "msgid 'Usage: %s'", "cue 7", "line 31"
    source: str  # what the source has there (short)
    output: str  # what the output has there (short)


class ContentParseError(Exception):
    """A document the format's own library refuses."""


def short(text: str, limit: int = 80) -> str:
    text = str(text)
    return text if len(text) <= limit else text[:limit - 1] + "…"


def counts(findings: Iterable[Finding]) -> dict[str, int]:
    """Findings per check; every check is present, with 0 where nothing was found."""
    tally = dict.fromkeys(CHECKS, 0)
    for finding in findings:
        tally[finding.check] += 1
    return tally


# ---------------------------------------------------------------------------------------------------- units
@dataclass(frozen=True)
class Unit:
    """One block / entry / segment / cue / line: its text as pieces ("text" or "code", in order) and links."""
    where: str
    kind: str                                   # what structure pairs on: "p", "h2", "msgid", "cue", "line"
    pieces: tuple[tuple[str, str], ...] = ()
    links: tuple[tuple[str, str], ...] = ()     # (target, link text) in order
    block_code: bool = False                    # code compared byte for byte (pre, fences, code paragraphs)
    edges: bool = False                         # leading/trailing whitespace significant
    layout: bool = False                        # TABs and column runs of spaces significant per line

    @property
    def raw(self) -> str:
        return "".join(text for _, text in self.pieces)

    @property
    def prose(self) -> str:
        return "".join(text if kind == "text" else OBJECT for kind, text in self.pieces)

    def code(self) -> list[str]:
        norm = (lambda s: s.replace("\r\n", "\n")) if self.block_code else (lambda s: " ".join(s.split()))
        return [norm(text) for kind, text in self.pieces if kind == "code"]

    def code_sides(self) -> list[tuple[str, str]]:
        """The character just before and just after each code piece within the unit ('' at its edges)."""
        texts = [text for _, text in self.pieces]
        lefts, last = [], ""
        for text in texts:
            lefts.append(last)
            last = text[-1:] or last
        rights, first = [], ""
        for text in reversed(texts):
            rights.append(first)
            first = text[:1] or first
        rights.reverse()
        return [(lefts[i], rights[i]) for i, (kind, _) in enumerate(self.pieces) if kind == "code"]


class UnitBuilder:
    """Collects one unit while a reader walks its document: text, code (nested or run by run) and links."""

    def __init__(self, where: str, kind: str, **flags: bool):
        self.where, self.kind, self.flags = where, kind, flags
        self.pieces: list[list[str]] = []
        self.links: list[list[str]] = []
        self.open_links: list[int] = []
        self.code_depth = 0

    def text(self, text: str) -> None:
        if not text:
            return
        kind = "code" if self.code_depth else "text"
        if self.pieces and self.pieces[-1][0] == kind:     # inside code, begin_code() opened the piece
            self.pieces[-1][1].append(text)
        else:
            self.pieces.append((kind, [text]))
        for index in self.open_links:
            self.links[index][1].append(text)

    def begin_code(self, join: bool = False) -> None:
        """Code from here to end_code(); join=True continues a code piece that ends just before (DOCX runs)."""
        if self.code_depth == 0 and not (join and self.pieces and self.pieces[-1][0] == "code"):
            self.pieces.append(("code", []))
        self.code_depth += 1

    def end_code(self) -> None:
        self.code_depth -= 1

    def code(self, text: str) -> None:
        self.begin_code()
        self.text(text)
        self.end_code()

    def begin_link(self, target: str) -> None:
        self.links.append((target, []))
        self.open_links.append(len(self.links) - 1)

    def link(self, target: str, text: str) -> None:
        """A link whose text is not part of the unit's text (image alt, footnote reference)."""
        self.links.append((target, [text]))

    def end_link(self) -> None:
        if self.open_links:
            self.open_links.pop()

    def unit(self) -> Unit:
        return Unit(self.where, self.kind, tuple((kind, "".join(texts)) for kind, texts in self.pieces),
                    tuple((target, "".join(texts)) for target, texts in self.links), **self.flags)


@dataclass
class Document:
    """What a reader found: the units, structural marks compared by identity (timings, fence lines, msgids,
    ids), units lacking a target (PO/XLIFF outputs) and the encoding a browser would pick (HTML)."""
    units: list[Unit] = field(default_factory=list)
    marks: list[tuple[str, str]] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)
    encoding: str = "utf-8"


# ---------------------------------------------------------------------------------------------------- spans
_EXT = ("c h cc cpp cxx hpp hh py pyc pl pm rb js mjs ts java go rs sh bash zsh csh txt md rst html htm xhtml xml "
        "xsl xslt css json yaml yml toml ini cfg conf log po pot mo tex sty bib pdf ps eps png jpg jpeg gif svg ico "
        "bmp tar gz tgz bz2 xz zst zip 7z deb udeb rpm dsc changes so a o la lo in ac am mk diff patch jar war class "
        "el lisp scm hs ml sql db sqlite csv tsv doc docx odt ods odp xls xlsx ppt pptx desktop service socket timer "
        "list key pem crt csr asc gpg sig iso img qcow2 exe dll bat cmd ps1 lua php swift kt m4 awk sed vim cmake "
        "gradle lock pc info texi man pod gmo").split()
_SPAN_PATTERNS = [
    r"\b(?:https?|ftp|file|git|ssh|svn|rsync)://[^\s<>\"'»«“”„‚‘’\[\]]+",                 # URLs
    r"\bwww\.[\w-]+(?:\.[\w-]+)+(?:/[^\s<>\"'»«“”„]*)?",
    r"(?:mailto:)?[\w.+-]+@[\w-]+(?:\.[\w-]+)+",                                           # e-mail addresses
    r"(?<![^\s(\[{\"'=„“»«‚‘`])(?:~[\w.-]*|\.{1,2})?(?:/[\w.+@%~*?][\w.+@%~*?-]*)+/?",   # /usr/share, ~/.bashrc
    r"(?<![\w.@/*-])(?:[\w*?+-]+/)*[\w*?+-]+(?:\.[\w-]+)*\.(?:" + "|".join(_EXT) + r")\b",  # setup.py, pth_*.c
    r"\b(?:[a-z0-9-]+\.)+(?:org|com|net|de|io|edu|gov|info|eu|uk|fr|at|ch)\b",           # debian.org
    r"(?<![\w./-])--[A-Za-z0-9]+(?:-[a-z0-9]+)*(?:=[^\s,;)\]»«“”„‘’\"']+)?",               # --no-messages=x
    # -rf, »-n«; not a word joined to a closing quote or bracket by a hyphen (‘NULL’-terminated, '-f'-specified,
    # German „ksh“-kompatibel, "ksh"-kompatibel)
    r"(?<![\w./’”)\]-])(?<!\w')(?<!\w»)(?<!\w“)(?<!\w\")-(?:[a-z][a-z0-9]*(?:-[a-z0-9]+)*|[A-Z](?![a-z])[A-Za-z0-9]*|W[a-z][a-z0-9-]*)(?![\w])",
    r"\b[A-Za-z][A-Za-z0-9+_]*-v?\d+(?:\.\d+)+(?:[-+~.][0-9A-Za-z]+)*",                    # bash-4.4
    r"(?<![\w.])v\d+(?:\.\d+)+(?:[-+~][0-9A-Za-z.]+)?",                                    # v1.2.0-rc1
    r"(?<![\w.])\d+(?:\.\d+){2,}(?:[-+~][0-9A-Za-z][\w.~+-]*)?",                           # 2.1.3
    r"\b[A-Za-z_][\w.:-]*\((?:[1-9][a-z]*)?\)",                                            # name(), grep(1)
    r"(?<![\d%])%(?:\d+\$)?[-+#0']*(?:\d+|\*)?(?:\.(?:\d+|\*))?(?:hh|h|ll|l|L|q|j|z|t)?[diouxXeEfFgGaAcspn]"
    r"(?![^\W\d_])",                                                                        # %d %5.2f, not %-Angabe
    r"%\([\w.]+\)[-+#0]*\d*(?:\.\d+)?[diouxXeEfFgGcrsa]",                                  # %(value)s
    r"%<\w+>",                                                                             # %<PRIu64>
    r"\{(?:[a-z_][a-z0-9_.]*|\d*)(?:![rsa])?(?::[^{}\s]*)?\}",                              # {name} {0}
    r"(?<![\w])__\w+__",
    r"(?<![\w.])_{0,2}[A-Za-z][A-Za-z0-9]*(?:_+[A-Za-z0-9]+)+_{0,2}(?![\w])",              # snake_case
    r"(?<![\w.])[a-z]+[A-Z][A-Za-z0-9]*(?![\w])",                                          # camelCase
    r"(?<![\w.])[A-Za-z_][A-Za-z0-9_]+(?:\.[A-Za-z_][A-Za-z0-9_]+)+(?![\w])",              # dotted.names
]
_MODIFIER = r"(?:Ctrl|Strg|Control|AltGr|Alt|Shift|Umschalttaste|Umschalt|Cmd|Command|Befehl|Meta|Super|Win|Option|Fn)"
_KEYS = re.compile(r"(?<!\w)" + _MODIFIER + r"(?:\s?\+\s?(?:F\d{1,2}\b|[^\W_](?!\w)|[A-Z]\w*|click|space|enter|"
                   r"tab|esc|[^\s\w])|-(?:[Cc]lick|Klick)\b)+")
_KEY_NAMES = {"strg": "ctrl", "control": "ctrl", "umschalt": "shift", "umschalttaste": "shift", "command": "cmd",
              "befehl": "cmd", "eingabe": "enter", "eingabetaste": "enter", "return": "enter", "entf": "del",
              "delete": "del", "einfg": "ins", "insert": "ins", "pos1": "home", "ende": "end", "leertaste": "space",
              "leerzeichen": "space", "rücktaste": "backspace", "rückschritt": "backspace", "tabulator": "tab", "klick": "click",
              **{name: name for name in ("backspace", "tab", "esc", "click", "space", "enter", "del", "home", "end")}}
_MODIFIERS = {"ctrl", "alt", "altgr", "shift", "cmd", "meta", "super", "win", "option", "fn"}
_SPANS = [re.compile(pattern) for pattern in _SPAN_PATTERNS]
_NOT_VERSION = re.compile(r"\d{1,3}(?:\.\d{3})+|\d{1,2}\.\d{1,2}\.\d{2,4}")   # German 1.000.000, 24.12.2020
_ABBREVIATION = re.compile(r"[^\W\d_]\.[^\W\d_]")                             # d.h, z.B, u.a
_TRAILING = ".,;:!?)'»“”"
_CONJUNCTION = re.compile(r"(?:\b(?:und|oder|bzw\.|sowie|bis|or|and)|,)\s+$")


def _key_combination(text: str) -> str:
    """A key combination in one spelling for both languages: Strg -> ctrl, modifiers sorted, spelled-out key
    names that differ between languages (Left Arrow / Pfeil nach links) as '…'."""
    keys = [_KEY_NAMES.get(k.lower(), k.lower()) for k in re.split(r"\s?\+\s?|-", text) if k]
    modifiers = sorted(k for k in keys if k in _MODIFIERS)
    rest = [k if len(k) == 1 or re.fullmatch(r"f\d+", k) or k in _KEY_NAMES.values() else "…"
            for k in keys if k not in _MODIFIERS]
    return "+".join(modifiers + rest)


@functools.lru_cache(maxsize=4096)
def _span_matches(text: str) -> tuple[tuple[int, int, str], ...]:
    """Machine-readable spans in ``text``: (start, end, normalised text), leftmost-longest, never overlapping."""
    found = []
    for match in _KEYS.finditer(text):
        found.append((match.start(), match.end(), _key_combination(match.group())))
    for match in (m for pattern in _SPANS for m in pattern.finditer(text)):
        span, end = match.group(), match.end()
        while span and span[-1] in _TRAILING and not (span[-1] == ")" and span.count("(") >= span.count(")")):
            span, end = span[:-1], end - 1   # sentence punctuation after a URL or path; a call keeps its ()
        if _NOT_VERSION.fullmatch(_normalised(span)) or _ABBREVIATION.fullmatch(span):
            continue    # (a German compound on a date-like number, 1.4.19-Makroprozessor, is that number)
        if re.fullmatch(r"-[^\W\d_]{4,}", span) and _CONJUNCTION.search(text, 0, match.start()):
            continue    # German "Zeilen oder -spalten": a word fragment after a conjunction, not an option
        found.append((match.start(), end, _normalised(span.removeprefix("mailto:"))))
    found.sort(key=lambda m: (m[0], -m[1]))
    kept, reach = [], -1
    for start, end, span in found:
        if start >= reach and span:
            kept.append((start, end, span))
            reach = end
    return tuple(kept)


_NUMBERED = re.compile(r"^%\d+\$")                  # %2$s: gettext's reordered form of the same directive
_COMPOUND = re.compile(r"^(?P<base>.+?)-(?P<suffix>[^\W\d_]*)$")


def _normalised(span: str) -> str:
    """A span as both languages may write it: a numbered directive as the plain one (``%2$s`` -> ``%s``),
    and without the German compound joined to it (``5.1.6-spezifische``, ``inttypes.h-Headers``,
    ``--checkpoint-action=totals-Option``, ``linux.words-`` with an elided word, every part of
    ``1.4.19-Makro-Prozessor``)."""
    span = _NUMBERED.sub("%", span)
    while compound := _COMPOUND.match(span):  # each part of a compound of several (--sort=ORDER-Options-Struktur)
        suffix, base = compound.group("suffix"), compound.group("base")
        if not (suffix[:1].isupper() or (re.search(r"[./]", base) and base[-1:].isalnum())):
            break
        span = base
    return span


def _fragment(span: str) -> bool:
    """A single-dash word in a translation (``-automa``, ``-METHODE`` after a code): German word parts
    glued by a hyphen, which an option the source had is not (that one is missing from the output)."""
    return re.fullmatch(r"-[^\W\d_]{2,}", span) is not None


def spans_of(text: str) -> Counter:
    """The multiset of machine-readable spans plus the digit runs (``#123``) of the text outside them."""
    spans, rest, last = Counter(), [], 0
    for start, end, span in _span_matches(text):
        spans[span] += 1
        rest.append(text[last:start])
        last = end
    rest.append(text[last:])
    spans.update(f"#{digits}" for digits in re.findall(r"[0-9]+", " ".join(rest)))
    return spans


_TAG_NAMES = set(("a abbr b big blockquote br caption center cite code dd del dfn div dl dt em font h1 h2 h3 h4 h5 "
                  "h6 hr i img ins kbd li mark ol p pre q rt ruby s samp small span strike strong sub sup table tbody "
                  "td th thead tr tt u ul var c v lang").split())
_TAG = re.compile(r"</?([A-Za-z][\w.:-]*)((?:\s[^<>]*?)?)\s*(/?)>|<\d{2}:\d{2}(?::\d{2})?\.\d{3}>|\{\\[^{}]*\}")


def tags_of(text: str) -> list[str]:
    """Tag-like strings in text: closing or self-closing tags, tags with attributes (a=...), known inline tag
    names (HTML, subtitle <i> <c.x> <v Name>), cue timestamps and {\\an8} overrides; <file> or <new name>
    metavariables are not."""
    tags = []
    for match in _TAG.finditer(text):
        whole, name = match.group(), match.group(1)
        if name is None or whole.startswith("</") or "=" in match.group(2) or match.group(3) \
                or name.split(".")[0].lower() in _TAG_NAMES:
            tags.append(" ".join(whole.split()))
    return tags


_ORDINAL = re.compile(r"(?<=[\d}])(?:st|nd|rd|th)\b")  # 82nd, Django's {}nd: German writes {}.


def plain_words(prose: str) -> str:
    """Prose without tags and machine-readable spans: the natural-language words left. An English
    ordinal's ending on a number or a placeholder (``{}nd``) is no word: German writes ``{}.``."""
    text, kept, last = _ORDINAL.sub("", _TAG.sub(" ", prose)), [], 0
    for start, end, _ in _span_matches(text):
        kept.append(text[last:start])
        last = end
    kept.append(text[last:])
    return " ".join(kept)


# ---------------------------------------------------------------------------------------------------- checks on units
def _diff(source: Iterable[str], output: Iterable[str]) -> tuple[str, str]:
    """What only the source has and what only the output has, as two short strings."""
    s, o = Counter(source), Counter(output)
    return short(", ".join((s - o).elements())), short(", ".join((o - s).elements()))


def check_code(pairs: list[tuple[Unit, Unit]], glue: bool) -> list[Finding]:
    """Code texts per unit: the same multiset, in the same order; with glue, a code piece that had a space or
    punctuation on a side in the source must not touch a letter or digit on that side in the output."""
    findings = []
    for src, out in pairs:
        sc, oc = src.code(), out.code()
        if Counter(sc) != Counter(oc):
            findings.append(Finding("code", src.where, *_diff(sc, oc)))
        elif sc != oc:
            findings.append(Finding("code", src.where, short(" | ".join(sc)), short(" | ".join(oc))))
        elif glue:
            for code, (sl, sr), (ol, orr) in zip(sc, src.code_sides(), out.code_sides()):
                if (not sl.isalnum() and ol.isalnum()) or (not sr.isalnum() and orr.isalnum()):
                    findings.append(Finding("code", src.where, short(f"{sl}`{code}`{sr}"),
                                            short(f"{ol}`{code}`{orr}") + " (glued)"))
    return findings


def check_links(pairs: list[tuple[Unit, Unit]]) -> list[Finding]:
    """Link targets per unit in order; a link with text in the source keeps some text in the output."""
    findings = []
    for src, out in pairs:
        st, ot = [t for t, _ in src.links], [t for t, _ in out.links]
        if st != ot:
            findings.append(Finding("links", src.where, short(" ".join(st)), short(" ".join(ot))))
            continue
        for (target, s_text), (_, o_text) in zip(src.links, out.links):
            if s_text.strip() and not o_text.strip():
                findings.append(Finding("links", src.where, short(f"{s_text.strip()} -> {target}"),
                                        f"(empty) -> {short(target)}"))
    return findings


def check_spans(pairs: list[tuple[Unit, Unit]]) -> list[Finding]:
    """Machine-readable spans outside code (options, versions, addresses, URLs, paths, file names, calls,
    printf/brace placeholders, identifiers, key combinations) and digit runs: the same multiset per unit."""
    findings = []
    for src, out in pairs:
        s, o = spans_of(_TAG.sub(" ", src.prose)), spans_of(_TAG.sub(" ", out.prose))
        o = Counter({span: n for span, n in o.items() if span in s or not _fragment(span)})
        o -= _spelt_out(src.prose, o - s)
        if s != o:
            findings.append(Finding("spans", src.where, *_diff(s.elements(), o.elements())))
    return findings


_NUMBER_WORDS = {word: n for n, words in enumerate((
    "zero", "one first", "two second", "three third", "four fourth", "five fifth", "six sixth", "seven seventh",
    "eight eighth", "nine ninth", "ten tenth", "eleven eleventh", "twelve twelfth")) for word in words.split()}


def _spelt_out(source: str, extra: Counter) -> Counter:
    """Of the digit runs the output has and the source lacks, those the source spells out as a word
    (m4's ``the tenth argument`` -> ``das 10. Argument``): a translation's choice, not a number changed."""
    said = Counter(_NUMBER_WORDS[w] for w in re.findall(r"[a-z]+", source.lower()) if w in _NUMBER_WORDS)
    return Counter({f"#{n}": min(count, extra[f"#{n}"]) for n, count in said.items() if extra[f"#{n}"]})


def check_tags(pairs: list[tuple[Unit, Unit]]) -> list[Finding]:
    """Tag-like strings inside text (escaped markup, subtitle tags): the same multiset per unit."""
    findings = []
    for src, out in pairs:
        s, o = tags_of(src.prose), tags_of(out.prose)
        if Counter(s) != Counter(o):
            findings.append(Finding("tags", src.where, *_diff(s, o)))
    return findings


def check_words(pairs: list[tuple[Unit, Unit]]) -> list[Finding]:
    """No words lost: a source with words outside code/placeholders keeps some, and one with >= 5 words keeps
    at least half of its letters."""
    findings = []
    for src, out in pairs:
        s_text, o_text = plain_words(src.prose), plain_words(out.prose)
        s_words, o_words = re.findall(r"[^\W\d_]{2,}", s_text), re.findall(r"[^\W\d_]{2,}", o_text)
        s_letters, o_letters = sum(map(str.isalpha, s_text)), sum(map(str.isalpha, o_text))
        if (s_words and not o_words) or (len(s_words) >= 5 and o_letters < 0.5 * s_letters):
            findings.append(Finding("words", src.where, short(" ".join(src.prose.split())),
                                    short(" ".join(out.prose.split())) or "(empty)"))
    return findings


def _columns(line: str) -> tuple[int, int]:
    """TABs and column runs of spaces (>= 2 after text, two after a full stop excepted) in one line."""
    runs = re.findall(r"(?<=\S)( {2,})(?=\S)", line)
    sentence_gaps = len(re.findall(r"[.!?:;] {2}(?=\S)", line))
    return line.count("\t"), len(runs) - sentence_gaps


def check_whitespace(pairs: list[tuple[Unit, Unit]]) -> list[Finding]:
    """Leading/trailing whitespace of units whose edges matter; TABs and column runs per line in layouts."""
    findings = []
    for src, out in pairs:
        s, o = src.raw, out.raw
        if src.edges and not (s.strip() == "" and o.strip() == ""):
            s_edges = (s[:len(s) - len(s.lstrip())], s[len(s.rstrip()):])
            o_edges = (o[:len(o) - len(o.lstrip())], o[len(o.rstrip()):])
            if s_edges != o_edges:
                findings.append(Finding("whitespace", src.where, repr(s_edges), repr(o_edges)))
        if src.layout:
            s_lines, o_lines = s.split("\n"), o.split("\n")
            if len(s_lines) != len(o_lines):
                s_lines, o_lines = [s], [o]
            for number, (sl, ol) in enumerate(zip(s_lines, o_lines), 1):
                (s_tabs, s_cols), (o_tabs, o_cols) = _columns(sl), _columns(ol)
                if s_tabs != o_tabs or s_cols > o_cols:
                    where = src.where if len(s_lines) == 1 else f"{src.where} line {number}"
                    findings.append(Finding("whitespace", where,
                                            f"{s_tabs} TAB, {s_cols} column gaps: {short(sl, 60)!r}",
                                            f"{o_tabs} TAB, {o_cols} column gaps: {short(ol, 60)!r}"))
    return findings


def _symbols(text: str) -> Counter:
    """No-break spaces, dashes (– and — count as one) and non-ASCII symbols (© ® ™ § ° → ...)."""
    found = Counter()
    for ch in text:
        if ch == "\xa0":
            found["NBSP"] += 1
        elif ch in "–—":
            found["dash"] += 1
        elif ord(ch) > 127 and (unicodedata.category(ch).startswith("S") or ch == "§"):
            found[ch] += 1
    return found


def check_entities(pairs: list[tuple[Unit, Unit]]) -> list[Finding]:
    """Per unit, no symbol of the browser-decoded source text (NBSP, ©, ™, §, °, dashes) is dropped."""
    findings = []
    for src, out in pairs:
        s, o = _symbols(src.raw), _symbols(out.raw)
        lost = s - o
        if lost:
            findings.append(Finding("entities", src.where, short(", ".join(f"{k}×{s[k]}" for k in lost)),
                                    short(", ".join(f"{k}×{o[k]}" for k in lost))))
    return findings


def _signature(unit: Unit) -> tuple:
    """What a faithful translation keeps of a unit: its kind, code, link targets, tags, spans and numbers."""
    return (unit.kind, tuple(unit.code()), tuple(t for t, _ in unit.links), tuple(sorted(tags_of(unit.prose))),
            tuple(sorted(spans_of(unit.prose).items())))


def check_structure(src: Document, out: Document) -> tuple[list[Finding], list[tuple[Unit, Unit]]]:
    """Unit counts and kinds, and the structural marks, which must be identical in order. When the units
    differ they are aligned on their signatures, so a lost block is one finding and the rest still pairs."""
    if [u.kind for u in src.units] == [u.kind for u in out.units]:
        return _changed_marks(src.marks, out.marks), list(zip(src.units, out.units))
    findings, pairs = [], []
    if len(src.units) != len(out.units):
        findings.append(Finding("structure", "document", f"{len(src.units)} units", f"{len(out.units)} units"))
    matcher = difflib.SequenceMatcher(None, [_signature(u) for u in src.units], [_signature(u) for u in out.units],
                                      autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal" or (tag == "replace" and i2 - i1 == j2 - j1):
            pairs += zip(src.units[i1:i2], out.units[j1:j2])
            findings += [Finding("structure", s.where, s.kind, o.kind)
                         for s, o in zip(src.units[i1:i2], out.units[j1:j2]) if s.kind != o.kind]
        else:
            where = src.units[i1].where if i1 < len(src.units) else "end"
            lost, added = (" ".join(u.kind for u in units) for units in (src.units[i1:i2], out.units[j1:j2]))
            findings.append(Finding("structure", where, short(lost) or "(nothing)", short(added) or "(nothing)"))
    return findings + _changed_marks(src.marks, out.marks), pairs


def _changed_marks(src: list[tuple[str, str]], out: list[tuple[str, str]]) -> list[Finding]:
    """Marks that differ, aligned so that one lost cue or entry is one finding, not one per later mark."""
    findings = []
    matcher = difflib.SequenceMatcher(None, [m for _, m in src], [m for _, m in out], autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "replace" and i2 - i1 == j2 - j1:
            findings += [Finding("structure", where, short(s), short(o)) for (where, s), (_, o)
                         in zip(src[i1:i2], out[j1:j2])]
        elif tag != "equal":
            where = src[i1][0] if i1 < len(src) else (out[j1][0] if j1 < len(out) else "end")
            findings.append(Finding("structure", where, short(" | ".join(m for _, m in src[i1:i2])) or "(nothing)",
                                    short(" | ".join(m for _, m in out[j1:j2])) or "(nothing)"))
    return findings


# ---------------------------------------------------------------------------------------------------- HTML
_HTML_BLOCKS = set(("html head body title p h1 h2 h3 h4 h5 h6 li dt dd td th caption pre blockquote div section "
                    "article aside header footer nav main figure figcaption address legend summary details option "
                    "table tr ul ol dl form fieldset center").split())
_HTML_CODE = {"code", "tt", "kbd", "samp", "var", "pre", "xmp", "listing"}
_HTML_SKIP = {"script", "style", "template", "noscript"}


def read_html(data: bytes) -> Document:
    """Blocks of a page parsed by html5lib as a browser would, charset sniffed from the bytes (no guessing)."""
    import html5lib

    parser = html5lib.HTMLParser(tree=html5lib.getTreeBuilder("etree"), namespaceHTMLElements=False)
    root = parser.parse(data, useChardet=False)
    builders: list[UnitBuilder] = []
    seen: Counter = Counter()

    def walk(el, unit: UnitBuilder) -> None:
        tag = el.tag if isinstance(el.tag, str) else ""
        if tag in _HTML_SKIP or not tag:
            return
        if tag in _HTML_BLOCKS:
            seen[tag] += 1
            unit = UnitBuilder(f"{tag} #{seen[tag]}", tag, block_code=tag == "pre")
            builders.append(unit)
        if tag in _HTML_CODE:
            unit.begin_code()
        if tag == "a" and el.get("href") is not None:
            unit.begin_link(el.get("href"))
        unit.text("\n" if tag == "br" else el.text or "")
        for child in el:
            walk(child, unit)
            unit.text(child.tail or "")
        if tag == "a" and el.get("href") is not None:
            unit.end_link()
        if tag in _HTML_CODE:
            unit.end_code()

    walk(root, UnitBuilder("document", "document"))    # html is a block: nothing stays at the root
    return Document([b.unit() for b in builders], encoding=parser.documentEncoding or "windows-1252")


def check_charset(output: bytes, out: Document) -> list[Finding]:
    """A non-ASCII UTF-8 page must say so (meta charset, http-equiv or BOM): a browser decodes what it sniffs."""
    if output.isascii():
        return []
    try:
        output.decode("utf-8")
    except UnicodeDecodeError:
        return []   # not UTF-8 at all: whatever it declares is what it is
    if out.encoding.lower().replace("_", "-") in ("utf-8", "utf8"):
        return []
    sample = re.search(rb"[\x80-\xff]+", output).group()
    try:
        seen = sample.decode(out.encoding, "replace")
    except LookupError:         # a WHATWG label Python lacks (x-user-defined)
        seen = "?"
    return [Finding("charset", "document", f"utf-8: {sample.decode('utf-8', 'replace')!r}",
                    f"{out.encoding}: {seen!r}")]


# ---------------------------------------------------------------------------------------------------- Markdown
_ADMONITION = re.compile(r"^(\s*)(!!!|\?\?\?\+?)\s*([A-Za-z][\w-]*)?")
# a pymdown-extensions block's opening (``/// name | argument``) or closing line, after indentation and quote markers
_PYMDOWN_BLOCK = re.compile(r"^([ \t>]*)(/{3,}) *(?:([\w-]+) *(?:\| *(.*?) *)?)?$")
# blocks whose argument is no text (an HTML tag and selectors, a caption's place and number): kept as written
_BLOCK_ARGUMENT_KEPT = re.compile(r"html|caption|[\w-]+-caption", re.I)


def read_markdown(data: bytes) -> Document:
    """Inline blocks, fences and code blocks of markdown-it-py (CommonMark, tables, footnotes, admonitions);
    fence lines, admonition keywords and pymdown-extensions blocks (slashes and name, options, closing
    line) as marks."""
    from markdown_it import MarkdownIt
    from mdit_py_plugins.admon import admon_plugin
    from mdit_py_plugins.footnote import footnote_plugin
    from mdit_py_plugins.front_matter import front_matter_plugin

    text = _decode(data)
    md = MarkdownIt("commonmark").enable(["table", "strikethrough"])
    tokens = md.use(front_matter_plugin).use(footnote_plugin).use(admon_plugin).parse(text)
    lines, doc, blocks, code_lines = text.split("\n"), Document(), [], set()
    for token in tokens:
        line = token.map[0] + 1 if token.map else (blocks[-1][1] if blocks else 0)
        if token.nesting == 1:
            blocks.append((token.type.removesuffix("_open") if token.tag in ("p", "div", "") else token.tag, line))
        elif token.nesting == -1 and blocks:
            blocks.pop()
        elif token.type in ("fence", "code_block"):
            unit = UnitBuilder(f"{token.type} line {line}", token.type, block_code=True)
            unit.code(token.content)
            doc.units.append(unit.unit())
            code_lines.update(range(token.map[0], token.map[1]))
            if token.type == "fence":
                opening, closing = token.map[0], token.map[1] - 1
                closed = closing > opening and lines[closing].strip().startswith(token.markup)
                doc.marks.extend((f"line {n + 1}", lines[n].rstrip()) for n in [opening] + [closing] * closed)
        elif token.type in ("inline", "html_block"):
            kind = blocks[-1][0] if blocks and token.type == "inline" else token.type
            unit = UnitBuilder(f"{kind} line {line}", kind)
            if token.type == "html_block":
                unit.text(token.content)
            for child in token.children or []:
                _markdown_inline(child, unit)
            doc.units.append(unit.unit())
    for n, raw in enumerate(lines):
        match = _ADMONITION.match(raw)
        if match and n not in code_lines:
            doc.marks.append((f"line {n + 1}", f"{match.group(1)}{match.group(2)} {match.group(3) or '(no type)'}"))
    doc.marks += _pymdown_block_marks(lines, code_lines)
    return doc


def _pymdown_block_marks(lines: list[str], code_lines: set[int]) -> list[tuple[str, str]]:
    """The lines of pymdown-extensions blocks that a translation keeps as they are: the opening line's
    slashes and name (and its argument where it is no text), the indented YAML options right after it,
    the closing line. A plain CommonMark reading sees them as paragraph text (code lines are skipped)."""
    marks, n = [], 0
    while n < len(lines):
        match = _PYMDOWN_BLOCK.match(lines[n].rstrip())
        if match is None or n in code_lines:
            n += 1
            continue
        prefix, slashes, name, argument = match.groups()
        if name is None:
            marks.append((f"line {n + 1}", f"{prefix}{slashes}"))
            n += 1
            continue
        kept = f" | {argument}" if argument and _BLOCK_ARGUMENT_KEPT.fullmatch(name) else ""
        marks.append((f"line {n + 1}", f"{prefix}{slashes} {name}{kept}"))
        n += 1
        while n < len(lines) and lines[n].strip() and lines[n].startswith(prefix + "    "):
            marks.append((f"line {n + 1}", f"option {lines[n].rstrip()}"))
            n += 1
    return marks


def _markdown_inline(token, unit: UnitBuilder) -> None:
    if token.type in ("text", "html_inline"):
        unit.text(token.content)
    elif token.type in ("softbreak", "hardbreak"):
        unit.text("\n")
    elif token.type == "code_inline":
        unit.code(token.content)
    elif token.type == "link_open":
        unit.begin_link(token.attrs.get("href", ""))
    elif token.type == "link_close":
        unit.end_link()
    elif token.type == "image":
        unit.link(f"image {token.attrs.get('src', '')}", token.content)
    elif token.type == "footnote_ref":
        unit.link(f"footnote {token.meta.get('label', '')}", "")


# ---------------------------------------------------------------------------------------------------- PO
_HELP_LINE = re.compile(r"^[ \t]+-|\S(?: {2,}|\t)\S", re.M)


def read_po(data: bytes, side: str) -> Document:
    """PO entries by polib: msgid (and msgid_plural) on the source side, msgstr[0] (and msgstr[1]) on the
    output side; msgctxt/msgid as marks; entries without a full msgstr as missing."""
    import polib

    charset = re.search(rb"charset=([\w.-]+)", data)
    try:
        try:
            text = data.decode(charset.group(1).decode() if charset else "utf-8")
        except LookupError:         # a template's "charset=CHARSET"
            text = data.decode("utf-8")
        catalog = polib.pofile(text if "\n" in text else text + "\n")
    except (OSError, ValueError, UnicodeError, KeyError, IndexError) as error:
        raise ContentParseError(str(error)) from error
    doc = Document()
    for entry in (e for e in catalog if not e.obsolete and e.msgid):
        where = f"msgid {short(entry.msgid, 40)!r}"
        where = f"msgctxt {short(entry.msgctxt, 20)!r} {where}" if entry.msgctxt else where
        doc.marks.append((where, f"{entry.msgctxt or ''}\x04{entry.msgid}\x00{entry.msgid_plural or ''}"))
        sources = [entry.msgid] + ([entry.msgid_plural] if entry.msgid_plural else [])
        if side == "source":
            texts = sources
        else:
            plural = [entry.msgstr_plural[k] for k in sorted(entry.msgstr_plural)]
            texts = (plural + ["", ""])[:2] if entry.msgid_plural else [entry.msgstr]
            complete = (bool(plural) and all(plural)) if entry.msgid_plural else bool(entry.msgstr)
            if not complete:
                doc.missing.append(where)
        for n, (msgid, msgstr) in enumerate(zip(sources, texts)):
            unit = UnitBuilder(where + (" [plural]" if n else ""), "msgid_plural" if n else "msgid",
                               edges=True, layout=bool(_HELP_LINE.search(msgid)))
            unit.text(msgstr)
            doc.units.append(unit.unit())
    return doc


def check_msgfmt(output: bytes) -> list[Finding]:
    """msgfmt -c --check-format --use-fuzzy on the output: one finding per error line (warnings are not)."""
    with tempfile.NamedTemporaryFile(suffix=".po") as handle:
        handle.write(output)
        handle.flush()
        try:
            result = subprocess.run(["msgfmt", "-c", "--check-format", "--use-fuzzy", "-o", "/dev/null", handle.name],
                                    capture_output=True, text=True, errors="replace", timeout=120)
        except subprocess.TimeoutExpired:
            return [Finding("msgfmt", "document", "", "msgfmt did not finish in 120 s")]
        errors = result.stderr.replace(handle.name, "output.po")
    if result.returncode == 0:
        return []
    findings, warning = [], False
    for line in errors.splitlines():
        place = re.match(r"output\.po:(\d+):(?:\d+:)?\s*(.*)", line)
        if place:
            warning = place.group(2).startswith("warning:")
            if not warning:
                findings.append(Finding("msgfmt", f"line {place.group(1)}", "", short(place.group(2), 160)))
        elif line.startswith(" ") and findings and not warning:     # a hint that continues the error above
            last = findings.pop()
            findings.append(Finding("msgfmt", last.where, "", short(f"{last.output} {line.strip()}", 160)))
        elif not re.match(r"msgfmt: found \d+ fatal error|\s", line):
            findings.append(Finding("msgfmt", "document", "", short(line, 160)))
    return findings


# ---------------------------------------------------------------------------------------------------- XLIFF
_XML_SPACE = "{http://www.w3.org/XML/1998/namespace}space"


def read_xliff(data: bytes, side: str) -> Document:
    """trans-units (1.2) or unit/segments (2.0) by lxml: <source> on the source side, <target> on the output
    side; inline codes as code, the <source> content and ids as marks; output units without <target> missing."""
    from lxml import etree

    try:
        root = etree.fromstring(data, etree.XMLParser(resolve_entities=False, no_network=True))
    except etree.XMLSyntaxError as error:
        raise ContentParseError(str(error)) from error
    doc, local = Document(), (lambda el: etree.QName(el).localname if isinstance(el.tag, str) else "")
    segments = []
    for el in root.iter():
        if local(el) == "trans-unit":
            segments.append((el, el, el.get("id", "?")))
        elif local(el) == "segment":
            unit = el.getparent()
            segments.append((el, unit, f"{unit.get('id', '?')}" + (f"/{el.get('id')}" if el.get("id") else "")))
    for el, owner, ident in segments:
        where = f"unit {ident!r}"
        source = next((c for c in el if local(c) == "source"), None)
        target = next((c for c in el if local(c) == "target"), None)
        content = source if side == "source" else target
        if side == "output" and target is None and owner.get("translate") != "no":
            doc.missing.append(where)
        scopes = ([content] if content is not None else []) + [el, *el.iterancestors()]
        space = next((scope.get(_XML_SPACE) for scope in scopes if scope.get(_XML_SPACE)), "default")
        unit = UnitBuilder(where, "unit", edges=space == "preserve")
        if content is not None:
            _xliff_inline(content, unit, local)
        doc.units.append(unit.unit())
        mark = UnitBuilder("", "")
        if source is not None:
            _xliff_inline(source, mark, local)
        doc.marks.append((where, f"{ident} {mark.unit().raw!r} {mark.unit().code()}"))
    return doc


def _xliff_inline(el, unit: UnitBuilder, local: Callable) -> None:
    """Text of a <source>/<target>; <g>/<pc> ids around their (translatable) content, <x>/<bx>/<ex>/<sc>/<ec>
    and 2.0 <ph> ids, and the contents of 1.2 <ph>/<bpt>/<ept>/<it> are codes."""
    unit.text(el.text or "")
    for child in el:
        name, ident = local(child), child.get("id") or child.get("startRef") or ""
        if name in ("g", "pc"):
            unit.code(f"<{name} {ident}>")
            _xliff_inline(child, unit, local)
            unit.code(f"</{name} {ident}>")
        elif name in ("ph", "bpt", "ept", "it") and "".join(child.itertext()):
            unit.code(f"<{name}>{''.join(child.itertext())}")
        elif name in ("x", "bx", "ex", "sc", "ec", "ph"):
            unit.code(f"<{name} {ident}/>")
        elif name == "cp":
            hex_code = child.get("hex", "")
            unit.text(chr(int(hex_code, 16)) if re.fullmatch(r"[0-9A-Fa-f]{1,6}", hex_code) and
                      int(hex_code, 16) <= 0x10FFFF else "\ufffd")
        elif name not in ("sm", "em", ""):
            _xliff_inline(child, unit, local)     # mrk, sub: translatable content
        unit.text(child.tail or "")


# ---------------------------------------------------------------------------------------------------- DOCX
_W = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"
_R_ID = "{http://schemas.openxmlformats.org/officeDocument/2006/relationships}id"
# "code" not inside "Unicode": LibreOffice's headings are set in "Liberation Sans Unicode MS"
_MONO = re.compile(r"courier|consolas|menlo|monaco|lucida console|lucida sans typewriter|inconsolata|mono|(?<!uni)code",
                   re.I)
_CODE_STYLE = re.compile(r"(?<!uni)code|source ?text|preformatted|verbatim|teletype|macro ?text|quelltext|"
                         r"html ?(keyboard|sample|typewriter|variable)", re.I)
_DOCX_PARTS = re.compile(r"word/(document|header\d*|footer\d*|footnotes|endnotes)\.xml")


@dataclass(frozen=True)
class _Style:
    name: str
    based_on: str | None
    font: str | None
    default: bool


def read_docx(data: bytes) -> Document:
    """Paragraphs of the main document, headers, footers and notes (zipfile + lxml): runs in a monospace font
    or a code style are code (a paragraph in such a style is code as a whole); hyperlinks and HYPERLINK fields
    are links (r:id resolved through the part's relationships, w:anchor as #anchor)."""
    from lxml import etree

    try:
        package = zipfile.ZipFile(io.BytesIO(data))
        names = set(package.namelist())
        parts = {name: etree.fromstring(package.read(name)) for name in names if _DOCX_PARTS.fullmatch(name)}
        styles = _docx_styles(etree.fromstring(package.read("word/styles.xml"))) if "word/styles.xml" in names else {}
        rels = {name: {r.get("Id"): r.get("Target") for r in etree.fromstring(package.read(rels_name))}
                for name in parts if (rels_name := name.replace("word/", "word/_rels/") + ".rels") in names}
    except (zipfile.BadZipFile, KeyError, etree.XMLSyntaxError, zlib.error, EOFError, NotImplementedError,
            RuntimeError) as error:
        raise ContentParseError(f"{type(error).__name__}: {error}") from error
    if "word/document.xml" not in parts:
        raise ContentParseError("no word/document.xml")
    doc = Document()
    for name in sorted(parts, key=lambda n: (n != "word/document.xml", n)):
        kind = "p" if name == "word/document.xml" else name[5:-4] + " p"     # "p", "footnotes p", "header1 p"
        for n, paragraph in enumerate(parts[name].iter(f"{_W}p"), 1):
            doc.units.append(_docx_paragraph(paragraph, styles, rels.get(name, {}), UnitBuilder(f"{kind} #{n}", kind)))
    return doc


def _docx_styles(root) -> dict[str, _Style]:
    styles = {}
    for style in root.iter(f"{_W}style"):
        name, based, fonts = style.find(f"{_W}name"), style.find(f"{_W}basedOn"), style.find(f"{_W}rPr/{_W}rFonts")
        styles[style.get(f"{_W}styleId")] = _Style(
            name.get(f"{_W}val") if name is not None else "", based.get(f"{_W}val") if based is not None else None,
            fonts.get(f"{_W}ascii") or fonts.get(f"{_W}hAnsi") if fonts is not None else None,
            style.get(f"{_W}default") in ("1", "true"))
    return styles


def _style_is_code(styles: dict[str, _Style], style_id: str | None) -> bool:
    """A style whose name/id (or a base's) suggests code, or that sets a monospace font (the default
    paragraph style excepted: a document typed in Courier throughout is not all code)."""
    seen = set()
    while style_id and style_id not in seen:
        seen.add(style_id)
        style = styles.get(style_id)
        if _CODE_STYLE.search(style_id) or (style and _CODE_STYLE.search(style.name)):
            return True
        if style is None:
            return False
        if style.font:
            return bool(_MONO.search(style.font)) and not style.default
        style_id = style.based_on
    return False


def _docx_paragraph(paragraph, styles: dict[str, _Style], rels: dict[str, str], unit: UnitBuilder) -> Unit:
    p_style = paragraph.find(f"{_W}pPr/{_W}pStyle")
    whole_code = _style_is_code(styles, p_style.get(f"{_W}val") if p_style is not None else None)
    unit.flags["block_code"], fields = whole_code, []

    def run(r) -> None:
        props = r.find(f"{_W}rPr")
        fonts = props.find(f"{_W}rFonts") if props is not None else None
        font = (fonts.get(f"{_W}ascii") or fonts.get(f"{_W}hAnsi")) if fonts is not None else None
        r_style = props.find(f"{_W}rStyle") if props is not None else None
        code = whole_code or (bool(_MONO.search(font)) if font else
                              _style_is_code(styles, r_style.get(f"{_W}val") if r_style is not None else None))
        for child in r:
            tag = child.tag.removeprefix(_W) if isinstance(child.tag, str) else ""
            if tag == "fldChar":
                kind = child.get(f"{_W}fldCharType")
                if kind == "begin":
                    fields.append({"instr": "", "result": False, "link": False})
                elif kind == "separate" and fields:
                    fields[-1]["result"] = True
                    target = _hyperlink_field(fields[-1]["instr"])
                    if target is not None:
                        fields[-1]["link"] = True
                        unit.begin_link(target)
                elif kind == "end" and fields:
                    if fields.pop()["link"]:
                        unit.end_link()
            elif tag == "instrText" and fields and not fields[-1]["result"]:
                fields[-1]["instr"] += child.text or ""
            elif tag in ("t", "tab", "br", "cr", "noBreakHyphen") and not any(not f["result"] for f in fields):
                text = {"tab": "\t", "br": "\n", "cr": "\n", "noBreakHyphen": "\u2011"}.get(tag, child.text or "")
                if code:
                    unit.begin_code(join=True)
                unit.text(text)
                if code:
                    unit.end_code()

    def walk(el) -> None:
        for child in el:
            tag = child.tag.removeprefix(_W) if isinstance(child.tag, str) else ""
            if tag in ("p", "pPr", "del", "moveFrom", "rPr"):
                continue            # nested paragraphs are units of their own; deletions are not text
            if tag == "r":
                run(child)
            elif tag == "hyperlink":
                target = rels.get(child.get(_R_ID), "") if child.get(_R_ID) else ""
                anchor = child.get(f"{_W}anchor")
                unit.begin_link(target + (f"#{anchor}" if anchor else ""))
                walk(child)
                unit.end_link()
            elif tag == "fldSimple":
                target = _hyperlink_field(child.get(f"{_W}instr", ""))
                if target is not None:
                    unit.begin_link(target)
                walk(child)
                if target is not None:
                    unit.end_link()
            else:
                walk(child)         # ins, smartTag, sdt, customXml, moveTo, drawings: their runs count

    walk(paragraph)
    return unit.unit()


def _hyperlink_field(instruction: str) -> str | None:
    """The target of a HYPERLINK field code ("url", \\l "anchor"; \\o tooltips and \\t frames skipped), None for
    other fields."""
    match = re.match(r"\s*HYPERLINK\b(.*)", instruction, re.S)
    if not match:
        return None
    url, anchor, switch = "", "", None
    for token in re.findall(r'\\[a-z]|"[^"]*"|[^\s"]+', match.group(1)):
        if token.startswith("\\"):
            switch = token if token in ("\\l", "\\o", "\\t") else None    # \h \m \n take no argument
            continue
        if switch == "\\l":
            anchor = token.strip('"')
        elif switch is None and not url:
            url = token.strip('"')
        switch = None
    return url + (f"#{anchor}" if anchor else "")


# ---------------------------------------------------------------------------------------------------- subtitles, text
_TURN = re.compile(r"^\s*-(?!-)")


def _cue(where: str, text: str, timing: str, marks: list) -> Unit:
    lines = text.split("\n")
    shape = " ".join("-" if _TURN.match(line) else "." for line in lines)
    marks.extend([(where, timing), (where, f"{len(lines)} line{'s' * (len(lines) != 1)}: {shape}")])
    unit = UnitBuilder(where, "cue")
    unit.text(text)
    return unit.unit()


def read_srt(data: bytes) -> Document:
    """Cues by srt: text units; timings and per-line shape (line count, '- ' speaker turns) as marks."""
    import srt

    try:
        cues = list(srt.parse(_decode(data)))
    except (srt.SRTParseError, ValueError) as error:
        raise ContentParseError(str(error)) from error
    doc = Document()
    doc.units = [_cue(f"cue {c.index}", c.content, f"{srt.timedelta_to_srt_timestamp(c.start)} --> "
                      f"{srt.timedelta_to_srt_timestamp(c.end)}", doc.marks) for c in cues]
    return doc


def read_vtt(data: bytes) -> Document:
    """Cues by webvtt-py: text units (tags kept); identifiers, timings, settings and line shape as marks."""
    import webvtt

    try:
        captions = webvtt.from_string(_decode(data)).captions
    except (webvtt.errors.MalformedFileError, ValueError) as error:
        raise ContentParseError(str(error)) from error
    doc = Document()
    for n, c in enumerate(captions, 1):
        timing = f"{c.identifier or ''} {c.start} --> {c.end} {c.settings or ''}".strip()
        doc.units.append(_cue(f"cue {n}", c.raw_text, timing, doc.marks))
    return doc


def read_txt(data: bytes) -> Document:
    """Lines: each one a unit whose edges, TABs and column layout matter."""
    text = _decode(data).replace("\r\n", "\n")
    lines = text.removesuffix("\n").split("\n") if text else []
    doc = Document()
    for n, line in enumerate(lines, 1):
        unit = UnitBuilder(f"line {n}", "line", edges=True, layout=True)
        unit.text(line)
        doc.units.append(unit.unit())
    doc.marks.append(("line endings", "CRLF" if b"\r\n" in data else "LF"))
    return doc


def _decode(data: bytes) -> str:
    """Text by its byte-order mark (UTF-16 subtitles exist), else UTF-8."""
    try:
        if data.startswith((b"\xff\xfe", b"\xfe\xff")):
            return data.decode("utf-16")
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        raise ContentParseError(f"not UTF-8 (nor UTF-16 by its byte-order mark): {error}") from error


# ---------------------------------------------------------------------------------------------------- entry point
_READERS: dict[str, Callable[[bytes, str], Document]] = {
    "html": lambda data, side: read_html(data), "markdown": lambda data, side: read_markdown(data),
    "po": read_po, "xliff": read_xliff, "docx": lambda data, side: read_docx(data),
    "srt": lambda data, side: read_srt(data), "vtt": lambda data, side: read_vtt(data),
    "txt": lambda data, side: read_txt(data),
}


def check_file(fmt: str, source: bytes, output: bytes) -> list[Finding]:
    """All content findings for an output document against its source, in check order."""
    if fmt not in _READERS:
        raise ValueError(f"unknown format {fmt!r}; one of {', '.join(FORMATS)}")
    findings: list[Finding] = []
    if fmt == "po":
        findings += check_msgfmt(output)
    try:
        src = _READERS[fmt](source, "source")
    except ContentParseError as error:
        return findings + [Finding("parse", "document", short(str(error), 120), "(source does not parse)")]
    try:
        out = _READERS[fmt](output, "output")
    except ContentParseError as error:
        return findings + [Finding("parse", "document", "", short(str(error), 120))]
    structure, pairs = check_structure(src, out)
    findings += structure
    findings += check_code(pairs, glue=fmt in ("html", "markdown"))
    findings += check_links(pairs) + check_spans(pairs) + check_tags(pairs) + check_words(pairs)
    findings += check_whitespace(pairs)
    if fmt == "html":
        findings += check_entities(pairs) + check_charset(output, out)
    findings += [Finding("target", where, "", "(no target)") for where in out.missing]
    order = {check: n for n, check in enumerate(CHECKS)}
    return sorted(findings, key=lambda f: order[f.check])
