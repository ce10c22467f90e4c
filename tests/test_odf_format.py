"""OpenDocument text, spreadsheets and presentations read and written as the XML of their package
(``worker/formats/odf.py``): paragraphs, spans, links, notes, tables, frames, shapes and speaker
notes are units; fields, code and the values of number, date and formula cells are never written
into; the package keeps its mimetype entry first and stored and every other entry byte for byte.
Documents made by hand here, and real ones LibreOffice makes at test time from Debian's HTML
manuals, a CSV file and its own templates, go through ``nmt translate`` with the shipped
``models/en-de`` and open again in LibreOffice (printed to PDF, read by pdftotext); the same
files go through the queue, ``nmt submit`` and the gateway's DeepL and LibreTranslate endpoints."""
from __future__ import annotations

import io
import json
import re
import zipfile
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from lxml import etree

from worker.formats import FormatError, format_of, parse

from .conftest import REPO_ROOT, run_nmt

SHIPPED = REPO_ROOT / "models" / "en-de"
URI = {"office": "urn:oasis:names:tc:opendocument:xmlns:office:1.0",
       "text": "urn:oasis:names:tc:opendocument:xmlns:text:1.0",
       "table": "urn:oasis:names:tc:opendocument:xmlns:table:1.0",
       "draw": "urn:oasis:names:tc:opendocument:xmlns:drawing:1.0",
       "style": "urn:oasis:names:tc:opendocument:xmlns:style:1.0",
       "fo": "urn:oasis:names:tc:opendocument:xmlns:xsl-fo-compatible:1.0",
       "svg": "urn:oasis:names:tc:opendocument:xmlns:svg-compatible:1.0",
       "presentation": "urn:oasis:names:tc:opendocument:xmlns:presentation:1.0",
       "manifest": "urn:oasis:names:tc:opendocument:xmlns:manifest:1.0",
       "xlink": "http://www.w3.org/1999/xlink", "dc": "http://purl.org/dc/elements/1.1/",
       "meta": "urn:oasis:names:tc:opendocument:xmlns:meta:1.0"}
DECLARED = " ".join(f'xmlns:{prefix}="{uri}"' for prefix, uri in URI.items())
MIMETYPES = {"odt": "application/vnd.oasis.opendocument.text", "ods": "application/vnd.oasis.opendocument.spreadsheet",
             "odp": "application/vnd.oasis.opendocument.presentation"}
FONTS = ('<office:font-face-decls><style:font-face style:name="Liberation Mono" svg:font-family="\'Liberation Mono\'" '
         'style:font-pitch="fixed"/><style:font-face style:name="Fira Sans" svg:font-family="\'Fira Sans\'" '
         'style:font-pitch="variable"/></office:font-face-decls>')
COMMON_STYLES = ('<style:style style:name="Standard" style:family="paragraph"/>'
                 '<style:style style:name="Preformatted_20_Text" style:display-name="Preformatted Text" '
                 'style:family="paragraph" style:parent-style-name="Standard">'
                 '<style:text-properties style:font-name="Liberation Mono"/></style:style>'
                 '<style:style style:name="Source_20_Text" style:display-name="Source Text" style:family="text">'
                 '<style:text-properties style:font-name="Liberation Mono"/></style:style>')
AUTOMATIC = ('<style:style style:name="T1" style:family="text"><style:text-properties fo:font-weight="bold"/></style:style>'
             '<style:style style:name="T2" style:family="text"><style:text-properties style:font-name="Liberation Mono"/>'
             '</style:style><style:style style:name="T3" style:family="text"><style:text-properties '
             'style:font-name="Fira Sans"/></style:style>'
             '<style:style style:name="P1" style:family="paragraph" style:parent-style-name="Preformatted_20_Text"/>')


def words(text: str) -> list[tuple[int, int]]:
    return [m.span() for m in re.finditer(r"\S+", text)]


def odf(kind: str, body: str, master: str = "", title: str = "The small guide", manifest_extra: str = "",
        content: bytes | None = None) -> bytes:
    """An OpenDocument package as LibreOffice lays one out: the mimetype entry first and stored,
    then content, styles (with master pages), meta and the manifest, deflated."""
    parts = {
        "content.xml": content or (f'<?xml version="1.0" encoding="UTF-8"?><office:document-content {DECLARED} '
                                   f'office:version="1.3">{FONTS}<office:automatic-styles>{AUTOMATIC}'
                                   f'</office:automatic-styles><office:body>{body}</office:body>'
                                   '</office:document-content>').encode("utf-8"),
        "styles.xml": (f'<?xml version="1.0" encoding="UTF-8"?><office:document-styles {DECLARED} office:version="1.3">'
                       f'{FONTS}<office:styles>{COMMON_STYLES}</office:styles><office:master-styles>{master}'
                       '</office:master-styles></office:document-styles>').encode("utf-8"),
        "meta.xml": (f'<?xml version="1.0" encoding="UTF-8"?><office:document-meta {DECLARED} office:version="1.3">'
                     f'<office:meta><dc:title>{title}</dc:title><dc:language>en-US</dc:language></office:meta>'
                     '</office:document-meta>').encode("utf-8"),
        "Pictures/garden.png": b"\x89PNG\r\n\x1a\n not really an image",
        "META-INF/manifest.xml": (f'<?xml version="1.0" encoding="UTF-8"?><manifest:manifest '
                                  f'xmlns:manifest="{URI["manifest"]}" manifest:version="1.3">'
                                  f'<manifest:file-entry manifest:full-path="/" manifest:media-type="{MIMETYPES[kind]}"/>'
                                  + "".join(f'<manifest:file-entry manifest:full-path="{name}" '
                                            f'manifest:media-type="text/xml">{manifest_extra if name == "content.xml" else ""}'
                                            '</manifest:file-entry>' for name in ("content.xml", "styles.xml", "meta.xml"))
                                  + '<manifest:file-entry manifest:full-path="Pictures/garden.png" '
                                    'manifest:media-type="image/png"/></manifest:manifest>').encode("utf-8")}
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as archive:
        archive.writestr(zipfile.ZipInfo("mimetype"), MIMETYPES[kind])
        for name, data in parts.items():
            archive.writestr(name, data, compress_type=zipfile.ZIP_DEFLATED)
    return out.getvalue()


