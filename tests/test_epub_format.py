"""E-books (``worker/formats/epub.py``): every XHTML content document through the HTML reader, the
package document's title and description, the navigation document and the EPUB 2 NCX, whose
labels are translated while every link keeps its target. A book made by hand and real ones pandoc
makes at test time from Markdown files under /usr/share/doc (EPUB 3 and EPUB 2) go through ``nmt
translate`` with the shipped ``models/en-de``; the translations pass ``epubcheck``, every document
stays well-formed XML, code and links are kept, and the queue, ``nmt submit`` and the gateway
carry books as they carry DOCX files."""
from __future__ import annotations

import io
import json
import posixpath
import re
import shutil
import subprocess
import zipfile
from collections import Counter
from pathlib import Path

import pytest
from lxml import etree

from worker.formats import FormatError, format_of, parse

from .conftest import REPO_ROOT, run_nmt
from .test_odf_format import KEY, fleet  # noqa: F401 (a fixture: Redis, a worker of models/en-de, a gateway)

SHIPPED = REPO_ROOT / "models" / "en-de"
XHTML = "http://www.w3.org/1999/xhtml"
NS = {"h": XHTML, "opf": "http://www.idpf.org/2007/opf", "dc": "http://purl.org/dc/elements/1.1/",
      "ncx": "http://www.daisy.org/z3986/2005/ncx/"}
HEAD = ('<?xml version="1.0" encoding="UTF-8"?>\n<!DOCTYPE html>\n<html xmlns="http://www.w3.org/1999/xhtml" '
        'xmlns:epub="http://www.idpf.org/2007/ops" lang="en" xml:lang="en">\n')
CHAPTER = HEAD + """<head><meta charset="utf-8"/><title>The garden</title><link rel="stylesheet" href="../style.css"/></head>
<body>
<section id="garden" epub:type="chapter">
<h1 id="start">The house and the garden</h1>
<p>The dog runs home and the <b>big</b> cat sees a red ball.<br/>A woman opens the window.</p>
<p>Run <code>pip install markdown</code> to install the package, then read <a href="ch2.xhtml#rules">the rules</a>.</p>
<pre><code>import markdown
html = markdown.markdown(text)</code></pre>
<p>See <a href="https://example.org/manual.html">the manual</a> &amp; the notes.<a id="end"/></p>
</section>
</body>
</html>
"""
UNDECLARED = ('<html xmlns="http://www.w3.org/1999/xhtml"><head><title>The rules</title></head><body>'
              '<h1 id="rules">The rules of the house</h1><p>Children play in the park every day.</p></body></html>')
NAV = HEAD + """<head><title>Contents</title></head>
<body><nav epub:type="toc" id="toc"><h1>Contents</h1><ol>
<li><a href="text/ch1.xhtml#start">The house and the garden</a></li>
<li><a href="text/ch2.xhtml#rules">The rules of the house</a></li></ol></nav></body></html>
"""
NCX = """<?xml version="1.0" encoding="UTF-8"?>
<ncx xmlns="http://www.daisy.org/z3986/2005/ncx/" version="2005-1"><head><meta name="dtb:uid" content="urn:uuid:1"/></head>
<docTitle><text>The small book</text></docTitle><navMap>
<navPoint id="n1" playOrder="1"><navLabel><text>The house and the garden</text></navLabel><content src="text/ch1.xhtml#start"/></navPoint>
<navPoint id="n2" playOrder="2"><navLabel><text>The rules of the house</text></navLabel><content src="text/ch2.xhtml#rules"/></navPoint>
</navMap></ncx>
"""
OPF = """<?xml version="1.0" encoding="UTF-8"?>
<package xmlns="http://www.idpf.org/2007/opf" version="3.0" unique-identifier="id">
<metadata xmlns:dc="http://purl.org/dc/elements/1.1/"><dc:identifier id="id">urn:uuid:1</dc:identifier>
<dc:title>The small book</dc:title><dc:language>en</dc:language><dc:description>A short book about a house.</dc:description>
<meta property="dcterms:modified">2024-01-01T00:00:00Z</meta></metadata>
<manifest><item id="nav" href="nav.xhtml" media-type="application/xhtml+xml" properties="nav"/>
<item id="ncx" href="toc.ncx" media-type="application/x-dtbncx+xml"/>
<item id="ch1" href="text/ch1.xhtml" media-type="application/xhtml+xml"/>
<item id="ch2" href="text/ch2.xhtml" media-type="application/xhtml+xml"/>
<item id="css" href="style.css" media-type="text/css"/></manifest>
<spine toc="ncx"><itemref idref="ch1"/><itemref idref="ch2"/></spine></package>
"""
CONTAINER = ('<?xml version="1.0" encoding="UTF-8"?><container version="1.0" xmlns="urn:oasis:names:tc:opendocument:'
             'xmlns:container"><rootfiles><rootfile full-path="OEBPS/content.opf" '
             'media-type="application/oebps-package+xml"/></rootfiles></container>')
