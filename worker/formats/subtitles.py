"""SubRip subtitles (``.srt``), parsed by the ``srt`` package.

Each cue's text lines form one unit, translated as one sentence or more and broken back into as
many lines as the cue had. Indices, timings, blank lines and line endings are kept byte for byte.
A tag wrapping a whole line (``<i>...</i>``, common for speech off screen) stays around that line;
other inline tags are translated as text, with a warning.
"""
from __future__ import annotations

import re
from typing import Sequence

import srt

from .model import FormatError, Parsed, Skeleton, Unit, rebreak

# A line wrapped in one tag pair (<i>, <b>, <u>, <font ...>): the tag stays, the text is translated.
_WRAPPED = re.compile(r"^(<(i|b|u|font)\b[^>]*>)(.*)(</\2>)$", re.S)
_TAG = re.compile(r"</?(i|b|u|font)\b[^>]*>")


def parse_srt(text: str) -> Parsed:
    try:
        cues = list(srt.parse(text))
    except srt.SRTParseError as exc:
        raise FormatError(f"not a valid SRT file: {exc}") from None
    skeleton, units, unit_slots = Skeleton(), [], []
    cursor = 0
    for cue in cues:
        arrow = text.find("-->", cursor)
        if arrow < 0:
            raise FormatError(f"cue {cue.index}: no timing line")
        line_end = text.find("\n", arrow)
        if line_end < 0:  # a cue with a timing and no text at the very end
            break
        body_start = line_end + 1
        skeleton.text(text[cursor:body_start])
        cursor = body_start
        slots, inner_texts, warnings = [], [], []
        for line in cue.content.split("\n"):
            if not line.strip():
                continue
            start = text.index(line, cursor)
            skeleton.text(text[cursor:start])
            wrapped = _WRAPPED.match(line)
            inner = wrapped.group(3) if wrapped else line
            if wrapped:
                skeleton.text(wrapped.group(1))
            slots.append(skeleton.slot())
            if wrapped:
                skeleton.text(wrapped.group(4))
            if _TAG.search(inner):
                warnings.append(f"cue {cue.index}: inline markup is translated as text")
            inner_texts.append(inner.strip())
            cursor = start + len(line)
        if slots:
            units.append(Unit(" ".join(inner_texts), f"cue {cue.index}", len(slots), tuple(warnings)))
            unit_slots.append(slots)
    skeleton.text(text[cursor:])

    def render(translations: Sequence[str]) -> str:
        values = [""] * skeleton.slots
        for slots, translation in zip(unit_slots, translations):
            for slot, line in zip(slots, rebreak(translation, len(slots))):
                values[slot] = line
        return skeleton.fill(values)

    return Parsed(units, render)
