"""Word documents: paragraphs of the body, tables, headers and footers read into units whose runs
and hyperlinks are markup; written back with the formatting on the aligned words, every other
part of the document as it was; through ``nmt translate`` and through the queue (bytes in base64)."""
from __future__ import annotations

import io
import json
import re
import zipfile

import pytest

docx = pytest.importorskip("docx")
from docx.opc.constants import RELATIONSHIP_TYPE as RT  # noqa: E402
from docx.oxml import OxmlElement  # noqa: E402
from docx.oxml.ns import qn  # noqa: E402

from queue_config.messages import MessageError  # noqa: E402
from worker.formats import FormatError, format_of, parse  # noqa: E402

from .conftest import run_nmt  # noqa: E402
from .test_queue_integration import client, redis_server, workers  # noqa: E402,F401 (fixtures)


def _hyperlink(paragraph, url: str, text: str) -> None:
    r_id = paragraph.part.relate_to(url, RT.HYPERLINK, is_external=True)
    link = OxmlElement("w:hyperlink")
    link.set(qn("r:id"), r_id)
    run, properties, style, t = OxmlElement("w:r"), OxmlElement("w:rPr"), OxmlElement("w:rStyle"), OxmlElement("w:t")
    style.set(qn("w:val"), "Hyperlink")
    properties.append(style)
    run.append(properties)
    t.text = text
    run.append(t)
    link.append(run)
    paragraph._p.append(link)


def report() -> bytes:
    """A small report: a heading, bold and italic runs, a hyperlink, a tab, a table with a bold
    run, a header and a footer."""
    document = docx.Document()
    document.add_heading("The annual report", level=1)
    p = document.add_paragraph("The ")
    p.add_run("big red").bold = True
    p.add_run(" dog runs ")
    p.add_run("home").italic = True
    p.add_run(" every day.")
    p = document.add_paragraph("Read the ")
    _hyperlink(p, "https://example.com/docs", "full guide")
    p.add_run(" before you start.")
    p = document.add_paragraph("Name:")
    p.add_run().add_tab()
    p.add_run("A small house.")
    table = document.add_table(rows=2, cols=2)
    table.style = "Table Grid"
    table.cell(0, 0).text, table.cell(0, 1).text, table.cell(1, 0).text = "Item", "Price", "A green apple"
    cell = table.cell(1, 1).paragraphs[0]
    cell.add_run("two ").bold = True
    cell.add_run("euros")
    document.sections[0].header.paragraphs[0].text = "Company confidential"
    document.sections[0].footer.paragraphs[0].text = "Page footer text"
    document.add_paragraph("")
    out = io.BytesIO()
    document.save(out)
    return out.getvalue()


def words(text: str) -> list[tuple[int, int]]:
    return [(m.start(), m.end()) for m in re.finditer(r"\S+", text)]


def runs(paragraph) -> list[tuple[str, bool | None, bool | None]]:
    return [(r.text, r.bold, r.italic) for r in paragraph.runs if r.text]


def test_units_and_an_identity_render_keep_text_formatting_links_tables_headers():
    parsed = parse("docx", report())
    assert [u.text for u in parsed.units] == [
        "The annual report", "The big red dog runs home every day.", "Read the full guide before you start.",
        "Name: A small house.", "Item", "Price", "A green apple", "two euros", "Company confidential",
        "Page footer text"]
    assert [u.where for u in parsed.units][-2:] == ["header1 paragraph 1", "footer1 paragraph 1"]
    second = parsed.units[1]
    assert [second.text[t.start:t.end] for t in second.tags] == ["big red", "home"]
    identity = parsed.render([u.text for u in parsed.units], [list(zip(words(u.text), words(u.text))) for u in parsed.units])
    out = docx.Document(io.BytesIO(identity))
    source = docx.Document(io.BytesIO(report()))
    for a, b in zip(source.paragraphs, out.paragraphs):
        assert runs(a) == runs(b) and a.style.name == b.style.name  # the same runs, the same formatting
    assert [(h.address, h.text) for h in out.paragraphs[2].hyperlinks] == [("https://example.com/docs", "full guide")]
    assert "\t" in out.paragraphs[3].text
    assert [[c.text for c in row.cells] for row in out.tables[0].rows] == [["Item", "Price"], ["A green apple", "two euros"]]
    assert runs(out.tables[0].cell(1, 1).paragraphs[0]) == [("two", True, None), (" euros", None, None)]
    assert out.tables[0].style.name == "Table Grid"
    assert out.sections[0].header.paragraphs[0].text == "Company confidential"
    assert out.sections[0].footer.paragraphs[0].text == "Page footer text"
    assert parsed.render([u.text for u in parsed.units], [[] for _ in parsed.units]) != b""  # renders again


