"""Verbatim spans: detection, masking, restoring, and the shipped En->De bundle carrying every
kind of span through unchanged (real SentencePiece and ONNX Runtime)."""
from __future__ import annotations

import json
import re
from collections import Counter

import pytest

from worker.engine.settings import EngineSettings
from worker.engine.translator import Translator
from worker.text.masking import STAND_INS, mask
from worker.text.pipeline import TextOptions, prepare, restore
from worker.text.segment import RESTORED_SPAN, Alignment, SegmentResult, word_at, word_spans
from worker.text.spans import KINDS, find_spans

from .conftest import REPO_ROOT, run_nmt

BUNDLE = REPO_ROOT / "models" / "multi30k-en-de"
OFF = TextOptions(protect_spans=False, restore_case=False)


@pytest.fixture(scope="module")
def translator():
    return Translator(BUNDLE, EngineSettings(provider="cpu", intra_op_threads=1))


# -- detection --------------------------------------------------------------------------------------
DETECTED = [
    ("Visit https://example.com/docs for more.", [("url", "https://example.com/docs")]),
    ("See https://en.wikipedia.org/wiki/Python_(language).", [("url", "https://en.wikipedia.org/wiki/Python_(language)")]),
    ("Go to www.cityparks.org.", [("url", "www.cityparks.org")]),
    ("Write to john.doe@example.org today.", [("email", "john.doe@example.org")]),
    ("It is in /usr/local/bin/run.sh now.", [("path", "/usr/local/bin/run.sh")]),
    ("Open C:\\Users\\anna\\report.docx now.", [("path", "C:\\Users\\anna\\report.docx")]),
    ("Edit src/main.py and config.yaml.", [("path", "src/main.py"), ("path", "config.yaml")]),
    ("It costs 1,234.56 or 1.234,56 after a 12% rise.", [("number", "1,234.56"), ("number", "1.234,56"), ("number", "12%")]),
    ("At 10:30 on 2023-10-05 call 555-1234.", [("number", "10:30"), ("number", "2023-10-05"), ("number", "555-1234")]),
    ("Buy XJ-4000 with INV-2023-0042 on A4.", [("code", "XJ-4000"), ("code", "INV-2023-0042"), ("code", "A4")]),
    ("Set max_retries now.", [("code", "max_retries")]),
    ("Version v2.3.1 replaces 1.10.0-beta.2.", [("version", "v2.3.1"), ("version", "1.10.0-beta.2")]),
    ("Follow @nasa_news and #MondayMotivation.", [("handle", "@nasa_news"), ("hashtag", "#MondayMotivation")]),
    ("Ping 192.168.0.1:8080 and 2001:db8::1.", [("ip", "192.168.0.1:8080"), ("ip", "2001:db8::1")]),
    ("Hi {name}, {{count}} new, %s %1$s %d ${HOME} :user.",
     [("placeholder", t) for t in ("{name}", "{{count}}", "%s", "%1$s", "%d", "${HOME}", ":user")]),
    ("Call +49 30 1234567, +49 (0)89 1234 5678 or 0800 123 456.",
     [("phone", "+49 30 1234567"), ("phone", "+49 (0)89 1234 5678"), ("phone", "0800 123 456")]),
    ("Pay DE89 3704 0044 0532 0130 00 with 4111 1111 1111 1111.",
     [("grouped", "DE89 3704 0044 0532 0130 00"), ("grouped", "4111 1111 1111 1111")]),
    ("Apply fix-7781.diff, edit setup.cfg, the Makefile and .gitignore.",
     [("path", "fix-7781.diff"), ("path", "setup.cfg"), ("path", "Makefile"), ("path", ".gitignore")]),
    ("Run `git status`, then pip install --upgrade requests to update it.",
     [("command", "`git status`"), ("command", "pip install --upgrade requests")]),
    ("Try sudo systemctl restart nginx and docker ps -a now.",
     [("command", "sudo systemctl restart nginx"), ("command", "docker ps -a")]),
    ("%lu %zu %llu %lc %hhd %jd %td %qd %Lf %-8.3f %.*s %*d %#08x %3o %p %m %2$s %%",
     [("placeholder", t) for t in ("%lu", "%zu", "%llu", "%lc", "%hhd", "%jd", "%td", "%qd", "%Lf", "%-8.3f",
                                   "%.*s", "%*d", "%#08x", "%3o", "%p", "%m", "%2$s", "%%")]),
    ("Last login:%s%s%s on SIG%s at 0x%x, %d%% done, %sK left",
     [("placeholder", t) for t in ("%s%s%s", "SIG%s", "0x%x", "%d%%", "%sK")]),
    ("Hi %(user)s, {value!r:>10} %1 and %{name} ${JAVA_HOME:-/opt}.",
     [("placeholder", t) for t in ("%(user)s", "{value!r:>10}", "%1", "%{name}", "${JAVA_HOME:-/opt}")]),
    # ICU MessageFormat arguments whole, their nested cases included, beside a plain {name}
    ("You have {count, plural, one {# new message} other {# new messages}} from {name}.",
     [("placeholder", "{count, plural, one {# new message} other {# new messages}}"), ("placeholder", "{name}")]),
    ("{gender, select, female {she} male {he} other {they}} paid {price, number, currency} on {d, date, short}.",
     [("placeholder", t) for t in ("{gender, select, female {she} male {he} other {they}}",
                                   "{price, number, currency}", "{d, date, short}")]),
    ("{n, plural, =0 {no files} other {{n, number} files in {dir}}}",
     [("placeholder", "{n, plural, =0 {no files} other {{n, number} files in {dir}}}")]),
    # Software text: options (with the program name before them unless it is an English word), versions
    # with a name, addresses in angle brackets, function calls and dotted names, key combinations.
    ("Use grep --no-messages or --binary-files=without-match.",
     [("command", "grep --no-messages"), ("option", "--binary-files=without-match")]),
    ("Run ifconfig -a first; the -s option is quiet, so use -rf with care.",
     [("option", "ifconfig -a"), ("option", "-s"), ("option", "-rf")]),
    ("  -E, --extended-regexp     PATTERNS are extended",
     [("option", "-E"), ("option", "--extended-regexp"), ("placeholder", "PATTERNS")]),
    # metavariables of --help texts; an attribute read from a named placeholder is part of it
    ("print NUM lines; read PATTERNS from FILE", [("placeholder", "NUM"), ("placeholder", "PATTERNS"),
                                                  ("placeholder", "FILE")]),
    ("because %(class_name)s.allow_future is False.", [("placeholder", "%(class_name)s.allow_future")]),
    ("Needs bash-4.4, glibc-2.1 and 2.1.3.", [("version", "bash-4.4"), ("version", "glibc-2.1"), ("version", "2.1.3")]),
    ("By Michael Alan Dorman <mdorman@debian.org>.", [("email", "<mdorman@debian.org>")]),
    ("Call setuid() and os.path.join(a, b), then read sys.argv.",
     [("call", "setuid()"), ("call", "os.path.join(a, b)"), ("call", "sys.argv")]),
    ("Press Ctrl+F, Ctrl+Shift+T or Alt-F4.", [("key", "Ctrl+F"), ("key", "Ctrl+Shift+T"), ("key", "Alt-F4")]),
    # from real manuals: manual pages, C# class names, make's files, globs, Python's %r
    ("See printenv(1) and printf(3p).", [("call", "printenv(1)"), ("call", "printf(3p)")]),
    ("Use GNU.Gettext.GettextResourceManager or System.Resources.ResourceManager.",
     [("call", "GNU.Gettext.GettextResourceManager"), ("call", "System.Resources.ResourceManager")]),
    ("Edit Makefile.am and Makefile.in.in, then remove the *.o files.",
     [("path", "Makefile.am"), ("path", "Makefile.in.in"), ("path", "*.o")]),
    ("Use %r for the build.", [("placeholder", "%r")]),
    # from READMEs and NEWS files: long and suffixed versions, version-control URLs, mailto:, locales,
    # environment assignments
    ("    2.4.2.418.3-30eaa", [("version", "2.4.2.418.3-30eaa")]),
    ("  - Xz 4.999.8beta or later", [("version", "4.999.8beta")]),
    ("Clone git://git.sv.gnu.org/libtool.git or write to mailto:bug-libtool@gnu.org.",
     [("url", "git://git.sv.gnu.org/libtool.git"), ("email", "mailto:bug-libtool@gnu.org")]),
    ("Tests fail under the cs_CZ.UTF-8 locale, and 'LC_ALL=tr_TR.utf8 grep -i i' no longer does.",
     [("code", "cs_CZ.UTF-8"), ("code", "LC_ALL=tr_TR.utf8"), ("command", "grep -i")]),
    ("./configure CFLAGS=-maix64 AR='ar -X64'", [("path", "./configure"), ("code", "CFLAGS=-maix64"),
                                                 ("code", "AR='ar -X64'")]),
    ("OSF/1 4.0d on Debian 3.0r1 at 2.4GHz, see commits v0.1-2110-ge648401be.",
     [("number", "1"), ("version", "4.0d"), ("version", "3.0r1"), ("version", "2.4GHz"),
      ("version", "v0.1-2110-ge648401be")]),
    # sed's FAQ: a sed script of addresses and a command is an argument (the model wrote "s zwölf 12,18d")
    ("     sed 12,18d myfile", [("command", "sed 12,18d myfile")]),
    ("     sed -n 12,18p myfile", [("command", "sed -n 12,18p myfile")]),
    ("Run sed 5 times, or tar 2d later.", [("number", "5"), ("code", "2d")]),
    ("Tar now uses SEEK_DATA/SEEK_HOLE; cvs -d:pserver:anonymous@pserver.git.sv.gnu.org:/srv/git/libtool.git",
     [("code", "SEEK_DATA/SEEK_HOLE"), ("command", "cvs -d:pserver:anonymous@pserver.git.sv.gnu.org:/srv/git/libtool.git")]),
    # from gettext's C# documentation and Python's: signatures, dotted class names, classes of three parts
    ("GettextResourceManager(System.String, System.Reflection.Assembly) Constructor",
     [("call", "GettextResourceManager(System.String, System.Reflection.Assembly)")]),
    ("GNU.Gettext Namespace, java.lang.Object, getpass.getuser() and exception getpass.GetPassWarning",
     [("call", "GNU.Gettext"), ("call", "java.lang.Object"), ("call", "getpass.getuser()"),
      ("call", "getpass.GetPassWarning")]),
    ("The end.Then we go, e.g. to JavaScript.", []),
    # from the content sweep (tests/content_sweep.py): a standard's part (the model wrote POSIX-Benutzer),
    # a dotted abbreviation of three letters (a.k. Positions-), a quoted option value (its words
    # translated), globs in paths (m4/*/.m4)
    ("POSIX.2 user identity; POSIX.1-2008 too.", [("version", "POSIX.2"), ("version", "POSIX.1-2008")]),
    ("Quadratic with M4 1.4.x, not in v2.x or 2.* yet.",
     [("code", "M4"), ("version", "1.4.x"), ("version", "v2.x"), ("version", "2.*")]),
    ("Options for file selection (a.k.a position-sensitive options), w.r.t. tar, i.e. these.",
     [("code", "a.k.a"), ("code", "w.r.t.")]),
    ("  tar -x -f a.tar --info-script='changevol $TAR_ARCHIVE $TAR_VOLUME'",
     [("command", "tar -x -f a.tar --info-script='changevol $TAR_ARCHIVE $TAR_VOLUME'")]),
    ("If you modify m4/*.m4 or pth_*.c, use --format=\"%s x\" or --foo='a'.",
     [("path", "m4/*.m4"), ("path", "pth_*.c"), ("option", '--format="%s x"'), ("option", "--foo='a'")]),
    ("Usage: %s [OPTION]... {script-only-if-no-other-script} [input-file]...",
     [("placeholder", "%s"), ("placeholder", "OPTION"), ("placeholder", "{script-only-if-no-other-script}")]),
    ("He lives in the U.S.A. now; section 1(a) applies.", [("number", "1")]),
    # Not spans: hyphenated words, a dash between words, negative numbers stay numbers, a plural in brackets.
    ("A well-known e-mail - really -- and -5 degrees for the file(s), e.g. here.", [("number", "-5")]),
    # Not spans: ordinals, abbreviations, a colon before a word, and/or, a word's letters only.
    ("The 1st and 2nd, e.g. the U.S. and/or km/h. Note: this is it.", []),
    # Not spans: percentages before words, a command word used as a word, years in a row.
    ("It rose 50% of the time at 5% a year; make sure you go to the store and find the cat.",
     [("number", "50%"), ("number", "5%")]),
]


