"""The lexical shortlist: built at export from the training corpora with real eflomal alignments,
signed into the bundle, and used by the ONNX Runtime engine to project the step graph's readout
onto a batch's candidate pieces only."""
from __future__ import annotations

import shutil
from dataclasses import replace

import numpy as np
import pytest

from worker.engine.bundle import BundleError, load_bundle
from worker.engine.search import SearchOptions, search_in_batches
from worker.engine.shortlist import Shortlist
from worker.engine.shortlist_graph import ShortlistStep

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def shortlist_bundle(tmp_path_factory, tiny_checkpoint, toy_corpus):
    from export.exporter import ExportOptions, export_bundle
    from export.shortlist import ShortlistOptions

    out = tmp_path_factory.mktemp("shortlist") / "toy-sl"
    export_bundle(tiny_checkpoint, out, ExportOptions(
        data_dir=str(toy_corpus), parity_sentences=50,
        shortlist=ShortlistOptions(pairs=400, per_source=4, frequent=6, min_count=1)))
    return out


def _sources(bundle_path, toy_corpus, n=60):
    import sentencepiece as spm

    sp = spm.SentencePieceProcessor(model_file=str(bundle_path / load_bundle(bundle_path).manifest["vocab"]["source"]["file"]))
    lines = (toy_corpus / "val.en").read_text(encoding="utf-8").splitlines()[:n]
    return [[*ids, 3] for ids in sp.encode(lines, out_type=int)]


def _full_shortlist(checkpoint) -> Shortlist:
    """Every target piece a candidate."""
    from training.loading import load_model

    vocab = load_model(checkpoint).model.decoder.output.weight.shape[0]
    return Shortlist(np.zeros(vocab + 1, np.int64), np.zeros(0, np.int64), np.arange(vocab))


def log_probs_over(log_probs: np.ndarray, ids: np.ndarray, chosen: np.ndarray) -> np.ndarray:
    """Full-vocabulary log-probs [N, V] renormalised over the candidates ``ids``, at ``chosen`` [N, k]."""
    over = log_probs[:, ids]
    norm = np.log(np.exp(over - over.max(1, keepdims=True)).sum(1, keepdims=True)) + over.max(1, keepdims=True)
    return np.take_along_axis(log_probs, chosen, 1) - norm


def test_export_builds_a_signed_shortlist_from_the_training_pairs_and_scores_it(shortlist_bundle):
    bundle = load_bundle(shortlist_bundle)
    entry = bundle.manifest["shortlist"]
    assert entry["file"] == "shortlist.npz" and "shortlist.npz" in bundle.manifest["files"]  # part of the signature
    assert entry["built"]["pairs"] == 400 and entry["built"]["entries"] > 0 and entry["built"]["frequent"] >= 6
    assert entry["default"] == (entry["valid_bleu_delta"] >= -0.2)
    table = Shortlist.load(bundle.shortlist_path)
    with np.load(bundle.shortlist_path) as data:
        assert set(data.files) == {"offsets", "targets", "frequent"}  # the projection comes from the step graph
    assert table.largest_id < bundle.manifest["vocab"]["target"]["size"]
    assert {1, 3} <= set(table.frequent.tolist())  # unk and eos are always candidates
    lengths = np.diff(table.offsets)
    assert lengths.max() <= 4 + 1  # per_source, plus the piece itself (joint vocabulary)
    # A changed shortlist no longer matches the bundle's signature.
    with open(bundle.shortlist_path, "ab") as handle:
        handle.write(b"x")
    with pytest.raises(BundleError, match="sha256 mismatch for shortlist.npz"):
        load_bundle(shortlist_bundle)
    with open(bundle.shortlist_path, "rb+") as handle:
        handle.truncate(bundle.shortlist_path.stat().st_size - 1)


