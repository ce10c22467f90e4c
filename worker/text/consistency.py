"""Whether a hypothesis of the beam carries its source's spans as they are, so the engine can
prefer one that does to a better-scoring one that does not (``Translator``'s consistency pick).

A hypothesis is span-consistent when

- the stand-ins of the masked spans (worker.text.masking) stand in it exactly as often as in the
  decoded text, once each: none lost, none doubled, none added; and
- every span-like token of its restored text (``find_spans``, the detector the masking uses) is
  the source's: a text of the source, or one joined to a German word by a hyphen
  (``--filter-Option``), and no more often than the source has it. Words the model makes up that
  look like spans are not: ``--filterle`` from ``filter --``, ``geArchivt``, ``demSSQL``, a number
  the source never had or has once (``s 12 12,18d`` for ``sed 12,18d``).

Names and glossary terms (kept slots) are the glossary's and the names' business, not this check's.
"""
from __future__ import annotations

import re
from collections import Counter

from .masking import Masked, stand_in_pattern
from .spans import find_spans

# A German word (or words) joined by a hyphen after a span: ``--filter-Option``, ``UTF-8-kodiert``
_COMPOUND_TAIL = re.compile(r"(?<=[^\W_]|[.)/])-[^\W\d_]+(?:-[^\W\d_]+)*$")
# ... or before it: ``Python-3.11``, ``GNU-grep``
_COMPOUND_HEAD = re.compile(r"^[^\W\d_]+-(?=[^\W_])")


def stand_ins_kept(masked: Masked, decoded: str) -> bool:
    """Whether ``decoded`` (the model's text, before restoring) holds each stand-in of ``masked``
    exactly once and no other one: the spans all come back copied, in no doubt."""
    stand_ins = [slot.stand_in for slot in masked.slots if not slot.kept]
    if not stand_ins:
        return True
    found = Counter(m.group("stand_in") for m in stand_in_pattern(stand_ins).finditer(decoded))
    return found == Counter(stand_ins)


def invented_spans(source: str, translation: str) -> list[str]:
    """The span-like tokens of ``translation`` that are not its source's (in text order): not in
    the source, or more often in the translation than in the source (``s 12 12,18d`` for
    ``sed 12,18d``)."""
    out = []
    for span in find_spans(translation):
        text = span.text
        if text not in source:
            tail, head = _COMPOUND_TAIL.search(text), _COMPOUND_HEAD.match(text)
            if tail and text[:tail.start()] in source:
                text = text[:tail.start()]
            elif head and text[head.end():] in source:
                text = text[head.end():]
            else:
                out.append(span.text)
                continue
        if translation.count(text) > source.count(text):
            out.append(span.text)
    return out


def span_consistent(masked: Masked | None, decoded: str, translation: str) -> bool:
    """Whether a hypothesis (``decoded``, the model's text; ``translation``, it with case and spans
    restored) keeps every stand-in once and makes up no span-like token of its own: none in the
    model's text that the masked text lacks, none in the restored one that the source lacks.
    Without masking (span protection off) every hypothesis is."""
    if masked is None:
        return True
    # a span written in another form (a key span's German names: Strg+F6) is the source's too
    source = masked.source + "".join("\n" + s.span.replacement for s in masked.slots
                                     if not s.kept and s.span.replacement != s.span.text)
    return stand_ins_kept(masked, decoded) and not invented_spans(masked.text, decoded) \
        and not invented_spans(source, translation)
