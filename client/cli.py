"""``nmt submit FILE... --src en --tgt de [--wait --out DIR]``: translate files (or folders) on the workers."""
from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from queue_config.names import BINARY_FORMATS, FORMAT_SUFFIXES, FORMATS, format_of_name

DEFAULT_TIMEOUT = 3600.0


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser("submit", help="submit documents to the Celery workers",
                              description=__doc__)
    p.add_argument("files", nargs="+", metavar="FILE",
                   help="UTF-8 documents: plain text, or a format by extension (.html/.htm, .xlf/.xliff, .srt, .vtt, "
                        ".po/.pot); folders (walked for files of known formats) and quoted glob patterns such as "
                        "'docs/**/*.md' with --wait --out")
    p.add_argument("--format", choices=FORMATS, default=None,
                   help="read every FILE as this format (default: by extension; anything else is plain text)")
    p.add_argument("--translate-sheet-names", action="store_true",
                   help="in workbooks (.xlsx, .xlsm), translate the sheet names too, and every formula, defined name, "
                        "validation, conditional format and chart that names a sheet with them (default: names kept)")
    p.add_argument("--src", required=True, help="source language code, e.g. en")
    p.add_argument("--tgt", required=True, help="target language code, e.g. de")
    p.add_argument("--wait", action="store_true", help="wait for the results (with a progress bar)")
    p.add_argument("--out", help="with --wait: write <stem>.<tgt>.txt and <stem>.<tgt>.json here, a folder's files "
                                 "in a tree mirroring it")
    p.add_argument("--include", action="append", default=[], metavar="GLOB",
                   help="in folders, take only files matching GLOB (relative to the folder; repeatable)")
    p.add_argument("--exclude", action="append", default=[], metavar="GLOB",
                   help="in folders, leave out files and folders matching GLOB (repeatable)")
    p.add_argument("--force", action="store_true",
                   help="with --out: submit every file again (default: skip a file whose text and request are those "
                        "recorded in --out by an earlier run)")
    p.add_argument("--by-path", action="store_true", help="send paths (storage the workers share), not the text")
    p.add_argument("--beam", type=int, help="beam size (default: the model's)")
    p.add_argument("--no-repeat-ngram", type=int, metavar="N",
                   help="never repeat an n-gram of N subword tokens within a translation (0: off; default: the model's)")
    p.add_argument("--model", help="a model the workers serve, e.g. multi30k-en-de (default: the pair's default model)")
    p.add_argument("--glossary", metavar="FILE",
                   help="force these translations of terms: a UTF-8 file of 'source<TAB>target' lines ('#' comments)")
    p.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT,
                   help=f"with --wait: seconds to wait for each job (default {DEFAULT_TIMEOUT:g}; 0: no limit)")
    p.add_argument("--broker-url", help="the Redis broker (default: $NMT_BROKER_URL, else redis://127.0.0.1:6379/0)")
    p.set_defaults(handler=run)

    for name, handler, what in (("status", run_status, "print a job's state and progress"),
                                ("result", run_result, "fetch a finished job's translation"),
                                ("cancel", run_cancel, "cancel a queued or running job")):
        q = subparsers.add_parser(name, help=what, description=f"{what[0].upper()}{what[1:]} (by the id 'nmt submit' printed).")
        q.add_argument("job_id", metavar="JOB", help="the job id")
        if name == "result":
            q.add_argument("--out", help="write <name>.<tgt>.txt and <name>.<tgt>.json here (default: the text to stdout)")
        q.add_argument("--broker-url", help="the Redis broker (default: $NMT_BROKER_URL, else redis://127.0.0.1:6379/0)")
        q.set_defaults(handler=handler)


