"""Document jobs as plain functions; the Celery tasks in ``worker.tasks`` only wrap these.

A document task validates the request, reads the text, and either translates it in place (small
documents) or stores a plan and fans out chunk tasks that any worker may take; the worker that
finishes the last chunk assembles the document. Results are stored once (SET NX): a redelivered
job or chunk returns what is already there.
"""
from __future__ import annotations

import base64
import json
import logging
import socket
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from queue_config.connection import redis_client
from queue_config.jobstore import JobStore
from queue_config.messages import JobOptions, JobRequest
from queue_config.names import BINARY_FORMATS, FORMAT_SUFFIXES
from queue_config.outputs import write_translation
from queue_config.settings import QueueSettings
from queue_config.textfiles import DocumentError, read_text_file
from worker.cache_store import RedisStore
from worker.engine.bundle import MANIFEST, BundleError, manifest_pairs, resolve_bundle_path
from worker.engine.cache import SegmentCache
from worker.engine.search import SearchError, SearchOptions
from worker.engine.settings import EngineSettings, worker_child_settings
from worker.engine.translator import Translator, assemble_document
from worker.text.layout import Layout, split_document
from worker.text.segment import SegmentResult

from . import metrics
from .text.glossary import Glossary
from .text.language import DocumentLanguageError, refuse_foreign_text
from .text.pipeline import TextOptions

log = logging.getLogger(__name__)
SLICE = 64  # sentences translated between progress updates and cancellation checks


class JobError(ValueError):
    """The job cannot be done as asked (bad input, unknown pair...): it fails, without retries."""


class InputError(JobError):
    """The job's document itself cannot be read: corrupt, not of its format, or with no text. The
    job store records it (``INPUT_FAILURE``), so the gateway answers the client 400, not 500."""


@dataclass(frozen=True)
class ServedModel:
    name: str  # the bundle's manifest name, e.g. "en-de", "multi30k-en-de"
    pairs: tuple[str, ...]  # ("en-de",); a multilingual model's every pair, its default first
    path: Path

    @property
    def pair(self) -> str:
        return self.pairs[0]


@dataclass(frozen=True)
class Completed:
    """A translated job, its files written (NMT_OUTPUT_DIR), whose result is ready to be stored."""

    request: JobRequest
    payload: dict[str, Any]  # the job's result (JobResult JSON)
    segments: int
    tokens: int  # target words, for the metrics
    provenance: dict[str, Any]


def served_models(settings: QueueSettings) -> dict[str, ServedModel]:
    """``{name: ServedModel}`` for each bundle in NMT_BUNDLES, from its manifest (JSON only: no
    sessions, safe before fork). Per pair, the first bundle listed is that pair's default."""
    models: dict[str, ServedModel] = {}
    for raw in settings.bundle_paths:
        path = resolve_bundle_path(raw)
        try:
            manifest = json.loads((path / MANIFEST).read_text(encoding="utf-8"))
            pairs = manifest_pairs(manifest)
            name = str(manifest.get("name") or path.name)
        except (OSError, ValueError, KeyError) as exc:
            raise BundleError(f"NMT_BUNDLES: cannot read the bundle at {path}: {exc}") from None
        if name in models:
            raise BundleError(f"NMT_BUNDLES: two bundles are named {name!r} ({models[name].path} and {path})")
        models[name] = ServedModel(name, pairs, path)
    return models


