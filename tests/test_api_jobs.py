"""The gateway's job API and its webhooks end to end: a real redis-server, a real ``celery -A
worker worker`` serving the shipped multi30k-en-de bundle, real uvicorn gateways (``nmt serve``)
and a webhook receiver (``http.server`` in a thread of this test) that checks each signature
with its own HMAC."""
from __future__ import annotations

import hashlib
import hmac
import html
import json
import threading
import time
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
import requests
from requests.structures import CaseInsensitiveDict

from api.callbacks import AllowList, check_callback, sign, verify
from api.errors import ApiError
from queue_config.jobstore import JobStore

from .queue_harness import CeleryWorker, RedisServer, free_port, wait_for
from .test_api_gateway import BUNDLE, Gateway

KEY, OTHER_KEY = "jobs-key-3e1a", "jobs-key-b77c"
SECRET = "whsec-test-0123456789abcdef"
AUTH = {"Authorization": f"Bearer {KEY}"}
PAGE = ("<!DOCTYPE html>\n<html><body>\n<h1>A man sees a dog.</h1>\n<p>Two dogs are playing in the <b>snow</b>.</p>\n"
        "</body></html>\n")


class Receiver:
    """Records every POST (headers, body, arrival); answers with the statuses queued in
    ``answers`` first, then 200."""

    def __init__(self) -> None:
        self.deliveries: list[tuple[dict[str, str], bytes, float]] = []
        self.answers: list[int] = []
        self.lock = threading.Lock()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 -- http.server's name
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                with receiver.lock:
                    # header names are case-insensitive (urllib sends "Nmt-signature")
                    receiver.deliveries.append((CaseInsensitiveDict(self.headers.items()), body, time.monotonic()))
                    status = receiver.answers.pop(0) if receiver.answers else 200
                self.send_response(status)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}{path}"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture(scope="module")
def fleet(tmp_path_factory):
    root = tmp_path_factory.mktemp("api-jobs")
    redis_server = RedisServer(root / "redis").start()
    worker = CeleryWorker("jobs-w1", {"NMT_BROKER_URL": redis_server.url, "NMT_BUNDLES": str(BUNDLE)}, root)
    try:
        worker.start()
        yield redis_server.url, root
    finally:
        worker.stop()
        redis_server.stop()


def gateway_env(broker_url: str, metrics_port: int) -> dict[str, str]:
    return {"NMT_BROKER_URL": broker_url, "NMT_API_METRICS_PORT": str(metrics_port), "NMT_API_KEYS": f"{KEY},{OTHER_KEY}", "NMT_WEBHOOK_ALLOW": "127.0.0.1",
            "NMT_WEBHOOK_SECRET": SECRET, "NMT_WEBHOOK_BACKOFF": "0.3", "NMT_WEBHOOK_MAX_BACKOFF": "2",
            "NMT_WEBHOOK_POLL": "0.1", "NMT_WEBHOOK_TIMEOUT": "3"}


@pytest.fixture(scope="module")
def metrics_port() -> int:
    return free_port()


@pytest.fixture(scope="module")
def gateway(fleet, metrics_port):
    url, root = fleet
    started = Gateway("jobs-gw", gateway_env(url, metrics_port), root).start()
    yield started
    started.stop()


@pytest.fixture(scope="module")
def receiver():
    r = Receiver()
    yield r
    r.close()


def submit(gateway: Gateway, callback_url: str | None = None, key: str = KEY, **fields) -> requests.Response:
    data = {"target_lang": "de", "source_lang": "en"} | fields
    if callback_url:
        data["callback_url"] = callback_url
    return requests.post(gateway.url + "/v1/jobs", headers={"Authorization": f"Bearer {key}"}, data=data,
                         files={"file": ("page.html", PAGE.encode("utf-8"), "text/html")}, timeout=30)


