"""The own-corpus example configs (configs/examples/, docs/training.md) load, and read the layout they
claim from where the doc tells users to put their files: data/my-corpus/ at the top of the work tree,
or anywhere when the paths are edited. Fast: no training."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml

from training.config import load_config
from training.corpora import corpus_files, iter_corpus

EXAMPLES = Path(__file__).resolve().parent.parent / "configs" / "examples"
PAIRS = {"train": [("A dog runs.", "Ein Hund läuft."), ("The cat eats.", "Die Katze isst.")],
         "dev": [("A red ball.", "Ein roter Ball.")],
         "test": [("The man sees a house.", "Der Mann sieht ein Haus.")]}
GROUPS = {"corpora": "train", "valid": "dev", "test": "test"}


def write_tsv(folder: Path) -> dict[str, tuple[Path, ...]]:
    files = {}
    for split, pairs in PAIRS.items():
        path = folder / f"{split}.tsv"
        path.write_text("".join(f"{s}\t{t}\n" for s, t in pairs), encoding="utf-8")
        files[split] = (path,)
    return files


def write_pair(folder: Path) -> dict[str, tuple[Path, ...]]:
    files = {}
    for split, pairs in PAIRS.items():
        src, tgt = folder / f"{split}.en", folder / f"{split}.de"
        src.write_text("".join(s + "\n" for s, _ in pairs), encoding="utf-8")
        tgt.write_text("".join(t + "\n" for _, t in pairs), encoding="utf-8")
        files[split] = (src, tgt)
    return files


EXAMPLE_LAYOUTS = [("own-tsv.yaml", "tsv", write_tsv), ("own-files.yaml", "pair", write_pair)]


def check_reads(config_path: Path, layout: str, files: dict[str, tuple[Path, ...]]) -> None:
    config = load_config(config_path)
    for group, split in GROUPS.items():
        (spec,) = getattr(config.data, group)
        assert spec.layout == layout
        read = tuple(p.resolve() for p in corpus_files(spec, config.data.src_lang, config.data.tgt_lang) if p)
        assert read == tuple(p.resolve() for p in files[split])
        assert list(iter_corpus(spec, config)) == PAIRS[split]


@pytest.mark.parametrize("name, layout, write", EXAMPLE_LAYOUTS)
def test_example_config_reads_its_layout_from_data_my_corpus(tmp_path, name, layout, write):
    # The work tree's shape: configs/examples/NAME beside data/my-corpus/.
    (tmp_path / "configs" / "examples").mkdir(parents=True)
    config_path = Path(shutil.copy(EXAMPLES / name, tmp_path / "configs" / "examples" / name))
    corpus = tmp_path / "data" / "my-corpus"
    corpus.mkdir(parents=True)
    check_reads(config_path, layout, write(corpus))


@pytest.mark.parametrize("name, layout, write", EXAMPLE_LAYOUTS)
def test_example_config_reads_edited_absolute_paths(tmp_path, name, layout, write):
    corpus = tmp_path / "elsewhere"
    corpus.mkdir()
    files = write(corpus)
    raw = yaml.safe_load((EXAMPLES / name).read_text(encoding="utf-8"))
    for group, split in GROUPS.items():
        (spec,) = raw["data"][group]
        for key, path in zip(("path",) if layout == "tsv" else ("src", "tgt"), files[split]):
            spec[key] = str(path)
    config_path = tmp_path / "mine.yaml"
    config_path.write_text(yaml.safe_dump(raw), encoding="utf-8")
    check_reads(config_path, layout, files)
