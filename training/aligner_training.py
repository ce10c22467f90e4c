"""Train the guided-alignment head (``training.aligner``) of a finished model on silver alignments.

    checkpoint + training corpora -> sample of pairs -> eflomal links over alignment tokens
        (``training.silver``, punctuation split off) -> each pair in a drawn view (natural,
        lower-cased, spaced: ``training.aligner_views``) -> piece targets -> head trained with the
        translation model frozen -> checkpoint + head

The frozen model runs teacher-forced without gradients (bf16 autocast where the CPU has it);
only the head learns, so a few minutes on a CPU are enough and translations do not change. What
the recipe needs of the model is a ``FrozenModel``: ``Seq2SeqFrozen`` for the models trained here,
``export.marian.aligner`` for imported Transformers (``head_from_pairs`` is the recipe from pairs on).
"""
from __future__ import annotations

import logging
import math
import random
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Callable, Iterable, Sequence

import numpy as np
import torch
from torch import Tensor, nn

from .aligner import AlignerConfig, AlignmentHead, piece_targets, reverse_targets
from .aligner_options import AlignerTrainConfig
from .aligner_views import NATURAL, View, draw_view, piece_tokens, render
from .batching import collate, make_batches
from .checkpoint import save_checkpoint
from .loading import LoadedModel, load_model
from .config import Config
from .corpora import iter_corpus
from .corpus import find_corpus_file, iter_parallel
from .stream import Reservoir
from .silver import silver_directions, silver_links
from .trainer import bf16_is_native
from .vocab import EOS_ID

log = logging.getLogger(__name__)

# Checkpoint entries of a trained head.
ALIGNER_STATE, ALIGNER_CONFIG, ALIGNER_REPORT = "aligner", "aligner_config", "aligner_training"


@dataclass(frozen=True)
class Example:
    src: list[int]  # source ids, eos last
    tgt: list[int]  # target ids, no bos/eos
    targets: np.ndarray  # float32 [len(tgt) + 1, len(src)] from ``piece_targets``
    reverse: np.ndarray  # float32 [len(tgt) + 1, len(src)] from ``reverse_targets``


class FrozenModel:
    """A finished translation model as the head learns over it, its weights frozen: what the recipe
    needs of it. ``Seq2SeqFrozen`` serves the models trained here, ``export.marian.aligner.MarianFrozen``
    imported Transformers."""

    module: nn.Module  # the translation model, whose parameters are frozen
    eos_id: int  # appended to each source

    def cut(self, side: str, text: str, spans: Sequence[tuple[int, int]]) -> tuple[list[int], list[int]]:
        """``aligner_views.piece_tokens`` of ``text`` on ``side`` ("source" or "target"): the model's
        ids of its pieces, and the token (index into ``spans``) each piece is in."""
        raise NotImplementedError

    def new_head(self, cfg: AlignerConfig) -> AlignmentHead:
        """An untrained head of ``cfg`` for this model's widths, target embedding and padding id."""
        raise NotImplementedError

    def head_inputs(self, examples: Sequence[Example], bf16: bool) -> tuple[Tensor, ...]:
        """The head's inputs for ``examples``, from the model run teacher-forced without gradients
        (bf16 autocast if ``bf16``), all float32: annotations [B, S, A], src_mask bool [B, S], states
        [B, T, D], target_ids int64 [B, T] (eos included, the head's ``pad_id`` after it), attention
        [B, T, S]."""
        raise NotImplementedError


class Seq2SeqFrozen(FrozenModel):
    """A checkpoint's GRU or hybrid model (``training.model.Seq2Seq``)."""

    def __init__(self, loaded: LoadedModel) -> None:
        self.loaded, self.module, self.eos_id = loaded, loaded.model, EOS_ID

    def cut(self, side: str, text: str, spans: Sequence[tuple[int, int]]) -> tuple[list[int], list[int]]:
        vocab = self.loaded.vocabs.src if side == "source" else self.loaded.vocabs.tgt
        return piece_tokens(vocab.processor, text, spans)

    def new_head(self, cfg: AlignerConfig) -> AlignmentHead:
        return AlignmentHead(cfg, self.loaded.spec.config, self.module.decoder.embed.weight)

    def head_inputs(self, examples: Sequence[Example], bf16: bool) -> tuple[Tensor, ...]:
        batch = collate(range(len(examples)), [e.src for e in examples], [e.tgt for e in examples])
        with torch.no_grad(), torch.autocast("cpu", dtype=torch.bfloat16, enabled=bf16):
            enc = self.module.encode(batch.src, batch.src_lengths)
            states, _, attention = self.module.decode_states(enc, batch.prev_ids)
        return enc.annotations.float(), enc.mask, states.float(), batch.gold, attention.float()


