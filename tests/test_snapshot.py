"""Compact snapshots (training.snapshot): a run written to one file goes on in another run
directory at the same step and batch, with its averaged weights, metrics and budget, and a fresh
optimizer that warms up."""
from __future__ import annotations

import dataclasses
import json

import pytest
import torch

from training.checkpoint import CheckpointError, read_checkpoint
from training.loading import load_model
from training.config import load_config
from training.snapshot import WARMUP_STEPS, read_snapshot, snapshot_config, warmup_factor, write_snapshot
from training.trainer import Trainer

pytestmark = pytest.mark.slow


def records(run_dir) -> list[dict]:
    return [json.loads(line) for line in (run_dir / "metrics.jsonl").read_text().splitlines()]


@pytest.fixture()
def config(tiny_config_path):
    config = load_config(tiny_config_path)
    return dataclasses.replace(config, train=dataclasses.replace(
        config.train, log_every=2, valid_every=4, checkpoint_every=3, ema_decay=0.9))


def test_a_run_goes_on_from_its_snapshot_at_the_same_step(config, toy_corpus, tmp_path):
    first, moved = tmp_path / "first", tmp_path / "moved"
    Trainer(config, first, toy_corpus).train(max_steps=6)
    out = tmp_path / "snap" / "run.pt"
    snapshot = write_snapshot(first, out)
    last = read_checkpoint(first / "last.pt")

    # Half precision and no optimizer: smaller than the checkpoint.
    assert out.stat().st_size < (first / "last.pt").stat().st_size / 2
    assert all(t.dtype == torch.float16 for t in snapshot["model"].values() if t.is_floating_point())
    assert snapshot["progress"]["step"] == 6 and "optimizer" not in snapshot
    assert snapshot["metrics"] == (first / "metrics.jsonl").read_text()

    loaded = read_snapshot(out)
    Trainer(snapshot_config(loaded), moved, toy_corpus).train(max_steps=10, snapshot=loaded)
    resumed = read_checkpoint(moved / "last.pt")
    assert resumed["progress"]["step"] == 10
    assert resumed["progress"]["warm_from"] == 6
    # The same batch of the same epoch: the batches after step 6 are those the first run would train.
    assert resumed["progress"]["batch_in_epoch"] - last["progress"]["batch_in_epoch"] == 4 or resumed["progress"]["epoch"] > last["progress"]["epoch"]
    assert resumed["progress"]["elapsed"] > last["progress"]["elapsed"]
    assert resumed["ema"]["updates"] == last["ema"]["updates"] + 4
    steps = [(r["kind"], r["step"]) for r in records(moved)]
    assert steps[: len(records(first))] == [(r["kind"], r["step"]) for r in records(first)]
    assert ("train", 8) in steps and ("valid", 8) in steps
    # The warm-up: the first step after the snapshot runs at 1/WARMUP_STEPS of the rate, and the
    # record at step 8 shows the rate of the step after it, the third.
    lr = [r["lr"] for r in records(moved) if r["kind"] == "train" and r["step"] == 8][0]
    assert lr == pytest.approx(loaded["lr"] * 3 / WARMUP_STEPS)


def test_the_weights_start_where_the_snapshot_left_them(config, toy_corpus, tmp_path):
    first = tmp_path / "first"
    Trainer(config, first, toy_corpus).train(max_steps=3)
    snapshot = write_snapshot(first, tmp_path / "s.pt")
    weights = read_checkpoint(first / "last.pt")["model"]
    for name, half in snapshot["model"].items():
        assert torch.allclose(half.float(), weights[name], rtol=1e-3, atol=1e-4), name