def test_the_shortlist_is_built_from_the_data_dir_given_to_export(tiny_checkpoint, toy_corpus, tmp_path):
    from export.exporter import ExportOptions, export_bundle
    from export.shortlist import ShortlistOptions

    corpus = tmp_path / "corpus"
    corpus.mkdir()
    for name in ("val.en", "val.de"):
        shutil.copy(toy_corpus / name, corpus / name)
    for lang in ("en", "de"):  # 100 of the checkpoint's 400 training pairs
        lines = (toy_corpus / f"train.{lang}").read_text(encoding="utf-8").splitlines()[:100]
        (corpus / f"train.{lang}").write_text("\n".join(lines) + "\n", encoding="utf-8")
    out = tmp_path / "bundle"
    export_bundle(tiny_checkpoint, out, ExportOptions(data_dir=str(corpus), parity_sentences=20,
                                                      shortlist=ShortlistOptions(pairs=400, min_count=1)))
    assert load_bundle(out).manifest["shortlist"]["built"]["pairs"] == 100


def test_the_shortlist_step_graph_projects_onto_the_candidates_only(shortlist_bundle, tiny_checkpoint):
    """With every piece a candidate, the derived graph's top-k equals the step graph's; it holds
    no vocabulary projection of its own (ONNX Runtime would run it) and its ids are vocabulary ids."""
    import onnx

    from worker.engine.ort_model import OrtStepModel

    bundle = load_bundle(shortlist_bundle)
    model = OrtStepModel(bundle.graph_path("encoder"), bundle.graph_path("decoder_step"), grouped_beams=True,
                         special=bundle.special_ids, shortlist=_full_shortlist(tiny_checkpoint))
    src = np.array([[5, 9, 12, 3], [7, 8, 3, 0]], dtype=np.int64)
    encoded = model.encode(src, np.array([4, 3], dtype=np.int64))
    prev = np.array([2, 2], dtype=np.int64)
    log_probs = model.decoder.run(["log_probs"], {
        "prev_ids": prev, "state": encoded.init_state, "annotations": encoded.annotations, "keys": encoded.keys,
        "src_mask": encoded.mask})[0]
    listed = model.step(prev, encoded.init_state, encoded, candidates=7)
    np.testing.assert_array_equal(listed.ids[:, 0], log_probs.argmax(1))
    np.testing.assert_allclose(listed.log_probs, -np.sort(-log_probs, axis=1)[:, :7], atol=1e-5)
    np.testing.assert_allclose(listed.log_probs, np.take_along_axis(log_probs, listed.ids, 1), atol=1e-5)

    derived = onnx.load_from_string(ShortlistStep.of(bundle.graph_path("decoder_step")).graph)
    vocab = log_probs.shape[1]
    by_vocab = {init.name for init in derived.graph.initializer if vocab in init.dims}  # the target embedding
    assert not any(name in by_vocab for node in derived.graph.node if node.op_type in ("MatMul", "Gemm", "MatMulInteger")
                   for name in node.input)
    assert [o.name for o in derived.graph.output] == ["topk_log_probs", "topk_ids", "new_state", "attention"]

    table = Shortlist.load(bundle.shortlist_path)  # a real shortlist: only its candidates come out
    ids = table.candidates(src)
    own = replace(encoded, vocab=model.shortlist_step.inputs(ids), vocab_mask=ShortlistStep.mask(ids, [ids, ids]))
    part = model.step(prev, encoded.init_state, own, candidates=5)
    assert set(part.ids.ravel().tolist()) <= set(ids.tolist()) and len(ids) < vocab
    np.testing.assert_allclose(part.log_probs, log_probs_over(log_probs, ids, part.ids), atol=1e-5)


def test_a_shortlist_of_every_piece_decodes_exactly_as_the_full_vocabulary(shortlist_bundle, tiny_checkpoint, toy_corpus):
    from worker.engine.ort_model import OrtStepModel

    bundle = load_bundle(shortlist_bundle)
    sources = _sources(shortlist_bundle, toy_corpus)
    options = SearchOptions(beam=4, max_len_a=1.5, max_len_b=5)
    plain = search_in_batches(OrtStepModel.from_bundle(bundle), sources, options)
    model = OrtStepModel(bundle.graph_path("encoder"), bundle.graph_path("decoder_step"), grouped_beams=True,
                         special=bundle.special_ids, shortlist=_full_shortlist(tiny_checkpoint))
    listed = search_in_batches(model, sources, options)
    assert [h[0].tokens for h in listed] == [h[0].tokens for h in plain]
    np.testing.assert_allclose([h[0].score for h in listed], [h[0].score for h in plain], atol=1e-4)


