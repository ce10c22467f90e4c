"""An office sweep: 60+ real PPTX, XLSX, ODT, ODS, ODP and EPUB files that nobody here wrote, translated
with the shipped model (``nmt translate --bundle models/en-de``) and checked for what issue 48 asks:
every output reopens in its format's own tool, and no number, formula, field or link changed and no
text was lost.

Sources (``SOURCES`` below; every input's origin goes into CACHE/manifest.json):

1. LibreOffice's own templates installed here (``/usr/lib/libreoffice/share/template``: letters,
   faxes, agendas, reports, CVs, presentation templates, Calc styles), turned into documents by
   LibreOffice itself (``soffice --headless --convert-to odt|odp|ods|pptx|xlsx``).
2. Test data of pinned PyPI sdists (``pip download --no-deps --no-binary :all:``): python-pptx's
   PowerPoint-made test decks (charts, tables, notes, fields, links, a macro-enabled ``.pptm``) and
   one of their embedded Excel workbooks; odfpy's test documents (user fields, headers and footers, lists,
   tables, images with captions, a spreadsheet, presentations).
3. Excel-made workbooks of Debian's R packages r-cran-readxl and r-cran-openxlsx (``apt-get
   download``; pivot tables, threaded comments, inline strings, named regions, thousands of formulas),
   also converted to ODS by LibreOffice.
4. Debian's HTML manuals converted by LibreOffice: m4-doc's makeinfo pages to ODT, socat's HTML
   tables read by Calc's HTML filter to ODS and XLSX; CSV data of distro-info-data to XLSX and ODS.
5. python-pptx's test decks converted to ODP by LibreOffice (Impress's PPTX import).
6. EPUBs pandoc makes (EPUB 3 and EPUB 2 in turn, ``--toc``) from real Markdown: self-contained
   READMEs under /usr/share/doc (a seeded draw) and the Markdown docs of the odfpy and EbookLib
   sdists and of the R packages above.

Stages, each cached under ``--cache`` (default /work/runs/office-sweep; nothing is written to the work
tree):

- ``fetch``: downloads (CACHE/downloads), unpacked trees (CACHE/unpacked), LibreOffice's and pandoc's
  work (CACHE/made), the inputs (CACHE/in/FORMAT/) and CACHE/manifest.json (origin of each input: the
  Debian package or sdist and its version, the path inside, how it was made). Skipped when the
  manifest exists.
- ``translate``: one ``nmt translate`` per format (so that each format has its own wall and CPU time)
  of CACHE/in/FORMAT into CACHE/out/LABEL/FORMAT on one core (``--threads 1 --batch-workers 1``), with
  the code of ``--code`` (tests/content_sweep.py's BOOT: the run says where ``nmt`` and ``worker``
  came from). Skipped per format when its run.json matches the manifest.
- ``check``: per file, (1) it reopens: LibreOffice converts source and output to PDF (pptx, xlsx,
  odt, ods, odp; pdfinfo counts the pages, which must match for presentations), python-pptx and
  openpyxl load PPTX and XLSX, every XML part of an ODF package and every XHTML/OPF/NCX document of
  a book parses, and epubcheck (Debian's) passes the book (no error the source did not have);
  (2) content: numbers and formulas (every XLSX cell that is no string, and every ODF cell that is no
  string or has a formula, byte for byte; a chart's number caches and formula references, and the
  cells of its embedded workbook that its cached labels name, which must equal them), fields
  (ODF text fields, PPTX ``a:fld``) per paragraph, links (the same targets in the same order per
  paragraph, none left without text), no text lost (every paragraph, cell, comment or string with
  letters keeps letters), the same slides, sheets, cells, paragraphs, links and ids; every package
  entry the writer does not rewrite byte for byte. A table per format and the findings, with
  ``--json PATH`` all of them.

``--redo STAGE`` runs a cached stage again. Run it from the repository root, niced::

    nice -n 19 python tests/office_sweep.py fetch translate check --json /work/runs/office-sweep/check.json

This is a script, not a test module: pytest collects nothing from it and importing it fetches nothing.
"""
from __future__ import annotations

import argparse
import fnmatch
import io
import json
import os
import posixpath
import random
import re
import resource
import shutil
import signal
import subprocess
import sys
import time
import zipfile
from collections import Counter, defaultdict
from dataclasses import dataclass
from pathlib import Path

if __package__ in (None, ""):  # run as a script: python tests/office_sweep.py STAGE ...
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    __package__ = "tests"

from .content_sweep import (BOOT, SweepError, fetch_deb, fetch_sdist, git_state, run, say, sha256,  # noqa: E402
                            tool, write_json)

REPO_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_CACHE = Path("/work/runs/office-sweep")
FORMATS = ("pptx", "xlsx", "odt", "ods", "odp", "epub")
TARGET = "de"
SEED = 1131
TEMPLATES = Path("/usr/lib/libreoffice/share/template")
PPTX_FILES = "features/steps/test_files"
READXL = "usr/lib/R/site-library/readxl"
OPENXLSX = "usr/lib/R/site-library/openxlsx"
ODFPY = "tests/examples"

SDISTS = {"python-pptx": "1.0.2", "odfpy": "1.4.1", "EbookLib": "0.18"}
DEBS = ("r-cran-readxl", "r-cran-openxlsx", "m4-doc")

# How a source becomes an input. COPY: as it is; MEMBER: a ZIP member of it (an embedded workbook);
# SOFFICE: converted by LibreOffice to ``arg`` (a --convert-to target), ``infilter`` naming the
# import filter where the extension does not; PANDOC: ``pandoc -f markdown -t arg --toc``.
COPY, MEMBER, SOFFICE, PANDOC = "copy", "member", "soffice", "pandoc"
IMPRESS_PPTX = "pptx:Impress MS PowerPoint 2007 XML"
CALC_XLSX = "xlsx:Calc Office Open XML"
CALC_HTML = "HTML (StarCalc)"
CSV_UTF8 = "CSV:44,34,76,1"  # comma, double quote, UTF-8, from line 1


@dataclass(frozen=True)
class Source:
    """One input: ``path`` inside ``origin`` ("sdist:NAME", "deb:NAME", or "installed" for an absolute
    path of this machine), made into a ``fmt`` file by ``make``."""

    fmt: str
    origin: str
    path: str
    make: str = COPY
    arg: str = ""
    infilter: str = ""


def _many(fmt: str, origin: str, folder: str, names: str, make: str = COPY, arg: str = "",
          infilter: str = "") -> list[Source]:
    return [Source(fmt, origin, f"{folder}/{name}" if folder else name, make, arg, infilter) for name in names.split()]


