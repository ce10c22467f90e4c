"""Quality estimate per segment: a confidence in [0, 1] and the flags ``low_confidence``,
``untranslated_span``, ``repetition`` and ``dropped_text``, from what the decoder already knows
and how much of the source the translation carries (worker.text.coverage).

``decoder_facts`` reads one decoded sentence (its units' pieces, token log-probabilities and
attention) into ``DecoderFacts``: the features below plus source words that got no attention.
``ConfidenceModel`` maps the features to a confidence: a logistic model

    confidence = sigmoid(w . (x - mean) / scale + b)

fitted to sentence chrF / 100 on development data (``nmt calibrate``, ``worker.local.calibrate``),
so a confidence of 0.4 reads "expected chrF about 40". The fit lives in the bundle's manifest
under ``quality`` and names the features it weighs (any of ``COMPUTED``: fits made before the
features past ``BASE_FEATURES`` existed name those eleven and still load); a bundle without one
gets ``DEFAULT_MODEL`` (the mean token log-probability alone), and its segments say so in
``details["confidence_model"]``.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass, field, replace
from typing import Any, Callable, Mapping, Sequence

import numpy as np

from .agreement import AGREEMENT_FEATURES, Finished, agreement_features
from .coverage import DROPPED_BELOW, coverage, halved, too_short, words_lost
from .pipeline import Prepared
from .segment import (
    DROPPED_TEXT,
    LOW_CONFIDENCE,
    REPETITION,
    TIME_BUDGET,
    UNTRANSLATED_SPAN,
    WORD_MARKER,
    DecoderFacts,
    SegmentResult,
    piece_words,
    word_spans,
)

BASE_FEATURES = (
    "mean_log_prob",  # mean log-probability of the output tokens (eos included)
    "min_log_prob",  # the least likely output token's
    "unlikely_tokens",  # share of output tokens with probability < 0.1
    "unattended_source",  # share of source pieces whose attention, summed over the output, is < 0.3
    "attention_entropy",  # mean entropy of the attention rows, over log(source length)
    "over_attended_source",  # share of source pieces attended more than twice over
    "repeated_ngrams",  # share of output piece trigrams that occurred before in the output
    "pieces_per_word",  # source SentencePiece pieces per word: rare words split into many
    "unknown_source",  # share of source pieces that are unk or byte fallback
    "length_ratio",  # log((output tokens + 1) / (source tokens + 1))
    "source_length",  # log(source tokens + 1)
)
# Features whose meaning carries across domains: lengths in characters (pieces split text
# differently by domain), how fully the source was read, how much was copied, how the output ended.
FEATURES = BASE_FEATURES + (
    "char_length_ratio",  # log((output characters + 1) / (source characters + 1)), word markers left out
    "char_length_ratio_sq",  # its square: a ratio far from the usual either way (too short, too long)
    "coverage_deficit",  # mean over source pieces of max(0, 1 - summed attention): what was read too little
    "attention_peak",  # mean over output tokens of their largest attention weight
    "copied_pieces",  # share of output pieces with a letter that are also source pieces (copied, not translated)
    "eos_log_prob",  # log-probability of the end of sentence: how sure the model was that it was done
    "log_prob_spread",  # standard deviation of the token log-probabilities
)
# The log-probability counted per character of the output rather than per piece: the sum of the
# token log-probabilities (eos included) over the output's characters (word markers left out).
# Pieces are longer in some domains than in others, and a made-up word splits into many short
# ones, so per piece the same text scores differently by domain; per character it ranks every
# domain measured better than the mean log-probability, and alone it ranks domains a fit did not
# see better than a fit over ``FEATURES`` (docs/quality.md, "Across domains").
CHAR_FEATURES = ("log_prob_per_char",)
# Every feature ``decoder_facts`` computes, and so every one a fit may name: ``FEATURES`` (the
# default fit's), the agreement within the beam's n-best list (worker.text.agreement), which
# did not carry across domains well enough to join the default fit, and ``CHAR_FEATURES``
# (docs/quality.md).
COMPUTED = FEATURES + AGREEMENT_FEATURES + CHAR_FEATURES
# The fits ``nmt calibrate --features`` and ``bench/confidence.py`` make, by name: ``all``, the
# default fit's ``FEATURES``; ``base``, the eleven of earlier fits; ``agreement``, ``FEATURES`` and
# the n-best agreement; ``char``, the log-probability per output character alone, which ranks
# domains the fit did not see best (docs/quality.md); ``char-ratio``, it and the length ratio.
FEATURE_SETS = {"all": FEATURES, "base": BASE_FEATURES, "agreement": FEATURES + AGREEMENT_FEATURES,
                "char": CHAR_FEATURES, "char-ratio": CHAR_FEATURES + ("char_length_ratio",)}
UNATTENDED = 0.3  # summed attention below which a source piece counts as unattended
UNTRANSLATED_MIN_LETTERS = 3  # a word reported untranslated holds at least this many letters
REPEAT_RUN = 3  # an n-gram (n <= 4) of output pieces this many times in a row is a loop
_BYTE_PIECE = re.compile(r"<0x[0-9A-Fa-f]{2}>")
DROPPED_CONFIDENCE = 0.1  # the most confidence a segment flagged dropped_text keeps


@dataclass(frozen=True)
class DecodedChunk:
    """One decoded input of a sentence (the sentence, or a chunk of an over-long one)."""

    source_pieces: Sequence[str]  # without eos
    source_ids: Sequence[int]  # without eos
    target_pieces: Sequence[str]  # without eos
    token_log_probs: np.ndarray  # float [T + 1], eos included
    attention: np.ndarray  # float [T + 1, >= S + 1]: rows per output token and eos, columns per source piece and eos
    start: int  # character offset of the unit's text within the decoded sentence
    text: str  # the unit's text
    # every hypothesis the beam finished for the unit, the one read above first
    alternatives: Sequence[Finished] = ()


def decoder_facts(units: Sequence[DecodedChunk], unk_id: int = 1,
                  piece: Callable[[int], str] | None = None) -> DecoderFacts:
    """Features (``COMPUTED``) and unattended words of a sentence decoded as ``units``.
    ``piece(id)``: a target id's piece, to read the units' ``alternatives``; without it each
    unit's best counts as the only hypothesis its beam finished."""
    lps = np.concatenate([np.asarray(u.token_log_probs, dtype=np.float64) for u in units])
    source = [p for u in units for p in u.source_pieces]
    ids = [i for u in units for i in u.source_ids]
    target = [p for u in units for p in u.target_pieces]
    coverage, entropies, peaks, unattended = [], [], [], []
    words = 0
    for unit in units:
        s = len(unit.source_pieces)
        att = np.asarray(unit.attention, dtype=np.float64)[:, : s + 1]
        cover = att[:-1, :s].sum(0) if len(att) > 1 else np.zeros(s)
        coverage.append(cover)
        rows = np.clip(att, 1e-12, 1.0)
        entropies.append(float((-(rows * np.log(rows)).sum(1) / math.log(s + 1)).mean()) if s else 0.0)
        peaks.append(float(att[:-1, :s].max(1).mean()) if s and len(att) > 1 else 0.0)
        piece_word = piece_words(unit.source_pieces)
        words += piece_word[-1] + 1 if piece_word else 0
        unattended += _unattended_words(unit, cover, piece_word)
    cover = np.concatenate(coverage) if coverage else np.zeros(0)
    words = max(1, words)
    trigrams = [tuple(target[i:i + 3]) for i in range(len(target) - 2)]
    repeated = len(trigrams) - len(set(trigrams))
    source_chars = sum(len(p.replace(WORD_MARKER, "")) for p in source)
    target_chars = sum(len(p.replace(WORD_MARKER, "")) for p in target)
    char_ratio = math.log((target_chars + 1) / (source_chars + 1))
    source_set = {p.replace(WORD_MARKER, "") for p in source}
    lettered = [p.replace(WORD_MARKER, "") for p in target if any(c.isalpha() for c in p)]
    features = {
        "mean_log_prob": float(lps.mean()),
        "min_log_prob": float(lps.min()),
        "unlikely_tokens": float((lps < math.log(0.1)).mean()),
        "unattended_source": float((cover < UNATTENDED).mean()) if cover.size else 0.0,
        "attention_entropy": float(np.mean(entropies)),
        "over_attended_source": float((cover > 2.0).mean()) if cover.size else 0.0,
        "repeated_ngrams": repeated / max(1, len(trigrams)),
        "pieces_per_word": len(source) / words,
        "unknown_source": sum(1 for p, i in zip(source, ids) if i == unk_id or _BYTE_PIECE.fullmatch(p)) / max(1, len(source)),
        "length_ratio": math.log((len(target) + 1) / (len(source) + 1)),
        "source_length": math.log(len(source) + 1),
        "char_length_ratio": char_ratio,
        "char_length_ratio_sq": char_ratio * char_ratio,
        "coverage_deficit": float(np.clip(1.0 - cover, 0.0, 1.0).mean()) if cover.size else 0.0,
        "attention_peak": float(np.mean(peaks)) if peaks else 0.0,
        "copied_pieces": sum(1 for p in lettered if p in source_set) / max(1, len(lettered)),
        "eos_log_prob": float(np.mean([u.token_log_probs[-1] for u in units])),
        "log_prob_spread": float(lps.std()),
        "log_prob_per_char": float(lps.sum()) / max(1, target_chars),
    }
    features |= agreement_features([(u.target_pieces, u.alternatives if piece else ()) for u in units], piece or str)
    return DecoderFacts(features, tuple(unattended), _loop(target))


