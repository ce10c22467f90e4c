"""Excel workbooks (``.xlsx``, and ``.xlsm`` with its macros), translated by editing the XML parts
that hold their text, never by saving the workbook again through a library (which drops what it
does not model): the shared strings (``sharedStrings.xml``), each sheet's inline strings, and the
cell comments (notes, and threaded comments) are rewritten; every other part is written back byte
for byte, and in a sheet that is rewritten only its inline-string cells change.

Each string is one unit, its rich-text runs markup as in a presentation (``formats.runs``): the
formatting most of its text has is the string's own, each stretch formatted otherwise a tag placed
on the aligned target words; line breaks and tabs in a cell stay line breaks and tabs.

Never sent to the model, and left as they are: numbers, dates, booleans, errors and formulas with
their cached results (they are no strings); strings with no letters (``00123``, ``2024-05``); codes
(one word of capitals or digits joined by ``-``, ``_``, ``/``, ``.``, ``#`` or ``:``: ``PRJ-ALPHA``,
``N/A``; the translator copies other identifiers, URLs, e-mail addresses and numbers itself,
``worker.text.spans``); cells in a monospace font (Courier, Consolas...: code, as in a Word
document) and runs in one; and strings that name or are named by something else in the workbook: a
table's column names (structured references use them), a pivot cache's field names, and the
string literals of formulas, of data validation lists and of conditional formats
(``COUNTIF(C2:C9,"Yes")`` still counts the cells that say ``Yes``). Sheet names are translated only
on request (``translate_sheet_names``; ``formats.sheet_names`` rewrites every formula, defined name,
chart and pivot cache that names a sheet); headers and footers, text boxes and charts are not
(their parts stay byte for byte), nor are data validation messages.

An encrypted workbook, a legacy ``.xls``, a damaged package and a workbook with no text are each a
``FormatError`` that says so; an ``.xlsm``'s ``vbaProject.bin`` is kept byte for byte.
"""
from __future__ import annotations

import re

from lxml import etree

from .model import FormatError, Parsed
from .ooxml import OfficePackage, package_parsed, serialized
from .runs import Dialect, PlainText, RunParagraph, monospace
from .sheet_names import with_sheet_names

S = "http://schemas.openxmlformats.org/spreadsheetml/2006/main"
_R = "{http://schemas.openxmlformats.org/officeDocument/2006/relationships}"
WORKBOOK_TYPES = ("application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml",
                  "application/vnd.ms-excel.sheet.macroEnabled.main+xml",
                  "application/vnd.openxmlformats-officedocument.spreadsheetml.template.main+xml",
                  "application/vnd.ms-excel.template.macroEnabled.main+xml")
_FORMULAS = ("f", "formula", "formula1", "formula2")  # elements holding a formula (cells, validation, formats)
_LITERAL = re.compile(r'"((?:[^"]|"")*)"')  # a string literal of a formula
_CODE = re.compile(r"[A-Z0-9]+(?:[-_/.#:][A-Z0-9]+)+")  # PRJ-ALPHA, US-EAST-1, N/A
# a cell element of a sheet's XML text, empty or not (cells never nest; no '<' stands in text or attributes)
_CELL = re.compile(r"<(?:[A-Za-z_][\w.-]*:)?c(?=[\s/>])[^>]*?(?:/>|>.*?</(?:[A-Za-z_][\w.-]*:)?c\s*>)", re.S)
_DECLARATION = re.compile(r'\sxmlns(?::([\w.-]+))?="([^"]*)"')


def _s(name: str) -> str:
    return f"{{{S}}}{name}"


CELL = Dialect(
    run=_s("r"), props=_s("rPr"), text=_s("t"), head=frozenset(), tail=frozenset({_s("rPh"), _s("phoneticPr")}),
    font=lambda props: next((f.get("val") for f in props.iter(_s("rFont"))), None) if props is not None else None,
    preserve=True)


