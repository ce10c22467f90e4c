"""What an imported Marian Transformer is: its architecture (``MarianSpec``), its vocabularies and
special ids, and the one error every importer step raises (``ImportModelError``).

Supported: post-norm layers (Marian's ``transformer-postprocess: dan``, Hugging Face's only
MarianMT layout), static sinusoidal positions, embeddings scaled by sqrt(d_model) or not, tied
(one shared table) or separate source and target embeddings, swish/gelu/relu feed-forward
activations. Anything else is refused with the setting that is not supported.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

ACTIVATIONS = {"swish": "silu", "silu": "silu", "gelu": "gelu", "relu": "relu", "gelu_new": "gelu_tanh"}
SUPPORTED = ("post-norm layers (normalize_before false / transformer-postprocess dan), static sinusoidal positions, "
             "scale_embedding true or false, tied or separate embeddings, swish/gelu/relu activations")


class ImportModelError(ValueError):
    """A model directory the importer cannot read or does not support; the message names the file or setting."""


@dataclass(frozen=True)
class MarianSpec:
    """Architecture of a Marian Transformer (Vaswani et al. 2017, post-norm, as Marian and
    ``transformers.MarianMTModel`` compute it)."""

    d_model: int
    encoder_layers: int
    decoder_layers: int
    heads: int
    encoder_ffn: int
    decoder_ffn: int
    source_vocab_size: int
    target_vocab_size: int
    activation: str  # torch name: silu, gelu, gelu_tanh, relu
    scale_embedding: bool
    shared_embeddings: bool  # one table for source, target and output projection
    max_positions: int
    pad_id: int
    eos_id: int
    unk_id: int
    decoder_start_id: int
    layer_norm_eps: float = 1e-5

    @property
    def head_dim(self) -> int:
        return self.d_model // self.heads

    def validate(self) -> MarianSpec:
        if self.d_model % self.heads:
            raise ImportModelError(f"d_model {self.d_model} is not a multiple of the {self.heads} attention heads")
        if self.activation not in set(ACTIVATIONS.values()):
            raise ImportModelError(f"activation {self.activation!r} is not supported (supported: {SUPPORTED})")
        if min(self.encoder_layers, self.decoder_layers, self.heads, self.d_model) < 1:
            raise ImportModelError("layers, heads and d_model must be >= 1")
        for name in ("pad_id", "eos_id", "unk_id", "decoder_start_id"):
            if not 0 <= getattr(self, name) < self.target_vocab_size:
                raise ImportModelError(f"{name} {getattr(self, name)} is outside the target vocabulary "
                                       f"({self.target_vocab_size} entries)")
        return self


@dataclass(frozen=True)
class Vocabularies:
    """Piece -> id tables of both sides (the same mapping when the model has one vocabulary)."""

    source: Mapping[str, int]
    target: Mapping[str, int]
    shared: bool

    def check(self, spec: MarianSpec) -> None:
        for side, table, size in (("source", self.source, spec.source_vocab_size),
                                  ("target", self.target, spec.target_vocab_size)):
            top = max(table.values(), default=-1)
            if top >= size:
                raise ImportModelError(f"the {side} vocabulary has id {top}, but the model's {side} embedding has "
                                       f"{size} rows")
            for token in ("<unk>", "</s>", "<pad>"):
                if token not in table:
                    raise ImportModelError(f"the {side} vocabulary has no {token} entry")


@dataclass(frozen=True)
class GenerationDefaults:
    """Decoding defaults from ``generation_config.json`` (or Marian's ``decoder.yml``)."""

    beam: int = 4
    max_length: int = 511  # target tokens, eos included (transformers' max_length counts the start token too)
    length_penalty: float = 1.0  # transformers: score / length ** penalty
    bad_words: tuple[int, ...] = ()
    extra: Mapping[str, Any] = field(default_factory=dict)


def spec_from_hf_config(config: Mapping[str, Any], file: str = "config.json") -> MarianSpec:
    """A ``MarianSpec`` from a Hugging Face ``config.json`` (a ``MarianConfig``)."""
    model_type = config.get("model_type")
    if model_type != "marian":
        raise ImportModelError(f"{file}: model_type is {model_type!r}; the importer reads MarianMT models ('marian')")
    if config.get("normalize_before"):
        raise ImportModelError(f"{file}: normalize_before=true (pre-norm) is not supported (supported: {SUPPORTED})")
    if config.get("add_final_layer_norm") or config.get("normalize_embedding") or config.get("layernorm_embedding"):
        raise ImportModelError(f"{file}: extra layer norms (add_final_layer_norm / normalize_embedding) are not "
                               f"supported (supported: {SUPPORTED})")
    if config.get("static_position_embeddings") is False:
        raise ImportModelError(f"{file}: learned positions are not supported (supported: {SUPPORTED})")
    activation = config.get("activation_function", "gelu")
    if activation not in ACTIVATIONS:
        raise ImportModelError(f"{file}: activation_function {activation!r} is not supported (supported: {SUPPORTED})")
    heads = config.get("encoder_attention_heads", 8)
    if config.get("decoder_attention_heads", heads) != heads:
        raise ImportModelError(f"{file}: different encoder and decoder head counts are not supported")
    try:
        vocab = int(config["vocab_size"])
        return MarianSpec(
            d_model=int(config["d_model"]), encoder_layers=int(config["encoder_layers"]),
            decoder_layers=int(config["decoder_layers"]), heads=int(heads),
            encoder_ffn=int(config["encoder_ffn_dim"]), decoder_ffn=int(config["decoder_ffn_dim"]),
            source_vocab_size=vocab, target_vocab_size=int(config.get("decoder_vocab_size") or vocab),
            activation=ACTIVATIONS[activation], scale_embedding=bool(config.get("scale_embedding", False)),
            shared_embeddings=bool(config.get("share_encoder_decoder_embeddings", True)),
            max_positions=int(config.get("max_position_embeddings", 1024)),
            pad_id=int(config["pad_token_id"]), eos_id=int(config["eos_token_id"]),
            unk_id=-1, decoder_start_id=int(config.get("decoder_start_token_id", config["pad_token_id"])),
        )
    except KeyError as exc:
        raise ImportModelError(f"{file}: missing setting {exc.args[0]!r}") from None