def test_decoding_with_a_shortlist_produces_only_the_batchs_candidates(shortlist_bundle, toy_corpus):
    from worker.engine.ort_model import OrtStepModel

    bundle = load_bundle(shortlist_bundle)
    table = Shortlist.load(bundle.shortlist_path)
    model = OrtStepModel.from_bundle(bundle, shortlist=True)
    for source in _sources(shortlist_bundle, toy_corpus, 20):
        allowed = set(table.candidates(np.array([source])).tolist())
        assert len(allowed) < bundle.manifest["vocab"]["target"]["size"]  # a real restriction
        hyp = search_in_batches(model, [source], SearchOptions(beam=3, max_len_a=1.5, max_len_b=5))[0][0]
        assert set(hyp.tokens) <= allowed


def test_a_sentence_translates_the_same_alone_and_in_any_batch(shortlist_bundle, toy_corpus):
    """The batch is projected onto the union of its sentences' candidates, but each sentence is
    scored over its own only: batch-mates (other jobs, cache hits taken out) change nothing."""
    from worker.engine.ort_model import OrtStepModel

    bundle = load_bundle(shortlist_bundle)
    table = Shortlist.load(bundle.shortlist_path)
    model = OrtStepModel.from_bundle(bundle, shortlist=True)
    sources = _sources(shortlist_bundle, toy_corpus, 24)
    union = table.candidates(np.array([piece for source in sources for piece in source]))
    assert max(len(table.candidates(np.array(s))) for s in sources) < len(union)  # batch-mates add candidates
    options = SearchOptions(beam=3, max_len_a=1.5, max_len_b=5)
    together = search_in_batches(model, sources, options)
    for source, hyps in zip(sources, together):
        alone = search_in_batches(model, [source], options)[0]
        assert alone[0].tokens == hyps[0].tokens
        assert alone[0].score == pytest.approx(hyps[0].score, abs=1e-4)
        assert set(hyps[0].tokens) <= set(table.candidates(np.array(source)).tolist())


def test_translator_uses_the_shortlist_as_its_settings_say(shortlist_bundle, tiny_bundle):
    from worker.engine.settings import EngineSettings
    from worker.engine.translator import Translator

    default = load_bundle(shortlist_bundle).manifest["shortlist"]["default"]
    for mode, expected in (("on", True), ("off", False), ("auto", default)):
        translator = Translator(shortlist_bundle, EngineSettings(provider="cpu", shortlist=mode))
        result = translator.translate_documents(["A red dog runs home."])[0]
        assert translator.shortlist is expected and result.provenance["shortlist"] is expected
    assert Translator(tiny_bundle, EngineSettings(provider="cpu")).shortlist is False  # auto, and none in the bundle
    with pytest.raises(BundleError, match="has no lexical shortlist"):
        Translator(tiny_bundle, EngineSettings(provider="cpu", shortlist="on"))
    with pytest.raises(ValueError, match="shortlist must be one of"):
        EngineSettings(shortlist="yes").validate()


def test_a_broken_shortlist_file_is_a_clear_error(shortlist_bundle, tmp_path):
    broken = tmp_path / "shortlist.npz"
    broken.write_bytes(b"not a numpy archive")
    with pytest.raises(BundleError, match="cannot read shortlist shortlist.npz"):
        Shortlist.load(broken)
    table = Shortlist.load(load_bundle(shortlist_bundle).shortlist_path)
    with open(broken, "wb") as out:
        np.savez(out, offsets=table.offsets[:-1], targets=table.targets, frequent=table.frequent)
    with pytest.raises(BundleError, match="inconsistent"):
        Shortlist.load(broken)


