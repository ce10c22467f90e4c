"""Batched beam search over any step model (ONNX Runtime in the worker, torch for parity checks).

Scores follow GNMT (Wu et al. 2016, arXiv:1609.08144, section 7):
    s(Y, X) = log P(Y | X) / lp(Y) + cp(X; Y)
    lp(Y)   = ((5 + |Y|) / 6) ** alpha                      (|Y| counts eos)
    cp(X;Y) = beta * sum_j log(min(sum_i p_ij, 1))          (j over source positions)
Each step takes the best 2K candidates per sentence, so hypotheses that end (eos) never shrink
the live beam of K; as in fairseq, an eos candidate is final only if it ranks within the top K,
which makes beam 1 exactly greedy decoding.

Imported models decode as their reference does (transformers' ``generate``): ``length_normalisation
= "length"`` ranks by log P / |Y| ** alpha, and ``stopping = "best_k"`` goes on after K hypotheses
ended while the best live one, normalised at its current length, still beats the worst of the K
best ended (transformers' ``early_stopping=False``); ``first_k`` stops at the first K ended; ``free_forced_eos`` gives the eos
forced at the maximum length a log-probability of 0, as transformers' ``forced_eos_token_id`` does.
"""
from __future__ import annotations

import math
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Callable, NamedTuple, Protocol, Sequence

import numpy as np

from queue_config.messages import MAX_TARGET_TOKENS  # no hypothesis grows past it, whatever max_len_a/b say

from .batching import pack_by_tokens
from .bundle import SpecialIds


class SearchError(ValueError):
    """Invalid decoding options."""


NORMALISATIONS = ("gnmt", "length")
STOPPING = ("first_k", "best_k")


@dataclass(frozen=True)
class SearchOptions:
    beam: int = 5
    n_best: int = 1
    max_len_a: float = 1.5  # at most a * source_length + b target tokens (eos excluded)
    max_len_b: int = 10
    min_len: int = 0  # eos is forbidden before this many target tokens
    length_penalty: float = 0.0  # GNMT alpha; 0 ranks by raw log-probability
    coverage_penalty: float = 0.0  # GNMT beta
    suppress_unk: bool = True
    no_repeat_ngram: int = 0  # n > 1: a hypothesis never holds the same n-gram of tokens twice (0: off)
    length_normalisation: str = "gnmt"  # "gnmt": ((5 + |Y|) / 6) ** alpha; "length": |Y| ** alpha (transformers)
    stopping: str = "first_k"  # "first_k": at K ended hypotheses; "best_k": while a live one can still beat them
    max_length: int = 0  # > 0: at most this many target tokens (eos excluded), whatever a and b say
    free_forced_eos: bool = False  # the eos forced at the maximum length scores 0 (transformers' forced_eos_token_id)

    def validate(self) -> "SearchOptions":
        for name in ("max_len_a", "length_penalty", "coverage_penalty"):
            if not math.isfinite(getattr(self, name)):
                raise SearchError(f"{name} must be a finite number, got {getattr(self, name)}")
        if self.beam < 1:
            raise SearchError(f"beam must be >= 1, got {self.beam}")
        if not 1 <= self.n_best <= self.beam:
            raise SearchError(f"n_best must be in [1, beam={self.beam}], got {self.n_best}")
        if self.max_len_a < 0 or self.max_len_b < 0 or (self.max_len_a == 0 and self.max_len_b == 0):
            raise SearchError(f"max length a*len+b must allow at least one token (a={self.max_len_a}, b={self.max_len_b})")
        if self.min_len < 0:
            raise SearchError(f"min_len must be >= 0, got {self.min_len}")
        if self.length_penalty < 0 or self.coverage_penalty < 0:
            raise SearchError("length_penalty and coverage_penalty must be >= 0")
        if self.no_repeat_ngram < 0 or self.no_repeat_ngram == 1:
            raise SearchError(f"no_repeat_ngram must be 0 (off) or >= 2, got {self.no_repeat_ngram}")
        if self.length_normalisation not in NORMALISATIONS:
            raise SearchError(f"length_normalisation must be one of {', '.join(NORMALISATIONS)}, "
                              f"got {self.length_normalisation!r}")
        if self.stopping not in STOPPING:
            raise SearchError(f"stopping must be one of {', '.join(STOPPING)}, got {self.stopping!r}")
        if self.max_length < 0:
            raise SearchError(f"max_length must be >= 0 (0: no cap), got {self.max_length}")
        return self


