"""gettext catalogues (``.po``, ``.pot``), parsed by ``polib``.

Every message with no translation yet is translated: ``msgstr`` from ``msgid``, and for plural
messages ``msgstr[0]`` from ``msgid`` and the other forms from ``msgid_plural``. Messages that
already have a translation, fuzzy or not, and obsolete ones are left alone. New translations
are marked ``fuzzy`` (machine output for a translator to review) unless ``mark_fuzzy`` is off.
Only the ``msgstr`` lines of translated messages (and their flag comment) change; every other
byte, the header and comments included, is kept.
"""
from __future__ import annotations

from typing import Sequence

import polib

from .model import FormatError, Parsed, TextUnit


def parse_po(text: str, mark_fuzzy: bool = True) -> Parsed:
    try:
        catalogue = polib.pofile(text)
    except (OSError, ValueError) as exc:  # polib raises IOError/OSError for syntax errors
        raise FormatError(f"not a valid gettext PO file: {exc}") from None
    lines = text.splitlines(keepends=True)
    units: list[TextUnit] = []
    edits: list[tuple[polib.POEntry, int, int]] = []  # entry, first unit, units of the entry
    for entry in catalogue:
        if entry.obsolete or not entry.msgid or entry.translated() or _has_translation(entry):
            continue
        first = len(units)
        units.append(TextUnit(entry.msgid, f"line {entry.linenum}"))
        if entry.msgid_plural:
            units.append(TextUnit(entry.msgid_plural, f"line {entry.linenum} (plural)"))
        edits.append((entry, first, len(units) - first))
    nplurals = _nplurals(catalogue)

    def render(translations: Sequence[str]) -> str:
        out = list(lines)
        for entry, first, _count in reversed(edits):  # from the end: line numbers stay valid
            start = entry.linenum - 1
            end = _entry_end(out, start)
            block = out[start:end]
            newline = "\r\n" if block and block[0].endswith("\r\n") else "\n"
            if entry.msgid_plural:
                forms = [translations[first]] + [translations[first + 1]] * (max(nplurals, 2) - 1)
                msgstr = [f'msgstr[{i}] "{polib.escape(form)}"{newline}' for i, form in enumerate(forms)]
            else:
                msgstr = [f'msgstr "{polib.escape(translations[first])}"{newline}']
            kept = _without_msgstr(block)
            if mark_fuzzy and "fuzzy" not in entry.flags:
                kept = _with_fuzzy_flag(kept, newline)
            out[start:end] = kept + msgstr
        return "".join(out)

    return Parsed(units, render)


def _has_translation(entry: polib.POEntry) -> bool:
    return bool(entry.msgstr) or any(entry.msgstr_plural.values())


def _nplurals(catalogue: polib.POFile) -> int:
    forms = catalogue.metadata.get("Plural-Forms", "")
    for part in forms.split(";"):
        key, _, value = part.partition("=")
        if key.strip() == "nplurals" and value.strip().isdigit():
            return int(value.strip())
    return 2


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