FIELDS = {  # fields and points as LibreOffice writes them: never written into
    "page": '<text:page-number text:select-page="current">1</text:page-number>',
    "count": "<text:page-count>3</text:page-count>",
    "date": '<text:date style:data-style-name="N37" text:date-value="2024-05-01">05/01/24</text:date>',
    "time": '<text:time text:time-value="10:00:00">10:00</text:time>',
    "ref": '<text:bookmark-ref text:reference-format="text" text:ref-name="start">The house and the garden'
           '</text:bookmark-ref>',
    "sequence": '<text:sequence text:ref-name="refTable0" text:name="Table" text:formula="ooow:Table+1" '
                'style:num-format="1">1</text:sequence>',
    "user": '<text:user-field-get text:name="Company">ACME</text:user-field-get>',
    "bookmark": '<text:bookmark text:name="start"/>',
}
REPORT = (
    '<office:text>'
    f'<text:h text:style-name="Heading_20_1" text:outline-level="1">{FIELDS["bookmark"]}The house and the garden</text:h>'
    '<text:p>The dog runs home and the <text:span text:style-name="T1">big</text:span> cat sees a red ball.</text:p>'
    '<text:p>Read <text:a xlink:type="simple" xlink:href="https://example.org/manual.html">the manual</text:a> before '
    'you install the program.<text:note text:id="ftn1" text:note-class="footnote"><text:note-citation>1'
    '</text:note-citation><text:note-body><text:p>The manual is online.</text:p></text:note-body></text:note></text:p>'
    '<text:p>Run <text:span text:style-name="Source_20_Text">pip install markdown</text:span> to install the '
    '<text:span text:style-name="T2">markdown</text:span> package in <text:span text:style-name="T3">Fira</text:span>.'
    '</text:p>'
    '<text:p text:style-name="P1">import markdown</text:p>'
    f'<text:p>Page {FIELDS["page"]} of {FIELDS["count"]}, printed on {FIELDS["date"]} at {FIELDS["time"]}.</text:p>'
    f'<text:p>See {FIELDS["ref"]} and table {FIELDS["sequence"]} for the {FIELDS["user"]} numbers.</text:p>'
    '<text:p>Name:<text:tab/>A small<text:s text:c="2"/>house.<text:line-break/>The second line is here.</text:p>'
    '<table:table table:name="Prices"><table:table-column table:number-columns-repeated="2"/><table:table-row>'
    '<table:table-cell office:value-type="string"><text:p>A green apple</text:p></table:table-cell>'
    '<table:table-cell office:value-type="float" office:value="2.5"><text:p>2.5 apples</text:p></table:table-cell>'
    '</table:table-row></table:table>'
    '<text:p><draw:frame draw:name="Box" text:anchor-type="as-char" svg:width="5cm"><draw:text-box>'
    '<text:p>The box holds a short note.</text:p></draw:text-box><svg:title>A box for notes</svg:title></draw:frame>'
    'The picture shows the garden.</text:p>'
    '<text:p><office:annotation><dc:creator>Ann</dc:creator><text:p>Check this sentence again.</text:p>'
    '</office:annotation>The children play in the park.</text:p>'
    '</office:text>')
REPORT_MASTER = ('<style:master-page style:name="Standard"><style:header><text:p>Company confidential report</text:p>'
                 f'</style:header><style:footer><text:p>Page {FIELDS["page"]}</text:p></style:footer></style:master-page>')
REPORT_UNITS = [
    "The house and the garden", "The dog runs home and the big cat sees a red ball.",
    "Read the manual before you install the program.", "The manual is online.", "Run to install the package in Fira.",
    "Page of , printed on at .", "See and table for the numbers.", "Name: A small house. The second line is here.",
    "A green apple", "The picture shows the garden.", "The box holds a short note.", "A box for notes",
    "The children play in the park.", "Company confidential report", "Page", "The small guide"]
SLIDES = (
    '<office:presentation>'
    '<presentation:footer-decl presentation:name="ftr1">Our yearly meeting</presentation:footer-decl>'
    '<draw:page draw:name="page1" draw:master-page-name="Default" presentation:use-footer-name="ftr1">'
    '<draw:frame presentation:class="title" svg:x="1cm" svg:y="1cm" svg:width="24cm" svg:height="3cm">'
    '<draw:text-box><text:p>The plan for next year</text:p></draw:text-box>'
    '</draw:frame>'
    '<draw:frame presentation:class="outline" svg:x="1cm" svg:y="5cm" svg:width="24cm" svg:height="8cm">'
    '<draw:text-box><text:list><text:list-item><text:p>We open a '
    '<text:span text:style-name="T1">new</text:span> shop.</text:p></text:list-item><text:list-item><text:p>Read '
    '<text:a xlink:href="https://example.org/plan">the plan</text:a> online.</text:p></text:list-item></text:list>'
    '</draw:text-box></draw:frame>'
    '<draw:custom-shape draw:name="Star" svg:x="2cm" svg:y="14cm" svg:width="10cm" svg:height="3cm">'
    '<text:p>Good news</text:p></draw:custom-shape>'
    '<draw:frame presentation:class="subtitle" presentation:placeholder="true"><draw:text-box/></draw:frame>'
    '<presentation:notes><draw:page-thumbnail draw:page-number="1" presentation:class="page"/>'
    '<draw:frame presentation:class="notes"><draw:text-box><text:p>Speak slowly and smile at the people.</text:p>'
    '</draw:text-box></draw:frame></presentation:notes>'
    '</draw:page></office:presentation>')
