"""Marian's own release: ``*.npz`` weights with the model config inside (``special:model.yml``),
``decoder.yml`` (model and vocabulary files, beam size, length normalisation), the vocabularies
(``*.vocab.yml`` or ``*.json``) and ``source.spm``/``target.spm``.

Weights are mapped to Hugging Face names as transformers' ``convert_marian_to_pytorch`` does:
Marian's matrices are [in, out] (x @ W) and are transposed; a vocabulary without ``<pad>`` gets
one appended (id = size), with a zero embedding row and bias, which is Marian's zero start
embedding and what the converted OPUS-MT models on Hugging Face hold. ``write_marian_dir`` is the
inverse mapping (tests make Marian releases with it).
"""
from __future__ import annotations

import dataclasses
import json
import shutil
import zipfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import yaml

from .source import ModelSource, readme_origin, require, vocabulary_table
from .spec import ACTIVATIONS, SUPPORTED, GenerationDefaults, ImportModelError, MarianSpec, Vocabularies

CONFIG_KEY = "special:model.yml"
_LOADER = getattr(yaml, "CBaseLoader", yaml.BaseLoader)  # every scalar a string: pieces like 'yes' stay pieces
# Marian layer parameter -> Hugging Face layer parameter; "T": the matrix is transposed.
_ATTENTION = {"Wq": ("q_proj.weight", "T"), "Wk": ("k_proj.weight", "T"), "Wv": ("v_proj.weight", "T"),
              "Wo": ("out_proj.weight", "T"), "bq": ("q_proj.bias", ""), "bk": ("k_proj.bias", ""),
              "bv": ("v_proj.bias", ""), "bo": ("out_proj.bias", "")}
_FFN = {"ffn_W1": ("fc1.weight", "T"), "ffn_b1": ("fc1.bias", ""), "ffn_W2": ("fc2.weight", "T"),
        "ffn_b2": ("fc2.bias", ""), "ffn_ffn_ln_scale": ("final_layer_norm.weight", ""),
        "ffn_ffn_ln_bias": ("final_layer_norm.bias", "")}


def _layer_map(side: str, layers: int) -> dict[str, tuple[str, str]]:
    """Marian name -> (Hugging Face name, "T" or "") for every layer parameter of one side."""
    blocks = [("self", "self_attn")] + ([("context", "encoder_attn")] if side == "decoder" else [])
    mapping = {}
    for i in range(layers):
        prefix, hf = f"{side}_l{i + 1}_", f"{side}.layers.{i}."
        for marian_block, hf_block in blocks:
            for name, (target, how) in _ATTENTION.items():
                mapping[f"{prefix}{marian_block}_{name}"] = (f"{hf}{hf_block}.{target}", how)
            mapping[f"{prefix}{marian_block}_Wo_ln_scale"] = (f"{hf}{hf_block}_layer_norm.weight", "")
            mapping[f"{prefix}{marian_block}_Wo_ln_bias"] = (f"{hf}{hf_block}_layer_norm.bias", "")
        for name, (target, how) in _FFN.items():
            mapping[prefix + name] = (hf + target, how)
    return mapping


