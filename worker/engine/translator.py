"""The torch-free translation engine: bundle + ONNX Runtime + beam search -> typed results.

Sentences are encoded with the bundle's SentencePiece model, packed into batches by a token
budget, decoded, and returned in input order with scores, word alignments and provenance.
"""
from __future__ import annotations

import copy
import functools
import hashlib
import json
import math
import time
import unicodedata
from collections import Counter, defaultdict
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np
import sentencepiece as spm

from worker.text.casing import vocabulary_capitals
from worker.text.truecase import CaseTable
from worker.text.layout import Layout, split_document
from worker.text.masking import STAND_INS
from worker.text.consistency import consistent, numbers_kept
from worker.text.pipeline import Prepared, TextOptions, prepare, restore, restored_texts
from worker.text.quality import DecodedChunk, assess, decoder_facts, model_for
from worker.text.segment import (DROPPED_TEXT, KEPT_SOURCE, LOW_CONFIDENCE, SPAN_MISMATCH, TIME_BUDGET, WORD_MARKER,
                                 Alignment, DocumentResult, SegmentResult, word_at, word_spans)

from .alignment import align
from .bundle import SHORTLIST, TARGET_TOKENS, TRANSFORMER, Bundle, BundleError, load_bundle
from .cache import SegmentCache
from .ort_model import OrtStepModel
from .search import Hypothesis, SearchOptions, search_in_batches
from .settings import EngineSettings
from .transformer_step import OrtTransformerStepModel
from .vocabulary import Vocabulary

# A translation flagged dropped_text is decoded once more with a wider beam that may not end before
# this share of the source's subword tokens; still short, the segment keeps its source, flagged.
RETRY_BEAM = 8
RETRY_MIN_SHARE = 0.6
PARTS_PER_SLICE = 16  # parts of an over-long sentence decoded between time-budget checks, per batch worker
NO_CONTENT = "sentence has no translatable content (no subword tokens): left untranslated"
# Characters with no visible form (control, format, unassigned, separators): SentencePiece drops
# most of them and maps the rest to unk, so they give the decoder nothing to translate.
_INVISIBLE = {"Cc", "Cf", "Cs", "Cn", "Zs", "Zl", "Zp"}


@dataclass(frozen=True)
class _Decoded:
    """One sentence decoded: its units, each with every hypothesis the beam finished (best first),
    its warnings, and (seconds, parts decoded, parts) when it ran over its time budget."""

    units: list
    warnings: tuple[str, ...]
    over: tuple[float, int, int] | None = None


class _Decodings(list):
    """``Translator._decode``'s results, one per sentence, and ``hypotheses``: each sentence's
    ``_Decoded``, every hypothesis its beam finished."""

    hypotheses: list[_Decoded]


@dataclass(frozen=True)
class _SourceChunk:
    """A decodable piece of a segment: the whole sentence, or a word chunk of an over-long one."""

    segment: int
    text: str
    start: int  # character offset of ``text`` within the segment's source text
    pieces: tuple[str, ...]
    ids: tuple[int, ...]  # source ids with eos


