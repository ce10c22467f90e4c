"""A RabbitMQ node of the tests' own, on free loopback ports, for the RabbitMQ broker tests.

Never the machine's RabbitMQ (127.0.0.1:5672): the node has its own name (``nmt-test-<port>@localhost``),
AMQP and distribution ports, database, logs, plugins file (none enabled), configuration, environment
file (the system's ``/etc/rabbitmq/rabbitmq-env.conf`` is not read) and Erlang cookie (``HOME`` is its
directory); only the system's epmd (port 4369) is shared. It is started from
``/usr/lib/rabbitmq/bin/rabbitmq-server`` (Debian's ``/usr/sbin`` wrapper would switch to the
``rabbitmq`` user), waited for until it accepts AMQP logins, and stopped by the pid this harness
started (SIGTERM: the script stops the Erlang VM and waits for it; SIGKILL after 30 s).

``kill`` crashes the node (SIGKILL to the script and every process of its process group and pid
tree: the Erlang VM and its helpers, never the shared epmd, which runs in a session of its own) and
``restart`` starts it again on the same ports, name and database directory: what it had written
to disk (quorum queues, durable exchanges and bindings, users) is all that comes back.

``consumer_timeout_ms`` and ``channel_tick_ms`` set how long a delivery may stay unacknowledged on
a channel and how often each channel looks (``rabbitmq.conf``'s ``consumer_timeout``; the
``channel_tick_interval`` of ``advanced.config``, 60 s by default in 3.10). ``tls`` (a
``TlsFiles``, made by ``make_tls``) adds a TLS listener on ``tls_port`` (``tls_url``) beside the
plain one, which the harness itself uses.
"""
from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

import datetime
import ipaddress
from dataclasses import dataclass

import amqp
import pytest

from queue_config.names import batch_queue_for, chunk_queue_for, queue_for

from .conftest import REPO_ROOT
from .queue_harness import RedisServer, free_port, wait_for

SERVER = "/usr/lib/rabbitmq/bin/rabbitmq-server"
CTL = "/usr/lib/rabbitmq/bin/rabbitmqctl"
USER = "nmt"
PASSWORD = "rabbit-secret"


@dataclass(frozen=True)
class TlsFiles:
    """PEM files of a test CA and a server certificate it signed (``make_tls``)."""
    ca: Path
    cert: Path
    key: Path


