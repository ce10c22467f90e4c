"""A guided-alignment head: a second attention, trained on word alignments, that says which source
pieces each target piece translates (Garg et al. 2019, "Jointly Learning to Align and Translate
with Transformer Models", applied to an RNN as Marian's and OpenNMT's guided alignment is).

The translation attention alpha_i is read with s_{i-1}, before y_i is chosen: it says where the
decoder looked, not what y_i translates, and on long sentences it is diffuse. The head scores
every source piece against what is known once y_i is there, with the translation model frozen:

    query  q_i = MLP_q([s_i ; E y_i ; c_i ; r_i])    s_i the top decoder state after step i,
                                                    E y_i the target embedding, c_i the context,
                                                    r_i the target context (below)
    key    k_j = MLP_k(h_j)                          h_j the encoder annotation
    score  a_ij = q_i . k_j / sqrt(K) + w log(alpha_ij + 1e-6) + b_j
    p_i    = softmax_j(a_ij)                         over real source pieces and the source eos

(b_j is a learned bias on the source eos column only, which the head uses for "aligned to
nothing"). Trained by cross-entropy against silver links spread over the pieces of the linked
tokens (``piece_targets``); translations are unchanged.

s_i has seen y_1 .. y_i only, but the head runs once the whole target is known, and what y_i
translates often shows in the words after it (Garg et al. 2019; Zenkel et al. 2020, "End-to-End
Neural Word Alignment Outperforms GIZA++"). ``AlignerConfig.target_context`` picks r_i:

    none       no r_i (heads trained before the option existed)
    bigru      a bidirectional GRU over [s_1 ; E y_1] .. [s_T ; E y_T], its backward direction
               started at each target's own eos (``reverse_within_length``), so padding is never read
    attention  one pre-norm self-attention layer (``self_attention.EncoderLayer``) over the
               projected [s_t ; E y_t] plus sinusoidal positions, padded positions masked

With ``AlignerConfig.reverse`` (what ``nmt train-aligner`` trains) the head also gives the other
direction, as statistical aligners run both and symmetrise them: its own last query and key layers
on the same hidden layers, its own prior weight w' and "no link" bias b'_i on the target eos,

    score' a'_ij = q'_i . k'_j / sqrt(K) + w' log(alpha_ij + 1e-6) + b'_i
    p'_j   = softmax_i(a'_ij)                        over real target pieces and the target eos

so each source piece gets a distribution over the target pieces (``reverse_targets``);
``worker.engine.forced`` joins the best links of both directions with grow-diag-final-and.

Target padding is where target_ids is the head's ``pad_id`` (after the eos; PAD_ID for the models
trained here), so the graph needs no length input and a sentence's rows are the same alone or
padded in a batch.

The head reads only these widths of the model (``HeadDims``), so it also serves models trained
elsewhere: an imported Transformer (``export.marian.aligner``) gives its encoder output as h_j,
its final decoder state as s_i and one layer's cross-attention, averaged over heads, as alpha_i.

Dimension letters: B batch, S source length (eos included), T target length (eos included),
D decoder hidden, E embedding, H encoder hidden per direction, K head width.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np
import torch
from torch import Tensor, nn

from .aligner_options import DEFAULT_CONTEXT_HIDDEN, TARGET_CONTEXTS
from .config import ModelConfig
from .model import reversal_index, reverse_within_length
from .self_attention import EncoderLayer, sinusoidal_positions
from .vocab import PAD_ID

PRIOR_FLOOR = 1e-6


@dataclass(frozen=True)
class AlignerConfig:
    hidden: int = 512  # width of the query and key MLPs' hidden layer
    width: int = 256  # K: the dot-product space
    target_context: str = "none"  # r_i: one of TARGET_CONTEXTS; "none" is what old checkpoints hold
    context_hidden: int = DEFAULT_CONTEXT_HIDDEN  # bigru: per direction; attention: the layer's width
    context_heads: int = 4  # attention only
    reverse: bool = False  # also the source-to-target direction (below); False is what old checkpoints hold

    def __post_init__(self) -> None:
        if self.target_context not in TARGET_CONTEXTS:
            raise ValueError(f"target_context must be one of {', '.join(TARGET_CONTEXTS)}, got {self.target_context!r}")
        if self.context_hidden < 1 or self.context_hidden % self.context_heads:
            raise ValueError(f"context_hidden must be a positive multiple of context_heads ({self.context_heads}), "
                             f"got {self.context_hidden}")


@dataclass(frozen=True)
class HeadDims:
    """The widths the head reads of a translation model; a ``ModelConfig`` has the same three."""

    annotation_dim: int  # h_j
    dec_hidden: int  # s_i
    emb_dim: int  # E y_i


class BiGRUContext(nn.Module):
    """r_t from both sides: x float [B, T, F], mask bool [B, T] (True at real positions) -> float
    [B, T, 2C], 0 at padding. The forward GRU reads padding only after the real positions; the
    backward one reads each row reversed within its own length (``training.model.Encoder``'s way,
    which the ONNX exporter handles, unlike ``pack_padded_sequence``)."""

    def __init__(self, features: int, hidden: int) -> None:
        super().__init__()
        self.forward_rnn = nn.GRU(features, hidden, batch_first=True)
        self.backward_rnn = nn.GRU(features, hidden, batch_first=True)
        self.width = 2 * hidden

    def forward(self, x: Tensor, mask: Tensor) -> Tensor:
        index = reversal_index(mask.sum(1), mask.shape[1])  # shaped by target_ids, never by a GRU output
        forward_out, _ = self.forward_rnn(x)
        backward_out, _ = self.backward_rnn(reverse_within_length(x, index))
        out = torch.cat([forward_out, reverse_within_length(backward_out, index)], dim=-1)
        return out * mask.unsqueeze(-1).to(out.dtype)


class SelfAttentionContext(nn.Module):
    """r_t from one self-attention layer over the whole target: x float [B, T, F], mask bool [B, T]
    -> float [B, T, C], 0 at padding; padded positions are masked as keys."""

    def __init__(self, features: int, width: int, heads: int) -> None:
        super().__init__()
        self.project = nn.Linear(features, width)
        self.layer = EncoderLayer(width, heads, 2 * width, dropout=0.0)
        self.norm = nn.LayerNorm(width)
        self.width = width

    def forward(self, x: Tensor, mask: Tensor) -> Tensor:
        x = self.project(x) + sinusoidal_positions(x.shape[1], self.width, x.device)
        out = self.norm(self.layer(x, mask))
        return out * mask.unsqueeze(-1).to(out.dtype)


def build_target_context(cfg: AlignerConfig, features: int) -> nn.Module | None:
    """The module computing r_i from [s_i ; E y_i] (``features`` wide), or None for "none"."""
    if cfg.target_context == "bigru":
        return BiGRUContext(features, cfg.context_hidden)
    if cfg.target_context == "attention":
        return SelfAttentionContext(features, cfg.context_hidden, cfg.context_heads)
    return None


class AlignmentHead(nn.Module):
    """Alignment probabilities float [B, T, S] from the frozen model's teacher-forced outputs."""

    def __init__(self, cfg: AlignerConfig, model_cfg: ModelConfig | HeadDims, target_embedding: Tensor,
                 pad_id: int = PAD_ID) -> None:
        super().__init__()
        annotation_dim = model_cfg.annotation_dim
        self.cfg = cfg
        self.pad_id = pad_id  # target_ids after each target's eos
        self.embed = nn.Embedding.from_pretrained(target_embedding.detach().clone(), freeze=True)
        step_features = model_cfg.dec_hidden + model_cfg.emb_dim  # [s_i ; E y_i]
        self.target_context = build_target_context(cfg, step_features)
        query_in = step_features + annotation_dim + (self.target_context.width if self.target_context else 0)
        self.query = nn.Sequential(nn.Linear(query_in, cfg.hidden), nn.Tanh(), nn.Linear(cfg.hidden, cfg.width))
        self.key = nn.Sequential(nn.Linear(annotation_dim, cfg.hidden), nn.Tanh(), nn.Linear(cfg.hidden, cfg.width))
        self.prior = nn.Parameter(torch.tensor(1.0))
        self.null = nn.Parameter(torch.tensor(0.0))
        if cfg.reverse:  # its own last layers on the shared hidden layers, its own prior weight and null
            self.reverse_query = nn.Linear(cfg.hidden, cfg.width)
            self.reverse_key = nn.Linear(cfg.hidden, cfg.width)
            self.reverse_prior = nn.Parameter(torch.tensor(1.0))
            self.reverse_null = nn.Parameter(torch.tensor(0.0))

    def forward(self, annotations: Tensor, src_mask: Tensor, states: Tensor, target_ids: Tensor,
                attention: Tensor) -> Tensor:
        """annotations float [B, S, 2H], src_mask bool [B, S], states float [B, T, D] (s_i), target_ids
        int64 [B, T] (y_i, eos included, ``pad_id`` after it), attention float [B, T, S] (alpha_i) ->
        log-probabilities float [B, T, S], -inf at source padding."""
        return self.both(annotations, src_mask, states, target_ids, attention)[0]

    def both(self, annotations: Tensor, src_mask: Tensor, states: Tensor, target_ids: Tensor,
             attention: Tensor) -> tuple[Tensor, Tensor | None]:
        """``forward``'s log-probabilities, and with ``cfg.reverse`` the reverse direction's: float
        [B, T, S], each source piece's column a distribution over the target pieces, the target eos
        standing for "aligned to nothing" (-inf at target padding; source padding columns are not
        distributions and are ignored). Without ``cfg.reverse``, None."""
        contexts = torch.bmm(attention, annotations)  # c_i [B, T, 2H]
        step = torch.cat([states, self.embed(target_ids)], dim=-1)  # [B, T, D + E]
        features = [step, contexts]
        target_real = target_ids != self.pad_id
        if self.target_context is not None:
            features.append(self.target_context(step, target_real))  # r_i [B, T, R]
        query_hidden = self.query[1](self.query[0](torch.cat(features, dim=-1)))  # [B, T, hidden]
        key_hidden = self.key[1](self.key[0](annotations))  # [B, S, hidden]
        prior = torch.log(attention + PRIOR_FLOOR)
        scores = torch.bmm(self.query[2](query_hidden), self.key[2](key_hidden).transpose(1, 2)) * self.cfg.width ** -0.5
        scores = scores + self.prior * prior
        lengths = src_mask.sum(1)  # the eos is each source's last real piece
        is_eos = torch.arange(src_mask.shape[1], device=src_mask.device).unsqueeze(0) == (lengths - 1).unsqueeze(1)
        scores = scores + self.null * is_eos.unsqueeze(1).to(scores.dtype)
        scores = scores.masked_fill(~src_mask.unsqueeze(1), float("-inf"))
        if not self.cfg.reverse:
            return torch.log_softmax(scores, dim=-1), None
        reverse = torch.bmm(self.reverse_query(query_hidden), self.reverse_key(key_hidden).transpose(1, 2))
        reverse = reverse * self.cfg.width ** -0.5 + self.reverse_prior * prior
        target_lengths = target_real.sum(1)  # the eos is each target's last real piece
        is_target_eos = (torch.arange(target_ids.shape[1], device=target_ids.device).unsqueeze(0)
                         == (target_lengths - 1).unsqueeze(1))
        reverse = reverse + self.reverse_null * is_target_eos.unsqueeze(2).to(reverse.dtype)
        reverse = reverse.masked_fill(~target_real.unsqueeze(2), float("-inf"))
        return torch.log_softmax(scores, dim=-1), torch.log_softmax(reverse, dim=1)