def wait_done(gateway: Gateway, job_id: str) -> dict:
    def ended():
        view = requests.get(f"{gateway.url}/v1/jobs/{job_id}", headers=AUTH, timeout=10).json()
        return view if view["status"] in ("done", "failed", "cancelled") else None
    return wait_for(ended, 120, f"job {job_id}", interval=0.2)


def deliveries_of(receiver: Receiver, job_id: str) -> list[tuple[dict[str, str], bytes, float]]:
    with receiver.lock:
        return [d for d in receiver.deliveries if json.loads(d[1])["data"]["job"]["id"] == job_id]


def check_signature(headers: dict[str, str], body: bytes) -> None:
    """The receiver's side, written from the docs: t and v1 from NMT-Signature, v1 = HMAC-SHA256
    of "<t>.<body>" under the shared secret, t recent."""
    fields = dict(part.split("=", 1) for part in headers["NMT-Signature"].split(","))
    expected = hmac.new(SECRET.encode(), fields["t"].encode() + b"." + body, hashlib.sha256).hexdigest()
    assert hmac.compare_digest(fields["v1"], expected)
    assert abs(time.time() - int(fields["t"])) < 60


# -- the allow-list and signatures, alone ---------------------------------------------------------
ALLOW = AllowList.parse("127.0.0.1, *.hooks.example.com, 10.1.0.0/16, receiver.internal")


@pytest.mark.parametrize("url, allowed", [
    ("http://127.0.0.1:8080/hook", True), ("https://a.hooks.example.com/x", True), ("http://10.1.200.3/", True),
    ("http://receiver.internal./", True),
    ("http://hooks.example.com/", False),  # a wildcard covers subdomains only
    ("http://10.2.0.1/", False), ("http://localhost/", False), ("http://[::1]/", False),
    ("http://2130706433/", False),  # 127.0.0.1 spelled as one number is not a listed host
    ("http://127.0.0.1@evil.example.org/", False), ("http://user:pw@127.0.0.1/", False),
    ("ftp://127.0.0.1/", False), ("file:///etc/passwd", False), ("http://127.0.0.1:99999/", False),
])
def test_a_callback_url_is_accepted_only_for_hosts_on_the_allow_list(url, allowed):
    if allowed:
        assert check_callback(url, ALLOW) == url
    else:
        with pytest.raises(ApiError) as caught:
            check_callback(url, ALLOW)
        assert caught.value.status == 400


def test_an_empty_allow_list_refuses_every_callback_and_a_bare_wildcard_is_not_an_entry():
    with pytest.raises(ApiError, match="Webhooks are off"):
        check_callback("http://127.0.0.1/", AllowList.parse(""))
    from queue_config.settings import SettingsError

    for spec in ("*", "*.com", "10.0.0.0/33"):
        with pytest.raises(SettingsError, match="NMT_WEBHOOK_ALLOW"):
            AllowList.parse(spec)


def test_a_signature_checks_the_body_the_secret_and_the_time():
    body = b'{"id": "evt_1"}'
    header = sign(SECRET, body, timestamp=1_700_000_000)
    assert verify(SECRET, header, body, now=1_700_000_100)
    assert not verify(SECRET, header, body + b" ", now=1_700_000_100)
    assert not verify("another-secret-0123", header, body, now=1_700_000_100)
    assert not verify(SECRET, header, body, now=1_700_000_000 + 301)  # a replay, too late


