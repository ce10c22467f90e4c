"""DeepL API v2, the subset the official client libraries use for text: ``/v2/translate``,
``/v2/languages`` and ``/v2/usage``, with DeepL's parameters (query string, JSON or form body),
status codes and ``{"message": ...}`` error bodies."""
from __future__ import annotations

from typing import Any, Literal

from fastapi import APIRouter, Request
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator
from starlette.concurrency import run_in_threadpool

from .errors import ApiError
from .gateway import Gateway
from .glossaries import terms_for
from .languages import deepl_sources, deepl_targets, resolve_pair
from .params import read_params

router = APIRouter(prefix="/v2", tags=["DeepL API v2"])
AUTH_PREFIX = "DeepL-Auth-Key "
UNLIMITED = 1_000_000_000_000  # the character_limit /v2/usage reports for a key without a quota, as DeepL Pro does


def _listed(value: Any) -> Any:
    """A comma-separated string or a list of them, as DeepL takes tag lists, as one list."""
    if value is None:
        return []
    values = [value] if isinstance(value, str) else value
    return [tag for v in values for tag in str(v).split(",") if tag] if isinstance(values, list) else value


class TranslateRequest(BaseModel):
    """``POST /v2/translate``. Options the models cannot honour are accepted and ignored where DeepL
    allows it (``formality`` ``prefer_*``, ``split_sentences``, ``preserve_formatting``, ``context``,
    ``model_type``, tag hints); ``formality`` ``less``/``more`` and ``ignore_tags`` get a 400.
    ``glossary_id`` names one of the key's glossaries (``/v2/glossaries``) and needs ``source_lang``."""

    model_config = ConfigDict(extra="ignore")

    text: list[str] = Field(min_length=1, description="texts to translate, in order")
    target_lang: str = Field(min_length=2, max_length=10, description="e.g. DE, EN-GB, EN-US")
    source_lang: str | None = Field(None, min_length=2, max_length=10, description="e.g. EN; omitted: the one source "
                                    "language the fleet translates into target_lang from")
    tag_handling: Literal["html", "xml"] | None = None
    split_sentences: Literal["0", "1", "nonewlines"] = "1"
    preserve_formatting: bool = False
    formality: Literal["default", "more", "less", "prefer_more", "prefer_less"] = "default"
    glossary_id: str | None = None
    ignore_tags: list[str] = Field(default_factory=list)
    non_splitting_tags: list[str] = Field(default_factory=list)
    splitting_tags: list[str] = Field(default_factory=list)
    outline_detection: bool = True
    show_billed_characters: bool = False

    @field_validator("text", mode="before")
    @classmethod
    def _one_or_many(cls, value: Any) -> Any:
        return [value] if isinstance(value, str) else value

    @field_validator("ignore_tags", "non_splitting_tags", "splitting_tags", mode="before")
    @classmethod
    def _tags(cls, value: Any) -> Any:
        return _listed(value)

    @field_validator("split_sentences", mode="before")
    @classmethod
    def _split(cls, value: Any) -> Any:
        return {True: "1", False: "0", 0: "0", 1: "1"}.get(value, value) if not isinstance(value, str) else value


class TextResult(BaseModel):
    detected_source_language: str
    text: str
    billed_characters: int | None = None


class TranslateResponse(BaseModel):
    translations: list[TextResult]


def _body_schema() -> dict:
    schema = TranslateRequest.model_json_schema()
    return {"requestBody": {"required": True, "content": {
        "application/json": {"schema": schema}, "application/x-www-form-urlencoded": {"schema": schema}}}}


def deepl_key(request: Request, params: dict[str, Any]) -> str | None:
    """The API key of a DeepL request: the ``Authorization: DeepL-Auth-Key ...`` header, else the
    older ``auth_key`` parameter."""
    header = request.headers.get("authorization")
    if header is not None:
        return header[len(AUTH_PREFIX):].strip() if header.startswith(AUTH_PREFIX) else None
    key = params.get("auth_key")
    return key if isinstance(key, str) else None


