"""``nmt translate`` and ``nmt eval``: local bulk translation and scoring with a bundle (no torch,
no Redis)."""
from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path
from typing import Callable

from queue_config.document_tree import BulkRun, TreeError, file_sha256, select_documents
from queue_config.outputs import output_stem, write_atomically, write_translation
from queue_config.summary import FlagSummary
from queue_config.textfiles import DocumentError, decode_document, decode_text, read_text_file
from worker.engine.bundle import DEFAULT_BUNDLE, resolve_bundle_path
from worker.formats import FORMATS


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    t = subparsers.add_parser("translate", help="translate files (or stdin) with a bundle",
                              description="Translate documents: plain text, or HTML, XLIFF, subtitles and gettext "
                                          "catalogues by extension or --format. Without FILEs, read stdin and "
                                          "write one output line per input line to stdout.")
    _engine_arguments(t)
    t.add_argument("files", nargs="*", metavar="FILE",
                   help="UTF-8 documents (plain text, or a format: see --format), folders (walked for files of known "
                        "formats) or quoted glob patterns such as 'docs/**/*.md'")
    t.add_argument("--out", help="output directory for <stem>.<tgt>.txt (or the format's extension) and "
                                 "<stem>.<tgt>.json, a folder's files in a tree mirroring it (required with FILEs)")
    t.add_argument("--include", action="append", default=[], metavar="GLOB",
                   help="in folders, take only files matching GLOB (relative to the folder; repeatable)")
    t.add_argument("--exclude", action="append", default=[], metavar="GLOB",
                   help="in folders, leave out files and folders matching GLOB (repeatable)")
    t.add_argument("--force", action="store_true",
                   help="translate every file again (default: skip a file whose text, bundle and options are "
                        "those recorded in --out by an earlier run)")
    t.add_argument("--stream-above", type=int, default=STREAM_SENTENCES, metavar="SENTENCES",
                   help="a plain-text file of more sentences is translated in slices of up to 1,000 and written as "
                        "it goes: <stem>.<tgt>.jsonl (one segment per line) instead of .json, memory bounded by a "
                        "slice, and an interrupted run resumes where it stopped (default: %(default)s)")
    t.add_argument("--format", choices=FORMATS, default=None,
                   help="read every FILE as this format (default: by extension: .srt/.vtt subtitles, .po/.pot gettext "
                        "catalogues, .html/.htm pages, .xlf/.xliff, anything else plain UTF-8 text); a file in a format is written "
                        "back in it")
    t.add_argument("--translate-sheet-names", action="store_true",
                   help="in workbooks (.xlsx, .xlsm), translate the sheet names too, and every formula, defined name, "
                        "validation, conditional format and chart that names a sheet with them (default: names kept)")
    t.add_argument("--encoding", metavar="NAME", default=None,
                   help="read files (and stdin) in this encoding (latin-1, cp1252, ...): for files that declare none "
                        "and are not UTF-8; it goes over a declaration, a byte-order mark goes over it (default: what "
                        "a file declares: byte-order mark, XML declaration, HTML <meta> charset, PO header charset; "
                        "else UTF-8). Outputs are always UTF-8, their declarations saying so")
    t.add_argument("--attention", action="store_true", help="include the soft attention matrix in the JSON")
    t.add_argument("--src", dest="src_language", default=None, help="source language (checked against the bundle's)")
    t.add_argument("--tgt", dest="tgt_language", default=None,
                   help="target language: one of the bundle's pairs (a multilingual model's target tokens); "
                        "default: its first")
    t.add_argument("--refuse-foreign", type=float, default=None, metavar="SHARE",
                   help="with FILEs: refuse a file (not translated, reported, exit status 1) when more than SHARE (0-1) "
                        "of its segments of 5+ words are in another language than the model's source")
    t.add_argument("--report", metavar="PATH", help="also write an HTML report of every segment (flags, confidence, "
                                                    "word alignment on hover) to PATH")
    t.set_defaults(handler=run_translate)

    e = subparsers.add_parser("eval", help="score a bundle on a test set (sacreBLEU)")
    _engine_arguments(e)
    e.add_argument("--src", required=True, help="source file, one sentence a line (plain or .gz)")
    e.add_argument("--ref", required=True, help="reference file, one sentence a line (plain or .gz)")
    e.add_argument("--hyp-out", help="also write the hypotheses to this file")
    e.add_argument("--json", action="store_true", help="print a JSON object as the last line")
    e.add_argument("--record", metavar="NAME", help="also store the scores in the bundle's manifest as its score on "
                                                 "test set NAME (scores.test.NAME)")
    e.set_defaults(handler=run_eval)

    c = subparsers.add_parser("calibrate", help="fit a bundle's confidence model to sentence chrF on dev sets",
                              description="Translate dev sets, fit the confidence model (worker/text/quality.py) to "
                                          "sentence chrF, report Spearman and AUROC, and with --write store the fit "
                                          "in the bundle's manifest. Check on a domain the fit did not see.")
    _engine_arguments(c)
    c.add_argument("--fit", nargs=2, action="append", required=True, metavar=("SRC", "REF"),
                   help="a dev set to fit on: source and reference files, one sentence a line (repeatable)")
    c.add_argument("--check", nargs=2, action="append", default=[], metavar=("SRC", "REF"),
                   help="a dev set to measure on, of another domain (repeatable)")
    c.add_argument("--lines", type=int, default=1000, help="first N lines of each set")
    c.add_argument("--features", choices=("all", "base", "agreement", "char", "char-ratio"), default="all",
                   help="the features the fit weighs: all (the default fit's), base (the eleven of earlier fits), "
                        "agreement (all and the n-best agreement), char (the log-probability per output "
                        "character alone: ranks domains the fit did not see best, docs/quality.md), "
                        "char-ratio (it and the length ratio)")
    c.add_argument("--write", action="store_true", help="store the fit in the bundle's manifest.json")
    c.set_defaults(handler=run_calibrate)