def test_formatting_follows_the_aligned_words():
    parsed = parse("docx", report())
    translations = [u.text for u in parsed.units]
    translations[1] = "Der große rote Hund läuft jeden Tag nach Hause."
    links = [list(zip(words(u.text), words(u.text))) for u in parsed.units]
    s, t = words(parsed.units[1].text), words(translations[1])
    # The -> Der, big -> große, red -> rote, dog -> Hund, runs -> läuft, home -> Hause., every -> jeden, day. -> Tag
    links[1] = [(s[0], t[0]), (s[1], t[1]), (s[2], t[2]), (s[3], t[3]), (s[4], t[4]), (s[5], t[8]), (s[6], t[5]),
                (s[7], t[6])]
    out = docx.Document(io.BytesIO(parsed.render(translations, links)))
    assert runs(out.paragraphs[1]) == [("Der ", None, None), ("große rote", True, None), (" Hund läuft jeden Tag nach ", None, None),
                                       ("Hause", None, True), (".", None, None)]


def test_broken_files_are_format_errors_and_docx_is_chosen_by_extension():
    assert format_of("report.docx") == "docx"
    with pytest.raises(FormatError, match="not a valid DOCX file"):
        parse("docx", b"PK\x03\x04 not really a zip")
    empty = io.BytesIO()
    with zipfile.ZipFile(empty, "w") as archive:
        archive.writestr("hello.txt", "no document here")
    with pytest.raises(FormatError, match="not a valid DOCX file"):
        parse("docx", empty.getvalue())
    with pytest.raises(FormatError, match="binary"):
        parse("docx", "text, not bytes")


def test_nmt_translate_writes_a_docx_that_word_libraries_open(tiny_bundle, tmp_path):
    (tmp_path / "report.docx").write_bytes(report())
    (tmp_path / "broken.docx").write_bytes(b"not a zip at all")
    done = run_nmt("translate", "--bundle", str(tiny_bundle), "--device", "cpu", str(tmp_path / "report.docx"),
                   str(tmp_path / "broken.docx"), "--out", str(tmp_path / "out"))
    assert done.returncode == 1 and "skipped" in done.stderr and "broken.docx: not a valid DOCX file" in done.stderr
    out = docx.Document(str(tmp_path / "out" / "report.de.docx"))
    assert len(out.tables) == 1 and out.tables[0].style.name == "Table Grid"
    assert [h.address for h in out.paragraphs[2].hyperlinks] == ["https://example.com/docs"]
    assert out.paragraphs[0].style.name == "Heading 1" and out.paragraphs[0].text
    assert any(r.bold for r in out.paragraphs[1].runs) and any(r.italic for r in out.paragraphs[1].runs)
    assert out.sections[0].header.paragraphs[0].text and out.sections[0].footer.paragraphs[0].text
    payload = json.loads((tmp_path / "out" / "report.de.json").read_text(encoding="utf-8"))
    assert payload["format"] == "docx" and len(payload["units"]) == 10


def test_queue_jobs_carry_docx_files_as_bytes_and_by_path(workers, client, tmp_path):
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "report.docx").write_bytes(report())
    workers("w1", input_root=str(tmp_path / "in"))
    sent = client.submit(text=report(), src="en", tgt="de", format="docx", name="sent")
    by_path = client.submit(path="report.docx", src="en", tgt="de")
    for job, name in ((sent, "sent"), (by_path, "report")):
        result = job.wait(timeout=120)
        out = docx.Document(io.BytesIO(result.data))
        assert len(out.tables) == 1 and result.raw["format"] == "docx" and len(result.raw["units"]) == 10
        assert (tmp_path / "out" / job.id / f"{name}.de.docx").read_bytes() == result.data
    broken = client.submit(text=b"not a zip", src="en", tgt="de", format="docx", name="broken")
    with pytest.raises(Exception, match="broken: not a valid DOCX file"):
        broken.wait(timeout=60)
    with pytest.raises(MessageError, match="bytes are sent only for a binary format"):
        client.submit(text=b"A dog.", src="en", tgt="de")
    with pytest.raises(MessageError, match="base64"):
        client.submit(text="not base64 !", src="en", tgt="de", format="docx")
