"""Subtitles: SubRip (``.srt``, parsed by the ``srt`` package) and WebVTT (``.vtt``, parsed by
``webvtt-py``).

Each cue's text lines form one unit, translated as one sentence or more and broken back into as
many lines as the cue had; a line that starts a speaker's turn (``- He did``) starts a unit of its
own, so each speaker keeps a line. Indices, identifiers, timings and cue settings, blank lines, line endings and (WebVTT) the header,
STYLE, REGION and NOTE blocks are kept byte for byte. A tag wrapping a whole line (``<i>...</i>``,
common for speech off screen) stays around that line, as does a leading voice tag
(``<v Bob>``); other inline tags (``<b>``, ``<s>``, ``<c.loud>``, ``<v Ann>``, ``<00:01.500>``,
tags the formats do not define, ``<invalid_tag>``, and ASS override codes, ``{\\an8}``) are inline
codes, placed around the aligned target words (``formats.markup``) and never broken across lines.
"""
from __future__ import annotations

import html
import io
import re
from typing import Iterable, Sequence

import srt
import webvtt

from .inline import inline_unit
from .markup import Link, transfer
from .model import FormatError, Parsed, Skeleton, TextUnit, rebreak

# A line wrapped in one tag pair (<i>, <b>, <u>, <font ...>): the tag stays, the text is translated.
_WRAPPED = re.compile(r"^(<(i|b|u|s|font|c|lang|span)\b[^>]*>)(.*)(</\2>)$", re.S)
_VOICE = re.compile(r"^(<v\b[^>]*>)(.*?)(</v>)?$", re.S)  # WebVTT: the closing tag is optional
# Any tag (SubRip players also honour <s>, <font ...> and others; unknown ones, <invalid_tag par=5>
# too, are kept as they are, never sent to the model as text), WebVTT's timestamp tags, and the ASS
# override codes SubRip players honour ({\an8}: a position; group ``ass``).
_TAG = re.compile(r"</?([A-Za-z][A-Za-z0-9_]*)\b[^<>]*>|<\d[\d:.]*>"  # a class (<c.loud>) is not the name
                  r"|(?P<ass>\{\\[^{}\n]*\})")
_KEEP_SPACE = "\ue002"  # stands for a space inside a tag while a translation is broken into lines


def parse_srt(text: str) -> Parsed:
    try:
        cues = [(f"cue {cue.index}", cue.content.split("\n")) for cue in srt.parse(text)]
    except srt.SRTParseError as exc:
        line = text.count("\n", 0, exc.expected_start) + 1
        raise FormatError(f"not a valid SRT file: line {line} does not start a subtitle block (a number, "
                          f"'start --> end' times, then text): {exc.unmatched_content[:60]!r}") from None
    return _parse_cues(text, cues)


def parse_vtt(text: str) -> Parsed:
    try:
        captions = webvtt.from_buffer(io.StringIO(text)).captions
    except (webvtt.errors.MalformedFileError, webvtt.errors.MalformedCaptionError, ValueError) as exc:
        detail = str(exc) if str(exc) != "Invalid format" else "it does not begin with a 'WEBVTT' line"
        raise FormatError(f"not a valid WebVTT file: {detail or type(exc).__name__}") from None
    return _parse_cues(text, ((f"cue {c.identifier or n}", c.lines) for n, c in enumerate(captions, 1)), vtt=True)


def _split_wrapper(line: str) -> tuple[str, str, str]:
    """(opening tags, inner text, closing tags) of a cue line: a pair of tags around the whole
    line (not ``<i>a</i> b <i>c</i>``), or a leading voice tag."""
    wrapped = _WRAPPED.match(line)
    if wrapped and _balanced(wrapped.group(3), wrapped.group(2)):
        return wrapped.group(1), wrapped.group(3), wrapped.group(4)
    voice = _VOICE.match(line)
    if voice:
        return voice.group(1), voice.group(2), voice.group(3) or ""
    return "", line, ""


def _balanced(inner: str, name: str) -> bool:
    """Whether every ``</name>`` in ``inner`` closes a ``<name>`` opened in it."""
    depth = 0
    for match in re.finditer(rf"<(/?){name}\b[^>]*>", inner):
        depth += -1 if match.group(1) else 1
        if depth < 0:
            return False
    return True


