"""What the content sweep still found (docs/formats.md, "Content checks on real files"), fixed in
general and replayed with the real strings: the engine prefers a hypothesis of its beam that keeps
the source's spans (``Translator._consistent``, ``worker.text.consistency``); a run of two spaces
beside a span comes back (``worker.text.reinsert``); a bare setting among stty's single-dash ones
and a word in GNU's old quotes (wget's `` `-n%c' ``) are spans (``worker.text.spans``). The
messages are the English msgids of Debian's German coreutils, tar and wget catalogues, as
``msgunfmt`` prints them; the sentences are of models/en-de's dev sets and grep's NEWS."""
from __future__ import annotations

import polib
import pytest

from worker.text.consistency import invented_spans, numbers_kept, span_consistent, stand_ins_kept
from worker.text.masking import mask
from worker.text.reinsert import restore_spans
from worker.text.spans import find_spans

from .conftest import REPO_ROOT, run_nmt
from .content_check import check_file, plain_words, spans_of

BUNDLE = REPO_ROOT / "models" / "en-de"
STAT = "Access: (%04a/%10.10A)  Uid: (%5u/%8U)   Gid: (%5g/%8G)\n"
TAR = "You may not specify more than one '-Acdtrux', '--delete' or  '--test-label' option"
STTY_SANE = ("   sane          same as cread -ignbrk brkint -inlcr -igncr icrnl\n"
             "                 icanon iexten echo echoe echok -echonl -noflsh\n"
             "                 %s\n"
             "                 %s\n"
             "                 %s,\n"
             "                 all special characters to their default values\n")
WGET = "%s: illegal option -- `-n%c'\n"
OD = ("\n\nTraditional format specifications may be intermixed; they accumulate:\n"
      "  -a   same as -t a,  select named characters, ignoring high-order bit\n"
      "  -b   same as -t o1, select octal bytes\n")

needs_model = pytest.mark.skipif(not (BUNDLE / "manifest.json").exists(), reason="models/en-de not present")


# -- spans -----------------------------------------------------------------------------------------
@pytest.mark.parametrize("sentence, spans", [
    # a bare setting between two single-dash ones, and one after them, belong to the run
    ("same as cread -ignbrk brkint -inlcr -igncr icrnl", [("option", "cread -ignbrk brkint -inlcr -igncr icrnl")]),
    # wget's word in GNU's old quotes
    ("%s: illegal option -- `-n%c'", [("placeholder", "%s"), ("command", "`-n%c'")]),
    ("Invalid value `%s' for command `%s'.", [("command", "`%s'"), ("command", "`%s'")]),
    # a backtick-quoted command keeps its own quotes; prose in GNU quotes is prose; "or" is no setting
    ("Run `echo 'hi'` now", [("command", "`echo 'hi'`")]),
    ("Quote `like this' here", []),
    ("use -v or -q to see", [("option", "-v"), ("option", "-q")]),
    # kill's metavariable as an option; sed's quoted script; reStructuredText's literal; a regular expression
    ("Usage: %s [-s SIGNAL | -SIGNAL] PID...", [("placeholder", "%s"), ("option", "-s"), ("option", "-SIGNAL"),
                                               ("placeholder", "PID")]),
    ("sed 's/ *|$//' sedfaq.txt > sedfaq2.txt", [("command", "sed 's/ *|$//' sedfaq.txt"), ("path", "sedfaq2.txt")]),
    ("package name  followed by ``==`` and the version number:", [("command", "``==``")]),
    ("would expand /%(-_)?\\d*N/ to the desired string", [("path", "/%(-_)?\\d*N/")]),
    ("use /usr/bin and/or /etc/", [("path", "/usr/bin"), ("path", "/etc/")]),
    # a lone single-dash setting of five letters or more after a space (stty's --help); not at the
    # start (a list item's verb), nor after a conjunction (German ``Zeilen oder -spalten`` in a
    # translation, which the consistency check reads with the same detector)
    ("same as -parenb cs8", [("option", "-parenb"), ("code", "cs8")]),
    ("Start it with -verbose to see more.", [("option", "-verbose")]),
    ("-install the package first", []),
    ("Tabellenzeilen oder -spalten", []),
    ("the pre-built and -compiled parts", []),
    ("for -execdir and -okdir, because", [("option", "-execdir"), ("option", "-okdir")]),  # find's
    ("argument to -group is empty", [("option", "-group")]),
])
def test_stty_runs_and_gnu_quotes_are_spans(sentence, spans):
    assert [(s.kind, s.text) for s in find_spans(sentence)] == spans