BOOK_UNITS = ["The small book", "A short book about a house.", "The small book", "The house and the garden",
              "The rules of the house", "The garden", "The house and the garden",
              "The dog runs home and the big cat sees a red ball. A woman opens the window.",
              "Run to install the package, then read the rules.", "See the manual & the notes.", "The rules",
              "The rules of the house", "Children play in the park every day.", "Contents", "Contents",
              "The house and the garden", "The rules of the house"]


def book(**changed: bytes) -> bytes:
    """A small EPUB 3 book with an EPUB 2 NCX: the mimetype entry first and stored."""
    parts = {"META-INF/container.xml": CONTAINER, "OEBPS/content.opf": OPF, "OEBPS/nav.xhtml": NAV,
             "OEBPS/toc.ncx": NCX, "OEBPS/text/ch1.xhtml": CHAPTER, "OEBPS/text/ch2.xhtml": UNDECLARED,
             "OEBPS/style.css": "code { font-family: monospace; }\n"}
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as archive:
        archive.writestr(zipfile.ZipInfo("mimetype"), changed.pop("mimetype", b"application/epub+zip"))
        for name, data in (parts | changed).items():
            archive.writestr(name, data if isinstance(data, bytes) else data.encode("utf-8"),
                             compress_type=zipfile.ZIP_DEFLATED)
    return out.getvalue()


def words(text: str) -> list[tuple[int, int]]:
    return [m.span() for m in re.finditer(r"\S+", text)]


def entries(data: bytes) -> dict[str, bytes]:
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        return {info.filename: archive.read(info) for info in archive.infolist()}


def package_kept(source: bytes, out: bytes) -> set[str]:
    """``out`` has ``source``'s entries in its order, the mimetype entry first and stored; the
    names of the entries that changed."""
    with zipfile.ZipFile(io.BytesIO(out)) as archive:
        first = archive.infolist()[0]
        assert first.filename == "mimetype" and first.compress_type == zipfile.ZIP_STORED and out[30:38] == b"mimetype"
        assert archive.testzip() is None
    old, new = entries(source), entries(out)
    assert list(new) == list(old) and new["mimetype"] == b"application/epub+zip"
    return {name for name in old if old[name] != new[name]}


def documents(data: bytes) -> dict[str, object]:
    """Every XHTML document of a book, parsed as XML (so each is well-formed)."""
    return {name: etree.fromstring(text) for name, text in entries(data).items() if name.endswith(".xhtml")}


def links(root) -> list[str]:
    return [a.get("href") for a in root.iter(f"{{{XHTML}}}a") if a.get("href")]


def codes(root) -> Counter:
    return Counter(etree.tostring(c, method="c14n", with_tail=False) for c in root.iter(f"{{{XHTML}}}code"))


def ids(root) -> list[str]:
    return [e.get("id") for e in root.iter() if e.get("id")]


