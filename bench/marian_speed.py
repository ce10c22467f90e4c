"""Imported Marian decoding speed: this engine against CTranslate2 and transformers, same model.

A model of opus-mt-en-de's shape (6 + 6 layers, d_model 512, 8 heads, FFN 2048, a shared
vocabulary of 58,101 entries, random weights from a fixed seed, spread so that outputs depend on
the input: ``_spread``) is written as a Hugging Face
MarianMT directory: SentencePiece models trained on Tatoeba English and German, padded to the
vocabulary size with filler pieces ``▁w{i}``, ``<pad>`` last. From that one directory ``nmt import``
makes this engine's bundles (fp32, ``--int8``) and CTranslate2's own ``ct2-transformers-converter``
its models (float32, ``--quantization int8``). All of it is cached under ``--work-dir``.

Every engine decodes the same ``--sentences`` English sentences (newstest2014; the same source ids,
checked) at beam ``--beam`` to exactly ``--max-length`` tokens plus eos: random weights never end a
hypothesis early, so all engines run ``max-length + 1`` decoder steps per sentence and the token
counts are equal. This engine decodes through ``Translator.translate_sentences`` (span protection,
case and language checks off), transformers with ``generate`` (``max_new_tokens = max-length + 1``,
eos forced last), CTranslate2 with ``translate_batch`` (``max_decoding_length = max-length + 1``:
it forces no eos, so its last token is an ordinary one). Batches hold ``--max-batch-sentences``
sentences in every engine. Thread layouts: this engine and CTranslate2 each run one batch at a time
on every core (1xC) and C batches at once on one thread each (Cx1: the engine's batch workers,
CTranslate2's ``inter_threads``); the faster counts. transformers runs 1xC. Each run is its own
subprocess, so its peak RSS is its own.

Reported, with the CPU: target tokens/s (eos counted where produced), peak RSS, the ratio to
CTranslate2 at each engine's best precision (the goal: above 1; the floor: 0.8) and at equal
precision, and token agreement (of the first ``--max-length`` tokens, position by position; identical outputs)
of this engine fp32 with transformers and with CTranslate2 float32, and of each int8 with its fp32.
Every run of this engine also times its parts: graph (encoder, decoder step), state copies (the
key/value cache reordered by beam), the host-side search (the rest of each batch's beam search) and
the text pipeline around it. ``--profile`` adds ONNX Runtime's per-operator profile of one decoder
step halfway through a batch.

    python bench/marian_speed.py [--sentences 200] [--max-length 64] [--beam 4] [--threads CORES]
                                 [--max-batch-sentences 32] [--repeats 1] [--profile] [--json]
                                 [--layers 6 --d-model 512 --heads 8 --ffn 2048 --vocab 58101]

With ``--json`` the last line is a JSON object: ``ratio_best`` (this engine's best tokens/s over
CTranslate2's), ``ratio_by_precision``, ``runs``, ``agreement``, ``cpu``.
"""
from __future__ import annotations