class Translator:
    """Load a bundle once; translate sentences and documents with it."""

    def __init__(self, bundle: str | Path | Bundle, settings: EngineSettings = EngineSettings(),
                 cache: "SegmentCache | None" = None) -> None:
        """``cache``: reuse results of sentences seen before (worker.cache); None: decode every sentence."""
        started = time.perf_counter()
        self.cache = cache
        self.settings = settings.validate()
        self.bundle = bundle if isinstance(bundle, Bundle) else load_bundle(bundle)
        entry = self.bundle.manifest.get(SHORTLIST) or {}
        wanted = settings.shortlist == "on" or (settings.shortlist == "auto" and bool(entry.get("default")))
        family = OrtTransformerStepModel if self.bundle.family == TRANSFORMER else OrtStepModel
        self.model = family.from_bundle(self.bundle, settings.provider, settings.intra_op_threads, shortlist=wanted)
        self.shortlist = self.model.shortlist is not None  # decoding onto the lexical shortlist
        self.source_sp = _load_sentencepiece(self.bundle, "source")
        self.target_sp = _load_sentencepiece(self.bundle, "target")
        # Multilingual imported models read the target language from a token before the source (>>deu<<).
        self.target_language = self.bundle.target_language
        self.source_prefix = self._prefix_for(self.target_language)
        defaults = self.bundle.manifest.get("decoding_defaults", {})
        self.default_options = SearchOptions(**{k: v for k, v in defaults.items() if k in SearchOptions.__dataclass_fields__})
        # A model with learned or tabled positions cannot decode past them (eos takes the last one).
        self.max_target_tokens = int(self.bundle.manifest.get("max_positions", 0)) - 1
        self.confidence_model = model_for(self.bundle.manifest)
        # Words that mask verbatim spans: the bundle's own (bench/stand_ins.py), else the default list.
        self.stand_ins = tuple(self.bundle.manifest.get("stand_ins") or STAND_INS)
        # Words an ALL-CAPS or Title Case sentence keeps capitalised in sentence case ("I", names).
        self.capitalised = vocabulary_capitals(self.source_sp.scored_pieces())
        # Words' usual case (a table built at export), for text that arrives all in lower case.
        self.case_table = CaseTable.load(self.bundle.casing_path) if self.bundle.casing_path else None
        # Characters both vocabularies carry; the others (emoji, rare symbols) are masked as spans.
        self.represented = functools.cache(lambda c: all(
            sp.unk_id() not in sp.encode(c) for sp in (self.source_sp, self.target_sp)))
        # The manifest's settings (stand-ins, confidence model, defaults) shape results but not the
        # signature, which names the model files: cached results are keyed by both.
        self.manifest_digest = hashlib.sha256(json.dumps(self.bundle.manifest, sort_keys=True).encode()).hexdigest()
        self.load_seconds = time.perf_counter() - started

    @property
    def provider(self) -> str:
        return self.model.provider

    def for_target(self, language: str) -> "Translator":
        """This translator for another of the bundle's target languages (a multilingual model's
        ``target_tokens``): the same sessions and vocabularies, another target-language token."""
        if language == self.target_language:
            return self
        if language not in (self.bundle.manifest.get(TARGET_TOKENS) or {}):
            raise BundleError(f"bundle {self.bundle.manifest.get('name')!r} does not translate into {language!r} "
                              f"(it translates {', '.join(self.bundle.pairs)})")
        other = copy.copy(self)
        other.target_language, other.source_prefix = language, self._prefix_for(language)
        return other

    def _prefix_for(self, language: str) -> tuple[int, ...]:
        token = (self.bundle.manifest.get(TARGET_TOKENS) or {}).get(language)
        return (self.source_sp.piece_to_id(token),) if token else ()

    def translate_sentences(self, sentences: Sequence[str], options: SearchOptions | None = None,
                            with_attention: bool = False,
                            progress: Callable[[int], None] | None = None,
                            text_options: TextOptions | None = None) -> list[SegmentResult]:
        """Translate stripped sentences; word spans are offsets within each sentence and its translation.
        ``progress(n)``: called as each batch of n decoder inputs (sentences, or parts of over-long
        ones) finishes, and once with the number of cache hits. ``text_options``: span protection and
        case handling around decoding (default: both on). With a cache, each distinct sentence not
        in it is translated once; its repeats and the cache's hits come back ``cached``."""
        options = self._within_positions((options or self.default_options).validate())
        text_options = text_options or TextOptions()
        if self.cache is None:
            return self._translate(sentences, options, with_attention, progress, text_options)[0]
        context = self.cache.context(
            bundle=self.bundle.signature, manifest=self.manifest_digest, target=self.target_language,
            search=asdict(options), attention=with_attention,
            shortlist=self.shortlist,
            max_sentence_tokens=self.settings.max_sentence_tokens,
            text={"protect_spans": text_options.protect_spans, "restore_case": text_options.restore_case,
                  "check_language": text_options.check_language, "keep_names": text_options.keep_names,
                  "retry_dropped": text_options.retry_dropped, "pick_consistent": text_options.pick_consistent,
                  "product_names": text_options.product_names, "key_names": text_options.key_names,
                  "glossary": [list(t) for t in text_options.glossary.terms] if text_options.glossary else None})
        keys = [self.cache.key(context, sentence) for sentence in sentences]
        found = self.cache.get_many(keys)
        todo: dict[str, str] = {}  # key -> sentence, for each distinct sentence not in the cache
        for key, sentence in zip(keys, sentences):
            if key not in found:
                todo.setdefault(key, sentence)
        if progress and len(keys) > len(todo):
            progress(len(keys) - len(todo))
        fresh, decoded = self._translate(list(todo.values()), options, with_attention, progress, text_options)
        first = {key: i for i, key in enumerate(todo)}
        # Sentences copied through (verbatim spans, another language) cost nothing to redo; the
        # decoder facts have done their work (the confidence) and would only take memory.
        self.cache.put_many({key: replace(fresh[i], facts=None) for key, i in first.items() if decoded[i]})
        results, seen = [], set()
        for key in keys:
            if key in found or key in seen:
                results.append(replace(found[key] if key in found else fresh[first[key]], cached=True))
            else:
                seen.add(key)
                results.append(fresh[first[key]])
        return results

    def _translate(self, sentences: Sequence[str], options: SearchOptions, with_attention: bool,
                   progress: Callable[[int], None] | None,
                   text_options: TextOptions) -> tuple[list[SegmentResult], list[bool]]:
        """Each sentence's result, and whether it went through the decoder (a sentence over its
        time budget did not: it is kept as it is, flagged, and never cached)."""
        prepared = [prepare(sentence, text_options, self.bundle.source_language, self.stand_ins,
                            self.capitalised, self.represented, self.target_language) for sentence in sentences]
        decodings = self._decode([p.text for p in prepared if p.decode], options, with_attention, progress)
        decoded = iter(zip(decodings, decodings.hypotheses))
        pick = text_options.protect_spans and text_options.pick_consistent
        results = []
        for p in prepared:
            if p.decode:
                best, hypotheses = next(decoded)
                result = self._finished(p, best)
                if pick:
                    result = self._consistent(p, hypotheses, best, result, with_attention, options)
            else:
                result = self._finished(p, _undecoded(p))
            if p.decode and DROPPED_TEXT in result.flags and text_options.protect_spans and text_options.retry_dropped \
                    and options.n_best == 1 and not options.max_length:  # an n-best list, a length cap: the model's
                result = self._retry(p, result, options, with_attention)
            results.append(result)
        return results, [p.decode and TIME_BUDGET not in r.flags for p, r in zip(prepared, results)]

    def _finished(self, prepared: Prepared, result: SegmentResult, made_up: bool = False) -> SegmentResult:
        """An engine result restored (case, spans; ``made_up``: see ``restore``) and assessed; one over
        its time budget keeps its source."""
        result = _kept(prepared, result) if TIME_BUDGET in result.flags else restore(prepared, result, made_up)
        return assess(result, prepared, self.confidence_model)

    def _consistent(self, prepared: Prepared, decoded: "_Decoded", best: SegmentResult, first: SegmentResult,
                    with_attention: bool, options: SearchOptions) -> SegmentResult:
        """``first`` (``best``, the best hypothesis, finished) if it keeps its spans
        (``span_consistent``) and numbers (``numbers_kept``) and carries its source (no
        ``dropped_text``); else the best-scoring other hypothesis of the beam that does all three,
        put first; else ``first``, flagged ``span_mismatch`` where no hypothesis kept its spans,
        less the spans it made up (``restore`` with ``made_up``: as a sentence with masked spans
        loses them), or the source text itself, flagged ``kept_source`` too, where that still
        loses or makes up a number. A sentence decoded in parts keeps its best."""
        if decoded.over is not None or len(decoded.units) != 1 or prepared.masked is None:
            return first
        unit, hyps = decoded.units[0]
        kept = self._kept_all(prepared, [(self.target_sp.decode(list(hyps[0].tokens)), first.translation)])[0]
        if kept and DROPPED_TEXT not in first.flags:
            return first
        # A hypothesis other than the best is a translation of its own: its alignment comes from the
        # engine, and it takes the restoring passes again (``_finished``), once it is known to keep
        # its spans and numbers (the others' texts restored and checked, once for all of them).
        texts = [self.target_sp.decode(list(h.tokens)) for h in hyps[1:]]
        candidates = self._kept_all(prepared, list(zip(texts, restored_texts(prepared, texts))))
        for k in (k for k, ok in enumerate(candidates, 1) if ok):
            ordered = [(unit, [hyps[k], *hyps[:k], *hyps[k + 1:]])]
            result = self._finished(prepared, self._segment(prepared.text, ordered, decoded.warnings, with_attention,
                                                            options.n_best))
            if DROPPED_TEXT not in result.flags and self._numbers_kept(prepared, result.translation):
                why = "dropped text" if kept else "changed its spans"
                return replace(result, warnings=result.warnings + (
                    f"the best hypothesis {why} ({first.translation!r}): hypothesis {k + 1} of the beam is taken",))
        if kept:
            return first
        warning = "no hypothesis of the beam keeps the source's spans as they are: the best is kept"
        cleaned = self._finished(prepared, best, made_up=True)
        deleted = Counter(cleaned.details.get("removed", ())) - Counter(first.details.get("removed", ()))
        if deleted:
            first = cleaned
            warning += f", less the spans it made up ({', '.join(map(repr, deleted.elements()))})"
        if not self._numbers_kept(prepared, first.translation):
            # A number lost or made up is worse than no translation: the reader is told to translate it
            return _source_kept(prepared, first, (LOW_CONFIDENCE,), (SPAN_MISMATCH, KEPT_SOURCE), (
                f"no hypothesis of the beam keeps the source's numbers ({first.translation!r}): "
                "its source text is kept"))
        return replace(first, flags=first.flags + (SPAN_MISMATCH,), warnings=first.warnings + (warning,))

    def _kept_all(self, prepared: Prepared, hypotheses: list[tuple[str, str]]) -> list[bool]:
        """Whether each hypothesis (the model's text, and it restored) keeps its spans and numbers."""
        return consistent(prepared.masked, prepared.source, hypotheses, self.bundle.source_language,
                          self.target_language)

    def _numbers_kept(self, prepared: Prepared, translation: str) -> bool:
        """Whether ``translation`` keeps the digit runs of ``prepared.source`` (``numbers_kept``)."""
        return numbers_kept(prepared.source, translation, self.bundle.source_language, self.target_language)

    def _retry(self, prepared: Prepared, first: SegmentResult, options: SearchOptions,
               with_attention: bool) -> SegmentResult:
        """A translation that dropped text (``first``), decoded again with a beam of at least
        ``RETRY_BEAM`` that may not end before ``RETRY_MIN_SHARE`` of the source's tokens. The
        retry if it carries its source; else the source text itself, flagged ``dropped_text`` and
        ``kept_source``: a document is never written as if fine with a sentence missing."""
        tokens = len(self.source_sp.encode(prepared.text, out_type=str))
        again = replace(options, beam=max(options.beam, RETRY_BEAM),
                        min_len=max(options.min_len, math.ceil(RETRY_MIN_SHARE * tokens)))
        result = self._decode([prepared.text], again, with_attention, None)[0]
        if TIME_BUDGET not in result.flags:
            result = assess(restore(prepared, result), prepared, self.confidence_model)
            if DROPPED_TEXT not in result.flags:
                return replace(result, warnings=result.warnings + (
                    f"the first translation dropped text ({first.translation!r}): decoded again "
                    f"with beam {again.beam} and at least {again.min_len} tokens",))
        return _source_kept(prepared, first, (LOW_CONFIDENCE, DROPPED_TEXT), (KEPT_SOURCE,), (
            f"the translation dropped text ({first.translation!r}), also when decoded again: its source text is kept"),
            details=("coverage",))

    def _built(self, sentence: str, decoded: "_Decoded", with_attention: bool, options: SearchOptions) -> SegmentResult:
        """The model's translation of one sentence, as it is, from its ``_decode`` entry (the best
        hypothesis of each unit); a sentence whose parts took longer than ``settings.segment_seconds``
        comes back empty, flagged TIME_BUDGET."""
        if decoded.over is not None:
            return _over_budget(sentence, decoded.over, decoded.warnings, self.settings.segment_seconds)
        return self._segment(sentence, decoded.units, decoded.warnings, with_attention, options.n_best)

    def _decode(self, sentences: Sequence[str], options: SearchOptions, with_attention: bool,
                progress: Callable[[int], None] | None) -> "_Decodings":
        """The model's translations of ``sentences``, as they are (``_built``), with each one's
        hypotheses (``_Decodings.hypotheses``) for ``_consistent``."""
        decodings = _Decodings()
        decodings.hypotheses = self._hypotheses(sentences, options, progress)
        decodings += [self._built(sentence, decoded, with_attention, options)
                      for sentence, decoded in zip(sentences, decodings.hypotheses)]
        return decodings

    def _hypotheses(self, sentences: Sequence[str], options: SearchOptions,
                    progress: Callable[[int], None] | None) -> list["_Decoded"]:
        """Each sentence's units with every hypothesis the beam finished for them, best first."""
        units, warnings = self._units(sentences)
        own: dict[int, list[_SourceChunk]] = defaultdict(list)
        for unit in units:
            own[unit.segment].append(unit)
        whole = [u for u in units if len(own[u.segment]) == 1]
        hypotheses = self._search([u.ids for u in whole], options, progress)
        by_segment: dict[int, list[tuple[_SourceChunk, list[Hypothesis]]]] = defaultdict(list)
        for unit, hyps in zip(whole, hypotheses):
            by_segment[unit.segment].append((unit, hyps))
        over: dict[int, tuple[float, int, int]] = {}  # segment -> (seconds, parts decoded, parts)
        for segment, parts in own.items():
            if len(parts) > 1:
                decoded, seconds = self._decode_parts(parts, options, progress)
                if len(decoded) < len(parts):
                    over[segment] = (seconds, len(decoded), len(parts))
                by_segment[segment] = decoded
        return [_Decoded(by_segment[index], warnings.get(index, ()), over.get(index))
                for index in range(len(sentences))]

    def _search(self, sources: list[tuple[int, ...]], options: SearchOptions,
                progress: Callable[[int], None] | None) -> list[list[Hypothesis]]:
        """``search_in_batches`` over source ids, with the bundle's source prefix (a target-language
        token) in front; the prefix's attention columns are dropped again, so columns are the ids'.
        Every finished hypothesis comes back (up to the beam), not only ``options.n_best``: how far
        they agree with the best is a confidence feature (worker.text.agreement)."""
        found = search_in_batches(self.model, [(*self.source_prefix, *ids) for ids in sources],
                                  replace(options, n_best=options.beam),
                                  self.settings.max_batch_sentences, self.settings.max_batch_tokens,
                                  self.settings.batch_workers, progress)
        if not self.source_prefix:
            return found
        skip = len(self.source_prefix)
        return [[replace(h, attention=h.attention[:, skip:]) for h in hyps] for hyps in found]

    def _decode_parts(self, parts: list[_SourceChunk], options: SearchOptions, progress: Callable[[int], None] | None
                      ) -> tuple[list[tuple[_SourceChunk, list[Hypothesis]]], float]:
        """The parts of one over-long sentence decoded in slices while the next slice, at the pace
        so far, still ends within ``settings.segment_seconds`` (every part, unless it would not),
        and the seconds taken."""
        started = time.perf_counter()
        step = max(1, self.settings.batch_workers) * PARTS_PER_SLICE
        decoded: list[tuple[_SourceChunk, list[Hypothesis]]] = []
        for first in range(0, len(parts), step):
            spent = time.perf_counter() - started
            ahead = spent / len(decoded) * min(step, len(parts) - first) if decoded else 0.0  # the next slice's
            if spent + ahead > self.settings.segment_seconds:
                if progress:
                    progress(len(parts) - first)  # the parts left count as done: the sentence is finished, kept
                break
            chunk = parts[first:first + step]
            decoded += zip(chunk, self._search([u.ids for u in chunk], options, progress))
        return decoded, time.perf_counter() - started

    def translate_document(self, text: str, options: SearchOptions | None = None,
                           with_attention: bool = False, text_options: TextOptions | None = None) -> DocumentResult:
        """Translate a plain-text document, keeping its paragraphs, line breaks and whitespace."""
        return self.translate_documents([text], options, with_attention, text_options=text_options)[0]

    def translate_documents(self, texts: Sequence[str], options: SearchOptions | None = None,
                            with_attention: bool = False,
                            progress: Callable[[int], None] | None = None,
                            text_options: TextOptions | None = None) -> list[DocumentResult]:
        """``translate_document`` for several documents at once: their sentences share batches, so
        many short documents decode as fast as one long one. Each result's ``translate_seconds`` is
        the group's (``documents_together`` says how many shared it)."""
        layouts = [split_document(text, self.bundle.source_language) for text in texts]
        return self.translate_layouts(layouts, options, with_attention, progress, text_options)

    def translate_layouts(self, layouts: Sequence[Layout], options: SearchOptions | None = None,
                          with_attention: bool = False,
                          progress: Callable[[int], None] | None = None,
                          text_options: TextOptions | None = None) -> list[DocumentResult]:
        """``translate_documents`` for documents already split (``split_document``)."""
        options = (options or self.default_options).validate()
        started = time.perf_counter()
        results = self.translate_sentences([s.text for layout in layouts for s in layout.sentences], options,
                                           with_attention, progress, text_options)
        provenance = self.provenance(options, time.perf_counter() - started, len(results))
        documents, first = [], 0
        for layout in layouts:
            own = results[first: first + len(layout.sentences)]
            first += len(layout.sentences)
            timings = provenance["timings"] | {"sentences": len(own), "documents_together": len(layouts)}
            if self.cache is not None:
                timings["cache_hits"] = sum(r.cached for r in own)
            documents.append(assemble_document(layout, own, provenance | {"timings": timings}))
        return documents

    def search_options(self, **overrides: Any) -> SearchOptions:
        """The bundle's decoding defaults with ``overrides`` (None: keep the default), validated
        (``SearchError`` names an option the bundle cannot take, such as n_best above the beam)."""
        return replace(self.default_options, **{k: v for k, v in overrides.items() if v is not None}).validate()

    def _within_positions(self, options: SearchOptions) -> SearchOptions:
        """``options`` with target lengths capped at the model's positions, where it has a limit."""
        if self.max_target_tokens <= 0 or 0 < options.max_length <= self.max_target_tokens:
            return options
        return replace(options, max_length=self.max_target_tokens)

    def provenance(self, options: SearchOptions, seconds: float, sentences: int) -> dict[str, Any]:
        return {
            "bundle": self.bundle.manifest.get("name"),
            "signature": self.bundle.signature,
            "source_language": self.bundle.source_language,
            "target_language": self.target_language,
            "provider": self.provider,
            "decoding": asdict(options),
            "shortlist": self.shortlist,
            "timings": {"load_seconds": round(self.load_seconds, 4), "translate_seconds": round(seconds, 4),
                        "sentences": sentences},
        }

    # -- internals ------------------------------------------------------------------------------
    def _units(self, sentences: Sequence[str]) -> tuple[list[_SourceChunk], dict[int, tuple[str, ...]]]:
        """The decodable units of each sentence and its warnings. A sentence (or chunk) with no
        translatable content gets no unit: decoded from eos alone, the model invents a sentence."""
        units, warnings = [], {}
        limit = self.settings.max_sentence_tokens
        if self.max_target_tokens > 0:  # a model with a position table: a longer source is split, not refused
            limit = min(limit, self.max_target_tokens - len(self.source_prefix))
        for index, sentence in enumerate(sentences):
            pieces = self.source_sp.encode(sentence, out_type=str)
            if _contentless(pieces):
                warnings[index] = (NO_CONTENT,)
                continue
            if len(pieces) + 1 <= limit:
                units.append(self._unit(index, sentence, 0, pieces))
                continue
            chunks = _word_chunks(sentence, lambda texts: [len(p) for p in self.source_sp.encode(list(texts))], limit)
            inside = any(start and not sentence[start - 1].isspace() for _, start in chunks)
            where = "at word boundaries and inside over-long words" if inside else "at word boundaries"
            warnings[index] = (f"sentence of {len(pieces)} subword tokens exceeds the limit of {limit}: "
                               f"translated in {len(chunks)} parts split {where}",)
            own = [self._unit(index, chunk, start) for chunk, start in chunks]
            own = [u for u in own if not _contentless(u.pieces)]
            if not own:
                warnings[index] += (NO_CONTENT,)
            units += own
        return units, warnings

    def _unit(self, segment: int, text: str, start: int, pieces: Sequence[str] | None = None) -> _SourceChunk:
        """``pieces``: ``text`` already encoded, when the caller has it."""
        if pieces is None:
            pieces = self.source_sp.encode(text, out_type=str)
        ids = [self.source_sp.piece_to_id(p) for p in pieces]
        return _SourceChunk(segment, text, start, tuple(pieces), (*ids, self.model.special.eos))

    def _segment(self, sentence: str, units: list[tuple[_SourceChunk, list[Hypothesis]]], warnings: tuple[str, ...],
                 with_attention: bool, listed: int = 1) -> SegmentResult:
        """One sentence's result from its units' hypotheses (every finished one, best first; none:
        nothing to translate), the ``listed`` best of them as its n-best list. The translation is the units' texts
        joined with single spaces, empty ones skipped."""
        source_spans = tuple(word_spans(sentence))
        if not units:
            return SegmentResult(sentence, "", 0.0, Alignment((), source_spans, ()), warnings=warnings)
        bests = [hyps[0] for _, hyps in units]
        texts = [self.target_sp.decode(list(best.tokens)) for best in bests]
        target_pieces = [[self.target_sp.id_to_piece(t) for t in best.tokens] for best in bests]
        translation = " ".join(t for t in texts if t)
        target_spans = tuple(word_spans(translation))
        source_starts, target_starts = [a for a, _ in source_spans], [a for a, _ in target_spans]
        pairs: set[tuple[int, int]] = set()
        target_start = 0
        for (unit, _), best, text, pieces in zip(units, bests, texts, target_pieces):
            local = align(unit.pieces, pieces, best.attention, unit.text, text, unit.start, target_start)
            # A chunk's words are counted from 0 and a word cut into pieces spans several chunks,
            # so words are matched to the sentence's (and translation's) by where they start.
            pairs |= {(word_at(source_starts, local.source_spans[i][0]), word_at(target_starts, local.target_spans[j][0]))
                      for i, j in local.pairs}
            if text:
                target_start += len(text) + 1
        alignment = Alignment(tuple(sorted(pairs)), source_spans, target_spans)
        attention = None
        if with_attention:
            # Columns past a unit's own ids are its batch's padding.
            attention = _block_diagonal([best.attention[:, : len(unit.ids)] for (unit, _), best in zip(units, bests)])
        shown = units[0][1][:listed]
        n_best = ()
        if len(units) == 1 and len(shown) > 1:
            n_best = tuple((self.target_sp.decode(list(h.tokens)), h.score) for h in shown)
        score = sum(best.score for best in bests) / len(bests)
        facts = decoder_facts([DecodedChunk(unit.pieces, unit.ids[:-1], pieces, best.token_log_probs, best.attention,
                                    unit.start, unit.text, hyps)
                               for (unit, hyps), best, pieces in zip(units, bests, target_pieces)],
                              piece=self.target_sp.id_to_piece)
        return SegmentResult(sentence, translation, score, alignment, n_best, attention, warnings, facts=facts)


