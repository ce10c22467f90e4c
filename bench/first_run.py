"""How long a new user waits for the README's first command on a fresh machine: a fresh clone and
virtual environment, pip with its cache off (cold, as on a new machine) against pip's warm cache
(the baseline: the same install when the packages are already downloaded), and the translation
itself. Reports each part in seconds, what the command wrote, and the venv's size.

    python bench/first_run.py [--json]
"""
from __future__ import annotations

import argparse
import json
import os
import re
import shlex
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from span_fidelity import cpu_model  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent


def first_command(readme: Path) -> str:
    """The first command line of the README's first ```bash block."""
    block = re.search(r"```bash\n(.*?)```", readme.read_text(encoding="utf-8"), re.S)
    if block is None:
        raise SystemExit("README.md has no bash block")
    return next(line for line in block.group(1).splitlines() if line.strip() and not line.lstrip().startswith("#"))


def run_timed(command: str, cwd: Path, env: dict[str, str]) -> float:
    start = time.perf_counter()
    subprocess.run(["bash", "-euo", "pipefail", "-c", command], cwd=cwd, env=env, check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - start


def du(path: Path) -> int:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file() and not f.is_symlink())


def replay(command: str, cold: bool, scratch: Path) -> dict:
    """The command in a fresh clone and venv: its install part and its translation part timed apart."""
    clone = scratch / ("cold" if cold else "warm")
    subprocess.run(["git", "clone", "-q", str(ROOT), str(clone)], check=True)
    subprocess.run([sys.executable, "-m", "venv", str(clone / ".venv")], check=True)
    env = {**os.environ, "VIRTUAL_ENV": str(clone / ".venv"), "PATH": f"{clone / '.venv' / 'bin'}:{os.environ['PATH']}"}
    env.pop("PYTHONPATH", None)
    if cold:
        env["PIP_NO_CACHE_DIR"] = "1"
    install, _, translate = command.partition("&&")
    seconds = {"install": run_timed(install, clone, env), "translate": run_timed(translate, clone, env)}
    out = Path(re.search(r"--out[ =](\S+)", command).group(1))
    return {**{k: round(v, 1) for k, v in seconds.items()}, "total": round(sum(seconds.values()), 1),
            "wrote": sorted(p.name for p in (clone / out).iterdir()), "venv_mb": round(du(clone / ".venv") / 1e6)}


def wheels_mb(command: str) -> int:
    """Megabytes of the distributions the command's pip install fetches (what a new machine downloads)."""
    requirement = re.search(r"pip install (?:-e )?(\S+)", command).group(1).strip("'\"")
    with tempfile.TemporaryDirectory() as into:
        subprocess.run([sys.executable, "-m", "pip", "download", "-q", "-d", into, requirement], cwd=ROOT, check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        return round(du(Path(into)) / 1e6)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--json", action="store_true", help="print the figures as JSON on the last line")
    args = parser.parse_args()
    command = first_command(ROOT / "README.md")
    with tempfile.TemporaryDirectory() as scratch:
        runs = {"warm": replay(command, False, Path(scratch)), "cold": replay(command, True, Path(scratch))}
    print(f"CPU: {cpu_model()} ({os.cpu_count()} cores)")
    print(f"command: {command}")
    for name, run in runs.items():
        print(f"  pip cache {name:4}: install {run['install']:6.1f} s, translate {run['translate']:5.1f} s, "
              f"total {run['total']:6.1f} s; venv {run['venv_mb']} MB; wrote {' '.join(shlex.quote(w) for w in run['wrote'])}")
    print(f"cold / warm install: {runs['cold']['install'] / runs['warm']['install']:.2f}x")
    wheels = wheels_mb(command)
    print(f"the packages it installs: {wheels} MB of wheels to download on a new machine")
    if args.json:
        print(json.dumps({"command": command, "cpu": cpu_model(), "wheels_mb": wheels, **runs}))


if __name__ == "__main__":
    main()
