"""``nmt translate`` and ``nmt eval`` on bad and awkward input, as a user runs them (subprocesses)."""
from __future__ import annotations

import json
import os
import stat
import subprocess
import sys

import pytest

from queue_config.document_tree import STATE_FILE

from .conftest import REPO_ROOT, run_nmt

pytestmark = pytest.mark.slow


def test_bad_files_are_reported_and_every_good_file_is_still_translated_exactly_laid_out(tiny_bundle, tmp_path):
    first = tmp_path / "first.txt"
    layout = "  A man sees a dog.  The cat runs home.\r\n\r\n\r\n\tA dog runs.\r\n   \n"
    first.write_bytes(layout.encode())
    last = tmp_path / "last.en.txt"
    last.write_text("The cat runs.", encoding="utf-8")
    (tmp_path / "loop1").symlink_to(tmp_path / "loop2")
    (tmp_path / "loop2").symlink_to(tmp_path / "loop1")
    (tmp_path / "wide.txt").write_bytes("A dog runs.\n".encode("utf-16-le"))
    (tmp_path / "bin.txt").write_bytes(b"A dog.\x00\x01\x02")
    out = tmp_path / "out"
    done = run_nmt("translate", "--bundle", str(tiny_bundle), "--device", "cpu", "--beam", "2", str(first),
                   str(tmp_path / "loop1"), str(tmp_path / "wide.txt"), str(tmp_path / "bin.txt"), str(last),
                   "--out", str(out), text=False)
    stderr = done.stderr.decode()
    assert done.returncode == 1, stderr
    assert "loop1: cannot read: Too many levels of symbolic links" in stderr
    assert "wide.txt: contains NUL bytes" in stderr and "bin.txt: contains NUL bytes" in stderr
    assert "3 of 5 files failed" in stderr and "Traceback" not in stderr
    assert sorted(p.name for p in out.iterdir() if p.name != STATE_FILE) == ["first.de.json", "first.de.txt",
                                                                         "last.de.json", "last.de.txt"]
    translated = (out / "first.de.txt").read_bytes().decode()
    payload = json.loads((out / "first.de.json").read_text(encoding="utf-8"))
    sentences = [s["translation"] for s in payload["segments"]]
    assert len(sentences) == 3 and all(sentences)
    # every character outside the sentences is kept: leading blanks, CRLF, empty lines, trailing blanks
    rebuilt = translated
    for sentence in sentences:
        rebuilt = rebuilt.replace(sentence, "S", 1)
    assert rebuilt == "  S  S\r\n\r\n\r\n\tS\r\n   \n"
    mode = stat.S_IMODE((out / "first.de.txt").stat().st_mode)
    umask = os.umask(0)
    os.umask(umask)
    assert mode == 0o666 & ~umask


def test_inputs_that_would_overwrite_each_others_results_are_refused_before_translating(tiny_bundle, tmp_path):
    for name in ("a/doc.txt", "b/doc.txt"):
        (tmp_path / name).parent.mkdir()
        (tmp_path / name).write_text("A dog.", encoding="utf-8")
    done = run_nmt("translate", "--bundle", str(tiny_bundle), "--device", "cpu", str(tmp_path / "a/doc.txt"),
                   str(tmp_path / "b/doc.txt"), "--out", str(tmp_path / "out"), text=False)
    assert done.returncode == 2
    assert "output names collide" in done.stderr.decode() and "would all be written as 'doc'" in done.stderr.decode()
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").iterdir())


def test_cuda_on_a_host_without_it_is_a_one_line_error(tiny_bundle, tmp_path):
    (tmp_path / "a.txt").write_text("A dog.", encoding="utf-8")
    done = run_nmt("translate", "--bundle", str(tiny_bundle), "--device", "cuda", str(tmp_path / "a.txt"),
                   "--out", str(tmp_path / "out"), text=False)
    stderr = done.stderr.decode()
    assert done.returncode == 2 and "Traceback" not in stderr
    assert "provider 'cuda' requested" in stderr


