"""Inline code never reaches the model: a translator that records every text it hands to the
decoder (the real engine, models/en-de, underneath) translates documents of each format whose
code elements hold words of their own, and none of those words is among the decoded texts, while
each code comes back byte for byte."""
from __future__ import annotations

import io
from functools import partial

import pytest

from worker.engine.forced import segment_links
from worker.engine.translator import Translator
from worker.formats import parse, translate_parsed
from worker.text.layout import split_document

from .conftest import REPO_ROOT

# Each code's words: made up, so that no prose around them holds them.
CODES = ["frobnicate_widget()", "zorblax --quux", "Ctrl+Alt+Q", "snarfle output", "BLORT_FILE", "import markdown"]


class Spy(Translator):
    """The engine, recording the texts (after span masking) that go into the decoder."""

    seen: list[str]

    def _decode(self, sentences, options, with_attention, progress):
        self.seen.extend(sentences)
        return super()._decode(sentences, options, with_attention, progress)


@pytest.fixture(scope="module")
def spy():
    translator = Spy(REPO_ROOT / "models" / "en-de")
    translator.seen = []
    return translator


def _translate(spy: Spy, fmt: str, text: str | bytes) -> str | bytes:
    spy.seen.clear()
    parsed = parse(fmt, text, ("en", "de"))
    results = spy.translate_layouts([split_document(unit.text, "en") for unit in parsed.units])
    rendered, _ = translate_parsed(parsed, results, partial(segment_links, spy))
    return rendered


def _words(code: str) -> list[str]:
    return [w for w in code.replace("(", " ").replace(")", " ").replace("+", " ").split() if len(w) > 3]


DOCUMENTS = {
    "html": ("<html><head><meta charset='utf-8'><title>Tools</title></head><body>"
             "<p>Call <code>frobnicate_widget()</code> before you run <tt>zorblax --quux</tt> again.</p>"
             "<p>Press <kbd>Ctrl+Alt+Q</kbd> to see the <samp>snarfle output</samp> in the file <var>BLORT_FILE</var>.</p>"
             "<pre>import markdown</pre></body></html>"),
    "markdown": ("# Tools\n\nCall `frobnicate_widget()` before you run `zorblax --quux` again.\n\n"
                 "Press `Ctrl+Alt+Q` to see the `snarfle output` in the file `BLORT_FILE`.\n\n"
                 "```python\nimport markdown\n```\n"),
    "po": ('msgid ""\nmsgstr ""\n"Content-Type: text/plain; charset=UTF-8\\n"\n\n'
           'msgid "Call <code>frobnicate_widget()</code> before you run <tt>zorblax --quux</tt> again."\nmsgstr ""\n\n'
           'msgid "Press <kbd>Ctrl+Alt+Q</kbd> to see the <samp>snarfle output</samp> in the file '
           '<var>BLORT_FILE</var>."\nmsgstr ""\n\nmsgid "<pre>import markdown</pre>"\nmsgstr ""\n'),
}


@pytest.mark.parametrize("fmt", sorted(DOCUMENTS))
def test_code_texts_never_reach_the_decoder_and_come_back_whole(spy, fmt):
    rendered = _translate(spy, fmt, DOCUMENTS[fmt])
    assert spy.seen, "nothing was decoded: the prose around the codes must be"
    decoded = "\n".join(spy.seen)
    for code in CODES:
        assert not [w for w in _words(code) if w in decoded], (code, spy.seen)
        assert code in rendered, (code, rendered)