def targets_resolve(data: bytes) -> int:
    """Every link of the navigation documents and the NCX points at a document of the book and an
    id in it; the number of links checked."""
    files, checked = entries(data), 0
    ids = {name: {e.get("id") for e in etree.fromstring(text).iter() if e.get("id")}
           for name, text in files.items() if name.endswith(".xhtml")}
    for name, text in files.items():
        if not name.endswith(("nav.xhtml", ".ncx")):
            continue
        root = etree.fromstring(text)
        hrefs = links(root) + [c.get("src") for c in root.iter(f"{{{NS['ncx']}}}content")]
        for href in hrefs:
            target, _, anchor = href.partition("#")
            resolved = posixpath.normpath(posixpath.join(posixpath.dirname(name), target)) if target else name
            assert resolved in ids and (not anchor or anchor in ids[resolved]), (name, href)
            checked += 1
    return checked


def test_units_of_a_book_and_an_identity_render_keep_links_code_and_the_package():
    assert format_of("book.epub") == "epub"
    source = book()
    parsed = parse("epub", source)
    assert [u.text for u in parsed.units] == BOOK_UNITS
    assert parsed.units[0].where == "package title" and parsed.units[3].where == "OEBPS/toc.ncx label 2"
    out = parsed.render([u.text.upper() for u in parsed.units],
                        [list(zip(words(u.text), words(u.text))) for u in parsed.units])
    assert package_kept(source, out) == {"OEBPS/content.opf", "OEBPS/toc.ncx", "OEBPS/nav.xhtml",
                                         "OEBPS/text/ch1.xhtml", "OEBPS/text/ch2.xhtml"}
    before, after = documents(source), documents(out)  # each well-formed XML
    for name in before:
        assert links(after[name]) == links(before[name]) and codes(after[name]) == codes(before[name]), name
    assert targets_resolve(out) == 4
    chapter = entries(out)["OEBPS/text/ch1.xhtml"].decode("utf-8")
    assert "<b>BIG</b>" in chapter and "<code>pip install markdown</code>" in chapter and "&amp; THE NOTES" in chapter
    assert '<a href="ch2.xhtml#rules">THE RULES</a>' in chapter and "<br/>" in chapter
    assert CHAPTER.split("<body>")[0] == chapter.split("<body>")[0].replace("THE GARDEN", "The garden")
    nav = after["OEBPS/nav.xhtml"]
    assert [a.text for a in nav.iter(f"{{{XHTML}}}a")] == ["THE HOUSE AND THE GARDEN", "THE RULES OF THE HOUSE"]
    ncx = etree.fromstring(entries(out)["OEBPS/toc.ncx"])
    assert [t.text for t in ncx.iterfind(".//ncx:text", NS)] == ["THE SMALL BOOK", "THE HOUSE AND THE GARDEN",
                                                                 "THE RULES OF THE HOUSE"]
    opf = etree.fromstring(entries(out)["OEBPS/content.opf"])
    assert opf.findtext(".//dc:title", namespaces=NS) == "THE SMALL BOOK"
    assert opf.findtext(".//dc:description", namespaces=NS) == "A SHORT BOOK ABOUT A HOUSE."
    assert opf.findtext(".//dc:language", namespaces=NS) == "en"


def test_a_doctype_with_an_entity_is_kept_so_the_ncx_reopens():
    # an NCX whose DOCTYPE declares an entity its author uses: written as its root alone, the
    # DOCTYPE was lost and the NCX no longer parsed ("Entity 'author' not defined")
    ncx = NCX.replace("<ncx xmlns=", '<!DOCTYPE ncx [<!ENTITY author "Jane Roe">]>\n<ncx xmlns=', 1).replace(
        "</docTitle>", "</docTitle><docAuthor><text>&author;</text></docAuthor>", 1)
    source = book(**{"OEBPS/toc.ncx": ncx})
    parsed = parse("epub", source)
    assert [u.text for u in parsed.units] == BOOK_UNITS  # the author, an entity never resolved, is no unit
    out = parsed.render([u.text.upper() for u in parsed.units],
                        [list(zip(words(u.text), words(u.text))) for u in parsed.units])
    written = entries(out)["OEBPS/toc.ncx"]
    assert written.startswith(ncx[:ncx.index("<ncx ")].encode("utf-8"))  # declaration and DOCTYPE byte for byte
    root = etree.fromstring(written)  # lxml resolves the entity
    assert root.findtext(".//ncx:docAuthor/ncx:text", namespaces=NS) == "Jane Roe"
    assert [t.text for t in root.iterfind(".//ncx:navLabel/ncx:text", NS)] == ["THE HOUSE AND THE GARDEN",
                                                                               "THE RULES OF THE HOUSE"]
    assert targets_resolve(out) == 4


