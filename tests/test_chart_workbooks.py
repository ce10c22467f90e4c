"""A chart's translated labels and its embedded workbook agree: python-pptx writes a deck whose
chart keeps its data in an embedded workbook (``c:externalData``), and after translation every
cached series name and category label equals the cell its ``c:f`` names in that workbook (read
with openpyxl), so PowerPoint's and LibreOffice's "Edit data" keep the translation. Numbers stay
as they were, in the chart's caches and in the workbook, and LibreOffice still opens the deck."""
from __future__ import annotations

import io
import zipfile

import pytest

pptx = pytest.importorskip("pptx")
openpyxl = pytest.importorskip("openpyxl")
from lxml import etree  # noqa: E402
from pptx.chart.data import CategoryChartData  # noqa: E402
from pptx.enum.chart import XL_CHART_TYPE  # noqa: E402
from pptx.util import Inches  # noqa: E402

from worker.formats import parse  # noqa: E402
from worker.formats.xlsx import with_cell_texts  # noqa: E402

from .test_formats_libreoffice import soffice  # noqa: E402

C = "{http://schemas.openxmlformats.org/drawingml/2006/chart}"
GERMAN = {"North region": "Nordregion", "South region": "Südregion", "East region": "Ostregion",
          "Green apples": "Grüne Äpfel", "Red apples": "Rote Äpfel", "Sales of the year": "Umsatz des Jahres"}


def chart_deck() -> bytes:
    """One slide with a clustered column chart (two series, three categories) and a pie chart
    sharing one category name, each with its own embedded workbook."""
    prs = pptx.Presentation()
    slide = prs.slides.add_slide(prs.slide_layouts[5])
    slide.shapes.title.text = "Sales of the year"
    data = CategoryChartData()
    data.categories = ["North region", "South region", "East region"]
    data.add_series("Green apples", (1.5, 2.25, 3.0))
    data.add_series("Red apples", (4.0, 5.5, 6.125))
    chart = slide.shapes.add_chart(XL_CHART_TYPE.COLUMN_CLUSTERED, Inches(0.5), Inches(1.5), Inches(4.5), Inches(3),
                                   data).chart
    chart.has_title = True
    chart.chart_title.text_frame.text = "Sales of the year"
    pie = CategoryChartData()
    pie.categories = ["North region", "2024"]
    pie.add_series("Green apples", (7, 8))
    slide.shapes.add_chart(XL_CHART_TYPE.PIE, Inches(5), Inches(1.5), Inches(4), Inches(3), pie)
    out = io.BytesIO()
    prs.save(out)
    return out.getvalue()


def _parts(data: bytes) -> dict[str, bytes]:
    archive = zipfile.ZipFile(io.BytesIO(data))
    return {name: archive.read(name) for name in archive.namelist()}


def _workbook_of(parts: dict[str, bytes], chart: str) -> str:
    rels = etree.fromstring(parts[chart.replace("charts/", "charts/_rels/") + ".rels"])
    (target,) = [r.get("Target") for r in rels if r.get("Type", "").endswith("/package")]
    return "ppt/embeddings/" + target.rsplit("/", 1)[1]


def _cell(workbook, formula: str, index: int):
    sheet, cells = formula.split("!")
    first, _, last = cells.replace("$", "").partition(":")
    rows = list(workbook[sheet.strip("'")][f"{first}:{last or first}"])
    flat = [cell for row in rows for cell in row]
    return flat[index].value


def labels_and_numbers(data: bytes) -> list[tuple]:
    """For each chart: (workbook part, [(c:f, idx, cached value, the cell's value)] of its string and
    number references)."""
    parts = _parts(data)
    found = []
    for chart in sorted(name for name in parts if name.startswith("ppt/charts/chart")):
        target = _workbook_of(parts, chart)
        workbook = openpyxl.load_workbook(io.BytesIO(parts[target]))
        points = []
        for ref in etree.fromstring(parts[chart]).iter(f"{C}strRef", f"{C}numRef"):
            formula = ref.find(f"{C}f").text
            for point in ref.iter(f"{C}pt"):
                index = int(point.get("idx"))
                points.append((formula, index, point.find(f"{C}v").text, _cell(workbook, formula, index)))
        found.append((target, points))
    return found


