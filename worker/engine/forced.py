"""Forced decoding: score a given translation with the step model and align its words to the source.

The decoder is fed the given target tokens (teacher forcing, one row per sentence, no search); each
step's attention row and the given token's log-probability are kept. Word links are read from the
attention matrix by one of ``METHODS``:

- ``argmax``: target piece t links to the source piece with the largest weight in row t, the row
  that predicts it (what ``worker.alignment.align`` does for translations).
- ``shift``: target piece t links to the argmax of row t + 1, the row that reads piece t as its
  input (some attention models look one step late; Koehn and Knowles 2017, section 3.5). Kept
  for comparison: this model does not, and ``shift`` is far worse (docs/quality.md).
- ``words``: word-level weights (rows summed over the source pieces of each word, averaged over the
  target pieces of each word), then one link per target word.
- ``grow``: ``words`` in both directions (argmax per target word and per source word), joined with
  grow-diag-final-and (Koehn et al. 2003) as statistical aligners symmetrise.
- ``guided`` (the default where the bundle has an alignment head): the head's links
  (``training.aligner``: a second attention trained on word alignments, read once the target token
  is known). Its forward direction gives each target word's best source word, its reverse
  direction (heads that have one) each source word's best target word; a word whose mass sits
  mostly on the other side's eos is left unaligned; the two are joined with grow-diag-final-and.
  Punctuation pieces inside a word are left out of its weights (``_guided_links``).

``segment_links`` gives the format writers their links, with the bundle's word table (``WordTable``,
read from its lexical shortlist) that their markup placement trims tags' edges by.
"""
from __future__ import annotations

import functools
import weakref
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from nmt.links import grow_diag_final_and
from worker.text.segment import piece_words, word_spans

from .batching import pack_by_tokens
from .search import StepModel
from .shortlist import Shortlist

METHODS = ("argmax", "shift", "words", "grow", "guided")
DEFAULT_METHOD = "grow"  # for bundles without an alignment head; ``default_method`` picks


@dataclass(frozen=True)
class Forced:
    """One sentence pair, force-decoded."""

    attention: np.ndarray  # float32 [T+1, S+1]: one row per target token and eos, one column per source token and eos
    token_log_probs: np.ndarray  # float32 [T+1]: each given token's log-probability, eos last
    guided: np.ndarray | None = None  # float32 [T+1, S+1]: the alignment head's rows, if the model has one
    reverse: np.ndarray | None = None  # float32 [T+1, S+1]: its reverse direction's columns, if it has one

    @property
    def log_prob(self) -> float:
        return float(self.token_log_probs.sum())


def force_decode(model: StepModel, sources: Sequence[Sequence[int]], targets: Sequence[Sequence[int]],
                 max_sentences: int = 64, max_tokens: int = 6000) -> list[Forced]:
    """Teacher-forced decoding of ``targets`` (ids without eos; eos is appended) given ``sources``
    (ids with eos, as the search takes them), in length-sorted batches; results in input order."""
    if len(sources) != len(targets):
        raise ValueError(f"{len(sources)} sources but {len(targets)} targets")
    if any(len(s) < 1 for s in sources):
        raise ValueError("every source needs at least one token")
    lengths = [max(len(s), len(t) + 1) for s, t in zip(sources, targets)]
    results: list[Forced | None] = [None] * len(sources)
    for batch in pack_by_tokens(lengths, max_tokens, max_sentences):
        for index, forced in zip(batch, _force_batch(model, [sources[i] for i in batch],
                                                     [targets[i] for i in batch])):
            results[index] = forced
    return results  # type: ignore[return-value]


