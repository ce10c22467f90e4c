"""The training loop: teacher forcing, label-smoothed cross-entropy, Adam, clipping, LR decay on a
validation-BLEU plateau, early stopping, atomic checkpoints, exact resume, clean interruption
(SIGINT/SIGTERM) and DistributedDataParallel under ``torchrun`` (see ``training.distributed``).

A run directory holds ``config.yaml``, the SentencePiece models, ``last.pt`` (resume point),
``best.pt`` (best validation BLEU), ``metrics.jsonl`` and ``curve.png``.
"""
from __future__ import annotations

import dataclasses
import itertools
import json
import logging
import math
import random
import signal
import time
from contextlib import nullcontext
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch
import yaml
from torch import Tensor, nn
from tqdm import tqdm

from .averaging import WeightAverage
from .batching import Pair, collate, collate_pairs, make_batches, target_tokens
from .checkpoint import CheckpointError, read_checkpoint, save_checkpoint
from .config import Config, DataConfig
from .curves import plot_curves
from .data import TrainingData, Vocabs, prepare_data
from .distributed import World, init_world, step_groups, teardown
from .evaluate import Scores, score_hypotheses
from .greedy import greedy_decode
from .model import ModelSpec, Seq2Seq
from .schedule import budget_lr
from .snapshot import WARMUP_STEPS, full_weights, warmup_factor
from .vocab import Vocab

log = logging.getLogger(__name__)
VALID_SAMPLE = 200  # raw validation pairs stored in each checkpoint (export parity checks)


@dataclass
class Progress:
    """Where a run is; saved in every checkpoint so ``--resume`` continues at the same step."""

    epoch: int = 0  # epochs completed
    batch_in_epoch: int = 0  # batches of the current epoch already trained (all ranks together)
    step: int = 0  # optimizer steps in total
    best_bleu: float = -1.0  # -1: no validation has run
    bad_validations: int = 0
    elapsed: float = 0.0  # training seconds, summed across resumes
    finished: bool = False
    # The steps since the last train record, so that a resumed run's next record covers the same
    # log_every steps as it would have without the stop.
    window_loss: float = 0.0
    window_tokens: int = 0
    window_elapsed: float = 0.0  # ``elapsed`` at the last train record
    metrics_bytes: int = -1  # length of metrics.jsonl when this checkpoint was written (-1: not recorded)
    # A run started from a compact snapshot (training.snapshot) has a fresh optimizer: its rate
    # warms up from step ``warm_from`` (-1: never), towards ``warm_lr`` under the plateau schedule.
    warm_from: int = -1
    warm_lr: float = 0.0


@dataclass(frozen=True)
class TrainResult:
    run_dir: Path
    best_bleu: float  # -1 when no validation ran
    steps: int
    epochs: int
    interrupted: int = 0  # the signal number that stopped the run, 0 if none

    @property
    def validated(self) -> bool:
        return self.best_bleu >= 0


class StopSignals:
    """SIGINT and SIGTERM set ``signum`` instead of killing the process; the loop checks it after
    each step (a signal during backward is handled when backward returns). A second SIGINT
    raises KeyboardInterrupt. The previous handlers come back on exit."""

    SIGNALS = (signal.SIGINT, signal.SIGTERM)

    def __enter__(self) -> "StopSignals":
        self.signum = 0
        self._previous: dict[int, Any] = {}
        try:
            for sig in self.SIGNALS:
                self._previous[sig] = signal.signal(sig, self._handle)
        except ValueError:  # not the main thread: leave the handlers alone
            pass
        return self

    def _handle(self, signum: int, frame: Any) -> None:
        if self.signum == signal.SIGINT and signum == signal.SIGINT:
            raise KeyboardInterrupt
        self.signum = signum

    def __exit__(self, *exc: Any) -> None:
        for sig, handler in self._previous.items():
            signal.signal(sig, handler)