def _engine_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--bundle", default=None, help=f"model bundle directory (default: {DEFAULT_BUNDLE})")
    p.add_argument("--beam", type=int, default=None, help="beam size (default: the bundle's)")
    p.add_argument("--n-best", type=int, default=1,
                   help="keep the N best translations of each segment (JSON 'n_best'); on stdin, print N lines per "
                        "input line as 'LINE ||| translation ||| score' (Moses n-best format, lines from 0)")
    p.add_argument("--length-penalty", type=float, default=None,
                   help="length normalisation alpha: GNMT's, or score / length ** alpha for imported models "
                        "(default: the bundle's)")
    p.add_argument("--max-length", type=int, default=None, metavar="N",
                   help="at most N target tokens per segment, eos excluded, for any bundle (default: the bundle's "
                        "a * source length + b)")
    p.add_argument("--coverage-penalty", type=float, default=0.0, help="GNMT beta")
    p.add_argument("--no-repeat-ngram", type=int, default=None, metavar="N",
                   help="never repeat an n-gram of N subword tokens within a translation (0: off; default: the bundle's)")
    p.add_argument("--device", choices=("auto", "cpu", "cuda"), default="auto",
                   help="ONNX Runtime provider: auto takes CUDA when it is usable, cuda refuses to fall back to the CPU")
    p.add_argument("--threads", type=int, default=0,
                   help="ONNX Runtime intra-op threads per batch (default on CPU: 1, with --batch-workers = cores)")
    p.add_argument("--batch-workers", type=int, default=0,
                   help="batches decoded at once, one thread each (default on CPU: one per core; GPU: 1)")
    p.add_argument("--max-batch-tokens", type=int, default=6000,
                   help="padded source tokens per decoding batch, before beam expansion (default 6000)")
    p.add_argument("--shortlist", choices=("auto", "on", "off"), default="auto",
                   help="lexical shortlist: project each step onto the target pieces likely for the batch's source "
                        "pieces (faster on CPU); auto: as the bundle's manifest says, on: the bundle must have one")
    p.add_argument("--no-protect-spans", action="store_true",
                   help="translate URLs, e-mail addresses, paths, numbers, codes and placeholders like any "
                        "other text (default: they are kept verbatim)")
    p.add_argument("--no-case-handling", action="store_true",
                   help="translate ALL-CAPS and Title Case sentences as they are (default: in sentence case, "
                        "with the case restored in the translation)")
    p.add_argument("--no-language-check", action="store_true",
                   help="translate every segment (default: a segment of 5 or more words identified as another "
                        "language than the model's source is copied through untranslated and flagged 'language')")
    p.add_argument("--glossary", metavar="FILE",
                   help="force these translations of terms: a UTF-8 file of 'source<TAB>target' lines ('#' comments); "
                        "each term applied or missed is reported per segment (flag 'glossary_miss')")


