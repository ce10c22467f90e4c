"""Training throughput benchmark: target tokens per second, ours against a naive baseline.

Measures, on this machine's CPU and on a config's real training data, the speed of one training
step (collate, forward with label-smoothed cross-entropy, backward, gradient clipping, Adam step).

Data: ``training.data.prepare_data`` sets up the training data exactly as the trainer does. The
single-directory layout (``configs/multi30k-en-de.yaml``) is held in memory; the ``data.corpora``
layout (``configs/general-en-de.yaml``) is streamed from disk by ``training.stream.CorpusStream``:
a start-up scan (exact duplicates across corpora, the SentencePiece sample: ``vocab.size`` from a
reservoir of ``vocab.input_sentence_size`` sentences), then per epoch the corpus weights, the
length filters and length-bucketed batches of ``train.batch_tokens`` cut inside the
``train.shuffle_buffer``. One full pass over epoch 1's batches (``data.source.epoch_batches(0)``,
the trainer's sequence) gives ours' batches (the epoch's first ``--warmup`` + ``--batches``, in the
trainer's order), the epoch's target tokens (weighted copies included) for the epoch-time
estimate, the per-corpus counts, and the baseline's pool: a uniform sample
(``training.stream.Reservoir``, at most ``train.shuffle_buffer`` pairs) of the same filtered,
deduplicated, weighted pairs, so both sides see the same data distribution.

* ours: ``training.model.ModelSpec(config.model, V, V).build()`` trained by the trainer's own step
  (``training.trainer.Trainer._step``) on those batches, with bfloat16 autocast when ``train.bf16``
  is set and the CPU has native bfloat16 (``training.trainer.bf16_is_native``, the trainer's rule;
  otherwise fp32); attention keys are computed once per sentence and the vocabulary projection
  runs once per batch;
* baseline: a straightforward per-step ``nn.GRUCell`` implementation of the same model (same
  sizes, defined below), trained by the same step function: batches of 64 pairs drawn at random
  from the pool (no length bucketing), a bidirectional ``nn.GRU`` encoder over
  ``pack_padded_sequence``, additive attention that recomputes ``U_a h_j`` at every decoder step,
  readout, vocabulary projection and loss inside the per-step loop, fp32 (no autocast).

Both run with the same torch thread count (``--threads``, else ``train.threads``, else torch's
default): ``--warmup`` untimed batches, then timed batches (``--batches`` for ours; for the
baseline ``--baseline-batches``, or by default as many as it takes to cover the same number of
target tokens). Tokens are real target tokens (non-padding, eos included). Reported: tokens/s,
an epoch-time estimate (epoch target tokens / tokens per s), peak RSS and the speed-up
ours / baseline. With ``--json`` the last stdout line is a JSON object.

The SentencePiece vocabulary is trained with the config's settings (20 s for Multi30k, about a
minute for the general corpora on 2 cores) unless ``--vocab-size`` overrides its size. The
single-directory layout reads ``--data-dir``, else ``$NMT_DATA_DIR``, else the config's
``data.dir``; ``data.corpora`` paths are relative to the config file.

Run from the repository root:

    python bench/train_speed.py [--config configs/multi30k-en-de.yaml] [--json]
    python bench/train_speed.py --config configs/general-en-de.yaml [--json]

Smoke test: ``python bench/train_speed.py --batches 2 --baseline-batches 2 --warmup 1 --vocab-size 1000``
(add ``--config configs/general-en-de.yaml`` for the streamed layout).
"""
from __future__ import annotations

import argparse
import dataclasses
import json
import logging
import math
import os
import random
import resource
import sys
import time
from pathlib import Path
from typing import Iterable, Iterator, Sequence

REPO_ROOT = Path(__file__).resolve().parents[1]
if str(REPO_ROOT) not in sys.path:  # works whether or not the package is installed
    sys.path.insert(0, str(REPO_ROOT))

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402
from torch import Tensor, nn  # noqa: E402
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence  # noqa: E402

from training.batching import Pair, target_tokens  # noqa: E402
from training.config import Config, ModelConfig, load_config, resolve_data_dir  # noqa: E402
from training.data import BatchSource, prepare_data  # noqa: E402
from training.model import ModelSpec  # noqa: E402
from training.stream import Reservoir  # noqa: E402
from training.trainer import LossModule, Trainer, bf16_is_native  # noqa: E402
from training.vocab import PAD_ID  # noqa: E402

