"""The CUDA path on one GPU, in one run: the provider proven, both decoder families timed beside
PyTorch eager and CTranslate2, long inputs. Written for a lent GPU machine that has PyTorch,
transformers and onnx but neither onnxruntime-gpu nor ctranslate2 (both travel as wheels: the
recipe is in docs/benchmarks.md, "CUDA").

Parts, each recorded in ``--out``/gpu.json as soon as it ends (a run that is cut short keeps what
it finished):

1. ``proof``: the shipped GRU/hybrid bundle on ``CUDAExecutionProvider`` (read back from each
   session: no silent fallback), IO binding on, beam 5 over ``--proof-sentences`` newstest2014
   sentences; the best hypotheses compared with the CPU provider's, token for token, as the
   provider runs by default (TF32 products) and with ``use_tf32=0``.
2. ``gru``: target tokens/s of the shipped bundle at beam 5 over all ``--src`` sentences, batch
   sizes 32 up to ``--max-batch`` (doubling, until one fails or runs past ``--run-limit``
   seconds), fp32 and fp16 (``export.quantize.convert_fp16``), beside PyTorch eager (the model
   rebuilt from the bundle by ``export.recover``). Every run reports the share of wall time
   inside the step model (graphs, uploads and downloads) and in the host-side search (the rest),
   the GPU utilisation sampled every 20 ms (NVML), and the GPU memory in use at its peak.
3. ``long``: one 2,000-token segment, and one batch of the 256 longest sentences, beam 5.
   (``--profile``: before it, a cProfile of one search of each family, in ``profile-*.txt``.)
4. ``marian``: a model of opus-mt-en-de's shape (``bench/marian_speed.py``'s recipe, random
   weights from ``--seed``; its small files travel in the payload, the weights are made here),
   imported by ``nmt import``; CUDA against the CPU provider token for token (TF32 on and off);
   then beam 4 to exactly ``--max-length`` tokens (random weights never end early) at each batch
   size, fp32 and fp16; a ``--long-tokens`` segment through the Translator and the
   ``--long-batch`` longest sentences in one batch; then (unless ``--no-baselines``) CTranslate2
   (float32, float16) on the same weights and transformers' ``generate``. CTranslate2's wheel
   wants CUDA 12's ``libcublas.so.12``: on a CUDA 13 machine, link it to the ``.so.13`` files.

    python bench/gpu_check.py --payload .gpuload --out "$OUT" [--device cuda] [--quick]

``--device cpu --quick`` runs every part small on the CPU (the script's own check, no GPU).
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import threading
import time
import traceback
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parents[1]
if str(REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(REPO_ROOT))

import numpy as np
BENCH = str(REPO_ROOT / "bench")  # marian_speed's pieces, imported where used (it imports torch)
if BENCH not in sys.path:
    sys.path.insert(0, BENCH)

RESULTS: dict = {}
STARTED = time.perf_counter()


def log(*parts) -> None:
    print(f"[{time.perf_counter() - STARTED:6.1f}s]", *parts, flush=True)


def save(out: Path) -> None:
    (out / "gpu.json").write_text(json.dumps(RESULTS, indent=1, default=str), encoding="utf-8")


class Sampler:
    """GPU utilisation (%) and memory in use (MiB), every 20 ms, through NVML."""

    def __init__(self) -> None:
        self.samples: list[tuple[float, float, float]] = []
        self.handle = None
        try:
            import pynvml

            pynvml.nvmlInit()
            self.nvml = pynvml
            self.handle = pynvml.nvmlDeviceGetHandleByIndex(0)
            self.name = pynvml.nvmlDeviceGetName(self.handle)
        except Exception as exc:  # noqa: BLE001 - no GPU (the CPU check) or no NVML
            self.name = f"no NVML ({exc.__class__.__name__})"
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        while not self.stop.is_set() and self.handle is not None:
            try:
                util = self.nvml.nvmlDeviceGetUtilizationRates(self.handle).gpu
                mem = self.nvml.nvmlDeviceGetMemoryInfo(self.handle).used / 2**20
                self.samples.append((time.perf_counter(), util, mem))
            except Exception:  # noqa: BLE001
                pass
            time.sleep(0.02)

    def window(self, start: float, end: float) -> dict:
        inside = [(u, m) for t, u, m in self.samples if start <= t <= end]
        if not inside:
            return {"gpu_util_mean": None, "gpu_mem_peak_mib": None}
        return {"gpu_util_mean": round(float(np.mean([u for u, _ in inside])), 1),
                "gpu_mem_peak_mib": round(max(m for _, m in inside))}


class Timed:
    """A step model whose calls are timed: the rest of a search's wall time is the host-side search."""

    METHODS = ("encode", "expand", "select", "initial_state", "step", "reorder")

    def __init__(self, model) -> None:
        self.model, self.seconds = model, 0.0
        for name in self.METHODS:
            setattr(self, name, self._timed(getattr(model, name)))

    def _timed(self, method):
        def call(*args, **kwargs):
            started = time.perf_counter()
            try:
                return method(*args, **kwargs)
            finally:
                self.seconds += time.perf_counter() - started
        return call

    def __getattr__(self, name):
        return getattr(self.model, name)


def synchronize(device: str) -> None:
    if device == "cuda":
        import torch

        torch.cuda.synchronize()


def timed_search(model, sources, options, batch: int, sampler: Sampler, device: str) -> tuple[dict, list]:
    from worker.engine.search import search_in_batches

    timed = Timed(model)
    synchronize(device)
    start = time.perf_counter()
    hyps = search_in_batches(timed, sources, options, batch, batch * max(map(len, sources)), 1)
    synchronize(device)
    seconds = time.perf_counter() - start
    outputs = [h[0].tokens for h in hyps]
    tokens = sum(len(o) + 1 for o in outputs)
    return ({"batch": batch, "sentences": len(sources), "seconds": round(seconds, 3),
             "target_tokens_per_s": round(tokens / seconds, 1), "tokens": tokens,
             "step_model_share": round(timed.seconds / seconds, 3),
             "host_search_share": round(1 - timed.seconds / seconds, 3), **sampler.window(start, start + seconds)},
            outputs)


