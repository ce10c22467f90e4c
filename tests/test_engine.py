"""The torch-free engine over a tiny bundle: results, documents, alignments, providers, CLI."""
from __future__ import annotations

import json
import re

import numpy as np
import onnxruntime as ort
import pytest

from worker.engine.bundle import load_bundle
from worker.engine.ort_model import OrtStepModel, ProviderError
from worker.engine.search import SearchOptions, search_in_batches
from worker.engine.settings import EngineSettings
from worker.engine.translator import Translator

from .conftest import make_toy_pairs, run_nmt

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def translator(tiny_bundle):
    return Translator(tiny_bundle, EngineSettings(provider="cpu"))


def test_sentences_come_back_in_order_with_scores_and_in_range_alignments(translator):
    sources = [s for s, _ in make_toy_pairs(12, seed=5)]
    results = translator.translate_sentences(sources, SearchOptions(beam=3))
    assert [r.source for r in results] == sources
    for r in results:
        assert isinstance(r.translation, str) and np.isfinite(r.score)
        n_src, n_tgt = len(r.source.split()), len(r.translation.split())
        assert all(0 <= i < n_src and 0 <= j < n_tgt for i, j in r.alignment.pairs)
        assert [r.source[a:b] for a, b in r.alignment.source_spans] == r.source.split()
        assert [r.translation[a:b] for a, b in r.alignment.target_spans] == r.translation.split()


def test_batching_does_not_change_results(tiny_bundle):
    sources = [s for s, _ in make_toy_pairs(9, seed=6)]
    small = Translator(tiny_bundle, EngineSettings(provider="cpu", max_batch_tokens=12, max_batch_sentences=2))
    large = Translator(tiny_bundle, EngineSettings(provider="cpu"))
    a = [r.translation for r in small.translate_sentences(sources)]
    b = [r.translation for r in large.translate_sentences(sources)]
    assert a == b


def test_parallel_batches_give_the_same_results_in_order(tiny_bundle):
    sources = [s for s, _ in make_toy_pairs(30, seed=8)]
    settings = dict(provider="cpu", intra_op_threads=1, max_batch_tokens=20, max_batch_sentences=3)
    one = Translator(tiny_bundle, EngineSettings(**settings))
    three = Translator(tiny_bundle, EngineSettings(**settings, batch_workers=3))
    a = one.translate_sentences(sources, SearchOptions(beam=4))
    b = three.translate_sentences(sources, SearchOptions(beam=4))
    assert [r.source for r in b] == sources
    assert [(r.translation, r.score, r.alignment.pharaoh) for r in a] == [(r.translation, r.score, r.alignment.pharaoh) for r in b]


def test_step_graph_returns_as_many_candidates_as_asked(tiny_bundle):
    model = OrtStepModel.from_bundle(load_bundle(tiny_bundle), "cpu", 1)
    assert model.topk_input and model.topk == 60  # any count up to the vocabulary
    encoded = model.encode(np.array([[5, 6, 7, 3], [8, 9, 3, 0]]), np.array([4, 3]))
    full = model.step(np.array([2, 2]), encoded.init_state, encoded, candidates=0)
    assert full.ids is None and full.log_probs.shape == (2, 60)
    for k in (1, 7, 14, 40):
        top = model.step(np.array([2, 2]), encoded.init_state, encoded, candidates=k)
        assert top.ids.shape == top.log_probs.shape == (2, k)
        expected = np.sort(full.log_probs, axis=1)[:, ::-1][:, :k]
        np.testing.assert_allclose(top.log_probs, expected, rtol=0, atol=1e-6)
        np.testing.assert_array_equal(np.take_along_axis(full.log_probs, top.ids, 1), top.log_probs)


def test_local_cpu_layout_is_one_batch_per_core_unless_chosen():
    from worker.engine.settings import local_cpu_settings

    auto = local_cpu_settings(EngineSettings(), cores=4)
    assert (auto.intra_op_threads, auto.batch_workers) == (1, 4)
    chosen = EngineSettings(intra_op_threads=2)
    assert local_cpu_settings(chosen, cores=4) == chosen
    with pytest.raises(ValueError, match="batch_workers"):
        EngineSettings(batch_workers=0).validate()


