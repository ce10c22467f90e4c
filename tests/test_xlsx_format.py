"""Excel workbooks: shared strings, inline strings, rich-text runs and comments are translated by
editing those XML parts alone. Formula and number cells stay byte for byte in each sheet's own
text, as do styles, charts, tables, data validation and defined names (their parts untouched);
codes, IDs, numbers and the strings formulas, validation lists and tables name never reach the
model. Workbooks made by openpyxl and by LibreOffice (from CSV data, from an HTML table page of
/usr/share/doc, and an openpyxl workbook it saved again) go through the shipped en-de model:
each reopens in openpyxl, LibreOffice prints it to PDF in German. Generated strings (runs split
mid-word, empty runs, line breaks) keep their breaks and every cell that is not a string; bad files
are one-line errors while the others go on; jobs run through the queue, ``nmt submit`` and the
gateway's document endpoints."""
from __future__ import annotations

import datetime
import io
import json
import random
import re
import shutil
import subprocess
import zipfile
from functools import partial
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

openpyxl = pytest.importorskip("openpyxl")
from lxml import etree  # noqa: E402
from openpyxl.cell.rich_text import CellRichText, TextBlock  # noqa: E402
from openpyxl.cell.text import InlineFont  # noqa: E402
from openpyxl.chart import BarChart, Reference  # noqa: E402
from openpyxl.comments import Comment  # noqa: E402
from openpyxl.styles import Font  # noqa: E402
from openpyxl.workbook.defined_name import DefinedName  # noqa: E402
from openpyxl.worksheet.datavalidation import DataValidation  # noqa: E402
from openpyxl.worksheet.table import Table  # noqa: E402

from worker.formats import FormatError, format_of, parse  # noqa: E402

from .conftest import run_nmt  # noqa: E402
from .test_formats_libreoffice import soffice  # noqa: E402
from .test_pptx_format import (SHIPPED, _generated_translation, _parts, deck, encrypted, fleet,  # noqa: E402,F401
                               identity_links, needs_model, pdf_text, through_the_fleet, words)

S = "http://schemas.openxmlformats.org/spreadsheetml/2006/main"
CELL = re.compile(r"<c\b[^>]*?(?:/>|>.*?</c>)", re.S)
PROSE = ["Product", "Price", "Status", "Shipped", "Order ID", "A green apple", "The big red ball",
         "The fast dog runs home.", "The first line of the note\nThe second line of the note", "Total",
         "Visit the shop", "Check this price with the shop.", "The children play in the park."]
CODES = ["INV-2024-001", "PRJ-ALPHA", "00123", "192.168.255.1", "user@example.com", "Yes", "No", "Region", "make install"]


def workbook() -> bytes:
    """Two sheets: prose, numbers, dates, codes and IDs (one in Courier), a rich-text cell, a cell of two lines,
    formulas (one counting the cells that say "Yes"), a list validation ("Yes,No"), a defined name,
    a chart, a hyperlink, a comment, and a table whose header names a column "Region"; the second
    sheet's formula names the first."""
    wb = openpyxl.Workbook()
    ws = wb.active
    ws.title = "Sales"
    ws.append(["Product", "Price", "Status", "Shipped", "Order ID"])
    ws.append(["A green apple", 3.5, "Yes", datetime.date(2024, 5, 1), "INV-2024-001"])
    ws.append(["The big red ball", 12, "No", datetime.date(2024, 6, 1), "PRJ-ALPHA"])
    ws["A4"] = CellRichText(["The ", TextBlock(InlineFont(b=True), "fast"), " dog runs ", TextBlock(InlineFont(i=True), "home"), "."])
    ws["A5"] = "Total"
    ws["B5"] = "=SUM(B2:B3)"
    ws["C5"] = '=COUNTIF(C2:C3,"Yes")'
    ws["A6"] = "The first line of the note\nThe second line of the note"
    ws["A7"], ws["B7"], ws["C7"], ws["D7"] = "00123", "192.168.255.1", "user@example.com", "make install"
    ws["D7"].font = Font(name="Courier New")  # code
    ws["A8"] = "Visit the shop"
    ws["A8"].hyperlink = "https://example.com/shop"
    ws["A2"].comment = Comment("Check this price with the shop.", "Anna")
    validation = DataValidation(type="list", formula1='"Yes,No"')
    ws.add_data_validation(validation)
    validation.add("C2:C3")
    wb.defined_names["Prices"] = DefinedName("Prices", attr_text="Sales!$B$2:$B$3")
    chart = BarChart()
    chart.title = "Prices"
    chart.add_data(Reference(ws, min_col=2, min_row=1, max_row=3), titles_from_data=True)
    ws.add_chart(chart, "G2")
    regions = wb.create_sheet("Regions")
    regions.append(["Region", "Sales"])
    regions.append(["The children play in the park.", 7])
    regions.add_table(Table(displayName="RegionSales", ref="A1:B2"))
    regions["C2"] = "=Sales!B2*2"
    out = io.BytesIO()
    wb.save(out)
    return out.getvalue()


def sheets(data: bytes) -> dict[str, str]:
    return {name: body.decode("utf-8") for name, body in _parts(data).items() if name.startswith("xl/worksheets/sheet")}


def kept_cells(data: bytes) -> dict[tuple[str, str], str]:
    """Every cell that is no string (formulas, numbers, dates, booleans), as its sheet's text has it."""
    found = {}
    for name, text in sheets(data).items():
        for cell in CELL.findall(text):
            if 't="s"' not in cell and 't="inlineStr"' not in cell:
                found[(name, re.search(r'r="([A-Z]+\d+)"', cell).group(1))] = cell
    return found


