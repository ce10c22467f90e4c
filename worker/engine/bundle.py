"""The model bundle: a directory with ``manifest.json``, two ONNX graphs (three with an alignment
head) and SentencePiece models.

This module is the one home of the on-disk contract between ``export`` (writer) and the worker
(reader). It uses the standard library only; ``verify_graphs`` adds onnxruntime.
"""
from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping

FORMAT = "nmt-bundle"
FORMAT_VERSION = 1
MANIFEST = "manifest.json"
GRAPHS = ("encoder", "decoder_step")
# Optional graph: the guided-alignment head (``training.aligner``), in bundles exported from a
# checkpoint that has one (``nmt train-aligner``).
ALIGNER = "aligner"
PRECISIONS = ("fp32", "int8", "fp16")

# Graph interfaces (dimension names: batch (sentences), rows (decoder rows: sentences x beam), src_len,
# candidates; layer, hidden and vocabulary sizes are numbers).
ENCODER_INPUTS = ("src_ids", "src_lengths")
ENCODER_OUTPUTS = ("annotations", "keys", "init_state")
STEP_INPUTS = ("prev_ids", "state", "annotations", "keys", "src_mask")
STEP_OUTPUTS = ("log_probs", "new_state", "attention", "topk_log_probs", "topk_ids", "readout")
# annotations float [batch, src_len, 2H], src_mask bool [batch, src_len], states float [batch, tgt_len, D]
# (top decoder state after each teacher-forced step), target_ids int64 [batch, tgt_len] (the token each
# step predicts, eos last), attention float [batch, tgt_len, src_len] -> alignment float
# [batch, tgt_len, src_len]: per target token, a distribution over the source tokens (eos last: no link).
ALIGNER_INPUTS = ("annotations", "src_mask", "states", "target_ids", "attention")
ALIGNER_OUTPUTS = ("alignment",)
# Optional aligner output, of heads with the reverse direction: float [batch, tgt_len, src_len], per
# source token a distribution over the target tokens (eos last: no link); nmt align symmetrises the two.
REVERSE_ALIGNMENT = "reverse_alignment"
# Optional step output, which a lexical shortlist needs (a bundle without it cannot use one):
# float [rows, R], the deep output before the vocabulary projection.
READOUT_OUTPUT = "readout"
# Optional step input (an overridable initializer, so not among the required inputs above):
# int64 [1], candidates per row in topk_log_probs / topk_ids.
TOPK_INPUT = "topk"
# Manifest flag (absent: false): the step graph groups beams. Its annotations, keys and src_mask
# have one row per source sentence (B); prev_ids, state and every output have N = B * K rows,
# the K rows of a sentence adjacent. Such a graph also accepts one encoder row per decoder row.
GROUPED_BEAMS = "grouped_beams"
# Manifest entry of an optional lexical shortlist: {"file": "shortlist.npz", ...how it was built};
# the file is listed in "files", so it is part of the signature.
SHORTLIST = "shortlist"
# Manifest entry of an optional table of words' usual case (``worker.text.truecase``):
# {"file": "casing.json.gz", ...how it was built}; listed in "files" like the shortlist.
CASING = "casing"
# Manifest key: the decoder family whose step contract the graphs follow (absent: RNN).
FAMILY = "family"
RNN = "rnn"  # GRU decoder with additive attention, state [L, rows, D] (nmt export)
TRANSFORMER = "transformer"  # Transformer decoder with a key/value cache (nmt import)
FAMILIES = (RNN, TRANSFORMER)
# The Transformer family's graphs (dimension names: batch, beam (rows per sentence), src_len,
# steps (target tokens so far, 0 at the first step); heads, head size and vocabulary are numbers).
# Every decoder layer i has tensors of its own, so a step never splits or stacks the cache:
# encoder: src_ids int64 [batch, src_len], src_lengths int64 [batch] -> memory float [batch, src_len, D],
#   cross_keys.i / cross_values.i float [batch, heads, src_len, head] (once per sentence);
# step: prev_ids int64 [batch, beam], src_mask bool [batch, src_len], cross_keys.i / cross_values.i,
#   self_keys.i / self_values.i float [batch, beam, heads, steps, head] -> log_probs float
#   [batch, beam, V], attention float [batch, beam, src_len] (the manifest's alignment layer and
#   heads), topk_log_probs / topk_ids [batch, beam, candidates], hidden float [batch, beam, D],
#   new_self_keys.i / new_self_values.i [batch, beam, heads, steps + 1, head].
TRANSFORMER_ENCODER_INPUTS = ("src_ids", "src_lengths")
TRANSFORMER_STEP_OUTPUTS = ("log_probs", "attention", "topk_log_probs", "topk_ids", "hidden")