DEFAULT_CONFIG = REPO_ROOT / "configs" / "multi30k-en-de.yaml"
BASELINE_BATCH_SENTENCES = 64
CPU_FLAGS = ("avx2", "avx512f", "avx512_vnni", "avx512_bf16", "amx_bf16")  # reported when present


# --------------------------------------------------------------------------------------------
# The baseline: a textbook per-step implementation of the same Bahdanau model.
# --------------------------------------------------------------------------------------------
class NaiveSeq2Seq(nn.Module):
    """Bidirectional GRU encoder (packed), additive attention, GRUCell decoder, deep output.

    Deliberately straightforward: ``U_a h_j`` is recomputed at every step, and the readout,
    the vocabulary projection and the loss are computed step by step inside the decoder loop
    (including padded positions, which ``ignore_index`` drops from the loss).
    """

    def __init__(self, cfg: ModelConfig, src_vocab: int, tgt_vocab: int) -> None:
        super().__init__()
        ann = 2 * cfg.enc_hidden
        self.dec_layers, self.dec_hidden = cfg.dec_layers, cfg.dec_hidden
        self.src_embed = nn.Embedding(src_vocab, cfg.emb_dim, padding_idx=PAD_ID)
        self.tgt_embed = nn.Embedding(tgt_vocab, cfg.emb_dim, padding_idx=PAD_ID)
        self.encoder = nn.GRU(
            cfg.emb_dim, cfg.enc_hidden, num_layers=cfg.enc_layers, batch_first=True, bidirectional=True,
            dropout=cfg.dropout if cfg.enc_layers > 1 else 0.0,
        )
        self.init_state = nn.Linear(ann, cfg.dec_layers * cfg.dec_hidden)
        self.U_a = nn.Linear(ann, cfg.att_dim)
        self.W_a = nn.Linear(cfg.dec_hidden, cfg.att_dim, bias=False)
        self.v_a = nn.Linear(cfg.att_dim, 1, bias=False)
        self.cells = nn.ModuleList(
            nn.GRUCell(cfg.emb_dim + ann if i == 0 else cfg.dec_hidden, cfg.dec_hidden) for i in range(cfg.dec_layers)
        )
        self.readout = nn.Linear(cfg.dec_hidden + cfg.emb_dim + ann, 2 * cfg.readout_dim)
        self.output = nn.Linear(cfg.readout_dim, tgt_vocab)
        if cfg.tie_target_embeddings:
            self.output.weight = self.tgt_embed.weight
        self.emb_dropout = nn.Dropout(cfg.emb_dropout)
        self.dropout = nn.Dropout(cfg.dropout)

    def loss(self, src: Tensor, lengths: Tensor, prev_ids: Tensor, gold: Tensor, label_smoothing: float) -> tuple[Tensor, int]:
        # Encoder.
        steps = src.shape[1]
        packed = pack_padded_sequence(self.emb_dropout(self.src_embed(src)), lengths.cpu(), batch_first=True, enforce_sorted=False)
        out, _ = self.encoder(packed)
        annotations, _ = pad_packed_sequence(out, batch_first=True, total_length=steps)  # [B, S, 2H], 0 at padding
        mask = torch.arange(steps).unsqueeze(0) < lengths.unsqueeze(1)  # [B, S]
        mean = annotations.sum(1) / lengths.unsqueeze(1).to(annotations.dtype)
        state = torch.tanh(self.init_state(mean)).view(-1, self.dec_layers, self.dec_hidden)
        hidden = [state[:, i] for i in range(self.dec_layers)]
        # Decoder, one step at a time, everything inside the loop.
        total = annotations.new_zeros(())
        for i in range(prev_ids.shape[1]):
            embedded = self.emb_dropout(self.tgt_embed(prev_ids[:, i]))
            keys = self.U_a(annotations)  # recomputed every step
            scores = self.v_a(torch.tanh(keys + self.W_a(hidden[-1]).unsqueeze(1))).squeeze(-1)
            alpha = torch.softmax(scores.masked_fill(~mask, float("-inf")), dim=-1)
            context = torch.bmm(alpha.unsqueeze(1), annotations).squeeze(1)
            x = torch.cat([embedded, context], dim=-1)
            new_hidden = []
            for layer, cell in enumerate(self.cells):
                h = cell(x, hidden[layer])
                new_hidden.append(h)
                x = self.dropout(h)
            hidden = new_hidden
            t = self.readout(torch.cat([self.dropout(hidden[-1]), embedded, self.dropout(context)], dim=-1))
            t = t.view(t.shape[0], -1, 2).amax(-1)
            logits = self.output(self.dropout(t))  # vocabulary projection per step
            total = total + F.cross_entropy(logits, gold[:, i], ignore_index=PAD_ID, label_smoothing=label_smoothing, reduction="sum")
        return total, int((gold != PAD_ID).sum())


