"""Data flows one way (training -> export -> bundle -> worker): check import boundaries in a
fresh interpreter, so modules imported by other tests cannot hide a violation."""
from __future__ import annotations

import subprocess
import sys

import pytest

from .conftest import REPO_ROOT

CASES = [
    # (module imported, modules that must not be loaded as a result)
    ("training", ["export", "worker", "client"]),
    ("training.trainer", ["export", "worker", "client", "onnxruntime"]),
    ("worker", ["torch", "training", "export"]),
    ("client", ["worker", "onnxruntime", "numpy", "torch"]),
    ("queue_config", ["worker", "torch", "training"]),
    ("nmt.cli", ["torch", "onnxruntime", "worker"]),
]


@pytest.mark.parametrize("module, forbidden", CASES)
def test_module_does_not_import_forbidden_packages(module, forbidden):
    code = (
        "import importlib, sys\n"
        f"importlib.import_module({module!r})\n"
        f"bad = [m for m in {forbidden!r} if m in sys.modules]\n"
        "print(','.join(bad))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO_ROOT, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "", f"importing {module} loaded {out.stdout.strip()}"


@pytest.mark.parametrize("module", ["worker.engine", "worker.local.cli", "worker.search", "worker.ort_model"])
def test_worker_modules_never_import_torch(module):
    test_module_does_not_import_forbidden_packages(module, ["torch", "training", "export"])
