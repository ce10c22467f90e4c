"""Training configuration: frozen dataclasses loaded from YAML.

Every section is a frozen dataclass; unknown keys and values of the wrong type or range are
errors that name the offending key (``ConfigError``). The data directory can be overridden by
``--data-dir`` or the ``NMT_DATA_DIR`` environment variable (see ``resolve_data_dir``).
"""
from __future__ import annotations

import dataclasses
import os
import typing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

import yaml

DATA_DIR_ENV = "NMT_DATA_DIR"
ATTENTION_TYPES = ("additive", "dot", "general")
ENCODER_TYPES = ("gru", "transformer")


class ConfigError(ValueError):
    """A configuration file or mapping is invalid; the message names the key."""


CORPUS_FORMATS = ("auto", "prefix", "pair", "tsv")


@dataclass(frozen=True)
class CorpusSpec:
    """One parallel corpus, in one of three layouts:

    * ``path: DIR`` with ``prefix: P``: the files ``DIR/P.{src_lang}`` and ``DIR/P.{tgt_lang}``
      (each plain or ``.gz``);
    * ``src: FILE`` and ``tgt: FILE``: a pair of line-aligned files;
    * ``path: FILE.tsv`` (or ``format: tsv``): source TAB target on each line.

    Relative paths are taken relative to the config file's directory. ``weight`` is how many
    times, on average, each pair is seen per epoch (2.0 doubles a corpus, 0.5 uses half of it,
    a fresh random half each epoch).
    """

    name: str = ""
    path: str = ""
    prefix: str = ""
    src: str = ""
    tgt: str = ""
    format: str = "auto"  # auto | prefix | pair | tsv
    weight: float = 1.0
    max_sentences: int = 0  # 0: all; otherwise the first N pairs (validation and test sets)

    def validate(self, key: str) -> None:
        _require(self.format in CORPUS_FORMATS, f"{key}.format", f"must be one of {CORPUS_FORMATS}")
        _require(bool(self.path) != bool(self.src or self.tgt), key, "give either 'path' or 'src' and 'tgt'")
        _require(bool(self.src) == bool(self.tgt), key, "'src' and 'tgt' go together")
        _require(self.weight > 0 and self.weight == self.weight and self.weight != float("inf"),
                 f"{key}.weight", "must be a finite number > 0")
        _require(self.max_sentences >= 0, f"{key}.max_sentences", "must be >= 0")
        if self.layout == "prefix":
            _require(bool(self.prefix), f"{key}.prefix", "is needed with a directory 'path'")

    @property
    def layout(self) -> str:
        if self.format != "auto":
            return self.format
        if self.src:
            return "pair"
        if self.path.endswith((".tsv", ".tsv.gz")):
            return "tsv"
        return "prefix"

    @property
    def label(self) -> str:
        return self.name or self.path and f"{self.path}{'/' + self.prefix if self.prefix else ''}" or self.src


@dataclass(frozen=True)
class DataConfig:
    """Where the parallel corpora live and how they are filtered.

    ``corpora`` lists the training corpora (``CorpusSpec``), ``valid`` and ``test`` the sets
    to validate and score on. Without ``corpora``, the older single-directory layout applies:
    ``{dir}/{prefix}.{lang}`` with an optional ``.gz`` for train, valid and test prefixes.
    """

    corpora: tuple[CorpusSpec, ...] = ()
    valid: tuple[CorpusSpec, ...] = ()
    test: tuple[CorpusSpec, ...] = ()
    dedup: bool = True  # drop exact duplicate pairs (by hash), across all corpora
    dir: str = "../shared/data/multi30k"
    src_lang: str = "en"
    tgt_lang: str = "de"
    train_prefix: str = "train"
    valid_prefix: str = "val"
    test_prefix: str = "test_2016_flickr"
    min_len: int = 1  # subword tokens, each side
    max_len: int = 100  # subword tokens, each side
    max_ratio: float = 3.0  # longer/shorter, in subword tokens

    def validate(self) -> None:
        _require(self.src_lang != self.tgt_lang, "data.tgt_lang", "must differ from data.src_lang")
        _require(self.min_len >= 1, "data.min_len", "must be >= 1")
        _require(self.max_len >= self.min_len, "data.max_len", "must be >= data.min_len")
        _require(self.max_ratio >= 1.0, "data.max_ratio", "must be >= 1.0")
        for group in ("corpora", "valid", "test"):
            for index, spec in enumerate(getattr(self, group)):
                spec.validate(f"data.{group}[{index}]")
        _require(not self.valid or bool(self.corpora), "data.valid", "needs data.corpora")