SLIDES_MASTER = ('<style:master-page style:name="Default"><draw:frame presentation:class="title" '
                 'presentation:placeholder="true"><draw:text-box/></draw:frame><draw:frame draw:name="Note" svg:x="1cm" '
                 'svg:y="18cm" svg:width="12cm" svg:height="1cm">'
                 '<draw:text-box><text:p>Company confidential</text:p></draw:text-box></draw:frame>'
                 f'<draw:frame presentation:class="page-number"><draw:text-box><text:p>{FIELDS["page"]}</text:p>'
                 '</draw:text-box></draw:frame></style:master-page>')
SLIDES_UNITS = ["Our yearly meeting", "The plan for next year", "We open a new shop.", "Read the plan online.",
                "Good news", "Speak slowly and smile at the people.", "Company confidential", "The small guide"]


def q(name: str) -> str:
    prefix, local = name.split(":")
    return f"{{{URI[prefix]}}}{local}"


def c14n(element) -> bytes:
    return etree.tostring(element, method="c14n", exclusive=True, with_tail=False)


def part(package: bytes, name: str):
    with zipfile.ZipFile(io.BytesIO(package)) as archive:
        return etree.fromstring(archive.read(name))


def identity(parsed, change=str.upper) -> bytes:
    """``parsed`` rendered with every unit's text changed (upper case), each word aligned to itself."""
    return parsed.render([change(u.text) for u in parsed.units], [list(zip(words(u.text), words(u.text)))
                                                                  for u in parsed.units])


def package_kept(source: bytes, out: bytes, written: set[str]) -> None:
    """``out``'s mimetype entry comes first and stored; every entry but ``written`` is byte for byte
    ``source``'s, in the same order."""
    with zipfile.ZipFile(io.BytesIO(source)) as a, zipfile.ZipFile(io.BytesIO(out)) as b:
        first = b.infolist()[0]
        assert first.filename == "mimetype" and first.compress_type == zipfile.ZIP_STORED
        assert out[30:38] == b"mimetype" and b.read("mimetype") == a.read("mimetype")
        assert [i.filename for i in b.infolist()] == [i.filename for i in a.infolist()]
        for info in a.infolist():
            if info.filename not in written:
                assert b.read(info.filename) == a.read(info.filename), info.filename
        assert b.testzip() is None


FIELD_TAGS = {q(f"text:{name}") for name in ("page-number", "page-count", "date", "time", "bookmark-ref", "sequence",
                                             "user-field-get", "bookmark", "sheet-name", "placeholder",
                                             "sender-email", "sender-firstname", "sender-lastname", "title")}


def fields(root) -> Counter:
    return Counter(c14n(e) for e in root.iter(*FIELD_TAGS))


def test_units_of_a_text_document_and_an_identity_render_keep_fields_code_links_and_the_package():
    assert [format_of(f"a.{kind}") for kind in ("odt", "ods", "odp")] == ["odt", "ods", "odp"]
    source = odf("odt", REPORT, REPORT_MASTER)
    parsed = parse("odt", source)
    assert [u.text for u in parsed.units] == REPORT_UNITS
    second = parsed.units[1]
    assert [second.text[t.start:t.end] for t in second.tags] == ["big"]
    out = identity(parsed)
    package_kept(source, out, {"content.xml", "styles.xml", "meta.xml"})
    before, after = part(source, "content.xml"), part(out, "content.xml")
    assert fields(after) == fields(before) and sum(fields(before).values()) == 8  # every field, as it was
    code = [e for e in before.iter(q("text:span")) if e.get(q("text:style-name")) in ("Source_20_Text", "T2")]
    assert {c14n(e) for e in code} <= {c14n(e) for e in after.iter(q("text:span"))} and len(code) == 2
    paragraphs = [" ".join("".join(p.itertext()).split()) for p in after.iter(q("text:p"), q("text:h"))]
    assert "import markdown" in paragraphs  # the code paragraph, copied
    assert "THE DOG RUNS HOME AND THE BIG CAT SEES A RED BALL." in paragraphs
    bold = next(e for e in after.iter(q("text:span")) if e.get(q("text:style-name")) == "T1")
    assert bold.text == "BIG"
    (link,) = after.iter(q("text:a"))
    assert link.get(q("xlink:href")) == "https://example.org/manual.html" and link.text == "THE MANUAL"
    assert [c.get(q("office:value")) for c in after.iter(q("table:table-cell"))] == [None, "2.5"]
    assert "2.5 apples" in paragraphs and "Check this sentence again." in paragraphs  # a number cell, a comment
    assert "".join(next(after.iter(q("text:note-body"))).itertext()) == "THE MANUAL IS ONLINE."
    assert next(after.iter(q("svg:title"))).text == "A BOX FOR NOTES"
    tabbed = next(p for p in after.iter(q("text:p")) if "NAME:" in "".join(p.itertext()))
    assert [etree.QName(e).localname for e in tabbed] == ["tab", "s", "line-break"]
    header = part(out, "styles.xml").find(".//style:header/text:p", URI)
    assert header.text == "COMPANY CONFIDENTIAL REPORT"
    assert part(out, "meta.xml").find(".//dc:title", URI).text == "THE SMALL GUIDE"
    assert identity(parsed) == out  # renders again, the same


ENTITY_DOCUMENT = (  # a DOCTYPE declaring an entity that a paragraph uses (odfpy's nasty.odt does so)
    f'<?xml version="1.0" encoding="UTF-8"?>\n<!DOCTYPE office:document-content [<!ENTITY product "Garden Planner">]>\n'
    f'<office:document-content {DECLARED} office:version="1.3">{FONTS}<office:automatic-styles>{AUTOMATIC}'
    '</office:automatic-styles><office:body><office:text>'
    '<text:p>The &product; draws the house and the garden.</text:p><text:p>The dog runs home.</text:p>'
    '</office:text></office:body></office:document-content>').encode("utf-8")


