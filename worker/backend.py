"""Celery's Redis result backend, keeping a failure's reason but never its traceback.

Task records (``celery-task-meta-<id>``) are readable by anyone who can reach the broker,
clients included; a traceback there shows server paths and source lines. The reason stays (the
exception's type and message, as the job store has it too); the traceback goes to the worker log
only. The worker selects this backend for redis:// and rediss:// result backends.
"""
from __future__ import annotations

from celery.backends.redis import RedisBackend


class ReasonOnlyRedisBackend(RedisBackend):
    def _store_result(self, task_id, result, state, traceback=None, request=None, **kwargs):
        return super()._store_result(task_id, result, state, None, request=request, **kwargs)
