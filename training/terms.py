"""A term list mined from gettext UI catalogues: the German a program's interface gives its short
labels (menu items, buttons, key names: 1-4 words), kept only where the translators agree on one
form, written as a glossary file (``source<TAB>target`` lines, the format of queue_config.glossary).

Labels are compared after removing what only the interface needs: the accelerator mark (GTK's
``_Save``, Qt's ``&Save``), a trailing colon and a trailing ellipsis (``Save _As...`` is the term
``Save As``). English labels that differ only in case or spacing are one term, because glossary
terms match that way. Only the training catalogues are read: mining a held-out catalogue (the
software dev and test sets) is refused, and catalogues of names (ISO languages and countries,
keyboard layouts) are left out by default.

    python -m training.terms --out /tmp/ui-terms.tsv [--catalogues /usr/share/locale/de/LC_MESSAGES]
"""
from __future__ import annotations

import argparse
import re
import sys
from collections import Counter, defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Iterator

from .corpus import CorpusError
from .gettext_catalogues import (DEFAULT_CATALOGUE_DIR, SOFTWARE_DEV, SOFTWARE_TEST, SOFTWARE_TRAIN,
                                 find_catalogues)

KEYBOARD_LABEL = "keyboard label"  # GTK's context for key names ("Page_Up": the underscore is a space)
# Catalogues of names rather than interface text (languages, countries, currencies, scripts, keyboard
# layouts): thousands of entries, many of them English words in another sense ("Even", a language).
NAME_CATALOGUES = frozenset(name for name in SOFTWARE_TRAIN if name.startswith("iso_")) | {"xkeyboard-config"}
UI_CATALOGUES = tuple(name for name in SOFTWARE_TRAIN if name not in NAME_CATALOGUES)
_IDENTIFIER = re.compile(r"[a-z0-9]+(?:_[a-z0-9]+)+")  # de_lld, page_setup: not a label
_ACCELERATOR = re.compile(r"_(?=\S)|&(?=[^\W_])")  # the mark before the access key
_TRAILING = re.compile(r"(?:\s*(?:\.\.\.|…|:))+$")
_NOT_A_LABEL = re.compile(r"[%{}<>\\/=|@#$*\[\]\"]|--|\s-\S")  # placeholders, markup, paths, options
_SENTENCE_END = re.compile(r"[.!?;,]$")
_LETTER = re.compile(r"[^\W\d_]")
# Function words: a one-word "term" of these ("or" -> "oder", "a" -> "a") would pin down every sentence.
FUNCTION_WORDS = frozenset("""a an the and or nor but if then else so as at by for from in into of off on onto out over
to up with without via per than that this these those there here is are was were be been being am do does did done
has have had will would can could shall should may might must not no yes it its he she they we you i me my your our
their his her him them us what which who whom whose when where why how all any some each every both either neither
none one""".split())
_SHOUTED = re.compile(r"[A-Z]{4,}(?:[ _-][A-Z]+)*")  # FORMAT, COLORS: a --help metavariable, not a label


@dataclass(frozen=True)
class MiningOptions:
    """Which catalogue labels become terms."""

    max_words: int = 4  # longer messages are sentences, not labels
    min_share: float = 0.75  # the dominant German form's share of the label's translations
    min_count: int = 1  # translations seen (over all training catalogues) before a label is a term
    capitalised: bool = False  # only English labels that start with a capital (measured: fewer right terms)
    keep_identical: bool = True  # labels the translators leave as they are (OK, GNOME, Alt) are terms too
    key_labels: bool = True  # GTK's key names (context "keyboard label": Ctrl -> Strg, but also Insert -> Einfg)

    def validate(self) -> "MiningOptions":
        if self.max_words < 1 or self.min_count < 1 or not 0.5 < self.min_share <= 1:
            raise ValueError(f"mining options out of range: {self}")
        return self


@dataclass(frozen=True)
class Message:
    """One translated catalogue entry."""

    catalogue: str
    context: str | None
    source: str
    target: str


@dataclass(frozen=True)
class Term:
    """A mined term: the English label as most often written, its dominant German form, and how
    sure that is (``count`` translations of the label, ``share`` of them giving ``target``)."""

    source: str
    target: str
    count: int
    share: float
    catalogues: tuple[str, ...]


def label(text: str, context: str | None = None) -> str | None:
    """The label a UI message shows, without accelerator, trailing colon or ellipsis; None for a
    message that is no label (placeholders, markup, paths, options, a sentence, no letter)."""
    text = " ".join(text.split())
    if context == KEYBOARD_LABEL:
        text = text.replace("_", " ")
    if _IDENTIFIER.fullmatch(text):
        return None
    text = _ACCELERATOR.sub("", text.replace("&&", "\0"), count=1).replace("\0", "&")
    text = _TRAILING.sub("", text).strip()
    if not text or "_" in text or _NOT_A_LABEL.search(text) or _SENTENCE_END.search(text):
        return None
    if not _LETTER.search(text) or not (text[0].isalnum()):
        return None
    return text