def make_tls(directory: Path, name: str = "nmt test CA",
             hosts: tuple[str, ...] = ("127.0.0.1", "localhost")) -> TlsFiles:
    """A self-signed CA (``ca.pem``) and a server certificate for ``hosts`` (IP addresses and DNS
    names in its subjectAltName) signed by it, in ``directory``; made with ``cryptography``."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

    directory.mkdir(parents=True, exist_ok=True)
    now = datetime.datetime.now(datetime.timezone.utc)
    ca_key, key = ec.generate_private_key(ec.SECP256R1()), ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)])
    ca = (x509.CertificateBuilder().subject_name(ca_name).issuer_name(ca_name).public_key(ca_key.public_key())
          .serial_number(x509.random_serial_number()).not_valid_before(now - datetime.timedelta(hours=1))
          .not_valid_after(now + datetime.timedelta(days=2))
          .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
          .add_extension(x509.KeyUsage(digital_signature=True, key_cert_sign=True, crl_sign=True,
                                       content_commitment=False, key_encipherment=False, data_encipherment=False,
                                       key_agreement=False, encipher_only=False, decipher_only=False), critical=True)
          .add_extension(x509.SubjectKeyIdentifier.from_public_key(ca_key.public_key()), critical=False)
          .sign(ca_key, hashes.SHA256()))
    names = []
    for host in hosts:
        try:
            names.append(x509.IPAddress(ipaddress.ip_address(host)))
        except ValueError:
            names.append(x509.DNSName(host))
    cert = (x509.CertificateBuilder().subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, hosts[0])]))
            .issuer_name(ca_name).public_key(key.public_key()).serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(hours=1)).not_valid_after(now + datetime.timedelta(days=2))
            .add_extension(x509.SubjectAlternativeName(names), critical=False)
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
            .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
            .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()), critical=False)
            .sign(ca_key, hashes.SHA256()))
    files = TlsFiles(directory / "ca.pem", directory / "server.pem", directory / "server.key")
    files.ca.write_bytes(ca.public_bytes(serialization.Encoding.PEM))
    files.cert.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    files.key.write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                            serialization.NoEncryption()))
    return files


class RabbitNode:
    """One RabbitMQ node in ``directory``; ``url`` reaches its default virtual host as ``USER``."""

    def __init__(self, directory: Path, consumer_timeout_ms: int = 1_800_000, heartbeat: int | None = None,
                 channel_tick_ms: int | None = None, tls: TlsFiles | None = None) -> None:
        self.directory = directory
        self.port = free_port()
        self.dist_port = free_port()
        self.tls_port = free_port() if tls else None
        self.name = f"nmt-test-{self.port}@localhost"
        self.consumer_timeout_ms = consumer_timeout_ms
        self.heartbeat = heartbeat  # the heartbeat (s) the node proposes; None: RabbitMQ's default (60)
        self.channel_tick_ms = channel_tick_ms  # how often a channel checks consumer_timeout; None: 60 s
        self.tls = tls
        self.process: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"amqp://{USER}:{PASSWORD}@127.0.0.1:{self.port}//"

    @property
    def tls_url(self) -> str:
        """``amqps://`` to the TLS listener (a node made with ``tls``)."""
        assert self.tls_port, "the node has no TLS listener"
        return f"amqps://{USER}:{PASSWORD}@127.0.0.1:{self.tls_port}//"

    @property
    def log(self) -> Path:
        return self.directory / "log" / f"{self.name}.log"

    def start(self, timeout: float = 90) -> "RabbitNode":
        if not os.access(SERVER, os.X_OK):
            pytest.fail(f"{SERVER} not found: install Debian's rabbitmq-server (apt-get install rabbitmq-server)")
        self.directory.mkdir(parents=True, exist_ok=True)
        config = self.directory / "rabbitmq.conf"
        config.write_text(f"listeners.tcp.default = 127.0.0.1:{self.port}\n"
                          f"default_user = {USER}\ndefault_pass = {PASSWORD}\n"
                          f"consumer_timeout = {self.consumer_timeout_ms}\n"
                          "log.console = false\nlog.file.level = info\n"
                          + (f"heartbeat = {self.heartbeat}\n" if self.heartbeat is not None else "")
                          + (f"listeners.ssl.default = 127.0.0.1:{self.tls_port}\n"
                             f"ssl_options.cacertfile = {self.tls.ca}\nssl_options.certfile = {self.tls.cert}\n"
                             f"ssl_options.keyfile = {self.tls.key}\nssl_options.verify = verify_none\n"
                             "ssl_options.fail_if_no_peer_cert = false\n" if self.tls else ""))
        advanced = self.directory / "advanced.config"
        if self.channel_tick_ms is not None:
            advanced.write_text(f"[{{rabbit, [{{channel_tick_interval, {self.channel_tick_ms}}}]}}].\n")
        elif advanced.exists():
            advanced.unlink()
        (self.directory / "enabled_plugins").write_text("[].\n")
        (self.directory / "rabbitmq-env.conf").write_text("")
        env = {k: v for k, v in os.environ.items() if not k.startswith(("RABBITMQ_", "ERL_"))} | {
            "HOME": str(self.directory),  # its own Erlang cookie
            "RABBITMQ_NODENAME": self.name,
            "RABBITMQ_NODE_IP_ADDRESS": "127.0.0.1",
            "RABBITMQ_NODE_PORT": str(self.port),
            "RABBITMQ_DIST_PORT": str(self.dist_port),
            "RABBITMQ_MNESIA_BASE": str(self.directory / "mnesia"),
            "RABBITMQ_LOG_BASE": str(self.directory / "log"),
            "RABBITMQ_ENABLED_PLUGINS_FILE": str(self.directory / "enabled_plugins"),
            "RABBITMQ_CONFIG_FILE": str(config),
            "RABBITMQ_ADVANCED_CONFIG_FILE": str(advanced),  # absent: none
            "RABBITMQ_CONF_ENV_FILE": str(self.directory / "rabbitmq-env.conf"),
            "RABBITMQ_PID_FILE": str(self.directory / "rabbitmq.pid"),
            # distribution on loopback only; two schedulers are enough for a test node on 2 cores
            "RABBITMQ_SERVER_ADDITIONAL_ERL_ARGS": "-kernel inet_dist_use_interface {127,0,0,1} +S 2:2",
            "ERL_EPMD_ADDRESS": "127.0.0.1",
        }
        self.process = subprocess.Popen([SERVER], cwd=self.directory, env=env, start_new_session=True,
                                        stdout=open(self.directory / "server.out", "ab"), stderr=subprocess.STDOUT)
        try:
            wait_for(lambda: self._accepts() or self.process.poll() is not None, timeout, f"RabbitMQ node {self.name}",
                     interval=0.2)
        except TimeoutError:
            self.stop()
            raise
        if self.process.poll() is not None:
            raise RuntimeError(f"RabbitMQ node {self.name} exited: {self._output()}")
        return self

    def _accepts(self) -> bool:
        try:
            connection = amqp.Connection(f"127.0.0.1:{self.port}", userid=USER, password=PASSWORD, connect_timeout=2)
            connection.connect()
            connection.close()
            return True
        except (OSError, amqp.exceptions.AMQPError):
            return False

    def _output(self) -> str:
        text = (self.directory / "server.out").read_text(errors="replace")[-3000:]
        return text + (self.log.read_text(errors="replace")[-3000:] if self.log.exists() else "")

    def queue_depths(self, *queues: str) -> dict[str, tuple[int, int]]:
        """``{queue: (messages ready, consumers)}`` by a passive declare (an absent queue: (0, 0))."""
        depths = {}
        connection = amqp.Connection(f"127.0.0.1:{self.port}", userid=USER, password=PASSWORD)
        connection.connect()
        try:
            for queue in queues:
                channel = connection.channel()
                try:
                    _, ready, consumers = channel.queue_declare(queue, passive=True)
                    depths[queue] = (ready, consumers)
                    channel.close()
                except amqp.exceptions.NotFound:
                    depths[queue] = (0, 0)
        finally:
            connection.close()
        return depths

    def eval(self, expression: str, timeout: float = 60) -> str:
        """Evaluate an Erlang expression on the running node (``rabbitmqctl eval``, with the node's
        own cookie); its printed value."""
        env = {k: v for k, v in os.environ.items() if not k.startswith(("RABBITMQ_", "ERL_"))} | {
            "HOME": str(self.directory), "ERL_EPMD_ADDRESS": "127.0.0.1"}
        done = subprocess.run([CTL, "-n", self.name, "eval", expression], env=env, capture_output=True, text=True,
                              timeout=timeout)
        if done.returncode:
            raise RuntimeError(f"rabbitmqctl eval {expression!r} on {self.name}: {done.stdout}{done.stderr}")
        return done.stdout.strip()

    def set_consumer_timeout(self, ms: int) -> None:
        """``consumer_timeout`` at run time: channels opened from now on close when a delivery stays
        unacknowledged for ``ms`` (a channel reads it when it opens; rabbitmq.conf sets it at start)."""
        self.eval(f"application:set_env(rabbit, consumer_timeout, {int(ms)}).")

    def processes(self) -> list[int]:
        """Pids of the node's processes: the script this harness started, its process group (the
        script runs in a session of its own) and its pid tree (the VM, ``erl_child_setup``, ...)."""
        if self.process is None:
            return []
        root = self.process.pid
        pids = {root} | {int(p) for p in _pgrep("-g", str(root))}
        todo = [root]
        while todo:
            for child in map(int, _pgrep("-P", str(todo.pop()))):
                if child not in pids:
                    pids.add(child)
                    todo.append(child)
        return sorted(pid for pid in pids if _alive(pid) and _command(pid) != "epmd")

    def kill(self, timeout: float = 15) -> list[int]:
        """Crash the node: SIGKILL to every process of ``processes`` at once, waited for until all
        are gone (no clean shutdown: nothing is flushed or closed). Returns the pids killed."""
        pids = self.processes()
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        self.process.wait(timeout=timeout)
        wait_for(lambda: not any(_alive(pid) for pid in pids), timeout, f"the processes of {self.name} to end")
        return pids

    def restart(self, timeout: float = 90) -> "RabbitNode":
        """Start the node again after ``kill`` or ``stop``: the same ports, name and database."""
        assert self.process is None or self.process.poll() is not None, "the node is still running"
        return self.start(timeout)

    def stop(self) -> None:
        """SIGTERM to the script this harness started (it stops the VM and waits); SIGKILL to the
        script and its VM (its only child) if that takes over 30 s."""
        if self.process is None or self.process.poll() is not None:
            return
        children = subprocess.run(["pgrep", "-P", str(self.process.pid)], capture_output=True, text=True).stdout.split()
        self.process.send_signal(signal.SIGTERM)
        try:
            self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            for pid in [self.process.pid, *map(int, children)]:
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            self.process.wait(timeout=10)
        deadline = time.monotonic() + 10
        for pid in map(int, children):  # the VM this script started, if it outlived the script
            while time.monotonic() < deadline and _alive(pid):
                time.sleep(0.1)
            if _alive(pid):
                os.kill(pid, signal.SIGKILL)