def _blocks(rich) -> list[tuple[str, tuple | None]]:
    """A rich-text cell's runs: (text, (bold, italic)), None for a run of the cell's own font."""
    return [(block, None) if isinstance(block, str) else (block.text, (bool(block.font.b), bool(block.font.i))) for block in rich]


def test_strings_rich_text_and_comments_are_units_and_codes_numbers_and_named_strings_are_not():
    parsed = parse("xlsx", workbook())
    texts = [u.text for u in parsed.units]
    # an e-mail address is a unit, which the translator copies (a span, worker.text.spans); the other codes are none
    assert sorted(texts) == sorted([" ".join(p.split()) for p in PROSE] + ["user@example.com"])
    assert not [c for c in CODES if c != "user@example.com" and any(c in t for t in texts)]
    where = {u.text: u.where for u in parsed.units}
    assert where["The fast dog runs home."] == "Sales!A4" and where["Check this price with the shop."] == "Sales!A2 comment"
    rich = next(u for u in parsed.units if u.text == "The fast dog runs home.")
    assert [rich.text[t.start:t.end] for t in rich.tags] == ["fast", "home"]
    assert format_of("book.xlsx") == "xlsx" and format_of("book.xlsm") == "xlsm"


def test_a_translation_rewrites_strings_only_and_keeps_every_other_cell_and_part_byte_for_byte():
    source = workbook()
    parsed = parse("xlsx", source)
    out = parsed.render([u.text.upper() for u in parsed.units], identity_links(parsed))
    a, b = _parts(source), _parts(out)
    assert list(a) == list(b)
    assert {n for n in a if a[n] != b[n]} == {"xl/worksheets/sheet1.xml", "xl/worksheets/sheet2.xml", "xl/comments/comment1.xml"}
    assert kept_cells(out) == kept_cells(source)  # formulas, numbers, dates: byte for byte in the sheet's text
    book = openpyxl.load_workbook(io.BytesIO(out))
    sales = book["Sales"]
    assert [sales["B5"].value, sales["C5"].value, book["Regions"]["C2"].value] == ["=SUM(B2:B3)", '=COUNTIF(C2:C3,"Yes")', "=Sales!B2*2"]
    assert sales["A2"].value == "A GREEN APPLE" and sales["C2"].value == "Yes" and sales["E3"].value == "PRJ-ALPHA"
    assert sales["A6"].value == "THE FIRST LINE OF THE NOTE\nTHE SECOND LINE OF THE NOTE"  # the line break stays one
    assert sales["A8"].hyperlink.target == "https://example.com/shop" and sales["A2"].comment.text == "CHECK THIS PRICE WITH THE SHOP."
    assert sales.data_validations.dataValidation[0].formula1 == '"Yes,No"' and book.defined_names["Prices"].attr_text == "Sales!$B$2:$B$3"
    assert book["Regions"]["A1"].value == "Region"  # the table's column name
    rich = openpyxl.load_workbook(io.BytesIO(out), rich_text=True)["Sales"]["A4"].value
    assert _blocks(rich) == \
        [("THE ", None), ("FAST", (True, False)), (" DOG RUNS ", None), ("HOME", (False, True)), (".", None)]


def test_rich_text_formatting_follows_the_aligned_words():
    parsed = parse("xlsx", workbook())
    index = [u.text for u in parsed.units].index("The fast dog runs home.")
    translations, links = [u.text for u in parsed.units], identity_links(parsed)
    translations[index] = "Der schnelle Hund läuft nach Hause."
    s, t = words(parsed.units[index].text), words(translations[index])
    # The -> Der, fast -> schnelle, dog -> Hund, runs -> läuft, home. -> Hause.
    links[index] = [(s[0], t[0]), (s[1], t[1]), (s[2], t[2]), (s[3], t[3]), (s[4], t[5])]
    out = parsed.render(translations, links)
    rich = openpyxl.load_workbook(io.BytesIO(out), rich_text=True)["Sales"]["A4"].value
    assert _blocks(rich) == \
        [("Der ", None), ("schnelle", (True, False)), (" Hund läuft nach ", None), ("Hause", (False, True)), (".", None)]


THREADED = ('<ThreadedComments xmlns="http://schemas.microsoft.com/office/spreadsheetml/2018/threadedcomments">'
            '<threadedComment ref="B2" dT="2024-01-01T00:00:00.00" personId="{0}" id="{1}">'
            '<text>Is this price right for the shop?</text></threadedComment></ThreadedComments>').encode()
PIVOT_CACHE = (f'<pivotCacheDefinition xmlns="{S}"><cacheSource type="worksheet"><worksheetSource ref="A1:C3" '
               'sheet="Sales"/></cacheSource><cacheFields count="1"><cacheField name="Status" numFmtId="0"/>'
               '</cacheFields></pivotCacheDefinition>').encode()


