"""Forced decoding (worker/forced.py) and ``nmt align`` (worker/align_cli.py) on the shipped bundle."""
from __future__ import annotations

import gzip
import json
from pathlib import Path

import numpy as np
import pytest

from nmt.links import grow_diag_final_and
from worker.engine.forced import METHODS, force_decode, word_links

REPO = Path(__file__).resolve().parents[1]
BUNDLE = REPO / "models" / "en-de"
M = "\u2581"
SOURCES = ["The dogs run in the park.", "I like green apples.",
           "Tom said that he would come back tomorrow morning."]

pytestmark = pytest.mark.skipif(not (BUNDLE / "manifest.json").exists(), reason="models/en-de not present")


@pytest.fixture(scope="module")
def translator():
    from worker.engine.settings import EngineSettings
    from worker.engine.translator import Translator

    # The full vocabulary: forced decoding scores over all of it, and the search must too for the
    # two to be compared (the bundle's lexical shortlist normalises over a batch's candidates).
    return Translator(BUNDLE, EngineSettings(provider="cpu", intra_op_threads=1, shortlist="off"))


def source_ids(translator, text):
    return [*translator.source_sp.encode(text), translator.model.special.eos]


def test_forcing_the_greedy_output_reproduces_greedy_decoding(translator):
    # Beam 1 is greedy decoding; feeding its tokens back must give the same attention rows
    # (eos row included) and the same token log-probabilities, whatever the batch around it.
    from worker.engine.search import SearchOptions, beam_search

    options = SearchOptions(beam=1, length_penalty=0.0, no_repeat_ngram=0)
    sources = [source_ids(translator, s) for s in SOURCES]
    greedy = [beam_search(translator.model, [src], options)[0][0] for src in sources]
    forced = force_decode(translator.model, sources, [list(h.tokens) for h in greedy])
    for hyp, f, src in zip(greedy, forced, sources):
        assert f.attention.shape == (len(hyp.tokens) + 1, len(src))
        np.testing.assert_allclose(f.attention, hyp.attention, atol=1e-5)
        np.testing.assert_allclose(f.token_log_probs, hyp.token_log_probs, atol=1e-4)
        assert f.log_prob == pytest.approx(hyp.log_prob, abs=1e-3)


def test_forced_log_prob_prefers_the_models_own_translation(translator):
    src = source_ids(translator, "I like green apples.")
    own, swapped = force_decode(translator.model, [src, src],
                                [translator.target_sp.encode("Ich mag grüne Äpfel."),
                                 translator.target_sp.encode("Äpfel grüne mag Ich.")])
    assert own.log_prob > swapped.log_prob


def test_word_links_lift_pieces_to_words():
    # source "The dogs run" -> The | dog s | run (+ eos); target "Die Hunde laufen" -> Die | Hund e | laufen (+ eos)
    attention = np.array([
        [0.7, 0.1, 0.1, 0.05, 0.05],   # Die    -> The
        [0.1, 0.6, 0.2, 0.05, 0.05],   # Hund   -> dog
        [0.1, 0.2, 0.6, 0.05, 0.05],   # e      -> s (same word)
        [0.05, 0.05, 0.1, 0.6, 0.2],   # laufen -> run
        [0.0, 0.0, 0.0, 0.1, 0.9],     # eos row
    ])
    args = ([f"{M}The", f"{M}dog", "s", f"{M}run"], [f"{M}Die", f"{M}Hund", "e", f"{M}laufen"], attention,
            "The dogs run", "Die Hunde laufen")
    for method in ("argmax", "words", "grow"):
        assert word_links(*args, method=method) == ((0, 0), (1, 1), (2, 2))
    # shift reads rows 1..4: Die -> dog, Hund -> s, e -> run, laufen -> run (eos row, eos column excluded)
    assert word_links(*args, method="shift") == ((1, 0), (1, 1), (2, 1), (2, 2))
    with pytest.raises(ValueError, match="unknown alignment method"):
        word_links(*args, method="nope")


def test_grow_diag_final_and():
    forward = {(0, 0), (1, 1), (2, 1)}
    backward = {(0, 0), (1, 1), (1, 2)}
    # intersection (0,0),(1,1); (2,1) and (1,2) are diagonal/adjacent neighbours covering an unaligned word
    assert grow_diag_final_and(forward, backward) == {(0, 0), (1, 1), (2, 1), (1, 2)}
    assert grow_diag_final_and({(0, 1)}, set()) == {(0, 1)}  # final-and: both words unaligned


def run_cli(capsys, *argv):
    from nmt.cli import main

    code = main(["align", *argv])
    out = capsys.readouterr()
    return code, out.out, out.err


