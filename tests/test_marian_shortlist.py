"""The lexical shortlist of imported Transformer bundles: ``nmt import --shortlist-corpus`` builds it
from sentence pairs encoded with the model's own vocabulary and signs it into the bundle; the
engine decodes onto it through a step graph derived from the Transformer's, which projects its
``hidden`` state onto each batch's candidates only (worker/engine/shortlist_graph.py)."""
from __future__ import annotations

import gzip
import shutil
from pathlib import Path

import numpy as np
import pytest

from .conftest import run_nmt
from .marian_models import TATOEBA, sample_pairs, shared_model

pytestmark = pytest.mark.slow
transformers = pytest.importorskip("transformers")

NAME = "opus-tiny-en-de"  # the tiny model test_marian_import.py and test_marian_fleet.py share
HELD_OUT = 7  # sample_pairs offset of sentences the model was not trained on


@pytest.fixture(scope="module")
def imported(tmp_path_factory):
    """The shared tiny model, its plain bundle, and the bundle ``nmt import`` makes of it with a
    shortlist from 1000 of the 3000 Tatoeba pairs it was trained on (source gzip, target plain)."""
    hf, plain = shared_model(tmp_path_factory, NAME)
    root = tmp_path_factory.mktemp("marian-shortlist")
    pairs = sample_pairs(3000)  # what tests/marian_models.py trains on
    with gzip.open(root / "train.en.gz", "wt", encoding="utf-8") as source:
        source.writelines(f"{s}\n" for s, _ in pairs)
    (root / "train.de").write_text("".join(f"{t}\n" for _, t in pairs), encoding="utf-8")
    done = run_nmt("import", str(hf), "--out", str(root / "shortlisted"), "--shortlist-corpus",
                   str(root / "train.en.gz"), str(root / "train.de"), "--shortlist-pairs", "1000")
    assert done.returncode == 0, done.stderr
    assert "shortlist:" in done.stdout and "from 1000 pairs" in done.stdout
    return {"hf": hf, "plain": plain, "shortlisted": root / "shortlisted", "root": root}


def translate(bundle: Path, sentences: list[str], shortlist: str, beam: int = 4):
    """The Translator (shortlist ``on``/``off``/``auto``) and its results, text pipeline off."""
    from worker.engine import EngineSettings, Translator

    translator = Translator(bundle, EngineSettings(provider="cpu", intra_op_threads=1, shortlist=shortlist))
    return translator, translator.translate_sentences(sentences, translator.search_options(beam=beam),
                                                      text_options=text_off())


def text_off():
    from worker.text.pipeline import TextOptions

    return TextOptions(protect_spans=False, restore_case=False, check_language=False)


def with_every_target(plain: Path, out: Path) -> Path:
    """A copy of ``plain`` whose signed shortlist lists every target id for every source piece."""
    from export.shortlist import SHORTLIST_FILE, ShortlistTable, write_shortlist
    from worker.engine.bundle import load_bundle, replace_manifest, sha256_file, signature_for

    shutil.copytree(plain, out)
    manifest = dict(load_bundle(out).manifest)
    sources, targets = (manifest["vocab"][side]["size"] for side in ("source", "target"))
    write_shortlist(out / SHORTLIST_FILE, ShortlistTable(np.arange(sources + 1, dtype=np.int64) * targets,
                                                         np.tile(np.arange(targets, dtype=np.int32), sources),
                                                         np.zeros(0, np.int32), {}))
    manifest["shortlist"] = {"file": SHORTLIST_FILE, "default": True}
    manifest["files"] = dict(manifest["files"]) | {SHORTLIST_FILE: sha256_file(out / SHORTLIST_FILE)}
    manifest["signature"] = signature_for(manifest)
    replace_manifest(out, manifest)
    return out


def test_a_shortlist_of_every_target_piece_decodes_as_the_full_vocabulary(imported, tmp_path):
    bundle = with_every_target(imported["plain"], tmp_path / "every")
    sentences = [s for s, _ in sample_pairs(100, offset=HELD_OUT)]
    on, listed = translate(bundle, sentences, "on")
    off, full = translate(bundle, sentences, "off")
    assert on.shortlist and not off.shortlist
    assert [r.translation for r in listed] == [r.translation for r in full]
    # pad is never a candidate: its share of the full vocabulary's probability is all that differs
    assert max(abs(a.score - b.score) for a, b in zip(listed, full)) < 1e-3


def test_the_imported_shortlist_is_signed_on_by_default_and_agrees_with_the_full_vocabulary(imported):
    from worker.engine.bundle import load_bundle

    bundle = load_bundle(imported["shortlisted"])
    entry = bundle.manifest["shortlist"]
    assert entry["default"] is True and entry["built"]["pairs"] == 1000 and entry["built"]["entries"] > 0
    assert entry["corpus"] == {"source": "train.en.gz", "target": "train.de"}
    assert bundle.manifest["files"]["shortlist.npz"] and bundle.signature != load_bundle(imported["plain"]).signature
    if not (TATOEBA / "train.en.gz").is_file():
        pytest.skip("the agreement threshold was measured on the Tatoeba pairs of ../shared/data")
    sentences = [s for s, _ in sample_pairs(200, offset=HELD_OUT)]
    auto, listed = translate(imported["shortlisted"], sentences, "auto")
    _, full = translate(imported["shortlisted"], sentences, "off")
    assert auto.shortlist
    agree = sum(a.translation == b.translation for a, b in zip(listed, full)) / len(sentences)
    print(f"shortlist vs full vocabulary, beam 4: {agree:.1%} of {len(sentences)} held-out sentences identical")
    assert agree >= 0.9  # measured 92% (184-185 of 200; eflomal samples, so the table varies a little)