def test_document_keeps_layout_and_offsets_point_into_both_texts(translator):
    doc = "  A man sees a dog. The cat runs home!\n\n\tA big red ball.  \n"
    result = translator.translate_document(doc, SearchOptions(beam=2))
    assert len(result.segments) == 3
    assert result.translation.startswith("  ") and "\n\n\t" in result.translation and result.translation.endswith("  \n")
    for seg in result.segments:
        assert [doc[a:b] for a, b in seg.alignment.source_spans] == seg.source.split()
        assert [result.translation[a:b] for a, b in seg.alignment.target_spans] == seg.translation.split()
    payload = result.to_json()
    assert {"source", "translation", "score", "alignment"} <= set(payload["segments"][0])
    provenance = payload["provenance"]
    assert provenance["signature"] == load_bundle(translator.bundle.path).signature
    assert provenance["provider"] == "CPUExecutionProvider"
    assert provenance["decoding"]["beam"] == 2 and "translate_seconds" in provenance["timings"]
    json.dumps(payload)  # serialisable


def test_empty_document(translator):
    result = translator.translate_document("\n  \n", SearchOptions(beam=2))
    assert result.translation == "\n  \n" and result.segments == ()


def test_over_long_sentence_is_split_with_a_warning(tiny_bundle):
    small = Translator(tiny_bundle, EngineSettings(provider="cpu", max_sentence_tokens=8))
    sentence = " ".join(["the big red dog sees a small cat"] * 4)
    [result] = small.translate_sentences([sentence], SearchOptions(beam=2))
    assert result.warnings and "exceeds the limit of 8" in result.warnings[0]
    assert all(i < len(sentence.split()) for i, _ in result.alignment.pairs)


def test_soft_attention_matrix_on_request(translator):
    [r] = translator.translate_sentences(["A dog."], SearchOptions(beam=2), with_attention=True)
    pieces = translator.source_sp.encode("A dog.", out_type=str)
    assert r.attention.shape[1] == len(pieces) + 1  # + source eos
    assert "attention" in r.to_json()


def test_io_binding_path_equals_plain_run(tiny_bundle):
    bundle = load_bundle(tiny_bundle)
    plain = OrtStepModel.from_bundle(bundle, "cpu", io_binding=False)
    bound = OrtStepModel.from_bundle(bundle, "cpu", io_binding=True)
    sources = [[5, 6, 7, 3], [8, 3], [9, 10, 11, 12, 13, 3]]
    options = SearchOptions(beam=3, n_best=3)
    for a, b in zip(search_in_batches(plain, sources, options), search_in_batches(bound, sources, options)):
        assert [h.tokens for h in a] == [h.tokens for h in b]
        assert [h.score for h in a] == pytest.approx([h.score for h in b], abs=1e-5)


def test_grouped_beams_hold_encoder_outputs_once_and_decode_as_per_row_inputs(tiny_bundle):
    """The step graph reads a sentence's encoder outputs once for its K beam rows; fed one copy per
    row (what readers of older bundles do) it computes the same, and so does the search."""
    bundle = load_bundle(tiny_bundle)
    assert bundle.grouped_beams
    grouped = OrtStepModel.from_bundle(bundle, "cpu", 1)
    per_row = OrtStepModel(bundle.graph_path("encoder"), bundle.graph_path("decoder_step"), "cpu", 1,
                           default_topk=40, grouped_beams=False, special=bundle.special_ids)
    encoded = grouped.encode(np.array([[5, 6, 7, 3], [8, 9, 3, 0]]), np.array([4, 3]))
    once, repeated = grouped.expand(encoded, 3), per_row.expand(encoded, 3)
    assert once.annotations.shape[0] == 2 and repeated.annotations.shape[0] == 6
    prev, state = np.array([2, 5, 6, 2, 7, 8]), np.repeat(encoded.init_state, 3, 1)
    a = grouped.step(prev, state, once, candidates=0)
    b = per_row.step(prev, state, repeated, candidates=0)
    np.testing.assert_allclose(a.log_probs, b.log_probs, atol=1e-5)
    np.testing.assert_allclose(a.attention, b.attention, atol=1e-6)
    kept, kept_rows = grouped.select(once, np.array([1])), per_row.select(repeated, np.array([1]))
    assert kept.annotations.shape[0] == 1 and kept_rows.annotations.shape[0] == 3
    np.testing.assert_array_equal(kept.keys[0], kept_rows.keys[2])
    sources = [[5, 6, 7, 3], [8, 3], [9, 10, 11, 12, 13, 3], [14, 3]]
    options = SearchOptions(beam=3, n_best=2)
    for x, y in zip(search_in_batches(grouped, sources, options), search_in_batches(per_row, sources, options)):
        assert [h.tokens for h in x] == [h.tokens for h in y]
        assert [h.score for h in x] == pytest.approx([h.score for h in y], abs=1e-5)


