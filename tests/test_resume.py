"""Resuming a run: the config comparison warns only about real differences, and metrics.jsonl ends
up as an uninterrupted run's (no step logged twice, no record over a partial window)."""
from __future__ import annotations

import json
import logging
import shutil

import pytest
import yaml

from training.config import load_config
from training.trainer import Trainer, config_differences

pytestmark = pytest.mark.slow

DIFFERS = "the given config differs"
STABLE_KEYS = ("kind", "step", "epoch", "train_loss", "lr", "valid_bleu", "valid_loss")  # not timings


def records(run_dir) -> list[dict]:
    return [json.loads(line) for line in (run_dir / "metrics.jsonl").read_text().splitlines()]


def train_cli(*args: str) -> None:
    from nmt.cli import main

    assert main(["train", *args]) == 0


def test_resuming_warns_about_a_different_config_only(toy_corpus, tiny_config_path, tmp_path, caplog, monkeypatch):
    monkeypatch.delenv("NMT_DATA_DIR", raising=False)
    run = str(tmp_path / "run")
    caplog.set_level(logging.WARNING)
    train_cli("--config", str(tiny_config_path), "--data-dir", str(toy_corpus), "--run-dir", run, "--max-steps", "2")

    # The run's own config.yaml, without --data-dir: it names the corpus directory it read.
    train_cli("--run-dir", run, "--resume", "--max-steps", "4")
    # The same config file again.
    train_cli("--config", str(tiny_config_path), "--data-dir", str(toy_corpus), "--run-dir", run, "--resume", "--max-steps", "6")
    assert DIFFERS not in caplog.text

    changed = yaml.safe_load(tiny_config_path.read_text())
    changed["train"]["lr"] = 0.002
    other = tmp_path / "other.yaml"
    other.write_text(yaml.safe_dump(changed))
    train_cli("--config", str(other), "--data-dir", str(toy_corpus), "--run-dir", run, "--resume", "--max-steps", "8")
    assert f"{DIFFERS} in train.lr" in caplog.text


def test_config_differences_name_the_keys(tiny_config_path):
    import dataclasses

    config = load_config(tiny_config_path)
    assert config_differences(config, config) == []
    other = dataclasses.replace(config, model=dataclasses.replace(config.model, dec_hidden=64),
                                train=dataclasses.replace(config.train, max_epochs=9))
    assert config_differences(config, other) == ["model.dec_hidden", "train.max_epochs"]


def test_resume_after_a_crash_logs_what_an_uninterrupted_run_logs(toy_corpus, tiny_config_path, tmp_path):
    """A run checkpointed at step 5 goes on logging to step 8 and dies before its next checkpoint;
    resumed from step 5 to 12, its metrics.jsonl equals that of a run that went to 12 at once:
    steps 6-8 are not logged twice, and the record at step 6 covers steps 5 and 6."""
    import dataclasses

    config = load_config(tiny_config_path)
    config = dataclasses.replace(config, train=dataclasses.replace(config.train, log_every=2, valid_every=4,
                                                                    checkpoint_every=5))
    straight, crashed = tmp_path / "straight", tmp_path / "crashed"
    Trainer(config, straight, toy_corpus).train(max_steps=12)

    Trainer(config, crashed, toy_corpus).train(max_steps=5)
    shutil.copy(crashed / "last.pt", tmp_path / "step5.pt")
    Trainer(config, crashed, toy_corpus).train(resume=True, max_steps=8)
    shutil.copy(tmp_path / "step5.pt", crashed / "last.pt")  # the checkpoints after step 5 were lost
    Trainer(config, crashed, toy_corpus).train(resume=True, max_steps=12)

    expected, got = records(straight), records(crashed)
    assert [(r["kind"], r["step"]) for r in got] == [(r["kind"], r["step"]) for r in expected]
    assert [r["step"] for r in got if r["kind"] == "train"] == [2, 4, 6, 8, 10, 12]
    assert any(r["kind"] == "valid" for r in got)
    for mine, theirs in zip(got, expected):
        for key in STABLE_KEYS:
            if isinstance(theirs.get(key), float):
                assert mine[key] == pytest.approx(theirs[key], rel=1e-5), (mine["step"], key)
            else:
                assert mine.get(key) == theirs.get(key), (mine["step"], key)


def test_a_finished_run_goes_on_under_a_larger_budget(toy_corpus, tiny_config_path, tmp_path):
    """A run stopped by its time budget resumes with --max-seconds: it trains on from the same step,
    and the new budget is the one its config records."""
    import dataclasses

    from training.checkpoint import read_checkpoint

    config = load_config(tiny_config_path)
    # Epochs without end, so that the budget, and not the toy corpus's epochs, ends each part.
    config = dataclasses.replace(config, train=dataclasses.replace(config.train, max_seconds=0.5, valid_every=0,
                                                                   max_epochs=100_000))
    run = tmp_path / "run"
    Trainer(config, run, toy_corpus).train()
    first = read_checkpoint(run / "last.pt")
    assert first["progress"]["finished"] and first["progress"]["elapsed"] >= 0.5

    Trainer(config, run, toy_corpus).train(resume=True)  # the same budget: nothing more to do
    assert read_checkpoint(run / "last.pt")["progress"]["step"] == first["progress"]["step"]

    Trainer(config, run, toy_corpus, max_seconds=first["progress"]["elapsed"] + 1.0).train(resume=True)
    longer = read_checkpoint(run / "last.pt")
    assert longer["progress"]["step"] > first["progress"]["step"]
    assert longer["progress"]["elapsed"] >= first["progress"]["elapsed"] + 1.0
    assert longer["config"]["train"]["max_seconds"] == first["progress"]["elapsed"] + 1.0
