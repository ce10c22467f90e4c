"""The lock that keeps the two aligner trainings (test_aligner.py, test_hybrid_export.py) from
running side by side: it excludes another process (as another pytest-xdist worker is) until released."""
from __future__ import annotations

import os
import subprocess
import sys

from .conftest import held_lock

TRY_LOCK = """
import fcntl, sys
with open(sys.argv[1], "a") as handle:
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        sys.exit(3)
"""


def _other_process_gets(path) -> bool:
    done = subprocess.run([sys.executable, "-c", TRY_LOCK, str(path)], capture_output=True, text=True, timeout=60)
    assert done.returncode in (0, 3), done.stderr
    return done.returncode == 0


def test_another_process_waits_while_a_heavy_training_holds_the_lock(tmp_path):
    path = tmp_path / "heavy-training.lock"
    with held_lock(path):
        assert not _other_process_gets(path)
    assert _other_process_gets(path)


def test_every_xdist_worker_of_a_session_shares_one_lock_file(one_heavy_training, tmp_path_factory):
    [path] = one_heavy_training.args
    own = tmp_path_factory.getbasetemp()  # pytest-N, or pytest-N/popen-gwK under xdist
    assert path.parent == (own.parent if os.environ.get("PYTEST_XDIST_WORKER") else own)
    with one_heavy_training():
        assert not _other_process_gets(path)
    assert _other_process_gets(path)
