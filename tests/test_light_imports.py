"""The install paths users take stay light: with only an extra's packages importable, its commands
run and its entry points import. Each check runs in a fresh interpreter where the packages that
extra does not install are refused (``tests/without_modules.py``), so a light path that imports a
heavy module fails here, although the [dev] install has every package.

Which packages an extra brings is read from pyproject.toml and the installed packages' own
metadata, so a dependency added to an extra is covered without touching this file.
"""
from __future__ import annotations

import re
import subprocess
import sys
import tomllib
from functools import lru_cache
from importlib import metadata
from pathlib import Path

import pytest
from packaging.requirements import Requirement

from nmt.cli import COMMANDS, OWN_PACKAGES

from .conftest import REPO_ROOT

GUARD = Path(__file__).with_name("without_modules.py")
SMALL_BUNDLE = REPO_ROOT / "models" / "multi30k-en-de"


def _name(distribution: str) -> str:
    return re.sub(r"[-_.]+", "-", distribution).lower()


@lru_cache(maxsize=None)
def _project() -> dict:
    return tomllib.loads((REPO_ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]


def _closure(requirements: list[str]) -> set[str]:
    """Distribution names (normalised) that ``requirements`` install, transitively, as far as they
    are installed here (``onnxruntime-gpu`` is not, for example)."""
    seen: set[str] = set()
    todo = [(Requirement(text), frozenset()) for text in requirements]
    while todo:
        requirement, _ = todo.pop()
        name = _name(requirement.name)
        if name in seen:
            continue
        try:
            requires = metadata.requires(requirement.name) or []
        except metadata.PackageNotFoundError:
            continue
        seen.add(name)
        for text in requires:
            child = Requirement(text)
            environments = [{"extra": extra} for extra in requirement.extras] or [{"extra": ""}]
            if child.marker is None or any(child.marker.evaluate(env) for env in environments):
                todo.append((child, frozenset()))
    return seen


@lru_cache(maxsize=None)
def _modules_of() -> dict[str, set[str]]:
    """Distribution name -> the top-level modules it installs."""
    modules: dict[str, set[str]] = {}
    for module, distributions in metadata.packages_distributions().items():
        for distribution in distributions:
            modules.setdefault(_name(distribution), set()).add(module)
    return modules


def refused_without(*extras: str) -> list[str]:
    """Top-level modules that some extra installs but the core install plus ``extras`` do not."""
    optional = _project()["optional-dependencies"]
    everything = _closure([r for requirements in optional.values() for r in requirements])
    kept = _closure(list(_project()["dependencies"]) + [r for extra in extras for r in optional[extra]])
    modules = _modules_of()
    refused = set().union(*(modules.get(d, set()) for d in everything - kept))
    refused -= set().union(*(modules.get(d, set()) for d in kept))
    return sorted(m for m in refused if not m.startswith("_"))


def run_without(refused: list[str] | set[str], *python_args: str, cwd: Path = REPO_ROOT) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(GUARD), ",".join(sorted(refused)), "--", *python_args],
                          capture_output=True, text=True, cwd=cwd, timeout=300)


def test_the_refused_sets_name_the_heavy_packages():
    # The sets these tests rely on, stated once so that a metadata surprise cannot empty them.
    assert {"torch", "onnxruntime", "celery", "polib"} <= set(refused_without())
    assert "torch" in refused_without("worker") and "onnxruntime" not in refused_without("worker")
    assert {"torch", "onnxruntime"} <= set(refused_without("client")) and "celery" not in refused_without("client")


def test_nmt_help_lists_every_command_without_importing_a_stage():
    out = run_without(refused_without() + sorted(OWN_PACKAGES - {"nmt"}), "-m", "nmt", "--help")
    assert out.returncode == 0, out.stderr
    for command in COMMANDS:
        assert command in out.stdout


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_every_command_help_works_with_only_the_core_install(command):
    out = run_without(refused_without(), "-m", "nmt", command, "--help")
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.startswith(f"usage: nmt {command}")


def test_a_command_whose_extra_is_missing_names_the_extra_in_one_line(tmp_path):
    out = run_without(refused_without(), "-m", "nmt", "train", "--config", str(REPO_ROOT / "configs" / "multi30k-en-de.yaml"),
                      "--run-dir", str(tmp_path / "run"))
    assert out.returncode == 2
    assert out.stderr.strip().splitlines() == [
        "nmt train: needs the 'train' install (module 'torch' is missing): pip install -e \".[train]\""]


def test_the_worker_install_translates_aligns_scores_and_starts_celery_without_torch(tmp_path):
    refused = refused_without("worker")
    assert "torch" in refused
    source = tmp_path / "in" / "a.en.txt"
    source.parent.mkdir()
    source.write_text("A dog runs in the park.\nTwo men are playing football.\n", encoding="utf-8")
    translated = run_without(refused, "-m", "nmt", "translate", str(source), "--out", str(tmp_path / "out"),
                             "--bundle", str(SMALL_BUNDLE))
    assert translated.returncode == 0, translated.stderr[-2000:]
    (hypothesis,) = (tmp_path / "out").glob("*.de.txt")
    assert len(hypothesis.read_text(encoding="utf-8").splitlines()) == 2

    scored = run_without(refused, "-m", "nmt", "eval", "--src", str(source), "--ref", str(hypothesis),
                         "--bundle", str(SMALL_BUNDLE), "--json")
    assert scored.returncode == 0, scored.stderr[-2000:]
    assert '"bleu"' in scored.stdout.strip().splitlines()[-1]

    aligned = run_without(refused, "-m", "nmt", "align", "--src", str(source), "--tgt", str(hypothesis),
                          "--bundle", str(SMALL_BUNDLE))
    assert aligned.returncode == 0, aligned.stderr[-2000:]
    assert len(aligned.stdout.splitlines()) == 2 and re.fullmatch(r"(\d+-\d+ ?)+", aligned.stdout.splitlines()[0])

    app = run_without(refused, "-c", "import sys, worker.tasks; print(worker.tasks.app.main); "
                                     "assert 'torch' not in sys.modules")
    assert app.returncode == 0, app.stderr[-2000:]


@pytest.mark.parametrize("command", ["submit", "status", "result", "cancel"])
def test_the_client_install_runs_its_commands_without_the_engine(command):
    refused = refused_without("client") + ["numpy", "worker", "training", "export"]
    out = run_without(refused, "-m", "nmt", command, "--help")
    assert out.returncode == 0, out.stderr[-2000:]


def test_the_client_library_imports_without_the_engine():
    refused = refused_without("client") + ["numpy", "worker", "training", "export"]
    out = run_without(refused, "-c", "from client import TranslationClient, JobResult; print(TranslationClient.__name__)")
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip() == "TranslationClient"


def test_the_api_install_runs_nmt_serve_help_and_builds_its_app_without_the_engine():
    refused = refused_without("api") + ["numpy", "worker", "training", "export"]
    assert {"fastapi", "uvicorn", "celery"}.isdisjoint(refused) and "onnxruntime" in refused
    out = run_without(refused, "-m", "nmt", "serve", "--help")
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.startswith("usage: nmt serve")
    # The whole app (routes, OpenAPI schema) builds with the api extra alone; Redis is not reached to build it.
    app = run_without(refused, "-c", "from api.app import create_app; from api.gateway import Gateway; "
                                     "app = create_app(Gateway.from_settings()); "
                                     "print(sorted(p for p in app.openapi()['paths'] if p.startswith('/v2/')))")
    assert app.returncode == 0, app.stderr[-2000:]
    assert "/v2/translate" in app.stdout