def layer_names(prefix: str, layers: int) -> tuple[str, ...]:
    """``prefix_keys.i``, ``prefix_values.i`` for each layer i, in that order: e.g. ("cross_keys.0",
    "cross_values.0", "cross_keys.1", ...)."""
    return tuple(f"{prefix}_{kind}.{i}" for i in range(layers) for kind in ("keys", "values"))


def tensor_kind(name: str) -> str:
    """What a Transformer-family graph tensor is, whatever its layer: "cross_keys.3" and
    "cross_values.0" -> "cross", "new_self_keys.1" -> "new_self", "log_probs" -> "log_probs"."""
    stem, dot, layer = name.rpartition(".")
    if dot and layer.isdigit():
        for suffix in ("_keys", "_values"):
            if stem.endswith(suffix):
                return stem[: -len(suffix)]
    return name


def transformer_interface(layers: int) -> dict[str, tuple[str, ...]]:
    """The Transformer family's graph inputs and outputs for a decoder of ``layers`` layers."""
    return {"encoder_inputs": TRANSFORMER_ENCODER_INPUTS,
            "encoder_outputs": ("memory", *layer_names("cross", layers)),
            "step_inputs": ("prev_ids", "src_mask", *layer_names("cross", layers), *layer_names("self", layers)),
            "step_outputs": (*TRANSFORMER_STEP_OUTPUTS, *layer_names("new_self", layers))}


# A vocabulary side's optional "ids" file: a JSON piece -> id table, for models whose ids are not the
# SentencePiece model's own (Marian's vocab.json); listed in "files" like the SentencePiece model.
VOCAB_IDS = "ids"


class BundleError(ValueError):
    """A bundle is missing, incomplete, corrupt or of an unknown format; the message says which."""


@dataclass(frozen=True)
class GraphSpec:
    file: str
    inputs: tuple[str, ...]
    outputs: tuple[str, ...]


@dataclass(frozen=True)
class Bundle:
    """A validated bundle on disk. ``manifest`` is the parsed ``manifest.json``."""

    path: Path
    manifest: Mapping[str, Any]

    @property
    def signature(self) -> str:
        return self.manifest["signature"]

    @property
    def source_language(self) -> str:
        return self.manifest["source_language"]

    @property
    def target_language(self) -> str:
        return self.manifest["target_language"]

    @property
    def precision(self) -> str:
        return self.manifest["precision"]

    @property
    def grouped_beams(self) -> bool:
        """Whether the step graph takes encoder outputs once per sentence (see ``GROUPED_BEAMS``)."""
        return bool(self.manifest.get(GROUPED_BEAMS, False))

    @property
    def pairs(self) -> tuple[str, ...]:
        """The "src-tgt" pairs this bundle translates (``manifest_pairs``)."""
        return manifest_pairs(self.manifest)

    @property
    def family(self) -> str:
        """The decoder family (``FAMILY``): ``rnn`` or ``transformer``."""
        return self.manifest.get(FAMILY, RNN)

    @property
    def special_ids(self) -> SpecialIds:
        return SpecialIds(**{name: int(self.manifest["special_ids"][name]) for name in ("pad", "unk", "bos", "eos")})

    @property
    def shortlist_path(self) -> Path | None:
        """The lexical shortlist file (``worker.shortlist``), if the bundle has one."""
        return self._entry_file(SHORTLIST)

    @property
    def casing_path(self) -> Path | None:
        """The table of words' usual case (``worker.text.truecase.CaseTable``), if the bundle has one."""
        return self._entry_file(CASING)

    def _entry_file(self, key: str) -> Path | None:
        """The file a manifest entry {"file": ..., ...} names, if the bundle has that entry."""
        entry = self.manifest.get(key)
        return self.path / entry["file"] if isinstance(entry, Mapping) and entry.get("file") else None

    @property
    def graphs(self) -> tuple[str, ...]:
        """The graphs this bundle has: ``GRAPHS``, then ``ALIGNER`` when it has one."""
        return GRAPHS + ((ALIGNER,) if ALIGNER in self.manifest["graphs"] else ())

    def graph(self, name: str) -> GraphSpec:
        g = self.manifest["graphs"][name]
        return GraphSpec(g["file"], tuple(i["name"] for i in g["inputs"]), tuple(o["name"] for o in g["outputs"]))

    def graph_path(self, name: str) -> Path:
        return self.path / self.manifest["graphs"][name]["file"]

    def vocab_path(self, side: str) -> Path:
        """side: 'source' or 'target'."""
        return self.path / self.manifest["vocab"][side]["file"]

    def vocab_ids_path(self, side: str) -> Path | None:
        """The side's piece -> id table (``VOCAB_IDS``), for models whose ids are not SentencePiece's."""
        name = self.manifest["vocab"][side].get(VOCAB_IDS)
        return self.path / name if name else None


