"""Beam search against a fake step model that replays a hand-written probability table.

Vocabulary: 0 pad, 1 unk, 2 bos, 3 eos, 4 "a", 5 "b". The table gives p(next | prefix); every
expected score below is derived by hand from it (natural logs).
"""
from __future__ import annotations

import math

import numpy as np
import pytest

from worker.engine.bundle import SpecialIds
from worker.engine.search import (
    SearchError,
    SearchOptions,
    StepScores,
    beam_rows,
    beam_search,
    coverage_penalty,
    length_penalty,
    search_in_batches,
)

A, B, EOS = 4, 5, 3
TABLE = {
    (): {A: 0.6, B: 0.3, EOS: 0.1},
    (A,): {A: 0.1, B: 0.2, EOS: 0.7},
    (B,): {A: 0.5, B: 0.15, EOS: 0.35},
    (B, A): {A: 0.05, B: 0.05, EOS: 0.9},
    (A, B): {A: 0.2, B: 0.2, EOS: 0.6},
    (A, A): {A: 0.5, B: 0.4, EOS: 0.1},
    (B, B): {A: 0.5, B: 0.4, EOS: 0.1},
}
UNSEEN = {A: 0.45, B: 0.45, EOS: 0.1}  # deeper prefixes
ln = math.log


class TableModel:
    """State: one prefix tuple per row. Attention: uniform over the real source positions."""

    beam = 1  # rows per sentence, set by expand

    def __init__(self, unk_probability: float = 0.0, table: dict | None = None) -> None:
        self.unk = unk_probability
        self.table = TABLE if table is None else table
        self.calls: list[list[tuple[int, ...]]] = []  # prefixes seen at each step

    def encode(self, src, lengths):
        return np.asarray(lengths)

    def expand(self, lengths, k):
        self.beam = k
        return np.repeat(lengths, k)

    def initial_state(self, lengths):
        return [() for _ in lengths]

    topk = 0  # always the full vocabulary
    special = SpecialIds(pad=0, unk=1, bos=2, eos=EOS)

    def step(self, prev_ids, state, lengths, candidates=0):
        prefixes = [p if t == 2 else p + (int(t),) for p, t in zip(state, prev_ids)]
        self.calls.append(prefixes)
        log_probs = np.full((len(prefixes), 6), -np.inf, dtype=np.float32)
        for row, prefix in enumerate(prefixes):
            for token, p in self.table.get(prefix, UNSEEN).items():
                log_probs[row, token] = ln(p)
            if self.unk:
                log_probs[row, 1] = ln(self.unk)
        width = int(lengths.max())
        attention = np.zeros((len(prefixes), width), dtype=np.float32)
        for row, n in enumerate(lengths):
            attention[row, :n] = 1.0 / n
        return StepScores(log_probs, None, prefixes, attention)

    def reorder(self, state, index):
        return [state[i] for i in index]

    def select(self, lengths, sentences):
        return lengths[beam_rows(sentences, self.beam)]


def search(options: SearchOptions, sources=([7, 8, 3],), model=None):
    return beam_search(model or TableModel(), [list(s) for s in sources], options)


def test_beam_two_finds_hand_derived_hypotheses_and_scores():
    # step 0: a ln.6=-0.511, b ln.3=-1.204, eos ln.1=-2.303 (rank 2 >= K: not final) -> live a, b
    # step 1: eos|a -0.511+ln.7=-0.868 (rank 0: final), b a -1.204+ln.5=-1.897, a b -0.511+ln.2=-2.120
    #         (eos|b -1.204+ln.35=-2.254 ranks 3: not final) -> live (b,a), (a,b)
    # step 2: eos|(b,a) -1.897+ln.9=-2.002 (rank 0: final) -> 2 finished = K: stop
    [hyps] = search(SearchOptions(beam=2, n_best=2))
    assert [h.tokens for h in hyps] == [(A,), (B, A)]
    assert hyps[0].log_prob == pytest.approx(ln(0.6) + ln(0.7), abs=1e-6)
    assert hyps[1].log_prob == pytest.approx(ln(0.3) + ln(0.5) + ln(0.9), abs=1e-6)
    assert hyps[0].score == pytest.approx(hyps[0].log_prob)  # alpha 0: score is the log-probability


def test_finished_hypotheses_do_not_shrink_the_live_beam():
    model = TableModel()
    search(SearchOptions(beam=2, n_best=2), model=model)
    # After (a, eos) finished at step 1, step 2 still ran two live rows: (b,a) and (a,b).
    assert model.calls[2] == [(B, A), (A, B)]


