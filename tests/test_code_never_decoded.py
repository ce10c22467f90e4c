"""Inline code never reaches the model (HTML, Markdown, PO, XLIFF, DOCX): a translator that records
every text it hands to the decoder (the real engine, models/en-de, underneath) translates documents of each format whose
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


XLIFF_UNITS = [
    "Call &lt;code&gt;frobnicate_widget()&lt;/code&gt; before you run &lt;tt&gt;zorblax --quux&lt;/tt&gt; again.",
    "Press &lt;kbd&gt;Ctrl+Alt+Q&lt;/kbd&gt; to see the &lt;samp&gt;snarfle output&lt;/samp&gt; in the file "
    "&lt;var&gt;BLORT_FILE&lt;/var&gt;.",
    "Type &lt;code&gt;import markdown&lt;/code&gt; first.",
]
DOCUMENTS["xliff"] = (
    '<?xml version="1.0" encoding="UTF-8"?>\n<xliff version="1.2" xmlns="urn:oasis:names:tc:xliff:document:1.2">'
    '<file original="page.html" source-language="en" target-language="de" datatype="html"><body>'
    + "".join(f'<trans-unit id="{k}"><source>{unit}</source></trans-unit>' for k, unit in enumerate(XLIFF_UNITS))
    + "</body></file></xliff>\n")


def _docx() -> bytes:
    """Prose with code runs in Courier New and Consolas, and a paragraph in Courier New."""
    from docx import Document

    document = Document()
    for parts in ([("Call ", None), ("frobnicate_widget()", "Courier New"), (" before you run ", None),
                   ("zorblax --quux", "Consolas"), (" again.", None)],
                  [("Press ", None), ("Ctrl+Alt+Q", "Courier New"), (" to see the ", None),
                   ("snarfle output", "Consolas"), (" in the file ", None), ("BLORT_FILE", "Courier New"), (".", None)],
                  [("import markdown", "Courier New")]):
        paragraph = document.add_paragraph()
        for text, font in parts:
            run = paragraph.add_run(text)
            if font:
                run.font.name = font
    out = io.BytesIO()
    document.save(out)
    return out.getvalue()


def _docx_text(data: bytes) -> str:
    from docx import Document

    return "\n".join(p.text for p in Document(io.BytesIO(data)).paragraphs)


@pytest.mark.parametrize("fmt", sorted(DOCUMENTS) + ["docx"])
def test_code_texts_never_reach_the_decoder_and_come_back_whole(spy, fmt):
    if fmt == "docx":
        rendered = _docx_text(_translate(spy, fmt, _docx()))
    else:
        rendered = _translate(spy, fmt, DOCUMENTS[fmt])
    if fmt == "xliff":  # the codes come back escaped, as the units hold them
        rendered = rendered.replace("&lt;", "<").replace("&gt;", ">")
    assert spy.seen, "nothing was decoded: the prose around the codes must be"
    decoded = "\n".join(spy.seen)
    for code in CODES:
        assert not [w for w in _words(code) if w in decoded], (code, spy.seen)
        assert code in rendered, (code, rendered)