def _over_budget(sentence: str, spent: tuple[float, int, int], warnings: tuple[str, ...],
                 budget: float) -> SegmentResult:
    """The engine result of a sentence whose decoding was stopped at its time budget."""
    seconds, done, parts = spent
    warning = (f"translating this segment would take over its budget of {budget:g} s ({done} of {parts} parts "
               f"in {seconds:.1f} s): its source is kept untranslated")
    return SegmentResult(sentence, "", 0.0, Alignment((), (), ()), warnings=warnings + (warning,),
                         flags=(TIME_BUDGET,), details={"time_budget": {"seconds": round(seconds, 2), "parts": parts,
                                                                        "decoded_parts": done}})


def _kept(prepared: Prepared, result: SegmentResult) -> SegmentResult:
    """``result`` (over its time budget, or short of its source twice) with the source as its
    translation, word for word."""
    words = tuple(word_spans(prepared.source))
    return replace(result, source=prepared.source, translation=prepared.source,
                   alignment=Alignment(tuple((i, i) for i in range(len(words))), words, words))


def _source_kept(prepared: Prepared, result: SegmentResult, keep: tuple[str, ...], add: tuple[str, ...],
                 warning: str, details: tuple[str, ...] = ()) -> SegmentResult:
    """``result`` set aside for its source text (``_kept``): of its flags those in ``keep``, then
    ``add``; of its details those named in ``details``; ``warning`` after its own."""
    kept = _kept(prepared, result)
    return replace(kept, flags=tuple(f for f in kept.flags if f in keep) + add,
                   details={k: v for k, v in kept.details.items() if k in details}, warnings=kept.warnings + (warning,))