@pytest.mark.parametrize("sentence, expected", DETECTED)
def test_spans_are_found_with_their_kind(sentence, expected):
    spans = find_spans(sentence)
    assert [(s.kind, s.text) for s in spans] == expected
    assert all(sentence[s.start:s.end] == s.text for s in spans)


def test_every_kind_is_covered_by_the_detection_table():
    assert {kind for _, expected in DETECTED for kind, _ in expected} == set(KINDS)


def test_masking_uses_distinct_stand_ins_absent_from_the_sentence_and_keeps_words_apart():
    source = "London has {a}{b} and XJ-4000."
    masked = mask(source, find_spans(source))
    used = [s.stand_in for s in masked.slots]
    assert len(set(used)) == 3 and "London" not in used and set(used) <= set(STAND_INS)
    assert all(masked.text[s.start:s.end] == s.stand_in for s in masked.slots)
    assert len(masked.text.split()) == len(source.split()) + 1  # {a}{b}: two stand-ins, two words
    assert masked.origin[masked.slots[0].start] == source.index("{a}")


# -- the shipped model --------------------------------------------------------------------------------
ONE_PER_KIND = [
    "Visit https://example.com/docs for more information.",
    "A woman writes to maria.garcia@example.org about the trip.",
    "The logs are stored in /var/log/nginx/access.log on the server.",
    "The bridge is 1,280 meters long.",
    "A man holds a sign with the number 42.",
    "A worker repairs the XJ-4000 machine.",
    "The bug was fixed in v2.0.0-rc.1 last week.",
    "A girl holds a sign that says #StopTheWar.",
    "The singer thanked @john_doe in her post.",
    "Connect to 192.168.0.1 to change the settings.",
    "Hello {name}, your order has shipped.",
    "The file %s could not be opened.",
]
POSITIONS = [
    "https://example.com/docs is where a man reads the news.",  # start
    "A man reads the news at https://example.com/docs",  # end, no full stop
    "Call 555-1234 or 555-9876.",  # adjacent
    "The codes XJ-4000 XJ-5000 and XJ-6000 are sold out.",
    "Use {first}{last} as the name.",  # touching
    "Version v2.3.1 fixes bug E-1045 on 192.168.0.1 at 10:30.",  # many kinds
    "@nasa shared #SpaceWeek photos at https://nasa.example.gov/photos.",
]
ONLY_SPANS = ["https://example.com", "42", "{name}", "john.doe@example.org, @nasa!"]


