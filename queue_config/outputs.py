"""Writing translations to disk atomically (temporary file, then rename): a reader never sees a
partial file, and writing the same result twice leaves one file."""
from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any


def write_atomically(path: Path, text: str | bytes) -> None:
    """Write ``text`` (UTF-8, or bytes as they are) to ``path`` with the permissions a plain ``open`` would give it
    (0666 less the umask; ``mkstemp`` alone makes it 0600, unreadable to other users and containers)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        os.fchmod(fd, 0o666 & ~_umask())
        with (os.fdopen(fd, "wb") if isinstance(text, bytes) else os.fdopen(fd, "w", encoding="utf-8")) as handle:
            handle.write(text)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _umask() -> int:
    try:  # Linux: read it without changing it (os.umask would, for every thread, for a moment)
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("Umask:"):
                return int(line.split()[1], 8)
    except OSError:
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def output_stem(path: Path, source_language: str) -> str:
    """``letter.txt`` -> ``letter``; ``letter.en.txt`` -> ``letter`` (the source language is dropped)."""
    stem = Path(path).stem
    suffix = f".{source_language}"
    return stem[: -len(suffix)] if stem.endswith(suffix) and len(stem) > len(suffix) else stem


def write_translation(out_dir: Path, stem: str, language: str, text: str | bytes, payload: dict[str, Any],
                      suffix: str = ".txt") -> tuple[Path, Path]:
    """``<stem>.<language><suffix>`` (the translated file: ``.txt``, or a format's own extension)
    and ``<stem>.<language>.json``, as ``nmt translate`` and ``nmt submit`` write them."""
    txt, js = out_dir / f"{stem}.{language}{suffix}", out_dir / f"{stem}.{language}.json"
    write_atomically(txt, text)
    write_atomically(js, json.dumps(payload, ensure_ascii=False, indent=1) + "\n")
    return txt, js
