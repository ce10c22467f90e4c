"""A Sentinel-managed Redis for tests: a master, a replica and three sentinels, each a real
``redis-server`` on a free loopback port in its own directory. The sentinels judge a node down
after ``down_after_ms`` (1 s here, 30 s by default in Redis), so a failover takes seconds.
Each process is stopped by the pid this harness started. ``places`` puts each of the five in a
network namespace of its own, bound to an address there (``tests/netns_harness.py``, ``Lan``).
``tls`` (a ``TlsFiles`` from ``rabbitmq_harness.make_tls``) has every node and sentinel serve TLS
only, replication and the sentinels' links included; ``settings_env`` then adds the TLS settings."""
from __future__ import annotations

import subprocess
import time
from pathlib import Path
from typing import TYPE_CHECKING, Callable

import redis

from .queue_harness import PASSWORD, RedisProcess, free_port, wait_for

MASTER_NAME = "nmt-master"
SENTINEL_PASSWORD = "sentinel-secret"
LOOPBACK = "127.0.0.1"

if TYPE_CHECKING:
    from .rabbitmq_harness import TlsFiles


def _tls_args(tls: "TlsFiles") -> list[str]:
    """redis-server options (a sentinel's too) for TLS only, on the node's port: no plain listener,
    clients not asked for a certificate, replication and a sentinel's links to the nodes over TLS."""
    return ["--port", "0", "--tls-port", "{port}", "--tls-cert-file", str(tls.cert), "--tls-key-file", str(tls.key),
            "--tls-ca-cert-file", str(tls.ca), "--tls-auth-clients", "no", "--tls-replication", "yes"]


def _tls_client(tls: "TlsFiles | None") -> dict:
    return {"ssl": True, "ssl_ca_certs": str(tls.ca)} if tls else {}


def _in(namespace: str | None) -> list[str]:
    """The command prefix that runs a program in ``namespace`` (``ip netns exec`` execs it: the
    pid is the program's); nothing for this process's own namespace."""
    return ["ip", "netns", "exec", namespace] if namespace else []


class RedisNode(RedisProcess):
    """One redis-server with AOF and a password; it can be SIGKILLed and started again on the same
    port and directory (from its AOF, as an operator's restart would). ``address``: the address it
    binds to, in ``namespace`` (None: this process's); ``master_address``: the master's, for a replica."""

    def __init__(self, directory: Path, replica_of: int | None = None, extra: tuple[str, ...] = (),
                 address: str = LOOPBACK, namespace: str | None = None, master_address: str = LOOPBACK,
                 tls: "TlsFiles | None" = None) -> None:
        self.directory = directory
        self.port = free_port()
        self.tls = tls  # TLS only, on ``port`` (``_tls_args``); None: plain TCP
        self.replica_of = replica_of
        self.extra = extra
        self.address, self.namespace, self.master_address = address, namespace, master_address
        self.process: subprocess.Popen | None = None

    def client(self) -> redis.Redis:
        return redis.Redis(host=self.address, port=self.port, password=PASSWORD, decode_responses=True,
                           socket_timeout=5, **_tls_client(self.tls))

    def start(self) -> "RedisNode":
        self.directory.mkdir(parents=True, exist_ok=True)
        args = [*_in(self.namespace), "redis-server", "--port", str(self.port), "--bind", self.address,
                "--requirepass", PASSWORD, "--masterauth", PASSWORD, "--dir", str(self.directory),
                "--appendonly", "yes", "--appendfsync", "everysec", "--save", "", "--maxmemory-policy", "noeviction",
                *self.extra]
        if self.tls:
            args += [a.format(port=self.port) for a in _tls_args(self.tls)]
        if self.replica_of is not None:  # only on the first start: a restart keeps the role it had
            args += ["--replicaof", self.master_address, str(self.replica_of)]
            self.replica_of = None
        self.process = subprocess.Popen(args, stdout=open(self.directory / "redis.log", "ab"),
                                        stderr=subprocess.STDOUT)
        wait_for(self._ping, 20, f"redis-server on port {self.port}")
        return self

    def role(self) -> str:
        """"master" or "slave" (Redis's word), as the node itself says."""
        return self.client().info("replication")["role"]

    def replication(self) -> dict:
        """The node's INFO replication, or {} while it does not answer, for waits that poll it: a node
        that Sentinel reconfigures has its clients' connections closed (Sentinel sends CLIENT KILL TYPE
        normal with the new role), so a poll at that moment meets "Connection closed by server" (seen);
        a node still loading its AOF answers an error too."""
        try:
            return self.client().info("replication")
        except redis.RedisError:
            return {}