SOURCES: list[Source] = [
    # PPTX: python-pptx's PowerPoint-made test decks with text (links, fields, notes, charts, tables), a
    # macro-enabled deck; LibreOffice's presentation templates saved as PPTX by Impress.
    *_many("pptx", "sdist:python-pptx", PPTX_FILES,
           "act-props.pptm txt-text.pptx ph-inherit-props.pptx ext-rels.pptx tbl-cell.pptx cht-chart-type.pptx "
           "cht-series.pptx txt-paragraph-spacing.pptx txt-text-frame.pptx txt-font-props.pptx cht-datalabels.pptx "
           "dml-line.pptx prs-notes.pptx"),
    *_many("pptx", "installed", "", f"{TEMPLATES}/common/presnt/Freshes.otp {TEMPLATES}/common/presnt/Yellow_Idea.otp "
           f"{TEMPLATES}/en-US/presnt/debian-presentation.otp", SOFFICE, IMPRESS_PPTX),
    # XLSX: Excel-made workbooks of readxl and openxlsx; an embedded workbook of a PowerPoint chart; CSV
    # data, an HTML manual's tables and a Calc style template saved as XLSX by LibreOffice.
    *_many("xlsx", "deb:r-cran-readxl", f"{READXL}/extdata", "clippy.xlsx datasets.xlsx deaths.xlsx type-me.xlsx"),
    *_many("xlsx", "deb:r-cran-openxlsx", f"{OPENXLSX}/extdata",
           "loadExample.xlsx loadPivotTables.xlsx loadThreadComment.xlsx namedRegions.xlsx namedRegions2.xlsx "
           "groupTest.xlsx inlineStr.xlsx read_failure_test.xlsx readTest.xlsx"),
    Source("xlsx", "sdist:python-pptx", f"{PPTX_FILES}/cht-chart-type.pptx", MEMBER,
           "ppt/embeddings/Microsoft_Excel_Sheet1.xlsx"),
    Source("xlsx", "installed", "/usr/share/distro-info/debian.csv", SOFFICE, CALC_XLSX, CSV_UTF8),
    Source("xlsx", "installed", "/usr/share/doc/socat/socat-openssltunnel.html", SOFFICE, CALC_XLSX, CALC_HTML),
    Source("xlsx", "installed", f"{TEMPLATES}/common/wizard/styles/black_white.ots", SOFFICE, CALC_XLSX),
    # ODT: LibreOffice's letter, fax, agenda, report and CV templates as documents; odfpy's test
    # documents; m4's makeinfo manual pages converted by LibreOffice.
    *_many("odt", "installed", f"{TEMPLATES}/common",
           "officorr/Modern_business_letter_sans_serif.ott personal/CV.ott personal/Resume1page.ott "
           "wizard/agenda/3modern.ott wizard/fax/bus-classic_f.ott wizard/letter/off-office_l.ott "
           "wizard/report/cnt-04.ott", SOFFICE, "odt"),
    *_many("odt", "sdist:odfpy", ODFPY, "userfields.odt nasty.odt headerfooter.odt serious_poem.odt imageslabels.odt "
           "simpletable.odt definitionlists.odt twolevellist.odt simplelist.odt userfields_ooo3.odt"),
    *_many("odt", "deb:m4-doc", "usr/share/doc/m4", "Macro-Arguments.html Ifelse.html", SOFFICE, "odt"),
    # ODS: odfpy's spreadsheets; readxl's and openxlsx's workbooks, CSV data, HTML tables and a Calc
    # style template saved as ODS by LibreOffice.
    Source("ods", "sdist:odfpy", f"{ODFPY}/pythagoras.ods"),
    *_many("ods", "deb:r-cran-readxl", f"{READXL}/extdata", "deaths.xlsx type-me.xlsx datasets.xlsx clippy.xlsx",
           SOFFICE, "ods"),
    *_many("ods", "deb:r-cran-openxlsx", f"{OPENXLSX}/extdata", "loadExample.xlsx loadPivotTables.xlsx",
           SOFFICE, "ods"),
    Source("ods", "installed", "/usr/share/distro-info/ubuntu.csv", SOFFICE, "ods", CSV_UTF8),
    *_many("ods", "installed", "/usr/share/doc/socat", "socat-genericsocket.html socat-multicast.html socat-tun.html",
           SOFFICE, "ods", CALC_HTML),
    Source("ods", "installed", f"{TEMPLATES}/common/wizard/styles/nostalgic.ots", SOFFICE, "ods"),
    # ODP: LibreOffice's presentation templates with text, as presentations; odfpy's presentations;
    # python-pptx's decks imported by Impress.
    *_many("odp", "installed", f"{TEMPLATES}/common/presnt",
           "Candy.otp Grey_Elegant.otp Growing_Liberty.otp Blueprint_Plans.otp Vintage.otp Vivid.otp", SOFFICE, "odp"),
    Source("odp", "installed", f"{TEMPLATES}/en-US/presnt/debian-presentation.otp", SOFFICE, "odp"),
    *_many("odp", "sdist:odfpy", ODFPY, "ol.odp cols.odp emb_spreadsheet.odp"),
    *_many("odp", "sdist:python-pptx", PPTX_FILES, "tbl-cell.pptx cht-series.pptx txt-text.pptx", SOFFICE, "odp"),
    # EPUB: pandoc books of sdists' and R packages' Markdown docs (the /usr/share/doc READMEs are drawn below).
    Source("epub", "sdist:odfpy", "README.md", PANDOC),
    Source("epub", "sdist:EbookLib", "README.md", PANDOC),
    Source("epub", "deb:r-cran-readxl", f"{READXL}/NEWS.md", PANDOC),
    Source("epub", "deb:r-cran-openxlsx", f"{OPENXLSX}/NEWS.md", PANDOC),
]
DOC_MARKDOWN = 8                 # READMEs under /usr/share/doc drawn for EPUB
DOC_MARKDOWN_BYTES = (1_500, 25_000)
MIN_PER_FORMAT = 10


# ------------------------------------------------------------------------------------------- fetch
def installed_origin(path: Path) -> dict:
    """The Debian package that installed ``path`` and its version."""
    found = run(["dpkg", "-S", str(path)], check=False).stdout.strip()
    package = found.split(":")[0].split(",")[0].strip() if found else "?"
    version = run(["dpkg-query", "-W", "-f", "${Version}", package], check=False).stdout.strip() if found else "?"
    return {"source": "installed", "package": package, "version": version or "?"}


def doc_markdown(taken: set[str]) -> list[Path]:
    """A seeded draw of self-contained Markdown files under /usr/share/doc (no images, no links to
    other files: tests/test_epub_format.py's rule), within DOC_MARKDOWN_BYTES, one per package."""
    from .test_epub_format import self_contained

    low, high = DOC_MARKDOWN_BYTES
    pool = sorted(p for p in Path("/usr/share/doc").rglob("*.md") if p.is_file() and not p.is_symlink()
                  and low <= p.stat().st_size < high and not any(fnmatch.fnmatchcase(p.parts[4], g) for g in
                                                                  ("gimp-help*", "kicad-doc*", "debian-faq*",
                                                                   "lilypond-doc*", "linuxcnc-doc*")))
    random.Random(f"{SEED}:doc-markdown").shuffle(pool)
    chosen, packages = [], set()
    for path in pool:
        package = path.parts[4]
        if package in packages or str(path) in taken:
            continue
        if self_contained(path):
            chosen.append(path)
            packages.add(package)
        if len(chosen) >= DOC_MARKDOWN:
            break
    return chosen


def soffice(files: list[Path], target: str, outdir: Path, profile: Path, infilter: str = "",
            timeout: float = 900) -> dict[Path, Path]:
    """One headless LibreOffice converting ``files`` to ``target`` in ``outdir``: {file: output} for
    those it wrote. Its process group is killed if it outlives the timeout."""
    outdir.mkdir(parents=True, exist_ok=True)
    command = [tool("soffice"), f"-env:UserInstallation={profile.resolve().as_uri()}", "--headless", "--norestore"]
    if infilter:
        command.append(f"--infilter={infilter}")
    process = subprocess.Popen([*command, "--convert-to", target, "--outdir", str(outdir), *map(str, files)],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        _, err = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.communicate()
        raise SweepError(f"soffice --convert-to {target} timed out") from None
    if process.returncode != 0:
        raise SweepError(f"soffice --convert-to {target}: exit {process.returncode}: {err[-1500:]}")
    extension = target.split(":")[0]
    written = {path: outdir / f"{path.stem}.{extension}" for path in files}
    return {path: out for path, out in written.items() if out.exists() and out.stat().st_size > 0}


def input_name(number: int, package: str, path: str, ext: str) -> str:
    stem = Path(path).name.rsplit(".", 1)[0]
    return re.sub(r"[^\w.-]", "_", f"{number:03d}-{package}-{stem}{ext}")


def tool_versions() -> dict[str, str]:
    def first_line(args: list[str]) -> str:
        try:
            return (run(args, check=False, timeout=120).stdout.strip().splitlines() or ["?"])[0]
        except (SweepError, FileNotFoundError, subprocess.TimeoutExpired):
            return "?"
    return {"libreoffice": first_line([tool("soffice"), "--version"]),
            "pandoc": first_line([tool("pandoc"), "--version"]),
            "epubcheck": first_line(["dpkg-query", "-W", "-f", "${Version}", "epubcheck"]),
            "python": sys.version.split()[0]}


def fetch_stage(cache: Path) -> list[dict]:
    """Download, unpack, make the inputs; write CACHE/manifest.json."""
    roots: dict[str, tuple[Path, dict]] = {}
    for name in DEBS:
        root, version, deb = fetch_deb(name, cache)
        roots[f"deb:{name}"] = (root, {"source": "deb", "package": name, "version": version,
                                       "archive": str(deb.relative_to(cache))})
        say(f"fetch: deb {name} {version}")
    for name, version in SDISTS.items():
        root, archive = fetch_sdist(name, version, cache)
        roots[f"sdist:{name}"] = (root, {"source": "sdist", "package": name, "version": version,
                                         "archive": str(archive.relative_to(cache))})
        say(f"fetch: sdist {name}=={version}")
    inputs, made = cache / "in", cache / "made"
    for folder in (inputs, made):
        shutil.rmtree(folder, ignore_errors=True)
    sources = list(SOURCES)
    drawn = doc_markdown({s.path for s in sources})
    sources += [Source("epub", "installed", str(p), PANDOC) for p in drawn]
    sources.sort(key=lambda s: FORMATS.index(s.fmt))
    entries: list[dict] = []
    batches: dict[tuple[str, str], list[tuple[Path, dict]]] = defaultdict(list)
    epub_count = 0
    for number, src in enumerate(sources, 1):
        if src.origin == "installed":
            path = Path(src.path)
            origin = {**installed_origin(path), "path": src.path}
        else:
            root, base = roots[src.origin]
            path = root / src.path
            origin = {**base, "path": src.path}
        if not path.is_file():
            say(f"fetch: missing {path}: left out")
            continue
        ext = {"pptx": Path(src.path).suffix if src.make == COPY else ".pptx"}.get(src.fmt, f".{src.fmt}")
        target = inputs / src.fmt / input_name(number, origin["package"], src.path, ext)
        target.parent.mkdir(parents=True, exist_ok=True)
        entry = {"file": str(target.relative_to(cache)), "format": src.fmt, "origin": origin}
        if src.make == COPY:
            shutil.copyfile(path, target)
            entry["made"] = "copy"
        elif src.make == MEMBER:
            with zipfile.ZipFile(path) as archive:
                target.write_bytes(archive.read(src.arg))
            entry["made"] = f"the ZIP member {src.arg}"
        elif src.make == PANDOC:
            version = "epub3" if epub_count % 2 == 0 else "epub2"
            epub_count += 1
            title = f"{origin['package']} {Path(src.path).stem}"
            run([tool("pandoc"), path, "-f", "markdown", "-t", version, "-o", target, "-M", "lang=en",
                 "-M", f"title={title}", "-M", f"description=The {Path(src.path).name} of {origin['package']}.",
                 "--toc"], timeout=300)
            entry["made"] = f"pandoc -f markdown -t {version} --toc -M lang=en -M title='{title}'"
        else:  # SOFFICE: copied under a unique name, converted in batches by target and import filter
            staged = made / "stage" / f"{target.stem}{path.suffix}"
            staged.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, staged)
            entry["made"] = ("LibreOffice: soffice --headless"
                             + (f" --infilter='{src.infilter}'" if src.infilter else "") + f" --convert-to '{src.arg}'")
            batches[(src.arg, src.infilter)].append((staged, entry))
            continue
        entries.append(entry)
    for (target_filter, infilter), group in batches.items():
        folder = made / re.sub(r"\W+", "_", f"{target_filter}-{infilter}")
        converted = soffice([p for p, _ in group], target_filter, folder, made / "profile", infilter)
        for staged, entry in group:
            if staged in converted:
                shutil.copyfile(converted[staged], cache / entry["file"])
                entries.append(entry)
            else:
                say(f"fetch: LibreOffice wrote nothing for {entry['origin']['path']} ({target_filter})")
    for entry in entries:
        data = (cache / entry["file"]).read_bytes()
        entry["bytes"], entry["sha256"] = len(data), sha256(data)
    entries.sort(key=lambda e: (FORMATS.index(e["format"]), e["file"]))
    per_format = Counter(e["format"] for e in entries)
    manifest = {"seed": SEED, "made": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "tools": tool_versions(),
                "files_per_format": {fmt: per_format[fmt] for fmt in FORMATS}, "files": entries}
    write_json(cache / "manifest.json", manifest)
    short = [fmt for fmt in FORMATS if per_format[fmt] < MIN_PER_FORMAT]
    say(f"fetch: {len(entries)} files: " + ", ".join(f"{fmt} {per_format[fmt]}" for fmt in FORMATS)
        + (f" (fewer than {MIN_PER_FORMAT}: {', '.join(short)})" if short else ""))
    return entries