@pytest.mark.slow
def test_a_doctype_with_an_entity_is_kept_so_the_output_reopens_in_lxml_and_libreoffice(tmp_path):
    from .test_formats_libreoffice import pdf_text, soffice

    used = odf("odt", "", content=ENTITY_DOCUMENT)
    declared = odf("odt", "", content=ENTITY_DOCUMENT.replace(b"&product;", b"Garden Planner"))  # and not used
    outs = []
    for source in (used, declared):
        parsed = parse("odt", source)
        out = identity(parsed)  # an entity, never resolved, is kept whole as a point of its paragraph
        package_kept(source, out, {"content.xml", "meta.xml"})
        with zipfile.ZipFile(io.BytesIO(out)) as archive:
            content = archive.read("content.xml")
        assert content.startswith(ENTITY_DOCUMENT[:ENTITY_DOCUMENT.index(b"<office:document-content")])  # as it was
        paragraphs = ["".join(p.itertext()) for p in etree.fromstring(content).iter(q("text:p"))]  # lxml resolves it
        assert paragraphs[0] == ("THE Garden Planner DRAWS" if source is used else "THE GARDEN PLANNER DRAWS") + \
            " THE HOUSE AND THE GARDEN." and paragraphs[1] == "THE DOG RUNS HOME."
        assert [u.text for u in parse("odt", out).units] == [u.text.upper() for u in parsed.units]
        outs.append(out)
    names = ["used.odt", "used.de.odt", "declared.odt", "declared.de.odt"]
    files = [tmp_path / "in" / name for name in names]
    files[0].parent.mkdir()
    for path, data in zip(files, [used, outs[0], declared, outs[1]]):
        path.write_bytes(data)
    pdfs = soffice(tmp_path / "profile", "pdf", tmp_path / "pdf", files, timeout=300)
    # LibreOffice refuses a content.xml that uses an entity, the source as much as the translation;
    # a DOCTYPE whose entity no text uses it opens, and the translation with it
    assert sorted(path.name for path in pdfs) == ["declared.de.odt", "declared.odt"]
    assert "THE GARDEN PLANNER DRAWS THE HOUSE AND THE GARDEN. THE DOG RUNS HOME." in pdf_text(pdfs[files[3]])


def test_a_presentation_gives_slides_shapes_speaker_notes_footers_and_master_text():
    source = odf("odp", SLIDES, SLIDES_MASTER)
    parsed = parse("odp", source)
    assert [u.text for u in parsed.units] == SLIDES_UNITS
    out = identity(parsed)
    package_kept(source, out, {"content.xml", "styles.xml", "meta.xml"})
    after = part(out, "content.xml")
    notes = after.find(".//presentation:notes//text:p", URI)
    assert notes.text == "SPEAK SLOWLY AND SMILE AT THE PEOPLE."
    assert after.find(".//presentation:footer-decl", URI).text == "OUR YEARLY MEETING"
    assert [a.get(q("xlink:href")) for a in after.iter(q("text:a"))] == ["https://example.org/plan"]
    shapes = [e.tag for e in after.iter(q("draw:frame"), q("draw:custom-shape"), q("draw:text-box"))]
    assert len(shapes) == 9 and shapes == [e.tag for e in part(source, "content.xml").iter(
        q("draw:frame"), q("draw:custom-shape"), q("draw:text-box"))]
    assert fields(part(out, "styles.xml")) == fields(part(source, "styles.xml"))


CSV_CELLS = (
    '<office:spreadsheet><table:table table:name="Prices">'
    '<table:table-row><table:table-cell office:value-type="string"><text:p>A green apple</text:p></table:table-cell>'
    '<table:table-cell office:value-type="float" office:value="2.5"><text:p>2.5</text:p></table:table-cell>'
    '<table:table-cell office:value-type="date" office:date-value="2024-01-15"><text:p>Jan 15</text:p></table:table-cell>'
    '<table:table-cell table:formula="of:=CONCATENATE(&quot;Total &quot;;[.B1])" office:value-type="string" '
    'office:string-value="Total 2.5"><text:p>Total 2.5</text:p></table:table-cell></table:table-row>'
    '</table:table></office:spreadsheet>')


def test_spreadsheet_cells_are_text_only_when_they_hold_a_string_and_no_formula():
    source = odf("ods", CSV_CELLS)
    parsed = parse("ods", source)
    assert [u.text for u in parsed.units] == ["A green apple", "The small guide"]
    after = part(identity(parsed), "content.xml")
    cells = list(after.iter(q("table:table-cell")))
    assert [c14n(c) for c in cells[1:]] == [c14n(c) for c in list(part(source, "content.xml").iter(
        q("table:table-cell")))[1:]]
    assert cells[0].find("text:p", URI).text == "A GREEN APPLE"


def encrypted_odt() -> bytes:
    """A package as LibreOffice writes one saved with a password: the manifest describes how each
    part is encrypted, and the parts are ciphertext."""
    data = ('<manifest:encryption-data manifest:checksum-type="urn:oasis:names:tc:opendocument:xmlns:manifest:1.0#sha256-1k" '
            'manifest:checksum="c2VjcmV0"><manifest:algorithm manifest:algorithm-name="http://www.w3.org/2001/04/'
            'xmlenc#aes256-cbc" manifest:initialisation-vector="AAAA"/><manifest:key-derivation '
            'manifest:key-derivation-name="PBKDF2" manifest:key-size="32" manifest:iteration-count="100000" '
            'manifest:salt="AAAA"/></manifest:encryption-data>')
    return odf("odt", "", manifest_extra=data, content=bytes(range(256)) * 8)


BAD = [
    ("cut.odt", "odt", lambda: b"PK\x03\x04 cut short", r"^not a valid ODT file: it is not a ZIP package"),
    ("secret.odt", "odt", encrypted_odt, r"^cannot read this ODT file: it is encrypted \(saved with a password\)"),
    ("numbers.ods", "ods", lambda: odf("ods", CSV_CELLS.replace("A green apple", "12 / 7"), title=""),
     r"^this ODS file has no text to translate"),
    ("sheet.odt", "odt", lambda: odf("ods", CSV_CELLS), r"^not a valid ODT file: its mimetype says an ODS file"),
    ("parts.odp", "odp", lambda: odf("odp", SLIDES, content=b"<office:document-content"),
     r"^not a valid ODP file: content.xml is not well-formed XML"),
]