def read_marian_dir(path: Path) -> ModelSource:
    decoder = _load_yaml(path / "decoder.yml") if (path / "decoder.yml").is_file() else {}
    weights_file = _weights_file(path, decoder)
    try:
        with np.load(str(weights_file)) as archive:
            raw = {name: archive[name] for name in archive.files}
    except (zipfile.BadZipFile, ValueError, OSError, EOFError) as exc:
        raise ImportModelError(f"{weights_file}: cannot read the weights ({exc}); is the file truncated?") from None
    if CONFIG_KEY not in raw:
        raise ImportModelError(f"{weights_file}: no '{CONFIG_KEY}' entry: not a Marian model file")
    config = yaml.load(bytes(raw.pop(CONFIG_KEY).astype(np.uint8)).decode("utf-8").rstrip("\0"), Loader=_LOADER)
    vocab_files = _vocab_files(path, decoder)
    source = _read_vocab(vocab_files[0])
    target = _read_vocab(vocab_files[-1]) if vocab_files[-1] != vocab_files[0] else source
    shared = vocab_files[-1] == vocab_files[0] or source == target
    spec = _spec(config, weights_file, raw, source, target)
    weights = _map_weights(raw, spec, weights_file)
    source, target, weights, spec = _with_pad(source, target, weights, spec)
    vocabularies = Vocabularies(source, target if not shared else source, shared)
    vocabularies.check(spec)
    generation = GenerationDefaults(beam=int(decoder.get("beam-size", 4)), max_length=511,
                                    length_penalty=float(decoder.get("normalize", 1.0)), bad_words=(spec.pad_id,))
    layer = config.get("transformer-guided-alignment-layer")
    guided = str(config.get("guided-alignment", "none")) not in ("none", "", "false")
    alignment_layer = None
    if guided and layer:
        alignment_layer = spec.decoder_layers - 1 if layer == "last" else int(layer) - 1
    origin = readme_origin(path) | {"form": "marian-npz", "weights": weights_file.name}
    return ModelSource(path, "marian-npz", spec, weights, vocabularies, require(path, "source.spm", "the source SentencePiece model"),
                       require(path, "target.spm", "the target SentencePiece model"), generation, None, None, origin,
                       alignment_layer)


def _load_yaml(file: Path) -> dict[str, Any]:
    try:
        loaded = yaml.load(file.read_text(encoding="utf-8"), Loader=_LOADER)
    except (yaml.YAMLError, UnicodeDecodeError) as exc:
        raise ImportModelError(f"{file}: not valid YAML: {exc}") from None
    if not isinstance(loaded, dict):
        raise ImportModelError(f"{file}: not a YAML mapping")
    return loaded


def _weights_file(path: Path, decoder: Mapping[str, Any]) -> Path:
    named = decoder.get("models") or []
    if named:
        return require(path, Path(named[0]).name, "the weights decoder.yml names")
    found = sorted(path.glob("*.npz"))
    if len(found) > 1:
        raise ImportModelError(f"{path}: several .npz files ({', '.join(p.name for p in found)}) and no decoder.yml "
                               "naming one")
    return found[0]


def _vocab_files(path: Path, decoder: Mapping[str, Any]) -> list[Path]:
    named = decoder.get("vocabs") or []
    if named:
        return [require(path, Path(name).name, "a vocabulary decoder.yml names") for name in named]
    found = sorted([*path.glob("*vocab*.yml"), *path.glob("*vocab*.json")])
    if not found:
        raise ImportModelError(f"{path}: missing the vocabulary (*.vocab.yml, vocab.json, or decoder.yml's vocabs)")
    return found[:2]


def _read_vocab(file: Path) -> dict[str, int]:
    if file.suffix == ".json":
        try:
            return vocabulary_table(json.loads(file.read_text(encoding="utf-8")), file)
        except json.JSONDecodeError as exc:
            raise ImportModelError(f"{file}: not valid JSON: {exc}") from None
    if file.suffix in (".spm", ".model"):
        raise ImportModelError(f"{file}: SentencePiece vocabularies inside Marian (no piece table) are not supported; "
                               "give a *.vocab.yml")
    return vocabulary_table(_load_yaml(file), file)


def _flag(config: Mapping[str, Any], key: str, default: bool = False) -> bool:
    value = config.get(key, default)
    return value if isinstance(value, bool) else str(value).lower() in ("true", "1", "yes")


