"""Real files of this Debian machine through ``nmt translate``, each output checked with its
format's own tool. Made at test time, never committed: a seeded sample of the HTML manuals under
/usr/share/doc, German gettext catalogues (/usr/share/locale/de) made into English-source
templates with c-format flags, the Markdown files under /usr/share/doc, and DOCX and ODT files
LibreOffice makes from HTML manuals (ODT through translate-toolkit's odf2xliff and xliff2odf).

Per file: the output parses (msgfmt -c; libxml2's HTML parser; markdown-it; python-docx;
xmllint and xliff2odf), and LibreOffice opens every DOCX and ODT; no unit with source text comes
back empty; every inline element keeps its parent (no tag moved into another); no link loses its
text; every printf directive is kept (msgfmt -c on c-format messages); no DOCX field result is
written into. ``python tests/test_real_files.py DIR N SEED MESSAGES`` runs the same checks on N
files per format (and MESSAGES per catalogue) in DIR and prints the failures by kind."""
from __future__ import annotations

import gzip
import json
import random
import re
import subprocess
import sys
import zipfile
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import pytest

if __package__ in (None, ""):  # run as a script: python tests/test_real_files.py N
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    __package__ = "tests"

from .conftest import REPO_ROOT  # noqa: E402
from .test_formats_libreoffice import ODF, XLINK, soffice, tool  # noqa: E402

DOC = Path("/usr/share/doc")
LOCALE = Path("/usr/share/locale/de/LC_MESSAGES")
SEED = 1127
PER_FORMAT = 4  # files per format in the test: the whole module runs in about a minute on 2 cores
MESSAGES = 60  # messages per catalogue, those with printf directives first
FORMATS = ("html", "po", "markdown", "docx", "odt")
W = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"
R_ID = "{http://schemas.openxmlformats.org/officeDocument/2006/relationships}id"
# A printf directive: %d, %5.2f, %-10s, %lu, %2$s, %%, and the <PRIu64> forms gettext writes back
DIRECTIVE = re.compile(r"%(?:\d+\$)?[-+ #0']*(?:\*|\d+)?(?:\.(?:\*|\d+))?(?:hh|h|ll|l|L|q|j|z|Z|t)?"
                       r"[diouxXeEfFgGaAcspn%]"
                       r"|%<PRI\w+>")


@dataclass
class Sample:
    """The real files of one run, by format: input path -> (translated output, its JSON record)."""

    root: Path
    inputs: dict[str, list[Path]] = field(default_factory=dict)
    sources: dict[Path, Path] = field(default_factory=dict)  # input made from a file -> that file

    def output(self, path: Path, extension: str | None = None) -> tuple[Path, Path]:
        relative = path.relative_to(self.root / "in")
        stem = self.root / "out" / relative.parent / relative.stem
        return stem.with_name(f"{stem.name}.de{extension or path.suffix}"), stem.with_name(f"{stem.name}.de.json")


def pick(paths, n: int, seed: int) -> list[Path]:
    """``n`` of ``paths`` (symbolic links and duplicates counted once), chosen with ``seed``, in
    the order drawn."""
    unique = sorted({p.resolve(): p for p in paths}.values())
    return random.Random(seed).sample(unique, min(n, len(unique)))


def html_manuals() -> list[Path]:
    return [p for p in DOC.rglob("*.html") if p.is_file() and 2_000 < p.stat().st_size < 40_000]


def markdown_files() -> list[Path]:
    found = [p for p in DOC.rglob("*.md") if p.is_file() and 300 < p.stat().st_size < 20_000]
    return found + [p for p in DOC.rglob("*.md.gz") if p.is_file() and 200 < p.stat().st_size < 7_000]


def catalogues() -> list[Path]:
    return [p for p in LOCALE.glob("*.mo") if p.is_file() and p.stat().st_size < 60_000]


def directives(text: str) -> Counter:
    return Counter(m.group() for m in DIRECTIVE.finditer(text))