# -- the job API ------------------------------------------------------------------------------------
def test_a_job_is_followed_and_its_file_and_json_fetched_by_its_key_only(gateway):
    answer = submit(gateway, options=json.dumps({"beam": 3}), glossary="dog\tKöter\n")
    assert answer.status_code == 201, answer.text
    job = answer.json()
    assert answer.headers["Location"] == f"/v1/jobs/{job['id']}" and job["status"] == "queued"
    done = wait_done(gateway, job["id"])
    assert done["status"] == "done" and done["progress"]["done"] == done["progress"]["total"] > 0
    assert done["result_url"] == f"/v1/jobs/{job['id']}/result" and done["billed_characters"] == len(PAGE)
    file = requests.get(gateway.url + done["result_url"], headers=AUTH, timeout=10)
    assert file.status_code == 200 and file.headers["content-type"].startswith("text/html")
    assert 'filename="page.de.html"' in file.headers["content-disposition"]
    # a page without a <head>: its non-ASCII characters come back as references
    assert file.text.startswith("<!DOCTYPE html>") and "Köter" in html.unescape(file.text) and file.text.count("<b>") == 1
    stored = requests.get(gateway.url + done["result_url"], params={"format": "json"}, headers=AUTH, timeout=10).json()
    assert stored["job_id"] == job["id"] and stored["text"] == file.text and stored["segments"]
    for segment in stored["segments"]:
        assert {"source", "translation", "alignment", "confidence", "flags"} <= set(segment)
        assert 0.0 <= segment["confidence"] <= 1.0
    assert any(e["target_term"] == "Köter" for s in stored["segments"] for e in s["details"].get("glossary", ()))
    other = {"Authorization": f"Bearer {OTHER_KEY}"}
    for method, path in (("GET", ""), ("GET", "/result"), ("DELETE", "")):
        refused = requests.request(method, f"{gateway.url}/v1/jobs/{job['id']}{path}", headers=other, timeout=10)
        assert refused.status_code == 404 and refused.json() == {"error": "Job not found"}
    assert requests.get(f"{gateway.url}/v1/jobs/{job['id']}", timeout=10).status_code == 403
    ended = requests.delete(f"{gateway.url}/v1/jobs/{job['id']}", headers=AUTH, timeout=10)
    assert ended.status_code == 409 and "already ended: done" in ended.json()["error"]


def test_bad_options_a_bad_glossary_and_an_unknown_glossary_id_are_400_or_404(gateway):
    bad = submit(gateway, options=json.dumps({"beam": 0}))
    assert bad.status_code == 400 and "beam" in bad.json()["error"]
    assert submit(gateway, glossary="no tab here\n").status_code == 400
    assert submit(gateway, glossary_id="no-such-glossary").status_code == 404


def test_an_empty_text_or_file_is_refused_at_submission_and_nothing_is_queued(gateway, fleet):
    store = JobStore.from_url(fleet[0], 3600)
    keys_before = sorted(store.redis.keys("nmt:*job*")) + sorted(store.redis.keys("_kombu*"))
    queued_before = {queue: store.redis.llen(queue) for queue in store.redis.keys("nmt.*")}
    for body in ({"text": ""}, {"text": "  \n "}):
        refused = requests.post(gateway.url + "/v1/jobs", headers=AUTH, json={"target_lang": "de", **body}, timeout=30)
        assert refused.status_code == 400 and refused.json() == {
            "error": "Parameter 'text' is empty: a job needs text to translate"}
    for data in (b"", b"\n\n"):
        refused = requests.post(gateway.url + "/v1/jobs", headers=AUTH, data={"target_lang": "de"},
                                files={"file": ("blank.txt", data, "text/plain")}, timeout=30)
        assert refused.status_code == 400 and refused.json() == {
            "error": "The document is empty: it has no text to translate"}
    assert sorted(store.redis.keys("nmt:*job*")) + sorted(store.redis.keys("_kombu*")) == keys_before
    assert {queue: store.redis.llen(queue) for queue in store.redis.keys("nmt.*")} == queued_before


def test_cancelling_a_job_the_store_has_no_record_of_is_404_and_writes_nothing(gateway, fleet):
    store = JobStore.from_url(fleet[0], 3600)
    unknown = requests.delete(f"{gateway.url}/v1/jobs/deadbeef", headers=AUTH, timeout=10)
    assert unknown.status_code == 404 and unknown.json() == {"error": "Job not found"}
    assert not store.redis.exists(store.key("deadbeef"))
    store.announce_pairs(["en-fr"])  # announced, but no worker consumes nmt.en-fr: the job stays queued
    try:
        job = submit(gateway, target_lang="fr").json()
    finally:
        store.redis.hdel("nmt:pairs", "en-fr")
    store.redis.delete(store.key(job["id"]))  # its job record expired; the gateway's own is still there
    expired = requests.delete(f"{gateway.url}/v1/jobs/{job['id']}", headers=AUTH, timeout=10)
    assert expired.status_code == 404 and expired.json() == {"error": "Job not found"}
    assert not store.redis.exists(store.key(job["id"]))  # not made again as a cancelled job


