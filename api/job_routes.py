"""The gateway's own job API, for documents that take a while: ``POST /v1/jobs`` submits one (with
options, a glossary and an optional ``callback_url`` for a webhook), ``GET /v1/jobs/{id}`` gives
its status and progress, ``GET /v1/jobs/{id}/result`` the translated file (``?format=json``: the
result as the worker stored it, with segments, confidence, flags and alignments) and ``DELETE``
cancels it. A job is seen only by the key that made it. Keys come as ``Authorization: Bearer KEY``."""
from __future__ import annotations

import base64
import json
import mimetypes
import re
import time
from pathlib import PurePosixPath
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse, Response
from starlette.concurrency import run_in_threadpool
from starlette.datastructures import UploadFile

from queue_config.glossary import GlossaryError, Terms, parse_glossary
from queue_config.jobstore import JobStatus
from queue_config.names import BINARY_FORMATS, FORMAT_EXTENSIONS, FORMAT_SUFFIXES, FORMATS
from queue_config.textfiles import DocumentError, decode_document, decode_text

from .callbacks import check_callback
from .errors import ApiError
from .gateway import Gateway
from .glossaries import terms_for
from .job_records import JobRecord, job_view
from .languages import resolve_pair
from .params import read_params

router = APIRouter(prefix="/v1", tags=["Jobs"])
MULTIPART_SLACK = 64 * 1024
KEY_SCHEMES = ("Bearer ", "DeepL-Auth-Key ")


def bearer_key(request: Request) -> str | None:
    header = request.headers.get("authorization", "")
    for scheme in KEY_SCHEMES:
        if header.startswith(scheme):
            return header[len(scheme):].strip()
    return None


async def _document(upload: UploadFile | None, params: dict[str, Any], cap: int) -> tuple[str | bytes, str, str]:
    """(content, format, file name) of the uploaded ``file``, or of a ``text`` parameter."""
    if upload is not None:
        data = await upload.read()
        filename = str(params.get("filename") or upload.filename or "document.txt")
    elif isinstance(params.get("text"), str):
        data, filename = params["text"].encode("utf-8"), str(params.get("filename") or "document.txt")
    else:
        raise ApiError(400, "A job needs a document: a multipart field 'file' (or a 'text' parameter)")
    if len(data) > cap:
        raise ApiError(413, f"Request Entity Too Large: a document may hold at most {cap} bytes "
                            "(NMT_MAX_DOCUMENT_BYTES)")
    fmt = params.get("format")
    if fmt is None:
        suffix = PurePosixPath(filename).suffix.lower()
        if suffix not in FORMAT_EXTENSIONS:
            raise ApiError(400, f"The file type {suffix or '(none)'!r} is not supported (supported: "
                                f"{', '.join(sorted(FORMAT_EXTENSIONS))}); or name it with 'format'")
        fmt = FORMAT_EXTENSIONS[suffix]
    if fmt not in FORMATS:
        raise ApiError(400, f"'format' must be one of {', '.join(FORMATS)}, got {str(fmt)[:40]!r}")
    try:
        content: str | bytes = data if fmt in BINARY_FORMATS else decode_document(data, fmt)
    except DocumentError as exc:
        raise ApiError(400, f"The document cannot be read: {exc}") from None
    if not (content.strip() if isinstance(content, str) else content):  # refused here, never queued to fail
        raise ApiError(400, "Parameter 'text' is empty: a job needs text to translate" if upload is None
                       else "The document is empty: it has no text to translate")
    return content, fmt, PurePosixPath(filename).name[:200]


async def _glossary(gateway: Gateway, key_id: str, params: dict[str, Any], files: dict[str, UploadFile],
                    src: str, tgt: str) -> Terms:
    """A job's terms: a stored glossary (``glossary_id``) or TSV entries (``glossary``, a field or a file)."""
    given = files.get("glossary") or params.get("glossary")
    glossary_id = params.get("glossary_id")
    if given is not None and glossary_id is not None:
        raise ApiError(400, "Give 'glossary' or 'glossary_id', not both")
    if glossary_id is not None:
        return await run_in_threadpool(terms_for, gateway.glossaries, key_id, str(glossary_id), src, tgt)
    if given is None:
        return ()
    raw = (await given.read()) if isinstance(given, UploadFile) else str(given).encode("utf-8")
    try:
        return parse_glossary(decode_text(raw), "glossary")
    except (GlossaryError, DocumentError) as exc:
        raise ApiError(400, f"Invalid glossary: {exc}") from None


def _options(raw: Any) -> dict | None:
    if raw is None or raw == "":
        return None
    if isinstance(raw, str):
        try:
            raw = json.loads(raw)
        except ValueError:
            raise ApiError(400, "'options' must be a JSON object, e.g. {\"beam\": 5}") from None
    if not isinstance(raw, dict):
        raise ApiError(400, "'options' must be a JSON object, e.g. {\"beam\": 5}")
    return raw