def piece_targets(src_tokens: Sequence[int], tgt_tokens: Sequence[int], links: set[tuple[int, int]]) -> np.ndarray:
    """Training targets float32 [T + 1, S + 1] of one pair (pieces, then eos on each side).

    ``src_tokens``, ``tgt_tokens``: the token (word, or ``silver.tokens`` alignment token) each
    piece belongs to; ``links``: (source token, target token) pairs. Target piece t, in target token
    w, spreads its mass evenly over the pieces of the source tokens linked to w. A piece whose token
    has no link, and the target eos, put theirs on the source eos (no alignment)."""
    return _spread(tgt_tokens, src_tokens, {(j, i) for i, j in links})


def reverse_targets(src_tokens: Sequence[int], tgt_tokens: Sequence[int], links: set[tuple[int, int]]) -> np.ndarray:
    """The reverse direction's training targets float32 [T + 1, S + 1], by column: source piece s,
    in source token u, spreads its mass evenly over the pieces of the target tokens linked to u; a
    piece whose token has no link, and the source eos, put theirs on the target eos."""
    return _spread(src_tokens, tgt_tokens, set(links)).T.copy()


def _spread(from_tokens: Sequence[int], to_tokens: Sequence[int], links: set[tuple[int, int]]) -> np.ndarray:
    """float32 [F + 1, O + 1]: row f (a piece of token u) spread evenly over the pieces of the tokens
    linked to u (``links``: (from token, to token) pairs), else on the last column (eos); the eos
    row on the eos column."""
    targets = np.zeros((len(from_tokens) + 1, len(to_tokens) + 1), dtype=np.float32)
    linked: dict[int, set[int]] = {}
    for u, v in links:
        linked.setdefault(u, set()).add(v)
    for row, token in enumerate(from_tokens):
        columns = [c for c, other in enumerate(to_tokens) if other in linked.get(int(token), ())]
        if columns:
            targets[row, columns] = 1.0 / len(columns)
        else:
            targets[row, -1] = 1.0
    targets[-1, -1] = 1.0
    return targets