# -- webhooks ---------------------------------------------------------------------------------------
def test_a_finished_job_posts_one_signed_webhook_with_an_event_id(gateway, receiver, fleet):
    job = submit(gateway, receiver.url("/hooks/done")).json()
    wait_for(lambda: deliveries_of(receiver, job["id"]), 120, "the webhook")
    time.sleep(0.5)  # a second delivery would come within a few poll turns
    [(headers, body, _)] = deliveries_of(receiver, job["id"])
    check_signature(headers, body)
    event = json.loads(body)
    assert event["id"] == headers["NMT-Event-Id"] == f"evt_{job['id']}" and event["type"] == "job.done"
    assert event["data"]["job"]["status"] == "done" and event["data"]["job"]["result_url"].endswith("/result")
    assert headers["Content-Type"] == "application/json" and headers["NMT-Delivery-Attempt"] == "1"
    store = JobStore.from_url(fleet[0], 3600)
    assert store.redis.zcard("nmt:api:webhooks:due") == 0
    assert store.redis.zscore("nmt:api:webhooks:watch", job["id"]) is None


def test_a_receiver_that_fails_twice_gets_the_third_attempt_after_growing_waits(gateway, receiver):
    with receiver.lock:
        receiver.answers[:] = [500, 503]
    job = submit(gateway, receiver.url("/hooks/flaky")).json()
    wait_for(lambda: len(deliveries_of(receiver, job["id"])) >= 3, 120, "three attempts")
    time.sleep(1.0)
    attempts = deliveries_of(receiver, job["id"])
    assert len(attempts) == 3  # the third was answered 200: no fourth
    assert {json.loads(body)["id"] for _, body, _ in attempts} == {f"evt_{job['id']}"}  # one event to deduplicate on
    assert [h["NMT-Delivery-Attempt"] for h, _, _ in attempts] == ["1", "2", "3"]
    for headers, body, _ in attempts:
        check_signature(headers, body)
    first_wait, second_wait = attempts[1][2] - attempts[0][2], attempts[2][2] - attempts[1][2]
    assert first_wait >= 0.3 and second_wait >= 0.6  # NMT_WEBHOOK_BACKOFF 0.3 s, doubled


def test_a_cancelled_job_gets_a_cancelled_webhook_and_its_characters_back(gateway, receiver, fleet):
    store = JobStore.from_url(fleet[0], 3600)
    store.announce_pairs(["en-fr"])  # announced, but no worker consumes nmt.en-fr: the job stays queued
    try:
        job = submit(gateway, receiver.url("/hooks/cancel"), target_lang="fr").json()
    finally:
        store.redis.hdel("nmt:pairs", "en-fr")
    usage = {"Authorization": f"DeepL-Auth-Key {KEY}"}
    before = requests.get(gateway.url + "/v2/usage", headers=usage, timeout=10).json()["character_count"]
    cancelled = requests.delete(f"{gateway.url}/v1/jobs/{job['id']}", headers=AUTH, timeout=10)
    assert cancelled.status_code == 200 and cancelled.json()["status"] == "cancelled"
    after = requests.get(gateway.url + "/v2/usage", headers=usage, timeout=10).json()["character_count"]
    assert after == before - len(PAGE)
    wait_for(lambda: deliveries_of(receiver, job["id"]), 30, "the webhook")
    [(headers, body, _)] = deliveries_of(receiver, job["id"])
    check_signature(headers, body)
    assert json.loads(body)["type"] == "job.cancelled" and json.loads(body)["data"]["job"]["status"] == "cancelled"