def _parse_cues(text: str, cues: Iterable[tuple[str, list[str]]], vtt: bool = False) -> Parsed:
    """Units and skeleton from ``(label, text lines)`` per cue, in file order: each cue's lines are
    found after its timing line (``-->``), so nothing outside cue text can be taken for it. A cue
    with inline tags inside its lines is one slot, its lines and their wrapping tags included
    (tags may then span lines); the others have one slot per line between its wrapping tags.
    ``vtt``: text is read with its character references decoded and written with ``&amp;``,
    ``&lt;``, ``&gt;`` as WebVTT cue text must be; SubRip has no escapes, its text goes as it is."""
    skeleton, units, unit_slots, separators = Skeleton(), [], [], []
    cursor = 0
    for label, lines in cues:
        arrow = text.find("-->", cursor)
        if arrow < 0:
            raise FormatError(f"{label}: no timing line")
        line_end = text.find("\n", arrow)
        if line_end < 0:  # a cue with a timing and no text at the very end
            break
        skeleton.text(text[cursor:line_end + 1])
        cursor = done = line_end + 1  # done: where the skeleton has got to
        found = []  # (offset, line) of each line with text
        for line in lines:
            if not line.strip():
                continue
            start = text.find(line, cursor)
            if start < 0:
                raise FormatError(f"{label}: cannot locate its text {line[:40]!r} in the file")
            found.append((start, line))
            cursor = start + len(line)
        if not found:
            continue
        for turn in _turns(found):
            done = _cue_text(turn, label, vtt, skeleton, units, unit_slots, separators, text, done)
    skeleton.text(text[cursor:])

    def escape(value: str) -> str:
        return value.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;") if vtt else value

    def render(translations: Sequence[str], links: Sequence[Sequence[Link]], notes: dict[int, list[str]]) -> str:
        values = [""] * skeleton.slots
        for index, (unit, slots, translation) in enumerate(zip(units, unit_slots, translations)):
            if unit.tags:
                pieces, unit_notes = transfer(unit.text, unit.tags, translation, links[index])
                if unit_notes:
                    notes[index] = unit_notes
                marked = "".join(p.text.replace(" ", _KEEP_SPACE) if p.markup else escape(p.text) for p in pieces)
                lines = [line for line in rebreak(marked, unit.lines) if line] or [""]
                values[slots[0]] = separators[index].join(lines).replace(_KEEP_SPACE, " ")
                continue
            for slot, line in zip(slots, rebreak(escape(translation), len(slots))):
                values[slot] = line
        return skeleton.fill(values)

    return Parsed(units, render, marked=True)


_TURN = re.compile(r"^(?:<[^<>]*>)*\s*[-\u2010-\u2014]\s")  # a line that starts a speaker's turn: "- Who?"


def _turns(found: list[tuple[int, str]]) -> list[list[tuple[int, str]]]:
    """A cue's lines grouped by speaker turn: a line that starts with a dash (``- He did``) starts
    a turn of its own, translated apart and kept on its own line(s); without dashes, one group."""
    groups: list[list[tuple[int, str]]] = []
    for start, line in found:
        if not groups or _TURN.match(line):
            groups.append([])
        groups[-1].append((start, line))
    return groups


def _cue_text(found: list[tuple[int, str]], label: str, vtt: bool, skeleton: Skeleton, units: list[TextUnit],
              unit_slots: list[list[int]], separators: list[str], text: str, done: int) -> int:
    """The unit(s) and slots of a group of a cue's lines (offset, line); returns where the skeleton has got to.
    A group with inline tags inside its lines is one slot, its lines and their wrapping tags included
    (tags may then span lines); the others have one slot per line between its wrapping tags."""
    end = found[-1][0] + len(found[-1][1])
    split = [_split_wrapper(line) for _, line in found]
    if any(_TAG.search(inner) for _, inner, _ in split):  # inline tags: the group is one slot
        unit = _unit(" ".join(line.strip() for _, line in found), label, len(found), vtt)
        if unit is None:  # tags and no words: kept as it is
            skeleton.text(text[done:end])
            return end
        skeleton.text(text[done:found[0][0]])
        slot = skeleton.slot()
        units.append(unit)
        unit_slots.append([slot])
        separators.append(text[found[0][0] + len(found[0][1]):found[1][0]] if len(found) > 1 else "\n")
        return end
    slots = []
    for (start, line), (opening, inner, closing) in zip(found, split):
        skeleton.text(text[done:start] + opening)
        slots.append(skeleton.slot())
        skeleton.text(closing)
        done = start + len(line)
    units.append(TextUnit(" ".join(_decoded(inner.strip(), vtt) for _, inner, _ in split), label, len(slots)))
    unit_slots.append(slots)
    separators.append("")
    return done


def _decoded(text: str, vtt: bool) -> str:
    return html.unescape(text) if vtt else text


def _unit(text: str, where: str, lines: int, vtt: bool) -> TextUnit | None:
    """A cue's unit: its text, and its inline tags (those wrapping a line included) as ``Tag``
    spans of it; None if it has no words among its tags."""
    items, p = [], 0
    for match in _TAG.finditer(text):
        if match.start() > p:
            items.append(("data", "", text[p:match.start()], _decoded(text[p:match.start()], vtt)))
        raw, name = match.group(), match.group(1)
        if match.group("ass"):
            items.append(("point", "ass", raw, ""))
        elif name is None or raw.endswith("/>"):  # a timestamp, or an empty element (<br/>)
            items.append(("point", name or "time", raw, ""))
        else:
            items.append(("end" if raw.startswith("</") else "start", name, raw, ""))
        p = match.end()
    if p < len(text):
        items.append(("data", "", text[p:], _decoded(text[p:], vtt)))
    unit, _lead, _trail = inline_unit(items, where)
    if unit is None:
        return None
    return TextUnit(unit.text, where, lines, tags=unit.tags)
