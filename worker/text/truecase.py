"""The usual case of words, for text that arrives all in lower case (a lower-cased, tokenized corpus
given to ``nmt align``): the model reads "die europäische kommission" poorly and "die europäische
Kommission" well. ``FormCounts`` learns each word's most frequent written form from training text,
leaving out words that open a sentence; ``CaseTable.recase`` gives a text without capitals those
forms back and capitalises the first word of each sentence. Every change keeps the length of the
text, so word and character offsets stay valid.
"""
from __future__ import annotations

import collections
import gzip
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Mapping

from .casing import upper_char

_RUN = re.compile(r"[^\W\d_]+")  # a run of letters: "eu-kommission" holds two
# A word after one that ends so opens a sentence (or a quotation): its capital says nothing.
_OPENS_AFTER = frozenset(".!?:\"'„“«»")
MIN_COUNT = 2  # a form seen once is not a word's usual form


class FormCounts:
    """How often each word appears in each written form, away from a sentence's start."""

    def __init__(self) -> None:
        self.counts: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)

    def add(self, line: str) -> None:
        previous = ""
        for word in line.split():
            if previous and previous[-1] not in _OPENS_AFTER:
                for run in _RUN.findall(word):
                    self.counts[run.lower()][run] += 1
            previous = word

    def forms(self, min_count: int = MIN_COUNT) -> list[str]:
        """The words whose most frequent form is not all lower case ("Haus", "EU", "iPhone"), seen
        at least ``min_count`` times; sorted."""
        forms = []
        for lower, seen in self.counts.items():
            form, n = seen.most_common(1)[0]
            if form != lower and n >= min_count and n > seen[lower] and len(form) == len(lower):
                forms.append(form)
        return sorted(forms)


@dataclass(frozen=True)
class CaseTable:
    """lower-case word -> its usual form, per side of a language pair."""
    source: Mapping[str, str]
    target: Mapping[str, str]

    @classmethod
    def of(cls, source_forms: Iterable[str], target_forms: Iterable[str]) -> "CaseTable":
        return cls(*({form.lower(): form for form in forms if len(form.lower()) == len(form)}
                     for forms in (source_forms, target_forms)))

    @classmethod
    def load(cls, path: Path) -> "CaseTable":
        """A bundle's table (``write``): gzipped JSON {"source": [forms], "target": [forms]}."""
        with gzip.open(path, "rt", encoding="utf-8") as f:
            data = json.load(f)
        return cls.of(data["source"], data["target"])

    @staticmethod
    def write(path: Path, source_forms: Iterable[str], target_forms: Iterable[str]) -> None:
        text = json.dumps({"source": sorted(source_forms), "target": sorted(target_forms)}, ensure_ascii=False)
        with open(path, "wb") as raw, gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0) as f:
            f.write(text.encode("utf-8"))  # no name or time stamp inside: the same table, the same bytes

    def recase(self, text: str, side: str) -> str:
        """``text`` with each word in its usual form and each sentence's first word capitalised,
        when it has no capital letter at all; otherwise unchanged (its case is the writer's).
        ``side``: "source" or "target"."""
        if any(c.isupper() for c in text):
            return text
        forms = self.source if side == "source" else self.target
        words = []
        opens = True
        for word in text.split(" "):
            def form(match: re.Match) -> str:
                nonlocal opens
                run = forms.get(match.group(), match.group())
                if opens:
                    opens = False
                    run = upper_char(run[0]) + run[1:]
                return run
            words.append(_RUN.sub(form, word))
            if word and word[-1] in ".!?:":
                opens = True
        return " ".join(words)
