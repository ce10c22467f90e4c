"""Scoring: sacreBLEU BLEU and chrF with their signatures (``score_hypotheses``, used by training
validation), and ``python -m training.evaluate CHECKPOINT`` to score a checkpoint with the torch
greedy decoder.

The command scores one split of the corpus the checkpoint was trained on (``--split PREFIX`` in the
data directory, or by default the config's ``data.test`` corpora, else ``data.test_prefix``);
``--json`` makes the last line a JSON object. Missing files and bad checkpoints are one-line errors.
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import sacrebleu

from .loading import load_model
from .config import resolve_data_dir
from .corpora import read_corpora
from .corpus import ParallelCorpus
from .data import read_split
from .greedy import greedy_decode


@dataclass(frozen=True)
class Scores:
    """Corpus-level sacreBLEU scores (default settings: BLEU cased with 13a, chrF with n=6, beta=2)."""

    bleu: float
    chrf: float
    bleu_signature: str
    chrf_signature: str


def score_hypotheses(hyps: list[str], refs: list[str]) -> Scores:
    bleu, chrf = sacrebleu.BLEU(), sacrebleu.CHRF()
    return Scores(bleu.corpus_score(hyps, [refs]).score, chrf.corpus_score(hyps, [refs]).score,
                  str(bleu.get_signature()), str(chrf.get_signature()))


@dataclass(frozen=True)
class Evaluation:
    split: str
    sentences: int
    bleu: float
    signature: str
    seconds: float
    hypotheses: list[str]
    chrf: float = 0.0
    chrf_signature: str = ""


def evaluate(checkpoint: Path, split: str | None = None, data_dir: str | None = None) -> Evaluation:
    loaded = load_model(checkpoint)
    cfg = loaded.config
    corpus: ParallelCorpus
    if split is None and cfg.data.test:
        split = "+".join(spec.label for spec in cfg.data.test)
        corpus = read_corpora(cfg.data.test, cfg)
    else:
        split = split or cfg.data.test_prefix
        corpus = read_split(resolve_data_dir(cfg, data_dir), split, cfg)
    started = time.perf_counter()
    ids = greedy_decode(loaded.model, loaded.vocabs.encode_sources(corpus.src), cfg.train.max_len_a, cfg.train.max_len_b)
    hyps = [loaded.vocabs.tgt.decode(x) for x in ids]
    scores = score_hypotheses(hyps, corpus.tgt)
    return Evaluation(split, len(hyps), scores.bleu, scores.bleu_signature, time.perf_counter() - started, hyps,
                      scores.chrf, scores.chrf_signature)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m training.evaluate", description=__doc__)
    parser.add_argument("checkpoint")
    parser.add_argument("--split", help="corpus prefix in the data directory (default: the config's data.test, "
                                        "else data.test_prefix)")
    parser.add_argument("--data-dir", help="corpus directory (default: $NMT_DATA_DIR or the config's)")
    parser.add_argument("--out", help="write the hypotheses to this file")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    try:
        result = evaluate(Path(args.checkpoint), args.split, args.data_dir)
        if args.out:
            Path(args.out).write_text("\n".join(result.hypotheses) + "\n", encoding="utf-8")
    except (ValueError, OSError) as exc:  # CorpusError, CheckpointError, ConfigError are ValueErrors
        print(f"python -m training.evaluate: error: {exc}", file=sys.stderr)
        return 2
    print(f"{result.split}: {result.sentences} sentences, greedy sacreBLEU {result.bleu:.2f} "
          f"({result.signature}), chrF {result.chrf:.2f} ({result.chrf_signature}) in {result.seconds:.1f} s")
    if args.json:
        print(json.dumps({"split": result.split, "sentences": result.sentences, "bleu": result.bleu,
                          "signature": result.signature, "chrf": result.chrf, "chrf_signature": result.chrf_signature,
                          "decoder": "torch greedy"}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