# ------------------------------------------------------------------------------------------- translate
def load_manifest(cache: Path) -> dict:
    path = cache / "manifest.json"
    if not path.exists():
        raise SweepError(f"no {path}: run the fetch stage first")
    return json.loads(path.read_text(encoding="utf-8"))


def format_digest(manifest: dict, fmt: str) -> str:
    return sha256(json.dumps([(e["file"], e["sha256"]) for e in manifest["files"] if e["format"] == fmt]).encode())


def translate_stage(cache: Path, label: str, code: Path, bundle: Path, redo: bool, timeout: float) -> dict:
    """One ``nmt translate`` per format of CACHE/in/FORMAT into CACHE/out/LABEL/FORMAT."""
    manifest = load_manifest(cache)
    if not (code / "nmt" / "cli.py").is_file():
        raise SweepError(f"--code {code}: not a checkout of this project (no nmt/cli.py)")
    if not (bundle / "manifest.json").is_file():
        raise SweepError(f"--bundle {bundle}: no manifest.json")
    records = {}
    for fmt in FORMATS:
        files = [e for e in manifest["files"] if e["format"] == fmt]
        if not files:
            continue
        out = cache / "out" / label / fmt
        record_path = out / "run.json"
        if not redo and record_path.exists():
            record = json.loads(record_path.read_text(encoding="utf-8"))
            if (record.get("manifest"), record.get("code"), record.get("bundle")) == (
                    format_digest(manifest, fmt), str(code), str(bundle)):
                say(f"translate: {label} {fmt}: cached ({record['seconds']:.0f} s)")
                records[fmt] = {**record, "_cached": True}
                continue
        shutil.rmtree(out, ignore_errors=True)
        out.mkdir(parents=True)
        arguments = ["translate", "--bundle", str(bundle), "--device", "cpu", "--threads", "1", "--batch-workers", "1",
                     "--force", str(cache / "in" / fmt), "--out", str(out)]
        env = {**os.environ, "PYTHONPATH": str(code), "OMP_NUM_THREADS": "1"}
        env.pop("PYTHONHOME", None)
        started, before = time.monotonic(), resource.getrusage(resource.RUSAGE_CHILDREN)
        done = subprocess.run([sys.executable, "-c", BOOT, str(code), *arguments], cwd=code, env=env,
                              capture_output=True, text=True, errors="replace", timeout=timeout)
        seconds = time.monotonic() - started
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
        (out / "translate.log").write_text(done.stdout + "\n--- stderr\n" + done.stderr, encoding="utf-8")
        where = re.search(r"content-sweep code: nmt=(\S+) worker=(\S+)", done.stderr)
        foreign = re.search(r"content-sweep foreign modules: (\[.*\])", done.stderr)
        summary = [line for line in done.stderr.splitlines() if line.startswith("nmt translate:")
                   and ("files:" in line or "segments" in line)]
        record = {"label": label, "format": fmt, "files": len(files), "code": str(code), "git": git_state(code),
                  "bundle": str(bundle),
                  "command": f"cd {code} && PYTHONPATH={code} nice -n 19 {sys.executable} -m nmt "
                             + " ".join(arguments),
                  "worker_file": where.group(2) if where else None,
                  "foreign_modules": json.loads(foreign.group(1).replace("'", '"')) if foreign else None,
                  "returncode": done.returncode, "seconds": round(seconds, 1), "cpu_seconds": round(cpu, 1),
                  "summary": summary, "failed_files": re.findall(r"^nmt translate: (?:failed|skipped) (.*)$",
                                                                  done.stderr, re.M),
                  "warnings": len(re.findall(r": warning: ", done.stderr)),
                  "manifest": format_digest(manifest, fmt)}
        write_json(record_path, record)
        records[fmt] = record
        say(f"translate: {label} {fmt}: {len(files)} files, exit {done.returncode} in {seconds:.0f} s "
            f"({cpu:.0f} CPU s); " + " | ".join(summary))
        if where is None or not str(Path(where.group(2)).resolve()).startswith(str(code.resolve()) + os.sep):
            raise SweepError(f"the translation did not run {code}'s code: see {out / 'translate.log'}")
        if record["foreign_modules"]:
            raise SweepError(f"project modules imported from outside {code}: {record['foreign_modules']}")
    return records


def output_of(out: Path, relative: str) -> Path | None:
    path = Path(relative).relative_to("in")
    expected = out / path.parent / f"{path.stem}.{TARGET}{path.suffix}"
    return expected if expected.exists() else None


# ------------------------------------------------------------------------------------------- check: tools
LETTER = re.compile(r"[^\W\d_]")
DIGIT = re.compile(r"\d")


def has_words(text: str | None) -> bool:
    return bool(text and LETTER.search(text))


def numbers_only(text: str | None) -> bool:
    """Text of digits with no letter at all (``2019``, ``3.5 %``): it has nothing to translate."""
    return bool(text and DIGIT.search(text) and not LETTER.search(text))


def zip_entries(data: bytes) -> dict[str, bytes]:
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        return {info.filename: archive.read(info) for info in archive.infolist()}


def c14n(element) -> bytes:
    from lxml import etree
    return etree.tostring(element, method="c14n", exclusive=True, with_tail=False)


class Findings:
    """What one file's check found, by kind: ``add(kind, where, detail)``."""

    KINDS = ("reopen", "number", "formula", "field", "link", "text_lost", "count", "package")

    def __init__(self) -> None:
        self.items: list[dict] = []
        self.notes: list[str] = []  # what is no finding but worth knowing (a library refuses the source too)

    def add(self, kind: str, where: str, detail: str) -> None:
        assert kind in self.KINDS, kind
        self.items.append({"kind": kind, "where": where, "detail": detail[:400]})

    def kinds(self) -> Counter:
        return Counter(item["kind"] for item in self.items)


