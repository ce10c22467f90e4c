"""The gateway's settings, read from ``NMT_API_*`` environment variables in this one place; the
fleet's own (broker, document cap) stay in ``queue_config.settings``."""
from __future__ import annotations

import os
from dataclasses import dataclass, fields
from typing import Mapping

from queue_config.settings import SettingsError

PREFIX = "NMT_API_"


@dataclass(frozen=True)
class GatewaySettings:
    # comma-separated API keys, each in clear or as "sha256:<hex digest>"; empty: no key is asked for
    keys: str = ""
    timeout: float = 30.0  # seconds a text request waits for the fleet before it gets 503 + Retry-After
    # bytes of a text request's body (DeepL's limit for /v2/translate); documents are capped by
    # NMT_MAX_DOCUMENT_BYTES
    max_request_bytes: int = 128 * 1024
    max_texts: int = 50  # texts in one request (DeepL's limit)
    character_quota: int = 0  # characters each key may translate (kept in Redis); 0: no quota
    rate_limit: int = 0  # requests each key may make per minute; 0: no limit

    def validate(self) -> "GatewaySettings":
        if not self.timeout > 0:  # nan fails too
            raise SettingsError(f"{PREFIX}TIMEOUT must be > 0 seconds, got {self.timeout}")
        for name in ("max_request_bytes", "max_texts"):
            if getattr(self, name) < 1:
                raise SettingsError(f"{PREFIX}{name.upper()} must be >= 1, got {getattr(self, name)}")
        for name in ("character_quota", "rate_limit"):
            if getattr(self, name) < 0:
                raise SettingsError(f"{PREFIX}{name.upper()} must be >= 0 (0: none), got {getattr(self, name)}")
        return self


def load_gateway_settings(environ: Mapping[str, str] | None = None) -> GatewaySettings:
    """``GatewaySettings`` from ``NMT_API_<FIELD>`` variables (e.g. ``NMT_API_KEYS``), validated."""
    environ = os.environ if environ is None else environ
    values = {}
    for f in fields(GatewaySettings):
        key = PREFIX + f.name.upper()
        if key in environ:
            kind = type(f.default)
            try:
                values[f.name] = kind(environ[key])
            except ValueError:
                raise SettingsError(f"{key}={'***' if f.name == 'keys' else repr(environ[key])} is not a valid "
                                    f"{kind.__name__}") from None
    return GatewaySettings(**values).validate()