@dataclass
class Runtime:
    """What a worker child holds: settings, the job store, and translators loaded on first use."""

    settings: QueueSettings
    store: JobStore
    models: dict[str, ServedModel]
    pool_children: int = 1  # worker processes sharing this host's cores
    translators: dict[str, Translator] = field(default_factory=dict)
    cache: SegmentCache | None = field(default=None, init=False)  # shared by this child's translators

    def model_for(self, src: str, tgt: str, model: str | None = None) -> ServedModel:
        """The bundle a job asked for (by name), or its pair's default; JobError if not served."""
        pair = f"{src}-{tgt}"
        own = [m for m in self.models.values() if pair in m.pairs]
        if not own:
            served = ", ".join(sorted({p for m in self.models.values() for p in m.pairs})) or "none"
            raise JobError(f"unknown language pair {pair}: this worker serves {served}")
        if model is None:
            return own[0]
        if model not in self.models or pair not in self.models[model].pairs:
            raise JobError(f"unknown model {model!r} for {pair}: this worker ({socket.gethostname()}) does not have "
                           f"that bundle, it serves {', '.join(m.name for m in own)}; refused before any of the job "
                           "was translated" + self._elsewhere(model, pair))
        return self.models[model]

    def _elsewhere(self, model: str, pair: str) -> str:
        """Whether other workers announced ``model`` for ``pair`` (a fleet whose hosts hold different
        bundles but consume the same pair's queue), for the refusal's message."""
        try:
            announced = pair in self.store.served_models().get(model, "").split(",")
        except Exception:  # noqa: BLE001 - only the message depends on it
            return ""
        return (" (other workers announce it: a job naming a model only some of the pair's workers have can "
                "reach any of them; give every worker of the pair that bundle, or submit without --model)"
                if announced else " (no worker announces it)")

    def translator(self, src: str, tgt: str, model: str | None = None) -> Translator:
        served = self.model_for(src, tgt, model)
        if served.name not in self.translators:
            s = self.settings
            if self.cache is None and (s.cache_size or s.cache_redis):
                shared = RedisStore(redis_client(s, s.broker_url)) if s.cache_redis else None
                self.cache = SegmentCache(s.cache_size, s.cache_ttl, shared)
            engine = worker_child_settings(EngineSettings(
                provider=s.provider, intra_op_threads=s.threads, max_batch_tokens=s.max_batch_tokens,
                batch_workers=s.batch_workers, shortlist=s.shortlist, segment_seconds=s.segment_seconds),
                self.pool_children)
            log.info("loading %s: %d ONNX Runtime thread(s) x %d batch worker(s) in this child (%s, %d children)",
                     served.name, engine.intra_op_threads, engine.batch_workers,
                     f"NMT_THREADS={s.threads}" if s.threads else "derived from the cores", self.pool_children)
            self.translators[served.name] = Translator(served.path, engine, self.cache)
        return self.translators[served.name].for_target(tgt)


def search_options(translator: Translator, options: JobOptions) -> SearchOptions:
    changes = {k: v for k, v in vars(options).items()
               if k not in ("attention", "refuse_foreign", "translate_sheet_names")}
    try:
        return translator.search_options(**changes)
    except SearchError as exc:  # e.g. n_best above the bundle's default beam
        name = translator.bundle.manifest.get("name")
        raise JobError(f"options cannot be used with the model {name!r}: {exc}") from None


def text_options(request: JobRequest) -> TextOptions:
    """What runs around decoding for this job: the defaults, with the job's glossary."""
    return TextOptions(glossary=Glossary(request.glossary) if request.glossary else None)


def read_document(request: JobRequest, settings: QueueSettings, binary: bool = False) -> str | bytes:
    """The job's text (``binary``: the file's bytes, sent base64), from the message or from shared
    storage; JobError on any problem."""
    if request.text is not None and binary:
        data = base64.b64decode(request.text)  # checked to be base64 when the message was read
        if len(data) > settings.max_document_bytes:
            raise JobError(f"document of {len(data)} bytes exceeds the limit of {settings.max_document_bytes} bytes")
        return data
    if request.text is not None:
        size = len(request.text.encode("utf-8"))
        if size > settings.max_document_bytes:
            raise JobError(f"document of {size} bytes exceeds the limit of {settings.max_document_bytes} bytes")
        return request.text
    path = Path(request.path)  # type: ignore[arg-type]
    if not settings.input_root:
        raise JobError("jobs by path are off on this worker: it reads files only under NMT_INPUT_ROOT, "
                       "which is not set; send the text instead")
    root = Path(settings.input_root).resolve()
    path = (root / path).resolve() if not path.is_absolute() else path.resolve()
    if not path.is_relative_to(root):  # symbolic links are followed first: they cannot lead out
        raise JobError(f"path {request.path} is outside NMT_INPUT_ROOT, the directory this worker reads from")
    shown = request.path  # errors show the path as the job gave it, never the worker's root
    try:
        size = path.stat().st_size
    except FileNotFoundError:
        raise JobError(f"input file not found: {shown}") from None
    except OSError as exc:
        raise JobError(f"{shown}: cannot read: {exc.strerror or exc}") from None
    if not path.is_file():
        raise JobError(f"input path is not a file: {shown}")
    if size > settings.max_document_bytes:
        raise JobError(f"{shown}: {size} bytes exceeds the limit of {settings.max_document_bytes} bytes")
    try:
        return path.read_bytes() if binary else read_text_file(path)
    except OSError as exc:
        raise JobError(f"{shown}: cannot read: {exc.strerror or exc}") from None
    except DocumentError as exc:
        raise InputError(f"{shown}: {exc}") from None