def template(mo: Path, out: Path, messages: int, seed: int) -> bool:
    """An English-source template of a German catalogue: msgunfmt, ``messages`` of its messages
    (those with printf directives first), each flagged c-format where the German translation has
    the directives of its msgid, every msgstr emptied. False (and no template) if the German
    catalogue with these flags fails ``msgfmt -c``: then a flag could be wrong, or the catalogue
    is broken as shipped (software-properties' has a plural message with one form)."""
    import polib

    done = subprocess.run([tool("msgunfmt", "Debian's gettext"), str(mo), "-o", str(out)], capture_output=True,
                          text=True, errors="replace", timeout=60)
    assert done.returncode == 0, done.stderr
    catalogue = polib.pofile(str(out))  # in the catalogue's charset (ISO-8859-1 for some): its header says which
    for entry in catalogue:
        german = entry.msgstr or entry.msgstr_plural.get(0, entry.msgstr_plural.get("0", ""))
        if "c-format" not in entry.flags and directives(entry.msgid) and directives(entry.msgid) == directives(german):
            entry.flags.append("c-format")
    checked = out.with_suffix(".de-check.po")
    catalogue.save(str(checked))
    done = subprocess.run([tool("msgfmt", "Debian's gettext"), "-c", "-o", "/dev/null", str(checked)],
                          capture_output=True, text=True, errors="replace", timeout=60)
    checked.unlink()
    if done.returncode != 0:
        out.unlink()
        return False
    rng = random.Random(seed)
    entries = [e for e in catalogue if e.msgid]
    flagged = [e for e in entries if "c-format" in e.flags]
    rest = [e for e in entries if "c-format" not in e.flags]
    chosen = rng.sample(flagged, min(len(flagged), messages))
    chosen += rng.sample(rest, min(len(rest), messages - len(chosen)))
    keep = {id(e) for e in chosen}
    catalogue[:] = [e for e in catalogue if id(e) in keep]
    for entry in catalogue:
        if entry.msgid:
            entry.msgstr, entry.msgstr_plural = "", {k: "" for k in entry.msgstr_plural}
    catalogue.save(str(out))
    return True


def prepare(root: Path, per_format: int, seed: int = SEED, messages: int = MESSAGES) -> Sample:
    """The inputs of a run under ``root/in/<format>/``, named ``<number>-<package>-<file>``; DOCX
    and ODT files made by LibreOffice (one call each) from HTML manuals other than those taken
    as HTML."""
    sample = Sample(root)
    folders = {fmt: root / "in" / fmt for fmt in FORMATS}
    for folder in folders.values():
        folder.mkdir(parents=True, exist_ok=True)
    names = iter(range(10_000))

    def name(path: Path) -> str:
        package = path.relative_to(DOC).parts[0] if path.is_relative_to(DOC) else path.stem
        return re.sub(r"[^\w.-]", "_", f"{next(names):03d}-{package}-{path.name}")

    pages = pick(html_manuals(), 3 * per_format, seed)
    for page in pages[:per_format]:
        target = folders["html"] / name(page)
        target.write_bytes(page.read_bytes())
        sample.sources[target] = page
    taken = 0
    for mo in pick(catalogues(), 10_000, seed):
        target = folders["po"] / f"{mo.stem}.po"
        if taken < per_format and template(mo, target, messages, seed):
            sample.sources[target] = mo
            taken += 1
    for doc in pick(markdown_files(), per_format, seed):
        target = folders["markdown"] / name(doc).removesuffix(".gz")
        target.write_bytes(gzip.decompress(doc.read_bytes()) if doc.suffix == ".gz" else doc.read_bytes())
        sample.sources[target] = doc
    office = {}
    for page in pages[per_format:3 * per_format]:
        target = root / "made" / name(page)
        target.parent.mkdir(exist_ok=True)
        target.write_bytes(page.read_bytes())
        office[target] = page
    half = len(office) // 2
    pages_for = {"docx": list(office)[:half], "odt": list(office)[half:]}
    filters = {"docx": 'docx:MS Word 2007 XML', "odt": "odt:writer8"}
    for fmt in ("docx", "odt"):
        for made, out in soffice(root / "profile", filters[fmt], folders[fmt], pages_for[fmt]).items():
            sample.sources[out] = office[made]
    for fmt, folder in folders.items():
        sample.inputs[fmt] = sorted(folder.iterdir())
    return sample


