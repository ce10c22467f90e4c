"""A content sweep: 60+ real files that nobody here wrote, translated with the shipped model and checked
by tests/content_check.py (what a format validator misses: translated code, swapped links, lost
options, numbers, words, whitespace, entities, charset).

Sources (tests/content_sources.py lists them; none is used by tests/test_real_files.py, which reads
what is installed under /usr/share/doc and /usr/share/locale):

1. HTML manuals of Debian packages that are not installed here, fetched with ``apt-get download`` and
   unpacked with ``dpkg-deb -x``: makeinfo's split manuals (diffutils, m4, flex, libgcrypt), gettext's
   texi2html manual and its javadoc/csharpdoc pages (no charset declaration), bash's examples index
   (no charset), GnuTLS's gtk-doc API pages, Python 3.11's Sphinx pages (&copy;, <kbd>).
2. Markdown with admonitions (``!!! note "Title"``, ``/// note``) and footnotes: the docs of the
   Python-Markdown and pymdown-extensions sdists (``pip download --no-deps --no-binary :all:``, pinned).
3. Gettext catalogues: Django's English source catalogues (django.po, djangojs.po with plurals),
   Sphinx's sphinx.pot, mkdocs' theme template, and English templates made from the German .mo
   catalogues of the grep, sed, tar, coreutils and wget packages (msgunfmt; msgstr emptied; c-format
   where the msgid's printf directives are those of the German; no Plural-Forms, no Language).
   Catalogues are capped at the MESSAGES messages with the most placeholders and options.
4. DOCX: manual pages of (1) converted by LibreOffice (``soffice --convert-to docx``), and the
   Word-made test documents of the python-docx sdist (hyperlinks, headers, tables).
5. Subtitles: the test data of the pysrt, webvtt-py and srt sdists that parse (not the deliberately
   broken ones), UTF-8 and UTF-16 with byte-order marks, WebVTT with STYLE and NOTE blocks.
6. XLIFF 1.1: manual pages of (1) through translate-toolkit's html2po and po2xliff.
7. Plain text: coreutils' README (the bare list of its programs), NEWS, TODO and README files, sed's
   FAQ, bash's tab-separated examples index, reStructuredText sources (Python's tutorial, Django's FAQ).

Stages, each cached under ``--cache`` (default /work/runs/content-sweep; nothing is ever written to
the work tree):

- ``fetch``: downloads (CACHE/downloads), unpacked trees (CACHE/unpacked), the inputs (CACHE/in/FORMAT/)
  and CACHE/manifest.json with each input's origin (package or sdist, version, path inside, how it
  was made). Skipped when the manifest exists.
- ``translate``: one ``nmt translate`` of CACHE/in into CACHE/out/LABEL/ on one core (``--threads 1
  --batch-workers 1``) with ``--bundle`` (a relative one is taken from this checkout, so every label
  uses the same model). ``--code DIR`` runs the code of another checkout (a git worktree of an older
  commit): the run's own process prints where ``nmt`` and ``worker`` were imported from and every
  project module that came from elsewhere (CACHE/out/LABEL/run.json records both; a foreign module
  fails the stage). Skipped when CACHE/out/LABEL/run.json matches the manifest.
- ``check``: content_check.check_file on every source/output pair: a table per format (files, files
  with findings, findings per check) and up to 3 examples per check and format; ``--json PATH``
  writes all findings.

``--redo STAGE`` runs a cached stage again. Run it from the repository root, niced, e.g.::

    git worktree add /work/runs/before 832e64b
    nice -n 19 python tests/content_sweep.py fetch
    nice -n 19 python tests/content_sweep.py translate check --label before --code /work/runs/before
    nice -n 19 python tests/content_sweep.py translate check --label after --json /work/runs/after.json

This is a script, not a test module: pytest collects nothing from it and importing it fetches nothing.
"""
from __future__ import annotations

import argparse
import gzip
import hashlib
import io
import json
import os
import random
import re
import resource
import shutil
import signal
import subprocess
import sys
import tarfile
import time
import zipfile
from collections import Counter, defaultdict
from dataclasses import asdict
from pathlib import Path

if __package__ in (None, ""):  # run as a script: python tests/content_sweep.py STAGE ...
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    __package__ = "tests"

from .content_sources import (CATALOGUE, COPY, DEBS, DOCX, EXCLUDED, MESSAGES, PICKS, SDISTS, SEED,  # noqa: E402
                              TEMPLATE, TEXT, TEXT_BYTES, XLIFF, Pick)

