"""``nmt export CHECKPOINT --out DIR``: export a checkpoint to a verified ONNX model bundle."""
from __future__ import annotations

import argparse
import json
import logging
from pathlib import Path


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser("export", help="export a checkpoint to a verified ONNX bundle", description=__doc__)
    add_arguments(p)
    p.set_defaults(handler=run)


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("checkpoint", help="training checkpoint (best.pt or last.pt)")
    p.add_argument("--out", required=True, help="bundle directory to write")
    p.add_argument("--precision", choices=("fp32", "int8", "fp16"), default="fp32",
                   help="weights of the exported graphs: fp32, int8 (dynamic quantization, faster on CPU) or fp16 (GPU)")
    p.add_argument("--force", action="store_true", help="replace an existing bundle")
    p.add_argument("--data-dir", help="corpus directory for parity and BLEU (default: the checkpoint's config)")
    p.add_argument("--parity-sentences", type=int, default=200, help="validation sentences for token parity")
    p.add_argument("--beam", type=int, default=5, help="beam size for parity and scores")
    p.add_argument("--length-penalty", type=float, default=0.0, help="GNMT alpha: the bundle's default, used for its scores")
    p.add_argument("--no-repeat-ngram", type=int, default=5, metavar="N",
                   help="the bundle's default n-gram blocking, used for its scores: never repeat an n-gram of N "
                        "subword tokens (0: off; lists such as '%%s, %%s, %%s' need it off or larger; "
                        "default: %(default)s)")
    p.add_argument("--name", help="bundle name recorded in the manifest (default: the --out directory's name)")
    p.add_argument("--shortlist-pairs", type=int, default=0,
                   help="build a lexical shortlist from this many training pairs (eflomal alignments; 0: none)")
    p.add_argument("--shortlist-per-source", type=int, default=50, help="shortlist: target candidates per source piece")
    p.add_argument("--shortlist-frequent", type=int, default=300,
                   help="shortlist: most frequent target pieces, candidates in every batch")
    p.add_argument("--json", action="store_true", help="print the report as JSON on the last line")


def run(args: argparse.Namespace) -> int:
    from nmt.errors import UserError

    from .exporter import ExportOptions, export_bundle
    from .shortlist import ShortlistOptions

    if args.shortlist_pairs < 0 or args.shortlist_per_source < 1 or args.shortlist_frequent < 0:
        raise UserError("--shortlist-pairs must be >= 0, --shortlist-per-source >= 1 and --shortlist-frequent >= 0")

    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")
    for noisy in ("onnxscript", "onnx_ir", "torch.onnx"):
        logging.getLogger(noisy).setLevel(logging.WARNING)
    options = ExportOptions(
        precision=args.precision, force=args.force, data_dir=args.data_dir,
        parity_sentences=args.parity_sentences, beam=args.beam, length_penalty=args.length_penalty,
        no_repeat_ngram=args.no_repeat_ngram, name=args.name,
        shortlist=ShortlistOptions(pairs=args.shortlist_pairs, per_source=args.shortlist_per_source,
                                   frequent=args.shortlist_frequent) if args.shortlist_pairs > 0 else None,
    )
    report = export_bundle(Path(args.checkpoint), Path(args.out), options)
    worst = max(report.graph_max_abs_diff, key=report.graph_max_abs_diff.get)
    p = report.search_parity
    print(f"bundle {report.bundle} ({report.signature}) written in {report.seconds:.0f} s")
    print(f"  graph parity: worst max abs diff {report.graph_max_abs_diff[worst]:.2e} ({worst})")
    print(f"  token parity on {p['sentences']} validation sentences: greedy {p['greedy_equal']}/{p['sentences']}, "
          f"beam {p['beam']} {p['beam_equal']}/{p['sentences']}")
    for key, value in report.scores.items():
        if isinstance(value, float):
            print(f"  {key}: {value:.2f}")
    for name, test in report.scores.get("test", {}).items():
        print(f"  test {name} ({test['sentences']} sentences): BLEU {test['bleu']:.2f}, chrF {test['chrf']:.2f}")
    if report.shortlist:
        sl = report.shortlist
        print(f"  shortlist: {sl['built']['entries']} entries ({sl['built']['mean_per_source']} per source piece), "
              f"{sl['built']['frequent']} frequent; validation BLEU {sl['valid_bleu']:.2f} vs {sl['valid_bleu_full']:.2f} "
              f"without ({sl['valid_bleu_delta']:+.2f}): {'on' if sl['default'] else 'off'} by default")
    for graph, change in report.precision_change.items():
        print(f"  {args.precision} changed in {graph}: " + ", ".join(f"{op} {c['before']}->{c['after']}" for op, c in change.items()))
    if args.json:
        print(json.dumps({"bundle": str(report.bundle), "signature": report.signature, "scores": report.scores,
                          "graph_max_abs_diff": report.graph_max_abs_diff, "search_parity": report.search_parity,
                          "precision_change": report.precision_change, "shortlist": report.shortlist}))
    return 0
