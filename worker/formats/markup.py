"""Inline markup carried across a translation by its word alignment, keeping the source's tag tree.

A unit's inline tags (``Tag``: a link, a bold run, a ``<br>``, an ``<x/>``) are taken out before
translation, as character spans of the unit's plain text. They form a tree: each tag sits in one
paired tag or at the top. After translation the tree is placed again, top down, on target words:

- each paired tag gets the target words aligned to the source words it covered (their hull, or
  their largest run), inside its parent's words and clear of its siblings' (a sibling never ends
  up inside another, tags never cross);
- where that leaves no word (nothing aligned, or every aligned word taken by a sibling), it goes
  around the free word at the same relative position in its parent, else around nothing at the
  nearest gap that belongs to its parent alone; the unit gets a note saying so;
- a point tag goes where it stood: at its parent's start or end if it stood there, else after the
  target of the word it is glued to, or before that of the next aligned word; never inside a
  sibling, and never glued to a letter or digit on a side where the source set it apart from its
  words (whitespace, or punctuation then whitespace: ``<code>NULL</code>, the``);
- the points of a parent keep the source's order where the alignment allows: one that the model's
  word order carried past the points after it (``the <var>x</var> will be used`` -> ``... verwendet``)
  goes after the target of the aligned word before it instead, or another point before the
  target of the word after it, the fewest moved (``_points_in_order``, noted); a point that names
  the noun after it (``the <code>class</code> attribute``) goes with that noun wherever it goes;

Links (``is_link``: an ``a`` element, a Markdown link, a DOCX hyperlink, an XLIFF code typed as
a link) carry a target, so among siblings they are placed first, each as one span: on its aligned
words where every link has some, no two share one and they follow one another in source order;
else all of them in source order, each on its own aligned words where it can, else on the nearest
words no other link's alignment claims, with a note naming them (``_in_source_order``). A link
holds no word only where none is left between the links beside it (noted). Placement never changes
the translation's text but there: a document writer's link (``keep_link_text``: HTML, DOCX, PPTX,
ODF) then keeps its source text, set apart from the words around it, noted (``_kept_link_texts``),
so that it can still be read and followed. Where markup parts a source word between runs of letters
(``[<a>Contents</a>][<a>Index</a>]``), the word and a target word aligned to it are parted there
(``_parted``), so two links never have to share one word.

Before placing, the links are read as word pairs and corrected where the text says more than the
alignment (``_refined``; bench/tag_placement_human.py measured each against translators' placement):

- a word spelled the same on both sides, once in each (its core, case-folded; two characters or
  more, or not letters only: ``dconf``, ``R2``, ``/etc/fstab``) links only to its twin: the
  alignment, unsure of names and codes it never saw, often joins them to a neighbour; unless the
  alignment links that twin to another form of the word (``Tags`` to the source's ``tag.``, its
  ``tags`` standing elsewhere);
- given a word table (``translates(source word, target word)``, from the bundle's lexical
  shortlist), a tag drops a first or last target word that translates none of its own words but one
  of the ``_REACH`` words on either side outside it (``the <em>Drawing</em> toolbar`` -> ``die
  Symbolleiste <em>Zeichnung</em>``: German puts the kind of thing first, and the links stay
  nearly monotone, so they join the name to the kind).

And a paired tag around every word of the unit goes around every word of the translation.

So every tag comes back exactly once, with the same parent, and the markup nests as the source's
did; ``transfer`` checks this on what it built and raises ``PlacementError`` if not.

Offsets are characters. Links come from the engine's alignment: (source word span, target word
span) pairs, spans as [start, end) in the unit's text and in its translation.
"""
from __future__ import annotations

import bisect
import math
import re
from collections import Counter, defaultdict
from dataclasses import dataclass, field, replace
from typing import Callable, Iterable, Sequence

from worker.text.segment import word_spans

from .model import Tag

CharRange = tuple[int, int]
Link = tuple[CharRange, CharRange]
_OPEN, _CLOSE, _POINT = "open", "close", "point"
# printf directives, {name}/${name}, %(name)s: punctuation that belongs to the placeholder
_PLACEHOLDER = re.compile(r"%(?:\d+\$|\(\w+\))?[-+ #0]*\d*(?:\.\d+)?[a-zA-Z%]|\$?\{\w*\}")
# A Tag carries no kind, so a link is known by how its format writes it: an HTML or XML <a> element
# (HTML, catalogues of pages), an XLIFF code typed as a link (1.2 ctype, 2.0 type, the fs module),
# and a DOCX hyperlink, whose sentinel docx.py numbers below 10 000 (run formats count from 10 000).
_LINK_OPEN = re.compile(r'<a[\s/>]|<[^>]*\b(?:c?type="(?:link|x-(?:html-)?a)"|fs:fs="a")|\ue010o\d{1,4}\ue011\Z', re.I)
_RUN = re.compile(r"\w+")  # a run of letters and digits: what markup may part a word between
_OWN, _CLAIMED, _SAME, _NEAR, _EMPTY = 1000, -1000, 500, 10, -2500  # _in_source_order's scores
_REACH = 2  # source words on either side of a tag whose translations it drops from its edges
Translates = Callable[[str, str], bool]  # (source word, target word) -> whether it can translate it


def is_link(tag: Tag) -> bool:
    """Whether ``tag`` is a link, by its markup: ``<a ...>``, Markdown's ``[``, an XLIFF code with
    ``ctype="link"``/``"x-a"``/``"x-html-a"`` or ``type="link"``, a DOCX hyperlink. An XLIFF ``<g>``
    that says nothing of its kind (odf2xliff's) is not known to be one."""
    return bool(tag.close) and (tag.open == "[" or _LINK_OPEN.match(tag.open) is not None)


class Links(list):
    """A unit's links (``Link``s), with the word table its tags' edges are trimmed by
    (``translates``; None: no trim): what each format writer hands ``transfer`` as it is."""

    def __init__(self, links: Iterable[Link] = (), translates: Translates | None = None) -> None:
        super().__init__(links)
        self.translates = translates


class PlacementError(RuntimeError):
    """The placed markup does not have the source's tag tree (a defect of the placement)."""


@dataclass(frozen=True)
class Piece:
    text: str
    markup: bool  # True: verbatim markup; False: translated text, to be escaped by the writer


@dataclass
class _Node:
    index: int  # in the unit's tags; -1 for the unit itself
    start: int  # source characters [start, end)
    end: int
    paired: bool
    link: bool = False
    children: list[_Node] = field(default_factory=list)
    lo: int = 0  # target words [lo, hi); a point tag sits in gap lo == hi (gap g: before target word g)
    hi: int = 0