class SentinelNode(RedisProcess):
    """``redis-server sentinel.conf --sentinel`` watching the group's master, with a password.
    ``address``, ``namespace``, ``master_address``: as for ``RedisNode``."""

    def __init__(self, directory: Path, master_port: int, down_after_ms: int, failover_timeout_ms: int,
                 periods: dict[str, int] | None = None, address: str = LOOPBACK, namespace: str | None = None,
                 master_address: str = LOOPBACK, tls: "TlsFiles | None" = None) -> None:
        self.directory = directory
        self.port = free_port()
        self.tls = tls
        self.master_port = master_port
        self.down_after_ms = down_after_ms
        self.failover_timeout_ms = failover_timeout_ms
        self.periods = periods or {}
        self.address, self.namespace, self.master_address = address, namespace, master_address
        self.process: subprocess.Popen | None = None

    def client(self) -> redis.Redis:
        return redis.Redis(host=self.address, port=self.port, password=SENTINEL_PASSWORD, decode_responses=True,
                           socket_timeout=5, **_tls_client(self.tls))

    def start(self) -> "SentinelNode":
        self.directory.mkdir(parents=True, exist_ok=True)
        conf = self.directory / "sentinel.conf"
        conf.write_text("\n".join([
            f"port {self.port}", f"bind {self.address}", f"dir {self.directory}",
            f"requirepass {SENTINEL_PASSWORD}", f"sentinel sentinel-pass {SENTINEL_PASSWORD}",
            f"sentinel monitor {MASTER_NAME} {self.master_address} {self.master_port} 2",
            f"sentinel auth-pass {MASTER_NAME} {PASSWORD}",
            f"sentinel down-after-milliseconds {MASTER_NAME} {self.down_after_ms}",
            f"sentinel failover-timeout {MASTER_NAME} {self.failover_timeout_ms}",
            f"sentinel parallel-syncs {MASTER_NAME} 1", *self._tls_lines(), ""]))
        self.process = subprocess.Popen([*_in(self.namespace), "redis-server", str(conf), "--sentinel"],
                                        stdout=open(self.directory / "sentinel.log", "ab"), stderr=subprocess.STDOUT)
        wait_for(self._ping, 20, f"redis sentinel on port {self.port}")
        if self.periods:
            try:  # Redis 7.0's SENTINEL DEBUG; an older sentinel keeps its own periods (slower, same steps)
                self.client().execute_command("SENTINEL", "DEBUG", *(str(x) for item in self.periods.items()
                                                                     for x in item))
            except redis.ResponseError:
                pass
        return self

    def _tls_lines(self) -> list[str]:
        """``_tls_args`` as sentinel.conf lines (the later ``port 0`` wins over the plain one)."""
        if not self.tls:
            return []
        args = [a.format(port=self.port) for a in _tls_args(self.tls)]
        return [f"{name[2:]} {value}" for name, value in zip(args[::2], args[1::2])]

    def master_port_now(self) -> int | None:
        try:
            address = self.client().execute_command("SENTINEL", "get-master-addr-by-name", MASTER_NAME)
        except redis.RedisError:
            return None
        return int(address[1]) if address else None


# For tests, shorter waits of Sentinel's and Redis's own: Sentinel reads each node's INFO every 10 s
# (1 s once a failover is under way) and waits four publish periods (2 s each) before it turns a
# node that came back as a master into a replica (QUICK_PERIODS, set by SENTINEL DEBUG); a master
# waits 5 s before it streams its data set to a replica that asks for a full sync (QUICK_SYNC, a
# node option: master_extra). With both, a planned failover ends in 3 s instead of 11 s, and an
# old master restarted after a failover is a synced replica in 2 to 3 s instead of 11 to 16 s
# (2-core EPYC, busy).
QUICK_PERIODS = {"info-period": 1000, "publish-period": 500}
QUICK_SYNC = ("--repl-diskless-sync-delay", "0")


