"""The rooms and the one-way import rule (pyproject.toml [tool.importlinter], docs/architecture.md),
checked by import-linter, which reads every import statement, those inside functions included."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from .conftest import REPO_ROOT

PACKAGES = ("training", "export", "worker", "queue_config", "client", "api", "nmt")


def lint_imports(root: Path) -> subprocess.CompletedProcess:
    lint = Path(sys.executable).with_name("lint-imports")
    return subprocess.run([str(lint), "--no-cache"], cwd=root, capture_output=True, text=True, timeout=300,
                          env={**os.environ, "PYTHONPATH": str(root)})


def test_every_import_contract_is_kept():
    out = lint_imports(REPO_ROOT)
    assert out.returncode == 0, out.stdout[-4000:] + out.stderr[-2000:]
    assert " broken" in out.stdout and "0 broken" in out.stdout


def copy_of_the_code(tmp_path: Path) -> Path:
    for package in PACKAGES:
        shutil.copytree(REPO_ROOT / package, tmp_path / package, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(REPO_ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    return tmp_path


def test_an_import_inside_a_function_that_breaks_the_rule_is_caught(tmp_path):
    root = copy_of_the_code(tmp_path)
    with open(root / "training" / "silver.py", "a", encoding="utf-8") as module:
        module.write("\n\ndef _forbidden():\n    from worker.engine import forced\n\n    return forced\n")
    out = lint_imports(root)
    assert out.returncode != 0
    assert "Training never imports the export stage or the worker BROKEN" in " ".join(out.stdout.split())


def test_an_import_cycle_is_caught(tmp_path):
    root = copy_of_the_code(tmp_path)
    with open(root / "worker" / "text" / "segment.py", "a", encoding="utf-8") as module:
        module.write("\n\ndef _cycle():\n    from worker.text import pipeline\n\n    return pipeline\n")
    out = lint_imports(root)
    assert out.returncode != 0
    flat = " ".join(out.stdout.split())
    assert "No import cycles between modules of a package, at any depth BROKEN" in flat