import argparse
import gzip
import json
import os
import resource
import shutil
import subprocess
import sys
import time
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
if str(REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(REPO_ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from train_speed import cpu_info

SHARED = REPO_ROOT.parent / "shared" / "data"
DEFAULT_SRC = SHARED / "wmt-newstest-de-en" / "newstest2014.en.gz"
TATOEBA = SHARED / "tatoeba-deu-eng"
DEFAULT_WORK_DIR = Path("/work/runs/marian-speed")
SPM_PIECES = 8000  # per language, as the vocabulary allows
SPM_LINES = 100_000  # Tatoeba lines each SentencePiece model is trained on
ENGINES = (("ours", "fp32"), ("ours", "int8"), ("ct2", "float32"), ("ct2", "int8"), ("hf", "fp32"))


# --- the model directory, the bundles and CTranslate2's models (cached) --------------------------

def build_model_dir(out: Path, args: argparse.Namespace) -> Path:
    """A MarianMT directory of the requested shape with random weights (seed ``args.seed``)."""
    if (out / "built.ok").is_file():
        return out
    import sentencepiece as spm
    import torch
    from transformers import MarianConfig, MarianMTModel, MarianTokenizer

    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    pieces = max(100, min(SPM_PIECES, (args.vocab - 3) // 4))
    for side, lang in (("source", "en"), ("target", "de")):
        with gzip.open(TATOEBA / f"train.{lang}.gz", "rt", encoding="utf-8") as f:
            lines = [line.strip() for _, line in zip(range(SPM_LINES), f)]
        spm.SentencePieceTrainer.train(sentence_iterator=iter(lines), model_prefix=str(out / side), vocab_size=pieces,
                                       character_coverage=1.0, model_type="unigram", bos_id=-1, eos_id=-1, unk_id=0,
                                       pad_id=-1, minloglevel=2, hard_vocab_limit=False)
        (out / f"{side}.model").rename(out / f"{side}.spm")
        (out / f"{side}.vocab").unlink()
    vocab = {"</s>": 0, "<unk>": 1}
    for side in ("source", "target"):
        sp = spm.SentencePieceProcessor(model_file=str(out / f"{side}.spm"))
        for i in range(sp.get_piece_size()):
            if not sp.is_unknown(i):
                vocab.setdefault(sp.id_to_piece(i), len(vocab))
    filler = 0
    while len(vocab) < args.vocab - 1:  # opus-mt-en-de's vocabulary is 58,101 with <pad>
        vocab.setdefault(f"\u2581w{filler}", len(vocab))
        filler += 1
    pad = vocab["<pad>"] = len(vocab)
    (out / "vocab.json").write_text(json.dumps(vocab, ensure_ascii=False), encoding="utf-8")
    torch.manual_seed(args.seed)
    config = MarianConfig(vocab_size=len(vocab), decoder_vocab_size=len(vocab), d_model=args.d_model,
                          encoder_layers=args.layers, decoder_layers=args.layers, encoder_attention_heads=args.heads,
                          decoder_attention_heads=args.heads, encoder_ffn_dim=args.ffn, decoder_ffn_dim=args.ffn,
                          max_position_embeddings=512, pad_token_id=pad, eos_token_id=0, forced_eos_token_id=0,
                          decoder_start_token_id=pad, activation_function="swish", scale_embedding=True,
                          share_encoder_decoder_embeddings=True, dropout=0.0)
    model = _spread(MarianMTModel(config).eval(), args.seed)
    model.generation_config = generation_config(pad)
    model.save_pretrained(out)
    MarianTokenizer(str(out / "source.spm"), str(out / "target.spm"), str(out / "vocab.json"), source_lang="en",
                    target_lang="de").save_pretrained(out)
    (out / "README.md").write_text("# opus-mt-en-de shape, random weights\n\n* license: CC-BY 4.0\n", encoding="utf-8")
    (out / "built.ok").write_text("")
    return out


def generation_config(pad: int):
    """opus-mt-en-de's generation config, for a vocabulary whose ``<pad>`` (the decoder's start) is ``pad``."""
    from transformers import GenerationConfig

    return GenerationConfig(num_beams=4, max_length=512, bad_words_ids=[[pad]], pad_token_id=pad, eos_token_id=0,
                            decoder_start_token_id=pad, forced_eos_token_id=0)


def ct2_options(beam: int) -> dict:
    """CTranslate2's ``translate_batch`` options that decode as the other engines do here."""
    return {"beam_size": beam, "length_penalty": 1.0, "return_end_token": True}


def hf_generator(model, beam: int, device=None):
    """``generate(rows, new_tokens)``: transformers' beam search over id lists (eos-terminated
    outputs without the decoder's start token), on ``device`` (the model's own when None)."""
    import torch

    pad, eos = model.config.pad_token_id, model.config.eos_token_id

    def generate(rows: list[list[int]], new_tokens: int) -> list[list[int]]:
        src = torch.full((len(rows), max(map(len, rows))), pad, dtype=torch.long)
        for r, row in enumerate(rows):
            src[r, :len(row)] = torch.tensor(row)
        if device is not None:
            src = src.to(device)
        with torch.inference_mode():
            out = model.generate(input_ids=src, attention_mask=src != pad, num_beams=beam, do_sample=False,
                                 max_new_tokens=new_tokens, length_penalty=1.0, early_stopping=False)
        produced = []
        for row in out[:, 1:].tolist():  # the decoder's start token is not produced
            produced.append(row[:row.index(eos) + 1] if eos in row else [t for t in row if t != pad])
        return produced

    return generate


def _spread(model, seed: int):
    """Weights that make peaked, input-dependent outputs: transformers' default init (std 0.02)
    gives near-uniform distributions whose argmax is one token everywhere, so engines would part
    on ties. Linear layers get std 1 / sqrt(fan-in), cross-attention 0.3 / sqrt(fan-in) (else the
    source alone decides every step), the shared embedding std 0.05 (the <pad> row, the decoder's
    start, stays zero: CTranslate2 starts from a zero embedding)."""
    import math

    import torch

    generator = torch.Generator().manual_seed(seed)
    vocab = model.config.vocab_size
    with torch.no_grad():
        for name, module in model.named_modules():
            if isinstance(module, torch.nn.Linear) and module.out_features != vocab:
                scale = 0.3 if "decoder" in name and "encoder_attn" in name else 1.0
                module.weight.normal_(0.0, scale / math.sqrt(module.in_features), generator=generator)
        embedding = model.get_input_embeddings().weight
        embedding.normal_(0.0, 0.05, generator=generator)
        embedding[model.config.pad_token_id].zero_()
    return model


def _current(bundle: Path) -> bool:
    """Whether a cached bundle exists and follows this engine's graph contract (else it is imported again)."""
    from worker.engine.bundle import transformer_interface

    try:
        manifest = json.loads((bundle / "manifest.json").read_text(encoding="utf-8"))
        inputs = tuple(i["name"] for i in manifest["graphs"]["decoder_step"]["inputs"])
        return inputs == transformer_interface(int(manifest["model_config"]["decoder_layers"]))["step_inputs"]
    except (OSError, ValueError, KeyError):
        return False


def prepare_models(args: argparse.Namespace) -> dict[tuple[str, str], Path]:
    """Build, import and convert what is not cached yet; the model path of each engine."""
    shape = f"L{args.layers}-d{args.d_model}-h{args.heads}-f{args.ffn}-v{args.vocab}-seed{args.seed}"
    root = Path(args.work_dir) / shape
    model_dir = build_model_dir(root / "hf", args)
    paths = {("hf", "fp32"): model_dir}
    for precision in ("fp32", "int8"):
        bundle = root / f"bundle-{precision}"
        if not _current(bundle):
            started = time.perf_counter()
            _run([sys.executable, "-m", "nmt", "import", str(model_dir), "--out", str(bundle), "--force",
                  *(["--int8"] if precision == "int8" else [])])
            print(f"nmt import ({precision}): {time.perf_counter() - started:.0f} s", file=sys.stderr)
        paths[("ours", precision)] = bundle
    for precision in ("float32", "int8"):
        converted = root / f"ct2-{precision}"
        if not (converted / "model.bin").is_file():
            converter = Path(sys.executable).with_name("ct2-transformers-converter")
            _run([str(converter), "--model", str(model_dir), "--output_dir", str(converted), "--force",
                  *(["--quantization", "int8"] if precision == "int8" else [])])
        paths[("ct2", precision)] = converted
    return paths


def _run(cmd: list[str]) -> None:
    done = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"marian_speed: {' '.join(cmd[:4])} ... failed:\n{done.stdout[-2000:]}{done.stderr[-3000:]}")


# --- one engine in its own process -------------------------------------------------------------

def child(args: argparse.Namespace) -> dict:
    """Decode the inputs with one engine and layout; the result, outputs as target ids."""
    inputs = json.loads(Path(args.inputs).read_text(encoding="utf-8"))
    run = {"ours": _decode_ours, "ct2": _decode_ct2, "hf": _decode_hf}[args.engine]
    result = run(args, inputs)
    result.update(engine=args.engine, precision=args.precision, workers=args.workers, threads=args.threads,
                  peak_rss_mb=_peak_rss_mb())
    result["target_tokens_per_s"] = result["tokens"] / result["seconds"]
    return result


def _peak_rss_mb() -> float:
    """This process's own peak RSS: VmHWM (ru_maxrss would carry the parent's peak across exec)."""
    try:
        status = Path("/proc/self/status").read_text()
        return int(next(line.split()[1] for line in status.splitlines() if line.startswith("VmHWM:"))) / 1024
    except (OSError, StopIteration):
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _decode_ours(args: argparse.Namespace, inputs: dict) -> dict:
    """``translate_sentences``, every part of the decode timed (``_Timers``)."""
    from worker.engine import EngineSettings, Translator
    from worker.text.pipeline import TextOptions

    settings = EngineSettings(provider="cpu", intra_op_threads=args.threads, batch_workers=args.workers,
                              max_batch_sentences=args.max_batch_sentences, shortlist="off")
    translator = Translator(args.model, settings)
    options = translator.search_options(beam=args.beam, max_length=args.max_length)
    text = TextOptions(protect_spans=False, restore_case=False, check_language=False)
    sentences = inputs["sentences"]
    translator.translate_sentences(sentences[:2], translator.search_options(beam=args.beam, max_length=4),
                                   text_options=text)  # warm-up
    timers = _Timers(translator, capture_at=args.max_length // 2 if args.profile else None)
    started = time.perf_counter()
    translator.translate_sentences(sentences, options, text_options=text)
    seconds = time.perf_counter() - started
    timers.restore()
    outputs = [list(timers.found[tuple(ids)]) for ids in inputs["ids"] if tuple(ids) in timers.found]
    result = {"provider": f"onnxruntime {_version('onnxruntime')} {translator.provider}", "seconds": seconds,
              "outputs": outputs, "tokens": sum(len(o) + 1 for o in outputs),  # + eos, always produced
              "same_source_ids": len(outputs), "parts": timers.parts(seconds)}
    if args.profile and timers.feeds is not None:
        result["step_profile"] = _profile_step(translator, timers.names, timers.feeds, args.threads)
    return result


class _Timers:
    """Wall time inside the step model's calls, each beam search and the search over batches, and
    the source ids -> best target ids of every sentence decoded (from ``Translator._search``)."""

    def __init__(self, translator, capture_at: int | None) -> None:
        from worker.engine import search

        self.translator, self.search = translator, search
        # name -> each call's seconds (list.append is atomic under the GIL; batch workers share these)
        self.calls: dict[str, list[float]] = {name: [] for name in ("encode", "step", "reorder", "select",
                                                                     "beam_search", "search")}
        self.found: dict[tuple[int, ...], tuple[int, ...]] = {}
        self.feeds, self.names, self.capture_at, self.captured_rows = None, None, capture_at, 0
        model = translator.model
        self.originals = {"encode": model.encode, "step": model.step, "reorder": model.reorder, "select": model.select}
        for name, method in self.originals.items():
            setattr(model, name, self._timed(name, method))
        self.beam_search = search.beam_search
        search.beam_search = self._timed("beam_search", search.beam_search)
        self.decoder_run = model.decoder.run
        if capture_at is not None:
            model.decoder.run = self._capture
        own_search = translator._search

        def recorded(sources, options, progress):
            started = time.perf_counter()
            found = own_search(sources, options, progress)
            self.calls["search"].append(time.perf_counter() - started)
            self.found.update({tuple(s): hyps[0].tokens for s, hyps in zip(sources, found)})
            return found

        translator._search = recorded

    def _timed(self, name, method):
        def timed(*args, **kwargs):
            started = time.perf_counter()
            try:
                return method(*args, **kwargs)
            finally:
                self.calls[name].append(time.perf_counter() - started)
        return timed

    def _capture(self, names, feeds, *rest):
        """Keep the feeds of the largest step at ``capture_at`` cached positions (for ``--profile``)."""
        if feeds["self_keys.0"].shape[3] == self.capture_at and feeds["prev_ids"].size > self.captured_rows:
            self.feeds, self.captured_rows = {k: v.copy() for k, v in feeds.items()}, feeds["prev_ids"].size
            self.names = list(names)
        return self.decoder_run(names, feeds, *rest)

    def restore(self) -> None:
        for name in self.originals:
            delattr(self.translator.model, name)  # the class's methods again
        self.search.beam_search = self.beam_search
        self.translator.model.decoder.run = self.decoder_run
        del self.translator._search

    def parts(self, total: float) -> dict[str, float]:
        """Seconds by part. The graph and copy parts are summed over batch workers, as is
        ``beam_search`` (each batch's whole search); ``host_search`` is its remainder."""
        s = {name: sum(seconds) for name, seconds in self.calls.items()}
        graph = s["encode"] + s["step"]
        copies = s["reorder"] + s["select"]
        return {"encode": s["encode"], "step": s["step"], "state_copies": copies,
                "host_search": s["beam_search"] - graph - copies, "beam_search": s["beam_search"],
                "text_pipeline": total - s["search"], "total": total}


def profile_runs(graph, options, providers: list, names: list[str], feeds: dict, runs: int = 10,
                 warm: int = 2) -> tuple[float, list[dict]]:
    """ONNX Runtime's profiler over ``runs`` plain runs of ``graph`` (a path or serialized model) after
    ``warm`` unprofiled ones: the wall ms per run, and each node's event of the timed runs
    (``op``, ``node``, ``provider``, ``ms`` per run)."""
    import tempfile

    import onnxruntime as ort

    with tempfile.TemporaryDirectory() as tmp:
        options.enable_profiling = True
        options.profile_file_prefix = os.path.join(tmp, "step")
        session = ort.InferenceSession(graph if isinstance(graph, bytes) else str(graph), options,
                                       providers=providers)
        for _ in range(warm):
            session.run(names, feeds)
        started = time.perf_counter()
        for _ in range(runs):
            session.run(names, feeds)
        wall_ms = (time.perf_counter() - started) / runs * 1000
        events = json.loads(Path(session.end_profiling()).read_text())
    starts = sorted(e["ts"] for e in events if e.get("cat") == "Session" and e["name"] == "model_run")
    nodes = [{"op": e["args"]["op_name"], "node": e["name"][:-len("_kernel_time")],
              "provider": e["args"].get("provider", "?").replace("ExecutionProvider", ""),
              "ms": e["dur"] / runs / 1000}
             for e in events
             if e.get("cat") == "Node" and e["name"].endswith("_kernel_time") and e["ts"] >= starts[-runs]]
    return wall_ms, nodes


def _profile_step(translator, names: list[str], feeds: dict, threads: int, runs: int = 10) -> dict:
    """ONNX Runtime's profiler over ``runs`` calls of the decoder step on a captured call (its
    outputs and feeds): ms per call by operator type, and the call's wall time."""
    from worker.engine.ort_model import session_options

    wall_ms, nodes = profile_runs(translator.bundle.graph_path("decoder_step"), session_options(threads),
                                  ["CPUExecutionProvider"], names, feeds, runs)
    by_op: dict[str, float] = {}
    by_node: dict[str, float] = {}
    for e in nodes:
        by_op[e["op"]] = by_op.get(e["op"], 0.0) + e["ms"]
        node = f"{e['node']} ({e['op']})"
        by_node[node] = by_node.get(node, 0.0) + e["ms"]
    rows, cached = feeds["prev_ids"].size, feeds["self_keys.0"].shape[3]
    return {"rows": rows, "cached_steps": cached, "wall_ms": wall_ms,
            "ms_by_op": dict(sorted(by_op.items(), key=lambda kv: -kv[1])),
            "largest_nodes_ms": dict(sorted(by_node.items(), key=lambda kv: -kv[1])[:5])}


def _decode_ct2(args: argparse.Namespace, inputs: dict) -> dict:
    import ctranslate2

    translator = ctranslate2.Translator(args.model, device="cpu", compute_type=args.precision,
                                        inter_threads=args.workers, intra_threads=args.threads)
    vocab = json.loads((Path(args.model).parent / "hf" / "vocab.json").read_text(encoding="utf-8"))
    options = {**ct2_options(args.beam), "max_batch_size": args.max_batch_sentences}
    translator.translate_batch(inputs["pieces"][:2], max_decoding_length=4, **options)  # warm-up
    started = time.perf_counter()
    results = translator.translate_batch(inputs["pieces"], max_decoding_length=args.max_length + 1, **options)
    seconds = time.perf_counter() - started
    produced = [r.hypotheses[0] for r in results]
    outputs = [[vocab[p] for p in tokens if p != "</s>"] for tokens in produced]
    return {"provider": f"ctranslate2 {ctranslate2.__version__} {args.precision}", "seconds": seconds,
            "outputs": outputs, "tokens": sum(len(t) for t in produced)}


def _decode_hf(args: argparse.Namespace, inputs: dict) -> dict:
    import torch
    import transformers
    from transformers import MarianMTModel

    torch.set_num_threads(args.threads)
    model = MarianMTModel.from_pretrained(args.model).eval()
    pad, eos = model.config.pad_token_id, model.config.eos_token_id
    ids = inputs["ids"]
    order = sorted(range(len(ids)), key=lambda i: len(ids[i]))
    batches = [order[i:i + args.max_batch_sentences] for i in range(0, len(order), args.max_batch_sentences)]

    generate = hf_generator(model, args.beam)

    generate(ids[:2], 4)  # warm-up
    outputs: list[list[int]] = [[] for _ in ids]
    started = time.perf_counter()
    for batch in batches:
        for i, produced in zip(batch, generate([ids[i] for i in batch], args.max_length + 1)):
            outputs[i] = produced
    seconds = time.perf_counter() - started
    return {"provider": f"transformers {transformers.__version__} generate, torch {torch.__version__}",
            "seconds": seconds, "tokens": sum(map(len, outputs)),
            "outputs": [[t for t in o if t != eos] for o in outputs]}


def _version(package: str) -> str:
    from importlib.metadata import version

    return version(package)


# --- the comparison ----------------------------------------------------------------------------

def agreement(a: list[list[int]], b: list[list[int]], length: int) -> dict[str, float]:
    """Token agreement of the first ``length`` tokens (CTranslate2 decodes one more in place of eos):
    equal tokens at equal positions over the longer output's length, summed over sentences, and
    the count of identical outputs."""
    a, b = [p[:length] for p in a], [q[:length] for q in b]
    same = sum(sum(x == y for x, y in zip(p, q)) for p, q in zip(a, b))
    total = sum(max(len(p), len(q)) for p, q in zip(a, b))
    return {"token_agreement": same / max(1, total), "identical": sum(p == q for p, q in zip(a, b)), "of": len(a)}


def write_inputs(model_dir: Path, args: argparse.Namespace, out: Path) -> int:
    """The first ``--sentences`` sentences with transformers' source ids and pieces (eos included)."""
    from transformers import MarianTokenizer

    tokenizer = MarianTokenizer.from_pretrained(str(model_dir))
    with gzip.open(args.src, "rt", encoding="utf-8") as f:
        sentences = [line.strip() for line in f if line.strip()][:args.sentences]
    ids = [tokenizer(s)["input_ids"] for s in sentences]
    pieces = [tokenizer.convert_ids_to_tokens(row) for row in ids]
    out.write_text(json.dumps({"sentences": sentences, "ids": ids, "pieces": pieces}), encoding="utf-8")
    return sum(map(len, ids))


def main(argv: list[str] | None = None) -> int:
    from worker.engine.settings import host_cores

    cores = host_cores()
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sentences", type=int, default=200)
    parser.add_argument("--src", default=str(DEFAULT_SRC))
    parser.add_argument("--max-length", type=int, default=64, help="target tokens decoded per sentence (eos apart)")
    parser.add_argument("--beam", type=int, default=4)
    parser.add_argument("--threads", type=int, default=cores, help="cores every engine may use")
    parser.add_argument("--max-batch-sentences", type=int, default=32)
    parser.add_argument("--engines", default=",".join(f"{e}:{p}" for e, p in ENGINES),
                        help="comma-separated ENGINE:PRECISION runs (default: all five)")
    parser.add_argument("--work-dir", default=str(DEFAULT_WORK_DIR), help="cache of the model directory and "
                        "the converted models")
    parser.add_argument("--layers", type=int, default=6)
    parser.add_argument("--d-model", type=int, default=512)
    parser.add_argument("--heads", type=int, default=8)
    parser.add_argument("--ffn", type=int, default=2048)
    parser.add_argument("--vocab", type=int, default=58101, help="vocabulary entries, <pad> included")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--repeats", type=int, default=1, help="runs of each configuration, interleaved; the "
                        "fastest counts (a shared machine only ever slows a run down)")
    parser.add_argument("--profile", action="store_true", help="ONNX Runtime's per-operator profile of one "
                        "decoder step halfway through a batch, for each of this engine's runs")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--engine", choices=("ours", "ct2", "hf"), help=argparse.SUPPRESS)
    parser.add_argument("--precision", help=argparse.SUPPRESS)
    parser.add_argument("--model", help=argparse.SUPPRESS)
    parser.add_argument("--inputs", help=argparse.SUPPRESS)
    parser.add_argument("--workers", type=int, default=1, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.engine:
        print(json.dumps(child(args)))
        return 0

    wanted = [tuple(item.split(":")) for item in args.engines.split(",")]
    if unknown := [w for w in wanted if w not in ENGINES]:
        print(f"marian_speed: unknown runs {unknown}; choose from {[':'.join(e) for e in ENGINES]}", file=sys.stderr)
        return 2
    paths = prepare_models(args)
    inputs = paths[("hf", "fp32")].parent / f"inputs-{args.sentences}.json"
    source_tokens = write_inputs(paths[("hf", "fp32")], args, inputs)
    layouts = [(1, args.threads)] + ([(args.threads, 1)] if args.threads > 1 else [])
    configs = [(engine, precision, workers, threads) for engine, precision in wanted
               for workers, threads in (layouts if engine != "hf" else layouts[:1])]
    fastest: dict[tuple, dict] = {}
    for _ in range(max(1, args.repeats)):
        for engine, precision, workers, threads in configs:
            cmd = [sys.executable, __file__, "--engine", engine, "--precision", precision,
                   "--model", str(paths[(engine, precision)]), "--inputs", str(inputs),
                   "--workers", str(workers), "--threads", str(threads), "--beam", str(args.beam),
                   "--max-length", str(args.max_length), "--max-batch-sentences", str(args.max_batch_sentences),
                   *(["--profile"] if args.profile else [])]
            done = subprocess.run(cmd, capture_output=True, text=True, check=False)
            if done.returncode != 0:
                print(done.stderr[-4000:], file=sys.stderr)
                return done.returncode
            run = json.loads(done.stdout.strip().splitlines()[-1])
            print(f"  {engine} {precision} {workers}x{threads}: {run['target_tokens_per_s']:.0f} tok/s",
                  file=sys.stderr)
            config = (engine, precision, workers, threads)
            if config not in fastest or run["target_tokens_per_s"] > fastest[config]["target_tokens_per_s"]:
                fastest[config] = run
    runs = list(fastest.values())
    best = {}
    for r in runs:
        key = (r["engine"], r["precision"])
        if key not in best or r["target_tokens_per_s"] > best[key]["target_tokens_per_s"]:
            best[key] = r
    report = _report(args, best, runs, cores, source_tokens)
    if args.json:
        print(json.dumps(report))
    return 0


def _report(args: argparse.Namespace, best: dict, runs: list[dict], cores: int, source_tokens: int) -> dict:
    cpu_name, cpu_flags = cpu_info()
    cpu = f"{cpu_name}, {cores} core(s), {', '.join(cpu_flags) or 'no avx2/avx512'}"
    n = len(next(iter(best.values()))["outputs"])
    print(f"{n} sentences of {Path(args.src).name} ({source_tokens} source tokens), beam {args.beam}, "
          f"{args.max_length} tokens + eos each; model L{args.layers} d{args.d_model} h{args.heads} "
          f"ffn{args.ffn} V{args.vocab}, random weights; fastest of {max(1, args.repeats)} run(s) each")
    print(f"cpu: {cpu}")
    print(f"{'engine':<16}{'layout':>7}{'tok/s':>8}{'seconds':>9}{'RSS MiB':>9}{'tokens':>8}  provider")
    for r in sorted(runs, key=lambda r: -r["target_tokens_per_s"]):
        mark = "  *" if best[(r["engine"], r["precision"])] is r else ""
        print(f"{r['engine'] + ' ' + r['precision']:<16}{str(r['workers']) + 'x' + str(r['threads']):>7}"
              f"{r['target_tokens_per_s']:>8.0f}{r['seconds']:>9.1f}{r['peak_rss_mb']:>9.0f}{r['tokens']:>8}"
              f"  {r['provider']}{mark}")
    print(f"layout: batches at once x threads each; *: the engine and precision's faster layout (used below); "
          f"cpu: {cpu_name}")
    ratios: dict = {}
    ours = [r for k, r in best.items() if k[0] == "ours"]
    ct2 = [r for k, r in best.items() if k[0] == "ct2"]
    if ours and ct2:
        top_ours = max(ours, key=lambda r: r["target_tokens_per_s"])
        top_ct2 = max(ct2, key=lambda r: r["target_tokens_per_s"])
        ratios["best"] = top_ours["target_tokens_per_s"] / top_ct2["target_tokens_per_s"]
        verdict = ("goal met" if ratios["best"] > 1 else "above the 0.8 floor" if ratios["best"] >= 0.8
                   else "BELOW the 0.8 floor")
        print(f"ratio at each engine's best precision: ours {top_ours['precision']} "
              f"{top_ours['target_tokens_per_s']:.0f} / ctranslate2 {top_ct2['precision']} "
              f"{top_ct2['target_tokens_per_s']:.0f} tok/s = {ratios['best']:.2f}x "
              f"({verdict}; cpu: {cpu_name})")
        for mine, theirs in (("fp32", "float32"), ("int8", "int8")):
            if ("ours", mine) in best and ("ct2", theirs) in best:
                ratios[mine] = (best[("ours", mine)]["target_tokens_per_s"]
                                / best[("ct2", theirs)]["target_tokens_per_s"])
                print(f"  at equal precision, {mine}: {ratios[mine]:.2f}x")
    agree = {}
    for a, b in ((("ours", "fp32"), ("hf", "fp32")), (("ours", "fp32"), ("ct2", "float32")),
                 (("ct2", "float32"), ("hf", "fp32")), (("ours", "int8"), ("ours", "fp32")),
                 (("ct2", "int8"), ("ct2", "float32")), (("ours", "int8"), ("ct2", "int8"))):
        if a in best and b in best:
            name = f"{' '.join(a)} vs {' '.join(b)}"
            agree[name] = agreement(best[a]["outputs"], best[b]["outputs"], args.max_length)
            print(f"agreement {name:<28} tokens {agree[name]['token_agreement']:.3f}, identical outputs "
                  f"{agree[name]['identical']}/{agree[name]['of']}")
    for r in (r for k, r in best.items() if k[0] == "ours"):
        p = r["parts"]
        busy = p["beam_search"]
        print(f"ours {r['precision']} {r['workers']}x{r['threads']}: of {busy:.1f} s in beam search (summed over "
              f"batch workers): graph {(p['encode'] + p['step']) / busy:.0%} (encoder {p['encode'] / busy:.0%}, "
              f"decoder step {p['step'] / busy:.0%}), cache reorder {p['state_copies'] / busy:.0%}, host-side search "
              f"{p['host_search'] / busy:.0%}; text pipeline {p['text_pipeline']:.1f} s of {p['total']:.1f} s wall")
        if r.get("same_source_ids", n) != n:
            print(f"  warning: only {r['same_source_ids']}/{n} sentences had transformers' source ids")
        if "step_profile" in r:
            s = r["step_profile"]
            ops = ", ".join(f"{op} {ms:.1f}" for op, ms in list(s["ms_by_op"].items())[:8])
            print(f"  one step, {s['rows']} rows, {s['cached_steps']} cached steps: {s['wall_ms']:.1f} ms; "
                  f"ms by operator: {ops}")
            nodes = ", ".join(f"{node} {ms:.1f}" for node, ms in s["largest_nodes_ms"].items())
            print(f"  largest nodes (ms): {nodes}")
    for r in runs:
        r.pop("outputs")
    return {"ratio_best": ratios.get("best"), "ratio_by_precision": {k: v for k, v in ratios.items() if k != "best"},
            "agreement": agree, "runs": runs, "cpu": cpu_name, "cpu_flags": cpu_flags, "cores": cores,
            "sentences": n, "repeats": max(1, args.repeats), "beam": args.beam, "max_length": args.max_length,
            "threads": args.threads,
            "shape": {"layers": args.layers, "d_model": args.d_model, "heads": args.heads, "ffn": args.ffn,
                      "vocab": args.vocab}}


if __name__ == "__main__":
    sys.exit(main())
