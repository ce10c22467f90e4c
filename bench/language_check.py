"""Language check: how often ``worker.text.language`` flags text that is not English, and how
rarely it flags English, with the raw detector's top-1 answer as the baseline in the same run.

The evaluation set is built from the shared corpora (../shared/data, read-only) and two
hand-written files, every segment 5+ words:
- English, must not be flagged: Multi30k val + test_2016_flickr, newstest2013, 2,000 Tatoeba train
  lines (seeded sample of those with 5+ words), an ALL-CAPS copy of 2,489 of those lines, and
  ``bench/data/language_english_hard.txt`` (foreign names, loan words, URLs, code, emoji).
- Other languages, must be flagged: German (Multi30k val + test, newstest2013), French and Czech
  (Multi30k val + test), and ``bench/data/language_other.txt`` (135 everyday sentences in
  16 languages: es it nl pt pl sv tr zh ja ru ar, ten each; da fi hu el ko, five each).

Each detector runs in its own subprocess, so its load time and resident memory are its own:
- ``check``: ``LanguageCheck(expected="en")`` with its defaults (py3langid, the shipped choice);
- ``py3langid-top1``: the raw py3langid model, flagged when its best guess is not ``en``;
- ``lingua-*`` (``--lingua``, when lingua-language-detector is installed): lingua's best guess,
  high- and low-accuracy modes, all languages or ``--lingua-languages``.

    python bench/language_check.py [--lingua] [--json]

Reported per group and overall: segments, % judged, % flagged; per detector: load time, RSS
after load and at the end (MiB), segments/second over the whole set, its English and the rest.
Speeds are per CPU second of the one-threaded child (wall seconds too): on a shared machine the
wall clock measures the neighbours.
With ``--json`` the last line is a JSON object with the same figures.
"""
from __future__ import annotations

import argparse
import gzip
import json
import random
import subprocess
import sys
import time
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
if str(REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(REPO_ROOT))

DATA = REPO_ROOT.parent / "shared" / "data"
HERE = Path(__file__).resolve().parent / "data"
GOAL_OTHER_FLAGGED, GOAL_ENGLISH_FLAGGED = 95.0, 1.0
LINGUA_LANGUAGES = "en de fr es it nl pt pl sv tr zh ja ru ar cs da fi hu el ko nb ro sk sl hr uk bg"


def _corpus(path: str) -> list[str]:
    with gzip.open(DATA / path, "rt", encoding="utf-8") as f:
        return [line.strip() for line in f if len(line.split()) >= 5]


def _hand(name: str) -> list[str]:
    lines = (HERE / name).read_text(encoding="utf-8").splitlines()
    return [line.split("\t")[-1].strip() for line in lines if line.strip() and not line.startswith("#")]


def evaluation_set() -> dict[str, list[str]]:
    """Group name ('en:...' must pass, anything else must be flagged) -> segments."""
    groups = {
        "en:multi30k": _corpus("multi30k/val.en.gz") + _corpus("multi30k/test_2016_flickr.en.gz"),
        "en:newstest2013": _corpus("wmt-newstest-de-en/newstest2013.en.gz"),
    }
    tatoeba = sorted(set(_corpus("tatoeba-deu-eng/train.en.gz")))
    random.Random(0).shuffle(tatoeba)
    groups["en:tatoeba"] = tatoeba[:2000]
    capitals = groups["en:multi30k"][::4] + groups["en:newstest2013"][::6] + groups["en:tatoeba"][:500]
    groups["en:all-caps"] = [line.upper() for line in capitals]
    groups["en:hand-hard"] = _hand("language_english_hard.txt")
    groups["de:multi30k"] = _corpus("multi30k/val.de.gz") + _corpus("multi30k/test_2016_flickr.de.gz")
    groups["de:newstest2013"] = _corpus("wmt-newstest-de-en/newstest2013.de.gz")
    groups["fr:multi30k"] = _corpus("multi30k/val.fr.gz") + _corpus("multi30k/test_2016_flickr.fr.gz")
    groups["cs:multi30k"] = _corpus("multi30k/val.cs.gz") + _corpus("multi30k/test_2016_flickr.cs.gz")
    groups["xx:hand-other"] = _hand("language_other.txt")
    return groups


def _rss_mib() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def _detector(name: str, lingua_languages: str):
    """(judge(text) -> (judged, flagged), loaded-once setup) for one detector name."""
    if name == "check":
        from worker.text.language import LanguageCheck, load_detector

        check = LanguageCheck(expected="en")
        load_detector()

        def judge(text):
            verdict = check.check_segment(text)
            return verdict.judged, verdict.mismatch
        return judge
    if name == "py3langid-top1":
        from py3langid.langid import MODEL_FILE, LanguageIdentifier

        identifier = LanguageIdentifier.from_model_file(MODEL_FILE, norm_probs=True)
        return lambda text: (True, identifier.classify(text)[0] != "en")
    from lingua import IsoCode639_1, LanguageDetectorBuilder

    _, mode, scope = name.split("-")
    builder = (LanguageDetectorBuilder.from_all_languages() if scope == "all" else
               LanguageDetectorBuilder.from_iso_codes_639_1(
                   *[getattr(IsoCode639_1, code.upper()) for code in lingua_languages.split()]))
    if mode == "low":
        builder = builder.with_low_accuracy_mode()
    detector = builder.build()
    detector.detect_language_of("load the models now")  # lingua loads its models on first use

    def judge(text):
        found = detector.detect_language_of(text)
        return True, found is None or found.iso_code_639_1.name != "EN"
    return judge


