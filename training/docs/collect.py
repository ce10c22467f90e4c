"""The documentation corpus of ``nmt build-data``: every source of ``training.docs.sources``
fetched, unpacked and paired, exact repeats dropped; and what is written of it, plain and tagged
pair files and the data card (package, version, license, pairs and words per source).

Pairs near a dev or test set are dropped by ``training.build_data`` (as for every training
corpus); ``kept_only`` then applies its choice to the tagged copy.
"""
from __future__ import annotations

import json
from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Iterable

from ..holdout import write_lines
from .packages import DebPackage, fetch, refuse_excluded, unpack
from .pairing import DocsPair, distinct_pairs
from .sources import SOURCE_NAMES, read_source, source_named

DEFAULT_PACKAGE_DIR = Path(__file__).resolve().parents[3] / "data" / "docs-packages"  # outside the work tree
CARD_JSON, CARD_MD = "card.json", "card.md"
# Whole sections held out as the documentation dev and test sets (``held_out_sections``): the
# test set is two manuals of different makers and styles, LibreOffice Draw's help (a
# drawing application) and GNOME's system administrator guide; the dev set is LibreOffice Chart's
# help. Their pages are never trained on; pairs near them elsewhere are dropped by build-data.
DOCS_HELD_OUT = {"docs-test": ("libreoffice-help:text/sdraw", "gnome-user-docs:system-admin-guide"),
                 "docs-dev": ("libreoffice-help:text/schart",)}


@dataclass(frozen=True)
class DocsOptions:
    """Which manuals to read and where their packages are kept."""

    package_dir: Path = DEFAULT_PACKAGE_DIR
    sources: tuple[str, ...] = SOURCE_NAMES
    held_out: dict[str, tuple[str, ...]] = field(default_factory=lambda: dict(DOCS_HELD_OUT))  # set -> sections

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


def write_docs(corpus: DocsCorpus, directory: Path, prefix: str = "train") -> list[SourceCard]:
    """Write ``prefix.{en,de}.gz`` (plain), ``prefix.tagged.{en,de}.gz`` (line for line the same
    pairs with inline markup) and the data card (``card.json``, ``card.md``) into ``directory``."""
    directory.mkdir(parents=True, exist_ok=True)
    for language in ("en", "de"):
        write_lines(directory / f"{prefix}.{language}.gz", [getattr(p, language) for p in corpus.pairs])
    write_tagged(corpus.pairs, directory, prefix)
    cards = data_card(corpus)
    (directory / CARD_JSON).write_text(json.dumps([asdict(c) for c in cards], indent=1, ensure_ascii=False) + "\n",
                                       encoding="utf-8")
    (directory / CARD_MD).write_text(card_markdown(cards), encoding="utf-8")
    return cards


def card_markdown(cards: list[SourceCard]) -> str:
    """The data card as a markdown section."""
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
    return "\n".join(lines) + "\n"
