"""gettext catalogues (``.po``, ``.pot``), parsed by ``polib``.

Every message with no translation yet is translated: ``msgstr`` from ``msgid``, and for plural
messages ``msgstr[0]`` from ``msgid`` and the other forms from ``msgid_plural``. Messages that
already have a translation, fuzzy or not, and obsolete ones are left alone. New translations
are marked ``fuzzy`` (machine output for a translator to review) unless ``mark_fuzzy`` is off.
Only the ``msgstr`` lines of translated messages (and their flag comment) change; every other
byte, the header and comments included, is kept, but for the header's charset: the catalogue is
written as UTF-8 and says so. A catalogue without a header entry (its first entry a message, as
xgettext fragments and hand-written examples have it) is read and written alike.

A message made from a page (html2po, po4a: ``<a href="...">Read</a> the <code>docs</code>``) holds
markup: its tags are inline codes (``Tag``), placed around the aligned target words as in an HTML
page (``formats.markup``), and its translated text is escaped as HTML text. A message counts as
markup when it has an HTML element, a tag closed in the message, or a ``<x/>``; a lone ``<file>``
in a usage string is text.

In a ``c-format`` message whose translation has the msgid's printf directives in another order
(``%s:%d`` translated as ``%d %s:``), each directive is numbered by its argument (``%2$d %1$s:``),
the form gettext gives translators for reordering, so that ``msgfmt -c`` accepts it and printf
reads each argument as its type.
"""
from __future__ import annotations

import html
import re
from typing import Sequence

import polib

from .declared import utf8_po_header
from .inline import inline_unit
from .markup import Link, transfer
from .model import FormatError, Parsed, TextUnit

_TAG = re.compile(r"<(/?)([A-Za-z][\w:.-]*)((?:\s+[^<>]*?)?)(/?)>")
_HTML_NAMES = frozenset(
    "a abbr b bdi bdo big blockquote br cite code dd del dfn div dl dt em font h1 h2 h3 h4 h5 h6 hr i img ins "
    "kbd li mark ol p pre q s samp small span strong sub sup table td th time tr tt u ul var wbr".split())
# A C printf directive as gettext reads one (%% aside): argument number, flags, width, precision,
# size and conversion, or a size from <inttypes.h> as xgettext writes it (%<PRIu64>, %08<PRIx64>)
_C_DIRECTIVE = re.compile(r"%%|%(?P<argument>\d+\$)?(?P<spec>[-+ #0'I]*(?:\d+|\*)?(?:\.(?:\d+|\*))?"
                          r"(?:(?P<size>hh|h|ll|l|L|q|j|z|Z|t)?(?P<conversion>[diouxXeEfFgGaAcspn])|(?P<macro><PRI\w+>)))")
_HEADER = re.compile(r'^(?:#[^\n]*\n|[ \t]*\n)*msgid[ \t]+""[ \t]*\r?\n(?:[ \t]*"[^\n]*\n)*?msgstr[ \t]+""[ \t]*\r?\n'
                     r'(?:[ \t]*"[^\n]*(?:\n|$))*')


