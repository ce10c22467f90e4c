"""The training loop: teacher forcing, label-smoothed cross-entropy, Adam, clipping, LR decay on a
validation-BLEU plateau, early stopping, atomic checkpoints and exact resume.

A run directory holds ``config.yaml``, the SentencePiece models, ``last.pt`` (resume point),
``best.pt`` (best validation BLEU), ``metrics.jsonl`` and ``curve.png``.
"""
from __future__ import annotations

import json
import logging
import math
import random
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import sacrebleu
import torch
import yaml
from tqdm import tqdm

from .batching import collate, make_batches
from .checkpoint import CheckpointError, read_checkpoint, save_checkpoint
from .config import Config
from .curves import plot_curves
from .data import TrainingData, Vocabs, prepare_data
from .greedy import greedy_decode
from .model import ModelSpec, Seq2Seq
from .vocab import Vocab

log = logging.getLogger(__name__)


@dataclass
class Progress:
    """Where a run is; saved in every checkpoint so ``--resume`` continues at the same step."""

    epoch: int = 0  # epochs completed
    batch_in_epoch: int = 0  # batches of the current epoch already trained
    step: int = 0  # optimizer steps in total
    best_bleu: float = -1.0
    bad_validations: int = 0
    elapsed: float = 0.0  # training seconds, summed across resumes
    finished: bool = False


@dataclass(frozen=True)
class TrainResult:
    run_dir: Path
    best_bleu: float
    steps: int
    epochs: int


def bleu_of(model: Seq2Seq, data: TrainingData, config: Config) -> tuple[float, list[str]]:
    """Greedy validation sacreBLEU (default settings: cased, 13a) and the hypotheses."""
    t = config.train
    sources, refs = data.valid_src, data.valid_refs
    if t.valid_max_sentences:
        sources, refs = sources[: t.valid_max_sentences], refs[: t.valid_max_sentences]
    hyp_ids = greedy_decode(model, sources, t.max_len_a, t.max_len_b, t.valid_batch_size)
    hyps = [data.vocabs.tgt.decode(ids) for ids in hyp_ids]
    return sacrebleu.corpus_bleu(hyps, [refs]).score, hyps


@torch.no_grad()
def validation_loss(model: Seq2Seq, data: TrainingData, config: Config) -> float:
    """Per-token cross-entropy (no smoothing) on the validation set."""
    was_training = model.training
    model.eval()
    total, tokens = 0.0, 0
    for indices in make_batches(data.valid_src, data.valid_tgt, config.train.batch_tokens, config.train.max_batch_sentences, 0):
        batch = collate(indices, data.valid_src, data.valid_tgt).to(next(model.parameters()).device)
        loss, n = model.loss(batch.src, batch.src_lengths, batch.prev_ids, batch.gold, 0.0)
        total, tokens = total + float(loss), tokens + n
    model.train(was_training)
    return total / max(tokens, 1)


