"""The host-side beam search alone: how long the search's own work takes, without the model. A
real search over the shipped bundle (or ``--bundle``) is recorded step by step; the same search
then runs again on a model that replays the recorded step outputs (no computation), so it takes
exactly the same decisions and its time is the search's own. The search is the one
``bench/gpu_check.py`` times for the GRU bundle (newstest2014, length-sorted batches of
``--batch`` sentences, beam 5, the bundle's decoding defaults), so its per-token time compares with
the time outside model calls there (docs/benchmarks.md, CUDA). The recorded run is the baseline:
the ratio is the search's time over the whole.

    python bench/search_overhead.py [--sentences 0 (all)] [--batch 256] [--beam 5] [--profile]
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
    """A step model's calls passed through (``__getattr__``), each ``step`` output kept in order."""

    def __init__(self, model) -> None:
        self.model, self.steps = model, []

    def __getattr__(self, name: str):
        return getattr(self.model, name)

    def step(self, prev, state, encoded, candidates, **kwargs):
        out = self.model.step(prev, state, encoded, candidates, **kwargs)
        self.steps.append(out._replace(state=None))
        return out


class Replay:
    """The recorded step outputs, returned in order: a model that computes nothing."""

    def __init__(self, recorder: Recorder) -> None:
        self.steps, self.at = recorder.steps, 0
        self.special, self.topk = recorder.special, recorder.topk
        self.eos_scores = getattr(recorder, "eos_scores", False)

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
    parser.add_argument("--source", type=Path, help="the sentences as plain text instead (e.g. gpu_check's payload "
                        "newstest2014.en), to replay on a lent GPU machine's host")
    parser.add_argument("--sentences", type=int, default=0, help="the first N sentences (0: all 3,003)")
    parser.add_argument("--batch", type=int, default=256)
    parser.add_argument("--beam", type=int, default=5)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--profile", action="store_true", help="also print cProfile's top functions of one replay")
    args = parser.parse_args()

    import sentencepiece as spm

    from worker.engine.bundle import load_bundle
    from worker.engine.ort_model import OrtStepModel
    from worker.engine.search import SearchOptions, search_in_batches

    bundle = load_bundle(args.bundle)
    sp = spm.SentencePieceProcessor(model_file=str(bundle.vocab_path("source")))
    if args.source:
        lines = [line.strip() for line in args.source.read_text(encoding="utf-8").splitlines() if line.strip()]
    else:
        with gzip.open(args.data / "wmt-newstest-de-en" / "newstest2014.en.gz", "rt", encoding="utf-8") as f:
            lines = [line.strip() for line in f if line.strip()]
    sources = [[*sp.encode(line), bundle.special_ids.eos] for line in lines[:args.sentences or None]]
    model = OrtStepModel.from_bundle(bundle, "cpu")
    d = bundle.manifest["decoding_defaults"]  # as bench/gpu_check.py's GRU part
    options = SearchOptions(beam=args.beam, max_len_a=d["max_len_a"], max_len_b=d["max_len_b"],
                            length_penalty=d.get("length_penalty", 0.0))

    def search(step_model):
        return search_in_batches(step_model, sources, options, args.batch, args.batch * max(map(len, sources)), 1)

    recorder = Recorder(model)
    started = time.perf_counter()
    found = search(recorder)
    whole = time.perf_counter() - started
    tokens = sum(len(h[0].tokens) + 1 for h in found)
    host_runs = []
    for _ in range(args.repeats):
        replay = Replay(recorder)
        started = time.perf_counter()
        again = search(replay)
        host_runs.append(time.perf_counter() - started)
        assert [h[0].tokens for h in again] == [h[0].tokens for h in found], "the replay decided differently"
    host = float(np.median(host_runs))
    steps = len(recorder.steps)
    result = {"bundle": bundle.manifest.get("name", str(args.bundle)), "sentences": len(sources), "batch": args.batch,
              "beam": args.beam, "steps": steps, "target_tokens": tokens,
              "whole_search_s": round(whole, 3), "host_search_s": round(host, 3),
              "host_ms_per_step": round(1000 * host / steps, 3),
              "host_us_per_target_token": round(1e6 * host / tokens, 2),
              "host_share_on_this_cpu": round(host / whole, 4),
              "host_runs_s": [round(h, 3) for h in host_runs]}
    print(json.dumps(result, indent=1))
    if args.profile:
        profile = cProfile.Profile()
        profile.enable()
        search(Replay(recorder))
        profile.disable()
        text = io.StringIO()
        pstats.Stats(profile, stream=text).sort_stats("tottime").print_stats(25)
        print(text.getvalue())


if __name__ == "__main__":
    main()
