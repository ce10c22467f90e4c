"""``nmt submit FILE... --src en --tgt de [--wait --out DIR]``: translate files on the workers."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser("submit", help="submit documents to the Celery workers",
                              description=__doc__)
    p.add_argument("files", nargs="+", metavar="FILE")
    p.add_argument("--src", required=True)
    p.add_argument("--tgt", required=True)
    p.add_argument("--wait", action="store_true", help="wait for the results (with a progress bar)")
    p.add_argument("--out", help="with --wait: write <stem>.<tgt>.txt and <stem>.<tgt>.json here")
    p.add_argument("--by-path", action="store_true", help="send paths (storage the workers share), not the text")
    p.add_argument("--beam", type=int, help="beam size (default: the model's)")
    p.add_argument("--model", help="a model the workers serve, e.g. multi30k-en-de (default: the pair's default model)")
    p.add_argument("--glossary", metavar="FILE",
                   help="force these translations of terms: a UTF-8 file of 'source<TAB>target' lines ('#' comments)")
    p.add_argument("--timeout", type=float, default=None, help="seconds to wait for all jobs")
    p.add_argument("--broker-url", help="default: $NMT_BROKER_URL")
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from tqdm import tqdm

    from queue_config.glossary import GlossaryError, read_glossary
    from queue_config.outputs import output_stem, write_translation
    from queue_config.summary import FlagSummary
    from queue_config.textfiles import DocumentError, collision_message, output_collisions, read_text_file

    from .client import JobFailedError, TranslationClient

    if args.out and not args.wait:
        print("nmt submit: error: --out needs --wait", file=sys.stderr)
        return 2
    collisions = output_collisions(args.files, lambda p: output_stem(p, args.src)) if args.out else {}
    if collisions:  # refused before anything is submitted
        print(f"nmt submit: error: output names collide in {args.out}: {collision_message(collisions)}; "
              "rename or submit them separately", file=sys.stderr)
        return 2
    try:
        glossary = read_glossary(args.glossary) if args.glossary else None
    except GlossaryError as exc:
        print(f"nmt submit: error: {exc}", file=sys.stderr)
        return 2
    client = TranslationClient(broker_url=args.broker_url)
    options = {"beam": args.beam} if args.beam else {}
    jobs, failures = [], 0
    for name in args.files:
        path = Path(name)
        try:
            if args.by_path:
                job = client.submit(path=str(path.resolve()), src=args.src, tgt=args.tgt, options=options,
                                    name=output_stem(path, args.src), model=args.model, glossary=glossary)
            else:
                job = client.submit(text=read_text_file(path), src=args.src, tgt=args.tgt,
                                    options=options, name=output_stem(path, args.src), model=args.model,
                                    glossary=glossary)
        except DocumentError as exc:
            failures += 1
            print(f"nmt submit: skipped {path}: {exc}", file=sys.stderr)
            continue
        jobs.append((path, job))
        if not args.wait:
            print(f"{job.id}\t{path}")
    if not args.wait:
        return 1 if failures else 0
    out = Path(args.out) if args.out else None
    summary = FlagSummary()
    with tqdm(total=len(jobs), desc="jobs", unit="doc", disable=None) as bar:
        for path, job in jobs:
            try:
                result = job.wait(timeout=args.timeout)
            except (JobFailedError, TimeoutError) as exc:
                failures += 1
                tqdm.write(f"nmt submit: {path}: {exc}", file=sys.stderr)
                bar.update(1)
                continue
            if out is not None:
                write_translation(out, output_stem(path, args.src), args.tgt, result.text, dict(result.raw))
            else:
                sys.stdout.write(result.text)
            summary.add(result.raw.get("segments", ()))
            bar.update(1)
    print(f"nmt submit: {summary.line()}", file=sys.stderr)
    return 1 if failures else 0
