"""Word documents: paragraphs of the body, tables, headers and footers read into units whose runs
and hyperlinks are markup; written back with the formatting on the aligned words, every other
part of the document as it was; through ``nmt translate`` and through the queue (bytes in base64).
Code (a paragraph in a code style, a run in a monospace font or a code character style) never
reaches the model and comes back byte for byte, in documents made by python-docx and by
LibreOffice's DOCX writer; LibreOffice's links keep their targets, in order, and their text."""
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

from .conftest import REPO_ROOT, run_nmt  # noqa: E402
from .test_formats_libreoffice import soffice  # noqa: E402
from .test_queue_integration import client, redis_server, workers  # noqa: E402,F401 (fixtures)

SHIPPED = REPO_ROOT / "models" / "en-de"


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


# -- Code and LibreOffice's links ----------------------------------------------------------------
CODE_PAGE = """<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>Python-Markdown</title></head><body>
<h1>Using the library</h1>
<p>Install it with <code>pip install markdown</code> and then run <kbd>python -m markdown</kbd> on your file.</p>
<pre>import markdown
html = markdown.markdown(text)</pre>
<p>The <tt>safe_mode</tt> option was removed. See the <a href="https://python-markdown.github.io/">documentation</a>
for details.</p>
<p>Next: <a href="#a">Resource Measurement</a> [<a href="#b">Contents</a>][<a href="#c">Index</a>]</p>
<p>Read <a href="https://example.com/guide">the full guide</a> and <a href="https://example.com/faq">the questions
page</a> before you start.</p>
<p>Call <a href="https://example.com/api"><code>markdown.markdown</code></a> to convert the text.</p>
<p>Set <var>nargs</var> to the number of arguments.</p>
</body></html>
"""
# what LibreOffice writes for it: <pre> lines as "Preformatted Text" paragraphs, <code>, <kbd> and <tt>
# as runs with the character styles "Source Text", "User Entry" and "Teletype" (Liberation Mono),
# <var> with "Variable" (italic), every link's runs with the style "Internet Link" (named "Hyperlink")
LIBREOFFICE_CODE = ["pip install markdown", "python -m markdown", "import markdown", "html = markdown.markdown(text)",
                    "safe_mode", "markdown.markdown", "nargs"]
PYTHON_DOCX_CODE = ["import markdown", "pip install markdown", "def convert(text): return markdown.markdown(text)",
                    "for line in open(path): print(line)", "git clone repo", "safe_mode"]


def coded() -> bytes:
    """Code as python-docx writes it: a paragraph of one Courier run (a code block), a Consolas run
    in a sentence, a paragraph style in Menlo and one named "HTML Preformatted" (no font of its
    own), a character style whose monospace font comes through its ``basedOn`` chain, one named
    "Source Text"; and prose in Arial Unicode MS, which is no code."""
    from docx.enum.style import WD_STYLE_TYPE

    document = docx.Document()
    styles = document.styles
    listing = styles.add_style("Listing", WD_STYLE_TYPE.PARAGRAPH)
    listing.base_style, listing.font.name = styles["Normal"], "Menlo"
    styles.add_style("HTML Preformatted", WD_STYLE_TYPE.PARAGRAPH).base_style = styles["Normal"]
    styles.add_style("Mono Base", WD_STYLE_TYPE.CHARACTER).font.name = "Source Code Pro"
    styles.add_style("Shell Command", WD_STYLE_TYPE.CHARACTER).base_style = styles["Mono Base"]
    styles.add_style("Source Text", WD_STYLE_TYPE.CHARACTER)
    document.add_heading("Install the package", level=1)
    document.add_paragraph().add_run("import markdown").font.name = "Courier"
    p = document.add_paragraph("Run ")
    p.add_run("pip install markdown").font.name = "Consolas"
    p.add_run(" to install the package.")
    document.add_paragraph("def convert(text): return markdown.markdown(text)", style="Listing")
    document.add_paragraph("for line in open(path): print(line)", style="HTML Preformatted")
    p = document.add_paragraph("Then type ")
    p.add_run("git clone repo", style="Shell Command")
    p.add_run(" in the terminal.")
    p = document.add_paragraph("The ")
    p.add_run("safe_mode", style="Source Text")
    p.add_run(" option was removed.")
    document.add_paragraph().add_run("The report is ready for the team.").font.name = "Arial Unicode MS"
    out = io.BytesIO()
    document.save(out)
    return out.getvalue()


