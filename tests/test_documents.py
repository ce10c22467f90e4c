"""Documents keep their paragraphs, line breaks, empty lines and whitespace; batching keeps order."""
from __future__ import annotations

import pytest

from worker.engine.batching import pack_by_tokens
from worker.text.layout import split_document

DOC = "  Dr. Smith went to Washington. He arrived at 5 p.m.!  \n\n\tSecond paragraph.   Another one?\r\n\nLast line"


def test_sentences_have_exact_offsets_and_lines():
    layout = split_document(DOC, "en")
    assert [s.text for s in layout.sentences] == [
        "Dr. Smith went to Washington.", "He arrived at 5 p.m.!", "Second paragraph.", "Another one?", "Last line"]
    assert [s.line for s in layout.sentences] == [0, 0, 2, 2, 4]
    for s in layout.sentences:
        assert DOC[s.start:s.end] == s.text


def test_reassembly_keeps_every_gap_verbatim():
    layout = split_document(DOC, "en")
    text, starts = layout.reassemble([s.text for s in layout.sentences])
    assert text == DOC
    translated, starts = layout.reassemble([f"<{i}>" for i in range(len(layout.sentences))])
    assert translated == "  <0> <1>  \n\n\t<2>   <3>\r\n\n<4>"
    assert [translated[st:st + 3] for st in starts] == ["<0>", "<1>", "<2>", "<3>", "<4>"]


HELP = ("Usage: grep [OPTION]... PATTERNS [FILE]...\n"
        "  -E, --extended-regexp     PATTERNS are extended regular expressions\n"
        "  -s, --no-messages\tsuppress error messages\n"
        "Name\tAge\tCity\n"
        "Tom  is here.  He waits.\n")


def test_columns_of_a_help_text_or_a_table_are_sentences_of_their_own_and_keep_their_padding():
    """A table's cells and a help text's descriptions are sentences of their own; an option column
    (``-E, --extended-regexp``) and the gap after it are never sent to the model."""
    layout = split_document(HELP, "en")
    assert [s.text for s in layout.sentences] == [
        "Usage: grep [OPTION]...", "PATTERNS [FILE]...",
        "PATTERNS are extended regular expressions", "suppress error messages",
        "Name", "Age", "City", "Tom  is here.", "He waits."]  # two spaces in an unindented line: no column
    translated, _ = layout.reassemble([s.text.upper() for s in layout.sentences])
    options = ("-E, --extended-regexp", "-s, --no-messages")
    expected = HELP.upper()
    for option in options:
        expected = expected.replace(option.upper(), option)
    assert translated == expected  # every TAB and run of spaces where it was, the options as written


@pytest.mark.parametrize("text", ["", "\n", "   \n\n \t \n"])
def test_empty_and_blank_documents_have_no_sentences(text):
    layout = split_document(text, "en")
    assert layout.sentences == ()
    assert layout.reassemble([])[0] == text


def test_reassemble_checks_the_count():
    with pytest.raises(ValueError, match="1 translations for 2 sentences"):
        split_document("One. Two.", "en").reassemble(["x"])


def test_pack_by_tokens_respects_budget_and_covers_every_index():
    lengths = [5, 30, 2, 2, 17, 9, 40, 3]
    batches = pack_by_tokens(lengths, max_tokens=40, max_sentences=3)
    assert sorted(i for b in batches for i in b) == list(range(len(lengths)))
    for batch in batches:
        assert len(batch) <= 3
        assert len(batch) == 1 or len(batch) * max(lengths[i] for i in batch) <= 40
    flat = [lengths[i] for b in batches for i in b]
    assert flat == sorted(flat)  # shortest first: little padding


def test_pack_by_tokens_puts_an_oversize_sentence_alone():
    assert pack_by_tokens([100, 1], max_tokens=10, max_sentences=8) == [[1], [0]]
    with pytest.raises(ValueError):
        pack_by_tokens([1], max_tokens=0, max_sentences=1)


@pytest.mark.parametrize("name, stem", [("letter.txt", "letter"), ("letter.en.txt", "letter"), ("en.txt", "en"),
                                        ("a.b.en", "a.b"), ("notes.de.txt", "notes.de")])
def test_output_stem_drops_the_source_language(name, stem):
    from pathlib import Path

    from queue_config.outputs import output_stem

    assert output_stem(Path(name), "en") == stem


@pytest.mark.parametrize("text, sentences", [
    # gettext's manual: a footnote's mark (a link in the DOCX) glued to the full stop before it
    ("It was promoted right after .(2) It was not really necessary.",
     ["It was promoted right after .(2)", "It was not really necessary."]),
    ("See the manual.[3] Then run it.", ["See the manual.[3]", "Then run it."]),
    ("Read it.(see below) Then go.", ["Read it.", "(see below) Then go."]),  # words in brackets open a sentence
])
def test_a_footnote_mark_after_a_full_stop_stays_with_its_sentence(text, sentences):
    assert [s.text for s in split_document(text, "en").sentences] == sentences
