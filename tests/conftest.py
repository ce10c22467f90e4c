"""Shared fixtures: a toy parallel corpus and tiny configs, made fresh in each test session."""
from __future__ import annotations

import contextlib
import fcntl
import functools
import os
import random
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

REPO_ROOT = Path(__file__).resolve().parent.parent

# Under pytest-xdist each worker has a core of its own (gw0 the first, gw1 the next...), and so
# does every process it starts: torch takes one thread (OMP_NUM_THREADS), and ONNX Runtime and the
# engine's batch workers count the cores this process may run on. Else the two workers of the
# README's command run twice as many threads as cores. With the README's command on 2 cores (AMD
# EPYC, AVX-512): 1,183 s with torch and ONNX Runtime on both cores in each worker (other work ran
# beside it for some minutes), 970 s with one torch thread per worker (`.ci/run`, clean clone),
# 886 s with each worker on its own core. The Transformer aligner test: 187 s, 49 s, 46 s.
if os.environ.get("PYTEST_XDIST_WORKER"):
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    if hasattr(os, "sched_setaffinity"):
        _cores = sorted(os.sched_getaffinity(0))
        os.sched_setaffinity(0, {_cores[int(os.environ["PYTEST_XDIST_WORKER"].removeprefix("gw")) % len(_cores)]})


def run_nmt(*args: str, stdin: str | bytes | None = None, text: bool = True) -> subprocess.CompletedProcess:
    """``python -m nmt ARGS`` from the repository root, as a user runs it; output captured
    (str, or bytes with ``text=False``)."""
    return subprocess.run([sys.executable, "-m", "nmt", *args], input=stdin, capture_output=True, text=text,
                          cwd=REPO_ROOT, timeout=300)

def zip_of(parts: dict[str, bytes]) -> bytes:
    """A ZIP archive holding ``parts`` ({member name: bytes}): packages made by hand (DOCX and others)."""
    import io
    import zipfile

    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as archive:
        for name, data in parts.items():
            archive.writestr(name, data)
    return out.getvalue()


