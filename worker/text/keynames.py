"""Key names as the target language's manuals write them, inside key combinations.

Span protection copies a key combination (``Ctrl+F6``, a ``key`` span of worker.text.spans)
through unchanged; German manuals write ``Strg+F6``, ``Umschalt+F10``, ``Alt+Umschalt+Pos1``. For a
German target each named key of a key span is written in its German form (``GERMAN_KEYS``) and
the leading modifiers in German order (Strg, Alt, Umschalt: ``Shift+Ctrl+Tab`` ->
``Strg+Umschalt+Tabulator``); separators, letters, digits and function keys stay as the source has
them. A direction key followed by " Arrow" (``Alt+Down Arrow``) takes the word in
(``Alt+Pfeil nach unten``). Other target languages keep the English names (no table).

``GERMAN_KEYS`` was counted on the training split of the documentation corpus's tagged copy
(LibreOffice's and GNOME's German help; ``python -m worker.text.keynames PREFIX`` prints the
counts, PREFIX.en.gz and PREFIX.de.gz one tagged pair a line): each ``<key>`` element of the
English side paired with the German side's element in the same place, part by part where both
have as many parts, counted apart where the English element is one key span. A name's German
form is its most frequent one in key spans (Ctrl -> Strg 145 of 151; Shift -> Umschalt 49 of 76,
Umschalttaste 21; Tab -> Tabulator 13 of 25, Tab 7, Tabulatortaste 4; Enter -> Eingabetaste 16 of
18, Eingabe 2; Space -> Leertaste 6 of 6; Home -> Pos1 5 of 5; End -> Ende 5 of 5; Left, Right ->
Pfeil nach links, rechts 4 of 4 each), else in all ``<key>`` elements (Delete -> Entf 5 of 7, Del
-> Entf 3 of 3, Backspace -> Rückschritt 4 of 5, Down Arrow -> Pfeil nach unten 4 of 4), else in
the plain German text (Page Up/Down: Bild nach oben 16 and Bild nach unten 21 lines against 4 and
5 for Bild↑, Bild↓; Insert -> Einfg: ``Ctrl+Shift+Insert`` -> ``Strg+Umschalt+Einfg``). Return,
Escape and Control (no German form in the corpus) are written as Enter, Esc and Ctrl are.
Modifier order: where the English writes ``Shift+Ctrl``, the German text writes ``Strg+Umschalt``
in 32 lines and ``Umschalt+Strg`` or ``Umschalttaste+Strg`` in 18. Alt, Super, Esc, Fn, letters,
digits and function keys are the same in German.
"""
from __future__ import annotations

import gzip
import re
import sys
import xml.etree.ElementTree as ET
from collections import Counter, defaultdict
from typing import Iterable, Sequence

from .spans import Span, find_spans

KEY = "key"  # the span kind of a key combination (worker.text.spans)

GERMAN_KEYS: dict[str, str] = {
    "Ctrl": "Strg", "Control": "Strg", "Shift": "Umschalt", "Tab": "Tabulator", "Enter": "Eingabetaste",
    "Return": "Eingabetaste", "Space": "Leertaste", "Home": "Pos1", "End": "Ende", "Del": "Entf", "Delete": "Entf",
    "Ins": "Einfg", "Insert": "Einfg", "Backspace": "Rückschritt", "Escape": "Esc", "PgUp": "Bild nach oben",
    "PageUp": "Bild nach oben", "PgDn": "Bild nach unten", "PageDown": "Bild nach unten",
    "Up": "Pfeil nach oben", "Down": "Pfeil nach unten", "Left": "Pfeil nach links", "Right": "Pfeil nach rechts",
}
# Per target language, the table of key names; a language not here keeps the English names.
KEY_TABLES: dict[str, dict[str, str]] = {"de": GERMAN_KEYS}
# Per target language, the order its manuals give the leading modifiers (English names).
MODIFIER_ORDERS: dict[str, tuple[str, ...]] = {"de": ("Ctrl", "Control", "Alt", "Shift")}
DIRECTIONS = frozenset(("Up", "Down", "Left", "Right"))

_PART = re.compile(r"[A-Za-z]+")
_SEPARATOR = re.compile(r"\s?[+-]\s?")
_ARROW = re.compile(r" [Aa]rrow(?![\w-])")


def _base(language: str | None) -> str:
    return (language or "").split("-")[0].split("_")[0].lower()


def key_table(language: str | None) -> dict[str, str] | None:
    """The key names for ``language`` (a target language code: "de", "de-AT"), or None."""
    return KEY_TABLES.get(_base(language))


