"""Bundle -> torch: the recovered model has exactly the exported weights, and refuses lossy bundles."""
from __future__ import annotations

import dataclasses

import pytest
import torch

from export.recover import RecoverError, recover_model, write_checkpoint
from training.loading import load_model
from worker.engine.bundle import load_bundle

pytestmark = pytest.mark.slow


def test_recovered_weights_equal_the_checkpoint(tiny_bundle, tiny_checkpoint):
    recovered, spec = recover_model(tiny_bundle)  # also checks graph parity against the bundle
    original = load_model(tiny_checkpoint).model.state_dict()
    state = recovered.state_dict()
    assert state.keys() == original.keys()
    for name, value in original.items():
        assert torch.equal(state[name], value), name
    assert spec.config.dec_layers == 2


def test_written_checkpoint_loads_with_vocab_and_config(tiny_bundle, tiny_checkpoint, tmp_path):
    path = write_checkpoint(tiny_bundle, tmp_path / "recovered.pt")
    loaded, original = load_model(path), load_model(tiny_checkpoint)
    assert loaded.vocabs.src.proto == original.vocabs.src.proto
    assert loaded.config == original.config
    assert all(torch.equal(a, b) for a, b in zip(loaded.model.state_dict().values(), original.model.state_dict().values()))
    assert loaded.raw["recovered_from"] == load_bundle(tiny_bundle).manifest["signature"]
    assert "optimizer" not in loaded.raw  # weights only: training cannot resume from it


def test_lossy_bundle_is_refused_by_name(tiny_bundle):
    bundle = load_bundle(tiny_bundle)
    int8 = dataclasses.replace(bundle, manifest={**bundle.manifest, "precision": "int8"})
    with pytest.raises(RecoverError, match="is int8; only fp32"):
        recover_model(int8)