@dataclass
class _Alignment:
    source: str
    translation: str
    words: list[CharRange]  # the translation's words (parted as ``_parted`` says)
    source_words: list[CharRange]  # aligned source words, sorted
    cores: list[CharRange]  # every source word's core (``_core``)
    aligned: dict[int, set[int]]  # source word start -> target word indexes
    rule: str
    notes: list[str]
    empty_pairs: bool | Callable[[Tag], bool]
    nests: Callable[[Tag, Tag], bool] | None = None
    respell: Callable[[Tag], Tag | None] | None = None
    spelled: dict[int, Tag] = field(default_factory=dict)  # tag index -> how it is written instead
    joins: dict[tuple[int, int], str] = field(default_factory=dict)  # (point, next point of its list) -> between
    apart: dict[int, tuple[bool, bool]] = field(default_factory=dict)  # point tag -> ``_apart``'s (before, after)

    def can_be_empty(self, tag: Tag) -> bool:
        return self.empty_pairs if isinstance(self.empty_pairs, bool) else self.empty_pairs(tag)

    def written(self, tags: Sequence[Tag], index: int) -> Tag:
        return self.spelled.get(index, tags[index])

    def whole(self, node: _Node) -> bool:
        """Whether paired tag ``node`` holds (the core of) every word of the unit."""
        return bool(self.cores) and all(c0 < node.end and node.start < c1 for c0, c1 in self.cores)


def transfer(source: str, tags: Sequence[Tag], translation: str, links: Sequence[Link],
             rule: str = "hull", empty_pairs: bool | Callable[[Tag], bool] = True,
             nests: Callable[[Tag, Tag], bool] | None = None,
             respell: Callable[[Tag], Tag | None] | None = None,
             translates: Translates | None = None, keep_link_text: bool = False) -> tuple[list[Piece], list[str]]:
    """The translation with ``tags`` placed in it, as pieces of text and markup, and notes about
    tags placed without alignment. Tags are given on ``source`` character offsets. ``rule``: a
    paired tag spans all its aligned target words ("hull"), or only their largest run ("cluster":
    runs may skip one word), which bench/tag_placement.py measured as no better with the "grow"
    links the format writers use. ``empty_pairs``: a paired tag left without a word holds nothing
    (``<g id="3"></g>``); if False (Markdown cannot write emphasis around nothing) it goes in the
    sibling nearest its place instead, around the same words, with a note; a predicate on the tag
    says which tags can hold nothing. ``nests(outer, inner)``: whether ``inner`` can be written
    directly inside ``outer`` around the same words (``~~~~Haus~~~~`` starts a code fence in
    Markdown, ``*`` in ``*`` reads as ``**``); a host it cannot nest in is taken only with the tag
    written as ``respell(tag)`` says (``_`` for ``*``), and a tag no sibling can host and that
    cannot hold nothing is placed around nothing in source order, flagged. Without ``nests`` any
    sibling hosts. ``translates``: the word table tags' edges are trimmed by (``_trimmed``); by
    default ``links``' own, if they are ``Links``. ``keep_link_text``: a link placed on no word
    keeps its source text (``_kept_link_texts``), the one exception to an unchanged translation."""
    root = tag_tree(source, tags)
    if translates is None:
        translates = getattr(links, "translates", None)
    words, pairs = _parted(source, tags, translation, _refined(source, tags, translation, links, translates))
    notes: list[str] = []
    if tags and not words:
        notes.append("markup kept without a translation to place it in")
    aligned: dict[int, set[int]] = {}
    for (s0, _), target in pairs:
        aligned.setdefault(s0, set()).add(target)
    cores = [_core(source, a, b) for a, b in word_spans(source)]
    alignment = _Alignment(source, translation, words, sorted({s for s, _ in pairs}), cores, aligned, rule, notes,
                           empty_pairs, nests, respell, apart=_apart(source, tags))
    _place(root, 0, len(words), tags, alignment)
    events: dict[int, list[tuple[str, int]]] = defaultdict(list)
    _emit(root, events)
    written = [alignment.written(tags, i) for i in range(len(tags))]
    kept = _kept_link_texts(source, tags, root, notes) if keep_link_text else {}
    marked = [replace(tag, close=f"\ufdd0{i}\ufdd1{tag.close}") if i in kept else tag for i, tag in enumerate(written)]
    pieces, order = _pieces(translation, words, marked, events, _punctuation_outside(source, tags),
                            alignment.apart, alignment.joins)
    _check(order, tags, root)
    return (_with_kept_texts(pieces, kept, written) if kept else pieces), notes


def _refined(source: str, tags: Sequence[Tag], translation: str, links: Sequence[Link],
             translates: Translates | None) -> list[Link]:
    """``links`` as pairs of whole words (a span goes to the word it starts in), each word spelled
    the same on both sides linked to its twin alone (``_twins``), and given ``translates``, the
    tags' edge words trimmed (``_trimmed``). No links, no alignment to correct: tags then go by
    position, which a twin's one link would override for every word around it."""
    source_words, target_words = word_spans(source), word_spans(translation)
    if not (tags and links and source_words and target_words):
        return list(links)
    source_starts, target_starts = [a for a, _ in source_words], [a for a, _ in target_words]
    pairs = {(bisect.bisect_right(source_starts, s[0]) - 1, bisect.bisect_right(target_starts, t[0]) - 1)
             for s, t in links}
    source_cores = [source[slice(*_core(source, *w))].casefold() for w in source_words]
    target_cores = [translation[slice(*_core(translation, *w))].casefold() for w in target_words]
    twins = _twins(source_cores, target_cores)
    for i, j in list(twins.items()):  # the twin is another source word's translation: no twin
        if any(k != i and j == t and _forms(source_cores[k], target_cores[j]) for k, t in pairs):
            del twins[i]
    taken = set(twins.values())
    pairs = {(i, j) for i, j in pairs if i >= 0 and j >= 0 and i not in twins and j not in taken} | set(twins.items())
    if translates is not None:
        pairs = _trimmed(source, tags, translation, source_words, target_words, pairs, translates)
    return [(source_words[i], target_words[j]) for i, j in sorted(pairs)]


def _forms(first: str, second: str) -> bool:
    """Whether two words (cores, case-folded) may be forms of one word: one starts with the other, of
    three letters or more (``tag`` and ``tags``)."""
    shorter, longer = sorted((first, second), key=len)
    return len(shorter) >= 3 and longer.startswith(shorter)


def _twins(source: list[str], target: list[str]) -> dict[int, int]:
    """Source word -> target word, for the words (cores, case-folded) found once on each side, of
    two characters or more or not letters only (a one-letter word such as "a" is no name)."""
    in_source, in_target = Counter(source), Counter(target)
    at = {word: j for j, word in enumerate(target) if in_target[word] == 1}
    return {i: at[word] for i, word in enumerate(source)
            if in_source[word] == 1 and word in at and (len(word) >= 2 or not word.isalpha())}