def _force_batch(model: StepModel, sources: Sequence[Sequence[int]], targets: Sequence[Sequence[int]]) -> list[Forced]:
    batch, special = len(sources), model.special
    src_lengths = np.array([len(s) for s in sources], dtype=np.int64)
    tgt_lengths = np.array([len(t) + 1 for t in targets], dtype=np.int64)  # eos included
    src = np.full((batch, int(src_lengths.max())), special.pad, dtype=np.int64)
    gold = np.full((batch, int(tgt_lengths.max())), special.pad, dtype=np.int64)
    for row, (s, t) in enumerate(zip(sources, targets)):
        src[row, : len(s)] = s
        gold[row, : len(t) + 1] = (*t, special.eos)

    # (1) encode; one decoder row per sentence (K = 1).
    encoded = model.expand(model.encode(src, src_lengths), 1)
    state = model.initial_state(encoded)
    prev = np.full(batch, special.bos, dtype=np.int64)
    steps = gold.shape[1]
    attention = np.zeros((batch, steps, src.shape[1]), dtype=np.float32)
    log_probs = np.zeros((batch, steps), dtype=np.float32)
    rows = np.arange(batch)
    aligner = has_alignment_head(model)
    tops = []
    # (2) feed the given tokens; rows past their eos run on with pad and are cut off below.
    for t in range(steps):
        scores = model.step(prev, state, encoded, 0)
        state = scores.state
        attention[:, t] = scores.attention
        log_probs[:, t] = scores.log_probs[rows, gold[:, t]]
        prev = gold[:, t]
        if aligner:
            tops.append(model.top_state(state))
    # (3) the alignment head, if any, over the whole teacher-forced batch at once.
    guided, reverse = model.align(encoded, np.stack(tops, 1), gold, attention) if aligner else (None, None)

    def cut(matrix: np.ndarray | None, b: int) -> np.ndarray | None:
        return None if matrix is None else matrix[b, : tgt_lengths[b], : src_lengths[b]].copy()

    return [Forced(cut(attention, b), log_probs[b, : tgt_lengths[b]].copy(), cut(guided, b), cut(reverse, b))
            for b in range(batch)]


def has_alignment_head(model: StepModel) -> bool:
    """Whether ``model`` runs a bundle's alignment head (``OrtStepModel.align``)."""
    return getattr(model, "aligner", None) is not None


def default_method(model: StepModel) -> str:
    """``guided`` for a model with an alignment head, ``DEFAULT_METHOD`` otherwise."""
    return "guided" if has_alignment_head(model) else DEFAULT_METHOD


def word_links(source_pieces: Sequence[str], target_pieces: Sequence[str], attention: np.ndarray,
               source_text: str, target_text: str, method: str = DEFAULT_METHOD,
               guided: np.ndarray | None = None, reverse: np.ndarray | None = None) -> tuple[tuple[int, int], ...]:
    """Sorted (source word, target word) links of one pair; words are whitespace words from 0.

    attention, guided, reverse: float [T+1, S+1] from ``force_decode`` (T target pieces, S source
    pieces); ``guided`` (the alignment head's) and ``reverse`` (its reverse direction's, if it has
    one) are what the ``guided`` method reads."""
    if method not in METHODS:
        raise ValueError(f"unknown alignment method {method!r} (choose from {', '.join(METHODS)})")
    n_src, n_tgt = len(word_spans(source_text)), len(word_spans(target_text))
    if not (source_pieces and target_pieces and n_src and n_tgt):
        return ()
    # Clamp: text normalisation can, rarely, make piece words and text words disagree.
    src_words = np.minimum(piece_words(source_pieces), n_src - 1)
    tgt_words = np.minimum(piece_words(target_pieces), n_tgt - 1)
    n_t, n_s = len(target_pieces), len(source_pieces)
    if method == "guided":
        if guided is None:
            raise ValueError("the 'guided' alignment method needs a bundle with an alignment head")
        return _guided_links(guided, reverse, source_pieces, target_pieces, src_words, tgt_words, n_src, n_tgt)
    weights = np.asarray(attention, dtype=np.float64)
    offset = 1 if method == "shift" else 0
    rows = weights[offset: n_t + offset, :n_s]
    if method in ("argmax", "shift"):
        return tuple(sorted({(int(src_words[s]), int(tgt_words[t])) for t, s in enumerate(rows.argmax(axis=1))}))
    matrix = word_matrix(rows, src_words, tgt_words, n_src, n_tgt)  # [target words, source words]
    forward = {(i, j) for j, i in _best_links(matrix)}
    if method == "words":
        return tuple(sorted(forward))
    return tuple(sorted(grow_diag_final_and(forward, _best_links(matrix.T))))