def test_nmt_align_prints_one_pharaoh_line_per_pair(tmp_path, capsys):
    src, tgt = tmp_path / "s.en", tmp_path / "t.de.gz"
    src.write_text("\n".join(SOURCES) + "\n", encoding="utf-8")
    with gzip.open(tgt, "wt", encoding="utf-8") as f:
        f.write("Die Hunde laufen im Park.\nIch mag grüne Äpfel.\n\n")
    has_head = "aligner" in json.loads((BUNDLE / "manifest.json").read_text())["graphs"]
    for method in [m for m in METHODS if m != "guided" or has_head]:
        code, out, err = run_cli(capsys, "--src", str(src), "--tgt", str(tgt), "--bundle", str(BUNDLE),
                                 "--method", method, "--device", "cpu")
        assert code == 0, err
        lines = out.split("\n")
        assert len(lines) == 4 and lines[-1] == "" and lines[2] == ""  # the empty translation: no links
        for line, (s, t) in zip(lines[:2], [(SOURCES[0], "Die Hunde laufen im Park."),
                                            (SOURCES[1], "Ich mag grüne Äpfel.")]):
            links = [tuple(map(int, p.split("-"))) for p in line.split()]
            assert links and links == sorted(set(links))
            assert all(0 <= i < len(s.split()) and 0 <= j < len(t.split()) for i, j in links)
    code, out, _ = run_cli(capsys, "--src", str(src), "--tgt", str(tgt), "--bundle", str(BUNDLE), "--device", "cpu")
    assert out.split("\n")[1] == "0-0 1-1 2-2 3-3"  # default method (grow): I-Ich like-mag green-grüne apples.-Äpfel.


@pytest.mark.parametrize("content, message", [
    (b"", "is empty"),
    (b"one\ntwo\n", "has 3 lines but"),
    (b"\xff\xfeb\x00a\x00d\x00\n\x00", "UTF-16"),
    (b"caf\xe9\n", "UTF-8"),
])
def test_nmt_align_errors(tmp_path, capsys, content, message):
    src, tgt = tmp_path / "s.en", tmp_path / "t.de"
    src.write_text("\n".join(SOURCES) + "\n", encoding="utf-8")
    tgt.write_bytes(content)
    code, out, err = run_cli(capsys, "--src", str(src), "--tgt", str(tgt), "--bundle", str(BUNDLE))
    assert code == 2 and out == ""
    assert err.startswith("nmt align: error: ") and message in err and len(err.strip().splitlines()) == 1


def test_the_shipped_head_aligns_both_directions_and_spaced_punctuation(translator):
    """The shipped head has the reverse direction; tokenized, lower-cased text (the form of word
    alignment data sets) gets its full stop linked to the full stop and its words to their words,
    and attached punctuation leaves the same word links as the spaced-apart form."""
    from worker.engine.forced import align_pairs

    manifest = json.loads((BUNDLE / "manifest.json").read_text())
    assert [o["name"] for o in manifest["graphs"]["aligner"]["outputs"]] == ["alignment", "reverse_alignment"]
    spaced = ("the dog sleeps in the garden .", "der hund schläft im garten .")
    natural = ("The dog sleeps in the garden.", "Der Hund schläft im Garten.")
    (spaced_links,), (natural_links,) = ([links["guided"]] for links in align_pairs(translator, *map(list, zip(spaced, natural))))
    assert {(6, 5), (1, 1), (2, 2), (5, 4)} <= set(spaced_links)  # . - .   dog - hund   sleeps - schläft   garden - garten
    assert {(1, 1), (2, 2), (5, 4)} <= set(natural_links) and all(i < 6 and j < 5 for i, j in natural_links)


def test_lower_cased_text_is_read_in_its_usual_case_and_punctuation_links_only_to_punctuation(translator):
    """A lower-cased, tokenized pair (the form of word alignment data sets) is force-decoded in its
    words' usual case from the bundle's table, so its links are those of the cased pair; a German
    comma before "dass" has no English comma to link to and stays unlinked."""
    from worker.engine.forced import align_pairs

    assert translator.case_table.recase("die kommission hat den plan gebilligt , sagte er .", "target") == \
        "Die Kommission hat den Plan gebilligt , sagte er ."
    cased = ("The European Commission has approved the plan .", "Die Europäische Kommission hat den Plan gebilligt .")
    lower = tuple(text.lower() for text in cased)
    cased_links, lower_links = (links["guided"] for links in align_pairs(translator, *map(list, zip(cased, lower))))
    assert {(2, 2), (6, 5), (7, 7)} <= set(lower_links)  # commission - kommission, plan - plan, . - .
    assert len(set(lower_links) ^ set(cased_links)) <= 2

    source, target = "He said that he was tired .", "Er sagte , dass er müde war ."
    (links,) = align_pairs(translator, [source], [target])
    punctuation = [not any(c.isalnum() for c in w) for w in source.split()], \
        [not any(c.isalnum() for c in w) for w in target.split()]
    assert links["guided"] and all(punctuation[0][i] == punctuation[1][j] for i, j in links["guided"])
    assert (6, 7) in links["guided"] and not any(j == 2 for _, j in links["guided"])