@dataclass(frozen=True)
class Hypothesis:
    tokens: tuple[int, ...]  # target ids, without bos/eos
    score: float  # GNMT-normalised score used for ranking
    log_prob: float  # sum of token log-probabilities (eos included when it ended with eos)
    attention: np.ndarray = field(repr=False)  # float32 [T, S]: one row per token, eos row included
    token_log_probs: np.ndarray | None = field(default=None, repr=False)  # float32 [T]: each token's, eos included


# The candidate count of a step that must see every token a row may produce (eos included, for a
# row at its length limit): the whole vocabulary, or a lexical shortlist's candidates.
EVERY = -1


class StepScores(NamedTuple):
    """One decoder step's output for N rows."""

    log_probs: np.ndarray  # float [N, C]: candidate log-probabilities (C = V when ``ids`` is None)
    ids: np.ndarray | None  # int64 [N, C]: token ids of the candidates; None: column index is the id
    state: Any
    attention: np.ndarray  # float [N, S]
    eos: np.ndarray | None = None  # float [N]: each row's eos log-probability, when asked (``step(eos=True)``)


class StepModel(Protocol):
    """What the search needs from a model. ``Encoded`` and ``State`` are opaque to the search.

    ``topk`` is the most best-first candidates per row ``step`` can return (0: it always returns
    the full vocabulary). A model whose ``eos_scores`` is true takes ``step(..., eos=True)`` and then
    also returns each row's eos log-probability: a row at its length limit, which may only end, is
    scored from it, and the other rows of that step still get just their best candidates (a model
    without it scores the whole vocabulary of every row at such a step).
    """

    topk: int
    special: SpecialIds  # its vocabulary's pad, unk, bos and eos ids

    def encode(self, src: np.ndarray, lengths: np.ndarray) -> Any:
        """src int64 [B, S], lengths int64 [B] -> encoded batch."""

    def expand(self, encoded: Any, repeats: int) -> Any:
        """The batch with ``repeats`` decoder rows per sentence from now on (sentence b -> rows
        b*K .. b*K+K-1); the search calls it once, after the first step."""

    def initial_state(self, encoded: Any) -> Any:
        """The decoder's first state: one row per sentence."""

    def step(self, prev_ids: np.ndarray, state: Any, encoded: Any, candidates: int) -> StepScores:
        """prev_ids int64 [N] -> scores of at least the best ``candidates`` next tokens per row (the
        whole vocabulary when 0; ``EVERY``: every token a row may produce, which with a lexical
        shortlist is its sentence's candidates), new state, attention."""

    def reorder(self, state: Any, index: np.ndarray) -> Any:
        """Select state rows: index int64 [N'] (reordered, and fewer when sentences finished)."""

    def select(self, encoded: Any, sentences: np.ndarray) -> Any:
        """Keep these sentences (positions in the expanded batch, int64 [B']) with all their rows:
        finished sentences leave the batch."""


def beam_rows(sentences: np.ndarray, beam: int) -> np.ndarray:
    """Row indices of these sentences in a batch of ``beam`` adjacent rows per sentence:
    sentences int [B'] -> rows int [B' * beam]."""
    return (sentences[:, None] * beam + np.arange(beam)).reshape(-1)


def length_penalty(length: int, alpha: float, normalisation: str = "gnmt") -> float:
    """GNMT lp(Y) = ((5 + |Y|) / 6) ** alpha, or |Y| ** alpha (``normalisation="length"``, transformers')."""
    if normalisation == "length":
        return float(max(length, 1)) ** alpha
    return ((5.0 + length) / 6.0) ** alpha