def test_two_spaces_inside_a_command_part_no_columns():
    from worker.text.layout import split_document
    text = "   bars (use double quotes for MS-DOS):\n\n     sed 's/  *|$//' sedfaq.txt > sedfaq2.txt\n"  # sed's FAQ
    assert [s.text for s in split_document(text, "en").sentences] == \
        ["bars (use double quotes for MS-DOS):", "sed 's/  *|$//' sedfaq.txt > sedfaq2.txt"]


# -- two spaces beside a span ----------------------------------------------------------------------
@pytest.mark.parametrize("source, decoded, expected", [
    # tar's message, its two spaces before a quoted option; the model wrote one and German quotes
    (TAR, "Sie können nicht mehr als '-Acdtrux', »Baby« oder »Frisbee« Option angeben",
     "Sie können nicht mehr als '-Acdtrux', »--delete« oder  »--test-label« Option angeben"),
    # stat's, after a placeholder and its bracket
    ("Access: (%04a/%10.10A)  Uid: (%5u/%8U)", "Zugriff: (Baby/Frisbee) Uid: (Nike/Texas)",
     "Zugriff: (%04a/%10.10A)  Uid: (%5u/%8U)"),
    # two spaces after a sentence's end are a typing habit
    ("It ends.  %s follows", "Es endet. Baby folgt", "Es endet. %s folgt"),
])
def test_two_spaces_beside_a_span_come_back(source, decoded, expected):
    masked = mask(source, find_spans(source))
    assert restore_spans(masked, decoded, ()).translation == expected


def test_two_spaces_between_words_come_back_before_the_word_aligned_to_the_next():
    source = "package name  followed by ``==`` and the version number:"  # Python's venv page, as text
    masked = mask(source, find_spans(source))
    decoded = "Paketname gefolgt von Baby und die Versionsnummer:"
    # masked words: package name followed by Baby and the version number: -> "gefolgt" is word 1
    restored = restore_spans(masked, decoded, [(0, 0), (1, 0), (2, 1), (3, 2), (4, 3), (5, 4), (6, 5), (7, 6), (8, 6)])
    assert restored.translation == "Paketname  gefolgt von ``==`` und die Versionsnummer:"


# -- the consistency of a hypothesis ---------------------------------------------------------------
@pytest.mark.parametrize("source, translation, invented", [
    ("sed works like a filter -- deleting", "Sinne, wie ein Filter --filterle, in der", ["--filterle"]),
    ("The files are archived in the SQL tables.", "Die Dateien sind geArchivt in demSSQL Tabellen.",
     ["geArchivt", "demSSQL"]),
    # a German word joined to a span is the span's
    ("Use the --filter option with UTF-8", "Die --filter-Option mit UTF-8-kodiert", []),
    # a number the source has once, twice (sed's FAQ)
    ("sed 12,18d myfile", "s 12 12,18d-Datei", ["12"]),
    ("1 and 10 and 100", "1 und 10 und 100", []),
    # the German word before an option read as its program: the option is the source's
    ("argument to -group is empty", "Argument für -group ist leer", []),
])
def test_span_like_words_the_source_lacks_are_invented(source, translation, invented):
    assert invented_spans(source, translation) == invented


@pytest.mark.parametrize("source, translation, kept", [
    ("the 10th Edition Unix sh", "die 10. Edition der Unix-sh", True),  # an ordinal's German form
    ("the 10th Edition Unix sh", "des Bearbeiten der Unix-Bedingung", False),  # lost
    ("before August 1, 2009", "vor dem 1. August 2009", True),
    ("before August 1, 2009", "bevor sie 1 im August 1999 2009", False),  # made up (the diffutils manual)
    ("1,500 files of 2.5 MB", "1.500 Dateien mit 2,5 MB", True),  # grouping and decimal marks
    ("1000 files", "1.000 Dateien", True),
    ("I have 2 dogs.", "Ich habe zwei Hunde.", True),  # spelt out by the translation
    ("the tenth argument", "das 10. Argument", True),  # spelt out by the source
    ("a complete 3rd party polyfill", "einer ganzen Seite", False),
    ("at 3 pm", "um 15 Uhr", False),  # a reader checks it: the segment is flagged and kept
])
def test_a_translation_keeps_the_sources_numbers(source, translation, kept):
    assert numbers_kept(source, translation, "en", "de") is kept