def profiled(label: str, model, sources, options, batch: int, out: Path) -> None:
    """cProfile of one search over ``sources`` at ``batch``: where the host side's time goes
    (``--profile``), the 30 costliest functions by own time in ``out``/profile-LABEL.txt."""
    import cProfile
    import io
    import pstats

    from worker.engine.search import search_in_batches

    profile = cProfile.Profile()
    profile.enable()
    search_in_batches(model, sources, options, batch, batch * max(map(len, sources)), 1)
    profile.disable()
    text = io.StringIO()
    pstats.Stats(profile, stream=text).sort_stats("tottime").print_stats(30)
    (out / f"profile-{label}.txt").write_text(text.getvalue(), encoding="utf-8")
    log("profile", label, "written")


def batch_sizes(args) -> list[int]:
    if args.batches:
        return [int(b) for b in args.batches.split(",")]
    sizes, b = [], 32 if not args.quick else 4
    while b <= args.max_batch:
        sizes.append(b)
        b *= 2
    return sizes


def sweep(label: str, make_model, sources, options, args, sampler: Sampler, warm=None,
          sizes: list[int] | None = None) -> tuple[list, list | None]:
    """Timed searches at growing batch sizes; stops at the first failure or a run past the limit."""
    runs, first = [], None
    model = make_model()
    from worker.engine.search import beam_search

    beam_search(model, sources[:8] if warm is None else warm, options)  # warm-up: kernels, allocator
    for batch in sizes or batch_sizes(args):
        if time.perf_counter() - STARTED > args.deadline:
            log(label, "deadline reached; larger batches skipped")
            break
        try:
            run, outputs = timed_search(model, sources, options, batch, sampler, args.device)
        except Exception as exc:  # noqa: BLE001 - out of memory ends the sweep, recorded
            runs.append({"batch": batch, "error": f"{exc.__class__.__name__}: {str(exc)[:300]}"})
            log(label, batch, "failed:", runs[-1]["error"])
            break
        first = first or outputs
        runs.append(run)
        log(label, json.dumps(run))
        if run["seconds"] > args.run_limit:
            break
    return runs, first


def sweep_each(prefix: str, makers, sources, options, args, sampler: Sampler, into: dict, out: Path,
               sizes: list[int] | None = None, warm: int = 4) -> dict:
    """``sweep`` each (label, make model) pair in turn, at the same batch sizes, with a warm-up on
    the first ``warm`` sentences; each result goes under ``into[label]`` (``{"runs": [...]}``, or ``{"error": ...}``
    where making or running the model failed) and is saved at once. Returns each label's outputs
    at the first batch size (None where it failed)."""
    outputs = {}
    for label, make in makers:
        try:
            runs, outputs[label] = sweep(f"{prefix} {label}", make, sources, options, args, sampler,
                                         warm=sources[:warm], sizes=sizes)
            into[label] = {"runs": runs}
        except Exception:  # noqa: BLE001 - one failed model leaves the others' figures
            into[label], outputs[label] = {"error": traceback.format_exc()[-1500:]}, None
            log(prefix, label, "failed", into[label]["error"][-300:])
        save(out)
    return outputs


def identical(a: list, b: list, length: int | None = None) -> dict:
    if length is not None:
        a, b = [list(x)[:length] for x in a], [list(y)[:length] for y in b]
    same = sum(list(x) == list(y) for x, y in zip(a, b))
    positions = sum(sum(p == q for p, q in zip(x, y)) for x, y in zip(a, b))
    total = sum(max(len(x), len(y)) for x, y in zip(a, b))
    first = next((i for i, (x, y) in enumerate(zip(a, b)) if list(x) != list(y)), None)
    return {"identical": same, "of": len(a), "token_agreement": round(positions / max(1, total), 5),
            "first_difference": first}


class patched:
    """``name`` in each module replaced by ``value`` for the with-block."""

    def __init__(self, modules, name: str, value) -> None:
        self.modules, self.name, self.value = modules, name, value

    def __enter__(self):
        self.saved = [getattr(m, self.name) for m in self.modules]
        for m in self.modules:
            setattr(m, self.name, self.value)

    def __exit__(self, *exc):
        for m, v in zip(self.modules, self.saved):
            setattr(m, self.name, v)


def exact_fp32():
    """The CUDA provider with TF32 matrix products off (ONNX Runtime's default is on): fp32 as the CPU
    computes it, so that CUDA and CPU beams can be compared token for token."""
    from worker.engine import ort_model, transformer_step

    def providers_for(requested: str):
        return [(ort_model.CUDA, {"use_tf32": "0"}), ort_model.CPU] if requested == "cuda" else [ort_model.CPU]

    return patched([ort_model, transformer_step], "providers_for", providers_for)


# --- 1-3: the shipped GRU/hybrid bundle ---------------------------------------------------------

def gru_proof(bundle, model, proof, options, args) -> None:
    """The CUDA beams against the CPU provider's, token for token, with TF32 on and off."""
    from worker.engine.ort_model import OrtStepModel
    from worker.engine.search import search_in_batches

    cpu = OrtStepModel.from_bundle(bundle, "cpu", threads=os.cpu_count() or 1)
    on_device = [h[0].tokens for h in search_in_batches(model, proof, options, 64)]
    on_cpu = [h[0].tokens for h in search_in_batches(cpu, proof, options, 64)]
    RESULTS["proof"]["cuda_vs_cpu"] = identical(on_device, on_cpu)
    if args.device == "cuda":
        with exact_fp32():
            exact = OrtStepModel.from_bundle(bundle, args.device, io_binding=args.io_binding)
        on_exact = [h[0].tokens for h in search_in_batches(exact, proof, options, 64)]
        RESULTS["proof"]["cuda_no_tf32_vs_cpu"] = identical(on_exact, on_cpu)


