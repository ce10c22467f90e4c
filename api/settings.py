"""The gateway's settings, read from the environment in this one place: ``NMT_API_*`` for the
APIs and ``NMT_WEBHOOK_*`` for job webhooks; the fleet's own (broker, document cap) stay in
``queue_config.settings``."""
from __future__ import annotations

import os
from dataclasses import dataclass, fields
from typing import Mapping, TypeVar

from queue_config.settings import SettingsError

PREFIX = "NMT_API_"
WEBHOOK_PREFIX = "NMT_WEBHOOK_"
SECRET_FIELDS = ("keys", "secret")  # never echoed in an error message


@dataclass(frozen=True)
class GatewaySettings:
    # comma-separated API keys, each in clear or as "sha256:<hex digest>"; empty: no key is asked for
    keys: str = ""
    keys_file: str = ""  # a file of "sha256:<hex>" key digests, one a line; added to ``keys``
    timeout: float = 30.0  # seconds a text request waits for the fleet before it gets 503 + Retry-After
    file_timeout: float = 300.0  # seconds a LibreTranslate /translate_file request waits for its document
    # bytes of a text request's body (DeepL's limit for /v2/translate); documents are capped by
    # NMT_MAX_DOCUMENT_BYTES
    max_request_bytes: int = 128 * 1024
    max_texts: int = 50  # texts in one request (DeepL's limit)
    character_quota: int = 0  # characters each key may translate (kept in Redis); 0: no quota
    rate_limit: int = 0  # requests each key may make per minute; 0: no limit
    max_glossary_bytes: int = 1024 * 1024  # body of a glossary upload (POST /v2/glossaries)
    max_glossaries: int = 1000  # glossaries each key may keep
    metrics_port: int = 0  # serve Prometheus metrics on this port (api.metrics); 0: off
    metrics_host: str = "127.0.0.1"  # the metrics endpoint's address; 0.0.0.0 exposes it to the network

    def validate(self) -> "GatewaySettings":
        for name in ("timeout", "file_timeout"):
            if not getattr(self, name) > 0:  # nan fails too
                raise SettingsError(f"{PREFIX}{name.upper()} must be > 0 seconds, got {getattr(self, name)}")
        for name in ("max_request_bytes", "max_texts", "max_glossary_bytes", "max_glossaries"):
            if getattr(self, name) < 1:
                raise SettingsError(f"{PREFIX}{name.upper()} must be >= 1, got {getattr(self, name)}")
        if not 0 <= self.metrics_port <= 65535:
            raise SettingsError(f"{PREFIX}METRICS_PORT must be in [0, 65535] (0: off), got {self.metrics_port}")
        for name in ("character_quota", "rate_limit"):
            if getattr(self, name) < 0:
                raise SettingsError(f"{PREFIX}{name.upper()} must be >= 0 (0: none), got {getattr(self, name)}")
        return self


@dataclass(frozen=True)
class WebhookSettings:
    # comma-separated hosts a callback_url may name: "hooks.example.com", "*.example.com" (its
    # subdomains), an IP address or a network ("10.1.0.0/16"); empty: webhooks are refused
    allow: str = ""
    secret: str = ""  # HMAC-SHA256 key of the NMT-Signature header; required when ``allow`` is set
    backoff: float = 10.0  # seconds before the first retry; each retry waits twice the one before
    max_backoff: float = 600.0  # the longest wait between two attempts
    max_age: float = 3600.0  # seconds after the job's end when a delivery is given up
    timeout: float = 10.0  # seconds one attempt waits for the receiver's answer
    poll: float = 1.0  # seconds between looks at the watched jobs and the due deliveries

    def validate(self) -> "WebhookSettings":
        for name in ("backoff", "max_backoff", "max_age", "timeout", "poll"):
            if not getattr(self, name) > 0:
                raise SettingsError(f"{WEBHOOK_PREFIX}{name.upper()} must be > 0 seconds, got {getattr(self, name)}")
        if self.allow.strip() and len(self.secret) < 16:
            raise SettingsError(f"{WEBHOOK_PREFIX}SECRET must hold at least 16 characters when "
                                f"{WEBHOOK_PREFIX}ALLOW is set: receivers check each delivery's signature with it")
        return self


Settings = TypeVar("Settings", GatewaySettings, WebhookSettings)


def _load(kind: type[Settings], prefix: str, environ: Mapping[str, str] | None) -> Settings:
    environ = os.environ if environ is None else environ
    values = {}
    for f in fields(kind):
        key = prefix + f.name.upper()
        if key in environ:
            cast = type(f.default)
            try:
                values[f.name] = cast(environ[key])
            except ValueError:
                shown = "***" if f.name in SECRET_FIELDS else repr(environ[key])
                raise SettingsError(f"{key}={shown} is not a valid {cast.__name__}") from None
    return kind(**values).validate()


def load_gateway_settings(environ: Mapping[str, str] | None = None) -> GatewaySettings:
    """``GatewaySettings`` from ``NMT_API_<FIELD>`` variables (e.g. ``NMT_API_KEYS``), validated."""
    return _load(GatewaySettings, PREFIX, environ)


def load_webhook_settings(environ: Mapping[str, str] | None = None) -> WebhookSettings:
    """``WebhookSettings`` from ``NMT_WEBHOOK_<FIELD>`` variables (e.g. ``NMT_WEBHOOK_ALLOW``), validated."""
    return _load(WebhookSettings, WEBHOOK_PREFIX, environ)
