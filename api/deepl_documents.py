"""DeepL API v2 document translation: ``POST /v2/document`` (multipart upload), then its status at
``/v2/document/{id}`` and the translated file at ``/v2/document/{id}/result``, each asked with the
``document_key`` the upload returned. A document is one job; the gateway keeps, per job,

    nmt:api:document:<job id>   hash: key (SHA-256 of the document key), owner (key id), filename,
                                characters, refunded; it expires with the job's record
"""
from __future__ import annotations

import base64
import hashlib
import hmac
import mimetypes
import secrets
from pathlib import PurePosixPath

from fastapi import APIRouter, Request
from fastapi.responses import Response
from starlette.concurrency import run_in_threadpool

from queue_config.names import BINARY_FORMATS, FORMAT_EXTENSIONS, KEY_PREFIX
from queue_config.textfiles import DocumentError, decode_document

from .deepl_routes import deepl_key
from .errors import ApiError
from .gateway import Gateway
from .glossaries import terms_for
from .languages import resolve_pair
from .params import read_params

router = APIRouter(prefix="/v2", tags=["DeepL API v2 documents"])
# the job's states as DeepL names a document's
STATUS = {"queued": "queued", "running": "translating", "done": "done", "failed": "error", "cancelled": "error"}


def _record_key(job_id: str) -> str:
    return f"{KEY_PREFIX}:api:document:{job_id}"


def _digest(document_key: str) -> str:
    return hashlib.sha256(document_key.encode("utf-8")).hexdigest()


@router.post("/document")
async def upload(request: Request) -> dict:
    """Upload a document (multipart: ``file``, ``target_lang``, optional ``source_lang``,
    ``filename``, ``glossary_id``); the formats are the workers' (HTML, XLIFF, SRT, WebVTT, PO, Markdown, DOCX,
    ODT, ODS, ODP, EPUB, PPTX/PPTM, XLSX/XLSM, text).
    Capped at NMT_MAX_DOCUMENT_BYTES (413)."""
    gateway: Gateway = request.app.state.gateway
    cap = gateway.queue.max_document_bytes
    params, files = await read_params(request, max_part_bytes=cap + 64 * 1024)
    key_id = await gateway.admit(request, deepl_key(request, params))
    upload = files.get("file")
    if upload is None:
        raise ApiError(400, "Invalid file data: a multipart field 'file' is required")
    filename = str(params.get("filename") or upload.filename or "")
    suffix = PurePosixPath(filename).suffix.lower()
    if suffix not in FORMAT_EXTENSIONS:
        raise ApiError(400, f"Invalid file data: the file type {suffix or '(none)'!r} is not supported "
                            f"(supported: {', '.join(sorted(FORMAT_EXTENSIONS))})")
    if params.get("output_format") and f".{str(params['output_format']).lower().lstrip('.')}" != suffix:
        raise ApiError(400, "Value for 'output_format' not supported: documents come back in their own format")
    if str(params.get("formality", "default")) in ("less", "more"):
        raise ApiError(400, "'formality' is not supported for given 'target_lang'.")
    if "target_lang" not in params:
        raise ApiError(400, "Parameter 'target_lang' not specified")
    data = await upload.read()
    if len(data) > cap:
        raise ApiError(413, f"Request Entity Too Large: a document may hold at most {cap} bytes (NMT_MAX_DOCUMENT_BYTES)")
    fmt = FORMAT_EXTENSIONS[suffix]
    try:
        content: str | bytes = data if fmt in BINARY_FORMATS else decode_document(data, fmt)
    except DocumentError as exc:
        raise ApiError(400, f"Invalid file data: {exc}") from None
    if params.get("glossary_ids"):
        raise ApiError(400, "'glossary_ids' is not supported by this server: give one glossary as 'glossary_id'")
    glossary_id = params.get("glossary_id")
    if glossary_id is not None and not params.get("source_lang"):
        raise ApiError(400, "Use of a glossary requires the source_lang parameter to be specified")
    pairs = await run_in_threadpool(gateway.fleet.pairs)
    src, tgt = resolve_pair(params.get("source_lang"), str(params["target_lang"]), pairs)
    terms = () if glossary_id is None else await run_in_threadpool(
        terms_for, gateway.glossaries, key_id, str(glossary_id), src, tgt)
    characters = len(content)
    await gateway.reserve(key_id, characters)
    try:
        job_id = await gateway.fleet.submit_document(content, src, tgt, fmt,
                                                     PurePosixPath(filename).stem[:100] or "document", glossary=terms)
    except BaseException:
        await gateway.refund(key_id, characters)
        raise
    document_key = secrets.token_hex(32)
    await run_in_threadpool(_remember, gateway, job_id, {"key": _digest(document_key), "owner": key_id,
                                                         "filename": PurePosixPath(filename).name,
                                                         "characters": characters})
    return {"document_id": job_id, "document_key": document_key}


