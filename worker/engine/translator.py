"""The torch-free translation engine: bundle + ONNX Runtime + beam search -> typed results.

Sentences are encoded with the bundle's SentencePiece model, packed into batches by a token
budget, decoded, and returned in input order with scores, word alignments and provenance.
"""
from __future__ import annotations

import hashlib
import json
import time
import unicodedata
from collections import defaultdict
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np
import sentencepiece as spm

from worker.text.casing import vocabulary_capitals
from worker.text.layout import Layout, split_document
from worker.text.masking import STAND_INS
from worker.text.pipeline import Prepared, TextOptions, prepare, restore
from worker.text.quality import DecodedChunk, assess, decoder_facts, model_for
from worker.text.segment import WORD_MARKER, Alignment, DocumentResult, SegmentResult, word_at, word_spans

from .alignment import align
from .bundle import SHORTLIST, Bundle, BundleError, load_bundle
from .cache import SegmentCache
from .ort_model import OrtStepModel
from .search import Hypothesis, SearchOptions, search_in_batches
from .settings import EngineSettings

NO_CONTENT = "sentence has no translatable content (no subword tokens): left untranslated"
# Characters with no visible form (control, format, unassigned, separators): SentencePiece drops
# most of them and maps the rest to unk, so they give the decoder nothing to translate.
_INVISIBLE = {"Cc", "Cf", "Cs", "Cn", "Zs", "Zl", "Zp"}


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
        self.model = OrtStepModel.from_bundle(self.bundle, settings.provider, settings.intra_op_threads,
                                              shortlist=wanted)
        self.shortlist = self.model.shortlist is not None  # decoding onto the lexical shortlist
        self.source_sp = _load_sentencepiece(self.bundle, "source")
        self.target_sp = _load_sentencepiece(self.bundle, "target")
        defaults = self.bundle.manifest.get("decoding_defaults", {})
        self.default_options = SearchOptions(**{k: v for k, v in defaults.items() if k in SearchOptions.__dataclass_fields__})
        self.confidence_model = model_for(self.bundle.manifest)
        # Words that mask verbatim spans: the bundle's own (bench/stand_ins.py), else the default list.
        self.stand_ins = tuple(self.bundle.manifest.get("stand_ins") or STAND_INS)
        # Words an ALL-CAPS or Title Case sentence keeps capitalised in sentence case ("I", names).
        self.capitalised = vocabulary_capitals([(self.source_sp.id_to_piece(i), self.source_sp.get_score(i))
                                                for i in range(self.source_sp.get_piece_size())])
        # The manifest's settings (stand-ins, confidence model, defaults) shape results but not the
        # signature, which names the model files: cached results are keyed by both.
        self.manifest_digest = hashlib.sha256(json.dumps(self.bundle.manifest, sort_keys=True).encode()).hexdigest()
        self.load_seconds = time.perf_counter() - started

    @property
    def provider(self) -> str:
        return self.model.provider

    def translate_sentences(self, sentences: Sequence[str], options: SearchOptions | None = None,
                            with_attention: bool = False,
                            progress: Callable[[int], None] | None = None,
                            text_options: TextOptions | None = None) -> list[SegmentResult]:
        """Translate stripped sentences; word spans are offsets within each sentence and its translation.
        ``progress(n)``: called as each batch of n decoder inputs (sentences, or parts of over-long
        ones) finishes, and once with the number of cache hits. ``text_options``: span protection and
        case handling around decoding (default: both on). With a cache, each distinct sentence not
        in it is translated once; its repeats and the cache's hits come back ``cached``."""
        options = (options or self.default_options).validate()
        text_options = text_options or TextOptions()
        if self.cache is None:
            return self._translate(sentences, options, with_attention, progress, text_options)[0]
        context = self.cache.context(
            bundle=self.bundle.signature, manifest=self.manifest_digest, search=asdict(options), attention=with_attention,
            shortlist=self.shortlist,
            max_sentence_tokens=self.settings.max_sentence_tokens,
            text={"protect_spans": text_options.protect_spans, "restore_case": text_options.restore_case,
                  "check_language": text_options.check_language, "keep_names": text_options.keep_names,
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
        """Each sentence's result, and whether it went through the decoder."""
        prepared = [prepare(sentence, text_options, self.bundle.source_language, self.stand_ins,
                            self.capitalised) for sentence in sentences]
        decoded = iter(self._decode([p.text for p in prepared if p.decode], options, with_attention, progress))
        return ([assess(restore(p, next(decoded) if p.decode else _undecoded(p)), p, self.confidence_model)
                 for p in prepared], [p.decode for p in prepared])

    def _decode(self, sentences: Sequence[str], options: SearchOptions, with_attention: bool,
                progress: Callable[[int], None] | None) -> list[SegmentResult]:
        """The model's translations of ``sentences``, as they are."""
        units, warnings = self._units(sentences)
        hypotheses = search_in_batches(self.model, [u.ids for u in units], options,
                                       self.settings.max_batch_sentences, self.settings.max_batch_tokens,
                                       self.settings.batch_workers, progress)
        by_segment: dict[int, list[tuple[_SourceChunk, list[Hypothesis]]]] = defaultdict(list)
        for unit, hyps in zip(units, hypotheses):
            by_segment[unit.segment].append((unit, hyps))
        return [self._segment(sentence, by_segment[index], warnings.get(index, ()), with_attention)
                for index, sentence in enumerate(sentences)]

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

    def provenance(self, options: SearchOptions, seconds: float, sentences: int) -> dict[str, Any]:
        return {
            "bundle": self.bundle.manifest.get("name"),
            "signature": self.bundle.signature,
            "source_language": self.bundle.source_language,
            "target_language": self.bundle.target_language,
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
        for index, sentence in enumerate(sentences):
            pieces = self.source_sp.encode(sentence, out_type=str)
            if _contentless(pieces):
                warnings[index] = (NO_CONTENT,)
                continue
            if len(pieces) + 1 <= limit:
                units.append(self._unit(index, sentence, 0, pieces))
                continue
            chunks = _word_chunks(sentence, lambda t: len(self.source_sp.encode(t)) + 1, limit)
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
                 with_attention: bool) -> SegmentResult:
        """One sentence's result from its units' hypotheses (none: nothing to translate). The
        translation is the units' texts joined with single spaces, empty ones skipped."""
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
        n_best = ()
        if len(units) == 1 and len(units[0][1]) > 1:
            n_best = tuple((self.target_sp.decode(list(h.tokens)), h.score) for h in units[0][1])
        score = sum(best.score for best in bests) / len(bests)
        facts = decoder_facts([DecodedChunk(unit.pieces, unit.ids[:-1], pieces, best.token_log_probs, best.attention,
                                    unit.start, unit.text)
                               for (unit, _), best, pieces in zip(units, bests, target_pieces)])
        return SegmentResult(sentence, translation, score, alignment, n_best, attention, warnings, facts=facts)


def _undecoded(prepared: Prepared) -> SegmentResult:
    """The stand-in engine result for a sentence that is not decoded (``restore`` fills it)."""
    return SegmentResult(prepared.source, "", 0.0, Alignment((), (), ()))


def _load_sentencepiece(bundle: Bundle, side: str) -> spm.SentencePieceProcessor:
    """side: 'source' or 'target'. A model file that does not parse is a bundle error (its sha256
    can match a manifest written from an already broken file)."""
    path = bundle.vocab_path(side)
    try:
        return spm.SentencePieceProcessor(model_file=str(path))
    except (RuntimeError, OSError) as exc:
        raise BundleError(f"bundle {bundle.path}: cannot load SentencePiece model {path.name}: {exc}") from None


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


def _word_chunks(sentence: str, cost, limit: int) -> list[tuple[str, int]]:
    """Split at whitespace into (chunk, start) whose ``cost`` stays within ``limit`` where possible;
    a single word over the limit is cut into character pieces."""
    chunks: list[tuple[str, int]] = []
    current_start, current_end = None, None
    for start, end in word_spans(sentence):
        if current_start is not None and cost(sentence[current_start:end]) <= limit:
            current_end = end
            continue
        if current_start is not None:
            chunks.append((sentence[current_start:current_end], current_start))
        current_start, current_end = start, end
        while cost(sentence[current_start:current_end]) > limit and current_end - current_start > 1:
            cut = current_start + max(1, (current_end - current_start) // 2)
            while cut > current_start + 1 and cost(sentence[current_start:cut]) > limit:
                cut = current_start + max(1, (cut - current_start) // 2)
            chunks.append((sentence[current_start:cut], current_start))
            current_start = cut
    if current_start is not None:
        chunks.append((sentence[current_start:current_end], current_start))
    return chunks
