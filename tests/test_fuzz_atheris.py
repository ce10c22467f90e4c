"""Coverage-guided fuzzing of the text pipeline's pure-Python parsers with atheris (libFuzzer for
Python): segmentation, span finding, masking, casing and reinsertion, with the invariants of
tests/test_fuzz_text.py. Outside CI, where atheris is installed:

    python -m tests.test_fuzz_atheris -max_total_time=1800 -rss_limit_mb=4096

Under pytest, only ``FINDINGS`` (the inputs it found that broke an invariant) are replayed.
"""
from __future__ import annotations

import sys

import pytest

from worker.text import casing
from worker.text.layout import split_document
from worker.text.pipeline import TextOptions, prepare, restore
from worker.text.segment import Alignment, SegmentResult, word_spans
from worker.text.spans import find_spans

OPTIONS = TextOptions(restore_case=False, check_language=False)
# Every input atheris found that broke an invariant, minimised; each is also a regression test.
FINDINGS: list[str] = [
    "\x1f_Vh\thh",  # a name inside a word after "_" was put back a second time
    "U{6\x00%o%{Fn\x00\x00@U\x006_{{4",  # a stand-in glued to "_" ("6_Rodeo") was never found again
    # more spans than stand-ins: "{}" inside an unmasked "\x7f{}" was deleted as a made-up placeholder
    "{\r}\rm}1;\x7f}m}L\r}00=};\x7f}1;\x7f}m\x7f\x7f\r}\rm}1}m}L\r}00=};\x7f}m}L\r}00=};\x7f{}*m}!",
]


def _represented(c: str) -> bool:
    """The shipped vocabulary's gaps, roughly: emoji and other symbols, private use, braces."""
    return c not in "{}" and c.isprintable() and not ("\U0001F000" <= c <= "\U0001FAFF" or "\ue000" <= c <= "\uf8ff")


def check(text: str) -> None:
    """The invariants on one input: nothing raises, offsets are exact, protect -> restore gives the
    visible characters back, casing keeps lengths."""
    layout = split_document(text, "en")
    assert layout.reassemble([s.text for s in layout.sentences])[0] == text
    for sentence in layout.sentences:
        spans = find_spans(sentence.text, _represented)
        assert all(sentence.text[s.start:s.end] == s.text for s in spans)
        prepared = prepare(sentence.text, OPTIONS, "en", represented=_represented)
        words = tuple(word_spans(prepared.text))
        copied = SegmentResult(prepared.text, prepared.text, 0.0,
                               Alignment(tuple((i, i) for i in range(len(words))), words, words))
        assert "".join(restore(prepared, copied).translation.split()) == "".join(sentence.text.split())
        case = casing.detect(sentence.text)
        assert len(casing.restore(casing.normalise(sentence.text, case), case)) == len(sentence.text)


@pytest.mark.parametrize("text", FINDINGS or [pytest.param("", marks=pytest.mark.skip(reason="no findings"))])
def test_atheris_findings_hold_the_invariants(text):
    check(text)


def _one_input(data: bytes) -> None:
    import atheris

    check(atheris.FuzzedDataProvider(data).ConsumeUnicodeNoSurrogates(len(data)))


def main() -> None:
    import atheris

    atheris.Setup(sys.argv, _one_input)
    atheris.Fuzz()


if __name__ == "__main__":
    import atheris

    atheris.instrument_all()  # coverage feedback from every loaded Python function, worker.text's included
    main()