def _spec(config: Mapping[str, Any], file: Path, raw: Mapping[str, np.ndarray], source: Mapping[str, int],
          target: Mapping[str, int]) -> MarianSpec:
    def refuse(setting: str, value: Any) -> ImportModelError:
        return ImportModelError(f"{file}: {setting}: {value!r} is not supported (supported: {SUPPORTED})")

    if config.get("type", "transformer") != "transformer":
        raise refuse("type", config.get("type"))
    checks = {"transformer-preprocess": "", "transformer-postprocess": "dan", "transformer-postprocess-emb": "d",
              "transformer-decoder-autoreg": "self-attention"}
    for key, wanted in checks.items():
        if str(config.get(key, wanted) or "") != wanted:
            raise refuse(key, config.get(key))
    for key in ("transformer-train-position-embeddings", "right-left"):
        if _flag(config, key):
            raise refuse(key, config.get(key))
    if config.get("transformer-tied-layers"):
        raise refuse("transformer-tied-layers", config.get("transformer-tied-layers"))
    for key in ("transformer-ffn-depth", "transformer-decoder-ffn-depth"):
        if int(config.get(key, 2) or 2) != 2:
            raise refuse(key, config.get(key))
    try:
        d_model, heads = int(config["dim-emb"]), int(config["transformer-heads"])
        ffn = int(config["transformer-dim-ffn"])
        decoder_ffn = int(config.get("transformer-decoder-dim-ffn", 0) or 0) or ffn
        enc, dec = int(config["enc-depth"]), int(config["dec-depth"])
    except KeyError as exc:
        raise ImportModelError(f"{file}: {CONFIG_KEY} has no {exc.args[0]!r}") from None
    activation = str(config.get("transformer-ffn-activation", "swish"))
    if activation not in ACTIVATIONS:
        raise refuse("transformer-ffn-activation", activation)
    shared = "Wemb" in raw
    src_rows = raw["Wemb" if shared else "encoder_Wemb"].shape[0] if (shared or "encoder_Wemb" in raw) else 0
    tgt_rows = raw["Wemb" if shared else "decoder_Wemb"].shape[0] if (shared or "decoder_Wemb" in raw) else 0
    if not src_rows or not tgt_rows:
        raise ImportModelError(f"{file}: no embeddings (Wemb, or encoder_Wemb and decoder_Wemb)")
    unk = target.get("<unk>", 1)
    return MarianSpec(d_model=d_model, encoder_layers=enc, decoder_layers=dec, heads=heads, encoder_ffn=ffn,
                      decoder_ffn=decoder_ffn, source_vocab_size=src_rows, target_vocab_size=tgt_rows,
                      activation=ACTIVATIONS[activation], scale_embedding=True, shared_embeddings=shared,
                      max_positions=max(1024, int(config.get("max-length", 0) or 0) + 2),
                      pad_id=target.get("<pad>", tgt_rows), eos_id=target.get("</s>", 0), unk_id=unk,
                      decoder_start_id=target.get("<pad>", tgt_rows))


def _map_weights(raw: Mapping[str, np.ndarray], spec: MarianSpec, file: Path) -> dict[str, np.ndarray]:
    mapping = {**_layer_map("encoder", spec.encoder_layers), **_layer_map("decoder", spec.decoder_layers)}
    weights: dict[str, np.ndarray] = {}
    for name, (target, how) in mapping.items():
        if name not in raw:
            raise ImportModelError(f"{file}: the weights have no {name!r}")
        array = np.asarray(raw[name], dtype=np.float32)
        weights[target] = np.ascontiguousarray(array.T) if how == "T" else array.reshape(-1)
    if spec.shared_embeddings:
        weights["shared.weight"] = np.asarray(raw["Wemb"], dtype=np.float32)
    else:
        weights["encoder.embed_tokens.weight"] = np.asarray(raw["encoder_Wemb"], dtype=np.float32)
        weights["decoder.embed_tokens.weight"] = np.asarray(raw["decoder_Wemb"], dtype=np.float32)
    if "decoder_ff_logit_out_W" in raw:
        weights["lm_head.weight"] = np.ascontiguousarray(np.asarray(raw["decoder_ff_logit_out_W"], np.float32).T)
    if "decoder_ff_logit_out_b" in raw:
        weights["final_logits_bias"] = np.asarray(raw["decoder_ff_logit_out_b"], dtype=np.float32).reshape(-1)
    return weights


