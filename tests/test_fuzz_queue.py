"""Pathological lines through the queue: a real redis-server and a real ``celery -A worker worker``
serving the shipped ``models/en-de``. A job holding them finishes, the segment over its time
budget is kept and flagged, and the worker serves the next job."""
from __future__ import annotations

import pytest

from client.client import TranslationClient

from .conftest import REPO_ROOT
from .queue_harness import CeleryWorker, RedisServer

pytestmark = [pytest.mark.integration, pytest.mark.slow]

BUNDLE = REPO_ROOT / "models" / "en-de"
# One sentence of about 4,000 subword tokens: 20 parts of at most 200, past a budget of 0.5 s.
ENDLESS = " ".join(["the man and the woman walk to the big house with a red ball and"] * 250)


@pytest.fixture
def worker(tmp_path):
    server = RedisServer(tmp_path / "redis").start()
    env = {"NMT_BROKER_URL": server.url, "NMT_BUNDLES": str(BUNDLE), "NMT_LEASE_SECONDS": "3",
           "NMT_OUTPUT_DIR": str(tmp_path / "out"), "NMT_SEGMENT_SECONDS": "0.5", "NMT_THREADS": "1"}
    started = CeleryWorker("fuzz", env, tmp_path).start()
    yield TranslationClient(broker_url=server.url)
    started.stop()
    server.stop()


def test_a_job_with_pathological_lines_finishes_flagged_and_the_worker_serves_the_next(worker):
    lines = ["The dog runs home.", "a" + "-" * 40_000 + "b", ENDLESS, "I like " + "\U0001F600\U0001F44D" * 500 + ".",
             "The cat sleeps."]
    result = worker.submit(text="\n".join(lines), src="en", tgt="de").wait(timeout=240)
    segments = {s.source: s for s in result.segments}
    assert set(segments) == set(lines)
    over = segments[ENDLESS]
    assert over.translation == ENDLESS and "time_budget" in over.flags and over.confidence == 0.0
    assert segments[lines[1]].translation == lines[1]  # a run of dashes: copied through as one span
    assert "\U0001F600\U0001F44D" * 500 in segments[lines[3]].translation
    assert "time_budget" not in segments["The dog runs home."].flags
    assert segments["The dog runs home."].translation != "The dog runs home."

    after = worker.submit(text="The woman reads a book.", src="en", tgt="de").wait(timeout=120)
    assert after.text.strip() and after.text.strip() != "The woman reads a book."
