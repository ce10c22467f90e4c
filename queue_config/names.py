"""Task and queue names: the client sends tasks by these names and never imports the worker."""
from __future__ import annotations

import re
from pathlib import PurePosixPath

TRANSLATE_TASK = "nmt.translate_document"
CHUNK_TASK = "nmt.translate_chunk"
KEY_PREFIX = "nmt"  # Redis keys: nmt:job:<id>, nmt:job:<id>:result, ...
# File formats a job may name (worker.formats reads them); a job by path without one goes by its extension.
FORMATS = ("txt", "srt", "vtt", "po", "html", "xliff", "markdown", "docx", "odt", "ods", "odp", "epub",
           "pptx", "pptm", "xlsx", "xlsm")
BINARY_FORMATS = frozenset({"docx", "odt", "ods", "odp", "epub",
                            "pptx", "pptm", "xlsx", "xlsm"})  # travel base64 in a job's text and its result's text
FORMAT_SUFFIXES = {"txt": ".txt", "srt": ".srt", "vtt": ".vtt", "po": ".po", "html": ".html", "xliff": ".xlf",
                   "markdown": ".md", "docx": ".docx", "odt": ".odt", "ods": ".ods", "odp": ".odp", "epub": ".epub",
                   "pptx": ".pptx", "pptm": ".pptm", "xlsx": ".xlsx", "xlsm": ".xlsm"}
FORMAT_EXTENSIONS = {".srt": "srt", ".vtt": "vtt", ".po": "po", ".pot": "po", ".html": "html", ".htm": "html",
                     ".xlf": "xliff", ".xliff": "xliff", ".md": "markdown", ".markdown": "markdown",
                     ".docx": "docx", ".txt": "txt", ".text": "txt",
                     ".odt": "odt", ".ods": "ods", ".odp": "odp", ".epub": "epub",
                     ".pptx": "pptx", ".pptm": "pptm", ".xlsx": "xlsx", ".xlsm": "xlsm"}


def format_of_name(name: str) -> str:
    """The format a file name's extension says; plain text for any other extension."""
    return FORMAT_EXTENSIONS.get(PurePosixPath(name).suffix.lower(), "txt")
_LANGUAGE = re.compile(r"^[a-z]{2,3}(-[A-Za-z0-9]{2,8})?$")


# Chunks of big documents wait behind whole documents: Redis keeps one list per priority step,
# "<queue>" for 0 (taken first) and "<queue>\x06\x16<p>" for 3, 6 and 9 (kombu's Redis transport).
CHUNK_PRIORITY = 9
PRIORITY_STEPS = (0, 3, 6, 9)


def queue_lists(queue: str) -> list[str]:
    """The Redis lists holding a queue's messages, one per priority step, first taken first."""
    return [queue] + [f"{queue}\x06\x16{p}" for p in PRIORITY_STEPS[1:]]


def queue_for(src: str, tgt: str) -> str:
    """One queue per language pair, e.g. ``nmt.en-de``."""
    return f"nmt.{src}-{tgt}"


def batch_queue_for(src: str, tgt: str) -> str:
    """The queue of a pair's small plain-text jobs, which workers take several at a time
    (``nmt.en-de.batch``)."""
    return f"{queue_for(src, tgt)}.batch"


def chunk_queue_for(src: str, tgt: str) -> str:
    """With RabbitMQ (whose quorum queues have no priorities before 4.0), the queue of a pair's
    chunks of big documents, consumed beside the pair's two job queues (``nmt.en-de.chunks``):
    a worker holds at most its prefetch of each, so chunks never stand between a job and a free
    worker. With Redis, chunks go to the pair's queue at ``CHUNK_PRIORITY``."""
    return f"{queue_for(src, tgt)}.chunks"


def valid_language(code: str) -> bool:
    return bool(_LANGUAGE.match(code))
