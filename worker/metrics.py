"""Prometheus metrics of a worker: ``NMT_METRICS_PORT`` (0, the default: off) serves them from the
worker parent at ``http://NMT_METRICS_HOST:PORT/metrics`` (127.0.0.1 unless configured).

Counters are written by the pool's children and summed by the parent through prometheus_client's
multiprocess mode (a directory of per-process files, ``PROMETHEUS_MULTIPROC_DIR``, made for the
worker if unset). Queue depth and work in flight are read from Redis at each scrape.

    nmt_jobs_total{pair, model, provider}        jobs finished with a stored result
    nmt_segments_total{pair, model}              segments (sentences) in those jobs
    nmt_target_tokens_total{pair, model}         whitespace tokens of their translations
    nmt_translate_seconds_total{pair, model}     decoding seconds; tokens/s = rate(tokens) / rate(seconds)
    nmt_job_failures_total{reason}               failed jobs by reason: invalid_job, time_limit,
                                                 attempt_cap, worker_error, malformed_message, lost
    nmt_queue_depth{queue}                       messages waiting in each queue this worker consumes
    nmt_scopes_running                           documents and chunks running in the fleet (nmt:active)
    nmt_worker_info{models, provider_setting}    1, with what this worker serves
"""
from __future__ import annotations

import atexit
import logging
import os
import shutil
import tempfile
from typing import Any, Iterable

log = logging.getLogger(__name__)
FAILURE_REASONS = ("invalid_job", "time_limit", "attempt_cap", "worker_error", "malformed_message", "lost")
_metrics: dict[str, Any] = {}


def enable() -> str:
    """In the worker parent, before the pool forks and before prometheus_client is imported: the
    directory the processes share their counters through."""
    directory = os.environ.get("PROMETHEUS_MULTIPROC_DIR")
    if not directory:
        directory = tempfile.mkdtemp(prefix="nmt-metrics-")
        parent = os.getpid()
        atexit.register(lambda: os.getpid() == parent and shutil.rmtree(directory, ignore_errors=True))
    os.environ["PROMETHEUS_MULTIPROC_DIR"] = directory
    from prometheus_client import Counter

    _metrics.update(
        jobs=Counter("nmt_jobs", "Jobs finished with a stored result", ["pair", "model", "provider"]),
        segments=Counter("nmt_segments", "Segments translated in finished jobs", ["pair", "model"]),
        tokens=Counter("nmt_target_tokens", "Whitespace tokens of the translations of finished jobs", ["pair", "model"]),
        seconds=Counter("nmt_translate_seconds", "Decoding seconds of finished jobs", ["pair", "model"]),
        failures=Counter("nmt_job_failures", "Failed jobs by reason", ["reason"]),
    )
    return directory


def record_job(pair: str, model: str, provider: str, segments: int, tokens: int, seconds: float) -> None:
    if not _metrics:
        return
    _metrics["jobs"].labels(pair, model, provider).inc()
    _metrics["segments"].labels(pair, model).inc(segments)
    _metrics["tokens"].labels(pair, model).inc(tokens)
    _metrics["seconds"].labels(pair, model).inc(seconds)


def record_failure(reason: str) -> None:
    if _metrics:
        _metrics["failures"].labels(reason if reason in FAILURE_REASONS else "worker_error").inc()


class FleetCollector:
    """Gauges read from Redis at scrape time: queue depths and scopes running."""

    def __init__(self, client: Any, queues: Iterable[str], info: dict[str, str]) -> None:
        self.client, self.queues, self.info = client, list(queues), info

    def collect(self):
        from prometheus_client.core import GaugeMetricFamily, InfoMetricFamily

        from queue_config.jobstore import ACTIVE
        from queue_config.names import queue_lists

        depth = GaugeMetricFamily("nmt_queue_depth", "Messages waiting in a queue", labels=["queue"])
        running = GaugeMetricFamily("nmt_scopes_running", "Documents and chunks running in the fleet")
        try:
            steps = len(queue_lists(""))
            with self.client.pipeline(transaction=False) as pipe:
                for queue in self.queues:
                    for key in queue_lists(queue):  # one list per priority step (chunks wait in the last)
                        pipe.llen(key)
                pipe.zcard(ACTIVE)
                values = pipe.execute()
        except Exception as exc:  # a scrape during a Redis outage reports what it can
            log.warning("metrics: Redis unreachable (%s)", exc)
        else:
            for n, queue in enumerate(self.queues):
                depth.add_metric([queue], sum(values[n * steps:(n + 1) * steps]))
            running.add_metric([], values[-1])
        yield depth
        yield running
        yield InfoMetricFamily("nmt_worker", "What this worker serves", value=self.info)


def serve(port: int, host: str, client: Any, queues: Iterable[str], info: dict[str, str]) -> None:
    """Start the HTTP endpoint in this (parent) process."""
    from prometheus_client import CollectorRegistry, start_http_server
    from prometheus_client.multiprocess import MultiProcessCollector

    registry = CollectorRegistry()
    MultiProcessCollector(registry)
    registry.register(FleetCollector(client, queues, info))
    start_http_server(port, addr=host, registry=registry)
    log.info("metrics on http://%s:%d/metrics", host, port)
