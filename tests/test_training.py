"""Tiny end-to-end training runs on a toy corpus: the loss falls, checkpoints rebuild the model,
and a killed run resumes at the step it had checkpointed."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pytest
import torch

from training.checkpoint import CheckpointError, read_checkpoint
from training.loading import load_model
from training.config import load_config
from training.greedy import greedy_decode
from training.trainer import Trainer

pytestmark = pytest.mark.slow


def train_records(run_dir):
    return [json.loads(line) for line in (run_dir / "metrics.jsonl").read_text().splitlines()]


def test_tiny_training_run_loss_falls_and_checkpoint_rebuilds_model(toy_corpus, tiny_config_path, tmp_path):
    config = load_config(tiny_config_path)
    run_dir = tmp_path / "run"
    result = Trainer(config, run_dir, toy_corpus).train()
    assert result.epochs == 3
    for name in ("last.pt", "best.pt", "config.yaml", "spm.model", "metrics.jsonl", "curve.png"):
        assert (run_dir / name).is_file(), name
    records = train_records(run_dir)
    valid = [r for r in records if r["kind"] == "valid"]
    assert len(valid) == 3
    assert valid[-1]["valid_loss"] < valid[0]["valid_loss"]
    assert result.best_bleu == max(r["valid_bleu"] for r in valid)
    # The checkpoint alone rebuilds the model: same outputs as a second load, vocab included.
    loaded = load_model(run_dir / "best.pt")
    src = loaded.vocabs.encode_source("The big dog sees a red ball.")
    out = greedy_decode(loaded.model, [src])
    assert out == greedy_decode(load_model(run_dir / "best.pt").model, [src])
    assert isinstance(loaded.vocabs.tgt.decode(out[0]), str)
    assert loaded.spec.config == config.model


def test_training_loss_falls_over_steps(toy_corpus, tiny_config_path, tmp_path):
    config = load_config(tiny_config_path)
    run_dir = tmp_path / "run"
    Trainer(config, run_dir, toy_corpus).train(max_steps=40)
    losses = [r["train_loss"] for r in train_records(run_dir) if r["kind"] == "train"]
    assert len(losses) == 8
    assert losses[-1] < 0.7 * losses[0], losses


def test_existing_run_is_not_overwritten_without_resume(toy_corpus, tiny_config_path, tmp_path):
    config = load_config(tiny_config_path)
    Trainer(config, tmp_path / "run", toy_corpus).train(max_steps=2)
    with pytest.raises(FileExistsError, match="already holds a run"):
        Trainer(config, tmp_path / "run", toy_corpus).train()


def test_killed_run_resumes_at_the_checkpointed_step(toy_corpus, tiny_config_path, tmp_path):
    """SIGKILL a real `nmt train` process after a mid-epoch checkpoint, then --resume: it starts
    at that checkpoint's step and epoch/batch position, and finishes the same number of epochs."""
    run_dir = tmp_path / "run"
    cmd = [sys.executable, "-m", "nmt", "train", "--config", str(tiny_config_path),
           "--data-dir", str(toy_corpus), "--run-dir", str(run_dir)]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 120
        while not (run_dir / "last.pt").exists():
            assert proc.poll() is None, proc.stdout.read().decode()
            assert time.monotonic() < deadline, "no checkpoint written in 120 s"
            time.sleep(0.05)
        os.kill(proc.pid, signal.SIGKILL)
    finally:
        proc.wait(timeout=30)
    saved = read_checkpoint(run_dir / "last.pt")["progress"]
    assert saved["step"] > 0 and not saved["finished"]

    resumed = subprocess.run([*cmd, "--resume"], capture_output=True, text=True, timeout=300)
    assert resumed.returncode == 0, resumed.stderr
    expected = f"resumed at epoch {saved['epoch'] + 1}, batch {saved['batch_in_epoch']}, step {saved['step']}"
    assert expected in resumed.stdout + resumed.stderr
    final = read_checkpoint(run_dir / "last.pt")["progress"]
    assert final["finished"] and final["epoch"] == 3 and final["step"] > saved["step"]
    steps = [r["step"] for r in train_records(run_dir) if r["kind"] == "train"]
    assert steps == sorted(set(steps)), "steps after the checkpoint were logged twice"


def straight_and_resumed(config, corpus, tmp_path) -> tuple[dict, dict]:
    """The last checkpoints of 12 steps straight, and of 5 steps then a resume to 12."""
    Trainer(config, tmp_path / "straight", corpus).train(max_steps=12)
    Trainer(config, tmp_path / "stopped", corpus).train(max_steps=5)
    Trainer(config, tmp_path / "stopped", corpus).train(resume=True, max_steps=12)
    return read_checkpoint(tmp_path / "straight" / "last.pt"), read_checkpoint(tmp_path / "stopped" / "last.pt")


def test_resume_continues_identically_to_an_uninterrupted_run(toy_corpus, tiny_config_path, tmp_path):
    """Stopping at a checkpoint and resuming gives the same weights as never stopping."""
    a, b = straight_and_resumed(load_config(tiny_config_path), toy_corpus, tmp_path)
    assert a["progress"]["step"] == b["progress"]["step"] == 12
    for name, tensor in a["model"].items():
        torch.testing.assert_close(b["model"][name], tensor, msg=name)