REPO_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_CACHE = Path("/work/runs/content-sweep")
FORMATS = ("html", "markdown", "po", "xliff", "docx", "srt", "vtt", "txt")
TARGET = "de"
OWN_PACKAGES = ("nmt", "worker", "queue_config", "client", "api", "training", "export")
# printf directives (as in tests/test_real_files.py), Python's %(name)s and {name}, command-line options
DIRECTIVE = re.compile(r"%(?:\d+\$)?[-+ #0']*(?:\*|\d+)?(?:\.(?:\*|\d+))?(?:hh|h|ll|l|L|q|j|z|Z|t)?"
                       r"[diouxXeEfFgGaAcspn%]|%<PRI\w+>")
NAMED = re.compile(r"%\([^)\s]+\)[-#0 +]*\d*(?:\.\d+)?[sdifrxXeEgGc]|\{[\w.\[\]]*(?:![rsa])?(?::[^{}]*)?\}")
OPTION = re.compile(r"(?<![\w-])--?[A-Za-z][\w-]*")

# The process of a translation run: ``python -c BOOT ROOT nmt-arguments...`` imports the project from
# ROOT (cwd and PYTHONPATH), says where nmt and worker came from, and at exit names every project
# module that was imported from anywhere else (an editable install of another checkout, say).
BOOT = r"""
import atexit, os, sys
root = os.path.realpath(sys.argv.pop(1))
import nmt, worker
print(f"content-sweep code: nmt={nmt.__file__} worker={worker.__file__}", file=sys.stderr, flush=True)
def _foreign():
    own = %r
    found = sorted(name for name, module in list(sys.modules.items()) if name.split(".")[0] in own
                   and getattr(module, "__file__", None)
                   and not os.path.realpath(module.__file__).startswith(root + os.sep))
    print(f"content-sweep foreign modules: {found}", file=sys.stderr, flush=True)
atexit.register(_foreign)
from nmt.cli import main
sys.exit(main(sys.argv[1:]))
""" % (OWN_PACKAGES,)


class SweepError(RuntimeError):
    """A stage cannot go on; the message says why."""


def say(*parts) -> None:
    print(*parts, flush=True)


def run(args: list[str], cwd: Path | None = None, timeout: float = 900, env: dict | None = None,
        check: bool = True) -> subprocess.CompletedProcess:
    done = subprocess.run([str(a) for a in args], cwd=cwd, capture_output=True, text=True, errors="replace",
                          timeout=timeout, env=env)
    if check and done.returncode != 0:
        raise SweepError(f"{' '.join(map(str, args))[:300]}: exit {done.returncode}: {done.stderr[-1500:]}")
    return done


def tool(name: str) -> str:
    """A translate-toolkit converter beside this Python, or a Debian tool on PATH."""
    path = shutil.which(name, path=str(Path(sys.executable).parent)) or shutil.which(name)
    if path is None:
        raise SweepError(f"{name} is not installed")
    return path


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def excluded(name: str) -> bool:
    import fnmatch
    return any(fnmatch.fnmatchcase(name, pattern) for pattern in EXCLUDED)


# ------------------------------------------------------------------------------------------- fetch: sources
def fetch_deb(name: str, cache: Path) -> tuple[Path, str, Path]:
    """(unpacked root, version, .deb) of a Debian package: ``apt-get download`` into
    CACHE/downloads/deb once, ``dpkg-deb -x`` into CACHE/unpacked/deb/NAME_VERSION once."""
    if excluded(name):
        raise SweepError(f"{name}: held back for outside checks or read by the training corpus")
    folder = cache / "downloads" / "deb"
    folder.mkdir(parents=True, exist_ok=True)
    found = sorted(folder.glob(f"{name}_*.deb"))
    if not found:
        done = run(["apt-get", "download", name], cwd=folder, check=False, timeout=600)
        found = sorted(folder.glob(f"{name}_*.deb"))
        if not found:
            raise SweepError(f"apt-get download {name} failed (run apt-get update first): {done.stderr[-500:]}")
    deb = found[-1]
    version = run(["dpkg-deb", "-f", deb, "Version"]).stdout.strip()
    root = cache / "unpacked" / "deb" / f"{name}_{version.replace(':', '%3a')}"
    if not root.is_dir():
        scratch = root.with_name(root.name + ".part")
        shutil.rmtree(scratch, ignore_errors=True)
        scratch.mkdir(parents=True)
        run(["dpkg-deb", "-x", deb, scratch])
        scratch.rename(root)
    return root, version, deb


