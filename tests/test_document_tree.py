"""Folders and glob patterns as input: the walk (queue_config.document_tree), then the same tree of
mixed documents through the real ``nmt translate`` and through ``nmt submit --wait`` to real workers:
the output mirrors the tree, a bad file is reported without stopping the others, and a second run
translates only what changed."""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path, PurePosixPath

import pytest

from queue_config.document_tree import STATE_FILE, BulkRun, Selection, TreeError, matches, select_documents

from .conftest import REPO_ROOT, run_nmt
from .queue_harness import CeleryWorker, RedisServer

BUNDLE = REPO_ROOT / "models" / "multi30k-en-de"


def write_files(root: Path, files: dict[str, str | bytes]) -> Path:
    for name, content in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content if isinstance(content, bytes) else content.encode("utf-8"))
    return root


def relatives(selection: Selection) -> list[str]:
    return [d.key for d in selection.documents]


# -- the walk ---------------------------------------------------------------------------------------
NESTED = {"a.txt": "A dog.", "guide/b.md": "# B", "guide/deep/c.srt": "", "guide/deep/d.po": "", "web/e.html": "",
          "notes.text": "", "guide/logo.png": b"\x89PNG", "README": "no extension", "guide/drafts/f.txt": ""}


def test_a_folder_is_walked_into_every_sub_folder_taking_files_of_known_kinds(tmp_path):
    docs = write_files(tmp_path / "docs", NESTED)
    selection = select_documents([str(docs)], tmp_path / "out")
    assert relatives(selection) == ["a.txt", "guide/b.md", "guide/deep/c.srt", "guide/deep/d.po", "guide/drafts/f.txt",
                                    "notes.text", "web/e.html"]
    assert all(d.path == docs / d.relative for d in selection.documents)
    assert sorted(p.name for p in selection.unknown) == ["README", "logo.png"]


@pytest.mark.parametrize("include, exclude, expected", [
    (["*.md"], [], ["guide/b.md"]),
    (["*.txt", "*.po"], [], ["a.txt", "guide/deep/d.po", "guide/drafts/f.txt"]),
    (["guide"], ["drafts"], ["guide/b.md", "guide/deep/c.srt", "guide/deep/d.po"]),  # a folder name anywhere
    (["guide/*.md"], [], ["guide/b.md"]),  # '*' stays within one folder
    (["guide/*"], [], ["guide/b.md", "guide/deep/c.srt", "guide/deep/d.po", "guide/drafts/f.txt"]),  # and its files
    (["guide/**/*.po"], [], ["guide/deep/d.po"]),  # '**' spans folders
    ([], ["guide/deep", "*.text"], ["a.txt", "guide/b.md", "guide/drafts/f.txt", "web/e.html"]),
    ([], ["**"], []),
])
def test_include_and_exclude_match_paths_relative_to_the_folder(tmp_path, include, exclude, expected):
    docs = write_files(tmp_path / "docs", NESTED)
    selection = select_documents([str(docs)], tmp_path / "out", include, exclude)
    assert relatives(selection) == expected
    # files of unknown kinds count only when the patterns let them through
    assert len(selection.unknown) == sum(1 for name in ("README", "guide/logo.png")
                                         if (not include or any(matches(p, PurePosixPath(name)) for p in include))
                                         and not any(matches(p, PurePosixPath(name)) for p in exclude))


@pytest.mark.parametrize("pattern, path, expected", [
    ("*.md", "a.md", True), ("*.md", "x/y/a.md", True), ("*.md", "a.md.txt", False),
    ("drafts", "guide/drafts/a.txt", True), ("drafts", "drafts.txt", False),
    ("guide/*.md", "guide/a.md", True), ("guide/*.md", "guide/x/a.md", False), ("guide/*.md", "x/guide/a.md", False),
    ("guide/**/*.md", "guide/a.md", True), ("guide/**/*.md", "guide/x/y/a.md", True),
    ("./guide/", "guide/a.md", True), ("/guide/x", "guide/x/a.md", True), ("*.MD", "a.md", False),
])
def test_pattern_matching(pattern, path, expected):
    assert matches(pattern, PurePosixPath(path)) is expected


