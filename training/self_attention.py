"""Pre-norm Transformer encoder layers (Vaswani et al. 2017, arXiv:1706.03762; layer norm before each
block as in the RNMT+ hybrid encoder of Chen et al. 2018, arXiv:1804.09849), for ``model.TransformerEncoder``.

    attention  x <- x + Dropout(W_o [softmax(Q_n K_n^T / sqrt(d) + mask) V_n]_n),   Q, K, V = W_qkv LN(x)
    feed-fwd   x <- x + Dropout(W_2 Dropout(relu(W_1 LN(x) + b_1)) + b_2)
    positions  P[s, i] = sin(s w_i), P[s, M/2 + i] = cos(s w_i),  w_i = 10000^(-2i/M), i < M/2

Attention is written with Linear layers and a masked softmax (not ``nn.MultiheadAttention``), so the
ONNX graph holds plain MatMuls that ``quantize_dynamic`` makes int8, and positions are computed
from the length, so any source length works. Padded keys are masked: a sentence encodes the same
alone or padded in a batch.

Dimension letters: B batch, S source length, M model width, N heads, d = M / N, F feed-forward width.
"""
from __future__ import annotations

import math

import torch
from torch import Tensor, nn


def sinusoidal_positions(length: int, width: int, device: torch.device) -> Tensor:
    """float [S, M]: sines in the first half of the width, cosines in the second (fairseq's layout)."""
    position = torch.arange(length, device=device, dtype=torch.float32).unsqueeze(1)  # [S, 1]
    half = width // 2
    rates = torch.exp(torch.arange(half, device=device, dtype=torch.float32) * (-math.log(10000.0) / half))  # w_i
    angles = position * rates  # [S, M/2]
    return torch.cat([angles.sin(), angles.cos()], dim=-1)


class SelfAttention(nn.Module):
    """Multi-head scaled dot-product self-attention over real tokens only."""

    def __init__(self, width: int, heads: int) -> None:
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(width, 3 * width)  # W_q, W_k, W_v in one product
        self.out = nn.Linear(width, width)  # W_o
        for linear in (self.qkv, self.out):
            nn.init.xavier_uniform_(linear.weight)
            nn.init.zeros_(linear.bias)

    def forward(self, x: Tensor, mask: Tensor) -> Tensor:
        """x float [B, S, M], mask bool [B, S] (True at real tokens) -> float [B, S, M].
        Each position's weights are exactly 0 on padded keys."""
        batch, length, width = x.shape
        q, k, v = self.qkv(x).view(batch, length, 3, self.heads, -1).permute(2, 0, 3, 1, 4).unbind(0)  # [B, N, S, d]
        scores = torch.matmul(q * q.shape[-1] ** -0.5, k.transpose(-1, -2))  # [B, N, S, S]
        scores = scores.masked_fill(~mask[:, None, None, :], float("-inf"))
        context = torch.matmul(torch.softmax(scores, dim=-1), v)  # [B, N, S, d]
        return self.out(context.transpose(1, 2).reshape(batch, length, width))


class EncoderLayer(nn.Module):
    """One pre-norm block: self-attention, then a ReLU feed-forward, each around a residual."""

    def __init__(self, width: int, heads: int, ff_dim: int, dropout: float) -> None:
        super().__init__()
        self.attention_norm = nn.LayerNorm(width)
        self.attention = SelfAttention(width, heads)
        self.ff_norm = nn.LayerNorm(width)
        self.ff_in = nn.Linear(width, ff_dim)
        self.ff_out = nn.Linear(ff_dim, width)
        for linear in (self.ff_in, self.ff_out):
            nn.init.xavier_uniform_(linear.weight)
            nn.init.zeros_(linear.bias)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x: Tensor, mask: Tensor) -> Tensor:
        """x float [B, S, M], mask bool [B, S] -> float [B, S, M]."""
        x = x + self.dropout(self.attention(self.attention_norm(x), mask))
        hidden = self.dropout(torch.relu(self.ff_in(self.ff_norm(x))))  # [B, S, F]
        return x + self.dropout(self.ff_out(hidden))
