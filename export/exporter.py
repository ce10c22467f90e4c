"""Checkpoint -> verified bundle: export, parity checks, optional int8/fp16, scores, manifest.

The bundle is assembled in a staging directory beside the destination and moved into place only
after every check passed, so a failed export leaves any existing bundle untouched.
"""
from __future__ import annotations

import json
import logging
import os
import shutil
import tempfile
import time
from dataclasses import asdict, dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import sacrebleu

from training.aligner_training import ALIGNER_CONFIG, ALIGNER_REPORT, load_head
from training.loading import LoadedModel, load_model
from training.config import resolve_data_dir
from training.corpora import iter_corpus, read_corpora, read_corpus
from training.corpus import CorpusError, ParallelCorpus
from training.data import read_split
from worker.engine.bundle import (
    ALIGNER,
    ALIGNER_INPUTS,
    CASING,
    ENCODER_INPUTS,
    ENCODER_OUTPUTS,
    FORMAT,
    FORMAT_VERSION,
    GROUPED_BEAMS,
    MANIFEST,
    PRECISIONS,
    REVERSE_ALIGNMENT,
    SHORTLIST,
    STEP_INPUTS,
    STEP_OUTPUTS,
    TOPK_INPUT,
    load_bundle,
    sha256_file,
    signature_for,
    verify_graphs,
    write_bundle_atomically,
)
from worker.engine.evaluation import evaluate, manifest_entry, record_test_score
from worker.engine.ort_model import OrtStepModel
from worker.engine.settings import EngineSettings, local_cpu_settings
from worker.engine.translator import Translator
from worker.engine.search import SearchOptions, search_in_batches
from worker.text.truecase import CaseTable, FormCounts

from . import graphs
from .parity import ParityError, aligner_parity, graph_parity, search_parity
from .quantize import convert_fp16, describe_change, quantize_int8
from .shortlist import SHORTLIST_FILE, ShortlistOptions, build_table, sample_pairs, write_shortlist
from .torch_model import SPECIAL_IDS

log = logging.getLogger(__name__)
INT8_MAX_BLEU_DROP = 0.5


@dataclass(frozen=True)
class ExportOptions:
    precision: str = "fp32"
    force: bool = False
    data_dir: str | None = None
    parity_sentences: int = 200
    beam: int = 5
    length_penalty: float = 0.0  # GNMT alpha recorded as the bundle's default and used for its scores
    # The bundle's default n-gram blocking (0: off): beam search never repeats an n-gram of this many
    # subword tokens. 5 ends loops at no BLEU cost on general dev sets (bench/repeat_blocking.py), but
    # breaks lists such as "%s, %s, %s": tune it on the bundle's own dev set.
    no_repeat_ngram: int = 5
    tolerance: float = 1e-4
    name: str | None = None  # bundle name in the manifest; default: the output directory's name
    shortlist: ShortlistOptions | None = None  # build a lexical shortlist from the training corpora


@dataclass
class ExportReport:
    bundle: Path
    signature: str
    graph_max_abs_diff: dict[str, float]
    search_parity: dict[str, int]
    scores: dict[str, Any] = field(default_factory=dict)
    precision_change: dict[str, Any] = field(default_factory=dict)
    seconds: float = 0.0
    shortlist: dict[str, Any] | None = None


def export_bundle(checkpoint: Path, out: Path, options: ExportOptions) -> ExportReport:
    started = time.perf_counter()
    if options.precision not in PRECISIONS:
        raise ValueError(f"unknown precision {options.precision!r}; choose one of {', '.join(PRECISIONS)}")
    out = Path(out)
    if out.exists() and not options.force:
        raise FileExistsError(f"{out} already exists; pass --force to replace it")
    loaded = load_model(Path(checkpoint))
    out.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{out.name}.staging.", dir=out.parent))
    umask = os.umask(0o022)
    os.umask(umask)
    staging.chmod(0o777 & ~umask)  # mkdtemp makes 0700: the bundle must be readable as a plain mkdir's would be
    try:
        report = _build(loaded, staging, out, options)
        write_bundle_atomically(staging, out, options.force)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    report.bundle = out
    report.seconds = time.perf_counter() - started
    return report