def test_threaded_comments_are_units_and_a_pivot_caches_field_names_are_kept():
    from .test_pptx_format import with_parts
    source = with_parts(workbook(), {"xl/threadedComments/threadedComment1.xml": THREADED,
                                     "xl/pivotCache/pivotCacheDefinition1.xml": PIVOT_CACHE},
                        {"xl/threadedComments/threadedComment1.xml": "application/vnd.ms-excel.threadedcomments+xml",
                         "xl/pivotCache/pivotCacheDefinition1.xml":
                             "application/vnd.openxmlformats-officedocument.spreadsheetml.pivotCacheDefinition+xml"},
                        {"xl/worksheets/sheet1.xml": [("rId70", "http://schemas.microsoft.com/office/2017/10/"
                                                       "relationships/threadedComment",
                                                       "../threadedComments/threadedComment1.xml")]})
    parsed = parse("xlsx", source)
    where = {u.text: u.where for u in parsed.units}
    assert where["Is this price right for the shop?"] == "Sales!B2 threaded comment" and "Status" not in where
    out = _parts(parsed.render([u.text.upper() for u in parsed.units], identity_links(parsed)))
    assert b"IS THIS PRICE RIGHT FOR THE SHOP?" in out["xl/threadedComments/threadedComment1.xml"]
    assert out["xl/pivotCache/pivotCacheDefinition1.xml"] == PIVOT_CACHE


@needs_model
def test_codes_ids_numbers_and_named_strings_never_reach_the_decoder():
    """A translator that records what it hands the decoder (the shipped model underneath)."""
    from worker.engine.forced import segment_links
    from worker.engine.translator import Translator
    from worker.formats import translate_parsed
    from worker.text.layout import split_document

    class Spy(Translator):
        def _decode(self, sentences, options, with_attention, progress):
            self.seen.extend(sentences)
            return super()._decode(sentences, options, with_attention, progress)

    spy = Spy(SHIPPED)
    spy.seen = []
    parsed = parse("xlsx", workbook(), ("en", "de"))
    results = spy.translate_layouts([split_document(u.text, "en") for u in parsed.units])
    out, record = translate_parsed(parsed, results, partial(segment_links, spy))
    decoded = "\n".join(spy.seen)
    assert "apple" in decoded and "dog" in decoded
    for code in CODES:
        assert code not in decoded, (code, spy.seen)
    book = openpyxl.load_workbook(io.BytesIO(out))
    assert [book["Sales"][ref].value for ref in ("E2", "E3", "A7", "B7", "C7", "D7", "C2", "C3")] == \
        ["INV-2024-001", "PRJ-ALPHA", "00123", "192.168.255.1", "user@example.com", "make install", "Yes", "No"]
    assert book["Sales"]["A2"].value != "A green apple" and "\n" in book["Sales"]["A6"].value
    assert kept_cells(out) == kept_cells(workbook())


# -- LibreOffice, the shipped model and bad input ------------------------------------------------------
ORDERS = ('Product,Price,Status,Order ID,Shipped\n"A green apple",3.5,Yes,INV-2024-001,2024-05-01\n'
          '"The big red ball",12,No,INV-2024-002,2024-06-01\n'
          '"The old man reads the newspaper in the garden.",7.25,Yes,PRJ-ALPHA,2024-07-15\n'
          'Total,=SUM(B2:B4),"=COUNTIF(C2:C4;""Yes"")",,\n')
PAGE = Path("/usr/share/doc/socat/socat-tun.html")  # a table of prose and IP addresses, prose around it


@pytest.fixture(scope="module")
def made(tmp_path_factory) -> dict[str, Path]:
    """Workbooks LibreOffice wrote: from CSV data, from an HTML page's tables (when installed), and
    the openpyxl workbook saved again; and the openpyxl workbook itself."""
    folder = tmp_path_factory.mktemp("books")
    (folder / "in").mkdir()
    (folder / "in" / "orders.csv").write_text(ORDERS, encoding="utf-8")
    (folder / "in" / "book.xlsx").write_bytes(workbook())
    (folder / "in" / "saved.xlsx").write_bytes(workbook())
    csv = soffice(folder / "profile", "xlsx:Calc Office Open XML", folder / "lo",
                  [folder / "in" / "orders.csv", folder / "in" / "saved.xlsx"], timeout=300)
    found = {"book": folder / "in" / "book.xlsx", "orders": csv[folder / "in" / "orders.csv"],
             "libreoffice": csv[folder / "in" / "saved.xlsx"]}
    if PAGE.exists():
        shutil.copy(PAGE, folder / "in" / "page.html")
        found["page"] = calc_from_html(folder, folder / "in" / "page.html")
    return found