def test_a_hypothesis_keeps_each_stand_in_once():
    source = "Use the --filter option to run filter -- on the file."
    masked = mask(source, find_spans(source))
    assert masked.text == "Use the Baby option to run filter -- on the file."
    assert stand_ins_kept(masked, "Verwenden Sie die Baby Option.")
    assert not stand_ins_kept(masked, "Verwenden Sie die Option.")  # lost
    assert not stand_ins_kept(masked, "Verwenden Sie die Baby Option Baby.")  # doubled
    # "filter --" written as an option: a span the masked text does not hold
    assert not span_consistent(masked, "Die Baby Option, um --filter auszuführen.",
                               "Die --filter Option, um --filter auszuführen.")


def test_a_sentence_under_half_its_letters_is_halved():
    from worker.text.coverage import halved
    assert halved("With only 80,000 lines of /usr/share/dict/linux.words, the following",
                  "Mit 80,000 nur aus /usr/share/dict/linux.words,")
    assert halved("The --checkpoint-action=totals option instructs tar to output the",
                  "Die --checkpoint-action=totals-Option in Tar-Star")
    assert not halved("The cat sat on the mat today.", "Die Katze saß heute auf der Matte.")
    assert not halved("Use --all here.", "Hier.")  # under five words


def test_a_unit_html2po_took_from_a_pre_element_is_copied():
    from worker.formats.xliff import parse_xliff
    units = "".join(
        f'<trans-unit id="{k}"><source>{text}</source><context-group name="po-reference" purpose="location">'
        f'<context context-type="sourcefile">gettext_5.html+html.body.{path}</context></context-group></trans-unit>'
        for k, (text, path) in enumerate([("/* This is the first comment.  */", "dl.dd.table.tr.td.pre:229-31"),
                                          ("This is a comment.", "dl.dd.p:230-5")]))
    xliff = ('<?xml version="1.0"?><xliff version="1.1"><file original="x" source-language="en" '
             f'datatype="po"><body>{units}</body></file></xliff>')
    parsed = parse_xliff(xliff)
    assert [u.text for u in parsed.units] == ["This is a comment."]
    out = parsed.render(["Dies ist ein Kommentar."])
    assert "<target state=\"final\">/* This is the first comment.  */</target>" in out


# -- the engine's pick, with the shipped model -----------------------------------------------------
@pytest.fixture(scope="module")
def shipped():
    from worker.engine import EngineSettings, Translator
    return Translator(BUNDLE, EngineSettings(provider="cpu", intra_op_threads=1, batch_workers=1))


@needs_model
@pytest.mark.slow
def test_the_engine_takes_a_hypothesis_that_keeps_its_spans(shipped):
    from worker.text.pipeline import TextOptions
    source = "m = SLOPE(Data_Y;Data_X)"  # of models/en-de's documentation dev set
    before = shipped.translate_sentences([source], text_options=TextOptions(pick_consistent=False))[0]
    assert "SLOPE(Data_Y;Data_X)" not in before.translation  # its best: 'm = Data_X SLOPE(Data_Y;Texasas)'
    after = shipped.translate_sentences([source])[0]
    assert after.translation == "m = SLOPE(Data_Y;Data_X)"
    assert any("of the beam is taken" in w for w in after.warnings) and "span_mismatch" not in after.flags


@needs_model
@pytest.mark.slow
def test_a_sentence_whose_beam_never_keeps_its_spans_is_flagged(shipped):
    from worker.text.pipeline import TextOptions
    sentences = ["Run make -j4 then make install -k to build.", "The cat sat on the mat."]
    picked = shipped.translate_sentences(sentences)
    plain = shipped.translate_sentences(sentences, text_options=TextOptions(pick_consistent=False))
    assert "span_mismatch" in picked[0].flags and picked[0].translation == plain[0].translation
    # a best hypothesis that keeps its spans is the translation, as before
    assert "span_mismatch" not in picked[1].flags and picked[1].translation == plain[1].translation


@needs_model
@pytest.mark.slow
def test_a_sentence_whose_beam_never_keeps_its_numbers_keeps_its_source(shipped):
    """bash's examples index: the model writes ``10-Bedings`` for ``10th Edition`` (a made-up span,
    deleted: the 10 is gone) and no hypothesis keeps the 10; the source text is kept, flagged."""
    from worker.text.pipeline import TextOptions
    sentences = ["An implementation of the 10th Edition Unix sh builtin 'whatis(1)' command.",
                 "I have 2 dogs and 3 cats."]
    plain = shipped.translate_sentences(sentences, text_options=TextOptions(pick_consistent=False))
    assert not numbers_kept(sentences[0], plain[0].translation, "en", "de")
    picked = shipped.translate_sentences(sentences)
    assert picked[0].translation == sentences[0]
    assert {"span_mismatch", "kept_source"} <= set(picked[0].flags)
    assert any("keeps the source's numbers" in w for w in picked[0].warnings)
    assert "kept_source" not in picked[1].flags and numbers_kept(sentences[1], picked[1].translation, "en", "de")


