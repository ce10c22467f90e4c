"""The RNN encoder-decoder with attention of Bahdanau, Cho and Bengio (2014), arXiv:1409.0473.

    annotations   h_j  = [fwd h_j ; bwd h_j]                   (bidirectional GRU, length-aware)
                  h_j  = LN(Transformer(E x + P)_j)             (``encoder: transformer``: the RNMT+
                                                                hybrid of Chen et al. 2018, arXiv:1804.09849)
    initial state s_0  = tanh(W_s mean_j h_j)
    scores        e_ij = v_a^T tanh(W_a s_{i-1} + U_a h_j)      (additive; U_a h_j once per sentence)
                  e_ij = s_{i-1}^T h_j  |  s_{i-1}^T W h_j       (dot | general, Luong et al. 2015)
    weights       alpha_i = softmax(e_i)                        (padding masked to exactly 0)
    context       c_i  = sum_j alpha_ij h_j
    state         s_i  = GRU(s_{i-1}, [E y_{i-1} ; c_i])
    output        p(y_i) = softmax(W_o maxout(U_o s_i + V_o E y_{i-1} + C_o c_i))   (deep output)

Dimension letters: B batch, S source length, T target length, E embedding, H encoder hidden
(per direction), D decoder hidden, A attention keys, L decoder layers, V vocabulary. Annotations
are 2H wide from the GRU and M = enc_model_dim wide from the Transformer (written 2H below).
All state is explicit: ``Decoder.step`` takes and returns it; nothing is cached on modules.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from .config import ModelConfig
from .self_attention import EncoderLayer, sinusoidal_positions
from .vocab import PAD_ID


class EncoderOutput(NamedTuple):
    annotations: Tensor  # float [B, S, 2H], zero at padding
    keys: Tensor  # float [B, S, A], attention keys computed once per sentence
    state: Tensor  # float [L, B, D], initial decoder state
    mask: Tensor  # bool [B, S], True at real tokens


class StepOutput(NamedTuple):
    state: Tensor  # float [L, B, D]
    context: Tensor  # float [B, 2H]
    attention: Tensor  # float [B, S]


def length_mask(lengths: Tensor, max_len: int) -> Tensor:
    """bool [B, S]: True where position < length."""
    positions = torch.arange(max_len, device=lengths.device)
    return positions.unsqueeze(0) < lengths.unsqueeze(1)


def reversal_index(lengths: Tensor, steps: int) -> Tensor:
    """int64 [B, S]: for each row, position t maps to length-1-t inside the length, t outside."""
    positions = torch.arange(steps, device=lengths.device).unsqueeze(0)
    lengths = lengths.unsqueeze(1)
    return torch.where(positions < lengths, lengths - 1 - positions, positions)


def reverse_within_length(x: Tensor, index: Tensor) -> Tensor:
    """Reverse each sequence of ``x`` float [B, S, F] within its own length (``index`` from
    ``reversal_index``), leaving padding in place. The operation is its own inverse.

    This is what makes the backward GRU length-aware without ``pack_padded_sequence`` (which the
    ONNX exporter cannot handle): the backward direction reads real tokens first, then padding.
    The gather index takes its shape from the source ids, never from a GRU output, whose
    sequence length the torch 2.13 ONNX exporter declares as the export example's.
    """
    return torch.gather(x, 1, index.unsqueeze(-1).expand(-1, -1, x.shape[-1]))


class Encoder(nn.Module):
    """Embeddings and a bidirectional multi-layer GRU whose backward pass respects true lengths."""

    def __init__(self, cfg: ModelConfig, vocab_size: int) -> None:
        super().__init__()
        self.embed = nn.Embedding(vocab_size, cfg.emb_dim, padding_idx=PAD_ID)
        self.forward_rnns = nn.ModuleList()
        self.backward_rnns = nn.ModuleList()
        width = cfg.emb_dim
        for _ in range(cfg.enc_layers):
            self.forward_rnns.append(nn.GRU(width, cfg.enc_hidden, batch_first=True))
            self.backward_rnns.append(nn.GRU(width, cfg.enc_hidden, batch_first=True))
            width = 2 * cfg.enc_hidden
        self.emb_dropout = nn.Dropout(cfg.emb_dropout)
        self.dropout = nn.Dropout(cfg.dropout)

    def forward(self, src: Tensor, lengths: Tensor) -> tuple[Tensor, Tensor]:
        """src: int64 [B, S], lengths: int64 [B] -> (annotations float [B, S, 2H], mask bool [B, S])."""
        mask = length_mask(lengths, src.shape[1])
        index = reversal_index(lengths, src.shape[1])
        x = self.emb_dropout(self.embed(src))
        for layer, (fwd, bwd) in enumerate(zip(self.forward_rnns, self.backward_rnns)):
            if layer > 0:
                x = self.dropout(x)
            # Padding sits after the real tokens, so the forward direction never reads it early.
            forward_out, _ = fwd(x)
            backward_out, _ = bwd(reverse_within_length(x, index))
            x = torch.cat([forward_out, reverse_within_length(backward_out, index)], dim=-1)
        return x * mask.unsqueeze(-1).to(x.dtype), mask


class TransformerEncoder(nn.Module):
    """Source embeddings scaled by sqrt(M) plus sinusoidal positions, pre-norm self-attention layers
    (``self_attention``) and a final LayerNorm; same interface as ``Encoder``."""

    def __init__(self, cfg: ModelConfig, vocab_size: int) -> None:
        super().__init__()
        self.embed = nn.Embedding(vocab_size, cfg.enc_model_dim, padding_idx=PAD_ID)
        self.layers = nn.ModuleList(EncoderLayer(cfg.enc_model_dim, cfg.enc_heads, cfg.enc_ff_dim, cfg.dropout)
                                    for _ in range(cfg.enc_layers))
        self.norm = nn.LayerNorm(cfg.enc_model_dim)
        self.emb_dropout = nn.Dropout(cfg.emb_dropout)

    def forward(self, src: Tensor, lengths: Tensor) -> tuple[Tensor, Tensor]:
        """src: int64 [B, S], lengths: int64 [B] -> (annotations float [B, S, M], mask bool [B, S])."""
        mask = length_mask(lengths, src.shape[1])
        width = self.embed.embedding_dim
        x = self.embed(src) * width ** 0.5 + sinusoidal_positions(src.shape[1], width, src.device)
        x = self.emb_dropout(x)
        for layer in self.layers:
            x = layer(x, mask)
        x = self.norm(x)
        return x * mask.unsqueeze(-1).to(x.dtype), mask


def build_encoder(cfg: ModelConfig, vocab_size: int) -> nn.Module:
    """The encoder ``cfg.encoder`` names: ``Encoder`` (gru) or ``TransformerEncoder``."""
    return TransformerEncoder(cfg, vocab_size) if cfg.encoder == "transformer" else Encoder(cfg, vocab_size)


class Attention(nn.Module):
    """Scores a decoder query against precomputed keys; ``kind`` is additive, dot or general."""

    def __init__(self, cfg: ModelConfig) -> None:
        super().__init__()
        self.kind = cfg.attention
        annotation_dim = cfg.annotation_dim
        if self.kind == "additive":
            self.key_proj = nn.Linear(annotation_dim, cfg.att_dim)  # U_a
            self.query_proj = nn.Linear(cfg.dec_hidden, cfg.att_dim, bias=False)  # W_a
            self.v = nn.Linear(cfg.att_dim, 1, bias=False)  # v_a
        elif self.kind == "general":
            self.key_proj = nn.Linear(annotation_dim, cfg.dec_hidden, bias=False)  # W (applied to h_j once)

    def keys(self, annotations: Tensor) -> Tensor:
        """annotations float [B, S, 2H] -> keys float [B, S, A] (A = 2H for dot)."""
        if self.kind == "dot":
            return annotations
        return self.key_proj(annotations)

    def forward(self, query: Tensor, keys: Tensor, mask: Tensor) -> Tensor:
        """query float [N, D], keys float [B, S, A], mask bool [B, S] -> weights float [N, S].

        N = B * K: each sentence's K query rows (its beam) are adjacent and share its keys, which
        are read once per sentence (K = 1 in training). Weights are exactly 0 at padding and each
        row sums to 1.
        """
        batch, src_len, _ = keys.shape
        if self.kind == "additive":
            query = self.query_proj(query).reshape(batch, -1, 1, keys.shape[-1])  # [B, K, 1, A]
            scores = self.v(torch.tanh(keys.unsqueeze(1) + query)).squeeze(-1)  # [B, K, S]
        else:
            scores = torch.bmm(query.reshape(batch, -1, query.shape[-1]), keys.transpose(1, 2))  # [B, K, S]
        scores = scores.masked_fill(~mask.unsqueeze(1), float("-inf"))
        return torch.softmax(scores, dim=-1).reshape(-1, src_len)


class Decoder(nn.Module):
    """Conditional GRU decoder: one explicit ``step`` plus a position-wise deep-output ``readout``."""

    def __init__(self, cfg: ModelConfig, vocab_size: int) -> None:
        super().__init__()
        annotation_dim = cfg.annotation_dim
        self.layers = cfg.dec_layers
        self.hidden = cfg.dec_hidden
        self.embed = nn.Embedding(vocab_size, cfg.emb_dim, padding_idx=PAD_ID)
        self.attention = Attention(cfg)
        self.init_state = nn.Linear(annotation_dim, cfg.dec_layers * cfg.dec_hidden)  # W_s
        self.cells = nn.ModuleList(
            nn.GRUCell(cfg.emb_dim + annotation_dim if i == 0 else cfg.dec_hidden, cfg.dec_hidden)
            for i in range(cfg.dec_layers)
        )
        # Deep output (maxout with pools of 2): U_o s_i + V_o E y_{i-1} + C_o c_i in one matrix.
        self.readout_proj = nn.Linear(cfg.dec_hidden + cfg.emb_dim + annotation_dim, 2 * cfg.readout_dim)
        self.output = nn.Linear(cfg.readout_dim, vocab_size)
        if cfg.tie_target_embeddings:
            self.output.weight = self.embed.weight
        self.emb_dropout = nn.Dropout(cfg.emb_dropout)
        self.dropout = nn.Dropout(cfg.dropout)

    def initial_state(self, annotations: Tensor, mask: Tensor) -> Tensor:
        """Mean of the annotations over real positions -> s_0 float [L, B, D]."""
        weights = mask.to(annotations.dtype)
        mean = (annotations * weights.unsqueeze(-1)).sum(1) / weights.sum(1, keepdim=True)
        state = torch.tanh(self.init_state(mean))  # [B, L*D]
        return state.view(-1, self.layers, self.hidden).transpose(0, 1).contiguous()

    def step(self, prev_ids: Tensor, state: Tensor, annotations: Tensor, keys: Tensor, mask: Tensor) -> StepOutput:
        """One decoder step for N = B * K rows: K adjacent rows per source sentence (a beam; K = 1
        in training), which attend to that sentence's annotations.

        prev_ids int64 [N] (y_{i-1}), state float [L, N, D] (s_{i-1}), annotations float [B, S, 2H],
        keys float [B, S, A], mask bool [B, S] -> StepOutput(state [L, N, D], context [N, 2H],
        attention [N, S]).
        """
        embedded = self.emb_dropout(self.embed(prev_ids))
        context, alpha = self.attend(state[-1], annotations, keys, mask)
        x = torch.cat([embedded, context], dim=-1)
        new_states = []
        for layer, cell in enumerate(self.cells):
            if layer > 0:
                x = self.dropout(x)
            x = cell(x, state[layer])
            new_states.append(x)
        return StepOutput(torch.stack(new_states, 0), context, alpha)

    def attend(self, query: Tensor, annotations: Tensor, keys: Tensor, mask: Tensor) -> tuple[Tensor, Tensor]:
        """query float [N, D] (s_{i-1}), annotations float [B, S, 2H], keys float [B, S, A], mask bool
        [B, S] -> (context c_i float [N, 2H], weights alpha_i float [N, S]); N = B * K as in ``step``."""
        alpha = self.attention(query, keys, mask)
        batch, src_len, width = annotations.shape
        return torch.bmm(alpha.reshape(batch, -1, src_len), annotations).reshape(-1, width), alpha

    def readout(self, prev_ids: Tensor, top_state: Tensor, context: Tensor) -> Tensor:
        """Deep output, position-wise over any leading dims N.

        prev_ids int64 [*N], top_state float [*N, D], context float [*N, 2H] -> logits float [*N, V].
        """
        return self.output(self.dropout(self.readout_vector(prev_ids, top_state, context)))

    def readout_vector(self, prev_ids: Tensor, top_state: Tensor, context: Tensor) -> Tensor:
        """The deep output before the vocabulary projection: maxout t_i float [*N, R] (``readout``'s
        logits are ``output(t_i)``; a lexical shortlist projects t_i onto a few rows of it)."""
        embedded = self.emb_dropout(self.embed(prev_ids))
        t = self.readout_proj(torch.cat([self.dropout(top_state), embedded, self.dropout(context)], dim=-1))
        return t.view(*t.shape[:-1], -1, 2).amax(-1)  # maxout over pools of 2


class Seq2Seq(nn.Module):
    """Encoder, attention and decoder; ``forward`` is the teacher-forced loop over ``Decoder.step``."""

    def __init__(self, cfg: ModelConfig, src_vocab_size: int, tgt_vocab_size: int) -> None:
        super().__init__()
        self.cfg = cfg
        self.encoder = build_encoder(cfg, src_vocab_size)
        self.decoder = Decoder(cfg, tgt_vocab_size)
        # nn.Embedding's N(0, 1) makes tied output logits huge at the start (initial loss far above
        # log V); N(0, 1/E) keeps them O(1).
        for embedding in (self.encoder.embed, self.decoder.embed):
            nn.init.normal_(embedding.weight, std=embedding.embedding_dim ** -0.5)
            with torch.no_grad():
                embedding.weight[PAD_ID].zero_()

    def encode(self, src: Tensor, lengths: Tensor) -> EncoderOutput:
        """src int64 [B, S], lengths int64 [B] -> EncoderOutput."""
        annotations, mask = self.encoder(src, lengths)
        keys = self.decoder.attention.keys(annotations)
        state = self.decoder.initial_state(annotations, mask)
        return EncoderOutput(annotations, keys, state, mask)

    def decode_states(self, enc: EncoderOutput, prev_ids: Tensor) -> tuple[Tensor, Tensor, Tensor]:
        """Teacher-forced loop: prev_ids int64 [B, T] (bos y_1 .. y_{T-1}) ->
        (top states float [B, T, D], contexts float [B, T, 2H], attention float [B, T, S])."""
        state = enc.state
        tops, contexts, attentions = [], [], []
        for i in range(prev_ids.shape[1]):
            out = self.decoder.step(prev_ids[:, i], state, enc.annotations, enc.keys, enc.mask)
            state = out.state
            tops.append(state[-1])
            contexts.append(out.context)
            attentions.append(out.attention)
        return torch.stack(tops, 1), torch.stack(contexts, 1), torch.stack(attentions, 1)

    def forward(self, src: Tensor, lengths: Tensor, prev_ids: Tensor) -> Tensor:
        """Teacher-forced logits float [B, T, V] for prev_ids int64 [B, T]."""
        tops, contexts, _ = self.decode_states(self.encode(src, lengths), prev_ids)
        return self.decoder.readout(prev_ids, tops, contexts)

    def loss(self, src: Tensor, lengths: Tensor, prev_ids: Tensor, gold: Tensor, label_smoothing: float) -> tuple[Tensor, int]:
        """Summed label-smoothed cross-entropy over real target tokens, and their count.

        The vocabulary projection runs once, for all real positions together, after the loop.
        """
        tops, contexts, _ = self.decode_states(self.encode(src, lengths), prev_ids)
        real = gold != PAD_ID
        logits = self.decoder.readout(prev_ids[real], tops[real], contexts[real])  # [N, V]
        loss = F.cross_entropy(logits, gold[real], label_smoothing=label_smoothing, reduction="sum")
        return loss, int(real.sum())


@dataclass(frozen=True)
class ModelSpec:
    """Everything needed to rebuild a ``Seq2Seq``: its config and vocabulary sizes."""

    config: ModelConfig
    src_vocab_size: int
    tgt_vocab_size: int

    def build(self) -> Seq2Seq:
        return Seq2Seq(self.config, self.src_vocab_size, self.tgt_vocab_size)
