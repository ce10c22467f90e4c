"""Score a checkpoint with the torch greedy decoder: ``python -m training.evaluate CHECKPOINT``.

Prints sacreBLEU (default settings: cased, 13a tokenization) with its signature for one split of
the corpus the checkpoint was trained on; ``--json`` makes the last line a JSON object.
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import sacrebleu

from .checkpoint import load_model
from .config import resolve_data_dir
from .data import read_split
from .greedy import greedy_decode


@dataclass(frozen=True)
class Evaluation:
    split: str
    sentences: int
    bleu: float
    signature: str
    seconds: float
    hypotheses: list[str]


def evaluate(checkpoint: Path, split: str | None = None, data_dir: str | None = None) -> Evaluation:
    loaded = load_model(checkpoint)
    cfg = loaded.config
    split = split or cfg.data.test_prefix
    corpus = read_split(resolve_data_dir(cfg, data_dir), split, cfg)
    started = time.perf_counter()
    ids = greedy_decode(loaded.model, loaded.vocabs.encode_sources(corpus.src), cfg.train.max_len_a, cfg.train.max_len_b)
    hyps = [loaded.vocabs.tgt.decode(x) for x in ids]
    metric = sacrebleu.BLEU()
    score = metric.corpus_score(hyps, [corpus.tgt])
    return Evaluation(split, len(hyps), score.score, str(metric.get_signature()), time.perf_counter() - started, hyps)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m training.evaluate", description=__doc__)
    parser.add_argument("checkpoint")
    parser.add_argument("--split", help="corpus prefix (default: the config's data.test_prefix)")
    parser.add_argument("--data-dir", help="corpus directory (default: $NMT_DATA_DIR or the config's)")
    parser.add_argument("--out", help="write the hypotheses to this file")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    result = evaluate(Path(args.checkpoint), args.split, args.data_dir)
    if args.out:
        Path(args.out).write_text("\n".join(result.hypotheses) + "\n", encoding="utf-8")
    print(f"{result.split}: {result.sentences} sentences, greedy sacreBLEU {result.bleu:.2f} "
          f"({result.signature}) in {result.seconds:.1f} s")
    if args.json:
        print(json.dumps({"split": result.split, "sentences": result.sentences, "bleu": result.bleu,
                          "signature": result.signature, "decoder": "torch greedy"}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