def _build(loaded: LoadedModel, staging: Path, out: Path, options: ExportOptions) -> ExportReport:
    cfg = loaded.config
    # The validation set first: a missing or unreadable corpus fails in a second, not after the graphs.
    valid, valid_name = validation_set(loaded, options)
    # (1) fp32 graphs and their parity with torch.
    fp32_dir = staging / "fp32"
    fp32_dir.mkdir()
    paths = graphs.export_graphs(loaded.model, fp32_dir)
    fp32 = _ort_model_for(paths)
    diffs = graph_parity(loaded.model, fp32, options.tolerance)
    log.info("graph parity: worst max abs diff %.2e", max(diffs.values()))
    aligner = _aligner(loaded, fp32_dir, options)

    # (2) token-level parity and BLEU on the validation set.
    valid_ids = loaded.vocabs.encode_sources(valid.src)
    parity = search_parity(loaded.model, fp32, valid_ids[: options.parity_sentences], options.beam,
                           cfg.train.max_len_a, cfg.train.max_len_b)
    if not parity.ok:
        raise ParityError(
            f"ONNX Runtime token ids differ from torch on {parity.sentences} validation sentences: "
            f"greedy {parity.sentences - parity.greedy_equal} differ, beam {parity.sentences - parity.beam_equal} differ"
        )
    search = SearchOptions(beam=options.beam, max_len_a=cfg.train.max_len_a, max_len_b=cfg.train.max_len_b,
                           length_penalty=options.length_penalty, no_repeat_ngram=options.no_repeat_ngram)
    scores: dict[str, Any] = {"valid_bleu_fp32": _bleu(fp32, loaded, valid_ids, valid.tgt, search)}

    # (3) the requested precision; lossy ones are judged by their BLEU difference. int8 starts
    # from a step graph with the embedding's products folded into lookup tables (checked against
    # torch like the others): fewer products to run, and tables the quantizer makes int8 too.
    final_dir, change, folded = fp32_dir, {}, None
    folded_dir = staging / "fp32-folded"
    if options.precision != "fp32":
        final_dir = staging / options.precision
        final_dir.mkdir()
        sources = paths
        if options.precision == "int8":
            folded_dir.mkdir()
            sources = graphs.export_graphs(loaded.model, folded_dir, fold_embedding=True)
            folded_diffs = graph_parity(loaded.model, _ort_model_for(sources), options.tolerance)
            folded = {"embedding_products_folded": True, "graph_max_abs_diff": max(folded_diffs.values())}
        convert = quantize_int8 if options.precision == "int8" else convert_fp16
        for name, path in sources.items():
            convert(path, final_dir / path.name)
            graphs.repair_declared_shapes_file(final_dir / path.name)
            change[name] = describe_change(path, final_dir / path.name)
        lossy = _ort_model_for({n: final_dir / p.name for n, p in paths.items()})
        bleu = _bleu(lossy, loaded, valid_ids, valid.tgt, search)
        scores[f"valid_bleu_{options.precision}"] = bleu
        scores["valid_bleu_delta"] = bleu - scores["valid_bleu_fp32"]
        if options.precision == "int8" and scores["valid_bleu_delta"] < -INT8_MAX_BLEU_DROP:
            raise ParityError(f"int8 loses {-scores['valid_bleu_delta']:.2f} BLEU on validation "
                              f"(fp32 {scores['valid_bleu_fp32']:.2f}, int8 {bleu:.2f}; allowed {INT8_MAX_BLEU_DROP})")
    scores["valid_bleu"] = scores.get(f"valid_bleu_{options.precision}", scores["valid_bleu_fp32"])
    shortlist = None
    if options.shortlist is not None:
        shortlist = _shortlist(loaded, staging, options, {n: final_dir / p.name for n, p in paths.items()},
                               valid_ids, valid.tgt, search, scores["valid_bleu"])
    casing = casing_table(loaded, staging, options)
    scores["valid_set"] = valid_name
    scores["decoding"] = {"beam": options.beam, "max_len_a": cfg.train.max_len_a, "max_len_b": cfg.train.max_len_b,
                          "length_penalty": options.length_penalty, "bleu": "sacreBLEU default (cased, 13a)"}

    # (4) lay out the bundle and its manifest. The alignment head stays fp32 at every precision.
    for name, path in paths.items():
        shutil.move(str(final_dir / path.name), staging / path.name)
    if aligner is not None:
        shutil.move(str(fp32_dir / aligner["file"]), staging / aligner["file"])
    for work_dir in {fp32_dir, final_dir, folded_dir}:
        shutil.rmtree(work_dir, ignore_errors=True)
    vocab_files = _write_vocabs(loaded, staging)
    manifest = _manifest(loaded, staging, vocab_files, options, out, scores, diffs, parity, change, folded, shortlist,
                         aligner, casing)
    (staging / MANIFEST).write_text(json.dumps(manifest, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    verify_graphs(load_bundle(staging))
    # (5) test scores as nmt eval measures them: the finished bundle, text handling and all.
    translator = None
    for name, test in test_sets(loaded, options):
        translator = translator or Translator(staging, local_cpu_settings(EngineSettings()))
        report, _ = evaluate(translator, test.src, test.tgt)
        record_test_score(staging, name, report)
        scores.setdefault("test", {})[name] = manifest_entry(report)
        scores.setdefault("test_set", name)
        if scores["test_set"] == name:
            scores["test_bleu"], scores["test_chrf"] = report["bleu"], report["chrf"]
    return ExportReport(out, manifest["signature"], diffs, asdict(parity), scores, change, shortlist=shortlist)


def _aligner(loaded: LoadedModel, out_dir: Path, options: ExportOptions) -> dict[str, Any] | None:
    """Export the checkpoint's alignment head, if it has one, and check it against torch: its
    manifest entry (file, parity, how it was trained), or None."""
    from worker.engine.ort_model import CPU, load_session, session_options

    head = load_head(loaded)
    if head is None:
        return None
    path = graphs.export_aligner(loaded.model, head, out_dir)
    diff = aligner_parity(loaded.model, head, load_session(path, session_options(), [CPU]), options.tolerance)
    log.info("alignment head parity: max abs diff %.2e", diff)
    report = loaded.raw.get(ALIGNER_REPORT) or {}
    return {"file": path.name, "outputs": list(graphs.aligner_outputs(head)), "graph_max_abs_diff": diff,
            "config": dict(loaded.raw[ALIGNER_CONFIG]),
            "training": {k: report[k] for k in ALIGNER_TRAINING_KEYS if k in report}}


# What the manifest's ``aligner`` entry keeps of a head's training report: the recipe, and its run.
ALIGNER_TRAINING_KEYS = ("pairs", "steps", "best_valid_loss", "history", "eflomal_seconds", "train_config")


def aligner_graph_entry(aligner: dict[str, Any], model_cfg) -> dict[str, Any]:
    """The manifest's ``graphs`` entry of the aligner graph ``_aligner`` described (``aligner``); it
    runs in float32 at every precision."""
    shapes = {
        "annotations": ["batch", "src_len", model_cfg.annotation_dim], "src_mask": ["batch", "src_len"],
        "states": ["batch", "tgt_len", model_cfg.dec_hidden], "target_ids": ["batch", "tgt_len"],
        "attention": ["batch", "tgt_len", "src_len"], "alignment": ["batch", "tgt_len", "src_len"],
        REVERSE_ALIGNMENT: ["batch", "tgt_len", "src_len"],
    }
    dtypes = {"src_mask": "bool", "target_ids": "int64"}
    return {"file": aligner["file"], **{
        kind: [{"name": n, "dtype": dtypes.get(n, "float32"), "shape": shapes[n]} for n in names]
        for kind, names in (("inputs", ALIGNER_INPUTS), ("outputs", aligner["outputs"]))}}


def aligner_manifest_entry(aligner: dict[str, Any]) -> dict[str, Any]:
    """The manifest's ``aligner`` entry: parity and how the head was trained (``_aligner``'s
    description without what ``graphs`` holds)."""
    return {k: v for k, v in aligner.items() if k not in ("file", "outputs")}


def _ort_model_for(paths: dict[str, Path], shortlist=None) -> OrtStepModel:
    return OrtStepModel(paths["encoder"], paths["decoder_step"], grouped_beams=True, shortlist=shortlist,
                        special=SPECIAL_IDS)


def training_pairs(loaded: LoadedModel, options: ExportOptions):
    """The checkpoint's training pairs, streamed: its config's corpora, else its data directory's
    train split (``--data-dir`` overrides it)."""
    cfg = loaded.config
    if cfg.data.corpora and not options.data_dir:
        for spec in cfg.data.corpora:
            yield from iter_corpus(spec, cfg)
        return
    train = read_split(resolve_data_dir(cfg, options.data_dir), cfg.data.train_prefix, cfg)
    yield from zip(train.src, train.tgt)


CASING_FILE = "casing.json.gz"


def casing_table(loaded: LoadedModel, directory: Path, options: ExportOptions) -> dict[str, Any] | None:
    """Write ``casing.json.gz``: the usual case of each side's words in the training pairs
    (``worker.text.truecase``), read by ``nmt align`` for lower-cased text; its manifest entry, or
    None (with a warning) when the training pairs are not here."""
    counts, pairs = (FormCounts(), FormCounts()), 0
    try:
        for pair in training_pairs(loaded, options):
            for side, text in zip(counts, pair):
                side.add(text)
            pairs += 1
    except (CorpusError, OSError) as exc:
        log.warning("no case table: the training pairs are not readable here (%s)", exc)
        return None
    source_forms, target_forms = counts[0].forms(), counts[1].forms()
    CaseTable.write(directory / CASING_FILE, source_forms, target_forms)
    log.info("case table: %d source and %d target words from %d training pairs",
             len(source_forms), len(target_forms), pairs)
    return {"file": CASING_FILE, "pairs": pairs, "source_words": len(source_forms),
            "target_words": len(target_forms)}


def _shortlist(loaded: LoadedModel, staging: Path, export: ExportOptions, paths: dict[str, Path], valid_ids,
               references, search: SearchOptions, valid_bleu: float) -> dict[str, Any]:
    """Build ``shortlist.npz`` from a sample of the training pairs and score the bundle's graphs
    with it on validation: its manifest entry, on by default only within MAX_BLEU_DROP."""
    from worker.engine.shortlist import MAX_BLEU_DROP, Shortlist

    options = export.shortlist
    try:
        sample = sample_pairs(training_pairs(loaded, export), options.pairs, options.seed)
    except CorpusError as exc:
        raise CorpusError(f"no training pairs for the lexical shortlist: {exc}") from None
    src_ids = loaded.vocabs.src.encode_many([s for s, _ in sample])
    tgt_ids = loaded.vocabs.tgt.encode_many([t for _, t in sample])
    table = build_table(src_ids, tgt_ids, loaded.spec.src_vocab_size, loaded.spec.tgt_vocab_size, (SPECIAL_IDS.unk, SPECIAL_IDS.eos),
                        options, joint=loaded.vocabs.joint)
    write_shortlist(staging / SHORTLIST_FILE, table)
    model = _ort_model_for(paths, Shortlist.load(staging / SHORTLIST_FILE))
    bleu = _bleu(model, loaded, valid_ids, references, search)
    log.info("shortlist: %s; validation BLEU %.2f with it, %.2f without", table.stats, bleu, valid_bleu)
    return {"file": SHORTLIST_FILE, "built": table.stats, "valid_bleu": bleu, "valid_bleu_full": valid_bleu,
            "valid_bleu_delta": bleu - valid_bleu, "default": bleu - valid_bleu >= -MAX_BLEU_DROP}


def _bleu(model: OrtStepModel, loaded: LoadedModel, sources, references, options: SearchOptions) -> float:
    """sacreBLEU BLEU (defaults) of beam search output on subword ids: the model alone, before any
    text handling (the validation checks of export; test sets are scored as nmt eval does)."""
    hyps = [loaded.vocabs.tgt.decode(h[0].tokens) for h in search_in_batches(model, sources, options)]
    return sacrebleu.corpus_bleu(hyps, [list(references)]).score


VALID_SAMPLE_KEY = "valid_sample"
MAX_VALID_SENTENCES = 1000


def validation_set(loaded: LoadedModel, options: ExportOptions) -> tuple[ParallelCorpus, str]:
    """The sentences export checks parity and scores on, and their name.

    ``--data-dir`` when given; else the config's corpora or directory (a checkpoint records their
    paths) when their files are here; otherwise the raw validation sample stored in the checkpoint,
    so that a checkpoint alone exports. A config with ``data.valid`` corpora uses them (at most 1,000 sentences)."""
    cfg = loaded.config
    try:
        if cfg.data.corpora and not options.data_dir:
            specs = cfg.data.valid or cfg.data.corpora[:1]
            return read_corpora(specs, cfg, MAX_VALID_SENTENCES), "+".join(spec.label for spec in specs)
        data_dir = resolve_data_dir(cfg, options.data_dir)
        return read_split(data_dir, cfg.data.valid_prefix, cfg), cfg.data.valid_prefix
    except CorpusError as exc:
        if options.data_dir:  # asked for explicitly: its problem is the answer
            raise
        sample = loaded.raw.get(VALID_SAMPLE_KEY)
        if not sample or not sample.get("src"):
            raise CorpusError(f"no validation data for export: {exc}; pass --data-dir (this checkpoint "
                              "stores no validation sample)") from None
        log.info("validation files unavailable (%s): using the checkpoint's %d-sentence validation sample",
                 exc, len(sample["src"]))
        return ParallelCorpus(list(sample["src"]), list(sample["tgt"]), Path("checkpoint"), Path("checkpoint")), \
            "checkpoint validation sample"


def test_sets(loaded: LoadedModel, options: ExportOptions) -> list[tuple[str, ParallelCorpus]]:
    """The test sets to score the bundle on, by name; those whose files are missing are skipped."""
    cfg = loaded.config
    found = []
    if cfg.data.corpora and not options.data_dir:
        for spec in cfg.data.test:
            try:
                found.append((spec.label, read_corpus(spec, cfg)))
            except CorpusError as exc:
                log.info("test set %s unavailable: %s", spec.label, exc)
        return found
    data_dir = resolve_data_dir(cfg, options.data_dir)
    try:
        return [(cfg.data.test_prefix, read_split(data_dir, cfg.data.test_prefix, cfg))]
    except ValueError:
        log.info("no %s split in %s: test BLEU not measured", cfg.data.test_prefix, data_dir)
        return []


def _write_vocabs(loaded: LoadedModel, staging: Path) -> dict[str, str]:
    if loaded.vocabs.joint:
        loaded.vocabs.src.save(staging / "spm.model")
        return {"source": "spm.model", "target": "spm.model"}
    src_lang, tgt_lang = loaded.config.data.src_lang, loaded.config.data.tgt_lang
    loaded.vocabs.src.save(staging / f"spm.{src_lang}.model")
    loaded.vocabs.tgt.save(staging / f"spm.{tgt_lang}.model")
    return {"source": f"spm.{src_lang}.model", "target": f"spm.{tgt_lang}.model"}


def _manifest(loaded: LoadedModel, staging: Path, vocab_files, options: ExportOptions, out: Path,
              scores, diffs, parity, change, folded: dict[str, Any] | None = None,
              shortlist: dict[str, Any] | None = None, aligner: dict[str, Any] | None = None,
              casing: dict[str, Any] | None = None) -> dict[str, Any]:
    cfg, spec = loaded.config, loaded.spec
    float_type = "float16" if options.precision == "fp16" else "float32"
    model_cfg = spec.config
    a_dim = {"additive": model_cfg.att_dim, "general": model_cfg.dec_hidden, "dot": model_cfg.annotation_dim}[model_cfg.attention]
    shapes = {
        "src_ids": ("int64", ["batch", "src_len"]), "src_lengths": ("int64", ["batch"]),
        "annotations": (float_type, ["batch", "src_len", model_cfg.annotation_dim]),
        "keys": (float_type, ["batch", "src_len", a_dim]),
        "init_state": (float_type, [model_cfg.dec_layers, "batch", model_cfg.dec_hidden]),
        "prev_ids": ("int64", ["rows"]), "state": (float_type, [model_cfg.dec_layers, "rows", model_cfg.dec_hidden]),
        "src_mask": ("bool", ["batch", "src_len"]),
        "log_probs": (float_type, ["rows", spec.tgt_vocab_size]),
        "new_state": (float_type, [model_cfg.dec_layers, "rows", model_cfg.dec_hidden]),
        "attention": (float_type, ["rows", "src_len"]),
        "topk_log_probs": (float_type, ["rows", "candidates"]),
        "topk_ids": ("int64", ["rows", "candidates"]),
        "readout": (float_type, ["rows", model_cfg.readout_dim]),
    }

    def io(names):
        return [{"name": n, "dtype": shapes[n][0], "shape": shapes[n][1]} for n in names]

    graph_entries = {
        "encoder": {"file": "encoder.onnx", "inputs": io(ENCODER_INPUTS), "outputs": io(ENCODER_OUTPUTS)},
        "decoder_step": {"file": "decoder_step.onnx", "inputs": io(STEP_INPUTS), "outputs": io(STEP_OUTPUTS)},
    }
    if aligner is not None:
        graph_entries[ALIGNER] = aligner_graph_entry(aligner, model_cfg)
    progress = loaded.raw.get("progress", {})
    files = sorted({"encoder.onnx", "decoder_step.onnx", *vocab_files.values(),
                    *(entry["file"] for entry in (shortlist, aligner, casing) if entry)})
    manifest = {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "name": options.name or out.name,
        "created": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "source_language": cfg.data.src_lang,
        "target_language": cfg.data.tgt_lang,
        "precision": options.precision,
        "opset": graphs.OPSET,
        "special_ids": asdict(SPECIAL_IDS),
        "source_appends_eos": True,
        "vocab": {
            "joint": loaded.vocabs.joint,
            "source": {"file": vocab_files["source"], "size": spec.src_vocab_size},
            "target": {"file": vocab_files["target"], "size": spec.tgt_vocab_size},
        },
        "graphs": graph_entries,
        "topk": min(graphs.TOPK, spec.tgt_vocab_size),  # default candidates per row
        "topk_input": TOPK_INPUT,  # overridable: the search asks for 2 * beam + 4
        GROUPED_BEAMS: True,  # encoder outputs once per sentence, its beam's rows adjacent
        "decoding_defaults": {"beam": options.beam, "max_len_a": cfg.train.max_len_a, "max_len_b": cfg.train.max_len_b,
                              "length_penalty": options.length_penalty, "no_repeat_ngram": options.no_repeat_ngram},
        "model_config": asdict(model_cfg),
        "training": {
            "config": cfg.to_dict(),
            "epochs": progress.get("epoch"),
            "steps": progress.get("step"),
            "train_seconds": round(progress.get("elapsed", 0.0), 1),
            "best_valid_bleu_greedy": progress.get("best_bleu"),
            **({"corpora": loaded.raw["corpora"]} if loaded.raw.get("corpora") else {}),
        },
        "scores": scores,
        "verification": {
            "graph_max_abs_diff": diffs,
            "tolerance": options.tolerance,
            "search_parity": asdict(parity),
            "precision_change": change,
            **({"int8_source_step_graph": folded} if folded else {}),
        },
        "files": {name: sha256_file(staging / name) for name in files},
        **({SHORTLIST: shortlist} if shortlist else {}),
        **({ALIGNER: aligner_manifest_entry(aligner)} if aligner else {}),
        **({CASING: casing} if casing else {}),
    }
    manifest["signature"] = signature_for(manifest)
    return manifest