def _text_options(args: argparse.Namespace):
    from nmt.errors import UserError
    from worker.text.glossary import GlossaryError, load_glossary
    from worker.text.pipeline import TextOptions

    try:
        glossary = load_glossary(args.glossary) if args.glossary else None
    except GlossaryError as exc:
        raise UserError(str(exc)) from None
    return TextOptions(protect_spans=not args.no_protect_spans, restore_case=not args.no_case_handling,
                       check_language=not args.no_language_check, glossary=glossary)


def _translator(args: argparse.Namespace):

    from nmt.errors import UserError
    from worker.engine.bundle import BundleError
    from worker.engine.ort_model import CPU, ProviderError, providers_for
    from worker.engine.settings import EngineSettings, local_cpu_settings
    from worker.engine.translator import Translator

    settings = EngineSettings(provider=args.device, intra_op_threads=args.threads, max_batch_tokens=args.max_batch_tokens,
                              batch_workers=args.batch_workers or 1, shortlist=args.shortlist)
    try:
        if not args.batch_workers and providers_for(args.device) == [CPU]:
            settings = local_cpu_settings(settings)
        translator = Translator(resolve_bundle_path(args.bundle), settings)
        source, target = getattr(args, "src_language", None), getattr(args, "tgt_language", None)
        if source and source != translator.bundle.source_language:
            raise UserError(f"the bundle translates {', '.join(translator.bundle.pairs)}, not from {source!r}")
        if target:
            translator = translator.for_target(target)
    except (ProviderError, BundleError) as exc:
        raise UserError(str(exc)) from None
    return translator, translator.search_options(
        n_best=args.n_best, coverage_penalty=args.coverage_penalty, beam=args.beam, length_penalty=args.length_penalty,
        no_repeat_ngram=args.no_repeat_ngram, max_length=args.max_length)