def coverage_penalty(attention: np.ndarray, source_length: int, beta: float) -> float:
    """GNMT cp = beta * sum_j log(min(sum_i p_ij, 1)) over the real source positions j."""
    if beta == 0.0:
        return 0.0
    coverage = attention[:, :source_length].sum(axis=0)
    return beta * float(np.log(np.clip(coverage, 1e-10, 1.0)).sum())


def max_target_length(source_length: int, options: SearchOptions) -> int:
    cap = min(options.max_length, MAX_TARGET_TOKENS) if options.max_length else MAX_TARGET_TOKENS
    return min(int(math.floor(options.max_len_a * source_length + options.max_len_b)), cap)


def beam_search(model: StepModel, sources: Sequence[Sequence[int]], options: SearchOptions) -> list[list[Hypothesis]]:
    """The n-best hypotheses (best first) for each source id list, decoded as one batch."""
    options.validate()
    k = options.beam
    batch = len(sources)
    lengths = np.array([len(s) for s in sources], dtype=np.int64)
    if batch == 0:
        return []
    if lengths.min() < 1:
        raise SearchError("every source needs at least one token")
    special = model.special
    src = np.full((batch, int(lengths.max())), special.pad, dtype=np.int64)
    for row, ids in enumerate(sources):
        src[row, : len(ids)] = ids
    max_lens = np.array([max_target_length(n, options) for n in lengths])

    # (1) encode once. The first step runs one row per sentence (its K hypotheses would all be
    # the same); its best K candidates then give every sentence K rows. ``active`` lists the
    # sentences still decoding, in row order: a finished sentence's rows leave the batch.
    encoded = model.encode(src, lengths)
    state = model.initial_state(encoded)
    topk = getattr(model, "topk", 0)
    active = np.arange(batch)
    scores = np.zeros((batch, 1))  # [sentences, rows per sentence]
    # Back-pointers, per sentence and beam slot: the token chosen at each step, the slot it
    # extended, and the attention row that produced it. A finished hypothesis is read back
    # through them, so live histories are never copied.
    steps = int(max_lens.max()) + 1
    trace = _Trace(batch, k, steps, src.shape[1])
    prev = np.full(batch, special.bos, dtype=np.int64)
    ended: list[list[_Ended]] = [[] for _ in range(batch)]  # read back from the trace at the end
    n_finished = np.zeros(batch, dtype=np.int64)
    history = np.zeros((batch, 1, 0), dtype=np.int64)  # [sentences, rows per sentence, t]: for n-gram blocking
    best_k = options.stopping == "best_k" and k > 1  # beam 1 stays greedy decoding
    wanted = 0 if topk < 2 * k + 4 else 2 * k + 4
    eos_apart = bool(getattr(model, "eos_scores", False)) and wanted > 0

    for t in range(steps):
        n, rows_per = scores.shape
        # (2) one step for all live rows: each row's best 2K + 4 candidates (the best 2K of a
        # sentence survive even when pad, bos, unk and eos are banned), or the whole vocabulary
        # when the model offers fewer candidates. A row that must end (eos may be outside its
        # best) reads eos's own log-probability, or where the model cannot give it apart, the
        # step scores the whole vocabulary.
        at_limit = t >= max_lens[active]
        if not at_limit.any():
            scores_t = model.step(prev, state, encoded, wanted)
        elif eos_apart:
            scores_t = model.step(prev, state, encoded, wanted, eos=True)
        else:
            scores_t = model.step(prev, state, encoded, EVERY)
        state = scores_t.state
        values = scores_t.log_probs.astype(np.float64).reshape(n, rows_per, -1)
        width_c = values.shape[-1]
        ids = (np.arange(width_c)[None, None, :] if scores_t.ids is None
               else scores_t.ids.astype(np.int64).reshape(n, rows_per, width_c))
        attention = scores_t.attention.astype(np.float32).reshape(n, rows_per, -1)
        banned = (ids == special.pad) | (ids == special.bos)
        if options.suppress_unk:
            banned = banned | (ids == special.unk)
        if t < options.min_len:  # ... except where the maximum length says the sentence must end
            banned = banned | ((ids == special.eos) & ~at_limit[:, None, None])
        values = np.where(banned, -np.inf, values)
        if options.no_repeat_ngram and t >= options.no_repeat_ngram:
            values = _block_repeats(values, ids, history, options.no_repeat_ngram)
        if at_limit.any() and scores_t.eos is not None and scores_t.ids is not None:
            # only eos may follow (at no cost where the reference forces it so): each such row's
            # one candidate is eos, in its first column
            forced = 0.0 if options.free_forced_eos else scores_t.eos.astype(np.float64).reshape(n, rows_per)[at_limit]
            values[at_limit] = -np.inf
            values[at_limit, :, 0] = forced
            ids[at_limit, :, 0] = special.eos
        elif at_limit.any():  # the same over the whole vocabulary
            forced = 0.0 if options.free_forced_eos else values[at_limit]
            values[at_limit] = np.where(ids[0 if scores_t.ids is None else at_limit] == special.eos, forced, -np.inf)

        # (3) the best 2K candidates of each sentence, best first.
        candidates = (scores[:, :, None] + values).reshape(n, rows_per * width_c)
        width = min(2 * k, rows_per * width_c)
        by_row = np.arange(n)[:, None]  # plain fancy indexing: take_along_axis costs more on these small arrays
        top = np.argpartition(-candidates, width - 1, axis=1)[:, :width]
        top_scores = candidates[by_row, top]
        order = np.argsort(-top_scores, axis=1, kind="stable")
        top, top_scores = top[by_row, order], top_scores[by_row, order]
        origins = top // width_c
        tokens = top % width_c if scores_t.ids is None else ids.reshape(n, rows_per * width_c)[by_row, top]

        # (4) eos candidates ranked within K finish (while the sentence has fewer than K
        # finished); the best K others, in rank order, fill the live beam.
        valid = top_scores > -np.inf
        is_eos = tokens == special.eos
        extend = valid & ~is_eos
        slot = np.cumsum(extend, axis=1) - 1
        extend &= slot < k
        rows, ranks = np.nonzero(extend)
        new_scores = np.full((n, k), -np.inf)
        new_origins = np.zeros((n, k), dtype=np.int64)
        new_tokens = np.full((n, k), special.eos, dtype=np.int64)
        new_scores[rows, slot[rows, ranks]] = top_scores[rows, ranks]
        new_origins[rows, slot[rows, ranks]] = origins[rows, ranks]
        new_tokens[rows, slot[rows, ranks]] = tokens[rows, ranks]
        for i, rank in zip(*np.nonzero(valid & is_eos & (np.arange(width) < k))):
            b = active[i]
            if n_finished[b] < k or best_k:
                n_finished[b] += 1
                origin = int(origins[i, rank])
                ended[b].append(_Ended(t, origin, float(top_scores[i, rank]), attention[i, origin],
                                       float(top_scores[i, rank] - scores[i, origin])))
        if best_k:
            done = (extend.sum(1) == 0) | (t >= max_lens[active]) | _cannot_improve(new_scores, ended, active, t, options)
        else:
            done = (n_finished[active] >= k) | (extend.sum(1) == 0) | (t >= max_lens[active])
        for i in np.flatnonzero(done):
            b = active[i]
            if not ended[b]:  # every candidate banned (n-gram blocking on a shortlist): end the best row as it stands
                origin = int(np.argmax(scores[i]))
                ended[b].append(_Ended(t, origin, float(scores[i, origin]), attention[i, origin], 0.0))
        keep = np.flatnonzero(~done)
        if keep.size == 0:
            break

        # (5) reorder the surviving rows (K per sentence from now on), drop finished sentences,
        # record the new tokens.
        new_origins, new_tokens = new_origins[keep], new_tokens[keep]
        state = model.reorder(state, (keep[:, None] * rows_per + new_origins).reshape(-1))
        if rows_per < k:
            encoded = model.expand(encoded, k)
        if keep.size < n:
            encoded = model.select(encoded, keep)
        active = active[keep]
        kept_rows = keep[:, None]
        token_lp = new_scores[keep] - scores[kept_rows, new_origins]
        trace.record(t, active, new_tokens, new_origins, attention[kept_rows, new_origins], token_lp)
        if options.no_repeat_ngram:
            history = np.concatenate([history[kept_rows, new_origins], new_tokens[:, :, None]], axis=2)
        scores = new_scores[keep]
        prev = new_tokens.reshape(-1)

    return [_best(trace, b, ended[b], int(lengths[b]), options) for b in range(batch)]


