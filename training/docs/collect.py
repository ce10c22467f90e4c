"""The documentation corpus of ``nmt build-data``: every source of ``training.docs.sources``
fetched, unpacked and paired, exact repeats dropped; and what is written of it, plain and tagged
pair files and the data card (package, version, license, pairs and words per source).

Pairs near a dev or test set are dropped by ``training.build_data`` (as for every training
corpus); ``kept_only`` then applies its choice to the tagged copy.

The dev and test sets are whole manual sections, so some of their references are not translations
of their source (the German help was rewritten, or says more or less). A bilingual audit lists those
pairs, by the SHA-1 of each side, in ``held_out_mismatch.tsv`` beside this file (``read_mismatches``);
``drop_mismatches`` takes them out of the written sets and fails on a listed pair that matches
nothing, so a stale list never passes silently. They stay held out: they were never training pairs,
and pairs near them still leave training.
"""
from __future__ import annotations

import hashlib
import json
import re
from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Iterable

from ..holdout import write_lines
from .packages import DebPackage, fetch, refuse_excluded, unpack
from .pairing import DocsPair, distinct_pairs
from .sources import SOURCE_NAMES, read_source, source_named

Pair = tuple[str, str]

DEFAULT_PACKAGE_DIR = Path(__file__).resolve().parents[3] / "data" / "docs-packages"  # outside the work tree
CARD_JSON, CARD_MD = "card.json", "card.md"
# Whole sections held out as the documentation dev and test sets (``held_out_sections``): the
# test set is two manuals of different makers and styles, LibreOffice Draw's help (a
# drawing application) and GNOME's system administrator guide; the dev set is LibreOffice Chart's
# help. Their pages are never trained on; pairs near them elsewhere are dropped by build-data.
DOCS_HELD_OUT = {"docs-test": ("libreoffice-help:text/sdraw", "gnome-user-docs:system-admin-guide"),
                 "docs-dev": ("libreoffice-help:text/schart",)}
# The audit of those sets' references (``read_mismatches``): pairs whose German is no translation.
HELD_OUT_MISMATCH = Path(__file__).resolve().parent / "held_out_mismatch.tsv"
MISMATCH_REASONS = ("rewritten", "extra", "missing", "other-paragraph", "untranslated")
MISMATCH_HEADER = ("set", "en_sha1", "de_sha1", "reason")


@dataclass(frozen=True)
class DocsOptions:
    """Which manuals to read and where their packages are kept."""

    package_dir: Path = DEFAULT_PACKAGE_DIR
    sources: tuple[str, ...] = SOURCE_NAMES
    held_out: dict[str, tuple[str, ...]] = field(default_factory=lambda: dict(DOCS_HELD_OUT))  # set -> sections
    mismatches: Path | None = HELD_OUT_MISMATCH  # pairs of those sets to drop (``read_mismatches``); None: none

    def __post_init__(self) -> None:
        for name in self.sources:
            source_named(name)  # unknown names fail here, before anything is fetched


@dataclass(frozen=True)
class SourceCard:
    """One source's line of the data card."""

    source: str
    packages: tuple[dict[str, str], ...]  # name, version, license of each package
    pairs: int
    words_en: int
    words_de: int
    counts: dict[str, int] = field(default_factory=dict)  # pages, blocks, what was dropped and why


@dataclass(frozen=True)
class DocsCorpus:
    """The pairs of all sources (no exact repeats), the packages read and the counts per source."""

    pairs: tuple[DocsPair, ...]
    packages: dict[str, tuple[DebPackage, ...]]  # source -> its packages
    counts: dict[str, dict[str, int]]  # source -> pages, blocks, rejections, duplicates


def build_docs(options: DocsOptions) -> DocsCorpus:
    """Fetch, unpack and pair every source of ``options``, in order."""
    sources = [source_named(name) for name in options.sources]
    for source in sources:  # refuse before fetching anything
        for name in source.packages:
            refuse_excluded(name)
    packages: dict[str, tuple[DebPackage, ...]] = {}
    counts: dict[str, Counter] = {}
    pairs: list[DocsPair] = []
    for source in sources:
        packages[source.name] = tuple(unpack(fetch(name, options.package_dir), options.package_dir / "unpacked")
                                      for name in source.packages)
        counts[source.name] = Counter()
        pairs += read_source(source, [package.root for package in packages[source.name]], counts[source.name])
    kept = distinct_pairs(pairs, counts)
    return DocsCorpus(tuple(kept), packages, {name: dict(c) for name, c in counts.items()})


def held_out_sections(corpus: DocsCorpus, sets: dict[str, tuple[str, ...]]
                      ) -> tuple[DocsCorpus, dict[str, tuple[DocsPair, ...]]]:
    """``corpus`` less the pairs of the held-out sections, and those pairs per set: ``sets`` maps
    a set name to whole sections (``DocsPair.section``, say ``libreoffice-help:text/sdraw``), so
    a dev or test set is parts of a manual the model never saw a page of. A section named twice
    is refused; a section with no pair is allowed (a package without it gives an empty set)."""
    owner: dict[str, str] = {}
    for name, sections in sets.items():
        for section in sections:
            if section in owner:
                raise ValueError(f"{section}: held out for both {owner[section]} and {name}")
            owner[section] = name
    held: dict[str, list[DocsPair]] = {name: [] for name in sets}
    rest = []
    for pair in corpus.pairs:
        (held[owner[pair.section]] if pair.section in owner else rest).append(pair)
    return DocsCorpus(tuple(rest), corpus.packages, corpus.counts), {name: tuple(p) for name, p in held.items()}


