"""Sheet names of a workbook, translated on request (``nmt translate --translate-sheet-names``): the
rules a new name must keep, and every place of the package that names a sheet rewritten with it.

A translated name is made valid as Excel requires (ECMA-376 part 1, 18.2.19, and Excel's own rules):
whitespace collapsed; each of ``[ ] : * ? / \\`` and control characters replaced by ``-``; no ``'``
at either end; at most 31 characters (cut, then spaces at the end dropped); not "History" (Excel
keeps it for its change log); and unique within the workbook, case-insensitively (`` (2)``,
`` (3)``... appended, the name cut to leave room). A name that becomes empty, or "History", keeps
the source name; a full stop the model added at the end of a name is dropped. Each fix is a note on
the name's unit.

References are rewritten in the formulas of cells, defined names, data validation and conditional
formats (``f``, ``formula``, ``formula1``, ``formula2``, ``definedName``, a table's column formulas),
chart series (``c:f``), a pivot cache's ``worksheetSource sheet``, internal hyperlinks
(``location``) and the sheet list of ``docProps/app.xml``. Only those sheet references change, in
the parts' own text: every other byte stays. A formula's string literals are never rewritten
(``INDIRECT("Sales!A1")`` keeps naming the old sheet); references into other workbooks
(``[1]Sales!A1``) name that workbook's sheets and are left as they are.
"""
from __future__ import annotations

import html
import re
from typing import Callable, Sequence

from .model import FormatError, Parsed, TextUnit

MAX_LENGTH = 31  # characters (UTF-16 code units) Excel allows in a sheet name
RESERVED = "history"  # casefolded: Excel refuses a sheet of this name
_FORBIDDEN = re.compile(r"[\[\]:*?/\\\x00-\x1f\x7f]")
_NAME = r"'(?:[^']|'')+'|[^\W\d][\w.]*"  # a sheet name in a reference: quoted, or plain
# a formula's string literal, or a reference's sheet part: 'Sheet 1'!, Sheet1!, 3-D ranges 'A:B'!, A:B!, 'A':'B'!
_TOKEN = re.compile(r'''"(?:[^"]|"")*"|(?<![\w.\]'])(?P<sheets>(?:%s)(?::(?:%s))?)!''' % (_NAME, _NAME))
_SIMPLE = re.compile(r"[A-Za-z_][A-Za-z0-9_.]*")  # a name that needs no quotes in a reference ...
_CELL_LIKE = re.compile(r"(?i)[a-z]{1,3}\d+|r\d*c\d*|r|c|true|false")  # ... unless it reads as a cell or a word
_FORMULA_ELEMENTS = ("f", "formula", "formula1", "formula2", "definedName", "calculatedColumnFormula",
                     "totalsRowFormula")
_ELEMENT = re.compile(r"<(?P<name>(?:[\w.-]+:)?(?:%s))(?=[\s>])(?P<attrs>[^>]*?)(?<!/)>(?P<body>.*?)</(?P=name)\s*>"
                      % "|".join(_FORMULA_ELEMENTS), re.S)


def _width(name: str) -> int:
    return len(name.encode("utf-16-le")) // 2


def _cut(name: str, width: int) -> str:
    """``name`` cut to ``width`` characters, at the end of a word where the cut falls in one."""
    if _width(name) <= width:
        return name
    cut = name
    while _width(cut) > width:
        cut = cut[:-1]
    if not name[len(cut)].isspace() and not cut[-1].isspace() and " " in cut.strip():
        cut = cut[:cut.rstrip().rindex(" ")]
    return cut.rstrip()