def library_refuses(load, source: bytes, out: bytes, library: str, found: Findings) -> bool | str:
    """Whether ``library`` fails to load the output (a finding; True), or the source as well (the
    message, noted: not the translation's doing; the caller compares what it can); False: both load."""
    try:
        load(source)
        source_error = None
    except Exception as exc:  # noqa: BLE001 - whatever the library refuses
        source_error = f"{type(exc).__name__}: {exc}"
    try:
        load(out)
    except Exception as exc:  # noqa: BLE001
        error = f"{type(exc).__name__}: {exc}"
        if error == source_error:
            found.notes.append(f"{library} refuses the source too: {error[:200]}")
            return error
        found.add("reopen", library, error + (f" (the source: {source_error})" if source_error else ""))
        return True
    return False


def same_entries(source: bytes, out: bytes, rewritten, found: Findings) -> None:
    """The output has the source's ZIP entries in its order; every entry ``rewritten`` does not match is
    byte for byte the source's."""
    a, b = zip_entries(source), zip_entries(out)
    if list(a) != list(b):
        found.add("package", "entries", f"lost {sorted(set(a) - set(b))[:5]}, new {sorted(set(b) - set(a))[:5]}, "
                  f"order {'same' if [n for n in a if n in b] == [n for n in b if n in a] else 'changed'}")
    for name in a:
        if name in b and a[name] != b[name] and not rewritten(name):
            found.add("package", name, "an entry the writer should not touch changed")


# ------------------------------------------------------------------------------------------- check: PPTX
A = "http://schemas.openxmlformats.org/drawingml/2006/main"
C = "http://schemas.openxmlformats.org/drawingml/2006/chart"
R_ID = "{http://schemas.openxmlformats.org/officeDocument/2006/relationships}id"
PPTX_TEXT_PARTS = re.compile(r"ppt/(slides/slide|notesSlides/notesSlide|slideLayouts/slideLayout"
                             r"|slideMasters/slideMaster|charts/chart|diagrams/(data|drawing))\d*\.xml$")
PPTX_EMBEDDED = re.compile(r"ppt/embeddings/[^/]+\.xls[xm]$")  # a chart's workbook: its labels follow the chart's


def _rels(entries: dict[str, bytes], part: str) -> dict[str, str]:
    from lxml import etree
    folder, name = part.rsplit("/", 1)
    data = entries.get(f"{folder}/_rels/{name}.rels")
    if data is None:
        return {}
    return {r.get("Id"): f"{r.get('TargetMode') or ''}:{r.get('Target')}" for r in etree.fromstring(data)}


def _drawing_paragraph(p, rels: dict[str, str]) -> dict:
    """A DrawingML paragraph: its text, fields, link groups (consecutive runs with one link) and text."""
    text, fields, links = [], Counter(), []
    for child in p:
        local = child.tag.rsplit("}", 1)[-1]
        if local not in ("r", "fld"):
            continue
        t = "".join(x.text or "" for x in child.iter(f"{{{A}}}t"))
        if local == "fld":
            fields[c14n(child)] += 1
        else:
            text.append(t)
        click = child.find(f"{{{A}}}rPr/{{{A}}}hlinkClick")
        target = None
        if click is not None:
            target = rels.get(click.get(R_ID), f"?{click.get(R_ID)}")
            target += f" {click.get('action')}" if click.get("action") else ""
        if target is not None and links and links[-1][0] == target and links[-1][2]:
            links[-1][1] += t
        elif target is not None:
            links.append([target, t, True])
        elif links:
            links[-1][2] = False  # a run without a link ends the group
    return {"text": "".join(text), "all": "".join(x.text or "" for x in p.iter(f"{{{A}}}t")), "fields": fields,
            "links": [(target, t) for target, t, _ in links]}


def check_chart_workbooks(source: bytes, out: bytes, found: Findings) -> None:
    """Each embedded workbook the writer changed passes the workbook check (numbers and formulas
    byte for byte, no text lost), and each chart's cached labels equal the cells its ``c:f`` names."""
    import openpyxl
    from lxml import etree

    a, b = zip_entries(source), zip_entries(out)
    for name in [n for n in a if PPTX_EMBEDDED.match(n) and n in b and a[n] != b[n]]:
        inner = Findings()
        check_xlsx(a[name], b[name], inner)
        for item in inner.items:
            found.add(item["kind"], f"{name} {item['where']}", item["detail"])
    for chart in [n for n in b if re.match(r"ppt/charts/chart\d*\.xml$", n)]:
        target = next((t.split(":", 1)[1] for t in _rels(b, chart).values()
                       if PPTX_EMBEDDED.match(posixpath.normpath(posixpath.join("ppt/charts", t.split(":", 1)[1])))),
                      None)
        if target is None:
            continue
        target = posixpath.normpath(posixpath.join("ppt/charts", target))
        if a.get(target) == b.get(target):
            continue
        book = openpyxl.load_workbook(io.BytesIO(b[target]))
        for ref in etree.fromstring(b[chart]).iter(f"{{{C}}}strRef"):
            formula = ref.findtext(f"{{{C}}}f") or ""
            match = re.fullmatch(r"'?(.+?)'?!\$?([A-Z]+)\$?(\d+)(?::\$?([A-Z]+)\$?(\d+))?", formula)
            if match is None or match.group(1) not in book.sheetnames:
                continue
            sheet, first = book[match.group(1)], f"{match.group(2)}{match.group(3)}"
            cells = [c for row in sheet[f"{first}:{match.group(4) or match.group(2)}{match.group(5) or match.group(3)}"]
                     for c in (row if isinstance(row, tuple) else (row,))]
            for point in ref.iter(f"{{{C}}}pt"):
                k, v = int(point.get("idx", "0")), point.findtext(f"{{{C}}}v")
                if k < len(cells) and isinstance(cells[k].value, str) and cells[k].value != v:
                    found.add("count", f"{chart} {formula}",
                              f"cached label {v!r}, workbook cell {cells[k].value!r}")


def check_pptx(source: bytes, out: bytes, found: Findings) -> dict:
    import pptx
    from lxml import etree

    same_entries(source, out, lambda name: PPTX_TEXT_PARTS.match(name) is not None
                 or PPTX_EMBEDDED.match(name) is not None, found)
    check_chart_workbooks(source, out, found)
    refused = library_refuses(lambda data: pptx.Presentation(io.BytesIO(data)), source, out, "python-pptx", found)
    if refused:
        return {}
    try:
        before, after = pptx.Presentation(io.BytesIO(source)), pptx.Presentation(io.BytesIO(out))
        shapes_after = [_shape_list(slide) for slide in after.slides]
        for slide in after.slides:  # every text python-pptx can reach, notes too
            if slide.has_notes_slide:
                _ = slide.notes_slide.notes_text_frame.text if slide.notes_slide.notes_text_frame else None
    except Exception as exc:  # noqa: BLE001 - the library refuses the file
        found.add("reopen", "python-pptx", f"{type(exc).__name__}: {exc}")
        return {}
    shapes_before = [_shape_list(slide) for slide in before.slides]
    if len(shapes_before) != len(shapes_after):
        found.add("count", "slides", f"{len(shapes_before)} -> {len(shapes_after)}")
    for k, (x, y) in enumerate(zip(shapes_before, shapes_after), 1):
        if x != y:
            found.add("count", f"slide {k}", f"shapes/paragraphs {x} -> {y}")
    a, b = zip_entries(source), zip_entries(out)
    paragraphs = links = fields = 0
    for part in [n for n in a if PPTX_TEXT_PARTS.match(n) and n in b]:
        old, new = etree.fromstring(a[part]), etree.fromstring(b[part])
        rels_a, rels_b = _rels(a, part), _rels(b, part)
        ps_old, ps_new = list(old.iter(f"{{{A}}}p")), list(new.iter(f"{{{A}}}p"))
        if len(ps_old) != len(ps_new):
            found.add("count", part, f"paragraphs {len(ps_old)} -> {len(ps_new)}")
            continue
        for k, (p, q) in enumerate(zip(ps_old, ps_new), 1):
            x, y = _drawing_paragraph(p, rels_a), _drawing_paragraph(q, rels_b)
            where = f"{part} paragraph {k}"
            paragraphs += bool(x["all"].strip())
            fields += sum(x["fields"].values())
            links += len(x["links"])
            if x["fields"] != y["fields"]:
                found.add("field", where, f"{_short(x['fields'])} -> {_short(y['fields'])}")
            if [t for t, _ in x["links"]] != [t for t, _ in y["links"]]:
                found.add("link", where, f"targets {[t for t, _ in x['links']]} -> {[t for t, _ in y['links']]} "
                          f"({x['all']!r} -> {y['all']!r})")
            else:
                for (target, t_old), (_, t_new) in zip(x["links"], y["links"]):
                    if t_old.strip() and not t_new.strip():
                        found.add("link", where, f"link {target} lost its text {t_old!r} ({y['all']!r})")
            if has_words(x["all"]) and not has_words(y["all"]):
                found.add("text_lost", where, f"{x['all']!r} -> {y['all']!r}")
            elif numbers_only(x["all"]) and x["all"] != y["all"]:
                found.add("number", where, f"{x['all']!r} -> {y['all']!r}")
        # shape-level links (a:hlinkClick outside runs) and a chart's numbers, formulas and cached labels
        for tag, kind in ((f"{{{A}}}hlinkClick", "link"), (f"{{{C}}}numCache", "number"), (f"{{{C}}}numLit", "number"),
                          (f"{{{C}}}f", "formula")):
            xs = [c14n(e) for e in old.iter(tag) if kind != "link" or e.getparent().tag != f"{{{A}}}rPr"]
            ys = [c14n(e) for e in new.iter(tag) if kind != "link" or e.getparent().tag != f"{{{A}}}rPr"]
            if xs != ys:
                differ = sum(u != v for u, v in zip(xs, ys))
                found.add(kind, part, f"{tag.rsplit('}', 1)[1]}: {len(xs)} elements, {differ} differ, {len(ys)} after")
        for tag in (f"{{{C}}}strCache", f"{{{C}}}strLit"):
            for cache_old, cache_new in zip(old.iter(tag), new.iter(tag)):
                vs_old = [v.text for v in cache_old.iter(f"{{{C}}}v")]
                vs_new = [v.text for v in cache_new.iter(f"{{{C}}}v")]
                if len(vs_old) != len(vs_new):
                    found.add("count", part, f"chart labels {len(vs_old)} -> {len(vs_new)}")
                for u, v in zip(vs_old, vs_new):
                    if has_words(u) and not has_words(v):
                        found.add("text_lost", part, f"chart label {u!r} -> {v!r}")
                    elif numbers_only(u) and u != v:
                        found.add("number", part, f"chart label {u!r} -> {v!r}")
    return {"slides": len(shapes_before), "paragraphs": paragraphs, "links": links, "fields": fields}


