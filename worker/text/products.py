"""Product names a translation keeps as they are: the software that manuals name (LibreOffice,
GNOME, Debian, Firefox, systemd, GRUB, Fontwork...), which their German translations write
unchanged.

``find_products`` finds them case-sensitively, as whole words (not inside a longer word or a
hyphenated one). A name that is also an ordinary English word (``ENGLISH_WORD_NAMES``: Writer,
Impress, Draw, Base, Math, Gallery, Navigator, Evolution, Windows, BASIC) counts only right after
"LibreOffice" or "OpenOffice", kept whole with it (``LibreOffice Draw``); alone it is left to the
model (``Draw a line``, ``in a Draw document``). The pipeline keeps the names found as names (kind
``KEPT_NAME``, worker.text.names): left in the text the model decodes and put back through the
alignment where the translation lost them, in ALL-CAPS and Title Case sentences too, where their
case is left alone. ``TextOptions(product_names=False)`` turns the list off.

Measured with ``bench/doc_terms.py`` on docs-test (docs/models.md, Terms in documentation): as a
glossary copying each name through, the names that are not English words raised the product
names the German manual keeps from 77% to 94% (general model) and 74% to 92% (documentation
model) with chrF flat or up; the English-word names matched as ordinary words cost chrF.
"""
from __future__ import annotations

import re
from typing import Sequence

from .names import KEPT_NAME, _overlap_test
from .spans import Span

SUITES = ("LibreOffice", "OpenOffice")
PRODUCTS = ("LibreOffice", "OpenOffice", "Writer", "Calc", "Impress", "Draw", "Base", "Math", "GNOME", "GNOME Shell",
            "Debian", "Ubuntu", "Linux", "Windows", "macOS", "Firefox", "Thunderbird", "Evolution", "Nautilus",
            "Looking Glass", "GTK", "Qt", "KDE", "Xfce", "systemd", "GRUB", "Samba", "Python", "Java", "BASIC",
            "OLE", "PDF", "Fontwork", "Navigator", "Gallery", "Wayland", "X11", "Xorg", "SELinux")
# Names that are ordinary English words: kept only after a suite's name ("LibreOffice Draw").
ENGLISH_WORD_NAMES = frozenset(("Writer", "Impress", "Draw", "Base", "Math", "Windows", "Evolution", "BASIC",
                                "Gallery", "Navigator"))
KEPT_ALONE = tuple(name for name in PRODUCTS if name not in ENGLISH_WORD_NAMES)


def _alternatives(names: Sequence[str]) -> str:
    return "|".join(re.escape(n) for n in sorted(names, key=len, reverse=True))


_PRODUCT = re.compile(
    r"(?<![\w-])(?:(?:" + _alternatives(SUITES) + r") (?:" + _alternatives([n for n in PRODUCTS if n not in SUITES])
    + r")|" + _alternatives(KEPT_ALONE) + r")(?![\w-])")


def find_products(sentence: str, taken: Sequence[tuple[int, int]] = ()) -> list[Span]:
    """The product names of ``sentence`` outside the ``taken`` ranges, as KEPT_NAME spans (their
    ``target`` themselves), in text order."""
    overlaps = _overlap_test(taken)
    out = []
    for m in _PRODUCT.finditer(sentence):
        if overlaps(m.start(), m.end()):
            suite = m.group().split(" ")[0]
            if " " in m.group() and suite in SUITES and not overlaps(m.start(), m.start() + len(suite)):
                out.append(Span(KEPT_NAME, m.start(), m.start() + len(suite), suite, suite))
            continue
        out.append(Span(KEPT_NAME, m.start(), m.end(), m.group(), m.group()))
    return out
