"""Subtitles: SubRip (``.srt``, parsed by the ``srt`` package) and WebVTT (``.vtt``, parsed by
``webvtt-py``).

Each cue's text lines form one unit, translated as one sentence or more and broken back into as
many lines as the cue had. Indices, identifiers, timings and cue settings, blank lines, line endings and (WebVTT) the header,
STYLE, REGION and NOTE blocks are kept byte for byte. A tag wrapping a whole line (``<i>...</i>``,
common for speech off screen) stays around that line, as does a leading voice tag
(``<v Bob>``); other inline tags are translated as text, with a warning.
"""
from __future__ import annotations

import io
import re
from typing import Iterable, Sequence

import srt
import webvtt

from .model import FormatError, Parsed, Skeleton, TextUnit, rebreak

# A line wrapped in one tag pair (<i>, <b>, <u>, <font ...>): the tag stays, the text is translated.
_WRAPPED = re.compile(r"^(<(i|b|u|font|c|lang)\b[^>]*>)(.*)(</\2>)$", re.S)
_VOICE = re.compile(r"^(<v\b[^>]*>)(.*?)(</v>)?$", re.S)  # WebVTT: the closing tag is optional
_TAG = re.compile(r"</?(i|b|u|font|c|lang|v|ruby|rt)\b[^>]*>")


def parse_srt(text: str) -> Parsed:
    try:
        cues = [(f"cue {cue.index}", cue.content.split("\n")) for cue in srt.parse(text)]
    except srt.SRTParseError as exc:
        raise FormatError(f"not a valid SRT file: {exc}") from None
    return _parse_cues(text, cues)


def parse_vtt(text: str) -> Parsed:
    try:
        captions = webvtt.from_buffer(io.StringIO(text)).captions
    except (webvtt.errors.MalformedFileError, webvtt.errors.MalformedCaptionError, ValueError) as exc:
        raise FormatError(f"not a valid WebVTT file: {exc or type(exc).__name__}") from None
    return _parse_cues(text, ((f"cue {c.identifier or n}", c.lines) for n, c in enumerate(captions, 1)))


def _split_wrapper(line: str) -> tuple[str, str, str]:
    """(opening tags, inner text, closing tags) of a cue line."""
    wrapped = _WRAPPED.match(line)
    if wrapped:
        return wrapped.group(1), wrapped.group(3), wrapped.group(4)
    voice = _VOICE.match(line)
    if voice:
        return voice.group(1), voice.group(2), voice.group(3) or ""
    return "", line, ""


def _parse_cues(text: str, cues: Iterable[tuple[str, list[str]]]) -> Parsed:
    """Units and skeleton from ``(label, text lines)`` per cue, in file order: each cue's lines are
    found after its timing line (``-->``), so nothing outside cue text can be taken for it."""
    skeleton, units, unit_slots = Skeleton(), [], []
    cursor = 0
    for label, lines in cues:
        arrow = text.find("-->", cursor)
        if arrow < 0:
            raise FormatError(f"{label}: no timing line")
        line_end = text.find("\n", arrow)
        if line_end < 0:  # a cue with a timing and no text at the very end
            break
        skeleton.text(text[cursor:line_end + 1])
        cursor = line_end + 1
        slots, inner_texts, warnings = [], [], []
        for line in lines:
            if not line.strip():
                continue
            start = text.find(line, cursor)
            if start < 0:
                raise FormatError(f"{label}: cannot locate its text {line[:40]!r} in the file")
            skeleton.text(text[cursor:start])
            opening, inner, closing = _split_wrapper(line)
            skeleton.text(opening)
            slots.append(skeleton.slot())
            skeleton.text(closing)
            if _TAG.search(inner):
                warnings.append(f"{label}: inline markup is translated as text")
            inner_texts.append(inner.strip())
            cursor = start + len(line)
        if slots:
            units.append(TextUnit(" ".join(inner_texts), label, len(slots), tuple(warnings)))
            unit_slots.append(slots)
    skeleton.text(text[cursor:])

    def render(translations: Sequence[str]) -> str:
        values = [""] * skeleton.slots
        for slots, translation in zip(unit_slots, translations):
            for slot, line in zip(slots, rebreak(translation, len(slots))):
                values[slot] = line
        return skeleton.fill(values)

    return Parsed(units, render)
