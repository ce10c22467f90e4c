"""Redis Sentinel: settings, and the job store, client and Celery workers on a real Sentinel group
(a master, a replica and three sentinels, each a redis-server on a loopback port) through a
SIGKILL of the master, a demotion of a live master, and an old master restarted from its AOF.
Real Celery workers through a failover: ``bench/sentinel_failover.py`` (a known gap keeps it out of
the suite: a message popped in the instant before the kill can be lost, docs/scaling.md)."""
from __future__ import annotations

import threading
import time

import pytest
import redis

from client.client import TranslationClient
from queue_config.celery_config import celery_config
from queue_config.connection import redis_client
from queue_config.jobstore import JobStore
from queue_config.settings import SettingsError, load_settings, redacted

from .queue_harness import wait_for
from .sentinel_harness import MASTER_NAME, QUICK_PERIODS, QUICK_SYNC, SentinelGroup

LIST = "sentinel://:pw@10.0.0.1:26379/2;sentinel://:pw@10.0.0.2:26380/2;sentinel://:pw@10.0.0.3/2"


def test_sentinel_lists_are_accepted_with_the_master_name_and_passed_to_celery():
    settings = load_settings({"NMT_BROKER_URL": LIST, "NMT_REDIS_SENTINEL_MASTER": "mymaster",
                              "NMT_REDIS_SENTINEL_PASSWORD": "s3"})
    assert settings.backend_url == LIST
    config = celery_config(settings)
    for key in ("broker_transport_options", "result_backend_transport_options"):
        assert config[key]["master_name"] == "mymaster"
        assert config[key]["sentinel_kwargs"]["password"] == "s3"
        assert config[key]["visibility_timeout"] == settings.visibility_timeout
    assert "broker_use_ssl" not in config
    assert redacted(LIST).count(":***@") == 3 and "pw" not in redacted(LIST)


def test_sentinel_tls_verifies_certificates():
    config = celery_config(load_settings({"NMT_BROKER_URL": LIST, "NMT_REDIS_SENTINEL_MASTER": "m",
                                          "NMT_REDIS_SENTINEL_TLS": "1", "NMT_REDIS_SENTINEL_CA_CERTS": "/ca.pem"}))
    import ssl
    assert config["broker_use_ssl"] == config["redis_backend_use_ssl"] == {"ssl_cert_reqs": ssl.CERT_REQUIRED,
                                                                          "ssl_ca_certs": "/ca.pem"}
    assert config["broker_transport_options"]["sentinel_kwargs"]["ssl"] is True


@pytest.mark.parametrize("env, message", [
    ({"NMT_BROKER_URL": LIST}, "NMT_BROKER_URL is a sentinel:// URL: set NMT_REDIS_SENTINEL_MASTER"),
    ({"NMT_BROKER_URL": "redis://h:6379/0", "NMT_RESULT_BACKEND": LIST}, "NMT_RESULT_BACKEND is a sentinel"),
    ({"NMT_BROKER_URL": "sentinel://a:26379;redis://b:6379", "NMT_REDIS_SENTINEL_MASTER": "m"},
     "every URL of a Sentinel list must be sentinel://host:port, got 'redis://b:6379'"),
    ({"NMT_BROKER_URL": "sentinel://a:port", "NMT_REDIS_SENTINEL_MASTER": "m"}, "bad port in 'sentinel://a:port'"),
    ({"NMT_BROKER_URL": "sentinel://a:26379/x", "NMT_REDIS_SENTINEL_MASTER": "m"}, "the database must be a number"),
    ({"NMT_BROKER_URL": "amqp://h", "NMT_REDIS_SENTINEL_MASTER": "m"}, "redis://, rediss://, unix:// or sentinel://"),
    ({"NMT_REDIS_SENTINEL_CA_CERTS": "/ca.pem"}, "NMT_REDIS_SENTINEL_TLS is off"),
    ({"NMT_REDIS_WAIT_REPLICAS": "-1"}, "NMT_REDIS_WAIT_REPLICAS must be >= 0"),
    ({"NMT_REDIS_FAILOVER_SECONDS": "0"}, "NMT_REDIS_FAILOVER_SECONDS must be > 0"),
])
def test_bad_sentinel_settings_name_the_variable(env, message):
    with pytest.raises(SettingsError, match=message):
        load_settings(env)


@pytest.fixture
def group(tmp_path):
    started = SentinelGroup(tmp_path / "sentinel", periods=QUICK_PERIODS, master_extra=QUICK_SYNC).start()
    yield started
    started.stop()


def _settings(group: SentinelGroup, **extra: str):
    return load_settings(group.settings_env() | {f"NMT_{k.upper()}": v for k, v in extra.items()})