class RichText(RunParagraph):
    """A string of SpreadsheetML (``si``, ``is``, a comment's ``text``): rich-text runs, or one ``t``.
    Written back as one ``t`` where the translation has a single unformatted run."""

    def __init__(self, element) -> None:
        super().__init__(element, CELL)

    def render(self, pieces, lead: str = "", trail: str = "") -> None:
        super().render(pieces, lead, trail)
        runs = [child for child in self.element if child.tag == _s("r")]
        if len(runs) == 1 and runs[0].find(_s("rPr")) is None and \
                not [child for child in self.element if child.tag not in (_s("r"), *CELL.tail)]:
            runs[0].addprevious(runs[0].find(_s("t")))
            self.element.remove(runs[0])


def _plain(element) -> str:
    return "".join(t.text or "" for t in element.iter(_s("t")) if t.getparent().tag != _s("rPh"))


def _normal(text: str) -> str:
    return " ".join(text.split()).casefold()


def _open(data: bytes) -> OfficePackage:
    return OfficePackage(data, "XLSX", WORKBOOK_TYPES)


def _sheets(package: OfficePackage) -> tuple[str, list[tuple[str, str]]]:
    """The workbook part, and (sheet name, part) of each worksheet in the workbook's order."""
    main = next(name for name, kind in package.types.items() if kind in WORKBOOK_TYPES)
    rels = package.relationships(main)
    sheets = []
    for sheet in package.xml(main).iter(_s("sheet")):
        rel_type, target = rels.get(sheet.get(f"{_R}id", ""), ("", ""))
        if rel_type == "worksheet" and target in package.names:
            sheets.append((sheet.get("name", target), target))
    return main, sheets


def _named(package: OfficePackage, main: str, sheet_roots: list) -> set[str]:
    """The strings something else in the workbook names or compares against (normalised): table
    column names, pivot cache field names, and the string literals of formulas, defined names, data
    validation lists and conditional formats."""
    names: set[str] = set()
    for part in package.parts("spreadsheetml.table+xml"):
        names |= {_normal(column.get("name", "")) for column in package.xml(part).iter(_s("tableColumn"))}
    for part in package.parts("spreadsheetml.pivotCacheDefinition+xml"):
        names |= {_normal(field.get("name", "")) for field in package.xml(part).iter(_s("cacheField"))}
    formulas = [name.text or "" for name in package.xml(main).iter(_s("definedName"))]
    for root in sheet_roots:
        formulas += [element.text or "" for element in root.iter(*(f"{{*}}{name}" for name in _FORMULAS))]
    for formula in formulas:
        for literal in _LITERAL.findall(formula):
            literal = literal.replace('""', '"')
            names.add(_normal(literal))
            names |= {_normal(item) for item in literal.split(",")}  # a validation list: "Yes,No"
    names.discard("")
    return names


def _code_styles(package: OfficePackage, main: str) -> set[str]:
    """The cell styles (``s`` attribute values) whose font is a monospace face: their cells are code."""
    parts = package.related(main, "styles")
    if not parts:
        return set()
    root = package.xml(parts[0])
    fonts = [font.find(_s("name")) for font in root.iterfind(f"{_s('fonts')}/{_s('font')}")]
    names = [font.get("val") if font is not None else None for font in fonts]
    codes = set()
    for index, xf in enumerate(root.iterfind(f"{_s('cellXfs')}/{_s('xf')}")):
        font = int(xf.get("fontId", "0")) if xf.get("fontId", "0").isdigit() else 0
        if font < len(names) and monospace(names[font]):
            codes.add(str(index))
    return codes


def _kept(text: str, named: set[str]) -> bool:
    """Whether a string stays as it is: a code, or a name something else in the workbook uses."""
    stripped = text.strip()
    return bool(_CODE.fullmatch(stripped)) or _normal(stripped) in named