@dataclass(frozen=True)
class VocabConfig:
    """SentencePiece subword models trained on the training corpus."""

    joint: bool = True  # one model for both languages, or one per language
    size: int = 8000
    model_type: str = "unigram"
    character_coverage: float = 1.0
    input_sentence_size: int = 1_000_000  # sentences per model, reservoir-sampled from the stream

    def validate(self) -> None:
        _require(self.input_sentence_size >= 100, "vocab.input_sentence_size", "must be >= 100")
        _require(self.size >= 16, "vocab.size", "must be >= 16")
        _require(self.model_type in ("unigram", "bpe"), "vocab.model_type", "must be 'unigram' or 'bpe'")
        _require(0.9 <= self.character_coverage <= 1.0, "vocab.character_coverage", "must be in [0.9, 1]")


@dataclass(frozen=True)
class ModelConfig:
    """Sizes of the Bahdanau et al. (2014) encoder-decoder. ``encoder: transformer`` swaps the
    bidirectional GRU for pre-norm self-attention layers (the RNMT+ hybrid of Chen et al. 2018)
    under the same decoder; ``enc_model_dim``, ``enc_heads`` and ``enc_ff_dim`` size it."""

    encoder: str = "gru"  # gru | transformer
    emb_dim: int = 256
    enc_hidden: int = 256  # per direction: annotations are 2 * enc_hidden wide
    dec_hidden: int = 512
    att_dim: int = 512  # additive attention only
    attention: str = "additive"  # additive | dot | general
    enc_layers: int = 1  # GRU or Transformer layers
    dec_layers: int = 1
    enc_model_dim: int = 512  # transformer: width of its layers and source embeddings = annotation width
    enc_heads: int = 8  # transformer: attention heads; must divide enc_model_dim
    enc_ff_dim: int = 2048  # transformer: inner width of the feed-forward blocks
    readout_dim: int = 256  # maxout output size; must equal emb_dim when embeddings are tied
    dropout: float = 0.3
    emb_dropout: float = 0.2
    tie_target_embeddings: bool = True

    def validate(self) -> None:
        for name in ("emb_dim", "enc_hidden", "dec_hidden", "att_dim", "enc_layers", "dec_layers", "readout_dim",
                     "enc_model_dim", "enc_heads", "enc_ff_dim"):
            _require(getattr(self, name) >= 1, f"model.{name}", "must be >= 1")
        _require(self.encoder in ENCODER_TYPES, "model.encoder", f"must be one of {ENCODER_TYPES}")
        _require(self.attention in ATTENTION_TYPES, "model.attention", f"must be one of {ATTENTION_TYPES}")
        if self.encoder == "transformer":
            _require(self.enc_model_dim % self.enc_heads == 0, "model.enc_heads",
                     f"must divide model.enc_model_dim ({self.enc_model_dim} % {self.enc_heads} != 0)")
            # Sinusoidal positions come in sine/cosine pairs.
            _require(self.enc_model_dim % 2 == 0, "model.enc_model_dim", f"must be even, got {self.enc_model_dim}")
        if self.attention == "dot":
            width = "2 * enc_hidden" if self.encoder == "gru" else "enc_model_dim"
            _require(
                self.dec_hidden == self.annotation_dim,
                "model.attention",
                f"'dot' needs dec_hidden == {width} ({self.dec_hidden} != {self.annotation_dim})",
            )
        if self.tie_target_embeddings:
            _require(
                self.readout_dim == self.emb_dim,
                "model.readout_dim",
                f"must equal model.emb_dim ({self.emb_dim}) when tie_target_embeddings is true",
            )
        for name in ("dropout", "emb_dropout"):
            _require(0.0 <= getattr(self, name) < 1.0, f"model.{name}", "must be in [0, 1)")

    @property
    def annotation_dim(self) -> int:
        """Width of the encoder outputs the decoder attends to: 2 * enc_hidden from the
        bidirectional GRU, enc_model_dim from the Transformer."""
        return 2 * self.enc_hidden if self.encoder == "gru" else self.enc_model_dim


