"""Celery configuration from ``QueueSettings``: JSON only, late acks with requeue on worker loss,
prefetch 1, time limits, one visibility timeout everywhere, connection-loss handling, and the
Sentinel master's name and the sentinels' options (``queue_config.connection``) for a Sentinel URL."""
from __future__ import annotations

from typing import Any

from .connection import transport_options, use_ssl
from .settings import QueueSettings

RESTORE_INTERVAL = 10  # seconds between sweeps for unacknowledged messages of dead workers


def celery_config(settings: QueueSettings) -> dict[str, Any]:
    visibility = settings.visibility_timeout
    transport = {
        # The shortest visibility timeout of any process sharing the broker wins (celery#7651):
        # set the same value for the broker and the result backend.
        "visibility_timeout": visibility,
        # Sweep for messages past the visibility timeout every RESTORE_INTERVAL seconds (kombu's
        # default scans every 10th tick of 10 s, which adds up to 100 s to a redelivery).
        "unacked_restore_interval": RESTORE_INTERVAL,
        "unacked_restore_throttle": 1,
        "socket_timeout": settings.socket_timeout,
        "socket_connect_timeout": settings.socket_timeout,
        "socket_keepalive": True,
        "retry_on_timeout": True,
        "health_check_interval": 25,
    }
    config: dict[str, Any] = {
        "broker_url": settings.broker_url,
        "result_backend": settings.backend_url,
        "task_serializer": "json",
        "result_serializer": "json",
        "accept_content": ["json"],
        "result_accept_content": ["json"],
        "task_acks_late": True,
        "task_reject_on_worker_lost": True,
        "worker_prefetch_multiplier": 1,
        "task_soft_time_limit": settings.soft_time_limit,
        "task_time_limit": settings.time_limit,
        "broker_transport_options": transport | transport_options(settings, settings.broker_url),
        "result_backend_transport_options": transport | transport_options(settings, settings.backend_url),
        "visibility_timeout": visibility,
        "result_expires": settings.result_expires,
        # Celery's task records keep the state and the error only, never the task's arguments: the
        # document lives in the message until a worker acknowledges it, and then nowhere but the job's result.
        "result_extended": False,
        "task_track_started": True,
        "worker_cancel_long_running_tasks_on_connection_loss": True,
        "broker_connection_retry_on_startup": True,
        "broker_connection_max_retries": None,
        "worker_soft_shutdown_timeout": settings.shutdown_timeout,
        "worker_enable_soft_shutdown_on_idle": True,
        "worker_proc_alive_timeout": settings.proc_alive_timeout,
        # Children are recycled by task count and by memory (KiB in Celery), so RSS stays bounded.
        "worker_max_tasks_per_child": settings.max_tasks_per_child or None,
        "worker_max_memory_per_child": settings.max_memory_per_child * 1024 or None,
        "worker_hijack_root_logger": False,
        "task_default_queue": "nmt.default",
        "enable_utc": True,
    }
    for url, key in ((settings.broker_url, "broker_use_ssl"), (settings.backend_url, "redis_backend_use_ssl")):
        tls = use_ssl(settings, url)
        if tls is not None:
            config[key] = tls
    return config