def _source_word(result: SegmentResult, offset: int) -> int:
    return word_at([a for a, _ in result.alignment.source_spans], offset)


def _assert_spans_verbatim_and_aligned(result: SegmentResult):
    spans = find_spans(result.source)
    assert [d["text"] for d in result.details["spans"]] == [s.text for s in spans]
    starts = [a for a, _ in result.alignment.target_spans]
    for detail in result.details["spans"]:
        a, b = detail["target"]
        assert result.translation[a:b] == detail["text"]  # verbatim, where details say
        assert result.source[detail["source"][0]:detail["source"][1]] == detail["text"]
        pair = (_source_word(result, detail["source"][0]), word_at(starts, a))
        assert pair in result.alignment.pairs  # the span's target word points at its own source word
    n_src, n_tgt = len(result.source.split()), len(result.translation.split())
    assert all(0 <= i < n_src and 0 <= j < n_tgt for i, j in result.alignment.pairs)
    assert [result.translation[a:b] for a, b in result.alignment.target_spans] == result.translation.split()


def _gained(result: SegmentResult) -> list[str]:
    known = [s.text for s in find_spans(result.source)]
    return [s.text for s in find_spans(result.translation) if not any(s.text in k or k in s.text for k in known)]


@pytest.mark.parametrize("sentence", ONE_PER_KIND + POSITIONS)
def test_spans_come_through_verbatim_at_their_aligned_place(translator, sentence):
    [result] = translator.translate_sentences([sentence])
    _assert_spans_verbatim_and_aligned(result)
    assert _gained(result) == []
    assert not any(re.search(rf"\b{s}\b", result.translation) for s in STAND_INS)  # no stand-in leaks


