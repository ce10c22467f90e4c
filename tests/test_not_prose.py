"""Segments that are not prose (identifier lists, command lines, code) are copied through
untranslated and flagged ``not_prose``; prose, short or odd, is still translated (real
SentencePiece and ONNX Runtime with the shipped En->De bundle, and ``nmt translate``)."""
from __future__ import annotations

import json

import pytest

from worker.engine.settings import EngineSettings
from worker.engine.translator import Translator
from worker.text.pipeline import TextOptions, prepare
from worker.text.segment import FLAGS, NOT_PROSE, SegmentResult
from worker.text.spans import COMMAND_WORDS, find_spans
from worker.text.verbatim import CODE, COMMAND, IDENTIFIERS, MARKUP, not_prose

from .conftest import REPO_ROOT, run_nmt

BUNDLE = REPO_ROOT / "models" / "en-de"

NOT_PROSE_SEGMENTS = [
    ("arch b2sum base32 base64 basename", IDENTIFIERS),
    ("chmod chown chgrp touch", IDENTIFIERS),
    ("x86_64 aarch64 riscv64", IDENTIFIERS),
    ("git log --oneline --graph", COMMAND),
    ("pip install -r requirements.txt", COMMAND),
    ("$ docker run --rm -it ubuntu:24.04 bash", COMMAND),
    ("sudo apt-get install nginx", COMMAND),
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
]


@pytest.mark.parametrize("segment, reason", NOT_PROSE_SEGMENTS)
def test_code_commands_and_identifier_lists_are_not_prose(segment, reason):
    assert not_prose(segment, find_spans(segment), COMMAND_WORDS) == reason


@pytest.mark.parametrize("segment", PROSE)
def test_prose_is_prose(segment):
    assert not_prose(segment, find_spans(segment), COMMAND_WORDS) is None


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
