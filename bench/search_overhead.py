"""The host-side beam search alone: how long the search's own work takes per step, without the
model. A real search over the shipped bundle (or ``--bundle``) is recorded step by step; the same
search then runs again on a model that replays the recorded step outputs (no computation), so it
takes exactly the same decisions and its time is the search's own: the part that sets the pace on
a GPU, where the step itself is fast (docs/benchmarks.md, CUDA: host share 0.33-0.40 for the GRU
bundle on an H200). The recorded run is the baseline: the ratio is host time over the whole.

    python bench/search_overhead.py [--sentences 512] [--batch 256] [--beam 5] [--profile]
"""
from __future__ import annotations

import argparse
import cProfile
import gzip
import io
import json
import pstats
import sys
import time
from pathlib import Path

import numpy as np

REPO_ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO_ROOT))


class Recorder:
    """A step model's calls passed through, each ``step`` output kept in order."""

    def __init__(self, model) -> None:
        self.model, self.steps = model, []
        self.special, self.topk = model.special, model.topk
        self.eos_scores = getattr(model, "eos_scores", False)

    def encode(self, src, lengths):
        return self.model.encode(src, lengths)

    def expand(self, encoded, repeats):
        return self.model.expand(encoded, repeats)

    def select(self, encoded, keep):
        return self.model.select(encoded, keep)

    def initial_state(self, encoded):
        return self.model.initial_state(encoded)

    def reorder(self, state, index):
        return self.model.reorder(state, index)

    def step(self, prev, state, encoded, candidates, **kwargs):
        out = self.model.step(prev, state, encoded, candidates, **kwargs)
        self.steps.append(out._replace(state=None))
        return out


class Replay:
    """The recorded step outputs, returned in order: a model that computes nothing."""

    def __init__(self, recorder: Recorder) -> None:
        self.steps, self.at = recorder.steps, 0
        self.special, self.topk, self.eos_scores = recorder.special, recorder.topk, recorder.eos_scores

    def encode(self, src, lengths):
        return None

    def expand(self, encoded, repeats):
        return None

    def select(self, encoded, keep):
        return None

    def initial_state(self, encoded):
        return None

    def reorder(self, state, index):
        return None

    def step(self, prev, state, encoded, candidates, **kwargs):
        self.at += 1
        return self.steps[self.at - 1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--bundle", type=Path, default=REPO_ROOT / "models" / "en-de")
    parser.add_argument("--data", type=Path, default=REPO_ROOT.parent / "shared" / "data")
    parser.add_argument("--sentences", type=int, default=512)
    parser.add_argument("--batch", type=int, default=256)
    parser.add_argument("--beam", type=int, default=5)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--profile", action="store_true", help="also print cProfile's top functions of one replay")
    args = parser.parse_args()

    import sentencepiece as spm

    from worker.engine.bundle import load_bundle
    from worker.engine.ort_model import OrtStepModel
    from worker.engine.search import SearchOptions, beam_search

    bundle = load_bundle(args.bundle)
    sp = spm.SentencePieceProcessor(model_file=str(bundle.vocab_path("source")))
    with gzip.open(args.data / "wmt-newstest-de-en" / "newstest2014.en.gz", "rt", encoding="utf-8") as f:
        lines = [line.strip() for line in f if line.strip()][:args.sentences]
    sources = [[*sp.encode(line), bundle.special_ids.eos] for line in lines]
    model = OrtStepModel.from_bundle(bundle, "cpu")
    options = SearchOptions(beam=args.beam, max_len_a=1.5, max_len_b=10)
    batches = [sources[i:i + args.batch] for i in range(0, len(sources), args.batch)]
    recorders, whole, tokens = [], 0.0, 0
    for chunk in batches:
        recorder = Recorder(model)
        started = time.perf_counter()
        found = beam_search(recorder, chunk, options)
        whole += time.perf_counter() - started
        recorders.append((recorder, found))
        tokens += sum(len(h[0].tokens) + 1 for h in found)
    host_runs = []
    for _ in range(args.repeats):
        host = 0.0
        for chunk, (recorder, found) in zip(batches, recorders):
            replay = Replay(recorder)
            started = time.perf_counter()
            again = beam_search(replay, chunk, options)
            host += time.perf_counter() - started
            assert [h[0].tokens for h in again] == [h[0].tokens for h in found], "the replay decided differently"
        host_runs.append(host)
    host = float(np.median(host_runs))
    steps = sum(len(r.steps) for r, _ in recorders)
    result = {"bundle": bundle.manifest.get("name", str(args.bundle)), "sentences": len(sources), "batch": args.batch,
              "beam": args.beam, "steps": steps, "target_tokens": tokens,
              "whole_search_s": round(whole, 3), "host_search_s": round(host, 3),
              "host_ms_per_step": round(1000 * host / steps, 3),
              "host_us_per_target_token": round(1e6 * host / tokens, 2), "host_share_on_this_cpu": round(host / whole, 4),
              "host_runs_s": [round(h, 3) for h in host_runs]}
    print(json.dumps(result, indent=1))
    if args.profile:
        profile = cProfile.Profile()
        profile.enable()
        for chunk, (recorder, _) in zip(batches, recorders):
            beam_search(Replay(recorder), chunk, options)
        profile.disable()
        text = io.StringIO()
        pstats.Stats(profile, stream=text).sort_stats("tottime").print_stats(25)
        print(text.getvalue())


if __name__ == "__main__":
    main()
