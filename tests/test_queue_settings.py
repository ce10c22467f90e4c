"""Queue settings from NMT_* variables, and the Celery configuration built from them."""
from __future__ import annotations

import os
import ssl
import subprocess
import sys

import pytest

from queue_config.celery_config import celery_config
from queue_config.messages import JobOptions, JobRequest, MessageError
from queue_config.settings import SettingsError, load_settings, redacted

from .conftest import REPO_ROOT


def test_defaults_and_result_backend_defaults_to_broker():
    settings = load_settings({"NMT_BROKER_URL": "redis://:pw@redis:6379/1"})
    assert settings.backend_url == "redis://:pw@redis:6379/1"
    # A dead worker's job is redelivered within the visibility timeout plus one sweep: 2 minutes.
    assert settings.visibility_timeout + 10 <= 120


def test_celery_config_invariants():
    config = celery_config(load_settings({"NMT_TIME_LIMIT": "100", "NMT_SOFT_TIME_LIMIT": "90", "NMT_RETRY_BACKOFF_MAX": "20"}))
    assert config["task_serializer"] == config["result_serializer"] == "json"
    assert config["accept_content"] == ["json"]
    assert config["task_acks_late"] and config["task_reject_on_worker_lost"]
    assert config["worker_prefetch_multiplier"] == 1
    assert config["worker_cancel_long_running_tasks_on_connection_loss"]
    visibility = config["broker_transport_options"]["visibility_timeout"]
    assert visibility == config["result_backend_transport_options"]["visibility_timeout"] == config["visibility_timeout"]
    assert visibility >= 2 * 30  # the lease
    assert config["broker_transport_options"]["unacked_restore_interval"] == 10
    assert config["broker_transport_options"]["unacked_restore_throttle"] == 1
    assert config["task_soft_time_limit"] < config["task_time_limit"]


@pytest.mark.parametrize("env, message", [
    ({"NMT_VISIBILITY_TIMEOUT": "50", "NMT_LEASE_SECONDS": "30"}, "at least twice NMT_LEASE_SECONDS"),
    ({"NMT_SOFT_TIME_LIMIT": "700"}, "NMT_SOFT_TIME_LIMIT .* below NMT_TIME_LIMIT"),
    ({"NMT_RETRY_BACKOFF_MAX": "1000"}, "NMT_RETRY_BACKOFF_MAX .* well below"),
    ({"NMT_TIME_LIMIT": "ten"}, "NMT_TIME_LIMIT='ten' is not a valid int"),
    ({"NMT_BROKER_URL": "amqp://localhost"}, "NMT_BROKER_URL must be a redis"),
    ({"NMT_BROKER_URL": "rediss://:pw@host:6380/0"}, "without ssl_cert_reqs=required"),
    ({"NMT_PROVIDER": "tpu"}, "NMT_PROVIDER"),
    ({"NMT_BATCH_WORKERS": "0"}, "NMT_BATCH_WORKERS must be >= 1"),
    ({"NMT_BATCH_CHARS": "-1"}, "NMT_BATCH_CHARS .* must be >= 0"),
])
def test_invalid_settings_name_the_variable(env, message):
    with pytest.raises(SettingsError, match=message):
        load_settings(env)


def test_tls_requires_certificate_verification_for_broker_and_backend():
    url = "rediss://:pw@host:6380/0?ssl_cert_reqs=required"
    config = celery_config(load_settings({"NMT_BROKER_URL": url}))
    assert config["broker_use_ssl"]["ssl_cert_reqs"] == ssl.CERT_REQUIRED
    assert config["redis_backend_use_ssl"]["ssl_cert_reqs"] == ssl.CERT_REQUIRED


def test_passwords_are_redacted():
    assert redacted("redis://:hunter2@host:6379/0") == "redis://:***@host:6379/0"


def test_job_request_round_trip_and_validation():
    request = JobRequest.from_json({"job_id": "a1", "src": "en", "tgt": "de", "text": "Hi.", "options": {"beam": 4}})
    assert request.options == JobOptions(beam=4)
    assert JobRequest.from_json(request.to_json()) == request
    with pytest.raises(MessageError, match="unknown field"):
        JobRequest.from_json({"job_id": "a", "src": "en", "tgt": "de", "text": "x", "priority": 1})
    with pytest.raises(MessageError, match="job_id"):
        JobRequest.from_json({"job_id": "../etc", "src": "en", "tgt": "de", "text": "x"})
    with pytest.raises(MessageError, match="unsupported message version"):
        JobRequest.from_json({"job_id": "a", "src": "en", "tgt": "de", "text": "x", "version": 9})


def test_a_job_request_may_name_a_model():
    from queue_config.messages import JobRequest, MessageError

    base = {"job_id": "j1", "src": "en", "tgt": "de", "text": "A dog."}
    assert JobRequest.from_json(base).model is None
    assert JobRequest.from_json(base | {"model": "multi30k-en-de"}).model == "multi30k-en-de"
    assert JobRequest.from_json(JobRequest.from_json(base | {"model": "en-de"}).to_json()).model == "en-de"
    for bad in ("", "../x", 7, "a b"):
        with pytest.raises(MessageError, match="'model'"):
            JobRequest.from_json(base | {"model": bad})


def _python(code: str, env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                          env={**os.environ, **env}, cwd=REPO_ROOT)


