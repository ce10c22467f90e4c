"""The guided-alignment head (``training.aligner``) over an imported Transformer, frozen.

The head reads what it reads of the models trained here: h_j the encoder output (the encoder
graph's ``memory``), s_i the final decoder state after step i (the step graph's ``hidden``, the
state the step predicts y_i from), E y_i the target embedding, and alpha_i the cross-attention
the bundle aligns with (its manifest's ``alignment``: one decoder layer, averaged over the chosen
heads; the step graph's ``attention``). Training runs the model teacher-forced over whole targets
at once with a causal mask (``teacher_forced``), which computes what the step graph computes one
step at a time; the recipe (silver links, views, loss) is ``training.aligner_training``'s.
Dimensions: B sentences, S source length, T target length (eos included), D model width.
"""
from __future__ import annotations

from typing import Sequence

import sentencepiece as spm
import torch
from torch import Tensor

from training.aligner import AlignerConfig, AlignmentHead, HeadDims
from training.aligner_training import Example, FrozenModel
from training.aligner_views import piece_tokens

from .source import ModelSource
from .torch_model import EncoderGraph, MarianModel


def head_dims(model: MarianModel) -> HeadDims:
    """The widths the head reads: memory, hidden and the target embedding are all D wide."""
    return HeadDims(annotation_dim=model.spec.d_model, dec_hidden=model.spec.d_model, emb_dim=model.spec.d_model)


def teacher_forced(model: MarianModel, src: Tensor, src_lengths: Tensor, prev_ids: Tensor
                   ) -> tuple[Tensor, Tensor, Tensor, Tensor]:
    """src int64 [B, S], src_lengths int64 [B], prev_ids int64 [B, T] (the decoder start, then the
    target; anything after a row's last real token) -> memory float [B, S, D], src_mask bool [B, S],
    states float [B, T, D] (``hidden`` of each step), attention float [B, T, S] (the alignment
    layer's cross-attention averaged over its alignment heads). Position t sees positions <= t only,
    so padding after a target never changes its rows."""
    memory, *_ = EncoderGraph(model)(src, src_lengths)
    src_mask = torch.arange(src.shape[1], device=src.device)[None, :] < src_lengths[:, None]
    steps = prev_ids.shape[1]
    x = model.target_embeddings[prev_ids] * model.scale + model.positions[:steps]
    causal = torch.ones(steps, steps, dtype=torch.bool, device=src.device).tril()
    attention = None
    for i, layer in enumerate(model.decoder_layers):
        a = layer.self_attn
        q, k, v = a.split(a.q(x)), a.split(a.k(x)), a.split(a.v(x))  # [B, H, T, E]
        weights = torch.softmax(((q @ k.transpose(-1, -2)) * a.scaling).masked_fill(~causal, float("-inf")), dim=-1)
        x = layer.self_norm(x + a.out(a.merge(weights @ v)))
        c = layer.cross_attn
        q, k, v = c.split(c.q(x)), c.split(c.k(memory)), c.split(c.v(memory))  # q [B, H, T, E]; k, v [B, H, S, E]
        scores = ((q @ k.transpose(-1, -2)) * c.scaling).masked_fill(~src_mask[:, None, None, :], float("-inf"))
        cross = torch.softmax(scores, dim=-1)  # [B, H, T, S]
        x = layer.cross_norm(x + c.out(c.merge(cross @ v)))
        x = layer.ffn_norm(x + layer.ffn(x))
        if i == model.alignment_layer:
            attention = cross[:, model.alignment_heads].mean(dim=1)
    return memory, src_mask, x, attention


def head_inputs(model: MarianModel, sources: Sequence[Sequence[int]], targets: Sequence[Sequence[int]]
                ) -> tuple[Tensor, ...]:
    """The head's five inputs (``bundle.ALIGNER_INPUTS``) for ``sources`` (ids, eos last) and
    ``targets`` (ids without eos), run without gradients: memory as the annotations, the source
    mask, the states, the target ids (eos appended, the pad id after it) and the attention."""
    spec = model.spec
    src = torch.full((len(sources), max(map(len, sources))), spec.pad_id, dtype=torch.long)
    gold = torch.full((len(targets), max(map(len, targets)) + 1), spec.pad_id, dtype=torch.long)
    prev = torch.full(gold.shape, spec.pad_id, dtype=torch.long)  # padding past a target's eos: never read
    for row, (s, t) in enumerate(zip(sources, targets)):
        src[row, :len(s)] = torch.tensor(s, dtype=torch.long)
        gold[row, :len(t) + 1] = torch.tensor([*t, spec.eos_id], dtype=torch.long)
        prev[row, :len(t) + 1] = torch.tensor([spec.decoder_start_id, *t], dtype=torch.long)
    lengths = torch.tensor([len(s) for s in sources], dtype=torch.long)
    with torch.no_grad():
        memory, mask, states, attention = teacher_forced(model, src, lengths, prev)
    return memory, mask, states, gold, attention


class MarianFrozen(FrozenModel):
    """An imported model as ``training.aligner_training`` trains a head over it: pieces cut by its
    SentencePiece models and numbered by its own vocabularies (``vocab.json``), as the worker does
    (``worker.engine.vocabulary``)."""

    def __init__(self, model: MarianModel, source: ModelSource) -> None:
        self.module, self.eos_id = model, model.spec.eos_id
        self.processors = {"source": spm.SentencePieceProcessor(model_file=str(source.source_spm)),
                           "target": spm.SentencePieceProcessor(model_file=str(source.target_spm))}
        self.ids = {"source": source.vocabularies.source, "target": source.vocabularies.target}

    def cut(self, side: str, text: str, spans: Sequence[tuple[int, int]]) -> tuple[list[int], list[int]]:
        ids = self.ids[side]
        unk = ids["<unk>"]
        return piece_tokens(self.processors[side], text, spans, lambda piece: ids.get(piece, unk))

    def new_head(self, cfg: AlignerConfig) -> AlignmentHead:
        model = self.module
        return AlignmentHead(cfg, head_dims(model), model.target_embeddings, pad_id=model.spec.pad_id)

    def head_inputs(self, examples: Sequence[Example], bf16: bool) -> tuple[Tensor, ...]:
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=bf16):
            inputs = head_inputs(self.module, [e.src for e in examples], [e.tgt for e in examples])
        return tuple(x.float() if x.is_floating_point() else x for x in inputs)