def parse_po(text: str, languages: tuple[str, str] | None = None, mark_fuzzy: bool = True) -> Parsed:
    """``languages``: the translation's (source, target) languages; a catalogue whose plural
    messages are translated and whose header gives no ``Plural-Forms`` (or a template's
    ``nplurals=INTEGER``) gets the target language's, as ``msgfmt -c`` requires."""
    header = _HEADER.match(text)
    if header:
        text = utf8_po_header(header.group()) + text[header.end():]
    catalogue = _catalogue(text)
    target = languages[1] if languages else DEFAULT_TARGET
    if _nplurals(catalogue) is None and any(_to_translate(e) and e.msgid_plural for e in catalogue):
        text = _with_plural_forms(text, target)
        catalogue = _catalogue(text)
    lines = text.splitlines(keepends=True)
    units: list[TextUnit] = []
    edges: list[tuple[str, str] | None] = []  # per unit: whitespace around a markup message's text; None: plain
    edits: list[tuple[polib.POEntry, int, int, int]] = []  # entry, its first line, first unit, units of the entry
    for entry in catalogue:
        if not _to_translate(entry):
            continue
        first, start = len(units), _entry_start(lines, entry)
        for source, where in ((entry.msgid, f"line {start + 1}"), (entry.msgid_plural, f"line {start + 1} (plural)")):
            if source:
                unit, around = _unit(source, where)
                units.append(unit)
                edges.append(around)
        edits.append((entry, start, first, len(units) - first))
    nplurals = _nplurals(catalogue) or 2

    def render(translations: Sequence[str], links: Sequence[Sequence[Link]] | None,
               notes: dict[int, list[str]]) -> str:
        translations = [units[k].text if edges[k] is COPIED else
                        _with_markup(units[k], edges[k], t, links[k] if links else (), k, notes)
                        for k, t in enumerate(translations)]
        out = list(lines)
        for entry, start, first, _count in reversed(edits):  # from the end: line numbers stay valid
            end = _entry_end(out, start)
            block = out[start:end]
            newline = "\r\n" if block and block[0].endswith("\r\n") else "\n"
            c_format = "c-format" in entry.flags
            singular = _numbered(entry.msgid, translations[first]) if c_format else translations[first]
            plural = translations[first + 1] if entry.msgid_plural else ""
            plural = _numbered(entry.msgid_plural, plural) if c_format and entry.msgid_plural else plural
            if c_format and not _same_arguments(entry.msgid, singular, entry.msgid_plural, plural):
                notes.setdefault(first, []).append(  # msgfmt -c would refuse it, and printf would misread it
                    "source text kept: the translation's printf directives are not the message's "
                    f"({' '.join(_directives(entry.msgid)) or 'none'} -> {' '.join(_directives(singular)) or 'none'})")
                singular, plural = entry.msgid, entry.msgid_plural  # as any message kept: fuzzy, for review
            if entry.msgid_plural:
                forms = [singular] + [plural] * (max(nplurals, 2) - 1)
                msgstr = [f'msgstr[{i}] "{polib.escape(form)}"{newline}' for i, form in enumerate(forms)]
            else:
                msgstr = [f'msgstr "{polib.escape(singular)}"{newline}']
            kept = _without_msgstr(block)
            if mark_fuzzy and "fuzzy" not in entry.flags:
                kept = _with_fuzzy_flag(kept, newline)
            out[start:end] = kept + msgstr
        return "".join(out)

    return Parsed(units, render, marked=any(around is not None and around is not COPIED for around in edges))


COPIED = ("", "")  # the edges of a markup message with no words: its msgstr is its msgid


def _unit(source: str, where: str) -> tuple[TextUnit, tuple[str, str] | None]:
    """A message's unit, with the whitespace around its text if it holds markup (None if not)."""
    if not is_markup(source):
        return TextUnit(source, where), None
    from .html import markup_items

    unit, lead, trail = inline_unit(markup_items(source), where)
    if unit is None:  # markup and no words (``<img src="a.png"/>``): nothing to translate, copied as it is
        return TextUnit(source, where, warnings=(f"{where}: markup without words, copied as it is",)), COPIED
    return unit, (lead, trail)


def is_markup(source: str) -> bool:
    """Whether a message holds HTML: an HTML element, a tag closed in the message, or a ``<x/>``
    (a lone ``<file>`` in a usage string is text). XLIFF units made from pages use it too."""
    tags = list(_TAG.finditer(source))
    opened = {m.group(2) for m in tags if not m.group(1)}
    return any(m.group(2).lower() in _HTML_NAMES or m.group(4) or (m.group(1) and m.group(2) in opened) for m in tags)


def _with_markup(unit: TextUnit, around: tuple[str, str] | None, translation: str, links: Sequence[Link],
                 index: int, notes: dict[int, list[str]] | None) -> str:
    """A markup message's translation with its tags placed and its text escaped as HTML."""
    if around is None:
        return translation
    pieces, unit_notes = transfer(unit.text, unit.tags, translation, links)
    if unit_notes and notes is not None:
        notes[index] = unit_notes
    return around[0] + "".join(p.text if p.markup else html.escape(p.text, quote=False) for p in pieces) + around[1]


def _numbered(msgid: str, translation: str) -> str:
    """``translation`` with each printf directive numbered by its argument in ``msgid`` (``%2$s``)
    if it holds the msgid's directives in another order; else as it is (also when the msgid numbers
    its own, or takes a width or precision from an argument, ``%*d``)."""
    source = [m for m in _C_DIRECTIVE.finditer(msgid) if m.group("spec")]
    target = [m for m in _C_DIRECTIVE.finditer(translation) if m.group("spec")]
    specs = [m.group("spec") for m in source]
    if any(m.group("argument") or "*" in m.group("spec") for m in source + target) or \
            [m.group("spec") for m in target] == specs or sorted(m.group("spec") for m in target) != sorted(specs):
        return translation
    arguments: dict[str, list[int]] = {}  # a directive -> its arguments, in the msgid's order
    for number, spec in enumerate(specs, 1):
        arguments.setdefault(spec, []).append(number)
    out, at = [], 0
    for m in target:  # the k-th %s of the translation takes the argument of the msgid's k-th %s
        out += [translation[at:m.start()], f"%{arguments[m.group('spec')].pop(0)}${m.group('spec')}"]
        at = m.end()
    return "".join(out) + translation[at:]


