"""Folders and glob patterns as input for ``nmt translate`` and ``nmt submit --wait``: which files a
run takes (``select_documents``), where each translation goes in the output tree that mirrors the
input, and the state file in the output root that lets the next run skip what is up to date
(``BulkRun``). Standard library only: the client uses it and never imports the worker.
"""
from __future__ import annotations

import hashlib
import json
import os
import re
from dataclasses import dataclass
from fnmatch import fnmatchcase
from pathlib import Path, PurePosixPath
from typing import Any, Mapping, Sequence

from .names import FORMAT_EXTENSIONS
from .outputs import output_stem, write_atomically
from .textfiles import collision_message, output_collisions

STATE_FILE = ".nmt-state.jsonl"  # hidden, so a walk of a tree holding the output never reads it
_WILDCARD = re.compile(r"[*?[]")


class TreeError(ValueError):
    """Input that selects nothing or cannot be placed; the message is the one line to show."""


@dataclass(frozen=True)
class Document:
    path: Path  # the file to read: a folder's file joined onto the folder as given
    relative: PurePosixPath  # its place in the output tree: below its folder, or its bare name when named

    @property
    def key(self) -> str:
        return self.relative.as_posix()


@dataclass(frozen=True)
class Selection:
    documents: tuple[Document, ...]
    unknown: tuple[Path, ...] = ()  # skipped: no known format's extension (or not a regular file)
    outside: tuple[Path, ...] = ()  # skipped: symlinks whose target is outside their folder (or a loop)
    failed: tuple[tuple[Path, str], ...] = ()  # folders that could not be listed, with the reason

    def collision_message(self, source_language: str) -> str:
        """'' when every document has an output name of its own, else what would overwrite what."""
        keys = {d.path: (d.relative.parent / output_stem(d.path, source_language)).as_posix() for d in self.documents}
        collisions = output_collisions(keys, keys.__getitem__)
        return collision_message(collisions) if collisions else ""


def select_documents(inputs: Sequence[str], out: Path | None, include: Sequence[str] = (),
                     exclude: Sequence[str] = ()) -> Selection:
    """The documents named by ``inputs``: files (taken as they are, whatever their extension),
    folders (walked) and glob patterns the shell left alone (``'docs/**/*.md'``: the folder before
    the first wildcard is walked and the rest must match). In a walk: ``include`` / ``exclude``
    patterns filter paths relative to the folder; hidden entries, the ``out`` folder and the output
    folders of earlier runs (holding a ``STATE_FILE``) are skipped; files of unknown kinds and
    symlinks out of the folder are skipped and counted; symlinked folders are not descended.
    A file reached twice is taken once, where first found."""
    documents: list[Document] = []
    unknown: list[Path] = []
    outside: list[Path] = []
    failed: list[tuple[Path, str]] = []
    for given in inputs:
        path = Path(given)
        if path.is_dir():
            root, pattern = path, None
        elif os.path.lexists(path) or not _WILDCARD.search(given):
            documents.append(Document(path, PurePosixPath(path.name)))  # a missing one fails when read
            continue
        else:
            root, pattern = _glob_root(given)
        if out is None:
            raise TreeError(f"{given} is a {'folder' if pattern is None else 'glob pattern'}: "
                            "its translations need --out DIR")
        found = _walk(root, pattern, include, exclude, Path(out))
        if pattern is not None and not found.documents:
            raise TreeError(f"{given} matches no file" + (f" of a known kind ({len(found.unknown)} of other kinds)"
                                                          if found.unknown else ""))
        documents += found.documents
        unknown += found.unknown
        outside += found.outside
        failed += found.failed
    unique = {}
    for document in documents:
        unique.setdefault(document.path, document)
    return Selection(tuple(unique.values()), tuple(unknown), tuple(outside), tuple(failed))


