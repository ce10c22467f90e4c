"""``nmt import`` on tiny MarianMT models made here with transformers (tests/marian_models.py), as
a Hugging Face directory and as a Marian ``.npz`` release: the imported bundle decodes as
``transformers``' own ``generate`` does, token for token, and bad model directories are refused
with one line naming the file or setting, leaving no bundle behind."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from .conftest import run_nmt
from .marian_models import TARGET_TOKENS, build_hf_marian, sample_pairs, shared_model

pytestmark = pytest.mark.slow
transformers = pytest.importorskip("transformers")

TEXT_OFF = ("--no-protect-spans", "--no-case-handling", "--no-language-check")


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    """The tiny shared-vocabulary model as a Hugging Face directory and as a Marian release, and
    the bundles nmt import makes of both (the first shared with tests/test_marian_fleet.py)."""
    from export.marian.marian_npz import write_marian_dir
    from export.marian.model_dir import read_model_dir

    root = tmp_path_factory.mktemp("marian")
    hf, hf_bundle = shared_model(tmp_path_factory, "opus-tiny-en-de")
    npz = write_marian_dir(read_model_dir(hf), root / "npz")
    done = run_nmt("import", str(npz), "--out", str(root / "npz-bundle"), "--src", "en", "--tgt", "de")
    assert done.returncode == 0, done.stderr
    return {"hf": hf, "npz": npz, "hf_bundle": hf_bundle, "npz_bundle": root / "npz-bundle", "root": root}


def reference(model_dir: Path, sentences: list[str], beam: int, prefix: str = "") -> list[tuple[str, float | None]]:
    """transformers' generate with the model's own generation config: (text, sequence score)."""
    import torch
    from transformers import MarianMTModel, MarianTokenizer

    tokenizer = MarianTokenizer.from_pretrained(model_dir)
    model = MarianMTModel.from_pretrained(model_dir).eval()
    out = []
    with torch.no_grad():
        for i in range(0, len(sentences), 50):
            batch = tokenizer([prefix + s for s in sentences[i:i + 50]], return_tensors="pt", padding=True)
            generated = model.generate(**batch, num_beams=beam, output_scores=True, return_dict_in_generate=True)
            texts = tokenizer.batch_decode(generated.sequences, skip_special_tokens=True)
            scores = generated.sequences_scores.tolist() if beam > 1 else [None] * len(texts)
            out += list(zip(texts, scores))
    return out


def ours(bundle: Path, sentences: list[str], beam: int, **options):
    from worker.engine import EngineSettings, Translator
    from worker.text.pipeline import TextOptions

    translator = Translator(bundle, EngineSettings(provider="cpu", intra_op_threads=1))
    text = TextOptions(protect_spans=False, restore_case=False, check_language=False)
    return translator.translate_sentences(sentences, translator.search_options(beam=beam, **options), text_options=text)


def test_greedy_is_generate_and_beam_4_its_best_hypothesis_on_300_sentences(models):
    sentences = [s for s, _ in sample_pairs(300, offset=7)]
    greedy = ours(models["hf_bundle"], sentences, beam=1)
    expected = reference(models["hf"], sentences, beam=1)
    assert [r.translation for r in greedy] == [text for text, _ in expected]
    assert len({r.translation for r in greedy}) > 150  # the model translates: not one sentence for all
    beam = ours(models["hf_bundle"], sentences, beam=4)
    expected = reference(models["hf"], sentences, beam=4)
    same = [(r, score) for r, (text, score) in zip(beam, expected) if r.translation == text]
    assert len(same) >= 0.99 * len(sentences)
    assert max(abs(r.score - score) for r, score in same) < 1e-4


def test_the_marian_release_imports_to_the_same_model(models):
    manifests = [json.loads((models[b] / "manifest.json").read_text()) for b in ("hf_bundle", "npz_bundle")]
    assert manifests[0]["family"] == manifests[1]["family"] == "transformer"
    assert manifests[1]["origin"]["form"] == "marian-npz" and manifests[0]["origin"]["license"] == "CC-BY 4.0"
    assert manifests[0]["special_ids"] == manifests[1]["special_ids"]
    assert manifests[0]["decoding_defaults"]["beam"] == 4 and manifests[0]["decoding_defaults"]["stopping"] == "best_k"
    assert manifests[0]["verification"]["transformers_max_abs_diff"] < 1e-4
    # a Marian release has no generation_config.json: its own maximum length (511) differs
    assert (manifests[0]["decoding_defaults"]["max_len_b"], manifests[1]["decoding_defaults"]["max_len_b"]) == (62, 510)
    sentences = [s for s, _ in sample_pairs(60, offset=3)]
    assert [r.translation for r in ours(models["npz_bundle"], sentences, 4, max_length=62)] == \
           [r.translation for r in ours(models["hf_bundle"], sentences, 4)]


def test_nmt_translate_caps_target_tokens_with_max_length(models, tmp_path):
    source = tmp_path / "in.txt"
    source.write_text("Where is the station? I do not know where the station is.\n", encoding="utf-8")
    full = run_nmt("translate", str(source), "--bundle", str(models["hf_bundle"]), "--out", str(tmp_path / "a"), *TEXT_OFF)
    capped = run_nmt("translate", str(source), "--bundle", str(models["hf_bundle"]), "--out", str(tmp_path / "b"),
                     "--max-length", "2", *TEXT_OFF)
    assert full.returncode == 0 and capped.returncode == 0, full.stderr + capped.stderr
    long = json.loads((tmp_path / "a" / "in.de.json").read_text())
    short = json.loads((tmp_path / "b" / "in.de.json").read_text())
    assert short["provenance"]["decoding"]["max_length"] == 2
    assert len(short["segments"][0]["translation"]) < len(long["segments"][0]["translation"])


@pytest.mark.parametrize("shared", [False])
def test_separate_vocabularies_import_and_decode_as_generate(tmp_path, shared):
    model = build_hf_marian(tmp_path / "sep", shared=shared, steps=120, seed=3)
    assert json.loads((model / "tokenizer_config.json").read_text())["separate_vocabs"]
    done = run_nmt("import", str(model), "--out", str(tmp_path / "bundle"))
    assert done.returncode == 0, done.stderr
    manifest = json.loads((tmp_path / "bundle" / "manifest.json").read_text())
    assert manifest["vocab"]["source"]["ids"] != manifest["vocab"]["target"]["ids"]
    sentences = [s for s, _ in sample_pairs(40, offset=9)]
    assert [r.translation for r in ours(tmp_path / "bundle", sentences, 1)] == \
           [text for text, _ in reference(model, sentences, 1)]


def test_a_multilingual_model_reads_its_target_token_and_serves_each_pair(tmp_path):
    from worker.engine import Translator
    from worker.engine.bundle import load_bundle

    model = build_hf_marian(tmp_path / "multi", multilingual=True, steps=120, seed=5)
    missing = run_nmt("import", str(model), "--out", str(tmp_path / "x"), "--target-token", "de=>>xxx<<")
    assert missing.returncode != 0 and ">>xxx<<" in missing.stderr and not (tmp_path / "x").exists()
    done = run_nmt("import", str(model), "--out", str(tmp_path / "bundle"), "--target-token", f"de={TARGET_TOKENS[0]}",
                   "--target-token", f"fr={TARGET_TOKENS[1]}")
    assert done.returncode == 0, done.stderr
    assert load_bundle(tmp_path / "bundle").pairs == ("en-de", "en-fr")
    sentences = [s for s, _ in sample_pairs(30, offset=4)]
    results = ours(tmp_path / "bundle", sentences, 1)
    assert [r.translation for r in results] == [t for t, _ in reference(model, sentences, 1, TARGET_TOKENS[0] + " ")]
    # the token's attention column is dropped: alignments index the sentence's own words
    assert all(i < len(r.alignment.source_spans) for r in results for i, _ in r.alignment.pairs)
    french = Translator(tmp_path / "bundle").for_target("fr")
    text_off = __import__("worker.text.pipeline", fromlist=["TextOptions"]).TextOptions(
        protect_spans=False, restore_case=False, check_language=False)
    got = french.translate_sentences(sentences, french.search_options(beam=1), text_options=text_off)
    assert [r.translation for r in got] == [t for t, _ in reference(model, sentences, 1, TARGET_TOKENS[1] + " ")]
    source = tmp_path / "in.txt"
    source.write_text(sentences[0] + "\n", encoding="utf-8")
    translated = run_nmt("translate", str(source), "--bundle", str(tmp_path / "bundle"), "--tgt", "fr",
                         "--out", str(tmp_path / "fr"), *TEXT_OFF)
    assert translated.returncode == 0, translated.stderr
    assert json.loads((tmp_path / "fr" / "in.fr.json").read_text())["provenance"]["target_language"] == "fr"
    unknown = run_nmt("translate", str(source), "--bundle", str(tmp_path / "bundle"), "--tgt", "it",
                      "--out", str(tmp_path / "it"))
    assert unknown.returncode != 0 and "en-de, en-fr" in unknown.stderr


def _broken(models, tmp_path, how: str) -> Path:
    model = tmp_path / how
    shutil.copytree(models["hf"], model)
    if how == "truncated":
        data = (model / "model.safetensors").read_bytes()
        (model / "model.safetensors").write_bytes(data[: len(data) // 2])
    elif how == "no-vocab":
        (model / "vocab.json").unlink()
    elif how == "pre-norm":
        config = json.loads((model / "config.json").read_text())
        (model / "config.json").write_text(json.dumps(config | {"normalize_before": True}))
    elif how == "not-marian":
        config = json.loads((model / "config.json").read_text())
        (model / "config.json").write_text(json.dumps(config | {"model_type": "bart"}))
    elif how == "empty":
        shutil.rmtree(model)
        model.mkdir()
    return model


@pytest.mark.parametrize("how, message", [
    ("truncated", "model.safetensors: cannot read the weights"),
    ("no-vocab", "missing vocab.json"),
    ("pre-norm", "normalize_before=true (pre-norm) is not supported (supported: post-norm"),
    ("not-marian", "model_type is 'bart'"),
    ("empty", "not a Marian model: no config.json"),
])
def test_a_bad_model_directory_gets_one_line_and_no_bundle(models, tmp_path, how, message):
    model = _broken(models, tmp_path, how)
    done = run_nmt("import", str(model), "--out", str(tmp_path / "out" / "bundle"))
    assert done.returncode != 0
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and message in lines[0], done.stderr
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").iterdir())


def test_a_truncated_marian_npz_names_the_file(models, tmp_path):
    model = tmp_path / "npz"
    shutil.copytree(models["npz"], model)
    data = (model / "model.npz").read_bytes()
    (model / "model.npz").write_bytes(data[: len(data) // 3])
    done = run_nmt("import", str(model), "--out", str(tmp_path / "bundle"), "--src", "en", "--tgt", "de")
    assert done.returncode != 0 and "model.npz: cannot read the weights" in done.stderr
    assert not (tmp_path / "bundle").exists()


def test_int8_import_records_its_agreement_with_fp32(models, tmp_path):
    done = run_nmt("import", str(models["hf"]), "--out", str(tmp_path / "int8"), "--int8")
    assert done.returncode == 0, done.stderr
    manifest = json.loads((tmp_path / "int8" / "manifest.json").read_text())
    assert manifest["precision"] == "int8" and manifest["signature"].startswith("en-de.int8.")
    agreement = manifest["verification"]["int8"]
    assert 0.0 <= agreement["token_agreement"] <= 1.0 and agreement["sentences"] == 32
    translated = ours(tmp_path / "int8", [s for s, _ in sample_pairs(20, offset=2)], 4)
    assert sum(bool(r.translation) for r in translated) == 20