def test_gnmt_length_penalty_divides_by_hand_computed_lp():
    [hyps] = search(SearchOptions(beam=2, n_best=2, length_penalty=1.0))
    # lp(|Y|) = (5 + |Y|) / 6 with eos counted: (a eos) -> 7/6, (b a eos) -> 8/6
    assert hyps[0].score == pytest.approx((ln(0.6) + ln(0.7)) / (7 / 6), abs=1e-6)
    assert hyps[1].score == pytest.approx((ln(0.3) + ln(0.5) + ln(0.9)) / (8 / 6), abs=1e-6)
    assert length_penalty(3, 0.6) == pytest.approx((8 / 6) ** 0.6)


def test_coverage_penalty_from_attention():
    # Two target rows of uniform attention over 2 source positions: coverage [1, 1] -> log 1 = 0.
    assert coverage_penalty(np.full((2, 2), 0.5), 2, beta=0.2) == pytest.approx(0.0)
    # One row: coverage [0.5, 0.5] -> 0.2 * 2 * ln 0.5; the padding column is ignored.
    attention = np.array([[0.5, 0.5, 0.0]])
    assert coverage_penalty(attention, 2, beta=0.2) == pytest.approx(0.2 * 2 * ln(0.5))
    # In the search: (a eos) on a 3-token source, rows of 1/3: coverage 2/3 each -> 0.2 * 3 * ln(2/3).
    [hyps] = search(SearchOptions(beam=2, n_best=2, coverage_penalty=0.2))
    best = next(h for h in hyps if h.tokens == (A,))
    assert best.score == pytest.approx(ln(0.6) + ln(0.7) + 0.2 * 3 * ln(2 / 3), abs=1e-5)


def test_greedy_is_beam_one():
    # step 0: best a (-0.511); step 1: best eos|a -> (a)
    [hyps] = search(SearchOptions(beam=1))
    assert hyps[0].tokens == (A,)
    assert hyps[0].log_prob == pytest.approx(ln(0.6) + ln(0.7), abs=1e-6)


def test_maximum_length_forces_eos():
    # a=0, b=1: at most 1 token, then only eos: (a eos) -0.868 and (b eos) -2.254 both final.
    [hyps] = search(SearchOptions(beam=2, n_best=2, max_len_a=0.0, max_len_b=1))
    assert [h.tokens for h in hyps] == [(A,), (B,)]
    assert hyps[1].log_prob == pytest.approx(ln(0.3) + ln(0.35), abs=1e-6)


def test_minimum_length_forbids_early_eos():
    # min 2: step 1 cannot end; live (b,a) -1.897, (a,b) -2.120; step 2 ends both:
    # (b a eos) -2.002, (a b eos) -2.120+ln.6=-2.631
    [hyps] = search(SearchOptions(beam=2, n_best=2, min_len=2))
    assert [h.tokens for h in hyps] == [(B, A), (A, B)]
    assert hyps[1].log_prob == pytest.approx(ln(0.6) + ln(0.2) + ln(0.6), abs=1e-6)


def test_unk_suppression():
    # unk at 0.9 would win every step; suppressed, the table's answer comes back.
    [suppressed] = search(SearchOptions(beam=2), model=TableModel(unk_probability=0.9))
    assert suppressed[0].tokens == (A,)
    [allowed] = search(SearchOptions(beam=2, suppress_unk=False, max_len_a=0, max_len_b=2),
                       model=TableModel(unk_probability=0.9))
    assert allowed[0].tokens[0] == 1


def test_batch_results_equal_solo_results_and_order_is_kept():
    sources = [[5, 6, 7, 8, 9, 3], [5, 3], [9, 9, 3]]
    options = SearchOptions(beam=2, n_best=2)
    together = search_in_batches(TableModel(), sources, options, max_sentences=2)
    for source, hyps in zip(sources, together):
        [solo] = search(options, [source])
        assert [h.tokens for h in hyps] == [h.tokens for h in solo]
        assert [h.score for h in hyps] == pytest.approx([h.score for h in solo])