def _glob_root(given: str) -> tuple[Path, list[str]]:
    """``docs/**/*.md`` -> (``docs``, ``["**", "*.md"]``): the folder to walk and the pattern's rest."""
    parts = PurePosixPath(given).parts
    first = next(i for i, part in enumerate(parts) if _WILDCARD.search(part))
    root = Path(*parts[:first]) if first else Path(".")
    if not root.is_dir():
        raise TreeError(f"{given} matches no file: {root} is not a folder")
    return root, list(parts[first:])


def _walk(root: Path, pattern: list[str] | None, include: Sequence[str], exclude: Sequence[str],
          out: Path) -> Selection:
    top, out_dir = root.resolve(), out.resolve()
    if top == out_dir:
        raise TreeError(f"--out {out} is the folder {root} itself: its translations would be read as input "
                        "on the next run; give another folder (a sub-folder of it is fine)")
    documents, unknown, outside, failed = [], [], [], []
    stack = [(root, PurePosixPath())]
    while stack:
        folder, below = stack.pop()
        try:
            entries = sorted(os.scandir(folder), key=lambda e: e.name)
        except OSError as exc:
            failed.append((folder, f"cannot list the folder: {exc.strerror or exc}"))
            continue
        for entry in entries:
            relative, path = below / entry.name, Path(entry.path)
            if entry.name.startswith(".") or any(matches(p, relative) for p in exclude):
                continue
            if entry.is_symlink():
                try:
                    target = path.resolve()
                except (OSError, RuntimeError):  # a symlink loop
                    outside.append(path)
                    continue
                if not target.is_relative_to(top):
                    outside.append(path)
                    continue
                if target.is_dir():  # inside the tree: its files are reached by their own path
                    continue
            elif entry.is_dir(follow_symlinks=False):
                # the output folder, and that of any earlier run (it holds a state file), hold translations
                if path.resolve() != out_dir and not (path / STATE_FILE).exists():
                    stack.append((path, relative))
                continue
            elif not entry.is_file(follow_symlinks=False):  # sockets, pipes, devices
                unknown.append(path)
                continue
            if pattern is not None and not _match_parts(pattern, relative.parts):
                continue
            if include and not any(matches(p, relative) for p in include):
                continue
            if relative.suffix.lower() in FORMAT_EXTENSIONS:
                documents.append(Document(path, relative))
            else:
                unknown.append(path)
    documents.sort(key=lambda d: d.relative.parts)
    return Selection(tuple(documents), tuple(unknown), tuple(outside), tuple(failed))


def matches(pattern: str, relative: PurePosixPath) -> bool:
    """Whether an ``--include`` / ``--exclude`` pattern matches a path relative to its folder.
    Without a ``/`` it matches any one name in the path (``*.po``, ``drafts``); with one it matches
    the path from the folder down, or a folder on it (``guide/*.md``, ``guide/drafts``); ``*`` stays
    within one name, ``**`` spans any number of folders (``guide/**/*.md``)."""
    parts = [p for p in PurePosixPath(pattern).parts if p != "/"]
    if len(parts) == 1:
        return any(fnmatchcase(name, parts[0]) for name in relative.parts)
    return any(_match_parts(parts, relative.parts[:end]) for end in range(1, len(relative.parts) + 1))


def _match_parts(pattern: Sequence[str], parts: Sequence[str]) -> bool:
    if not pattern:
        return not parts
    if pattern[0] == "**":
        return any(_match_parts(pattern[1:], parts[start:]) for start in range(len(parts) + 1))
    return bool(parts) and fnmatchcase(parts[0], pattern[0]) and _match_parts(pattern[1:], parts[1:])