def run_translate(args: argparse.Namespace) -> int:
    try:
        selection = select_documents(args.files, Path(args.out) if args.out else None, args.include, args.exclude)
    except TreeError as exc:
        print(f"nmt translate: error: {exc}", file=sys.stderr)
        return 2
    if args.files and not args.out:
        print("nmt translate: error: --out DIR is required with FILEs", file=sys.stderr)
        return 2
    if args.refuse_foreign is not None and not (args.files and 0.0 <= args.refuse_foreign < 1.0):
        print(f"nmt translate: error: --refuse-foreign takes a share in [0, 1) and FILEs, got {args.refuse_foreign}"
              + ("" if args.files else " without FILEs"), file=sys.stderr)
        return 2
    translator, options = _translator(args)
    summary = FlagSummary()
    reported: list | None = [] if args.report else None  # (name, payload) of each document, for --report

    def collect(name: str, payload: dict) -> None:
        summary.add(payload["segments"])
        if reported is not None:
            reported.append((name, payload))

    if not args.files:
        status = _translate_stream(translator, options, sys.stdin.buffer, sys.stdout, _text_options(args), collect,
                                   args.encoding)
        _write_report(args.report, reported)
        print(f"nmt translate: {summary.line()}", file=sys.stderr)
        return status
    collisions = selection.collision_message(translator.bundle.source_language)
    if collisions:  # refused before anything is translated
        print(f"nmt translate: error: output names collide in {args.out}: {collisions}; "
              "rename them or translate them into separate directories", file=sys.stderr)
        return 2
    if Path(args.out).exists() and not Path(args.out).is_dir():
        print(f"nmt translate: error: --out {args.out} is a file; it must be a directory (made if missing)", file=sys.stderr)
        return 2
    Path(args.out).mkdir(parents=True, exist_ok=True)
    from worker.formats import FormatError, format_of

    run = BulkRun("translate", selection, Path(args.out), _request(args, translator, options), args.force)
    paths = [document.path for document in run.pending]
    try:
        formats = {path: format_of(path, args.format) for path in paths}
    except FormatError as exc:
        print(f"nmt translate: error: {exc}", file=sys.stderr)
        return 2
    plain = [path for path in paths if formats[path] == "txt"]
    try:
        if plain:
            _translate_files(translator, options, plain, run, args.attention, _text_options(args), collect,
                             args.refuse_foreign, summary.add, args.stream_above, args.encoding)
        for path in paths:
            if formats[path] != "txt":
                _translate_formatted(translator, options, path, formats[path], run, _text_options(args), collect,
                                     args.encoding, args.translate_sheet_names)
    finally:
        run.close()
    _write_report(args.report, reported)
    print(f"nmt translate: {summary.line()}", file=sys.stderr)
    for line in run.summary():
        print(line, file=sys.stderr)
    return run.exit_status


def _request(args: argparse.Namespace, translator, options) -> dict:
    """What decides a file's translation besides its text: a file whose text and request are those
    an earlier run recorded in --out is up to date."""
    from dataclasses import asdict

    return {"bundle": translator.bundle.signature, "decoding": asdict(options), "shortlist": args.shortlist,
            "format": args.format, "encoding": args.encoding, "attention": args.attention,
            "refuse_foreign": args.refuse_foreign,
            **({"translate_sheet_names": True} if args.translate_sheet_names else {}),  # earlier runs' records match
            "text": {"protect_spans": not args.no_protect_spans, "restore_case": not args.no_case_handling,
                     "check_language": not args.no_language_check},
            "glossary": file_sha256(Path(args.glossary)) if args.glossary else None}


def _write_report(path: str | None, documents: list | None) -> None:
    if path:
        from worker.local.report import write_report

        write_report(path, documents or [])


STREAM_SENTENCES = 5000  # a plain-text file with more sentences is streamed (worker.streaming)
# Files are translated in groups of about this many sentences: short documents share batches, and
# each group's results are written before the next group is read.
GROUP_SENTENCES = 2000


