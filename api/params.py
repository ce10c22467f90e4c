"""A request's parameters as DeepL and LibreTranslate take them: from the query string and from a
JSON, form-encoded or multipart body alike (a repeated form field is a list). Files of a multipart
body come back apart."""
from __future__ import annotations

import json
from typing import Any

from starlette.datastructures import UploadFile
from starlette.requests import Request

from .errors import ApiError


def _merge(out: dict[str, Any], items: list[tuple[str, Any]]) -> None:
    grouped: dict[str, list[Any]] = {}
    for key, value in items:
        grouped.setdefault(key, []).append(value)
    for key, values in grouped.items():
        out[key] = values[0] if len(values) == 1 else values


async def read_params(request: Request, max_part_bytes: int = 1024 * 1024,
                      max_files: int = 1) -> tuple[dict[str, Any], dict[str, UploadFile]]:
    """(parameters, uploaded files); the body's parameters win over the query string's."""
    params: dict[str, Any] = {}
    _merge(params, list(request.query_params.multi_items()))
    files: dict[str, UploadFile] = {}
    kind = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if kind == "application/json":
        body = await request.body()
        if body.strip():
            try:
                payload = json.loads(body)
            except (ValueError, UnicodeDecodeError):
                raise ApiError(400, "The request body is not valid JSON") from None
            if not isinstance(payload, dict):
                raise ApiError(400, "The request body must be a JSON object")
            params.update(payload)
    elif kind in ("application/x-www-form-urlencoded", "multipart/form-data"):
        try:
            form = await request.form(max_files=max_files, max_fields=200, max_part_size=max_part_bytes)
        except Exception as exc:  # python-multipart's and Starlette's parse errors share no base class
            if getattr(exc, "status_code", None) == 413:
                raise ApiError(413, "Request Entity Too Large") from None
            raise ApiError(400, f"The request body cannot be read: {getattr(exc, 'detail', exc)}") from None
        fields = []
        for key, value in form.multi_items():
            if isinstance(value, UploadFile):
                files[key] = value
            else:
                fields.append((key, value))
        body_params: dict[str, Any] = {}
        _merge(body_params, fields)
        params.update(body_params)
    return params, files