@pytest.fixture(scope="module")
def libreoffice_docx(tmp_path_factory) -> bytes:
    """``CODE_PAGE`` converted to DOCX by LibreOffice (headless, its own profile)."""
    folder = tmp_path_factory.mktemp("libreoffice")
    (folder / "page.html").write_text(CODE_PAGE, encoding="utf-8")
    made = soffice(folder / "profile", "docx:MS Word 2007 XML", folder / "out", [folder / "page.html"], timeout=300)
    return made[folder / "page.html"].read_bytes()


def _canonical(element) -> bytes:
    from lxml import etree
    return etree.tostring(element, method="c14n", exclusive=True)


def _code_kept(source: bytes, out: bytes, code: list[str]) -> None:
    """Every paragraph of ``source`` that is one of ``code`` is in ``out`` as it was, and so is
    every run whose text is one of them, in the paragraph of the same number."""
    before, after = docx.Document(io.BytesIO(source)), docx.Document(io.BytesIO(out))
    assert len(after.paragraphs) == len(before.paragraphs)
    found = set()
    for old, new in zip(before.paragraphs, after.paragraphs):
        if old.text in code:
            assert _canonical(new._p) == _canonical(old._p), old.text
            found.add(old.text)
            continue
        kept = {_canonical(r) for r in new._p.iter(qn("w:r"))}
        for run in old._p.iter(qn("w:r")):
            text = "".join(t.text or "" for t in run.iter(qn("w:t")))
            if text in code:
                assert _canonical(run) in kept, (text, new.text)
                found.add(text)
    assert found == set(code)


@pytest.mark.parametrize("made_by", ["python-docx", "LibreOffice"])
def test_code_never_reaches_the_model_and_comes_back_byte_for_byte(made_by, request):
    source, code = (coded(), PYTHON_DOCX_CODE) if made_by == "python-docx" else \
        (request.getfixturevalue("libreoffice_docx"), LIBREOFFICE_CODE)
    parsed = parse("docx", source)
    sent = "\n".join(u.text for u in parsed.units)  # what the engine would be given
    for text in code:
        assert text not in sent
    prose = {"python-docx": ["Install the package", "Run to install the package.", "Then type in the terminal.",
                             "The option was removed.", "The report is ready for the team."],
             "LibreOffice": ["Install it with and then run on your file.", "Call to convert the text.",
                             "Set to the number of arguments."]}[made_by]
    assert set(prose) <= {u.text for u in parsed.units}
    # a "translation" that changes every word, aligned word for word
    out = parsed.render([u.text.upper() for u in parsed.units],
                        [list(zip(words(u.text), words(u.text))) for u in parsed.units])
    _code_kept(source, out, code)
    text = "\n".join(p.text for p in docx.Document(io.BytesIO(out)).paragraphs)
    assert all(" ".join(sentence.split()[-2:]).upper() in text for sentence in prose)  # the prose was written


def test_a_document_set_in_courier_by_its_normal_style_is_still_translated():
    document = docx.Document()
    document.styles["Normal"].font.name = "Courier New"
    document.add_paragraph("The dog runs home every day.")
    out = io.BytesIO()
    document.save(out)
    assert [u.text for u in parse("docx", out.getvalue()).units] == ["The dog runs home every day."]