def test_hidden_files_and_folders_are_never_taken(tmp_path):
    docs = write_files(tmp_path / "docs", {"a.txt": "", ".secret.txt": "", ".git/config.txt": "", "x/.cache/b.md": ""})
    selection = select_documents([str(docs)], tmp_path / "out")
    assert relatives(selection) == ["a.txt"] and not selection.unknown


def test_symlinks_leading_out_of_the_folder_are_skipped_and_counted_and_linked_folders_not_entered(tmp_path):
    docs = write_files(tmp_path / "docs", {"a.txt": "", "sub/b.md": ""})
    elsewhere = write_files(tmp_path / "elsewhere", {"secret.txt": "", "more/c.txt": ""})
    (docs / "leak.txt").symlink_to(elsewhere / "secret.txt")
    (docs / "leak_dir").symlink_to(elsewhere / "more")
    (docs / "alias.md").symlink_to(docs / "sub" / "b.md")  # inside the tree: a file like any other
    (docs / "sub_again").symlink_to(docs / "sub")  # inside: not entered, sub/ is walked anyway
    (docs / "up.txt").symlink_to(Path("..") / "elsewhere" / "secret.txt")  # relative, still out of the tree
    (docs / "loop.txt").symlink_to(docs / "loop.txt")
    selection = select_documents([str(docs)], tmp_path / "out")
    assert relatives(selection) == ["a.txt", "alias.md", "sub/b.md"]
    assert sorted(p.name for p in selection.outside) == ["leak.txt", "leak_dir", "loop.txt", "up.txt"]


def test_the_output_folder_inside_the_tree_and_earlier_runs_outputs_are_not_read(tmp_path):
    docs = write_files(tmp_path / "docs", {"a.txt": "", "de/a.de.txt": "", "fr/a.fr.txt": "", f"fr/{STATE_FILE}": ""})
    assert relatives(select_documents([str(docs)], docs / "de")) == ["a.txt"]
    with pytest.raises(TreeError, match=r"--out .*docs is the folder .*docs itself"):
        select_documents([str(docs)], docs)


def test_globs_walk_the_folder_before_the_first_wildcard(tmp_path, monkeypatch):
    write_files(tmp_path / "docs", NESTED)
    monkeypatch.chdir(tmp_path)
    assert relatives(select_documents(["docs/**/*.po"], Path("out"))) == ["guide/deep/d.po"]
    assert relatives(select_documents(["docs/guide/*"], Path("out"))) == ["b.md"]
    assert relatives(select_documents(["docs/*/deep/*.srt"], Path("out"))) == ["guide/deep/c.srt"]
    assert relatives(select_documents(["*/a.txt"], Path("out"))) == ["docs/a.txt"]


@pytest.mark.parametrize("given, out, message", [
    ("docs", None, "docs is a folder: its translations need --out DIR"),
    ("docs/**/*.xyz", "out", r"docs/\*\*/\*.xyz matches no file$"),
    ("docs/guide/*.png", "out", r"matches no file of a known kind \(1 of other kinds\)"),
    ("nowhere/*.md", "out", "nowhere/\\*.md matches no file: nowhere is not a folder"),
    ("docs/*.md", None, "is a glob pattern: its translations need --out DIR"),
])
def test_bad_input_is_one_clear_error(tmp_path, monkeypatch, given, out, message):
    write_files(tmp_path / "docs", NESTED)
    monkeypatch.chdir(tmp_path)
    with pytest.raises(TreeError, match=message):
        select_documents([given], Path(out) if out else None)