@contextlib.contextmanager
def held_lock(path: Path):
    """An exclusive lock on ``path`` (flock), held while the block runs; waits for it first."""
    with open(path, "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def session_dir(tmp_path_factory) -> Path:
    """This test session's directory, the same for all its pytest-xdist workers (each has one of its
    own below it: popen-gw0, ...)."""
    shared = tmp_path_factory.getbasetemp()
    return shared.parent if os.environ.get("PYTEST_XDIST_WORKER") else shared


def built_once(tmp_path_factory, name: str, build) -> Path:
    """``build(directory)`` once per test session, by whichever pytest-xdist worker asks first; the
    others wait for it (a file lock) and use the same directory. For the session fixtures below (a
    training or an export each): every worker used to make its own, 45 s to 3 minutes for the
    checkpoint and bundle on a 2-core machine, by its load. Tests only read them (those that change
    a bundle copy it first)."""
    shared = session_dir(tmp_path_factory)
    directory, done = shared / "built" / name, shared / "built" / f"{name}.done"
    directory.parent.mkdir(exist_ok=True)
    with held_lock(shared / "built" / f"{name}.lock"):
        if not done.exists():
            shutil.rmtree(directory, ignore_errors=True)  # a build that failed part way, on another worker
            directory.mkdir()
            build(directory)
            done.touch()
    return directory


@pytest.fixture(scope="session")
def one_heavy_training(tmp_path_factory):
    """``with one_heavy_training(): run_nmt("train-aligner", ...)``: the aligner trainings (and the
    exports after them) of test_aligner.py never run at the same time, on any pytest-xdist worker
    of this session (both now live in that file, so ``--dist loadfile`` runs them in turn anyway;
    the lock keeps any later one apart too). Side by side on a busy 2-core machine both ran past
    run_nmt's 300 s timeout (issue 51); alone each passes. The lock is taken before a subprocess
    starts, so the wait never counts against its timeout."""
    return functools.partial(held_lock, session_dir(tmp_path_factory) / "heavy-training.lock")


# A toy "language pair": the target is a word-by-word substitution of the source, with a
# reordering of the last two words, so attention has something real to learn.
LEXICON = {
    "a": "ein", "the": "der", "man": "mann", "woman": "frau", "dog": "hund", "cat": "katze",
    "sees": "sieht", "eats": "isst", "big": "grosser", "small": "kleiner", "red": "roter",
    "ball": "ball", "house": "haus", "runs": "läuft", "home": "heim", "green": "grüner",
}


def make_toy_pairs(n: int, seed: int = 0) -> list[tuple[str, str]]:
    rng = random.Random(seed)
    words = sorted(LEXICON)
    pairs = []
    for _ in range(n):
        src = [rng.choice(words) for _ in range(rng.randint(3, 9))]
        tgt = [LEXICON[w] for w in src]
        tgt[-2:] = tgt[-2:][::-1]
        pairs.append((" ".join(src).capitalize() + ".", " ".join(tgt).capitalize() + "."))
    return pairs


def write_toy_corpus(directory: Path, train: int = 400, valid: int = 40) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    for prefix, n, seed in (("train", train, 1), ("val", valid, 2)):
        pairs = make_toy_pairs(n, seed)
        (directory / f"{prefix}.en").write_text("\n".join(s for s, _ in pairs) + "\n", encoding="utf-8")
        (directory / f"{prefix}.de").write_text("\n".join(t for _, t in pairs) + "\n", encoding="utf-8")
    return directory


TINY_CONFIG = """\
data: {src_lang: en, tgt_lang: de, max_len: 40}
vocab: {size: 60, joint: true}
model: {emb_dim: 32, enc_hidden: 32, dec_hidden: 48, att_dim: 32, readout_dim: 32, dropout: 0.1, emb_dropout: 0.0, dec_layers: 2}
train: {seed: 7, batch_tokens: 600, lr: 0.005, max_epochs: 3, checkpoint_every: 5, log_every: 5, valid_batch_size: 32, threads: 1}
"""

# The same run with the Transformer encoder (the RNMT+ hybrid), under bf16 autocast where the CPU
# has native bfloat16 (the trainer's rule; fp32 elsewhere).
TINY_HYBRID_CONFIG = TINY_CONFIG.replace(
    "model: {", "model: {encoder: transformer, enc_model_dim: 32, enc_heads: 4, enc_ff_dim: 64, enc_layers: 2, "
).replace("threads: 1}", "threads: 1, bf16: true}")


@pytest.fixture(scope="session")
def toy_corpus(tmp_path_factory) -> Path:
    return write_toy_corpus(tmp_path_factory.mktemp("toy_corpus"), train=400, valid=200)


@pytest.fixture(scope="session")
def tiny_checkpoint(tmp_path_factory, toy_corpus) -> Path:
    """best.pt of a 2-epoch run on the toy corpus (with a 2-layer decoder, to exercise [L, B, D])."""
    from training.config import Config
    from training.trainer import Trainer

    config = Config.from_dict(yaml.safe_load(TINY_CONFIG) | {"train": {**yaml.safe_load(TINY_CONFIG)["train"], "max_epochs": 2}})
    run_dir = built_once(tmp_path_factory, "tiny_run", lambda run_dir: Trainer(config, run_dir, toy_corpus).train())
    return run_dir / "best.pt"


@pytest.fixture(scope="session")
def tiny_bundle(tmp_path_factory, tiny_checkpoint, toy_corpus) -> Path:
    from export.exporter import ExportOptions, export_bundle

    def build(directory: Path) -> None:
        export_bundle(tiny_checkpoint, directory / "toy-en-de",
                      ExportOptions(data_dir=str(toy_corpus), parity_sentences=200))

    return built_once(tmp_path_factory, "bundles", build) / "toy-en-de"


@pytest.fixture(scope="session")
def tiny_hybrid_checkpoint(tmp_path_factory, toy_corpus) -> Path:
    """best.pt of a 3-epoch run of ``TINY_HYBRID_CONFIG`` on the toy corpus."""
    from training.config import Config
    from training.trainer import Trainer

    config = Config.from_dict(yaml.safe_load(TINY_HYBRID_CONFIG))
    run_dir = built_once(tmp_path_factory, "tiny_hybrid_run",
                         lambda run_dir: Trainer(config, run_dir, toy_corpus).train())
    return run_dir / "best.pt"


@pytest.fixture(scope="session")
def tiny_hybrid_bundle(tmp_path_factory, tiny_hybrid_checkpoint, toy_corpus) -> Path:
    from export.exporter import ExportOptions, export_bundle

    def build(directory: Path) -> None:
        export_bundle(tiny_hybrid_checkpoint, directory / "toy-hybrid-en-de",
                      ExportOptions(data_dir=str(toy_corpus), parity_sentences=200))

    return built_once(tmp_path_factory, "hybrid_bundles", build) / "toy-hybrid-en-de"


@pytest.fixture
def tiny_config_path(tmp_path) -> Path:
    path = tmp_path / "tiny.yaml"
    path.write_text(TINY_CONFIG, encoding="utf-8")
    return path