def translate(sample: Sample, timeout: float = 600) -> None:
    """odf2xliff for each ODT, one ``nmt translate`` of the whole tree, xliff2odf back."""
    for odt in sample.inputs["odt"]:
        done = subprocess.run([tool("odf2xliff", "translate-toolkit"), str(odt), str(odt.with_suffix(".xlf"))],
                              capture_output=True, text=True, errors="replace", timeout=120)
        assert done.returncode == 0, done.stderr[-1000:]
    done = subprocess.run([sys.executable, "-m", "nmt", "translate", "--device", "cpu", str(sample.root / "in"),
                           "--out", str(sample.root / "out"), "--exclude", "*.odt"], capture_output=True, text=True,
                          errors="replace", cwd=REPO_ROOT, timeout=timeout)
    assert done.returncode == 0, done.stderr[-2000:]
    for odt in sample.inputs["odt"]:
        xliff, _ = sample.output(odt.with_suffix(".xlf"))
        done = subprocess.run([tool("xliff2odf", "translate-toolkit"), "-t", str(odt), str(xliff),
                               str(xliff.with_suffix(".odt"))], capture_output=True, text=True, errors="replace",
                              timeout=120)
        assert done.returncode == 0, done.stderr[-1000:]


# The checks: each returns the failures of one file as "kind: detail".

def emptied(record: Path) -> list[str]:
    """Units with words in the source and none in the translation (from the JSON record)."""
    units = json.loads(record.read_text(encoding="utf-8"))["units"]
    return [f"emptied: {u['where']}: {u['source'][:80]!r}" for u in units
            if any(c.isalpha() for c in u["source"]) and not any(c.isalnum() for c in u["translation"])]


def html_shape(text: str) -> tuple[Counter, Counter, Counter]:
    """Tags opened and closed as written; every element by its path of ancestors (libxml2's HTML
    parser); links with text, by target."""
    import lxml.html

    written = Counter(m.group(1).lower() for m in re.finditer(r"<(/?[A-Za-z][\w-]*)", text))
    tree = lxml.html.document_fromstring(text.encode("utf-8"))
    paths, links = Counter(), Counter()
    for element in tree.iter():
        if isinstance(element.tag, str):
            paths["/".join(a.tag for a in reversed(list(element.iterancestors()))) + "/" + element.tag] += 1
            if element.tag == "a" and element.get("href") is not None and element.text_content().strip():
                links[element.get("href")] += 1
    return written, paths, links


def differences(kind: str, before: Counter, after: Counter) -> list[str]:
    if before == after:
        return []
    lost, gained = before - after, after - before
    return [f"{kind}: lost {dict(list(lost.items())[:3])}, gained {dict(list(gained.items())[:3])}"]


def xmllint_html_errors(path: Path) -> set[str]:
    done = subprocess.run([tool("xmllint", "Debian's libxml2-utils"), "--html", "--noout", "--nonet", str(path)],
                          capture_output=True, text=True, errors="replace", timeout=60)
    return {re.sub(r"^[^:]*:\d+: ", "", line) for line in done.stderr.splitlines() if "error" in line}


def check_html(source: Path, out: Path, record: Path) -> list[str]:
    text = source.read_bytes().decode("utf-8", errors="replace")
    try:
        (tags, paths, links), (new_tags, new_paths, new_links) = html_shape(text), html_shape(out.read_text("utf-8"))
    except ValueError as exc:
        return [f"unparsable: {exc}"]
    if not re.search(r"(?i)<meta[^>]*charset", text) and re.search(r'(?i)<meta charset="utf-8">', out.read_text("utf-8")):
        new_tags -= Counter({"meta": 1})  # a page that declared no charset is written with one (docs/formats.md)
        new_paths -= Counter({"html/head/meta": 1})
    new_errors = xmllint_html_errors(out) - xmllint_html_errors(source)
    return ([f"unparsable: xmllint --html: {sorted(new_errors)[:3]}"] if new_errors else []) + \
        differences("tags", tags, new_tags) + differences("moved", paths, new_paths) + \
        differences("link emptied", links, new_links) + emptied(record)


