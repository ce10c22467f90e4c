"""Blind rating of translations, as a reviewer reads them: two or more bundles' translations and
the human reference of the same source lines, mixed in one random order, each shown with its
source only, to be rated ``usable`` (publish as it is), ``edit`` (worth editing) or
``retranslate``. The rater never sees which system wrote what: the sheet holds items, the key
(kept apart) says whose each item is.

    python bench/blind_rating.py sheet --bundle models/en-de --bundle DOCS_BUNDLE \
        --set docs-test --set tatoeba-test --set software-test --lines 40 --seed 7 --out DIR
    # DIR/sheet.jsonl goes to the rater; DIR/key.json stays here. The rater writes one line
    # per item: {"item": "...", "rating": "usable" | "edit" | "retranslate"} into RATINGS.
    python bench/blind_rating.py score --dir DIR --ratings RATINGS [--json]

``--src FILE --ref FILE`` (repeatable, in pairs) rates a set given by its files instead of its
name (``bench/test_sets.py``). Lines are drawn with the seed from the set's lines of 3-60 words
(a manual's one-word headings and over-long lines tell a reviewer little). The same bundle given
twice, or a line drawn twice, is refused. Translations are decoded with the bundle's defaults
(spans, case and language check on), as users get them.
"""
from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import random
import sys
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
if str(REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(REPO_ROOT))

from bench.test_sets import SETS, files as set_files  # noqa: E402

RATINGS = ("usable", "edit", "retranslate")
HUMAN = "human"
MIN_WORDS, MAX_WORDS = 3, 60


class RatingError(ValueError):
    """A sheet, key or ratings file that cannot be used, with the reason."""


@dataclass(frozen=True)
class RatedSet:
    name: str
    source: Path
    reference: Path


def read_lines(path: Path) -> list[str]:
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8") as handle:
        return [line.rstrip("\n") for line in handle]


def draw(sources: list[str], references: list[str], lines: int, seed: int, name: str) -> list[int]:
    """``lines`` line indices drawn with ``seed`` among the pairs of MIN_WORDS-MAX_WORDS source words."""
    if len(sources) != len(references):
        raise RatingError(f"{name}: {len(sources)} source lines against {len(references)} reference lines")
    fit = [k for k, (s, r) in enumerate(zip(sources, references))
           if MIN_WORDS <= len(s.split()) <= MAX_WORDS and r.strip()]
    if len(fit) < lines:
        raise RatingError(f"{name}: only {len(fit)} lines of {MIN_WORDS}-{MAX_WORDS} words, {lines} asked for")
    return sorted(random.Random(f"{seed}:{name}").sample(fit, lines))


def item_id(seed: int, set_name: str, line: int, system: str) -> str:
    """An opaque, stable item name: says nothing of the system to the rater."""
    return hashlib.sha256(f"{seed}|{set_name}|{line}|{system}".encode()).hexdigest()[:10]


def make_sheet(sets: list[RatedSet], translations: dict[str, dict[str, list[str]]], lines: dict[str, list[int]],
               sources: dict[str, list[str]], references: dict[str, list[str]], seed: int) -> tuple[list[dict], dict]:
    """The shuffled sheet and its key. ``translations[system][set]``: one output per drawn line."""
    items, key = [], {}
    for rated in sets:
        for j, k in enumerate(lines[rated.name]):
            outputs = {system: by_set[rated.name][j] for system, by_set in translations.items()}
            outputs[HUMAN] = references[rated.name][k]
            for system, text in outputs.items():
                ident = item_id(seed, rated.name, k, system)
                items.append({"item": ident, "source": sources[rated.name][k], "translation": text})
                key[ident] = {"system": system, "set": rated.name, "line": k}
    random.Random(seed).shuffle(items)
    return items, key