def _cannot_improve(live: np.ndarray, ended: list[list["_Ended"]], active: np.ndarray, t: int,
                    options: SearchOptions) -> np.ndarray:
    """bool [n]: sentences whose best live hypothesis (live float [n, K]: log-probabilities of
    t + 1 tokens), normalised at its current length, cannot beat the worst of their K best ended
    ones (transformers' heuristic for ``early_stopping=False``)."""
    k = live.shape[1]
    out = np.zeros(len(active), dtype=bool)
    for i, b in enumerate(active):
        if len(ended[b]) < k:
            continue
        normalised = sorted((_normalised(e.log_prob, e.step + 1, options) for e in ended[b]), reverse=True)
        best_live = live[i].max() / length_penalty(t + 1, options.length_penalty, options.length_normalisation)
        out[i] = best_live <= normalised[k - 1]
    return out


def _normalised(log_prob: float, length: int, options: SearchOptions) -> float:
    """A hypothesis' ranking score from its log-probability and length (eos counted)."""
    return log_prob / length_penalty(length, options.length_penalty, options.length_normalisation)


class _Ended(NamedTuple):
    """A hypothesis that ended with eos at step ``step``, extending beam slot ``slot``."""

    step: int  # its tokens before eos
    slot: int
    log_prob: float  # eos included
    eos_attention: np.ndarray  # float [S]
    eos_log_prob: float  # the eos token's own