def _translate_files(translator, options, paths: list[Path], run: BulkRun, with_attention: bool,
                     text_options=None, collect: Callable[[str, dict], None] | None = None,
                     refuse_foreign: float | None = None,
                     summarize: Callable[[list[dict]], None] | None = None, stream_above: int = STREAM_SENTENCES,
                     encoding: str | None = None) -> int:
    """Translate and write each file into ``run.folder(path)``, telling ``run`` of each finished or
    failed; returns how many failed. A file that cannot be read is
    skipped with its reason; a group that fails is retried file by file, so one bad document
    never costs the others their results. ``collect(path, payload)``: called for each file written.
    ``refuse_foreign``: a file with more than this share of its segments in another language is
    refused (counted as failed), not translated. A file of more than ``stream_above``
    sentences is streamed (``worker.streaming``: resumable, ``.jsonl`` instead of ``.json``, not in
    ``collect``); ``summarize(segments)`` sees its segments."""
    from tqdm import tqdm

    from worker.local.streaming import SLICE, translate_streaming
    from worker.text.language import DocumentLanguageError, refuse_foreign_text
    from worker.text.layout import Layout, split_document

    source, target = translator.bundle.source_language, translator.target_language
    failures = counted = 0
    group: list[tuple[Path, Layout]] = []
    with tqdm(total=0, desc="translating", unit="sent", disable=None) as bar:
        def fail(path: Path, what: str, reason: str) -> None:
            nonlocal failures
            failures += 1
            run.failed(path, reason)
            tqdm.write(f"nmt translate: {what} {path}: {reason}", file=sys.stderr)

        def translate(members: list[tuple[Path, Layout]]) -> None:
            try:
                results = translator.translate_layouts([layout for _, layout in members], options, with_attention,
                                                       progress=bar.update, text_options=text_options)
            except Exception as exc:  # noqa: BLE001 - isolated below, or reported for its one file
                if len(members) > 1:
                    for member in members:
                        translate([member])
                    return
                fail(members[0][0], "failed", f"{type(exc).__name__}: {exc}")
                return
            for (path, _), result in zip(members, results):
                payload = result.to_json() | {"source_file": str(path)}
                written, _ = write_translation(run.folder(path), output_stem(path, source), target, result.translation,
                                               payload)
                run.finished(path, written, translator.bundle.signature)
                if collect is not None:
                    collect(str(path), payload)
                for warning in payload["warnings"]:
                    tqdm.write(f"nmt translate: {path}: warning: {warning}", file=sys.stderr)
            bar.n = counted  # the bar counted decoder inputs; sentences split or left empty differ
            bar.refresh()

        pending = 0
        for path in paths:
            try:
                text = read_text_file(path, encoding, "txt")
            except DocumentError as exc:
                fail(path, "skipped", str(exc))
                continue
            layout = split_document(text, source)
            if refuse_foreign is not None:
                try:
                    refuse_foreign_text(text, [s.text for s in layout.sentences], source, refuse_foreign)
                except DocumentLanguageError as exc:
                    fail(path, "refused", str(exc))
                    continue
            sentences = len(layout.sentences)
            bar.total += sentences
            counted += sentences
            bar.refresh()
            if sentences > stream_above:  # a big file: translated in slices, written as it goes
                try:
                    run.folder(path).mkdir(parents=True, exist_ok=True)
                    final, resumed = translate_streaming(
                        translator, options, path, layout, run.folder(path), output_stem(path, source),
                        with_attention, text_options, bar.update, summarize, min(SLICE, stream_above))
                except Exception as exc:  # noqa: BLE001 - reported for its one file; the run resumes it
                    fail(path, "failed", f"{type(exc).__name__}: {exc} (run again to resume)")
                    continue
                run.finished(path, final, translator.bundle.signature)
                tqdm.write(f"nmt translate: {path}: {sentences} sentences streamed to {final} and "
                           f"{final.with_suffix('.jsonl')}" + (f" (resumed after {resumed})" if resumed else ""),
                           file=sys.stderr)
                continue
            group.append((path, layout))
            pending += sentences
            if pending >= GROUP_SENTENCES:
                translate(group)
                group, pending = [], 0
        if group:
            translate(group)
    return failures