def child(name: str, lingua_languages: str) -> dict:
    """Run one detector over the whole set; return its figures."""
    groups = evaluation_set()
    rss_before = _rss_mib()
    start, start_cpu = time.perf_counter(), time.process_time()
    judge = _detector(name, lingua_languages)
    load_s, load_cpu_s = time.perf_counter() - start, time.process_time() - start_cpu
    rss_loaded = _rss_mib()
    per_group, seconds, wall = {}, {"english": 0.0, "other": 0.0}, 0.0
    for group, segments in groups.items():
        start, start_cpu = time.perf_counter(), time.process_time()
        results = [judge(text) for text in segments]
        seconds["english" if group.startswith("en:") else "other"] += time.process_time() - start_cpu
        wall += time.perf_counter() - start
        per_group[group] = {"segments": len(segments), "judged": sum(j for j, _ in results),
                            "flagged": sum(f for _, f in results)}
    count = {side: sum(g["segments"] for group, g in per_group.items()
                       if group.startswith("en:") == (side == "english")) for side in seconds}
    return {"detector": name, "load_s": round(load_s, 3), "load_cpu_s": round(load_cpu_s, 3),
            "rss_before_mib": round(rss_before, 1),
            "rss_loaded_mib": round(rss_loaded, 1), "rss_end_mib": round(_rss_mib(), 1),
            "segments_per_s": round(sum(count.values()) / sum(seconds.values()), 1),
            "segments_per_wall_s": round(sum(count.values()) / wall, 1),
            "english_segments_per_s": round(count["english"] / seconds["english"], 1),
            "other_segments_per_s": round(count["other"] / seconds["other"], 1), "groups": per_group}


def _pct(part: int, whole: int) -> float:
    return round(100.0 * part / whole, 2) if whole else 0.0


def summarize(run: dict) -> dict:
    """Add % flagged per group and pooled over English and over other languages."""
    pooled = {"english": [0, 0, 0], "other": [0, 0, 0]}
    for group, g in run["groups"].items():
        g["judged_pct"], g["flagged_pct"] = _pct(g["judged"], g["segments"]), _pct(g["flagged"], g["segments"])
        side = pooled["english" if group.startswith("en:") else "other"]
        for i, key in enumerate(("segments", "judged", "flagged")):
            side[i] += g[key]
    run["english_flagged_pct"] = _pct(pooled["english"][2], pooled["english"][0])
    run["other_flagged_pct"] = _pct(pooled["other"][2], pooled["other"][0])
    run["english_segments"], run["other_segments"] = pooled["english"][0], pooled["other"][0]
    run["meets_goals"] = (run["other_flagged_pct"] >= GOAL_OTHER_FLAGGED
                          and run["english_flagged_pct"] < GOAL_ENGLISH_FLAGGED)
    return run


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lingua", action="store_true", help="also run lingua-language-detector, if installed")
    parser.add_argument("--lingua-languages", default=LINGUA_LANGUAGES,
                        help="ISO 639-1 codes for the restricted lingua runs")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(child(args.child, args.lingua_languages)))
        return

    names = ["check", "py3langid-top1"]
    if args.lingua:
        names += [f"lingua-{mode}-{scope}" for mode in ("high", "low") for scope in ("some", "all")]
    runs = []
    for name in names:
        cmd = [sys.executable, __file__, "--child", name, "--lingua-languages", args.lingua_languages]
        done = subprocess.run(cmd, capture_output=True, text=True, cwd=REPO_ROOT)
        if done.returncode != 0:
            print(f"{name}: failed\n{done.stderr.strip()[-2000:]}", file=sys.stderr)
            continue
        runs.append(summarize(json.loads(done.stdout.strip().splitlines()[-1])))

    for run in runs:
        print(f"\n== {run['detector']}: load {run['load_cpu_s']:.2f} CPU s ({run['load_s']:.2f} s wall), "
              f"RSS {run['rss_before_mib']:.0f} -> {run['rss_loaded_mib']:.0f} MiB after load "
              f"({run['rss_end_mib']:.0f} at end), {run['segments_per_s']:.0f} segments per CPU second "
              f"(English {run['english_segments_per_s']:.0f}, other {run['other_segments_per_s']:.0f}; "
              f"{run['segments_per_wall_s']:.0f} per wall second)")
        print(f"{'group':18s} {'segments':>8s} {'judged%':>8s} {'flagged%':>9s}")
        for group, g in run["groups"].items():
            print(f"{group:18s} {g['segments']:8d} {g['judged_pct']:8.2f} {g['flagged_pct']:9.2f}")
        print(f"English flagged: {run['english_flagged_pct']:.2f}% of {run['english_segments']} "
              f"(goal < {GOAL_ENGLISH_FLAGGED}%); other languages flagged: {run['other_flagged_pct']:.2f}% "
              f"of {run['other_segments']} (goal >= {GOAL_OTHER_FLAGGED}%); goals met: {run['meets_goals']}")
    if args.json:
        print(json.dumps({"runs": runs}))


if __name__ == "__main__":
    main()