def frozen_model(model: LoadedModel | FrozenModel) -> FrozenModel:
    """``model`` as a ``FrozenModel`` (a checkpoint's model as ``Seq2SeqFrozen``)."""
    return model if isinstance(model, FrozenModel) else Seq2SeqFrozen(model)


def sample_pairs(config: Config, data_dir: Path, total: int, seed: int) -> list[tuple[str, str]]:
    """Up to ``total`` training pairs, shuffled with ``seed``: from the config's corpora, each
    contributing in proportion to its size x weight (never more than it has), or from
    ``data_dir``'s train split when the config lists none (``sample_streams``)."""
    if config.data.corpora:
        streams = [(spec.label, spec.weight, iter_corpus(spec, config)) for spec in config.data.corpora]
    else:
        prefix, data = config.data.train_prefix, config.data
        streams = [(str(data_dir), 1.0, iter_parallel(find_corpus_file(data_dir, prefix, data.src_lang),
                                                      find_corpus_file(data_dir, prefix, data.tgt_lang)))]
    return sample_streams(streams, total, seed)


def sample_streams(streams: Sequence[tuple[str, float, Iterable[tuple[str, str]]]], total: int,
                   seed: int) -> list[tuple[str, str]]:
    """Up to ``total`` pairs of (label, weight, pairs) ``streams``, shuffled with ``seed``, each stream
    contributing in proportion to its size x weight (never more than it has). One streamed pass per
    stream: each keeps a uniform reservoir of ``total`` pairs (memory bounded by it), and its share
    is drawn from that."""
    reservoirs = []
    for label, weight, pairs in streams:
        reservoir = Reservoir(total, f"{seed}:{label}")
        for pair in pairs:
            reservoir.add(pair)
        reservoirs.append((label, weight, reservoir))
    mass = sum(r.seen * weight for _, weight, r in reservoirs)
    rng = random.Random(seed)
    sample: list[tuple[str, str]] = []
    for label, weight, reservoir in reservoirs:
        share = min(reservoir.seen, round(total * reservoir.seen * weight / mass))
        sample += rng.sample(reservoir.items, share)
        log.info("aligner data: %d of %d pairs from %s", share, reservoir.seen, label)
    rng.shuffle(sample)
    return sample


def make_examples(loaded: LoadedModel | FrozenModel, pairs: Sequence[tuple[str, str]],
                  links: Sequence[set[tuple[int, int]]], max_len: int, views: Sequence[View] | None = None,
                  reverse_links: Sequence[set[tuple[int, int]]] | None = None) -> list[Example]:
    """Pieces and piece-level targets of each pair, shown in its view (``aligner_views``; default:
    as it is); ``links`` are over the pair's alignment tokens (``silver.tokens``), and the reverse
    direction learns ``reverse_links`` (default: the same links). Pairs with an empty side, no link,
    or more than ``max_len`` pieces on a side are left out."""
    frozen = frozen_model(loaded)
    examples = []
    reverse_links = links if reverse_links is None else reverse_links
    for k, ((source, target), pair_links, pair_reverse) in enumerate(zip(pairs, links, reverse_links)):
        view = views[k] if views is not None else NATURAL
        src_ids, src_tokens = frozen.cut("source", *render(source, view))
        tgt_ids, tgt_tokens = frozen.cut("target", *render(target, view))
        if not (pair_links and src_ids and tgt_ids) or max(len(src_ids), len(tgt_ids)) > max_len:
            continue
        examples.append(Example([*src_ids, frozen.eos_id], tgt_ids, piece_targets(src_tokens, tgt_tokens, pair_links),
                                reverse_targets(src_tokens, tgt_tokens, pair_reverse)))
    return examples


