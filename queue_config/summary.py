"""The one-line summary of a translation's segments that ``nmt translate`` and ``nmt submit``
print: how many segments, and how many carry each flag, e.g.
"1,204 segments, 37 flagged low_confidence, 2 language, 1 repetition; mean confidence 0.62".

It reads the JSON result of documents (``segments``: each with ``flags`` and ``confidence``),
so the client, which never imports the worker, prints the same line as the local CLI.
"""
from __future__ import annotations

from collections import Counter
from typing import Any, Iterable, Mapping

# The order flags are listed in: what most often needs a reader first.
FLAG_ORDER = ("low_confidence", "language", "span_mismatch", "untranslated_span", "repetition", "restored_span",
              "glossary_miss")


class FlagSummary:
    """Counts accumulated over any number of documents' segments."""

    def __init__(self) -> None:
        self.segments = 0
        self.flagged = 0
        self.flags: Counter[str] = Counter()  # segments carrying each flag
        self.with_confidence = 0  # segments that have a confidence
        self._confidence_sum = 0.0

    def add(self, segments: Iterable[Mapping[str, Any]]) -> "FlagSummary":
        for segment in segments:
            self.segments += 1
            flags = segment.get("flags") or ()
            self.flagged += bool(flags)
            self.flags.update(set(flags))
            if segment.get("confidence") is not None:
                self._confidence_sum += float(segment["confidence"])
                self.with_confidence += 1
        return self

    @property
    def mean_confidence(self) -> float | None:
        return self._confidence_sum / self.with_confidence if self.with_confidence else None

    def line(self) -> str:
        parts = [f"{self.segments:,} segment{'s' if self.segments != 1 else ''}"]
        names = [f for f in FLAG_ORDER if self.flags[f]] + sorted(f for f in self.flags if f not in FLAG_ORDER)
        if names:
            first, *rest = names
            parts.append(f"{self.flags[first]:,} flagged {first}")
            parts += [f"{self.flags[name]:,} {name}" for name in rest]
        else:
            parts.append("none flagged")
        text = ", ".join(parts)
        if self.mean_confidence is not None:
            text += f"; mean confidence {self.mean_confidence:.2f}"
        return text
