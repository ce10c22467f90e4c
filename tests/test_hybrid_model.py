"""The Transformer encoder (``model.encoder: transformer``, the RNMT+ hybrid) under the GRU decoder:
padding never changes a sentence's encoding, positions make order matter, the decoder's step loop
equals its teacher-forced forward, bf16 autocast training works, and the config validates its sizes
and keeps GRU checkpoints (which lack the new keys) loading as before."""
from __future__ import annotations

import dataclasses

import pytest
import torch

from training.config import Config, ConfigError, ModelConfig
from training.greedy import pad_batch
from training.model import Encoder, ModelSpec, TransformerEncoder
from training.self_attention import sinusoidal_positions

VOCAB = 40
HYBRID = ModelConfig(encoder="transformer", emb_dim=16, enc_model_dim=24, enc_heads=4, enc_ff_dim=32, enc_layers=2,
                     dec_hidden=20, att_dim=10, readout_dim=16, dropout=0.0, emb_dropout=0.0)


def build(cfg: ModelConfig = HYBRID, seed: int = 0):
    cfg.validate()
    torch.manual_seed(seed)
    return ModelSpec(cfg, VOCAB, VOCAB + 7).build().eval()


@pytest.mark.parametrize("layers", [1, 3])
@pytest.mark.parametrize("attention", ["additive", "general"])
def test_transformer_encoding_does_not_depend_on_batch_padding(layers, attention):
    """A sentence encodes the same alone and beside a much longer one: padded keys are masked in
    self-attention, and the initial state and attention keys read real positions only."""
    model = build(dataclasses.replace(HYBRID, enc_layers=layers, attention=attention))
    sentence = torch.randint(4, VOCAB, (5,)).tolist()
    with torch.no_grad():
        alone = model.encode(*pad_batch([sentence]))
        padded = model.encode(*pad_batch([torch.randint(4, VOCAB, (13,)).tolist(), sentence]))
    assert padded.annotations.shape == (2, 13, HYBRID.enc_model_dim)
    torch.testing.assert_close(padded.annotations[1, :5], alone.annotations[0], atol=1e-6, rtol=1e-5)
    torch.testing.assert_close(padded.keys[1, :5], alone.keys[0], atol=1e-6, rtol=1e-5)
    torch.testing.assert_close(padded.state[:, 1], alone.state[:, 0], atol=1e-6, rtol=1e-5)
    assert torch.all(padded.annotations[1, 5:] == 0)


def test_padding_ids_and_padded_positions_never_reach_real_ones():
    """What sits in the padding (any ids) changes no real position's annotation."""
    model = build()
    src, lengths = pad_batch([[5, 6, 7, 8], [9, 10, 11, 12, 13, 14]])
    with torch.no_grad():
        base = model.encode(src, lengths).annotations
        changed = src.clone()
        changed[0, 4:] = 21
        torch.testing.assert_close(model.encode(changed, lengths).annotations[0, :4], base[0, :4])


def test_positions_make_word_order_matter():
    """Self-attention alone is blind to order; with sinusoidal positions, swapping two tokens changes
    more than the order of the annotations."""
    model = build()
    src, lengths = pad_batch([[5, 6, 7, 8, 9]])
    swapped = src[:, [1, 0, 2, 3, 4]]
    with torch.no_grad():
        base, other = model.encode(src, lengths).annotations, model.encode(swapped, lengths).annotations
    assert not torch.allclose(base[0, [1, 0, 2, 3, 4]], other[0], atol=1e-3)


def test_sinusoidal_positions_work_at_any_length_and_extend_consistently():
    short, long = sinusoidal_positions(7, 24, torch.device("cpu")), sinusoidal_positions(500, 24, torch.device("cpu"))
    assert short.shape == (7, 24) and long.shape == (500, 24)
    torch.testing.assert_close(long[:7], short)
    torch.testing.assert_close(short[0], torch.cat([torch.zeros(12), torch.ones(12)]))  # sin 0, cos 0
    assert long.abs().max() <= 1.0


