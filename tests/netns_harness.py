"""Hosts that share nothing but the network, on one machine: a broker host and worker hosts, each in
a network namespace of its own (``ip netns``), joined by veth pairs. The test process stays in the
machine's namespace and reaches the broker host through a veth pair of its own; each worker host
has one veth pair to the broker host and nothing else, so ``cut(host)`` (``ip link set DEV down``
inside that host's namespace) leaves it with no network at all.

    10.R.S.1 (this process) --- 10.R.S.2 broker host 10.R.S.5 --- 10.R.S.6 worker host 1
                                                     10.R.S.9 --- 10.R.S.10 worker host 2 ...

redis-server runs in the broker namespace bound to its veth addresses; each worker is
``ip netns exec NS celery -A worker worker``. Namespace and interface names carry this process's
pid; ``close()`` stops only the processes this harness started (by pid) and deletes only the
namespaces it created.

Where namespaces cannot be made (no CAP_SYS_ADMIN, no ``ip``), ``Hosts`` runs the same topology on
loopback ports instead, says so (``Hosts.note``), and a cut is a SIGSTOP of the worker's process
group (its pid's session) for the same time: the broker sees a host that answers nothing.

``Lan``: hosts on one switch, for a Sentinel group, whose members must all reach each other: a
bridge in a namespace of its own, each host (and this process) joined to it by a veth pair, all
in one 10.R.S.0/24, so that every address a sentinel announces is routable from every host:

    10.R.S.1 (this process) ---+                     +--- 10.R.S.2 Redis master
    10.R.S.7 worker host 1 ----+-- bridge (switch) --+--- 10.R.S.3 Redis replica
    10.R.S.8 worker host 2 ----+                     +--- 10.R.S.4, .5, .6 a sentinel each

``Lan.start_sentinel_group`` starts ``tests/sentinel_harness.py``'s ``SentinelGroup`` with each of
its five servers on a host of its own; ``link_down(host)`` downs that host's one link (on loopback:
a SIGSTOP of its servers and workers, whose kernel still answers for them, so no stand-in for a
lost Redis host). Where namespaces or the bridge cannot be made, ``Lan`` runs on loopback ports
and says so (``Lan.note``).
"""
from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import redis

from .conftest import REPO_ROOT
from .queue_harness import PASSWORD, CeleryWorker, RedisProcess, RedisServer, wait_for
from .sentinel_harness import LOOPBACK, SentinelGroup

REDIS_PORT = 6379  # the broker host's own namespace: nothing else listens there


def ip(*args: str, namespace: str | None = None) -> str:
    """Run ``ip ARGS`` (inside ``namespace`` if given); CalledProcessError with ip's message."""
    command = ["ip", "netns", "exec", namespace, "ip", *args] if namespace else ["ip", *args]
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode:
        raise subprocess.CalledProcessError(done.returncode, command, done.stdout, done.stderr)
    return done.stdout


def _subnet(pid: int) -> str:
    """A 10.R.S.0/24 for this run's links, from its pid, that no address of this machine is in."""
    for step in range(256):
        second, third = 200 + ((pid >> 8) + step) % 50, (pid + step) % 256
        prefix = f"10.{second}.{third}"
        if not ip("-o", "-4", "addr", "show", "to", f"{prefix}.0/24").strip():
            return prefix
    raise RuntimeError("no free 10.200-249.x.0/24 subnet for the test namespaces")


@dataclass
class Host:
    """One host: its namespace (None on loopback), its link's device inside it, and the address
    the broker is reached at from it."""

    name: str
    namespace: str | None
    device: str | None
    broker_address: str
    own_address: str = "127.0.0.1"
    stopped: bool = False  # loopback: its processes are SIGSTOPped (its "link" is down)
    workers: list[CeleryWorker] = field(default_factory=list)
    servers: list[RedisProcess] = field(default_factory=list)  # a Lan host's redis-servers and sentinels


