"""Plain-text documents: split into sentences with exact character offsets, and reassemble the
translations with the original paragraphs, line breaks, empty lines and surrounding whitespace.

Each line is its own unit (a line break is never moved or dropped), and so is each column of a
line: text after a TAB, or after a run of spaces that lines it up (three or more; in an indented
line also two that do not follow a sentence's end), as in ``--help`` texts and tables of plain
text, whose padding is kept as it is. The option part of a ``--help`` line (``  -a, --all``,
``   [-]icanon``, before the gap to its description) is no sentence: it stays as it is. Inside a column, sentences come from ``sentencex``
(Wikimedia's maintained rule-based segmenter, ~300 languages). sentencex 0.x
panics on whitespace outside ASCII before a full stop ("I\u00a0."), so it reads each line with
such whitespace as ASCII spaces (same offsets); a line it still cannot split is one unit.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Sequence

from sentencex import segment

from .spans import find_spans

_LINE = re.compile(r"[^\n]*\n|[^\n]+$")
_WIDE_SPACE = re.compile(r"[^\S \t\n\r\f\v]")  # whitespace outside ASCII
# What separates the columns of a line: TABs, or spaces that line text up, between two visible
# characters: 3 or more, or, in an indented line (a --help text's option lines), 2 that do not
# follow a sentence's end (where two spaces are a typing habit, as in "Tom  is here").
_COLUMN_GAP = re.compile(r"(?<=\S)(?:[ ]*\t[ \t]*|[ ]{3,})(?=\S)")
# The option part of a --help line: indented, then -x, --long, [-]word (stty's, after its "* " too)
_OPTION_COLUMN = re.compile(r"[ \t]+(?:\* )?(?:--?[A-Za-z0-9]|\[-\][A-Za-z])")
_INDENTED_COLUMN_GAP = re.compile(r"(?<=\S)(?:[ ]*\t[ \t]*|[ ]{3,}|(?<![.!?:;])[ ]{2})(?=\S)")


@dataclass(frozen=True)
class Sentence:
    text: str  # stripped of surrounding whitespace, never empty
    start: int  # character offset in the document
    end: int
    line: int  # 0-based line number in the document


@dataclass(frozen=True)
class Layout:
    """A document as alternating verbatim gaps and sentences: gaps[0] s[0] gaps[1] s[1] ... gaps[n]."""

    text: str
    sentences: tuple[Sentence, ...]
    gaps: tuple[str, ...]

    def to_json(self) -> dict:
        return {"sentences": [[s.text, s.start, s.end, s.line] for s in self.sentences], "gaps": list(self.gaps)}

    @classmethod
    def from_json(cls, raw: dict, text: str = "") -> "Layout":
        return cls(text, tuple(Sentence(*s) for s in raw["sentences"]), tuple(raw["gaps"]))

    def reassemble(self, translations: Sequence[str]) -> tuple[str, list[int]]:
        """The document with each sentence replaced by its translation, every gap kept verbatim,
        and the character offset of each translation in it."""
        if len(translations) != len(self.sentences):
            raise ValueError(f"{len(translations)} translations for {len(self.sentences)} sentences")
        parts, starts, position = [self.gaps[0]], [], len(self.gaps[0])
        for translation, gap in zip(translations, self.gaps[1:]):
            starts.append(position)
            parts += [translation, gap]
            position += len(translation) + len(gap)
        return "".join(parts), starts


def split_document(text: str, language: str) -> Layout:
    """Split ``text`` into sentences (per line, then by ``sentencex`` for ``language``)."""
    sentences: list[Sentence] = []
    gaps: list[str] = []
    cursor = 0  # end of the last sentence
    matches = list(_LINE.finditer(text))
    lines = [_WIDE_SPACE.sub(" ", m.group().rstrip("\n")) for m in matches]
    columns_of = [_columns(line) for line in lines]
    described = {columns[1][0] for line, columns in zip(lines, columns_of)
                 if len(columns) > 1 and _OPTION_COLUMN.match(line)}
    for line_number, match in enumerate(matches):
        line, columns = lines[line_number], columns_of[line_number]
        below = lines[line_number + 1] if line_number + 1 < len(lines) else ""
        if _is_option_line(line, columns, described, len(below) - len(below.lstrip()) if below.strip() else 0):
            columns = columns[1:]  # the option part stays as it is, with the gap after it (or alone on its line)
        for column_start, column_end in columns:
            column = line[column_start:column_end]
            base = match.start() + column_start  # the column's offset in the document
            for piece in _sentences(language, column):
                stripped = piece.strip()
                if not stripped:
                    continue
                start = base + column.index(stripped, max(base, cursor) - base)
                stripped = text[start:start + len(stripped)]
                gaps.append(text[cursor:start])
                sentences.append(Sentence(stripped, start, start + len(stripped), line_number))
                cursor = start + len(stripped)
    gaps.append(text[cursor:])
    return Layout(text, tuple(sentences), tuple(gaps))


def _is_option_line(line: str, columns: list[tuple[int, int]], described: set[int], below: int) -> bool:
    """Whether ``line`` is a line of a ``--help`` listing: indented, an option part (``-a, --all``,
    ``[-]icanon``), a column gap and its description; or, in a text with such lines, one word
    (stty's ``raw``, chcon's ``CONTEXT``) before a description that starts where theirs do; or an
    option part alone on its line, left of every description or of the line below, which is indented
    deeper (``  -s[CHAR], --separator[=CHAR]``). ``below``: the indentation of the line below."""
    if not line[:1].isspace() or not columns:
        return False
    if len(columns) == 1:
        indent = len(line) - len(line.lstrip())
        return bool(_OPTION_COLUMN.match(line)) and (indent < min(described, default=0) or indent + 2 < below)
    return bool(_OPTION_COLUMN.match(line)) or \
        columns[1][0] in described and " " not in line[slice(*columns[0])].strip()


def _columns(line: str) -> list[tuple[int, int]]:
    """[start, end) of each column of ``line`` (the whole line when it has one). Two spaces inside
    a verbatim span other than options do not part columns (sed's ``'s/  *|$//'``)."""
    bounds, start, inside = [], 0, None
    for gap in (_INDENTED_COLUMN_GAP if line[:1].isspace() else _COLUMN_GAP).finditer(line):
        if gap.group() == "  ":
            if inside is None:
                inside = [(s.start, s.end) for s in find_spans(line) if s.kind != "option"]
            if any(a < gap.start() and gap.end() < b for a, b in inside):
                continue
        bounds.append((start, gap.start()))
        start = gap.end()
    return bounds + [(start, len(line))]


def _sentences(language: str, line: str) -> list[str]:
    """``line``'s sentences by sentencex; the line alone where sentencex panics (a Rust panic is
    raised as ``pyo3_runtime.PanicException``, a BaseException)."""
    try:
        pieces = list(segment(language, line))
    except BaseException as exc:  # noqa: BLE001 - only sentencex's panic is caught
        if type(exc).__name__ != "PanicException":
            raise
        return [line]
    return _footnote_marks(_joined_inside_spans(line, pieces)) if len(pieces) > 1 else pieces


# A footnote's mark right after a full stop: gettext's manual ``right after msgid.(2) It was``
_FOOTNOTE_MARK = re.compile(r"[(\[]\d{1,3}[)\]]")


def _footnote_marks(pieces: list[str]) -> list[str]:
    """``pieces`` with a footnote's mark that opens a piece glued to the end of the one before
    (``msgid.`` + ``(2) It was``) moved to that one: it marks the sentence it follows. Placed with
    the next sentence, the link or superscript around it took the previous sentence's last word."""
    out = [pieces[0]]
    for piece in pieces[1:]:
        mark = _FOOTNOTE_MARK.match(piece)
        if mark and out[-1][-1:] in ".!?:;" and piece[mark.end():].strip():
            rest = piece[mark.end():]
            out[-1] += piece[:mark.end()]
            piece = rest
        out.append(piece)
    return out


def _joined_inside_spans(line: str, pieces: list[str]) -> list[str]:
    """``pieces`` of ``line`` with those joined again whose boundary falls inside a verbatim span
    (the full stop of ``%.*s``, ``v2.x``, ``www.example.org``): a span is never cut in two."""
    spans = find_spans(line)
    if not spans:
        return pieces
    placed, cursor = [], 0  # (start, end) of each piece in ``line``
    for piece in pieces:
        start = line.find(piece, cursor)
        if start < 0:  # sentencex changed the text: keep its pieces as they are
            return pieces
        placed.append([start, start + len(piece)])
        cursor = start + len(piece)
    joined = [placed[0]]
    for start, end in placed[1:]:
        before = joined[-1][0] + len(line[joined[-1][0]:joined[-1][1]].rstrip())  # the text's end before the cut
        after = start + len(line[start:end]) - len(line[start:end].lstrip())  # and its start after it
        if any(s.start < before and s.end > after for s in spans):
            joined[-1][1] = end
        else:
            joined.append([start, end])
    return [line[a:b] for a, b in joined]
