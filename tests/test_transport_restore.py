"""The worker's Redis transport against a real redis-server: a message held by a worker that lost
its broker comes back after the visibility timeout at the worker's restore interval (kombu 5.6
ignores ``unacked_restore_interval`` and restores on every 10th 10 s tick only: 100 s), and a
reconnect to the next ``sentinel://`` URL keeps this project's transport (kombu would switch to its own)."""
from __future__ import annotations

import time

import pytest
from kombu import Connection

from queue_config.celery_config import RESTORE_INTERVAL
from worker import transport

from .queue_harness import RedisServer


@pytest.fixture
def redis_server(tmp_path):
    server = RedisServer(tmp_path).start()
    yield server
    server.stop()


def test_a_held_message_past_the_visibility_timeout_is_restored_at_the_configured_interval(redis_server):
    assert RESTORE_INTERVAL == 10  # the worker's setting: every tick of kombu's 10 s restore loop
    options = {"visibility_timeout": 1, "unacked_restore_interval": RESTORE_INTERVAL}
    with Connection(redis_server.url, transport="worker.transport:Transport", transport_options=options) as conn:
        channel = conn.default_channel
        assert isinstance(channel, transport.Channel)
        conn.SimpleQueue("held").put({"job": 1})
        held = channel.basic_get("held", no_ack=False)  # delivered, never acknowledged: its worker died
        assert held is not None and redis_server.client().llen("held") == 0
        channel.qos.restore_visible()  # kombu's first tick: nothing past the timeout yet
        assert redis_server.client().llen("held") == 0
        time.sleep(1.5)
        channel.qos.restore_visible()  # the next tick, 10 s later in a worker: kombu's own would skip it
        assert redis_server.client().llen("held") == 1


def test_a_reconnect_to_the_next_sentinel_url_keeps_the_projects_transport():
    conn = Connection("sentinel://127.0.0.1:1;sentinel://127.0.0.1:2", transport="worker.transport:SentinelTransport",
                      transport_options={"master_name": "m"})
    assert type(conn.transport) is transport.SentinelTransport
    conn.maybe_switch_next()  # what kombu does when the connection to the first is lost
    assert conn.hostname == "127.0.0.1" and conn.port == 2
    assert type(conn.transport) is transport.SentinelTransport
