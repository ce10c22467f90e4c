"""Documents that LibreOffice opens: an ODT made by LibreOffice from a small page goes through
translate-toolkit's odf2xliff, ``nmt translate`` and xliff2odf (the original as template), and a
DOCX translated by ``nmt`` reopens in python-docx; LibreOffice (headless, its own profile under
tmp) converts both to PDF, and the PDF's text (poppler's pdftotext) is the German translation,
with the English sentences gone and every link and bookmark kept."""
from __future__ import annotations

import io
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import zipfile
from collections import Counter
from pathlib import Path

import pytest

from .conftest import run_nmt

docx = pytest.importorskip("docx")

PAGE = """<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>The small guide</title></head>
<body>
<h1>Getting started<a name="start"></a></h1>
<p>The dog runs home and the <b>big</b> cat sees a red ball.</p>
<p>Read <a href="https://example.org/manual.html">the manual</a> before you install the program.</p>
<h2>The settings of the house<a name="settings"></a></h2>
<p>A woman opens the window and looks at the garden.</p>
<table border="1">
<tr><td>The house is green.</td><td>The man eats bread.</td></tr>
<tr><td>The children play in the park.</td><td>See <a href="#start">the first chapter</a> for help.</td></tr>
</table>
</body></html>
"""
SENTENCES = ["The dog runs home and the big cat sees a red ball.", "A woman opens the window and looks at the garden.",
             "The children play in the park.", "The man eats bread."]
ODF = "urn:oasis:names:tc:opendocument:xmlns:text:1.0"
XLINK = "http://www.w3.org/1999/xlink"


def tool(name: str, package: str) -> str:
    """A converter of translate-toolkit (installed beside this Python) or a Debian tool."""
    path = shutil.which(name, path=str(Path(sys.executable).parent)) or shutil.which(name)
    if path is None:
        pytest.skip(f"{name} is not installed ({package})")
    return path


def run(*args: str, timeout: float = 300) -> subprocess.CompletedProcess:
    done = subprocess.run(args, capture_output=True, text=True, timeout=timeout)
    assert done.returncode == 0, f"{args[0]}: {done.stderr[-2000:]}"
    return done