def _walk(package: OfficePackage) -> tuple[dict[str, object], list[tuple[str, str, object]]]:
    """The roots of the parts read, and (part, where, string) for each string to translate: the shared
    strings, then each sheet's inline strings and its comments."""
    main, sheets = _sheets(package)
    roots: dict[str, object] = {part: package.xml(part) for _, part in sheets}
    named = _named(package, main, list(roots.values()))
    codes = _code_styles(package, main)
    found: list[tuple[str, str, object]] = []
    users: dict[int, list[str]] = {}  # shared string index -> the cells showing it
    prose: set[int] = set()  # the shared strings some cell shows in a font that is not monospace
    for name, part in sheets:
        for cell in roots[part].iter(_s("c")):
            value = cell.find(_s("v"))
            if cell.get("t") == "s" and value is not None and (value.text or "").strip().isdigit():
                users.setdefault(int(value.text), []).append(f"{name}!{cell.get('r', '?')}")
                if cell.get("s", "0") not in codes:
                    prose.add(int(value.text))
    for part in package.parts("spreadsheetml.sharedStrings+xml"):
        root = roots[part] = package.xml(part)
        for index, item in enumerate(root.iter(_s("si"))):
            cells = users.get(index, [])
            where = f"{cells[0]}" + (f" (and {len(cells) - 1} more cells)" if len(cells) > 1 else "") if cells else \
                f"shared string {index + 1}"
            if (index in prose or not cells) and not _kept(_plain(item), named):
                found.append((part, where, RichText(item)))
    for name, part in sheets:
        for cell in roots[part].iter(_s("c")):
            where = f"{name}!{cell.get('r', '?')}"
            if cell.get("s", "0") in codes:  # a cell in a monospace font is code
                continue
            if cell.get("t") == "inlineStr" and cell.find(_s("is")) is not None:
                if not _kept(_plain(cell.find(_s("is"))), named):
                    found.append((part, where, RichText(cell.find(_s("is")))))
            elif cell.get("t") == "str" and cell.find(_s("f")) is None and cell.find(_s("v")) is not None:
                if not _kept(cell.find(_s("v")).text or "", named):  # a string written as a formula result
                    found.append((part, where, PlainText(cell.find(_s("v")))))
        for comments in package.related(part, "comments"):
            root = roots.setdefault(comments, package.xml(comments))
            for comment in root.iter(_s("comment")):
                text = comment.find(_s("text"))
                if text is not None:
                    found.append((comments, f"{name}!{comment.get('ref', '?')} comment", RichText(text)))
        for threaded in package.related(part, "threadedComment"):
            root = roots.setdefault(threaded, package.xml(threaded))
            for comment in root.iter("{*}threadedComment"):
                text = comment.find("{*}text")
                if text is not None:
                    found.append((threaded, f"{name}!{comment.get('ref', '?')} threaded comment", PlainText(text)))
    return roots, found


def _written(package: OfficePackage, part: str, root, elements: list) -> bytes:
    """A part whose strings were translated. In a sheet only the cells of those strings are written
    again, into the sheet's own text: every other cell (formulas, numbers, dates) stays byte for
    byte. Other parts (shared strings, comments) are written whole."""
    original = package.read(part)
    if not package.types.get(part, "").endswith("spreadsheetml.worksheet+xml"):
        return serialized(root, original)
    try:
        text = original.decode("utf-8")
    except UnicodeDecodeError:
        return serialized(root, original)
    cells = list(root.iter(_s("c")))
    found = list(_CELL.finditer(text))
    if len(found) != len(cells):  # not the text this reader expects: written whole, still well-formed
        return serialized(root, original)
    at = {id(cell): k for k, cell in enumerate(cells)}
    changed = sorted({at[id(element.getparent())] for element in elements if id(element.getparent()) in at})
    declared = {(prefix or ""): uri for prefix, uri in root.nsmap.items()}
    out, end = [], 0
    for k in changed:
        match = found[k]
        cell = etree.tostring(cells[k], encoding="unicode", with_tail=False)
        opening = cell[:cell.index(">")]  # the namespaces the root declares are not declared again
        opening = _DECLARATION.sub(lambda m: "" if declared.get(m.group(1) or "") == m.group(2) else m.group(0),
                                   opening)
        out += [text[end:match.start()], opening, cell[cell.index(">"):]]
        end = match.end()
    return ("".join(out) + text[end:]).encode("utf-8")