@pytest.mark.parametrize("name, kind, make, message", BAD, ids=[b[0] for b in BAD])
def test_a_bad_package_is_one_clear_line(name, kind, make, message):
    with pytest.raises(FormatError, match=message) as caught:
        parse(kind, make())
    assert "\n" not in str(caught.value) and len(str(caught.value)) < 200


# -- Generated documents ------------------------------------------------------------------------
WORDS = ["house", "the", "garden", "pro", "gram", "ming", "Index", "x86", "(a)", "end."]
GERMAN = ["Haus", "der", "Garten", "Programm", "„Wort“", "Ende.", "x86", "und"]
POINTS = ["<text:s/>", "<text:tab/>", "<text:line-break/>", '<text:s text:c="3"/>']
NOTE = ('<text:note text:id="n{n}" text:note-class="footnote"><text:note-citation>{n}</text:note-citation>'
        "<text:note-body><text:p>The note says {n}.</text:p></text:note-body></text:note>")
leaf = st.one_of(st.tuples(st.just("text"), st.sampled_from(WORDS), st.sampled_from(["", " ", " "])),
                 st.tuples(st.just("field"), st.sampled_from(sorted(FIELDS))),
                 st.tuples(st.just("point"), st.sampled_from(POINTS)), st.just(("note",)))
node = st.recursive(leaf, lambda inner: st.tuples(st.sampled_from(["span", "link"]), st.sampled_from(["T1", "T3", "x"]),
                                                   st.lists(inner, max_size=4)), max_leaves=10)


def inline_xml(nodes, counter: list[int], in_link: bool = False) -> str:
    out = []
    for item in nodes:
        if item[0] == "text":
            out.append(item[1] + item[2])
        elif item[0] == "field":
            out.append(FIELDS[item[1]])
        elif item[0] == "point":
            out.append(item[1])
        elif item[0] == "note":
            counter[0] += 1
            out.append(NOTE.format(n=counter[0]))
        elif item[0] == "link" and not in_link:  # links never nest
            out.append(f'<text:a xlink:type="simple" xlink:href="https://example.org/{item[1]}">'
                       f'{inline_xml(item[2], counter, True)}</text:a>')
        else:
            out.append(f'<text:span text:style-name="{item[1]}">{inline_xml(item[2], counter, in_link)}</text:span>')
    return "".join(out)


def own_text(element) -> str:
    """The text a paragraph shows itself: its spans' and links' text, whitespace points as spaces;
    fields and notes left out."""
    out = [element.text or ""]
    for child in element:
        if child.tag in (q("text:span"), q("text:a")):
            out.append(own_text(child))
        elif child.tag in (q("text:s"), q("text:tab"), q("text:line-break")):
            out.append(" ")
        out.append(child.tail or "")
    return "".join(out)


def keyed(root) -> dict[tuple, tuple[int, object]]:
    """Every paragraph and heading of ``root`` by a key that stays when the points of a paragraph
    move (a note or a frame is a point, placed by the alignment): a paragraph in a note or a frame
    anchored in a paragraph is known by the note's id or the frame's name and its place in it,
    the others by their place among themselves; with its number in document order."""
    out, top = {}, 0
    for number, p in enumerate(root.iter(q("text:p"), q("text:h")), 1):
        holder = next((a for a in p.iterancestors() if a.tag == q("text:note") or (
            a.tag.startswith(f"{{{URI['draw']}}}") and a.getparent() is not None and
            a.getparent().tag in (q("text:p"), q("text:h"), q("text:span"), q("text:a")))), None)
        if holder is None:
            out[("top", top)] = (number, p)
            top += 1
            continue
        name = holder.get(q("text:id")) or holder.get(q("draw:name"))
        inside = list(holder.iter(q("text:p"), q("text:h")))
        out[(name, next(k for k, x in enumerate(inside) if x is p))] = (number, p)
    return out


def marks(p) -> tuple[Counter, Counter, Counter]:
    """A paragraph's fields and whitespace points, its links' targets and its spans' styles (the
    notes' own paragraphs left out)."""
    kept = Counter(c14n(e) for e in p.iter() if e.tag in FIELD_TAGS or e.tag in (q("text:s"), q("text:tab"),
                                                                                 q("text:line-break"),
                                                                                 q("text:note-citation")))
    def own(element) -> bool:  # not in a note of this paragraph
        above = element.getparent()
        while above is not None and above is not p:
            if above.tag == q("text:note-body"):
                return False
            above = above.getparent()
        return True

    links = Counter(a.get(q("xlink:href")) for a in p.iter(q("text:a")) if own(a))
    spans = Counter(s.get(q("text:style-name")) for s in p.iter(q("text:span")) if own(s))
    return kept, links, spans