def checked_layout(request: JobRequest, text: str) -> Layout:
    """A plain-text job's sentences: ``JobError`` if it has none, or if the job refuses foreign text
    and this is another language."""
    layout = split_document(text, request.src)
    if not layout.sentences:
        raise InputError("document is empty: it has no text to translate")
    if request.options.refuse_foreign is not None:
        try:
            refuse_foreign_text(text, [s.text for s in layout.sentences], request.src, request.options.refuse_foreign)
        except DocumentLanguageError as exc:
            raise JobError(str(exc)) from None
    return layout


def run_document(runtime: Runtime, request: JobRequest,
                 send_chunks: Callable[[str, list[int]], None]) -> dict[str, Any]:
    """Translate a document job, or plan it and fan out chunks: ``send_chunks(job id, indices)``
    sends the chunks not yet stored (a redelivered document sends only those), each marked queued
    with its message first (``worker.sweep`` sends one again if the broker loses it). Returns a small summary."""
    store, settings = runtime.store, runtime.settings
    translator = runtime.translator(request.src, request.tgt, request.model)
    fmt = job_format(request)
    text = read_document(request, settings, binary=fmt in BINARY_FORMATS)
    if fmt != "txt":
        return run_formatted(runtime, request, translator, text, fmt)
    layout = checked_layout(request, text)
    total = len(layout.sentences)
    store.start(request.job_id, total)
    options = search_options(translator, request.options)
    chunks = (total + settings.chunk_sentences - 1) // settings.chunk_sentences
    if chunks > 1:
        store.put_plan(request.job_id, {"request": request.to_json(), "layout": layout.to_json(), "chunks": chunks})
        send_chunks(request.job_id, [index for index in range(chunks) if not store.chunk_done(request.job_id, index)])
        return {"job_id": request.job_id, "state": "running", "chunks": chunks}
    started = time.perf_counter()
    results: list[SegmentResult] = []
    sentences = [s.text for s in layout.sentences]
    around = text_options(request)
    for start in range(0, total, SLICE):
        if store.is_cancelled(request.job_id):
            return {"job_id": request.job_id, "state": "cancelled"}
        results += translator.translate_sentences(sentences[start:start + SLICE], options, request.options.attention,
                                                  text_options=around)
        store.set_progress(request.job_id, len(results))
    provenance = translator.provenance(options, time.perf_counter() - started, total)
    return store_completed(runtime, plain_completed(runtime, request, layout, results, provenance))