DEFAULT_BUNDLE = "models/en-de"
# Manifest entry of multilingual models: {target language: the token that selects it, e.g. ">>deu<<"}.
TARGET_TOKENS = "target_tokens"


def manifest_pairs(manifest: Mapping[str, Any]) -> tuple[str, ...]:
    """The "src-tgt" pairs a manifest declares: its source language to its target language, and to
    every language of its ``target_tokens`` (multilingual models), the target language first."""
    targets = [manifest["target_language"], *(manifest.get(TARGET_TOKENS) or {})]
    return tuple(f"{manifest['source_language']}-{t}" for t in dict.fromkeys(targets))


@dataclass(frozen=True)
class SpecialIds:
    """The vocabulary's special token ids, as the bundle that was trained with them records them."""

    pad: int
    unk: int
    bos: int
    eos: int


def resolve_bundle_path(path: str | os.PathLike[str] | None = None) -> Path:
    """A bundle path as given; a relative one that does not exist here is also looked up beside
    the installed packages (the repository root for a checkout or an editable install)."""
    candidate = Path(path or DEFAULT_BUNDLE)
    if candidate.is_absolute() or candidate.exists():
        return candidate
    beside_package = Path(__file__).resolve().parents[2] / candidate  # worker/engine/bundle.py -> the root
    return beside_package if beside_package.exists() else candidate


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def signature_for(manifest: Mapping[str, Any]) -> str:
    """Short signature every translation result carries: languages, precision, content hash."""
    content = hashlib.sha256("".join(f"{k}:{v};" for k, v in sorted(manifest["files"].items())).encode()).hexdigest()
    return f"{manifest['source_language']}-{manifest['target_language']}.{manifest['precision']}.{content[:12]}"


def load_bundle(path: str | os.PathLike[str], verify_hashes: bool = True) -> Bundle:
    """Read and validate a bundle: manifest, format version, files present, sha256 of each."""
    path = Path(path)
    manifest_path = path / MANIFEST
    if not path.is_dir():
        raise BundleError(f"bundle directory not found: {path}")
    if not manifest_path.is_file():
        raise BundleError(f"{path}: missing {MANIFEST}; is this a model bundle?")
    try:
        manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise BundleError(f"{manifest_path}: not valid JSON: {exc}") from None
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        raise BundleError(f"{manifest_path}: not an {FORMAT} manifest (format={manifest.get('format')!r})"
                          if isinstance(manifest, dict) else f"{manifest_path}: not a JSON object")
    version = manifest.get("format_version")
    if version != FORMAT_VERSION:
        raise BundleError(f"{manifest_path}: unknown format version {version!r}; this worker reads version {FORMAT_VERSION}")
    for key in ("source_language", "target_language", "precision", "signature", "special_ids", "vocab", "graphs", "files"):
        if key not in manifest:
            raise BundleError(f"{manifest_path}: missing key '{key}'")
    if manifest["precision"] not in PRECISIONS:
        raise BundleError(f"{manifest_path}: unknown precision {manifest['precision']!r}")
    if manifest.get(FAMILY, RNN) not in FAMILIES:
        raise BundleError(f"{manifest_path}: unknown decoder family {manifest.get(FAMILY)!r}; this worker runs "
                          f"{', '.join(FAMILIES)}")
    for name in GRAPHS:
        if name not in manifest["graphs"]:
            raise BundleError(f"{manifest_path}: graph '{name}' is not described")
    for name, expected in manifest["files"].items():
        file = path / name
        if not file.is_file():
            raise BundleError(f"{path}: missing file {name} (listed in {MANIFEST})")
        if verify_hashes:
            actual = sha256_file(file)
            if actual != expected:
                raise BundleError(f"{path}: sha256 mismatch for {name}: manifest {expected[:16]}..., file {actual[:16]}...")
    bundle = Bundle(path, manifest)
    referenced = [bundle.graph(g).file for g in bundle.graphs] + [manifest["vocab"][s]["file"] for s in ("source", "target")]
    referenced += [p.name for p in (bundle.shortlist_path, bundle.casing_path, bundle.vocab_ids_path("source"),
                                    bundle.vocab_ids_path("target")) if p is not None]
    for name in referenced:
        if name not in manifest["files"]:
            raise BundleError(f"{manifest_path}: {name} is used but has no sha256 in 'files'")
    if manifest["signature"] != signature_for(manifest):
        raise BundleError(f"{manifest_path}: signature {manifest['signature']!r} does not match the bundle's files")
    return bundle