def test_step_loop_equals_teacher_forced_forward():
    model = build(dataclasses.replace(HYBRID, dec_layers=2))
    src, lengths = pad_batch([[5, 6, 7, 8, 9, 3], [10, 11, 3], [12, 3]])
    prev, _ = pad_batch([[2, 5, 6, 7, 8], [2, 9, 10], [2, 11, 12, 13]])
    with torch.no_grad():
        forced = model(src, lengths, prev)
        enc = model.encode(src, lengths)
        state, logits = enc.state, []
        for i in range(prev.shape[1]):
            out = model.decoder.step(prev[:, i], state, enc.annotations, enc.keys, enc.mask)
            state = out.state
            logits.append(model.decoder.readout(prev[:, i], out.state[-1], out.context))
    torch.testing.assert_close(torch.stack(logits, 1), forced)


def test_the_config_picks_the_encoder_and_the_decoder_reads_its_width():
    gru, hybrid = build(dataclasses.replace(HYBRID, encoder="gru")), build()
    assert isinstance(gru.encoder, Encoder) and isinstance(hybrid.encoder, TransformerEncoder)
    assert gru.decoder.init_state.in_features == 2 * HYBRID.enc_hidden
    assert hybrid.decoder.init_state.in_features == hybrid.decoder.attention.key_proj.in_features == HYBRID.enc_model_dim
    assert len(hybrid.encoder.layers) == HYBRID.enc_layers


def test_hybrid_trains_under_bf16_autocast():
    """The trainer's forward under bfloat16 autocast: finite fp32 gradients reach every encoder
    weight and a few Adam steps on one batch lower its loss."""
    torch.manual_seed(0)
    model = ModelSpec(dataclasses.replace(HYBRID, dropout=0.1), VOCAB, VOCAB).build().train()
    src, lengths = pad_batch([torch.randint(4, VOCAB, (n,)).tolist() for n in (9, 4, 7, 2)])
    gold, _ = pad_batch([torch.randint(4, VOCAB, (n,)).tolist() for n in (8, 5, 6, 3)])
    prev = torch.cat([torch.full((4, 1), 2), gold[:, :-1]], 1)
    optimizer = torch.optim.Adam(model.parameters(), lr=3e-3)
    losses = []
    for _ in range(12):
        optimizer.zero_grad()
        with torch.autocast("cpu", dtype=torch.bfloat16):
            loss, tokens = model.loss(src, lengths, prev, gold, 0.1)
        (loss / tokens).backward()
        for name, parameter in model.encoder.named_parameters():
            assert parameter.dtype == torch.float32 and parameter.grad is not None, name
            assert torch.isfinite(parameter.grad).all(), name
        optimizer.step()
        losses.append(float(loss.detach()) / tokens)
    assert losses[-1] < losses[0] - 0.5, losses


@pytest.mark.parametrize("changes, message", [
    ({"encoder": "lstm"}, r"'model\.encoder': must be one of \('gru', 'transformer'\)"),
    ({"enc_heads": 5}, r"'model\.enc_heads': must divide model\.enc_model_dim \(24 % 5 != 0\)"),
    ({"enc_model_dim": 21, "enc_heads": 3}, r"'model\.enc_model_dim': must be even"),
    ({"enc_ff_dim": 0}, r"'model\.enc_ff_dim': must be >= 1"),
    ({"attention": "dot", "dec_hidden": 20}, r"'dot' needs dec_hidden == enc_model_dim \(20 != 24\)"),
])
def test_transformer_sizes_are_validated(changes, message):
    raw = dataclasses.asdict(HYBRID) | changes
    with pytest.raises(ConfigError, match=message):
        Config.from_dict({"model": raw})


def test_gru_checkpoints_without_the_new_keys_build_the_gru_model():
    """A checkpoint written before ``encoder`` existed stores only the GRU sizes: it still builds
    a GRU encoder (``ModelConfig(**raw)`` as ``training.loading.load_model`` does)."""
    old = {k: v for k, v in dataclasses.asdict(ModelConfig()).items()
           if k not in ("encoder", "enc_model_dim", "enc_heads", "enc_ff_dim")}
    config = ModelConfig(**old)
    assert config.encoder == "gru" and config.annotation_dim == 2 * config.enc_hidden
    assert isinstance(ModelSpec(config, VOCAB, VOCAB).build().encoder, Encoder)