def fetch_sdist(name: str, version: str, cache: Path) -> tuple[Path, Path]:
    """(unpacked root, archive) of a pinned PyPI sdist: ``pip download --no-deps --no-binary :all:``
    into CACHE/downloads/pypi once, unpacked into CACHE/unpacked/sdist/ once."""
    folder = cache / "downloads" / "pypi"
    folder.mkdir(parents=True, exist_ok=True)
    key = re.sub(r"[-_.]+", "_", name).lower()

    def archives() -> list[Path]:
        return sorted(p for p in folder.iterdir() if p.name.endswith((".tar.gz", ".zip"))
                      and re.sub(r"[-_.]+", "_", p.name.rsplit(f"-{version}.", 1)[0]).lower() == key
                      and f"-{version}." in p.name)

    if not archives():
        run([sys.executable, "-m", "pip", "download", "--no-deps", "--no-binary", ":all:", "-q",
             f"{name}=={version}", "-d", folder], timeout=900)
    found = archives()
    if not found:
        raise SweepError(f"pip download {name}=={version}: no sdist in {folder}")
    archive = found[0]
    root = cache / "unpacked" / "sdist" / f"{key}-{version}"
    if not root.is_dir():
        scratch = root.with_name(root.name + ".part")
        shutil.rmtree(scratch, ignore_errors=True)
        scratch.mkdir(parents=True)
        if archive.name.endswith(".zip"):
            with zipfile.ZipFile(archive) as z:
                z.extractall(scratch)
        else:
            with tarfile.open(archive) as t:
                t.extractall(scratch, filter="data")
        tops = list(scratch.iterdir())
        inner = tops[0] if len(tops) == 1 and tops[0].is_dir() else scratch
        inner.rename(root) if inner != scratch else scratch.rename(root)
        shutil.rmtree(scratch, ignore_errors=True)
    return root, archive


# ------------------------------------------------------------------------------------------- fetch: choice
def text_of(data: bytes) -> str:
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        return data.decode("utf-16")
    return data.decode("utf-8-sig")


def has_no_charset(data: bytes) -> bool:
    return re.search(rb"charset", data, re.I) is None


def has_admonition_or_footnote(data: bytes) -> bool:
    text = data.decode("utf-8", errors="replace")
    return bool(re.search(r"^\s*(?:!!!|\?\?\?\+?|///)\s*\w", text, re.M) or re.search(r"^\[\^[^\]]+\]:", text, re.M))


def docx_words(data: bytes) -> bool:
    try:
        xml = zipfile.ZipFile(io.BytesIO(data)).read("word/document.xml").decode("utf-8")
    except (zipfile.BadZipFile, KeyError):
        return False
    return len(" ".join(re.findall(r"<w:t(?: [^>]*)?>([^<]*)</w:t>", xml)).split()) >= 15


def subtitles(data: bytes, ext: str) -> bool:
    """Whether the file parses with its format's library into at least one cue with words."""
    try:
        text = text_of(data)
        if ext == ".srt":
            import srt
            cues = [c.content for c in srt.parse(text)]
        else:
            import webvtt
            cues = [c.text for c in webvtt.from_string(text).captions]
    except Exception:  # noqa: BLE001 - whatever the library refuses
        return False
    return any(re.search(r"[^\W\d_]", c) for c in cues)


NEEDS = {"": lambda data, ext: True, "no-charset": lambda data, ext: has_no_charset(data),
         "admonition-or-footnote": lambda data, ext: has_admonition_or_footnote(data),
         "docx-words": lambda data, ext: docx_words(data), "subtitles": subtitles}


def candidates(pick: Pick, root: Path) -> list[str]:
    """Paths below ``root`` (POSIX, relative) that ``pick`` matches, within its sizes, sorted."""
    found = []
    for folder, dirs, files in os.walk(root):
        dirs.sort()
        for name in files:
            path = Path(folder) / name
            relative = path.relative_to(root).as_posix()
            if path.is_symlink() or not pick.matches(relative):
                continue
            if pick.min_bytes <= path.stat().st_size < pick.max_bytes:
                found.append(relative)
    return sorted(found)


def choose(pick: Pick, root: Path, taken: set[Path]) -> list[str]:
    """The files of ``pick``: its ``first`` ones, then a seeded draw, each passing its ``need``,
    none already taken by an earlier pick."""
    pool = [r for r in candidates(pick, root) if (root / r).resolve() not in taken]
    rest = [r for r in pool if r not in pick.first]
    random.Random(f"{SEED}:{pick.label}").shuffle(rest)
    need = NEEDS[pick.need]
    chosen = []
    for relative in [r for r in pick.first if r in pool] + rest:
        if pick.n and len(chosen) >= pick.n:
            break
        if need((root / relative).read_bytes(), Path(relative).suffix.lower()):
            chosen.append(relative)
            taken.add((root / relative).resolve())
    return chosen


