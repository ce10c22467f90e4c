"""DeepL API v2 glossaries: ``/v2/glossaries`` (create from TSV or CSV entries, list, get, entries,
delete) and ``/v2/glossary-language-pairs``, each key seeing only its own (``api.glossaries``).
A glossary is used by passing its id as ``glossary_id`` to ``/v2/translate`` or ``/v2/document``."""
from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import PlainTextResponse, Response
from starlette.concurrency import run_in_threadpool

from queue_config.glossary import GlossaryError

from .deepl_routes import deepl_key
from .errors import ApiError
from .gateway import Gateway
from .glossaries import ENTRY_FORMATS, MAX_NAME, GlossaryStore, parse_entries
from .languages import fleet_code
from .params import read_params

router = APIRouter(prefix="/v2", tags=["DeepL API v2 glossaries"])
TSV = "text/tab-separated-values"


async def _admitted(request: Request) -> tuple[Gateway, str, dict]:
    gateway: Gateway = request.app.state.gateway
    params, _ = await read_params(request, max_part_bytes=gateway.settings.max_glossary_bytes)
    key_id = await gateway.admit(request, deepl_key(request, params))
    return gateway, key_id, params


def _text(params: dict, name: str) -> str:
    value = params.get(name)
    if not isinstance(value, str) or not value.strip():
        raise ApiError(400, f"Parameter '{name}' not specified")
    return value


@router.post("/glossaries", status_code=201)
async def create(request: Request) -> dict:
    """Create a glossary: ``name``, ``source_lang``, ``target_lang``, ``entries`` and
    ``entries_format`` (``tsv``, the default, or ``csv``); JSON or form-encoded."""
    gateway, key_id, params = await _admitted(request)
    name = _text(params, "name").strip()
    if len(name) > MAX_NAME:
        raise ApiError(400, f"Value for 'name' too long: at most {MAX_NAME} characters")
    src, tgt = fleet_code(_text(params, "source_lang")), fleet_code(_text(params, "target_lang"))
    entries_format = str(params.get("entries_format") or "tsv").lower()
    if entries_format not in ENTRY_FORMATS:
        raise ApiError(400, f"Value for 'entries_format' not supported: {', '.join(ENTRY_FORMATS)}")
    pairs = await run_in_threadpool(gateway.fleet.pairs)
    if pairs and (src, tgt) not in pairs:
        raise ApiError(400, f"Unsupported glossary source and target language pair {src}-{tgt} (served: "
                            f"{', '.join(f'{s}-{t}' for s, t in sorted(pairs))})")
    store: GlossaryStore = gateway.glossaries
    if await run_in_threadpool(store.count, key_id) >= gateway.settings.max_glossaries:
        raise ApiError(456, f"This key holds {gateway.settings.max_glossaries} glossaries, the most it may "
                            "(NMT_API_MAX_GLOSSARIES): delete one first")
    try:
        terms = parse_entries(_text(params, "entries"), entries_format, src, tgt)
    except GlossaryError as exc:
        raise ApiError(400, f"Invalid glossary entries provided: {exc}") from None
    glossary = await run_in_threadpool(store.create, key_id, name, src, tgt, terms)
    return glossary.info()


@router.get("/glossaries")
async def list_glossaries(request: Request) -> dict:
    gateway, key_id, _ = await _admitted(request)
    return {"glossaries": [g.info() for g in await run_in_threadpool(gateway.glossaries.list, key_id)]}


async def _glossary(request: Request, glossary_id: str):
    gateway, key_id, _ = await _admitted(request)
    glossary = await run_in_threadpool(gateway.glossaries.get, key_id, glossary_id)
    if glossary is None:
        raise ApiError(404, "Glossary not found")
    return glossary


@router.get("/glossaries/{glossary_id}")
async def get_glossary(request: Request, glossary_id: str) -> dict:
    return (await _glossary(request, glossary_id)).info()


@router.get("/glossaries/{glossary_id}/entries", response_class=PlainTextResponse,
            responses={200: {"content": {TSV: {}}}})
async def entries(request: Request, glossary_id: str) -> Response:
    """The entries as TSV (``source<TAB>target`` lines), DeepL's only entries format for reading."""
    accept = request.headers.get("accept", "*/*")
    if not any(kind in accept for kind in (TSV, "*/*", "text/*")):
        raise ApiError(415, f"Unsupported Media Type: entries are served as {TSV}")
    glossary = await _glossary(request, glossary_id)
    return Response(glossary.tsv(), media_type=TSV)


@router.delete("/glossaries/{glossary_id}", status_code=204)
async def delete(request: Request, glossary_id: str) -> Response:
    gateway, key_id, _ = await _admitted(request)
    if not await run_in_threadpool(gateway.glossaries.delete, key_id, glossary_id):
        raise ApiError(404, "Glossary not found")
    return Response(status_code=204)


@router.get("/glossary-language-pairs")
async def language_pairs(request: Request) -> dict:
    """Every pair the workers serve: a glossary works with any of them."""
    gateway, _, _ = await _admitted(request)
    pairs = await run_in_threadpool(gateway.fleet.pairs)
    return {"supported_languages": [{"source_lang": s, "target_lang": t} for s, t in sorted(pairs)]}