def _translate_formatted(translator, options, path: Path, fmt: str, run: BulkRun, text_options=None,
                         collect: Callable[[str, dict], None] | None = None, encoding: str | None = None,
                         translate_sheet_names: bool = False) -> bool:
    """Translate one file in a format (``worker.formats``) and write ``<stem>.<tgt><ext>`` in the
    same format plus ``<stem>.<tgt>.json`` (its units, each with its segments) into
    ``run.folder(path)``, telling ``run``; False on failure. ``translate_sheet_names``: a
    workbook's sheet names are translated too."""
    from functools import partial

    from worker.engine.forced import segment_links
    from worker.formats import BINARY, FormatError, parse, translate_parsed
    from worker.text.layout import split_document

    source, target = translator.bundle.source_language, translator.target_language
    try:
        parsed = parse(fmt, path.read_bytes() if fmt in BINARY else read_text_file(path, encoding, fmt),
                       (source, target), translate_sheet_names=translate_sheet_names)
    except OSError as exc:
        reason = f"cannot read: {exc.strerror or exc}"
    except (DocumentError, FormatError) as exc:
        reason = str(exc)
    else:
        reason = None
    if reason is not None:
        print(f"nmt translate: skipped {path}: {reason}", file=sys.stderr)
        run.failed(path, reason)
        return False
    try:
        results = translator.translate_layouts([split_document(unit.text, source) for unit in parsed.units], options,
                                               text_options=text_options)
        rendered, record = translate_parsed(parsed, results, partial(segment_links, translator))
    except Exception as exc:  # noqa: BLE001 - reported for its one file; the others still run
        print(f"nmt translate: failed {path}: {type(exc).__name__}: {exc}", file=sys.stderr)
        run.failed(path, f"{type(exc).__name__}: {exc}")
        return False
    warnings = record["warnings"]
    provenance = results[0].provenance if results else translator.provenance(options, 0.0, 0)
    payload = {"format": fmt, "source_file": str(path), **record, "provenance": provenance}
    written, _ = write_translation(run.folder(path), output_stem(path, source), target, rendered, payload,
                                   path.suffix or f".{fmt}")
    run.finished(path, written, translator.bundle.signature)
    for warning in warnings:
        print(f"nmt translate: {path}: warning: {warning}", file=sys.stderr)
    if collect is not None:
        collect(str(path), payload)
    return True


def _translate_stream(translator, options, stdin, stdout, text_options=None,
                      collect: Callable[[str, dict], None] | None = None, encoding: str | None = None) -> int:
    """One output line per input line, each line a document. From a terminal each line is
    translated as it comes; from a pipe, blocks of lines share batches. A line that is not UTF-8
    text gives an empty output line (so line numbers still match), a message naming it, and exit
    status 1. ``collect("stdin:N", payload)``: called for each line N."""
    block = 1 if stdin.isatty() else 256
    bad, lines, done = 0, [], 0

    def flush() -> None:
        nonlocal done
        for result in translator.translate_documents(lines, options, text_options=text_options):
            if options.n_best > 1:
                stdout.writelines(f"{done} ||| {text} ||| {score:.4f}\n" for text, score in _n_best_lines(result, options.n_best))
            else:
                stdout.write(result.translation.replace("\n", " ") + "\n")
            done += 1
            if collect is not None:
                collect(f"stdin:{done}", result.to_json())
        stdout.flush()
        lines.clear()

    for number, raw in enumerate(stdin, 1):
        try:
            line = raw.rstrip(b"\n").rstrip(b"\r")
            lines.append(decode_document(line, "txt", encoding) if encoding else decode_text(line))
        except DocumentError as exc:
            bad += 1
            reason = re.sub(r"\(line 1, (byte offset \d+)\)", r"at \1", str(exc))  # offsets within this line
            print(f"nmt translate: stdin line {number}: {reason}; its output line is left empty", file=sys.stderr)
            lines.append("")
        if len(lines) >= block:
            flush()
    if lines:
        flush()
    return 1 if bad else 0


def _n_best_lines(result, n: int) -> list[tuple[str, float]]:
    """The k-th best translation of a line for k < n: each segment's k-th alternative (its best when
    it has fewer), joined; the score sums the segments' scores."""
    lines = []
    for k in range(n):
        texts, score = [], 0.0
        for segment in result.segments:
            text, seg_score = segment.n_best[k] if k < len(segment.n_best) else (segment.translation, segment.score)
            texts.append(text)
            score += seg_score
        lines.append((" ".join(texts).replace("\n", " "), score))
    return lines


