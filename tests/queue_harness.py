"""Real processes for queue tests: a redis-server on a free loopback port and
``celery -A worker worker`` subprocesses. Each is stopped by the pid this harness started."""
from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import redis

from .conftest import REPO_ROOT

PASSWORD = "test-secret"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def wait_for(predicate, timeout: float, what: str, interval: float = 0.05):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(interval)
    raise TimeoutError(f"timed out after {timeout} s waiting for {what}")


class RedisProcess:
    """A redis-server process (a plain server, a replica or a sentinel) this harness started: ``client()``
    answers a ping once it is up; ``kill`` crashes it, ``stop`` ends it cleanly."""

    process: subprocess.Popen | None = None

    def client(self) -> redis.Redis:
        raise NotImplementedError

    def _ping(self) -> bool:
        try:
            return bool(self.client().ping())
        except redis.RedisError:
            return False

    def kill(self) -> None:
        """SIGKILL (a crash: only the AOF survives)."""
        if self.process and self.process.poll() is None:
            self.process.kill()
            self.process.wait(timeout=10)

    def stop(self) -> None:
        if self.process and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=10)


class RedisServer(RedisProcess):
    """redis-server with AOF (appendfsync everysec) and a password, in its own directory."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.port = free_port()
        self.process: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"redis://:{PASSWORD}@127.0.0.1:{self.port}/0"

    def client(self) -> redis.Redis:
        return redis.Redis.from_url(self.url, decode_responses=True)

    def start(self) -> "RedisServer":
        self.directory.mkdir(parents=True, exist_ok=True)
        self.process = subprocess.Popen(
            ["redis-server", "--port", str(self.port), "--bind", "127.0.0.1", "--requirepass", PASSWORD,
             "--dir", str(self.directory), "--appendonly", "yes", "--appendfsync", "everysec", "--save", "",
             "--maxmemory-policy", "noeviction"],
            stdout=open(self.directory / "redis.log", "ab"), stderr=subprocess.STDOUT)
        wait_for(self._ping, 10, f"redis-server on port {self.port}")
        return self



class CeleryWorker:
    """``celery -A worker worker`` run from the repository root, with NMT_* settings in its environment."""

    def __init__(self, name: str, env: dict[str, str], log_dir: Path, concurrency: int = 1,
                 cwd: Path = REPO_ROOT) -> None:
        self.name = name
        self.cwd = cwd
        self.env = env
        self.log = log_dir / f"{name}.log"
        self.concurrency = concurrency
        self.process: subprocess.Popen | None = None

    def start(self, wait: bool = True) -> "CeleryWorker":
        env = os.environ.copy() | self.env | {"PYTHONUNBUFFERED": "1", "OMP_NUM_THREADS": "1"}
        self.process = subprocess.Popen(
            [sys.executable, "-m", "celery", "-A", "worker", "worker", "--loglevel=INFO", "-c", str(self.concurrency),
             "-n", f"{self.name}@%h", "--without-gossip", "--without-mingle"],
            cwd=self.cwd, env=env, stdout=open(self.log, "ab"), stderr=subprocess.STDOUT, start_new_session=True)
        if wait:
            wait_for(lambda: self.ready or self._died(), 60, f"worker {self.name} to be ready")
            assert self.ready, self.log.read_text()[-3000:]
        return self

    @property
    def ready(self) -> bool:
        return self.log.exists() and f"{self.name}@" in self.log.read_text() and " ready." in self.log.read_text()

    def _died(self) -> bool:
        return self.process is not None and self.process.poll() is not None

    def children(self) -> list[int]:
        """Pids of the pool processes this worker forked."""
        out = subprocess.run(["pgrep", "-P", str(self.process.pid)], capture_output=True, text=True)
        return [int(p) for p in out.stdout.split()]

    def stop(self) -> None:
        if self.process is None or self.process.poll() is not None:
            return
        children = self.children()
        self.process.send_signal(signal.SIGTERM)
        try:
            self.process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(timeout=10)
        for pid in children:  # pool processes of this worker only, if any outlived it
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass

    def discard(self) -> None:
        """End the worker at once, for a test's teardown: SIGKILL to its process group (the parent
        and its pool children; ``start`` gave it a session of its own). ``stop``'s warm shutdown
        spends 3 to 5 s in Celery's and billiard's own waits per worker, and nothing checks it
        there. Not for a worker stopped mid-test: a killed worker's unacknowledged messages come
        back only after the visibility timeout."""
        if self.process is None or self.process.poll() is not None:
            return
        try:
            os.killpg(self.process.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        self.process.wait(timeout=10)
