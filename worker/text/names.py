"""Names in the source (people, companies, places, products) that a translation must carry.

``find_names`` finds runs of capitalised words that are names: not a word the English corpora
write in lower case (``english_words.COMMON``: "Apply" opening a sentence, "the President"), not
one whose German translation differs as a rule (``english_words.TRANSLATED``: "Monday", "German"),
not an honorific. A place or person with a known German form (``GERMAN_FORMS``: Munich ->
München, Mary -> Maria) is a name whose translation is that form: either spelling in the output
counts as kept, and only when neither is there is the German form put in.

The pipeline leaves names in the text the model decodes, as kept slots (kind ``KEPT_NAME``, the
form to restore as ``Span.target``); after decoding, one missing from the translation (neither
the name nor a German form of it) is put back through the alignment in place of the model's
rendering of it, else inserted (``worker.text.reinsert``, as a glossary term), and the segment
is flagged ``restored_span``.
"""
from __future__ import annotations

import gzip
import re
import sys
import textwrap
from bisect import bisect_left
from collections import Counter
from itertools import accumulate
from typing import Sequence

from .english_words import COMMON, TRANSLATED
from .spans import Span

KEPT_NAME = "name"  # the span kind of a name: left in the text, restored through the alignment when missing

# English names of places (and a few people) with a German form; the first is the one put in.
GERMAN_FORMS: dict[str, tuple[str, ...]] = {
    "Munich": ("München",), "Cologne": ("Köln",), "Vienna": ("Wien",), "Rome": ("Rom",), "Venice": ("Venedig",),
    "Milan": ("Mailand",), "Naples": ("Neapel",), "Florence": ("Florenz",), "Turin": ("Turin",),
    "Prague": ("Prag",), "Warsaw": ("Warschau",), "Moscow": ("Moskau",), "Lisbon": ("Lissabon",),
    "Brussels": ("Brüssel",), "Copenhagen": ("Kopenhagen",), "Athens": ("Athen",), "Nuremberg": ("Nürnberg",),
    "Hanover": ("Hannover",), "Zurich": ("Zürich",), "Geneva": ("Genf",), "Lucerne": ("Luzern",),
    "Belgrade": ("Belgrad",), "Bucharest": ("Bukarest",), "Kiev": ("Kiew",), "Kyiv": ("Kiew",),
    "Beijing": ("Peking",), "Cairo": ("Kairo",), "Gothenburg": ("Göteborg",), "Krakow": ("Krakau",),
    "Cracow": ("Krakau",), "Bavaria": ("Bayern",), "Saxony": ("Sachsen",), "Hesse": ("Hessen",),
    "Thuringia": ("Thüringen",), "Swabia": ("Schwaben",), "Franconia": ("Franken",), "Tyrol": ("Tirol",),
    "Styria": ("Steiermark",), "Carinthia": ("Kärnten",), "Bohemia": ("Böhmen",), "Moravia": ("Mähren",),
    "Silesia": ("Schlesien",), "Rhine": ("Rhein",), "Danube": ("Donau",), "Moselle": ("Mosel",),
    "Alps": ("Alpen",), "Lviv": ("Lwiw", "Lemberg"), "Tbilisi": ("Tiflis",), "Antwerp": ("Antwerpen",),
    "Bruges": ("Brügge",), "Ghent": ("Gent",), "Strasbourg": ("Straßburg",), "Basle": ("Basel",),
    "Germany": ("Deutschland",), "Austria": ("Österreich",), "Switzerland": ("Schweiz",),
    "Italy": ("Italien",), "Spain": ("Spanien",), "France": ("Frankreich",), "Poland": ("Polen",),
    "Russia": ("Russland",), "Greece": ("Griechenland",), "Turkey": ("Türkei",), "Sweden": ("Schweden",),
    "Norway": ("Norwegen",), "Denmark": ("Dänemark",), "Finland": ("Finnland",), "Belgium": ("Belgien",),
    "Netherlands": ("Niederlande",), "Europe": ("Europa",), "Mary": ("Maria",), "Mexico": ("Mexiko",),
}
HONORIFICS = frozenset("Mr Mrs Ms Miss Dr Prof Sir Madam Mister St I".split())
_WORD = re.compile(r"[^\W\d_](?:[\w'’-]*\w)?")
_POSSESSIVE = re.compile(r"['’]s?$")


def _overlap_test(ranges: Sequence[tuple[int, int]]):
    """``overlaps(start, end)``: whether [start, end) overlaps any of ``ranges``, in log time (a
    line may hold thousands of spans)."""
    ordered = sorted(ranges)
    starts = [a for a, _ in ordered]
    reach = list(accumulate((b for _, b in ordered), max))  # the furthest end among the first k ranges

    def overlaps(start: int, end: int) -> bool:
        k = bisect_left(starts, end)  # ranges[:k] start before ``end``
        return k > 0 and reach[k - 1] > start

    return overlaps