# ------------------------------------------------------------------------------------------- fetch: making
def cap_text(data: bytes, limit: int = TEXT_BYTES) -> tuple[bytes, str]:
    """The first whole paragraphs (blank-line separated) of ``data`` within ``limit`` bytes."""
    if len(data) <= limit:
        return data, "whole"
    kept, size = [], 0
    for block in re.split(rb"(?<=\n)(?=\n)", data):
        if size + len(block) > limit and kept:
            break
        kept.append(block)
        size += len(block)
    text = b"".join(kept).rstrip(b"\n") + b"\n"
    return text, f"first {len(text):,} of {len(data):,} bytes (whole paragraphs)"


def weight(entry) -> int:
    """How much a message has to keep: placeholders, options, plural forms."""
    text = f"{entry.msgid} {entry.msgid_plural or ''}"
    return (len(DIRECTIVE.findall(text)) + len(NAMED.findall(text)) + len(OPTION.findall(text))
            + (2 if entry.msgid_plural else 0))


def cap_catalogue(catalogue, messages: int = MESSAGES) -> int:
    """Keep the ``messages`` entries with the most placeholders and options (ties: file order), in
    file order; obsolete entries go. The number there was."""
    entries = [e for e in catalogue if e.msgid and not e.obsolete]
    ranked = sorted(range(len(entries)), key=lambda k: (-weight(entries[k]), k))[:messages]
    keep = {id(entries[k]) for k in ranked}
    catalogue[:] = [e for e in entries if id(e) in keep]
    return len(entries)


def catalogue_input(source: Path, target: Path) -> str:
    import polib

    catalogue = polib.pofile(str(source))
    total = len([e for e in catalogue if e.msgid and not e.obsolete])
    if total <= MESSAGES:
        shutil.copyfile(source, target)
        return "copy"
    cap_catalogue(catalogue)
    catalogue.save(str(target))
    return f"the {MESSAGES} of {total} messages with the most placeholders and options (rewritten by polib)"


def directives(text: str) -> Counter:
    return Counter(m.group() for m in DIRECTIVE.finditer(text))


def template_input(mo: Path, target: Path, scratch: Path) -> str:
    """An English template of a German catalogue: msgunfmt; c-format where the msgid (or plural)
    has printf directives and the German has the same; ``MESSAGES`` messages with the most
    placeholders and options; msgstr emptied; Plural-Forms and Language taken out of the header."""
    import polib

    scratch.mkdir(parents=True, exist_ok=True)
    german = scratch / f"{target.stem}.de.po"
    run([tool("msgunfmt"), mo, "-o", german], timeout=120)
    catalogue = polib.pofile(str(german))
    for entry in catalogue:
        if not entry.msgid or "c-format" in entry.flags:
            continue
        english = directives(entry.msgid_plural or entry.msgid)
        forms = [entry.msgstr] if not entry.msgid_plural else [v for _, v in sorted(entry.msgstr_plural.items())]
        if english and forms and set(directives(forms[-1])) == set(english):
            entry.flags.append("c-format")
    catalogue.save(str(german))
    done = run([tool("msgfmt"), "-c", "-o", "/dev/null", german], check=False, timeout=120)
    if done.returncode != 0:  # unflag the messages msgfmt -c refuses (a German form that differs from the msgid)
        lines = {int(n) for n in re.findall(rf"{re.escape(german.name)}:(\d+):", done.stderr)}
        catalogue = polib.pofile(str(german))
        ordered = sorted((e for e in catalogue if e.msgid), key=lambda e: e.linenum)
        for n in lines:
            entry = next((e for e in reversed(ordered) if e.linenum <= n), None)
            if entry is not None and "c-format" in entry.flags:
                entry.flags.remove("c-format")
        catalogue.save(str(german))
        run([tool("msgfmt"), "-c", "-o", "/dev/null", german], timeout=120)
    total = cap_catalogue(catalogue)
    flagged = sum(1 for entry in catalogue if "c-format" in entry.flags)
    for entry in catalogue:
        entry.msgstr = ""
        entry.msgstr_plural = {k: "" for k in entry.msgstr_plural}
    for field in ("Plural-Forms", "Language"):
        catalogue.metadata.pop(field, None)
    catalogue.save(str(target))
    return (f"msgunfmt of the German catalogue; the {min(total, MESSAGES)} of {total} messages with the most "
            f"placeholders and options, {flagged} of them flagged c-format (printf directives the German keeps); "
            "msgstr emptied; Plural-Forms and Language taken out of the header")


