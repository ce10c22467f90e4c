"""No text lost: a segment with words whose translation has none (empty, or markup and punctuation
only: ``## Usage`` -> ``## ``) keeps its source text, flagged ``KEPT_SOURCE``, so a heading, a
table cell or a paragraph never comes back empty."""
from __future__ import annotations

from dataclasses import replace

from worker.text.segment import KEPT_SOURCE, Alignment, DocumentResult, SegmentResult, word_spans



def _lost(source: str, translation: str) -> bool:
    return any(ch.isalnum() for ch in source) and not any(ch.isalnum() for ch in translation)


def keep_source(result: DocumentResult) -> tuple[DocumentResult, set[int]]:
    """``result`` with each segment that lost its text given its source back (word-for-word
    alignment, flag ``KEPT_SOURCE``), the segments after it moved along, and the indexes of the
    segments kept so."""
    segments = list(result.segments)
    lost = {k for k, s in enumerate(segments) if _lost(s.source, s.translation)}
    if not lost and not _lost(result.source, result.translation):
        return result, set()
    gaps, cursor = [], 0  # the unit's text between its segments' sources, which its translation keeps too
    for segment in segments:
        at = result.source.find(segment.source, cursor)
        if at < 0:
            break
        gaps.append(result.source[cursor:at])
        cursor = at + len(segment.source)
    rebuilt = "".join(g + s.translation for g, s in zip(gaps, segments)) + result.source[cursor:]
    if len(gaps) != len(segments) or rebuilt != result.translation:  # laid out otherwise: keep the whole unit
        whole = _kept(SegmentResult(result.source, "", 0.0, Alignment((), (), ())), 0)
        return replace(result, translation=result.source, segments=(whole,)), {0}
    out, position, shift = [], 0, 0
    for k, (gap, segment) in enumerate(zip(gaps, segments)):
        position += len(gap)
        if k in lost:
            kept = _kept(segment, position)
            shift += len(kept.translation) - len(segment.translation)
            out.append(kept)
        else:
            out.append(segment.shifted(0, shift) if shift else segment)
        position += len(out[-1].translation)
    translation = "".join(g + s.translation for g, s in zip(gaps, out)) + result.source[cursor:]
    return replace(result, translation=translation, segments=tuple(out)), lost


def _kept(segment: SegmentResult, position: int) -> SegmentResult:
    """``segment`` with its source as its translation, at ``position`` of the unit's translation."""
    source_spans = segment.alignment.source_spans or tuple(word_spans(segment.source))
    target = tuple(word_spans(segment.source, position))
    pairs = tuple((i, i) for i in range(min(len(source_spans), len(target))))
    return replace(segment, translation=segment.source, alignment=Alignment(pairs, source_spans, target),
                   flags=tuple(segment.flags) + (KEPT_SOURCE,))
