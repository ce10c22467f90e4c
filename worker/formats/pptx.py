"""PowerPoint presentations (``.pptx``, and ``.pptm`` with its macros), read and written at the level
of their XML parts (``formats.ooxml``: the package; ``formats.runs``: the paragraph of runs).

Every paragraph with words (DrawingML ``a:p``) is one unit: in shapes and placeholders, tables,
grouped shapes at any depth, speaker notes, SmartArt (the diagram's data part and the drawing part
PowerPoint caches its layout in, which LibreOffice shows), and charts (titles, axis titles and rich
data labels, plus the series names and category labels of the chart's string caches). Slide
layouts and masters give only the text of shapes that are not placeholders (a logo's words): their
placeholders hold "Click to edit" prompts that no slide shows.

A paragraph's runs become text and markup, as in a Word document (``formats.docx``): the run
formatting most of its text outside links has is the paragraph's own, each stretch formatted
otherwise is a tag placed on the aligned target words, and each hyperlink (runs sharing one
``a:hlinkClick``: DrawingML puts a link on its runs' properties) is a tag whose runs keep the link's
relationship, so its target. Fields (slide number, date: ``a:fld``), line breaks, tabs, runs in a
monospace font (code) and anything else that is not text are points put back whole where the
alignment says; a field's text is never written into, as the application recomputes it.
Spelling marks on runs (``err``, ``dirty``) are dropped.

Text that grows is allowed to: the boxes keep their size and each text body its autofit setting
(``a:normAutofit``: the application shrinks the text when it next lays it out, as LibreOffice does
on opening; ``a:spAutoFit``: the shape grows to the text; none: longer text may overflow the box).
A chart's translated labels are also written into the cells of its embedded workbook that the
chart's references name (``formats.xlsx.chart_workbooks``), so that editing the chart's data keeps
them; the workbook's numbers, formulas and other parts stay byte for byte. A workbook linked from
outside the package, and a multi-level axis's labels (a two-dimensional range), keep their source
text there.

Every part that holds no translated text is written back byte for byte: media, themes, the
presentation part, a ``.pptm``'s ``vbaProject.bin`` (macros are kept, not run and not changed).
An encrypted file, a legacy binary ``.ppt``, a damaged package and a file with no text are each a
``FormatError`` that says so. The file is read again for each render, so a ``Parsed`` renders any
number of times.
"""
from __future__ import annotations

import posixpath

from .model import FormatError, Parsed
from .ooxml import OfficePackage, package_parsed
from .pptx_comments import comment_parts, comment_texts
from .runs import Dialect, PlainText, RunParagraph
from .xlsx import chart_workbooks

A = "http://schemas.openxmlformats.org/drawingml/2006/main"
P = "http://schemas.openxmlformats.org/presentationml/2006/main"
R = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"
C = "http://schemas.openxmlformats.org/drawingml/2006/chart"
DGM = "http://schemas.openxmlformats.org/drawingml/2006/diagram"


def _q(namespace: str, name: str) -> str:
    return f"{{{namespace}}}{name}"


DRAWING = Dialect(
    run=_q(A, "r"), props=_q(A, "rPr"), text=_q(A, "t"), head=frozenset({_q(A, "pPr")}),
    tail=frozenset({_q(A, "endParaRPr")}),
    font=lambda props: None if props is None else next((f.get("typeface") for f in props.iter(_q(A, "latin"))), None),
    links=(_q(A, "hlinkClick"), _q(A, "hlinkMouseOver")), volatile=("err", "dirty", "smtClean", "smtId"),
    before_links=(_q(A, "rtl"), _q(A, "extLst")), spacing=(_q(A, "br"),))


# -- presentations -------------------------------------------------------------------------------------
PRESENTATION_TYPES = ("application/vnd.openxmlformats-officedocument.presentationml.presentation.main+xml",
                      "application/vnd.ms-powerpoint.presentation.macroEnabled.main+xml",
                      "application/vnd.openxmlformats-officedocument.presentationml.slideshow.main+xml",
                      "application/vnd.ms-powerpoint.slideshow.macroEnabled.main+xml",
                      "application/vnd.openxmlformats-officedocument.presentationml.template.main+xml",
                      "application/vnd.ms-powerpoint.template.macroEnabled.main+xml")