def run(args: argparse.Namespace) -> int:
    from tqdm import tqdm

    from queue_config.document_tree import BulkRun, TreeError, file_sha256, select_documents
    from queue_config.glossary import GlossaryError, read_glossary
    from queue_config.outputs import output_stem
    from queue_config.summary import FlagSummary
    from queue_config.textfiles import DocumentError, read_text_file

    import redis
    from kombu.exceptions import OperationalError

    from queue_config.messages import MessageError
    from queue_config.settings import SettingsError, redacted, redacted_text, secrets_of

    from .client import ClientError

    if args.out and not args.wait:
        print("nmt submit: error: --out needs --wait", file=sys.stderr)
        return 2
    out = Path(args.out) if args.out else None
    try:
        selection = select_documents(args.files, out, args.include, args.exclude)
    except TreeError as exc:
        print(f"nmt submit: error: {exc}", file=sys.stderr)
        return 2
    collisions = selection.collision_message(args.src) if out is not None else ""
    if collisions:  # refused before anything is submitted
        print(f"nmt submit: error: output names collide in {args.out}: {collisions}; "
              "rename or submit them separately", file=sys.stderr)
        return 2
    try:
        glossary = read_glossary(args.glossary) if args.glossary else None
    except GlossaryError as exc:
        print(f"nmt submit: error: {exc}", file=sys.stderr)
        return 2
    try:
        client = _client(args)
    except SettingsError as exc:
        print(f"nmt submit: error: {exc}", file=sys.stderr)
        return 2
    url = redacted(client.settings.broker_url)
    options = {key: value for key, value in (("beam", args.beam), ("no_repeat_ngram", args.no_repeat_ngram))
               if value is not None}
    if args.translate_sheet_names:
        options["translate_sheet_names"] = True
    # What the client knows decides a result besides the text; the bundle signature results
    # report is recorded too, but a run cannot know the workers' bundle before it submits.
    request = {"src": args.src, "tgt": args.tgt, "model": args.model, "options": options, "format": args.format,
               "glossary": file_sha256(Path(args.glossary)) if args.glossary else None}
    run = BulkRun("submit", selection, out, request, args.force)
    jobs = []
    for document in run.pending:
        path = document.path
        try:
            fmt = args.format or format_of_name(path.name)
            if args.by_path:
                job = client.submit(path=str(path.resolve()), src=args.src, tgt=args.tgt, options=options,
                                    name=output_stem(path, args.src), model=args.model, glossary=glossary, format=fmt)
            else:
                job = client.submit(text=_read_bytes(path) if fmt in BINARY_FORMATS else read_text_file(path),
                                    src=args.src, tgt=args.tgt,
                                    options=options, name=output_stem(path, args.src), model=args.model,
                                    glossary=glossary, format=fmt)
        except (DocumentError, MessageError) as exc:
            run.failed(path, str(exc))
            print(f"nmt submit: skipped {path}: {exc}", file=sys.stderr)
            continue
        except ClientError as exc:
            print(f"nmt submit: error: {exc}", file=sys.stderr)
            return 1
        except (redis.RedisError, OperationalError) as exc:  # Redis, or RabbitMQ (kombu): refused, TLS, ...
            print(f"nmt submit: error: cannot reach the broker at {url}: "
                  f"{redacted_text(str(exc), secrets_of(client.settings))}", file=sys.stderr)
            return 1
        jobs.append((path, job))
        if not args.wait:
            print(f"{job.id}\t{path}")
    if not args.wait:
        return run.exit_status
    summary = FlagSummary()
    try:
        with tqdm(total=len(jobs), desc="jobs", unit="doc", disable=None) as bar:
            for path, job in jobs:
                _wait_for(job, path, args, run, summary)
                bar.update(1)
    finally:
        run.close()
    print(f"nmt submit: {summary.line()}", file=sys.stderr)
    for line in run.summary():
        print(line, file=sys.stderr)
    return run.exit_status


def _wait_for(job, path: Path, args: argparse.Namespace, run, summary) -> None:
    """Wait for one job and write its result into ``run.folder(path)`` (or to stdout without
    --out), telling ``run`` (``queue_config.document_tree.BulkRun``) how it went."""
    from tqdm import tqdm

    from queue_config.outputs import output_stem, write_translation

    from .client import ClientError

    try:
        result = job.wait(timeout=args.timeout or None)
    except (ClientError, TimeoutError) as exc:
        run.failed(path, str(exc))
        tqdm.write(f"nmt submit: {path}: {exc}", file=sys.stderr)
        return
    if run.out is not None:
        fmt = result.raw.get("format", "txt")
        suffix = path.suffix if fmt != "txt" and format_of_name(path.name) == fmt else FORMAT_SUFFIXES[fmt]
        written, _ = write_translation(run.folder(path), output_stem(path, args.src), args.tgt,
                                       result.data if fmt in BINARY_FORMATS else result.text, dict(result.raw), suffix)
        run.finished(path, written, result.provenance.get("signature"))
    elif result.raw.get("format") in BINARY_FORMATS:
        reason = f"a {result.raw['format']} file is not written to a terminal: give --out"
        run.failed(path, reason)
        tqdm.write(f"nmt submit: {path}: {reason}", file=sys.stderr)
        return
    else:
        sys.stdout.write(result.text)
        run.finished(path)
    summary.add(result.raw.get("segments", ()))