def _alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie, dead but not yet reaped by its parent, does not)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"


def _pgrep(*args: str) -> list[str]:
    return subprocess.run(["pgrep", *args], capture_output=True, text=True).stdout.split()


def _command(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/comm").read_text().strip()
    except OSError:
        return ""


@pytest.fixture(scope="module")
def rabbit_node(tmp_path_factory):
    """One node for a test file (a node takes seconds to start)."""
    node = RabbitNode(tmp_path_factory.mktemp("rabbitmq")).start()
    yield node
    node.stop()


BUNDLE = REPO_ROOT / "models" / "en-de"
QUEUES = (queue_for("en", "de"), batch_queue_for("en", "de"), chunk_queue_for("en", "de"))  # the pair's three


def worker_settings(broker_url: str, result_backend: str, /, **env) -> dict[str, str]:
    """A test worker's settings on ``broker_url`` with ``result_backend`` as its job store: the shipped
    bundle, short leases, back-off and visibility timeout, one thread; ``env`` adds or overrides ``NMT_<KEY>``s
    (``broker_url=`` included)."""
    return {"NMT_BROKER_URL": broker_url, "NMT_RESULT_BACKEND": result_backend, "NMT_BUNDLES": str(BUNDLE),
            "NMT_LEASE_SECONDS": "3", "NMT_RETRY_BACKOFF_MAX": "2", "NMT_VISIBILITY_TIMEOUT": "10",
            "NMT_THREADS": "1"} | {f"NMT_{k.upper()}": str(v) for k, v in env.items()}


@pytest.fixture(scope="module")
def job_store(tmp_path_factory):
    """The job store (a redis-server of the file's own) beside the RabbitMQ broker."""
    server = RedisServer(tmp_path_factory.mktemp("jobstore")).start()
    yield server
    server.stop()
