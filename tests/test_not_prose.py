"""Segments that are not prose (identifier lists, command lines, code) are copied through
untranslated and flagged ``not_prose``; prose, short or odd, is still translated (real
SentencePiece and ONNX Runtime with the shipped En->De bundle, and ``nmt translate``)."""
from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from worker.engine.settings import EngineSettings
from worker.engine.translator import Translator
from worker.text.pipeline import TextOptions, prepare
from worker.text.segment import FLAGS, NOT_PROSE, SegmentResult
from worker.text.spans import PROGRAM_NAMES, find_spans
from worker.text.verbatim import CODE, COMMAND, IDENTIFIERS, MARKUP, not_prose

from .conftest import REPO_ROOT, run_nmt

BUNDLE = REPO_ROOT / "models" / "en-de"

NOT_PROSE_SEGMENTS = [
    ("arch b2sum base32 base64 basename", IDENTIFIERS),
    ("chmod chown chgrp touch", IDENTIFIERS),
    ("x86_64 aarch64 riscv64", IDENTIFIERS),
    # lines of the program list in GNU coreutils' README: "[", "who", "yes" and "test" are programs
    ("[ arch b2sum base32 base64 basename basenc cat chcon chgrp chmod chown", IDENTIFIERS),
    ("tac tail tee test timeout touch tr true truncate tsort tty uname unexpand", IDENTIFIERS),
    ("uniq unlink uptime users vdir wc who whoami yes", IDENTIFIERS),
    ("A C F V", IDENTIFIERS),  # the letters of a texinfo index's "Jump to:" line
    # prototypes as manuals write them (libffi's, its <var> parameter names kept apart)
    ("Function: void ffi_call (ffi_cif *, void *, void *, void **)", CODE),
    ("Function: ffi_status ffi_prep_cif (ffi_cif *, ffi_abi , unsigned int , ffi_type *, ffi_type **)", CODE),
    ("int main(int argc, char **argv);", CODE),
    ("du echo env expand expr factor false fmt fold groups head hostid hostname", IDENTIFIERS),
    ("git log --oneline --graph", COMMAND),
    ("pip install -r requirements.txt", COMMAND),
    ("$ docker run --rm -it ubuntu:24.04 bash", COMMAND),
    ("sudo apt-get install nginx", COMMAND),
    # usage synopses without their "Usage:" label, as pg_ctl's and bash's catalogues hold them
    ("%s init[db] [-D DATADIR] [-s] [-o OPTIONS]", COMMAND),
    ("%s register [-D DATADIR] [-N SERVICENAME] [-U USERNAME] [-P PASSWORD] [-S START-TYPE] [-e SOURCE] [-W]", COMMAND),
    ("compopt [-o|+o option] [-DEI] [name ...]", COMMAND),
    ("grep [-E|-F] [-i] PATTERN [FILE...]", COMMAND),
    ("for (int i = 0; i < n; i++) {", CODE),
    ("return self.cache.get(key, default)", CODE),
    ("import numpy as np", CODE),
    ("from collections import Counter, defaultdict", CODE),
    ("#include <stdio.h>", CODE),
    ("SELECT name FROM users WHERE id = 42;", CODE),
    ('<img src="logo.png" alt=""/>', MARKUP),
    ("<br/>&nbsp;<hr>", MARKUP),
    ("<!-- generated -->", MARKUP),
    ("</td></tr>", MARKUP),
]
PROSE = [
    "Good morning",
    "see you tomorrow",
    "apples oranges bananas",
    "small cat",
    "big red dog sees",
    "find more",
    "who are you",
    "yes please",
    "sort the list by date",
    "head and tail",
    "date time",
    "Kill the process",
    "Open MyFiles (gear icon)",
    "Use the tool (see below)",
    "Note: keep the default (recommended)",
    "Run git status to see the changes.",
    "Type pip install --upgrade requests in a terminal.",
    "For example (see Figure 1), the rate rose.",
    "Return the book to the library (today).",
    "If you go, take an umbrella.",
    "%s (%s) - Data connection: %s;",
    "cannot stat %s: %s",
    "Press any key to continue",
    "Import duties rose in 2015.",
    "<b>Warning:</b> the disk is full",
    "Click <a href=\"x\">here</a>.",
    "a < b and c > d",
    "<standard input>",  # software messages translate words in brackets
    "<path>",
    "Usage: %s [-v] [-f FILE] command",  # a labelled synopsis: its label and words are translated
    "%s [OPTION]... [FILE]...",  # metavariables alone, no options: catalogues translate them
    "%s [-a] [-b] reads the files",
    "see [-v] and [-q] for more",
]