def _shape_list(slide) -> list[tuple]:
    """Each shape of a slide (groups' shapes too): its type and how many paragraphs its text has."""
    return [(s.shape_type, s.has_text_frame and len(s.text_frame.paragraphs)) for s in _all_shapes(slide.shapes)]


def _all_shapes(shapes):
    for shape in shapes:
        yield shape
        if shape.shape_type == 6:  # MSO_SHAPE_TYPE.GROUP
            yield from _all_shapes(shape.shapes)


def _short(counter: Counter) -> str:
    return str([(k.decode("utf-8", "replace")[:120], n) for k, n in counter.items()])


# ------------------------------------------------------------------------------------------- check: XLSX
S = "http://schemas.openxmlformats.org/spreadsheetml/2006/main"
XLSX_TEXT_PARTS = re.compile(r"xl/(worksheets/sheet\d+\.xml|sharedStrings\.xml|comments\d*\.xml"
                             r"|comments/comment\d+\.xml|threadedComments/threadedComment\d+\.xml)$")
CELL = re.compile(r"<(?:[A-Za-z_][\w.-]*:)?c(?=[\s/>])[^>]*?(?:/>|>.*?</(?:[A-Za-z_][\w.-]*:)?c\s*>)", re.S)
SHEET_DATA = re.compile(r"<(?:[A-Za-z_][\w.-]*:)?sheetData\b.*?(?:</(?:[A-Za-z_][\w.-]*:)?sheetData>|/>)", re.S)


def _cell_ref(cell: str) -> str:
    found = re.search(r'\sr="([^"]+)"', cell.split(">", 1)[0])
    return found.group(1) if found else "?"


def _cell_type(cell: str) -> str | None:
    found = re.search(r'\st="([^"]+)"', cell.split(">", 1)[0])
    return found.group(1) if found else None


def _xml_text(fragment: str) -> str:
    from lxml import etree
    try:
        root = etree.fromstring(f'<x xmlns="{S}">{fragment}</x>'.encode("utf-8"))
    except etree.XMLSyntaxError:
        return re.sub(r"<[^>]+>", "", fragment)
    return "".join(t.text or "" for t in root.iter(f"{{{S}}}t") if t.getparent().tag != f"{{{S}}}rPh")


def check_xlsx(source: bytes, out: bytes, found: Findings) -> dict:
    import openpyxl
    from lxml import etree

    same_entries(source, out, lambda name: XLSX_TEXT_PARTS.match(name) is not None, found)

    def load(data: bytes):
        book = openpyxl.load_workbook(io.BytesIO(data))
        for sheet in book.worksheets:
            for _ in sheet.iter_rows(values_only=True):
                pass
        return book

    source_refused = library_refuses(load, source, out, "openpyxl", found)
    if source_refused is True:
        return {}
    a, b = zip_entries(source), zip_entries(out)
    cells = kept = strings = 0
    kinds = Counter()  # cells that are no inline string: formulas, numbers (dates, booleans...), shared strings
    for part in sorted(n for n in a if re.match(r"xl/worksheets/sheet\d+\.xml$", n) and n in b):
        old, new = a[part].decode("utf-8"), b[part].decode("utf-8")
        if SHEET_DATA.sub("", old) != SHEET_DATA.sub("", new):
            found.add("package", part, "the sheet changed outside its cells (hyperlinks, merges, validation...)")
        xs, ys = CELL.findall(old), CELL.findall(new)
        if [_cell_ref(x) for x in xs] != [_cell_ref(y) for y in ys]:
            found.add("count", part, f"cells {len(xs)} -> {len(ys)}")
            continue
        cells += len(xs)
        for x, y in zip(xs, ys):
            where = f"{part} {_cell_ref(x)}"
            if _cell_type(x) == "inlineStr":
                strings += 1
                if _cell_type(y) != "inlineStr":
                    found.add("count", where, f"an inline string became {y[:200]!r}")
                elif has_words(_xml_text(x)) and not has_words(_xml_text(y)):
                    found.add("text_lost", where, f"{_xml_text(x)!r} -> {_xml_text(y)!r}")
                elif numbers_only(_xml_text(x)) and _xml_text(x) != _xml_text(y):
                    found.add("number", where, f"{_xml_text(x)!r} -> {_xml_text(y)!r}")
                continue
            kept += 1
            kind = "formula" if re.search(r"<(?:\w+:)?f[\s>/]", x) else "number" if _cell_type(x) != "s" else "string"
            kinds[kind] += 1
            if x != y:
                found.add(kind if kind != "string" else "count", where, f"{x[:200]} -> {y[:200]}")
    if "xl/sharedStrings.xml" in a:
        old, new = etree.fromstring(a["xl/sharedStrings.xml"]), etree.fromstring(b["xl/sharedStrings.xml"])
        xs, ys = list(old.iter(f"{{{S}}}si")), list(new.iter(f"{{{S}}}si"))
        if len(xs) != len(ys):
            found.add("count", "xl/sharedStrings.xml", f"strings {len(xs)} -> {len(ys)}")
        for k, (x, y) in enumerate(zip(xs, ys)):
            tx = "".join(t.text or "" for t in x.iter(f"{{{S}}}t") if t.getparent().tag != f"{{{S}}}rPh")
            ty = "".join(t.text or "" for t in y.iter(f"{{{S}}}t") if t.getparent().tag != f"{{{S}}}rPh")
            strings += 1
            if has_words(tx) and not has_words(ty):
                found.add("text_lost", f"shared string {k}", f"{tx!r} -> {ty!r}")
            elif numbers_only(tx) and tx != ty:
                found.add("number", f"shared string {k}", f"{tx!r} -> {ty!r}")
    comments = 0
    for part in sorted(n for n in a if re.match(r"xl/(comments|threadedComments).*\.xml$", n) and n in b):
        old, new = etree.fromstring(a[part]), etree.fromstring(b[part])
        xs = [e for e in old.iter() if etree.QName(e).localname in ("comment", "threadedComment")]
        ys = [e for e in new.iter() if etree.QName(e).localname in ("comment", "threadedComment")]
        if [e.get("ref") for e in xs] != [e.get("ref") for e in ys]:
            found.add("count", part, f"comments {len(xs)} -> {len(ys)}")
        for x, y in zip(xs, ys):
            comments += 1
            tx, ty = "".join(x.itertext()), "".join(y.itertext())
            if has_words(tx) and not has_words(ty):
                found.add("text_lost", f"{part} {x.get('ref')}", f"{tx!r} -> {ty!r}")
    if source_refused:  # openpyxl refuses the source as well: no sheet-level comparison
        return {"sheets": 0, "cells": cells, "kept_cells": kept, "formula_cells": kinds["formula"],
                "number_cells": kinds["number"], "strings": strings, "comments": comments, "links": 0}
    before, after = load(source), load(out)
    if before.sheetnames != after.sheetnames:
        found.add("count", "sheets", f"{before.sheetnames} -> {after.sheetnames}")
    hyperlinks = 0
    for old, new in zip(before.worksheets, after.worksheets):
        xs, ys = _hyperlinks(old), _hyperlinks(new)
        hyperlinks += len(xs)
        if xs != ys:
            found.add("link", old.title, f"{xs[:3]} -> {ys[:3]}")
        for coordinate, *_ in xs:
            if isinstance(old[coordinate].value, str) and old[coordinate].value.strip() and not (
                    isinstance(new[coordinate].value, str) and new[coordinate].value.strip()):
                found.add("link", f"{old.title}!{coordinate}",
                          f"link text {old[coordinate].value!r} -> {new[coordinate].value!r}")
    return {"sheets": len(before.sheetnames), "cells": cells, "kept_cells": kept, "formula_cells": kinds["formula"],
            "number_cells": kinds["number"], "strings": strings, "comments": comments, "links": hyperlinks}