class NetnsRedis(RedisProcess):
    """redis-server in the broker namespace, bound to its veth addresses, with AOF and a password."""

    def __init__(self, directory: Path, namespace: str, addresses: list[str], client_address: str) -> None:
        self.directory, self.namespace, self.addresses = directory, namespace, addresses
        self.client_address = client_address
        self.port = REDIS_PORT
        self.process: subprocess.Popen | None = None

    def url_from(self, address: str) -> str:
        return f"redis://:{PASSWORD}@{address}:{self.port}/0"

    @property
    def url(self) -> str:
        """The broker's URL from the test process."""
        return self.url_from(self.client_address)

    def client(self) -> redis.Redis:
        return redis.Redis.from_url(self.url, decode_responses=True, socket_timeout=5, socket_connect_timeout=5)

    def start(self) -> "NetnsRedis":
        self.directory.mkdir(parents=True, exist_ok=True)
        self.process = subprocess.Popen(
            ["ip", "netns", "exec", self.namespace, "redis-server", "--port", str(self.port),
             "--bind", *self.addresses, "--requirepass", PASSWORD, "--dir", str(self.directory),
             "--appendonly", "yes", "--appendfsync", "everysec", "--save", "", "--maxmemory-policy", "noeviction"],
            stdout=open(self.directory / "redis.log", "ab"), stderr=subprocess.STDOUT)
        wait_for(self._ping, 10, f"redis-server in namespace {self.namespace}")
        return self