def test_each_kind_is_kept_by_the_model_with_protection_and_most_are_lost_without(translator):
    protected = translator.translate_sentences(ONE_PER_KIND)
    plain = translator.translate_sentences(ONE_PER_KIND, text_options=OFF)
    kept = [all(s.text in r.translation for s in find_spans(r.source)) for r in plain]
    assert all(all(s.text in r.translation for s in find_spans(r.source)) for r in protected)
    assert sum(kept) <= len(ONE_PER_KIND) // 2  # the unprotected model breaks most of them


@pytest.mark.parametrize("sentence", ONLY_SPANS)
def test_a_sentence_of_spans_only_is_its_own_translation(translator, sentence):
    [result] = translator.translate_sentences([sentence])
    assert result.translation == sentence and result.flags == ()
    assert result.alignment.pairs == tuple((i, i) for i in range(len(sentence.split())))


def test_protection_off_gives_the_plain_model_output(translator):
    sentences = ["Visit https://example.com/docs for more information.", "A dog runs in the park."]
    off = translator.translate_sentences(sentences, text_options=OFF)
    plain = translator._decode(sentences, translator.default_options, False, None)
    assert [(r.translation, r.alignment, r.score) for r in off] == [(r.translation, r.alignment, r.score) for r in plain]
    assert "https://example.com/docs" not in off[0].translation
    # No span flag or detail; the quality estimate's flags (low_confidence, ...) are the plain output's.
    assert all("restored_span" not in r.flags and "spans" not in r.details for r in off)
    # Without spans, protection changes nothing.
    [on] = translator.translate_sentences(sentences[1:])
    assert (on.translation, on.alignment, on.flags) == (off[1].translation, off[1].alignment, off[1].flags)
    assert on.confidence == pytest.approx(off[1].confidence, abs=1e-5)  # batched alone vs with another sentence