_MASTERS = ("slideLayout+xml", "slideMaster+xml", "notesMaster+xml", "handoutMaster+xml")
_CHART = "drawingml.chart+xml"
_DIAGRAM_DATA, _DIAGRAM_DRAWING = "drawingml.diagramData+xml", "drawingml.diagramDrawing+xml"


def _open(data: bytes) -> OfficePackage:
    return OfficePackage(data, "PPTX", PRESENTATION_TYPES)


def _slides(package: OfficePackage) -> list[str]:
    """The slide parts in the presentation's order (those it does not list after them, in package order)."""
    main = next(name for name, kind in package.types.items() if kind in PRESENTATION_TYPES)
    rels = package.relationships(main)
    ordered = []
    for slide in package.xml(main).iter(_q(P, "sldId")):
        target = rels.get(slide.get(_q(R, "id"), ""), ("", ""))[1]
        if target in package.names and target not in ordered:
            ordered.append(target)
    return ordered + [name for name in package.parts("presentationml.slide+xml") if name not in ordered]


def _in_placeholder(p) -> bool:
    return bool(p.xpath("ancestor::p:sp[p:nvSpPr/p:nvPr/p:ph]", namespaces={"p": P}))


def _chart_texts(root) -> list:
    """A chart's DrawingML paragraphs (titles, axis titles, rich data labels) and the cached strings
    of its series names and category labels, in document order."""
    found = []
    for element in root.iter(_q(A, "p"), _q(C, "v")):
        if element.tag == _q(A, "p"):
            found.append(RunParagraph(element, DRAWING))
        elif element.getparent().tag == _q(C, "tx") or element.getparent().tag == _q(C, "pt") and \
                element.getparent().getparent().tag in (_q(C, "strCache"), _q(C, "strLit"), _q(C, "lvl")):
            found.append(PlainText(element))
    return found


def _walk(package: OfficePackage) -> tuple[dict[str, object], list[tuple[str, str, object]]]:
    """The roots of the parts read, and (part, where, paragraph) for every paragraph: each slide's,
    then its notes', charts' and SmartArt's, then the visible text of layouts and masters."""
    roots: dict[str, object] = {}
    found: list[tuple[str, str, object]] = []
    order: list[tuple[str, str, str]] = []  # (part, label, how: "all", "chart", "visible")
    seen: set[str] = set()

    def add(part: str, label: str, how: str) -> None:
        if part not in seen:
            seen.add(part)
            order.append((part, label, how))

    for number, slide in enumerate(_slides(package), 1):
        add(slide, f"slide {number}", "all")
        for part in package.related(slide, "notesSlide"):
            add(part, f"slide {number} notes", "all")
        for part in comment_parts(package, slide):
            add(part, f"slide {number} comments", "comments")
        for part in package.related(slide, "chart"):
            add(part, f"slide {number} chart {posixpath.basename(part)}", "chart")
        for kind in ("diagramData", "diagramDrawing"):
            for part in package.related(slide, kind):
                add(part, f"slide {number} SmartArt {posixpath.basename(part)}", "all")
    for part in package.parts(_CHART):
        add(part, posixpath.basename(part), "chart")
    for part in package.parts(_DIAGRAM_DATA, _DIAGRAM_DRAWING, "presentationml.notesSlide+xml"):
        add(part, posixpath.basename(part), "all")
    for part in package.parts(*_MASTERS):
        add(part, posixpath.basename(part).rsplit(".", 1)[0], "visible")
    for part, label, how in order:
        root = roots[part] = package.xml(part)
        if how == "chart":
            texts = _chart_texts(root)
        elif how == "comments":  # formats.pptx_comments
            texts = [PlainText(text) if plain else RunParagraph(text, DRAWING) for plain, text in comment_texts(root)]
        else:
            texts = [RunParagraph(p, DRAWING) for p in root.iter(_q(A, "p"))
                     if how == "all" or not _in_placeholder(p)]
        for k, paragraph in enumerate(texts, 1):
            found.append((part, f"{label} {'text' if how == 'chart' else 'paragraph'} {k}", paragraph))
    return roots, found


def parse_pptx(data: bytes) -> Parsed:
    return package_parsed(data, _open, _walk, companions=chart_workbooks)


__all__ = ["parse_pptx", "FormatError"]