def verify_graphs(bundle: Bundle) -> None:
    """Open each graph with onnxruntime and check its input and output names against the manifest."""
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.log_severity_level = 3
    for name in bundle.graphs:
        spec = bundle.graph(name)
        try:
            session = ort.InferenceSession(str(bundle.graph_path(name)), options, providers=["CPUExecutionProvider"])
        except Exception as exc:  # onnxruntime raises its own exception types
            raise BundleError(f"{bundle.path}: graph '{name}' ({spec.file}) does not load: {exc}") from None
        inputs = tuple(i.name for i in session.get_inputs())
        outputs = tuple(o.name for o in session.get_outputs())
        if inputs != spec.inputs:
            raise BundleError(f"{bundle.path}: graph '{name}' has inputs {list(inputs)}, manifest says {list(spec.inputs)}")
        if outputs != spec.outputs:
            raise BundleError(f"{bundle.path}: graph '{name}' has outputs {list(outputs)}, manifest says {list(spec.outputs)}")


# Manifest keys that define the bundle's files and identity: ``update_manifest`` never sets them.
_IDENTITY_KEYS = frozenset({"format", "format_version", "files", "signature", "graphs", "vocab", "precision",
                            "source_language", "target_language", "special_ids"})


def update_manifest(bundle_dir: str | os.PathLike[str], **settings: Any) -> Path:
    """Set top-level manifest settings that shape decoding but not the model files (``stand_ins``,
    ``quality``, ``decoding_defaults``), atomically and keeping the file's permissions. The
    signature names the files, so it stays valid."""
    identity = sorted(set(settings) & _IDENTITY_KEYS)
    if identity:
        raise BundleError(f"{bundle_dir}: {', '.join(identity)} define the bundle's files and cannot be updated")
    path = Path(bundle_dir) / MANIFEST
    manifest = json.loads(path.read_text(encoding="utf-8"))
    manifest.update(settings)
    return replace_manifest(bundle_dir, manifest)


def replace_manifest(bundle_dir: str | os.PathLike[str], manifest: Mapping[str, Any]) -> Path:
    """Write a bundle's whole ``manifest.json`` atomically, keeping the file's permissions (the
    caller keeps ``files`` and ``signature`` true to the bundle)."""
    path = Path(bundle_dir) / MANIFEST
    handle, staging = tempfile.mkstemp(prefix=f".{MANIFEST}.", dir=path.parent)
    with os.fdopen(handle, "w", encoding="utf-8") as out:
        out.write(json.dumps(manifest, indent=2, ensure_ascii=False) + "\n")
    shutil.copymode(path, staging)
    os.replace(staging, path)
    return path


def write_bundle_atomically(staging: Path, destination: Path, force: bool) -> None:
    """Move a fully written ``staging`` directory to ``destination``.

    Without ``force`` an existing destination is an error. With it, the old bundle is moved
    aside first and removed only after the new one is in place, so readers never see a mix.
    """
    destination = Path(destination)
    if destination.exists() and not force:
        raise FileExistsError(f"{destination} already exists; pass --force to replace it")
    old = None
    if destination.exists():
        old = Path(tempfile.mkdtemp(prefix=f".{destination.name}.old.", dir=destination.parent))
        os.replace(destination, old / "bundle")
    os.replace(staging, destination)
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)
