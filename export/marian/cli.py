"""``nmt import MODEL_DIR --out BUNDLE``: bring a Marian / OPUS-MT Transformer (a Hugging Face
MarianMT directory, or Marian's own ``.npz`` release) into a signed, verified bundle.

``--shortlist-corpus SRC_FILE TGT_FILE`` also builds a lexical shortlist (``shortlist.npz``) from a
seeded sample of those sentence pairs (plain text or .gz, one sentence a line, line for line),
encoded with the model's own SentencePiece models and vocabulary: the worker then decodes onto
each batch's likely target pieces instead of the whole vocabulary (on by default; worker setting
``shortlist`` auto/on/off)."""
from __future__ import annotations

import argparse
import json
import logging
from pathlib import Path


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser("import", help="import a Marian / OPUS-MT model into a verified ONNX bundle",
                              description=__doc__)
    p.add_argument("model_dir", help="a Hugging Face MarianMT directory (config.json, model.safetensors, source.spm, "
                                     "target.spm, vocab.json) or a Marian release (*.npz, decoder.yml, *.vocab.yml)")
    p.add_argument("--out", required=True, help="bundle directory to write")
    p.add_argument("--int8", action="store_true", help="int8 weights (dynamic quantization); agreement with fp32 is "
                                                       "recorded in the manifest")
    p.add_argument("--force", action="store_true", help="replace an existing bundle")
    p.add_argument("--name", help="bundle name recorded in the manifest (default: the --out directory's name)")
    p.add_argument("--src", help="source language code (default: the model's tokenizer_config.json)")
    p.add_argument("--tgt", help="target language code (default: the model's tokenizer_config.json)")
    p.add_argument("--target-token", action="append", default=[], metavar="LANG=TOKEN",
                   help="multilingual models: the token that selects a target language, e.g. de='>>deu<<' "
                        "(repeatable; the first is the default target)")
    p.add_argument("--alignment-layer", type=int, help="decoder layer whose cross-attention gives word alignments "
                                                       "(default: a guided-alignment layer the model names, else the "
                                                       "penultimate layer)")
    p.add_argument("--alignment-heads", default="", help="comma-separated heads of that layer to average (default: all)")
    p.add_argument("--shortlist-corpus", nargs=2, metavar=("SRC_FILE", "TGT_FILE"),
                   help="build a lexical shortlist from these parallel files (plain text or .gz, one sentence a "
                        "line, line for line; eflomal alignments of a seeded sample)")
    p.add_argument("--shortlist-pairs", type=int, metavar="N",
                   help="shortlist: sentence pairs sampled from --shortlist-corpus (default: 100000)")
    p.add_argument("--shortlist-per-source", type=int, metavar="N",
                   help="shortlist: target candidates per source piece (default: 50)")
    p.add_argument("--shortlist-frequent", type=int, metavar="N",
                   help="shortlist: most frequent target pieces, candidates in every batch (default: 300)")
    p.add_argument("--json", action="store_true", help="print the report as JSON on the last line")
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from nmt.errors import UserError

    from ..shortlist import ShortlistOptions
    from .importer import ImportOptions, import_model
    from .shortlist import ShortlistCorpus
    from .spec import ImportModelError

    logging.basicConfig(level=logging.WARNING, format="%(asctime)s %(levelname)s %(message)s")
    tokens = {}
    for item in args.target_token:
        language, sep, token = item.partition("=")
        if not sep or not language or not token:
            raise UserError(f"--target-token takes LANG=TOKEN, e.g. de='>>deu<<'; got {item!r}")
        tokens[language] = token
    try:
        heads = tuple(int(h) for h in args.alignment_heads.split(",") if h.strip())
    except ValueError:
        raise UserError(f"--alignment-heads takes comma-separated head numbers, got {args.alignment_heads!r}") from None
    table = {key: value for key, value in (("pairs", args.shortlist_pairs), ("per_source", args.shortlist_per_source),
                                           ("frequent", args.shortlist_frequent)) if value is not None}
    if table and not args.shortlist_corpus:
        raise UserError("--shortlist-pairs, --shortlist-per-source and --shortlist-frequent need --shortlist-corpus")
    if table.get("pairs", 1) < 1 or table.get("per_source", 1) < 1 or table.get("frequent", 0) < 0:
        raise UserError("--shortlist-pairs and --shortlist-per-source must be >= 1, --shortlist-frequent >= 0")
    shortlist = None
    if args.shortlist_corpus:
        shortlist = ShortlistCorpus(Path(args.shortlist_corpus[0]), Path(args.shortlist_corpus[1]),
                                    ShortlistOptions(**table))
    options = ImportOptions(int8=args.int8, force=args.force, name=args.name, source_language=args.src,
                            target_language=args.tgt or next(iter(tokens), None),
                            alignment_layer=args.alignment_layer, alignment_heads=heads, target_tokens=tokens,
                            shortlist=shortlist)
    try:
        report = import_model(Path(args.model_dir), Path(args.out), options)
    except (ImportModelError, FileExistsError) as exc:
        raise UserError(str(exc)) from None
    worst = max(report.graph_max_abs_diff, key=report.graph_max_abs_diff.get)
    print(f"bundle {report.bundle} ({report.signature}) written in {report.seconds:.0f} s")
    print(f"  graph parity: worst max abs diff {report.graph_max_abs_diff[worst]:.2e} ({worst})")
    if report.reference_max_abs_diff is not None:
        print(f"  against transformers' MarianMTModel: max abs diff {report.reference_max_abs_diff:.2e} (log-probabilities)")
    if report.int8:
        print(f"  int8: greedy equal to fp32 on {report.int8['greedy_equal']}/{report.int8['sentences']} random "
              f"sources, token agreement {report.int8['token_agreement']:.3f}")
    if report.shortlist:
        built = report.shortlist["built"]
        print(f"  shortlist: {built['entries']} entries ({built['mean_per_source']} per source piece), "
              f"{built['frequent']} frequent, from {built['pairs']} pairs")
    if args.json:
        print(json.dumps({"bundle": str(report.bundle), "signature": report.signature,
                          "graph_max_abs_diff": report.graph_max_abs_diff,
                          "reference_max_abs_diff": report.reference_max_abs_diff, "int8": report.int8,
                          "shortlist": report.shortlist}))
    return 0