def test_a_sentence_translates_the_same_alone_and_in_a_batch_under_the_shortlist(imported):
    sentences = [s for s, _ in sample_pairs(24, offset=HELD_OUT + 300)]
    translator, batch = translate(imported["shortlisted"], sentences, "on")
    _, reordered = translate(imported["shortlisted"], sentences[::-1], "on")
    assert translator.shortlist
    for i in range(0, len(sentences), 4):
        alone = translator.translate_sentences([sentences[i]], translator.search_options(beam=4),
                                               text_options=text_off())[0]
        assert alone.translation == batch[i].translation == reordered[-1 - i].translation
        assert abs(alone.score - batch[i].score) < 1e-5


@pytest.mark.parametrize("precision", ["fp32", "int8"])
def test_the_shortlist_step_scores_candidates_as_the_full_step_graph_does(imported, tmp_path, precision):
    """Pad never a candidate; a count or EVERY draws from each sentence's own candidates, scored as
    the full graph's log-probs renormalised over them (fp32 MatMul, int8 MatMulInteger alike); a
    step for 0 candidates (forced decoding) scores the whole vocabulary."""
    from export.quantize import quantize_int8
    from worker.engine.bundle import BundleError, load_bundle
    from worker.engine.search import EVERY
    from worker.engine.shortlist_graph import IDS_INPUT
    from worker.engine.transformer_step import OrtTransformerStepModel

    with pytest.raises(BundleError, match=f"{imported['plain']}: this bundle has no lexical shortlist"):
        OrtTransformerStepModel.from_bundle(load_bundle(imported["plain"]), shortlist=True)
    path = imported["shortlisted"]
    if precision == "int8":  # the step graph quantized as nmt import --int8 does (unsigned: hashes not checked)
        path = Path(shutil.copytree(path, tmp_path / "int8"))
        quantize_int8(imported["shortlisted"] / "decoder_step.onnx", path / "decoder_step.onnx")
    bundle = load_bundle(path, verify_hashes=precision == "fp32")
    model = OrtTransformerStepModel.from_bundle(bundle, shortlist=True)
    special = bundle.special_ids
    src = np.array([[40, 71, 9, 120, 0], [33, 8, 0, special.pad, special.pad]], dtype=np.int64)
    encoded = model.encode(src, np.array([5, 3], dtype=np.int64))
    ids = encoded.vocab[IDS_INPUT]
    own = [model.shortlist.candidates(row[:n]) for row, n in zip(src, (5, 3))]
    assert special.pad not in ids and special.eos in ids
    prev = np.full(2, special.bos, dtype=np.int64)
    state = model.initial_state(encoded)
    full = model.step(prev, state, encoded, 0)
    assert full.ids is None and full.log_probs.shape == (2, model.vocab_size)
    for candidates in (6, EVERY):
        listed = model.step(prev, state, encoded, candidates)
        for row in range(2):
            allowed = np.setdiff1d(own[row], [special.pad])
            found = listed.ids[row][listed.log_probs[row] > -np.inf]
            best = allowed[np.argsort(-full.log_probs[row, allowed], kind="stable")[:len(found)]]
            assert set(found.tolist()) == set(best.tolist())
            assert len(found) == (6 if candidates == 6 else len(allowed))
            over = full.log_probs[row, allowed]
            norm = np.log(np.exp(over - over.max()).sum()) + over.max()
            np.testing.assert_allclose(listed.log_probs[row][:len(found)], full.log_probs[row, found] - norm, atol=1e-4)
        np.testing.assert_allclose(listed.attention, full.attention, atol=1e-6)
        for name in full.state:
            np.testing.assert_allclose(listed.state[name], full.state[name], atol=1e-6)


@pytest.mark.parametrize("how, message", [
    ("missing", "no such shortlist corpus file"),
    ("empty", "the shortlist corpus file is empty"),
    ("uneven", "3 lines, but"),
])
def test_a_bad_shortlist_corpus_is_one_line_naming_the_file_and_no_bundle(imported, tmp_path, how, message):
    from export.marian.importer import ImportOptions, import_model
    from export.marian.shortlist import ShortlistCorpus
    from export.marian.spec import ImportModelError

    source, target = tmp_path / "corpus.en", tmp_path / "corpus.de"
    source.write_text("A dog.\nA cat.\n", encoding="utf-8")
    target.write_text({"missing": "", "empty": "", "uneven": "Ein Hund.\nEine Katze.\nEin Pferd.\n"}[how],
                      encoding="utf-8")
    if how == "missing":
        target.unlink()
    out = tmp_path / "out" / "bundle"
    with pytest.raises(ImportModelError, match=message) as raised:
        import_model(imported["hf"], out, ImportOptions(shortlist=ShortlistCorpus(source, target)))
    assert str(target) in str(raised.value) and "\n" not in str(raised.value)
    assert not out.exists() and not (out.parent.exists() and list(out.parent.iterdir()))
    if how == "uneven":  # as nmt import says it
        done = run_nmt("import", str(imported["hf"]), "--out", str(out), "--shortlist-corpus", str(source), str(target))
        lines = done.stderr.strip().splitlines()
        assert done.returncode != 0 and len(lines) == 1 and message in lines[0] and str(target) in lines[0], done.stderr
        assert not out.exists()
