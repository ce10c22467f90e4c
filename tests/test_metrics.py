"""The Prometheus endpoint of a real ``celery -A worker worker``: counters written by the pool's
children, summed by the parent, with queue depth read from Redis at each scrape."""
from __future__ import annotations

import urllib.request

import pytest

from queue_config.names import queue_for

from .queue_harness import free_port, wait_for
from .test_queue_faults import send_raw
from .test_queue_integration import client, redis_server, workers  # noqa: F401 (fixtures)

pytestmark = [pytest.mark.integration, pytest.mark.slow]


def scrape(port: int) -> dict[tuple[str, tuple], float]:
    from prometheus_client.parser import text_string_to_metric_families

    text = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10).read().decode()
    return {(sample.name, tuple(sorted(sample.labels.items()))): sample.value
            for family in text_string_to_metric_families(text) for sample in family.samples}


def test_worker_metrics_count_jobs_segments_tokens_and_failures_by_reason(workers, client):
    port = free_port()
    workers("w1", concurrency=2, metrics_port=port)
    for text in ("A dog runs. The cat sleeps.", "A man sees a red ball."):
        client.submit(text=text, src="en", tgt="de").wait(timeout=60)
    send_raw(client, {"job_id": "broken", "src": "en", "tgt": "de", "text": "", "options": {}}, "broken")
    wait_for(lambda: client.store.status("broken").finished, 60, "the empty job to fail")
    metrics = scrape(port)
    labels = (("model", "toy-en-de"), ("pair", "en-de"))
    assert metrics[("nmt_jobs_total", labels + (("provider", "CPUExecutionProvider"),))] == 2
    assert metrics[("nmt_segments_total", labels)] == 3
    assert metrics[("nmt_target_tokens_total", labels)] >= 3
    assert metrics[("nmt_translate_seconds_total", labels)] > 0
    assert metrics[("nmt_job_failures_total", (("reason", "invalid_job"),))] == 1
    assert metrics[("nmt_queue_depth", (("queue", queue_for("en", "de")),))] == 0
    assert metrics[("nmt_scopes_running", ())] == 0
    assert metrics[("nmt_worker_info", (("models", "toy-en-de"), ("provider_setting", "auto")))] == 1


def test_queue_depth_is_read_from_redis_at_each_scrape(redis_server):
    from worker.metrics import FleetCollector

    r = redis_server.client()
    r.rpush("nmt.xx-yy", "a", "b", "c")
    r.rpush("nmt.xx-yy\x06\x169", "chunk")  # a chunk waits in the lowest priority step
    depth, running, _ = FleetCollector(r, ["nmt.xx-yy", "nmt.en-de"], {"models": "m"}).collect()
    assert [(s.labels["queue"], s.value) for s in depth.samples] == [("nmt.xx-yy", 4), ("nmt.en-de", 0)]
    assert running.samples[0].value == 0
