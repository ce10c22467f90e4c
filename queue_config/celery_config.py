"""Celery configuration from ``QueueSettings``: JSON only, late acks with requeue on worker loss,
prefetch 1, time limits, one visibility timeout everywhere, connection-loss handling, and the
Sentinel master's name and the sentinels' options (``queue_config.connection``) for a Sentinel URL.

With RabbitMQ as the broker (``amqp://``, ``amqps://``; ``amqp_config``) the queues are durable
quorum queues, publishes wait for the broker's confirmation, and Celery keeps no task records: the
Redis job store (``NMT_RESULT_BACKEND``) is the only record of a job."""
from __future__ import annotations

import ssl
from typing import Any

from .connection import keepalive_options, transport_options, use_ssl
from .settings import QueueSettings

RESTORE_INTERVAL = 10  # seconds between sweeps for unacknowledged messages of dead workers
# AMQP heartbeat (seconds) of worker connections to RabbitMQ: the broker closes a connection that
# sent nothing for two of them (a host that died without closing its sockets) and hands the
# connection's unacknowledged messages to other workers.
AMQP_HEARTBEAT = 30
QUORUM = {"x-queue-type": "quorum"}


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
        **keepalive_options(settings),  # a consumer waiting on a master whose host went silent
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
        # Celery's Redis result backend reads its own settings, not the transport options: a 120 s
        # socket timeout and no connect timeout by default, so a child writing a task record to a
        # master whose host went silent waited 120 s.
        "redis_socket_timeout": settings.socket_timeout,
        "redis_socket_connect_timeout": settings.socket_timeout,
        "redis_socket_keepalive": True,
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
    if settings.amqp_broker:
        config.update(amqp_config(settings))
    return config


def amqp_config(settings: QueueSettings) -> dict[str, Any]:
    """What changes with RabbitMQ as the broker (docs/scaling.md, "RabbitMQ with Redis state").

    Queues are durable quorum queues (replicated; a message survives the loss of a minority of
    nodes), declared alike by workers and clients (a client names a queue, Celery declares it as
    quorum). Quorum queues have no global QoS: Celery detects them and applies the prefetch per
    consumer, so a worker holds at most ``-c`` messages of each queue it consumes (multiplier 1,
    the running ones included); the rest stay in the queue for other workers and for the batch
    taker (``worker.taking``), which takes small jobs with ``basic_get`` up to a batch.

    A delivered message stays unacknowledged until its job has ended (acks late); RabbitMQ hands it
    to another worker as soon as the connection it was delivered on closes (a worker killed: at
    once; a host gone or hung: after two to three missed heartbeats). RabbitMQ's own
    ``consumer_timeout`` (server-wide, 30 min by default in 3.10, looked at on each channel's tick)
    closes a channel whose oldest unacknowledged delivery (``basic_get``'s too) is older; a quorum
    queue's messages come back only once the client has answered the close. A live worker answers
    at once: its parent takes the closed channel for a lost connection (``broker_channel_error_retry``;
    Celery's default stops the worker), terminates the task and reconnects, and the job runs again.
    A hung worker never answers: its messages wait for the heartbeats. Keep ``consumer_timeout``
    above ``NMT_TIME_LIMIT`` plus the lease (docs/scaling.md, "consumer_timeout").

    Celery's task records are not written (``task_ignore_result``, no result backend): the job
    store holds every job's state, progress and result, and nothing reads ``celery-task-meta-*``.
    Retries with a countdown stay in the queue's direct exchange: the worker holds such a message
    until it is due (Celery's native delayed delivery needs topic exchanges; the worker leaves out
    the step that declares its delay queues: ``worker.tasks.Consumer``)."""
    config: dict[str, Any] = {
        # kombu's py-amqp transport, checking each broker's own host name under TLS (clients; the
        # worker selects its subclass, worker.transport.AmqpTransport)
        "broker_transport": "queue_config.connection:AmqpTransport",
        "broker_transport_options": {"confirm_publish": True},  # a send returns once the broker has the message
        "broker_heartbeat": AMQP_HEARTBEAT,
        # A channel the broker closes (consumer_timeout: "PRECONDITION_FAILED - delivery acknowledgement
        # on channel 1 timed out") is a lost connection: reconnect. Celery's default stops the worker.
        "broker_channel_error_retry": True,
        "result_backend": None,
        "result_backend_transport_options": {},
        "task_ignore_result": True,
        "task_track_started": False,
        "task_default_queue_type": "quorum",
        "task_create_missing_queue_type": "quorum",
        "broker_native_delayed_delivery_queue_type": "classic",
        "worker_detect_quorum_queues": True,
        "worker_prefetch_multiplier": 1,
    }
    if settings.broker_url.lower().startswith("amqps://"):
        # py-amqp checks the certificate, and the host name only when it is given: None is
        # replaced by kombu with the broker's host name from the URL.
        config["broker_use_ssl"] = {"cert_reqs": ssl.CERT_REQUIRED, "server_hostname": None}
        if settings.broker_ca_certs:  # checked against this CA file instead of the system's CAs
            config["broker_use_ssl"]["ca_certs"] = settings.broker_ca_certs
    return config