def _trimmed(source: str, tags: Sequence[Tag], translation: str, source_words: list[CharRange],
             target_words: list[CharRange], pairs: set[tuple[int, int]],
             translates: Translates) -> set[tuple[int, int]]:
    """``pairs`` (source word, target word) without those of a paired tag's words to the first or
    last of its target words where ``translates`` says that word translates none of the tag's words
    but one of the ``_REACH`` words on either side outside it; again while the tag keeps two target
    words or more. Tags in opening order, an outer tag's trim seen by the tags inside it."""
    originals, translated = [source[a:b] for a, b in source_words], [translation[a:b] for a, b in target_words]

    def translates_any(words: Iterable[int], j: int) -> bool:
        return any(translates(originals[i], translated[j]) for i in words)

    cores = [_core(source, *w) for w in source_words]
    for tag in sorted((t for t in tags if t.close), key=lambda t: (t.start, -t.end)):
        inside = {i for i, (c0, c1) in enumerate(cores) if c0 < tag.end and tag.start < c1}
        if not inside:
            continue
        outside = [i for i in range(min(inside) - _REACH, max(inside) + _REACH + 1)
                   if 0 <= i < len(source_words) and i not in inside]
        while len(mine := sorted({j for i, j in pairs if i in inside})) >= 2:
            foreign = [j for j in (mine[0], mine[-1]) if not translates_any(inside, j) and translates_any(outside, j)]
            if not foreign:
                break
            pairs -= {(i, foreign[0]) for i in inside}
    return pairs