# -- restoring when the model misbehaves (crafted engine outputs) ------------------------------------
def _engine_result(prepared, translation: str, pairs) -> SegmentResult:
    alignment = Alignment(tuple(pairs), tuple(word_spans(prepared.text)), tuple(word_spans(translation)))
    return SegmentResult(prepared.text, translation, -1.0, alignment)


def test_a_dropped_stand_in_is_inserted_after_its_neighbour_and_flagged():
    prepared = prepare("A man with XJ-4000 walks down the street.")
    assert prepared.text == f"A man with {prepared.masked.slots[0].stand_in} walks down the street."
    # "Ein Mann mit geht die Straße entlang." : the stand-in (word 3) has no target word.
    result = restore(prepared, _engine_result(prepared, "Ein Mann mit geht die Straße entlang.",
                                              [(0, 0), (1, 1), (2, 2), (4, 3), (6, 4), (7, 5), (7, 6)]))
    assert result.translation == "Ein Mann mit XJ-4000 geht die Straße entlang."
    assert result.flags == (RESTORED_SPAN,) and result.details["spans"][0]["method"] == "inserted"
    assert (3, 3) in result.alignment.pairs and (4, 4) in result.alignment.pairs  # later words moved along
    _assert_spans_verbatim_and_aligned(result)


def test_a_dropped_stand_in_at_the_end_goes_before_the_full_stop():
    prepared = prepare("The file is saved in /tmp/report.pdf.")
    result = restore(prepared, _engine_result(prepared, "Die Datei ist gespeichert.", [(0, 0), (1, 1), (2, 2), (3, 3)]))
    assert result.translation == "Die Datei ist gespeichert /tmp/report.pdf."
    assert RESTORED_SPAN in result.flags
    _assert_spans_verbatim_and_aligned(result)


def test_a_changed_stand_in_is_replaced_through_the_alignment():
    prepared = prepare("Visit https://example.com/docs for more information.")
    # The model turned the stand-in (word 1) into two words aligned to it alone.
    result = restore(prepared, _engine_result(prepared, "Besuchen Sie die Seite für mehr Informationen.",
                                              [(0, 0), (0, 1), (1, 2), (1, 3), (2, 4), (3, 5), (4, 6)]))
    assert result.translation == "Besuchen Sie https://example.com/docs für mehr Informationen."
    assert result.details["spans"][0]["method"] == "aligned" and result.flags == (RESTORED_SPAN,)
    _assert_spans_verbatim_and_aligned(result)


def test_a_number_that_opens_the_sentence_is_not_joined_to_the_next_word_by_a_hyphen():
    # gettext's manual, a section heading: the documentation model wrote "5.1.4-Input-Datei interpretiert"
    prepared = prepare("5.1.4 Input file interpretation")
    stand_in = prepared.masked.slots[0].stand_in
    result = restore(prepared, _engine_result(prepared, f"{stand_in}-Input-Datei interpretiert",
                                              [(0, 0), (1, 0), (2, 0), (3, 1)]))
    assert result.translation == "5.1.4 Input-Datei interpretiert"
    assert result.details["spans"][0]["target"] == [0, 5]
    # inside the sentence, a German compound with a number stays one (das 2.1.3-Release)
    prepared = prepare("Install the 2.1.3 release now.")
    stand_in = prepared.masked.slots[0].stand_in
    result = restore(prepared, _engine_result(prepared, f"Installieren Sie jetzt das {stand_in}-Release.",
                                              [(0, 0), (1, 3), (2, 4), (3, 4), (4, 2)]))
    assert result.translation == "Installieren Sie jetzt das 2.1.3-Release."


