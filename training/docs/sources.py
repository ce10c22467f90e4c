"""The manuals the documentation corpus reads: for each, the Debian packages that hold the English
and German pages, where the English pages lie, how a German page's path follows from its English
one, and the markup dialect (``training.docs.markup``) that finds their blocks.
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from .markup import GUIDE_HTML, LIBREOFFICE, MALLARD, Dialect, page_blocks, parse_page
from .packages import refuse_excluded
from .pairing import DocsPair, page_pairs


@dataclass(frozen=True)
class DocsSource:
    """One manual in English and German.

    ``english`` is a glob of the English pages relative to the root the packages unpack into
    (each package unpacks into a root of its own), ``base`` the directory the sections are
    named from, ``german`` the (old, new) replacements, in order, that turn an English page's path
    into its German one, and a page's section is the first ``section_parts`` parts of its path
    under ``base``. A manual that also ships as one page (developers-reference.html) is read
    from its chapters only: a held-out chapter must not stay in training through the copy.
    """

    name: str
    packages: tuple[str, ...]
    base: str
    english: str
    german: tuple[tuple[str, str], ...]
    dialect: Dialect
    section_parts: int = 1
    skip_pages: tuple[str, ...] = ()  # file names left out (a single-page copy of the whole manual, a search page)

    def __post_init__(self) -> None:
        for package in self.packages:
            refuse_excluded(package)

    def german_path(self, english: str) -> str:
        for old, new in self.german:
            english = english.replace(old, new)
        return english

    def section(self, english: str) -> str:
        parts = PurePosixPath(english).relative_to(self.base).parts
        return f"{self.name}:{'/'.join(parts[:self.section_parts])}"


SOURCES = (
    # LibreOffice's help: every paragraph, heading and cell has an id (par_id..., hd_id...).
    DocsSource("libreoffice-help", ("libreoffice-help-en-us", "libreoffice-help-de"),
               "usr/share/libreoffice/help/en-US", "usr/share/libreoffice/help/en-US/text/**/*.html",
               (("/help/en-US/", "/help/de/"),), LIBREOFFICE, 2),
    # GNOME's desktop help and system administrator guide (Mallard; translations by itstool).
    DocsSource("gnome-user-docs", ("gnome-user-docs",), "usr/share/help/C", "usr/share/help/C/*/*.page",
               (("/help/C/", "/help/de/"),), MALLARD),
    # Debian's guides (DocBook or Sphinx HTML; translations by po4a or Sphinx): a section is a chapter's page.
    DocsSource("debian-reference", ("debian-reference-en", "debian-reference-de"), "usr/share/debian-reference",
               "usr/share/debian-reference/*.en.html", ((".en.html", ".de.html"),), GUIDE_HTML),
    DocsSource("developers-reference", ("developers-reference", "developers-reference-de"),
               "usr/share/developers-reference", "usr/share/developers-reference/*.html",
               (("/developers-reference/", "/developers-reference/de/"),), GUIDE_HTML,
               skip_pages=("developers-reference.html", "search.html", "genindex.html")),
    DocsSource("maint-guide", ("maint-guide", "maint-guide-de"), "usr/share/doc/maint-guide/html",
               "usr/share/doc/maint-guide/html/*.en.html",
               (("/maint-guide/", "/maint-guide-de/"), (".en.html", ".de.html")), GUIDE_HTML),
    DocsSource("debian-handbook", ("debian-handbook",), "usr/share/doc/debian-handbook/html/en-US",
               "usr/share/doc/debian-handbook/html/en-US/*.html", (("/html/en-US/", "/html/de-DE/"),), GUIDE_HTML),
    DocsSource("debian-edu-manual", ("debian-edu-doc-en", "debian-edu-doc-de"), "usr/share/doc/debian-edu-doc-en",
               "usr/share/doc/debian-edu-doc-en/debian-edu-bookworm-manual.html",
               (("/debian-edu-doc-en/", "/debian-edu-doc-de/"),), GUIDE_HTML),
)
SOURCE_NAMES = tuple(source.name for source in SOURCES)


def source_named(name: str) -> DocsSource:
    for source in SOURCES:
        if source.name == name:
            return source
    raise ValueError(f"unknown documentation source {name!r} (known: {', '.join(SOURCE_NAMES)})")


def read_source(source: DocsSource, roots: list[Path], counts: Counter) -> list[DocsPair]:
    """The pairs of every English page of ``source`` that has a German page, in path order; the
    pages lie under any of ``roots`` (one per package). ``counts`` gains pages_without_german and
    the counts of ``page_pairs``."""
    english_pages = {page.relative_to(root).as_posix(): page for root in roots for page in root.glob(source.english)
                     if page.name not in source.skip_pages}
    pairs: list[DocsPair] = []
    for relative, english in sorted(english_pages.items()):
        german = next((root / source.german_path(relative) for root in roots
                       if (root / source.german_path(relative)).is_file()), None)
        if german is None:
            counts["pages_without_german"] += 1
            continue
        blocks_en = page_blocks(parse_page(english, source.dialect), source.dialect)
        blocks_de = page_blocks(parse_page(german, source.dialect), source.dialect)
        pairs += page_pairs(blocks_en, blocks_de, source.dialect.keyed_by_id, source.name, source.section(relative),
                            counts)
    return pairs