def test_corrupt_checkpoint_is_a_clear_error(tmp_path):
    (tmp_path / "bad.pt").write_bytes(b"not a checkpoint")
    with pytest.raises(CheckpointError, match="not a readable checkpoint"):
        read_checkpoint(tmp_path / "bad.pt")
    with pytest.raises(CheckpointError, match="checkpoint not found"):
        read_checkpoint(tmp_path / "missing.pt")


def test_evaluate_scores_a_checkpoint_on_a_split(tiny_checkpoint, toy_corpus):
    from training.evaluate import main

    import contextlib
    import io

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main([str(tiny_checkpoint), "--split", "val", "--data-dir", str(toy_corpus), "--json"]) == 0
    result = json.loads(out.getvalue().strip().splitlines()[-1])
    assert result["sentences"] == 200 and 0.0 <= result["bleu"] <= 100.0
    assert result["signature"].startswith("nrefs:1|case:mixed|eff:no|tok:13a")


def test_budget_schedule_warms_up_then_anneals_to_min_lr_at_the_time_budget(toy_corpus, tiny_config_path, tmp_path):
    """lr_schedule: budget rises over warmup_steps, and the last logged rate before the time
    budget ends is annealed towards min_lr (the run is bounded by max_seconds, not by epochs)."""
    import dataclasses

    config = load_config(tiny_config_path)
    train = dataclasses.replace(config.train, lr_schedule="budget", warmup_steps=4, anneal_fraction=0.5,
                                max_seconds=2.0, max_epochs=50, log_every=1, min_lr=1e-5)
    run_dir = tmp_path / "run"
    Trainer(dataclasses.replace(config, train=train), run_dir, toy_corpus).train()
    rates = [r["lr"] for r in train_records(run_dir) if r["kind"] == "train"]
    # Logged after steps 1..3: the rate for steps 2..4 of the warm-up.
    assert rates[:3] == pytest.approx([train.lr * 2 / 4, train.lr * 3 / 4, train.lr * 4 / 4])
    assert max(rates) == pytest.approx(train.lr)
    assert rates[-1] < train.lr * 0.2  # the budget ran out: the rate had fallen most of the way
    assert all(later <= earlier + 1e-12 for earlier, later in zip(rates[rates.index(max(rates)):], rates[rates.index(max(rates)) + 1:]))


def test_budget_schedule_needs_a_time_budget():
    from training.config import Config, ConfigError

    with pytest.raises(ConfigError, match="max_seconds"):
        Config.from_dict({"train": {"lr_schedule": "budget"}})


def test_weight_average_is_validated_kept_in_best_and_resumed_exactly(toy_corpus, tiny_config_path, tmp_path):
    """train.ema_decay: each validation scores the raw weights and their moving average, best.pt
    holds whichever scored higher, and a resumed run continues the same average."""
    import dataclasses

    from training.averaging import WeightAverage

    config = load_config(tiny_config_path)
    config = dataclasses.replace(config, train=dataclasses.replace(config.train, ema_decay=0.9))
    a, b = straight_and_resumed(config, toy_corpus, tmp_path)
    assert a["ema"]["updates"] == b["ema"]["updates"] == 12
    for name, tensor in a["ema"]["shadow"].items():
        torch.testing.assert_close(b["ema"]["shadow"][name], tensor, msg=name)
        assert not torch.equal(tensor, a["model"][name]), f"{name}: the average is not the raw weights"

    run_dir = tmp_path / "full"
    result = Trainer(config, run_dir, toy_corpus).train()
    valid = [r for r in train_records(run_dir) if r["kind"] == "valid"]
    assert valid and all(r["valid_bleu"] == max(r["valid_bleu_raw"], r["valid_bleu_average"]) for r in valid)
    assert all(r["weights"] == ("average" if r["valid_bleu_average"] >= r["valid_bleu_raw"] else "raw") for r in valid)
    best_record = next(r for r in valid if r["valid_bleu"] == result.best_bleu)
    best = read_checkpoint(run_dir / "best.pt")
    kept = best["ema"]["shadow"] if best_record["weights"] == "average" else None
    if kept is not None:
        for name, tensor in kept.items():
            torch.testing.assert_close(best["model"][name], tensor, msg=name)
    else:
        assert any(not torch.equal(best["model"][n], t) for n, t in best["ema"]["shadow"].items())

    # The average of constant weights is those weights; it follows a moved model at rate 1 - decay.
    model = torch.nn.Linear(2, 2)
    average = WeightAverage(model, decay=0.5)
    with torch.no_grad():
        model.weight.fill_(1.0)
    average.updates = 100  # past the warm-up: the decay is 0.5
    before = average.shadow[0].clone()
    average.update(model)
    torch.testing.assert_close(average.shadow[0], 0.5 * before + 0.5)
    with average.applied(model):
        torch.testing.assert_close(model.weight.detach(), average.shadow[0])
    assert torch.equal(model.weight.detach(), torch.ones(2, 2))