class LossModule(nn.Module):
    """``Seq2Seq.loss`` as ``forward``: DDP synchronises gradients of what its forward computed."""

    def __init__(self, model: Seq2Seq) -> None:
        super().__init__()
        self.model = model

    def forward(self, src: Tensor, lengths: Tensor, prev_ids: Tensor, gold: Tensor, smoothing: float) -> Tensor:
        """Summed label-smoothed cross-entropy, float scalar, for src [B, S] and prev_ids/gold [B, T]."""
        return self.model.loss(src, lengths, prev_ids, gold, smoothing)[0]


def validate_model(model: Seq2Seq, data: TrainingData, config: Config) -> tuple[Scores, list[str]]:
    """Greedy validation scores (sacreBLEU BLEU and chrF) and the hypotheses."""
    t = config.train
    hyp_ids = greedy_decode(model, data.valid_src, t.max_len_a, t.max_len_b, t.valid_batch_size)
    hyps = [data.vocabs.tgt.decode(ids) for ids in hyp_ids]
    return score_hypotheses(hyps, data.valid_refs), hyps


def part_scores(hyps: list[str], data: TrainingData) -> dict[str, dict[str, float]]:
    """BLEU and chrF of each validation set on its own (``data.valid_parts``; empty for one set)."""
    scores, start = {}, 0
    for label, count in data.valid_parts:
        part = score_hypotheses(hyps[start:start + count], data.valid_refs[start:start + count])
        scores[label] = {"bleu": round(part.bleu, 2), "chrf": round(part.chrf, 2), "sentences": count}
        start += count
    return scores


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
    def __init__(self, config: Config, run_dir: Path, data_dir: Path, max_seconds: float | None = None) -> None:
        """``max_seconds``: the training-time budget, over the config's and a resumed run's own (a
        run goes on past the budget it was started with; the budget schedule anneals over the last
        ``anneal_fraction`` of the new one)."""
        self.data_dir = Path(data_dir)
        self.max_seconds = max_seconds
        self.config = self._recorded(config)
        self.run_dir = Path(run_dir)
        self.world = World()
        self.average: WeightAverage | None = None

    def train(self, resume: bool = False, max_steps: int | None = None,
              snapshot: dict[str, Any] | None = None) -> TrainResult:
        """Train until max_epochs, early stopping, the time budget, ``max_steps`` or a signal;
        from ``snapshot`` (``training.snapshot.read_snapshot``) into a new run directory if given."""
        self.world = init_world(self.config.train.device)
        clean = False
        try:
            with StopSignals() as signals:
                result = self._loop(resume, max_steps, signals, snapshot)
            clean = True
            return result
        finally:
            teardown(self.world, clean)

    # (1) set-up -----------------------------------------------------------------------------
    def _read_resume_point(self, resume: bool) -> dict[str, Any] | None:
        last = self.run_dir / "last.pt"
        checkpoint = read_checkpoint(last) if resume and last.exists() else None
        if checkpoint is not None and "optimizer" not in checkpoint:
            raise CheckpointError(f"{last} holds weights but no training state (recovered from a bundle?): "
                                  "it cannot be resumed")
        if resume and checkpoint is None:
            log.warning("--resume: no checkpoint in %s, starting a new run", self.run_dir)
        if checkpoint is None and last.exists():
            raise FileExistsError(f"{self.run_dir} already holds a run (last.pt); use --resume or another --run-dir")
        return checkpoint

    def _start(self, resume: bool, snapshot: dict[str, Any] | None) -> tuple[TrainingData, Seq2Seq, ModelSpec, Any, Any, Progress]:
        world = self.world
        # Rank 0 reads the checkpoint and hands it to the others (nodes need not share a disk).
        checkpoint = world.broadcast(self._read_resume_point(resume) if world.is_main else None)
        if checkpoint is not None and snapshot is not None:
            raise FileExistsError(f"{self.run_dir} already holds a run (last.pt): resume it, or start the snapshot in another --run-dir")
        if checkpoint is not None:
            saved = self._recorded(Config.from_dict(checkpoint["config"]))
            differences = config_differences(saved, self.config)
            if differences:
                log.warning("--resume: using the run's saved config; the given config differs in %s", ", ".join(differences))
            self.config = saved
        if self.max_seconds is not None:
            self.config = dataclasses.replace(self.config, train=dataclasses.replace(self.config.train, max_seconds=self.max_seconds))
            self.config.train.validate()
        cfg = self.config
        if world.distributed and cfg.train.simulate_world_size != 1:
            raise ValueError("train.simulate_world_size is for single-process runs; under torchrun leave it at 1")
        self.device = world.device(cfg.train.device)
        self.bf16 = cfg.train.bf16 and bf16_is_native(self.device)
        if cfg.train.bf16 and not self.bf16:
            self._say("bf16: this CPU has no native bfloat16 (avx512_bf16 or AMX), training in fp32 instead")
        if cfg.train.threads:
            torch.set_num_threads(cfg.train.threads)
        _seed(cfg.train.seed)

        data = self._prepare(checkpoint if checkpoint is not None else snapshot)
        self._say(f"training data: {data.summary}")
        for label, line in data.corpus_reports():
            self._say(f"  {label}: {line}")
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
            if "window_elapsed" not in checkpoint["progress"]:  # saved before the log window was
                progress.window_elapsed = progress.elapsed
            _restore_rng(checkpoint["rng"])
            if world.is_main:
                self._rewind_metrics(progress)
            if (progress.finished and self.max_seconds is not None and progress.elapsed < self.max_seconds
                    and progress.bad_validations < cfg.train.early_stop_patience and progress.epoch < cfg.train.max_epochs):
                progress.finished = False  # it stopped at the budget it was started with
            self._say(f"resumed at epoch {progress.epoch + 1}, batch {progress.batch_in_epoch}, step {progress.step}")
        elif snapshot is not None:
            model.load_state_dict(full_weights(snapshot))
            progress = Progress(**snapshot["progress"])
            progress.warm_from, progress.warm_lr = progress.step, float(snapshot["lr"])
            progress.finished, progress.window_loss, progress.window_tokens = False, 0.0, 0
            progress.window_elapsed = progress.elapsed
            torch.manual_seed(cfg.train.seed + progress.step)  # not the first step's dropout masks again
            if world.is_main:
                self._write_run_files(data.vocabs)
                (self.run_dir / "metrics.jsonl").write_text(snapshot["metrics"], encoding="utf-8")
            self._say(f"started from a snapshot at epoch {progress.epoch + 1}, batch {progress.batch_in_epoch}, "
                      f"step {progress.step} (a fresh optimizer; the rate warms up over {WARMUP_STEPS} steps)")
        elif world.is_main:
            self._write_run_files(data.vocabs)
        if cfg.train.ema_decay:
            self.average = WeightAverage(model, cfg.train.ema_decay)
            saved_average = (checkpoint or {}).get("ema") or (snapshot or {}).get("ema")
            if saved_average is not None:
                self.average.load_state_dict(saved_average)
        if world.rank:  # dropout masks differ between ranks; the weights come from rank 0 (DDP)
            torch.manual_seed(cfg.train.seed + 1_000_003 * world.rank + progress.step)
        n_params = sum(p.numel() for p in model.parameters())
        self._say(f"model: {n_params / 1e6:.2f}M parameters on {self.device}{' (bf16 autocast)' if self.bf16 else ' (fp32)'}, "
                  f"vocab src {spec.src_vocab_size} tgt {spec.tgt_vocab_size}"
                  f"{f', {world.size} processes' if world.distributed else ''}")
        return data, model, spec, optimizer, scheduler, progress

    def _recorded(self, config: Config) -> Config:
        """``config`` as the run records it: ``data.dir`` is the directory really read, absolute,
        so that the run's config.yaml means the same when read back from the run directory (a
        relative one would be taken relative to it). With ``data.corpora``, whose paths are
        absolute already, ``data.dir`` is not read and is recorded as its default."""
        data_dir = DataConfig.dir if config.data.corpora else str(self.data_dir.resolve())
        return dataclasses.replace(config, data=dataclasses.replace(config.data, dir=data_dir))

    def _rewind_metrics(self, progress: Progress) -> None:
        """Cut metrics.jsonl back to what it held when the resumed checkpoint was written: the
        steps after that are trained, and logged, again."""
        path = self.run_dir / "metrics.jsonl"
        if not path.exists():
            return
        if progress.metrics_bytes >= 0:
            if path.stat().st_size > progress.metrics_bytes:
                with open(path, "r+b") as handle:
                    handle.truncate(progress.metrics_bytes)
            return
        # A checkpoint from before metrics_bytes was recorded: keep the records up to its step.
        lines = path.read_text(encoding="utf-8").splitlines()
        path.write_text("".join(line + "\n" for line in lines if json.loads(line)["step"] <= progress.step), encoding="utf-8")

    def _prepare(self, checkpoint: dict[str, Any] | None) -> TrainingData:
        """The data, with rank 0's vocabularies on every rank (trained once, then broadcast)."""
        world = self.world
        protos = None
        if checkpoint is not None:
            protos = (checkpoint["src_spm"], checkpoint["tgt_spm"], checkpoint["joint_vocab"])
        data = None
        if world.is_main:
            data = prepare_data(self.data_dir, self.config, _vocabs(protos))
            protos = (data.vocabs.src.proto, data.vocabs.tgt.proto, data.vocabs.joint)
        protos = world.broadcast(protos)
        return data or prepare_data(self.data_dir, self.config, _vocabs(protos))

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
    def _loop(self, resume: bool, max_steps: int | None, signals: StopSignals, snapshot: dict[str, Any] | None) -> TrainResult:
        data, model, spec, optimizer, scheduler, progress = self._start(resume, snapshot)
        cfg, world = self.config.train, self.world
        net: nn.Module = LossModule(model)
        if world.distributed:
            net = nn.parallel.DistributedDataParallel(net, device_ids=[self.device.index] if self.device.type == "cuda" else None)
        group = world.size * cfg.simulate_world_size  # global batches per optimizer step

        def checkpoint(path: Path) -> None:
            if world.is_main:
                metrics = self.run_dir / "metrics.jsonl"
                progress.metrics_bytes = metrics.stat().st_size if metrics.exists() else 0
                save_checkpoint(
                    path, config=self.config, spec=spec, vocabs=data.vocabs, model=model,
                    optimizer=optimizer.state_dict(), scheduler=scheduler.state_dict(),
                    progress=vars(progress).copy(), rng=_rng_state(), corpora=data.corpus_info(),
                    **({"ema": self.average.state_dict()} if self.average else {}),
                    valid_sample={"src": data.valid_texts[:VALID_SAMPLE], "tgt": data.valid_refs[:VALID_SAMPLE]},
                )

        def result(interrupted: int = 0) -> TrainResult:
            return TrainResult(self.run_dir, progress.best_bleu, progress.step, progress.epoch, interrupted)

        def set_lr(lr: float) -> None:
            for param_group in optimizer.param_groups:
                param_group["lr"] = lr

        def warming(step: int) -> bool:
            return progress.warm_from >= 0 and step - progress.warm_from < WARMUP_STEPS

        def scheduled(step: int, elapsed: float) -> float:
            """The rate for the optimizer step after ``step`` steps."""
            base = budget_lr(cfg, step, elapsed) if cfg.lr_schedule == "budget" else progress.warm_lr
            return base * warmup_factor(step, progress.warm_from)

        if (cfg.lr_schedule == "budget" and progress.step == 0) or warming(progress.step):
            set_lr(scheduled(progress.step, progress.elapsed))
        model.train()
        while not progress.finished and progress.epoch < cfg.max_epochs:
            # Replaying the deterministic stream and skipping what was trained puts a resumed run
            # at exactly the batch it stopped before.
            batches = itertools.islice(data.source.epoch_batches(progress.epoch), progress.batch_in_epoch, None)
            bar = tqdm(initial=progress.batch_in_epoch // group, desc=f"epoch {progress.epoch + 1}", unit="step",
                       mininterval=2.0, disable=not world.is_main)
            for step_batches in step_groups(batches, group):
                started = time.perf_counter()
                loss_sum, tokens = self._step(net, model, optimizer, step_batches)
                progress.step += 1
                progress.batch_in_epoch += group
                progress.elapsed += time.perf_counter() - started
                out_of_time = world.is_main and bool(cfg.max_seconds) and progress.elapsed >= cfg.max_seconds
                # One collective per step: the step's loss over all ranks, and whether any rank
                # was signalled or rank 0 ran out of time, so that every rank stops together.
                # Rank 0's clock also sets the next step's rate under the budget schedule.
                loss_sum, stop, out_of_time, elapsed = world.sum(
                    [loss_sum, float(bool(signals.signum)), float(out_of_time), progress.elapsed if world.is_main else 0.0])
                if cfg.lr_schedule == "budget" or warming(progress.step - 1):
                    set_lr(scheduled(progress.step, elapsed))
                progress.window_loss += loss_sum
                progress.window_tokens += tokens
                bar.update(1)
                # A step's records and validation come before its checkpoint, so that a run
                # resumed from that checkpoint neither repeats nor skips them; a stop signal
                # waits for a validation that is due at this step.
                if progress.step % cfg.log_every == 0:
                    self._log_train_window(progress, optimizer, bar)
                at_max_steps = max_steps is not None and progress.step >= max_steps
                if (cfg.valid_every and progress.step % cfg.valid_every == 0) or out_of_time:
                    bar.clear()
                    self._validate(model, data, scheduler, progress, optimizer, checkpoint)
                    model.train()
                    if out_of_time:
                        self._say(f"time budget of {cfg.max_seconds:.0f} s of training reached")
                        progress.finished = True
                    checkpoint(self.run_dir / "last.pt")
                    if progress.finished:
                        break
                elif stop or at_max_steps or (cfg.checkpoint_every and progress.step % cfg.checkpoint_every == 0):
                    checkpoint(self.run_dir / "last.pt")
                if stop or at_max_steps:
                    bar.close()
                    return result(signals.signum or signal.SIGTERM) if stop else result()
            bar.close()
            if progress.finished:
                break
            progress.epoch += 1
            progress.batch_in_epoch = 0
            self._report_pass(data, progress)
            self._validate(model, data, scheduler, progress, optimizer, checkpoint)
            model.train()
            checkpoint(self.run_dir / "last.pt")
            if signals.signum:  # arrived during validation
                return result(signals.signum)
        progress.finished = True
        checkpoint(self.run_dir / "last.pt")
        best = f"best validation BLEU {progress.best_bleu:.2f}" if progress.best_bleu >= 0 else "no validation ran"
        self._say(f"finished after {progress.epoch} epochs, {progress.step} steps; {best}")
        return result()

    def _step(self, net: nn.Module, model: Seq2Seq, optimizer: Any, step_batches: list[list[Pair]]) -> tuple[float, int]:
        """One optimizer step on this rank's share of ``step_batches`` (the global group).

        Returns this rank's summed loss and the step's target tokens over all ranks. The loss is
        scaled by world / step_tokens so that DDP's gradient mean equals the gradient of one
        process's token-mean loss over the whole group.
        """
        world, cfg = self.world, self.config.train
        step_tokens = sum(target_tokens(pairs) for pairs in step_batches)
        mine = step_batches[world.rank::world.size]
        optimizer.zero_grad(set_to_none=True)
        loss_total = 0.0
        for pairs in mine:
            batch = collate_pairs(pairs).to(self.device)
            with torch.autocast(self.device.type, dtype=torch.bfloat16, enabled=self.bf16):
                loss_sum = net(batch.src, batch.src_lengths, batch.prev_ids, batch.gold, cfg.label_smoothing)
            (loss_sum * world.size / step_tokens).backward()
            loss_total += float(loss_sum.detach())
        torch.nn.utils.clip_grad_norm_(model.parameters(), cfg.clip_norm)
        optimizer.step()
        if self.average is not None:
            self.average.update(model)
        return loss_total, step_tokens

    def _log_train_window(self, progress: Progress, optimizer: Any, bar: tqdm) -> None:
        """The train record of the last ``log_every`` steps: mean loss per target token, and target
        tokens per second of training steps (validation and checkpoints excluded)."""
        seconds = progress.elapsed - progress.window_elapsed
        loss = progress.window_loss / max(progress.window_tokens, 1)
        rate = progress.window_tokens / seconds if seconds > 0 else 0.0
        bar.set_postfix(loss=f"{loss:.3f}", tok_s=f"{rate:.0f}")
        self._log({"kind": "train", "step": progress.step, "epoch": progress.epoch + 1, "train_loss": loss,
                   "tokens_per_s": rate, "lr": optimizer.param_groups[0]["lr"], "elapsed": progress.elapsed})
        progress.window_loss, progress.window_tokens, progress.window_elapsed = 0.0, 0, progress.elapsed

    # (3) validation, LR decay, early stopping -----------------------------------------------
    def _validate(self, model, data, scheduler, progress: Progress, optimizer, checkpoint) -> None:
        """Rank 0 validates and decides; every rank then takes its learning rate and stop flag."""
        if self.world.is_main:
            self._validate_main(model, data, scheduler, progress, optimizer, checkpoint)
        decision = self.world.broadcast({"lr": optimizer.param_groups[0]["lr"], "finished": progress.finished,
                                         "best_bleu": progress.best_bleu, "bad_validations": progress.bad_validations})
        for group in optimizer.param_groups:
            group["lr"] = decision["lr"]
        progress.finished = decision["finished"]
        progress.best_bleu = decision["best_bleu"]
        progress.bad_validations = decision["bad_validations"]

    def _validate_main(self, model, data, scheduler, progress: Progress, optimizer, checkpoint) -> None:
        cfg = self.config.train
        started = time.perf_counter()
        scores, hyps = validate_model(model, data, self.config)
        compared: dict[str, Any] = {}
        if self.average is not None:
            with self.average.applied(model):
                average_scores, average_hyps = validate_model(model, data, self.config)
            compared = {"valid_bleu_raw": scores.bleu, "valid_bleu_average": average_scores.bleu, "weights": "raw"}
            if average_scores.bleu >= scores.bleu:
                scores, hyps, compared["weights"] = average_scores, average_hyps, "average"
        chosen = self.average.applied(model) if compared.get("weights") == "average" else nullcontext()
        bleu = scores.bleu
        improved = bleu > progress.best_bleu
        with chosen:  # the validated weights are the ones best.pt keeps
            vloss = validation_loss(model, data, self.config)
            if improved:
                progress.best_bleu, progress.bad_validations = bleu, 0
                checkpoint(self.run_dir / "best.pt")
                (self.run_dir / "valid.best.txt").write_text("\n".join(hyps) + "\n", encoding="utf-8")
        if not improved:
            progress.bad_validations += 1
        if cfg.lr_schedule == "plateau":
            scheduler.step(bleu)
        lr = optimizer.param_groups[0]["lr"]
        if progress.bad_validations >= cfg.early_stop_patience:
            progress.finished = True
        self._log({"kind": "valid", "step": progress.step, "epoch": progress.epoch, "valid_bleu": bleu,
                   "valid_chrf": scores.chrf, "bleu_signature": scores.bleu_signature,
                   "chrf_signature": scores.chrf_signature, "valid_sentences": len(hyps),
                   "valid_loss": vloss, "valid_ppl": math.exp(min(vloss, 50)), "lr": lr,
                   "elapsed": progress.elapsed, "valid_seconds": time.perf_counter() - started, **compared,
                   **({"valid_sets": part_scores(hyps, data)} if data.valid_parts else {})})
        averaged = (f" ({compared['weights']} weights; raw {compared['valid_bleu_raw']:.2f}, "
                    f"average {compared['valid_bleu_average']:.2f})") if compared else ""
        self._say(f"epoch {progress.epoch}: valid BLEU {bleu:.2f}{averaged} (best {progress.best_bleu:.2f}) chrF {scores.chrf:.2f} "
                  f"on {len(hyps)} sentences, valid loss {vloss:.3f}, lr {lr:.2e}"
                  f"{' - early stop' if progress.finished else ''} [{scores.bleu_signature}; {scores.chrf_signature}]")
        plot_curves(self.run_dir / "metrics.jsonl", self.run_dir / "curve.png")

    def _report_pass(self, data: TrainingData, progress: Progress) -> None:
        """After a full epoch pass: what each corpus's filters kept and dropped."""
        reports = data.corpus_reports()
        if reports and self.world.is_main:
            self._say(f"epoch {progress.epoch} read:")
            for label, line in reports:
                self._say(f"  {label}: {line}")
            self._log({"kind": "data", "step": progress.step, "epoch": progress.epoch, "corpora": data.corpus_info()})

    def _log(self, record: dict[str, Any]) -> None:
        if self.world.is_main:
            with open(self.run_dir / "metrics.jsonl", "a", encoding="utf-8") as handle:
                handle.write(json.dumps(record) + "\n")

    def _say(self, line: str) -> None:
        if self.world.is_main:
            tqdm.write(line)