ENCRYPTION = ('<encryption xmlns="urn:oasis:names:tc:opendocument:xmlns:container" '
              'xmlns:enc="http://www.w3.org/2001/04/xmlenc#"><enc:EncryptedData><enc:EncryptionMethod '
              'Algorithm="{algorithm}"/><enc:CipherData><enc:CipherReference URI="{uri}"/></enc:CipherData>'
              '</enc:EncryptedData></encryption>')
CODE_ONLY = HEAD + "<head><title>1.0</title></head><body><pre>make install</pre><p><code>ls -l</code></p></body></html>"
BAD = [
    ("cut.epub", lambda: b"PK\x03\x04 cut short", r"^not a valid EPUB file: it is not a ZIP package"),
    ("drm.epub", lambda: book(**{"META-INF/encryption.xml": ENCRYPTION.format(
        algorithm="http://www.w3.org/2001/04/xmlenc#aes128-cbc", uri="OEBPS/text/ch1.xhtml")}),
     r"^cannot read this EPUB file: it is encrypted \(DRM: OEBPS/text/ch1.xhtml is encrypted\)"),
    ("empty.epub", lambda: book(**{"OEBPS/text/ch1.xhtml": CODE_ONLY, "OEBPS/text/ch2.xhtml": CODE_ONLY,
                                   "OEBPS/nav.xhtml": CODE_ONLY, "OEBPS/toc.ncx": re.sub("<text>[^<]*", "<text>1.", NCX),
                                   "OEBPS/content.opf": OPF.replace("The small book", "1984").replace(
                                       "A short book about a house.", "")}),
     r"^this EPUB file has no text to translate"),
    ("zip.epub", lambda: book(mimetype=b"application/zip"), r"^not a valid EPUB file: its mimetype entry says"),
    ("broken.epub", lambda: book(**{"OEBPS/text/ch2.xhtml": UNDECLARED.replace("</p>", "")}),
     r"^not a valid EPUB file: OEBPS/text/ch2.xhtml is not well-formed XHTML"),
]


@pytest.mark.parametrize("name, make, message", BAD, ids=[b[0] for b in BAD])
def test_a_bad_book_is_one_clear_line(name, make, message):
    with pytest.raises(FormatError, match=message) as caught:
        parse("epub", make())
    assert "\n" not in str(caught.value) and len(str(caught.value)) < 200


def test_obfuscated_fonts_are_no_encryption_of_the_text():
    fonts = ENCRYPTION.format(algorithm="http://www.idpf.org/2008/embedding", uri="OEBPS/fonts/serif.otf")
    assert len(parse("epub", book(**{"META-INF/encryption.xml": fonts})).units) == len(BOOK_UNITS)


# -- Real books, the shipped model and epubcheck ------------------------------------------------
MARKDOWN = [Path(f"/usr/share/doc/{name}") for name in (
    "python3-yaml/README.md", "libxml2/README.md", "libpango-1.0-0/README.md", "python3-httplib2/README.md",
    "psmisc/README.md", "procps/bugs.md")]


