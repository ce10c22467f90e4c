"""The job messages on the wire (JSON only): built by the client, parsed and validated by the worker.

``JobRequest`` is what a task receives; ``JobResult`` is what a finished job stores: the same JSON
as ``nmt translate`` writes (``segments``, ``provenance``, ``warnings``) plus the job id and text.
"""
from __future__ import annotations

import base64
import re
from dataclasses import asdict, dataclass, field
from typing import Any, Mapping

from .glossary import GlossaryError, check_terms
from .names import BINARY_FORMATS, FORMATS, valid_language
from .textfiles import DocumentError, check_text

MESSAGE_VERSION = 1
_JOB_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$")
MAX_NAME = 100  # characters of a job name (the output file stem; file systems allow 255 bytes)
_NAME = re.compile(r"[^/\\\x00-\x1f\x7f\ud800-\udfff]{1,%d}" % MAX_NAME)  # and at most 200 bytes of UTF-8
_MODEL = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")


class MessageError(ValueError):
    """A job message is malformed; the message names the field."""


@dataclass(frozen=True)
class JobOptions:
    """Decoding options a job may set, and what its result holds; ``None`` keeps the bundle's default."""

    beam: int | None = None
    n_best: int = 1
    length_penalty: float | None = None
    coverage_penalty: float = 0.0
    max_len_a: float | None = None
    max_len_b: int | None = None
    min_len: int = 0
    no_repeat_ngram: int | None = None  # never repeat an n-gram of this many tokens (0: off)
    attention: bool = False  # include soft attention matrices in the result
    # Refuse (fail) the document when more than this share of its judged segments is in another
    # language than the job's ``src``; None: translate it, copying such segments through flagged.
    refuse_foreign: float | None = None
    translate_sheet_names: bool = False  # a workbook's sheet names are translated too (formulas follow them)

    @classmethod
    def from_json(cls, raw: Any) -> "JobOptions":
        if raw is None:
            return cls()
        if not isinstance(raw, Mapping):
            raise MessageError(f"'options' must be an object, got {type(raw).__name__}")
        unknown = sorted(set(raw) - set(cls.__dataclass_fields__))
        if unknown:
            raise MessageError(f"unknown option(s) {', '.join(map(repr, unknown))}; known: {', '.join(cls.__dataclass_fields__)}")
        values = {}
        for name, value in raw.items():
            values[name] = _check_option(name, value)
        options = cls(**values)
        for name, (low, high) in _OPTION_RANGES.items():
            value = getattr(options, name)
            if value is not None and not low <= value <= high:  # also refuses nan (no comparison holds)
                raise MessageError(f"option '{name}' must be in [{low}, {high}], got {value}")
        if options.n_best > (options.beam or MAX_BEAM):
            raise MessageError(f"option 'n_best' must be in [1, beam], got {options.n_best} with beam {options.beam}")
        if options.max_len_a == 0 and options.max_len_b == 0:
            raise MessageError("options 'max_len_a' and 'max_len_b' are both 0: a translation could have no token")
        if options.no_repeat_ngram == 1:
            raise MessageError(f"option 'no_repeat_ngram' must be 0 (off) or >= 2, got {options.no_repeat_ngram}")
        if options.refuse_foreign is not None and not 0.0 <= options.refuse_foreign < 1.0:  # nan fails too
            raise MessageError(f"option 'refuse_foreign' must be in [0, 1), got {options.refuse_foreign}")
        return options


MAX_BEAM = 64
MAX_TARGET_TOKENS = 1024  # the longest translation of one segment a job may ask for (max_len_b, min_len);
# the engine caps every search at this bound, whatever it is asked
# Inclusive bounds of every numeric option: what a job may allocate stays bounded.
_OPTION_RANGES = {"beam": (1, MAX_BEAM), "n_best": (1, MAX_BEAM), "length_penalty": (0.0, 10.0),
                  "coverage_penalty": (0.0, 10.0), "max_len_a": (0.0, 10.0), "max_len_b": (0, MAX_TARGET_TOKENS),
                  "min_len": (0, MAX_TARGET_TOKENS), "no_repeat_ngram": (0, MAX_TARGET_TOKENS)}