def check_po(source: Path, out: Path, record: Path) -> list[str]:
    import polib

    done = subprocess.run([tool("msgfmt", "Debian's gettext"), "-c", "--use-fuzzy", "-o", "/dev/null", str(out)],
                          capture_output=True, text=True, errors="replace", timeout=60)
    failures = [f"{'printf' if 'format' in line else 'unparsable'}: msgfmt -c: {line}"
                for line in done.stderr.splitlines()
                if not re.search(r"msgfmt: found \d+ fatal error|: warning: ", line)]
    if done.returncode != 0 and not failures:
        failures.append(f"unparsable: msgfmt -c: {done.stderr[-300:]}")
    for entry in polib.pofile(str(out)):
        forms = [entry.msgstr] if not entry.msgid_plural else list(entry.msgstr_plural.values())
        if entry.msgid and any(c.isalpha() for c in entry.msgid) and not all(f.strip() for f in forms):
            failures.append(f"emptied: {entry.msgid[:80]!r}")
        if entry.msgid and "c-format" not in entry.flags and directives(entry.msgid) - directives(forms[0]):
            failures.append(f"printf: {entry.msgid[:60]!r} -> {forms[0][:60]!r}")
    return failures + emptied(record)


def markdown_shape(text: str) -> tuple[list[str], Counter, Counter]:
    """Block token types; inline tokens (text aside) by the markup they sit in; links with text."""
    from worker.formats.markdown import _parser

    blocks, inline, links = [], Counter(), Counter()
    for token in _parser().parse(text, {}):
        if token.type != "inline":
            blocks.append(token.type)
            continue
        open_, children = [], token.children or []
        for k, child in enumerate(children):
            if child.type in ("text", "softbreak"):
                continue
            if child.type.endswith("_close") and open_:
                open_.pop()
            inline["/".join(open_) + "/" + child.type] += 1
            if child.type.endswith("_open"):
                open_.append(child.type[:-5])
            if child.type == "link_open":
                close = next(j for j in range(k + 1, len(children)) if children[j].type == "link_close")
                if any((c.content or c.type == "image") for c in children[k + 1:close]):
                    links[child.attrs.get("href")] += 1
    return blocks, inline, links


def check_markdown(source: Path, out: Path, record: Path) -> list[str]:
    (blocks, inline, links) = markdown_shape(source.read_text("utf-8"))
    (new_blocks, new_inline, new_links) = markdown_shape(out.read_text("utf-8"))
    failures = [] if blocks == new_blocks else [f"blocks: {len(blocks)} block tokens became {len(new_blocks)}"]
    return failures + differences("moved", inline, new_inline) + differences("link emptied", links, new_links) + \
        emptied(record)


def docx_shape(path: Path) -> tuple[Counter, Counter, Counter, list[str]]:
    """Per paragraph (by number): hyperlinks with text, bookmarks and field codes; the text of
    every computed field's result (not a HYPERLINK's, whose text is translated), in order."""
    import docx

    document = docx.Document(str(path))
    links, marks, codes, results = Counter(), Counter(), Counter(), []
    for number, p in enumerate(document.element.body.iter(f"{W}p")):
        for link in p.iter(f"{W}hyperlink"):
            if "".join(t.text or "" for t in link.iter(f"{W}t")).strip():
                links[(number, link.get(R_ID) or link.get(f"{W}anchor"))] += 1
        for mark in p.iter(f"{W}bookmarkStart"):
            marks[(number, mark.get(f"{W}name"))] += 1
        for simple in p.iter(f"{W}fldSimple"):
            codes[(number, simple.get(f"{W}instr"))] += 1
            if not simple.get(f"{W}instr", "").strip().upper().startswith("HYPERLINK"):
                results.append("".join(t.text or "" for t in simple.iter(f"{W}t")))
        fields: list[list] = []  # open complex fields: [code, in its result, result text]
        for element in p.iter(f"{W}fldChar", f"{W}instrText", f"{W}t"):
            kind = element.get(f"{W}fldCharType")
            if element.tag == f"{W}instrText" and fields:
                fields[-1][0] += element.text or ""
            elif kind == "begin":
                fields.append(["", False, ""])
            elif kind == "separate" and fields:
                fields[-1][1] = True
            elif kind == "end" and fields:
                code, _, text = fields.pop()
                codes[(number, code.strip())] += 1
                if not code.strip().upper().startswith("HYPERLINK"):
                    results.append(text)
            elif element.tag == f"{W}t" and fields and fields[-1][1]:
                fields[-1][2] += element.text or ""
    return links, marks, codes, results


