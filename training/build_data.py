"""``nmt build-data``: the data directory of the general-v2 recipe (``configs/general-v2-en-de.yaml``)
from the shared corpora and the German gettext catalogues, with held-out sets that share no
near-duplicate (``training.near_duplicates``: equal once case, punctuation and spacing are folded,
or one word substituted, inserted or deleted) with any training corpus.

(1) Tatoeba dev/test are subsets of the slices the shipped general model was scored on
    (``training.holdout``, 1,000 dev and 2,000 test pairs, its seed), less every pair with a side
    near a side of that model's training data (its Tatoeba part, news and captions): the
    shipped model and a new one are then compared on sentences neither has seen a variant of.
(2) Software dev/test are whole catalogues (``training.gettext_catalogues``), filtered the same way;
    documentation dev/test are whole manual sections (``training.docs.collect.DOCS_HELD_OUT``).
(3) Held-out sets are made distinct in priority order: the published sets as they are
    (newstest2014, newstest2013, Multi30k test2016 and val), then tatoeba-test, software-test,
    tatoeba-dev, software-dev, docs-test, docs-dev, each losing the pairs near an earlier set or
    an earlier pair of its own.
(4) Every training corpus (all of Tatoeba outside the new slices, news, captions, the other
    catalogues, the documentation corpus) loses the pairs near any held-out set.
(5) Documentation dev/test lose the pairs of a reference audit, ``training/docs/held_out_mismatch.tsv``
    (``training.docs.collect.read_mismatches``): whole sections hold pairs whose German reference
    is no translation of the English (rewritten, a clause or sentence more or less, another
    paragraph's, untranslated), found by reading source and reference only. They are dropped from
    the written sets after (3) and (4), so they stay held out: never trained on, pairs near them
    still leave training, and the training corpora are the same as without the list. A listed pair
    that matches no pair of its set fails the build (a stale list); the data card and the report
    give the pairs each set lost to it.
Each check indexes the smaller side (held-out pairs) and streams the corpus past it.

The documentation corpus (``training.docs``, ``--docs``, the default; ``--no-docs`` leaves it out)
is read from Debian's documentation packages, fetched with ``apt-get download`` into
``--docs-packages`` (outside the work tree) unless they are there already.

Writes ``OUT/{tatoeba,wmt-news,multi30k,software,docs}/{prefix}.{en,de}.gz``,
``OUT/docs/train.tagged.{en,de}.gz`` (the same pairs with their inline markup) and the data card
``OUT/docs/card.{json,md}`` (each source, and each dev/test set with the pairs the audit dropped),
and, last, ``OUT/report.json``; the same inputs give the same bytes.
It prints the counts.
"""
from __future__ import annotations

import argparse
import json
import sys
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Sequence

from .corpus import CorpusError, find_corpus_file, read_parallel
from .docs.collect import (DEFAULT_PACKAGE_DIR, DocsCorpus, DocsOptions, build_docs, drop_mismatches, held_out_sections,
                           kept_only, read_mismatches, write_docs, write_tagged)
from .docs.pairing import DocsPair
from .gettext_catalogues import DEFAULT_CATALOGUE_DIR, split_catalogues
from .holdout import DEFAULT_SEED, split_holdout, write_lines
from .near_duplicates import SideIndex, distinct, near_indexed

Pairs = list[tuple[str, str]]
SRC_LANG, TGT_LANG = "en", "de"
REPO_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_SHARED = REPO_ROOT.parent / "shared" / "data"
DEFAULT_OUT = REPO_ROOT.parent / "data" / "general-v2"  # outside the work tree: never committed

# Inputs: (directory under the shared data, prefix).
TATOEBA = ("tatoeba-deu-eng", "train")
PUBLISHED = {  # held-out sets used as published, in priority order
    "newstest2014": ("wmt-newstest-de-en", "newstest2014"),
    "newstest2013": ("wmt-newstest-de-en", "newstest2013"),
    "multi30k-test2016": ("multi30k", "test_2016_flickr"),
    "multi30k-val": ("multi30k", "val"),
}
SHARED_TRAINING = {"wmt-news": ("wmt-newstest-de-en", "train"), "multi30k": ("multi30k", "train")}