def test_files_named_explicitly_are_taken_as_they_are(tmp_path):
    write_files(tmp_path, {"notes.log": "A dog.", "docs/a.md": ""})
    selection = select_documents([str(tmp_path / "notes.log"), str(tmp_path / "missing.txt"), str(tmp_path / "docs"),
                                  str(tmp_path / "docs" / "a.md")], tmp_path / "out")
    # unknown extensions and missing files kept (they fail when read); a file reached twice taken once
    assert relatives(selection) == ["notes.log", "missing.txt", "a.md"]
    assert selection.documents[2].path == tmp_path / "docs" / "a.md"


def test_outputs_that_would_overwrite_each_other_in_the_mirrored_tree_are_found(tmp_path):
    write_files(tmp_path / "docs", {"a.md": "", "a.txt": "", "x/a.md": "", "y/b.en.md": "", "y/b.md": ""})
    message = select_documents([str(tmp_path / "docs")], tmp_path / "out").collision_message("en")
    assert "a.md" in message and "a.txt" in message and "would all be written as 'a'" in message
    assert "would all be written as 'y/b'" in message and "x/a.md" not in message


# -- the state that lets a second run skip what is up to date --------------------------------------
def finish(run: BulkRun, out: Path) -> None:
    """Write a stand-in translation of each pending document and tell the run."""
    for document in run.pending:
        output = run.folder(document.path) / f"{document.relative.stem}.de{document.relative.suffix}"
        output.parent.mkdir(parents=True, exist_ok=True)
        output.write_text("x", encoding="utf-8")
        run.finished(document.path, output, "sig-1")
    run.close()


def test_a_second_run_skips_documents_whose_text_and_request_are_unchanged(tmp_path):
    docs = write_files(tmp_path / "docs", {"a.txt": "A dog.", "g/b.md": "A cat.", "g/c.po": ""})
    out = tmp_path / "out"

    def run(request=None, force=False) -> BulkRun:
        return BulkRun("translate", select_documents([str(docs)], out), out, request or {"beam": 2}, force)

    first = run()
    assert [d.key for d in first.pending] == ["a.txt", "g/b.md", "g/c.po"]
    finish(first, out)
    assert (out / "g" / "b.de.md").is_file() and first.done == 3
    assert run().pending == [] and run().up_to_date == 3
    (docs / "g" / "b.md").write_text("A cat runs.", encoding="utf-8")
    (out / "a.de.txt").unlink()  # a translation removed by hand is made again
    assert [d.key for d in run().pending] == ["a.txt", "g/b.md"]
    assert len(run({"beam": 3}).pending) == 3 and len(run(force=True).pending) == 3
    entries = [json.loads(line) for line in (out / STATE_FILE).read_text(encoding="utf-8").splitlines()]
    assert {e["file"]: e["output"] for e in entries} == {"a.txt": "a.de.txt", "g/b.md": "g/b.de.md",
                                                         "g/c.po": "g/c.de.po"}
    assert {e["signature"] for e in entries} == {"sig-1"}


def test_an_interrupted_run_resumes_after_the_last_finished_document(tmp_path):
    docs = write_files(tmp_path / "docs", {"a.txt": "A dog.", "b.txt": "A cat.", "c.txt": "A man."})
    out = tmp_path / "out"
    run = BulkRun("translate", select_documents([str(docs)], out), out, {})
    output = out / "a.de.txt"
    output.parent.mkdir(parents=True)
    output.write_text("x", encoding="utf-8")
    run.finished(run.pending[0].path, output)  # then the process dies: no close()
    with open(out / STATE_FILE, "a", encoding="utf-8") as handle:
        handle.write('{"file": "b.txt", "sha2')  # a line cut short
    again = BulkRun("translate", select_documents([str(docs)], out), out, {})
    assert [d.key for d in again.pending] == ["b.txt", "c.txt"] and again.up_to_date == 1
    assert len((out / STATE_FILE).read_text(encoding="utf-8").splitlines()) == 1  # rewritten clean