def soffice_docx(pages: list[Path], outdir: Path, profile: Path, timeout: float = 900) -> dict[Path, Path]:
    """One headless LibreOffice converting ``pages`` (HTML) to DOCX in ``outdir``: {page: docx} for those
    it wrote. Its process group is killed if it outlives the timeout."""
    outdir.mkdir(parents=True, exist_ok=True)
    process = subprocess.Popen([tool("soffice"), f"-env:UserInstallation={profile.resolve().as_uri()}", "--headless",
                                "--norestore", "--convert-to", "docx:MS Word 2007 XML", "--outdir", str(outdir),
                                *map(str, pages)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               start_new_session=True)
    try:
        _, err = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.communicate()
        raise SweepError("soffice --convert-to docx timed out") from None
    if process.returncode != 0:
        raise SweepError(f"soffice --convert-to docx: exit {process.returncode}: {err[-1500:]}")
    written = {page: outdir / f"{page.stem}.docx" for page in pages}
    return {page: out for page, out in written.items() if out.exists() and out.stat().st_size > 0}


def xliff_input(page: Path, target: Path, scratch: Path) -> str:
    """html2po of one page (in ``scratch``, so that its references name only the page), then po2xliff."""
    scratch.mkdir(parents=True, exist_ok=True)
    local = scratch / page.name
    shutil.copyfile(page, local)
    po = local.with_suffix(".po")
    run([tool("html2po"), local.name, po.name], cwd=scratch, timeout=300)
    run([tool("po2xliff"), po.name, target.resolve()], cwd=scratch, timeout=300)
    return "html2po, then po2xliff (translate-toolkit)"


def input_name(number: int, package: str, relative: str, ext: str) -> str:
    name = Path(relative).name
    if name.endswith(".gz"):
        name = name[:-3]
    if ext:
        name = (name.rsplit(".", 1)[0] if "." in name else name) + ext
    return re.sub(r"[^\w.-]", "_", f"{number:03d}-{package}-{name}")


def tool_versions() -> dict[str, str]:
    def first_line(args: list[str]) -> str:
        try:
            return run(args, check=False, timeout=120).stdout.strip().splitlines()[0]
        except (SweepError, IndexError, FileNotFoundError, subprocess.TimeoutExpired):
            return "?"
    import translate.__version__ as tt
    return {"libreoffice": first_line([tool("soffice"), "--version"]), "gettext": first_line([tool("msgunfmt"),
            "--version"]), "translate-toolkit": tt.sver, "python": sys.version.split()[0]}


def fetch_stage(cache: Path) -> list[dict]:
    """Download, unpack, choose and make the inputs; write CACHE/manifest.json."""
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
    inputs = cache / "in"
    made = cache / "made"
    for folder in (inputs, made):
        shutil.rmtree(folder, ignore_errors=True)
    entries: list[dict] = []
    office: list[tuple[Path, dict]] = []
    taken: set[Path] = set()
    number = 0
    for pick in PICKS:
        root, origin = roots[pick.origin]
        chosen = choose(pick, root, taken)
        if not chosen:
            say(f"fetch: nothing for {pick.label}")
        for relative in chosen:
            number += 1
            source = root / relative
            ext = pick.as_ext or {DOCX: ".docx", XLIFF: ".xlf", TEXT: ".txt"}.get(pick.make, "")
            if pick.make == TEXT and Path(relative.removesuffix(".gz")).suffix == ".txt":
                ext = ""
            name = input_name(number, origin["package"], relative, ext)
            target = inputs / pick.fmt / name
            target.parent.mkdir(parents=True, exist_ok=True)
            entry = {"file": str(target.relative_to(cache)), "format": pick.fmt,
                     "origin": {**origin, "path": relative}, "pick": pick.label}
            if pick.make == COPY:
                shutil.copyfile(source, target)
                entry["made"] = "copy"
            elif pick.make == TEXT:
                data = source.read_bytes()
                data = gzip.decompress(data) if relative.endswith(".gz") else data
                data, how = cap_text(data)
                target.write_bytes(data)
                entry["made"] = ("gunzip; " if relative.endswith(".gz") else "") + how
            elif pick.make == CATALOGUE:
                entry["made"] = catalogue_input(source, target)
            elif pick.make == TEMPLATE:
                entry["made"] = template_input(source, target, made / "templates")
            elif pick.make == XLIFF:
                entry["made"] = xliff_input(source, target, made / "xliff" / target.stem)
            elif pick.make == DOCX:
                page = made / "docx" / f"{target.stem}{source.suffix}"
                page.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(source, page)
                entry["made"] = "LibreOffice: soffice --headless --convert-to 'docx:MS Word 2007 XML'"
                office.append((page, entry))
                continue
            entries.append(entry)
    if office:
        converted = soffice_docx([page for page, _ in office], made / "docx" / "out", made / "profile")
        for page, entry in office:
            if page in converted:
                shutil.copyfile(converted[page], cache / entry["file"])
                entries.append(entry)
            else:
                say(f"fetch: LibreOffice wrote no DOCX for {entry['origin']['path']}")
    for entry in entries:
        data = (cache / entry["file"]).read_bytes()
        entry["bytes"], entry["sha256"] = len(data), sha256(data)
    entries.sort(key=lambda e: (FORMATS.index(e["format"]), e["file"]))
    per_format = Counter(e["format"] for e in entries)
    manifest = {"seed": SEED, "made": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "tools": tool_versions(),
                "files_per_format": {fmt: per_format[fmt] for fmt in FORMATS}, "files": entries}
    write_json(cache / "manifest.json", manifest)
    short = [fmt for fmt in FORMATS if fmt not in ("srt", "vtt") and per_format[fmt] < 6]
    if per_format["srt"] + per_format["vtt"] < 6:
        short.append("srt+vtt")
    say(f"fetch: {len(entries)} files: " + ", ".join(f"{fmt} {per_format[fmt]}" for fmt in FORMATS)
        + (f" (fewer than 6: {', '.join(short)})" if short else ""))
    return entries


# ------------------------------------------------------------------------------------------- translate
def write_json(path: Path, data) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    scratch = path.with_name(path.name + ".part")
    scratch.write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    scratch.replace(path)


def load_manifest(cache: Path) -> dict:
    path = cache / "manifest.json"
    if not path.exists():
        raise SweepError(f"no {path}: run the fetch stage first")
    return json.loads(path.read_text(encoding="utf-8"))


def manifest_digest(manifest: dict) -> str:
    return sha256(json.dumps([(e["file"], e["sha256"]) for e in manifest["files"]]).encode())


def git_state(code: Path) -> dict:
    head = run(["git", "-C", code, "rev-parse", "HEAD"], check=False).stdout.strip()
    dirty = run(["git", "-C", code, "status", "--porcelain", "--untracked-files=no"], check=False).stdout.split("\n")
    return {"commit": head or "?", "modified_files": len([line for line in dirty if line.strip()])}


def translate_stage(cache: Path, label: str, code: Path, bundle: Path, redo: bool, timeout: float) -> dict:
    """One ``nmt translate`` of CACHE/in with the code of ``code`` into CACHE/out/LABEL."""
    manifest = load_manifest(cache)
    out = cache / "out" / label
    record_path = out / "run.json"
    if not redo and record_path.exists():
        record = json.loads(record_path.read_text(encoding="utf-8"))
        if (record.get("manifest"), record.get("code"), record.get("bundle")) == (manifest_digest(manifest), str(code),
                                                                                 str(bundle)):
            say(f"translate: {label}: cached ({record['seconds']:.0f} s, {record_path})")
            return {**record, "_cached": True}
    if not (code / "nmt" / "cli.py").is_file() or not (code / "worker").is_dir():
        raise SweepError(f"--code {code}: not a checkout of this project (no nmt/cli.py)")
    if not (bundle / "manifest.json").is_file():
        raise SweepError(f"--bundle {bundle}: no manifest.json")
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    arguments = ["translate", "--bundle", str(bundle), "--device", "cpu", "--threads", "1", "--batch-workers", "1",
                 "--force", str(cache / "in"), "--out", str(out)]
    env = {**os.environ, "PYTHONPATH": str(code), "OMP_NUM_THREADS": "1"}
    env.pop("PYTHONHOME", None)
    say(f"translate: {label}: cd {code} && PYTHONPATH={code} {sys.executable} -c BOOT {code} " + " ".join(arguments))
    started, cpu = time.monotonic(), resource.getrusage(resource.RUSAGE_CHILDREN)
    done = subprocess.run([sys.executable, "-c", BOOT, str(code), *arguments], cwd=code, env=env,
                          capture_output=True, text=True, errors="replace", timeout=timeout)
    seconds = time.monotonic() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu_seconds = (after.ru_utime - cpu.ru_utime) + (after.ru_stime - cpu.ru_stime)
    (out / "translate.log").write_text(done.stdout + "\n--- stderr\n" + done.stderr, encoding="utf-8")
    where = re.search(r"content-sweep code: nmt=(\S+) worker=(\S+)", done.stderr)
    foreign = re.search(r"content-sweep foreign modules: (\[.*\])", done.stderr)
    summary = [line for line in done.stderr.splitlines() if line.startswith("nmt translate: files:")]
    record = {"label": label, "code": str(code), "git": git_state(code), "bundle": str(bundle),
              "command": f"cd {code} && PYTHONPATH={code} {sys.executable} -c <content_sweep.BOOT> {code} "
                         + " ".join(arguments),
              "same_as": f"cd {code} && PYTHONPATH={code} {sys.executable} -m nmt " + " ".join(arguments),
              "nmt_file": where.group(1) if where else None, "worker_file": where.group(2) if where else None,
              "foreign_modules": json.loads(foreign.group(1).replace("'", '"')) if foreign else None,
              "returncode": done.returncode, "seconds": round(seconds, 1), "cpu_seconds": round(cpu_seconds, 1),
              "summary": summary,
              "failed_files": re.findall(r"^nmt translate: failed (.*)$", done.stderr, re.M),
              "manifest": manifest_digest(manifest)}
    write_json(record_path, record)
    say(f"translate: {label}: nmt from {record['nmt_file']}, worker from {record['worker_file']}; "
        f"foreign modules: {record['foreign_modules']}; exit {done.returncode} in {seconds:.0f} s "
        f"({cpu_seconds:.0f} CPU s: wall time grows with what else runs on the machine); "
        + " ".join(summary))
    if where is None or not str(Path(where.group(2)).resolve()).startswith(str(code.resolve()) + os.sep):
        raise SweepError(f"the translation did not run {code}'s code: see {out / 'translate.log'}")
    if record["foreign_modules"]:
        raise SweepError(f"project modules imported from outside {code}: {record['foreign_modules']}")
    return record


def output_of(out: Path, relative: str) -> Path | None:
    """The translation ``nmt translate`` wrote for input ``in/FORMAT/NAME.EXT``: NAME.de.EXT."""
    path = Path(relative).relative_to("in")
    folder = out / path.parent
    expected = folder / f"{path.stem}.{TARGET}{path.suffix}"
    if expected.exists():
        return expected
    others = sorted(p for p in folder.glob(f"{path.stem}.{TARGET}.*") if p.suffix not in (".json", ".jsonl"))
    return others[0] if others else None


# ------------------------------------------------------------------------------------------- check
def check_stage(cache: Path, label: str, json_path: Path | None, examples_per: int = 3) -> dict:
    """content_check.check_file on every source/output pair; the table and examples printed."""
    from .content_check import CHECKS, check_file, counts

    manifest = load_manifest(cache)
    out = cache / "out" / label
    if not out.is_dir():
        raise SweepError(f"no {out}: run the translate stage with --label {label} first")
    files = []
    for entry in manifest["files"]:
        output = output_of(out, entry["file"])
        record = {"file": entry["file"], "format": entry["format"], "origin": entry["origin"],
                  "output": str(output.relative_to(cache)) if output else None, "findings": [], "counts": {},
                  "error": None}
        if output is None:
            record["error"] = "no output written"
        else:
            started = time.monotonic()
            try:
                findings = check_file(entry["format"], (cache / entry["file"]).read_bytes(), output.read_bytes())
                record["findings"] = [asdict(f) for f in findings]
                record["counts"] = {k: v for k, v in counts(findings).items() if v}
            except Exception as exc:  # noqa: BLE001 - a checker crash is reported with its file, not fatal
                record["error"] = f"check_file raised {type(exc).__name__}: {str(exc)[:300]}"
            record["check_seconds"] = round(time.monotonic() - started, 2)
        files.append(record)
    table = {}
    for fmt in FORMATS:
        mine = [f for f in files if f["format"] == fmt]
        if not mine:
            continue
        total = Counter()
        for f in mine:
            total.update(f["counts"])
        table[fmt] = {"files": len(mine), "with_findings": sum(1 for f in mine if f["findings"]),
                      "no_output": sum(1 for f in mine if f["error"] == "no output written"),
                      "errors": sum(1 for f in mine if f["error"] and f["error"] != "no output written"),
                      **{check: total[check] for check in CHECKS}}
    examples = pick_examples(files, CHECKS, examples_per)
    print_table(table, CHECKS, label)
    print_examples(examples)
    for f in files:
        if f["error"]:
            say(f"  {f['format']} {f['file']}: {f['error']}")
    result = {"label": label, "cache": str(cache), "manifest": str(cache / "manifest.json"),
              "translation": json.loads((out / "run.json").read_text()) if (out / "run.json").exists() else None,
              "table": table, "examples": examples, "files": files}
    if json_path is not None:
        write_json(json_path, result)
        say(f"check: wrote {json_path}")
    return result


def pick_examples(files: list[dict], checks, per: int) -> dict[str, dict[str, list[dict]]]:
    """Up to ``per`` findings per check and format, from as many different files as there are."""
    examples: dict[str, dict[str, list[dict]]] = defaultdict(dict)
    for fmt in FORMATS:
        for check in checks:
            by_file = [[dict(x, file=f["file"]) for x in f["findings"] if x["check"] == check]
                       for f in files if f["format"] == fmt]
            by_file = [found for found in by_file if found]
            chosen: list[dict] = []
            depth = 0
            while len(chosen) < per and any(len(found) > depth for found in by_file):
                chosen += [found[depth] for found in by_file if len(found) > depth][:per - len(chosen)]
                depth += 1
            if chosen:
                examples[fmt][check] = chosen
    return dict(examples)


def print_table(table: dict, checks, label: str) -> None:
    heads = ["format", "files", "w/find", "no-out", "errors", *checks]
    widths = [max(len(h), 6) for h in heads]
    say(f"\ncontent check of '{label}': files, files with >= 1 finding, and findings per check")
    say("  ".join(h.rjust(w) if k else h.ljust(8) for k, (h, w) in enumerate(zip(heads, widths))))
    rows = [[fmt, row["files"], row["with_findings"], row["no_output"], row["errors"], *(row[c] for c in checks)]
            for fmt, row in table.items()]
    total = ["all", *(sum(r[k] for r in rows) for k in range(1, len(heads)))]
    for row in rows + [total]:
        say("  ".join(str(v).rjust(w) if k else str(v).ljust(8) for k, (v, w) in enumerate(zip(row, widths))))


def print_examples(examples: dict) -> None:
    say("\nexamples (up to 3 per check and format):")
    for fmt, by_check in examples.items():
        for check, found in by_check.items():
            for f in found:
                say(f"  [{fmt} {check}] {Path(f['file']).name} @ {f['where']}\n      source: {f['source']!r}\n"
                    f"      output: {f['output']!r}")


# ------------------------------------------------------------------------------------------- main
def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawTextHelpFormatter)
    parser.add_argument("stages", nargs="+", choices=("fetch", "translate", "check"),
                        help="stages to run, in this order (each cached: see --redo)")
    parser.add_argument("--cache", type=Path, default=DEFAULT_CACHE, help="where everything goes (%(default)s)")
    parser.add_argument("--label", default="after", help="names the code version: CACHE/out/LABEL (%(default)s)")
    parser.add_argument("--code", type=Path, default=REPO_ROOT,
                        help="checkout whose code translates (default: this one, %(default)s)")
    parser.add_argument("--bundle", type=Path, default=Path("models/en-de"),
                        help="model bundle; a relative path is taken from this checkout (%(default)s)")
    parser.add_argument("--redo", action="append", default=[], choices=("fetch", "translate"),
                        help="run a cached stage again (repeatable)")
    parser.add_argument("--json", type=Path, help="check: write the table, examples and every finding here")
    parser.add_argument("--timeout", type=float, default=3600, help="translate: seconds at most (%(default)s)")
    args = parser.parse_args(argv)
    cache = args.cache.resolve()
    code = args.code.resolve()
    bundle = args.bundle if args.bundle.is_absolute() else (REPO_ROOT / args.bundle)
    timings_path = cache / "timings.json"
    try:
        for stage in ("fetch", "translate", "check"):
            if stage not in args.stages:
                continue
            started = time.monotonic()
            key = stage if stage == "fetch" else f"{stage}:{args.label}"
            if stage == "fetch":
                if (cache / "manifest.json").exists() and "fetch" not in args.redo:
                    say(f"fetch: cached ({len(load_manifest(cache)['files'])} files, {cache / 'manifest.json'})")
                    continue
                fetch_stage(cache)
            elif stage == "translate":
                record = translate_stage(cache, args.label, code, bundle.resolve(), "translate" in args.redo,
                                         args.timeout)
                if record.get("_cached"):
                    continue
            else:
                check_stage(cache, args.label, args.json)
            timings = json.loads(timings_path.read_text()) if timings_path.exists() else {}
            timings[key] = round(time.monotonic() - started, 1)
            write_json(timings_path, timings)
            say(f"{key}: {timings[key]:.0f} s")
    except SweepError as exc:
        print(f"content sweep: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