def test_finished_sentences_leave_the_batch():
    # max length = floor(1.5 * len + 1): the 1-token source may have 2 tokens, the 9-token one 14.
    # min_len 3 keeps the long sentence going; the short one must end at its maximum (step 2).
    model = TableModel()
    options = SearchOptions(beam=2, n_best=2, max_len_a=1.5, max_len_b=1, min_len=3)
    hyps = beam_search(model, [[3], [5, 6, 7, 8, 9, 10, 11, 12, 3]], options)
    rows = [len(call) for call in model.calls]
    # One row per sentence at the first step, then 2 sentences x K=2 rows, then the long one's.
    assert rows[:3] == [2, 4, 4] and set(rows[3:]) == {2}
    assert [len(h.tokens) for h in hyps[0]] == [2, 2]  # ended at its maximum length despite min_len
    [solo] = beam_search(TableModel(), [[5, 6, 7, 8, 9, 10, 11, 12, 3]], options)
    assert [h.tokens for h in hyps[1]] == [h.tokens for h in solo]


def test_attention_rows_cover_every_token_and_eos():
    [hyps] = search(SearchOptions(beam=2, n_best=2), sources=[[7, 8, 3]])
    for h in hyps:
        assert h.attention.shape == (len(h.tokens) + 1, 3)
        np.testing.assert_allclose(h.attention.sum(1), 1.0, rtol=1e-6)


@pytest.mark.parametrize("options, message", [
    (SearchOptions(beam=0), "beam must be >= 1"),
    (SearchOptions(beam=2, n_best=3), "n_best must be in"),
    (SearchOptions(max_len_a=0, max_len_b=0), "at least one token"),
    (SearchOptions(min_len=-1), "min_len"),
    (SearchOptions(length_penalty=-1), "length_penalty"),
])
def test_invalid_options_are_rejected(options, message):
    with pytest.raises(SearchError, match=message):
        options.validate()


def test_empty_batch_and_empty_source():
    assert beam_search(TableModel(), [], SearchOptions()) == []
    with pytest.raises(SearchError, match="at least one token"):
        beam_search(TableModel(), [[]], SearchOptions())


class RenumberedModel(TableModel):
    """The same table in a vocabulary whose eos is 6 (and 3 an ordinary, impossible token): the
    search must read the ids from the model, as the engine reads them from the bundle."""

    special = SpecialIds(pad=0, unk=1, bos=2, eos=6)

    def step(self, prev_ids, state, lengths, candidates=0):
        out = super().step(prev_ids, state, lengths, candidates)
        log_probs = np.full((out.log_probs.shape[0], 7), -np.inf, dtype=np.float32)
        log_probs[:, :6] = out.log_probs
        log_probs[:, 6], log_probs[:, EOS] = out.log_probs[:, EOS], -np.inf
        return out._replace(log_probs=log_probs)


def test_the_search_ends_hypotheses_at_the_model_s_own_eos():
    options = SearchOptions(beam=2, n_best=2)
    table = beam_search(TableModel(), [[4, 5, 3]], options)[0]
    renumbered = beam_search(RenumberedModel(), [[4, 5, 6]], options)[0]
    assert [(h.tokens, round(h.score, 6)) for h in renumbered] == [(h.tokens, round(h.score, 6)) for h in table]


class LoopModel(TableModel):
    """Every prefix: a 0.7, b 0.2, eos 0.1: unblocked, the best hypotheses loop on "a"."""

    def step(self, prev_ids, state, lengths, candidates=0):
        out = super().step(prev_ids, state, lengths, candidates)
        log_probs = np.full_like(out.log_probs, -np.inf)
        log_probs[:, A], log_probs[:, B], log_probs[:, EOS] = ln(0.7), ln(0.2), ln(0.1)
        return out._replace(log_probs=log_probs)


def _ngrams(tokens, n):
    return [tuple(tokens[i:i + n]) for i in range(len(tokens) - n + 1)]


@pytest.mark.parametrize("n", [2, 3])
def test_no_repeat_ngram_keeps_every_hypothesis_free_of_repeated_ngrams(n):
    options = SearchOptions(beam=4, n_best=4, max_len_a=0.0, max_len_b=8)
    unblocked = search(options, model=LoopModel())
    assert any(len(set(_ngrams(h.tokens, n))) < len(_ngrams(h.tokens, n)) for h in unblocked[0])
    blocked = search(SearchOptions(beam=4, n_best=4, max_len_a=0.0, max_len_b=8, no_repeat_ngram=n), model=LoopModel())
    assert blocked[0]
    for hyp in blocked[0]:
        grams = _ngrams(hyp.tokens, n)
        assert len(set(grams)) == len(grams), hyp.tokens


def test_token_log_probs_add_up_to_the_hypothesis_log_prob():
    for hyp in search(SearchOptions(beam=2, n_best=2))[0] + search(SearchOptions(beam=3, n_best=3), model=LoopModel())[0]:
        assert hyp.token_log_probs.shape == (len(hyp.tokens) + 1,)
        assert float(hyp.token_log_probs.sum()) == pytest.approx(hyp.log_prob, abs=1e-5)