def run_batch(runtime: Runtime, requests: list[JobRequest],
              send_chunks: Callable[[JobRequest], Callable[[str, list[int]], None]]
              ) -> dict[str, Completed | dict[str, Any] | Exception]:
    """Translate several small plain-text jobs with their sentences decoded together: one call of
    the engine per model, options and glossary, under its token budget. Each job is checked and
    finished on its own; the outcome per job id is the job ``Completed`` (files written, its result
    for the caller to store with the others') or the exception that failed it. A job too big for
    one chunk is run as a document of its own (``run_document``): its outcome is its summary."""
    settings = runtime.settings
    outcomes: dict[str, Completed | dict[str, Any] | Exception] = {}
    groups: dict[tuple, list[tuple[JobRequest, Layout]]] = {}
    totals: dict[str, int] = {}
    for request in requests:
        try:
            translator = runtime.translator(request.src, request.tgt, request.model)
            layout = checked_layout(request, read_document(request, settings))
            if len(layout.sentences) > settings.chunk_sentences:
                outcomes[request.job_id] = run_document(runtime, request, send_chunks(request))
                continue
            options = search_options(translator, request.options)
            key = (request.src, request.tgt, request.model, options, request.options.attention, request.glossary)
            groups.setdefault(key, []).append((request, layout))
            totals[request.job_id] = len(layout.sentences)
        except Exception as exc:  # noqa: BLE001 - this job fails; the others go on
            outcomes[request.job_id] = exc
    runtime.store.start_many(totals)
    for (src, tgt, model, options, attention, _), members in groups.items():
        translator = runtime.translator(src, tgt, model)
        sentences = [s.text for _, layout in members for s in layout.sentences]
        started = time.perf_counter()
        try:
            results = translator.translate_sentences(sentences, options, attention, text_options=text_options(members[0][0]))
        except Exception as exc:  # noqa: BLE001
            outcomes.update((request.job_id, exc) for request, _ in members)
            continue
        seconds = time.perf_counter() - started
        at = 0
        for request, layout in members:
            own = results[at:at + len(layout.sentences)]
            at += len(own)
            provenance = translator.provenance(options, seconds * len(own) / len(sentences), len(own))
            provenance["timings"] = provenance["timings"] | {"batched_jobs": len(members)}
            try:
                outcomes[request.job_id] = plain_completed(runtime, request, layout, own, provenance)
            except Exception as exc:  # noqa: BLE001
                outcomes[request.job_id] = exc
    return outcomes


def job_format(request: JobRequest) -> str:
    """The file format of a job: as it names it, else its path's extension, else plain text."""
    if request.format is not None:
        return request.format
    if request.path is not None:
        from .formats import format_of
        return format_of(request.path)
    return "txt"


def run_formatted(runtime: Runtime, request: JobRequest, translator: Translator, text: str | bytes,
                  fmt: str) -> dict[str, Any]:
    """A job in a file format (``worker.formats``), translated unit by unit in this task (format
    jobs are not chunked). The result's ``text`` is the translated file (base64 for a binary
    format); ``units`` say where each translation went."""
    from worker.engine.forced import segment_links

    from .formats import FormatError, parse, translate_parsed

    store = runtime.store
    try:
        parsed = parse(fmt, text, (request.src, request.tgt),
                       translate_sheet_names=request.options.translate_sheet_names)
    except FormatError as exc:
        raise InputError(f"{request.path or request.name}: {exc}") from None
    store.start(request.job_id, len(parsed.units))
    options = search_options(translator, request.options)
    around = text_options(request)
    layouts = [split_document(unit.text, request.src) for unit in parsed.units]
    started = time.perf_counter()
    results = []
    for start in range(0, len(layouts), SLICE):
        if store.is_cancelled(request.job_id):
            return {"job_id": request.job_id, "state": "cancelled"}
        results += translator.translate_layouts(layouts[start:start + SLICE], options, request.options.attention,
                                                text_options=around)
        store.set_progress(request.job_id, len(results))
    rendered, record = translate_parsed(parsed, results, lambda segments: segment_links(translator, segments))
    provenance = translator.provenance(options, time.perf_counter() - started, len(record["segments"])) | {"format": fmt}
    if isinstance(rendered, bytes):
        rendered = base64.b64encode(rendered).decode("ascii")
    payload = {"job_id": request.job_id, "text": rendered, "name": request.name, "format": fmt, **record,
               "provenance": provenance | {"job_id": request.job_id}}
    write_outputs(runtime, request, payload, FORMAT_SUFFIXES[fmt])
    tokens = sum(len(segment["translation"].split()) for segment in record["segments"])
    return store_completed(runtime, Completed(request, payload, len(record["segments"]), tokens, provenance))