def run_eval(args: argparse.Namespace) -> int:
    from worker.engine.evaluation import evaluate, read_lines, record_test_score

    sources, references = read_lines(Path(args.src)), read_lines(Path(args.ref))
    if not sources:
        print(f"nmt eval: error: {args.src} has no lines", file=sys.stderr)
        return 2
    if len(sources) != len(references):
        print(f"nmt eval: error: {args.src} has {len(sources)} lines, {args.ref} has {len(references)}", file=sys.stderr)
        return 2
    changed = [flag for flag, value in (("--beam", args.beam is not None),
                                        ("--length-penalty", args.length_penalty is not None),
                                        ("--no-repeat-ngram", args.no_repeat_ngram is not None), ("--glossary", args.glossary),
                                        ("--n-best", args.n_best != 1), ("--coverage-penalty", args.coverage_penalty),
                                        ("--shortlist", args.shortlist != "auto"),
                                        ("--no-protect-spans", args.no_protect_spans),
                                        ("--no-case-handling", args.no_case_handling),
                                        ("--no-language-check", args.no_language_check)) if value]
    if args.record and changed:
        print(f"nmt eval: error: --record stores the bundle's score as users get it: leave out {', '.join(changed)}",
              file=sys.stderr)
        return 2
    translator, options = _translator(args)
    report, hypotheses = evaluate(translator, sources, references, options, _text_options(args))
    if args.hyp_out:
        write_atomically(Path(args.hyp_out), "\n".join(hypotheses) + "\n")
    print(f"BLEU {report['bleu']:.2f}  ({report['signature']})")
    print(f"chrF {report['chrf']:.2f}  ({report['signature_chrf']})")
    print(f"BLEU {report['bleu_lc_tok']:.2f}  lowercased, Moses-normalized and tokenized, as published Multi30k results "
          f"({report['signature_lc_tok']})")
    if args.json:
        print(json.dumps(report | {"bundle": translator.bundle.signature, "provider": translator.provider,
                                   "beam": options.beam}))
    if args.record:
        record_test_score(translator.bundle.path, args.record, report)
        print(f"recorded as test set {args.record!r} in {translator.bundle.path / 'manifest.json'}")
    return 0


def run_calibrate(args: argparse.Namespace) -> int:
    from worker.engine.evaluation import read_lines
    from worker.local.calibrate import evaluate, fit, samples, write_to_bundle
    from worker.text.quality import FEATURE_SETS

    translator, options = _translator(args)
    text_options = _text_options(args)

    def decoded(pair: list[str]):
        sources, references = read_lines(Path(pair[0]))[: args.lines], read_lines(Path(pair[1]))[: args.lines]
        if len(sources) != len(references) or not sources:
            raise ValueError(f"{pair[0]} and {pair[1]} must have the same, non-zero number of lines")
        results = translator.translate_sentences([s.strip() for s in sources], options, text_options=text_options)
        return samples(results, references)

    fit_data = [s for pair in args.fit for s in decoded(pair)]
    model = fit(fit_data, fit_info={"sets": [pair[0] for pair in args.fit], "target": "sentence chrF / 100"},
                features=FEATURE_SETS[args.features])
    checks = {"fit": evaluate(model, fit_data)} | {pair[0]: evaluate(model, decoded(pair)) for pair in args.check}
    for name, row in checks.items():
        print(f"{name}: {row['sentences']} sentences, Spearman {row['spearman']:.3f}, AUROC {row['auroc']:.3f} "
              f"(chrF < 30: {100 * row['bad_share']:.0f}%), flagged {100 * row['flagged_share']:.0f}%")
    print(f"low_confidence below {model.threshold:.3f}")
    if args.write:
        from dataclasses import replace

        path = write_to_bundle(translator.bundle.path, replace(model, fit=dict(model.fit) | {"checked_on": checks}))
        print(f"wrote the confidence model to {path}")
    return 0
