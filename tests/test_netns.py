"""Hosts that share nothing but the network (issue 49, items 4 and 5): the broker and each worker in
a network namespace of its own (``tests/netns_harness.py``), real redis-server, real
``celery -A worker worker`` processes and the real client. Where namespaces cannot be made the same
tests run on loopback ports, and say so (a warning in the test's output).

- a Redis Sentinel group across hosts: its master, its replica and three sentinels each on a host
  of its own, two worker hosts given only the sentinels' addresses (``sentinel://...;...``) and the
  master's name, the client in this process's namespace, all on one switch (``Lan``). Once 8 of 40
  jobs are done the master is lost for good, SIGKILLed ("kill": its host refuses connections) or
  its host's link cut (``ip link set DEV down``, "cut": its host answers nothing, not even a
  reset): every job finishes, none is lost, no worker parent exits, and each worker host holds
  connections to the promoted replica, found through the sentinels (no restart, no new address).
  The cut runs only in namespaces (a SIGSTOPped redis-server is no stand-in: its kernel still
  answers for it); the kill runs on loopback ports too;
- a worker host's network cut (``ip link set DEV down`` in its namespace) for 10 s mid-run and
  restored: every job finishes, none is lost (redone ones are counted);
- jobs by path carry the path relative to the client's NMT_INPUT_ROOT and each worker reads it under
  its own, the two mounts at different places; nothing outside a root is read or sent;
- two worker hosts holding different bundles for one pair: a job naming a bundle is never served by
  another bundle, nor half-served; a host that lacks it refuses it before translating anything.
"""
from __future__ import annotations

import os
import re
import socket
import subprocess
import time
import warnings

import pytest

from client.client import JobFailedError, TranslationClient, UnknownModelError
from queue_config.messages import MessageError
from queue_config.settings import load_settings

from .conftest import REPO_ROOT, make_toy_pairs
from .netns_harness import Hosts, Lan
from .queue_harness import wait_for
from .sentinel_harness import FAILOVER_WORKERS, QUICK_PERIODS, QUICK_SYNC, failover_run

pytestmark = [pytest.mark.integration, pytest.mark.slow]
MODELS = REPO_ROOT / "models"
# Short timeouts stand in for the defaults (lease 30 s, visibility 90 s, sweep 30 s, sockets 30 s)
# so that a cut host's work comes back within the test's time; no segment cache, so repeats decode.
WORKER = {"NMT_LEASE_SECONDS": "3", "NMT_VISIBILITY_TIMEOUT": "12", "NMT_RETRY_BACKOFF_MAX": "3",
          "NMT_SWEEP_SECONDS": "2", "NMT_SOCKET_TIMEOUT": "4", "NMT_CACHE_SIZE": "0", "NMT_THREADS": "1"}


@pytest.fixture
def hosts(tmp_path):
    # NMT_TEST_LOOPBACK=1 runs the loopback fallback on a machine that allows namespaces
    with Hosts(tmp_path / "hosts", force_loopback=os.environ.get("NMT_TEST_LOOPBACK") == "1") as made:
        if not made.netns:
            warnings.warn(made.note)
            print(f"\n[netns] {made.note}")
        yield made


@pytest.fixture
def lan(tmp_path):
    with Lan(tmp_path / "lan", force_loopback=os.environ.get("NMT_TEST_LOOPBACK") == "1") as made:
        if not made.netns:
            warnings.warn(made.note)
            print(f"\n[netns] {made.note}")
        yield made


def text(sentences: int, seed: int) -> str:
    return " ".join(source for source, _ in make_toy_pairs(sentences, seed))


def finished(client: TranslationClient, jobs) -> int:
    return sum(client.store.status(job.id).finished for job in jobs)


def test_a_worker_hosts_network_cut_for_10_s_and_restored_loses_no_job(hosts):
    host = hosts.add_worker_host("worker-host")
    broker = hosts.start_broker()
    worker = hosts.start_worker(host, "w1", WORKER | {"NMT_BUNDLES": str(MODELS / "multi30k-en-de-int8"),
                                                      "NMT_BATCH_JOBS": "4"})
    client = TranslationClient(broker_url=broker.url)
    jobs = [client.submit(text=text(4, seed), src="en", tgt="de", name=f"small{seed}") for seed in range(24)]
    jobs += [client.submit(text=text(60, 100 + seed), src="en", tgt="de", name=f"doc{seed}") for seed in range(6)]
    wait_for(lambda: finished(client, jobs) >= 1, 60, "the first job to finish")
    before = finished(client, jobs)
    hosts.link_down(host)
    started = time.monotonic()
    try:
        assert not hosts.can_reach_broker(host)
        assert before < len(jobs), "every job ended before the cut: make the jobs longer"
        time.sleep(max(0.0, 10 - (time.monotonic() - started)))
    finally:
        hosts.link_up(host)
    wait_for(lambda: hosts.can_reach_broker(host), 10, "the host to reach the broker again")
    wait_for(lambda: finished(client, jobs) == len(jobs), 70, "every job to end after the link came back")
    states = [client.store.status(job.id).state for job in jobs]
    assert states == ["done"] * len(jobs), states
    results = [job.result() for job in jobs]
    assert all(len(result.segments) for result in results)
    attempts = [int(client.store.redis.get(client.store.key(job.id, "attempts", "document")) or 1) for job in jobs]
    log = worker.log.read_text()
    kept = len(re.findall(r"a result was already stored", log))
    print(f"\n[netns] mode={'netns' if hosts.netns else 'loopback'}: {len(jobs)} jobs, {before} done before the cut, "
          f"all {len(jobs)} done after it, 0 lost; redone (attempts > 1): {sum(a > 1 for a in attempts)}, "
          f"deliveries {sum(attempts)}; duplicate results kept once: {kept}")
    assert worker.process.poll() is None, "the worker parent went down"