def _hyperlinks(sheet) -> list[tuple]:
    return [(c.coordinate, c.hyperlink.target, c.hyperlink.location) for row in sheet.iter_rows() for c in row
            if c.hyperlink]


# ------------------------------------------------------------------------------------------- check: ODF
ODF_STRUCTURE = {"span", "a", "meta", "s", "tab", "line-break", "soft-page-break"}
ODF_MARKS = ("bookmark", "bookmark-start", "bookmark-end", "reference-mark", "reference-mark-start",
             "reference-mark-end", "change", "change-start", "change-end", "alphabetical-index-mark",
             "alphabetical-index-mark-start", "alphabetical-index-mark-end", "toc-mark", "toc-mark-start",
             "toc-mark-end")


def _odf_own(p):
    """A paragraph's own descendants: not those of its notes' bodies, its frames or its comments."""
    from .test_odf_format import q
    stop = {q("text:note-body"), q("office:annotation")}
    for child in p:
        if not isinstance(child.tag, str):
            continue
        yield child
        if child.tag in stop or child.tag.startswith(f"{{{_odf_uri('draw')}}}"):
            continue
        yield from _odf_own(child)


def _odf_uri(prefix: str) -> str:
    from .test_odf_format import URI
    return URI[prefix]


def _odf_paragraph(p) -> dict:
    """Fields (text fields, presentation fields), marks, links (target and text), frames and the
    paragraph's own text (fields', notes' and frames' text left out)."""
    from .test_odf_format import q
    fields, marks, frames, links = Counter(), Counter(), Counter(), []
    text_ns, presentation_ns = _odf_uri("text"), _odf_uri("presentation")
    for e in _odf_own(p):
        ns, _, local = e.tag[1:].partition("}")
        if e.tag == q("text:a"):
            links.append((e.get(q("xlink:href")), "".join(_odf_text(e))))
        elif ns == text_ns and local in ODF_STRUCTURE:
            continue
        elif ns == text_ns and local in ODF_MARKS or e.tag in (q("office:annotation"), q("office:annotation-end")):
            marks[c14n(e)] += 1
        elif ns == text_ns and local.startswith("note"):
            if local == "note-citation":
                marks[c14n(e)] += 1
        elif ns in (text_ns, presentation_ns):
            fields[c14n(e)] += 1
        elif ns == _odf_uri("draw"):
            frames[local] += 1
    return {"fields": fields, "marks": marks, "frames": frames, "links": links, "text": "".join(_odf_text(p))}


def _odf_text(element):
    """The text an element shows itself: its spans' and links' text, not its fields' or notes'."""
    from .test_odf_format import q
    yield element.text or ""
    for child in element:
        if not isinstance(child.tag, str):
            yield child.tail or ""
            continue
        if child.tag in (q("text:span"), q("text:a"), q("text:meta")):
            yield from _odf_text(child)
        elif child.tag in (q("text:s"), q("text:tab"), q("text:line-break")):
            yield " "
        yield child.tail or ""


def check_odf(kind: str, source: bytes, out: bytes, found: Findings) -> dict:
    from lxml import etree

    from .test_odf_format import keyed, q

    same_entries(source, out, lambda name: name in ("content.xml", "styles.xml", "meta.xml"), found)
    with zipfile.ZipFile(io.BytesIO(out)) as archive:
        first = archive.infolist()[0]
        if first.filename != "mimetype" or first.compress_type != zipfile.ZIP_STORED or out[30:38] != b"mimetype":
            found.add("reopen", "mimetype", "the mimetype entry is not first and stored")
        if archive.testzip() is not None:
            found.add("reopen", "zip", f"bad CRC in {archive.testzip()}")
    a, b = zip_entries(source), zip_entries(out)
    safe = etree.XMLParser(resolve_entities=False, load_dtd=False, no_network=True, huge_tree=True)
    for name in b:
        if name.endswith(".xml") and name in a and a[name].strip():  # every XML part the source has, well-formed
            try:
                etree.fromstring(a[name], safe)
            except etree.XMLSyntaxError:
                continue
            try:
                etree.fromstring(b[name], safe)
            except etree.XMLSyntaxError as exc:
                found.add("reopen", name, f"not well-formed (the source's is): {exc}")
                return {}
    stats = Counter()
    for part in ("content.xml", "styles.xml"):
        if part not in a or part not in b:
            continue
        old, new = etree.fromstring(a[part], safe), etree.fromstring(b[part], safe)  # no entity resolved (nasty.odt)
        before, after = keyed(old), keyed(new)
        if before.keys() != after.keys():
            lost, new_keys = sorted(set(before) - set(after), key=str), sorted(set(after) - set(before), key=str)
            found.add("count", part,
                      f"paragraphs {len(before)} -> {len(after)} (keys lost {lost[:3]}, new {new_keys[:3]})")
        for key in [k for k in before if k in after]:
            number, p = before[key]
            x, y = _odf_paragraph(p), _odf_paragraph(after[key][1])
            where = f"{part} paragraph {number}"
            stats["paragraphs"] += has_words(x["text"])
            stats["fields"] += sum(x["fields"].values())
            stats["links"] += len(x["links"])
            if x["fields"] != y["fields"]:
                found.add("field", where, f"{_short(x['fields'] - y['fields'])} -> {_short(y['fields'] - x['fields'])}")
            if x["marks"] != y["marks"] or x["frames"] != y["frames"]:
                found.add("count", where, f"marks/frames {_short(x['marks'] - y['marks'])} {dict(x['frames'])} -> "
                          f"{_short(y['marks'] - x['marks'])} {dict(y['frames'])}")
            if [t for t, _ in x["links"]] != [t for t, _ in y["links"]]:
                found.add("link", where, f"targets {[t for t, _ in x['links']]} -> {[t for t, _ in y['links']]} "
                          f"({x['text'][:150]!r} -> {y['text'][:150]!r})")
            else:
                for (target, t_old), (_, t_new) in zip(x["links"], y["links"]):
                    if t_old.strip() and not t_new.strip():
                        found.add("link", where, f"link {target} lost its text {t_old!r}")
            if has_words(x["text"]) and not has_words(y["text"]):
                found.add("text_lost", where, f"{x['text'][:200]!r} -> {y['text'][:200]!r}")
            elif numbers_only(x["text"]) and " ".join(x["text"].split()) != " ".join(y["text"].split()):
                found.add("number", where, f"{x['text']!r} -> {y['text']!r}")
        # tables: names, cells; a cell that is no string or holds a formula byte for byte
        tables_old, tables_new = list(old.iter(q("table:table"))), list(new.iter(q("table:table")))
        if [t.get(q("table:name")) for t in tables_old] != [t.get(q("table:name")) for t in tables_new]:
            found.add("count", part, "table names changed")
        for t_old, t_new in zip(tables_old, tables_new):
            cells_old = [c for c in t_old.iter(q("table:table-cell"), q("table:covered-table-cell"))]
            cells_new = [c for c in t_new.iter(q("table:table-cell"), q("table:covered-table-cell"))]
            if len(cells_old) != len(cells_new) or len(list(t_old.iter(q("table:table-row")))) != len(
                    list(t_new.iter(q("table:table-row")))):
                found.add("count", f"{part} table {t_old.get(q('table:name'))}",
                          f"cells {len(cells_old)} -> {len(cells_new)}")
                continue
            for k, (x, y) in enumerate(zip(cells_old, cells_new)):
                stats["cells"] += 1
                formula = x.get(q("table:formula"))
                value_type = x.get(q("office:value-type"))
                if formula is None and value_type in (None, "string"):
                    for attribute in (q("table:formula"), q("office:value-type"), q("office:value"),
                                      q("office:string-value")):
                        if x.get(attribute) != y.get(attribute):
                            found.add("number", f"{part} table {t_old.get(q('table:name'))} cell {k}",
                                      f"{attribute}: {x.get(attribute)!r} -> {y.get(attribute)!r}")
                    continue
                stats["kept_cells"] += 1
                stats["formula_cells" if formula is not None else "number_cells"] += 1
                if c14n(x) != c14n(y):
                    found.add("formula" if formula is not None else "number",
                              f"{part} table {t_old.get(q('table:name'))} cell {k}",
                              f"{c14n(x)[:200].decode('utf-8', 'replace')} -> "
                              f"{c14n(y)[:200].decode('utf-8', 'replace')}")
        pages_old, pages_new = list(old.iter(q("draw:page"))), list(new.iter(q("draw:page")))
        if [p.get(q("draw:name")) for p in pages_old] != [p.get(q("draw:name")) for p in pages_new]:
            found.add("count", part, f"slides {len(pages_old)} -> {len(pages_new)}")
        stats["slides"] += len(pages_old) if part == "content.xml" else 0
        for tag in (q("draw:a"), q("presentation:event-listener")):  # links on frames and shapes
            xs = [e.get(q("xlink:href")) for e in old.iter(tag)]
            ys = [e.get(q("xlink:href")) for e in new.iter(tag)]
            stats["links"] += len(xs)
            if xs != ys:
                found.add("link", part, f"{tag}: {xs[:3]} -> {ys[:3]}")
    return dict(stats)