def _unattended_words(unit: DecodedChunk, cover: np.ndarray, piece_word: Sequence[int]) -> list[tuple[int, int]]:
    """Words of the unit (character spans in the decoded sentence) none of whose pieces reached
    the attention threshold, with enough letters to matter (not punctuation or a stray letter).
    cover float [S]: each source piece's summed attention; piece_word: each piece's word index."""
    best = np.full(piece_word[-1] + 1 if piece_word else 0, -np.inf)
    np.maximum.at(best, np.asarray(piece_word, dtype=np.int64), cover)
    out = []
    for w, (a, b) in enumerate(word_spans(unit.text, unit.start)):
        if w >= len(best) or best[w] >= UNATTENDED:
            continue
        if sum(c.isalpha() for c in unit.text[a - unit.start:b - unit.start]) >= UNTRANSLATED_MIN_LETTERS:
            out.append((a, b))
    return out


def _loop(pieces: Sequence[str]) -> str | None:
    """The first n-gram (n <= 4) of pieces that occurs ``REPEAT_RUN`` times in a row, joined."""
    for n in range(1, 5):
        for i in range(len(pieces) - n * REPEAT_RUN + 1):
            gram = list(pieces[i:i + n])
            if all(list(pieces[i + k * n: i + (k + 1) * n]) == gram for k in range(1, REPEAT_RUN)):
                if any(p.strip(WORD_MARKER + ".,;:!?-") for p in gram):  # "..." or "---" is not a loop
                    return "".join(gram).replace(WORD_MARKER, " ").strip()
    return None