class MismatchListError(ValueError):
    """The audit list is malformed, or names a pair that no held-out set has (a stale list)."""


@dataclass(frozen=True)
class Mismatch:
    """One audited held-out pair whose German reference is no translation of its English."""

    split: str  # the held-out set, ``docs-test`` or ``docs-dev``
    en_sha1: str  # first 16 hex digits of the SHA-1 of the English line (UTF-8, no newline)
    de_sha1: str
    reason: str  # one of MISMATCH_REASONS
    line: int  # where it is in the list, for errors


def side_sha1(text: str) -> str:
    """The key of one side of a pair in the audit list: the first 16 hex digits of its SHA-1."""
    return hashlib.sha1(text.encode("utf-8")).hexdigest()[:16]


def read_mismatches(path: Path) -> tuple[Mismatch, ...]:
    """The audit list at ``path``: ``set, en_sha1, de_sha1, reason`` a line, tab-separated; ``#``
    comments, blank lines and the header line are skipped. A malformed or repeated line is refused
    with its file and line number."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise MismatchListError(f"{path}: held-out audit list not found") from None
    found: dict[tuple[str, str, str], int] = {}
    entries = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip() or line.startswith("#"):
            continue
        fields = tuple(line.split("\t"))
        if fields == MISMATCH_HEADER:
            continue
        where = f"{path}:{number}"
        if len(fields) != 4:
            raise MismatchListError(f"{where}: expected 4 tab-separated fields ({', '.join(MISMATCH_HEADER)}), "
                                    f"found {len(fields)}")
        split, en_sha1, de_sha1, reason = fields
        for name, value in (("en_sha1", en_sha1), ("de_sha1", de_sha1)):
            if not re.fullmatch(r"[0-9a-f]{16}", value):
                raise MismatchListError(f"{where}: {name} {value!r} is not 16 lower-case hex digits")
        if reason not in MISMATCH_REASONS:
            raise MismatchListError(f"{where}: reason {reason!r} is none of {', '.join(MISMATCH_REASONS)}")
        key = (split, en_sha1, de_sha1)
        if key in found:
            raise MismatchListError(f"{where}: {split} {en_sha1} {de_sha1} is listed already on line {found[key]}")
        found[key] = number
        entries.append(Mismatch(split, en_sha1, de_sha1, reason, number))
    return tuple(entries)


def drop_mismatches(held: dict[str, list[Pair]], mismatches: tuple[Mismatch, ...], path: Path
                    ) -> tuple[dict[str, list[Pair]], dict[str, dict[str, int]]]:
    """Each set of ``held`` less its pairs listed in ``mismatches`` (read from ``path``), and per
    set how many were dropped for each reason. A listed pair that is not in its set, or a set
    that is not in ``held``, fails with the file, line and hashes: the list is stale."""
    wanted: dict[str, dict[Pair, Mismatch]] = {}
    for entry in mismatches:
        wanted.setdefault(entry.split, {})[(entry.en_sha1, entry.de_sha1)] = entry
    kept: dict[str, list[Pair]] = {}
    dropped: dict[str, dict[str, int]] = {}
    matched: set[Mismatch] = set()
    for name, pairs in held.items():
        listed = wanted.get(name, {})
        kept[name], dropped[name] = [], {}
        for pair in pairs:
            entry = listed.get((side_sha1(pair[0]), side_sha1(pair[1])))
            if entry is None:
                kept[name].append(pair)
            else:
                matched.add(entry)
                dropped[name][entry.reason] = dropped[name].get(entry.reason, 0) + 1
    dropped = {name: {reason: counts[reason] for reason in MISMATCH_REASONS if reason in counts}
               for name, counts in dropped.items()}
    stale = [entry for entry in mismatches if entry not in matched]
    if stale:
        shown = "; ".join(f"line {e.line}: {e.split} {e.en_sha1} {e.de_sha1} ({e.reason})" for e in stale[:5])
        more = f" and {len(stale) - 5} more" if len(stale) > 5 else ""
        sets = ", ".join(held) or "none built"
        raise MismatchListError(f"{path}: {len(stale)} listed pair(s) match no pair of their held-out set ({sets})"
                                f" - {shown}{more}; the list is stale: audit the sets again and rewrite it, "
                                "or build with --docs-audit none")
    return kept, dropped


def write_tagged(pairs: Iterable[DocsPair], directory: Path, prefix: str) -> None:
    """Write ``prefix.tagged.{en,de}.gz``: the tagged copies of ``pairs``, line for line."""
    pairs = list(pairs)
    directory.mkdir(parents=True, exist_ok=True)
    for language, side in (("en", "en_tagged"), ("de", "de_tagged")):
        write_lines(directory / f"{prefix}.tagged.{language}.gz", [getattr(p, side) for p in pairs])


def kept_only(corpus: DocsCorpus, kept: Iterable[tuple[str, str]]) -> DocsCorpus:
    """``corpus`` with only the pairs whose plain (English, German) is in ``kept`` (what was left
    after dropping the pairs near a held-out set), their tagged copies with them; each source's
    counts gain ``near_held_out``."""
    keep = set(kept)
    pairs = tuple(p for p in corpus.pairs if p.plain in keep)
    dropped = Counter(p.source for p in corpus.pairs) - Counter(p.source for p in pairs)
    counts = {source: {**c, "near_held_out": dropped[source]} for source, c in corpus.counts.items()}
    return DocsCorpus(pairs, corpus.packages, counts)


def data_card(corpus: DocsCorpus) -> list[SourceCard]:
    """Per source: its packages (name, version, license), pairs and words on each side."""
    cards = []
    for source, packages in corpus.packages.items():
        pairs = [p for p in corpus.pairs if p.source == source]
        cards.append(SourceCard(
            source, tuple({"name": p.name, "version": p.version, "license": p.license} for p in packages), len(pairs),
            sum(len(p.en.split()) for p in pairs), sum(len(p.de.split()) for p in pairs),
            corpus.counts.get(source, {})))
    return cards


def write_docs(corpus: DocsCorpus, directory: Path, prefix: str = "train",
               held_out: dict[str, dict[str, Any]] | None = None, audit_list: str | None = None) -> list[SourceCard]:
    """Write ``prefix.{en,de}.gz`` (plain), ``prefix.tagged.{en,de}.gz`` (line for line the same
    pairs with inline markup) and the data card (``card.json``, ``card.md``) into ``directory``.
    ``held_out``: per dev/test set its ``sections``, ``pairs`` written and ``audit_dropped`` (reason
    -> pairs dropped by the audit list ``audit_list``; None: no list was applied), for the card."""
    directory.mkdir(parents=True, exist_ok=True)
    for language in ("en", "de"):
        write_lines(directory / f"{prefix}.{language}.gz", [getattr(p, language) for p in corpus.pairs])
    write_tagged(corpus.pairs, directory, prefix)
    cards = data_card(corpus)
    held_out = held_out or {}
    card = {"sources": [asdict(c) for c in cards], "held_out": held_out, "audit_list": audit_list}
    (directory / CARD_JSON).write_text(json.dumps(card, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    (directory / CARD_MD).write_text(card_markdown(cards, held_out, audit_list), encoding="utf-8")
    return cards


def card_markdown(cards: list[SourceCard], held_out: dict[str, dict[str, Any]] | None = None,
                  audit_list: str | None = None) -> str:
    """The data card as a markdown section, with the dev and test sets when ``held_out`` names them."""
    lines = ["## Documentation corpus", "",
             "English/German pairs from Debian's documentation packages (fetched with `apt-get download` at build "
             "time), paired by id or by element sequence, split into sentences where both sides have as many; "
             "identical and untranslated pairs, exact repeats and pairs near a dev or test set dropped. "
             "`train.tagged.*` holds the same pairs with their inline markup.", "",
             "| source | package | version | license | pairs | English words | German words |",
             "|---|---|---|---|---:|---:|---:|"]
    for card in cards:
        for number, package in enumerate(card.packages):
            counts = (f"{card.pairs:,} | {card.words_en:,} | {card.words_de:,}" if number == 0 else " | | ")
            lines.append(f"| {card.source if number == 0 else ''} | {package['name']} | {package['version']} | "
                         f"{package['license']} | {counts} |")
    total = (sum(c.pairs for c in cards), sum(c.words_en for c in cards), sum(c.words_de for c in cards))
    lines.append(f"| all | | | | {total[0]:,} | {total[1]:,} | {total[2]:,} |")
    if held_out:
        audit = (f"pairs whose German reference is not a translation of the English (rewritten, a clause or sentence "
                 f"added or missing, another paragraph's, untranslated), found by a bilingual audit and listed in "
                 f"`{audit_list}`, are dropped from them (they stay held out: never trained on, and pairs near them "
                 f"still leave training)." if audit_list else "no audit list was applied.")
        lines += ["", "### Dev and test sets", "",
                  f"Whole manual sections, never trained on, less pairs near another held-out set; {audit}", "",
                  "| set | sections | pairs | dropped by the audit |", "|---|---|---:|---:|"]
        for name, held in held_out.items():
            reasons = held.get("audit_dropped")
            dropped = ("not audited" if reasons is None else
                       f"{sum(reasons.values()):,}" + (f" ({', '.join(f'{n} {r}' for r, n in reasons.items())})"
                                                       if reasons else ""))
            sections = ", ".join(f"`{section}`" for section in held["sections"])
            lines.append(f"| {name} | {sections} | {held['pairs']:,} | {dropped} |")
    return "\n".join(lines) + "\n"