class SentinelGroup:
    """A master, its replica and three sentinels (quorum 2). ``periods``: Sentinel's own timer
    periods (``SENTINEL DEBUG``, e.g. ``QUICK_PERIODS``); None keeps Redis's. ``places``: the
    (namespace, address) of the master, the replica and each sentinel, in that order; None: all
    on loopback ports here."""

    def __init__(self, directory: Path, down_after_ms: int = 1000, failover_timeout_ms: int = 4000,
                 master_extra: tuple[str, ...] = (), periods: dict[str, int] | None = None,
                 places: list[tuple[str | None, str]] | None = None, tls: "TlsFiles | None" = None) -> None:
        self.directory = directory
        self.tls = tls
        places = places or [(None, LOOPBACK)] * 5
        assert len(places) == 5, "places: the master, the replica and three sentinels"
        (master_ns, master_address), (replica_ns, replica_address) = places[:2]
        self.master = RedisNode(directory / "a", extra=master_extra, address=master_address, namespace=master_ns,
                                tls=tls)
        self.replica = RedisNode(directory / "b", replica_of=self.master.port, extra=master_extra,
                                 address=replica_address, namespace=replica_ns, master_address=master_address, tls=tls)
        self.sentinels = [SentinelNode(directory / f"s{i}", self.master.port, down_after_ms, failover_timeout_ms,
                                       periods, address=address, namespace=namespace, master_address=master_address,
                                       tls=tls)
                          for i, (namespace, address) in enumerate(places[2:])]

    @property
    def nodes(self) -> list[RedisNode]:
        return [self.master, self.replica]

    def url(self, db: int = 0) -> str:
        """kombu's list form: one sentinel:// URL per sentinel, the Redis password on each."""
        return ";".join(f"sentinel://:{PASSWORD}@{s.address}:{s.port}/{db}" for s in self.sentinels)

    def settings_env(self) -> dict[str, str]:
        env = {"NMT_BROKER_URL": self.url(), "NMT_REDIS_SENTINEL_MASTER": MASTER_NAME,
               "NMT_REDIS_SENTINEL_PASSWORD": SENTINEL_PASSWORD}
        if self.tls:
            env |= {"NMT_REDIS_SENTINEL_TLS": "1", "NMT_REDIS_SENTINEL_CA_CERTS": str(self.tls.ca)}
        return env

    def start(self) -> "SentinelGroup":
        self.master.start()
        self.replica.start()
        wait_for(lambda: self.master.client().info("replication").get("connected_slaves", 0) >= 1, 20,
                 "the replica to connect")
        for sentinel in self.sentinels:
            sentinel.start()
        # Every sentinel knows the replica and the other sentinels before a test may kill the master.
        wait_for(self._all_acquainted, 30, "the sentinels to find the replica and each other")
        return self

    def _all_acquainted(self) -> bool:
        try:
            for sentinel in self.sentinels:
                info = sentinel.client().execute_command("SENTINEL", "master", MASTER_NAME)
                fields = dict(zip(info[::2], info[1::2])) if isinstance(info, list) else info
                if int(fields["num-slaves"]) < 1 or int(fields["num-other-sentinels"]) < 2:
                    return False
            return True
        except redis.RedisError:
            return False

    def master_node(self) -> RedisNode:
        """The node every sentinel names as master now (waits for them to agree)."""
        def agreed() -> int | None:
            ports = {s.master_port_now() for s in self.sentinels}
            return ports.pop() if len(ports) == 1 and None not in ports else None
        port = wait_for(agreed, 30, "the sentinels to agree on the master")
        return next(n for n in self.nodes if n.port == port)

    def wait_failover(self, old: RedisNode, timeout: float = 30) -> RedisNode:
        """After ``old`` died: the promoted node, once every sentinel names it and it says it is master."""
        def promoted() -> RedisNode | None:
            ports = {s.master_port_now() for s in self.sentinels}
            if len(ports) != 1 or old.port in ports or None in ports:
                return None
            node = next(n for n in self.nodes if n.port in ports)
            return node if node.replication().get("role") == "master" else None
        started = time.monotonic()
        node = wait_for(promoted, timeout, "Sentinel to promote the replica")
        self.promotion_seconds = time.monotonic() - started
        return node

    def stop(self) -> None:
        for process in (*self.sentinels, *self.nodes):
            process.stop()