def test_a_misspelt_stand_in_is_its_place_and_a_quote_the_model_dropped_comes_back():
    # PostgreSQL's catalogue through the documentation model: "Maria" came back as »araria«, and
    # another message lost the quote after its file name
    prepared = prepare('could not stat file "%s": %m', stand_ins=("Maria", "Tom", "Boston"))
    assert prepared.text == 'could not stat file "Maria": Tom'
    result = restore(prepared, _engine_result(prepared, "konnte Datei »araria« nicht ausführen: Tom",
                                              [(0, 0), (2, 1), (3, 4), (4, 2), (5, 3)]))
    assert result.translation == "konnte Datei »%s« nicht ausführen: %m"
    assert [d["method"] for d in result.details["spans"]] == ["copied", "copied"]
    prepared = prepare('could not read file "%s": %m', stand_ins=("Maria", "Tom", "Boston"))
    result = restore(prepared, _engine_result(prepared, 'konnte Datei "Maria nicht lesen: Tom',
                                              [(0, 0), (3, 4), (4, 1), (5, 2), (6, 5)]))
    assert result.translation == 'konnte Datei "%s" nicht lesen: %m'
    assert result.details["spans"][0]["target"] == [14, 16]  # the span alone, without the quote put in
    # the opening quote, where the model kept only the closing one
    prepared = prepare("Cannot open '%s' for writing.", stand_ins=("Maria", "Tom", "Boston"))
    result = restore(prepared, _engine_result(prepared, "Maria« kann nicht zum Schreiben geöffnet werden.",
                                              [(2, 0), (0, 1), (1, 2)]))
    assert result.translation == "»%s« kann nicht zum Schreiben geöffnet werden."
    # a word that merely ends like a short stand-in is no misspelling of it (Tom: "Atom")
    prepared = prepare("Save it as report.pdf now.", stand_ins=("Tom",))
    result = restore(prepared, _engine_result(prepared, "Speichern Sie es jetzt als Atom.", [(0, 0), (3, 4)]))
    assert "Atom" in result.translation and "report.pdf" in result.translation


def test_a_lone_percent_sign_the_model_wrote_before_a_directive_is_deleted():
    # PostgreSQL's catalogue through the documentation model: "Block % %u" for "block %u"
    prepared = prepare("seek failed for block %u in file", stand_ins=("Maria",))
    result = restore(prepared, _engine_result(prepared, "Suche für Block % Maria in der Datei fehlgeschlagen",
                                              [(0, 0), (1, 6), (3, 2), (4, 4), (5, 3), (6, 5)]))
    assert result.translation == "Suche für Block %u in der Datei fehlgeschlagen"
    assert result.details["removed"] == ["%"] and RESTORED_SPAN in result.flags
    # a source with a "%" of its own outside the spans keeps the model's
    prepared = prepare("It rose by 50 % in %d days.", stand_ins=("Maria", "Tom"))
    assert prepared.text == "It rose by Maria % in Tom days."
    translation = "Es stieg um Maria % in Tom Tagen."
    assert restore(prepared, _engine_result(prepared, translation, [])).translation == "Es stieg um 50 % in %d Tagen."


def test_invented_spans_and_extra_stand_ins_are_removed():
    prepared = prepare("The price is 1,234.56 dollars.")
    stand_in = prepared.masked.slots[0].stand_in
    result = restore(prepared, _engine_result(prepared, f"Der Preis ist {stand_in} Dollar, {stand_in} und 145.",
                                              [(0, 0), (1, 1), (2, 2), (3, 3), (4, 4)]))
    assert result.translation == "Der Preis ist 1,234.56 Dollar, und."
    assert result.details["removed"] == [stand_in, "145"] and RESTORED_SPAN in result.flags
    assert _gained(result) == []
    _assert_spans_verbatim_and_aligned(result)


def test_a_copied_stand_in_is_not_flagged():
    prepared = prepare("A man with XJ-4000 walks.")
    stand_in = prepared.masked.slots[0].stand_in
    result = restore(prepared, _engine_result(prepared, f"Ein Mann mit {stand_in} geht.",
                                              [(0, 0), (1, 1), (2, 2), (3, 3), (4, 4)]))
    assert result.translation == "Ein Mann mit XJ-4000 geht." and result.flags == ()
    assert result.details["spans"] == [{"kind": "code", "text": "XJ-4000", "source": [11, 18], "target": [13, 20],
                                        "method": "copied"}]


# -- JSON and documents -------------------------------------------------------------------------------
def test_flags_and_span_details_survive_json_and_point_into_the_documents(translator):
    doc = "A dog runs.\n\nThe bike costs $450 at https://shop.example.com today."
    result = translator.translate_document(doc)
    payload = json.loads(json.dumps(result.to_json()))
    assert all("flags" in s and isinstance(s["flags"], list) for s in payload["segments"])
    assert payload["segments"][0]["flags"] == [] and payload["segments"][0]["details"] == {}
    spans = payload["segments"][1]["details"]["spans"]
    assert [d["text"] for d in spans] == ["$450", "https://shop.example.com"]
    for d in spans:
        assert doc[d["source"][0]:d["source"][1]] == d["text"]
        assert result.translation[d["target"][0]:d["target"][1]] == d["text"]
    for raw, segment in zip(payload["segments"], result.segments):
        back = SegmentResult.from_json(raw)
        assert (back.flags, back.details, back.alignment) == (segment.flags, segment.details, segment.alignment)