@pytest.mark.integration
def test_job_store_and_client_find_the_master_through_the_sentinels(group):
    client = TranslationClient(settings=_settings(group))
    assert client.store.create("j1", "en", "de", "doc")
    assert group.master.client().hget("nmt:job:j1", "state") == "queued"
    wait_for(lambda: group.replica.client().hget("nmt:job:j1", "state") == "queued", 10, "replication")
    assert client.store.redis.connection_pool.get_master_address() == ("127.0.0.1", group.master.port)
    # The sentinels' own password is needed, and said so.
    bad = load_settings(group.settings_env() | {"NMT_REDIS_SENTINEL_PASSWORD": "wrong", "NMT_REDIS_FAILOVER_SECONDS": "1"})
    with pytest.raises(redis.ConnectionError, match="nmt-master"):
        JobStore.for_settings(bad).status("j1")


@pytest.mark.integration
def test_store_and_client_write_to_the_promoted_master_after_the_master_is_killed(group):
    client = TranslationClient(settings=_settings(group))
    store = client.store
    assert store.create("before", "en", "de", "doc")
    wait_for(lambda: group.replica.client().exists("nmt:job:before"), 10, "replication")
    group.master.kill()
    # No wait for the promotion: the store's own retries ride it out (NMT_REDIS_FAILOVER_SECONDS).
    started = time.monotonic()
    assert store.create("after", "en", "de", "doc")
    assert store.put_result("after", {"segments": [{"source": "A."}]})
    assert time.monotonic() - started < 20
    assert group.replica.role() == "master"
    assert group.replica.client().hget("nmt:job:after", "state") == "done"
    assert client.job("before").status().state == "queued" and client.job("after").status().state == "done"


@pytest.mark.integration
def test_a_write_refused_by_a_demoted_master_leads_to_rediscovery(group):
    """A planned failover demotes the live master: connections held to it stay open, and its
    first refusal (READONLY on a write, UNBLOCKED on a waiting BRPOP) sends the client to the
    sentinels for the new master instead of failing."""
    store = JobStore.for_settings(_settings(group))
    assert store.create("j1", "en", "de", "doc")  # the pool now holds a connection to the master
    waiter = redis_client(_settings(group), group.url())
    popped: list = []
    thread = threading.Thread(target=lambda: popped.append(waiter.brpop("nmt:test:queue", timeout=20)))
    thread.start()
    time.sleep(0.3)
    old = group.master
    group.sentinels[0].client().execute_command("SENTINEL", "FAILOVER", MASTER_NAME)
    wait_for(lambda: group.replica.replication().get("role") == "master" and old.replication().get("role") == "slave",
             30, "the planned failover")
    with pytest.raises(redis.ReadOnlyError):  # what a plain client on the old address meets
        old.client().set("x", "1")
    assert store.create("j2", "en", "de", "doc")
    assert store.redis.connection_pool.get_master_address() == ("127.0.0.1", group.replica.port)
    assert group.replica.client().hget("nmt:job:j2", "state") == "queued"
    group.replica.client().lpush("nmt:test:queue", "item")
    thread.join(timeout=30)
    assert popped == [(b"nmt:test:queue", b"item")]


@pytest.mark.integration
def test_an_old_master_restarted_after_the_failover_is_demoted_and_its_writes_do_not_survive(group):
    store = JobStore.for_settings(_settings(group))
    for i in range(10):
        store.create(f"j{i}", "en", "de", "doc")
    wait_for(lambda: group.replica.client().exists("nmt:job:j9"), 10, "replication")
    old = group.master
    old.kill()
    group.wait_failover(old)
    old.start()  # from its AOF: for a moment it believes it is still the master
    stale = False
    try:  # a client that kept the old address (not one of ours) writes a "result" into it
        old.client().set("nmt:job:j0:result", '{"stale": true}')
        stale = True
    except redis.ReadOnlyError:
        pass  # already demoted
    for i in range(10):  # the store, through the sentinels, writes to the promoted master only
        assert store.put_result(f"j{i}", {"segments": [], "by": "new master"})
    # Sentinel demotes it at its next look and the new master sends a full copy: seen to take over
    # 60 s on a busy 2-core host running the whole suite (8 s alone)
    def resynced() -> bool:
        replication = old.replication()
        return replication.get("role") == "slave" and replication.get("master_link_status") == "up"

    wait_for(resynced, 150, "the old master to be demoted and resynced")
    wait_for(lambda: old.client().exists("nmt:job:j9:result"), 10, "the resync")
    assert '"new master"' in old.client().get("nmt:job:j0:result"), f"stale write survived (written: {stale})"
    assert store.result("j0")["by"] == "new master"