@dataclass(frozen=True)
class ConfidenceModel:
    """A logistic model over ``features`` (names from ``COMPUTED``, one weight, mean and scale
    each); ``threshold``: below it a segment is low_confidence."""

    weights: tuple[float, ...]
    bias: float
    mean: tuple[float, ...]
    scale: tuple[float, ...]
    threshold: float = 0.3
    name: str = "default"
    fit: Mapping[str, Any] = field(default_factory=dict, compare=False)  # what it was fitted on, and how well
    features: tuple[str, ...] = FEATURES

    def __post_init__(self) -> None:
        unknown = [f for f in self.features if f not in COMPUTED]
        if unknown:
            raise ValueError(f"quality model features {unknown} are not among this engine's {list(COMPUTED)}")
        sizes = {len(self.features), len(self.weights), len(self.mean), len(self.scale)}
        if len(sizes) != 1:
            raise ValueError(f"quality model of {len(self.features)} features has {len(self.weights)} weights, "
                             f"{len(self.mean)} means and {len(self.scale)} scales")

    def confidence(self, features: Mapping[str, float]) -> float:
        x = (np.array([features[f] for f in self.features]) - np.array(self.mean)) / np.array(self.scale)
        z = float(np.dot(self.weights, x) + self.bias)
        return 1.0 / (1.0 + math.exp(-max(-60.0, min(60.0, z))))

    @classmethod
    def from_json(cls, raw: Mapping[str, Any], name: str) -> "ConfidenceModel":
        """The model stored under a manifest's ``quality``; ValueError names a feature this engine
        does not compute, or vectors of the wrong length."""
        return cls(tuple(raw["weights"]), float(raw["bias"]), tuple(raw["mean"]), tuple(raw["scale"]),
                   float(raw.get("threshold", 0.3)), name, dict(raw.get("fit", {})), tuple(raw["features"]))

    def to_json(self) -> dict[str, Any]:
        return {"features": list(self.features), "weights": [round(w, 6) for w in self.weights],
                "bias": round(self.bias, 6), "mean": [round(m, 6) for m in self.mean],
                "scale": [round(s, 6) for s in self.scale], "threshold": self.threshold, "fit": dict(self.fit)}


