"""Install lines in the docs, the README and the CLI's hints: the package is on no registry, so every
line installs from a clone (``pip install -e ".[extra]"``), names only extras pyproject.toml defines,
and the README's install table has a row for each extra."""
from __future__ import annotations

import re
import tomllib
from pathlib import Path

from nmt.cli import COMMANDS

from .conftest import REPO_ROOT

EXTRAS = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
REGISTRY_INSTALL = re.compile(r"pip3?\s+install\s+(?:-\S+\s+)*['\"]?" + "nmt" + r"[-_]batch\b|" + "nmt" + r"-batch\[")
CLONE_INSTALL = re.compile(r"""pip3?\s+install\s+(?:-q\s+)?(?:-e\s+)?["']?\.\[([^\]]+)\]""")
THIS_FILE = Path(__file__).resolve()
SKIPPED_DIRS = {".git", ".venv", "__pycache__", "node_modules", "models", "snapshots", "translations"}
PLACEHOLDERS = {"EXTRAS", "${EXTRAS}", "{extra}", "extra"}  # the README's, the CPU image's, the CLI hint's, ours
TEXT_SUFFIXES = {".md", ".py", ".txt", ".toml", ".yaml", ".yml", ".cfg", ".ini", ".sh", ".Dockerfile", ".html", ""}


def _text_files():
    for path in sorted(REPO_ROOT.rglob("*")):
        parts = path.relative_to(REPO_ROOT).parts
        if any(part in SKIPPED_DIRS or part.endswith(".egg-info") for part in parts[:-1]):
            continue
        if path == THIS_FILE:  # it spells out the bad forms to check the pattern
            continue
        if path.is_file() and path.suffix in TEXT_SUFFIXES and path.stat().st_size < 2_000_000:
            try:
                yield path, path.read_text(encoding="utf-8")
            except UnicodeDecodeError:
                continue


def test_no_file_installs_the_package_from_a_registry():
    offenders = [f"{path.relative_to(REPO_ROOT)}:{text.count(chr(10), 0, match.start()) + 1}: {match.group(0)}"
                 for path, text in _text_files() for match in REGISTRY_INSTALL.finditer(text)]
    assert not offenders, "the package is on no registry; install from a clone: pip install -e \".[extra]\"\n" + \
        "\n".join(offenders)


def test_the_scan_sees_the_docs_the_readme_and_the_cli():
    seen = {path.relative_to(REPO_ROOT).as_posix() for path, _ in _text_files()}
    assert {"README.md", "docs/api.md", "nmt/cli.py", "docker/gateway.Dockerfile", ".ci/run"} <= seen
    # and the pattern catches the forms issue 51 found
    for line in ("pip install 'nmt-batch[api]'", 'pip install "nmt-batch[train]"', "pip install nmt-batch",
                 "pip install -U nmt_batch"):
        assert REGISTRY_INSTALL.search(line), line


def test_every_install_line_names_only_defined_extras():
    named = {}
    for path, text in _text_files():
        for match in CLONE_INSTALL.finditer(text):
            for extra in match.group(1).split(","):
                named.setdefault(extra.strip(), str(path.relative_to(REPO_ROOT)))
    assert {"api", "worker", "dev"} <= set(named)
    unknown = {extra: where for extra, where in named.items() if extra not in set(EXTRAS) | PLACEHOLDERS}
    assert not unknown, unknown


def test_the_readme_install_table_has_a_row_for_every_extra():
    readme = (REPO_ROOT / "README.md").read_text(encoding="utf-8")
    rows = set(re.findall(r"^\| `([a-z]+)` \|", readme.split("## Install", 1)[1].split("\n## ", 1)[0], re.M))
    assert rows == set(EXTRAS)


def test_every_cli_hint_names_an_extra_pyproject_defines():
    assert {spec.extra for spec in COMMANDS.values()} - {None} <= set(EXTRAS)