# Outputs: name -> (directory under OUT, prefix); configs/general-v2-en-de.yaml names these.
OUTPUTS = {
    "tatoeba": ("tatoeba", "train"), "tatoeba-dev": ("tatoeba", "dev"), "tatoeba-test": ("tatoeba", "test"),
    "wmt-news": ("wmt-news", "train"), "newstest2013": ("wmt-news", "newstest2013"),
    "newstest2014": ("wmt-news", "newstest2014"),
    "multi30k": ("multi30k", "train"),
    "software": ("software", "train"), "software-dev": ("software", "dev"), "software-test": ("software", "test"),
    "docs-test": ("docs", "test"), "docs-dev": ("docs", "dev"),  # each with its tagged copy, PREFIX.tagged.*
}
DOCS = ("docs", "train")  # written by training.docs.collect.write_docs, with the tagged copy and the data card
REPORT = "report.json"


@dataclass(frozen=True)
class ShippedSplit:
    """How ``training.holdout`` carved the Tatoeba slices of the shipped model
    (configs/general-en-de.yaml: ``--dev 1000 --test 2000`` with the default seed)."""

    dev: int = 1000
    test: int = 2000
    seed: int = DEFAULT_SEED


def read_pairs(shared: Path, source: tuple[str, str]) -> Pairs:
    directory, prefix = source
    corpus = read_parallel(find_corpus_file(shared / directory, prefix, SRC_LANG),
                           find_corpus_file(shared / directory, prefix, TGT_LANG))
    return list(zip(corpus.src, corpus.tgt))


