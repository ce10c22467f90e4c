"""Training memory benchmark: peak RSS of a short streamed training run against corpus size.

Claim: with ``data.corpora`` the trainer streams its corpora, so memory does not grow with the
corpus; the goal is a peak RSS for ~5 M pairs at most 2x that for ~200 k pairs.

How: the source corpus (by default every shared training split: Multi30k, Tatoeba and the WMT news
sample, about 213 k pairs) is written K times into one temporary gzipped TSV, for each K in
``--copies`` (default 1 and 25: ~213 k and ~5.3 M pairs). Each copy is identical, so the scan
hashes every pair (8 bytes each, the one per-pair cost) and the epoch then drops the repeats as
duplicates. For each file, ``python -m nmt train`` runs in a fresh process with the config's model
(``--config``, default configs/general-en-de.yaml) for ``--steps`` optimizer steps, the
SentencePiece vocabulary trained on a reservoir sample of ``vocab.input_sentence_size`` sentences
(``--input-sentence-size``); its peak RSS comes from ``wait4`` (the child's own ru_maxrss). The
baseline is the first K in the same run. Prints one JSON object: pairs, peak RSS (MiB) and seconds
per run, and the ratio of the largest run's peak to the first's.

    python bench/train_memory.py                         # the full measurement (tens of minutes)
    python bench/train_memory.py --src a.en --tgt a.de --copies 1 3 --steps 2 --vocab-size 100 \\
        --input-sentence-size 1000                       # smoke test
"""
from __future__ import annotations

import argparse
import gzip
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

REPO_ROOT = Path(__file__).resolve().parents[1]
if str(REPO_ROOT) not in sys.path:  # works whether or not the package is installed
    sys.path.insert(0, str(REPO_ROOT))

from training.config import load_config  # noqa: E402
from training.corpus import CorpusError, find_corpus_file, iter_parallel  # noqa: E402

SHARED = REPO_ROOT.parent / "shared" / "data"
DEFAULT_SOURCES = [(SHARED / "multi30k", "train"), (SHARED / "tatoeba-deu-eng", "train"),
                   (SHARED / "wmt-newstest-de-en", "train")]


def source_pairs(args: argparse.Namespace) -> list[tuple[Path, Path]]:
    if args.src:
        return [(Path(args.src), Path(args.tgt))]
    return [(find_corpus_file(d, prefix, "en"), find_corpus_file(d, prefix, "de")) for d, prefix in DEFAULT_SOURCES]


def write_repeated(sources: list[tuple[Path, Path]], copies: int, out: Path) -> int:
    """Write every source pair ``copies`` times into a gzipped TSV, streaming; returns the pairs."""
    n = 0
    with gzip.open(out, "wt", encoding="utf-8", compresslevel=1) as handle:
        for _ in range(copies):
            for src, tgt in sources:
                for s, t in iter_parallel(src, tgt):
                    handle.write(f"{s.replace(chr(9), ' ')}\t{t.replace(chr(9), ' ')}\n")
                    n += 1
    return n


def run_config(args: argparse.Namespace, corpus: Path, out: Path) -> Path:
    raw = load_config(args.config).to_dict()
    raw["data"]["corpora"] = [{"name": corpus.stem, "path": str(corpus)}]
    raw["data"]["valid"], raw["data"]["test"] = [], []
    raw["vocab"]["input_sentence_size"] = args.input_sentence_size
    if args.vocab_size:
        raw["vocab"]["size"] = args.vocab_size
    raw["train"].update({"checkpoint_every": 0, "valid_every": 0, "max_seconds": 0.0, "threads": args.threads,
                         "valid_max_sentences": 100})
    path = out / "config.yaml"
    path.write_text(yaml.safe_dump(raw, sort_keys=False), encoding="utf-8")
    return path


def measure(args: argparse.Namespace, config: Path, run_dir: Path) -> tuple[float, float]:
    """Peak RSS (MiB) and wall seconds of one ``nmt train`` process."""
    started = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "nmt", "train", "--config", str(config), "--run-dir", str(run_dir),
                             "--max-steps", str(args.steps)], cwd=REPO_ROOT, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT)
    output = proc.stdout.read()
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        sys.exit(f"train_memory: the training run failed ({proc.returncode}):\n{output.decode(errors='replace')[-2000:]}")
    return usage.ru_maxrss / 1024, time.perf_counter() - started  # ru_maxrss is in KiB on Linux


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--config", default=str(REPO_ROOT / "configs" / "general-en-de.yaml"),
                        help="model and training settings (default: %(default)s); its corpora are replaced")
    parser.add_argument("--src", help="source side of the corpus to repeat (default: the shared training splits)")
    parser.add_argument("--tgt", help="target side, line-aligned with --src")
    parser.add_argument("--copies", type=int, nargs="+", default=[1, 25], help="repetitions per run (default: 1 25)")
    parser.add_argument("--steps", type=int, default=20, help="optimizer steps per run (default: %(default)s)")
    parser.add_argument("--vocab-size", type=int, default=0, help="override vocab.size")
    parser.add_argument("--input-sentence-size", type=int, default=1_000_000,
                        help="vocabulary sample, sentences (default: %(default)s)")
    parser.add_argument("--threads", type=int, default=2, help="torch threads (default: %(default)s)")
    args = parser.parse_args(argv)
    if bool(args.src) != bool(args.tgt):
        parser.error("--src and --tgt go together")
    try:
        sources = source_pairs(args)
        runs = []
        with tempfile.TemporaryDirectory(prefix="train-memory-") as tmp:
            for copies in args.copies:
                work = Path(tmp) / f"x{copies}"
                work.mkdir()
                corpus = work / f"repeated-x{copies}.tsv.gz"
                pairs = write_repeated(sources, copies, corpus)
                rss, seconds = measure(args, run_config(args, corpus, work), work / "run")
                runs.append({"copies": copies, "pairs": pairs, "corpus_mib": round(corpus.stat().st_size / 2**20, 1),
                             "peak_rss_mib": round(rss, 1), "seconds": round(seconds, 1)})
                corpus.unlink()
                print(f"{pairs} pairs: peak RSS {rss:.0f} MiB in {seconds:.0f} s", file=sys.stderr)
    except CorpusError as exc:
        sys.exit(f"train_memory: {exc}")
    print(json.dumps({"steps": args.steps, "config": args.config, "runs": runs,
                      "rss_ratio": round(runs[-1]["peak_rss_mib"] / runs[0]["peak_rss_mib"], 3), "goal": "<= 2"}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