def batch_loss(model: LoadedModel | FrozenModel, head: AlignmentHead, examples: Sequence[Example],
               bf16: bool) -> torch.Tensor:
    """Cross-entropy of the head against the examples' targets: the mean over target pieces, plus
    with a reverse direction its mean over source pieces."""
    annotations, src_mask, states, target_ids, attention = frozen_model(model).head_inputs(examples, bf16)
    targets, reverse_wanted = torch.zeros(attention.shape), torch.zeros(attention.shape)
    for row, example in enumerate(examples):
        rows, columns = example.targets.shape
        targets[row, :rows, :columns] = torch.from_numpy(example.targets)
        reverse_wanted[row, :rows, :columns] = torch.from_numpy(example.reverse)
    log_probs, reverse = head.both(annotations, src_mask, states, target_ids, attention)
    real = target_ids != head.pad_id
    loss = -torch.where(targets > 0, targets * log_probs, torch.zeros(())).sum(-1)
    total = loss[real].sum() / real.sum()
    if reverse is not None:
        reverse_loss = -torch.where(reverse_wanted > 0, reverse_wanted * reverse, torch.zeros(())).sum(1)
        total = total + reverse_loss[src_mask].sum() / src_mask.sum()
    return total


def train_head(loaded: LoadedModel | FrozenModel, examples: list[Example], valid: list[Example],
               cfg: AlignerTrainConfig, head_cfg: AlignerConfig = AlignerConfig(),
               say: Callable[[str], None] = log.info) -> tuple[AlignmentHead, dict]:
    """Train a head on ``examples`` until ``cfg.max_seconds`` or ``cfg.max_epochs``; the state
    with the lowest validation loss is kept. Returns it and a report."""
    torch.manual_seed(cfg.seed)
    if cfg.threads:
        torch.set_num_threads(cfg.threads)
    frozen = frozen_model(loaded)
    for parameter in frozen.module.eval().parameters():
        parameter.requires_grad_(False)
    bf16 = cfg.bf16 and bf16_is_native(torch.device("cpu"))
    head = frozen.new_head(head_cfg)
    optimizer = torch.optim.Adam([p for p in head.parameters() if p.requires_grad], lr=cfg.lr)
    started = time.monotonic()
    best, best_state, history, steps = math.inf, None, [], 0
    src_ids, tgt_ids = [e.src for e in examples], [e.tgt for e in examples]
    out_of_time = False
    for epoch in range(cfg.max_epochs):
        batches = make_batches(src_ids, tgt_ids, cfg.batch_tokens, cfg.max_sentences, cfg.seed + epoch)
        for number, indices in enumerate(batches):
            head.train()
            loss = batch_loss(frozen, head, [examples[i] for i in indices], bf16)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            steps += 1
            if steps % 200 == 0:
                say(f"epoch {epoch + 1} batch {number + 1}/{len(batches)}: loss {loss.item():.3f} "
                    f"({time.monotonic() - started:.0f} s)")
            if time.monotonic() - started > cfg.max_seconds:
                out_of_time = True
                break
        valid_loss = validation_loss(frozen, head, valid, cfg, bf16)
        history.append({"epoch": epoch + 1, "steps": steps, "valid_loss": round(valid_loss, 4),
                        "seconds": round(time.monotonic() - started)})
        say(f"epoch {epoch + 1}: validation loss {valid_loss:.4f} after {steps} steps")
        if valid_loss < best:
            best, best_state = valid_loss, {k: v.clone() for k, v in head.state_dict().items()}
        if out_of_time:
            break
    head.load_state_dict(best_state)
    head.eval()
    weights = sum(p.numel() for p in head.parameters() if p.requires_grad)  # the frozen embedding not counted
    report = {"pairs": len(examples), "valid_pairs": len(valid), "steps": steps, "bf16": bf16,
              "target_context": head_cfg.target_context, "weights": weights, "best_valid_loss": round(best, 4),
              "history": history, "train_config": asdict(cfg)}
    return head, report