# --------------------------------------------------------------------------------------------
# Measurement.
# --------------------------------------------------------------------------------------------
def _hwm_reset() -> bool:
    """Reset the kernel's peak-RSS mark (Linux >= 4.0) so each phase's peak can be read apart."""
    try:
        Path("/proc/self/clear_refs").write_text("5")
        return True
    except OSError:
        return False


def _hwm_mb() -> float | None:
    """VmHWM (peak RSS since the last reset) in MiB, if /proc has it."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return None


def _maxrss_mb() -> float:
    """resource.getrusage ru_maxrss in MiB (KiB on Linux, bytes on macOS)."""
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return rss / (1024 * 1024) if sys.platform == "darwin" else rss / 1024


def cpu_info(cpuinfo: str = "/proc/cpuinfo") -> tuple[str, list[str]]:
    """The CPU's model name and which of ``CPU_FLAGS`` it has (Linux; elsewhere the machine type)."""
    import platform

    try:
        lines = Path(cpuinfo).read_text().splitlines()
    except OSError:
        return platform.processor() or platform.machine(), []
    name = next((line.split(":", 1)[1].strip() for line in lines if line.startswith("model name")), platform.machine())
    flags = next((line.split(":", 1)[1].split() for line in lines if line.startswith("flags")), [])
    return name, [f for f in CPU_FLAGS if f in flags]


@dataclasses.dataclass
class EpochPass:
    """What one full pass over an epoch's batches gave."""

    first: list[list[Pair]]  # the epoch's first batches, in the trainer's order
    pool: list[Pair]  # a uniform sample of the epoch's pairs (weighted copies included)
    batches: int
    pairs: int
    target_tokens: int
    seconds: float


def read_epoch(source: BatchSource, keep: int, pool_size: int, seed: int) -> EpochPass:
    """Read epoch 1 (``source.epoch_batches(0)``, what the trainer trains on first) to its end."""
    started = time.perf_counter()
    first: list[list[Pair]] = []
    pool = Reservoir(pool_size, f"{seed}:train_speed:pool")
    batches = pairs = tokens = 0
    for batch in source.epoch_batches(0):
        if len(first) < keep:
            first.append(batch)
        batches += 1
        pairs += len(batch)
        tokens += target_tokens(batch)
        for pair in batch:
            pool.add(pair)
    return EpochPass(first, pool.items, batches, pairs, tokens, time.perf_counter() - started)


def random_batches(pool: Sequence[Pair], size: int, seed: int) -> Iterator[list[Pair]]:
    """Endless batches of ``size`` pairs drawn at random from ``pool`` (no sorting, no bucketing)."""
    rng = random.Random(seed)
    while True:
        yield rng.sample(pool, min(size, len(pool)))