@router.post("/jobs", status_code=201)
async def submit(request: Request) -> JSONResponse:
    """Submit a document (multipart ``file``, or ``text`` with ``filename``/``format``) from
    ``source_lang`` (optional) into ``target_lang``, with optional ``options`` (a JSON object of
    decoding options), ``model``, ``glossary`` (TSV entries) or ``glossary_id`` (a ``/v2/glossaries``
    glossary), and ``callback_url`` (a webhook on the job's end; its host must be on NMT_WEBHOOK_ALLOW)."""
    gateway: Gateway = request.app.state.gateway
    cap = gateway.queue.max_document_bytes
    params, files = await read_params(request, max_part_bytes=cap + MULTIPART_SLACK, max_files=2)
    key_id = await gateway.admit(request, bearer_key(request))
    callback_url = params.get("callback_url") or ""
    if callback_url:
        check_callback(str(callback_url), gateway.outbox.allow)
    if not isinstance(params.get("target_lang"), str):
        raise ApiError(400, "Parameter 'target_lang' not specified")
    content, fmt, filename = await _document(files.get("file"), params, cap)
    pairs = await run_in_threadpool(gateway.fleet.pairs)
    src, tgt = resolve_pair(params.get("source_lang"), params["target_lang"], pairs)
    terms = await _glossary(gateway, key_id, params, files, src, tgt)
    options = _options(params.get("options"))
    model = params.get("model")
    characters = len(content)
    await gateway.reserve(key_id, characters)
    try:
        job_id = await gateway.fleet.submit_document(content, src, tgt, fmt,
                                                     PurePosixPath(filename).stem[:100] or "document",
                                                     glossary=terms, options=options,
                                                     model=str(model) if model is not None else None)
    except BaseException:
        await gateway.refund(key_id, characters)
        raise
    record = JobRecord(job_id, key_id, filename, fmt, src, tgt, characters, round(time.time(), 3), str(callback_url))
    await run_in_threadpool(gateway.records.remember, record)
    view = job_view(record, JobStatus(job_id, "queued", 0, 0))
    return JSONResponse(view, status_code=201, headers={"Location": f"/v1/jobs/{job_id}"})


async def _owned(request: Request, job_id: str) -> tuple[Gateway, JobRecord, JobStatus]:
    """The gateway, record and status of a job the request's key made; ``ApiError`` 404 for any
    other. A job that failed or was cancelled is refunded here (once)."""
    gateway: Gateway = request.app.state.gateway
    key_id = await gateway.admit(request, bearer_key(request))
    record = await run_in_threadpool(gateway.records.owned, job_id, key_id)
    if record is None:
        raise ApiError(404, "Job not found")
    status = await gateway.fleet.status(job_id)
    await run_in_threadpool(gateway.records.refund_unfinished, record, status, gateway.limits)
    return gateway, record, status


@router.get("/jobs/{job_id}")
async def job_status(request: Request, job_id: str) -> dict:
    """``status`` (queued, running, done, failed, cancelled), ``progress`` (segments done of
    total; total is 0 until a worker has read the document) and ``error``."""
    _, record, status = await _owned(request, job_id)
    return job_view(record, status)


@router.get("/jobs/{job_id}/result")
async def job_result(request: Request, job_id: str, format: str = "file") -> Response:
    """The translated file, or with ``?format=json`` the stored result (``segments`` with
    ``confidence``, ``flags``, ``alignment`` and word spans, ``provenance``, ``warnings``).
    409 while the job has not ended, or when it ended without a result."""
    if format not in ("file", "json"):
        raise ApiError(400, "'format' must be 'file' or 'json'")
    gateway, record, status = await _owned(request, job_id)
    if status.state != "done":
        raise ApiError(409, f"The job is {status.state}" + (f": {status.error}" if status.error else "") +
                       ("" if status.finished else "; its result comes when it is done"))
    result = await gateway.fleet.result(job_id)
    if result is None:
        raise ApiError(409, "The job is done but its result has expired (NMT_RESULT_EXPIRES)")
    if format == "json":
        return JSONResponse(result)
    fmt = result.get("format") or record.format
    body = base64.b64decode(result["text"]) if fmt in BINARY_FORMATS else result["text"].encode("utf-8")
    stem = re.sub(r"[^A-Za-z0-9._-]", "_", PurePosixPath(record.filename).stem)[:100] or "document"
    filename = f"{stem}.{record.tgt}{FORMAT_SUFFIXES.get(fmt, '.txt')}"
    kind = mimetypes.guess_type(filename)[0] or "application/octet-stream"
    return Response(body, media_type=kind, headers={"Content-Disposition": f'attachment; filename="{filename}"'})


@router.delete("/jobs/{job_id}")
async def cancel(request: Request, job_id: str) -> dict:
    """Cancel a job that has not ended (workers stop at their next checkpoint); 409 for one that has."""
    gateway, record, status = await _owned(request, job_id)
    if status.finished or not await gateway.fleet.cancel(job_id):
        status = await gateway.fleet.status(job_id)
        raise ApiError(409, f"The job has already ended: {status.state}")
    status = await gateway.fleet.status(job_id)
    await run_in_threadpool(gateway.records.refund_unfinished, record, status, gateway.limits)
    return job_view(record, status)