def build_data(shared: Path, catalogues: Path, out: Path, shipped: ShippedSplit = ShippedSplit(),
               docs: DocsOptions | None = None) -> dict[str, Any]:
    """Build the data directory ``out``; returns the report it also writes to ``out/report.json``.
    ``docs`` None: without the documentation corpus."""
    shared, out = Path(shared), Path(out)
    mismatches = read_mismatches(docs.mismatches) if docs is not None and docs.mismatches is not None else None
    # (1) inputs (the documentation packages last: the local inputs are checked before any download)
    tatoeba = read_pairs(shared, TATOEBA)
    published = {name: read_pairs(shared, source) for name, source in PUBLISHED.items()}
    training: dict[str, Pairs] = {name: read_pairs(shared, source) for name, source in SHARED_TRAINING.items()}
    software = split_catalogues(catalogues)
    documentation: DocsCorpus | None = build_docs(docs) if docs is not None else None
    docs_held: dict[str, tuple[DocsPair, ...]] = {}  # whole manual sections: the documentation dev and test sets
    if documentation is not None:
        documentation, docs_held = held_out_sections(documentation, docs.held_out)

    # (2) the shipped model's slices and what it was trained on
    shipped_train, shipped_dev, shipped_test = split_holdout(
        [s for s, _ in tatoeba], [t for _, t in tatoeba], shipped.dev, shipped.test, shipped.seed)
    seen_by_shipped = {"tatoeba_train": [tatoeba[i] for i in shipped_train],
                       "news_or_captions": [pair for name in SHARED_TRAINING for pair in training[name]]}

    # (3) held-out sets, distinct in priority order
    candidates = {"tatoeba-test": [tatoeba[i] for i in shipped_test], "software-test": software.test,
                  "tatoeba-dev": [tatoeba[i] for i in shipped_dev], "software-dev": software.dev,
                  **{name: [pair.plain for pair in pairs] for name, pairs in docs_held.items()}}
    held, held_report = held_out_sets(published, candidates, seen_by_shipped)

    # (4) training corpora, less anything near a held-out set
    in_slices = set(held["tatoeba-test"]) | set(held["tatoeba-dev"])
    training = {"tatoeba": [p for p in tatoeba if p not in in_slices], **training, "software": software.train}
    if documentation is not None:
        training["docs"] = [pair.plain for pair in documentation.pairs]
    kept, training_report, overlap = drop_near_held_out(training, held)
    if documentation is not None:
        documentation = kept_only(documentation, kept.pop("docs"))

    # (5) the documentation sets less the audited pairs: only now, so that they still counted as
    # held out in (3) and (4) (the training corpora do not change with the list)
    audit_dropped: dict[str, dict[str, int]] = {}
    if mismatches is not None:
        audited, audit_dropped = drop_mismatches({name: held[name] for name in docs_held}, mismatches, docs.mismatches)
        held.update(audited)
        for name, reasons in audit_dropped.items():
            held_report[name] = {**held_report[name], "audit_mismatch": sum(reasons.values()),
                                 "audit_reasons": reasons, "pairs": len(held[name])}

    # (6) files, then the report (its presence says the build finished)
    out.mkdir(parents=True, exist_ok=True)
    (out / REPORT).unlink(missing_ok=True)
    for name, pairs in {**kept, **{n: held[n] for n in OUTPUTS if n in held}}.items():  # docs/train: write_docs
        directory, prefix = OUTPUTS[name]
        (out / directory).mkdir(exist_ok=True)
        write_lines(out / directory / f"{prefix}.{SRC_LANG}.gz", [s for s, _ in pairs])
        write_lines(out / directory / f"{prefix}.{TGT_LANG}.gz", [t for _, t in pairs])
    cards = None
    if documentation is not None:
        held_cards = {name: {"sections": list(docs.held_out[name]), "pairs": len(held[name]),
                             "audit_dropped": audit_dropped.get(name) if mismatches is not None else None}
                      for name in docs_held}
        cards = write_docs(documentation, out / DOCS[0], DOCS[1], held_cards,
                           None if mismatches is None else shown_path(docs.mismatches))
    for name, pairs in docs_held.items():  # the tagged copy of each held-out pair that was kept
        tagged = {}
        for pair in pairs:
            tagged.setdefault(pair.plain, pair)
        write_tagged([tagged[plain] for plain in held[name]], out / OUTPUTS[name][0], OUTPUTS[name][1])
    report = {
        "inputs": {"shared": str(shared.resolve()), "catalogues": str(Path(catalogues).resolve()), "seed": shipped.seed,
                   "tatoeba_pairs": len(tatoeba),
                   "shipped_slices": {"train": len(shipped_train), "dev": len(shipped_dev), "test": len(shipped_test)}},
        "files": {name: f"{d}/{p}" for name, (d, p) in OUTPUTS.items()},
        "held_out": held_report,
        "training": training_report,
        "held_out_near_training": overlap,  # held-out pairs with a near-duplicate in each corpus before dropping
        "software_catalogues": [{"role": software.roles[c.name], **asdict(c)} for c in software.counts],
        "software_catalogues_missing": software.missing,
        "software_catalogues_ignored": software.ignored,
        "docs": None if cards is None else {"files": f"{DOCS[0]}/{DOCS[1]}", "tagged": f"{DOCS[0]}/{DOCS[1]}.tagged",
                                            "package_dir": str(Path(docs.package_dir).resolve()),
                                            "audit_list": None if mismatches is None else shown_path(docs.mismatches),
                                            "sources": [asdict(card) for card in cards]},
    }
    (out / REPORT).write_text(json.dumps(report, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return report


def shown_path(path: Path) -> str:
    """``path`` as the card and report name it: relative to the work tree when inside it (the same
    bytes from every checkout), else absolute."""
    path = Path(path).resolve()
    return str(path.relative_to(REPO_ROOT)) if path.is_relative_to(REPO_ROOT) else str(path)


def held_out_sets(published: dict[str, Pairs], candidates: dict[str, Pairs], seen_by_shipped: dict[str, Pairs]
                  ) -> tuple[dict[str, Pairs], dict[str, dict[str, int]]]:
    """The held-out sets: the published ones as they are, then each candidate set (in order) less
    its pairs near what the shipped model trained on (each corpus of ``seen_by_shipped`` in turn)
    and near an earlier set or pair; with the counts of each."""
    candidate_index = SideIndex()
    numbers = {name: [candidate_index.add(*pair) for pair in pairs] for name, pairs in candidates.items()}
    seen = {corpus: near_indexed(candidate_index, pairs) for corpus, pairs in seen_by_shipped.items()}
    taken = SideIndex.of(pair for pairs in published.values() for pair in pairs)
    held = dict(published)
    report: dict[str, dict[str, int]] = {name: {"pairs": len(pairs)} for name, pairs in published.items()}
    for name, pairs in candidates.items():
        counts = {"candidates": len(pairs)}
        clean = list(zip(numbers[name], pairs))
        for corpus, near_corpus in seen.items():
            unseen = [(number, pair) for number, pair in clean if number not in near_corpus]
            counts[f"near_shipped_{corpus}"] = len(clean) - len(unseen)
            clean = unseen
        held[name], counts["near_other_held_out"] = distinct((pair for _, pair in clean), taken)
        report[name] = {**counts, "pairs": len(held[name])}
    return held, report


def drop_near_held_out(training: dict[str, Pairs], held: dict[str, Pairs]
                       ) -> tuple[dict[str, Pairs], dict[str, dict[str, Any]], dict[str, dict[str, int]]]:
    """Each training corpus less the pairs near any held-out pair, what was dropped (in all, and
    matching each set), and how many pairs of each held-out set had a near-duplicate in each
    corpus before."""
    index = SideIndex()
    owner: list[str] = []  # pair number in ``index`` -> its held-out set
    for held_name, held_pairs in held.items():
        for pair in held_pairs:
            index.add(*pair)
            owner.append(held_name)
    kept: dict[str, Pairs] = {}
    report: dict[str, dict[str, Any]] = {}
    overlap: dict[str, dict[str, int]] = {held_name: {} for held_name in held}
    for name, pairs in training.items():
        kept[name], near_held = [], set()
        dropped_matching = dict.fromkeys(held, 0)
        for pair in pairs:
            found = index.near(*pair)
            if not found:
                kept[name].append(pair)
                continue
            near_held |= found
            for held_name in {owner[number] for number in found}:
                dropped_matching[held_name] += 1
        for held_name in held:
            overlap[held_name][name] = 0
        for number in near_held:
            overlap[owner[number]][name] += 1
        report[name] = {"pairs": len(pairs), "dropped": len(pairs) - len(kept[name]), "kept": len(kept[name]),
                        "dropped_matching": dropped_matching}
    return kept, report, overlap


def format_report(report: dict[str, Any], out: Path) -> str:
    """The counts as lines for a person."""
    inputs = report["inputs"]
    shipped = inputs["shipped_slices"]
    lines = [f"{out}: built from {inputs['shared']} and {inputs['catalogues']}",
             (f"shipped model's Tatoeba split (seed {inputs['seed']}) of {inputs['tatoeba_pairs']} pairs: "
              f"train {shipped['train']}, dev {shipped['dev']}, test {shipped['test']}"),
             "held-out sets:"]
    for name, counts in report["held_out"].items():
        if "candidates" in counts:
            audited = ""
            if "audit_mismatch" in counts:
                reasons = ", ".join(f"{n} {r}" for r, n in counts["audit_reasons"].items())
                audited = f", {counts['audit_mismatch']} by the reference audit{f' ({reasons})' if reasons else ''}"
            lines.append(f"  {name:<18} {counts['pairs']:>6} of {counts['candidates']} (dropped: "
                         f"{counts['near_shipped_tatoeba_train']} near the shipped model's Tatoeba training part, "
                         f"{counts['near_shipped_news_or_captions']} near its news/captions, "
                         f"{counts['near_other_held_out']} near another held-out pair{audited})")
        else:
            lines.append(f"  {name:<18} {counts['pairs']:>6} (as published)")
    lines.append("training corpora (pairs dropped for a side near a side of a held-out pair):")
    for name, counts in report["training"].items():
        matching = ", ".join(f"{h} {n}" for h, n in counts["dropped_matching"].items() if n)
        lines.append(f"  {name:<18} {counts['kept']:>6} of {counts['pairs']} kept, {counts['dropped']} dropped"
                     f"{f' (matching {matching})' if matching else ''}")
    lines.append("held-out pairs with a near-duplicate in each training corpus (before dropping):")
    for name, counts in report["held_out_near_training"].items():
        lines.append(f"  {name:<18} " + ", ".join(f"{corpus} {n}" for corpus, n in counts.items()))
    roles: dict[str, list[str]] = {}
    for catalogue in report["software_catalogues"]:
        roles.setdefault(catalogue["role"], []).append(catalogue["name"])
    lines.append(f"software catalogues: {len(report['software_catalogues'])} "
                 f"(dev: {', '.join(roles.get('dev', []))}; test: {', '.join(roles.get('test', []))}; "
                 f"{len(roles.get('train', []))} for training)")
    for kind in ("missing", "ignored"):
        names = report[f"software_catalogues_{kind}"]
        if names:
            what = "training catalogues not found" if kind == "missing" else "catalogues not in the recipe, not read"
            lines.append(f"  {len(names)} {what}: {', '.join(names)}")
    skipped = {k: sum(c[k] for c in report["software_catalogues"])
               for k in ("messages", "pairs", "plural_pairs", "multi_line", "fuzzy", "too_short", "untranslated",
                         "identical", "placeholders")}
    lines.append(f"  {skipped['messages']} messages -> {skipped['pairs']} pairs ({skipped['plural_pairs']} from plural "
                 f"forms, {skipped['multi_line']} multi-line joined); skipped {skipped['too_short']} one-character, "
                 f"{skipped['untranslated']} untranslated, {skipped['identical']} identical, "
                 f"{skipped['placeholders']} with other placeholders, {skipped['fuzzy']} fuzzy")
    if report.get("docs"):
        lines.append(f"documentation corpus ({report['docs']['files']}, tagged copy {report['docs']['tagged']}):")
        for card in report["docs"]["sources"]:
            counts = card["counts"]
            packages = ", ".join(f"{p['name']} {p['version']}" for p in card["packages"])
            lines.append(f"  {card['source']:<20} {card['pairs']:>6} pairs, {card['words_en']:>7} English words "
                         f"({packages}; {card['packages'][0]['license']}); dropped "
                         f"{counts.get('identical', 0)} identical, "
                         f"{counts.get('untranslated', 0)} untranslated, {counts.get('duplicates', 0)} repeated, "
                         f"{counts.get('near_held_out', 0)} near a held-out pair")
    return "\n".join(lines)


# --- command line ---------------------------------------------------------------------------


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser("build-data", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_arguments(p)
    p.set_defaults(handler=run)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--shared", default=str(DEFAULT_SHARED), help="the shared corpora (default: %(default)s)")
    parser.add_argument("--catalogues", default=str(DEFAULT_CATALOGUE_DIR),
                        help="directory of German .mo catalogues (default: %(default)s)")
    parser.add_argument("--out", default=str(DEFAULT_OUT), help="data directory to write (default: %(default)s)")
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED,
                        help="seed of the shipped model's Tatoeba slices (default: %(default)s)")
    parser.add_argument("--docs", action=argparse.BooleanOptionalAction, default=True,
                        help="build the documentation corpus from Debian's documentation packages, fetched with "
                             "apt-get download (default: %(default)s)")
    parser.add_argument("--docs-packages", default=str(DEFAULT_PACKAGE_DIR),
                        help="where the documentation packages are downloaded and unpacked (default: %(default)s)")
    parser.add_argument("--docs-audit", default=None, metavar="TSV|none",
                        help="pairs to drop from the documentation dev/test sets (default: the committed reference "
                             "audit, training/docs/held_out_mismatch.tsv); 'none' keeps every pair, as for packages "
                             "newer than the audit")


def docs_options(args: argparse.Namespace) -> DocsOptions | None:
    """The documentation corpus' options from the command line; None with ``--no-docs``."""
    if not args.docs:
        return None
    if args.docs_audit is None:
        return DocsOptions(Path(args.docs_packages))
    audit = None if args.docs_audit.lower() == "none" else Path(args.docs_audit)
    return DocsOptions(Path(args.docs_packages), mismatches=audit)


def run(args: argparse.Namespace) -> int:
    docs = docs_options(args)
    report = build_data(Path(args.shared), Path(args.catalogues), Path(args.out), ShippedSplit(seed=args.seed), docs)
    print(format_report(report, Path(args.out)))
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m training.build_data", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    add_arguments(parser)
    args = parser.parse_args(argv)
    try:
        return run(args)
    except CorpusError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    raise SystemExit(main())
