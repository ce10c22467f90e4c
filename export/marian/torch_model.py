"""The imported Transformer in torch, in the two pieces the bundle's graphs hold: the encoder
(with every decoder layer's cross-attention keys and values, computed once per sentence) and one
decoder step over an explicit key/value cache.

It computes what ``transformers.MarianMTModel`` computes (Vaswani et al. 2017, post-norm:
x = LayerNorm(x + Sublayer(x)); embeddings scaled by sqrt(d_model) where the model says so, plus
static sinusoidal positions, sin in the first half of each vector and cos in the second). The
step's rows are grouped by sentence, [B, R]: R decoder rows (a beam) share their sentence's cross
keys and values without copies.
Dimensions: B sentences, R rows per sentence, S source length, T target steps so far, L layers,
H heads, E head size (D = H * E), V target vocabulary.
"""
from __future__ import annotations

import math

import numpy as np
import torch
from torch import Tensor, nn

from .source import ModelSource
from .spec import MarianSpec

TOPK = 40  # the step graph's default candidates per row (an overridable "topk" initializer)


def sinusoids(positions: int, dim: int) -> np.ndarray:
    """float32 [positions, dim]: transformers' MarianSinusoidalPositionalEmbedding table."""
    table = np.array([[pos / np.power(10000, 2 * (j // 2) / dim) for j in range(dim)] for pos in range(positions)])
    out = np.empty((positions, dim), dtype=np.float32)
    half = dim // 2 + dim % 2
    out[:, :half] = np.sin(table[:, 0::2])
    out[:, half:] = np.cos(table[:, 1::2])
    return out


def _linear(weights: dict, name: str) -> nn.Linear:
    weight = torch.from_numpy(np.ascontiguousarray(weights[f"{name}.weight"]))
    layer = nn.Linear(weight.shape[1], weight.shape[0])
    with torch.no_grad():
        layer.weight.copy_(weight)
        layer.bias.copy_(torch.from_numpy(weights[f"{name}.bias"]))
    return layer


def _norm(weights: dict, name: str, eps: float) -> nn.LayerNorm:
    norm = nn.LayerNorm(weights[f"{name}.weight"].shape[0], eps=eps)
    with torch.no_grad():
        norm.weight.copy_(torch.from_numpy(weights[f"{name}.weight"]))
        norm.bias.copy_(torch.from_numpy(weights[f"{name}.bias"]))
    return norm


def _activation(name: str) -> nn.Module:
    return {"silu": nn.SiLU(), "gelu": nn.GELU(), "gelu_tanh": nn.GELU(approximate="tanh"), "relu": nn.ReLU()}[name]


class Attention(nn.Module):
    """Multi-head attention projections: q, k, v and out."""

    def __init__(self, weights: dict, prefix: str, heads: int) -> None:
        super().__init__()
        self.q, self.k, self.v, self.out = (_linear(weights, f"{prefix}.{p}_proj") for p in ("q", "k", "v", "out"))
        self.heads = heads
        self.head_dim = self.q.weight.shape[0] // heads
        self.scaling = self.head_dim ** -0.5

    def split(self, x: Tensor) -> Tensor:
        """x [..., T, D] -> [..., H, T, E]."""
        return x.unflatten(-1, (self.heads, self.head_dim)).transpose(-2, -3)

    def merge(self, x: Tensor) -> Tensor:
        """x [..., H, T, E] -> [..., T, D]."""
        return x.transpose(-2, -3).flatten(-2)


class FeedForward(nn.Module):
    def __init__(self, weights: dict, prefix: str, activation: str) -> None:
        super().__init__()
        self.fc1, self.fc2 = _linear(weights, f"{prefix}.fc1"), _linear(weights, f"{prefix}.fc2")
        self.act = _activation(activation)

    def forward(self, x: Tensor) -> Tensor:
        return self.fc2(self.act(self.fc1(x)))


class EncoderLayer(nn.Module):
    def __init__(self, weights: dict, prefix: str, spec: MarianSpec) -> None:
        super().__init__()
        self.attn = Attention(weights, f"{prefix}.self_attn", spec.heads)
        self.attn_norm = _norm(weights, f"{prefix}.self_attn_layer_norm", spec.layer_norm_eps)
        self.ffn = FeedForward(weights, prefix, spec.activation)
        self.ffn_norm = _norm(weights, f"{prefix}.final_layer_norm", spec.layer_norm_eps)

    def forward(self, x: Tensor, key_mask: Tensor) -> Tensor:
        """x [B, S, D], key_mask bool [B, 1, 1, S] -> [B, S, D]."""
        a = self.attn
        q, k, v = a.split(a.q(x)), a.split(a.k(x)), a.split(a.v(x))
        scores = (q @ k.transpose(-1, -2)) * a.scaling
        weights = torch.softmax(scores.masked_fill(~key_mask, float("-inf")), dim=-1)
        x = self.attn_norm(x + a.out(a.merge(weights @ v)))
        return self.ffn_norm(x + self.ffn(x))


class DecoderLayer(nn.Module):
    def __init__(self, weights: dict, prefix: str, spec: MarianSpec) -> None:
        super().__init__()
        self.self_attn = Attention(weights, f"{prefix}.self_attn", spec.heads)
        self.self_norm = _norm(weights, f"{prefix}.self_attn_layer_norm", spec.layer_norm_eps)
        self.cross_attn = Attention(weights, f"{prefix}.encoder_attn", spec.heads)
        self.cross_norm = _norm(weights, f"{prefix}.encoder_attn_layer_norm", spec.layer_norm_eps)
        self.ffn = FeedForward(weights, prefix, spec.activation)
        self.ffn_norm = _norm(weights, f"{prefix}.final_layer_norm", spec.layer_norm_eps)

    def forward(self, x: Tensor, past_k: Tensor, past_v: Tensor, cross_k: Tensor, cross_v: Tensor,
                src_mask: Tensor) -> tuple[Tensor, Tensor, Tensor, Tensor]:
        """x [N, D] (N = B * R rows, sentence by sentence); past_k, past_v [B, R, H, T, E]; cross_k,
        cross_v [B, H, S, E]; src_mask bool [B, S] -> x [N, D], keys and values [B, R, H, T + 1, E],
        cross-attention [B, R, H, S].

        Written for few kernels per step, each a launch on a GPU:
        - rows as a matrix, so that ONNX Runtime runs each product and its bias as one Gemm (and, on
          CUDA, each residual add and LayerNorm as one SkipLayerNormalization:
          ``worker.engine.ort_model.fuse_skip_layer_norms``);
        - self-attention's heads split and merged by reshapes alone (the new position's size-1 axis
          moves without moving data): no transpose.
        (q, k and v stay three products: stacked as one, an int8 import would quantize them with
        one scale.)
        """
        a = self.self_attn
        batch, rows = past_k.shape[:2]
        q, k, v = (p(x).view(batch, rows, a.heads, 1, a.head_dim) for p in (a.q, a.k, a.v))  # each [B, R, H, 1, E]
        keys = torch.cat([past_k, k], dim=3)
        values = torch.cat([past_v, v], dim=3)
        weights = torch.softmax((q @ keys.transpose(-1, -2)) * a.scaling, dim=-1)  # [B, R, H, 1, T + 1]
        x = self.self_norm(x + a.out((weights @ values).reshape(-1, x.shape[-1])))
        # Cross-attention with a sentence's R rows as the queries of one product per head: q [B, H, R, E]
        # against its keys [B, H, S, E]. (Read as [B, R, H, 1, E] against keys broadcast over R, the
        # products cannot be one strided batch: ONNX Runtime's CUDA MatMul then builds a pointer per
        # row and head on the host at every step.)
        c = self.cross_attn
        q = c.q(x).view(batch, rows, c.heads, c.head_dim).transpose(1, 2)  # [B, H, R, E]
        scores = (q @ cross_k.transpose(-1, -2)) * c.scaling  # [B, H, R, S]
        cross = torch.softmax(scores.masked_fill(~src_mask[:, None, None, :], float("-inf")), dim=-1)
        x = self.cross_norm(x + c.out((cross @ cross_v).transpose(1, 2).reshape(-1, x.shape[-1])))
        x = self.ffn_norm(x + self.ffn(x))
        return x, keys, values, cross.transpose(1, 2)


class MarianModel(nn.Module):
    """The weights of an imported model; ``EncoderGraph`` and ``StepGraph`` are its two graphs."""

    def __init__(self, source: ModelSource, alignment_layer: int, alignment_heads: tuple[int, ...] = ()) -> None:
        super().__init__()
        spec = self.spec = source.spec
        weights = dict(source.weights)
        self.scale = math.sqrt(spec.d_model) if spec.scale_embedding else 1.0
        self.register_buffer("positions", torch.from_numpy(sinusoids(spec.max_positions, spec.d_model)))
        self.source_embeddings = nn.Parameter(torch.from_numpy(source.source_embeddings().copy()))
        self.target_embeddings = nn.Parameter(torch.from_numpy(source.target_embeddings().copy()))
        self.output_weight = nn.Parameter(torch.from_numpy(source.output_projection().copy()))
        self.output_bias = nn.Parameter(torch.from_numpy(source.output_bias().copy()))
        self.encoder_layers = nn.ModuleList(EncoderLayer(weights, f"encoder.layers.{i}", spec)
                                            for i in range(spec.encoder_layers))
        self.decoder_layers = nn.ModuleList(DecoderLayer(weights, f"decoder.layers.{i}", spec)
                                            for i in range(spec.decoder_layers))
        self.alignment_layer = alignment_layer
        self.alignment_heads = list(alignment_heads) or list(range(spec.heads))


class EncoderGraph(nn.Module):
    """src_ids int64 [B, S], src_lengths int64 [B] -> memory float [B, S, D], then for each decoder
    layer its cross-attention keys and values float [B, H, S, E] (for the whole decode)."""

    def __init__(self, model: MarianModel) -> None:
        super().__init__()
        self.model = model

    def forward(self, src_ids: Tensor, src_lengths: Tensor) -> tuple[Tensor, ...]:
        m = self.model
        length = src_ids.shape[1]
        mask = torch.arange(length, device=src_ids.device)[None, :] < src_lengths[:, None]
        x = m.source_embeddings[src_ids] * m.scale + m.positions[torch.arange(length, device=src_ids.device)]
        for layer in m.encoder_layers:
            x = layer(x, mask[:, None, None, :])
        cross = []
        for layer in m.decoder_layers:
            cross += [layer.cross_attn.split(layer.cross_attn.k(x)), layer.cross_attn.split(layer.cross_attn.v(x))]
        return (x, *cross)


class StepGraph(nn.Module):
    """One decoder step for B sentences with R rows each.

    prev_ids int64 [B, R]; src_mask bool [B, S]; then per layer its cross keys and values float
    [B, H, S, E], then per layer its cache of keys and values float [B, R, H, T, E] (T may be 0) ->
    log_probs float [B, R, V]; attention float [B, R, S] (the alignment layer's cross-attention,
    averaged over its alignment heads); topk_log_probs float [B, R, C], topk_ids int64 [B, R, C];
    hidden float [B, R, D]; then per layer its cache one step longer [B, R, H, T + 1, E].
    """

    def __init__(self, model: MarianModel, topk: int = TOPK) -> None:
        super().__init__()
        self.model = model
        self.topk = min(topk, model.spec.target_vocab_size)

    def forward(self, prev_ids: Tensor, src_mask: Tensor, *caches: Tensor):
        m = self.model
        layers = len(m.decoder_layers)
        cross, past = caches[:2 * layers], caches[2 * layers:]
        step = past[0].shape[3]
        positions = m.positions[torch.arange(step, step + 1, device=prev_ids.device)]
        x = (m.target_embeddings[prev_ids] * m.scale + positions).flatten(0, 1)  # [N, D], N = B * R
        new_cache, attention = [], None
        for i, layer in enumerate(m.decoder_layers):
            x, keys, values, weights = layer(x, past[2 * i], past[2 * i + 1], cross[2 * i], cross[2 * i + 1], src_mask)
            new_cache += [keys, values]
            if i == m.alignment_layer:
                attention = weights[:, :, m.alignment_heads].mean(dim=2)
        hidden = x.unflatten(0, prev_ids.shape)  # [B, R, D]: a lexical shortlist projects it anew
        log_probs = torch.log_softmax(hidden @ m.output_weight.t() + m.output_bias, dim=-1)
        topk_log_probs, topk_ids = torch.topk(log_probs, self.topk, dim=-1)
        return (log_probs, attention, topk_log_probs, topk_ids, hidden, *new_cache)