@dataclass(frozen=True)
class TrainConfig:
    """Optimisation, validation and checkpointing."""

    seed: int = 1234
    batch_tokens: int = 3000  # target subword tokens per batch (length-bucketed)
    max_batch_sentences: int = 256
    lr: float = 1e-3
    clip_norm: float = 1.0
    label_smoothing: float = 0.1
    max_epochs: int = 30
    lr_schedule: str = "plateau"  # plateau: decay on a BLEU plateau | budget: training.schedule.budget_lr
    warmup_steps: int = 0  # budget: steps of linear warm-up
    anneal_fraction: float = 0.3  # budget: the last share of max_seconds over which the rate falls to min_lr
    lr_decay: float = 0.5  # multiply on a validation BLEU plateau
    lr_patience: int = 1  # validations without improvement before decaying
    min_lr: float = 1e-5
    early_stop_patience: int = 4  # validations without improvement before stopping
    log_every: int = 50  # steps between train-loss records in metrics.jsonl
    checkpoint_every: int = 500  # steps between mid-epoch checkpoints (0: epoch ends only)
    valid_max_sentences: int = 0  # 0: the whole validation set
    valid_every: int = 0  # steps between mid-epoch validations (0: at epoch ends only)
    max_seconds: float = 0.0  # stop after this much training time, validating first (0: no limit)
    # > 0: keep a moving average of the weights (training.averaging); validation scores it too and
    # best.pt holds whichever of the two scored higher. 0: off.
    ema_decay: float = 0.0
    valid_batch_size: int = 128
    max_len_a: float = 1.5  # greedy validation: max target length = a * src_len + b
    max_len_b: int = 10
    threads: int = 0  # torch intra-op threads; 0 keeps torch's default
    device: str = "auto"  # auto | cpu | cuda
    bf16: bool = False  # bfloat16 autocast for the forward pass (weights stay fp32)
    shuffle_buffer: int = 100_000  # pairs shuffled, length-sorted and batched together (data.corpora)
    # Batches per optimizer step in one process, with the loss normalised as under DDP: a single
    # process then trains exactly as `torchrun --nproc_per_node N` would (equivalence tests).
    simulate_world_size: int = 1

    def validate(self) -> None:
        for name in ("batch_tokens", "max_batch_sentences", "max_epochs", "valid_batch_size", "log_every",
                     "shuffle_buffer", "simulate_world_size"):
            _require(getattr(self, name) >= 1, f"train.{name}", "must be >= 1")
        _require(self.lr > 0, "train.lr", "must be > 0")
        _require(self.clip_norm > 0, "train.clip_norm", "must be > 0")
        _require(0.0 <= self.label_smoothing < 1.0, "train.label_smoothing", "must be in [0, 1)")
        _require(self.device in ("auto", "cpu", "cuda"), "train.device", "must be 'auto', 'cpu' or 'cuda'")
        _require(0.0 < self.lr_decay < 1.0, "train.lr_decay", "must be in (0, 1)")
        _require(self.max_seconds >= 0, "train.max_seconds", "must be >= 0")
        _require(self.lr_schedule in ("plateau", "budget"), "train.lr_schedule", "must be 'plateau' or 'budget'")
        _require(self.lr_schedule != "budget" or self.max_seconds > 0, "train.lr_schedule",
                 "'budget' needs train.max_seconds > 0 (the time the rate is annealed over)")
        _require(0.0 < self.anneal_fraction <= 1.0, "train.anneal_fraction", "must be in (0, 1]")
        _require(self.warmup_steps >= 0, "train.warmup_steps", "must be >= 0")
        _require(0.0 <= self.ema_decay < 1.0, "train.ema_decay", "must be in [0, 1) (0: off)")
        for name in ("lr_patience", "early_stop_patience", "checkpoint_every", "valid_max_sentences", "threads", "valid_every"):
            _require(getattr(self, name) >= 0, f"train.{name}", "must be >= 0")


@dataclass(frozen=True)
class Config:
    data: DataConfig = field(default_factory=DataConfig)
    vocab: VocabConfig = field(default_factory=VocabConfig)
    model: ModelConfig = field(default_factory=ModelConfig)
    train: TrainConfig = field(default_factory=TrainConfig)

    def validate(self) -> "Config":
        self.data.validate()
        self.vocab.validate()
        self.model.validate()
        self.train.validate()
        return self

    def to_dict(self) -> dict[str, Any]:
        """Plain dicts and lists (YAML- and ``torch.load(weights_only=True)``-safe)."""
        return _plain(dataclasses.asdict(self))

    @classmethod
    def from_dict(cls, raw: Mapping[str, Any] | None) -> "Config":
        return _build(cls, raw or {}, prefix="").validate()