def test_the_summary_counts_every_kind_of_outcome_and_names_each_failure(tmp_path):
    docs = write_files(tmp_path / "docs", {"a.txt": "", "b.txt": "", "c.png": ""})
    (docs / "out.txt").symlink_to(tmp_path)
    run = BulkRun("submit", select_documents([str(docs)], tmp_path / "out"), tmp_path / "out", {})
    run.finished(run.pending[0].path, tmp_path / "out" / "a.de.txt")
    run.failed(run.pending[1].path, "not valid UTF-8 (line 1, byte offset 3)")
    assert run.summary() == [
        "nmt submit: files: 1 done, 0 up to date (skipped), 1 of unknown kind (skipped), "
        "1 symlink out of the folder (skipped), 1 failed",
        "nmt submit: 1 of 2 files failed:",
        f"nmt submit: failed {docs / 'b.txt'}: not valid UTF-8 (line 1, byte offset 3)"]
    assert run.exit_status == 1


# -- end to end: the same tree through nmt translate and through workers ---------------------------
SRT = "1\n00:00:01,000 --> 00:00:02,000\nA man rides a bike.\n\n2\n00:00:03,000 --> 00:00:04,000\nTwo dogs play.\n"
PO = 'msgid ""\nmsgstr ""\n"Content-Type: text/plain; charset=UTF-8\\n"\n\nmsgid "A child eats."\nmsgstr ""\n'
TREE = {
    "readme.txt": "A man sees a dog.\n\nThe dog runs in the park.\n",
    "guide/intro.md": "# A red house\n\nA woman walks on the street.\n",
    "guide/media/clip.srt": SRT,
    "guide/media/app.po": PO,
    "site/index.html": "<html><body><p>Two children play in the water.</p></body></html>\n",
    "site/logo.png": b"\x89PNG\r\n\x1a\n\x00\x00",
    "guide/broken.po": 'msgid "a"\nmsgstr ""\nthis is not po\n',
    ".drafts/todo.txt": "A draft.",
}
OUTPUTS = ["guide/intro.de.json", "guide/intro.de.md", "guide/media/app.de.json", "guide/media/app.de.po",
           "guide/media/clip.de.json", "guide/media/clip.de.srt", "readme.de.json", "readme.de.txt",
           "site/index.de.html", "site/index.de.json"]


def translated_files(out: Path) -> list[str]:
    return sorted(p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file() and p.name != STATE_FILE)


def counts(stderr: str) -> dict[str, int]:
    line = re.search(r"files: (.*)", stderr).group(1)
    return {what: int(n) for n, what in re.findall(r"(\d+) (done|up to date|of unknown kind|failed)", line)}


def check_runs(run, docs: Path, out: Path) -> None:
    """Run three times over the same tree (``run() -> CompletedProcess``): first everything good
    is translated into a mirrored tree, then nothing, then only the changed file."""
    first = run()
    assert first.returncode == 1, first.stderr
    assert translated_files(out) == OUTPUTS
    assert counts(first.stderr) == {"done": 5, "up to date": 0, "of unknown kind": 1, "failed": 1}, first.stderr
    failures = [line for line in first.stderr.splitlines() if re.search(r": failed .*broken\.po: ", line)]
    assert len(failures) == 1 and "not a valid gettext PO file" in failures[0], first.stderr
    assert "1 of 6 files failed" in first.stderr and "Traceback" not in first.stderr
    payload = json.loads((out / "guide/media/clip.de.json").read_text(encoding="utf-8"))
    assert [s["source"] for s in payload["segments"]] == ["A man rides a bike.", "Two dogs play."]
    assert "-->" in (out / "guide/media/clip.de.srt").read_text(encoding="utf-8")
    stamps = {name: (out / name).stat().st_mtime_ns for name in OUTPUTS}

    second = run()
    assert counts(second.stderr) == {"done": 0, "up to date": 5, "of unknown kind": 1, "failed": 1}, second.stderr
    assert {name: (out / name).stat().st_mtime_ns for name in OUTPUTS} == stamps

    (docs / "guide" / "intro.md").write_text("# A red house\n\nA man sleeps.\n", encoding="utf-8")
    third = run()
    assert counts(third.stderr) == {"done": 1, "up to date": 4, "of unknown kind": 1, "failed": 1}, third.stderr
    changed = [name for name in OUTPUTS if (out / name).stat().st_mtime_ns != stamps[name]]
    assert changed == ["guide/intro.de.json", "guide/intro.de.md"]
    assert "A man sleeps." in (out / "guide/intro.de.json").read_text(encoding="utf-8")