def test_a_snapshot_loads_as_a_model_with_the_weights_its_validation_chose(config, toy_corpus, tmp_path):
    first = tmp_path / "first"
    Trainer(config, first, toy_corpus).train(max_steps=4)
    snapshot = write_snapshot(first, tmp_path / "s.pt")
    last_valid = [r for r in records(first) if r["kind"] == "valid"][-1]
    for chosen in ("raw", "average"):  # as if the last validation had chosen each
        record = json.dumps({**last_valid, "weights": chosen})
        torch.save({**snapshot, "metrics": snapshot["metrics"] + record + "\n"}, tmp_path / "s.pt")
        expected = snapshot["ema"]["shadow"] if chosen == "average" else snapshot["model"]
        loaded = load_model(tmp_path / "s.pt")
        for name, weight in loaded.model.named_parameters():  # tied weights once, under the average's names
            assert weight.dtype == torch.float32 and torch.equal(weight, expected[name].float()), (chosen, name)
    assert not torch.equal(snapshot["ema"]["shadow"][name], snapshot["model"][name])
    assert loaded.raw["progress"]["step"] == 4 and "ema" not in loaded.raw and "metrics" not in loaded.raw
    assert loaded.raw["valid_sample"] == snapshot["valid_sample"]
    # Anything else still gets the checkpoint's error.
    (tmp_path / "other.pt").write_bytes(b"not torch")
    with pytest.raises(CheckpointError, match="not a readable checkpoint"):
        load_model(tmp_path / "other.pt")


def test_warmup_ramps_linearly_then_holds():
    assert warmup_factor(10, -1) == 1.0
    assert warmup_factor(6, 6) == pytest.approx(1 / WARMUP_STEPS)
    assert warmup_factor(6 + WARMUP_STEPS - 1, 6) == 1.0
    assert warmup_factor(6 + 5 * WARMUP_STEPS, 6) == 1.0


def test_a_snapshot_never_lands_on_an_existing_run(config, toy_corpus, tmp_path):
    first = tmp_path / "first"
    Trainer(config, first, toy_corpus).train(max_steps=2)
    snapshot = write_snapshot(first, tmp_path / "s.pt")
    with pytest.raises(FileExistsError, match="already holds a run"):
        Trainer(config, first, toy_corpus).train(max_steps=4, snapshot=snapshot)


def test_a_config_with_another_model_is_refused(config, toy_corpus, tmp_path):
    first = tmp_path / "first"
    Trainer(config, first, toy_corpus).train(max_steps=2)
    snapshot = write_snapshot(first, tmp_path / "s.pt")
    longer = dataclasses.replace(config, train=dataclasses.replace(config.train, max_seconds=99.0))
    assert snapshot_config(snapshot, longer).train.max_seconds == 99.0
    other = dataclasses.replace(config, model=dataclasses.replace(config.model, dec_hidden=config.model.dec_hidden + 8))
    with pytest.raises(CheckpointError, match="model section differs"):
        snapshot_config(snapshot, other)


def test_files_that_are_not_snapshots_get_one_line(tmp_path, config, toy_corpus):
    with pytest.raises(CheckpointError, match="snapshot not found"):
        read_snapshot(tmp_path / "missing.pt")
    first = tmp_path / "first"
    Trainer(config, first, toy_corpus).train(max_steps=2)
    with pytest.raises(CheckpointError, match="not a training snapshot"):
        read_snapshot(first / "last.pt")


def test_the_command_line(config, toy_corpus, tmp_path, capsys, monkeypatch):
    from nmt.cli import main

    monkeypatch.delenv("NMT_DATA_DIR", raising=False)
    first = tmp_path / "first"
    Trainer(config, first, toy_corpus).train(max_steps=3)
    out = tmp_path / "s.pt"
    assert main(["snapshot", "--run-dir", str(first), "--out", str(out)]) == 0
    assert "step 3" in capsys.readouterr().out
    assert main(["train", "--from-snapshot", str(out), "--data-dir", str(toy_corpus),
                 "--run-dir", str(tmp_path / "moved"), "--max-steps", "5"]) == 0
    assert read_checkpoint(tmp_path / "moved" / "last.pt")["progress"]["step"] == 5
    assert main(["train", "--from-snapshot", str(out), "--resume", "--run-dir", str(tmp_path / "x")]) != 0
    assert "give one of them" in capsys.readouterr().err