def load_config(path: str | os.PathLike[str]) -> Config:
    """Read a YAML file into a validated ``Config``."""
    path = Path(path)
    try:
        raw = yaml.safe_load(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ConfigError(f"config file not found: {path}") from None
    except yaml.YAMLError as exc:
        raise ConfigError(f"{path}: not valid YAML: {exc}") from None
    if raw is not None and not isinstance(raw, dict):
        raise ConfigError(f"{path}: the top level must be a mapping, got {type(raw).__name__}")
    try:
        config = resolve_corpus_paths(Config.from_dict(raw), path.resolve().parent)
    except ConfigError as exc:
        raise ConfigError(f"{path}: {exc}") from None
    given = ((raw or {}).get("data") or {}).get("dir")
    if given and not Path(given).is_absolute():  # data.dir in a config file is relative to that file
        config = dataclasses.replace(config, data=dataclasses.replace(
            config.data, dir=str((path.resolve().parent / given).resolve())))
    return config


def resolve_corpus_paths(config: Config, base: Path) -> Config:
    """The config with every relative corpus path made absolute against ``base`` (the config
    file's directory), so the run's saved config and its checkpoints name the files really read."""

    def absolute(value: str) -> str:
        return str((base / value).resolve()) if value and not Path(value).is_absolute() else value

    def fix(specs: tuple[CorpusSpec, ...]) -> tuple[CorpusSpec, ...]:
        return tuple(dataclasses.replace(s, path=absolute(s.path), src=absolute(s.src), tgt=absolute(s.tgt)) for s in specs)

    data = dataclasses.replace(config.data, corpora=fix(config.data.corpora), valid=fix(config.data.valid), test=fix(config.data.test))
    return dataclasses.replace(config, data=data)


def resolve_data_dir(config: Config, override: str | None = None, config_path: str | None = None) -> Path:
    """The corpus directory: ``--data-dir`` flag, else ``$NMT_DATA_DIR``, else the config's.

    ``load_config`` makes a ``data.dir`` written in a config file absolute against that file's
    directory. A relative one left (the built-in default, or a dict config) is taken relative to
    the current directory first and, failing that, to the repository root (the config file's
    parent's parent).
    """
    if override:
        return Path(override)
    env = os.environ.get(DATA_DIR_ENV)
    if env:
        return Path(env)
    configured = Path(config.data.dir)
    if configured.is_absolute() or configured.exists() or config_path is None:
        return configured
    repo_relative = Path(config_path).resolve().parent.parent / configured
    return repo_relative if repo_relative.exists() else configured


def _plain(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


def _require(ok: bool, key: str, message: str) -> None:
    if not ok:
        raise ConfigError(f"invalid value for '{key}': {message}")


def _build(cls: type, raw: Mapping[str, Any], prefix: str) -> Any:
    if not isinstance(raw, Mapping):
        raise ConfigError(f"'{prefix.rstrip('.') or 'config'}' must be a mapping, got {type(raw).__name__}")
    hints = typing.get_type_hints(cls)
    known = {f.name for f in dataclasses.fields(cls)}
    unknown = sorted(set(raw) - known)
    if unknown:
        names = ", ".join(f"'{prefix}{k}'" for k in unknown)
        raise ConfigError(f"unknown config key {names}; known keys here: {', '.join(sorted(known))}")
    values = {}
    for name, value in raw.items():
        kind = hints[name]
        key = f"{prefix}{name}"
        if dataclasses.is_dataclass(kind):
            values[name] = _build(kind, value or {}, prefix=f"{key}.")
        elif typing.get_origin(kind) is tuple:
            item = typing.get_args(kind)[0]
            if value is None:
                value = []
            if not isinstance(value, list):
                raise ConfigError(f"invalid value for '{key}': expected a list, got {value!r}")
            values[name] = tuple(_build(item, entry, prefix=f"{key}[{i}].") for i, entry in enumerate(value))
        else:
            values[name] = _coerce(kind, value, key)
    return cls(**values)


def _coerce(kind: type, value: Any, key: str) -> Any:
    # bool is an int subclass in Python: check it first so `size: true` is rejected.
    if kind is bool:
        if isinstance(value, bool):
            return value
    elif kind is int:
        if isinstance(value, int) and not isinstance(value, bool):
            return value
    elif kind is float:
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return float(value)
    elif kind is str:
        if isinstance(value, str):
            return value
    else:  # pragma: no cover - every field above is one of these
        raise ConfigError(f"unsupported type for '{key}'")
    raise ConfigError(f"invalid value for '{key}': expected {kind.__name__}, got {value!r}")