def _with_pad(source: dict[str, int], target: dict[str, int], weights: dict[str, np.ndarray], spec: MarianSpec):
    """Append ``<pad>`` (a zero row, a zero bias) to vocabularies that lack it, as transformers' converter does."""
    if "<pad>" in target and "<pad>" in source:
        return source, target, weights, spec
    if "<pad>" in target or "<pad>" in source:
        raise ImportModelError("one vocabulary has <pad> and the other has not: give both with it, or neither")
    weights = dict(weights)
    for name in ("shared.weight", "encoder.embed_tokens.weight", "decoder.embed_tokens.weight", "lm_head.weight"):
        if name in weights:
            table = weights[name]
            weights[name] = np.concatenate([table, np.zeros((1, table.shape[1]), np.float32)])
    if "final_logits_bias" in weights:
        weights["final_logits_bias"] = np.concatenate([weights["final_logits_bias"], np.zeros(1, np.float32)])
    pad = spec.target_vocab_size
    source = {**source, "<pad>": spec.source_vocab_size}
    target = {**target, "<pad>": pad}
    spec = dataclasses.replace(spec, source_vocab_size=spec.source_vocab_size + 1, target_vocab_size=pad + 1,
                               pad_id=pad, decoder_start_id=pad)
    return source, target, weights, spec


def write_marian_dir(source: ModelSource, out: Path) -> Path:
    """Write ``source`` as a Marian release (``model.npz``, ``decoder.yml``, ``vocab.yml``, the two
    ``.spm`` files) in ``out``: the inverse of ``read_marian_dir``."""
    spec = source.spec
    out.mkdir(parents=True, exist_ok=True)
    arrays: dict[str, np.ndarray] = {}
    mapping = {**_layer_map("encoder", spec.encoder_layers), **_layer_map("decoder", spec.decoder_layers)}
    for name, (hf_name, how) in mapping.items():
        array = source.table(hf_name)
        arrays[name] = np.ascontiguousarray(array.T) if how == "T" else array.reshape(1, -1)
    if spec.shared_embeddings:
        arrays["Wemb"] = source.table("shared.weight")
    else:
        arrays["encoder_Wemb"], arrays["decoder_Wemb"] = source.source_embeddings(), source.target_embeddings()
    if "lm_head.weight" in source.weights and not np.array_equal(source.weights["lm_head.weight"], source.target_embeddings()):
        arrays["decoder_ff_logit_out_W"] = np.ascontiguousarray(source.weights["lm_head.weight"].T)
    arrays["decoder_ff_logit_out_b"] = source.output_bias().reshape(1, -1)
    activation = {"silu": "swish", "gelu": "gelu", "relu": "relu"}[spec.activation]
    config = {"type": "transformer", "dim-emb": spec.d_model, "enc-depth": spec.encoder_layers,
              "dec-depth": spec.decoder_layers, "transformer-heads": spec.heads, "transformer-dim-ffn": spec.encoder_ffn,
              "transformer-decoder-dim-ffn": spec.decoder_ffn, "transformer-ffn-activation": activation,
              "transformer-preprocess": "", "transformer-postprocess": "dan", "transformer-postprocess-emb": "d",
              "tied-embeddings-all": spec.shared_embeddings, "dim-vocabs": [spec.source_vocab_size, spec.target_vocab_size]}
    arrays[CONFIG_KEY] = np.frombuffer(yaml.safe_dump(config).encode() + b"\0", dtype=np.int8)
    np.savez(out / "model.npz", **arrays)
    vocabs = ["vocab.yml"] if source.vocabularies.shared else ["source.vocab.yml", "target.vocab.yml"]
    tables = [source.vocabularies.source] if source.vocabularies.shared else \
        [source.vocabularies.source, source.vocabularies.target]
    for name, table in zip(vocabs, tables):
        # JSON strings are YAML scalars: every piece survives, quoted
        (out / name).write_text("".join(f"{json.dumps(p, ensure_ascii=False)}: {i}\n" for p, i in table.items()),
                                encoding="utf-8")
    decoder = {"models": ["model.npz"], "vocabs": vocabs * (2 // len(vocabs)), "beam-size": source.generation.beam,
               "normalize": source.generation.length_penalty}
    (out / "decoder.yml").write_text(yaml.safe_dump(decoder), encoding="utf-8")
    shutil.copy(source.source_spm, out / "source.spm")
    shutil.copy(source.target_spm, out / "target.spm")
    return out
