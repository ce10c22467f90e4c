"""Configuration: frozen dataclasses from YAML; unknown or invalid keys are errors naming them."""
from __future__ import annotations

import dataclasses

import pytest

from training.config import Config, ConfigError, load_config, resolve_data_dir

from .conftest import REPO_ROOT


def load_text(tmp_path, text):
    path = tmp_path / "c.yaml"
    path.write_text(text, encoding="utf-8")
    return load_config(path)


def test_shipped_config_loads_and_is_frozen():
    config = load_config(REPO_ROOT / "configs" / "multi30k-en-de.yaml")
    assert config.model.attention == "additive"
    assert (config.data.src_lang, config.data.tgt_lang) == ("en", "de")
    with pytest.raises(dataclasses.FrozenInstanceError):
        config.model.emb_dim = 3  # type: ignore[misc]


def test_empty_file_gives_defaults(tmp_path):
    assert load_text(tmp_path, "") == Config()


@pytest.mark.parametrize(
    "text, message",
    [
        ("modle: {}", r"unknown config key 'modle'"),
        ("model: {hiden: 3}", r"unknown config key 'model\.hiden'"),
        ("train: {lr: fast}", r"'train\.lr': expected float, got 'fast'"),
        ("vocab: {size: true}", r"'vocab\.size': expected int, got True"),
        ("vocab: {joint: 1}", r"'vocab\.joint': expected bool"),
        ("model: {attention: cosine}", r"'model\.attention': must be one of"),
        ("model: {dropout: 1.5}", r"'model\.dropout': must be in \[0, 1\)"),
        ("model: {tie_target_embeddings: true, readout_dim: 7}", r"'model\.readout_dim': must equal model\.emb_dim"),
        ("data: {src_lang: de, tgt_lang: de}", r"'data\.tgt_lang': must differ"),
        ("train: {device: tpu}", r"'train\.device'"),
        ("model: 5", r"'model' must be a mapping"),
        ("- a\n- b", r"top level must be a mapping"),
    ],
)
def test_invalid_config_names_the_key(tmp_path, text, message):
    with pytest.raises(ConfigError, match=message):
        load_text(tmp_path, text)


def test_ints_are_accepted_for_floats(tmp_path):
    assert load_text(tmp_path, "train: {lr: 1}").train.lr == 1.0


def test_missing_and_malformed_files(tmp_path):
    with pytest.raises(ConfigError, match="config file not found"):
        load_config(tmp_path / "nope.yaml")
    with pytest.raises(ConfigError, match="not valid YAML"):
        load_text(tmp_path, "model: {emb_dim: [")


def test_data_dir_precedence_flag_then_env_then_config(tmp_path, monkeypatch):
    config = Config.from_dict({"data": {"dir": str(tmp_path / "from-config")}})
    monkeypatch.delenv("NMT_DATA_DIR", raising=False)
    assert resolve_data_dir(config) == tmp_path / "from-config"
    monkeypatch.setenv("NMT_DATA_DIR", str(tmp_path / "from-env"))
    assert resolve_data_dir(config) == tmp_path / "from-env"
    assert resolve_data_dir(config, str(tmp_path / "from-flag")) == tmp_path / "from-flag"


def test_config_round_trips_through_dict():
    config = Config.from_dict({"model": {"attention": "general"}, "train": {"seed": 3}})
    assert Config.from_dict(config.to_dict()) == config


def test_data_dir_in_a_config_file_is_relative_to_that_file(tmp_path, monkeypatch):
    (tmp_path / "configs").mkdir()
    (tmp_path / "corpus").mkdir()
    (tmp_path / "configs" / "run.yaml").write_text("data: {dir: ../corpus}\n", encoding="utf-8")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    monkeypatch.delenv("NMT_DATA_DIR", raising=False)
    config = load_config(tmp_path / "configs" / "run.yaml")
    assert resolve_data_dir(config) == tmp_path / "corpus"