# ------------------------------------------------------------------------------------------- check: EPUB
BLOCKS = ("p", "li", "h1", "h2", "h3", "h4", "h5", "h6", "td", "th", "dt", "dd", "caption", "figcaption", "title",
          "blockquote", "pre")


def check_epub(source: bytes, out: bytes, found: Findings) -> dict:
    from lxml import etree

    from .test_epub_format import NS, XHTML, codes, ids, links

    same_entries(source, out, lambda name: name.endswith((".xhtml", ".html", ".opf", ".ncx")), found)
    a, b = zip_entries(source), zip_entries(out)
    docs_old, docs_new = {}, {}
    for name in b:
        if name.endswith((".xhtml", ".html", ".opf", ".ncx")):
            try:
                docs_new[name] = etree.fromstring(b[name])
                docs_old[name] = etree.fromstring(a[name])
            except (etree.XMLSyntaxError, KeyError) as exc:
                found.add("reopen", name, f"not well-formed: {exc}")
                return {}
    stats = Counter()
    for name, old in docs_old.items():
        new = docs_new[name]
        if name.endswith(".ncx"):
            xs = [c.get("src") for c in old.iter(f"{{{NS['ncx']}}}content")]
            ys = [c.get("src") for c in new.iter(f"{{{NS['ncx']}}}content")]
            stats["links"] += len(xs)
            if xs != ys:
                found.add("link", name, f"navigation targets {xs[:3]} -> {ys[:3]}")
            for x, y in zip(old.iter(f"{{{NS['ncx']}}}text"), new.iter(f"{{{NS['ncx']}}}text")):
                if has_words(x.text) and not has_words(y.text):
                    found.add("text_lost", name, f"navigation label {x.text!r} -> {y.text!r}")
            continue
        if name.endswith(".opf"):
            for tag in (f"{{{NS['opf']}}}manifest", f"{{{NS['opf']}}}spine"):
                if [c14n(e) for e in old.iter(tag)] != [c14n(e) for e in new.iter(tag)]:
                    found.add("package", name, f"{tag} changed")
            continue
        if links(old) != links(new):
            found.add("link", name, f"{len(links(old))} links -> {len(links(new))}; first differing: "
                      f"{next(((u, v) for u, v in zip(links(old), links(new)) if u != v), None)}")
        stats["links"] += len(links(old))
        for x, y in zip(old.iter(f"{{{XHTML}}}a"), new.iter(f"{{{XHTML}}}a")):
            if "".join(x.itertext()).strip() and not "".join(y.itertext()).strip():
                found.add("link", name, f"link {x.get('href')} lost its text {''.join(x.itertext())!r}")
        if ids(old) != ids(new):
            found.add("link", name, "ids (link anchors) changed")
        if codes(old) != codes(new):
            found.add("field", name, f"code elements changed: {sum((codes(old) - codes(new)).values())} differ")
        blocks_old = [e for e in old.iter(*(f"{{{XHTML}}}{t}" for t in BLOCKS))]
        blocks_new = [e for e in new.iter(*(f"{{{XHTML}}}{t}" for t in BLOCKS))]
        if [e.tag for e in blocks_old] != [e.tag for e in blocks_new]:
            found.add("count", name, f"blocks {len(blocks_old)} -> {len(blocks_new)}")
            continue
        for k, (x, y) in enumerate(zip(blocks_old, blocks_new), 1):
            tx, ty = "".join(x.itertext()), "".join(y.itertext())
            stats["paragraphs"] += has_words(tx)
            if has_words(tx) and not has_words(ty):
                found.add("text_lost", f"{name} {etree.QName(x).localname} {k}", f"{tx[:200]!r} -> {ty[:200]!r}")
            elif numbers_only(tx) and " ".join(tx.split()) != " ".join(ty.split()):
                found.add("number", f"{name} {etree.QName(x).localname} {k}", f"{tx!r} -> {ty!r}")
    stats["documents"] = sum(1 for n in docs_old if n.endswith((".xhtml", ".html")))
    return dict(stats)


# ------------------------------------------------------------------------------------------- check: tools
def pdf_pages(pdf: Path) -> tuple[int, int]:
    """(pages, letters) of a PDF: pdfinfo's page count, pdftotext's letters."""
    info = run([tool("pdfinfo"), pdf], check=False).stdout
    pages = int(re.search(r"^Pages:\s+(\d+)", info, re.M).group(1)) if re.search(r"^Pages:\s+(\d+)", info, re.M) else 0
    text = run([tool("pdftotext"), "-enc", "UTF-8", pdf, "-"], check=False).stdout
    return pages, len(LETTER.findall(text))


def printed(files: list[Path], outdir: Path, profile: Path) -> dict[Path, tuple[int, int] | None]:
    """LibreOffice prints each file to PDF (one process, or one per file when the batch fails):
    {file: (pages, letters)}, None where it wrote no PDF."""
    result: dict[Path, tuple[int, int] | None] = {}
    try:
        made = soffice(files, "pdf", outdir, profile, timeout=1800)
    except SweepError as exc:
        say(f"check: LibreOffice failed on a batch ({exc}); one file at a time")
        made = {}
        for path in files:
            try:
                made |= soffice([path], "pdf", outdir, profile, timeout=300)
            except SweepError as one:
                say(f"check: LibreOffice on {path.name}: {one}")
    for path in files:
        result[path] = pdf_pages(made[path]) if path in made else None
    return result


def epubcheck(path: Path) -> dict:
    binary = tool("epubcheck")
    with open(binary, "rb") as handle:
        jar = handle.read(2) == b"PK"
    command = ["java", "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-jar", binary] if jar else [binary]
    done = run([*command, path], check=False, timeout=600)
    text = done.stdout + done.stderr
    messages = sorted({re.sub(r"\(\d+,\d+\)", "", re.sub(r"/[^ ]*?\.epub/", "", line)).strip()
                       for line in text.splitlines() if line.startswith(("ERROR", "FATAL"))})
    summary = re.search(r"(\d+) fatals? / (\d+) errors?", text)
    return {"returncode": done.returncode, "messages": messages,
            "fatals_errors": [int(summary.group(1)), int(summary.group(2))] if summary else None}


CHECKERS = {"pptx": check_pptx, "xlsx": check_xlsx, "epub": check_epub,
            "odt": lambda s, o, f: check_odf("odt", s, o, f), "ods": lambda s, o, f: check_odf("ods", s, o, f),
            "odp": lambda s, o, f: check_odf("odp", s, o, f)}


