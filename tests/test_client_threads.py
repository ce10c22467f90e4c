"""One ``TranslationClient`` shared by many threads, as a web application or a thread pool uses it:
every submission is sent and recorded, however many threads send at once (a real redis-server)."""
from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

import pytest

from client.client import TranslationClient

from .queue_harness import RedisServer

pytestmark = pytest.mark.integration

THREADS = 64


@pytest.fixture()
def redis_server(tmp_path):
    server = RedisServer(tmp_path / "redis").start()
    try:
        yield server
    finally:
        server.stop()


def test_a_client_shared_by_many_threads_sends_every_job(redis_server):
    client = TranslationClient(broker_url=redis_server.url)
    start = threading.Barrier(THREADS)

    def submit(i: int) -> str:
        start.wait(timeout=30)
        job = client.submit(text=f"Sentence number {i}.", src="en", tgt="de")
        return job.status().state

    with ThreadPoolExecutor(THREADS) as pool:
        states = list(pool.map(submit, range(THREADS)))
    assert states == ["queued"] * THREADS
    # Every message is on the broker, each once: nothing was lost to the connection pool.
    r = redis_server.client()
    assert sum(r.llen(key) for key in r.keys("nmt.*")) == THREADS
