"""bench/train_speed.py on both data layouts: the streamed ``data.corpora`` reader (weights,
dedup, filters, bucketing) and the in-memory single directory. Tiny model, a few batches."""
from __future__ import annotations

import gzip
import importlib.util
import json
import re
import sys

import pytest

from .conftest import REPO_ROOT, TINY_CONFIG, make_toy_pairs, write_toy_corpus

pytestmark = pytest.mark.slow

CORPORA_CONFIG = """\
data:
  src_lang: en
  tgt_lang: de
  max_len: 40
  corpora:
    - {name: plain, path: a, prefix: train, weight: 2.0}
    - {name: tsv, path: b.tsv.gz, weight: 0.5}
  valid:
    - {name: dev, path: a, prefix: val, max_sentences: 20}
vocab: {size: 60, joint: true}
model: {emb_dim: 32, enc_hidden: 32, dec_hidden: 48, att_dim: 32, readout_dim: 32, dropout: 0.1, emb_dropout: 0.1}
train: {seed: 7, batch_tokens: 300, threads: 1, shuffle_buffer: 250}
"""
SMOKE = ["--warmup", "1", "--batches", "2", "--baseline-batches", "2", "--json"]


def bench_main():
    spec = importlib.util.spec_from_file_location("train_speed", REPO_ROOT / "bench" / "train_speed.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module.main


def run(capsys, *args: str) -> dict:
    assert bench_main()([*args, *SMOKE]) == 0
    return json.loads(capsys.readouterr().out.strip().splitlines()[-1])


def test_streamed_corpora(tmp_path, capsys):
    write_toy_corpus(tmp_path / "a", train=300, valid=20)
    duplicates = make_toy_pairs(20, seed=1)  # the first 20 pairs of corpus "a": dropped by dedup
    with gzip.open(tmp_path / "b.tsv.gz", "wt", encoding="utf-8") as handle:
        handle.writelines(f"{s}\t{t}\n" for s, t in make_toy_pairs(200, seed=5) + duplicates)
    config = tmp_path / "c.yaml"
    config.write_text(CORPORA_CONFIG, encoding="utf-8")

    summary = run(capsys, "--config", str(config))

    assert summary["layout"] == "corpora"
    counts = {c["name"]: [int(n) for n in re.findall(r"\d+", c["read"])] for c in summary["corpora"]}
    # kept K of N (dropped: short, long, ratio, D duplicates); weight W: C pairs this epoch
    plain, tsv = counts["plain"], counts["tsv"]
    assert tsv[5] >= 20  # the repeats of corpus "plain", across corpora
    assert plain[6] == 2 and plain[-1] == 2 * plain[0] > 0  # weight 2: every kept pair twice
    assert 0 < tsv[-1] < tsv[0]  # weight 0.5: about half of the kept pairs
    assert summary["epoch_pairs"] == plain[-1] + tsv[-1]
    assert summary["baseline_pool_pairs"] == min(250, summary["epoch_pairs"])  # train.shuffle_buffer
    assert summary["batch_tokens"] == 300
    assert summary["ours"]["batches"] == summary["baseline"]["batches"] == 2
    assert summary["ours_tokens_per_s"] > 0 and summary["baseline_tokens_per_s"] > 0
    assert summary["speedup"] == pytest.approx(summary["ours_tokens_per_s"] / summary["baseline_tokens_per_s"])


def test_in_memory_directory(tmp_path, capsys):
    corpus = write_toy_corpus(tmp_path / "toy", train=200, valid=20)
    config = tmp_path / "tiny.yaml"
    config.write_text(TINY_CONFIG, encoding="utf-8")

    summary = run(capsys, "--config", str(config), "--data-dir", str(corpus))

    assert summary["layout"] == "directory" and summary["corpora"] == []
    assert 0 < summary["epoch_pairs"] == summary["baseline_pool_pairs"] <= 200  # every kept pair, once
    assert summary["ours"]["tokens"] > 0 and summary["baseline"]["tokens"] > 0