class NetnsCeleryWorker(CeleryWorker):
    """``celery -A worker worker`` inside a namespace (``ip netns exec`` execs it: the pid is Celery's)."""

    def __init__(self, namespace: str, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.namespace = namespace

    def start(self, wait: bool = True) -> "NetnsCeleryWorker":
        env = os.environ.copy() | self.env | {"PYTHONUNBUFFERED": "1", "OMP_NUM_THREADS": "1"}
        self.process = subprocess.Popen(
            ["ip", "netns", "exec", self.namespace, sys.executable, "-m", "celery", "-A", "worker", "worker",
             "--loglevel=INFO", "-c", str(self.concurrency), "-n", f"{self.name}@%h", "--without-gossip",
             "--without-mingle"],
            cwd=self.cwd, env=env, stdout=open(self.log, "ab"), stderr=subprocess.STDOUT, start_new_session=True)
        if wait:
            wait_for(lambda: self.ready or self._died(), 60, f"worker {self.name} to be ready")
            assert self.ready, self.log.read_text()[-3000:]
        return self


def _add_namespace(name: str, made: list[str]) -> None:
    """Make network namespace ``name`` with its loopback up, and record it in ``made`` (deleted at teardown)."""
    ip("netns", "add", name)
    made.append(name)
    ip("link", "set", "lo", "up", namespace=name)


class Hosts:
    """A broker host and worker hosts on a network of their own (or on loopback: ``netns`` False)."""

    made = 0  # sets of hosts this process has made

    def __init__(self, directory: Path, force_loopback: bool = False) -> None:
        self.directory = directory
        self.pid = os.getpid()
        self.namespaces: list[str] = []  # created by this harness, deleted by close()
        self.hosts: list[Host] = []
        self.broker: RedisProcess | None = None
        self.note = ""
        self.netns = not force_loopback and self._try_netns()
        if not self.netns:
            self.note = self.note or ("network namespaces asked off: the broker and workers run on loopback ports, and "
                                      "a worker host's network cut is a SIGSTOP of its processes")

    # -- set-up -----------------------------------------------------------------------------
    def _try_netns(self) -> bool:
        Hosts.made += 1
        self.serial = Hosts.made  # a namespace's teardown finishes after `ip netns del` returns: new names each time
        name = f"nmtb{self.serial}-{self.pid}"
        try:
            ip("netns", "add", name)
        except (OSError, subprocess.CalledProcessError) as exc:
            why = getattr(exc, "stderr", None) or str(exc)
            self.note = (f"ip netns add failed ({why.strip()[:200]}): the broker and workers run on loopback ports "
                         "instead, and a worker host's network cut is a SIGSTOP of its processes")
            return False
        self.namespaces.append(name)
        self.prefix = _subnet(self.pid)
        self.broker_ns = name
        ip("link", "set", "lo", "up", namespace=name)
        # this process's link to the broker host: 10.R.S.1 here, 10.R.S.2 there
        self.root_device = f"nr{self.pid}{self.serial}a"
        self._link(self.root_device, None, f"nr{self.pid}{self.serial}b", name, 0)
        return True

    def _link(self, near: str, near_ns: str | None, far: str, far_ns: str, index: int) -> None:
        """A veth pair ``near`` (10.R.S.4i+1, in ``near_ns`` or here) -- ``far`` (10.R.S.4i+2, in ``far_ns``)."""
        ip("link", "add", near, "type", "veth", "peer", "name", far)
        ip("link", "set", far, "netns", far_ns)
        if near_ns:
            ip("link", "set", near, "netns", near_ns)
        ip("addr", "add", f"{self.prefix}.{4 * index + 1}/30", "dev", near, namespace=near_ns)
        ip("addr", "add", f"{self.prefix}.{4 * index + 2}/30", "dev", far, namespace=far_ns)
        ip("link", "set", near, "up", namespace=near_ns)
        ip("link", "set", far, "up", namespace=far_ns)

    def add_worker_host(self, name: str) -> Host:
        """A worker host: its own namespace with one veth pair to the broker host. Hosts are added
        before ``start_broker`` (redis-server binds to the broker's end of every link)."""
        assert self.broker is None, "add worker hosts before starting the broker"
        index = len(self.hosts) + 1
        if not self.netns:
            host = Host(name, None, None, "127.0.0.1")
        else:
            namespace = f"nmtw{self.serial}.{index}-{self.pid}"
            _add_namespace(namespace, self.namespaces)
            device = f"nw{self.pid}{self.serial}.{index}"
            self._link(f"nb{self.pid}{self.serial}.{index}", self.broker_ns, device, namespace, index)
            host = Host(name, namespace, device, f"{self.prefix}.{4 * index + 1}", f"{self.prefix}.{4 * index + 2}")
        self.hosts.append(host)
        return host

    def start_broker(self) -> RedisProcess:
        """redis-server on the broker host, bound to its end of each link (``url``: the test
        process's way to it)."""
        directory = self.directory / "broker"
        if self.netns:
            addresses = [f"{self.prefix}.2"] + [host.broker_address for host in self.hosts]
            self.broker = NetnsRedis(directory, self.broker_ns, addresses, f"{self.prefix}.2").start()
        else:
            self.broker = RedisServer(directory).start()
        return self.broker

    def broker_url(self, host: Host) -> str:
        """The broker's URL as seen from ``host``."""
        assert self.broker is not None
        if isinstance(self.broker, NetnsRedis):
            return self.broker.url_from(host.broker_address)
        return self.broker.url

    def start_worker(self, host: Host, name: str, env: dict[str, str], concurrency: int = 1) -> CeleryWorker:
        """``celery -A worker worker`` on ``host``, with the broker's URL from there and ``env``."""
        env = {"NMT_BROKER_URL": self.broker_url(host)} | env
        if host.namespace:
            worker = NetnsCeleryWorker(host.namespace, name, env, self.directory, concurrency, REPO_ROOT)
        else:
            worker = CeleryWorker(name, env, self.directory, concurrency, REPO_ROOT)
        host.workers.append(worker)
        return worker.start()

    # -- faults -----------------------------------------------------------------------------
    def link_down(self, host: Host) -> None:
        """The host's network cut: ``ip link set DEV down`` in its namespace (loopback: SIGSTOP)."""
        if host.namespace:
            ip("link", "set", host.device, "down", namespace=host.namespace)
        else:
            for worker in host.workers:
                os.killpg(worker.process.pid, signal.SIGSTOP)  # its own session: the worker and its children
            host.stopped = True

    def link_up(self, host: Host) -> None:
        if host.namespace:
            ip("link", "set", host.device, "up", namespace=host.namespace)
        else:
            for worker in host.workers:
                os.killpg(worker.process.pid, signal.SIGCONT)
            host.stopped = False

    def cut(self, host: Host, seconds: float) -> None:
        self.link_down(host)
        try:
            time.sleep(seconds)
        finally:
            self.link_up(host)

    def can_reach_broker(self, host: Host) -> bool:
        """Whether ``host`` reaches the broker's port now (a TCP connect from inside its namespace)."""
        if not host.namespace:
            return not host.stopped
        probe = ("import socket,sys; s=socket.socket(); s.settimeout(1); "
                 f"sys.exit(s.connect_ex(({host.broker_address!r}, {REDIS_PORT})))")
        return subprocess.run(["ip", "netns", "exec", host.namespace, sys.executable, "-c", probe],
                              capture_output=True).returncode == 0

    # -- tear-down --------------------------------------------------------------------------
    def close(self) -> None:
        for host in self.hosts:
            if not host.namespace:
                for worker in host.workers:  # a stopped worker must run again to hear SIGTERM
                    if worker.process and worker.process.poll() is None:
                        os.killpg(worker.process.pid, signal.SIGCONT)
            for worker in host.workers:
                worker.discard()  # at once (SIGKILL to its process group): the tests are over
        if self.broker is not None:
            self.broker.stop()
        if self.netns:  # this end now, with its peer: the namespace's own teardown is asynchronous
            try:
                ip("link", "del", self.root_device)
            except subprocess.CalledProcessError:
                pass
        for namespace in reversed(self.namespaces):  # their veth ends go with them, and the peers too
            try:
                ip("netns", "del", namespace)
            except subprocess.CalledProcessError:
                pass
        self.namespaces.clear()

    def __enter__(self) -> "Hosts":
        return self

    def __exit__(self, *_: object) -> None:
        self.close()


class Lan:
    """Hosts on one switch (a bridge in a namespace of its own), each in a namespace with one veth
    pair to it, all in one /24 with this process (``netns`` False: on loopback ports instead, and
    ``note`` says so). Hosts are made by ``add_host`` or ``start_sentinel_group``."""

    def __init__(self, directory: Path, force_loopback: bool = False) -> None:
        self.directory = directory
        directory.mkdir(parents=True, exist_ok=True)  # the workers' logs
        self.pid = os.getpid()
        self.namespaces: list[str] = []  # created by this harness, deleted by close()
        self.hosts: list[Host] = []
        self.groups: list[SentinelGroup] = []
        self.cut_off: list[Host] = []  # hosts whose link is down now
        self.note = ""
        self.root_device: str | None = None
        self.netns = not force_loopback and self._try_netns()
        if not self.netns:
            self.note = self.note or "network namespaces asked off: the Sentinel group and workers run on loopback ports"

    # -- set-up -----------------------------------------------------------------------------
    def _try_netns(self) -> bool:
        Hosts.made += 1  # one count with Hosts: names are never reused by this process
        self.serial = Hosts.made
        self.switch = f"nmtl{self.serial}-{self.pid}"
        try:
            _add_namespace(self.switch, self.namespaces)
            ip("link", "add", "switch", "type", "bridge", namespace=self.switch)
            ip("link", "set", "switch", "up", namespace=self.switch)
            self.prefix = _subnet(self.pid)
            self.root_device = f"nl{self.pid}{self.serial}a"
            self._plug(self.root_device, None, f"nl{self.pid}{self.serial}b", 1)
        except (OSError, subprocess.CalledProcessError) as exc:
            why = getattr(exc, "stderr", None) or str(exc)
            self.note = (f"a namespace with a bridge could not be made ({why.strip()[:200]}): the Sentinel group and "
                         "workers run on loopback ports instead")
            self._delete_namespaces()
            return False
        return True

    def _plug(self, device: str, namespace: str | None, port: str, index: int) -> str:
        """A veth pair: ``device`` (10.R.S.index/24, in ``namespace`` or here) -- ``port`` (on the switch)."""
        ip("link", "add", device, "type", "veth", "peer", "name", port)
        ip("link", "set", port, "netns", self.switch)
        ip("link", "set", port, "master", "switch", namespace=self.switch)
        ip("link", "set", port, "up", namespace=self.switch)
        if namespace:
            ip("link", "set", device, "netns", namespace)
        address = f"{self.prefix}.{index}"
        ip("addr", "add", f"{address}/24", "dev", device, namespace=namespace)
        ip("link", "set", device, "up", namespace=namespace)
        return address

    def add_host(self, name: str) -> Host:
        """A host: a namespace of its own with one veth pair to the switch (loopback: a name)."""
        index = len(self.hosts) + 2  # .1 is this process
        if not self.netns:
            host = Host(name, None, None, "", LOOPBACK)
        else:
            namespace = f"nmth{self.serial}.{index}-{self.pid}"
            _add_namespace(namespace, self.namespaces)
            device = f"nh{self.pid}{self.serial}.{index}"
            address = self._plug(device, namespace, f"ns{self.pid}{self.serial}.{index}", index)
            host = Host(name, namespace, device, "", address)
        self.hosts.append(host)
        return host

    def start_sentinel_group(self, directory: Path, **options) -> SentinelGroup:
        """A ``SentinelGroup`` (``options``: its keyword arguments) with its master, replica and three
        sentinels on five new hosts, named "redis-master", "redis-replica", "sentinel-1" to "-3"."""
        names = ["redis-master", "redis-replica", "sentinel-1", "sentinel-2", "sentinel-3"]
        hosts = [self.add_host(name) for name in names]
        group = SentinelGroup(directory, places=[(host.namespace, host.own_address) for host in hosts], **options)
        self.groups.append(group)
        for host, server in zip(hosts, [*group.nodes, *group.sentinels]):
            host.servers.append(server)
        return group.start()

    def host_of(self, server: RedisProcess) -> Host:
        return next(host for host in self.hosts if server in host.servers)

    def start_worker(self, host: Host, name: str, env: dict[str, str], concurrency: int = 1,
                     wait: bool = True) -> CeleryWorker:
        """``celery -A worker worker`` on ``host`` with ``env`` (NMT_BROKER_URL included); ``wait``
        False: returns at once (``wait_for(lambda: worker.ready, ...)``)."""
        if host.namespace:
            worker = NetnsCeleryWorker(host.namespace, name, env, self.directory, concurrency, REPO_ROOT)
        else:
            worker = CeleryWorker(name, env, self.directory, concurrency, REPO_ROOT)
        host.workers.append(worker)
        return worker.start(wait)

    # -- faults -----------------------------------------------------------------------------
    def _signal(self, host: Host, number: int) -> None:
        for server in host.servers:
            if server.process and server.process.poll() is None:
                os.kill(server.process.pid, number)
        for worker in host.workers:
            if worker.process and worker.process.poll() is None:
                os.killpg(worker.process.pid, number)  # its own session: the worker and its children

    def link_down(self, host: Host) -> None:
        """The host's network cut: ``ip link set DEV down`` in its namespace; its peers' packets go
        unanswered. On loopback: a SIGSTOP of its servers and workers, whose kernel still answers
        for them (for a redis-server, a hung server rather than a lost host)."""
        if host.namespace:
            ip("link", "set", host.device, "down", namespace=host.namespace)
        else:
            self._signal(host, signal.SIGSTOP)
            host.stopped = True
        self.cut_off.append(host)

    def link_up(self, host: Host) -> None:
        if host.namespace:
            ip("link", "set", host.device, "up", namespace=host.namespace)
        else:
            self._signal(host, signal.SIGCONT)
            host.stopped = False
        self.cut_off.remove(host)

    def connected(self, worker: CeleryWorker, server: RedisProcess) -> set[int]:
        """Pids of ``worker``'s processes (its parent, its pool children) holding an established TCP
        connection to ``server`` now, as ``ss`` sees it in the worker host's namespace."""
        host = next(host for host in self.hosts if worker in host.workers)
        address = getattr(server, "address", LOOPBACK)
        command = ["ss", "-Htnp", "state", "established", "dst", f"{address}:{server.port}"]
        if host.namespace:
            command = ["ip", "netns", "exec", host.namespace, *command]
        out = subprocess.run(command, capture_output=True, text=True, check=True).stdout
        mine = {worker.process.pid, *worker.children()}
        return {int(pid) for pid in re.findall(r"pid=(\d+)", out)} & mine

    # -- tear-down --------------------------------------------------------------------------
    def _delete_namespaces(self) -> None:
        if self.root_device:  # this end now, with its peer: the namespace's own teardown is asynchronous
            try:
                ip("link", "del", self.root_device)
            except subprocess.CalledProcessError:
                pass
            self.root_device = None
        for namespace in reversed(self.namespaces):  # their veth ends go with them, and the peers too
            try:
                ip("netns", "del", namespace)
            except subprocess.CalledProcessError:
                pass
        self.namespaces.clear()

    def close(self) -> None:
        for host in self.hosts:
            if host.stopped:  # a stopped process must run again to hear SIGTERM
                self._signal(host, signal.SIGCONT)
            for worker in host.workers:
                worker.discard()
            if host.namespace and host in self.cut_off:
                for server in host.servers:  # a master cut off from its replica waits 10 s for it on SIGTERM
                    server.kill()
        for group in self.groups:
            group.stop()
        self._delete_namespaces()

    def __enter__(self) -> "Lan":
        return self

    def __exit__(self, *_: object) -> None:
        self.close()
