"""Training throughput benchmark: target tokens per second, ours against a naive baseline.

Measures, on this machine's CPU and on the real Multi30k training corpus (read through
``training.data.prepare_data``), the speed of one training step (collate, forward with
label-smoothed cross-entropy, backward, gradient clipping, Adam step) for:

* ours: ``training.model.ModelSpec(config.model, V, V).build()`` trained exactly as in
  ``training/trainer.py``: length-bucketed batches of ``train.batch_tokens`` target tokens from
  ``training.batching.make_batches``/``collate``, bfloat16 autocast when ``train.bf16`` is set,
  attention keys computed once per sentence and the vocabulary projection run once per batch;
* baseline: a straightforward per-step ``nn.GRUCell`` implementation of the same model (same
  sizes, defined below): batches of 64 random sentence pairs (no length bucketing), a
  bidirectional ``nn.GRU`` encoder over ``pack_padded_sequence``, additive attention that
  recomputes ``U_a h_j`` at every decoder step, readout, vocabulary projection and loss inside the
  per-step loop, fp32 (no autocast).

Both run with the same torch thread count (``--threads``, else ``train.threads``, else torch's
default): ``--warmup`` untimed batches, then timed batches (``--batches`` for ours; for the
baseline ``--baseline-batches``, or by default as many as it takes to cover the same number of
target tokens). Tokens are real target tokens (non-padding, eos included). Reported: tokens/s,
an epoch-time estimate (training-set target tokens / tokens per s), peak RSS and the speed-up
ours / baseline. With ``--json`` the last stdout line is a JSON object.

The SentencePiece vocabulary is trained with the config's settings (about 20 s) unless
``--vocab-size`` overrides its size. The data directory is ``--data-dir``, else ``$NMT_DATA_DIR``,
else the config's ``data.dir``.

Run from the repository root:

    python bench/train_speed.py [--config configs/multi30k-en-de.yaml] [--json]

Smoke test: ``python bench/train_speed.py --batches 2 --baseline-batches 2 --warmup 1 --vocab-size 1000``
"""
from __future__ import annotations

import argparse
import dataclasses
import json
import logging
import math
import os
import platform
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

from training.batching import Batch, collate, make_batches  # noqa: E402
from training.config import Config, ModelConfig, load_config, resolve_data_dir  # noqa: E402
from training.data import prepare_data  # noqa: E402
from training.model import ModelSpec  # noqa: E402
from training.vocab import PAD_ID  # noqa: E402

DEFAULT_CONFIG = REPO_ROOT / "configs" / "multi30k-en-de.yaml"
BASELINE_BATCH_SENTENCES = 64


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


def measure(
    model: nn.Module, batches: Iterable[Sequence[int]], src: list[list[int]], tgt: list[list[int]],
    warmup: int, timed: int | None, min_tokens: int, bf16: bool, lr: float, clip: float, smoothing: float,
) -> dict:
    """Train ``model`` on ``batches`` (index lists) exactly as training/trainer.py does per batch.

    ``warmup`` batches are untimed; then ``timed`` batches, or (``timed`` None) until at least
    ``min_tokens`` target tokens were timed. Returns tokens, seconds, batches and peak RSS.
    """
    model.train()
    optimizer = torch.optim.Adam(model.parameters(), lr=lr)
    source = iter(batches)

    def step() -> int:
        batch: Batch = collate(next(source), src, tgt)
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=bf16):
            loss_sum, tokens = model.loss(batch.src, batch.src_lengths, batch.prev_ids, batch.gold, smoothing)
        optimizer.zero_grad(set_to_none=True)
        (loss_sum / tokens).backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), clip)
        optimizer.step()
        assert tokens == batch.target_tokens, (tokens, batch.target_tokens)
        return tokens

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