def test_importing_the_celery_app_reads_no_settings_and_no_bundle():
    # Settings that would be refused, and a bundle that does not exist: the import still works,
    # and Celery meets both only when it needs its configuration.
    env = {"NMT_RETRY_BACKOFF_MAX": "999", "NMT_BUNDLES": "/nonexistent/bundle"}
    imported = _python("import worker.tasks as t; print(t.app.configured)", env)
    assert imported.returncode == 0, imported.stderr[-2000:]
    assert imported.stdout.strip() == "False"
    configured = _python("import worker.tasks as t; t.app.conf.task_queues", env)
    assert configured.returncode != 0 and "NMT_RETRY_BACKOFF_MAX (999)" in configured.stderr


def test_the_job_tasks_take_their_retry_limits_from_the_settings():
    out = _python("import worker.tasks as t\n"
                  "for name in ('nmt.translate_document', 'nmt.translate_chunk'):\n"
                  "    task = t.app.tasks[name]\n"
                  "    print(task.max_retries, task.retry_backoff_max)\n",
                  {"NMT_MAX_RETRIES": "7", "NMT_RETRY_BACKOFF_MAX": "13"})
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.split() == ["7", "13", "7", "13"]


def test_a_clients_input_root_makes_jobs_by_path_relative_to_it(tmp_path):
    """NMT_INPUT_ROOT on a client: paths travel relative to it (each worker reads them under its own
    root, mounted wherever that host mounts the storage); a path outside it is refused before
    anything is sent; without it a path is sent as given (one host)."""
    from client.client import TranslationClient

    root = tmp_path / "mnt" / "shared"
    (root / "in").mkdir(parents=True)
    (root / "in" / "a.txt").write_text("A dog.\n", encoding="utf-8")
    (root / "link.txt").symlink_to(tmp_path / "secret.txt")
    (tmp_path / "secret.txt").write_text("no\n", encoding="utf-8")
    client = TranslationClient(settings=load_settings({"NMT_INPUT_ROOT": str(root)}))
    assert client.shared_path(root / "in" / "a.txt") == "in/a.txt"
    assert client.shared_path(str(root / "in" / ".." / "in" / "a.txt")) == "in/a.txt"
    assert client.shared_path("in/a.txt") == "in/a.txt"  # relative: to the root already
    for outside in (tmp_path / "secret.txt", "../secret.txt", root / "link.txt", "/etc/hostname"):
        with pytest.raises(MessageError, match="outside NMT_INPUT_ROOT"):
            client.shared_path(outside)
    with pytest.raises(MessageError, match="NMT_INPUT_ROOT itself"):
        client.shared_path(root)
    with pytest.raises(MessageError, match="NUL"):
        client.shared_path("in/a\x00.txt")
    plain = TranslationClient(settings=load_settings({}))
    assert plain.shared_path(root / "in" / "a.txt") == str(root / "in" / "a.txt")
    assert plain.shared_path("in/a.txt") == "in/a.txt"


def test_job_paths_with_nul_are_refused_in_the_message():
    with pytest.raises(MessageError, match="'path' must be a non-empty string without NUL"):
        JobRequest.from_json({"job_id": "j", "src": "en", "tgt": "de", "path": "a\x00b.txt"})
    assert JobRequest.from_json({"job_id": "j", "src": "en", "tgt": "de", "path": "in/a.txt"}).path == "in/a.txt"


def test_every_redis_connection_finds_a_silent_peer_dead_within_the_socket_timeout():
    # a master whose host's link is cut sends no reset: without keepalive a consumer waiting in epoll and a
    # child writing its task record (Celery's own 120 s default) hung (tests/test_netns.py, the [cut] case)
    import socket

    from queue_config.connection import redis_client

    settings = load_settings({"NMT_SOCKET_TIMEOUT": "9"})
    config = celery_config(settings)
    for options in (config["broker_transport_options"], config["result_backend_transport_options"],
                    redis_client(settings, "redis://127.0.0.1:1/0").connection_pool.connection_kwargs):
        assert options["socket_keepalive"] is True
        keepalive = options["socket_keepalive_options"]
        assert keepalive[socket.TCP_KEEPIDLE] + keepalive[socket.TCP_KEEPINTVL] * keepalive[socket.TCP_KEEPCNT] <= 9
        assert keepalive[socket.TCP_USER_TIMEOUT] == 9000
    assert config["redis_socket_timeout"] == config["redis_socket_connect_timeout"] == 9
    assert config["redis_socket_keepalive"] is True


def test_passwords_of_every_url_and_the_sentinels_are_kept_out_of_printed_errors():
    from queue_config.settings import redacted_text, secrets_of

    settings = load_settings({"NMT_BROKER_URL": "sentinel://:master-pw@h1:26379;sentinel://:master-pw@h2:26379",
                              "NMT_REDIS_SENTINEL_MASTER": "m", "NMT_REDIS_SENTINEL_PASSWORD": "s3nt1nel",
                              "NMT_RESULT_BACKEND": "redis://:store-pw@h3:6379/1"})
    assert secrets_of(settings) == ("master-pw", "s3nt1nel", "store-pw")
    error = ("No master found for 'm' : <redis.client.Redis(<redis.connection.ConnectionPool(<redis.connection."
             "Connection(db=0,password=s3nt1nel,retry=<redis.retry.Retry object at 0x7f>,host=h1,port=26379,"
             "socket_keepalive=None)>)>)> - ConnectionError('refused'); AUTH master-pw failed; password=other")
    assert redacted_text(error, secrets_of(settings)) == \
        "No master found for 'm' : sentinel h1:26379 - ConnectionError('refused'); AUTH *** failed; password=***"