def test_cli_translate_keeps_spans_unless_told_not_to():
    line = "Visit https://example.com/docs for more information.\n"
    on = run_nmt("translate", "--bundle", str(BUNDLE), "--device", "cpu", "--beam", "2", stdin=line)
    off = run_nmt("translate", "--bundle", str(BUNDLE), "--device", "cpu", "--beam", "2", "--no-protect-spans",
                  stdin=line)
    assert on.returncode == off.returncode == 0, on.stderr + off.stderr
    assert "https://example.com/docs" in on.stdout and "https://example.com/docs" not in off.stdout


def test_stand_ins_are_single_pieces_of_the_shipped_vocabulary(translator):
    for stand_in in STAND_INS:
        assert translator.source_sp.encode(stand_in, out_type=str) == ["\u2581" + stand_in]


# -- round trips and placeholder consistency (hypothesis) --------------------------------------------
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from worker.text.reinsert import restore_spans  # noqa: E402

SPAN_EXAMPLES = [
    "+49 30 1234567", "0800 123 456", "DE89 3704 0044 0532 0130 00", "fix-7781.diff", "setup.cfg", "Makefile",
    "`git status`", "pip install --upgrade requests", "%lu", "%zu", "%.*s", "SIG%s", "0x%x", "%2$s", "%s%s%s",
    "%(name)s", "{value!r:>10}", "%{name}", "${JAVA_HOME}", "v2.0.0-rc1", "https://example.com/a?b=1",
    "192.168.0.1:8080", "1,234.56", "XJ-4000", "a.b@example.org", "#tag", "@handle",
]
WORDS = ["the", "file", "Open", "and", "then", "call", "number", "with", "it", "now"]
PLACEHOLDERS = ["%s", "%d", "%lu", "{0}", "%1", "%(name)s", "${HOME}"]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(WORDS), st.sampled_from(SPAN_EXAMPLES + WORDS)), min_size=1, max_size=6),
       st.sampled_from(["", ".", "?", "!"]))
def test_masking_then_restoring_the_masked_text_gives_the_sentence_back(pairs, end):
    """Each span example (a word before it: two numbers in a row may read as one) is found whole,
    inside one span (a command line takes bare words after it as its arguments), and a model that copies the masked text word for word gets the sentence back exactly, every
    span copied."""
    tokens = [t for pair in pairs for t in pair]
    sentence = " ".join(tokens) + end
    spans = find_spans(sentence)
    start = 0
    for token in tokens:
        if token in SPAN_EXAMPLES:
            assert any(s.start <= start and start + len(token) <= s.end for s in spans), (token, spans)
        start += len(token) + 1
    masked = mask(sentence, spans)
    n = len(word_spans(masked.text))
    restored = restore_spans(masked, masked.text, [(i, i) for i in range(n)])
    assert restored.translation == sentence
    assert all(p.method == "copied" for p in restored.placements) and restored.removed == ()


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from(PLACEHOLDERS), max_size=3),
       st.lists(st.tuples(st.integers(0, 4), st.sampled_from(PLACEHOLDERS + ["Baby", "Frisbee"])), max_size=4))
def test_a_translation_never_holds_a_placeholder_more_often_than_its_source(source_placeholders, extra):
    source = " ".join(["Copy"] + source_placeholders + ["files", "now."])
    prepared = prepare(source)
    stand_ins = [s.stand_in for s in prepared.masked.slots] if prepared.masked else []
    words = ["Kopiere"] + stand_ins + ["Dateien", "jetzt."]
    for position, word in extra:  # the model repeats stand-ins and makes placeholders up
        words.insert(min(position, len(words)), word)
    translation = " ".join(words)
    result = restore(prepared, _engine_result(prepared, translation, [(i, i) for i in range(len(words))]))

    def placeholders(text: str) -> Counter:
        return Counter(s.text for s in find_spans(text) if s.kind == "placeholder")

    assert not placeholders(result.translation) - placeholders(source), (translation, result.translation)
    assert placeholders(result.translation) == placeholders(source)  # none is lost either


def test_a_made_up_placeholder_is_deleted_even_without_spans_in_the_source():
    prepared = prepare("character special file")
    result = restore(prepared, _engine_result(prepared, "Zeichen »%s«", [(0, 0), (1, 1)]))
    assert "%s" not in result.translation and RESTORED_SPAN in result.flags and result.details["removed"] == ["%s"]