def read_ratings(path: Path, key: dict) -> dict[str, str]:
    """item -> rating; every item of the key rated once, with one of RATINGS."""
    ratings: dict[str, str] = {}
    for number, line in enumerate(read_lines(path), 1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
            ident, rating = record["item"], record["rating"]
        except (json.JSONDecodeError, KeyError, TypeError) as error:
            raise RatingError(f"{path}:{number}: not a rating line ({error}); want "
                              '{"item": "...", "rating": "usable|edit|retranslate"}') from None
        if ident not in key:
            raise RatingError(f"{path}:{number}: item {ident!r} is not on the sheet")
        if rating not in RATINGS:
            raise RatingError(f"{path}:{number}: rating {rating!r} is not one of {', '.join(RATINGS)}")
        if ident in ratings:
            raise RatingError(f"{path}:{number}: item {ident!r} rated twice")
        ratings[ident] = rating
    missing = [ident for ident in key if ident not in ratings]
    if missing:
        raise RatingError(f"{path}: {len(missing)} of {len(key)} items not rated, first {missing[0]!r}")
    return ratings


def score(key: dict, ratings: dict[str, str]) -> dict[str, dict[str, dict[str, int]]]:
    """set -> system -> rating -> count."""
    table: dict[str, dict[str, Counter]] = {}
    for ident, entry in key.items():
        table.setdefault(entry["set"], {}).setdefault(entry["system"], Counter())[ratings[ident]] += 1
    return {s: {system: {r: counts[r] for r in RATINGS} for system, counts in by_system.items()}
            for s, by_system in table.items()}


def format_table(table: dict) -> str:
    rows = ["| set | system | usable | edit | retranslate |", "|---|---|---|---|---|"]
    for set_name, by_system in table.items():
        for system, counts in by_system.items():
            rows.append(f"| {set_name} | {system} | " + " | ".join(str(counts[r]) for r in RATINGS) + " |")
    return "\n".join(rows)


def rated_sets(args) -> list[RatedSet]:
    sets = []
    for name in args.set or []:
        if name not in SETS:
            raise RatingError(f"unknown set {name!r}; known: {', '.join(SETS)}")
        source, reference = set_files(name)
        sets.append(RatedSet(name, source, reference))
    if len(args.src or []) != len(args.ref or []):
        raise RatingError("--src and --ref come in pairs")
    for source, reference in zip(args.src or [], args.ref or []):
        sets.append(RatedSet(Path(source).name.split(".")[0], Path(source), Path(reference)))
    names = [s.name for s in sets]
    if not sets or len(set(names)) != len(names):
        raise RatingError(f"name one or more distinct sets (got {names})")
    return sets


def run_sheet(args) -> None:
    from worker.engine.settings import EngineSettings
    from worker.engine.translator import Translator

    bundles = [Path(b) for b in args.bundle]
    if len({b.resolve() for b in bundles}) != len(bundles):
        raise RatingError("the same bundle named twice")
    sets = rated_sets(args)
    sources = {s.name: read_lines(s.source) for s in sets}
    references = {s.name: read_lines(s.reference) for s in sets}
    lines = {s.name: draw(sources[s.name], references[s.name], args.lines, args.seed, s.name) for s in sets}
    translations: dict[str, dict[str, list[str]]] = {}
    systems = {}
    for bundle in bundles:
        translator = Translator(bundle, EngineSettings(provider="cpu", intra_op_threads=args.threads))
        system = translator.bundle.signature
        systems[system] = str(bundle)
        translations[system] = {s.name: [r.translation for r in translator.translate_sentences(
            [sources[s.name][k] for k in lines[s.name]])] for s in sets}
    items, key = make_sheet(sets, translations, lines, sources, references, args.seed)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    with open(out / "sheet.jsonl", "w", encoding="utf-8") as handle:
        for item in items:
            handle.write(json.dumps(item, ensure_ascii=False) + "\n")
    (out / "key.json").write_text(json.dumps({"seed": args.seed, "systems": systems, "items": key}, indent=1))
    print(f"{len(items)} items ({len(sets)} sets x {args.lines} lines x {len(bundles) + 1} systems) in {out}/sheet.jsonl")


def run_score(args) -> None:
    key = json.loads((Path(args.dir) / "key.json").read_text())["items"]
    table = score(key, read_ratings(Path(args.ratings), key))
    print(json.dumps(table, indent=1) if args.json else format_table(table))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = parser.add_subparsers(dest="command", required=True)
    sheet = commands.add_parser("sheet", help="decode and write the blind sheet and its key")
    sheet.add_argument("--bundle", action="append", required=True)
    sheet.add_argument("--set", action="append", help=f"one of: {', '.join(SETS)}")
    sheet.add_argument("--src", action="append")
    sheet.add_argument("--ref", action="append")
    sheet.add_argument("--lines", type=int, default=40)
    sheet.add_argument("--seed", type=int, default=7)
    sheet.add_argument("--threads", type=int, default=1)
    sheet.add_argument("--out", required=True)
    scored = commands.add_parser("score", help="count the ratings per set and system")
    scored.add_argument("--dir", required=True)
    scored.add_argument("--ratings", required=True)
    scored.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    try:
        run_sheet(args) if args.command == "sheet" else run_score(args)
    except RatingError as error:
        print(f"blind_rating: {error}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
