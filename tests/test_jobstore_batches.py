"""The job store's batched operations on a real redis-server: a batch of job scopes is admitted
and ended in one round trip each, and every job in it is still skipped, leased, counted, stored,
failed and released on its own."""
from __future__ import annotations

import pytest
import redis

from queue_config.jobstore import ACTIVE, INPUT_FAILURE, Admission, Delivery, Ending, JobStore, chunk_scope

from .queue_harness import RedisServer

pytestmark = [pytest.mark.integration]
ME, OTHER = "host:1:me", "host:2:other"


class CountingRedis(redis.Redis):
    """A real client that counts the commands it sends (a pipeline would count once)."""

    sent = 0

    def execute_command(self, *args, **options):
        CountingRedis.sent += 1
        return super().execute_command(*args, **options)


@pytest.fixture
def store(tmp_path):
    server = RedisServer(tmp_path / "redis").start()
    store = JobStore(CountingRedis.from_url(server.url, decode_responses=True), 3600)
    # A script's first call loads it into Redis (EVALSHA, SCRIPT LOAD, EVALSHA): done here once,
    # so the tests count the round trips of every later call.
    store.start_many({"warm-up": 1})
    store.admit([delivery("warm-up")], ME, 60, 3)
    store.keep_alive([("warm-up", "document")], ME, 60)
    store.end([Ending("warm-up", "document")], ME)
    store.redis.flushdb()
    yield store
    server.stop()


def delivery(job_id: str) -> Delivery:
    return Delivery(job_id, "document", {"task": "nmt.translate_document", "args": [{"job_id": job_id}],
                                         "queue": "nmt.en-de.batch"})


def created(store: JobStore, *job_ids: str) -> None:
    for job_id in job_ids:
        store.create(job_id, "en", "de", job_id)


def round_trips(action) -> tuple[object, int]:
    """What ``action()`` returns, and the commands it sent."""
    before = CountingRedis.sent
    value = action()
    return value, CountingRedis.sent - before


def active(store: JobStore) -> set[str]:
    return set(store.redis.zrange(ACTIVE, 0, -1))


def test_admitting_a_batch_skips_only_the_jobs_that_ended(store):
    created(store, "new", "done", "cancelled", "failed", "busy", "queued")
    store.put_result("done", {"job_id": "done", "segments": [{}]})
    store.cancel("cancelled")
    store.fail("failed", "bad input")
    store.admit([delivery("busy")], OTHER, 60, 3)  # a live worker runs it now
    jobs = ["new", "done", "cancelled", "failed", "busy", "queued"]

    admissions, sent = round_trips(lambda: store.admit([delivery(j) for j in jobs], ME, 60, 3))

    assert sent == 1
    assert admissions == [Admission("run", 1), Admission("done", 0), Admission("cancelled", 0),
                          Admission("failed", 0), Admission("busy", 0), Admission("run", 1)]
    for job_id in ("new", "queued"):  # leased by this worker, counted, active with the message that starts it again
        assert store.redis.get(store.lease_key(job_id, "document")) == ME
        assert store.redis.get(store.key(job_id, "attempts", "document")) == "1"
        assert store.message(job_id, "document") == delivery(job_id).message
    for job_id in ("done", "cancelled", "failed"):  # untouched
        assert not store.lease_held(job_id, "document") and store.message(job_id, "document") is None
        assert store.redis.get(store.key(job_id, "attempts", "document")) is None
    assert store.redis.get(store.lease_key("busy", "document")) == OTHER
    assert store.redis.get(store.key("busy", "attempts", "document")) == "1"  # the other worker's attempt only
    assert active(store) == {"new|document", "queued|document", "busy|document"}


def test_a_delivery_past_the_attempt_cap_is_counted_and_holds_no_lease(store):
    created(store, "crashes", "fine")
    assert store.admit([delivery("crashes")], ME, 60, 1) == [Admission("run", 1)]
    store.redis.delete(store.lease_key("crashes", "document"))  # its worker died; the lease expired

    admissions = store.admit([delivery("crashes"), delivery("fine")], ME, 60, 1)

    assert admissions == [Admission("over", 2), Admission("run", 1)]
    assert not store.lease_held("crashes", "document") and store.lease_held("fine", "document")


def test_a_copy_of_a_finished_chunk_runs_but_is_not_counted_as_an_attempt(store):
    """A chunk that outlived the visibility timeout is restored to the queue while it runs; the copy
    arrives after it finished. It runs (to assemble the document, should the first run have died
    before that) with its attempt count as it was; an unfinished chunk's copy is counted."""
    created(store, "split")
    chunk = [Delivery("split", chunk_scope(i), {"task": "nmt.translate_chunk", "args": ["split", i]}) for i in (0, 1)]
    assert store.admit(chunk, ME, 60, 1) == [Admission("run", 1), Admission("run", 1)]
    store.put_chunk("split", 0, [{}])
    store.end([Ending("split", "chunk-0"), Ending("split", "chunk-1")], ME)  # chunk 1's worker died: no result

    again = store.admit(chunk, ME, 60, 1)

    assert again == [Admission("run", 1), Admission("over", 2)]
    assert store.redis.get(store.key("split", "attempts", "chunk-0")) == "1"
    assert store.lease_held("split", "chunk-0") and not store.lease_held("split", "chunk-1")


