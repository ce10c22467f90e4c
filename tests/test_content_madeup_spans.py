"""Spans the model makes up in a sentence none of whose beam hypotheses keeps the source's spans
(flagged ``span_mismatch``, ``Translator._consistent``) are deleted, as ``restore`` deletes those of
a sentence with masked spans; the flag stays and the segment's warnings name them. Replayed with the
two real strings the content sweep found them in (docs/formats.md, "What is left"): coreutils' ``ls
--help`` message (``append / indicator`` -> ``Anwendung /d in``), as ``msgunfmt`` prints Debian's
German catalogue, and the unit of Python 3.11's getopt page that html2po and po2xliff make, whose
codes are inline codes (``a hyphen ... two hyphens`` -> ``»-g«`` twice). The model outputs are
those of the general model that was models/en-de before the documentation model (beam 5, one
thread); the engine test replays a line of docs-dev with today's models/en-de."""
from __future__ import annotations

import polib
import pytest

from worker.text.consistency import invented_spans
from worker.text.pipeline import prepare, restore
from worker.text.segment import RESTORED_SPAN, Alignment, SegmentResult

from .conftest import REPO_ROOT, run_nmt
from .content_check import check_file

BUNDLE = REPO_ROOT / "models" / "en-de"
needs_model = pytest.mark.skipif(not (BUNDLE / "manifest.json").exists(), reason="models/en-de not present")

LS = ("  -n, --numeric-uid-gid      like -l, but list numeric user and group IDs\n"
      "  -N, --literal              print entry names without quoting\n"
      "  -o                         like -l, but do not list group information\n"
      "  -p, --indicator-style=slash\n"
      "                             append / indicator to directories\n")
INDICATOR = "append / indicator to directories"  # the line of LS the engine decodes
# The sentence of the getopt unit the engine decodes: its codes ('-x', '--long-option') are inline codes
GETOPT = ("Each option-and-value pair returned has the option as its first element, prefixed with a hyphen for "
          "short options (e.g., ) or two hyphens for long options (e.g., ), and the option argument as its second "
          "element, or an empty string if the option has no argument.")
GETOPT_DECODED = ("Jede Option »-and-Wert« hat die Option als erstes Element, die mit einem Hypotheken für die kurzen "
                  "Optionen für (eg...) oder zwei Hypothema-Optionen für die Option »-g«, die Option »-g« und die "
                  "Option angegeben ist, ist eine leere Option.")
_PRE = '&lt;code class="docutils literal notranslate"&gt;&lt;span class="pre"&gt;'
_POST = "&lt;/span&gt;&lt;/code&gt;"
GETOPT_UNIT = (  # html2po, then po2xliff (translate-toolkit), of the paragraph of Python 3.11's getopt.html
    "The return value consists of two elements: the first is a list of "
    f"{_PRE}(option,&lt;/span&gt; &lt;span class=\"pre\"&gt;value){_POST} pairs; the second is the list of program "
    "arguments left after the option list was stripped (this is a trailing slice of &lt;em&gt;args&lt;/em&gt;). "
    "Each option-and-value pair returned has the option as its first element, prefixed with a hyphen for short "
    f"options (e.g., {_PRE}'-x'{_POST}) or two hyphens for long options (e.g., {_PRE}'--long-option'{_POST}), and "
    "the option argument as its second element, or an empty string if the option has no argument. The options "
    "occur in the list in the same order in which they were found, thus allowing multiple occurrences. Long and "
    "short options may be mixed.")
GETOPT_XLIFF = ('<?xml version="1.0" encoding="UTF-8"?>\n'
                '<xliff xmlns="urn:oasis:names:tc:xliff:document:1.1" version="1.1">\n'
                '  <file original="getopt.po" source-language="en-US" datatype="plaintext">\n    <body>\n'
                '      <trans-unit xml:space="preserve" id="5">\n'
                f'        <source>{GETOPT_UNIT}</source>\n        <target></target>\n'
                '        <context-group name="po-reference" purpose="location">\n'
                '          <context context-type="sourcefile">getopt.html+html.body.dl.dd.p:6-5</context>\n'
                '        </context-group>\n      </trans-unit>\n    </body>\n  </file>\n</xliff>\n')


def _model_output(sentence: str, decoded: str) -> SegmentResult:
    return SegmentResult(sentence, decoded, -1.0, Alignment((), (), ()))