# -- the general model keeps the newer kinds -----------------------------------------------------------
NEW_KINDS = [
    "Call me at +49 30 1234567 tomorrow.",
    "Our hotline 0800 123 456 is free of charge.",
    "Transfer the money to DE89 3704 0044 0532 0130 00 by Friday.",
    "Apply the patch fix-7781.diff to the source tree.",
    "Run `git status` to see the changes.",
    "Type pip install --upgrade requests in a terminal.",
    "Last login:%s%s%s",
    "received signal SIG%s",
    "unknown option '%.*s'",
    "copied %zu of %zu files",
    "%2$s: cannot open %1$s",
    "You have {count, plural, one {# new message} other {# new messages}}.",
    "The total is {price, number, currency}.",
]


def test_the_general_model_keeps_phone_numbers_ibans_files_commands_and_printf_directives():
    translator = Translator(REPO_ROOT / "models" / "en-de", EngineSettings(provider="cpu", intra_op_threads=1))
    for sentence, result in zip(NEW_KINDS, translator.translate_sentences(NEW_KINDS)):
        for span in find_spans(sentence):
            assert result.translation.count(span.text) == sentence.count(span.text), (sentence, result.translation)


@pytest.mark.parametrize("text, span", [
    ("offset 0x%<PRIx64> is out of range", "0x%<PRIx64>"),
    ("bad value %08<PRIx32> in header", "%08<PRIx32>"),
    ("%1$<PRIu64> bytes", "%1$<PRIu64>"),
])
def test_gettext_inttypes_macros_are_whole_placeholders(text, span):
    from worker.text.spans import find_spans

    assert span in [s.text for s in find_spans(text) if s.kind == "placeholder"]


@pytest.mark.parametrize("line, sentences", [
    ("Cannot read from %.*s: %s", ["Cannot read from %.*s: %s"]),
    ("Error at %.*s. Try again.", ["Error at %.*s.", "Try again."]),
    ("A dog. A cat.", ["A dog.", "A cat."]),
    ("You have {n, plural, one {# file. Delete it?} other {# files. Delete them?}} Done.",
     ["You have {n, plural, one {# file. Delete it?} other {# files. Delete them?}} Done."]),
])
def test_a_sentence_is_never_cut_inside_a_span(line, sentences):
    from worker.text.layout import split_document

    assert [s.text for s in split_document(line, "en").sentences] == sentences


@pytest.mark.parametrize("text, kept", [
    ("_xsltCompilerCtxt xslDropCall", ["_xsltCompilerCtxt", "xslDropCall"]),
    ("Call getElementById before __init__ runs.", ["getElementById", "__init__"]),
])
def test_camel_case_and_underscore_identifiers_are_code(text, kept):
    from worker.text.spans import find_spans

    assert [s.text for s in find_spans(text) if s.kind == "code"] == kept


@pytest.mark.parametrize("text", [
    "{count, plural, one {# message}",  # never closed
    "{count, plural, one {# message}" * 2000,
    "{count, plural, " * 5000 + "x",
    "{count, colour, red {x}}",  # not a MessageFormat type
])
def test_an_unclosed_or_unknown_message_format_argument_is_no_span(text):
    assert not [s for s in find_spans(text) if s.kind == "placeholder" and s.text.startswith("{count")]


def test_directives_with_letters_between_them_are_one_placeholder():
    from worker.text.spans import find_spans

    assert [(s.kind, s.text) for s in find_spans("Custom %sx%s")] == [("placeholder", "%sx%s")]


def test_a_stand_in_the_model_made_the_first_part_of_a_compound_is_the_span_joined_by_a_hyphen():
    # a LibreOffice template's credit through the documentation model: "Maria template" -> "Mariavorlagen"
    prepared = prepare("OpenOffice.org template by Raphaël Hertzog", stand_ins=("Maria", "Tom", "Boston"))
    assert prepared.text == "Maria template by Raphaël Hertzog"
    result = restore(prepared, _engine_result(prepared, "Mariavorlagen von Raphaël Hertzog",
                                              [(0, 0), (1, 0), (2, 1), (3, 2), (4, 3)]))
    assert result.translation == "OpenOffice.org-Vorlagen von Raphaël Hertzog"
    assert [d["method"] for d in result.details["spans"]] == ["copied"]
    # a German word that starts like a short stand-in is no compound of it (Tom: "Tomaten")
    prepared = prepare("Tomatoes for report.pdf", stand_ins=("Tom",))
    result = restore(prepared, _engine_result(prepared, "Tomaten für", [(0, 0), (1, 1)]))
    assert result.translation.startswith("Tomaten für") and "report.pdf" in result.translation
