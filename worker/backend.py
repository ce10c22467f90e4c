"""Celery's Redis result backend, keeping a failure's reason but never its traceback.

Task records (``celery-task-meta-<id>``) are readable by anyone who can reach the broker,
clients included; a traceback there shows server paths and source lines. The reason stays (the
exception's type and message, as the job store has it too); the traceback goes to the worker log
only. The worker selects this backend for redis:// and rediss:// result backends, and its
Sentinel form for a sentinel:// list.

A task record that cannot be written because Redis is unreachable is skipped with a warning: the
job store (``queue_config.jobstore``) holds every job's state and result, and nothing reads these
records. Celery 5.6 writes one from the worker parent while it handles a lost connection (it marks
the running task for retry before cancelling it); during a Sentinel failover that write reaches
the dead master, and an error there stopped the parent ("Unrecoverable error").
"""
from __future__ import annotations

import logging

import redis
from celery.backends.redis import RedisBackend, SentinelBackend
from redis import SSLConnection

from queue_config.connection import FailoverAwareConnection, FailoverAwareSSLConnection


log = logging.getLogger(__name__)


class ReasonOnlyRedisBackend(RedisBackend):
    def _store_result(self, task_id, result, state, traceback=None, request=None, **kwargs):
        try:
            return super()._store_result(task_id, result, state, None, request=request, **kwargs)
        except (redis.ConnectionError, redis.TimeoutError) as exc:
            log.warning("task record %s (%s) not written, Redis unreachable: %s", task_id, state, exc)
            return result


class ReasonOnlySentinelBackend(ReasonOnlyRedisBackend, SentinelBackend):
    """The same through the sentinels (``master_name`` and ``sentinel_kwargs`` from
    ``result_backend_transport_options``), on connections that find the master again after a
    failover (``queue_config.connection``)."""

    def _get_pool(self, **params):
        ssl = issubclass(params.get("connection_class") or object, SSLConnection)
        params["connection_class"] = FailoverAwareSSLConnection if ssl else FailoverAwareConnection
        return super()._get_pool(**params)
