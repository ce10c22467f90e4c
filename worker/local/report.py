"""The HTML report of translated documents (``nmt translate --report``): one self-contained file,
source and translation side by side per segment, with flags, confidence and word alignment on hover.

Everything from the documents is escaped into text or attribute values, and a Content-Security-Policy
allows only this module's own script (by hash) and no network at all, so the file is safe to open
from disk whatever the documents hold. The page is static HTML; its script only reacts to events
(one delegated hover handler, one filter stylesheet), so 10,000 segments cost nothing per hover.
"""
from __future__ import annotations

import base64
import hashlib
import html
import json
from pathlib import Path
from typing import Any, Mapping, Sequence

from queue_config.outputs import write_atomically
from queue_config.summary import FlagSummary
from worker.text.segment import FLAGS, word_spans

Document = tuple[str, Mapping[str, Any]]  # (name, DocumentResult.to_json())



def render_report(documents: Sequence[Document], title: str = "Translation report") -> str:
    """The report page for ``documents``, in order, as one HTML string."""
    summary = summarize(documents)
    script_hash = base64.b64encode(hashlib.sha256(_SCRIPT.encode("utf-8")).digest()).decode("ascii")
    csp = (f"default-src 'none'; script-src 'sha256-{script_hash}'; style-src 'unsafe-inline'; "
           "base-uri 'none'; form-action 'none'")
    sections = "\n".join(_document_html(number, name, payload)
                         for number, (name, payload) in enumerate(documents, 1))
    return (
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
        f"<meta http-equiv=\"Content-Security-Policy\" content=\"{csp}\">\n"
        "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
        f"<title>{_text(title)}</title>\n<style>{_CSS}</style>\n</head>\n<body>\n"
        f"{_header_html(title, summary)}\n<main>\n{sections}\n</main>\n"
        f"<script type=\"application/json\" id=\"report-data\">{script_json(summary)}</script>\n"
        f"<script>{_SCRIPT}</script>\n</body>\n</html>\n"
    )


def write_report(path: str | Path, documents: Sequence[Document]) -> None:
    """Write ``render_report(documents)`` to ``path`` atomically, creating its directory."""
    write_atomically(Path(path), render_report(documents))


def summarize(documents: Sequence[Document]) -> dict[str, Any]:
    """The header's figures: bundles used, segment and flag counts, mean confidence (None: no
    segment has one). Also embedded in the page as JSON (``#report-data``) for other tools."""
    counts = FlagSummary()
    for _, payload in documents:
        counts.add(payload.get("segments", ()))
    bundles = []
    for _, payload in documents:
        provenance = payload.get("provenance") or {}
        bundle = {key: provenance.get(key) for key in ("bundle", "signature", "source_language", "target_language")}
        if bundle not in bundles:
            bundles.append(bundle)
    return {
        "documents": [{"name": name, "segments": len(payload.get("segments", ())),
                       "warnings": len(payload.get("warnings") or ())} for name, payload in documents],
        "bundles": bundles,
        "segments": counts.segments,
        "flagged": counts.flagged,
        "flags": {flag: counts.flags[flag] for flag in _flag_order(counts.flags)},
        "mean_confidence": None if counts.mean_confidence is None else round(counts.mean_confidence, 4),
        "with_confidence": counts.with_confidence,
    }


def script_json(value: Any) -> str:
    """``value`` as JSON that cannot end the ``<script>`` element holding it: every ``<`` is
    written ``\\u003c`` (which covers ``</script>`` and ``<!--``); still valid JSON."""
    return json.dumps(value, ensure_ascii=False).replace("<", "\\u003c")