def _directives(text: str) -> list[str]:
    """The printf directives of ``text`` as written, ``%%`` left out."""
    return [m.group() for m in _C_DIRECTIVE.finditer(text) if m.group("spec")]


# Conversions printf reads the same argument type for (msgfmt -c compares them this way)
_SAME_TYPE = {"i": "d", "o": "u", "x": "u", "X": "u", "E": "f", "F": "f", "g": "f", "G": "f", "e": "f", "a": "f", "A": "f"}


def _arguments(text: str) -> dict[int, str]:
    """Argument number -> the type a c-format string reads it as (size and conversion; ``*`` an
    int), numbered as printf numbers them: by ``%N$`` where given, else in order; and under 0 the
    count of "%" signs that start no directive, if any."""
    out: dict[int, str] = {}
    at = end = stray = 0
    for m in _C_DIRECTIVE.finditer(text):
        stray += text.count("%", end, m.start())
        end = m.end()
        spec = m.group("spec")
        if not spec:
            continue
        for _ in range(spec.count("*")):  # a width or precision taken from an int argument
            at += 1
            out[at] = "int*"
        conversion = m.group("conversion") or m.group("macro")
        number = int(m.group("argument")[:-1]) if m.group("argument") else at + 1
        at = max(at, number)
        out[number] = (m.group("size") or "") + _SAME_TYPE.get(conversion, conversion)
    stray += text.count("%", end)
    if stray:  # a "%" that starts no directive (the model's "Block % %u"): msgfmt -c refuses it
        out[0] = f"{stray} stray %"
    return out


def _same_arguments(msgid: str, singular: str, msgid_plural: str, plural: str) -> bool:
    """Whether the translations read printf's arguments as the message does: a message's
    translation every argument with the same type; of a plural message, the plural form those of
    ``msgid_plural``, and the singular form no argument the message lacks or reads otherwise (a
    singular may spell out its number: "%d file" -> "eine Datei")."""
    if not msgid_plural:
        return _arguments(singular) == _arguments(msgid)
    source = _arguments(msgid)
    return _arguments(plural) == _arguments(msgid_plural) and all(
        source.get(number) == kind for number, kind in _arguments(singular).items())


def _entry_start(lines: list[str], entry: polib.POEntry) -> int:
    """The index of an entry's first line. polib numbers the first entry of a catalogue without a
    header 0: its start is found as the comments before its first keyword line."""
    if entry.linenum > 0:
        return entry.linenum - 1
    at = next((i for i, line in enumerate(lines) if line.startswith(("msgctxt", "msgid"))), 0)
    while at > 0 and lines[at - 1].startswith("#") and not lines[at - 1].startswith("#~"):
        at -= 1
    return at


def _has_translation(entry: polib.POEntry) -> bool:
    return bool(entry.msgstr) or any(entry.msgstr_plural.values())


def _to_translate(entry: polib.POEntry) -> bool:
    return not (entry.obsolete or not entry.msgid or entry.translated() or _has_translation(entry))


def _catalogue(text: str) -> polib.POFile:
    try:
        return polib.pofile(text)
    except (OSError, ValueError) as exc:  # polib raises IOError/OSError for syntax errors
        raise FormatError(f"not a valid gettext PO file: {exc}") from None


def _nplurals(catalogue: polib.POFile) -> int | None:
    """The header's ``nplurals``, or None where it gives none (or a template's ``INTEGER``)."""
    forms = catalogue.metadata.get("Plural-Forms", "")
    for part in forms.split(";"):
        key, _, value = part.partition("=")
        if key.strip() == "nplurals" and value.strip().isdigit():
            return int(value.strip())
    return None