def valid_names(sources: list[str], translations: dict[int, str]) -> tuple[list[str], dict[int, list[str]]]:
    """The sheet names after translation: ``sources`` are all the workbook's names in order,
    ``translations`` the translated ones by index (a name not in it keeps its source). Returns the
    names and, by index, the notes saying what was fixed."""
    names, notes = list(sources), {}
    taken = {name.casefold() for k, name in enumerate(sources) if k not in translations}
    for k in sorted(translations):
        said, fixes = translations[k], []
        name = " ".join(said.split())
        if _FORBIDDEN.search(name):
            name = _FORBIDDEN.sub("-", name)
            fixes.append("characters a sheet name cannot hold ([]:*?/\\) were replaced by '-'")
        name = name.strip("'").strip()
        if _width(name) > MAX_LENGTH:
            name = _cut(name, MAX_LENGTH)
            fixes.append(f"cut to at most {MAX_LENGTH} characters")
        if not name or name.casefold() == RESERVED:
            fixes = [f"the translation {said!r} is no valid sheet name: the source name is kept"]
            name = sources[k]
        if name.casefold() in taken:
            number = 2
            while True:
                suffix = f" ({number})"
                fresh = _cut(name, MAX_LENGTH - _width(suffix)) + suffix
                if fresh.casefold() not in taken:
                    break
                number += 1
            fixes.append(f"another sheet is named {name!r}: made unique as {fresh!r}")
            name = fresh
        taken.add(name.casefold())
        names[k] = name
        if fixes:
            notes[k] = [f"sheet name {sources[k]!r} is {name!r}: " + "; ".join(fixes)]
    return names, notes


def reference(sheets: list[str]) -> str:
    """A reference's sheet part (without the ``!``) naming ``sheets`` (one, or the two ends of a 3-D
    range), quoted where a formula needs it."""
    if all(_SIMPLE.fullmatch(name) and not _CELL_LIKE.fullmatch(name) for name in sheets):
        return ":".join(sheets)
    return "'" + ":".join(sheets).replace("'", "''") + "'"


def rewrite_formula(formula: str, renamed: dict[str, str]) -> str:
    """``formula`` with each reference to a sheet in ``renamed`` (casefolded old name -> new name)
    naming the new one; string literals and references into other workbooks stay. A 3-D range
    keeps its form: ``'A:B'!`` (ECMA-376's), ``'A':'B'!`` (LibreOffice's) or ``A:B!``, which
    becomes ``'A:B'!`` where a new name needs quotes."""
    def replace(match: re.Match) -> str:
        text = match.group(0)
        if text.startswith('"'):
            return text
        tokens = [token.group(0) for token in re.finditer(_NAME, match.group("sheets"))]
        if any(token.startswith("'[") for token in tokens):
            return text  # another workbook's sheet
        names = [[name for name in token[1:-1].replace("''", "'").split(":")] if token.startswith("'") else [token]
                 for token in tokens]
        if not any(name.casefold() in renamed for group in names for name in group):
            return text
        fresh = [[renamed.get(name.casefold(), name) for name in group] for group in names]
        if len(tokens) == 2 and any(token.startswith("'") for token in tokens):  # LibreOffice's 'A':'B'!
            return ":".join(reference(group) for group in fresh) + "!"
        return reference([name for group in fresh for name in group]) + "!"

    return _TOKEN.sub(replace, formula)


def _escape(text: str, quote: bool = False, apos: bool = False) -> str:
    """``text`` escaped for XML; ``apos``: ``'`` as ``&apos;``, as the part wrote it (LibreOffice does)."""
    text = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    text = text.replace("'", "&apos;") if apos else text
    return text.replace('"', "&quot;") if quote else text


def _formula_elements(text: str, renamed: dict[str, str]) -> str:
    apos = "&apos;" in text

    def replace(match: re.Match) -> str:
        body = match.group("body")
        if "<" in body:  # not a formula's text
            return match.group(0)
        fresh = rewrite_formula(html.unescape(body), renamed)
        if fresh == html.unescape(body):
            return match.group(0)
        return match.group(0)[:match.start("body") - match.start()] + _escape(fresh, apos=apos) + \
            match.group(0)[match.end("body") - match.start():]

    return _ELEMENT.sub(replace, text)


def _attributes(text: str, element: str, attribute: str, change: Callable[[str], str]) -> str:
    """``text`` with the value of ``attribute`` on every ``element`` start tag (any prefix) changed."""
    tag = re.compile(r"<(?:[\w.-]+:)?%s(?=[\s/>])[^>]*>" % element)
    value = re.compile(r'(\s%s\s*=\s*)(["\'])(.*?)\2' % attribute, re.S)

    def in_tag(match: re.Match) -> str:
        def in_value(found: re.Match) -> str:
            old = html.unescape(found.group(3))
            new = change(old)
            return found.group(0) if new == old else f'{found.group(1)}"{_escape(new, quote=True)}"'
        return value.sub(in_value, match.group(0))

    return tag.sub(in_tag, text)