def test_the_table_keeps_the_most_linked_pieces_per_source_the_copies_and_the_frequent_ones():
    from export.shortlist import ShortlistOptions, build_table

    # Source piece 10 is always translated as 20, 11 as 21 or (less often) 22, 12 as 23.
    src, tgt = [], []
    for i in range(300):
        src.append([10, 11, 12][: 1 + i % 3])
        tgt.append([20, 22 if i % 5 == 0 else 21, 23][: 1 + i % 3])
    table = build_table(src, tgt, 30, 30, (1, 3), ShortlistOptions(per_source=1, frequent=2, min_count=1), joint=True)

    def listed(piece):
        return set(table.targets[table.offsets[piece]:table.offsets[piece + 1]].tolist())

    assert listed(10) == {20, 10} and listed(11) == {21, 11} and listed(12) == {23, 12}  # top 1 + the copy
    assert listed(5) == {5}  # never seen: only its copy
    assert set(table.frequent.tolist()) == {20, 21, 1, 3}


@pytest.mark.parametrize("name", ["en-de", "en-de-int8"])
def test_the_shortlist_graph_of_a_shipped_bundle_scores_candidates_as_its_full_graph_does(name):
    """fp32 (Gemm) and int8 (MatMulInteger) projections alike: the derived graph feeds the step
    graph's own weights' candidate rows, so its scores are the full graph's renormalised."""
    from tests.conftest import REPO_ROOT
    from worker.engine.ort_model import OrtStepModel

    bundle = load_bundle(REPO_ROOT / "models" / name)
    vocab = bundle.manifest["vocab"]["target"]["size"]
    table = Shortlist(np.zeros(9, np.int64), np.zeros(0, np.int64), np.arange(0, vocab, 3))
    model = OrtStepModel(bundle.graph_path("encoder"), bundle.graph_path("decoder_step"), grouped_beams=True,
                         special=bundle.special_ids, shortlist=table)
    src = np.array([[120, 45, 900, 17, 3], [77, 12, 3, 0, 0]], dtype=np.int64)
    encoded = model.encode(src, np.array([5, 3], dtype=np.int64))
    prev = np.array([2, 2], dtype=np.int64)
    (log_probs,) = model.decoder.run(["log_probs"], {
        "prev_ids": prev, "state": encoded.init_state, "annotations": encoded.annotations, "keys": encoded.keys,
        "src_mask": encoded.mask})
    listed = model.step(prev, encoded.init_state, encoded, candidates=10)
    assert set(listed.ids.ravel().tolist()) <= set(table.frequent.tolist())
    np.testing.assert_allclose(listed.log_probs, log_probs_over(log_probs, table.frequent, listed.ids), atol=1e-4)
    best = table.frequent[log_probs[:, table.frequent].argmax(1)]
    np.testing.assert_array_equal(listed.ids[:, 0], best)


def test_a_shortlist_grafted_from_another_export_of_the_model_signs_into_the_bundle(shortlist_bundle, tiny_bundle, tmp_path):
    from export.graft_shortlist import main
    from tests.conftest import REPO_ROOT
    from worker.engine.settings import EngineSettings
    from worker.engine.translator import Translator

    target = tmp_path / "toy"
    shutil.copytree(tiny_bundle, target)
    before = load_bundle(target)
    assert main(["--from", str(shortlist_bundle), str(target)]) == 0

    bundle = load_bundle(target)  # the signature and every sha256 check out
    assert bundle.signature != before.signature and bundle.manifest["files"]["decoder_step.onnx"] == \
        before.manifest["files"]["decoder_step.onnx"]
    entry = bundle.manifest["shortlist"]
    assert entry["default"] is False and entry["grafted_from"] == load_bundle(shortlist_bundle).signature
    donor = Shortlist.load(load_bundle(shortlist_bundle).shortlist_path)
    np.testing.assert_array_equal(Shortlist.load(bundle.shortlist_path).targets, donor.targets)
    translator = Translator(target, EngineSettings(provider="cpu", shortlist="on"))
    assert translator.translate_documents(["A red dog runs home."])[0].provenance["shortlist"] is True

    other = tmp_path / "captions"  # another vocabulary: refused, nothing written
    shutil.copytree(REPO_ROOT / "models" / "multi30k-en-de", other)
    assert main(["--from", str(shortlist_bundle), str(other)]) == 2
    assert not (other / "shortlist.npz").exists() and load_bundle(other).shortlist_path is None
