"""Jobs no worker has started, whose message the broker lost (a pop that reached Redis's AOF or
replica when the unacknowledged copy kombu writes next did not): the sweep finds them on a real
redis-server, leaves alone those whose message waits or is delivered, and sends the others again."""
from __future__ import annotations

import json
import time

import pytest

from queue_config.jobstore import QUEUED, Delivery, JobStore
from queue_config.names import TRANSLATE_TASK, queue_lists
from queue_config.settings import QueueSettings
from worker.sweep import MAX_SCANNED_MESSAGES, stale_after, sweep_once

from .queue_harness import wait_for
from .test_queue_integration import client, redis_server, workers  # noqa: F401 (fixtures)

pytestmark = [pytest.mark.integration]
IDLE = {"resent": 0, "failed": 0, "forgotten": 0, "alive": 0}


def pop(r, message: dict) -> str:
    """Pop a job's message off its queue list, as a worker's BRPOP does (nothing else is queued)."""
    item = r.rpop(message["queue"])
    assert item is not None and r.llen(message["queue"]) == 0
    return item


def test_the_sweep_leaves_waiting_and_delivered_jobs_and_resends_vanished_ones_with_a_cap(redis_server, client):
    store = client.store
    r = store.redis
    settings = QueueSettings(broker_url=redis_server.url, max_attempts=2)
    after, sent = stale_after(settings), []
    jobs = {name: client.submit(text="A dog runs.", src="en", tgt="de", job_id=name)
            for name in ("waiting", "delivered", "vanished", "copied", "admitted", "cancelled")}
    messages = {name: store.message(name, "document") for name in jobs}
    assert messages["vanished"] == {"task": TRANSLATE_TASK, "args": [messages["vanished"]["args"][0]],
                                    "queue": messages["vanished"]["queue"]}
    assert r.zcard(QUEUED) == 6
    queue = messages["waiting"]["queue"]
    assert all(m["queue"] == queue for m in messages.values()) and r.llen(queue) == 6
    # Redis lists hand out from the tail: the first submitted is popped first.
    by_order = {name: r.lindex(queue, -1 - i) for i, name in enumerate(jobs)}
    assert r.lrem(queue, 1, by_order["vanished"]) == 1  # popped, and the pop's second half lost
    assert r.lrem(queue, 1, by_order["copied"]) == 1  # ... and a copy sent again under another task id
    client.app.send_task(TRANSLATE_TASK, args=messages["copied"]["args"], queue=queue, priority=9)
    # Delivered: held unacknowledged as kombu's QoS.append holds it (HSET tag -> [message, exchange, routing key]).
    assert r.lrem(queue, 1, by_order["delivered"]) == 1
    r.hset("unacked", "tag-1", json.dumps([json.loads(by_order["delivered"]), "", queue]))
    r.zadd("unacked_index", {"tag-1": time.time()})
    store.admit([Delivery("admitted", "document", messages["admitted"])], "someone", 60, 3)
    assert not store.is_queued("admitted", "document")  # admission takes it out of the queued set
    assert jobs["cancelled"].cancel()

    now = time.time()
    assert sweep_once(store, settings, sent.append, now=now) == IDLE  # nothing is old enough yet
    before = {name: r.zscore(QUEUED, f"{name}|document") for name in ("waiting", "delivered", "copied")}
    counts = sweep_once(store, settings, sent.append, now=now + after + 1)
    # alive: the three found, and the admitted job's running scope (its lease is held)
    assert counts == {"resent": 1, "failed": 0, "forgotten": 1, "alive": 4}
    assert sent == [messages["vanished"]]
    assert store.message("cancelled", "document") is None and not store.is_queued("cancelled", "document")
    for name, score in before.items():  # found: looked at again stale_after from now
        assert r.zscore(QUEUED, f"{name}|document") > score + after
    # The next re-send waits twice as long; past max_attempts re-sends the job fails with the reason.
    assert sweep_once(store, settings, sent.append, now=now + 2 * after)["resent"] == 0
    assert sweep_once(store, settings, sent.append, now=now + 2 * after + 2)["resent"] == 1
    assert sweep_once(store, settings, sent.append, now=now + 4 * after)["resent"] == 0  # waits 2 x after
    assert sweep_once(store, settings, sent.append, now=now + 4 * after + 3)["failed"] == 1
    assert len(sent) == 2
    status = store.status("vanished")
    assert status.state == "failed" and "vanished from the broker before any worker started it" in status.error
    assert "sent again 2 times" in status.error and "NMT_MAX_ATTEMPTS=2" in status.error
    assert not store.is_queued("vanished", "document") and store.message("vanished", "document") is None
    assert {s.job_id for s in store.queued(now + 10 ** 6)} == {"waiting", "delivered", "copied"}
    assert {jobs[name].status().state for name in ("waiting", "delivered", "copied", "admitted")} == {"queued"}


