"""The LibreTranslate API subset ``libretranslatepy`` uses: ``/translate`` (``q`` one text or a
list, ``source`` a code or ``auto``, ``target``, ``format`` text|html, ``api_key``) and
``/languages``, with LibreTranslate's ``{"error": ...}`` bodies."""
from __future__ import annotations

from typing import Any, Literal

from fastapi import APIRouter, Request
from pydantic import BaseModel, ConfigDict, Field, ValidationError
from starlette.concurrency import run_in_threadpool

from .errors import ApiError
from .gateway import Gateway
from .languages import name_of, resolve_pair
from .params import read_params

router = APIRouter(tags=["LibreTranslate"])


class LibreRequest(BaseModel):
    model_config = ConfigDict(extra="ignore")

    q: str | list[str]
    source: str = Field("auto", min_length=2, max_length=10)
    target: str = Field(min_length=2, max_length=10)
    format: Literal["text", "html"] = "text"
    api_key: str | None = None


def _key(params: dict[str, Any]) -> str | None:
    key = params.get("api_key")
    return key if isinstance(key, str) else None


@router.post("/translate")
async def translate(request: Request) -> dict:
    """``{"translatedText": ...}``, a string or a list as ``q`` was; with ``source=auto`` also
    ``detectedLanguage`` (the one source the fleet translates into ``target`` from)."""
    gateway: Gateway = request.app.state.gateway
    params, _ = await read_params(request)
    key_id = await gateway.admit(request, _key(params))
    try:
        body = LibreRequest.model_validate(params)
    except ValidationError as exc:
        fields = ", ".join(str(e["loc"][0]) for e in exc.errors()[:5])
        raise ApiError(400, f"Invalid request: check the parameters {fields}") from None
    texts = [body.q] if isinstance(body.q, str) else body.q
    if not texts or len(texts) > gateway.settings.max_texts:
        raise ApiError(400, f"Invalid request: 1 to {gateway.settings.max_texts} texts in 'q'")
    pairs = await run_in_threadpool(gateway.fleet.pairs)
    src, tgt = resolve_pair(None if body.source == "auto" else body.source, body.target, pairs, field="source")
    characters = sum(len(text) for text in texts)
    await gateway.reserve(key_id, characters)
    try:
        translated = await gateway.fleet.translate(texts, src, tgt, "html" if body.format == "html" else None,
                                                   gateway.settings.timeout, request.is_disconnected)
    except BaseException:
        await gateway.refund(key_id, characters)
        raise
    out: dict[str, Any] = {"translatedText": translated[0] if isinstance(body.q, str) else translated}
    if body.source == "auto":
        out["detectedLanguage"] = {"confidence": 100.0, "language": src}
    return out


async def languages(request: Request) -> list[dict]:
    """Each source language the workers serve, with the targets it is translated into."""
    gateway: Gateway = request.app.state.gateway
    params, _ = await read_params(request)
    await gateway.admit(request, _key(params))
    pairs = await run_in_threadpool(gateway.fleet.pairs)
    return [{"code": src, "name": name_of(src), "targets": sorted(t for s, t in pairs if s == src)}
            for src in sorted({s for s, _ in pairs})]


router.add_api_route("/languages", languages, methods=["GET"], operation_id="libre_languages_get")
router.add_api_route("/languages", languages, methods=["POST"], operation_id="libre_languages_post")