def _remember(gateway: Gateway, job_id: str, record: dict) -> None:
    with gateway.fleet.store.redis.pipeline() as pipe:
        pipe.hset(_record_key(job_id), mapping=record)
        pipe.expire(_record_key(job_id), gateway.queue.result_expires)
        pipe.execute()


async def _owned(request: Request, document_id: str) -> tuple[Gateway, str, dict]:
    """The gateway, key id and record of a document the request's key owns and names with its
    document key; ``ApiError`` 404 for any other (no difference is told)."""
    gateway: Gateway = request.app.state.gateway
    params, _ = await read_params(request)
    key_id = await gateway.admit(request, deepl_key(request, params))
    record = await run_in_threadpool(gateway.fleet.store.redis.hgetall, _record_key(document_id[:200]))
    given = params.get("document_key")
    if (not record or record.get("owner") != key_id or not isinstance(given, str)
            or not hmac.compare_digest(_digest(given), record.get("key", ""))):
        raise ApiError(404, "Document not found")
    return gateway, key_id, record


def _get_and_post(path: str):
    def register(endpoint):
        router.add_api_route(path, endpoint, methods=["GET"], operation_id=f"{endpoint.__name__}_get")
        router.add_api_route(path, endpoint, methods=["POST"], operation_id=f"{endpoint.__name__}_post")
        return endpoint
    return register


@_get_and_post("/document/{document_id}")
async def document_status(request: Request, document_id: str) -> dict:
    """``queued``, ``translating``, ``done`` or ``error`` (with ``error_message``)."""
    gateway, key_id, record = await _owned(request, document_id)
    status = await gateway.fleet.status(document_id)
    state = STATUS.get(status.state, "error")
    body: dict = {"document_id": document_id, "status": state}
    if state == "done":
        body["billed_characters"] = int(record["characters"])
        body["seconds_remaining"] = 0
    elif state == "error":
        body["error_message"] = body["message"] = status.error or status.state
        # a document that failed is not billed: its characters are given back once
        if await run_in_threadpool(gateway.fleet.store.redis.hsetnx, _record_key(document_id), "refunded", 1):
            await gateway.refund(key_id, int(record["characters"]))
    return body


@_get_and_post("/document/{document_id}/result")
async def document_result(request: Request, document_id: str) -> Response:
    """The translated file (503 until the document is done)."""
    gateway, _, record = await _owned(request, document_id)
    result = await gateway.fleet.result(document_id)
    if result is None:
        raise ApiError(503, "Document translation is not done", retry_after=5)
    fmt = result.get("format") or "txt"
    body = base64.b64decode(result["text"]) if fmt in BINARY_FORMATS else result["text"].encode("utf-8")
    filename = record.get("filename") or "document"
    kind = mimetypes.guess_type(filename)[0] or "application/octet-stream"
    return Response(body, media_type=kind, headers={"Content-Disposition": f'attachment; filename="{filename}"'})