def test_ending_a_batch_stores_each_jobs_own_result_or_failure_and_releases_every_lease(store):
    jobs = ["ok", "bad", "stored", "twice", "taken"]
    created(store, *jobs)
    store.admit([delivery(j) for j in jobs], ME, 60, 3)
    store.put_result("stored", {"job_id": "stored", "text": "own", "segments": [{}]})  # its work stored it
    store.redis.set(store.key("twice", "result"), '{"job_id": "twice", "text": "first"}')  # an earlier delivery
    store.redis.set(store.lease_key("taken", "document"), OTHER)  # the lease expired and another worker took it
    endings = [Ending("ok", "document", result={"job_id": "ok", "text": "ok", "segments": [{}, {}]}),
               Ending("bad", "document", error="document is empty"),
               Ending("stored", "document"),
               Ending("twice", "document", result={"job_id": "twice", "text": "second", "segments": []}),
               Ending("taken", "document", result={"job_id": "taken", "text": "taken", "segments": [{}]})]

    took, sent = round_trips(lambda: store.end(endings, ME))

    assert sent == 1
    assert took == [True, True, False, False, True]
    assert store.result("ok") == endings[0].result and store.status("ok").state == "done"
    assert store.status("ok").done == 2
    assert store.status("bad").state == "failed" and store.status("bad").error == "document is empty"
    assert store.result("bad") is None
    assert store.result("stored")["text"] == "own" and store.status("stored").state == "done"
    assert store.result("twice")["text"] == "first"  # written once, never replaced
    assert store.result("taken")["text"] == "taken"
    assert list(store.redis.scan_iter("nmt:job:*:lease")) == [store.lease_key("taken", "document")]  # not ours
    assert active(store) == set() and all(store.message(j, "document") is None for j in jobs)


def test_a_failure_of_the_jobs_own_document_is_recorded_as_such_with_the_failure(store):
    """The gateway tells a client's bad file (400) from a fleet failure (500) by ``failure``: written
    in the same call as the failure, by ``end`` and by ``fail`` alike, and never onto a job that ended."""
    created(store, "corrupt", "crashed", "alone", "ended")
    store.admit([delivery(j) for j in ("corrupt", "crashed")], ME, 60, 3)
    store.cancel("ended")

    took = store.end([Ending("corrupt", "document", error="a: not a valid DOCX file", failure=INPUT_FAILURE),
                      Ending("crashed", "document", error="job failed in the worker: RuntimeError")], ME)

    assert took == [True, True]
    assert store.fail("alone", "b: not a valid SRT file", INPUT_FAILURE)
    assert not store.fail("ended", "too late", INPUT_FAILURE)
    assert [(store.status(j).state, store.status(j).failure) for j in ("corrupt", "crashed", "alone", "ended")] == \
        [("failed", INPUT_FAILURE), ("failed", ""), ("failed", INPUT_FAILURE), ("cancelled", "")]


def test_a_cancel_ends_a_job_once_and_never_makes_a_record_for_an_unknown_id(store):
    created(store, "queued")
    assert [store.cancel("queued"), store.cancel("queued"), store.cancel("never")] == [True, False, None]
    assert store.status("queued").state == "cancelled"
    assert not store.redis.exists(store.key("never")) and store.status("never").state == "unknown"


def test_a_failure_never_overwrites_a_stored_result(store):
    created(store, "done")
    store.admit([delivery("done")], ME, 60, 3)
    store.put_result("done", {"job_id": "done", "segments": []})

    assert store.end([Ending("done", "document", error="too late")], ME) == [False]
    assert store.status("done").state == "done" and store.status("done").error == ""


def test_a_batch_ended_on_a_transient_error_stays_active_for_the_sweep(store):
    created(store, "a", "b")
    store.admit([delivery("a"), delivery("b")], ME, 60, 3)

    assert store.end([Ending(j, "document", keep_active=True) for j in ("a", "b")], ME) == [False, False]

    assert active(store) == {"a|document", "b|document"}
    assert store.message("a", "document") == delivery("a").message
    assert not store.lease_held("a", "document") and not store.lease_held("b", "document")
    assert store.status("a").state == "queued"  # neither failed nor done: its message runs it again


def test_the_heartbeat_renews_only_the_owners_leases_and_reports_every_scope_alive(store):
    created(store, "mine", "theirs")
    store.admit([delivery("mine")], ME, 5, 3)
    store.admit([delivery("theirs")], OTHER, 5, 3)
    store.redis.zadd(ACTIVE, {"mine|document": 0, "theirs|document": 0})

    _, sent = round_trips(lambda: store.keep_alive([("mine", "document"), ("theirs", "document")], ME, 600))

    assert sent == 1
    assert store.redis.ttl(store.lease_key("mine", "document")) > 5
    assert store.redis.ttl(store.lease_key("theirs", "document")) <= 5
    assert all(score > 0 for _, score in store.redis.zrange(ACTIVE, 0, -1, withscores=True))


def test_starting_a_batch_records_each_count_and_never_revives_an_ended_job(store):
    created(store, "a", "b", "gone")
    store.cancel("gone")

    _, sent = round_trips(lambda: store.start_many({"a": 1, "b": 10, "gone": 3}))

    assert sent == 1
    assert [(store.status(j).state, store.status(j).total) for j in ("a", "b", "gone")] == \
        [("running", 1), ("running", 10), ("cancelled", 3)]