def localised(text: str, language: str | None) -> str:
    """A key span's text in ``language``'s key names and modifier order (``Shift+Ctrl+F4`` ->
    ``Strg+Umschalt+F4``); the text itself for a language without a table."""
    table = key_table(language)
    if table is None:
        return text
    order = MODIFIER_ORDERS.get(_base(language), ())
    parts = _SEPARATOR.split(text)
    separators = _SEPARATOR.findall(text)
    lead = 0  # the leading modifiers
    while lead < len(parts) and parts[lead] in order:
        lead += 1
    parts[:lead] = sorted(parts[:lead], key=order.index)
    out = [_PART.sub(lambda m: table.get(m.group(), m.group()), parts[0])]
    for separator, part in zip(separators, parts[1:]):
        out += [separator, _PART.sub(lambda m: table.get(m.group(), m.group()), part)]
    return "".join(out)


def localise_keys(sentence: str, spans: Sequence[Span], language: str | None) -> tuple[Span, ...]:
    """``spans`` with each key span's ``target`` in ``language``'s key names, when it has a table
    and the names change; a span ending in a direction key followed by " Arrow" takes the word in
    (unless another span starts there)."""
    if key_table(language) is None:
        return tuple(spans)
    out = []
    for k, span in enumerate(spans):
        if span.kind != KEY:
            out.append(span)
            continue
        end = span.end
        arrow = _ARROW.match(sentence, end)
        if arrow and _PART.findall(span.text)[-1:] and _PART.findall(span.text)[-1] in DIRECTIONS \
                and (k + 1 == len(spans) or spans[k + 1].start >= arrow.end()):
            end = arrow.end()
        target = localised(span.text, language)
        if target == span.text:
            out.append(span)
        else:
            out.append(Span(span.kind, span.start, end, sentence[span.start:end], target))
    return tuple(out)


# -- the table, counted --------------------------------------------------------------------------------
def key_elements(tagged: str) -> list[str] | None:
    """The text of each ``<key>`` element of a tagged line, in order; None if it does not parse."""
    try:
        root = ET.fromstring(f"<s>{tagged}</s>")
    except ET.ParseError:
        return None
    return [" ".join("".join(e.itertext()).split()) for e in root.iter(KEY)]


def count_key_forms(pairs: Iterable[tuple[str, str]]) -> tuple[dict[str, Counter], dict[str, Counter]]:
    """From tagged (English, German) pairs: per English key name, the German forms in key spans
    (the English element one key span, " Arrow" after a direction allowed) and in all ``<key>``
    elements, part by part where both sides have as many parts."""
    in_spans: dict[str, Counter] = defaultdict(Counter)
    anywhere: dict[str, Counter] = defaultdict(Counter)
    for en, de in pairs:
        left, right = key_elements(en), key_elements(de)
        if not left or right is None or len(left) != len(right):
            continue
        for a, b in zip(left, right):
            parts_a, parts_b = _SEPARATOR.split(a), _SEPARATOR.split(b)
            if len(parts_a) != len(parts_b):
                continue
            spans = find_spans(a)
            whole = len(spans) == 1 and spans[0].kind == KEY and spans[0].start == 0 and \
                (spans[0].end == len(a) or _ARROW.fullmatch(a, spans[0].end) is not None)
            for p, q in zip(parts_a, parts_b):
                if p and p[0].isalpha():
                    anywhere[p][q] += 1
                    if whole:
                        in_spans[p.removesuffix(" Arrow")][q] += 1
    return in_spans, anywhere


def read_tagged(prefix: str) -> list[tuple[str, str]]:
    with gzip.open(prefix + ".en.gz", "rt", encoding="utf-8") as en, gzip.open(prefix + ".de.gz", "rt",
                                                                                encoding="utf-8") as de:
        return [(a.rstrip("\n"), b.rstrip("\n")) for a, b in zip(en, de)]


if __name__ == "__main__":  # python -m worker.text.keynames /work/data/general-v2/docs/train.tagged
    spans_count, all_count = count_key_forms(read_tagged(sys.argv[1]))
    for name in sorted(set(spans_count) | set(all_count), key=lambda n: -sum(all_count[n].values())):
        print(f"{name:14} key spans {sum(spans_count[name].values()):4d} {spans_count[name].most_common(3)}"
              f"   all {sum(all_count[name].values()):4d} {all_count[name].most_common(3)}"
              f"   table: {GERMAN_KEYS.get(name, '-')}")
