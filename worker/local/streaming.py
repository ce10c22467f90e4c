"""Big plain-text files, translated in slices and written as they go (``nmt translate``).

A file of more than ``nmt translate --stream-above`` sentences (5,000) is never held whole in results: each slice of
``SLICE`` sentences is translated, its text appended to ``<stem>.<tgt>.txt.partial`` and its
segments to ``<stem>.<tgt>.jsonl`` (one JSON object per line), and dropped. Memory stays bounded
by a slice, and the JSON is compact.

An interrupted run resumes: the ``.jsonl`` header names the source (SHA-256) and the bundle; its
complete segment lines are kept (a line cut short by the interruption is dropped), the partial
text is rebuilt from them, and translation goes on at the next sentence. The last line says the
file is complete, and the ``.txt`` gets its final name only then.

    {"kind": "header", "source_file": ..., "source_sha256": ..., "sentences": n, "bundle": signature}
    {"kind": "segment", "index": i, ...the segment, offsets in the source and the translated file}
    {"kind": "end", "provenance": {...}, "warnings": [...]}
"""
from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any, Callable

from worker.text.layout import Layout

SLICE = 1000  # sentences translated and written at a time (nmt translate --stream-above sets when to stream)


def translate_streaming(translator, options, path: Path, layout: Layout, out_dir: Path, stem: str,
                        with_attention: bool = False, text_options=None,
                        progress: Callable[[int], None] | None = None,
                        summarize: Callable[[list[dict]], None] | None = None,
                        slice_sentences: int = SLICE) -> tuple[Path, int]:
    """Translate ``layout`` (the file at ``path``) slice by slice into ``out_dir``; returns the
    translated file and the number of sentences found already done (resumed)."""
    target = translator.target_language
    final = out_dir / f"{stem}.{target}.txt"
    partial = out_dir / f"{stem}.{target}.txt.partial"
    lines_path = out_dir / f"{stem}.{target}.jsonl"
    header = {"kind": "header", "source_file": str(path), "sentences": len(layout.sentences),
              "source_sha256": hashlib.sha256(layout.text.encode("utf-8")).hexdigest(),
              "bundle": translator.bundle.signature}
    done, complete = _resume_point(lines_path, header)
    if complete and final.exists():
        return final, len(done)
    with open(lines_path, "w", encoding="utf-8") as out:  # the header and the complete lines kept
        out.write(json.dumps(header, ensure_ascii=False) + "\n")
        out.writelines(line + "\n" for line, _ in done)
    gaps = layout.gaps
    with open(partial, "w", encoding="utf-8") as text_out:  # the partial text, rebuilt from them
        text_out.write(gaps[0])
        for index, (_, translation) in enumerate(done):
            text_out.write(translation + gaps[index + 1])
    written = len(gaps[0]) + sum(len(t) + len(gaps[i + 1]) for i, (_, t) in enumerate(done))  # characters
    resumed, warnings, provenance = len(done), [], {}
    del done
    with open(lines_path, "a", encoding="utf-8") as lines_out, open(partial, "a", encoding="utf-8") as text_out:
        for start in range(resumed, len(layout.sentences), slice_sentences):
            end = min(start + slice_sentences, len(layout.sentences))
            lead = gaps[0] if start == 0 else ""  # a slice's leading gap was written after the one before
            piece = Layout(layout.text, layout.sentences[start:end], (lead, *gaps[start + 1:end + 1]))
            result = translator.translate_layouts([piece], options, with_attention, progress=progress,
                                                  text_options=text_options)[0]
            segments, base = [], written - len(lead)  # where the slice's text (with its lead) would start
            for offset, segment in enumerate(result.segments, start):
                record = segment.shifted(0, base).to_json()
                segments.append(record)
                warnings += record.get("warnings", [])
                lines_out.write(json.dumps({"kind": "segment", "index": offset, **record}, ensure_ascii=False) + "\n")
            text_out.write(result.translation[len(lead):])
            written += len(result.translation) - len(lead)
            lines_out.flush()
            text_out.flush()
            provenance = result.provenance
            if summarize is not None:
                summarize(segments)
        lines_out.write(json.dumps({"kind": "end", "provenance": provenance, "warnings": warnings},
                                   ensure_ascii=False) + "\n")
    os.replace(partial, final)
    return final, resumed


def _resume_point(lines_path: Path, header: dict[str, Any]) -> tuple[list[tuple[str, str]], bool]:
    """The complete segment lines of an earlier run of the same source and bundle, as (line,
    translation) in order, and whether that run finished; nothing if there is none."""
    if not lines_path.exists():
        return [], False
    done: list[tuple[str, str]] = []
    with open(lines_path, encoding="utf-8") as lines:
        try:
            first = json.loads(next(lines))
        except (StopIteration, ValueError):
            return [], False
        if any(first.get(k) != header[k] for k in ("source_sha256", "sentences", "bundle")):
            return [], False
        for line in lines:
            try:
                record = json.loads(line)
            except ValueError:
                break  # cut short by the interruption
            if record.get("kind") == "end":
                return done, len(done) == header["sentences"]
            if record.get("kind") != "segment" or record.get("index") != len(done):
                break
            done.append((line.rstrip("\n"), record["translation"]))
    return done, False