@pytest.mark.slow
def test_nmt_translate_mirrors_a_tree_reports_the_bad_file_and_retranslates_only_what_changed(tmp_path):
    docs = write_files(tmp_path / "docs", TREE)
    out = docs / "de"  # inside the tree it translates: never read as input
    check_runs(lambda: run_nmt("translate", str(docs), "--out", str(out), "--bundle", str(BUNDLE), "--device", "cpu",
                               "--beam", "2"), docs, out)
    forced = run_nmt("translate", str(docs), "--out", str(out), "--bundle", str(BUNDLE), "--device", "cpu",
                     "--beam", "2", "--force", "--include", "guide/**")
    assert counts(forced.stderr) == {"done": 3, "up to date": 0, "of unknown kind": 0, "failed": 1}, forced.stderr
    beam = run_nmt("translate", str(docs), "--out", str(out), "--bundle", str(BUNDLE), "--device", "cpu", "--beam", "3")
    assert counts(beam.stderr)["done"] == 5  # other options: another translation


@pytest.mark.slow
@pytest.mark.parametrize("args, message", [
    (["DOCS"], "nmt translate: error: .*docs is a folder: its translations need --out DIR"),
    (["DOCS/**/*.xyz", "--out", "OUT"], "nmt translate: error: .*docs/\\*\\*/\\*.xyz matches no file"),
])
def test_nmt_translate_bad_input_is_one_line(tmp_path, args, message):
    write_files(tmp_path / "docs", TREE)
    done = run_nmt("translate", "--bundle", str(BUNDLE),
                   *[a.replace("DOCS", str(tmp_path / "docs")).replace("OUT", str(tmp_path / "out")) for a in args])
    assert done.returncode == 2 and re.fullmatch(message + "\n", done.stderr), done.stderr


@pytest.fixture
def redis_server(tmp_path):
    server = RedisServer(tmp_path / "redis").start()
    yield server
    server.stop()


@pytest.fixture
def worker(tmp_path, redis_server):
    settings = {"NMT_BROKER_URL": redis_server.url, "NMT_BUNDLES": str(BUNDLE), "NMT_LEASE_SECONDS": "3",
                "NMT_OUTPUT_DIR": str(tmp_path / "worker-out")}
    started = CeleryWorker("tree", settings, tmp_path).start()
    yield started
    started.stop()


@pytest.mark.integration
@pytest.mark.slow
def test_nmt_submit_wait_mirrors_a_tree_through_workers_and_resubmits_only_what_changed(worker, redis_server, tmp_path):
    docs = write_files(tmp_path / "docs", TREE)
    out = tmp_path / "docs.de"
    env = os.environ | {"NMT_BROKER_URL": redis_server.url}

    def submit() -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "nmt", "submit", str(docs), "--src", "en", "--tgt", "de", "--wait",
                               "--out", str(out), "--timeout", "120"], cwd=REPO_ROOT, env=env, capture_output=True,
                              text=True, timeout=300)

    check_runs(submit, docs, out)
    signature = json.loads((BUNDLE / "manifest.json").read_text(encoding="utf-8"))["signature"]
    entries = [json.loads(line) for line in (out / STATE_FILE).read_text(encoding="utf-8").splitlines()]
    assert len(entries) == 5 and {e["signature"] for e in entries} == {signature}