def gru_parts(args, sampler: Sampler, out: Path) -> None:
    import sentencepiece as spm

    from export.quantize import convert_fp16
    from worker.engine.bundle import load_bundle
    from worker.engine.ort_model import CUDA, OrtStepModel
    from worker.engine.search import SearchOptions, beam_search

    bundle = load_bundle(Path(args.payload) / "en-de")
    sp = spm.SentencePieceProcessor(model_file=str(bundle.vocab_path("source")))
    eos = bundle.special_ids.eos
    lines = [s.strip() for s in (Path(args.payload) / "newstest2014.en").read_text(encoding="utf-8").splitlines()]
    sources = [[*sp.encode(s), eos] for s in lines if s][:args.sentences]
    d = bundle.manifest["decoding_defaults"]
    options = SearchOptions(beam=5, max_len_a=d["max_len_a"], max_len_b=d["max_len_b"],
                            length_penalty=d.get("length_penalty", 0.0))

    # 1. the provider, and CUDA = CPU token for token
    model = OrtStepModel.from_bundle(bundle, args.device, io_binding=args.io_binding)
    providers = {"encoder": model.encoder.get_providers()[0], "decoder_step": model.decoder.get_providers()[0]}
    if args.device == "cuda":
        assert set(providers.values()) == {CUDA}, providers
        assert model.io_binding, "IO binding is off on CUDA"
    RESULTS["proof"] = {"providers": providers, "io_binding": model.io_binding, "beam": 5}
    if args.gru_proof:
        gru_proof(bundle, model, sources[:args.proof_sentences], options, args)
    log("proof", json.dumps(RESULTS["proof"]))
    save(out)

    # 2. throughput: fp32, fp16, PyTorch eager
    fp16_dir = Path(args.work) / "en-de-fp16"
    fp16_dir.mkdir(parents=True, exist_ok=True)
    for name in ("encoder", "decoder_step"):
        convert_fp16(bundle.graph_path(name), fp16_dir / f"{name}.onnx")

    def fp16_model():
        return OrtStepModel(fp16_dir / "encoder.onnx", fp16_dir / "decoder_step.onnx", args.device,
                            io_binding=args.io_binding, default_topk=int(bundle.manifest.get("topk", 0)),
                            grouped_beams=bundle.grouped_beams, special=bundle.special_ids)

    def torch_model():
        import torch

        from export.recover import recover_model
        from export.torch_model import TorchStepModel

        recovered, _ = recover_model(bundle)
        return TorchStepModel(recovered.to(torch.device(args.device)), grouped=True)

    gru = RESULTS.setdefault("gru", {"beam": 5, "sentences": len(sources)})
    engines = [("onnxruntime fp32", lambda: model), ("onnxruntime fp16", fp16_model)]
    if "torch" in args.baselines:
        engines.append(("torch eager fp32", torch_model))
    outputs = sweep_each("gru", engines, sources, options, args, sampler, gru, out, warm=8)
    reference = outputs["onnxruntime fp32"]
    for label, found in outputs.items():
        if label != "onnxruntime fp32" and found is not None and reference is not None:
            gru[label]["vs_onnxruntime_fp32"] = identical(found, reference)
    save(out)

    if args.anatomy:
        gru["anatomy"] = gru_anatomy(model, sources, args)
        save(out)
    if args.ab:  # the beam reorder folded into the step (the default with IO binding) against a run of its own
        found = sweep_each("gru ab", (
            ("onnxruntime fp32, reorder a run of its own",
             lambda: OrtStepModel.from_bundle(bundle, args.device, io_binding=args.io_binding,
                                             fold_reorder=False if model.io_binding else None)),
            ("onnxruntime fp32", lambda: model)),
            sources, options, args, sampler, gru.setdefault("ab", {}), out,
            sizes=[int(b) for b in args.ab_batches.split(",")], warm=8)
        if all(v is not None for v in found.values()):
            gru["ab"]["same_output"] = identical(*found.values())
        save(out)
    if args.profile:
        profiled("gru", model, sources, options, 256 if not args.quick else 8, out)

    # 3. long inputs
    long = RESULTS.setdefault("long", {})
    try:
        flat = [t for s in sources for t in s if t != eos]
        segment = [*flat[:args.long_tokens - 1], eos]
        started = time.perf_counter()
        hyps = beam_search(model, [segment], options)
        long["segment"] = {"source_tokens": len(segment), "target_tokens": len(hyps[0][0].tokens),
                           "seconds": round(time.perf_counter() - started, 2),
                           **sampler.window(started, time.perf_counter())}
    except Exception as exc:  # noqa: BLE001
        long["segment"] = {"error": f"{exc.__class__.__name__}: {str(exc)[:500]}"}
    log("long segment", json.dumps(long["segment"]))
    save(out)
    try:
        longest = sorted(sources, key=len)[-args.long_batch:]
        started = time.perf_counter()
        hyps = beam_search(model, longest, options)
        long["batch"] = {"sentences": len(longest), "source_tokens_max": max(map(len, longest)),
                         "source_tokens_mean": round(float(np.mean([len(s) for s in longest])), 1),
                         "target_tokens": sum(len(h[0].tokens) + 1 for h in hyps),
                         "seconds": round(time.perf_counter() - started, 2),
                         **sampler.window(started, time.perf_counter())}
    except Exception as exc:  # noqa: BLE001
        long["batch"] = {"error": f"{exc.__class__.__name__}: {str(exc)[:500]}"}
    log("long batch", json.dumps(long["batch"]))
    save(out)


# --- 4: an OPUS-MT-shaped imported bundle -------------------------------------------------------

