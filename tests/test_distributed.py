"""DistributedDataParallel under a real ``torchrun`` (2 CPU processes, gloo): the loss curve and the
final weights equal those of one process training on the same union batches
(``train.simulate_world_size: 2``), and only rank 0 writes the run's files."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import pytest
import torch

from training.checkpoint import read_checkpoint
from training.config import load_config
from training.distributed import World, step_groups
from training.trainer import Trainer

from .conftest import REPO_ROOT, write_toy_corpus

pytestmark = pytest.mark.slow

STEPS = 8
# No dropout: DDP ranks draw their own dropout masks, one process draws one stream for both.
CONFIG = """\
data:
  src_lang: en
  tgt_lang: de
  max_len: 40
  corpora:
    - {name: toy, path: toy, prefix: train, weight: 1.5}
  valid:
    - {name: dev, path: toy, prefix: val}
vocab: {size: 60, joint: true}
model: {emb_dim: 32, enc_hidden: 32, dec_hidden: 48, att_dim: 32, readout_dim: 32, dropout: 0.0, emb_dropout: 0.0}
train: {seed: 3, batch_tokens: 500, lr: 0.005, checkpoint_every: 0, log_every: 1, threads: 1, shuffle_buffer: 150}
"""


def train_losses(run_dir):
    records = [json.loads(line) for line in (run_dir / "metrics.jsonl").read_text().splitlines()]
    return [r["train_loss"] for r in records if r["kind"] == "train"]


def test_step_groups_take_consecutive_batches_and_drop_an_incomplete_tail():
    assert list(step_groups(range(7), 2)) == [[0, 1], [2, 3], [4, 5]]
    assert list(step_groups(range(3), 1)) == [[0], [1], [2]]
    world = World()
    assert world.sum([1.5, 2.0]) == [1.5, 2.0] and world.broadcast({"a": 1}) == {"a": 1} and world.is_main


@pytest.mark.skipif(shutil.which("torchrun") is None and not os.path.exists(os.path.join(os.path.dirname(sys.executable), "torchrun")),
                    reason="torchrun not installed")
def test_torchrun_two_processes_match_one_process_on_the_union_batches(tmp_path):
    write_toy_corpus(tmp_path / "toy", train=300, valid=20)
    config_path = tmp_path / "ddp.yaml"
    config_path.write_text(CONFIG, encoding="utf-8")
    torchrun = shutil.which("torchrun") or os.path.join(os.path.dirname(sys.executable), "torchrun")
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    proc = subprocess.run([torchrun, "--standalone", "--nproc_per_node", "2", "-m", "nmt", "train",
                           "--config", str(config_path), "--run-dir", str(tmp_path / "ddp"), "--max-steps", str(STEPS)],
                          cwd=REPO_ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "2 processes" in proc.stdout and proc.stdout.count("model:") == 1  # rank 0 alone speaks

    config = load_config(config_path)
    simulated = config.to_dict()
    simulated["train"]["simulate_world_size"] = 2
    Trainer(type(config).from_dict(simulated), tmp_path / "one", tmp_path).train(max_steps=STEPS)
    Trainer(config, tmp_path / "plain", tmp_path).train(max_steps=STEPS)

    ddp, one, plain = (train_losses(tmp_path / name) for name in ("ddp", "one", "plain"))
    assert len(ddp) == len(one) == STEPS  # one record per step: only rank 0 logs
    torch.testing.assert_close(torch.tensor(ddp), torch.tensor(one), rtol=1e-5, atol=1e-6)
    # The comparison can fail: one process on single batches sees other data per step.
    assert not torch.allclose(torch.tensor(plain), torch.tensor(one), rtol=1e-3)

    a = read_checkpoint(tmp_path / "ddp" / "last.pt")
    b = read_checkpoint(tmp_path / "one" / "last.pt")
    assert a["progress"]["step"] == b["progress"]["step"] == STEPS
    assert a["progress"]["batch_in_epoch"] == b["progress"]["batch_in_epoch"] == 2 * STEPS
    for name, tensor in a["model"].items():
        torch.testing.assert_close(b["model"][name], tensor, rtol=1e-4, atol=1e-6, msg=name)