def find_names(sentence: str, taken: Sequence[tuple[int, int]] = ()) -> list[Span]:
    """The names of ``sentence`` outside the ``taken`` ranges, as KEPT_NAME spans (a run of name
    words is one span; its ``target`` is its German form, if it has one, else itself)."""
    overlaps = _overlap_test(taken)
    words = [(m.start(), m.end()) for m in _WORD.finditer(sentence) if not overlaps(m.start(), m.end())]
    runs: list[list[tuple[int, int]]] = []
    joinable = False  # whether the next name word continues the last run ("Priya Raman")
    for k, (a, b) in enumerate(words):
        word = _POSSESSIVE.sub("", sentence[a:b])
        if not all(_is_name(part) for part in word.split("-")):  # African-American: no
            joinable = False
            continue
        own = word in GERMAN_FORMS
        if joinable and not own and sentence[runs[-1][-1][1]:a] == " ":
            runs[-1].append((a, a + len(word)))
        else:
            runs.append([(a, a + len(word))])
        joinable = not own and len(word) == b - a
    spans = []
    for run in runs:
        a, b = run[0][0], run[-1][1]
        text = sentence[a:b]
        spans.append(Span(KEPT_NAME, a, b, text, GERMAN_FORMS.get(text, (text,))[0]))
    return spans


def _is_name(word: str) -> bool:
    """A capitalised word that is not an ordinary English word (at a sentence's start as elsewhere)."""
    inner = any(c.isupper() for c in word[1:])  # ThinkPad, WordPress, DHL, iPhone, eBay
    if not (word[:1].isupper() or inner) or word in HONORIFICS or word in TRANSLATED and word not in GERMAN_FORMS:
        return False
    if word in GERMAN_FORMS:
        return True
    return (inner and not word.isupper()) or word.lower() not in COMMON


def accepted_forms(name: Span) -> tuple[str, ...]:
    """The spellings of a name that count as kept in a translation: the name, its German forms."""
    return (name.text,) + GERMAN_FORMS.get(name.text, ())


def carried(name: Span, translation: str) -> bool:
    """Whether the translation holds the name or one of its German forms (a genitive s allowed)."""
    return bool(carried_ranges(name, translation))


def carried_ranges(name: Span, translation: str) -> list[tuple[int, int]]:
    """Character [start, end) of each occurrence of the name or a German form of it in the translation."""
    return [m.span() for form in accepted_forms(name)
            for m in re.finditer(r"(?<!\w)" + re.escape(form) + r"s?(?!\w)", translation)]


def carried_names(names: Sequence[Span], translation: str) -> tuple[list[tuple[int, int]], set[Span]]:
    """Of the source's ``names`` (kept in the decoded text), those the translation carries (the
    model wrote them itself, or in a German form) and the character ranges where it does: no span
    put back may replace them."""
    protected: list[tuple[int, int]] = []
    found: set[Span] = set()
    for name in names:
        ranges = carried_ranges(name, translation)
        protected += ranges
        if ranges:
            found.add(name)
    return protected, found


# -- the word lists ----------------------------------------------------------------------------------
def build_word_lists(prefixes: Sequence[str], min_count: int = 5) -> tuple[list[str], list[str]]:
    """COMMON and TRANSLATED (worker.text.english_words) from parallel corpora: each prefix names
    PREFIX.en.gz and PREFIX.de.gz, one sentence a line."""
    lower, capital, in_german = Counter(), Counter(), Counter()
    for prefix in prefixes:
        with gzip.open(prefix + ".en.gz", "rt", encoding="utf-8") as en, \
                gzip.open(prefix + ".de.gz", "rt", encoding="utf-8") as de:
            for source, target in zip(en, de):
                words = _WORD.findall(source)
                german = set(_WORD.findall(target))
                for k, w in enumerate(words):
                    if w.islower():
                        lower[w] += 1
                    elif k and w[0].isupper() and not w.isupper():
                        capital[w] += 1
                        in_german[w] += w in german or w + "s" in german
    common = sorted(w for w, n in lower.items() if n >= min_count and n >= capital[w[0].upper() + w[1:]])
    translated = sorted(w for w, n in capital.items()
                        if n >= min_count and in_german[w] < 0.5 * n and lower[w.lower()] < n)
    return common, translated


def write_word_lists(path: str, prefixes: Sequence[str]) -> None:
    """Write worker/text/english_words.py from the corpora (``build_word_lists``)."""
    common, translated = build_word_lists(prefixes)

    def block(words: list[str]) -> str:
        return "\n".join(textwrap.wrap(" ".join(words), 110))

    with open(path, "w", encoding="utf-8") as out:
        out.write(_WORD_LISTS_HEADER + f'COMMON = frozenset("""\n{block(common)}\n""".split())\n\n'
                  f'TRANSLATED = frozenset("""\n{block(translated)}\n""".split())\n')


_WORD_LISTS_HEADER = '''"""English words for telling names from ordinary words (worker.text.names), counted on the English
sides of the bundles' training corpora (Tatoeba, WMT news, software strings, Multi30k):

- ``COMMON``: words written in lower case at least 5 times, and at least as often as capitalised
  after a sentence's first word ("apply", "office", "windows"): capitalised at a sentence's start,
  or in the middle ("the President"), they are not taken for names.
- ``TRANSLATED``: words capitalised after a sentence's first word at least 5 times whose German
  side holds the same word in fewer than half of the pairs ("Monday", "German", "Munich", "Mary"):
  the translation carries a German form, so they are never restored.

Written by ``python -m worker.text.names OUT.py CORPUS_PREFIX...`` (each prefix with .en.gz and .de.gz).
"""
'''

if __name__ == "__main__":
    write_word_lists(sys.argv[1], sys.argv[2:])