def test_a_long_backlog_puts_the_look_off_until_it_drains(redis_server, client):
    store = client.store
    r = store.redis
    settings = QueueSettings(broker_url=redis_server.url)
    after, sent = stale_after(settings), []
    job = client.submit(text="A dog runs.", src="en", tgt="de")
    message = store.message(job.id, "document")
    pop(r, message)
    backlog = queue_lists(message["queue"])[-1]  # the lowest priority step counts too
    r.lpush(backlog, *(["x"] * (MAX_SCANNED_MESSAGES + 1)))
    now = time.time() + after + 1
    assert sweep_once(store, settings, sent.append, now=now) == IDLE | {"alive": 1} and sent == []
    r.ltrim(backlog, 0, MAX_SCANNED_MESSAGES - 1)  # at the bound: read, and the job is found lost
    assert sweep_once(store, settings, sent.append, now=now)["resent"] == 1 and sent == [message]


def test_records_without_a_queued_mark_still_run_and_are_never_resent(redis_server):
    """A record written by a submitter that keeps no message (the previous version's client)."""
    store = JobStore.from_url(redis_server.url, 3600)
    settings = QueueSettings(broker_url=redis_server.url)
    assert store.create("old", "en", "de", "document")
    assert store.redis.zcard(QUEUED) == 0 and store.message("old", "document") is None
    sent = []
    assert sweep_once(store, settings, sent.append, now=time.time() + 10 * stale_after(settings)) == IDLE
    message = {"task": TRANSLATE_TASK, "args": [{"job_id": "old"}], "queue": "nmt.en-de"}
    [admission] = store.admit([Delivery("old", "document", message)], "someone", 60, 3)
    assert admission.state == "run" and store.message("old", "document") == message and sent == []


@pytest.mark.slow
def test_a_queued_job_whose_message_vanished_is_sent_again_by_a_worker_and_finishes(workers, client):
    """End to end: the job's message is popped off its queue before any worker runs and never
    reaches ``unacked``; a worker started then finds it lost once it has been queued ``stale_after``
    and runs it. A 6 s visibility timeout stands in for the default 90 s (stale_after 36 s, not 120 s)."""
    fast = {"visibility_timeout": 6, "retry_backoff_max": 1, "sweep_seconds": 1}
    after = stale_after(QueueSettings(lease_seconds=3, **fast))
    submitted = time.monotonic()
    job = client.submit(text="A dog runs.", src="en", tgt="de")
    r = client.store.redis
    message = client.store.message(job.id, "document")
    pop(r, message)
    worker = workers("w1", **fast)
    result = job.wait(timeout=after + 60)
    took = time.monotonic() - submitted
    assert after <= took < after + 25, took  # one sweep past stale_after, and the job's own seconds
    assert len(result.segments) == 1
    assert "its message was sent again (1 of 3)" in worker.log.read_text()
    assert r.get(client.store.key(job.id, "attempts", "document")) == "1"  # the copy ran once
    wait_for(lambda: client.store.message(job.id, "document") is None, 10, "the job's message to be dropped")
    assert r.zcard(QUEUED) == 0
    # The original arriving late (a pop that was only slow) finds the job done and runs nothing.
    client.app.send_task(message["task"], args=message["args"], queue=message["queue"], task_id=job.id)
    wait_for(lambda: r.llen(message["queue"]) == 0 and r.hlen("unacked") == 0, 30, "the late copy to be taken")
    assert r.get(client.store.key(job.id, "attempts", "document")) == "1" and job.status().state == "done"
    assert worker.log.read_text().count(f"job {job.id} done") == 1
