"""Batched greedy decoding in torch, used for validation BLEU during training."""
from __future__ import annotations

from typing import Sequence

import torch

from .model import Seq2Seq
from .vocab import BOS_ID, EOS_ID, PAD_ID


@torch.no_grad()
def greedy_decode(
    model: Seq2Seq,
    sources: Sequence[Sequence[int]],
    max_len_a: float = 1.5,
    max_len_b: int = 10,
    batch_size: int = 128,
) -> list[list[int]]:
    """Greedy token ids (without bos/eos) for each source id list, in input order.

    Sentences are decoded in length-sorted batches; each stops at eos or at
    ``max_len_a * src_len + max_len_b`` tokens.
    """
    was_training = model.training
    model.eval()
    order = sorted(range(len(sources)), key=lambda i: len(sources[i]))
    results: list[list[int]] = [[] for _ in sources]
    try:
        for start in range(0, len(order), batch_size):
            chunk = order[start:start + batch_size]
            for index, ids in zip(chunk, _greedy_batch(model, [sources[i] for i in chunk], max_len_a, max_len_b)):
                results[index] = ids
    finally:
        model.train(was_training)
    return results


def _greedy_batch(model: Seq2Seq, sources: Sequence[Sequence[int]], a: float, b: int) -> list[list[int]]:
    device = next(model.parameters()).device
    src, lengths = (t.to(device) for t in pad_batch(sources))
    enc = model.encode(src, lengths)
    limits = (lengths.float() * a + b).long()
    batch = src.shape[0]
    prev = torch.full((batch,), BOS_ID, dtype=torch.long, device=device)
    state = enc.state
    finished = torch.zeros(batch, dtype=torch.bool, device=device)
    outputs = []
    for i in range(int(limits.max())):
        out = model.decoder.step(prev, state, enc.annotations, enc.keys, enc.mask)
        logits = model.decoder.readout(prev, out.state[-1], out.context)
        prev = logits.argmax(-1)
        state = out.state
        prev = prev.masked_fill(finished, PAD_ID)
        outputs.append(prev)
        finished |= (prev == EOS_ID) | (i + 1 >= limits)
        if bool(finished.all()):
            break
    tokens = torch.stack(outputs, 1).tolist()
    results = []
    for row in tokens:
        ids = []
        for token in row:
            if token in (EOS_ID, PAD_ID):
                break
            ids.append(token)
        results.append(ids)
    return results


def pad_batch(sequences: Sequence[Sequence[int]], pad: int = PAD_ID) -> tuple[torch.Tensor, torch.Tensor]:
    """Right-pad id lists -> (ids int64 [B, S], lengths int64 [B])."""
    lengths = torch.tensor([len(s) for s in sequences], dtype=torch.long)
    out = torch.full((len(sequences), int(lengths.max())), pad, dtype=torch.long)
    for row, seq in enumerate(sequences):
        out[row, : len(seq)] = torch.tensor(seq, dtype=torch.long)
    return out, lengths