class Trainer:
    def __init__(self, config: Config, run_dir: Path, data_dir: Path) -> None:
        self.config = config
        self.run_dir = Path(run_dir)
        self.data_dir = Path(data_dir)

    # (1) set-up -----------------------------------------------------------------------------
    def _start(self, resume: bool) -> tuple[TrainingData, Seq2Seq, ModelSpec, Any, Any, Progress]:
        cfg = self.config
        last = self.run_dir / "last.pt"
        checkpoint = read_checkpoint(last) if resume and last.exists() else None
        if checkpoint is not None and "optimizer" not in checkpoint:
            raise CheckpointError(f"{last} holds weights but no training state (recovered from a bundle?): "
                                  "it cannot be resumed")
        if resume and checkpoint is None:
            log.warning("--resume: no checkpoint in %s, starting a new run", self.run_dir)
        if checkpoint is None and last.exists():
            raise FileExistsError(f"{self.run_dir} already holds a run (last.pt); use --resume or another --run-dir")
        if checkpoint is not None:
            saved = Config.from_dict(checkpoint["config"])
            if saved.model != cfg.model or saved.vocab != cfg.vocab or saved.data != cfg.data:
                log.warning("--resume: using the run's saved config; the given config differs")
            cfg = self.config = saved
        self.device = _pick_device(cfg.train.device)
        self.bf16 = cfg.train.bf16 and bf16_is_native(self.device)
        if cfg.train.bf16 and not self.bf16:
            tqdm.write("bf16: this CPU has no native bfloat16 (avx512_bf16 or AMX), training in fp32 instead")
        if cfg.train.threads:
            torch.set_num_threads(cfg.train.threads)
        _seed(cfg.train.seed)

        vocabs = None
        if checkpoint is not None:
            src = Vocab(checkpoint["src_spm"])
            vocabs = Vocabs(src, src if checkpoint["joint_vocab"] else Vocab(checkpoint["tgt_spm"]), checkpoint["joint_vocab"])
        data = prepare_data(self.data_dir, cfg, vocabs)
        tqdm.write(f"training data: {data.filter_report}")
        for label, line in data.corpus_reports:
            tqdm.write(f"  {label}: {line}")
        spec = ModelSpec(cfg.model, len(data.vocabs.src), len(data.vocabs.tgt))
        model = spec.build().to(self.device)
        optimizer = torch.optim.Adam(model.parameters(), lr=cfg.train.lr)
        scheduler = torch.optim.lr_scheduler.ReduceLROnPlateau(
            optimizer, mode="max", factor=cfg.train.lr_decay, patience=cfg.train.lr_patience, min_lr=cfg.train.min_lr
        )
        progress = Progress()
        if checkpoint is not None:
            model.load_state_dict(checkpoint["model"])
            model.to(self.device)
            optimizer.load_state_dict(checkpoint["optimizer"])
            scheduler.load_state_dict(checkpoint["scheduler"])
            progress = Progress(**checkpoint["progress"])
            _restore_rng(checkpoint["rng"])
            tqdm.write(f"resumed at epoch {progress.epoch + 1}, batch {progress.batch_in_epoch}, step {progress.step}")
        else:
            self._write_run_files(data.vocabs)
        n_params = sum(p.numel() for p in model.parameters())
        tqdm.write(f"model: {n_params / 1e6:.2f}M parameters on {self.device}{' (bf16 autocast)' if self.bf16 else ' (fp32)'}, vocab src {spec.src_vocab_size} tgt {spec.tgt_vocab_size}")
        return data, model, spec, optimizer, scheduler, progress

    def _write_run_files(self, vocabs: Vocabs) -> None:
        self.run_dir.mkdir(parents=True, exist_ok=True)
        (self.run_dir / "config.yaml").write_text(yaml.safe_dump(self.config.to_dict(), sort_keys=False))
        if vocabs.joint:
            vocabs.src.save(self.run_dir / "spm.model")
        else:
            vocabs.src.save(self.run_dir / f"spm.{self.config.data.src_lang}.model")
            vocabs.tgt.save(self.run_dir / f"spm.{self.config.data.tgt_lang}.model")
        (self.run_dir / "metrics.jsonl").unlink(missing_ok=True)

    # (2) the loop ---------------------------------------------------------------------------
    def train(self, resume: bool = False, max_steps: int | None = None) -> TrainResult:
        data, model, spec, optimizer, scheduler, progress = self._start(resume)
        cfg = self.config.train

        def checkpoint(path: Path) -> None:
            save_checkpoint(
                path, config=self.config, spec=spec, vocabs=data.vocabs, model=model,
                optimizer=optimizer.state_dict(), scheduler=scheduler.state_dict(),
                progress=vars(progress).copy(), rng=_rng_state(),
            )

        model.train()
        while not progress.finished and progress.epoch < cfg.max_epochs:
            batches = make_batches(data.train_src, data.train_tgt, cfg.batch_tokens, cfg.max_batch_sentences,
                                   cfg.seed + progress.epoch, data.epoch_indices(cfg.seed + progress.epoch))
            bar = tqdm(total=len(batches), initial=progress.batch_in_epoch, desc=f"epoch {progress.epoch + 1}", unit="batch", mininterval=2.0)
            window_loss, window_tokens, window_start = 0.0, 0, time.perf_counter()
            for indices in batches[progress.batch_in_epoch:]:
                started = time.perf_counter()
                batch = collate(indices, data.train_src, data.train_tgt).to(self.device)
                with torch.autocast(self.device.type, dtype=torch.bfloat16, enabled=self.bf16):
                    loss_sum, tokens = model.loss(batch.src, batch.src_lengths, batch.prev_ids, batch.gold, cfg.label_smoothing)
                optimizer.zero_grad(set_to_none=True)
                (loss_sum / tokens).backward()
                torch.nn.utils.clip_grad_norm_(model.parameters(), cfg.clip_norm)
                optimizer.step()
                progress.step += 1
                progress.batch_in_epoch += 1
                progress.elapsed += time.perf_counter() - started
                window_loss += float(loss_sum.detach())
                window_tokens += tokens
                bar.update(1)
                if progress.step % cfg.log_every == 0:
                    rate = window_tokens / (time.perf_counter() - window_start)
                    bar.set_postfix(loss=f"{window_loss / window_tokens:.3f}", tok_s=f"{rate:.0f}")
                    self._log({"kind": "train", "step": progress.step, "epoch": progress.epoch + 1,
                               "train_loss": window_loss / window_tokens, "tokens_per_s": rate,
                               "lr": optimizer.param_groups[0]["lr"], "elapsed": progress.elapsed})
                    window_loss, window_tokens, window_start = 0.0, 0, time.perf_counter()
                if cfg.checkpoint_every and progress.step % cfg.checkpoint_every == 0:
                    checkpoint(self.run_dir / "last.pt")
                out_of_time = bool(cfg.max_seconds) and progress.elapsed >= cfg.max_seconds
                if (cfg.valid_every and progress.step % cfg.valid_every == 0) or out_of_time:
                    bar.clear()
                    self._validate(model, data, scheduler, progress, optimizer, checkpoint)
                    model.train()
                    if out_of_time:
                        tqdm.write(f"time budget of {cfg.max_seconds:.0f} s of training reached")
                        progress.finished = True
                    checkpoint(self.run_dir / "last.pt")
                    if progress.finished:
                        break
                if max_steps is not None and progress.step >= max_steps:
                    bar.close()
                    checkpoint(self.run_dir / "last.pt")
                    return TrainResult(self.run_dir, progress.best_bleu, progress.step, progress.epoch)
            bar.close()
            if progress.finished:
                break
            progress.epoch += 1
            progress.batch_in_epoch = 0
            self._validate(model, data, scheduler, progress, optimizer, checkpoint)
            model.train()
            checkpoint(self.run_dir / "last.pt")
        progress.finished = True
        checkpoint(self.run_dir / "last.pt")
        tqdm.write(f"finished after {progress.epoch} epochs, {progress.step} steps; best validation BLEU {progress.best_bleu:.2f}")
        return TrainResult(self.run_dir, progress.best_bleu, progress.step, progress.epoch)

    # (3) validation, LR decay, early stopping -----------------------------------------------
    def _validate(self, model, data, scheduler, progress: Progress, optimizer, checkpoint) -> None:
        cfg = self.config.train
        started = time.perf_counter()
        bleu, hyps = bleu_of(model, data, self.config)
        vloss = validation_loss(model, data, self.config)
        improved = bleu > progress.best_bleu
        if improved:
            progress.best_bleu, progress.bad_validations = bleu, 0
            checkpoint(self.run_dir / "best.pt")
            (self.run_dir / "valid.best.txt").write_text("\n".join(hyps) + "\n", encoding="utf-8")
        else:
            progress.bad_validations += 1
        scheduler.step(bleu)
        lr = optimizer.param_groups[0]["lr"]
        if progress.bad_validations >= cfg.early_stop_patience:
            progress.finished = True
        self._log({"kind": "valid", "step": progress.step, "epoch": progress.epoch, "valid_bleu": bleu,
                   "valid_loss": vloss, "valid_ppl": math.exp(min(vloss, 50)), "lr": lr,
                   "elapsed": progress.elapsed, "valid_seconds": time.perf_counter() - started})
        tqdm.write(f"epoch {progress.epoch}: valid BLEU {bleu:.2f} (best {progress.best_bleu:.2f}), valid loss {vloss:.3f}, "
                   f"lr {lr:.2e}{' - early stop' if progress.finished else ''}")
        plot_curves(self.run_dir / "metrics.jsonl", self.run_dir / "curve.png")

    def _log(self, record: dict[str, Any]) -> None:
        with open(self.run_dir / "metrics.jsonl", "a", encoding="utf-8") as handle:
            handle.write(json.dumps(record) + "\n")


def bf16_is_native(device: torch.device, cpuinfo: str = "/proc/cpuinfo") -> bool:
    """True on CUDA, and on CPUs whose flags include avx512_bf16 or amx_bf16 (elsewhere bfloat16
    autocast is emulated and many times slower than fp32)."""
    if device.type == "cuda":
        return True
    try:
        text = Path(cpuinfo).read_text()
    except OSError:
        return False
    flags = next((line.split(":", 1)[1].split() for line in text.splitlines() if line.startswith("flags")), [])
    return "avx512_bf16" in flags or "amx_bf16" in flags


def _pick_device(name: str) -> torch.device:
    if name == "cuda" and not torch.cuda.is_available():
        raise ValueError("train.device is 'cuda' but torch sees no CUDA device")
    if name == "auto":
        name = "cuda" if torch.cuda.is_available() else "cpu"
    return torch.device(name)


def _seed(seed: int) -> None:
    random.seed(seed)
    torch.manual_seed(seed)


def _rng_state() -> dict[str, Any]:
    return {"torch": torch.get_rng_state(), "python": list(random.getstate()[1])}


def _restore_rng(state: dict[str, Any]) -> None:
    torch.set_rng_state(state["torch"])
    random.setstate((3, tuple(state["python"]), None))
