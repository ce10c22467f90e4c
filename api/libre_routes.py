"""The LibreTranslate API subset ``libretranslatepy`` and LibreTranslate's clients use:
``/translate`` (``q`` one text or a list, ``source`` a code or ``auto``, ``target``, ``format``
text|html), ``/languages`` and ``/detect``, each with ``api_key`` as LibreTranslate takes it, and
LibreTranslate's ``{"error": ...}`` bodies and messages. Files: ``api.libre_files``."""
from __future__ import annotations

from typing import Any, Literal

from fastapi import APIRouter, Request
from pydantic import BaseModel, ConfigDict, Field, ValidationError
from starlette.concurrency import run_in_threadpool

from .detection import Detection, detect
from .errors import ApiError
from .gateway import Gateway
from .languages import fleet_code, name_of
from .params import read_params

router = APIRouter(tags=["LibreTranslate"])


class LibreRequest(BaseModel):
    model_config = ConfigDict(extra="ignore")

    q: str | list[str]
    source: str = Field("auto", min_length=2, max_length=10)
    target: str = Field(min_length=2, max_length=10)
    format: Literal["text", "html"] = "text"
    api_key: str | None = None


async def libre_admit(request: Request, params: dict[str, Any]) -> str:
    """The key id of a request whose ``api_key`` is valid and within its rate. As LibreTranslate
    answers when keys are required: 400 without a key, 403 for a key it does not know."""
    gateway: Gateway = request.app.state.gateway
    key = params.get("api_key")
    key = key if isinstance(key, str) and key else None
    if key is None and gateway.keys.required:
        raise ApiError(400, "Please contact the server operator to get an API key")
    try:
        return await gateway.admit(request, key)
    except ApiError as exc:
        if exc.status == 403:
            raise ApiError(403, "Invalid API key") from None
        raise


def libre_pair(source: str, target: str, pairs: list[tuple[str, str]],
               detection: Detection | None = None) -> tuple[str, str, float]:
    """The fleet's (source, target) for a LibreTranslate request and the detection's confidence in
    the source (100 when named). ``source="auto"``: the detected language when the fleet translates
    it into ``target``; a reliable detection of another language is refused as LibreTranslate
    refuses it; an unreliable one (a short text) falls back to the one source the fleet translates
    into ``target`` from."""
    tgt = fleet_code(target)
    sources = {s for s, _ in pairs}
    if pairs and tgt not in {t for _, t in pairs}:
        raise ApiError(400, f"{target} is not supported")
    into = sorted(s for s, t in pairs if t == tgt)
    if source != "auto":
        src = fleet_code(source)
        if pairs and src not in sources:
            raise ApiError(400, f"{source} is not supported")
        _check(src, tgt, pairs)
        return src, tgt, 100.0
    best = detection.best if detection is not None else None
    if best is not None and fleet_code(best.language) in into:
        return fleet_code(best.language), tgt, best.confidence
    if best is not None and detection.reliable:
        if fleet_code(best.language) not in sources:
            raise ApiError(400, f"{best.language} is not supported")
        _check(fleet_code(best.language), tgt, pairs)
    if len(into) != 1:
        raise ApiError(400, f"Invalid request: the source language cannot be told for target {target!r} "
                            f"(served sources: {', '.join(into) or 'none'}); name it in 'source'")
    return into[0], tgt, detection.confidence_of(into[0]) if detection is not None else 0.0


def _check(src: str, tgt: str, pairs: list[tuple[str, str]]) -> None:
    if pairs and (src, tgt) not in pairs:
        raise ApiError(400, f"{name_of(tgt)} ({tgt}) is not available as a target language from "
                            f"{name_of(src)} ({src})")


@router.post("/translate")
async def translate(request: Request) -> dict:
    """``{"translatedText": ...}``, a string or a list as ``q`` was; with ``source=auto`` also
    ``detectedLanguage`` (``confidence`` 0-100 and ``language``: the source the fleet translated from)."""
    gateway: Gateway = request.app.state.gateway
    params, _ = await read_params(request)
    key_id = await libre_admit(request, params)
    if not params.get("q"):  # absent, "" or []: refused as LibreTranslate refuses them (`if not q`)
        raise ApiError(400, "Invalid request: missing q parameter")
    try:
        body = LibreRequest.model_validate(params)
    except ValidationError as exc:
        fields = ", ".join(str(e["loc"][0]) for e in exc.errors()[:5])
        raise ApiError(400, f"Invalid request: check the parameters {fields}") from None
    texts = [body.q] if isinstance(body.q, str) else body.q
    if not texts or len(texts) > gateway.settings.max_texts:
        raise ApiError(400, f"Invalid request: 1 to {gateway.settings.max_texts} texts in 'q'")
    pairs = await run_in_threadpool(gateway.fleet.pairs)
    detection = await run_in_threadpool(detect, texts, body.format == "html") if body.source == "auto" else None
    src, tgt, confidence = libre_pair(body.source, body.target, pairs, detection)
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
        out["detectedLanguage"] = {"confidence": confidence, "language": src}
    return out


@router.post("/detect")
async def detect_language(request: Request) -> list[dict]:
    """The languages of ``q`` (a text, or a list taken together), best first:
    ``[{"confidence": 0-100, "language": "en"}, ...]``. Every language CLD2 knows is reported, not
    only those the fleet translates; when none can be told (digits, symbols), the fleet's first
    source language with confidence 0, as LibreTranslate answers. Costs no characters of the quota."""
    gateway: Gateway = request.app.state.gateway
    params, _ = await read_params(request)
    await libre_admit(request, params)
    q = params.get("q")
    texts = [q] if isinstance(q, str) else q
    if not q or not isinstance(texts, list) or not all(isinstance(text, str) for text in texts):
        raise ApiError(400, "Invalid request: missing q parameter")
    if len(texts) > gateway.settings.max_texts:
        raise ApiError(400, f"Invalid request: 1 to {gateway.settings.max_texts} texts in 'q'")
    detection = await run_in_threadpool(detect, texts)
    if detection.guesses:
        return [{"confidence": guess.confidence, "language": guess.language} for guess in detection.guesses]
    pairs = await run_in_threadpool(gateway.fleet.pairs)
    return [{"confidence": 0.0, "language": min((s for s, _ in pairs), default="en")}]


async def languages(request: Request) -> list[dict]:
    """Each source language the workers serve, with the targets it is translated into."""
    gateway: Gateway = request.app.state.gateway
    params, _ = await read_params(request)
    await libre_admit(request, params)
    pairs = await run_in_threadpool(gateway.fleet.pairs)
    return [{"code": src, "name": name_of(src), "targets": sorted(t for s, t in pairs if s == src)}
            for src in sorted({s for s, _ in pairs})]


router.add_api_route("/languages", languages, methods=["GET"], operation_id="libre_languages_get")
router.add_api_route("/languages", languages, methods=["POST"], operation_id="libre_languages_post")
