"""Celery's Redis result backend, keeping a failure's reason but never its traceback.

Task records (``celery-task-meta-<id>``) are readable by anyone who can reach the broker,
clients included; a traceback there shows server paths and source lines. The reason stays (the
exception's type and message, as the job store has it too); the traceback goes to the worker log
only. The worker selects this backend for redis:// and rediss:// result backends, and its
Sentinel form for a sentinel:// list.
"""
from __future__ import annotations

from celery.backends.redis import RedisBackend, SentinelBackend
from redis import SSLConnection

from queue_config.connection import FailoverAwareConnection, FailoverAwareSSLConnection


class ReasonOnlyRedisBackend(RedisBackend):
    def _store_result(self, task_id, result, state, traceback=None, request=None, **kwargs):
        return super()._store_result(task_id, result, state, None, request=request, **kwargs)


class ReasonOnlySentinelBackend(ReasonOnlyRedisBackend, SentinelBackend):
    """The same through the sentinels (``master_name`` and ``sentinel_kwargs`` from
    ``result_backend_transport_options``), on connections that find the master again after a
    failover (``queue_config.connection``)."""

    def _get_pool(self, **params):
        ssl = issubclass(params.get("connection_class") or object, SSLConnection)
        params["connection_class"] = FailoverAwareSSLConnection if ssl else FailoverAwareConnection
        return super()._get_pool(**params)