def check_docx(source: Path, out: Path, record: Path) -> list[str]:
    try:
        (links, marks, codes, results), after = docx_shape(source), docx_shape(out)
    except Exception as exc:  # noqa: BLE001 - python-docx or lxml refusing the file
        return [f"unparsable: python-docx: {type(exc).__name__}: {exc}"]
    new_links, new_marks, new_codes, new_results = after
    failures = [] if results == new_results else [f"field: a computed result changed: {results} -> {new_results}"]
    return failures + differences("field", codes, new_codes) + differences("link emptied", links, new_links) + \
        differences("moved", marks, new_marks) + emptied(record)


def odf_shape(odt: Path) -> tuple[Counter, Counter, list[tuple[bool, bool]]]:
    """Links with text by target and bookmarks by name, each under its paragraph's number; for
    every paragraph and heading, whether it has letters and whether it has letters or digits."""
    from lxml import etree

    with zipfile.ZipFile(odt) as package:
        root = etree.fromstring(package.read("content.xml"))
    links, marks, worded = Counter(), Counter(), []
    for number, p in enumerate(root.iter(f"{{{ODF}}}p", f"{{{ODF}}}h")):
        text = "".join(p.itertext())
        worded.append((any(c.isalpha() for c in text), any(c.isalnum() for c in text)))
        for a in p.iter(f"{{{ODF}}}a"):
            if "".join(a.itertext()).strip():
                links[(number, a.get(f"{{{XLINK}}}href"))] += 1
        for mark in p.iter(f"{{{ODF}}}bookmark", f"{{{ODF}}}bookmark-start"):
            marks[(number, mark.get(f"{{{ODF}}}name"))] += 1
    return links, marks, worded


def check_odt(source: Path, out: Path, record: Path) -> list[str]:
    xliff = out.with_suffix(".xlf")
    done = subprocess.run([tool("xmllint", "Debian's libxml2-utils"), "--noout", "--nonet", str(xliff)],
                          capture_output=True, text=True, errors="replace", timeout=60)
    if done.returncode != 0:
        return [f"unparsable: xmllint: {done.stderr[:300]}"]
    (links, marks, worded), (new_links, new_marks, new_worded) = odf_shape(source), odf_shape(out)
    failures = [f"emptied: paragraph {k}" for k, (a, b) in enumerate(zip(worded, new_worded)) if a[0] and not b[1]]
    if len(worded) != len(new_worded):
        failures.append(f"moved: {len(worded)} paragraphs became {len(new_worded)}")
    return failures + differences("link emptied", links, new_links) + differences("moved", marks, new_marks) + \
        emptied(record)


CHECKS = {"html": check_html, "po": check_po, "markdown": check_markdown, "docx": check_docx, "odt": check_odt}


def check(sample: Sample, fmt: str) -> dict[Path, list[str]]:
    """The failures of each file of a format ({} entries for files that pass)."""
    found = {}
    for path in sample.inputs[fmt]:
        if fmt == "odt":
            if path.suffix != ".odt":
                continue
            xliff, record = sample.output(path.with_suffix(".xlf"))
            out = xliff.with_suffix(".odt")
        else:
            out, record = sample.output(path)
        found[path] = CHECKS[fmt](path, out, record) if out.exists() else ["unparsable: no output written"]
    return found