def soffice(profile: Path, target: str, outdir: Path, files: list[Path], timeout: float = 600) -> dict[Path, Path]:
    """Convert ``files`` with one headless LibreOffice (``--convert-to target``, e.g. ``pdf``,
    ``odt``, ``docx:"MS Word 2007 XML"``) into ``outdir``, with its user profile in ``profile``:
    {input: output} for the files it wrote. LibreOffice starts a child process (soffice.bin):
    the whole process group is stopped by its leader's pid if it outlives the timeout."""
    binary = tool("soffice", "Debian's libreoffice-writer-nogui")
    extension = target.split(":")[0]
    process = subprocess.Popen([binary, f"-env:UserInstallation={profile.resolve().as_uri()}", "--headless",
                                "--norestore", "--convert-to", target, "--outdir", str(outdir), *map(str, files)],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        _out, err = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.communicate()
        raise
    assert process.returncode == 0, err[-2000:]
    written = {path: outdir / f"{path.stem}.{extension}" for path in files}
    return {path: out for path, out in written.items() if out.exists() and out.stat().st_size > 0}


def pdf_text(pdf: Path) -> str:
    """The text of a PDF, by poppler's pdftotext, whitespace collapsed."""
    done = run(tool("pdftotext", "Debian's poppler-utils"), "-enc", "UTF-8", str(pdf), "-")
    return " ".join(done.stdout.split())


def odf_marks(odt: Path) -> tuple[Counter, Counter, list[str]]:
    """Links by target, bookmarks by name and the text of every paragraph and heading of an ODT."""
    from lxml import etree

    with zipfile.ZipFile(odt) as package:
        root = etree.fromstring(package.read("content.xml"))
    links = Counter(a.get(f"{{{XLINK}}}href") for a in root.iter(f"{{{ODF}}}a"))
    bookmarks = Counter(b.get(f"{{{ODF}}}name") for b in root.iter(f"{{{ODF}}}bookmark"))
    paragraphs = [" ".join("".join(p.itertext()).split()) for p in root.iter(f"{{{ODF}}}p", f"{{{ODF}}}h")]
    return links, bookmarks, [p for p in paragraphs if p]


def report_docx() -> bytes:
    """A short report made with python-docx: a heading, bold inside a sentence, a hyperlink, a
    table, a footer with a PAGE field."""
    from docx.opc.constants import RELATIONSHIP_TYPE as RT
    from docx.oxml import OxmlElement
    from docx.oxml.ns import qn

    document = docx.Document()
    document.add_heading("The house and the garden", level=1)
    p = document.add_paragraph("The dog runs home and the ")
    p.add_run("big").bold = True
    p.add_run(" cat sees a red ball.")
    p = document.add_paragraph("Read ")
    link = OxmlElement("w:hyperlink")
    link.set(qn("r:id"), p.part.relate_to("https://example.org/manual", RT.HYPERLINK, is_external=True))
    r, t = OxmlElement("w:r"), OxmlElement("w:t")
    t.text = "the manual"
    r.append(t)
    link.append(r)
    p._p.append(link)
    p.add_run(" before you install the program.")
    document.add_paragraph("A woman opens the window and looks at the garden.")
    table = document.add_table(rows=2, cols=2)
    table.style = "Table Grid"
    table.cell(0, 0).text, table.cell(0, 1).text = "The house is green.", "The man eats bread."
    table.cell(1, 0).text, table.cell(1, 1).text = "The children play in the park.", "The weather is good."
    footer = document.sections[0].footer.paragraphs[0]
    footer.text = "Page "
    field = OxmlElement("w:fldSimple")
    field.set(qn("w:instr"), "PAGE")
    r, t = OxmlElement("w:r"), OxmlElement("w:t")
    t.text = "1"
    r.append(t)
    field.append(r)
    footer._p.append(field)
    out = io.BytesIO()
    document.save(out)
    return out.getvalue()


def translations(record: Path) -> list[tuple[str, str]]:
    """(source, translation) of every unit of an ``nmt translate`` JSON record."""
    units = json.loads(record.read_text(encoding="utf-8"))["units"]
    return [(" ".join(u["source"].split()), " ".join(u["translation"].split())) for u in units]


def changed_sentences(pairs: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """The pairs of sentences of 4 or more words that the model changed."""
    return [(s, t) for s, t in pairs if len(s.split()) >= 4 and s != t]


@pytest.mark.slow
@pytest.mark.integration
def test_odf2xliff_nmt_xliff2odf_gives_a_german_odt_that_libreoffice_opens(tmp_path):
    (tmp_path / "guide.html").write_text(PAGE, encoding="utf-8")
    profile = tmp_path / "profile"
    made = soffice(profile, "odt:writer8", tmp_path, [tmp_path / "guide.html"])
    odt = made[tmp_path / "guide.html"]
    run(tool("odf2xliff", "translate-toolkit"), str(odt), str(tmp_path / "guide.xlf"))
    done = run_nmt("translate", "--device", "cpu", str(tmp_path / "guide.xlf"), "--out", str(tmp_path / "out"))
    assert done.returncode == 0, done.stderr[-2000:]
    translated = tmp_path / "out" / "guide.de.xlf"
    run(tool("xmllint", "Debian's libxml2-utils"), "--noout", "--nonet", str(translated))
    german = tmp_path / "de" / "guide.odt"
    german.parent.mkdir()
    run(tool("xliff2odf", "translate-toolkit"), "-t", str(odt), str(translated), str(german))

    pdfs = soffice(profile, "pdf", tmp_path / "pdf", [german])  # LibreOffice opens the result
    text = pdf_text(pdfs[german])
    (links, bookmarks, paragraphs), (new_links, new_bookmarks, new_paragraphs) = odf_marks(odt), odf_marks(german)
    assert new_links == links and sum(links.values()) == 2, (links, new_links)
    assert new_bookmarks == bookmarks and set(bookmarks) == {"start", "settings"}, (bookmarks, new_bookmarks)
    assert len(new_paragraphs) == len(paragraphs) == 9
    pairs = changed_sentences(translations(tmp_path / "out" / "guide.de.json"))
    assert len(pairs) >= 6
    for source, target in pairs:
        assert target in new_paragraphs and target in text
    for sentence in SENTENCES:
        assert sentence not in text and sentence in " ".join(paragraphs)
    assert re.search(r"\b(der|die|das|und|ist)\b", text) and not re.search(r"\b(the|and|is)\b", text), text


@pytest.mark.slow
@pytest.mark.integration
def test_a_docx_translated_by_nmt_reopens_and_libreoffice_prints_it_in_german(tmp_path):
    (tmp_path / "report.docx").write_bytes(report_docx())
    done = run_nmt("translate", "--device", "cpu", str(tmp_path / "report.docx"), "--out", str(tmp_path / "out"))
    assert done.returncode == 0, done.stderr[-2000:]
    german = tmp_path / "out" / "report.de.docx"
    reopened = docx.Document(str(german))
    source = docx.Document(str(tmp_path / "report.docx"))
    assert len(reopened.tables) == 1 and len(reopened.paragraphs) == len(source.paragraphs)

    pdfs = soffice(tmp_path / "profile", "pdf", tmp_path / "pdf", [german, tmp_path / "report.docx"])
    text, source_text = pdf_text(pdfs[german]), pdf_text(pdfs[tmp_path / "report.docx"])
    for sentence in SENTENCES:
        assert sentence in source_text and sentence not in text
    pairs = changed_sentences(translations(tmp_path / "out" / "report.de.json"))
    assert len(pairs) >= 6
    for source, target in pairs:  # a sentence a line wraps in the PDF still reads in order
        assert target in text, (target, text)
    footer = reopened.sections[0].footer.paragraphs[0]._p.xml
    assert 'w:instr="PAGE"' in footer and "<w:t>1</w:t>" in footer  # the field and its result, untouched
    run(tool("pdftoppm", "Debian's poppler-utils"), "-png", "-r", "60", "-f", "1", "-l", "1", str(pdfs[german]),
        str(tmp_path / "page"))
    assert (tmp_path / "page-1.png").stat().st_size > 1000