def random_batches(n_pairs: int, size: int, seed: int) -> Iterator[list[int]]:
    """Endless batches of ``size`` pairs drawn at random (no sorting, no length bucketing)."""
    rng = random.Random(seed)
    while True:
        yield rng.sample(range(n_pairs), min(size, n_pairs))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--config", default=str(DEFAULT_CONFIG), help="training config (default: %(default)s)")
    parser.add_argument("--data-dir", default=None, help="corpus directory (default: $NMT_DATA_DIR, else the config's data.dir)")
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

    data_dir = resolve_data_dir(config, args.data_dir, args.config)
    started = time.perf_counter()
    data = prepare_data(data_dir, config)
    prep_seconds = time.perf_counter() - started
    src, tgt = data.train_src, data.train_tgt
    src_vocab, tgt_vocab = len(data.vocabs.src), len(data.vocabs.tgt)
    epoch_tokens = sum(len(s) + 1 for s in tgt)
    print(f"data: {data_dir} - {data.summary}; vocab {src_vocab}/{tgt_vocab} "
          f"({'joint' if data.vocabs.joint else 'separate'}); {epoch_tokens} target tokens per epoch; "
          f"prepared in {prep_seconds:.1f} s", flush=True)
    print(f"torch {torch.__version__}, {threads} thread(s), cpu: {platform.processor() or platform.machine()}, "
          f"{os.cpu_count()} logical cpus", flush=True)

    # Ours: the trainer's step on the first length-bucketed batches of epoch 1.
    needed = args.warmup + args.batches
    ours_batches = make_batches(src, tgt, t.batch_tokens, t.max_batch_sentences, t.seed)
    if len(ours_batches) < needed:
        parser.error(f"the corpus has only {len(ours_batches)} batches; lower --warmup/--batches")
    torch.manual_seed(t.seed)
    model = ModelSpec(config.model, src_vocab, tgt_vocab).build()
    n_ours = sum(p.numel() for p in model.parameters())
    print(f"ours: {n_ours / 1e6:.2f}M params, batch_tokens {t.batch_tokens}, bf16 {t.bf16}; "
          f"{args.warmup} warm-up + {args.batches} timed batches ...", flush=True)
    ours = measure(model, ours_batches[:needed], src, tgt, args.warmup, args.batches, 0,
                   t.bf16, t.lr, t.clip_norm, t.label_smoothing)
    del model

    # Baseline: random 64-sentence batches, fp32, the naive per-step model.
    torch.manual_seed(t.seed)
    naive = NaiveSeq2Seq(config.model, src_vocab, tgt_vocab)
    n_naive = sum(p.numel() for p in naive.parameters())
    mean_tokens = epoch_tokens / len(tgt)
    planned = args.baseline_batches or math.ceil(ours["tokens"] / (BASELINE_BATCH_SENTENCES * mean_tokens))
    print(f"baseline: {n_naive / 1e6:.2f}M params, {BASELINE_BATCH_SENTENCES} random sentences per batch, fp32; "
          f"{args.warmup} warm-up + {args.baseline_batches or f'~{planned}'} timed batches ...", flush=True)
    base = measure(naive, random_batches(len(src), BASELINE_BATCH_SENTENCES, t.seed), src, tgt, args.warmup, args.baseline_batches, ours["tokens"],
                   False, t.lr, t.clip_norm, t.label_smoothing)
    del naive

    speedup = ours["tokens_per_s"] / base["tokens_per_s"]
    rows = [("ours", ours), ("baseline", base)]
    print()
    print(f"{'':<10}{'batches':>9}{'tokens':>9}{'seconds':>10}{'tokens/s':>11}{'s/epoch':>10}{'peak RSS MiB':>14}")
    for name, r in rows:
        rss = r["peak_rss_mb"] if r["peak_rss_mb"] is not None else r["process_maxrss_mb"]
        print(f"{name:<10}{r['batches']:>9}{r['tokens']:>9}{r['seconds']:>10.2f}{r['tokens_per_s']:>11.0f}"
              f"{epoch_tokens / r['tokens_per_s']:>10.0f}{rss:>14.0f}")
    print(f"speed-up ours/baseline: {speedup:.2f}x   (process ru_maxrss {_maxrss_mb():.0f} MiB; "
          f"per-phase peaks from VmHWM where available)")
    if args.json:
        summary = {
            "ours_tokens_per_s": ours["tokens_per_s"],
            "baseline_tokens_per_s": base["tokens_per_s"],
            "speedup": speedup,
            "threads": threads,
            "config": str(args.config),
            "vocab_size": {"src": src_vocab, "tgt": tgt_vocab},
            "bf16": t.bf16,
            "batch_tokens": t.batch_tokens,
            "baseline_batch_sentences": BASELINE_BATCH_SENTENCES,
            "epoch_target_tokens": epoch_tokens,
            "ours_seconds_per_epoch": epoch_tokens / ours["tokens_per_s"],
            "baseline_seconds_per_epoch": epoch_tokens / base["tokens_per_s"],
            "ours": ours,
            "baseline": base,
            "ours_params": n_ours,
            "baseline_params": n_naive,
            "peak_rss_mb": _maxrss_mb(),
            "torch": torch.__version__,
            "warmup": args.warmup,
        }
        print(json.dumps(summary))
    return 0


if __name__ == "__main__":
    sys.exit(main())
