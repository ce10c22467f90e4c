"""Carve held-out dev/test slices from a parallel corpus, leakage-free.

``python -m training.holdout SRC TGT --out DIR --dev 1000 --test 2000`` draws the slices at random
(seeded) and writes ``DIR/{train,dev,test}.{src_lang,tgt_lang}.gz``. Every training pair whose source
or target side equals a side of a held-out pair is dropped from training, so a sentence that has
several translations (common in Tatoeba) never sits on both sides of the split. Lines keep their
text exactly; only the order of the training part changes (it is written in the original order).
"""
from __future__ import annotations

import argparse
import gzip
import random
import sys
from dataclasses import dataclass
from pathlib import Path

from .corpus import CorpusError, read_parallel

DEFAULT_SEED = 20261123  # the seed of the slices the shipped general model was trained and scored with


@dataclass(frozen=True)
class HoldoutReport:
    total: int
    dev: int
    test: int
    train: int
    dropped_for_overlap: int

    def __str__(self) -> str:
        return (f"{self.total} pairs -> train {self.train}, dev {self.dev}, test {self.test} "
                f"({self.dropped_for_overlap} training pairs dropped for sharing a side with a held-out pair)")


def split_holdout(src: list[str], tgt: list[str], dev: int, test: int, seed: int) -> tuple[list[int], list[int], list[int]]:
    """Indices (train, dev, test). Held-out pairs are distinct on both sides; train shares no side with them."""
    rng = random.Random(seed)
    order = list(range(len(src)))
    rng.shuffle(order)
    held: list[int] = []
    seen_src: set[str] = set()
    seen_tgt: set[str] = set()
    for index in order:
        if len(held) == dev + test:
            break
        if src[index] in seen_src or tgt[index] in seen_tgt:
            continue
        held.append(index)
        seen_src.add(src[index])
        seen_tgt.add(tgt[index])
    if len(held) < dev + test:
        raise CorpusError(f"only {len(held)} distinct pairs to hold out; asked for {dev + test}")
    held_set = set(held)
    train = [i for i in range(len(src)) if i not in held_set and src[i] not in seen_src and tgt[i] not in seen_tgt]
    return train, held[:dev], held[dev:]


def write_lines(path: Path, lines: list[str]) -> None:
    """One line each, gzip; the same lines give the same bytes (no time stamp in the gzip header)."""
    with open(path, "wb") as raw, gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0) as packed:
        packed.write("".join(line + "\n" for line in lines).encode("utf-8"))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m training.holdout", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("src", help="source side, one sentence a line (plain or gzip)")
    parser.add_argument("tgt", help="target side, line-aligned with src")
    parser.add_argument("--out", required=True, help="directory to write train/dev/test files into")
    parser.add_argument("--src-lang", default="en", help="source language code in the file names (default: %(default)s)")
    parser.add_argument("--tgt-lang", default="de", help="target language code in the file names (default: %(default)s)")
    parser.add_argument("--dev", type=int, default=1000, help="held-out dev pairs (default: %(default)s)")
    parser.add_argument("--test", type=int, default=2000, help="held-out test pairs (default: %(default)s)")
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED, help="random seed (default: %(default)s)")
    args = parser.parse_args(argv)
    try:
        corpus = read_parallel(Path(args.src), Path(args.tgt))
        train, dev, test = split_holdout(corpus.src, corpus.tgt, args.dev, args.test, args.seed)
    except CorpusError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    for name, indices in (("train", train), ("dev", dev), ("test", test)):
        write_lines(out / f"{name}.{args.src_lang}.gz", [corpus.src[i] for i in indices])
        write_lines(out / f"{name}.{args.tgt_lang}.gz", [corpus.tgt[i] for i in indices])
    report = HoldoutReport(len(corpus), len(dev), len(test), len(train), len(corpus) - len(train) - len(dev) - len(test))
    print(report)
    return 0


if __name__ == "__main__":
    sys.exit(main())