def relative_spans(text: str, spans: Sequence[Sequence[int]]) -> list[tuple[int, int]]:
    """The word spans of a segment as offsets into its own ``text``. A document's segments carry
    offsets into the whole document; the first word starts at ``text``'s first non-space character,
    which gives the shift. Spans that do not fit ``text`` (an older or hand-edited payload) are
    replaced by its whitespace-separated words, which is how the engine counts words."""
    words = word_spans(text)
    if not spans or not words:
        return words
    try:
        shift = int(spans[0][0]) - words[0][0]
        shifted = [(int(a) - shift, int(b) - shift) for a, b in spans]
    except (TypeError, ValueError):
        return words
    previous = 0
    for start, end in shifted:
        if not previous <= start < end <= len(text) or text[start:end] != text[start:end].strip():
            return words
        previous = end
    return shifted


def _header_html(title: str, summary: Mapping[str, Any]) -> str:
    bundles = "; ".join(
        f"<b>{_text(b['bundle'] or '?')}</b> <code>{_text(b['signature'] or '?')}</code> "
        f"{_text(b['source_language'] or '?')}&rarr;{_text(b['target_language'] or '?')}"
        for b in summary["bundles"]) or "no documents"
    flags = "".join(f'<span class="badge" data-flag="{_text(f)}">{_text(f)} <b>{n}</b></span>'
                    for f, n in summary["flags"].items())
    options = "".join(f'<option value="{_text(f)}">{_text(f)} ({n})</option>' for f, n in summary["flags"].items())
    mean, known = summary["mean_confidence"], summary["with_confidence"]
    partial = f" over {known} segments" if 0 < known < summary["segments"] else ""
    return (
        f'<header>\n<h1>{_text(title)}</h1>\n<p class="bundle">{bundles}</p>\n<p class="counts">'
        f'<span id="count-documents">{_plural(len(summary["documents"]), "document")}</span> '
        f'<span id="count-segments">{_plural(summary["segments"], "segment")}</span> '
        f'<span id="count-flagged"><b>{summary["flagged"]}</b> flagged</span> '
        f'<span id="mean-confidence">mean confidence {_confidence_html(mean)}{partial}</span></p>\n'
        f'<p class="flags" id="flag-counts">{flags or "no flags"}</p>\n'
        '<p class="controls"><label><input type="checkbox" id="only-flagged"> only flagged</label> '
        f'<label>flag <select id="flag-filter"><option value="">any</option>{options}</select></label> '
        '<span class="hint">hover a word to see its aligned words</span></p>\n</header>'
    )


def _document_html(number: int, name: str, payload: Mapping[str, Any]) -> str:
    segments = payload.get("segments") or ()
    own = {w for s in segments for w in s.get("warnings") or ()}
    loose = [w for w in payload.get("warnings") or () if w not in own]  # warnings no segment carries
    warnings = "".join(f"<li>{_text(w)}</li>" for w in loose)
    rows = "\n".join(_segment_html(index, segment) for index, segment in enumerate(segments, 1))
    provenance = payload.get("provenance") or {}
    columns = (f'<div class="cols"><span># conf.</span><span>source {_text(provenance.get("source_language") or "")}</span>'
               f'<span>translation {_text(provenance.get("target_language") or "")}</span><span>flags</span></div>\n')
    return (f'<section class="doc" id="doc-{number}">\n<h2>{_text(name)} <small>{_plural(len(segments), "segment")}'
            f'</small></h2>\n' + (f'<ul class="warnings">{warnings}</ul>\n' if warnings else "")
            + (columns if segments else "")
            + (rows or '<p class="empty">no segments</p>') + "\n</section>")