@pytest.mark.skipif("CUDAExecutionProvider" in ort.get_available_providers(), reason="this host has CUDA")
def test_cuda_requested_without_cuda_is_a_clear_error(tiny_bundle):
    with pytest.raises(ProviderError, match="provider 'cuda' requested but this onnxruntime has no CUDA provider"):
        Translator(tiny_bundle, EngineSettings(provider="cuda"))
    assert Translator(tiny_bundle, EngineSettings(provider="auto")).provider == "CPUExecutionProvider"


def test_cli_translate_files_writes_txt_and_json_and_reports_bad_files(tiny_bundle, tmp_path):
    good = tmp_path / "story.txt"
    good.write_text("A man sees a dog.\n\nThe cat runs home.\n", encoding="utf-8")
    bad = tmp_path / "latin1.txt"
    bad.write_bytes("Caf\xe9 ol\xe9\n".encode("latin-1"))
    done = run_nmt("translate", "--bundle", str(tiny_bundle), "--device", "cpu", "--beam", "2",
                   str(good), str(bad), str(tmp_path / "missing.txt"), "--out", str(tmp_path / "out"))
    assert done.returncode == 1
    assert "latin1.txt: not valid UTF-8 (line 1" in done.stderr and "missing.txt: file not found" in done.stderr
    text = (tmp_path / "out" / "story.de.txt").read_text(encoding="utf-8")
    assert text.count("\n") == 3 and text.split("\n")[1] == ""
    payload = json.loads((tmp_path / "out" / "story.de.json").read_text(encoding="utf-8"))
    assert len(payload["segments"]) == 2 and payload["provenance"]["decoding"]["beam"] == 2
    assert not (tmp_path / "out" / "latin1.de.txt").exists()


def test_cli_translate_stdin_writes_one_line_per_line(tiny_bundle):
    done = run_nmt("translate", "--bundle", str(tiny_bundle), "--device", "cpu", stdin="A dog.\n\nThe cat runs. A man eats.\n")
    assert done.returncode == 0, done.stderr
    assert len(done.stdout.split("\n")) == 4 and done.stdout.split("\n")[1] == ""


def test_cli_eval_prints_bleu_and_json(tiny_bundle, toy_corpus):
    done = run_nmt("eval", "--bundle", str(tiny_bundle), "--device", "cpu", "--src", str(toy_corpus / "val.en"),
                   "--ref", str(toy_corpus / "val.de"), "--beam", "2", "--json")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert 0 <= report["bleu"] <= 100 and report["signature"].startswith("nrefs:1|case:mixed")
    assert "bleu_lc_tok" in report and report["sentences"] == 200
    assert "lowercased, Moses-normalized and tokenized" in done.stdout


# -- sentences with nothing to translate, split sentences, corrupt vocabularies ---------------------
CONTENTLESS = ["", "\u200b", "\x00", "\u200b \ufeff\x01"]


def test_contentless_sentences_are_not_decoded_and_come_back_empty(translator, monkeypatch):
    import worker.engine.translator as engine

    decoded = []

    def spy(model, sources, *args, **kwargs):
        decoded.extend(sources)
        return search_in_batches(model, sources, *args, **kwargs)

    monkeypatch.setattr(engine, "search_in_batches", spy)
    results = translator.translate_sentences([*CONTENTLESS, "A dog."], SearchOptions(beam=2), with_attention=True)
    # only "A dog." reached the decoder (twice if the tiny model's first translation dropped text)
    assert len({tuple(ids) for ids in decoded}) == 1 and len(decoded) <= 2
    for r in results[:-1]:
        assert (r.translation, r.score, r.alignment.pairs, r.alignment.target_spans) == ("", 0.0, (), ())
        assert r.alignment.source_spans == tuple((m.start(), m.end()) for m in re.finditer(r"\S+", r.source))
        assert any("no translatable content" in w for w in r.warnings)
        assert r.n_best == () and r.attention is None
    assert results[-1].translation and not [w for w in results[-1].warnings if "no translatable content" in w]


def test_contentless_sentences_in_a_document_are_left_untranslated(translator):
    doc = "A dog.\n\u200b\n\x00\nThe cat runs home."
    result = translator.translate_document(doc, SearchOptions(beam=2))
    by_source = {s.source: s for s in result.segments}
    assert by_source["\u200b"].translation == "" and by_source["\x00"].translation == ""
    assert by_source["A dog."].translation and by_source["The cat runs home."].translation
    assert result.translation.count("\n") == 3
    assert any("no translatable content" in w for w in result.to_json()["warnings"])


def _assert_pairs_in_range(result):
    pairs = result.alignment.pairs
    n_src, n_tgt = len(result.source.split()), len(result.translation.split())
    assert pairs and all(0 <= i < n_src and 0 <= j < n_tgt for i, j in pairs), (pairs, n_src, n_tgt)
    assert list(pairs) == sorted(set(pairs))