# The Plural-Forms header of each target language (the gettext manual's table); a catalogue that
# states none gets its target language's, else ``DEFAULT_TARGET``'s where the language is unknown.
PLURAL_FORMS = {
    "de": "nplurals=2; plural=(n != 1);", "en": "nplurals=2; plural=(n != 1);", "nl": "nplurals=2; plural=(n != 1);",
    "es": "nplurals=2; plural=(n != 1);", "it": "nplurals=2; plural=(n != 1);", "sv": "nplurals=2; plural=(n != 1);",
    "da": "nplurals=2; plural=(n != 1);", "nb": "nplurals=2; plural=(n != 1);", "fi": "nplurals=2; plural=(n != 1);",
    "fr": "nplurals=2; plural=(n > 1);", "pt": "nplurals=2; plural=(n != 1);", "pt_BR": "nplurals=2; plural=(n > 1);",
    "cs": "nplurals=3; plural=(n==1) ? 0 : (n>=2 && n<=4) ? 1 : 2;",
    "sk": "nplurals=3; plural=(n==1) ? 0 : (n>=2 && n<=4) ? 1 : 2;",
    "pl": "nplurals=3; plural=(n==1 ? 0 : n%10>=2 && n%10<=4 && (n%100<10 || n%100>=20) ? 1 : 2);",
    "ru": "nplurals=3; plural=(n%10==1 && n%100!=11 ? 0 : n%10>=2 && n%10<=4 && (n%100<10 || n%100>=20) ? 1 : 2);",
    "uk": "nplurals=3; plural=(n%10==1 && n%100!=11 ? 0 : n%10>=2 && n%10<=4 && (n%100<10 || n%100>=20) ? 1 : 2);",
    "ja": "nplurals=1; plural=0;", "zh": "nplurals=1; plural=0;", "ko": "nplurals=1; plural=0;",
    "tr": "nplurals=2; plural=(n != 1);",
}
DEFAULT_TARGET = "de"
_PLURAL_FORMS_LINE = re.compile(r'^([ \t]*")Plural-Forms:[^"\n]*?(\\n)?("[ \t]*\r?\n)', re.M)


def _with_plural_forms(text: str, language: str) -> str:
    """``text`` whose header states ``language``'s Plural-Forms: a template's placeholder line
    replaced, or the line added at the end of the header's msgstr, or a header entry added before
    the first message of a catalogue that has none."""
    forms = PLURAL_FORMS.get(language) or PLURAL_FORMS.get(language.split("_")[0].split("-")[0]) \
        or PLURAL_FORMS[DEFAULT_TARGET]
    header = _HEADER.match(text)
    if header is None:
        newline = "\r\n" if "\r\n" in text else "\n"
        return (f'msgid ""{newline}msgstr ""{newline}"Content-Type: text/plain; charset=UTF-8\\n"{newline}'
                f'"Plural-Forms: {forms}\\n"{newline}{newline}') + text
    block = header.group()
    if _PLURAL_FORMS_LINE.search(block):
        block = _PLURAL_FORMS_LINE.sub(lambda m: f"{m.group(1)}Plural-Forms: {forms}\\n{m.group(3)}", block, count=1)
    else:
        lines = block.splitlines(keepends=True)
        last = max(i for i, line in enumerate(lines) if line.lstrip().startswith(('"', "msgstr")))
        newline = "\r\n" if lines[last].endswith("\r\n") else "\n"
        if not lines[last].endswith(("\n", "\r")):
            lines[last] += newline
        lines.insert(last + 1, f'"Plural-Forms: {forms}\\n"{newline}')
        block = "".join(lines)
    return block + text[header.end():]


def _entry_end(lines: list[str], start: int) -> int:
    """The index after an entry's last line: the next blank line, or the end."""
    end = start
    while end < len(lines) and lines[end].strip():
        end += 1
    return end


def _without_msgstr(block: list[str]) -> list[str]:
    """The entry's lines without its msgstr lines (and their continuation lines)."""
    kept, in_msgstr = [], False
    for line in block:
        stripped = line.lstrip()
        if stripped.startswith("msgstr"):
            in_msgstr = True
            continue
        if in_msgstr and stripped.startswith('"'):
            continue
        in_msgstr = False
        kept.append(line)
    return kept


def _with_fuzzy_flag(block: list[str], newline: str) -> list[str]:
    for index, line in enumerate(block):
        if line.startswith("#,"):
            return block[:index] + [f"#, fuzzy,{line[2:]}" if line[2:].strip() else f"#, fuzzy{newline}"] + block[index + 1:]
    at = next((i for i, line in enumerate(block) if not line.startswith("#")), len(block))
    return block[:at] + [f"#, fuzzy{newline}"] + block[at:]