def parse_xlsx(data: bytes, translate_sheet_names: bool = False) -> Parsed:
    """A workbook's strings as units; with ``translate_sheet_names``, its sheet names after them
    (``formats.sheet_names``: the names' rules, and the formulas and parts that name sheets)."""
    parsed = package_parsed(data, _open, _walk, _written)
    if not translate_sheet_names:
        return parsed
    return with_sheet_names(parsed, data, _open, lambda package: _sheets(package)[0])


# -- a chart's embedded workbook ------------------------------------------------------------------------
# A chart part (of a presentation or a document) caches its series names and category labels
# (``c:strRef``: a ``c:f`` reference and a ``c:strCache``) and keeps its data in an embedded workbook.
# Where the cached labels are translated, the cells the references name are given the same text, or
# "Edit data" (PowerPoint, LibreOffice) brings the source labels back. Only string cells that held
# the cached source label are written; numbers, formulas and every other part stay byte for byte.
C = "http://schemas.openxmlformats.org/drawingml/2006/chart"
_XML_SPACE = "{http://www.w3.org/XML/1998/namespace}space"
# Sheet1!$A$2:$A$5, 'My data'!$B$1: one sheet of this workbook (no [1] of an external one)
_RANGE = re.compile(r"(?:'((?:[^']|'')+)'|([^!'\[\]\s]+))!\$?([A-Z]{1,3})\$?(\d+)(?::\$?([A-Z]{1,3})\$?(\d+))?")


def _c(name: str) -> str:
    return f"{{{C}}}{name}"


def _column_number(letters: str) -> int:
    number = 0
    for letter in letters:
        number = number * 26 + ord(letter) - 64
    return number


def _column_letters(number: int) -> str:
    letters = ""
    while number:
        number, rest = divmod(number - 1, 26)
        letters = chr(65 + rest) + letters
    return letters


def _range_cells(formula: str) -> tuple[str, list[str]] | None:
    """The sheet and the cells, in order, of a reference to one row or one column of cells; None for
    anything else (a two-dimensional range of a multi-level axis, an external workbook, a name)."""
    match = _RANGE.fullmatch(formula.strip())
    if match is None:
        return None
    sheet = match.group(1).replace("''", "'") if match.group(1) else match.group(2)
    first, top = _column_number(match.group(3)), int(match.group(4))
    last, bottom = (_column_number(match.group(5)), int(match.group(6))) if match.group(5) else (first, top)
    if first != last and top != bottom:
        return None
    return sheet, [f"{_column_letters(column)}{row}" for column in range(min(first, last), max(first, last) + 1)
                   for row in range(min(top, bottom), max(top, bottom) + 1)]


def chart_label_edits(original, translated) -> dict[tuple[str, str], tuple[str, str]]:
    """(sheet, cell) -> (source label, translated label) for each cached string of a chart's
    references (``c:strRef``) that the translation changed: ``original`` and ``translated`` are the
    chart part's root before and after (the same elements, other text)."""
    edits: dict[tuple[str, str], tuple[str, str]] = {}
    for before, after in zip(original.iter(_c("strRef")), translated.iter(_c("strRef"))):
        formula, old, new = before.find(_c("f")), before.find(_c("strCache")), after.find(_c("strCache"))
        cells = _range_cells(formula.text or "") if formula is not None else None
        if cells is None or old is None or new is None:
            continue
        sheet, refs = cells
        for old_point, new_point in zip(old.iter(_c("pt")), new.iter(_c("pt"))):
            index, old_value, new_value = old_point.get("idx", ""), old_point.find(_c("v")), new_point.find(_c("v"))
            if index.isdigit() and int(index) < len(refs) and old_value is not None and new_value is not None and \
                    (old_value.text or "") != (new_value.text or ""):
                edits[(sheet, refs[int(index)])] = (old_value.text or "", new_value.text or "")
    return edits


def _set_text(holder, text: str) -> None:
    """``holder`` (an ``si`` or ``is``) made one plain ``t`` of ``text``."""
    for child in list(holder):
        holder.remove(child)
    t = etree.SubElement(holder, _s("t"))
    t.text = text
    if text != text.strip():
        t.set(_XML_SPACE, "preserve")