def _undecoded(prepared: Prepared) -> SegmentResult:
    """The stand-in engine result for a sentence that is not decoded (``restore`` fills it)."""
    return SegmentResult(prepared.source, "", 0.0, Alignment((), (), ()))


def _load_sentencepiece(bundle: Bundle, side: str) -> Vocabulary:
    """side: 'source' or 'target'. A model file that does not parse is a bundle error (its sha256
    can match a manifest written from an already broken file)."""
    path = bundle.vocab_path(side)
    try:
        return Vocabulary(spm.SentencePieceProcessor(model_file=str(path)), _id_table(bundle, side))
    except (RuntimeError, OSError) as exc:
        raise BundleError(f"bundle {bundle.path}: cannot load SentencePiece model {path.name}: {exc}") from None


def _id_table(bundle: Bundle, side: str) -> dict[str, int] | None:
    path = bundle.vocab_ids_path(side)
    if path is None:
        return None
    try:
        table = json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise BundleError(f"bundle {bundle.path}: {path.name} is not a JSON piece -> id table: {exc}") from None
    if not isinstance(table, dict) or "<unk>" not in table:
        raise BundleError(f"bundle {bundle.path}: {path.name} is not a piece -> id table with <unk>")
    return table


def _contentless(pieces: Sequence[str]) -> bool:
    """Whether pieces carry no text: none at all, or only word markers and invisible characters."""
    return all(unicodedata.category(c) in _INVISIBLE for piece in pieces for c in piece.replace(WORD_MARKER, ""))