def _segment_html(number: int, segment: Mapping[str, Any]) -> str:
    """One row: number and confidence, source, translation, flag badges, then any warnings. The
    alignment travels in ``data-align`` as Pharaoh pairs; words are ``<span data-i>`` children."""
    source, translation = str(segment.get("source", "")), str(segment.get("translation", ""))
    flags = [str(f) for f in segment.get("flags") or ()]
    details = segment.get("details") or {}
    badges = "".join(f'<span class="badge" data-flag="{_text(f)}">{_text(f)}</span>' for f in flags)
    warnings = "".join(f'<div class="warn">{_text(w)}</div>' for w in segment.get("warnings") or ())
    title = f' title="{_text(json.dumps(details, ensure_ascii=False))}"' if details else ""
    return (
        f'<div class="seg" data-flags="{_text(" ".join(flags))}" data-align="{_text(segment.get("alignment") or "")}">'
        f'<div class="meta"><span class="n">{number}</span>{_confidence_html(segment.get("confidence"))}</div>'
        f'<div class="src">{_words_html(source, segment.get("source_words") or ())}</div>'
        f'<div class="tgt">{_words_html(translation, segment.get("target_words") or ())}</div>'
        f'<div class="flags"{title}>{badges}</div>{warnings}</div>'
    )


def _words_html(text: str, spans: Sequence[Sequence[int]]) -> str:
    """``text`` escaped, each word wrapped in ``<span data-i="k">``; the text between words kept."""
    parts, last = [], 0
    for index, (start, end) in enumerate(relative_spans(text, spans)):
        parts.append(f'{_text(text[last:start])}<span data-i="{index}">{_text(text[start:end])}</span>')
        last = end
    parts.append(_text(text[last:]))
    return "".join(parts)


def _confidence_html(confidence: float | None) -> str:
    """The number, coloured from red (0) through yellow to green (1); grey "n/a" when unknown."""
    if confidence is None:
        return '<span class="conf na">n/a</span>'
    value = min(max(float(confidence), 0.0), 1.0)
    return f'<span class="conf" style="background:hsl({round(120 * value)},70%,38%)">{value:.2f}</span>'


def _flag_order(counts: Mapping[str, int]) -> list[str]:
    """Known flags in the pipeline's order, then any others alphabetically."""
    return [f for f in FLAGS if f in counts] + sorted(f for f in counts if f not in FLAGS)


def _plural(n: int, noun: str) -> str:
    return f"<b>{n}</b> {noun}{'' if n == 1 else 's'}"


def _text(value: Any) -> str:
    return html.escape(str(value), quote=True)


_CSS = """
:root{color-scheme:light;--line:#d9dde3;--muted:#5f6b7a;--hl:#ffe066;--hl-self:#9ad0ff}
*{box-sizing:border-box}
body{margin:0;font:15px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,"DejaVu Sans",sans-serif;color:#1d232b;background:#f5f6f8}
header{position:sticky;top:0;z-index:2;background:#fff;border-bottom:1px solid var(--line);padding:.6rem 1.2rem;box-shadow:0 1px 4px rgba(0,0,0,.06)}
h1{font-size:1.25rem;margin:0 0 .2rem}
header p{margin:.25rem 0}
header .counts>span{margin-right:1.1rem}
.bundle code{background:#eef1f5;padding:0 .3em;border-radius:3px}
.controls label{margin-right:1rem}
.hint{color:var(--muted);font-size:.85em}
main{padding:.6rem 1.2rem 3rem}
.doc h2{font-size:1.05rem;margin:1rem 0 .4rem;word-break:break-all}
.doc h2 small{color:var(--muted);font-weight:normal;margin-left:.5rem}
.seg,.cols{display:grid;grid-template-columns:5.6rem minmax(0,1fr) minmax(0,1fr) 14.5rem;gap:.2rem .9rem;padding:.45rem .6rem;
  border:1px solid transparent;border-left-width:4px}
.seg{background:#fff;border:1px solid var(--line);border-left:4px solid var(--line);border-radius:4px;margin:0 0 .3rem;
  content-visibility:auto;contain-intrinsic-size:auto 2.6rem}
.seg:not([data-flags=""]){border-left-color:#e8590c}
.cols{padding-top:0;padding-bottom:.15rem;color:var(--muted);font-size:.8em;text-transform:uppercase;letter-spacing:.04em}
.meta{display:flex;align-items:baseline;gap:.5rem}
.n{color:var(--muted);font-size:.8em;min-width:2.2em;text-align:right;font-variant-numeric:tabular-nums}
.src,.tgt{white-space:pre-wrap;overflow-wrap:anywhere}
.tgt{color:#0b3d66}
.src span,.tgt span{border-radius:3px;cursor:default}
.src span.hl,.tgt span.hl{background:var(--hl);box-shadow:0 0 0 1px #e0b400}
.src span.hl-self,.tgt span.hl-self{background:var(--hl-self)}
.conf{display:inline-block;min-width:2.9em;text-align:center;color:#fff;font-weight:600;font-size:.82em;
  border-radius:3px;padding:0 .3em;font-variant-numeric:tabular-nums}
.conf.na{background:#9aa3ad}
.flags{display:flex;flex-wrap:wrap;align-content:flex-start;gap:.25rem}
.badge{display:inline-block;font-size:.75em;padding:.05em .45em;border-radius:9px;background:#e9ecef;color:#343a40;
  border:1px solid #ced4da;white-space:nowrap}
.badge[data-flag=low_confidence]{background:#fff3bf;border-color:#f2c94c}
.badge[data-flag=language]{background:#d0ebff;border-color:#74c0fc}
.badge[data-flag=restored_span]{background:#e6fcf5;border-color:#63e6be}
.badge[data-flag=untranslated_span],.badge[data-flag=repetition]{background:#ffe3e3;border-color:#ff8787}
.badge[data-flag=glossary_miss]{background:#f3d9fa;border-color:#da77f2}
.warn{grid-column:2/-1;color:#a61e4d;font-size:.85em}
.warn::before{content:"\\26A0  "}
.warnings{color:#a61e4d}
.empty{color:var(--muted)}
"""