FINAL = ("done", "failed", "cancelled")
# Worker settings for a failover under load: a 12 s visibility timeout (with the backoff it allows)
# and a 2 s sweep stand in for the defaults' 90 s and 30 s, so that a message held by a worker
# when the master died comes back within the 60 s a run is given; jobs above 200 bytes of text
# run on their own (the document path), smaller ones in batches of at most 8.
FAILOVER_WORKERS = {"NMT_LEASE_SECONDS": "3", "NMT_VISIBILITY_TIMEOUT": "12", "NMT_RETRY_BACKOFF_MAX": "3",
                    "NMT_SWEEP_SECONDS": "2", "NMT_REDIS_FAILOVER_SECONDS": "15", "NMT_BATCH_BYTES": "200",
                    "NMT_BATCH_JOBS": "8"}


def failover_jobs(n: int) -> list[dict]:
    """``n`` toy jobs of 1 to 4 sentences (batched), every fifth of 8 (a document of its own), beam 2."""
    from .test_queue_integration import document

    return [{"text": document(8 if i % 5 == 0 else 1 + i % 4, seed=i)[0], "src": "en", "tgt": "de",
             "options": {"beam": 2}} for i in range(n)]


def failover_run(group: SentinelGroup, client, jobs: list[dict], kill_when_done: int,
                 deadline: float = 60.0, fault: Callable[[RedisNode], None] | None = None) -> tuple[dict[str, float], list]:
    """Submit ``jobs`` through ``client`` (a ``TranslationClient`` over the group's sentinels),
    SIGKILL the master (or call ``fault`` with it: a cut of its host's link, say) once
    ``kill_when_done`` of them are done, and follow every job until all
    have ended or three times ``deadline`` seconds after the kill. Returns the figures: jobs done,
    failed, lost (no record on the new master), stuck (not ended by the deadline; and at three
    times it), redone (delivered more
    than once, as the new master's attempt counters say), done before the kill, seconds from the
    kill to the promotion and to the last job's end; and the submitted jobs (``client.Job``), to read
    their results."""
    submitted = client.submit_many(jobs)
    ids = [job.id for job in submitted]
    store = client.store

    def states() -> dict[str, str]:
        try:
            return store.states(ids)
        except redis.RedisError:  # beyond the client's own retries: look again
            return {}

    wait_for(lambda: sum(s == "done" for s in states().values()) >= kill_when_done, 300,
             f"{kill_when_done} jobs to finish before the kill", interval=0.2)
    before = sum(s == "done" for s in states().values())
    old = group.master_node()
    killed = time.monotonic()
    (fault or RedisNode.kill)(old)
    group.wait_failover(old)
    promoted = time.monotonic() - killed
    last: dict[str, str] = {}
    at_deadline: dict[str, str] = {}
    while time.monotonic() - killed < 3 * deadline:  # followed past the deadline, to tell slow from stuck
        last = states() or last
        if time.monotonic() - killed <= deadline:
            at_deadline = last
        if last and all(last[i] in FINAL or last[i] == "unknown" for i in ids):
            break
        time.sleep(0.25)
    ended = time.monotonic() - killed
    if ended <= deadline:
        at_deadline = last
    attempts = store.redis.mget([store.key(i, "attempts", "document") for i in ids])
    figures = {"submitted": len(ids), "done": sum(last.get(i) == "done" for i in ids),
            "failed": sum(last.get(i) in ("failed", "cancelled") for i in ids),
            "lost": sum(last.get(i) == "unknown" for i in ids),
            "stuck": sum(at_deadline.get(i, "queued") not in (*FINAL, "unknown") for i in ids),
            "stuck_at_3x_deadline": sum(last.get(i, "queued") not in (*FINAL, "unknown") for i in ids),
            "redone": sum(int(a or 0) > 1 for a in attempts), "done_before_kill": before,
            "promotion_s": round(promoted, 2), "kill_to_end_s": round(ended, 2)}
    return figures, submitted