@needs_model
@pytest.mark.slow
def test_a_spaced_ascii_dash_is_no_option(shipped):
    source = "sense, sed works like a filter -- deleting, inserting and changing"  # sed's FAQ
    result = shipped.translate_sentences([source])[0]
    assert " -- " in result.translation and not spans_of(result.translation) - spans_of(source)


@pytest.mark.parametrize("dash", [" - ", " \u2013 "])
def test_a_spaced_ascii_dash_comes_back_as_written_whichever_dash_the_model_wrote(dash):
    # models/en-de copies the hyphen it is shown; the documentation model writes an en dash for it
    from worker.text.pipeline import prepare, restore
    from worker.text.segment import Alignment, SegmentResult, word_spans

    prepared = prepare("sense, sed works like a filter -- deleting, inserting and changing")
    translation = f"Sinn, sed arbeitet wie ein Filter{dash}Löschen, Einfügen und Ändern"
    result = restore(prepared, SegmentResult(prepared.text, translation, -1.0, Alignment(
        (), tuple(word_spans(prepared.text)), tuple(word_spans(translation)))))
    assert result.translation == "Sinn, sed arbeitet wie ein Filter -- Löschen, Einfügen und Ändern"
    # a source with en dashes of its own keeps the model's
    prepared = prepare("A filter -- deleting \u2013 and changing")
    result = restore(prepared, SegmentResult(prepared.text, "Ein Filter \u2013 Löschen \u2013 und Ändern", -1.0,
                                             Alignment((), tuple(word_spans(prepared.text)), ())))
    assert result.translation == "Ein Filter \u2013 Löschen \u2013 und Ändern"


@needs_model
@pytest.mark.slow
def test_the_leftover_messages_come_back_with_their_spans_and_gaps(tmp_path):
    catalogue = polib.POFile()
    catalogue.metadata = {"Content-Type": "text/plain; charset=UTF-8"}
    for k, message in enumerate((STAT, TAR, STTY_SANE, WGET, OD)):
        flags = ["c-format"] if "%" in message else []
        catalogue.append(polib.POEntry(msgid=message, msgstr="", flags=flags, occurrences=[("src/x.c", str(k))]))
    source = tmp_path / "leftovers.pot"
    catalogue.save(str(source))
    done = run_nmt("translate", "--bundle", str(BUNDLE), "--device", "cpu", "--threads", "1",
                   "--out", str(tmp_path / "out"), str(source))
    assert done.returncode == 0, done.stderr
    output = tmp_path / "out" / "leftovers.de.pot"
    found = [f"{f.check} at {f.where}: {f.source!r} -> {f.output!r}"
             for f in check_file("po", source.read_bytes(), output.read_bytes())]
    assert not found, "\n".join(found)
    translated = {e.msgid: e.msgstr for e in polib.pofile(str(output))}
    assert "cread -ignbrk brkint -inlcr -igncr icrnl" in translated[STTY_SANE]
    assert "`-n%c'" in translated[WGET]
    assert "  »--test-label«" in translated[TAR] or "  '--test-label'" in translated[TAR]


# -- the checker: an ordinal's ending is no word ----------------------------------------------------
def test_an_ordinal_ending_on_a_placeholder_is_no_word():
    from .content_check import Unit, check_words
    assert plain_words("{}nd").strip() == "" and "nd" not in plain_words("the 82nd line")
    def unit(text: str) -> Unit:
        return Unit("msgid", "msgid", (("text", text),))
    assert not check_words([(unit("{}nd"), unit("{}."))])
    assert check_words([(unit("the second line"), unit("{}."))])  # a word lost is still one


def test_a_heading_set_in_a_unicode_font_is_no_code():
    from .content_check import _Style, _style_is_code
    styles = {"Heading1": _Style("Heading 1", "Heading", "Liberation Sans Unicode MS", False),
              "Heading": _Style("Heading", "Normal", "Liberation Sans", False),
              "PreformattedText": _Style("Preformatted Text", "Normal", "DejaVu Sans Mono", False),
              "Example": _Style("Example", None, "Source Code Pro", False)}
    assert not _style_is_code(styles, "Heading1")
    assert _style_is_code(styles, "PreformattedText") and _style_is_code(styles, "Example")