_OPTION_TYPES = {"beam": int, "n_best": int, "length_penalty": float, "coverage_penalty": float,
                 "max_len_a": float, "max_len_b": int, "min_len": int, "attention": bool, "no_repeat_ngram": int,
                 "refuse_foreign": float, "translate_sheet_names": bool}


def _check_option(name: str, value: Any) -> Any:
    kind = _OPTION_TYPES[name]
    if value is None and name in ("beam", "length_penalty", "max_len_a", "max_len_b", "no_repeat_ngram", "refuse_foreign"):
        return None
    if kind is bool:
        ok = isinstance(value, bool)
    elif kind is int:
        ok = isinstance(value, int) and not isinstance(value, bool)
    else:
        ok = isinstance(value, (int, float)) and not isinstance(value, bool)
    if not ok:
        raise MessageError(f"option '{name}' must be {kind.__name__}, got {value!r}")
    return float(value) if kind is float else value


@dataclass(frozen=True)
class JobRequest:
    job_id: str
    src: str
    tgt: str
    text: str | None = None  # the document itself, or
    # a path on storage the workers share: relative to each worker's NMT_INPUT_ROOT (a client with a
    # root of its own sends it so), or absolute (read only if under the worker's root)
    path: str | None = None
    name: str = "document"  # output stem
    options: JobOptions = field(default_factory=JobOptions)
    version: int = MESSAGE_VERSION
    model: str | None = None  # a bundle name the workers serve; None: the pair's default model
    # (source term, target term) pairs forced on the translation (queue_config.glossary); at most MAX_TERMS
    glossary: tuple[tuple[str, str], ...] = ()
    format: str | None = None  # one of names.FORMATS; None: plain text, or a path's extension

    def to_json(self) -> dict[str, Any]:
        payload = asdict(self)
        payload["options"] = {k: v for k, v in asdict(self.options).items() if v != getattr(JobOptions(), k)}
        if self.glossary:
            payload["glossary"] = [list(pair) for pair in self.glossary]
        else:
            del payload["glossary"]  # requests without one stay readable by workers that predate glossaries
        if self.format is None:
            del payload["format"]  # likewise for formats
        return payload

    @classmethod
    def from_json(cls, raw: Any) -> "JobRequest":
        if not isinstance(raw, Mapping):
            raise MessageError(f"a job request must be a JSON object, got {type(raw).__name__}")
        known = set(cls.__dataclass_fields__)
        unknown = sorted(set(raw) - known)
        if unknown:
            raise MessageError(f"unknown field(s) {', '.join(map(repr, unknown))} in job request")
        version = raw.get("version", MESSAGE_VERSION)
        if version != MESSAGE_VERSION:
            raise MessageError(f"unsupported message version {version!r}; this worker reads version {MESSAGE_VERSION}")
        job_id = raw.get("job_id")
        if not isinstance(job_id, str) or not _JOB_ID.match(job_id):
            raise MessageError(f"'job_id' must be 1-128 characters of letters, digits, '_', '.', '-'; got {job_id!r}")
        for side in ("src", "tgt"):
            code = raw.get(side)
            if not isinstance(code, str) or not valid_language(code):
                raise MessageError(f"'{side}' must be a language code such as 'en', got {code!r}")
        text, path = raw.get("text"), raw.get("path")
        if (text is None) == (path is None):
            raise MessageError("a job needs exactly one of 'text' or 'path'")
        if text is not None and not isinstance(text, str):
            raise MessageError(f"'text' must be a string, got {type(text).__name__}")
        if text is not None:
            try:
                check_text(text)
            except DocumentError as exc:
                raise MessageError(f"'text' {exc}") from None
        if path is not None and (not isinstance(path, str) or not path or "\x00" in path):
            raise MessageError(f"'path' must be a non-empty string without NUL characters, got {str(path)[:80]!r}")
        name = raw.get("name", "document")
        if (not isinstance(name, str) or not _NAME.fullmatch(name) or name.startswith(".")
                or len(name.encode("utf-8")) > 2 * MAX_NAME):
            raise MessageError(f"'name' must be a file stem of 1-{MAX_NAME} characters without '/', '\\', "
                               f"control characters or a leading '.', got {str(name)[:80]!r}")
        model = raw.get("model")
        if model is not None and (not isinstance(model, str) or not _MODEL.match(model)):
            raise MessageError(f"'model' must be a bundle name such as 'en-de' (letters, digits, '_', '.', '-'), got {model!r}")
        glossary = raw.get("glossary")
        glossary = [] if glossary is None else glossary
        if not isinstance(glossary, (list, tuple)):
            raise MessageError(f"'glossary' must be a list of [source, target] pairs, got {type(glossary).__name__}")
        try:
            glossary = check_terms(glossary, "'glossary'")
        except GlossaryError as exc:
            raise MessageError(str(exc)) from None
        fmt = raw.get("format")
        if fmt is not None and fmt not in FORMATS:
            raise MessageError(f"'format' must be one of {', '.join(FORMATS)}, got {str(fmt)[:40]!r}")
        if fmt in BINARY_FORMATS and text is not None:
            try:
                base64.b64decode(text, validate=True)
            except ValueError:
                raise MessageError(f"'text' of a {fmt} job must be the file's bytes in base64") from None
        return cls(job_id, raw["src"], raw["tgt"], text, path, name, JobOptions.from_json(raw.get("options")), version,
                   model, glossary, fmt)


