"""Task and queue names: the client sends tasks by these names and never imports the worker."""
from __future__ import annotations

import re

TRANSLATE_TASK = "nmt.translate_document"
CHUNK_TASK = "nmt.translate_chunk"
KEY_PREFIX = "nmt"  # Redis keys: nmt:job:<id>, nmt:job:<id>:result, ...
_LANGUAGE = re.compile(r"^[a-z]{2,3}(-[A-Za-z0-9]{2,8})?$")


def queue_for(src: str, tgt: str) -> str:
    """One queue per language pair, e.g. ``nmt.en-de``."""
    return f"nmt.{src}-{tgt}"


def valid_language(code: str) -> bool:
    return bool(_LANGUAGE.match(code))