def test_stdin_line_that_is_not_utf8_is_left_empty_and_named(tiny_bundle):
    done = run_nmt("translate", "--bundle", str(tiny_bundle), "--device", "cpu",
                   stdin=b"A dog.\nCaf\xe9 ol\xe9\n\nThe cat runs.\n", text=False)
    lines = done.stdout.decode().split("\n")
    assert done.returncode == 1
    assert len(lines) == 5 and lines[0] and lines[1] == "" and lines[2] == "" and lines[3] and lines[4] == ""
    assert "stdin line 2: not valid UTF-8 at byte offset 3; its output line is left empty" in done.stderr.decode()


def test_n_best_on_stdin_prints_every_alternative_in_moses_format(tiny_bundle):
    done = run_nmt("translate", "--bundle", str(tiny_bundle), "--device", "cpu", "--beam", "4", "--n-best", "3",
                   stdin=b"A dog runs.\nThe cat sees a ball.\n", text=False)
    assert done.returncode == 0, done.stderr.decode()
    rows = [line.split(" ||| ") for line in done.stdout.decode().splitlines()]
    assert [row[0] for row in rows] == ["0", "0", "0", "1", "1", "1"]
    assert all(len(row) == 3 and float(row[2]) <= 0 for row in rows)
    assert len({row[1] for row in rows[:3]}) == 3  # three different alternatives of line 0


def test_out_naming_an_existing_file_is_a_one_line_error(tiny_bundle, tmp_path):
    (tmp_path / "a.txt").write_text("A dog.", encoding="utf-8")
    (tmp_path / "taken").write_text("x", encoding="utf-8")
    done = run_nmt("translate", "--bundle", str(tiny_bundle), "--device", "cpu", str(tmp_path / "a.txt"),
                   "--out", str(tmp_path / "taken"), text=False)
    stderr = done.stderr.decode()
    assert done.returncode == 2 and "Traceback" not in stderr and "Errno" not in stderr
    assert "is a file; it must be a directory" in stderr


def test_eval_refuses_empty_and_non_utf8_files_naming_them(tiny_bundle, tmp_path):
    empty = tmp_path / "empty.en"
    empty.write_text("", encoding="utf-8")
    done = run_nmt("eval", "--bundle", str(tiny_bundle), "--device", "cpu", "--src", str(empty), "--ref", str(empty),
                   text=False)
    assert done.returncode == 2 and "empty.en has no lines" in done.stderr.decode()
    latin = tmp_path / "latin.en"
    latin.write_bytes("one\ncaf\xe9\n".encode("latin-1"))
    done = run_nmt("eval", "--bundle", str(tiny_bundle), "--device", "cpu", "--src", str(latin), "--ref", str(latin),
                   text=False)
    stderr = done.stderr.decode()
    assert done.returncode == 2 and "latin.en: not valid UTF-8 (line 2, byte offset 7)" in stderr
    assert "Traceback" not in stderr


def test_progress_bar_counts_sentences_across_files_on_a_terminal(tiny_bundle, tmp_path):
    import fcntl
    import pty
    import struct
    import termios

    files = []
    for i in range(3):
        files.append(tmp_path / f"d{i}.txt")
        files[-1].write_text("A dog runs. The cat sees a man.\n\nA man eats.\n", encoding="utf-8")
    controller, terminal = pty.openpty()
    fcntl.ioctl(terminal, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 100, 0, 0))  # tqdm draws nothing in 0 columns
    try:
        done = subprocess.run([sys.executable, "-m", "nmt", "translate", "--bundle", str(tiny_bundle), "--device",
                               "cpu", *map(str, files), "--out", str(tmp_path / "out")], stdout=subprocess.PIPE,
                              stderr=terminal, cwd=REPO_ROOT, timeout=300)
        os.close(terminal)
        shown = b""
        while True:
            try:
                chunk = os.read(controller, 65536)
            except OSError:  # the terminal side is closed and drained
                break
            if not chunk:
                break
            shown += chunk
    finally:
        os.close(controller)
    assert done.returncode == 0
    assert b"translating: 100%" in shown and b"9/9" in shown and b"sent" in shown
    assert len(list((tmp_path / "out").glob("*.de.txt"))) == 3


def test_every_option_of_every_command_has_a_help_text_without_markup():
    import argparse

    from nmt.cli import build_parser

    missing = []
    for action in build_parser()._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                for option in sub._actions:
                    if not isinstance(option, argparse._HelpAction) and (not option.help or "`" in option.help):
                        missing.append(f"{name} {'/'.join(option.option_strings) or option.dest}")
    assert not missing, missing