def opened_by_libreoffice(sample: Sample) -> dict[Path, bool]:
    """Whether LibreOffice converts each translated DOCX and ODT to a PDF with text (one call)."""
    outputs = {}
    for path in sample.inputs["docx"]:
        outputs[sample.output(path)[0]] = path
    for path in sample.inputs["odt"]:
        if path.suffix == ".odt":
            outputs[sample.output(path.with_suffix(".xlf"))[0].with_suffix(".odt")] = path
    pdfs = soffice(sample.root / "profile", "pdf", sample.root / "pdf", list(outputs))
    opened = {}
    for out, path in outputs.items():
        text = subprocess.run([tool("pdftotext", "Debian's poppler-utils"), str(pdfs[out]), "-"], capture_output=True,
                              text=True, errors="replace", timeout=60).stdout if out in pdfs else ""
        opened[path] = any(c.isalpha() for c in text)
    return opened


@pytest.fixture(scope="module")
def sample(tmp_path_factory) -> Sample:
    if not (DOC.is_dir() and LOCALE.is_dir()):
        pytest.skip("no /usr/share/doc or German catalogues on this machine")
    made = prepare(tmp_path_factory.mktemp("real"), PER_FORMAT)
    translate(made)
    return made


@pytest.mark.slow
@pytest.mark.integration
@pytest.mark.parametrize("fmt", FORMATS)
def test_real_files_come_back_valid_for_their_own_tools(sample, fmt):
    failures = check(sample, fmt)
    assert len(failures) >= 2, f"too few {fmt} files on this machine: {sorted(failures)}"
    failed = {f"{p.name} ({sample.sources[p]})": f for p, f in failures.items() if f}
    assert failed == {}


@pytest.mark.slow
@pytest.mark.integration
def test_libreoffice_opens_every_translated_docx_and_odt(sample):
    opened = opened_by_libreoffice(sample)
    assert len(opened) >= 4 and all(opened.values()), opened


def sweep(root: Path, per_format: int, seed: int, messages: int) -> None:
    """Translate and check ``per_format`` files per format under ``root`` (kept: a second run
    checks the same outputs again); print each failure, then the files, segments and failed files
    per format and the failures by kind."""
    if (root / "sources.json").exists():
        made = Sample(root, {fmt: sorted((root / "in" / fmt).iterdir()) for fmt in FORMATS},
                      {Path(k): Path(v) for k, v in json.loads((root / "sources.json").read_text()).items()})
        made.inputs["odt"] = [p for p in made.inputs["odt"] if p.suffix == ".odt"]
    else:
        made = prepare(root, per_format, seed, messages)
        translate(made, timeout=7200)
        (root / "sources.json").write_text(json.dumps({str(k): str(v) for k, v in made.sources.items()}))
    opened = opened_by_libreoffice(made)
    kinds, figures = Counter(), {}
    for fmt in FORMATS:
        found = check(made, fmt)
        segments = 0
        for path in found:
            record = made.output(path.with_suffix(".xlf") if fmt == "odt" else path)[1]
            segments += len(json.loads(record.read_text(encoding="utf-8"))["segments"])
        failed = {p: f for p, f in found.items() if f}
        for path in found:
            if opened.get(path) is False:
                failed.setdefault(path, []).append("unopened: LibreOffice")
        figures[fmt] = (len(found), segments, len(failed))
        for path, failures in failed.items():
            for failure in failures:
                kinds[(fmt, failure.split(":")[0])] += 1
                print(f"{fmt}\t{made.sources.get(path, path)}\t{failure[:300]}")
    print(json.dumps({"files_segments_failed_files": figures, "failures_by_kind": {f"{a} {b}": n for (a, b), n in
                                                                                    sorted(kinds.items())}}, indent=1))


if __name__ == "__main__":
    sweep(Path(sys.argv[1]), int(sys.argv[2]) if len(sys.argv) > 2 else 20,
          int(sys.argv[3]) if len(sys.argv) > 3 else SEED, int(sys.argv[4]) if len(sys.argv) > 4 else 10_000)
