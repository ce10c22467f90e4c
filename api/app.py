"""The ASGI app: the API routers, a cap on request bodies (checked before they are read), an
access log that names keys only by key id, and errors rendered in each API's own body shape."""
from __future__ import annotations

import json
import logging
import time

import redis
from fastapi import FastAPI
from fastapi.exceptions import RequestValidationError
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from . import deepl_documents, deepl_routes, libre_routes
from .errors import ApiError
from .gateway import Gateway

log = logging.getLogger("api.access")
DOCUMENT_PATHS = ("/v2/document", "/translate_file")  # uploads, capped by NMT_MAX_DOCUMENT_BYTES
MULTIPART_SLACK = 64 * 1024  # bytes of form fields and boundaries around an uploaded document


def error_body(path: str, message: str) -> dict:
    """DeepL's ``{"message": ...}`` under /v2, LibreTranslate's ``{"error": ...}`` elsewhere."""
    return {"message": message} if path.startswith("/v2/") else {"error": message}


def error_response(path: str, error: ApiError) -> JSONResponse:
    return JSONResponse(error_body(path, error.message), status_code=error.status, headers=error.headers)


class BodyCap:
    """413 for a body over its cap: at once from Content-Length, else as soon as the bytes read
    pass it (a chunked body)."""

    def __init__(self, app: ASGIApp, text_cap: int, document_cap: int) -> None:
        self.app = app
        self.text_cap = text_cap
        self.document_cap = document_cap

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        path = scope["path"]
        cap = self.document_cap if path.rstrip("/") in DOCUMENT_PATHS else self.text_cap
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
    key id."""

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
            key_id = scope.get("state", {}).get("key_id", "-")
            log.info("%s %s %d %.1f ms key=%s", scope["method"], scope["path"], status[0],
                     1000 * (time.perf_counter() - started), key_id)


def create_app(gateway: Gateway | None = None) -> FastAPI:
    """The gateway's app; ``gateway`` None: made from the NMT_* environment (``nmt serve --workers``
    calls this as a factory in each process)."""
    gateway = gateway or Gateway.from_settings()
    app = FastAPI(title="nmt gateway", version="1", docs_url="/docs", redoc_url=None,
                  description="DeepL API v2 and LibreTranslate subsets over the nmt translation fleet. Every request is a job for "
                              "the Celery workers; the gateway never decodes.")
    app.state.gateway = gateway
    app.include_router(deepl_routes.router)
    app.include_router(deepl_documents.router)
    app.include_router(libre_routes.router)

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

    app.add_middleware(BodyCap, text_cap=gateway.settings.max_request_bytes,
                       document_cap=gateway.queue.max_document_bytes + MULTIPART_SLACK)
    app.add_middleware(AccessLog)
    return app