def self_contained(markdown: Path) -> bool:
    """Whether a Markdown file links to nothing a book made of it would lack: no images, no links
    to other files (``[INSTALL](INSTALL.md)``), as a book with those fails epubcheck already."""
    text = markdown.read_text(encoding="utf-8", errors="replace")
    relative = re.search(r"\]\((?!https?:|mailto:|#)|^\s*\[[^\]]+\]:\s*(?!https?:|mailto:)\S", text, re.M)
    return "![" not in text and relative is None and re.search(r"<(img|a|div)\b", text) is None


def epubcheck(path: Path) -> subprocess.CompletedProcess:
    """Debian's epubcheck: a Java archive, run by java where the kernel does not run jars itself."""
    binary = shutil.which("epubcheck")
    if binary is None:
        pytest.skip("epubcheck is not installed (Debian's epubcheck)")
    with open(binary, "rb") as handle:
        jar = handle.read(2) == b"PK"
    command = ["java", "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-jar", binary] if jar else [binary]
    return subprocess.run([*command, str(path)], capture_output=True, text=True, timeout=300, check=False)


@pytest.fixture(scope="module")
def real(tmp_path_factory):
    """Two books pandoc makes from Markdown files of this machine (EPUB 3 and EPUB 2), the book
    made by hand and the bad ones, through one ``nmt translate`` run with the shipped model."""
    pandoc = shutil.which("pandoc")
    if pandoc is None:
        pytest.skip("pandoc is not installed (Debian's pandoc)")
    if not (SHIPPED / "manifest.json").exists():
        pytest.skip("models/en-de not present")
    folder = tmp_path_factory.mktemp("epub")
    (folder / "in").mkdir()
    sources = [p for p in MARKDOWN if p.exists() and self_contained(p)][:2]
    assert len(sources) == 2, "two self-contained Markdown files under /usr/share/doc"
    made = []
    for markdown, version in zip(sources, ("epub3", "epub2")):
        out = folder / "in" / f"{markdown.parent.name}-{version}.epub"
        subprocess.run([pandoc, str(markdown), "-f", "markdown", "-t", version, "-o", str(out), "-M", "lang=en",
                        "-M", f"title={markdown.parent.name} notes", "-M", "description=The notes of the package.",
                        "--toc"], check=True, capture_output=True, timeout=120)
        made.append(out.name)
    (folder / "in" / "small.epub").write_bytes(book())
    for name, make, _ in BAD:
        (folder / "in" / name).write_bytes(make())
    (folder / "notes.book").write_bytes(book())  # an EPUB by --format alone
    done = run_nmt("translate", "--bundle", str(SHIPPED), "--device", "cpu", "--threads", "1", "--format", "epub",
                   str(folder / "in"), str(folder / "notes.book"), "--out", str(folder / "out"))
    return {"made": made, "folder": folder, "run": done}


def test_bad_books_are_skipped_with_one_line_each_and_the_others_are_translated(real):
    done, folder = real["run"], real["folder"]
    assert done.returncode == 1, done.stderr[-3000:]
    for name, _make, message in BAD:
        line = next(line for line in done.stderr.splitlines() if f"skipped {folder / 'in' / name}:" in line)
        assert re.search(message.lstrip("^"), line), line
    assert sorted(p.name for p in (folder / "out").glob("*.epub")) == sorted(
        f"{Path(name).stem}.de.epub" for name in real["made"] + ["small.epub"])
    by_format = (folder / "out" / "notes.de.book").read_bytes()
    assert by_format == (folder / "out" / "small.de.epub").read_bytes()  # the same book, the same translation