def _guided_links(guided: np.ndarray, reverse: np.ndarray | None, source_pieces: Sequence[str],
                  target_pieces: Sequence[str], src_words: np.ndarray, tgt_words: np.ndarray, n_src: int,
                  n_tgt: int) -> tuple[tuple[int, int], ...]:
    """The head's links: each direction's best word per word, unless the word's mass sits mostly on
    the other side's eos (no link), joined with grow-diag-final-and; a word of punctuation only
    links only to another such word. The head links punctuation to
    punctuation (a full stop to a full stop), so a word's punctuation pieces are left out of its
    weights unless it is punctuation only: "gekommen." links where "gekommen" does. Without the
    reverse direction (heads made before it), the backward links are the forward matrix's column
    maxima."""
    n_t, n_s = len(target_pieces), len(source_pieces)
    (src_keep, src_punct), (tgt_keep, tgt_punct) = (_content(source_pieces, src_words, n_src),
                                                    _content(target_pieces, tgt_words, n_tgt))
    weights = np.asarray(guided, dtype=np.float64)[:n_t][tgt_keep]
    matrix = word_matrix(weights[:, :n_s][:, src_keep], src_words[src_keep], tgt_words[tgt_keep], n_src, n_tgt)
    null = _mean_by_word(weights[:, n_s], tgt_words[tgt_keep], n_tgt)
    forward = {(i, j) for j, i in _best_links(matrix, null)}
    if reverse is None:
        backward = _best_links(matrix.T)
    else:  # columns: per source piece, a distribution over the target pieces (target eos last: no link)
        columns = np.asarray(reverse, dtype=np.float64)[:, :n_s][:, src_keep].T  # [kept source pieces, T + 1]
        by_source = word_matrix(columns[:, :n_t][:, tgt_keep], tgt_words[tgt_keep], src_words[src_keep], n_tgt, n_src)
        backward = _best_links(by_source, _mean_by_word(columns[:, n_t], src_words[src_keep], n_src))
    # A word of punctuation only links to one: a German comma before "dass" is not "that".
    return tuple(sorted((i, j) for i, j in grow_diag_final_and(forward, backward) if src_punct[i] == tgt_punct[j]))


def _best_links(matrix: np.ndarray, null: np.ndarray | float = 0.0) -> set[tuple[int, int]]:
    """(row, column) of each row's largest weight in ``matrix`` float [rows, columns], for the rows
    with any weight whose largest is at least ``null`` (one per row, or one for all)."""
    best, top = matrix.argmax(axis=1), matrix.max(axis=1)
    return {(int(row), int(best[row])) for row in np.flatnonzero(matrix.any(axis=1) & (top >= null))}


def _content(pieces: Sequence[str], words: np.ndarray, n_words: int) -> tuple[np.ndarray, np.ndarray]:
    """(bool [pieces]: a piece with a letter or digit, or any piece of a word that has none;
    bool [n_words]: a word of punctuation only, its pieces without a letter or digit)."""
    content = np.array([any(c.isalnum() for c in piece) for piece in pieces])
    word_has_content = np.zeros(n_words, dtype=bool)
    np.logical_or.at(word_has_content, words, content)
    return content | ~word_has_content[words], ~word_has_content


def _mean_by_word(values: np.ndarray, words: np.ndarray, n_words: int) -> np.ndarray:
    """float [n_words]: the mean of ``values`` (one per piece) over each word's pieces (0 for none)."""
    return np.bincount(words, weights=values, minlength=n_words) / np.maximum(np.bincount(words, minlength=n_words), 1)


def word_matrix(weights: np.ndarray, src_words: np.ndarray, tgt_words: np.ndarray, n_src: int,
                n_tgt: int) -> np.ndarray:
    """Piece weights float [T, S] -> word weights float [target words, source words]: summed over
    a source word's pieces, averaged over a target word's pieces."""
    by_source = np.zeros((weights.shape[0], n_src))
    np.add.at(by_source.T, src_words, weights.T)
    matrix = np.zeros((n_tgt, n_src))
    np.add.at(matrix, tgt_words, by_source)
    counts = np.bincount(tgt_words, minlength=n_tgt)[:, None]
    return matrix / np.maximum(counts, 1)