def _parted(source: str, tags: Sequence[Tag], translation: str,
            links: Sequence[Link]) -> tuple[list[CharRange], list[tuple[CharRange, int]]]:
    """The translation's words, and the links as (source word, target word index) pairs, with words
    parted between their runs of letters where markup needs it: a source word where a paired tag
    starts or ends between two runs (``[<a>Contents</a>][<a>Index</a>]``: ``[Contents``, ``][Index]``);
    a target word where it is aligned to source words (or parts) inside different tags, into one part
    per such tag in source order (as many as its runs allow; never a placeholder), each tag's words
    aligned to their part. A parted source word is also aligned to the first target word of its
    shape, the same punctuation around and between its runs (``[Inhalt][Index]``), which the
    alignment may miss: that word is parted as the source word is, other words aligned to it
    going to all of it."""
    words = word_spans(translation)
    starts = [w[0] for w in words]
    pairs = {(tuple(s), bisect.bisect_right(starts, t[0]) - 1) for s, t in links}
    pairs = sorted((s, t) for s, t in pairs if t >= 0)
    spans = sorted({(t.start, t.end) for t in tags if t.close})
    if not spans or not words:
        return words, pairs
    bounds = sorted({b for span in spans for b in span})
    parts: dict[CharRange, list[CharRange]] = {}
    for s0, s1 in word_spans(source):
        runs = [m.span() for m in _RUN.finditer(source, s0, s1)]
        cuts = [end for (_, end), (start, _) in zip(runs, runs[1:])
                if bisect.bisect_right(bounds, start) > bisect.bisect_left(bounds, end)]
        if cuts:
            parts[(s0, s1)] = list(zip([s0, *cuts], [*cuts, s1]))
    twins: dict[int, CharRange] = {}  # target word -> the parted source word of its shape
    for word in sorted(parts):
        shape = _RUN.split(source[word[0]:word[1]])
        twin = next((j for j, (w0, w1) in enumerate(words) if j not in twins and
                     _RUN.split(translation[w0:w1]) == shape), None)
        if twin is not None:
            twins[twin] = word
            pairs.append((word, twin))
    units = sorted({(t, piece) for s, t in pairs for piece in parts.get(s, [s])})  # by target word, then source

    def inside(piece: CharRange) -> frozenset[int]:
        c0, c1 = _core(source, *piece)
        return frozenset(k for k, (a, b) in enumerate(spans) if a < c1 and c0 < b)

    group: dict[tuple[int, CharRange], int | None] = {}  # (target word, source piece) -> its group there (None: all)
    count: dict[int, int] = {}  # target word -> its groups
    for t, piece in units:
        if t in twins:  # parted as its twin is, the twin's parts in order; other words on all of it
            count[t] = len(parts[twins[t]])
            group[(t, piece)] = parts[twins[t]].index(piece) if piece in parts[twins[t]] else None
            continue
        held = inside(piece)
        if t not in count or held != last:
            count[t] = count.get(t, 0) + 1
        group[(t, piece)], last = count[t] - 1, held
    parted, of = [], []  # the new words; per old word, the indexes of its parts
    for j, (w0, w1) in enumerate(words):
        runs = [m.span() for m in _RUN.finditer(translation, w0, w1)]
        cuts = [] if _PLACEHOLDER.fullmatch(translation, w0, w1) else \
            [runs[(k * len(runs)) // n - 1][1] for n in [min(count.get(j, 1), len(runs))] for k in range(1, n)]
        of.append(list(range(len(parted), len(parted) + len(cuts) + 1)))
        parted += list(zip([w0, *cuts], [*cuts, w1]))
    return parted, [(piece, of[t][k]) for t, piece in units for g in [group[(t, piece)]]
                    for k in (range(len(of[t])) if g is None else [g * len(of[t]) // count[t]])]


def tag_tree(source: str, tags: Sequence[Tag]) -> _Node:
    """The tags as a tree under a node for the whole unit; a tag without ``parent`` goes in the
    innermost paired tag whose span holds it (of equal spans, the one listed first is outside)."""
    root = _Node(-1, 0, len(source), True)
    nodes = [_Node(i, t.start, t.end, bool(t.close), is_link(t)) for i, t in enumerate(tags)]
    for i, tag in enumerate(tags):
        if tag.parent is not None:
            if not (0 <= tag.parent < len(tags)) or not tags[tag.parent].close or tag.parent == i:
                raise ValueError(f"tag {i} ({tag.open[:40]}) names parent {tag.parent}, which is not a paired tag")
            parent = nodes[tag.parent]
        else:
            holders = [j for j, other in enumerate(tags) if other.close and j != i and _holds(other, tag, j < i)]
            parent = nodes[min(holders, key=lambda j: (tags[j].end - tags[j].start, -j))] if holders else root
        parent.children.append(nodes[i])
    _acyclic(root, len(tags))
    return root


def _holds(outer: Tag, inner: Tag, listed_first: bool) -> bool:
    if not inner.close:  # a point: strictly inside
        return outer.start < inner.start < outer.end
    if (outer.start, outer.end) == (inner.start, inner.end):
        return listed_first
    return outer.start <= inner.start and inner.end <= outer.end


def _acyclic(root: _Node, count: int) -> None:
    seen, stack = set(), [root]
    while stack:
        node = stack.pop()
        for child in node.children:
            if child.index in seen:
                raise ValueError(f"tag {child.index} sits in two places")
            seen.add(child.index)
            stack.append(child)
    if len(seen) != count:
        raise ValueError("the tags' parents form a cycle")


def _place(node: _Node, lo: int, hi: int, tags: Sequence[Tag], al: _Alignment) -> None:
    """Give ``node`` the target words [lo, hi) and place its children in them (recursively)."""
    node.lo, node.hi = lo, hi
    pairs = [c for c in node.children if c.paired]
    # A source word counts for a tag by its letters and digits (its core): "<span>, </span>" after
    # "Tutorial" holds the comma of "Tutorial," but not the word, which is its neighbour's.
    targets = {c.index: sorted({t for s0, s1 in al.source_words for c0, c1 in [_core(al.source, s0, s1)]
                                if c0 < c.end and c1 > c.start
                                for t in al.aligned.get(s0, ()) if lo <= t < hi}) for c in pairs}
    for child in pairs:  # around the whole unit: around the whole translation, whatever the links say
        if al.whole(child):
            targets[child.index] = list(range(lo, hi))
    # A tag that holds a link (an ODF text:span around a text:a) is placed as a link among its
    # siblings: links keep their source order across the unit, not only within one parent.
    linked = [c for c in pairs if c.link or _holds_link(c)]
    placed = _place_links(linked, node, lo, hi, targets, tags, al)
    for child in sorted((c for c in pairs if c not in linked), key=lambda c: (-len(targets[c.index]), c.index)):
        found = targets[child.index]
        span = None
        if found:
            span = _free_part(_wanted(found, al.rule), [(c.lo, c.hi) for c in placed], found)
        if span is None:
            span = _by_position(child, node, lo, hi, placed)
            host = _host(child, placed, span[0], tags, al) if span[0] == span[1] and \
                not al.can_be_empty(tags[child.index]) and placed else None
            if host is not None:
                node.children.remove(child)
                host.children.append(child)
                al.notes.append(f"tag {tags[child.index].open.strip()[:40]} placed inside "
                                f"{tags[host.index].open.strip()[:40]}: no word left for it")
                continue
            al.notes.append(f"tag {tags[child.index].open.strip()[:40]} placed by position: "
                            + ("no aligned words" if span[0] < span[1] else "no word left for it"))
        child.lo, child.hi = span
        placed.append(child)
    for child in placed:
        _place(child, child.lo, child.hi, tags, al)
    pairs = placed
    for child in node.children:
        if not child.paired:
            child.lo = child.hi = _gap(child, node, tags[child.index], pairs, al)
    _points_in_order(node, tags, pairs, al)
    for run in _lists(node, tags, al.source):
        _in_list_order(run, tags, al)


def _holds_link(node: _Node) -> bool:
    return any(c.link or _holds_link(c) for c in node.children)


def _wanted(found: list[int], rule: str) -> CharRange:
    return _cluster(found) if rule == "cluster" else (found[0], found[-1] + 1)


def _place_links(links: list[_Node], node: _Node, lo: int, hi: int, targets: dict[int, list[int]],
                 tags: Sequence[Tag], al: _Alignment) -> list[_Node]:
    """Place ``node``'s links, in source order, before its other tags: each on the words it wants
    (``_wanted``) where every one has some, none shares one and they keep the source's order; else
    all of them by ``_in_source_order``, with a note naming the links that made it so."""
    links = sorted(links, key=lambda c: (c.start, c.index))
    wanted = [_wanted(targets[c.index], al.rule) if targets[c.index] else None for c in links]
    trouble: dict[int, str] = {}
    for i, span in enumerate(wanted):
        if span is None:
            trouble[i] = "no aligned words"
        for j in range(i + 1, len(links)):
            if span is not None and wanted[j] is not None and span[1] > wanted[j][0]:
                reason = "aligned words in common" if wanted[j][1] > span[0] else "order changed"
                trouble.setdefault(i, reason)
                trouble.setdefault(j, reason)
    if trouble:
        spans = _in_source_order(links, node, lo, hi, targets, al)
        al.notes.append("links placed in source order: " + ", ".join(
            f"{_named(tags[links[i].index], al.source)} ({reason})" for i, reason in sorted(trouble.items())))
        al.notes += [f"link {_named(tags[c.index], al.source)} holds no word: no word is left for it "
                     f"between the links beside it" for c, (a, b) in zip(links, spans) if a == b]
    else:
        spans = wanted
    for link, (a, b) in zip(links, spans):
        link.lo, link.hi = a, b
    return links


def _named(tag: Tag, source: str) -> str:
    text = " ".join(source[tag.start:tag.end].split())
    return f'"{text[:40]}"' + (f" {tag.open.strip()[:40]}" if tag.open.startswith("<") else "")


def _in_source_order(links: list[_Node], node: _Node, lo: int, hi: int, targets: dict[int, list[int]],
                     al: _Alignment) -> list[CharRange]:
    """Spans of words [lo, hi) for ``links`` (in source order) that follow one another in that order,
    chosen by dynamic programming (links x words) for the best sum of: per word of a link, its own
    aligned word ``_OWN``, a word aligned to any other source word ``_CLAIMED``, an unaligned word
    with the letters of one of the link's words ``_SAME`` (a code kept as it was: ``foo()``), an
    unaligned word in the link's share of its parent ``_NEAR``, any other unaligned word a little
    less than nothing; and ``_EMPTY`` per link on no word. That is worse than a claimed word, or one
    taken from a link that keeps others (-2000 at most), better than moving a link off its one word
    (-3000): a link holds no word only where no word is left between its neighbours and each holds
    one. On a tie the earlier link keeps its word."""
    n, claimed = hi - lo, {t for found in al.aligned.values() for t in found}
    best = [0] * (n + 1)  # best[x]: the best sum for the links so far within words [lo, lo + x)
    starts: list[list[int | None]] = []  # per link and x: where its span starts (None: word x - 1 is outside)
    for link in links:
        prefix = [0]
        for gain in _gains(link, node, lo, hi, set(targets[link.index]), claimed, al):
            prefix.append(prefix[-1] + gain)
        row, back, top, top_at = [0] * (n + 1), [None] * (n + 1), None, None
        for x in range(n + 1):
            if x > 0 and (top is None or best[x - 1] - prefix[x - 1] > top):
                top, top_at = best[x - 1] - prefix[x - 1], x - 1
            options = [(best[x] + _EMPTY, x)] + ([(top + prefix[x], top_at)] if top is not None else []) + \
                ([(row[x - 1], None)] if x > 0 else [])
            row[x], back[x] = max(options, key=lambda o: o[0])
        best = row
        starts.append(back)
    spans: list[CharRange] = []
    x = n
    for back in reversed(starts):
        while back[x] is None:
            x -= 1
        spans.append((lo + back[x], lo + x))
        x = back[x]
    return spans[::-1]


def _gains(link: _Node, node: _Node, lo: int, hi: int, own: set[int], claimed: set[int], al: _Alignment) -> list[int]:
    """Per word of [lo, hi): what it is worth in ``link`` (``_in_source_order``)."""
    cores = {al.source[a:b].casefold() for s0, s1 in word_spans(al.source[link.start:link.end], link.start)
             for a, b in [_core(al.source, s0, s1)]}
    length = max(node.end - node.start, 1)
    first = lo + (link.start - node.start) * (hi - lo) // length
    last = max(first + 1, lo + math.ceil((link.end - node.start) * (hi - lo) / length))
    gains = []
    for word in range(lo, hi):
        if word in own:
            gains.append(_OWN)
        elif word in claimed:
            gains.append(_CLAIMED)
        elif al.translation[slice(*_core(al.translation, *al.words[word]))].casefold() in cores:
            gains.append(_SAME)
        elif first <= word < last:
            gains.append(_NEAR)
        else:
            gains.append(-_NEAR - _NEAR * max(first - word, word - last + 1) // max(hi - lo, 1))
    return gains


_WORD_CHARACTER = re.compile(r"\w")
# punctuation and then whitespace, or punctuation at the unit's edge, or the edge itself: before, after a point
_SET_APART_BEFORE, _SET_APART_AFTER = re.compile(r"(?:\A|\s)[^\w\s]+\Z|\A\Z"), re.compile(r"[^\w\s]+(?:\s|\Z)|\Z")


def _core(source: str, start: int, end: int) -> CharRange:
    """source[start:end] (a word) without the punctuation at its edges; the whole word if it is
    all punctuation."""
    inner = [m.start() for m in _WORD_CHARACTER.finditer(source, start, end)]
    return (inner[0], inner[-1] + 1) if inner else (start, end)


def _host(child: _Node, placed: list[_Node], gap: int, tags: Sequence[Tag], al: _Alignment) -> _Node | None:
    """The placed sibling nearest ``gap``, holding words, that ``child`` can be written in (as it
    is, else as respelled, which is then recorded); None if there is none."""
    tag = tags[child.index]
    holding = [c for c in placed if c.hi > c.lo]  # in one around nothing it would hold nothing too
    for candidate in sorted(holding, key=lambda c: (min(abs(c.lo - gap), abs(c.hi - gap)), c.index)):
        outer = al.written(tags, candidate.index)
        if al.nests is None or al.nests(outer, tag):
            return candidate
        other = al.respell(tag) if al.respell is not None else None
        if other is not None and al.nests(outer, other):
            al.spelled[child.index] = other
            return candidate
    return None


def _cluster(targets: list[int]) -> CharRange:
    """The run of aligned target words (gaps of at most one word) holding the most links; the
    first such run on ties."""
    runs: list[list[int]] = []
    for word in targets:
        if runs and word - runs[-1][-1] <= 2:
            runs[-1].append(word)
        else:
            runs.append([word])
    best = max(runs, key=len)
    return best[0], best[-1] + 1


def _free_part(wanted: CharRange, taken: list[CharRange], targets: list[int]) -> CharRange | None:
    """The part of ``wanted`` that no sibling holds and that holds no sibling's gap, with the most
    of ``targets`` (then the longest, then the first); None if nothing is free."""
    parts, current = [], None
    cuts = {a for a, b in taken if a == b}
    for word in range(*wanted):
        free = not any(a <= word < b for a, b in taken)
        if free and current is not None and word not in cuts:
            current[1] = word + 1
        elif free:
            current = [word, word + 1]
            parts.append(current)
        else:
            current = None
    if not parts:
        return None
    best = max(parts, key=lambda p: (sum(p[0] <= t < p[1] for t in targets), p[1] - p[0], -p[0]))
    return best[0], best[1]


def _by_position(child: _Node, node: _Node, lo: int, hi: int, placed: list[_Node]) -> CharRange:
    """The free words at ``child``'s relative position and share of its parent; else a word taken from the
    end of the nearest sibling that has two or more and is no link; else the nearest gap of the parent that no
    sibling holds inside it (the tag then holds no word)."""
    length = max(node.end - node.start, 1)
    share = (child.start - node.start) / length
    at = lo + share * (hi - lo)
    first = min(max(lo + round(share * (hi - lo)), lo), max(hi - 1, lo))
    last = lo + math.ceil((child.end - node.start) / length * (hi - lo))
    span = _free_part((first, max(first + 1, min(last, hi))), [(c.lo, c.hi) for c in placed], []) if hi > lo else None
    if span is not None:
        return span
    free = [w for w in range(lo, hi) if not any(c.lo <= w < c.hi for c in placed)]
    if free:
        word = min(free, key=lambda w: (abs(w + 0.5 - at), w))
        return word, word + 1
    wide = [c for c in placed if c.hi - c.lo >= 2 and not c.link]  # a link's words are its text
    if wide:
        sibling = min(wide, key=lambda c: (min(abs(c.lo + 0.5 - at), abs(c.hi - 0.5 - at)), c.index))
        if abs(sibling.lo + 0.5 - at) < abs(sibling.hi - 0.5 - at):
            sibling.lo += 1
            return sibling.lo - 1, sibling.lo
        sibling.hi -= 1
        return sibling.hi, sibling.hi + 1
    gaps = [g for g in range(lo, hi + 1) if not any(c.lo < g < c.hi for c in placed)]
    gap = min(gaps, key=lambda g: (abs(g - at), g))
    return gap, gap


def _gap(point: _Node, node: _Node, tag: Tag, pairs: list[_Node], al: _Alignment) -> int:
    """The gap of ``node``'s words for a point tag: its start or end if it stood there; else after
    the target of the word it is glued to, or before that of the next aligned word; moved out of
    any sibling it would fall inside."""
    lo, hi, source, position = node.lo, node.hi, al.source, point.start

    def inside(targets):
        return [t for t in targets if lo <= t < hi]

    if not source[node.start:position].strip():
        gap = lo
    elif not source[position:node.end].strip():
        gap = hi
    else:
        glued = inside(t for s0, s1 in al.source_words if s1 == position for t in al.aligned.get(s0, ()))
        following = [inside(al.aligned.get(s0, ())) for s0, _ in al.source_words if position <= s0 < node.end]
        following = [f for f in following if f]
        if glued and not tag.space[0]:
            gap = max(glued) + 1
        elif following:
            gap = min(following[0])
        else:
            gap = lo + round((hi - lo) * (position - node.start) / max(node.end - node.start, 1))
    for pair in pairs:
        if pair.lo < gap < pair.hi:
            gap = pair.lo if position <= pair.start else pair.hi
    return gap


# "the <code>class</code> attribute": a point between a determiner and a noun (whitespace around it) names that
# noun's thing, and goes with the noun wherever the model puts it (``auf dem <code>`<code>`</code> Tag auf das
# <code>class</code> Attribut``); a word of _NO_NOUN after it says it is no such name (``the <var>x</var> will be``)
_DETERMINER = re.compile(r"(?:^|\s)(?:the|a|an|this|that|these|those|its|their|your|our|my|his|her|each|every|any|"
                         r"some|no|another|which|whose)\s*\Z", re.I)
_NAMED_NOUN = re.compile(r"\s*([a-z][a-z-]*)\b(?![\w(])")
_NO_NOUN = frozenset("is are was were be been being am will would shall should can could may might must do does "
                     "did has have had and or nor but not of to in on at by for from with as if than then that "
                     "which who whom whose when where while so into onto over under via per about after before "
                     "between through without within also only just here there now".split())
# _points_in_order's costs: a point before one that precedes it in the source; a point moved
_DESCENT, _MOVE = 10_000, 100


def _points_in_order(node: _Node, tags: Sequence[Tag], pairs: list[_Node], al: _Alignment) -> None:
    """Keep ``node``'s points (codes, fixed characters; not line breaks) in source order where the
    alignment can. ``_gap`` puts a point before the target of the next aligned word, so where the
    model moves that word (a German verb to the clause's end: ``the <var>shell-command</var> will be
    used as ... the <code>/bin/sh</code> shell`` -> ``die ... /bin/sh Shell shell-command verwendet``),
    the point follows it past the points after it. Each point set apart from its words on both sides
    may also go after the target of the aligned word before it, or before that of the aligned word
    after it (``_sides``: places the alignment gives it too); of all those choices, the one with the
    fewest points after a point that follows them in the source, then the fewest points moved, then
    the least distance, is taken (dynamic programming over the points in source order), with a note
    naming the points moved. A point glued to a word, or at its parent's edge, stays where it is."""
    points = sorted((c for c in node.children if not c.paired and not _LINE_BREAK.match(tags[c.index].open)),
                    key=lambda c: (c.start, c.index))
    gaps = [p.lo for p in points]
    if all(a <= b for a, b in zip(gaps, gaps[1:])):
        return
    choices = [[p.lo] + [g for g in _sides(p, node, pairs, al) if g != p.lo] for p in points]
    # best[k][c]: (cost, previous choice) of points[:k + 1] with points[k] at choices[k][c]
    best: list[list[tuple[tuple[int, int], int]]] = []
    for k, own in enumerate(choices):
        row = []
        for c, gap in enumerate(own):
            here = (_MOVE if c else 0) + abs(gap - gaps[k])
            if not best:
                row.append(((0, here), -1))
                continue
            row.append(min((((cost[0] + (_DESCENT if choices[k - 1][b] > gap else 0), cost[1] + here), b)
                            for b, (cost, _) in enumerate(best[-1])), key=lambda o: o[0]))
        best.append(row)
    c = min(range(len(best[-1])), key=lambda i: best[-1][i][0])
    if best[-1][c][0][0] >= sum(_DESCENT for a, b in zip(gaps, gaps[1:]) if a > b):
        return
    picked = []
    for k in range(len(points) - 1, -1, -1):
        picked.append(c)
        c = best[k][c][1]
    moved = []
    for point, own, c in zip(points, choices, picked[::-1]):
        if c:
            point.lo = point.hi = own[c]
            moved.append(_named_point(tags[point.index]))
    al.notes.append(f"codes placed beside their other aligned word to keep the source's order: {', '.join(moved)}")


def _sides(point: _Node, node: _Node, pairs: list[_Node], al: _Alignment) -> list[int]:
    """The gaps of ``node``'s words a point may take besides ``_gap``'s: after the targets of the
    nearest aligned source word before it, before those of the nearest one after it (in ``node``),
    each moved out of a paired sibling as ``_gap`` moves it. None for a point glued to a word on a
    side (``<code>int</code>s``) or standing at its parent's start or end."""
    lo, hi, source, position = node.lo, node.hi, al.source, point.start
    if not source[node.start:position].strip() or not source[position:node.end].strip() or \
            not all(al.apart.get(point.index, (False, False))):
        return []
    noun = _NAMED_NOUN.match(source, position, node.end)
    if _DETERMINER.search(source, node.start, position) and noun and noun.group(1).casefold() not in _NO_NOUN and \
            any(s0 == noun.start(1) for s0 in al.aligned):
        return []  # "the <code>class</code> attribute": the point names the thing the next word says; it goes with it

    def inside(s0: int) -> list[int]:
        return [t for t in al.aligned.get(s0, ()) if lo <= t < hi]

    before = [found for s0, s1 in al.source_words if node.start <= s0 and s1 <= position if (found := inside(s0))]
    after = [found for s0, _ in al.source_words if position <= s0 < node.end if (found := inside(s0))]
    out = ([max(before[-1]) + 1] if before else []) + ([min(after[0])] if after else [])
    for k, gap in enumerate(out):
        for pair in pairs:
            if pair.lo < gap < pair.hi:
                out[k] = pair.lo if position <= pair.start else pair.hi
    return out


# What may stand between the items of a list of codes in the source: whitespace, punctuation that ends no
# sentence or clause, a conjunction
_CONJUNCTION = re.compile(r"\b(?:and|or|nor|as well as)\b", re.I)
_LIST_SEPARATOR = re.compile(rf"[^\w.!?:]*(?:{_CONJUNCTION.pattern}[^\w.!?:]*)?", re.I)
_JOINING = frozenset(",;/|")  # the source's separators written between a list's items (markup needs no escape)
_CLOSING_PUNCTUATION = frozenset(",;.:!?)]}")  # no space before it after a code (``LNAME ,``)
_LINE_BREAK = re.compile(r"<(?:br|wbr)\b|<x\b[^>]*ctype=\"lb\"", re.I)


def _lists(node: _Node, tags: Sequence[Tag], source: str) -> list[list[list[_Node]]]:
    """``node``'s lists of point codes: runs of two or more places of points (the points at one
    source position, in source order) that the source parts only by punctuation, whitespace and
    a conjunction (``<code>USER</code>, <code>LNAME</code> and <code>USERNAME</code>``), no paired
    sibling between them. Line breaks are no items."""
    points = sorted((c for c in node.children if not c.paired and not _LINE_BREAK.match(tags[c.index].open)),
                    key=lambda c: (c.start, c.index))
    places: list[list[_Node]] = []
    for point in points:
        if places and places[-1][0].start == point.start:
            places[-1].append(point)
        else:
            places.append([point])
    runs: list[list[list[_Node]]] = []
    for place in places:
        if runs and _LIST_SEPARATOR.fullmatch(source, runs[-1][-1][0].start, place[0].start) and \
                not any(c.paired and runs[-1][-1][0].start <= c.start < place[0].start for c in node.children):
            runs[-1].append(place)
        else:
            runs.append([place])
    return [run for run in runs if len(run) >= 2]


def _in_list_order(run: list[list[_Node]], tags: Sequence[Tag], al: _Alignment) -> None:
    """Put a list of codes (``_lists``) in source order: each item follows the word it is aligned
    to, so a model that reorders the words around the items (``USER USERNAME, LNAME und``) would
    reorder the list. Where only the list's separators stand between its items in the translation
    (``_only_separators_between``), its places take the gaps they were given, sorted, in source order,
    with a note; two items that come to share a gap are parted by the source's separator between
    them (its ``,;/|``, no conjunction: ``USER, LNAME``), as the translation gives them no word."""
    gaps = [place[0].lo for place in run]
    if gaps != sorted(gaps) and _only_separators_between(min(gaps), max(gaps), run, al):
        for place, gap in zip(run, sorted(gaps)):
            for point in place:
                point.lo = point.hi = gap
        names = ", ".join(_named_point(tags[place[-1].index]) for place in run)
        al.notes.append(f"codes placed in source order: {names} (the translation's word order changed)")
    for before, after in zip(run, run[1:]):
        between = al.source[before[0].start:after[0].start]
        punctuation = "".join(ch for ch in _CONJUNCTION.sub(" ", between).strip() if ch in _JOINING)
        al.joins[(before[-1].index, after[0].index)] = (punctuation + " " if punctuation else " ") \
            if between[-1:].isspace() else punctuation


def _only_separators_between(first: int, last: int, run: list[list[_Node]], al: _Alignment) -> bool:
    """Whether the target words between gaps ``first`` and ``last`` are the list's own separators:
    each aligned only to source words from its first item to the word right after its last, or,
    unaligned, punctuation. Items spread over words of the sentence around the list are left where
    their words put them."""
    start, end = run[0][0].start, run[-1][0].start
    sources: dict[int, set[int]] = defaultdict(set)  # target word -> the starts of the source words aligned to it
    for s0, found in al.aligned.items():
        for t in found:
            sources[t].add(s0)
    return all(all(start <= s0 <= end for s0 in sources[word]) if sources[word] else
               not any(ch.isalnum() for ch in al.translation[slice(*al.words[word])])
               for word in range(first, last))


def _named_point(tag: Tag) -> str:
    """A point tag as a note names it: its text without markup, else its markup."""
    text = " ".join(re.sub(r"<[^>]*>", "", tag.open).split())
    return f'"{text[:40]}"' if text else tag.open.strip()[:40]


def _emit(node: _Node, events: dict[int, list[tuple[str, int]]]) -> None:
    """The markup of ``node``'s children, in document order, by the gap it goes in."""
    for child in sorted(node.children, key=lambda c: (c.lo, c.hi, c.index)):
        if not child.paired:
            events[child.lo].append((_POINT, child.index))
            continue
        events[child.lo].append((_OPEN, child.index))
        _emit(child, events)
        events[child.hi].append((_CLOSE, child.index))


def _punctuation_outside(source: str, tags: Sequence[Tag]) -> dict[int, tuple[bool, bool]]:
    """Per paired tag: whether punctuation glued to the first and to the last of its target words
    stays outside it (``**Haus**.``, ``„<a>Haus</a>``): yes, unless the tag's source text itself
    starts (ends) with punctuation."""
    out = {}
    for index, tag in enumerate(tags):
        inside = source[tag.start:tag.end].strip()
        if tag.close and inside:
            out[index] = (inside[0].isalnum(), inside[-1].isalnum())
    return out


def _apart(source: str, tags: Sequence[Tag]) -> dict[int, tuple[bool, bool]]:
    """Per point tag: whether the source sets it apart from the words before (after) it, by
    whitespace, by punctuation and then whitespace (``<code>NULL</code>, the``, ``(<code>`</code> and``),
    or by the unit's edge; not where it is glued to a word (``<code>foo</code>s``,
    ``Resource_<var>x</var>``) or to another point at its place (``<code>\\</code><code>u</code>``),
    nor by a space the reader put after a line break (``line<br>next``: no punctuation)."""
    out = {}
    for index, tag in enumerate(tags):
        if tag.close:
            continue
        here = [k for k, other in enumerate(tags) if not other.close and other.start == tag.start]
        left = tag.space[0] or here[0] == index and _SET_APART_BEFORE.search(source, 0, tag.start) is not None
        right = tag.space[1] or here[-1] == index and _SET_APART_AFTER.match(source, tag.start) is not None
        out[index] = (left, right)
    return out


def _pieces(translation: str, words: list[CharRange], tags: Sequence[Tag], events,
            outside, apart, joins: dict[tuple[int, int], str]) -> tuple[list[Piece], list[tuple[str, int]]]:
    """The translation with each gap's markup in it. Closing tags go right after the word before
    them, opening tags right before the word after them, with the gap's whitespace between; point
    tags replace that whitespace, with whitespace before and after them as they had in the source.
    Punctuation glued to a tag's first or last word stays outside it where ``outside`` says so.
    Also the tags in the order they were written."""
    n = len(words)
    pieces: list[Piece] = []
    order: list[tuple[str, int]] = []
    lead = [0] * n  # characters of leading / trailing punctuation left outside the tags at a word
    trail = [0] * n
    moved_closes, moved_opens = {}, {}
    for gap in range(n + 1):
        marks = events.get(gap, [])
        closes = _run(marks, _CLOSE, lambda i: outside.get(i, (False, False))[1]) if gap > 0 else 0
        opens = _run(marks[::-1], _OPEN, lambda i: outside.get(i, (False, False))[0]) if gap < n else 0
        opens = min(opens, len(marks) - closes)
        if closes:
            trail[gap - 1] = _punctuation(translation, words[gap - 1], from_end=True)
        if opens:
            lead[gap] = _punctuation(translation, words[gap], from_end=False)
        moved_closes[gap], moved_opens[gap] = closes, opens
    for word in range(n):  # never trim a word to nothing
        length = words[word][1] - words[word][0]
        if lead[word] + trail[word] >= length:
            trail[word] = max(0, length - 1 - lead[word])

    def add(text: str, markup: bool) -> None:
        if text:
            pieces.append(Piece(text, markup))

    def put(marks) -> str:
        order.extend(marks)
        return "".join(_markup(tags, m) for m in marks)

    for gap in range(n + 1):
        marks = events.get(gap, [])
        closes, opens = moved_closes[gap], moved_opens[gap]
        if gap > 0:
            if not trail[gap - 1]:
                closes = 0  # nothing to step over: the closing tags stay with the others
            add(put(marks[:closes]), True)
            end = words[gap - 1][1]
            add(translation[end - trail[gap - 1]:end], False)
        if gap < n and not lead[gap]:
            opens = 0
        start = words[gap - 1][1] if gap > 0 else 0
        end = words[gap][0] if gap < n else len(translation)
        beside = (translation[start - 1:start] if gap > 0 else "", translation[end:end + 1] if gap < n else "")
        _gap_markup(marks[closes:len(marks) - opens], translation[start:end], tags, (gap == 0, gap == n), beside,
                    apart, joins, add, put)
        if gap < n:
            begin, finish = words[gap]
            add(translation[begin:begin + lead[gap]], False)
            add(put(marks[len(marks) - opens:]), True)
            add(translation[begin + lead[gap]:finish - trail[gap]], False)
    return _merged(pieces), order


def _run(marks: list[tuple[str, int]], kind: str, wants) -> int:
    """How many of ``marks``, from the first, are of ``kind`` and want their punctuation outside."""
    count = 0
    for mark_kind, index in marks:
        if mark_kind != kind or not wants(index):
            break
        count += 1
    return count


def _punctuation(translation: str, word: CharRange, from_end: bool) -> int:
    """Characters of punctuation at the start (end) of a word, leaving at least one character;
    none in a placeholder (``%1$s``, ``{name}``), which markup never splits."""
    start, end = word
    if _PLACEHOLDER.fullmatch(translation, start, end):
        return 0
    count = 0
    while end - start - count > 1:
        ch = translation[end - 1 - count] if from_end else translation[start + count]
        if ch.isalnum():
            break
        count += 1
    return count


def _markup(tags: Sequence[Tag], mark: tuple[str, int]) -> str:
    kind, index = mark
    return tags[index].close if kind == _CLOSE else tags[index].open


def _gap_markup(marks, whitespace: str, tags: Sequence[Tag], edges: tuple[bool, bool], beside: tuple[str, str],
                apart: dict[int, tuple[bool, bool]], joins: dict[tuple[int, int], str], add, put) -> None:
    """One gap's markup with its whitespace: between the closing tags that lead it and the rest,
    or, where the gap holds point tags, replaced by the whitespace the first and last of them had
    around them in the source, outside the closing tags that lead and the opening tags that end it
    (a tag's content never starts or ends with whitespace it did not have; none before closing
    punctuation, which a list's items put in source order may come to stand before); and by a space where a
    point set ``apart`` from the words on a side in the source would touch a letter or digit there
    (``beside``: the characters of the translation around the gap; ``edges``: the gap is the
    unit's first, its last)."""
    first, last = edges
    closes = _run(marks, _CLOSE, lambda i: True)
    opens = min(_run(marks[::-1], _OPEN, lambda i: True), len(marks) - closes)
    middle = marks[closes:len(marks) - opens]
    points = [index for kind, index in middle if kind == _POINT]
    if not points:
        add(put(marks[:closes]), True)
        add(whitespace, False)
        add(put(marks[closes:]), True)
        return
    before = " " if not first and (tags[points[0]].space[0] or apart[points[0]][0] and beside[0].isalnum()) else ""
    after = " " if not last and (tags[points[-1]].space[1] and beside[1] not in _CLOSING_PUNCTUATION
                                 or apart[points[-1]][1] and beside[1].isalnum()) else ""
    if first:
        add(whitespace, False)
    inner, previous = put(marks[:closes]) + before, None
    for mark in middle:  # two point tags apart in the source stay apart (`a` `b`, not `a``b`); a list's items
        if previous is not None and mark[0] == _POINT and (previous, mark[1]) in joins:  # as its separator says
            inner += joins[(previous, mark[1])]
        elif previous is not None and mark[0] == _POINT and (tags[previous].space[1] or tags[mark[1]].space[0]):
            inner += " "
        inner += put([mark])
        previous = mark[1] if mark[0] == _POINT else None
    add(inner + after + put(marks[len(marks) - opens:]), True)
    if last and not first:
        add(whitespace, False)


def _merged(pieces: list[Piece]) -> list[Piece]:
    out: list[Piece] = []
    for piece in pieces:
        if out and out[-1].markup == piece.markup:
            out[-1] = Piece(out[-1].text + piece.text, piece.markup)
        else:
            out.append(piece)
    return out


def _check(order: list[tuple[str, int]], tags: Sequence[Tag], root: _Node) -> None:
    """Raise ``PlacementError`` unless ``order`` (the tags as written) holds every tag once, with
    the parent it has in ``root``, well nested."""
    parent_of = {}
    stack = [root]
    while stack:
        node = stack.pop()
        for child in node.children:
            parent_of[child.index] = node.index
            stack.append(child)
    open_stack, seen = [-1], []
    for kind, index in order:
        if kind == _OPEN:
            if parent_of[index] != open_stack[-1]:
                raise PlacementError(f"tag {tags[index].open[:40]} opens outside its parent")
            open_stack.append(index)
            seen.append(index)
        elif kind == _CLOSE:
            if open_stack[-1] != index:
                raise PlacementError(f"tag {tags[index].close[:40]} closes across another tag")
            open_stack.pop()
        else:
            if parent_of[index] != open_stack[-1]:
                raise PlacementError(f"tag {tags[index].open[:40]} is placed outside its parent")
            seen.append(index)
    if open_stack != [-1] or sorted(seen) != list(range(len(tags))):
        raise PlacementError("a tag is missing from the placed markup, written twice or never closed")


# -- a link the translation leaves no word ---------------------------------------------------------------
_KEPT = re.compile("\ufdd0(\\d+)\ufdd1")  # noncharacters: where a link's kept text goes, in its closing markup
_OPENING = frozenset("([{<«‹\"'‘“„¿¡/-")  # characters a kept text after them is not set apart from


def _kept_link_texts(source: str, tags: Sequence[Tag], root: _Node, notes: list[str]) -> dict[int, str]:
    """What a link placed on no word of the translation gets (the model left its words out, or the
    links beside it took them): its source text, whitespace collapsed, so that it can still be read
    and followed, with a note; a link whose source text has no letter or digit (an icon's) stays as
    placed. Per such link (its tag index): that text."""
    found, stack = [], [root]
    while stack:
        node = stack.pop()
        stack += node.children
        text = " ".join(source[node.start:node.end].split())
        if node.link and node.lo == node.hi and any(ch.isalnum() for ch in text):
            found.append((node.index, text))
    for index, text in sorted(found):
        notes.append(f"link {_named(tags[index], source)} kept its source text: the translation left it no word")
    return dict(found)


def _with_kept_texts(pieces: list[Piece], kept: dict[int, str], tags: Sequence[Tag]) -> list[Piece]:
    """``pieces`` with each link's kept text where its mark stands (before its closing markup), set
    apart by a space, outside the link, from a word it would touch."""
    flat: list[Piece] = []
    at: list[tuple[int, int]] = []  # (position in ``flat`` of a kept text, its link's tag index)
    for piece in pieces:
        parts = _KEPT.split(piece.text) if piece.markup else [piece.text]
        for k, part in enumerate(parts):
            if k % 2 and int(part) in kept:
                at.append((len(flat), int(part)))
                flat.append(Piece(kept[int(part)], False))
            else:  # markup, or the page's own noncharacters (never a mark of this unit's)
                flat.append(Piece(f"\ufdd0{part}\ufdd1" if k % 2 else part, piece.markup))
    for position, index in at:  # the link's opening ends the markup before its text, its closing starts the next
        before = next((p.text[-1] for p in reversed(flat[:position]) if not p.markup and p.text), "")
        after = next((p.text[0] for p in flat[position + 1:] if not p.markup and p.text), "")
        opening, closing = flat[position - 1].text, flat[position + 1].text
        cut = opening.rfind(tags[index].open)
        if before and not before.isspace() and before not in _OPENING and cut >= 0:
            flat[position - 1] = Piece(f"{opening[:cut]} {opening[cut:]}", True)
        if after.isalnum():
            cut = len(tags[index].close)
            flat[position + 1] = Piece(f"{closing[:cut]} {closing[cut:]}", True)
    return _merged([piece for piece in flat if piece.text])