def test_libreoffice_link_style_is_the_links_own_formatting_and_glued_links_are_parted(libreoffice_docx):
    """LibreOffice puts its link style on every link's runs: where links hold most of a paragraph's
    text, that style was taken for the paragraph's, each plain stretch (" [", "][") became a tag
    competing with the links for words, and "Index" lost its link's word."""
    units = {u.text: u for u in parse("docx", libreoffice_docx).units}
    expected = {"Next: Resource Measurement [Contents] [Index]": ["Resource Measurement", "Contents", "Index"],
                "Read the full guide and the questions page before you start.":
                    ["the full guide", "the questions page"]}
    for text, linked in expected.items():
        assert [text[t.start:t.end] for t in units[text].tags] == linked  # the links, and no other tag


def _links(paragraph) -> list[tuple[str, str, str]]:
    return [(h.address, h.fragment, h.text) for h in paragraph.hyperlinks]


@pytest.mark.slow
@pytest.mark.skipif(not (SHIPPED / "manifest.json").exists(), reason="models/en-de not present")
def test_libreoffice_links_keep_targets_in_order_and_text_through_the_shipped_model(libreoffice_docx, tmp_path):
    (tmp_path / "page.docx").write_bytes(libreoffice_docx)
    done = run_nmt("translate", "--bundle", str(SHIPPED), "--device", "cpu", "--threads", "1",
                   str(tmp_path / "page.docx"), "--out", str(tmp_path / "out"))
    assert done.returncode == 0, done.stderr[-2000:]
    out = (tmp_path / "out" / "page.de.docx").read_bytes()
    before, after = docx.Document(io.BytesIO(libreoffice_docx)), docx.Document(io.BytesIO(out))
    linked = 0
    for old, new in zip(before.paragraphs, after.paragraphs):
        assert [link[:2] for link in _links(new)] == [link[:2] for link in _links(old)], old.text
        assert all(text.strip() for _, _, text in _links(new)), (old.text, _links(new))
        linked += len(_links(old))
    assert linked == 7
    for run in after.element.body.iter(qn("w:r")):  # link formatting stays on links
        if run.find(f"{qn('w:rPr')}/{qn('w:rStyle')}[@{qn('w:val')}='InternetLink']") is not None:
            assert run.getparent().tag == qn("w:hyperlink"), run.getparent().xpath("string(.)")
    _code_kept(libreoffice_docx, out, LIBREOFFICE_CODE)
    sources = [u["source"] for u in json.loads((tmp_path / "out" / "page.de.json").read_text("utf-8"))["units"]]
    assert not [text for text in LIBREOFFICE_CODE if any(text in source for source in sources)]


def test_a_link_the_translation_leaves_no_word_keeps_its_source_text():
    document = docx.Document()
    p = document.add_paragraph("Read ")
    _hyperlink(p, "https://example.com/guide", "the full guide")
    p.add_run(" and ")
    _hyperlink(p, "https://example.com/faq", "the questions page")
    p.add_run(" now.")
    data = io.BytesIO()
    document.save(data)
    parsed = parse("docx", data.getvalue())
    (unit,) = parsed.units
    # one word for the whole sentence, every source word aligned to it: the first link takes it
    out = docx.Document(io.BytesIO(parsed.render(["Lies."], [[(w, (0, 5)) for w in words(unit.text)]])))
    assert [(h.address, h.text) for h in out.paragraphs[0].hyperlinks] == [
        ("https://example.com/guide", "Lies"), ("https://example.com/faq", "the questions page")]
    assert any("kept its source text" in note for note in parsed.notes[0])


@pytest.mark.parametrize("between, text", [("][", "See [Contents] [Index]."), ("/", "See [Contents / Index]."),
                                           ("", "See [Contents Index].")])
def test_two_links_glued_into_one_word_are_parted_by_a_space(between, text):
    document = docx.Document()
    p = document.add_paragraph("See [")
    _hyperlink(p, "https://example.com/contents", "Contents")
    if between:
        p.add_run(between)
    _hyperlink(p, "https://example.com/index", "Index")
    p.add_run("].")
    data = io.BytesIO()
    document.save(data)
    (unit,) = parse("docx", data.getvalue()).units
    assert unit.text == text and [text[t.start:t.end] for t in unit.tags] == ["Contents", "Index"]