def _best(trace: "_Trace", sentence: int, ended: list[_Ended], source_length: int,
          options: SearchOptions) -> list[Hypothesis]:
    """A sentence's n-best ended hypotheses, best first (ties in the order they ended). Only those
    are read back from the trace, unless the coverage penalty needs every one's attention."""
    if options.coverage_penalty == 0.0:
        ended = sorted(ended, key=lambda e: -_normalised(e.log_prob, e.step + 1, options))
        ended = ended[: options.n_best]
    hypotheses = []
    for e in ended:
        tokens, attention, token_lp = trace.read(e.step, sentence, e.slot)
        hypotheses.append(_finish(tokens, attention, e.eos_attention, e.log_prob, source_length, options,
                                  np.append(token_lp, np.float32(e.eos_log_prob))))
    return sorted(hypotheses, key=lambda h: -h.score)[: options.n_best]


class _Trace:
    """Back-pointers of one batch's search: for step t, sentence b and beam slot l, the token the
    slot took, the slot it extended at step t - 1 and the attention row that produced the token.
    Step-major, so each step's record writes one block per sentence."""

    def __init__(self, batch: int, beam: int, steps: int, src_len: int) -> None:
        self.tokens = np.zeros((steps, batch, beam), dtype=np.int64)
        self.origins = np.zeros((steps, batch, beam), dtype=np.int64)
        self.attention = np.zeros((steps, batch, beam, src_len), dtype=np.float32)
        self.log_probs = np.zeros((steps, batch, beam), dtype=np.float32)

    def record(self, t: int, sentences: np.ndarray, tokens: np.ndarray, origins: np.ndarray,
               attention: np.ndarray, log_probs: np.ndarray) -> None:
        """sentences int [n]; tokens, origins int [n, K]; attention float [n, K, S]; log_probs float
        [n, K] (each new token's own log-probability)."""
        self.tokens[t, sentences] = tokens
        self.origins[t, sentences] = origins
        self.attention[t, sentences] = attention
        self.log_probs[t, sentences] = log_probs

    def read(self, t: int, sentence: int, slot: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The hypothesis in ``slot`` after step t - 1 -> its tokens int [t], attention float [t, S]
        and token log-probabilities float [t]: the slots followed back, then each array read once."""
        origins = self.origins[:t, sentence].tolist()
        slots = [0] * t
        for step in range(t - 1, -1, -1):
            slots[step] = slot
            slot = origins[step][slot]
        steps = np.arange(t)
        return (self.tokens[steps, sentence, slots], self.attention[steps, sentence, slots],
                self.log_probs[steps, sentence, slots])


def _finish(tokens: np.ndarray, attention: np.ndarray, eos_attention: np.ndarray, log_prob: float,
            source_length: int, options: SearchOptions, token_log_probs: np.ndarray) -> Hypothesis:
    full_attention = np.concatenate([attention, eos_attention[None, :]], 0)
    score = _normalised(log_prob, len(tokens) + 1, options)
    score += coverage_penalty(full_attention, source_length, options.coverage_penalty)
    return Hypothesis(tuple(tokens.tolist()), float(score), float(log_prob), full_attention, token_log_probs)


def _block_repeats(values: np.ndarray, ids: np.ndarray, history: np.ndarray, n: int) -> np.ndarray:
    """``values`` float [B, K, C] with -inf where a candidate would repeat an n-gram its row
    already holds. ids int [B or 1, K or 1, C]: the candidates' token ids; history int [B, K, t]:
    each row's tokens so far (t >= n)."""
    last = history[:, :, history.shape[2] - (n - 1):]  # [B, K, n-1]
    earlier = np.lib.stride_tricks.sliding_window_view(history[:, :, :-1], n - 1, axis=2)  # [B, K, P, n-1]
    hits = np.nonzero((earlier == last[:, :, None, :]).all(-1))
    if not hits[0].size:
        return values
    values = values.copy()
    for b, k, p in zip(*hits):
        banned = history[b, k, p + n - 1]
        row_ids = ids[min(b, ids.shape[0] - 1), min(k, ids.shape[1] - 1)]
        values[b, k, row_ids == banned] = -np.inf
    return values


def search_in_batches(model: StepModel, sources: Sequence[Sequence[int]], options: SearchOptions,
                      max_sentences: int = 64, max_tokens: int | None = None, workers: int = 1,
                      progress: Callable[[int], None] | None = None) -> list[list[Hypothesis]]:
    """``beam_search`` over length-sorted batches (``pack_by_tokens``); results in input order.

    ``workers`` > 1 decodes that many batches at once, each on its own thread. The step model's
    kernels release the GIL (ONNX Runtime and torch both do), so on a CPU, W batches with one
    intra-op thread each keep W cores busy without the per-operator synchronisation that
    splitting each small matrix product across threads costs. ``progress(n)`` is called as each
    batch of n sources finishes.
    """
    lengths = [len(s) for s in sources]
    budget = max_tokens or max(lengths, default=1) * max_sentences
    batches = pack_by_tokens(lengths, budget, max_sentences)

    def decode(b: int) -> list[list[Hypothesis]]:
        hyps = beam_search(model, [sources[i] for i in batches[b]], options)
        if progress is not None:
            progress(len(batches[b]))
        return hyps

    if workers > 1 and len(batches) > 1:
        # Longest work first (sentences x longest source, a proxy for decoder rows x steps), so
        # the last batches to finish are short ones and no worker waits long at the end.
        order = sorted(range(len(batches)), key=lambda b: -len(batches[b]) * max(lengths[i] for i in batches[b]))
        with ThreadPoolExecutor(max_workers=min(workers, len(batches)), thread_name_prefix="beam") as pool:
            by_batch = dict(zip(order, pool.map(decode, order)))
        decoded = [by_batch[b] for b in range(len(batches))]
    else:
        decoded = [decode(b) for b in range(len(batches))]
    results: list[list[Hypothesis]] = [[] for _ in sources]
    for batch, hyps_of_batch in zip(batches, decoded):
        for index, hyps in zip(batch, hyps_of_batch):
            results[index] = hyps
    return results