# Hover: one delegated listener; a word's row carries its Pharaoh pairs, parsed on first hover and
# cached on the row, so a hover costs the size of its own segment only. Filters: one generated
# stylesheet rule, so the browser, not a loop over 10,000 rows, hides the rows.
_SCRIPT = """
(function () {
  "use strict";
  var lit = [];
  function clear() { lit.forEach(function (e) { e.classList.remove("hl", "hl-self"); }); lit = []; }
  function pairs(row) {
    if (!row._pairs) {
      var p = { src: new Map(), tgt: new Map() };
      (row.getAttribute("data-align") || "").split(" ").forEach(function (pair) {
        var ij = pair.split("-"), i = ij[0], j = ij[1];
        if (ij.length !== 2) return;
        if (!p.src.has(i)) p.src.set(i, []);
        if (!p.tgt.has(j)) p.tgt.set(j, []);
        p.src.get(i).push(j); p.tgt.get(j).push(i);
      });
      row._pairs = p;
    }
    return row._pairs;
  }
  document.addEventListener("mouseover", function (event) {
    var word = event.target.closest ? event.target.closest(".src span[data-i], .tgt span[data-i]") : null;
    clear();
    if (!word) return;
    var side = word.parentElement, row = side.parentElement;
    var fromSource = side.classList.contains("src");
    var other = row.querySelector(fromSource ? ".tgt" : ".src");
    word.classList.add("hl-self"); lit.push(word);
    (pairs(row)[fromSource ? "src" : "tgt"].get(word.getAttribute("data-i")) || []).forEach(function (k) {
      var e = other.children[Number(k)];
      if (e) { e.classList.add("hl"); lit.push(e); }
    });
  });
  var only = document.getElementById("only-flagged"), flag = document.getElementById("flag-filter");
  var sheet = document.createElement("style");
  document.head.appendChild(sheet);
  function filter() {
    var rules = [];
    if (only.checked) rules.push('.seg[data-flags=""]{display:none}');
    if (flag.value) rules.push('.seg:not([data-flags~="' + CSS.escape(flag.value) + '"]){display:none}');
    sheet.textContent = rules.join("\\n");
  }
  only.addEventListener("change", filter);
  flag.addEventListener("change", filter);
  filter();
})();
"""