def renamed_part(text: str, kind: str, renamed: dict[str, str]) -> str:
    """The text of one part of ``kind`` ("workbook", "sheet", "chart", "pivot", "app", other parts:
    their formula elements only) with the sheets in ``renamed`` (casefolded old name -> new) named anew."""
    formula = lambda value: rewrite_formula(value, renamed)  # noqa: E731
    exact = lambda value: renamed.get(value.casefold(), value)  # noqa: E731
    if kind == "workbook":
        text = _attributes(text, "sheet", "name", exact)
    elif kind == "sheet":
        text = _attributes(text, "hyperlink", "location", formula)
    elif kind == "pivot":
        text = _attributes(text, "worksheetSource", "sheet", exact)
    elif kind == "app":  # the titles of parts: the sheet names, then the named ranges (Sales!Print_Area)
        return re.sub(r"(<(?:[\w.-]+:)?lpstr>)([^<]*)(</(?:[\w.-]+:)?lpstr>)",
                      lambda m: m.group(1) + _escape(formula(exact(html.unescape(m.group(2))))) + m.group(3)
                      if formula(exact(html.unescape(m.group(2)))) != html.unescape(m.group(2)) else m.group(0), text)
    return _formula_elements(text, renamed)


# content type endings -> how a part names sheets (see renamed_part); other parts never name this workbook's sheets
_KINDS = (("sheet.main+xml", "workbook"), ("macroEnabled.main+xml", "workbook"), ("template.main+xml", "workbook"),
          ("worksheet+xml", "sheet"), ("drawingml.chart+xml", "chart"), ("pivotCacheDefinition+xml", "pivot"),
          ("spreadsheetml.table+xml", "table"), ("extended-properties+xml", "app"))
_CODE = re.compile(r"[A-Z0-9]+(?:[-_/.#:][A-Z0-9]+)+")  # PRJ-ALPHA, Q1-2024: a code, not prose


def _kind(content_type: str) -> str | None:
    return next((kind for ending, kind in _KINDS if content_type.endswith(ending)), None)


def with_sheet_names(parsed: Parsed, data: bytes, open_package: Callable, workbook_part: Callable) -> Parsed:
    """``parsed`` (a workbook's strings) with its sheet names as units after them; the render
    writes the strings, then names the sheets anew in every part that names them.
    ``open_package(data)``: an ``OfficePackage``; ``workbook_part(package)``: its main part."""
    package = open_package(data)
    sources = [sheet.get("name", "") for sheet in package.xml(workbook_part(package)).iter("{*}sheet")]
    chosen = [k for k, name in enumerate(sources) if any(ch.isalpha() for ch in name)
              and not _CODE.fullmatch(name.strip())]
    units = list(parsed.units) + [TextUnit(" ".join(sources[k].split()), f"sheet name {sources[k]!r}") for k in chosen]
    count = len(parsed.units)

    def render(translations: Sequence[str], links: Sequence, notes: dict[int, list[str]]) -> bytes:
        out = parsed.render(list(translations[:count]), list(links[:count]))
        notes.update(parsed.notes)
        said = {k: _without_added_stop(sources[k], translation) for k, translation in zip(chosen, translations[count:])}
        names, fixes = valid_names(sources, said)
        for k, note in fixes.items():
            notes.setdefault(count + chosen.index(k), []).extend(note)
        renamed = {old.casefold(): new for old, new in zip(sources, names) if new != old}
        if not renamed:
            return out
        package = open_package(out)
        replaced = {}
        for part, content_type in package.types.items():
            kind = _kind(content_type)
            if kind is None:
                continue
            try:
                text = package.read(part).decode("utf-8")
            except UnicodeDecodeError:
                raise FormatError(f"{package.invalid}: its part {part} is not UTF-8: its sheet names cannot be "
                                  "rewritten (translate without --translate-sheet-names)") from None
            fresh = renamed_part(text, kind, renamed)
            if fresh != text:
                replaced[part] = fresh.encode("utf-8")
        return package.write(replaced)

    return Parsed(units, render, marked=True)


def _without_added_stop(source: str, translation: str) -> str:
    """A translation without the full stop the model put at the end of a name that had none."""
    translation = translation.strip()
    return translation[:-1] if translation.endswith(".") and not source.rstrip().endswith(".") else translation


__all__ = ["MAX_LENGTH", "with_sheet_names", "reference", "renamed_part", "rewrite_formula", "valid_names"]