@settings(max_examples=150, derandomize=True, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(paragraphs=st.lists(st.lists(node, min_size=1, max_size=5), min_size=1, max_size=4), data=st.data())
def test_generated_paragraphs_keep_every_field_link_and_span_and_hold_the_translation(paragraphs, data):
    counter = [0]
    body = "".join(f"<text:p>{inline_xml(p, counter)}</text:p>" for p in paragraphs) + "<text:p>The end.</text:p>"
    source = odf("odt", f"<office:text>{body}</office:text>", title="")
    parsed = parse("odt", source)
    translations, links = [], []
    for unit in parsed.units:
        n = len(words(unit.text))
        translation = " ".join(data.draw(st.lists(st.sampled_from(GERMAN), min_size=1, max_size=2 * n + 1)))
        translations.append(translation)
        s, t = words(unit.text), words(translation)
        links.append(data.draw(st.lists(st.tuples(st.sampled_from(s), st.sampled_from(t)), max_size=2 * n)))
    out = parsed.render(translations, links)
    package_kept(source, out, {"content.xml"})
    before, after = keyed(part(source, "content.xml")), keyed(part(out, "content.xml"))
    assert after.keys() == before.keys()
    by_where = {u.where: (k, u) for k, u in enumerate(parsed.units)}
    for key, (number, old) in before.items():
        new = after[key][1]
        assert marks(new) == marks(old), number  # every field, point, link and span, once
        found = by_where.get(f"content paragraph {number}")
        if found is None:  # no words: its own text untouched (a note in it may be translated)
            assert own_text(new) == own_text(old)
            continue
        k, unit = found
        shown, wanted = own_text(new).split(), translations[k].split()
        if any("kept its source text" in note for note in parsed.notes.get(k, [])):
            assert re.search(".*".join(map(re.escape, "".join(wanted))), "".join(shown))  # and a link's source text
        else:  # every character, in order; a point glued inside a source word takes the space it lands on
            assert "".join(shown) == "".join(wanted), (unit.text, translations[k], shown)


# -- Real files, the shipped model and LibreOffice -------------------------------------------
MANUALS = [Path("/usr/share/doc/libffi8/html/The-Basics.html"), Path("/usr/share/doc/libffi8/html/Closure-Example.html")]
TEMPLATES = [Path("/usr/lib/libreoffice/share/template/common/wizard/letter/bus-elegant_l.ott"),
             Path("/usr/lib/libreoffice/share/template/en-US/presnt/debian-presentation.otp")]
CSV = ("Item,Price,Date,Note\nA green apple,2.5,2024-01-15,The apple is fresh and sweet.\n"
       "A red ball,10,2024-02-01,Children play with it in the park.\nTotal,=B2+B3,,=\"Sum: \"&B4\n")


@pytest.fixture(scope="module")
def real(tmp_path_factory):
    """Files LibreOffice makes here, hand-made ones and broken ones, through one ``nmt translate``
    run with the shipped model: "outputs" {file name: (input, where its translation goes)}, "made"
    (the names of LibreOffice's files), "run" (the finished ``nmt translate``) and "folder"."""
    from .test_formats_libreoffice import soffice

    if not (SHIPPED / "manifest.json").exists():
        pytest.skip("models/en-de not present")
    folder = tmp_path_factory.mktemp("odf")
    inputs = []
    for path in [p for p in MANUALS + TEMPLATES if p.exists()]:
        inputs.append(folder / path.name)
        inputs[-1].write_bytes(path.read_bytes())
    (folder / "prices.csv").write_text(CSV, encoding="utf-8")
    made = {}
    for target, files in (("odt", [p for p in inputs if p.suffix in (".html", ".ott")]),
                          ("ods", [folder / "prices.csv"]), ("odp", [p for p in inputs if p.suffix == ".otp"])):
        try:  # Calc and Impress are packages of their own: without them, no ODS or ODP is made
            made |= soffice(folder / "profile", target, folder / "in", files, timeout=300) if files else {}
        except (AssertionError, pytest.skip.Exception):  # no LibreOffice: the broken files still run
            continue
    sources = sorted(made.values())
    for name, kind, make, _ in BAD:
        (folder / "in" / name).write_bytes(make())
    (folder / "in" / "report.odt").write_bytes(odf("odt", REPORT, REPORT_MASTER))
    (folder / "in" / "slides.odp").write_bytes(odf("odp", SLIDES, SLIDES_MASTER))
    done = run_nmt("translate", "--bundle", str(SHIPPED), "--device", "cpu", "--threads", "1", str(folder / "in"),
                   "--out", str(folder / "out"))
    outputs = {p.name: (p, folder / "out" / f"{p.stem}.de{p.suffix}") for p in (folder / "in").iterdir()
               if p.suffix in (".odt", ".ods", ".odp")}
    return {"outputs": outputs, "made": [p.name for p in sources], "run": done, "folder": folder}


def test_broken_files_are_skipped_with_one_line_each_and_the_others_are_translated(real):
    done = real["run"]
    assert done.returncode == 1, done.stderr[-3000:]
    for name, _kind, _make, message in BAD:
        line = next(line for line in done.stderr.splitlines() if f"skipped {real['folder'] / 'in' / name}:" in line)
        assert re.search(message.lstrip("^"), line), line
        assert not real["outputs"][name][1].exists()
    written = [name for name, (_, out) in real["outputs"].items() if out.exists()]
    assert sorted(written) == sorted(real["made"] + ["report.odt", "slides.odp"])


def units(record: Path) -> list[dict]:
    return json.loads(record.read_text(encoding="utf-8"))["units"]


def cells(root) -> list[tuple]:
    """Each cell's type, value, formula and date."""
    return [(c.get(q("office:value-type")), c.get(q("office:value")), c.get(q("table:formula")),
             c.get(q("office:date-value"))) for c in root.iter(q("table:table-cell"))]


def shapes(root) -> Counter:
    return Counter(e.tag for e in root.iter() if e.tag.startswith(f"{{{URI['draw']}}}"))


@pytest.mark.slow
def test_real_files_reopen_in_libreoffice_in_german_with_links_fields_cells_and_shapes_kept(real, tmp_path):
    from .test_formats_libreoffice import pdf_text, soffice

    pairs = [real["outputs"][name] for name in real["made"] + ["report.odt", "slides.odp"]]
    kinds = {Path(name).suffix for name in real["made"]}
    if kinds != {".odt", ".ods", ".odp"}:
        pytest.skip(f"LibreOffice made only {sorted(kinds)} here: Calc or Impress is not installed "
                    "(libreoffice-calc-nogui, libreoffice-impress-nogui)")
    pdfs = soffice(tmp_path / "profile", "pdf", tmp_path / "pdf", [out for _, out in pairs], timeout=300)
    assert len(pdfs) == len(pairs)  # LibreOffice opens every translation
    prose = 0
    for source, out in pairs:
        package_kept(source.read_bytes(), out.read_bytes(), {"content.xml", "styles.xml", "meta.xml"})
        before, after = part(source.read_bytes(), "content.xml"), part(out.read_bytes(), "content.xml")
        old_p, new_p = keyed(before), keyed(after)
        assert new_p.keys() == old_p.keys(), source.name
        for key, (_, old) in old_p.items():
            new = new_p[key][1]
            assert marks(new)[:2] == marks(old)[:2], (source.name, "".join(old.itertext()))
            if any(ch.isalpha() for ch in own_text(old)):  # no text lost: a paragraph with words keeps some
                assert any(ch.isalpha() for ch in "".join(new.itertext())), (source.name, own_text(old))
        code = [c14n(e) for e in before.iter(q("text:span")) if e.get(q("text:style-name")) == "Source_20_Text"]
        assert Counter(code) - Counter(c14n(e) for e in after.iter(q("text:span"))) == Counter(), source.name
        assert cells(after) == cells(before)
        for cell_old, cell_new in zip(before.iter(q("table:table-cell")), after.iter(q("table:table-cell"))):
            if cell_old.get(q("office:value-type")) not in (None, "string") or cell_old.get(q("table:formula")):
                assert c14n(cell_new) == c14n(cell_old)  # numbers, dates and formulas, byte for byte
        assert shapes(after) == shapes(before)
        record = units(out.with_suffix(".json"))
        assert record and all(u["translation"].strip() for u in record), source.name
        text = pdf_text(pdfs[out])
        changed = [" ".join(own_text(new_p[key][1]).split()) for key, (_, old) in old_p.items()
                   if own_text(old) == "".join(old.itertext()) and len(own_text(old).split()) >= 4
                   and own_text(new_p[key][1]).split() != own_text(old).split()]
        found = [shown for shown in changed if shown in text]  # a paragraph a line wraps still reads in order
        assert len(found) >= 0.6 * len(changed), (source.name, len(found), changed, text[:2000])
        prose += len(changed)
        if changed:  # a letter template holds fields and placeholders, and no sentence
            assert re.search(r"(?i)\b(der|die|das|des|den|dem|und|ist|sie|mit|von|ein|einen)\b", text), (source.name, text[:300])
    assert prose >= 40
    sheet = part(real["outputs"]["prices.ods"][1].read_bytes(), "content.xml")
    strings = ["".join(c.itertext()) for c in sheet.iter(q("table:table-cell")) if c.get(q("office:value-type")) == "string"
               and c.get(q("table:formula")) is None]
    assert "The apple is fresh and sweet." not in strings and len(strings) == 9


# -- The queue, nmt submit and the gateway ------------------------------------------------------
KEY = "key-odf-5e1d"


@pytest.fixture(scope="module")
def fleet(tmp_path_factory):
    """Redis, one worker serving the shipped en-de model (jobs by path under ``in``, files written
    to ``out``) and a gateway; yields (broker URL, folder, gateway URL)."""
    from .queue_harness import CeleryWorker, RedisServer

    if not (SHIPPED / "manifest.json").exists():
        pytest.skip("models/en-de not present")
    pytest.importorskip("deepl")
    from .test_api_gateway import Gateway

    root = tmp_path_factory.mktemp("odf-fleet")
    (root / "in").mkdir()
    server = RedisServer(root / "redis").start()
    worker = CeleryWorker("odf-w1", {"NMT_BROKER_URL": server.url, "NMT_BUNDLES": str(SHIPPED),
                                     "NMT_OUTPUT_DIR": str(root / "out"), "NMT_INPUT_ROOT": str(root / "in")}, root)
    gateway = Gateway("odf-gateway", {"NMT_BROKER_URL": server.url, "NMT_API_KEYS": KEY}, root)
    try:
        worker.start()
        gateway.start()
        yield server.url, root, gateway.url
    finally:
        gateway.stop()
        worker.stop()
        server.stop()


@pytest.mark.slow
@pytest.mark.integration
def test_odf_files_go_through_the_queue_nmt_submit_and_the_deepl_and_libretranslate_endpoints(fleet, tmp_path):
    import deepl
    import requests

    from client.client import TranslationClient

    broker, root, url = fleet
    report, sheet, slides = odf("odt", REPORT, REPORT_MASTER), odf("ods", CSV_CELLS), odf("odp", SLIDES, SLIDES_MASTER)
    (root / "in" / "sheet.ods").write_bytes(sheet)
    client = TranslationClient(broker_url=broker)
    sent = client.submit(text=report, src="en", tgt="de", format="odt", name="report")
    by_path = client.submit(path="sheet.ods", src="en", tgt="de")
    results = {}
    for job, name, kind, source in ((sent, "report", "odt", report), (by_path, "sheet", "ods", sheet)):
        result = results[kind] = job.wait(timeout=180)
        assert result.raw["format"] == kind and (root / "out" / job.id / f"{name}.de.{kind}").read_bytes() == result.data
        package_kept(source, result.data, {"content.xml", "styles.xml", "meta.xml"})
        assert len(parse(kind, result.data).units) == len(parse(kind, source).units)  # reopens, every unit there
        assert fields(part(result.data, "content.xml")) == fields(part(source, "content.xml"))

    (tmp_path / "slides.data").write_bytes(slides)  # a presentation by --format alone
    done = run_nmt("submit", str(tmp_path / "slides.data"), "--format", "odp", "--src", "en", "--tgt", "de", "--wait",
                   "--out", str(tmp_path / "submitted"), "--broker-url", broker)
    assert done.returncode == 0, done.stderr[-2000:]
    notes = part((tmp_path / "submitted" / "slides.de.odp").read_bytes(), "content.xml")
    shown = "".join(notes.find(".//presentation:notes//text:p", URI).itertext())
    assert shown.strip() and shown != "Speak slowly and smile at the people."

    (tmp_path / "report.odt").write_bytes(report)
    deepl.Translator(KEY, server_url=url).translate_document_from_filepath(
        tmp_path / "report.odt", tmp_path / "report.de.odt", source_lang="EN", target_lang="DE")
    assert (tmp_path / "report.de.odt").read_bytes() == results["odt"].data  # the same model, the same file

    answer = requests.post(url + "/translate_file", data={"source": "en", "target": "de", "api_key": KEY},
                           files={"file": ("sheet.ods", sheet)}, timeout=180)
    assert answer.status_code == 200, answer.text
    download = requests.get(answer.json()["translatedFileUrl"], params={"api_key": KEY}, timeout=30)
    assert 'filename="sheet.de.ods"' in download.headers["content-disposition"]
    assert download.headers["content-type"] == "application/vnd.oasis.opendocument.spreadsheet"
    assert download.content == results["ods"].data

    refused = requests.post(url + "/translate_file", data={"source": "en", "target": "de", "api_key": KEY},
                            files={"file": ("secret.odt", encrypted_odt())}, timeout=60)
    assert refused.status_code == 400
    assert refused.json()["error"].startswith("Invalid request: the document cannot be read: secret: cannot read "
                                              "this ODT file: it is encrypted"), refused.json()


# -- language attributes -----------------------------------------------------------------------------------
DEFAULT_LANGUAGE = ('<style:default-style style:family="paragraph"><style:text-properties fo:language="en" '
                    'fo:country="US" style:language-asian="zh" style:country-asian="CN" style:language-complex="hi" '
                    'style:country-complex="IN"/></style:default-style>')
FRENCH = ('<style:style style:name="Tfr" style:family="text"><style:text-properties fo:language="fr" fo:country="FR"/>'
          '</style:style><style:style style:name="Ten" style:family="text"><style:text-properties fo:language="en" '
          'fo:country="GB"/></style:style>')


def _with_languages(data: bytes) -> bytes:
    """``data`` (an ``odf`` package) whose default style says English (US) with Chinese and Hindi for
    Asian and complex scripts, and whose text styles mark French and British English."""
    source = zipfile.ZipFile(io.BytesIO(data))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as archive:
        for info in source.infolist():
            body = source.read(info)
            if info.filename == "styles.xml":
                body = body.replace(b"<office:styles>", b"<office:styles>" + DEFAULT_LANGUAGE.encode())
            elif info.filename == "content.xml":
                body = body.replace(b"<office:automatic-styles>", b"<office:automatic-styles>" + FRENCH.encode())
            archive.writestr(info, body)
    return out.getvalue()


def _languages(root) -> list[dict]:
    """The language attributes of every text-properties element of a part, in order."""
    return [{etree.QName(k).localname: v for k, v in e.attrib.items() if "language" in k or "country" in k}
            for e in root.iter(q("style:text-properties"))]


@pytest.mark.parametrize("target, language, country", [("de", "de", "DE"), ("de-AT", "de", "AT"), ("fr", "fr", "FR"),
                                                       ("eo", "eo", "none")])
def test_the_output_says_the_target_language_where_the_source_said_the_source_language(target, language, country):
    source = _with_languages(odf("odt", REPORT, REPORT_MASTER))
    out = identity(parse("odt", source, ("en", target)))
    styles = _languages(part(out, "styles.xml"))
    default = next(found for found in styles if "language-asian" in found)
    assert default == {"language": language, "country": country, "language-asian": "zh", "country-asian": "CN",
                       "language-complex": "hi", "country-complex": "IN"}
    content = {found.get("language"): found for found in _languages(part(out, "content.xml")) if found}
    if language != "fr":  # a third language stays as it is; British English is the source language too
        assert content == {"fr": {"language": "fr", "country": "FR"},
                           language: {"language": language, "country": country}}
    meta = part(out, "meta.xml")
    assert [e.text for e in meta.iter(q("dc:language"))] == [language if country == "none" else f"{language}-{country}"]


def test_without_languages_or_between_variants_of_one_language_the_attributes_stay():
    source = _with_languages(odf("odt", REPORT, REPORT_MASTER))
    for languages in (None, ("en", "en-GB")):
        out = identity(parse("odt", source, languages) if languages else parse("odt", source))
        assert [e.text for e in part(out, "meta.xml").iter(q("dc:language"))] == ["en-US"]
        assert _languages(part(out, "styles.xml")) == _languages(part(source, "styles.xml"))


@pytest.mark.slow
def test_libreoffice_made_files_come_out_in_german_and_libreoffice_reads_the_language(real, tmp_path):
    from .test_formats_libreoffice import soffice

    for name in real["made"]:
        source, out = real["outputs"][name]
        for name_of_part in ("styles.xml", "content.xml"):
            before = _languages(part(source.read_bytes(), name_of_part))
            after = _languages(part(out.read_bytes(), name_of_part))
            assert len(before) == len(after)
            for old, new in zip(before, after):
                asian = {k: v for k, v in old.items() if k.endswith(("asian", "complex"))}
                assert {k: v for k, v in new.items() if k.endswith(("asian", "complex"))} == asian, (name, old, new)
                if old.get("language") == "en":
                    assert (new["language"], new.get("country")) == ("de", "DE"), (name, old, new)
                else:
                    assert new.get("language") == old.get("language"), (name, old, new)
        assert any(found.get("language") == "de" for found in _languages(part(out.read_bytes(), "styles.xml"))), name
    odt = next(real["outputs"][name][1] for name in real["made"] if name.endswith(".odt"))
    flat = soffice(tmp_path / "profile", "fodt", tmp_path / "flat", [odt], timeout=300)[odt]
    root = etree.parse(str(flat)).getroot()  # what LibreOffice read, written again: the default style says German
    default = next(e for e in root.iter(q("style:default-style")) if e.get(q("style:family")) == "paragraph")
    properties = default.find(q("style:text-properties"))
    assert (properties.get(q("fo:language")), properties.get(q("fo:country"))) == ("de", "DE")