def batchable(request: JobRequest, max_bytes: int) -> bool:
    """A job that may share its batches with other jobs: plain text of at most ``max_bytes`` sent in
    the message. Clients send these to the pair's batch queue; a bigger one keeps its progress
    updates, cancellation checks and chunks."""
    return request.text is not None and request.format in (None, "txt") and len(request.text.encode("utf-8")) <= max_bytes


@dataclass(frozen=True)
class AlignedSegment:
    source: str
    translation: str
    score: float
    alignment: str  # Pharaoh "i-j ..." (source word i, target word j, from 0)
    source_words: tuple[tuple[int, int], ...]  # character spans in the source document
    target_words: tuple[tuple[int, int], ...]  # character spans in the translated document
    warnings: tuple[str, ...] = ()
    confidence: float | None = None  # the quality estimate in [0, 1]
    flags: tuple[str, ...] = ()  # what a reader should check: low_confidence, language, untranslated_span, ...
    details: Mapping[str, Any] = field(default_factory=dict)  # the facts behind the flags (spans, offsets)
    cached: bool = False  # taken from the segment cache (or a repeat within the job), not decoded again

    @property
    def pairs(self) -> list[tuple[int, int]]:
        return [tuple(int(x) for x in p.split("-")) for p in self.alignment.split()]  # type: ignore[misc]


@dataclass(frozen=True)
class JobResult:
    job_id: str
    text: str  # the translated document (a binary format's file: base64, see ``data``)
    segments: tuple[AlignedSegment, ...]
    provenance: Mapping[str, Any]
    warnings: tuple[str, ...] = ()
    raw: Mapping[str, Any] = field(default_factory=dict, repr=False)  # the JSON as stored

    @property
    def model(self) -> str | None:
        """The name of the bundle that made this result (its signature is ``provenance['signature']``)."""
        return self.provenance.get("model") or self.provenance.get("bundle")

    @property
    def data(self) -> bytes:
        """The translated file as bytes: decoded from base64 for a binary format (DOCX), else UTF-8."""
        if self.raw.get("format") in BINARY_FORMATS:
            return base64.b64decode(self.text)
        return self.text.encode("utf-8")

    @classmethod
    def from_json(cls, raw: Mapping[str, Any]) -> "JobResult":
        segments = tuple(
            AlignedSegment(s["source"], s["translation"], float(s["score"]), s["alignment"],
                           tuple(tuple(w) for w in s.get("source_words", ())),
                           tuple(tuple(w) for w in s.get("target_words", ())), tuple(s.get("warnings", ())),
                           s.get("confidence"), tuple(s.get("flags", ())), dict(s.get("details", {})),
                           bool(s.get("cached", False)))
            for s in raw["segments"]
        )
        return cls(raw["job_id"], raw["text"], segments, raw["provenance"], tuple(raw.get("warnings", ())), raw)