def file_sha256(path: Path) -> str | None:
    """The sha256 of a file's bytes; None when it cannot be read (it then fails when translated)."""
    digest = hashlib.sha256()
    try:
        with open(path, "rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
    except OSError:
        return None
    return digest.hexdigest()


class BulkRun:
    """One run over selected documents: which are up to date, what happened to each, the state that
    lets the next run skip them, and the summary at the end. ``request``: everything besides the
    source text that decides its translation (JSON); a document is up to date when the state file
    holds its sha256 and this request, and its translation is still there. ``out`` None: nothing
    is written to disk (``nmt submit --wait`` to the terminal), so nothing is skipped."""

    def __init__(self, command: str, selection: Selection, out: Path | None, request: Mapping[str, Any],
                 force: bool = False) -> None:
        self.command, self.out = command, out
        self.request = json.loads(json.dumps(request))  # as the state file will give it back
        self.done = self.up_to_date = 0
        self.unknown, self.outside = len(selection.unknown), len(selection.outside)
        self.failures: list[tuple[Path, str]] = list(selection.failed)
        self._documents = {d.path: d for d in selection.documents}
        self._hashes: dict[Path, str | None] = {}
        self._state = _StateFile(out / STATE_FILE) if out is not None else None
        self.pending: list[Document] = []
        for document in selection.documents:
            digest = self._hashes[document.path] = file_sha256(document.path) if out is not None else None
            if not force and self._current(document, digest):
                self.up_to_date += 1
            else:
                self.pending.append(document)
        self._attempted = len(self.pending) + len(selection.failed)

    def _current(self, document: Document, digest: str | None) -> bool:
        entry = self._state.entries.get(document.key) if self._state and digest else None
        return (entry is not None and entry.get("sha256") == digest and entry.get("request") == self.request
                and isinstance(entry.get("output"), str) and (self.out / entry["output"]).is_file())

    def folder(self, path: Path) -> Path:
        """The folder ``path``'s translation goes in: its place in the mirrored tree."""
        return self.out.joinpath(*self._documents[path].relative.parent.parts)

    def finished(self, path: Path, output: Path | None = None, signature: str | None = None) -> None:
        """``path`` is translated into ``output`` (by the bundle of ``signature``): recorded at once,
        so an interrupted run resumes after it."""
        self.done += 1
        if self._state is not None and output is not None:
            self._state.record({"file": self._documents[path].key, "sha256": self._hashes[path],
                                "request": self.request, "output": Path(output).relative_to(self.out).as_posix(),
                                "signature": signature})

    def failed(self, path: Path, reason: str) -> None:
        self.failures.append((Path(path), reason))

    def close(self) -> None:
        if self._state is not None:
            self._state.compact()

    def summary(self) -> list[str]:
        """The lines the run ends with: its counts, then each failure on a line of its own."""
        counts = [f"{self.done} done", f"{self.up_to_date} up to date (skipped)",
                  f"{self.unknown} of unknown kind (skipped)"]
        if self.outside:
            counts.append(f"{self.outside} symlink{'s' if self.outside != 1 else ''} out of the folder (skipped)")
        lines = ["files: " + ", ".join(counts + [f"{len(self.failures)} failed"])]
        if self.failures:
            lines.append(f"{len(self.failures)} of {self._attempted} files failed:")
            lines += [f"failed {path}: {reason}" for path, reason in self.failures]
        return [f"nmt {self.command}: {line}" for line in lines]

    @property
    def exit_status(self) -> int:
        return 1 if self.failures else 0


class _StateFile:
    """One JSON line per finished document, appended as each finishes (a rewrite of the whole file
    after each of 10,000 files would write gigabytes); rewritten atomically, one line per document,
    when a run starts and ends. A line cut short by an interrupted run is dropped on reading."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.entries: dict[str, dict[str, Any]] = {}
        try:
            lines = path.read_text(encoding="utf-8").splitlines()
        except (OSError, UnicodeDecodeError):  # none yet, or unreadable: everything is translated again
            lines = []
        for line in lines:
            try:
                entry = json.loads(line)
                self.entries[entry["file"]] = entry
            except (ValueError, KeyError, TypeError):
                continue
        if lines:
            self.compact()  # appends then start on a clean last line

    def record(self, entry: dict[str, Any]) -> None:
        self.entries[entry["file"]] = entry
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with open(self.path, "a", encoding="utf-8") as handle:
            handle.write(json.dumps(entry, ensure_ascii=False) + "\n")

    def compact(self) -> None:
        write_atomically(self.path, "".join(json.dumps(e, ensure_ascii=False) + "\n" for e in self.entries.values()))
