"""Equal-compute comparison of training runs: validation BLEU against CPU-minutes of training, from
each run's metrics.jsonl, as a PNG and a table. The runs are made beforehand, each alone on the
machine for the same wall-clock time, e.g. for the four configs/compare/*.yaml:

    timeout -s INT 960 nmt train --config configs/compare/gru-small.yaml --run-dir RUNS/gru-small
    ...
    python bench/equal_compute.py RUNS/gru-small RUNS/hybrid-small RUNS/gru-base RUNS/hybrid-base \\
        --png docs/equal-compute.png [--json]

The baseline is the first run given: each other run's BLEU is also shown as a difference from it at the
same training time (linear between validations, at the shortest run's last validation). "CPU-minutes" are training seconds (the trainer's ``elapsed``: optimizer
steps, validation excluded) x the threads the run used / 60.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from span_fidelity import cpu_model  # noqa: E402


def read_run(run_dir: Path, valid_set: str | None = None) -> dict:
    """A run's validations as (CPU-minutes, BLEU, step): the whole validation set's BLEU, or, with
    ``valid_set``, that set's alone (``valid_sets`` in metrics.jsonl, logged when data.valid lists
    several)."""
    records = [json.loads(line) for line in (run_dir / "metrics.jsonl").read_text(encoding="utf-8").splitlines()
               if line.strip()]
    config = (run_dir / "config.yaml").read_text(encoding="utf-8")
    threads = next((int(line.split(":")[1]) for line in config.splitlines() if line.strip().startswith("threads:")), 1)
    valid = [r for r in records if r["kind"] == "valid"]
    train = [r for r in records if r["kind"] == "train"]
    return {"name": run_dir.name, "threads": threads,
            "points": [(r["elapsed"] * threads / 60,
                        r["valid_bleu"] if valid_set is None else r["valid_sets"][valid_set]["bleu"], r["step"])
                       for r in valid],
            "steps": train[-1]["step"] if train else 0,
            "tokens_per_s": sum(r["tokens_per_s"] for r in train) / len(train) if train else 0.0}


def bleu_at(run: dict, minutes: float) -> float | None:
    """Validation BLEU at ``minutes`` CPU-minutes, linear between the run's validations (None past
    its last one)."""
    points = [(0.0, 0.0)] + [(m, bleu) for m, bleu, _ in run["points"]]
    for (m0, b0), (m1, b1) in zip(points, points[1:]):
        if m0 <= minutes <= m1:
            return b0 + (b1 - b0) * (minutes - m0) / (m1 - m0) if m1 > m0 else b1
    return None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("runs", nargs="+", type=Path, help="run directories; the first is the baseline")
    parser.add_argument("--png", type=Path, help="write the plot here")
    parser.add_argument("--title", default="Equal compute: validation BLEU against CPU-minutes", help="the plot's title")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON on the last line")
    parser.add_argument("--set", dest="valid_set", help="one validation set's BLEU (a data.valid name, e.g. docs-dev) "
                                                       "instead of the whole validation set's")
    parser.add_argument("--ylabel", default="validation BLEU (greedy)\nnewstest2013, Tatoeba dev, software dev",
                        help="the plot's y-axis label")
    args = parser.parse_args()
    runs = [read_run(path, args.valid_set) for path in args.runs]
    common = min(max((m for m, _, _ in run["points"]), default=0.0) for run in runs)
    base = bleu_at(runs[0], common)
    print(f"CPU: {cpu_model()} ({os.cpu_count()} cores); compared at {common:.1f} CPU-minutes "
          f"(the shortest run's last validation)")
    print(f"  {'run':14} {'steps':>6} {'tok/s':>7} {'BLEU at ' + format(common, '.1f') + ' CPU-min':>22} {'last validation':>18} "
          f"{'vs ' + runs[0]['name']:>18}")
    for run in runs:
        bleu = bleu_at(run, common)
        delta = "" if bleu is None or base is None else f"{bleu - base:+.2f}"
        print(f"  {run['name']:14} {run['steps']:6d} {run['tokens_per_s']:7.0f} "
              f"{'-' if bleu is None else format(bleu, '.2f'):>22} "
              f"{format(run['points'][-1][1], '.2f') + ' at ' + format(run['points'][-1][0], '.1f') if run['points'] else '-':>18} "
              f"{delta:>18}")
    if args.png:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        fig, ax = plt.subplots(figsize=(7, 4.5))
        for run in runs:
            ax.plot([m for m, _, _ in run["points"]], [b for _, b, _ in run["points"]], "o-", label=run["name"])
        ax.set(xlabel="CPU-minutes of training (training seconds x threads / 60)", ylabel=args.ylabel,
               title=args.title)
        ax.grid(alpha=0.3)
        ax.legend()
        fig.tight_layout()
        fig.savefig(args.png, dpi=100)
        plt.close(fig)
    if args.json:
        print(json.dumps({"cpu": cpu_model(), "common_cpu_minutes": common,
                          "runs": [{**run, "bleu_at_common": bleu_at(run, common)} for run in runs]}))


if __name__ == "__main__":
    main()