def with_cell_texts(data: bytes, edits: dict[tuple[str, str], tuple[str, str]]) -> bytes:
    """The workbook ``data`` with each string cell of ``edits`` ((sheet, cell) -> (source, text))
    that holds the source holding the text instead. A shared string every one of whose cells gets
    the same text is edited in the shared strings; a cell sharing its string with other cells
    becomes an inline string. Cells that hold no string, another string or a formula, and every
    part that holds none of those cells, are kept byte for byte; a workbook this reader cannot open
    is returned as it is."""
    try:
        package = _open(data)
        _main, sheets = _sheets(package)
        shared = package.parts("spreadsheetml.sharedStrings+xml")
        shared_root = package.xml(shared[0]) if shared else None
        roots = {part: package.xml(part) for _, part in sheets}
    except FormatError:
        return data
    items = list(shared_root.iter(_s("si"))) if shared_root is not None else []
    users: dict[int, list] = {}  # shared string index -> its cells
    for root in roots.values():
        for cell in root.iter(_s("c")):
            value = cell.find(_s("v"))
            if cell.get("t") == "s" and value is not None and (value.text or "").strip().isdigit():
                users.setdefault(int(value.text), []).append(cell)
    parts = dict(sheets)
    wanted: dict[int, object] = {}  # id(cell) -> the text it is to hold
    found = []  # (sheet part, cell, source, text)
    for (sheet, ref), (source, text) in edits.items():
        if sheet not in parts:
            continue
        cell = next((c for c in roots[parts[sheet]].iter(_s("c")) if c.get("r") == ref), None)
        if cell is None or cell.find(_s("f")) is not None:
            continue
        wanted[id(cell)] = text
        found.append((parts[sheet], cell, source, text))
    changed: dict[str, list] = {}
    shared_changed = False
    for part, cell, source, text in found:
        kind, value, inline = cell.get("t"), cell.find(_s("v")), cell.find(_s("is"))
        if kind == "s" and value is not None and (value.text or "").strip().isdigit() and \
                int(value.text) < len(items) and _plain(items[int(value.text)]) == source:
            index = int(value.text)
            if all(wanted.get(id(other)) == text for other in users[index]):
                _set_text(items[index], text)  # every cell showing it says the same
                shared_changed = True
                continue
            cell.remove(value)
            cell.set("t", "inlineStr")
            inline = etree.SubElement(cell, _s("is"))
            _set_text(inline, text)
            changed.setdefault(part, []).append(inline)
        elif kind == "inlineStr" and inline is not None and _plain(inline) == source:
            _set_text(inline, text)
            changed.setdefault(part, []).append(inline)
        elif kind == "str" and value is not None and (value.text or "") == source:
            value.text = text
            changed.setdefault(part, []).append(value)
    replaced = {part: _written(package, part, roots[part], elements) for part, elements in changed.items()}
    if shared_changed:
        replaced[shared[0]] = serialized(shared_root, package.read(shared[0]))
    return package.write(replaced) if replaced else data


def chart_workbooks(package: OfficePackage, roots: dict, parts: set) -> dict[str, bytes]:
    """The embedded workbooks (relationship type ``package``, named by ``c:externalData``) of the
    chart parts among ``parts`` whose cached labels were translated, with those labels written into
    the cells the charts' references name (``with_cell_texts``). A workbook linked outside the
    package, or embedded as a legacy OLE object, is not changed."""
    edits: dict[str, dict] = {}
    for part in sorted(parts):
        if not package.types.get(part, "").endswith("drawingml.chart+xml"):
            continue
        data_ref = roots[part].find(_c("externalData"))
        rel_type, target = package.relationships(part).get(data_ref.get(f"{_R}id", ""), ("", "")) \
            if data_ref is not None else ("", "")
        if rel_type == "package" and target in package.names:
            edits.setdefault(target, {}).update(chart_label_edits(package.xml(part), roots[part]))
    written = {}
    for target, cells in edits.items():
        if cells:
            original = package.read(target)
            body = with_cell_texts(original, cells)
            if body != original:
                written[target] = body
    return written


__all__ = ["parse_xlsx", "FormatError", "chart_workbooks"]