def _get_and_post(path: str, **post_only: Any):
    """Register a route for GET and POST (DeepL takes both), each with its own OpenAPI operation."""
    def register(endpoint):
        router.add_api_route(path, endpoint, methods=["GET"], operation_id=f"{endpoint.__name__}_get")
        router.add_api_route(path, endpoint, methods=["POST"], operation_id=f"{endpoint.__name__}_post", **post_only)
        return endpoint
    return register


def _gateway(request: Request) -> Gateway:
    return request.app.state.gateway


def _validated(params: dict[str, Any]) -> TranslateRequest:
    try:
        return TranslateRequest.model_validate(params)
    except ValidationError as exc:
        problems = "; ".join(f"'{'.'.join(str(p) for p in e['loc'])}': {e['msg']}" for e in exc.errors()[:5])
        raise ApiError(400, f"Invalid parameters: {problems}") from None


@_get_and_post("/translate", response_model=TranslateResponse, openapi_extra=_body_schema())
async def translate(request: Request) -> TranslateResponse:
    """Translate a list of texts; each is one job for the fleet, and the answer waits for all of
    them (503 with Retry-After after NMT_API_TIMEOUT seconds)."""
    gateway = _gateway(request)
    params, _ = await read_params(request)
    key_id = await gateway.admit(request, deepl_key(request, params))
    if not params.get("text"):  # absent, "" or []; an empty text among others comes back empty
        raise ApiError(400, "Parameter 'text' not specified.")
    body = _validated(params)
    if len(body.text) > gateway.settings.max_texts:
        raise ApiError(413, f"Too many texts: {len(body.text)} in one request, at most {gateway.settings.max_texts}")
    if body.formality in ("less", "more"):
        raise ApiError(400, "'formality' is not supported for given 'target_lang'.")
    if body.ignore_tags:
        raise ApiError(400, "'ignore_tags' is not supported by this server: mark such elements translate=\"no\" "
                            "(HTML) instead")
    if params.get("glossary_ids"):
        raise ApiError(400, "'glossary_ids' is not supported by this server: give one glossary as 'glossary_id'")
    if body.glossary_id is not None and body.source_lang is None:
        raise ApiError(400, "Use of a glossary requires the source_lang parameter to be specified")
    pairs = await run_in_threadpool(gateway.fleet.pairs)
    src, tgt = resolve_pair(body.source_lang, body.target_lang, pairs)
    terms = () if body.glossary_id is None else await run_in_threadpool(
        terms_for, gateway.glossaries, key_id, body.glossary_id, src, tgt)
    characters = sum(len(text) for text in body.text)
    await gateway.reserve(key_id, characters)
    try:
        texts = await gateway.fleet.translate(body.text, src, tgt, "html" if body.tag_handling else None,
                                              gateway.settings.timeout, request.is_disconnected, terms)
    except BaseException:
        await gateway.refund(key_id, characters)
        raise
    return TranslateResponse(translations=[
        TextResult(detected_source_language=src.upper(), text=text, billed_characters=len(source))
        for source, text in zip(body.text, texts)])


@_get_and_post("/languages")
async def languages(request: Request) -> list[dict]:
    """The languages the workers have announced: ``type=source`` (default) or ``type=target``."""
    gateway = _gateway(request)
    params, _ = await read_params(request)
    await gateway.admit(request, deepl_key(request, params))
    kind = params.get("type", "source")
    if kind not in ("source", "target"):
        raise ApiError(400, "Parameter 'type' is invalid. 'source' and 'target' are valid values.")
    pairs = await run_in_threadpool(gateway.fleet.pairs)
    return deepl_targets(pairs) if kind == "target" else deepl_sources(pairs)


@_get_and_post("/usage")
async def usage(request: Request) -> dict:
    """Characters this key has translated, and its quota (NMT_API_CHARACTER_QUOTA)."""
    gateway = _gateway(request)
    params, _ = await read_params(request)
    key_id = await gateway.admit(request, deepl_key(request, params))
    used = await run_in_threadpool(gateway.limits.usage, key_id)
    return {"character_count": used.characters, "character_limit": used.quota or UNLIMITED}