def align_pairs(translator, sources: Sequence[str], targets: Sequence[str],
                methods: Sequence[str] | None = None) -> list[dict[str, tuple[tuple[int, int], ...]]]:
    """Word links of each (source, target) text pair, per method (default: ``default_method``),
    from one forced decoding.

    ``translator``: a ``worker.engine.Translator`` (its step model, SentencePiece models, eos id and
    case table: a text without capitals is decoded in its words' usual case, which keeps its words).
    A pair whose source or target has no pieces gets no links."""
    methods = tuple(methods or (default_method(translator.model),))
    if "guided" in methods and not has_alignment_head(translator.model):
        raise ValueError(f"the 'guided' alignment method needs a bundle with an alignment head; "
                         f"{translator.bundle.path} has none")
    table = translator.case_table
    if table is not None:  # a side with no capital at all (a lower-cased corpus) is read in its usual case
        sources = [table.recase(s, "source") for s in sources]
        targets = [table.recase(t, "target") for t in targets]
    src_pieces = [translator.source_sp.encode(s, out_type=str) for s in sources]
    tgt_pieces = [translator.target_sp.encode(t, out_type=str) for t in targets]
    todo = [k for k, (s, t) in enumerate(zip(src_pieces, tgt_pieces)) if s and t]
    forced = force_decode(
        translator.model,
        [[*(translator.source_sp.piece_to_id(p) for p in src_pieces[k]), translator.model.special.eos] for k in todo],
        [[translator.target_sp.piece_to_id(p) for p in tgt_pieces[k]] for k in todo])
    results: list[dict[str, tuple[tuple[int, int], ...]]] = [{m: () for m in methods} for _ in sources]
    for k, f in zip(todo, forced):
        results[k] = {m: word_links(src_pieces[k], tgt_pieces[k], f.attention, sources[k], targets[k], m, f.guided,
                                    f.reverse) for m in methods}
    return results


class SegmentLinks(list):
    """``segment_links``' character links, with the bundle's word table (``WordTable.translates``;
    None for a bundle without a lexical shortlist), which the format writers trim tags' edges by."""

    def __init__(self, links=(), translates=None) -> None:
        super().__init__(links)
        self.translates = translates


def segment_links(translator, segments: Sequence) -> SegmentLinks:
    """(source word span, target word span) character pairs of translated segments
    (``SegmentResult``s of one document), from one forced decoding of their translations with
    ``default_method``: the alignment head's links, or without one the symmetrised attention links,
    place markup better than the search's own argmax links (bench/tag_placement.py, docs/quality.md)."""
    todo = [s for s in segments if s.source.strip() and s.translation.strip()]
    method = default_method(translator.model)
    found = align_pairs(translator, [s.source for s in todo], [s.translation for s in todo], (method,))
    links = []
    for segment, methods in zip(todo, found):
        source, target = segment.alignment.source_spans, segment.alignment.target_spans
        links += [(tuple(source[i]), tuple(target[j])) for i, j in methods[method]
                  if i < len(source) and j < len(target)]
    table = word_table(translator)
    return SegmentLinks(links, table.translates if table is not None else None)


class WordTable:
    """Whether a target word can translate a source word, by a bundle's lexical shortlist (per source
    piece, the target pieces eflomal linked to it most often in the training data): a piece of the
    target word, other than the table's frequent ones (which every word would share), is among the
    candidates of the source word's pieces. Words as they stand, punctuation included."""

    def __init__(self, shortlist: Shortlist, source_sp, target_sp) -> None:
        self.shortlist, self.source_sp, self.target_sp = shortlist, source_sp, target_sp
        self.frequent = frozenset(shortlist.frequent.tolist())
        # Memoised per word: a document repeats its words, and a worker its documents' vocabulary.
        self.candidates = functools.lru_cache(maxsize=1 << 16)(self._candidates)
        self.pieces = functools.lru_cache(maxsize=1 << 16)(lambda word: frozenset(self.target_sp.encode(word)))

    def _candidates(self, word: str) -> frozenset[int]:
        table = self.shortlist
        return frozenset(int(t) for i in self.source_sp.encode(word) if i < table.source_size
                         for t in table.targets[table.offsets[i]:table.offsets[i + 1]]) - self.frequent

    def translates(self, source_word: str, target_word: str) -> bool:
        return not self.candidates(source_word).isdisjoint(self.pieces(target_word))


_WORD_TABLES: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()  # translator -> WordTable | None


def word_table(translator) -> WordTable | None:
    """The word table of ``translator``'s bundle (read once per translator), or None if it has no
    lexical shortlist."""
    if translator not in _WORD_TABLES:
        path = translator.bundle.shortlist_path
        _WORD_TABLES[translator] = None if path is None else \
            WordTable(Shortlist.load(path), translator.source_sp, translator.target_sp)
    return _WORD_TABLES[translator]
