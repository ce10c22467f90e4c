"""Streamed training corpora (``data.corpora``): duplicate scan, weights, filters, the bounded
shuffle buffer, vocabulary sampling, exact resume, interruption by signal, checkpoint contents and
one-line errors. Real SentencePiece, real torch, real ``python -m nmt train`` subprocesses."""
from __future__ import annotations

import collections
import functools
import gzip
import json
import os
import signal
import subprocess
import sys
import threading
import time
import tracemalloc

import pytest
import torch
import yaml

from training.batching import buffered_batches, target_tokens
from training.checkpoint import read_checkpoint
from training.config import Config, load_config
from training.data import build_vocabs, prepare_data
from training.stream import CorpusStream, Reservoir, scan_corpora
from training.trainer import Trainer, bf16_is_native

from .conftest import REPO_ROOT, make_toy_pairs, write_toy_corpus

pytestmark = pytest.mark.slow

CONFIG = """\
data:
  src_lang: en
  tgt_lang: de
  max_len: 40
  corpora:
    - {name: plain, path: a, prefix: train, weight: 1.0}
    - {name: tsv, path: b.tsv.gz, weight: 1.5}
  valid:
    - {name: dev, path: a, prefix: val, max_sentences: 60}
vocab: {size: 60, joint: true}
model: {emb_dim: 32, enc_hidden: 32, dec_hidden: 48, att_dim: 32, readout_dim: 32, dropout: 0.1, emb_dropout: 0.1}
train: {seed: 7, batch_tokens: 600, lr: 0.005, max_epochs: 3, checkpoint_every: 5, log_every: 5,
        valid_batch_size: 32, threads: 1, shuffle_buffer: 200}
"""


def write_tsv(path, pairs):
    with gzip.open(path, "wt", encoding="utf-8") as handle:
        handle.writelines(f"{s}\t{t}\n" for s, t in pairs)


@pytest.fixture
def corpora_config(tmp_path):
    """Two corpora: 400 pairs as en/de files, 350 as a gzipped TSV whose last 50 repeat the first."""
    write_toy_corpus(tmp_path / "a", train=400, valid=100)
    write_tsv(tmp_path / "b.tsv.gz", make_toy_pairs(300, seed=5) + make_toy_pairs(50, seed=1))
    path = tmp_path / "c.yaml"
    path.write_text(CONFIG, encoding="utf-8")
    return path


def with_changes(config: Config, **sections) -> Config:
    raw = config.to_dict()
    for section, values in sections.items():
        raw[section].update(values)
    return Config.from_dict(raw)


def stream_of(config: Config) -> CorpusStream:
    scan = scan_corpora(config, sample_size=2000)
    vocabs = build_vocabs(scan.sample_src, scan.sample_tgt, config)
    return CorpusStream(config, scan, vocabs.encode_sources, vocabs.tgt.encode_many)


def as_lists(batches):
    return [[(list(s), list(t)) for s, t in batch] for batch in batches]


