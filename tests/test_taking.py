"""Taking many messages for a batch in one round trip (``worker.transport.Channel.take``) on a real
redis-server: each is held unacknowledged as kombu's own ``basic_get`` holds one, so Redis restores
it after the visibility timeout, and acknowledging them together leaves nothing held."""
from __future__ import annotations

import json
import time

import pytest
from celery import Celery

from queue_config.names import TRANSLATE_TASK
from worker import taking

from .queue_harness import RedisServer

pytestmark = [pytest.mark.integration]
QUEUE = "nmt.en-de.batch"


@pytest.fixture
def broker(tmp_path, monkeypatch):
    server = RedisServer(tmp_path / "redis").start()
    app = Celery("test-taking", broker=server.url)
    app.conf.broker_transport = "worker.transport:Transport"
    app.conf.broker_transport_options = {"visibility_timeout": 1}
    taker = taking.Taker(app)
    yield taker, server.client()
    taker.close()  # kombu gives back what it still holds, while Redis runs
    server.stop()


def send(app: Celery, count: int, text: str = "A dog.") -> list[str]:
    job_ids = [f"job-{i}" for i in range(count)]
    with app.connection_for_write() as connection:
        for job_id in job_ids:
            app.send_task(TRANSLATE_TASK, args=[{"job_id": job_id, "src": "en", "tgt": "de", "text": text}],
                          queue=QUEUE, connection=connection)
    return job_ids


def test_taken_messages_stay_held_until_acknowledged_together_and_poison_is_dropped(broker):
    taker, redis = broker
    app = taker.app
    job_ids = send(app, 5)
    redis.lpush(QUEUE, "not json", json.dumps({"properties": {"delivery_tag": "x"}, "body": 7}))

    taken = taker.take(QUEUE, 10, 0.0)

    assert [item.payload()["job_id"] for item in taken] == job_ids
    assert redis.llen(QUEUE) == 0
    assert redis.hlen("unacked") == redis.zcard("unacked_index") == 5  # the poison item is not held
    taking.ack_all(taken)
    assert redis.hlen("unacked") == redis.zcard("unacked_index") == 0


def test_a_take_stops_at_its_limit_and_leaves_the_rest_queued(broker):
    taker, redis = broker
    app = taker.app
    job_ids = send(app, 5)

    taken = taker.take(QUEUE, 3, 0.0)

    assert [item.payload()["job_id"] for item in taken] == job_ids[:3] and redis.llen(QUEUE) == 2


def test_unacknowledged_messages_come_back_after_the_visibility_timeout(broker):
    """The held entries the take script writes are the ones kombu's restore reads: a worker that
    dies holding them loses none."""
    taker, redis = broker
    app = taker.app
    job_ids = send(app, 3)
    taken = taker.take(QUEUE, 3, 0.0)
    time.sleep(1.5)

    taken[0].message.channel.qos.restore_visible(num=10, interval=1)  # what a Celery consumer runs periodically

    assert redis.llen(QUEUE) == 3 and redis.hlen("unacked") == 0
    again = taker.take(QUEUE, 3, 0.0)
    assert sorted(item.payload()["job_id"] for item in again) == job_ids
    assert all(item.message.headers["redelivered"] for item in again)


def test_a_requeued_message_goes_back_on_the_queue_and_is_held_no_more(broker):
    taker, redis = broker
    app = taker.app
    job_ids = send(app, 3)
    taken = taker.take(QUEUE, 1, 0.0)

    taken[0].requeue()

    assert redis.hlen("unacked") == redis.zcard("unacked_index") == 0
    assert [item.payload()["job_id"] for item in taker.take(QUEUE, 3, 0.0)] == job_ids[1:] + job_ids[:1]


def test_a_take_stops_once_its_jobs_fill_the_character_budget(broker):
    """Six-character jobs, 6 characters in hand and a budget of 30: four more are taken (in two
    rounds of two), the rest stay queued; without a budget the job limit alone counts."""
    taker, redis = broker
    app = taker.app
    send(app, 20)

    taken = taker.take(QUEUE, 50, 0.0, budget=30, held=6)

    assert len(taken) == 4 and sum(item.chars for item in taken) == 24 and redis.llen(QUEUE) == 16
    assert len(taker.take(QUEUE, 10, 0.0, budget=0, held=6)) == 10


@pytest.mark.parametrize("room, budget, chars, jobs, size", [
    (255, 0, 60, 1, 255),  # no budget: as many as there is room for
    (255, 16000, 60, 1, 2),  # at most twice as many as are held
    (255, 16000, 60 * 81, 81, 162),
    (12, 16000, 60 * 243, 243, 12),  # the room left
    (99, 16000, 600 * 25, 25, 2),  # 600 characters a job: two more fill the budget
    (99, 16000, 16500, 20, 1),  # over the budget already: one (take stops before asking)
])
def test_each_round_asks_for_what_the_text_per_job_says_fills_the_budget(room, budget, chars, jobs, size):
    assert taking._round_size(room, budget, chars, jobs) == size