def test_jobs_by_path_are_read_under_each_hosts_own_input_root(hosts, tmp_path):
    """The client's storage is mounted at .../a, the worker host's at .../b (the same files); the
    job carries the path relative to the client's root and the worker reads it under its own."""
    client_root, worker_root = tmp_path / "x" / "a", tmp_path / "x" / "b"
    for root in (client_root, worker_root):
        (root / "letters").mkdir(parents=True)
        (root / "letters" / "doc.txt").write_text("A man sees a dog.\nThe cat runs home.\n", encoding="utf-8")
    (client_root / "letters" / "only-here.txt").write_text("A dog.\n", encoding="utf-8")
    (worker_root / "out.txt").symlink_to(client_root / "letters" / "doc.txt")  # a link leading out of b
    host = hosts.add_worker_host("worker-host")
    broker = hosts.start_broker()
    hosts.start_worker(host, "w1", WORKER | {"NMT_BUNDLES": str(MODELS / "multi30k-en-de-int8"),
                                             "NMT_INPUT_ROOT": str(worker_root)})
    settings = load_settings({"NMT_BROKER_URL": broker.url, "NMT_INPUT_ROOT": str(client_root)})
    client = TranslationClient(settings=settings)
    assert client.shared_path(client_root / "letters" / "doc.txt") == "letters/doc.txt"
    job = client.submit(path=client_root / "letters" / "doc.txt", src="en", tgt="de")
    assert client.store.redis.hget(client.store.key(job.id), "name") == "doc"
    result = job.wait(timeout=60)
    assert [s.source for s in result.segments] == ["A man sees a dog.", "The cat runs home."]
    by_relative = client.submit(path="letters/doc.txt", src="en", tgt="de").wait(timeout=60)
    assert by_relative.text == result.text
    # on the client's mount but not on the worker's: the worker says so, naming the relative path
    with pytest.raises(JobFailedError, match="input file not found: letters/only-here.txt$"):
        client.submit(path=client_root / "letters" / "only-here.txt", src="en", tgt="de").wait(timeout=60)
    # outside the client's root: refused before anything is sent
    for outside in (tmp_path / "x" / "elsewhere.txt", "../b/letters/doc.txt", "/etc/hostname"):
        with pytest.raises(MessageError, match="outside NMT_INPUT_ROOT"):
            client.submit(path=outside, src="en", tgt="de")
    # a client without a root (one host) sends paths as given: the worker still reads nothing
    # outside its own root, `..` and links leading out included, and never shows its root
    plain = TranslationClient(broker_url=broker.url)
    for path in ("../a/letters/doc.txt", "out.txt", str(client_root / "letters" / "doc.txt")):
        with pytest.raises(JobFailedError, match="outside NMT_INPUT_ROOT") as failure:
            plain.submit(path=path, src="en", tgt="de").wait(timeout=60)
        assert str(worker_root) not in str(failure.value)
    assert plain.submit(path=str(worker_root / "letters" / "doc.txt"), src="en", tgt="de").wait(timeout=60).text == result.text


def test_a_job_naming_a_bundle_only_some_hosts_hold_is_never_served_by_another(hosts):
    """Host 1 holds models/en-de, host 2 models/multi30k-en-de, both for en-de, each from its own
    disk. A job naming one either ends done by that bundle, or fails with the refusal of a host
    that lacks it, before anything was translated and with no result: never another bundle's
    translation, never a part of one. A bundle no host holds is refused at submit."""
    one, two = hosts.add_worker_host("host-1"), hosts.add_worker_host("host-2")
    broker = hosts.start_broker()
    hosts.start_worker(one, "w1", WORKER | {"NMT_BUNDLES": str(MODELS / "en-de")})
    hosts.start_worker(two, "w2", WORKER | {"NMT_BUNDLES": str(MODELS / "multi30k-en-de")})
    client = TranslationClient(broker_url=broker.url)
    wait_for(lambda: {"en-de", "multi30k-en-de"} <= set(client.store.served_models()), 30, "both hosts' bundles")
    with pytest.raises(UnknownModelError, match="no worker serves the model 'en-de-int8'"):
        client.submit(text="A dog.", src="en", tgt="de", model="en-de-int8")
    jobs = [(model, client.submit(text=text(3, seed), src="en", tgt="de", model=model))
            for seed in range(6) for model in ("en-de", "multi30k-en-de")]
    outcomes = {"done": 0, "refused": 0}
    for model, job in jobs:
        try:
            result = job.wait(timeout=90)
        except JobFailedError as exc:
            assert re.search(rf"unknown model '{model}' for en-de: this worker \(.*\) does not have that bundle.*"
                             r"refused before any of the job was translated \(other workers announce it", str(exc)), exc
            assert client.store.result(job.id) is None and job.status().done == 0
            outcomes["refused"] += 1
            continue
        assert result.provenance["bundle"] == model
        outcomes["done"] += 1
    print(f"\n[netns] mode={'netns' if hosts.netns else 'loopback'}: jobs naming a bundle on two hosts "
          f"holding one each: {outcomes}")
    assert outcomes["done"] >= 1