# -- restore, fed the model's outputs --------------------------------------------------------------
@pytest.mark.parametrize("source, decoded, restored, removed", [
    (INDICATOR, "Anwendung /d in Verzeichnisse", "Anwendung in Verzeichnisse", ["/d"]),
    # the quotes round a made-up option go with it
    (GETOPT, GETOPT_DECODED, GETOPT_DECODED.replace(" »-g«", ""), ["-g", "-g"]),
    # a number may translate a word: it stays
    ("prefixed with a hyphen or two hyphens for long options", "mit einem -g oder 2 Bindestrichen für lange Optionen",
     "mit einem oder 2 Bindestrichen für lange Optionen", ["-g"]),
])
def test_restore_deletes_the_spans_a_sentence_without_masked_spans_made_up(source, decoded, restored, removed):
    prepared = prepare(source)
    assert prepared.masked is not None and not prepared.masked.slots
    plain = restore(prepared, _model_output(source, decoded))
    assert plain.translation == decoded  # by default, only made-up placeholders go
    cleaned = restore(prepared, _model_output(source, decoded), made_up=True)
    assert cleaned.translation == restored
    assert cleaned.details["removed"] == removed and RESTORED_SPAN in cleaned.flags
    assert invented_spans(source, decoded)
    assert [s for s in invented_spans(source, cleaned.translation) if not s.isdigit()] == []  # numbers stay


# -- the engine, with the shipped model ------------------------------------------------------------
@pytest.fixture(scope="module")
def shipped():
    from worker.engine import EngineSettings, Translator
    return Translator(BUNDLE, EngineSettings(provider="cpu", intra_op_threads=1, batch_workers=1))


# a line of LibreOffice Chart's help (docs-dev), through the documentation model (models/en-de
# since en-de.fp32 of step 29,539): its best hypothesis, and every other of the beam, make up a path
AXES = "Choose Format - Axis - X Axis/Secondary X Axis/Z Axis/All Axes (Charts)"
AXES_MADE_UP = "x/Achse/z"


@needs_model
@pytest.mark.slow
def test_the_engine_deletes_what_the_best_hypothesis_made_up_and_keeps_the_flag(shipped):
    from worker.text.pipeline import TextOptions

    plain = shipped.translate_sentences([AXES], text_options=TextOptions(pick_consistent=False))[0]
    assert invented_spans(AXES, plain.translation) == [AXES_MADE_UP]
    picked = shipped.translate_sentences([AXES])[0]
    assert picked.translation == plain.translation.replace(f" {AXES_MADE_UP}", "")
    assert "span_mismatch" in picked.flags and not invented_spans(AXES, picked.translation)
    assert any(w.endswith(f"less the spans it made up ('{AXES_MADE_UP}')") for w in picked.warnings), picked.warnings


@needs_model
@pytest.mark.slow
def test_the_two_units_come_back_with_no_span_finding(tmp_path):
    catalogue = polib.POFile()
    catalogue.metadata = {"Content-Type": "text/plain; charset=UTF-8"}
    catalogue.append(polib.POEntry(msgid=LS, msgstr="", occurrences=[("src/ls.c", "1")]))
    catalogue.save(str(tmp_path / "ls.pot"))
    (tmp_path / "getopt.xlf").write_text(GETOPT_XLIFF, encoding="utf-8")
    done = run_nmt("translate", "--bundle", str(BUNDLE), "--device", "cpu", "--threads", "1",
                   "--out", str(tmp_path / "out"), str(tmp_path / "ls.pot"), str(tmp_path / "getopt.xlf"))
    assert done.returncode == 0, done.stderr
    found = [f"{fmt}: {f.check} at {f.where}: {f.source!r} -> {f.output!r}"
             for fmt, name, out in (("po", "ls.pot", "ls.de.pot"), ("xliff", "getopt.xlf", "getopt.de.xlf"))
             for f in check_file(fmt, (tmp_path / name).read_bytes(), (tmp_path / "out" / out).read_bytes())]
    assert not found, "\n".join(found)  # before: po spans '' -> '/d', xliff spans '' -> '-g, -g'


def test_the_source_s_empty_quotes_round_a_code_s_place_keep_the_translation_s_quotes():
    # diffutils' Projects page through LibreOffice (DOCX): "‘diff -r’ does not output" is sent without its code run
    # ("‘’ does not output"); the model quotes a made-up %s there: the %s goes, its quotes stay for the code
    source = "‘’ does not output enough information for  to transform the directory subtree into the file."
    decoded = "»%s« kann nicht genug Informationen übertragen, um das Verzeichnis in den Dateisverzeichnis zuformieren."
    restored = restore(prepare(source), _model_output(source, decoded))
    assert restored.translation == decoded.replace("%s", "") and restored.details["removed"] == ["%s"]
    no_code = "It does not output enough information for a tool to transform the directory subtree."
    assert restore(prepare(no_code), _model_output(no_code, decoded)).translation == decoded.replace("»%s« ", "")