def run_chunk(runtime: Runtime, job_id: str, index: int, plan: dict[str, Any]) -> dict[str, Any]:
    """Translate chunk ``index`` of the job's stored ``plan`` (the caller has checked that the plan
    has that chunk); the last chunk to finish assembles the document."""
    store, settings = runtime.store, runtime.settings
    if store.is_cancelled(job_id):
        return {"job_id": job_id, "chunk": index, "state": "cancelled"}
    request = JobRequest.from_json(plan["request"])
    layout = Layout.from_json(plan["layout"])
    finished = None
    if not store.chunk_done(job_id, index):
        translator = runtime.translator(request.src, request.tgt, request.model)
        size = settings.chunk_sentences
        sentences = [s.text for s in layout.sentences[index * size:(index + 1) * size]]
        started = time.perf_counter()
        results = translator.translate_sentences(sentences, search_options(translator, request.options),
                                                 request.options.attention, text_options=text_options(request))
        finished = store.put_chunk(job_id, index, [r.to_json() for r in results], time.perf_counter() - started)
    if finished is None:
        finished = store.chunks_finished(job_id)
    if finished < plan["chunks"] or store.result(job_id) is not None:
        return {"job_id": job_id, "chunk": index, "state": "running"}
    # (last chunk) assemble: every chunk result is stored; put_result is first-writer-wins.
    translator = runtime.translator(request.src, request.tgt, request.model)
    results = [SegmentResult.from_json(s) for chunk in store.chunks(job_id, plan["chunks"]) for s in chunk]
    options = search_options(translator, request.options)
    provenance = translator.provenance(options, store.chunk_seconds(job_id), len(results)) | {"chunks": plan["chunks"]}
    return store_completed(runtime, plain_completed(runtime, request, layout, results, provenance))


def plain_completed(runtime: Runtime, request: JobRequest, layout: Layout, results: list[SegmentResult],
                    provenance: dict[str, Any]) -> Completed:
    """A plain-text job's document assembled from its segment results, its files written."""
    if runtime.cache is not None:
        provenance = provenance | {"timings": provenance["timings"] | {"cache_hits": sum(r.cached for r in results)}}
    document = assemble_document(layout, results, provenance | {"job_id": request.job_id})
    payload = document.to_json() | {"job_id": request.job_id, "text": document.translation, "name": request.name}
    write_outputs(runtime, request, payload, ".txt")
    tokens = sum(len(r.translation.split()) for r in results)
    return Completed(request, payload, len(results), tokens, provenance)


def write_outputs(runtime: Runtime, request: JobRequest, payload: dict[str, Any], suffix: str) -> None:
    """The job's files, if NMT_OUTPUT_DIR is set: written before the job is stored, so a job is
    never "done" without its files."""
    if not runtime.settings.output_dir:
        return
    final = runtime.store.result(request.job_id) or payload  # a redelivery writes what is stored
    try:
        file = base64.b64decode(final["text"]) if final.get("format") in BINARY_FORMATS else final["text"]
        write_translation(Path(runtime.settings.output_dir) / request.job_id, request.name, request.tgt,
                          file, final, suffix)
    except OSError as exc:
        raise JobError(f"could not write the translation to NMT_OUTPUT_DIR: {exc.strerror or exc}") from None


def store_completed(runtime: Runtime, done: Completed) -> dict[str, Any]:
    """Store the job's result once; its summary."""
    return reported(done, runtime.store.put_result(done.request.job_id, done.payload))


def reported(done: Completed, stored: bool) -> dict[str, Any]:
    """Count (once: ``stored`` by this delivery) and log a job whose result is in the store; its summary."""
    request, provenance = done.request, done.provenance
    timings = provenance["timings"]
    if stored:  # counted once, however often the job was delivered
        metrics.record_job(f"{request.src}-{request.tgt}", str(provenance.get("bundle")), str(provenance.get("provider")),
                           done.segments, done.tokens, timings["translate_seconds"])
    log.info("job %s done: %s-%s, model %s, %d segments, %.2f s, %s%s", request.job_id, request.src, request.tgt,
             provenance.get("bundle"), done.segments, timings["translate_seconds"], provenance.get("provider"),
             "" if stored else " (a result was already stored: kept it)")
    return {"job_id": request.job_id, "state": "done", "segments": done.segments, "stored": stored}