@pytest.mark.parametrize("fault", ["kill", "cut"])
def test_a_sentinel_groups_master_lost_mid_run_the_workers_carry_on_with_the_promoted_replica(lan, tmp_path, fault):
    """The master's redis-server SIGKILLed ("kill": its host refuses connections), or its host's
    link cut and left down ("cut": its host answers nothing, not even a TCP reset), once 8 of 40
    jobs are done."""
    if fault == "cut" and not lan.netns:
        # SIGSTOP is no stand-in here: the kernel still acknowledges for a stopped redis-server
        pytest.skip(f"a host's network cut needs network namespaces ({lan.note})")
    group = lan.start_sentinel_group(tmp_path / "sentinel", periods=QUICK_PERIODS, master_extra=QUICK_SYNC)
    # the workers know only the sentinels' addresses and the master's name
    env = group.settings_env() | WORKER | FAILOVER_WORKERS | {"NMT_BUNDLES": str(MODELS / "multi30k-en-de-int8")}
    workers = [lan.start_worker(lan.add_host(f"worker-host-{i}"), f"w{i}", env, wait=False) for i in (1, 2)]
    for worker in workers:
        wait_for(lambda: worker.ready or worker.process.poll() is not None, 60, f"worker {worker.name} to be ready")
        assert worker.ready, worker.log.read_text()[-3000:]
    parents = [worker.process.pid for worker in workers]
    old, new = group.master, group.replica
    for worker in workers:  # through the sentinels, to the master's address on its own host
        wait_for(lambda: lan.connected(worker, old), 10, f"worker {worker.name} to connect to the master")
    # documents over NMT_BATCH_BYTES run one by one: 40 small jobs were taken in one batch and all
    # ended before the fault on a fast CPU
    client = TranslationClient(settings=load_settings(group.settings_env() | {"NMT_SOCKET_TIMEOUT": "4",
                                                                              "NMT_BATCH_BYTES": "200"}))
    offsets: list[int] = []

    def lose(master) -> None:
        offsets.extend(len(worker.log.read_bytes()) for worker in workers)
        if fault == "kill":
            master.kill()
        else:
            lan.link_down(lan.host_of(master))

    jobs = [{"text": text(1 + i % 4 if i % 5 == 0 else 16, seed=i), "src": "en", "tgt": "de", "options": {"beam": 4}}
            for i in range(40)]  # every fifth small (batched), the others documents of 16 sentences
    figures, _ = failover_run(group, client, jobs, kill_when_done=8, deadline=45, fault=lose)
    assert group.master_node() is new and new.role() == "master"
    with pytest.raises(OSError):  # the old master is still dead (refused), or its host cut off (no answer)
        socket.create_connection((old.address, old.port), timeout=1).close()
    done_after = [len(re.findall(rb"job \S+ done", worker.log.read_bytes()[offset:]))
                  for worker, offset in zip(workers, offsets)]
    try:  # each worker's connections to the promoted master, as ss sees them on its host
        holding = [sorted(wait_for(lambda: lan.connected(worker, new), 15, f"{worker.name} on the new master"))
                   for worker in workers]
    except (TimeoutError, subprocess.CalledProcessError) as exc:
        holding = str(exc)
    print(f"\n[netns] mode={'netns' if lan.netns else 'loopback'}: Sentinel group on 5 hosts, master {fault} after "
          f"{figures['done_before_kill']} of {len(jobs)} jobs: {figures}; jobs done per worker after it: {done_after}; "
          f"worker pids holding connections to the promoted master: {holding}")
    assert figures["done_before_kill"] < len(jobs), "every job ended before the fault: make the jobs longer"
    assert (figures["done"], figures["failed"], figures["lost"], figures["stuck"]) == (len(jobs), 0, 0, 0), figures
    assert [worker.process.poll() for worker in workers] == [None, None], "a worker parent went down"
    assert [worker.process.pid for worker in workers] == parents
    assert isinstance(holding, list) and all(holding), f"a worker did not reach the promoted master: {holding}"