def test_no_repeat_ngram_of_one_is_refused():
    with pytest.raises(SearchError, match="no_repeat_ngram"):
        SearchOptions(no_repeat_ngram=1).validate()


# A table where the second hypothesis to end (B B, at step 2) is worse than one still live then
# (B A A, ending at step 3): first_k stops at the first two ended, best_k (transformers'
# early_stopping=False) goes on while a live hypothesis can still beat the worse of the two.
LATE = {
    (): {A: 0.5, B: 0.4, EOS: 0.1},
    (A,): {A: 0.07, B: 0.03, EOS: 0.9},  # step 1: A eos -0.798 ends (rank 0); live B A -1.427, B B -2.120
    (B,): {A: 0.6, B: 0.3, EOS: 0.1},
    (B, A): {A: 0.7, B: 0.1, EOS: 0.2},  # step 2: B A A -1.784 (rank 0) is live ...
    (B, B): {A: 0.1, B: 0.1, EOS: 0.8},  # ... B B eos -2.343 (rank 1) ends: first_k has its two
    (B, A, A): {A: 0.05, B: 0.05, EOS: 0.9},  # step 3: B A A eos -1.889 ends, better than B B's
}


@pytest.mark.parametrize("stopping, second", [("first_k", ((B, B), ln(0.4) + ln(0.3) + ln(0.8))),
                                              ("best_k", ((B, A, A), ln(0.4) + ln(0.6) + ln(0.7) + ln(0.9)))])
def test_best_k_goes_on_while_a_live_hypothesis_can_beat_the_ended_ones(stopping, second):
    options = SearchOptions(beam=2, n_best=2, length_penalty=0.0, suppress_unk=False, stopping=stopping)
    hyps = beam_search(TableModel(table=LATE), [[4, 3]], options)[0]
    assert hyps[0].tokens == (A,) and hyps[0].score == pytest.approx(ln(0.5) + ln(0.9), abs=1e-5)
    assert (hyps[1].tokens, hyps[1].score) == (second[0], pytest.approx(second[1], abs=1e-5))


def test_best_k_at_beam_1_is_still_greedy():
    greedy = beam_search(TableModel(table=LATE), [[4, 3]], SearchOptions(beam=1, length_penalty=0.0))[0][0]
    best_k = beam_search(TableModel(table=LATE), [[4, 3]], SearchOptions(beam=1, length_penalty=0.0,
                                                                          stopping="best_k"))[0][0]
    assert greedy.tokens == best_k.tokens == (A,)


def test_length_normalisation_divides_by_length_to_the_alpha():
    assert length_penalty(3, 1.0, "length") == 3.0 and length_penalty(4, 0.5, "length") == 2.0
    assert length_penalty(3, 1.0) == pytest.approx(8 / 6)
    # alpha 1: A eos scores -0.798 / 2 (two tokens with eos)
    options = SearchOptions(beam=2, n_best=2, length_penalty=1.0, length_normalisation="length", suppress_unk=False)
    hyps = beam_search(TableModel(table=LATE), [[4, 3]], options)[0]
    assert hyps[0].score == pytest.approx((ln(0.5) + ln(0.9)) / 2, abs=1e-5)


@pytest.mark.parametrize("field, value", [("length_normalisation", "fairseq"), ("stopping", "never"), ("max_length", -1)])
def test_unknown_normalisation_stopping_or_a_negative_max_length_is_refused(field, value):
    with pytest.raises(SearchError, match=field):
        SearchOptions(**{field: value}).validate()


def test_max_length_caps_the_target_whatever_a_and_b_say():
    options = SearchOptions(beam=1, max_len_a=10.0, max_len_b=50, max_length=1, length_penalty=0.0)
    hyp = beam_search(TableModel(table={(): {B: 0.9, EOS: 0.1}}), [[4, 3]], options)[0][0]
    assert len(hyp.tokens) == 1  # B, then eos forced


@pytest.mark.parametrize("free, expected", [(False, ln(0.9) + ln(0.1)), (True, ln(0.9))])
def test_the_eos_forced_at_the_maximum_length_is_free_where_the_reference_makes_it_so(free, expected):
    options = SearchOptions(beam=1, max_length=1, length_penalty=0.0, free_forced_eos=free)
    hyp = beam_search(TableModel(table={(): {B: 0.9, EOS: 0.1}}), [[4, 3]], options)[0][0]
    assert hyp.tokens == (B,) and hyp.log_prob == pytest.approx(expected, abs=1e-5)