@pytest.mark.slow
def test_real_books_pass_epubcheck_in_german_with_links_code_and_navigation_kept(real):
    folder = real["folder"]
    translated = 0
    for name in real["made"] + ["small.epub"]:
        source = (folder / "in" / name).read_bytes()
        out = (folder / "out" / f"{Path(name).stem}.de.epub").read_bytes()
        changed = package_kept(source, out)
        assert {n for n in changed if n.endswith((".css", ".xml", ".png"))} == set(), name
        before, after = documents(source), documents(out)
        for doc in before:
            assert links(after[doc]) == links(before[doc]) and codes(after[doc]) == codes(before[doc]), (name, doc)
            assert ids(after[doc]) == ids(before[doc])
            for old, new in zip(before[doc].iter(f"{{{XHTML}}}a"), after[doc].iter(f"{{{XHTML}}}a")):
                assert "".join(new.itertext()).strip() or not "".join(old.itertext()).strip(), (name, old.get("href"))
        assert targets_resolve(out) >= 4
        record = json.loads((folder / "out" / f"{Path(name).stem}.de.json").read_text(encoding="utf-8"))["units"]
        assert all(u["translation"].strip() for u in record)
        prose = [u for u in record if len(u["source"].split()) >= 4]
        translated += sum(u["translation"] != u["source"] for u in prose)
        text = " ".join(" ".join(root.itertext()) for root in after.values())
        assert re.search(r"(?i)\b(der|die|das|und|ist|sie|mit|ein|eine)\b", text), (name, text[:300])
        if name in real["made"]:  # epubcheck: Java, about 9 s a book here
            checked = epubcheck(folder / "out" / f"{Path(name).stem}.de.epub")
            assert checked.returncode == 0 and "0 fatals / 0 errors" in checked.stdout + checked.stderr, (
                name, (checked.stdout + checked.stderr)[-3000:])
    assert translated >= 10


# -- The queue, nmt submit and the gateway ------------------------------------------------------
@pytest.mark.slow
@pytest.mark.integration
def test_books_go_through_the_queue_nmt_submit_and_the_deepl_and_libretranslate_endpoints(fleet, tmp_path):
    import deepl
    import requests

    from client.client import TranslationClient

    broker, root, url = fleet
    source = book()
    (root / "in" / "small.epub").write_bytes(source)
    client = TranslationClient(broker_url=broker)
    sent = client.submit(text=source, src="en", tgt="de", format="epub", name="sent")
    by_path = client.submit(path="small.epub", src="en", tgt="de")
    results = [job.wait(timeout=180) for job in (sent, by_path)]
    assert results[0].data == results[1].data and results[0].raw["format"] == "epub"
    assert (root / "out" / by_path.id / "small.de.epub").read_bytes() == results[1].data
    package_kept(source, results[0].data)
    assert targets_resolve(results[0].data) == 4 and len(parse("epub", results[0].data).units) == len(BOOK_UNITS)

    (tmp_path / "small.epub").write_bytes(source)
    done = run_nmt("submit", str(tmp_path / "small.epub"), "--src", "en", "--tgt", "de", "--wait", "--out",
                   str(tmp_path / "submitted"), "--broker-url", broker)
    assert done.returncode == 0, done.stderr[-2000:]
    assert (tmp_path / "submitted" / "small.de.epub").read_bytes() == results[0].data

    deepl.Translator(KEY, server_url=url).translate_document_from_filepath(
        tmp_path / "small.epub", tmp_path / "deepl.epub", source_lang="EN", target_lang="DE")
    assert (tmp_path / "deepl.epub").read_bytes() == results[0].data

    answer = requests.post(url + "/translate_file", data={"source": "en", "target": "de", "api_key": KEY},
                           files={"file": ("small.epub", source)}, timeout=180)
    assert answer.status_code == 200, answer.text
    download = requests.get(answer.json()["translatedFileUrl"], params={"api_key": KEY}, timeout=30)
    assert 'filename="small.de.epub"' in download.headers["content-disposition"]
    assert download.headers["content-type"] == "application/epub+zip" and download.content == results[0].data

    refused = requests.post(url + "/translate_file", data={"source": "en", "target": "de", "api_key": KEY},
                            files={"file": ("drm.epub", BAD[1][1]())}, timeout=60)
    assert refused.status_code == 400
    assert refused.json()["error"].startswith("Invalid request: the document cannot be read: drm: cannot read this "
                                              "EPUB file: it is encrypted"), refused.json()
