"""The Bahdanau et al. (2014) model: masking, length-awareness and the explicit step()."""
from __future__ import annotations

import dataclasses

import pytest
import torch

from training.config import ConfigError, ModelConfig
from training.greedy import pad_batch
from training.model import ModelSpec, reversal_index, reverse_within_length

SMALL = ModelConfig(emb_dim=16, enc_hidden=12, dec_hidden=20, att_dim=10, readout_dim=16, dropout=0.0, emb_dropout=0.0)
KINDS = {
    "additive": SMALL,
    "general": dataclasses.replace(SMALL, attention="general"),
    "dot": dataclasses.replace(SMALL, attention="dot", dec_hidden=24),
}
VOCAB = 50


def build(cfg: ModelConfig, layers: int = 1):
    torch.manual_seed(0)
    cfg = dataclasses.replace(cfg, enc_layers=layers, dec_layers=layers)
    return ModelSpec(cfg, VOCAB, VOCAB + 7).build().eval()


def batch_of(lengths, seed=0):
    g = torch.Generator().manual_seed(seed)
    return pad_batch([torch.randint(4, VOCAB, (n,), generator=g).tolist() for n in lengths])


def test_reverse_within_length_leaves_padding_and_is_an_involution():
    x = torch.tensor([[1, 2, 3, 0, 0], [4, 5, 6, 7, 8], [9, 0, 0, 0, 0]]).unsqueeze(-1)
    index = reversal_index(torch.tensor([3, 5, 1]), 5)
    assert reverse_within_length(x, index).squeeze(-1).tolist() == [[3, 2, 1, 0, 0], [8, 7, 6, 5, 4], [9, 0, 0, 0, 0]]
    assert torch.equal(reverse_within_length(reverse_within_length(x, index), index), x)


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_attention_is_exactly_zero_over_padding_and_rows_sum_to_one(kind):
    model = build(KINDS[kind])
    src, lengths = batch_of([7, 3, 5, 1])
    enc = model.encode(src, lengths)
    prev = torch.randint(4, VOCAB, (4,))
    out = model.decoder.step(prev, enc.state, enc.annotations, enc.keys, enc.mask)
    assert out.attention.shape == (4, 7)
    assert torch.all(out.attention[~enc.mask] == 0.0)
    assert torch.all(out.attention[enc.mask] > 0.0)
    torch.testing.assert_close(out.attention.sum(-1), torch.ones(4))


@pytest.mark.parametrize("layers", [1, 2])
@pytest.mark.parametrize("kind", sorted(KINDS))
def test_encoder_output_does_not_depend_on_batch_padding(kind, layers):
    """A sentence encodes the same alone and beside a much longer one (padding never leaks
    into the backward direction, the initial state or the keys)."""
    model = build(KINDS[kind], layers)
    sentence = torch.randint(4, VOCAB, (5,)).tolist()
    alone = model.encode(*pad_batch([sentence]))
    padded = model.encode(*pad_batch([sentence, torch.randint(4, VOCAB, (13,)).tolist()]))
    torch.testing.assert_close(padded.annotations[0, :5], alone.annotations[0], atol=1e-6, rtol=1e-5)
    torch.testing.assert_close(padded.keys[0, :5], alone.keys[0], atol=1e-6, rtol=1e-5)
    torch.testing.assert_close(padded.state[:, 0], alone.state[:, 0], atol=1e-6, rtol=1e-5)
    assert torch.all(padded.annotations[0, 5:] == 0)


def test_backward_direction_reads_the_sentence_reversed():
    """The first annotation's backward half has seen the whole sentence: changing the last
    real token changes it, changing padding does not."""
    model = build(SMALL)
    src, lengths = pad_batch([[5, 6, 7, 8], [9, 10, 11, 12, 13, 14]])
    base = model.encode(src, lengths).annotations
    changed_last = src.clone()
    changed_last[0, 3] = 20
    assert not torch.allclose(model.encode(changed_last, lengths).annotations[0, 0, 12:], base[0, 0, 12:])
    changed_pad = src.clone()
    changed_pad[0, 4:] = 21
    torch.testing.assert_close(model.encode(changed_pad, lengths).annotations[0, :4], base[0, :4])


@pytest.mark.parametrize("layers", [1, 2])
@pytest.mark.parametrize("kind", sorted(KINDS))
def test_step_loop_equals_teacher_forced_forward(kind, layers):
    model = build(KINDS[kind], layers)
    src, lengths = batch_of([6, 4, 2])
    prev, _ = batch_of([5, 5, 3], seed=1)
    forced = model(src, lengths, prev)  # [B, T, V]
    enc = model.encode(src, lengths)
    state, step_logits = enc.state, []
    for i in range(prev.shape[1]):
        out = model.decoder.step(prev[:, i], state, enc.annotations, enc.keys, enc.mask)
        state = out.state
        step_logits.append(model.decoder.readout(prev[:, i], out.state[-1], out.context))
    torch.testing.assert_close(torch.stack(step_logits, 1), forced)
    assert forced.shape == (3, 5, VOCAB + 7)


def test_loss_counts_only_real_tokens_and_matches_forward():
    model = build(SMALL)
    src, lengths = batch_of([6, 4])
    prev, _ = batch_of([5, 3], seed=1)
    gold = torch.tensor([[7, 8, 9, 10, 3], [11, 12, 3, 0, 0]])  # 5 + 3 real tokens
    loss, tokens = model.loss(src, lengths, prev, gold, label_smoothing=0.0)
    assert tokens == 8
    logits = model(src, lengths, prev)
    expected = torch.nn.functional.cross_entropy(logits[gold != 0], gold[gold != 0], reduction="sum")
    torch.testing.assert_close(loss, expected)


def test_tied_embeddings_share_the_output_matrix():
    model = build(SMALL)
    assert model.decoder.output.weight is model.decoder.embed.weight
    untied = build(dataclasses.replace(SMALL, tie_target_embeddings=False, readout_dim=8))
    assert untied.decoder.output.weight is not untied.decoder.embed.weight


def test_dot_attention_needs_matching_sizes():
    with pytest.raises(ConfigError, match="'dot' needs dec_hidden == 2 \\* enc_hidden"):
        dataclasses.replace(SMALL, attention="dot").validate()
