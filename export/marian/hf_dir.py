"""A Hugging Face MarianMT directory: ``config.json``, ``model.safetensors`` or ``pytorch_model.bin``,
``source.spm``/``target.spm``, ``vocab.json`` (and ``target_vocab.json`` with separate vocabularies),
``tokenizer_config.json``, ``generation_config.json``: the form OPUS-MT models are distributed in."""
from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np

from .source import ModelSource, load_json, readme_origin, require, vocabulary_table
from .spec import GenerationDefaults, ImportModelError, Vocabularies, spec_from_hf_config

IGNORED = ("encoder.embed_positions.weight", "decoder.embed_positions.weight")  # recomputed (sinusoidal)


def read_hf_dir(path: Path) -> ModelSource:
    config = load_json(path / "config.json")
    spec = spec_from_hf_config(config)
    tokenizer = load_json(path / "tokenizer_config.json") if (path / "tokenizer_config.json").is_file() else {}
    source_spm = require(path, "source.spm", "the source SentencePiece model")
    target_spm = require(path, "target.spm", "the target SentencePiece model")
    source = vocabulary_table(load_json(require(path, "vocab.json", "the vocabulary")), path / "vocab.json")
    separate = bool(tokenizer.get("separate_vocabs"))
    target = source
    if separate:
        target_file = require(path, "target_vocab.json", "the target vocabulary (separate_vocabs is true)")
        target = vocabulary_table(load_json(target_file), target_file)
    vocabularies = Vocabularies(source, target, shared=not separate)
    spec = dataclasses.replace(spec, unk_id=target.get("<unk>", -1)).validate()
    vocabularies.check(spec)
    weights = _weights(path)
    generation = _generation(path, spec)
    origin = readme_origin(path) | {"form": "huggingface"}
    for key in ("_name_or_path", "name_or_path"):
        if config.get(key):
            origin["name"] = config[key]
    return ModelSource(path, "huggingface", spec, weights, vocabularies, source_spm, target_spm, generation,
                       tokenizer.get("source_lang"), tokenizer.get("target_lang"), origin)


def _weights(path: Path) -> dict[str, np.ndarray]:
    """The state dict as float32 numpy arrays, "model." dropped, positions left out."""
    if (path / "model.safetensors").is_file():
        from safetensors import SafetensorError
        from safetensors.numpy import load_file

        file = path / "model.safetensors"
        try:
            raw = load_file(str(file))
        except (SafetensorError, OSError, ValueError) as exc:
            raise ImportModelError(f"{file}: cannot read the weights ({exc}); is the file truncated?") from None
    elif (path / "pytorch_model.bin").is_file():
        import torch

        file = path / "pytorch_model.bin"
        try:
            state = torch.load(str(file), map_location="cpu", weights_only=True)
        except Exception as exc:  # noqa: BLE001 - torch raises several types for a broken archive
            raise ImportModelError(f"{file}: cannot read the weights ({type(exc).__name__}: {exc}); "
                                   "is the file truncated?") from None
        raw = {name: tensor.float().numpy() for name, tensor in state.items()}
    else:
        raise ImportModelError(f"{path}: missing model.safetensors or pytorch_model.bin (the weights)")
    weights = {}
    for name, array in raw.items():
        name = name.removeprefix("model.")
        if name not in IGNORED:
            weights[name] = np.asarray(array, dtype=np.float32)
    return weights


def _generation(path: Path, spec) -> GenerationDefaults:
    config = load_json(path / "generation_config.json") if (path / "generation_config.json").is_file() else {}
    bad = tuple(ids[0] for ids in config.get("bad_words_ids") or () if len(ids) == 1)
    unknown = [ids for ids in config.get("bad_words_ids") or () if len(ids) != 1]
    if unknown:
        raise ImportModelError(f"{path / 'generation_config.json'}: bad_words_ids longer than one token "
                               f"are not supported ({unknown[:3]})")
    max_length = int(config.get("max_length", 512))
    return GenerationDefaults(beam=int(config.get("num_beams", 4)), max_length=max(1, max_length - 1),
                              length_penalty=float(config.get("length_penalty", 1.0)), bad_words=bad,
                              extra={k: config[k] for k in ("early_stopping", "min_length", "no_repeat_ngram_size")
                                     if k in config})