def measure(trainer: Trainer, model: nn.Module, batches: Iterable[list[Pair]], warmup: int, timed: int | None,
            min_tokens: int, bf16: bool) -> dict:
    """Train ``model`` on ``batches`` with the trainer's own step (``Trainer._step``: collate,
    forward under autocast when ``bf16``, backward of the token-mean loss, clipping, Adam).

    ``warmup`` batches are untimed; then ``timed`` batches, or (``timed`` None) until at least
    ``min_tokens`` target tokens were timed. Returns tokens, seconds, batches and peak RSS.
    """
    model.train()
    net = LossModule(model)  # type: ignore[arg-type]  (any module with Seq2Seq's ``loss``)
    optimizer = torch.optim.Adam(model.parameters(), lr=trainer.config.train.lr)
    trainer.bf16 = bf16
    source = iter(batches)

    def step() -> int:
        return trainer._step(net, model, optimizer, [next(source)])[1]  # noqa: SLF001

    reset = _hwm_reset()
    for _ in range(warmup):
        step()
    tokens = done = 0
    elapsed = 0.0
    while (done < timed) if timed is not None else (tokens < min_tokens or done == 0):
        started = time.perf_counter()
        tokens += step()
        elapsed += time.perf_counter() - started
        done += 1
    return {
        "tokens": tokens, "seconds": elapsed, "batches": done, "tokens_per_s": tokens / elapsed,
        "peak_rss_mb": (_hwm_mb() if reset else None), "process_maxrss_mb": _maxrss_mb(),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--config", default=str(DEFAULT_CONFIG), help="training config (default: %(default)s)")
    parser.add_argument("--data-dir", default=None,
                        help="corpus directory of the single-directory layout (default: $NMT_DATA_DIR, else the "
                             "config's data.dir); data.corpora paths come from the config")
    parser.add_argument("--vocab-size", type=int, default=None, help="override vocab.size (a smaller vocabulary trains faster)")
    parser.add_argument("--threads", type=int, default=None, help="torch threads for both (default: train.threads, else torch's default)")
    parser.add_argument("--warmup", type=int, default=3, help="untimed batches before timing each (default: %(default)s)")
    parser.add_argument("--batches", type=int, default=20, help="timed batches of ours (default: %(default)s)")
    parser.add_argument("--baseline-batches", type=int, default=None,
                        help="timed baseline batches (default: enough to cover the target tokens ours timed)")
    parser.add_argument("--json", action="store_true", help="print a JSON summary as the last stdout line")
    args = parser.parse_args(argv)
    if args.warmup < 0 or args.batches < 1 or (args.baseline_batches is not None and args.baseline_batches < 1):
        parser.error("--warmup must be >= 0, --batches and --baseline-batches >= 1")

    logging.basicConfig(level=logging.WARNING)
    config: Config = load_config(args.config)
    if args.vocab_size is not None:
        config = dataclasses.replace(config, vocab=dataclasses.replace(config.vocab, size=args.vocab_size)).validate()
    t = config.train
    threads = args.threads or t.threads
    if threads:
        torch.set_num_threads(threads)
    threads = torch.get_num_threads()
    device = torch.device("cpu")
    bf16 = t.bf16 and bf16_is_native(device)  # the trainer's rule: emulated bf16 is slower than fp32
    cpu_name, cpu_flags = cpu_info()
    print(f"torch {torch.__version__}, {threads} thread(s), cpu: {cpu_name} ({os.cpu_count()} logical cpus; "
          f"{', '.join(cpu_flags) or 'none of ' + ', '.join(CPU_FLAGS)})", flush=True)

    # The training data as the trainer sets it up, then one full pass over epoch 1.
    data_dir = resolve_data_dir(config, args.data_dir, args.config)
    layout = "streamed data.corpora" if config.data.corpora else f"in-memory {data_dir}"
    started = time.perf_counter()
    data = prepare_data(data_dir, config)
    prep_seconds = time.perf_counter() - started
    src_vocab, tgt_vocab = len(data.vocabs.src), len(data.vocabs.tgt)
    print(f"data ({layout}): {data.summary}; vocab {src_vocab}/{tgt_vocab} "
          f"({'joint' if data.vocabs.joint else 'separate'}); prepared in {prep_seconds:.1f} s", flush=True)
    needed = args.warmup + args.batches
    epoch = read_epoch(data.source, needed, t.shuffle_buffer, t.seed)
    reports = data.corpus_reports()
    for label, line in reports:
        print(f"  {label}: {line}")
    print(f"epoch 1: {epoch.batches} batches, {epoch.pairs} pairs, {epoch.target_tokens} target tokens "
          f"(read in {epoch.seconds:.1f} s); baseline pool {len(epoch.pool)} pairs", flush=True)
    if len(epoch.first) < needed:
        parser.error(f"the epoch has only {len(epoch.first)} batches; lower --warmup/--batches")
    trainer = Trainer(config, Path(os.devnull), data_dir)  # only its step is used: no run directory is written
    trainer.device = device

    # Ours: the trainer's step on the first length-bucketed batches of epoch 1.
    torch.manual_seed(t.seed)
    model = ModelSpec(config.model, src_vocab, tgt_vocab).build()
    n_ours = sum(p.numel() for p in model.parameters())
    print(f"ours: {n_ours / 1e6:.2f}M params, batch_tokens {t.batch_tokens}, "
          f"{'bf16 autocast' if bf16 else 'fp32'}{' (train.bf16 is set; this CPU has no native bf16)' if t.bf16 and not bf16 else ''}; "
          f"{args.warmup} warm-up + {args.batches} timed batches ...", flush=True)
    ours = measure(trainer, model, epoch.first, args.warmup, args.batches, 0, bf16)
    del model

    # Baseline: random 64-pair batches from the same pairs, fp32, the naive per-step model.
    torch.manual_seed(t.seed)
    naive = NaiveSeq2Seq(config.model, src_vocab, tgt_vocab)
    n_naive = sum(p.numel() for p in naive.parameters())
    mean_tokens = epoch.target_tokens / epoch.pairs
    planned = args.baseline_batches or math.ceil(ours["tokens"] / (BASELINE_BATCH_SENTENCES * mean_tokens))
    print(f"baseline: {n_naive / 1e6:.2f}M params, {BASELINE_BATCH_SENTENCES} random pairs per batch, fp32; "
          f"{args.warmup} warm-up + {args.baseline_batches or f'~{planned}'} timed batches ...", flush=True)
    base = measure(trainer, naive, random_batches(epoch.pool, BASELINE_BATCH_SENTENCES, t.seed), args.warmup,
                   args.baseline_batches, ours["tokens"], False)
    del naive

    epoch_tokens = epoch.target_tokens
    speedup = ours["tokens_per_s"] / base["tokens_per_s"]
    rows = [("ours", ours), ("baseline", base)]
    print()
    print(f"{'':<10}{'batches':>9}{'tokens':>9}{'seconds':>10}{'tokens/s':>11}{'s/epoch':>10}{'peak RSS MiB':>14}")
    for name, r in rows:
        rss = r["peak_rss_mb"] if r["peak_rss_mb"] is not None else r["process_maxrss_mb"]
        print(f"{name:<10}{r['batches']:>9}{r['tokens']:>9}{r['seconds']:>10.2f}{r['tokens_per_s']:>11.0f}"
              f"{epoch_tokens / r['tokens_per_s']:>10.0f}{rss:>14.0f}")
    print(f"speed-up ours/baseline: {speedup:.2f}x   (epoch: {epoch_tokens} target tokens; process ru_maxrss "
          f"{_maxrss_mb():.0f} MiB; per-phase peaks from VmHWM where available)")
    if args.json:
        summary = {
            "ours_tokens_per_s": ours["tokens_per_s"],
            "baseline_tokens_per_s": base["tokens_per_s"],
            "speedup": speedup,
            "threads": threads,
            "cpu": cpu_name,
            "cpu_flags": cpu_flags,
            "config": str(args.config),
            "layout": "corpora" if config.data.corpora else "directory",
            "corpora": [{"name": label, "read": line} for label, line in reports],
            "vocab_size": {"src": src_vocab, "tgt": tgt_vocab},
            "bf16": bf16,
            "bf16_configured": t.bf16,
            "batch_tokens": t.batch_tokens,
            "baseline_batch_sentences": BASELINE_BATCH_SENTENCES,
            "baseline_pool_pairs": len(epoch.pool),
            "epoch_batches": epoch.batches,
            "epoch_pairs": epoch.pairs,
            "epoch_target_tokens": epoch_tokens,
            "ours_seconds_per_epoch": epoch_tokens / ours["tokens_per_s"],
            "baseline_seconds_per_epoch": epoch_tokens / base["tokens_per_s"],
            "ours": ours,
            "baseline": base,
            "ours_params": n_ours,
            "baseline_params": n_naive,
            "peak_rss_mb": _maxrss_mb(),
            "prepare_seconds": prep_seconds,
            "epoch_read_seconds": epoch.seconds,
            "torch": torch.__version__,
            "warmup": args.warmup,
        }
        print(json.dumps(summary))
    return 0


if __name__ == "__main__":
    sys.exit(main())