def catalogue_messages(path: Path, name: str = "") -> Iterator[Message]:
    """The translated, non-fuzzy singular entries of one ``.mo`` catalogue, identical ones included
    (an untranslated-looking "OK" -> "OK" is what the translators chose)."""
    import polib  # the core install (worker, client) does without it

    try:
        catalogue = polib.mofile(str(path))
    except (OSError, ValueError) as exc:
        raise CorpusError(f"{path}: not a readable .mo catalogue: {exc}") from None
    for entry in catalogue:
        if entry.msgid and not entry.msgid_plural and entry.msgstr and "fuzzy" not in entry.flags:
            yield Message(name or Path(path).stem, entry.msgctxt, entry.msgid, entry.msgstr)


def mine_terms(messages: Iterable[Message], options: MiningOptions = MiningOptions()) -> list[Term]:
    """Terms from catalogue messages, sorted by English label: each short label whose German is
    one form in at least ``min_share`` of its translations."""
    options.validate()
    targets: dict[str, Counter] = defaultdict(Counter)  # key -> German form -> count
    spellings: dict[str, Counter] = defaultdict(Counter)  # key -> English form -> count
    sources: dict[str, set[str]] = defaultdict(set)  # key -> catalogues
    for message in messages:
        if message.context == KEYBOARD_LABEL and not options.key_labels:
            continue
        english = label(message.source, message.context)
        if (english is None or _SHOUTED.fullmatch(english) or english.casefold() in FUNCTION_WORDS
                or len(english.split()) > options.max_words):
            continue
        if options.capitalised and not english[0].isupper():
            continue
        german = label(message.target, message.context)
        if german is None:
            continue
        key = " ".join(english.casefold().split())  # how a glossary matches: any case, any spacing
        targets[key][german] += 1
        spellings[key][english] += 1
        sources[key].add(message.catalogue)
    terms = []
    for key, forms in targets.items():
        (german, top), total = forms.most_common(1)[0], sum(forms.values())
        english = spellings[key].most_common(1)[0][0]
        if total < options.min_count or top / total < options.min_share:
            continue
        if german == english and not options.keep_identical:
            continue
        terms.append(Term(english, german, total, round(top / total, 3), tuple(sorted(sources[key]))))
    return sorted(terms, key=lambda t: (t.source.casefold(), t.source))


def training_catalogues(directory: Path = DEFAULT_CATALOGUE_DIR,
                        names: Iterable[str] = UI_CATALOGUES) -> dict[str, Path]:
    """``name -> path`` of the training catalogues found in ``directory`` (by default those of
    interface text, ``UI_CATALOGUES``); naming a held-out one (a software dev or test catalogue)
    is an error."""
    names = tuple(names)
    held = sorted(set(names) & set(SOFTWARE_DEV + SOFTWARE_TEST))
    if held:
        raise CorpusError(f"held-out catalogues must not be mined for terms: {', '.join(held)}")
    found = find_catalogues(Path(directory))
    return {name: found[name] for name in names if name in found}


def mine_catalogues(directory: Path = DEFAULT_CATALOGUE_DIR, names: Iterable[str] = UI_CATALOGUES,
                    options: MiningOptions = MiningOptions()) -> list[Term]:
    """``mine_terms`` over the training catalogues of ``directory``."""
    catalogues = training_catalogues(directory, names)
    return mine_terms((m for name, path in catalogues.items() for m in catalogue_messages(path, name)), options)


def write_glossary(terms: Iterable[Term], path: Path, header: str = "") -> int:
    """Write ``terms`` as a glossary file (``source<TAB>target``, ``#`` comment lines first);
    the number of terms written."""
    terms = list(terms)
    lines = [f"# {line}" for line in header.splitlines()] if header else []
    lines += [f"{t.source}\t{t.target}" for t in terms]
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text("\n".join(lines) + "\n", encoding="utf-8")
    tmp.replace(path)
    return len(terms)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", required=True, help="the glossary file to write (keep it outside the work tree)")
    parser.add_argument("--catalogues", default=str(DEFAULT_CATALOGUE_DIR), help="directory of German .mo files")
    parser.add_argument("--max-words", type=int, default=MiningOptions.max_words)
    parser.add_argument("--min-share", type=float, default=MiningOptions.min_share)
    parser.add_argument("--min-count", type=int, default=MiningOptions.min_count)
    parser.add_argument("--capitalised", action="store_true", help="only English labels that start with a capital")
    args = parser.parse_args(argv)
    options = MiningOptions(args.max_words, args.min_share, args.min_count, capitalised=args.capitalised)
    catalogues = training_catalogues(Path(args.catalogues))
    terms = mine_catalogues(Path(args.catalogues), tuple(catalogues), options)
    header = (f"UI terms mined from {len(catalogues)} training catalogues in {args.catalogues} "
              f"(python -m training.terms; {options})")
    written = write_glossary(terms, Path(args.out), header)
    print(f"{written} terms from {len(catalogues)} catalogues -> {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