def test_reservoir_keeps_a_bounded_uniform_seeded_sample():
    def sample(seed):
        reservoir = Reservoir(100, seed)
        for item in range(10_000):
            reservoir.add(item)
        return reservoir.items

    first = sample(1)
    assert len(first) == 100 and len(set(first)) == 100 and first == sample(1) and first != sample(2)
    # Uniform: over many seeds each tenth of the stream holds about a tenth of the sample.
    tenths = collections.Counter(item // 1000 for seed in range(40) for item in sample(seed))
    assert all(300 <= tenths[k] <= 500 for k in range(10)), tenths
    small = Reservoir(100, 0)
    for item in range(30):
        small.add(item)
    assert small.items == list(range(30))


def test_scan_counts_pairs_and_marks_repeats_across_corpora(corpora_config):
    config = load_config(corpora_config)
    scan = scan_corpora(config, sample_size=300)
    assert scan.pairs == (400, 350)
    # The 50 repeats of corpus 'plain' at the end of 'tsv' plus any repeats inside the random pairs.
    expected = len(make_toy_pairs(400, 1)) - len(set(make_toy_pairs(400, 1)))
    tsv_pairs = make_toy_pairs(300, 5) + make_toy_pairs(50, 1)
    seen = set(make_toy_pairs(400, 1))
    tsv_repeats = 0
    for pair in tsv_pairs:
        tsv_repeats += pair in seen
        seen.add(pair)
    assert scan.duplicates == (expected, tsv_repeats) and tsv_repeats >= 50
    assert int(scan.unique.sum()) == 750 - expected - tsv_repeats
    assert len(scan.sample_src) == 300 and not scan.sample_tgt  # joint: one sample of both sides
    off = scan_corpora(with_changes(config, data={"dedup": False}))
    assert off.duplicates == (0, 0) and off.unique.all()


def test_stream_is_deterministic_per_seed_and_epoch_and_weights_are_fresh_each_epoch(corpora_config):
    stream = stream_of(load_config(corpora_config))
    epoch0 = as_lists(stream.epoch_batches(0))
    counts0 = stream.counts
    assert epoch0 == as_lists(stream.epoch_batches(0))
    epoch1 = as_lists(stream.epoch_batches(1))
    assert epoch0 != epoch1
    plain, tsv = counts0
    assert plain.copies == plain.kept  # weight 1: each kept pair once
    # weight 1.5: one copy each, plus one with probability 0.5, drawn afresh per epoch
    assert plain.kept + tsv.kept + tsv.kept * 0.5 * 0.7 < sum(len(b) for b in epoch0) < plain.kept + tsv.kept * 1.5 * 1.3
    assert stream.counts[1].copies != counts0[1].copies or epoch0 != epoch1
    for counts in (plain, tsv):
        assert counts.kept + counts.too_short + counts.too_long + counts.bad_ratio + counts.duplicates == counts.pairs


def test_whole_weights_give_exact_copies_and_filters_are_counted_per_corpus(corpora_config):
    config = load_config(corpora_config)
    raw = config.to_dict()
    raw["data"]["corpora"][1]["weight"] = 2.0
    raw["data"]["max_len"] = 12
    stream = stream_of(Config.from_dict(raw))
    batches = as_lists(stream.epoch_batches(0))
    plain, tsv = stream.counts
    assert tsv.copies == 2 * tsv.kept and plain.copies == plain.kept
    assert sum(len(b) for b in batches) == plain.kept + 2 * tsv.kept
    assert plain.too_long > 0 and all(len(s) <= 12 and len(t) <= 12 for b in batches for s, t in b)
    assert "too long" in stream.describe()[0][1] and "duplicates" in stream.describe()[1][1]


def test_shuffle_buffer_is_bounded_and_batches_keep_the_token_budget():
    pairs = [([1] * (3 + i % 17), [1] * (2 + (i * 7) % 23)) for i in range(5000)]
    drawn = 0

    def source():
        nonlocal drawn
        for pair in pairs:
            drawn += 1
            yield pair

    yielded, most_held = 0, 0
    batches = []
    for batch in buffered_batches(source(), 300, 400, 64, seed=3):
        most_held = max(most_held, drawn - yielded)
        yielded += len(batch)
        batches.append(batch)
        longest = max(len(t) for _, t in batch) + 1
        assert len(batch) <= 64 and (len(batch) == 1 or longest * len(batch) <= 400)
    assert most_held <= 300 and yielded == 5000
    again = list(buffered_batches(iter(pairs), 300, 400, 64, seed=3))
    assert again == batches and list(buffered_batches(iter(pairs), 300, 400, 64, seed=4)) != batches


def test_epoch_memory_does_not_grow_with_the_corpus(tmp_path):
    """Python allocations while streaming an epoch: a corpus 4x larger costs about the same (both
    are larger than the fixed costs: a 1024-pair encoding chunk and the 400-pair buffer)."""
    peaks = {}
    for copies in (3, 12):
        pairs = make_toy_pairs(1500, seed=3)
        write_tsv(tmp_path / f"x{copies}.tsv.gz", [(f"{s} {k}", f"{t} {k}") for k in range(copies) for s, t in pairs])
        config = Config.from_dict({"data": {"corpora": [{"path": str(tmp_path / f"x{copies}.tsv.gz")}]},
                                   "vocab": {"size": 60}, "train": {"shuffle_buffer": 400}})
        stream = stream_of(config)
        tracemalloc.start()
        n = sum(len(batch) for batch in stream.epoch_batches(0))
        peaks[copies] = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        assert n > 0.9 * 1500 * copies
    assert peaks[12] < 1.3 * peaks[3], peaks


def test_vocabulary_is_trained_on_a_bounded_sample(corpora_config):
    config = with_changes(load_config(corpora_config), vocab={"input_sentence_size": 200})
    scan = scan_corpora(config, sample_size=config.vocab.input_sentence_size)
    assert len(scan.sample_src) == 200
    data = prepare_data(corpora_config.parent, config)
    assert 16 <= len(data.vocabs.src) <= 60


def run_nmt_train(*args, **popen):
    return subprocess.Popen([sys.executable, "-m", "nmt", "train", *map(str, args)], cwd=REPO_ROOT,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, **popen)


def test_sigterm_mid_run_writes_last_pt_and_resume_gives_identical_weights(corpora_config, tmp_path):
    """(1) a straight in-process run of N steps; (2) a real `nmt train` process, SIGTERMed after
    its first checkpoint: it exits within seconds with one line, last.pt at its step;
    (3) `--resume` to N steps: the weights equal the straight run's exactly."""
    steps = 60  # crosses the end of the first epoch (about 35 steps)
    config = load_config(corpora_config)
    Trainer(config, tmp_path / "straight", corpora_config.parent).train(max_steps=steps)

    run_dir = tmp_path / "stopped"
    proc = run_nmt_train("--config", corpora_config, "--run-dir", run_dir, "--max-steps", steps)
    lines: list[tuple[float, str]] = []  # (arrival time, line) of everything the process prints
    reader = threading.Thread(target=lambda: lines.extend((time.monotonic(), line) for line in proc.stdout))
    reader.start()
    try:
        deadline = time.monotonic() + 600  # generous: start-up only (torch import, vocabulary)
        while not (run_dir / "last.pt").exists():
            assert proc.poll() is None, "".join(line for _, line in lines)
            assert time.monotonic() < deadline, "no checkpoint in 600 s"
            time.sleep(0.02)
        os.kill(proc.pid, signal.SIGTERM)
        sent = time.monotonic()
        proc.wait(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        reader.join()
    out = "".join(line for _, line in lines)
    said = [at for at, line in lines if line.startswith("interrupted by SIGTERM")]
    # The loop stops after the current step; interpreter teardown is not timed (it is slow on a busy host).
    assert len(said) == 1 and said[0] - sent < 10, out
    assert proc.returncode == 128 + signal.SIGTERM, out
    assert "Traceback" not in out
    saved = read_checkpoint(run_dir / "last.pt")["progress"]
    assert 0 < saved["step"] < steps, saved
    assert f"interrupted by SIGTERM at step {saved['step']}: wrote {run_dir / 'last.pt'}" in out

    resumed = run_nmt_train("--config", corpora_config, "--run-dir", run_dir, "--resume", "--max-steps", steps)
    out, _ = resumed.communicate(timeout=300)
    assert resumed.returncode == 0, out
    assert f"resumed at epoch {saved['epoch'] + 1}, batch {saved['batch_in_epoch']}, step {saved['step']}" in out
    a = read_checkpoint(tmp_path / "straight" / "last.pt")
    b = read_checkpoint(run_dir / "last.pt")
    assert a["progress"]["step"] == b["progress"]["step"] == steps
    for name, tensor in a["model"].items():
        assert torch.equal(b["model"][name], tensor), name
    for (name, x), y in zip(a["optimizer"]["state"].items(), b["optimizer"]["state"].values()):
        assert torch.equal(x["exp_avg"], y["exp_avg"]), name
    assert_records_corpora_and_a_raw_validation_sample(corpora_config, tmp_path / "straight")


def assert_records_corpora_and_a_raw_validation_sample(corpora_config, run_dir):
    """A checkpoint written after a full epoch names its corpora and carries raw validation pairs;
    metrics.jsonl has BLEU and chrF with their signatures and the epoch's per-corpus counts."""
    checkpoint = read_checkpoint(run_dir / "last.pt")
    plain, tsv = checkpoint["corpora"]
    assert plain["files"] == [str((corpora_config.parent / "a" / f"train.{lang}").resolve()) for lang in ("en", "de")]
    assert plain["bytes"] == [os.path.getsize(f) for f in plain["files"]]
    assert tsv["files"] == [str((corpora_config.parent / "b.tsv.gz").resolve())] and tsv["weight"] == 1.5
    assert tsv["pairs"] == 350 and tsv["last_pass"]["duplicates"] >= 50
    assert tsv["last_pass"]["kept"] + tsv["last_pass"]["too_long"] + tsv["last_pass"]["duplicates"] <= 350
    valid_en = (corpora_config.parent / "a" / "val.en").read_text(encoding="utf-8").splitlines()
    valid_de = (corpora_config.parent / "a" / "val.de").read_text(encoding="utf-8").splitlines()
    assert checkpoint["valid_sample"] == {"src": valid_en[:60], "tgt": valid_de[:60]}
    records = [json.loads(line) for line in (run_dir / "metrics.jsonl").read_text().splitlines()]
    valid = [r for r in records if r["kind"] == "valid"][0]
    assert valid["valid_sentences"] == 60 and 0 <= valid["valid_chrf"] <= 100
    assert valid["bleu_signature"].startswith("nrefs:1|case:mixed|eff:no|tok:13a")
    assert valid["chrf_signature"].startswith("nrefs:1|case:mixed|eff:yes|nc:6|nw:0")
    assert [r["corpora"][1]["last_pass"]["kept"] for r in records if r["kind"] == "data"] == [tsv["last_pass"]["kept"]]




def test_bf16_falls_back_to_fp32_on_a_cpu_without_native_bfloat16(corpora_config, tmp_path, monkeypatch, capsys):
    plain = tmp_path / "cpuinfo-plain"
    plain.write_text("processor\t: 0\nflags\t\t: fpu sse2 avx2 avx512f\n")
    native = tmp_path / "cpuinfo-bf16"
    native.write_text("processor\t: 0\nflags\t\t: fpu sse2 avx2 avx512f avx512_bf16\n")
    cpu = torch.device("cpu")
    assert not bf16_is_native(cpu, str(plain)) and bf16_is_native(cpu, str(native))
    assert not bf16_is_native(cpu, str(tmp_path / "missing"))
    monkeypatch.setattr("training.trainer.bf16_is_native", functools.partial(bf16_is_native, cpuinfo=str(plain)))
    config = with_changes(load_config(corpora_config), train={"bf16": True})
    Trainer(config, tmp_path / "run", corpora_config.parent).train(max_steps=1)
    out = capsys.readouterr()
    text = out.out + out.err
    assert "bf16: this CPU has no native bfloat16 (avx512_bf16 or AMX), training in fp32 instead" in text
    assert "(fp32)" in text


def one_line_error(proc: subprocess.CompletedProcess, pattern: str) -> None:
    assert proc.returncode == 2, proc.stdout + proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in proc.stderr, proc.stderr
    assert pattern in lines[0], lines[0]


def test_train_and_evaluate_give_one_line_errors(corpora_config, tmp_path, capsys):
    """Real processes for one error each; the rest through the same CLI entry points in-process."""
    from nmt.cli import main as nmt_main
    from training.evaluate import main as evaluate_main

    def nmt_train(config):
        code = nmt_main(["train", "--config", str(config), "--run-dir", str(tmp_path / "run")])
        out = capsys.readouterr()
        return subprocess.CompletedProcess([], code, out.out, out.err)

    def evaluate(path):
        code = evaluate_main([str(path)])
        out = capsys.readouterr()
        return subprocess.CompletedProcess([], code, out.out, out.err)

    missing = tmp_path / "missing.yaml"
    missing.write_text(CONFIG.replace("path: b.tsv.gz", "path: nowhere.tsv"), encoding="utf-8")
    one_line_error(subprocess.run([sys.executable, "-m", "nmt", "train", "--config", str(missing), "--run-dir",
                                   str(tmp_path / "run")], cwd=REPO_ROOT, capture_output=True, text=True, timeout=300),
                   "corpus file not found")
    bad = tmp_path / "bad.yaml"
    bad.write_text(CONFIG.replace("weight: 1.5", "weight: -1"), encoding="utf-8")
    one_line_error(nmt_train(bad), "'data.corpora[1].weight': must be a finite number > 0")
    misaligned = tmp_path / "misaligned"
    write_toy_corpus(misaligned, 30, 10)
    (misaligned / "train.de").write_text("eins\nzwei\n", encoding="utf-8")
    skewed = tmp_path / "skewed.yaml"
    skewed.write_text(CONFIG.replace("path: a, prefix: train", f"path: {misaligned}, prefix: train"), encoding="utf-8")
    one_line_error(nmt_train(skewed), "line counts differ")

    one_line_error(subprocess.run([sys.executable, "-m", "training.evaluate", str(tmp_path / "nope.pt")], cwd=REPO_ROOT,
                                  capture_output=True, text=True, timeout=300), "checkpoint not found")
    (tmp_path / "junk.pt").write_bytes(b"junk")
    one_line_error(evaluate(tmp_path / "junk.pt"), "not a readable checkpoint")
    torch.save({"format_version": 1, "config": {}}, tmp_path / "partial.pt")
    one_line_error(evaluate(tmp_path / "partial.pt"), "not a model checkpoint")


def test_no_placeholder_score_before_any_validation(corpora_config, tmp_path, capsys):
    from nmt.cli import main as nmt_main

    assert nmt_main(["train", "--config", str(corpora_config), "--run-dir", str(tmp_path / "run"), "--max-steps", "2"]) == 0
    out = capsys.readouterr().out
    assert "2 steps, 0 epochs, no validation ran" in out and "-1.00" not in out
    saved = yaml.safe_load((tmp_path / "run" / "config.yaml").read_text())
    assert saved["train"]["shuffle_buffer"] == 200 and saved["vocab"]["input_sentence_size"] == 1_000_000
