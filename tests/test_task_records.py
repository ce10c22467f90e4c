"""Celery's task records (worker/backend.py): written without a traceback, and a write that cannot
reach Redis is skipped, never raised into the worker parent that handles a lost connection."""
from __future__ import annotations

import logging

import pytest
from celery import Celery, states

from tests.queue_harness import RedisServer, free_port


@pytest.fixture
def redis_server(tmp_path):
    server = RedisServer(tmp_path / "redis").start()
    yield server
    server.stop()


def backend_for(url: str):
    app = Celery("records", broker=url, backend=f"worker.backend:ReasonOnlyRedisBackend+{url}")
    app.conf.redis_socket_connect_timeout = 1
    app.conf.result_backend_transport_options = {"retry_policy": {"max_retries": 0}}
    return app.backend


def test_a_record_redis_cannot_take_is_skipped_with_a_warning(caplog):
    backend = backend_for(f"redis://127.0.0.1:{free_port()}/0")  # nothing listens there
    with caplog.at_level(logging.WARNING, logger="worker.backend"):
        backend.mark_as_retry("job-1", RuntimeError("connection lost"))  # what Celery 5.6's parent does
    assert "task record job-1 (RETRY) not written, Redis unreachable" in caplog.text


def test_a_failure_is_recorded_with_its_reason_and_no_traceback(redis_server):
    backend = backend_for(redis_server.url)
    backend.store_result("job-2", ValueError("bad input"), states.FAILURE, traceback="Traceback: /srv/secret.py")
    meta = backend.get_task_meta("job-2")
    assert meta["status"] == states.FAILURE and meta["traceback"] is None
    assert "bad input" in str(meta["result"])
