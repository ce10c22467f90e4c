"""LibreTranslate's file translation: ``POST /translate_file`` (multipart ``file``, ``source`` a
code or ``auto``, ``target``, ``api_key``) answers, once the document is translated,
``{"translatedFileUrl": ".../download_file/<token>.<name>"}``; ``GET /download_file/{filename}``
gives the file. The document is one job, as any other; the gateway keeps, per translated file,

    nmt:api:file:<token>   hash: job (job id), owner (key id), name (the download's file name);
                           it expires with the job's result

The token (192 random bits) makes the URL unguessable; with keys configured the download also
needs the ``api_key`` of the key that uploaded the file, as LibreTranslate asks for one when keys
are required."""
from __future__ import annotations

import base64
import mimetypes
import re
import secrets
from pathlib import PurePosixPath

from fastapi import APIRouter, Request
from fastapi.responses import Response
from starlette.concurrency import run_in_threadpool

from queue_config.names import BINARY_FORMATS, FORMAT_EXTENSIONS, FORMAT_SUFFIXES, KEY_PREFIX
from queue_config.textfiles import DocumentError, decode_document

from .detection import detect
from .errors import ApiError
from .gateway import Gateway
from .libre_routes import libre_admit, libre_pair
from .params import read_params

router = APIRouter(tags=["LibreTranslate"])
MULTIPART_SLACK = 64 * 1024
DETECTED_CHARS = 100_000  # of a document's text, enough to tell its language
MARKUP = frozenset({"html", "xliff"})  # formats whose tags CLD2 skips
_TOKEN = re.compile(r"^[A-Za-z0-9_-]{32}$")


def _record_key(token: str) -> str:
    return f"{KEY_PREFIX}:api:file:{token}"


@router.post("/translate_file")
async def translate_file(request: Request) -> dict:
    """Translate a document in any format the workers read (HTML, XLIFF, SRT, WebVTT, PO, Markdown,
    DOCX, ODT, ODS, ODP, EPUB, PPTX/PPTM, XLSX/XLSM, text) and answer with the URL of the translated
    file. The request waits for the document, at most NMT_API_FILE_TIMEOUT seconds (then 503 with
    Retry-After, and the job is cancelled)."""
    gateway: Gateway = request.app.state.gateway
    cap = gateway.queue.max_document_bytes
    params, files = await read_params(request, max_part_bytes=cap + MULTIPART_SLACK)
    key_id = await libre_admit(request, params)
    upload = files.get("file")
    for name, given in (("file", upload), ("source", params.get("source")), ("target", params.get("target"))):
        if not given or (name != "file" and not isinstance(given, str)):
            raise ApiError(400, f"Invalid request: missing {name} parameter")
    if not upload.filename:
        raise ApiError(400, "Invalid request: empty file")
    filename = PurePosixPath(upload.filename).name
    suffix = PurePosixPath(filename).suffix.lower()
    if suffix not in FORMAT_EXTENSIONS:
        raise ApiError(400, "Invalid request: file format not supported")
    data = await upload.read()
    if len(data) > cap:
        raise ApiError(413, f"Request Entity Too Large: a document may hold at most {cap} bytes (NMT_MAX_DOCUMENT_BYTES)")
    fmt = FORMAT_EXTENSIONS[suffix]
    try:
        content: str | bytes = data if fmt in BINARY_FORMATS else decode_document(data, fmt)
    except DocumentError as exc:
        raise ApiError(400, f"Invalid request: {exc}") from None
    if not (content.strip() if isinstance(content, str) else content):  # a job would only fail: no text
        raise ApiError(400, "Invalid request: empty file")
    pairs = await run_in_threadpool(gateway.fleet.pairs)
    detection = None
    if params["source"] == "auto" and isinstance(content, str):
        detection = await run_in_threadpool(detect, [content[:DETECTED_CHARS]], fmt in MARKUP)
    src, tgt, _ = libre_pair(params["source"], params["target"], pairs, detection)
    stem = re.sub(r"[^A-Za-z0-9._-]", "_", PurePosixPath(filename).stem)[:100] or "document"
    characters = len(content)
    await gateway.reserve(key_id, characters)
    try:
        job_id = await gateway.fleet.submit_document(content, src, tgt, fmt, stem)
        await gateway.fleet.wait([job_id], gateway.settings.file_timeout, request.is_disconnected)
    except BaseException:
        await gateway.refund(key_id, characters)
        raise
    token = secrets.token_urlsafe(24)
    name = f"{stem}.{tgt}{FORMAT_SUFFIXES.get(fmt, '.txt')}"
    await run_in_threadpool(_remember, gateway, token, {"job": job_id, "owner": key_id, "name": name})
    return {"translatedFileUrl": str(request.url_for("libre_download_file", filename=f"{token}.{name}"))}


def _remember(gateway: Gateway, token: str, record: dict) -> None:
    with gateway.fleet.store.redis.pipeline() as pipe:
        pipe.hset(_record_key(token), mapping=record)
        pipe.expire(_record_key(token), gateway.queue.result_expires)
        pipe.execute()


@router.get("/download_file/{filename}", name="libre_download_file")
async def download_file(request: Request, filename: str) -> Response:
    """A translated file, by the name ``/translate_file`` answered with; 404 for a name it did not
    give, for another key's file and for one that has expired (NMT_RESULT_EXPIRES)."""
    gateway: Gateway = request.app.state.gateway
    params, _ = await read_params(request)
    key_id = await libre_admit(request, params)
    token, _, name = filename.partition(".")
    if not _TOKEN.match(token) or not name or "/" in name or name.startswith("."):
        raise ApiError(400, "Invalid filename")
    record = await run_in_threadpool(gateway.fleet.store.redis.hgetall, _record_key(token))
    if not record or record.get("owner") != key_id or record.get("name") != name:
        raise ApiError(404, "File not found")
    result = await gateway.fleet.result(record["job"])
    if result is None:
        raise ApiError(404, "File not found: it has expired")
    fmt = result.get("format") or "txt"
    body = base64.b64decode(result["text"]) if fmt in BINARY_FORMATS else result["text"].encode("utf-8")
    kind = mimetypes.guess_type(name)[0] or "application/octet-stream"
    return Response(body, media_type=kind, headers={"Content-Disposition": f'attachment; filename="{name}"'})