def validation_loss(loaded: LoadedModel | FrozenModel, head: AlignmentHead, valid: list[Example],
                    cfg: AlignerTrainConfig, bf16: bool) -> float:
    """``batch_loss`` over ``valid``, weighted by each batch's sentences."""
    head.eval()
    total, sentences = 0.0, 0
    with torch.no_grad():
        for indices in make_batches([e.src for e in valid], [e.tgt for e in valid], cfg.batch_tokens,
                                    cfg.max_sentences, cfg.seed):
            total += batch_loss(loaded, head, [valid[i] for i in indices], bf16).item() * len(indices)
            sentences += len(indices)
    return total / max(sentences, 1)


def train_aligner(checkpoint: Path, config: Config, data_dir: Path, out: Path, cfg: AlignerTrainConfig,
                  head_cfg: AlignerConfig = AlignerConfig(), say: Callable[[str], None] = log.info) -> dict:
    """The whole recipe: sample pairs from the training corpora (``sample_pairs``), align them with
    eflomal, train the head and write ``out``: the checkpoint with the head added (``nmt export``
    puts it in the bundle). Returns the training report."""
    loaded = load_model(checkpoint)
    pairs = sample_pairs(config, data_dir, cfg.pairs, cfg.seed)
    head, report = head_from_pairs(loaded, pairs, cfg, head_cfg, say)
    raw = loaded.raw
    kept = {k: v for k, v in raw.items() if k not in STANDARD_ENTRIES}
    save_checkpoint(out, config=loaded.config, spec=loaded.spec, vocabs=loaded.vocabs, model=loaded.model,
                    **{**kept, ALIGNER_STATE: head.state_dict(), ALIGNER_CONFIG: asdict(head_cfg),
                       ALIGNER_REPORT: report})
    return report


def head_from_pairs(model: LoadedModel | FrozenModel, pairs: Sequence[tuple[str, str]], cfg: AlignerTrainConfig,
                    head_cfg: AlignerConfig = AlignerConfig(),
                    say: Callable[[str], None] = log.info) -> tuple[AlignmentHead, dict]:
    """The recipe from sampled pairs on: eflomal links (``cfg.silver``), a view drawn per pair, piece
    targets, the first ``cfg.valid_pairs`` examples held out, the head trained (``train_head``).
    Returns the head and its report."""
    started = time.monotonic()
    if cfg.silver == "directional":  # each direction learns eflomal's own links of that direction
        directions = silver_directions(pairs, split=True)
        links, reverse_links = [forward for forward, _ in directions], [backward for _, backward in directions]
    else:  # both learn the joined links
        links = reverse_links = silver_links(pairs, split=True)
    silver_seconds = time.monotonic() - started
    say(f"eflomal: {len(pairs)} pairs aligned in {silver_seconds:.0f} s")
    rng = random.Random(f"{cfg.seed}:views")
    views = [draw_view(rng, cfg.lower_share, cfg.spaced_share) for _ in pairs]
    examples = make_examples(model, pairs, links, cfg.max_len, views, reverse_links)
    valid, train = examples[: cfg.valid_pairs], examples[cfg.valid_pairs:]
    head, report = train_head(model, train, valid, cfg, head_cfg, say)
    report["eflomal_seconds"] = round(silver_seconds)
    return head, report


# What ``save_checkpoint`` writes itself; every other entry of the checkpoint is carried over.
STANDARD_ENTRIES = frozenset({"format_version", "config", "model_config", "src_vocab_size", "tgt_vocab_size",
                              "joint_vocab", "src_spm", "tgt_spm", "model"})


def load_head(loaded: LoadedModel) -> AlignmentHead | None:
    """The head a checkpoint carries (eval mode), or None. A head saved before ``target_context``
    existed has no such key and loads as "none", the head it is."""
    raw = loaded.raw
    if ALIGNER_STATE not in raw:
        return None
    head = AlignmentHead(AlignerConfig(**raw[ALIGNER_CONFIG]), loaded.spec.config, loaded.model.decoder.embed.weight)
    head.load_state_dict(raw[ALIGNER_STATE])
    return head.eval()