def check_stage(cache: Path, label: str, json_path: Path | None, examples_per: int = 3) -> dict:
    manifest = load_manifest(cache)
    out_root = cache / "out" / label
    if not out_root.is_dir():
        raise SweepError(f"no {out_root}: run the translate stage with --label {label} first")
    validated = cache / "validate"
    source_cache_path = validated / "sources.json"
    source_cache = json.loads(source_cache_path.read_text()) if source_cache_path.exists() else {}
    files = []
    for fmt in FORMATS:
        entries = [e for e in manifest["files"] if e["format"] == fmt]
        if not entries:
            continue
        pairs = [(e, cache / e["file"], output_of(out_root, e["file"])) for e in entries]
        # reopen: LibreOffice (sources once, cached by digest), epubcheck
        reopened: dict[str, dict] = {}
        started = time.monotonic()
        if fmt != "epub":
            todo = [p for e, p, _ in pairs if e["sha256"] not in source_cache]
            if todo:
                for path, result in printed(todo, validated / "pdf" / fmt, validated / "profile").items():
                    source_cache[next(e["sha256"] for e, p, _ in pairs if p == path)] = {"pdf": result}
            outs = [o for _, _, o in pairs if o is not None]
            shutil.rmtree(out_root / "pdf" / fmt, ignore_errors=True)
            pdfs = printed(outs, out_root / "pdf" / fmt, validated / "profile") if outs else {}
            for e, _, o in pairs:
                reopened[e["file"]] = {"source_pdf": source_cache[e["sha256"]]["pdf"],
                                       "pdf": pdfs.get(o) if o else None}
        else:
            for e, p, o in pairs:
                if e["sha256"] not in source_cache:
                    source_cache[e["sha256"]] = {"epubcheck": epubcheck(p)}
                reopened[e["file"]] = {"source_epubcheck": source_cache[e["sha256"]]["epubcheck"],
                                       "epubcheck": epubcheck(o) if o else None}
        write_json(source_cache_path, source_cache)
        say(f"check: {fmt}: validators {time.monotonic() - started:.0f} s")
        for e, path, output in pairs:
            found = Findings()
            record = {"file": e["file"], "format": fmt, "origin": e["origin"], "made": e["made"],
                      "output": str(output.relative_to(cache)) if output else None, "stats": {}, **reopened[e["file"]]}
            if output is None:
                found.add("reopen", "output", "no output written (see translate.log)")
            else:
                if fmt != "epub":
                    src_pdf, out_pdf = record["source_pdf"], record["pdf"]
                    if (out_pdf is None or out_pdf[0] == 0) and not src_pdf:
                        found.notes.append("LibreOffice prints neither the source nor the output to PDF")
                    elif out_pdf is None or out_pdf[0] == 0:
                        found.add("reopen", "LibreOffice", "no PDF printed (the source prints)")
                    elif src_pdf and fmt in ("pptx", "odp") and src_pdf[0] != out_pdf[0]:
                        found.add("count", "LibreOffice", f"slides printed {src_pdf[0]} -> {out_pdf[0]}")
                    elif src_pdf and src_pdf[1] and not out_pdf[1]:
                        found.add("text_lost", "LibreOffice", "the PDF of the output has no text")
                else:
                    old, new = record["source_epubcheck"], record["epubcheck"]
                    extra = sorted(set(new["messages"]) - set(old["messages"]))
                    worse = new["fatals_errors"] != [0, 0] and old["fatals_errors"] == [0, 0]
                    if new["fatals_errors"] is None or extra or worse:
                        found.add("reopen", "epubcheck",
                                  f"{new['fatals_errors']} (source {old['fatals_errors']}): {extra[:3]}")
                try:
                    record["stats"] = CHECKERS[fmt](path.read_bytes(), output.read_bytes(), found)
                except Exception as exc:  # noqa: BLE001 - a crash of the check is reported with its file
                    found.add("reopen", "check", f"the check raised {type(exc).__name__}: {exc}")
            record["findings"] = found.items
            record["notes"] = found.notes
            record["kinds"] = dict(found.kinds())
            files.append(record)
    table = summarize(manifest, files, out_root)
    print_table(table, label)
    print_findings(files, examples_per)
    result = {"label": label, "cache": str(cache), "cpu": cpu_model(), "table": table, "files": files,
              "translation": {fmt: json.loads((out_root / fmt / "run.json").read_text())
                              for fmt in FORMATS if (out_root / fmt / "run.json").exists()}}
    if json_path is not None:
        write_json(json_path, result)
        say(f"check: wrote {json_path}")
    return result


def cpu_model() -> str:
    found = re.search(r"^Model name:\s+(.*)$", run(["lscpu"], check=False).stdout, re.M)
    return f"{found.group(1).strip() if found else '?'}, {os.cpu_count()} cores"


def summarize(manifest: dict, files: list[dict], out_root: Path) -> dict:
    table = {}
    for fmt in FORMATS:
        mine = [f for f in files if f["format"] == fmt]
        if not mine:
            continue
        record = json.loads((out_root / fmt / "run.json").read_text()) if (out_root / fmt / "run.json").exists() else {}

        def having(*kinds: str) -> int:
            return sum(1 for f in mine if any(f["kinds"].get(k) for k in kinds))

        totals = Counter()
        for f in mine:
            totals.update({k: v for k, v in f["stats"].items() if isinstance(v, int)})
        table[fmt] = {"files": len(mine), "reopen_failed": having("reopen"),
                      "number_formula_changed": having("number", "formula"), "field_changed": having("field"),
                      "link_changed": having("link"), "text_lost": having("text_lost"),
                      "count_changed": having("count"), "package_changed": having("package"),
                      "without_finding": sum(1 for f in mine if not f["findings"]),
                      "wall_s_per_file": round(record.get("seconds", 0) / len(mine), 2),
                      "cpu_s_per_file": round(record.get("cpu_seconds", 0) / len(mine), 2),
                      "wall_s": record.get("seconds"), "cpu_s": record.get("cpu_seconds"), "totals": dict(totals)}
    return table


def print_table(table: dict, label: str) -> None:
    heads = ["format", "files", "reopen", "num/formula", "field", "link", "text_lost", "count", "package", "clean",
             "wall/file", "cpu/file"]
    keys = ["files", "reopen_failed", "number_formula_changed", "field_changed", "link_changed", "text_lost",
            "count_changed", "package_changed", "without_finding", "wall_s_per_file", "cpu_s_per_file"]
    say(f"\noffice sweep '{label}': files with >= 1 finding of each kind")
    say("  ".join(h.rjust(11) if k else h.ljust(7) for k, h in enumerate(heads)))
    for fmt, row in table.items():
        say("  ".join([fmt.ljust(7), *(str(row[k]).rjust(11) for k in keys)]))
    for fmt, row in table.items():
        say(f"  {fmt} totals: {row['totals']}")


def print_findings(files: list[dict], per: int) -> None:
    say(f"\nfindings (up to {per} per file):")
    for f in files:
        for item in f["findings"][:per]:
            say(f"  [{f['format']} {item['kind']}] {Path(f['file']).name} @ {item['where']}: {item['detail'][:300]}")
        for note in f.get("notes", []):
            say(f"  [{f['format']} note] {Path(f['file']).name}: {note[:300]}")
        if len(f["findings"]) > per:
            say(f"  ... {len(f['findings']) - per} more in {Path(f['file']).name}: {dict(f['kinds'])}")


# ------------------------------------------------------------------------------------------- main
def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawTextHelpFormatter)
    parser.add_argument("stages", nargs="+", choices=("fetch", "translate", "check"),
                        help="stages to run, in this order (each cached: see --redo)")
    parser.add_argument("--cache", type=Path, default=DEFAULT_CACHE, help="where everything goes (%(default)s)")
    parser.add_argument("--label", default="after", help="names the code version: CACHE/out/LABEL (%(default)s)")
    parser.add_argument("--code", type=Path, default=REPO_ROOT, help="checkout whose code translates (%(default)s)")
    parser.add_argument("--bundle", type=Path, default=Path("models/en-de"),
                        help="model bundle; a relative path is taken from this checkout (%(default)s)")
    parser.add_argument("--redo", action="append", default=[], choices=("fetch", "translate"),
                        help="run a cached stage again (repeatable)")
    parser.add_argument("--json", type=Path, help="check: write the table and every finding here")
    parser.add_argument("--timeout", type=float, default=3600,
                        help="translate: seconds at most per format (%(default)s)")
    args = parser.parse_args(argv)
    cache, code = args.cache.resolve(), args.code.resolve()
    bundle = args.bundle if args.bundle.is_absolute() else (REPO_ROOT / args.bundle)
    timings_path = cache / "timings.json"
    try:
        for stage in ("fetch", "translate", "check"):
            if stage not in args.stages:
                continue
            started = time.monotonic()
            if stage == "fetch":
                if (cache / "manifest.json").exists() and "fetch" not in args.redo:
                    say(f"fetch: cached ({len(load_manifest(cache)['files'])} files, {cache / 'manifest.json'})")
                    continue
                fetch_stage(cache)
            elif stage == "translate":
                records = translate_stage(cache, args.label, code, bundle.resolve(), "translate" in args.redo,
                                          args.timeout)
                if all(record.get("_cached") for record in records.values()):
                    continue
            else:
                check_stage(cache, args.label, args.json)
            key = stage if stage == "fetch" else f"{stage}:{args.label}"
            timings = json.loads(timings_path.read_text()) if timings_path.exists() else {}
            timings[key] = round(time.monotonic() - started, 1)
            write_json(timings_path, timings)
            say(f"{key}: {timings[key]:.0f} s")
    except SweepError as exc:
        print(f"office sweep: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