def calc_from_html(folder: Path, page: Path) -> Path:
    """An HTML page read by Calc's HTML filter (its tables as cells) and written as XLSX by LibreOffice."""
    binary = shutil.which("soffice")
    done = subprocess.run([binary, f"-env:UserInstallation={(folder / 'profile').resolve().as_uri()}", "--headless",
                           "--norestore", "--infilter=HTML (StarCalc)", "--convert-to", "xlsx:Calc Office Open XML",
                           "--outdir", str(folder / "lo"), str(page)], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    return folder / "lo" / f"{page.stem}.xlsx"


def macro_enabled(data: bytes) -> bytes:
    """``data`` made a macro-enabled workbook: the main part's macro content type and a VBA project part."""
    archive = zipfile.ZipFile(io.BytesIO(data))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as target:
        for info in archive.infolist():
            body = archive.read(info)
            if info.filename == "[Content_Types].xml":
                body = body.replace(b"application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml",
                                    b"application/vnd.ms-excel.sheet.macroEnabled.main+xml")
                body = body.replace(b"</Types>", b'<Default Extension="bin" ContentType="application/vnd.ms-office.vbaProject"/></Types>')
            if info.filename == "xl/_rels/workbook.xml.rels":
                body = body.replace(b"</Relationships>", b'<Relationship Id="rId99" Type="http://schemas.microsoft.com/'
                                    b'office/2006/relationships/vbaProject" Target="vbaProject.bin"/></Relationships>')
            target.writestr(info, body)
        target.writestr("xl/vbaProject.bin", bytes(range(256)) * 8)
    return out.getvalue()


def numbers_only() -> bytes:
    wb = openpyxl.Workbook()
    wb.active.append([1, 2.5, "00123", "=A1+B1", datetime.date(2024, 1, 1)])
    out = io.BytesIO()
    wb.save(out)
    return out.getvalue()


BAD = {"damaged.xlsx": (lambda: workbook()[:2000], "not a valid XLSX file: it is not a ZIP package"),
       "locked.xlsx": (lambda: encrypted(workbook()), "the XLSX file is encrypted (password-protected)"),
       "legacy.xlsx": (lambda: b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + bytes(600), "legacy binary Office file"),
       "slides.xlsx": (deck, "not a valid XLSX file: it is a PowerPoint presentation (.pptx), not a XLSX file"),
       "numbers.xlsx": (numbers_only, "the XLSX file has no text to translate")}


@pytest.mark.parametrize("name", sorted(BAD))
def test_bad_files_are_format_errors_that_say_what_is_wrong(name):
    make, message = BAD[name]
    with pytest.raises(FormatError, match=re.escape(message)):
        parse("xlsx", make())


def test_a_macro_enabled_workbook_is_translated_and_its_vba_project_kept_byte_for_byte():
    source = macro_enabled(workbook())
    parsed = parse("xlsm", source)
    out = parsed.render([u.text.upper() for u in parsed.units], identity_links(parsed))
    a, b = _parts(source), _parts(out)
    assert b["xl/vbaProject.bin"] == a["xl/vbaProject.bin"] and b["[Content_Types].xml"] == a["[Content_Types].xml"]
    assert openpyxl.load_workbook(io.BytesIO(out), keep_vba=True)["Sales"]["A2"].value == "A GREEN APPLE"


@pytest.mark.slow
@needs_model
def test_nmt_translate_with_the_shipped_model_writes_workbooks_openpyxl_and_libreoffice_open(made, tmp_path):
    """One run: the workbooks are translated with every formula and number cell byte for byte, a
    macro-enabled one keeps its VBA project, each bad file is one line while the others go on."""
    names = sorted(made)
    (tmp_path / "bad").mkdir()
    for name, (make, _) in BAD.items():
        (tmp_path / "bad" / name).write_bytes(make())
    (tmp_path / "bad" / "macros.xlsm").write_bytes(macro_enabled(workbook()))
    done = run_nmt("translate", "--bundle", str(SHIPPED), "--device", "cpu", "--threads", "1",
                   *[str(made[n]) for n in names], *sorted(str(p) for p in (tmp_path / "bad").iterdir()),
                   "--out", str(tmp_path / "out"))
    assert done.returncode == 1, done.stderr[-2000:]
    for name, (_, message) in BAD.items():
        lines = [line for line in done.stderr.splitlines() if line.startswith("nmt translate: skipped") and f"{name}:" in line]
        assert len(lines) == 1 and message in lines[0], (name, done.stderr[-3000:])
    macro = (tmp_path / "out" / "macros.de.xlsm").read_bytes()
    assert _parts(macro)["xl/vbaProject.bin"] == bytes(range(256)) * 8
    outputs = {n: tmp_path / "out" / f"{made[n].stem}.de.xlsx" for n in names}
    for name in names:
        source, out = made[name].read_bytes(), outputs[name].read_bytes()
        assert kept_cells(out) == kept_cells(source), name
        a, b = _parts(source), _parts(out)
        assert [n for n in a if a[n] != b[n] and not re.match(r"xl/(worksheets/sheet|sharedStrings|comments)", n)] == []
        before, after = openpyxl.load_workbook(io.BytesIO(source)), openpyxl.load_workbook(io.BytesIO(out))
        assert after.sheetnames == before.sheetnames
        for old, new in zip(before.worksheets, after.worksheets):
            assert [(c.coordinate, c.hyperlink.target, c.hyperlink.location) for row in new.iter_rows() for c in row
                    if c.hyperlink] == [(c.coordinate, c.hyperlink.target, c.hyperlink.location)
                                        for row in old.iter_rows() for c in row if c.hyperlink]
            for row_old, row_new in zip(old.iter_rows(), new.iter_rows()):
                for c_old, c_new in zip(row_old, row_new):
                    if isinstance(c_old.value, str) and c_old.value.strip():
                        assert isinstance(c_new.value, str) and c_new.value.strip(), (name, c_old.coordinate)  # no text lost
                    else:
                        assert c_new.value == c_old.value, (name, c_old.coordinate)
        payload = json.loads((tmp_path / "out" / f"{made[name].stem}.de.json").read_text("utf-8"))
        assert payload["format"] == "xlsx"
    orders = openpyxl.load_workbook(outputs["orders"])
    assert [orders.active[ref].value for ref in ("B5", "C5", "D2", "D4")] == ["=SUM(B2:B4)", '=COUNTIF(C2:C4,"Yes")',
                                                                            "INV-2024-001", "PRJ-ALPHA"]
    texts = pdf_text(tmp_path / "profile", [outputs["orders"], outputs["book"]], tmp_path / "pdf")
    shown = " ".join(" ".join(texts.values()).split())
    for german in ("Apfel", "Ball", "Zeitung"):
        assert german in shown, shown[:2000]
    for english in ("A green apple", "The big red ball", "The old man reads the newspaper"):
        assert english not in shown
    assert "INV-2024-001" in shown and "22.75" in shown  # an ID, and the sum LibreOffice computed
    if "page" in outputs:
        page = openpyxl.load_workbook(outputs["page"])
        values = [c.value for row in page.active.iter_rows() for c in row if isinstance(c.value, str)]
        assert "192.168.255.1" in values and "255.255.255.0" in values
        assert not [v for v in values if v.startswith("Building TUN based virtual networks")]


# -- generated strings ---------------------------------------------------------------------------------
RUN_WORDS = ["The", "report", "runs", "Index", "a&b", "x<y", "end.", "Haus", "00123", "INV-7"]


def _x(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def generated_string(rng: random.Random) -> str:
    """The content of an ``si`` or ``is``: one ``t``, or runs (bold, italic, plain, empty, a word split
    between two runs, line breaks inside a run's text)."""
    if rng.random() < 0.3:
        return f'<t xml:space="preserve">{_x(" ".join(rng.choice(RUN_WORDS) for _ in range(rng.randint(1, 4))))}</t>'
    runs = []
    for _ in range(rng.randint(1, 5)):
        word = rng.choice(RUN_WORDS) + rng.choice([" ", "", "\n", " "])
        props = rng.choice(["", "<rPr><b/></rPr>", "<rPr><i/><sz val=\"11\"/></rPr>", '<rPr><rFont val="Arial"/></rPr>'])
        kind = rng.random()
        if kind < 0.15:
            runs.append(f"<r>{props}<t/></r>")
        elif kind < 0.35:
            cut = rng.randint(1, max(1, len(word) - 1))
            runs += [f'<r>{props}<t xml:space="preserve">{_x(word[:cut])}</t></r>',
                     f'<r><rPr><b/></rPr><t xml:space="preserve">{_x(word[cut:])}</t></r>']
        else:
            runs.append(f'<r>{props}<t xml:space="preserve">{_x(word)}</t></r>')
    return "".join(runs)


def generated_workbook(rng: random.Random) -> bytes:
    """A workbook whose shared strings and sheet are generated: shared and inline strings between
    numbers, dates, booleans and formulas."""
    shared = [generated_string(rng) for _ in range(rng.randint(1, 6))]
    rows = []
    for r in range(1, rng.randint(2, 6)):
        cells = []
        for col in "ABCDE":
            ref, kind = f"{col}{r}", rng.random()
            if kind < 0.3:
                cells.append(f'<c r="{ref}" t="s"><v>{rng.randrange(len(shared))}</v></c>')
            elif kind < 0.5:
                cells.append(f'<c r="{ref}" t="inlineStr"><is>{generated_string(rng)}</is></c>')
            elif kind < 0.65:
                cells.append(f'<c r="{ref}" s="0"><v>{rng.choice(["3.5", "45413", "-1E-3", "12"])}</v></c>')
            elif kind < 0.75:
                cells.append(f'<c r="{ref}" t="b"><v>1</v></c>')
            elif kind < 0.9:
                cells.append(f'<c r="{ref}"><f>SUM(A1:A{r}) &amp; "x"</f><v></v></c>')
            else:
                cells.append(f'<c r="{ref}" t="str"><f>UPPER("a")</f><v>A</v></c>')
        rows.append(f'<row r="{r}">{"".join(cells)}</row>')
    sheet = (f'<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\r\n<worksheet xmlns="{S}"><sheetData>'
             f'{"".join(rows)}</sheetData></worksheet>').encode()
    sst = (f'<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\r\n<sst xmlns="{S}" count="{len(shared)}" '
           f'uniqueCount="{len(shared)}">{"".join(f"<si>{s}</si>" for s in shared)}</sst>').encode()
    base = zipfile.ZipFile(io.BytesIO(_base()))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as target:
        for info in base.infolist():
            body = base.read(info)
            if info.filename == "xl/worksheets/sheet1.xml":
                body = sheet
            elif info.filename == "[Content_Types].xml":
                body = body.replace(b"</Types>", b'<Override PartName="/xl/sharedStrings.xml" ContentType="application/'
                                    b'vnd.openxmlformats-officedocument.spreadsheetml.sharedStrings+xml"/></Types>')
            elif info.filename == "xl/_rels/workbook.xml.rels":
                body = body.replace(b"</Relationships>", b'<Relationship Id="rId77" Type="http://schemas.openxmlformats.org/'
                                    b'officeDocument/2006/relationships/sharedStrings" Target="sharedStrings.xml"/></Relationships>')
            target.writestr(info, body)
        target.writestr("xl/sharedStrings.xml", sst)
    return out.getvalue()


_BASE: list[bytes] = []


def _base() -> bytes:
    if not _BASE:
        out = io.BytesIO()
        openpyxl.Workbook().save(out)
        _BASE.append(out.getvalue())
    return _BASE[0]


def _strings(data: bytes) -> list[str]:
    """Every string of the workbook (shared, then inline), as its text elements hold it."""
    found = []
    for name, body in sorted(_parts(data).items()):
        if name == "xl/sharedStrings.xml" or name.startswith("xl/worksheets/sheet"):
            root = etree.fromstring(body)
            for item in root.iter(f"{{{S}}}si", f"{{{S}}}is"):
                found.append("".join(t.text or "" for t in item.iter(f"{{{S}}}t")))
    return found


def check_generated(seed: int) -> None:
    rng = random.Random(seed)
    source = generated_workbook(rng)
    try:
        parsed = parse("xlsx", source)
    except FormatError as exc:
        assert "no text to translate" in str(exc)
        return
    out = _generated_translation(parsed, rng)
    assert kept_cells(out) == kept_cells(source), seed  # numbers, booleans, formulas: byte for byte
    openpyxl.load_workbook(io.BytesIO(out))
    before, after = _strings(source), _strings(out)
    assert len(after) == len(before)
    for old, new in zip(before, after):
        assert new.count("\n") == old.count("\n"), (seed, old, new)  # line breaks stay, one for one
        if not any(ch.isalpha() for ch in old) or re.fullmatch(r"[A-Z0-9]+(?:[-_/.#:][A-Z0-9]+)+", old.strip()):
            assert new == old
    identity = parsed.render([u.text for u in parsed.units], identity_links(parsed))
    for old, new in zip(before, _strings(identity)):
        assert "".join(new.split()) == "".join(old.split()), seed


@settings(max_examples=30, derandomize=True, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(min_value=0, max_value=2**32 - 1))
def test_generated_strings_keep_line_breaks_codes_and_every_cell_that_is_no_string(seed):
    check_generated(seed)


# -- the queue, nmt submit and the gateway ---------------------------------------------------------------
@pytest.mark.slow
@pytest.mark.integration
@needs_model
def test_queue_jobs_nmt_submit_and_the_gateways_document_endpoints_translate_a_workbook(fleet):
    def check(source: bytes, translated: bytes) -> None:
        assert kept_cells(translated) == kept_cells(source)
        book = openpyxl.load_workbook(io.BytesIO(translated))
        assert book.sheetnames == ["Sales", "Regions"] and book["Sales"]["E2"].value == "INV-2024-001"
        assert book["Sales"]["A2"].value != "A green apple" and book["Sales"]["A8"].hyperlink.target == "https://example.com/shop"

    through_the_fleet(fleet, "book.xlsx", workbook(), "xlsx", check)


# -- sheet names, on request -------------------------------------------------------------------------------
RECALC = ('<?xml version="1.0" encoding="UTF-8"?>\n<oor:items xmlns:oor="http://openoffice.org/2001/registry" '
          'xmlns:xs="http://www.w3.org/2001/XMLSchema" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">'
          '<item oor:path="/org.openoffice.Office.Calc/Formula/Load"><prop oor:name="OOXMLRecalcMode" oor:op="fuse">'
          '<value>0</value></prop></item></oor:items>\n')  # LibreOffice recomputes every formula of an XLSX it opens
SHEET_NAMES = {"Price list": "Preisliste: Q1/Q2",  # ':' and '/' cannot stand in a sheet name
               "Orders": "Bestellungen der Kunden aus allen Regionen",  # 42 characters: cut at a word
               "Summary": "preisliste- q1-q2"}  # the first sheet's name once fixed, but for case: made unique
VALID = ["Preisliste- Q1-Q2", "Bestellungen der Kunden aus", "preisliste- q1-q2 (2)"]


def cross_sheet_workbook() -> bytes:
    """Three sheets whose formulas name each other (a name with a space among them): cells, a
    defined name, a list validation, a conditional format and a chart."""
    from openpyxl.formatting.rule import FormulaRule
    from openpyxl.styles import PatternFill
    wb = openpyxl.Workbook()
    prices = wb.active
    prices.title = "Price list"
    prices.append(["Product", "Price"])
    prices.append(["A green apple", 3.5])
    prices.append(["The big red ball", 12])
    orders = wb.create_sheet("Orders")
    orders.append(["Product", "Count", "Amount"])
    orders.append(["A green apple", 4, "=B2*VLOOKUP(A2,'Price list'!$A$2:$B$3,2,0)"])
    orders.append(["The big red ball", 2, "=B3*'Price list'!B3"])
    orders["A4"], orders["C4"], orders["D2"] = "Total", "=SUM(C2:C3)", "=SUM(Rates)"
    validation = DataValidation(type="list", formula1="'Price list'!$A$2:$A$3")
    orders.add_data_validation(validation)
    validation.add("A2:A3")
    orders.conditional_formatting.add("C2:C3", FormulaRule(formula=["C2>'Price list'!$B$3"],
                                                           fill=PatternFill("solid", bgColor="FFC7CE")))
    summary = wb.create_sheet("Summary")
    summary["A1"], summary["B1"] = "Total of the orders", "=Orders!C4"
    summary["A2"], summary["B2"] = "Dearest product", "=MAX('Price list'!B2:B3)"
    # no 3-D range ('Price list':Orders!B2): LibreOffice 7.4 reads none with a quoted sheet name from XLSX, even its own
    summary["A3"], summary["B3"] = "Count and price", "=SUM('Price list'!B2:B3)*Orders!B2"
    wb.defined_names["Rates"] = DefinedName("Rates", attr_text="'Price list'!$B$2:$B$3")
    chart = BarChart()
    chart.add_data(Reference(prices, min_col=2, min_row=1, max_row=3), titles_from_data=True)
    summary.add_chart(chart, "D2")
    out = io.BytesIO()
    wb.save(out)
    return out.getvalue()


@pytest.fixture(scope="module")
def cross_sheet(tmp_path_factory) -> Path:
    """``cross_sheet_workbook`` as LibreOffice writes it."""
    folder = tmp_path_factory.mktemp("sheets")
    (folder / "in").mkdir()
    (folder / "in" / "book.xlsx").write_bytes(cross_sheet_workbook())
    return soffice(folder / "profile", "xlsx:Calc Office Open XML", folder / "lo", [folder / "in" / "book.xlsx"],
                   timeout=300)[folder / "in" / "book.xlsx"]


def _with_sheet_names(parsed, names: dict[str, str]) -> bytes:
    """``parsed`` rendered with its strings as they are and its sheet names translated by ``names``."""
    return parsed.render([names[u.text] if u.where.startswith("sheet name") else u.text for u in parsed.units],
                         identity_links(parsed))


def _formulas(data: bytes) -> dict[str, str]:
    """Every formula of a workbook by where it is, as openpyxl reads it (cells by sheet position)."""
    book = openpyxl.load_workbook(io.BytesIO(data))
    found = {f"defined {name}": book.defined_names[name].attr_text for name in book.defined_names}
    for k, sheet in enumerate(book.worksheets):
        found |= {f"{k}!{c.coordinate}": c.value for row in sheet.iter_rows() for c in row
                  if isinstance(c.value, str) and c.value.startswith("=")}
        found |= {f"{k} validation {n}": v.formula1 for n, v in enumerate(sheet.data_validations.dataValidation)}
        found |= {f"{k} format {n}": rule.formula[0] for n, (_, rules) in enumerate(sheet.conditional_formatting._cf_rules.items())
                  for rule in rules}
    return found


def test_sheet_names_are_units_only_on_request_and_otherwise_stay_byte_for_byte(cross_sheet):
    source = cross_sheet.read_bytes()
    plain = parse("xlsx", source)
    assert not [u for u in plain.units if u.where.startswith("sheet name")]
    out = plain.render([u.text.upper() for u in plain.units], identity_links(plain))
    a, b = _parts(source), _parts(out)
    assert b["xl/workbook.xml"] == a["xl/workbook.xml"] and b["xl/charts/chart1.xml"] == a["xl/charts/chart1.xml"]
    assert _formulas(out) == _formulas(source)
    asked = parse("xlsx", source, ("en", "de"), translate_sheet_names=True)
    assert [(u.where, u.text) for u in asked.units[len(plain.units):]] == \
        [("sheet name 'Price list'", "Price list"), ("sheet name 'Orders'", "Orders"), ("sheet name 'Summary'", "Summary")]
    same = _with_sheet_names(asked, {name: name for name in SHEET_NAMES})  # names translated as themselves
    assert _parts(same)["xl/workbook.xml"] == a["xl/workbook.xml"] and _formulas(same) == _formulas(source)


def test_translated_sheet_names_are_made_valid_and_every_reference_follows_them(cross_sheet):
    source = cross_sheet.read_bytes()
    parsed = parse("xlsx", source, ("en", "de"), translate_sheet_names=True)
    out = _with_sheet_names(parsed, SHEET_NAMES)
    assert openpyxl.load_workbook(io.BytesIO(out)).sheetnames == VALID
    notes = " ".join(note for notes in parsed.notes.values() for note in notes)
    assert "replaced by '-'" in notes and "cut to at most 31 characters" in notes and "made unique" in notes
    renamed = dict(zip(["Price list", "Orders", "Summary"], VALID))
    before, after = _formulas(source), _formulas(out)
    assert before.keys() == after.keys() and len(before) == 10
    quoted = {old: f"'{new}'" for old, new in renamed.items()}
    for where, formula in before.items():  # each reference names the new sheet, quoted as it must be
        expected = formula.replace("'Price list'", quoted["Price list"]).replace("Orders!", f"{quoted['Orders']}!")
        assert after[where] == expected, where
    assert after["2!B3"] == "=SUM('Preisliste- Q1-Q2'!B2:B3)*'Bestellungen der Kunden aus'!B2"
    chart = _parts(out)["xl/charts/chart1.xml"].decode()
    assert chart.count("&apos;Preisliste- Q1-Q2&apos;!") == 2 and "Price list" not in chart


@pytest.mark.slow
def test_libreoffice_recomputes_the_same_values_under_the_translated_sheet_names(cross_sheet, tmp_path):
    source = cross_sheet.read_bytes()
    parsed = parse("xlsx", source, ("en", "de"), translate_sheet_names=True)
    (tmp_path / "src.xlsx").write_bytes(source)
    (tmp_path / "out.xlsx").write_bytes(_with_sheet_names(parsed, SHEET_NAMES))
    (tmp_path / "profile" / "user").mkdir(parents=True)
    (tmp_path / "profile" / "user" / "registrymodifications.xcu").write_text(RECALC, encoding="utf-8")
    # one CSV file per sheet (the last field, -1), values as shown, UTF-8 (76)
    soffice(tmp_path / "profile", "csv:Text - txt - csv (StarCalc):44,34,76,1,,0,false,true,false,false,false,-1",
            tmp_path / "csv", [tmp_path / "src.xlsx", tmp_path / "out.xlsx"], timeout=300)
    for old, new in zip(["Price list", "Orders", "Summary"], VALID):
        was = (tmp_path / "csv" / f"src-{old}.csv").read_text(encoding="utf-8")
        now = (tmp_path / "csv" / f"out-{new}.csv").read_text(encoding="utf-8")
        assert now == was and not re.search(r"#(REF|NAME|VALUE)", now), (old, now)
    summary = (tmp_path / "csv" / f"out-{VALID[2]}.csv").read_text(encoding="utf-8")
    assert summary.splitlines() == ["Total of the orders,38", "Dearest product,12", "Count and price,62"]


@pytest.mark.parametrize("said, expected, note", [
    ("Umsatz", "Umsatz", None),
    ("Q1/Q2: [alle]?", "Q1-Q2- -alle--", "replaced by '-'"),
    ("'Zitat'", "Zitat", None),
    ("Eine sehr lange Übersicht über alle Bestellungen", "Eine sehr lange Übersicht über", "cut to at most 31"),
    ("Donaudampfschifffahrtsgesellschaftskapitän", "Donaudampfschifffahrtsgesellsch", "cut to at most 31"),
    ("History", "Orders", "no valid sheet name"),
    ("   ", "Orders", "no valid sheet name"),
    ("regions", "regions (2)", "made unique"),  # unique regardless of case
])
def test_sheet_name_rules(said, expected, note):
    from worker.formats.sheet_names import valid_names
    names, notes = valid_names(["Regions", "Orders"], {1: said})
    assert names == ["Regions", expected]
    assert (note is None and 1 not in notes) or (note is not None and note in notes[1][0])


@pytest.mark.parametrize("formula, expected", [
    ("SUM(Orders!B2:B3)", "SUM('Neue Bestellungen'!B2:B3)"),
    ("'Price list'!A1+orders!A1", "Preise!A1+'Neue Bestellungen'!A1"),  # sheet names ignore case
    ("SUM(Orders:Summary!B2)", "SUM('Neue Bestellungen:Summary'!B2)"),  # ECMA-376's quoted 3-D form
    ("SUM('Price list:Orders'!B2)", "SUM('Preise:Neue Bestellungen'!B2)"),
    ("SUM('Price list':Orders!B2)", "SUM(Preise:'Neue Bestellungen'!B2)"),  # LibreOffice's form stays its own
    ('INDIRECT("Orders!A1")&[1]Orders!A1', 'INDIRECT("Orders!A1")&[1]Orders!A1'),  # a literal, another workbook
    ("'It''s'!A1+Other!A1+#REF!", "'It''s'!A1+Other!A1+#REF!"),
    ("'Price list'!A1", "Preise!A1"),
    ("B1*2", "B1*2"),
])
def test_formula_references_are_rewritten_and_nothing_else(formula, expected):
    from worker.formats.sheet_names import rewrite_formula
    assert rewrite_formula(formula, {"orders": "Neue Bestellungen", "price list": "Preise"}) == expected


def test_the_option_travels_in_a_job_message():
    from queue_config.messages import JobOptions, JobRequest, MessageError
    request = JobRequest("j1", "en", "de", text="", format="xlsx", options=JobOptions(translate_sheet_names=True))
    assert JobRequest.from_json(request.to_json()).options.translate_sheet_names is True
    assert "translate_sheet_names" not in JobRequest("j2", "en", "de", text="x").to_json()["options"]
    with pytest.raises(MessageError, match="translate_sheet_names"):
        JobOptions.from_json({"translate_sheet_names": "yes"})


@pytest.mark.slow
@needs_model
def test_nmt_translate_translates_sheet_names_only_with_the_option(cross_sheet, tmp_path):
    with_names = run_nmt("translate", "--bundle", str(SHIPPED), "--device", "cpu", "--threads", "1",
                         str(cross_sheet), "--translate-sheet-names", "--out", str(tmp_path / "named"))
    without = run_nmt("translate", "--bundle", str(SHIPPED), "--device", "cpu", "--threads", "1",
                      str(cross_sheet), "--out", str(tmp_path / "kept"))
    assert with_names.returncode == 0 and without.returncode == 0, with_names.stderr[-2000:] + without.stderr[-2000:]
    source = cross_sheet.read_bytes()
    kept = (tmp_path / "kept" / "book.de.xlsx").read_bytes()
    assert _parts(kept)["xl/workbook.xml"] == _parts(source)["xl/workbook.xml"]
    named = (tmp_path / "named" / "book.de.xlsx").read_bytes()
    names = openpyxl.load_workbook(io.BytesIO(named)).sheetnames
    assert names != ["Price list", "Orders", "Summary"] and len(set(n.casefold() for n in names)) == 3
    record = json.loads((tmp_path / "named" / "book.de.json").read_text(encoding="utf-8"))
    assert [u["where"] for u in record["units"]][-3:] == ["sheet name 'Price list'", "sheet name 'Orders'",
                                                          "sheet name 'Summary'"]
    formulas = _formulas(named)
    assert formulas["1!C3"].endswith(f"!B3") and "Price list" not in " ".join(formulas.values())


@pytest.mark.slow
@pytest.mark.integration
@needs_model
def test_nmt_submit_and_a_job_option_translate_sheet_names_through_the_queue(fleet, cross_sheet, tmp_path):
    import subprocess
    import sys

    from client.client import TranslationClient

    from .conftest import REPO_ROOT
    broker, _url, _root = fleet
    source = cross_sheet.read_bytes()
    job = TranslationClient(broker_url=broker).submit(text=source, src="en", tgt="de", format="xlsx", name="named",
                                                       options={"translate_sheet_names": True})
    by_client = job.wait(timeout=180).data
    submitted = subprocess.run([sys.executable, "-m", "nmt", "submit", str(cross_sheet), "--src", "en", "--tgt", "de",
                                "--translate-sheet-names", "--wait", "--out", str(tmp_path / "submitted"),
                                "--broker-url", broker], capture_output=True, text=True, timeout=300, cwd=REPO_ROOT)
    assert submitted.returncode == 0, submitted.stderr[-2000:]
    by_submit = (tmp_path / "submitted" / "book.de.xlsx").read_bytes()
    assert sorted(_parts(by_submit).items()) == sorted(_parts(by_client).items())
    names = openpyxl.load_workbook(io.BytesIO(by_client)).sheetnames
    assert names != ["Price list", "Orders", "Summary"] and len({n.casefold() for n in names}) == 3
    assert "Price list" not in " ".join(str(v) for v in _formulas(by_client).values())