def model_for(manifest: Mapping[str, Any]) -> ConfidenceModel:
    """The bundle's fitted model, else ``DEFAULT_MODEL``."""
    raw = manifest.get("quality")
    if raw:
        return ConfidenceModel.from_json(raw, "bundle")
    return DEFAULT_MODEL


# Until a bundle is calibrated: the mean token log-probability alone, mapped so that -0.5 gives
# 0.5 and -1.5 about 0.15.
DEFAULT_MODEL = ConfidenceModel(weights=(1.7,), bias=0.0, mean=(-0.5,), scale=(1.0,), features=("mean_log_prob",))


def assess(result: SegmentResult, prepared: Prepared, model: ConfidenceModel) -> SegmentResult:
    """``result`` (restored: spans and case back) with its confidence and quality flags.

    A segment that was not decoded is as good as its source: confidence 1 for one made of
    verbatim spans (or nothing to translate), 0 for one copied through in another language or
    over its time budget. A decoded one that carries less than half of its source's visible
    characters, or none of the words around what it copies (``coverage.words_lost``), or a sentence
    of five words or more under half of its letters (``coverage.halved``), is flagged
    ``dropped_text``, its confidence at most ``DROPPED_CONFIDENCE``.
    """
    facts: DecoderFacts | None = result.facts
    if facts is None:
        untranslated = prepared.language is not None or TIME_BUDGET in result.flags
        result = replace(result, confidence=0.0 if untranslated else 1.0)
        return _with_coverage(result, model) if prepared.decode else result
    confidence = model.confidence(facts.features)
    flags, details = list(result.flags), dict(result.details)
    if model.name == "default":
        details["confidence_model"] = "default"
    if confidence < model.threshold:
        flags.append(LOW_CONFIDENCE)
    untranslated = _source_ranges(facts.unattended_words, prepared)
    if untranslated:
        flags.append(UNTRANSLATED_SPAN)
        details["untranslated"] = [{"source": [a, b], "text": prepared.source[a:b]} for a, b in untranslated]
    if facts.loop is not None:
        flags.append(REPETITION)
        details["loop"] = facts.loop
    return _with_coverage(replace(result, confidence=confidence, flags=tuple(flags), details=details), model)


def _with_coverage(result: SegmentResult, model: ConfidenceModel) -> SegmentResult:
    """``result`` flagged ``dropped_text`` (and ``low_confidence``) when it carries too little of its source."""
    covered = coverage(result.source, result.translation, result.alignment)
    if covered >= DROPPED_BELOW and not words_lost(result.source, result.translation, result.alignment) \
            and not too_short(result.source, result.translation) and not halved(result.source, result.translation):
        return result
    confidence = min(result.confidence if result.confidence is not None else 1.0, DROPPED_CONFIDENCE)
    flags = result.flags + (DROPPED_TEXT,)
    if confidence < model.threshold and LOW_CONFIDENCE not in flags:
        flags += (LOW_CONFIDENCE,)
    return replace(result, confidence=confidence, flags=flags,
                   details=dict(result.details) | {"coverage": round(covered, 4)})


def _source_ranges(ranges: Sequence[tuple[int, int]], prepared: Prepared) -> list[tuple[int, int]]:
    """Decoded-text ranges as ranges of the original sentence; those inside a stand-in (a masked
    span, restored on its own) are dropped."""
    masked = prepared.masked
    out = []
    for a, b in ranges:
        if masked is not None and masked.slots:
            if any(slot.start < b and a < slot.end for slot in masked.slots):
                continue
            a, b = masked.origin[a], masked.origin[b - 1] + 1
        a, b = min(a, len(prepared.source)), min(b, len(prepared.source))
        if b > a:
            out.append((a, b))
    return out