def test_split_sentence_alignments_index_the_whole_sentence(tiny_bundle):
    small = Translator(tiny_bundle, EngineSettings(provider="cpu", max_sentence_tokens=8))
    at_boundaries = " ".join(["the big red dog sees a small cat"] * 4)
    mid_word = "Supercalifragilisticexpialidociousness is wonderful"
    word_starts = {m.start() for m in re.finditer(r"\S+", mid_word)}
    units, _ = small._units([mid_word])
    assert any(u.start not in word_starts for u in units)  # a word really was cut into pieces
    for sentence, where in ((at_boundaries, "split at word boundaries"),
                            (mid_word, "split at word boundaries and inside over-long words")):
        [result] = small.translate_sentences([sentence], SearchOptions(beam=2))
        assert result.warnings and "exceeds the limit of 8" in result.warnings[0]
        assert result.warnings[0].endswith(where)
        _assert_pairs_in_range(result)


def test_split_sentence_attention_is_block_diagonal_over_its_chunks(tiny_bundle):
    small = Translator(tiny_bundle, EngineSettings(provider="cpu", max_sentence_tokens=8))
    sentence = " ".join(["the big red dog sees a small cat"] * 3)
    units, _ = small._units([sentence])
    assert len(units) > 1
    [result] = small.translate_sentences([sentence], SearchOptions(beam=2), with_attention=True)
    # Each chunk on its own (short enough not to be split) gives the block expected on the diagonal.
    blocks = [r.attention for r in small.translate_sentences([u.text for u in units], SearchOptions(beam=2),
                                                             with_attention=True)]
    assert [b.shape[1] for b in blocks] == [len(u.ids) for u in units]  # source pieces + eos
    rows, cols = sum(b.shape[0] for b in blocks), sum(b.shape[1] for b in blocks)
    assert result.attention.shape == (rows, cols)  # target pieces + one eos row per chunk, likewise columns
    np.testing.assert_allclose(result.attention.sum(axis=1), 1.0, atol=1e-4)
    row = col = 0
    for block in blocks:
        h, w = block.shape
        np.testing.assert_allclose(result.attention[row:row + h, col:col + w], block, atol=1e-5)
        assert not result.attention[row:row + h, :col].any() and not result.attention[row:row + h, col + w:].any()
        row, col = row + h, col + w
    assert len(result.to_json()["attention"]) == rows


def test_single_sentence_attention_has_only_its_own_columns_in_a_batch(translator):
    sources = ["A dog.", "A big red dog sees a small cat in the house."]
    results = translator.translate_sentences(sources, SearchOptions(beam=2), with_attention=True)
    for source, r in zip(sources, results):
        assert r.attention.shape[1] == len(translator.source_sp.encode(source)) + 1
        np.testing.assert_allclose(r.attention.sum(axis=1), 1.0, atol=1e-4)


def test_corrupt_sentencepiece_model_is_a_bundle_error(tiny_bundle, tmp_path):
    import shutil

    from worker.engine.bundle import BundleError

    copy = tmp_path / "corrupt-bundle"
    shutil.copytree(tiny_bundle, copy)
    name = load_bundle(copy).manifest["vocab"]["source"]["file"]
    (copy / name).write_bytes(b"\x00not a sentencepiece model\xff" * 10)
    with pytest.raises(BundleError, match="sha256 mismatch"):
        load_bundle(copy)
    with pytest.raises(BundleError, match=f"cannot load SentencePiece model {re.escape(name)}") as caught:
        Translator(load_bundle(copy, verify_hashes=False), EngineSettings(provider="cpu"))
    assert str(copy) in str(caught.value)


def test_documents_translated_together_equal_documents_translated_alone(translator):
    texts = ["A dog runs.\n\nThe cat sees a man.", "", "  A man eats. A dog.\n", "The cat."]
    together = translator.translate_documents(texts, SearchOptions(beam=3))
    assert [d.provenance["timings"]["documents_together"] for d in together] == [4] * 4
    for text, result in zip(texts, together):
        alone = translator.translate_document(text, SearchOptions(beam=3))
        assert result.translation == alone.translation
        for a, b in zip(result.segments, alone.segments):  # scores differ in the last bits with batch padding
            assert a.to_json() | {"score": 0} == b.to_json() | {"score": 0} and a.score == pytest.approx(b.score)


def test_progress_reports_every_decoded_sentence(translator):
    done = []
    translator.translate_sentences(["A dog.", "The cat runs.", "\u200b", "A man."], SearchOptions(beam=2),
                                   progress=done.append)
    assert sum(done) == 3  # the contentless one is never decoded