def _read_bytes(path: Path) -> bytes:
    from queue_config.textfiles import DocumentError

    try:
        return path.read_bytes()
    except OSError as exc:
        raise DocumentError(f"cannot read: {exc.strerror or exc}") from None


def _client(args: argparse.Namespace):
    """The client for ``--broker-url``, else $NMT_BROKER_URL; an unset one is said, once, before
    the default is used (SettingsError for a bad URL)."""
    from queue_config.settings import QueueSettings

    from .client import TranslationClient

    broker_url = args.broker_url
    if not broker_url and "NMT_BROKER_URL" not in os.environ:
        broker_url = QueueSettings.broker_url
        print(f"nmt {args.command}: NMT_BROKER_URL is not set: using {broker_url}", file=sys.stderr)
    return TranslationClient(broker_url=broker_url)


def _job(args: argparse.Namespace):
    """The client's Job for ``args.job_id``."""
    return _client(args).job(args.job_id)


def _guard(command: str, action) -> int:
    """Run ``action()``; client errors and an unreachable broker are one line, exit status 1."""
    import redis

    from queue_config.result_store import ResultStoreUnreachableError
    from queue_config.settings import SettingsError, redacted_text

    from .client import ClientError

    try:
        return action()
    except SettingsError as exc:
        print(f"nmt {command}: error: {exc}", file=sys.stderr)
        return 2
    except ResultStoreUnreachableError as exc:  # a redis.ConnectionError, but not the broker's
        print(f"nmt {command}: error: {exc}", file=sys.stderr)
        return 1
    except ClientError as exc:
        print(f"nmt {command}: {exc}", file=sys.stderr)
        return 1
    except redis.RedisError as exc:
        print(f"nmt {command}: error: cannot reach the broker: {redacted_text(str(exc), _secrets())}", file=sys.stderr)
        return 1


def _secrets() -> tuple[str, ...]:
    """The passwords of the NMT_* settings, to keep out of error messages (none if unreadable)."""
    from queue_config.settings import SettingsError, load_settings, secrets_of

    try:
        return secrets_of(load_settings())
    except SettingsError:
        return ()


def run_status(args: argparse.Namespace) -> int:
    def show() -> int:
        status = _job(args).status()
        if status.state == "unknown":
            print(f"nmt status: job {args.job_id}: {status.error}", file=sys.stderr)
            return 1
        progress = f"{status.done}/{status.total} segments" if status.total else "not started"
        print(f"{status.job_id}\t{status.state}\t{progress}" + (f"\t{status.error}" if status.error else ""))
        return 0
    return _guard("status", show)


def run_result(args: argparse.Namespace) -> int:
    from queue_config.outputs import write_translation

    def fetch() -> int:
        job = _job(args)
        result = job.result()  # JobFailedError / JobNotFinishedError: one line
        if args.out:
            name = result.raw.get("name") or "document"
            target = result.provenance.get("target_language") or "out"
            for path in write_translation(Path(args.out), name, target, result.text, dict(result.raw)):
                print(path)
        else:
            sys.stdout.write(result.text)
        return 0
    return _guard("result", fetch)


def run_cancel(args: argparse.Namespace) -> int:
    def cancel() -> int:
        job = _job(args)
        if job.cancel():
            print(f"{args.job_id}\tcancelled")
            return 0
        print(f"nmt cancel: job {args.job_id} is {job.status().state}: nothing to cancel", file=sys.stderr)
        return 1
    return _guard("cancel", cancel)