def config_differences(a: Config, b: Config) -> list[str]:
    """The dotted keys whose values differ between two configs (``model.dec_hidden``, ...)."""
    def flat(value: Any, prefix: str) -> dict[str, Any]:
        if isinstance(value, dict):
            return {k: v for name, item in value.items() for k, v in flat(item, f"{prefix}{name}.").items()}
        return {prefix.rstrip("."): value}

    left, right = flat(a.to_dict(), ""), flat(b.to_dict(), "")
    return sorted(k for k in left.keys() | right.keys() if left.get(k) != right.get(k))


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


def _vocabs(protos: tuple[bytes, bytes, bool] | None) -> Vocabs | None:
    if protos is None:
        return None
    src = Vocab(protos[0])
    return Vocabs(src, src if protos[2] else Vocab(protos[1]), protos[2])


def _seed(seed: int) -> None:
    random.seed(seed)
    np.random.seed(seed % 2**32)
    torch.manual_seed(seed)


def _rng_state() -> dict[str, Any]:
    _, keys, pos, has_gauss, gauss = np.random.get_state()
    state = {"torch": torch.get_rng_state(), "python": list(random.getstate()[1]),
             "numpy": [torch.from_numpy(keys.astype(np.int64)), int(pos), int(has_gauss), float(gauss)]}
    if torch.cuda.is_available() and torch.cuda.is_initialized():
        state["cuda"] = torch.cuda.get_rng_state_all()
    return state


def _restore_rng(state: dict[str, Any]) -> None:
    torch.set_rng_state(state["torch"])
    random.setstate((3, tuple(state["python"]), None))
    if "numpy" in state:
        keys, pos, has_gauss, gauss = state["numpy"]
        np.random.set_state(("MT19937", keys.numpy().astype(np.uint32), pos, has_gauss, gauss))
    if "cuda" in state and torch.cuda.is_available():
        torch.cuda.set_rng_state_all(state["cuda"])