def translated_deck() -> tuple[bytes, bytes]:
    source = chart_deck()
    parsed = parse("pptx", source)
    links = [[] for _ in parsed.units]
    return source, parsed.render([GERMAN.get(u.text, u.text) for u in parsed.units], links)


def test_every_cached_label_equals_the_cell_it_names_and_numbers_stay():
    source, out = translated_deck()
    before, after = labels_and_numbers(source), labels_and_numbers(out)
    assert len(after) == 2
    for (_, old_points), (target, new_points) in zip(before, after):
        assert len(old_points) == len(new_points)
        for (formula, index, old_cached, old_cell), (_, _, cached, cell) in zip(old_points, new_points):
            assert str(cell) == cached if isinstance(cell, str) else float(cell) == float(cached), (target, formula)
            if isinstance(old_cell, str):
                assert cached == GERMAN.get(old_cached, old_cached)
            else:  # a number: the same in the cache and in the workbook
                assert (cached, cell) == (old_cached, old_cell)
    cached = {p[2] for _, points in after for p in points}
    assert {"Nordregion", "Südregion", "Ostregion", "Grüne Äpfel", "Rote Äpfel", "2024"} <= cached
    assert not {"North region", "Green apples"} & cached


def test_only_the_workbook_parts_holding_the_labels_change():
    source, out = translated_deck()
    a, b = _parts(source), _parts(out)
    assert list(a) == list(b)
    embedded = sorted(name for name in a if name.startswith("ppt/embeddings/"))
    assert len(embedded) == 2 and all(a[name] != b[name] for name in embedded)
    for name in embedded:
        old, new = _parts(a[name]), _parts(b[name])
        assert list(old) == list(new)
        assert {part for part in old if old[part] != new[part]} == {"xl/sharedStrings.xml"}
    assert {name for name in a if a[name] != b[name]} == {"ppt/slides/slide1.xml", "ppt/charts/chart1.xml",
                                                           "ppt/charts/chart2.xml", *embedded}


def test_a_string_shared_with_a_cell_not_named_becomes_an_inline_string_and_other_cells_stay():
    made = openpyxl.Workbook()
    sheet = made.active
    sheet.title = "My data"
    sheet["A1"], sheet["A2"], sheet["A3"], sheet["B1"], sheet["B2"] = "Total", "Total", "Other", 1.5, "=B1*2"
    buffer = io.BytesIO()
    made.save(buffer)
    source = buffer.getvalue()
    out = with_cell_texts(source, {("My data", "A1"): ("Total", "Summe"), ("My data", "A3"): ("Not this", "Falsch"),
                                   ("My data", "B1"): ("1.5", "Zahl"), ("My data", "B2"): ("=B1*2", "Formel")})
    read = openpyxl.load_workbook(io.BytesIO(out))["My data"]
    assert [read[ref].value for ref in ("A1", "A2", "A3", "B1", "B2")] == ["Summe", "Total", "Other", 1.5, "=B1*2"]
    before, after = _parts(source), _parts(out)
    assert {part for part in before if before[part] != after[part]} == {"xl/worksheets/sheet1.xml"}
    assert b'<c r="A1" t="inlineStr"><is><t>Summe</t></is></c>' in after["xl/worksheets/sheet1.xml"]
    assert with_cell_texts(source, {("Elsewhere", "A1"): ("Total", "Summe")}) == source


@pytest.mark.slow
def test_libreoffice_opens_the_translated_deck(tmp_path):
    _, out = translated_deck()
    (tmp_path / "charts.pptx").write_bytes(out)
    converted = soffice(tmp_path / "profile", "odp", tmp_path / "lo", [tmp_path / "charts.pptx"], timeout=300)
    archive = zipfile.ZipFile(converted[tmp_path / "charts.pptx"])
    charts = [name for name in archive.namelist() if name.startswith("Object ") and name.endswith("/content.xml")]
    assert len(charts) == 2
    text = " ".join(" ".join(etree.fromstring(archive.read(name)).itertext()) for name in charts)
    assert "Nordregion" in text and "Grüne Äpfel" in text and "North region" not in text