def test_the_gateway_exports_requests_latencies_errors_and_webhooks_to_prometheus(gateway, metrics_port):
    from prometheus_client.parser import text_string_to_metric_families

    assert requests.get(f"{gateway.url}/v1/jobs/no-such-job", headers=AUTH, timeout=10).status_code == 404
    text = urllib.request.urlopen(f"http://127.0.0.1:{metrics_port}/metrics", timeout=10).read().decode()
    samples = {(s.name, tuple(sorted(s.labels.items()))): s.value
               for family in text_string_to_metric_families(text) for s in family.samples}
    job_route = (("code", "404"), ("method", "GET"), ("route", "/v1/jobs/{job_id}"))
    assert samples[("nmt_gateway_requests_total", job_route)] >= 2  # this one, and the other key's in the first test
    assert samples[("nmt_gateway_requests_total", (("code", "201"), ("method", "POST"), ("route", "/v1/jobs")))] >= 4
    assert samples[("nmt_gateway_errors_total", (("code", "404"),))] >= 4
    assert samples[("nmt_gateway_request_seconds_count", (("route", "/v1/jobs"),))] >= 4
    assert not any("no-such-job" in str(labels) for _, labels in samples)  # ids never become labels
    assert samples[("nmt_gateway_webhooks_total", (("outcome", "delivered"),))] >= 3  # done, flaky, cancelled
    assert samples[("nmt_gateway_webhooks_total", (("outcome", "retried"),))] >= 2
    assert samples[("nmt_gateway_webhooks_pending", ())] == 0 and ("nmt_gateway_webhooks_watched", ()) in samples


def test_a_delivery_pending_when_the_gateway_stops_is_made_after_it_restarts(gateway, receiver, fleet):
    store = JobStore.from_url(fleet[0], 3600)
    with receiver.lock:
        receiver.answers[:] = [503] * 1000
    try:
        job = submit(gateway, receiver.url("/hooks/restart")).json()
        event = f"evt_{job['id']}"
        wait_for(lambda: store.redis.hget(f"nmt:api:webhook:{event}", "attempts") == "1", 120, "a failed attempt")
    finally:
        gateway.stop()
    assert store.redis.zscore("nmt:api:webhooks:due", event) is not None  # pending, in Redis
    failed = len(deliveries_of(receiver, job["id"]))
    recorded = int(store.redis.hget(f"nmt:api:webhook:{event}", "attempts"))
    with receiver.lock:
        receiver.answers.clear()
    time.sleep(1.0)
    assert len(deliveries_of(receiver, job["id"])) == failed  # nobody delivers while no gateway runs
    gateway.start()
    wait_for(lambda: len(deliveries_of(receiver, job["id"])) > failed, 30, "the delivery after the restart")
    time.sleep(0.5)
    assert len(deliveries_of(receiver, job["id"])) == failed + 1
    headers, body, _ = deliveries_of(receiver, job["id"])[-1]
    check_signature(headers, body)
    assert json.loads(body)["id"] == event and headers["NMT-Delivery-Attempt"] == str(recorded + 1)
    assert store.redis.zscore("nmt:api:webhooks:due", event) is None
    assert not store.redis.exists(f"nmt:api:webhook:{event}")


def test_a_callback_host_not_on_the_allow_list_is_refused_and_no_job_is_made(gateway, fleet):
    store = JobStore.from_url(fleet[0], 3600)
    jobs_before = len(list(store.redis.scan_iter("nmt:api:job:*")))
    for url in ("http://10.0.0.1/hook", "http://169.254.169.254/latest/meta-data/", "http://localhost:6379/"):
        refused = submit(gateway, url)
        assert refused.status_code == 400 and "allow-list" in refused.json()["error"], refused.text
    assert len(list(store.redis.scan_iter("nmt:api:job:*"))) == jobs_before