@pytest.mark.parametrize("segment, reason", NOT_PROSE_SEGMENTS)
def test_code_commands_and_identifier_lists_are_not_prose(segment, reason):
    assert not_prose(segment, find_spans(segment), PROGRAM_NAMES) == reason


@pytest.mark.parametrize("segment", PROSE)
def test_prose_is_prose(segment):
    assert not_prose(segment, find_spans(segment), PROGRAM_NAMES) is None


def test_not_prose_is_a_flag_and_is_off_without_span_protection():
    assert NOT_PROSE in FLAGS
    segment = "git log --oneline --graph"
    assert prepare(segment).decode is False and prepare(segment).not_prose == COMMAND
    assert prepare(segment, TextOptions(protect_spans=False)).decode is True


@pytest.fixture(scope="module")
def translator():
    return Translator(BUNDLE, EngineSettings(provider="cpu", intra_op_threads=1))


def test_not_prose_segments_come_back_verbatim_and_flagged(translator):
    segments = [s for s, _ in NOT_PROSE_SEGMENTS]
    results = translator.translate_sentences(segments + PROSE[:3])
    for (segment, reason), result in zip(NOT_PROSE_SEGMENTS, results):
        assert result.translation == segment
        assert NOT_PROSE in result.flags and result.details["not_prose"] == reason
        assert result.confidence == 1.0
        assert SegmentResult.from_json(json.loads(json.dumps(result.to_json()))).flags == result.flags
    for segment, result in zip(PROSE[:3], results[len(segments):]):
        assert NOT_PROSE not in result.flags and result.translation != segment


def test_a_document_keeps_its_code_lines_and_translates_the_rest(translator):
    doc = "Install the package first.\n\npip install -r requirements.txt\n\nThen start the server."
    result = translator.translate_document(doc)
    assert "pip install -r requirements.txt" in result.translation.split("\n")
    flags = [s.flags for s in result.segments]
    assert [NOT_PROSE in f for f in flags] == [False, True, False]


def test_cli_translate_copies_a_command_line_through():
    out = run_nmt("translate", "--bundle", str(BUNDLE), "--threads", "1",
                  stdin="import numpy as np\nThe cat sleeps.\n")
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0] == "import numpy as np" and lines[1] != "The cat sleeps."


COREUTILS_README = Path("/usr/share/doc/coreutils/README.gz")


@pytest.mark.skipif(not COREUTILS_README.exists(), reason="GNU coreutils' README is installed on Debian machines")
def test_the_program_list_of_the_coreutils_readme_comes_back_whole(tmp_path):
    # A real file: its nine indented lines name 109 programs, most of them English words too.
    source = tmp_path / "README.txt"
    source.write_text(gzip.decompress(COREUTILS_README.read_bytes()).decode())
    out = run_nmt("translate", "--bundle", str(BUNDLE), "--threads", "1", "--out", str(tmp_path / "out"), str(source))
    assert out.returncode == 0, out.stderr
    lines = source.read_text().splitlines()
    start = next(i for i, line in enumerate(lines) if line.lstrip().startswith("[ arch"))
    listed = lines[start:lines.index("", start)]
    translated = (tmp_path / "out" / "README.de.txt").read_text().splitlines()
    assert len(" ".join(listed).split()) >= 100
    assert translated[start:start + len(listed)] == listed