def _block_diagonal(blocks: Sequence[np.ndarray]) -> np.ndarray:
    """blocks: float [T_c, S_c] each -> float32 [sum T_c, sum S_c], block c at its offsets, zeros elsewhere.
    A single block comes back as it is."""
    if len(blocks) == 1:
        return blocks[0]
    out = np.zeros((sum(b.shape[0] for b in blocks), sum(b.shape[1] for b in blocks)), dtype=np.float32)
    row = col = 0
    for block in blocks:
        out[row: row + block.shape[0], col: col + block.shape[1]] = block
        row, col = row + block.shape[0], col + block.shape[1]
    return out


def assemble_document(layout: Layout, results: Sequence[SegmentResult], provenance: dict[str, Any]) -> DocumentResult:
    """The translated document from per-sentence results, with word spans moved from sentence
    offsets to offsets in the source and translated documents."""
    translated, starts = layout.reassemble([r.translation for r in results])
    segments = tuple(r.shifted(layout.sentences[i].start, starts[i]) for i, r in enumerate(results))
    return DocumentResult(layout.text, translated, segments, provenance)


def _word_chunks(sentence: str, count: Callable[[Sequence[str]], list[int]], limit: int) -> list[tuple[str, int]]:
    """Split at whitespace into (chunk, start) of at most ``limit`` tokens (pieces + eos) where
    possible; a single word over the limit is cut into character pieces. ``count(texts)``: the
    pieces of each text. Each character is encoded a bounded number of times (linear cost)."""
    words = word_spans(sentence)
    counts = count([sentence[a:b] for a, b in words])
    chunks: list[tuple[str, int]] = []
    start = end = total = 0
    for (a, b), n in zip(words, counts):
        if end > start and total + n + 1 <= limit:
            end, total = b, total + n
            continue
        if end > start:
            chunks.append((sentence[start:end], start))
        if n + 1 > limit:
            chunks += _cut_word(sentence, a, b, n, count, limit)
            start = end = total = 0
        else:
            start, end, total = a, b, n
    if end > start:
        chunks.append((sentence[start:end], start))
    return chunks


def _cut_word(sentence: str, start: int, end: int, pieces: int, count: Callable[[Sequence[str]], list[int]],
              limit: int) -> list[tuple[str, int]]:
    """sentence[start:end] (``pieces`` pieces) in character slices of at most ``limit`` tokens:
    cut in proportion to its pieces, and any slice still over the limit halved."""
    size = max(1, (end - start) * (limit - 1) // max(1, pieces) * 3 // 4)
    todo = [(a, min(a + size, end)) for a in range(start, end, size)]
    out: list[tuple[int, int]] = []
    while todo:
        counts = count([sentence[a:b] for a, b in todo])
        again = []
        for (a, b), n in zip(todo, counts):
            if n + 1 <= limit or b - a == 1:
                out.append((a, b))
            else:
                middle = a + (b - a) // 2
                again += [(a, middle), (middle, b)]
        todo = again
    return [(sentence[a:b], a) for a, b in sorted(out)]