def marian_dir(args) -> Path:
    """The payload's MarianMT directory (tokenizer, vocabulary, config) with weights made here."""
    import torch
    from transformers import MarianConfig, MarianMTModel

    from marian_speed import _spread, generation_config

    out = Path(args.work) / "marian-hf"
    if (out / "built.ok").is_file():
        return out
    shutil.copytree(Path(args.payload) / "marian-hf", out, dirs_exist_ok=True)
    config = MarianConfig.from_pretrained(out)
    torch.manual_seed(args.seed)
    model = _spread(MarianMTModel(config).eval(), args.seed)
    model.generation_config = generation_config(config.pad_token_id)
    model.save_pretrained(out)
    (out / "built.ok").write_text("")
    return out


def fp16_bundle(bundle_dir: Path, out: Path) -> Path:
    """A copy of an imported bundle whose encoder and step graph are fp16 (inputs and outputs too)."""
    from export.quantize import convert_fp16

    shutil.copytree(bundle_dir, out, dirs_exist_ok=True)
    for name in ("encoder", "decoder_step"):
        convert_fp16(bundle_dir / f"{name}.onnx", out / f"{name}.onnx")
    from worker.engine.bundle import sha256_file, signature_for

    manifest = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    manifest["precision"] = "fp16"
    for name in ("encoder", "decoder_step"):
        manifest["files"][f"{name}.onnx"] = sha256_file(out / f"{name}.onnx")
    manifest["signature"] = signature_for(manifest)
    (out / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    return out


def unfused():
    """Models made in the with-block load their graphs without ``ort_model.fuse_skip_layer_norms``
    (as the engine loaded them before it)."""
    from worker.engine import ort_model

    return patched([ort_model], "fuse_skip_layer_norms", lambda proto: 0)


def former_step():
    """The step graph as ``nmt import`` wrote it before: q, k and v as three products and hidden
    states [B, R, 1, D], so each head split and merge is a transpose and each product and its bias
    two kernels. Patched into ``DecoderLayer`` and ``StepGraph`` for ``--legacy-ab``, and loaded
    without ``ort_model.fuse_skip_layer_norms`` (``marian_legacy``): the former engine, the
    baseline the current one is timed against in the same run."""
    import contextlib

    import torch

    from export.marian import torch_model

    def layer_forward(self, x, past_k, past_v, cross_k, cross_v, src_mask):
        a = self.self_attn
        q = a.split(a.q(x))
        keys = torch.cat([past_k, a.split(a.k(x))], dim=3)
        values = torch.cat([past_v, a.split(a.v(x))], dim=3)
        weights = torch.softmax((q @ keys.transpose(-1, -2)) * a.scaling, dim=-1)
        x = self.self_norm(x + a.out(a.merge(weights @ values)))
        c = self.cross_attn
        q = c.q(x).squeeze(2).unflatten(-1, (c.heads, c.head_dim)).transpose(1, 2)
        scores = (q @ cross_k.transpose(-1, -2)) * c.scaling
        cross = torch.softmax(scores.masked_fill(~src_mask[:, None, None, :], float("-inf")), dim=-1)
        context = (cross @ cross_v).transpose(1, 2).flatten(-2).unsqueeze(2)
        x = self.cross_norm(x + c.out(context))
        x = self.ffn_norm(x + self.ffn(x))
        return x, keys, values, cross.transpose(1, 2)

    def step_forward(self, prev_ids, src_mask, *caches):
        m = self.model
        layers = len(m.decoder_layers)
        cross, past = caches[:2 * layers], caches[2 * layers:]
        step = past[0].shape[3]
        positions = m.positions[torch.arange(step, step + 1, device=prev_ids.device)]
        x = (m.target_embeddings[prev_ids] * m.scale + positions).unsqueeze(2)
        new_cache, attention = [], None
        for i, layer in enumerate(m.decoder_layers):
            x, keys, values, weights = layer(x, past[2 * i], past[2 * i + 1], cross[2 * i], cross[2 * i + 1], src_mask)
            new_cache += [keys, values]
            if i == m.alignment_layer:
                attention = weights[:, :, m.alignment_heads].mean(dim=2)
        hidden = x.squeeze(2)
        log_probs = torch.log_softmax(hidden @ m.output_weight.t() + m.output_bias, dim=-1)
        topk_log_probs, topk_ids = torch.topk(log_probs, self.topk, dim=-1)
        return (log_probs, attention, topk_log_probs, topk_ids, hidden, *new_cache)

    stack = contextlib.ExitStack()
    stack.enter_context(patched([torch_model.DecoderLayer], "forward", layer_forward))
    stack.enter_context(patched([torch_model.StepGraph], "forward", step_forward))
    return stack


def host(value) -> np.ndarray:
    """A device OrtValue's or a host array's contents as a host array."""
    return value.numpy() if hasattr(value, "numpy") else np.asarray(value)


def anatomy(model, graph: bytes, ids, args, beam: int, candidates: int, names: list[str], feeds_of,
            steps: int = 32, runs: int = 10) -> dict:
    """One decoder step and one state reorder, timed apart (ms per call, medians of ``runs``) after
    ``steps`` steps, at each of ``--anatomy-batches`` sentences (``beam`` rows each); then ONNX
    Runtime's profile of the step ``graph`` (serialized, as the model loaded it) at the middle batch
    size, run plainly on ``feeds_of(encoded, state, prev)`` for ``names``: ms per run by provider and
    operator type (a CUDA kernel's time there is its launch and any host-side work, not its run on
    the device)."""
    from worker.engine.ort_model import providers_for, session_options

    found = {}
    rng = np.random.default_rng(0)
    sizes = [int(b) for b in args.anatomy_batches.split(",")]
    for batch in sizes:
        rows = [ids[i % len(ids)] for i in range(batch)]
        src = np.full((batch, max(map(len, rows))), model.special.pad, dtype=np.int64)
        for r, row in enumerate(rows):
            src[r, :len(row)] = row
        lengths = np.array([len(r) for r in rows], dtype=np.int64)
        encoded = model.expand(model.encode(src, lengths), beam)
        state = model.reorder(model.initial_state(encoded), np.repeat(np.arange(batch), beam))
        n = batch * beam
        index = np.arange(n)
        for _ in range(steps):
            prev = rng.integers(4, 1000, size=n).astype(np.int64)
            state = model.reorder(model.step(prev, state, encoded, candidates).state, index)
        prev = rng.integers(4, 1000, size=n).astype(np.int64)
        timings = {"step": [], "reorder": []}
        for _ in range(runs):
            started = time.perf_counter()
            model.step(prev, state, encoded, candidates)
            timings["step"].append(time.perf_counter() - started)
            started = time.perf_counter()
            model.reorder(state, index)
            timings["reorder"].append(time.perf_counter() - started)
        found[str(batch)] = {"rows": n, "cached_steps": steps,
                             **{f"{k}_ms": round(1000 * float(np.median(v)), 3) for k, v in timings.items()}}
        log("anatomy", batch, json.dumps(found[str(batch)]))
        if batch == sizes[len(sizes) // 2]:
            profile_feeds = (encoded, state, prev)
    encoded, state, prev = profile_feeds
    feeds = feeds_of(*profile_feeds)
    batch = len(prev) // beam
    from marian_speed import profile_runs

    wall_ms, nodes = profile_runs(graph, session_options(), providers_for(args.device), names, feeds, runs, warm=3)
    by_op: dict[str, float] = {}
    counts: dict[str, int] = {}
    for e in nodes:
        key = f"{e['provider']}:{e['op']}"
        by_op[key] = by_op.get(key, 0.0) + e["ms"]
        counts[key] = counts.get(key, 0) + 1
    found["profile"] = {"sentences": batch, "rows": batch * beam, "cached_steps": steps,
                        "wall_ms_plain_run": round(wall_ms, 3),
                        "ms_by_op": {k: round(v, 3) for k, v in sorted(by_op.items(), key=lambda kv: -kv[1])},
                        "nodes_by_op": {k: counts[k] // runs for k in by_op}}
    log("anatomy profile", json.dumps(found["profile"])[:1500])
    return found


def loaded_graph(model) -> bytes:
    """The step graph exactly as ``model`` loaded it (rewritten for its device and binding)."""
    from worker.engine.ort_model import step_graph_for

    graph = step_graph_for(*model.step_graph_args)
    return graph if isinstance(graph, bytes) else Path(graph).read_bytes()


def rows_taken(model, state, rows: int) -> tuple[Any, dict]:
    """The state as ``model``'s step binds it: as the last step wrote it, and with the reorder folded
    in the feed of the rows the step takes (all ``rows`` when the state has not been reordered)."""
    from worker.engine.ort_model import REORDER_INPUT, taken_rows

    taken = taken_rows(state, lambda own: rows)
    return taken.state, ({REORDER_INPUT: taken.index} if model.fold_reorder else {})


def marian_anatomy(model, ids, args) -> dict:
    """``anatomy`` of an imported bundle's step (beam 4, 12 candidates, the key/value cache)."""
    def feeds_of(encoded, state, prev) -> dict:
        batch = encoded.mask.shape[0]
        written, index = rows_taken(model, state, len(prev))
        rows = (-1,) if index else (batch, 4)  # with the reorder folded in, flat rows of the last step's
        return {"prev_ids": prev.reshape(batch, 4), "src_mask": encoded.mask, "topk": np.array([12], dtype=np.int64),
                **dict(zip(model.cross_names, encoded.cross or [host(v) for v in encoded.bound[:-1]])),
                **{name: cache.reshape(*rows, *cache.shape[-3:])
                   for name, cache in ((name, host(written[name])) for name in model.state_names)}, **index}

    return anatomy(model, loaded_graph(model), ids, args, 4, 12,
                   ["topk_log_probs", "topk_ids", "attention", *model.new_state_names], feeds_of)


def gru_anatomy(model, sources, args) -> dict:
    """``anatomy`` of the GRU/hybrid bundle's step (beam 5, its graph's own top-k, the state [L, N, D])."""
    def feeds_of(encoded, state, prev) -> dict:
        written, index = rows_taken(model, state, len(prev))
        return {"prev_ids": prev, "state": host(written), **index, "annotations": host(encoded.annotations),
                "keys": host(encoded.keys), "src_mask": host(encoded.mask)}

    outputs = {o.name for o in model.decoder.get_outputs()}
    scores = ["topk_log_probs", "topk_ids"] if "topk_ids" in outputs else ["log_probs"]
    return anatomy(model, loaded_graph(model), sources, args, 5,
                   14, [*scores, "new_state", "attention"], feeds_of)


def marian_part(args, sampler: Sampler, out: Path) -> None:
    from transformers import MarianTokenizer

    from worker.engine.bundle import load_bundle
    from worker.engine.search import SearchOptions, search_in_batches
    from worker.engine.transformer_step import OrtTransformerStepModel

    part = RESULTS.setdefault("marian", {"beam": 4, "max_length": args.max_length})
    started = time.perf_counter()
    hf = marian_dir(args)
    bundle_dir = Path(args.work) / "marian-bundle"
    if not (bundle_dir / "manifest.json").is_file():
        done = subprocess.run([sys.executable, "-m", "nmt", "import", str(hf), "--out", str(bundle_dir), "--force"],
                              capture_output=True, text=True, cwd=REPO_ROOT)
        if done.returncode != 0:
            raise RuntimeError(f"nmt import failed: {done.stderr[-2000:]}")
    part["prepare_seconds"] = round(time.perf_counter() - started, 1)
    log("marian: imported in", part["prepare_seconds"], "s")
    tokenizer = MarianTokenizer.from_pretrained(str(hf))
    lines = [s.strip() for s in (Path(args.payload) / "newstest2014.en").read_text(encoding="utf-8").splitlines()]
    lines = [s for s in lines if s][:args.marian_sentences]
    ids = [tokenizer(s)["input_ids"] for s in lines]
    pieces = [tokenizer.convert_ids_to_tokens(row) for row in ids]
    bundle = load_bundle(bundle_dir)
    # exactly max_length tokens and eos: random weights never end a hypothesis early
    options = SearchOptions(beam=4, max_len_a=0.0, max_len_b=args.max_length, length_penalty=1.0,
                            free_forced_eos=True)
    model = OrtTransformerStepModel.from_bundle(bundle, args.device, io_binding=args.io_binding)
    part["providers"] = {"encoder": model.encoder.get_providers()[0], "decoder_step": model.decoder.get_providers()[0]}
    part["io_binding"] = model.io_binding
    cpu = OrtTransformerStepModel.from_bundle(bundle, "cpu", threads=os.cpu_count() or 1)
    proof = ids[:args.proof_marian]
    on_device = [h[0].tokens for h in search_in_batches(model, proof, options, 32)]
    on_cpu = [h[0].tokens for h in search_in_batches(cpu, proof, options, 32)]
    part["cuda_vs_cpu"] = identical(on_device, on_cpu)
    if args.device == "cuda":
        with exact_fp32():
            exact = OrtTransformerStepModel.from_bundle(bundle, args.device, io_binding=args.io_binding)
        part["cuda_no_tf32_vs_cpu"] = identical([h[0].tokens for h in search_in_batches(exact, proof, options, 32)],
                                                on_cpu)
        del exact
    log("marian proof", json.dumps({k: part[k] for k in ("providers", "io_binding", "cuda_vs_cpu")}))
    save(out)
    del cpu
    if args.anatomy:
        part["anatomy"] = marian_anatomy(model, ids, args)
        save(out)
    fp16_dir = fp16_bundle(bundle_dir, Path(args.work) / "marian-bundle-fp16")
    ours = sweep_each("marian", (("onnxruntime fp32", lambda: model),
                                 ("onnxruntime fp16", lambda: OrtTransformerStepModel.from_bundle(
                                     load_bundle(fp16_dir), args.device, io_binding=args.io_binding))),
                      ids, options, args, sampler, part, out)
    if args.ab:
        marian_ab(args, fp16_dir, ids, options, part, sampler, out)
    if args.profile:
        profiled("marian", model, ids, options, 128 if not args.quick else 8, out)
    marian_long(args, bundle_dir, ids, options, part, sampler, model)
    save(out)
    if ours.get("onnxruntime fp16") and ours.get("onnxruntime fp32"):
        part["onnxruntime fp16"]["vs_fp32"] = identical(ours["onnxruntime fp16"], ours["onnxruntime fp32"],
                                                         args.max_length)
    if args.legacy_ab:
        try:
            marian_legacy(args, hf, ids, options, part, sampler, out, ours.get("onnxruntime fp32"))
        except Exception:  # noqa: BLE001
            part["legacy"] = {"error": traceback.format_exc()[-1500:]}
            log("legacy failed", part["legacy"]["error"][-400:])
        save(out)
    if "ct2" in args.baselines:
        try:
            ct2(args, hf, ids, pieces, part, sampler, ours.get("onnxruntime fp32"), out)
        except Exception:  # noqa: BLE001
            part["ctranslate2"] = {"error": traceback.format_exc()[-1500:]}
            log("ctranslate2 failed", part["ctranslate2"]["error"][-400:])
        save(out)
    if "transformers" not in args.baselines:
        return
    try:
        hf_generate(args, hf, ids, part, sampler, ours.get("onnxruntime fp32"))
    except Exception:  # noqa: BLE001
        part["transformers"] = {"error": traceback.format_exc()[-1500:]}
        log("transformers failed", part["transformers"]["error"][-400:])
    save(out)


def marian_ab(args, fp16_dir: Path, ids, options, part: dict, sampler: Sampler, out: Path) -> None:
    """``--ab``: the fp16 bundle again at ``--ab-batches``, as loaded for CUDA (each residual add and
    LayerNorm one SkipLayerNormalization: ``ort_model.fuse_skip_layer_norms``; the beam reorder folded
    into the step: ``ort_model.fold_reorder_into``), without the first rewrite, and with the reorder
    as a Gather graph run of its own. (Earlier A/Bs, run 4: rows at their length limit scored over
    the whole vocabulary, one CPU thread per session.)"""
    from worker.engine.bundle import load_bundle
    from worker.engine.transformer_step import OrtTransformerStepModel

    def fp16(**kwargs):
        return OrtTransformerStepModel.from_bundle(load_bundle(fp16_dir), args.device, io_binding=args.io_binding,
                                                   **kwargs)

    def without_fusion():
        with unfused():
            return fp16()

    sweep_each("marian ab", (
        ("onnxruntime fp16, no SkipLayerNormalization", without_fusion),
        ("onnxruntime fp16, reorder a run of its own", lambda: fp16(fold_reorder=False)),
        ("onnxruntime fp16", fp16)),
        ids, options, args, sampler, part.setdefault("ab", {}), out, sizes=[int(b) for b in args.ab_batches.split(",")])


def marian_legacy(args, hf: Path, ids, options, part: dict, sampler: Sampler, out: Path, reference) -> None:
    """``--legacy-ab``: the same model imported with the former step graph (``former_step``),
    timed as the current one is (anatomy, then fp32 and fp16 at ``--legacy-batches``): the
    baseline of the current graph's speed-up, in the same run on the same GPU."""
    from export.marian.importer import ImportOptions, import_model
    from worker.engine.bundle import load_bundle
    from worker.engine.transformer_step import OrtTransformerStepModel

    legacy = part.setdefault("legacy", {})
    started = time.perf_counter()
    legacy_dir = Path(args.work) / "marian-bundle-legacy"
    with former_step():
        import_model(hf, legacy_dir, ImportOptions(force=True))
    legacy["prepare_seconds"] = round(time.perf_counter() - started, 1)
    def former(directory: Path):  # as the former engine loaded it: no SkipLayerNormalization, a reorder run
        with unfused():
            return OrtTransformerStepModel.from_bundle(load_bundle(directory), args.device, io_binding=args.io_binding,
                                                       fold_reorder=False)

    model = former(legacy_dir)
    if args.anatomy:
        legacy["anatomy"] = marian_anatomy(model, ids, args)
        save(out)
    fp16_dir = fp16_bundle(legacy_dir, Path(args.work) / "marian-bundle-legacy-fp16")
    outputs = sweep_each("marian legacy", (("onnxruntime fp32", lambda: model),
                                           ("onnxruntime fp16", lambda: former(fp16_dir))),
                         ids, options, args, sampler, legacy, out,
                         sizes=[int(b) for b in args.legacy_batches.split(",")])
    if reference is not None and outputs["onnxruntime fp32"] is not None:
        legacy["onnxruntime fp32"]["vs_current_fp32"] = identical(outputs["onnxruntime fp32"], reference,
                                                                  args.max_length)
        save(out)


def marian_long(args, bundle_dir: Path, ids, options, part: dict, sampler: Sampler, model) -> None:
    """A segment of ``--long-tokens`` source pieces through the Translator (more than the model's
    512 positions: the pipeline splits it), and one batch of the ``--long-batch`` longest sentences."""
    from worker.engine import EngineSettings, Translator
    from worker.engine.search import beam_search
    from worker.text.pipeline import TextOptions

    long = part.setdefault("long", {})
    try:
        translator = Translator(bundle_dir, EngineSettings(provider=args.device, max_batch_sentences=64,
                                                           shortlist="off"))
        lines = [s.strip() for s in (Path(args.payload) / "newstest2014.en").read_text(encoding="utf-8").splitlines()]
        pieces = translator.source_sp.encode(" ".join(lines[:400]))
        segment = translator.source_sp.decode(pieces[:args.long_tokens])
        started = time.perf_counter()
        segment_options = translator.search_options(beam=4, max_length=args.max_length)
        result = translator.translate_sentences([segment], segment_options,
                                                text_options=TextOptions(protect_spans=False, restore_case=False,
                                                                         check_language=False))[0]
        long["segment"] = {"source_pieces": len(translator.source_sp.encode(segment)),
                           "translation_chars": len(result.translation),
                           "seconds": round(time.perf_counter() - started, 2),
                           **sampler.window(started, time.perf_counter())}
    except Exception as exc:  # noqa: BLE001
        long["segment"] = {"error": f"{exc.__class__.__name__}: {str(exc)[:500]}"}
    log("marian long segment", json.dumps(long["segment"]))
    try:
        longest = sorted(ids, key=len)[-args.long_batch:]
        started = time.perf_counter()
        hyps = beam_search(model, longest, options)
        long["batch"] = {"sentences": len(longest), "source_tokens_max": max(map(len, longest)),
                         "target_tokens": sum(len(h[0].tokens) + 1 for h in hyps),
                         "seconds": round(time.perf_counter() - started, 2),
                         **sampler.window(started, time.perf_counter())}
    except Exception as exc:  # noqa: BLE001
        long["batch"] = {"error": f"{exc.__class__.__name__}: {str(exc)[:500]}"}
    log("marian long batch", json.dumps(long["batch"]))


def ct2(args, hf: Path, ids, pieces, part: dict, sampler: Sampler, reference, out: Path) -> None:
    import ctranslate2

    from marian_speed import ct2_options

    converted = Path(args.work) / "ct2-float32"
    if not (converted / "model.bin").is_file():
        from ctranslate2.converters import TransformersConverter

        TransformersConverter(str(hf)).convert(str(converted), force=True)
    part["ctranslate2_version"] = ctranslate2.__version__
    part["ctranslate2_cuda_devices"] = ctranslate2.get_cuda_device_count()
    vocab = json.loads((hf / "vocab.json").read_text(encoding="utf-8"))
    device = "cuda" if args.device == "cuda" else "cpu"
    for compute in (("float32", "float16") if device == "cuda" else ("float32",)):
        translator = ctranslate2.Translator(str(converted), device=device, compute_type=compute)
        runs, first = [], None
        common = {**ct2_options(4), "max_decoding_length": args.max_length + 1}
        translator.translate_batch(pieces[:4], max_batch_size=4, **common)  # warm-up
        for batch in batch_sizes(args):
            synchronize(args.device)
            start = time.perf_counter()
            results = translator.translate_batch(pieces, max_batch_size=batch, **common)
            seconds = time.perf_counter() - start
            produced = [r.hypotheses[0] for r in results]
            tokens = sum(len(t) for t in produced)
            runs.append({"batch": batch, "seconds": round(seconds, 3), "tokens": tokens,
                         "target_tokens_per_s": round(tokens / seconds, 1), **sampler.window(start, start + seconds)})
            log(f"ct2 {compute}", json.dumps(runs[-1]))
            first = first or [[vocab[p] for p in t if p != "</s>"] for t in produced]
        part[f"ctranslate2 {compute}"] = {"runs": runs}
        if reference is not None:
            part[f"ctranslate2 {compute}"]["vs_onnxruntime_fp32"] = identical(first, reference, args.max_length)
        del translator
        save(out)


def hf_generate(args, hf: Path, ids, part: dict, sampler: Sampler, reference) -> None:
    import torch
    from transformers import MarianMTModel

    from marian_speed import hf_generator

    device = torch.device(args.device)
    for label, dtype in (("transformers fp32", torch.float32), ("transformers fp16", torch.float16)):
        if args.device != "cuda" and dtype == torch.float16:
            continue
        import transformers

        key = "dtype" if int(transformers.__version__.split(".")[0]) >= 5 else "torch_dtype"
        model = MarianMTModel.from_pretrained(str(hf), **{key: dtype}).eval().to(device)
        eos = model.config.eos_token_id
        order = sorted(range(len(ids)), key=lambda i: len(ids[i]))
        generate = hf_generator(model, 4, device)

        generate(ids[:4], 4)
        runs, first = [], None
        for batch in batch_sizes(args):
            if time.perf_counter() - STARTED > args.deadline:
                break
            outputs = [None] * len(ids)
            synchronize(args.device)
            start = time.perf_counter()
            try:
                for i in range(0, len(order), batch):
                    chunk = order[i:i + batch]
                    for j, produced in zip(chunk, generate([ids[j] for j in chunk], args.max_length + 1)):
                        outputs[j] = produced
            except Exception as exc:  # noqa: BLE001
                runs.append({"batch": batch, "error": f"{exc.__class__.__name__}: {str(exc)[:300]}"})
                break
            synchronize(args.device)
            seconds = time.perf_counter() - start
            tokens = sum(map(len, outputs))
            runs.append({"batch": batch, "seconds": round(seconds, 3), "tokens": tokens,
                         "target_tokens_per_s": round(tokens / seconds, 1), **sampler.window(start, start + seconds)})
            log(label, json.dumps(runs[-1]))
            first = first or [[t for t in o if t != eos] for o in outputs]
            if seconds > args.run_limit:
                break
        part[label] = {"runs": runs}
        if reference is not None and first is not None:
            part[label]["vs_onnxruntime_fp32"] = identical(first, reference, args.max_length)
        del model


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--payload", default=".gpuload", help="the bundle, sentences and Marian files carried here")
    parser.add_argument("--out", default=os.environ.get("OUT", "gpu-out"))
    parser.add_argument("--work", default="/tmp/gpu-check")
    parser.add_argument("--device", choices=("cuda", "cpu"), default="cuda")
    parser.add_argument("--parts", default="marian,gru", help="parts to run, in this order")
    parser.add_argument("--quick", action="store_true", help="everything small: the script's own check")
    parser.add_argument("--bind", action="store_true", help="IO binding on the CPU too (as CUDA always binds): "
                        "the script's own check of the bound path without a GPU")
    parser.add_argument("--sentences", type=int, default=3003)
    parser.add_argument("--proof-sentences", type=int, default=500)
    parser.add_argument("--max-batch", type=int, default=1024)
    parser.add_argument("--run-limit", type=float, default=25.0, help="seconds: a run longer ends its sweep")
    parser.add_argument("--deadline", type=float, default=470.0, help="seconds from start: no new run after it")
    parser.add_argument("--long-tokens", type=int, default=2000)
    parser.add_argument("--long-batch", type=int, default=256)
    parser.add_argument("--marian-sentences", type=int, default=512)
    parser.add_argument("--proof-marian", type=int, default=32)
    parser.add_argument("--max-length", type=int, default=64)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--profile", action="store_true", help="cProfile one search of each family (host side)")
    parser.add_argument("--baselines", default="torch,ct2,transformers", type=lambda v: set(v.split(",")) - {""},
                        help="comma-separated: torch (PyTorch eager, GRU), ct2 (CTranslate2, Marian), transformers "
                        "(Marian); empty for none")
    parser.add_argument("--no-baselines", dest="baselines", action="store_const", const=set(),
                        help="the same as --baselines ''")
    parser.add_argument("--batches", default="", help="batch sizes to sweep, comma-separated (default: 32 "
                        "doubling up to --max-batch)")
    parser.add_argument("--anatomy", action="store_true", help="time one step and one reorder apart, and "
                        "ONNX Runtime's per-operator profile of the step (both families)")
    parser.add_argument("--anatomy-batches", default="32,128,512")
    parser.add_argument("--legacy-ab", action="store_true", help="also time the Marian model imported with the "
                        "former step graph (former_step: the baseline of the current graph)")
    parser.add_argument("--legacy-batches", default="128,256,512")
    parser.add_argument("--ab", action="store_true", help="the Marian fp16 bundle without the SkipLayerNormalization "
                        "rewrite CUDA loads it with, and both families with the beam reorder as a run of its own "
                        "instead of folded into the step, beside the default")
    parser.add_argument("--ab-batches", default="128,256")
    parser.add_argument("--no-gru-proof", dest="gru_proof", action="store_false",
                        help="skip the GRU bundle's CUDA = CPU proof (the sweeps and long inputs still run)")
    args = parser.parse_args(argv)
    args.io_binding = True if args.bind else None  # None: the engine's default (bound on CUDA)
    if args.quick:
        args.sentences, args.proof_sentences, args.max_batch = 24, 8, 8
        args.long_tokens, args.long_batch, args.marian_sentences, args.proof_marian, args.max_length = 300, 8, 8, 4, 8
        args.anatomy_batches, args.legacy_batches, args.ab_batches, args.batches = "2,4,8", "4,8", "4,8", ""
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    sampler = Sampler()
    import onnxruntime as ort

    RESULTS["env"] = {"gpu": sampler.name, "onnxruntime": ort.__version__, "providers": ort.get_available_providers(),
                      "python": sys.version.split()[0], "cpu_count": os.cpu_count()}
    try:
        import torch

        RESULTS["env"]["torch"] = torch.__version__
    except ImportError:
        pass
    log("env", json.dumps(RESULTS["env"]))
    save(out)
    parts = {"gru": gru_parts, "marian": marian_part}
    for name in args.parts.split(","):
        run = parts[name]
        try:
            run(args, sampler, out)
        except Exception:  # noqa: BLE001 - one part's failure keeps the other's figures
            RESULTS.setdefault("errors", {})[name] = traceback.format_exc()[-3000:]
            log(name, "failed:\n", RESULTS["errors"][name])
        save(out)
    sampler.stop.set()
    RESULTS["seconds"] = round(time.perf_counter() - STARTED, 1)
    save(out)
    log("done")
    return 0


if __name__ == "__main__":
    sys.exit(main())
