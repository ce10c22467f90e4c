"""Word fields: a computed field (PAGE, NUMPAGES, DATE, REF, a TOC across paragraphs; simple or
complex) is never written into, and a HYPERLINK field's shown text is translated inside it."""
from __future__ import annotations

import io
import re

import pytest

docx = pytest.importorskip("docx")
from docx.oxml import parse_xml  # noqa: E402
from docx.oxml.ns import nsdecls, qn  # noqa: E402

from worker.formats import parse  # noqa: E402

W = nsdecls("w")


def _run(text: str = "", field: str | None = None, code: str | None = None, bold: bool = False) -> str:
    props = "<w:rPr><w:b/></w:rPr>" if bold else ""
    if field:
        return f'<w:r {W}>{props}<w:fldChar w:fldCharType="{field}"/></w:r>'
    if code is not None:
        return f'<w:r {W}>{props}<w:instrText xml:space="preserve">{code}</w:instrText></w:r>'
    return f'<w:r {W}>{props}<w:t xml:space="preserve">{text}</w:t></w:r>'


def _complex(code: str, result: str) -> list[str]:
    return [_run(field="begin"), _run(code=code), _run(field="separate"), _run(result), _run(field="end")]


def _paragraph(document, *runs: str):
    paragraph = document.add_paragraph()
    for run in runs:
        paragraph._p.append(parse_xml(run))
    return paragraph


def fielded() -> bytes:
    """A header reading "Page [PAGE] of [NUMPAGES]" (simple fields), a body with complex DATE,
    REF and HYPERLINK fields, a simple HYPERLINK field and a TOC field over three paragraphs."""
    document = docx.Document()
    header = document.sections[0].header.paragraphs[0]
    header.add_run("Page ")
    header._p.append(parse_xml(f'<w:fldSimple {W} w:instr=" PAGE "><w:r><w:t>1</w:t></w:r></w:fldSimple>'))
    header.add_run(" of the whole report ")
    header._p.append(parse_xml(f'<w:fldSimple {W} w:instr=" NUMPAGES "><w:r><w:t>9</w:t></w:r></w:fldSimple>'))
    _paragraph(document, _run(field="begin"), _run(code=" TOC \\o \"1-3\" "), _run(field="separate"),
               _run("The contents"))
    _paragraph(document, _run("The dog runs home"))
    _paragraph(document, _run("A red ball"), _run(field="end"))
    _paragraph(document, _run("The report of "), *_complex(" DATE \\@ \"d MMMM yyyy\" ", "12 May 2024"),
               _run(" was read by the man in "), *_complex(" REF chapter_two \\h ", "Chapter two"), _run(" today."))
    _paragraph(document, _run("Read "), *_complex(' HYPERLINK "https://example.com/guide" ', "the full guide"),
               _run(" before you start."))
    _paragraph(document, _run("See "), f'<w:fldSimple {W} w:instr=\' HYPERLINK "https://example.com/faq" \'>'
               f'<w:r><w:t>the questions page</w:t></w:r></w:fldSimple>', _run(" for help."))
    out = io.BytesIO()
    document.save(out)
    return out.getvalue()


def words(text: str) -> list[tuple[int, int]]:
    return [(m.start(), m.end()) for m in re.finditer(r"\S+", text)]


def shouted(data: bytes) -> bytes:
    """The document with every unit "translated" into capitals, word for word."""
    parsed = parse("docx", data)
    return parsed.render([u.text.upper() for u in parsed.units],
                         [list(zip(words(u.text), words(u.text))) for u in parsed.units])


def field_results(document) -> list[tuple[str, str]]:
    """(field code, result text) of every field of the body and the header, simple and complex."""
    out = []
    for root in (document.element.body, document.sections[0].header._element):
        for simple in root.iter(qn("w:fldSimple")):
            out.append((simple.get(qn("w:instr")).strip(), "".join(t.text for t in simple.iter(qn("w:t")))))
        stack = []
        for element in root.iter(qn("w:fldChar"), qn("w:instrText"), qn("w:t")):
            if element.tag == qn("w:fldChar"):
                kind = element.get(qn("w:fldCharType"))
                if kind == "begin":
                    stack.append(["", ""])
                elif kind == "end":
                    out.append(tuple(s.strip() for s in stack.pop()))
            elif element.tag == qn("w:instrText") and stack:
                stack[-1][0] += element.text
            elif stack and element.getparent().getparent().tag != qn("w:fldSimple"):
                stack[-1][1] += element.text
    return out


def test_computed_fields_are_never_written_into_and_hyperlink_fields_are_translated():
    data = fielded()
    parsed = parse("docx", data)
    texts = [u.text for u in parsed.units]
    assert "The contents" not in " ".join(texts) and "A red ball" not in " ".join(texts)  # the TOC's result
    assert "The report of was read by the man in today." in texts  # the DATE and REF results are no text
    assert "Read the full guide before you start." in texts and "See the questions page for help." in texts
    assert "Page of the whole report" in texts
    out = docx.Document(io.BytesIO(shouted(data)))
    before = field_results(docx.Document(io.BytesIO(data)))
    after = field_results(out)
    computed = [(code, result) for code, result in before if not code.startswith("HYPERLINK")]
    assert [f for f in after if not f[0].startswith("HYPERLINK")] == computed and len(computed) == 5
    links = [(code, result) for code, result in after if code.startswith("HYPERLINK")]
    assert links == [('HYPERLINK "https://example.com/faq"', "THE QUESTIONS PAGE"),
                     ('HYPERLINK "https://example.com/guide"', "THE FULL GUIDE")]
    body = [p.text for p in out.paragraphs]
    assert "THE REPORT OF 12 May 2024 WAS READ BY THE MAN IN Chapter two TODAY." in body
    header = out.sections[0].header.paragraphs[0]._p
    assert "".join(t.text for t in header.iter(qn("w:t"))) == "PAGE 1 OF THE WHOLE REPORT 9"
    assert body[:3] == ["The contents", "The dog runs home", "A red ball"]  # inside the TOC field: kept


def test_a_translated_fielded_document_reopens_with_every_field_marker_in_order():
    out = shouted(fielded())
    document = docx.Document(io.BytesIO(out))
    kinds = [e.get(qn("w:fldCharType")) for e in document.element.body.iter(qn("w:fldChar"))]
    assert kinds == ["begin", "separate", "end"] * 4
