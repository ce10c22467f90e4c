"""Prometheus metrics of the gateway: ``NMT_API_METRICS_PORT`` (0, the default: off) serves them
from the ``nmt serve`` process at ``http://NMT_API_METRICS_HOST:PORT/metrics`` (127.0.0.1 unless
configured), apart from the API's port, so that they need no key and are not reachable where the
API is. Every gateway process (``--workers N``) counts into prometheus_client's multiprocess
directory (``PROMETHEUS_MULTIPROC_DIR``, made for the gateway if unset), which the server sums, as
the workers' exporter does (worker/metrics.py). Webhook backlogs are read from Redis at each scrape.

    nmt_gateway_requests_total{route, method, code}   requests by route template and status code
    nmt_gateway_request_seconds{route}                 time to answer (histogram)
    nmt_gateway_errors_total{code}                     answers with a status of 400 or more
    nmt_gateway_webhooks_total{outcome}                webhook attempts: delivered, retried, given_up
    nmt_gateway_webhooks_pending                       deliveries waiting for their next attempt
    nmt_gateway_webhooks_watched                       jobs whose end a webhook awaits
"""
from __future__ import annotations

import atexit
import logging
import os
import shutil
import tempfile
from typing import Any

log = logging.getLogger(__name__)
BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0)
_metrics: dict[str, Any] = {}


def share_directory() -> str:
    """In the ``nmt serve`` process, before the gateway processes start and before
    prometheus_client is imported: the directory they count into."""
    directory = os.environ.get("PROMETHEUS_MULTIPROC_DIR")
    if not directory:
        directory = tempfile.mkdtemp(prefix="nmt-gateway-metrics-")
        parent = os.getpid()
        atexit.register(lambda: os.getpid() == parent and shutil.rmtree(directory, ignore_errors=True))
        os.environ["PROMETHEUS_MULTIPROC_DIR"] = directory
    return directory


def enable() -> None:
    """In each gateway process (its app factory): make the counters."""
    if _metrics:
        return
    from prometheus_client import Counter, Histogram

    _metrics.update(
        requests=Counter("nmt_gateway_requests", "Requests by route template, method and status code",
                         ["route", "method", "code"]),
        seconds=Histogram("nmt_gateway_request_seconds", "Seconds to answer a request", ["route"], buckets=BUCKETS),
        errors=Counter("nmt_gateway_errors", "Answers with a status code of 400 or more", ["code"]),
        webhooks=Counter("nmt_gateway_webhooks", "Webhook attempts by outcome", ["outcome"]),
    )


def record_request(route: str, method: str, code: int, seconds: float) -> None:
    if not _metrics:
        return
    _metrics["requests"].labels(route, method, str(code)).inc()
    _metrics["seconds"].labels(route).observe(seconds)
    if code >= 400:
        _metrics["errors"].labels(str(code)).inc()


def record_webhook(outcome: str) -> None:
    if _metrics:
        _metrics["webhooks"].labels(outcome).inc()


class WebhookCollector:
    """Gauges read from Redis at scrape time: deliveries pending and jobs watched."""

    def __init__(self, client: Any, due_key: str, watch_key: str) -> None:
        self.client, self.due_key, self.watch_key = client, due_key, watch_key

    def collect(self):
        from prometheus_client.core import GaugeMetricFamily

        pending = GaugeMetricFamily("nmt_gateway_webhooks_pending", "Webhook deliveries waiting for an attempt")
        watched = GaugeMetricFamily("nmt_gateway_webhooks_watched", "Jobs whose end a webhook awaits")
        try:
            with self.client.pipeline(transaction=False) as pipe:
                pipe.zcard(self.due_key)
                pipe.zcard(self.watch_key)
                due, watching = pipe.execute()
        except Exception as exc:  # a scrape during a Redis outage reports what it can
            log.warning("metrics: Redis unreachable (%s)", exc)
        else:
            pending.add_metric([], due)
            watched.add_metric([], watching)
        yield pending
        yield watched


def serve(port: int, host: str, collector: WebhookCollector) -> None:
    """Start the metrics endpoint in this (the ``nmt serve``) process."""
    from prometheus_client import CollectorRegistry, start_http_server
    from prometheus_client.multiprocess import MultiProcessCollector

    registry = CollectorRegistry()
    MultiProcessCollector(registry)
    registry.register(collector)
    start_http_server(port, addr=host, registry=registry)
    log.info("metrics on http://%s:%d/metrics", host, port)
