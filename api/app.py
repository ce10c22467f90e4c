"""The ASGI app: the API routers, a cap on request bodies (checked before they are read), an
access log that names keys only by key id, errors rendered in each API's own body shape, and the
webhook outbox running beside it."""
from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import time
from typing import AsyncIterator

import redis
from fastapi import FastAPI
from fastapi.exceptions import RequestValidationError
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from . import deepl_documents, deepl_glossaries, deepl_routes, job_routes, libre_files, libre_routes, metrics
from .errors import ApiError
from .gateway import Gateway

log = logging.getLogger("api.access")
DOCUMENT_PATHS = ("/v2/document", "/translate_file", "/v1/jobs")  # uploads, capped by NMT_MAX_DOCUMENT_BYTES
GLOSSARY_PATHS = ("/v2/glossaries",)  # capped by NMT_API_MAX_GLOSSARY_BYTES
MULTIPART_SLACK = 64 * 1024  # bytes of form fields and boundaries around an uploaded document


def error_body(path: str, message: str) -> dict:
    """DeepL's ``{"message": ...}`` under /v2, LibreTranslate's ``{"error": ...}`` elsewhere."""
    return {"message": message} if path.startswith("/v2/") else {"error": message}


def error_response(path: str, error: ApiError) -> JSONResponse:
    return JSONResponse(error_body(path, error.message), status_code=error.status, headers=error.headers)


class BodyCap:
    """413 for a body over its cap: at once from Content-Length, else as soon as the bytes read
    pass it (a chunked body)."""

    def __init__(self, app: ASGIApp, text_cap: int, caps: dict[str, int]) -> None:
        self.app = app
        self.text_cap = text_cap
        self.caps = caps  # path -> cap of the paths that take more than a text request

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        path = scope["path"]
        cap = self.caps.get(path.rstrip("/"), self.text_cap)
        declared = dict(scope["headers"]).get(b"content-length")
        if declared is not None and declared.isdigit() and int(declared) > cap:
            return await error_response(path, _too_large(cap))(scope, receive, send)
        seen = 0

        async def counted() -> Message:
            nonlocal seen
            message = await receive()
            seen += len(message.get("body", b""))
            if seen > cap:
                raise _too_large(cap)
            return message

        await self.app(scope, counted, send)


def _too_large(cap: int) -> ApiError:
    return ApiError(413, f"Request Entity Too Large: the body may hold at most {cap} bytes")


class AccessLog:
    """One line per request: method, path (no query string: it may hold a key), status, time and
    key id; and the request's metrics."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        started, status = time.perf_counter(), [0]

        async def noted(message: Message) -> None:
            if message["type"] == "http.response.start":
                status[0] = message["status"]
            await send(message)

        try:
            await self.app(scope, receive, noted)
        finally:
            seconds = time.perf_counter() - started
            key_id = scope.get("state", {}).get("key_id", "-")
            log.info("%s %s %d %.1f ms key=%s", scope["method"], scope["path"], status[0], 1000 * seconds, key_id)
            # by route template ("/v1/jobs/{job_id}"), so that ids never become label values
            route = getattr(scope.get("route"), "path", None) or "unmatched"
            metrics.record_request(route, scope["method"], status[0], seconds)


def _webhooks(gateway: Gateway):
    """The app's lifespan: with webhooks on (NMT_WEBHOOK_ALLOW), the outbox's background task runs
    while the app serves, and picks up whatever deliveries an earlier process left in Redis."""
    @contextlib.asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        task = asyncio.create_task(gateway.outbox.run()) if gateway.outbox.allow else None
        try:
            yield
        finally:
            if task is not None:
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task
    return lifespan


def create_app(gateway: Gateway | None = None) -> FastAPI:
    """The gateway's app; ``gateway`` None: made from the NMT_* environment (``nmt serve --workers``
    calls this as a factory in each process)."""
    gateway = gateway or Gateway.from_settings()
    if gateway.settings.metrics_port:
        metrics.enable()
    app = FastAPI(title="nmt gateway", version="1", docs_url="/docs", redoc_url=None, lifespan=_webhooks(gateway),
                  description="DeepL API v2 and LibreTranslate subsets and the gateway's own job API with "
                              "webhooks, over the nmt translation fleet. Every request is a job for the Celery "
                              "workers; the gateway never decodes.")
    app.state.gateway = gateway
    app.include_router(deepl_routes.router)
    app.include_router(deepl_documents.router)
    app.include_router(deepl_glossaries.router)
    app.include_router(libre_routes.router)
    app.include_router(libre_files.router)
    app.include_router(job_routes.router)

    @app.exception_handler(ApiError)
    async def _api_error(request: Request, exc: ApiError) -> JSONResponse:
        return error_response(request.url.path, exc)

    @app.exception_handler(RequestValidationError)
    async def _invalid(request: Request, exc: RequestValidationError) -> JSONResponse:
        return error_response(request.url.path, ApiError(400, f"Invalid request: {json.dumps(exc.errors()[:3], default=str)}"))

    @app.exception_handler(redis.RedisError)
    async def _store_down(request: Request, exc: redis.RedisError) -> JSONResponse:
        return error_response(request.url.path, ApiError(503, f"The job store is unreachable ({type(exc).__name__}); "
                                                              "retry later", retry_after=5))

    caps = {path: gateway.queue.max_document_bytes + MULTIPART_SLACK for path in DOCUMENT_PATHS}
    caps |= {path: gateway.settings.max_glossary_bytes for path in GLOSSARY_PATHS}
    app.add_middleware(BodyCap, text_cap=gateway.settings.max_request_bytes, caps=caps)
    app.add_middleware(AccessLog)
    return app
