"""The HTTP gateway's cost: N concurrent short text requests through ``nmt serve`` (DeepL's
``/v2/translate``) against the same texts sent straight to the fleet by ``TranslationClient``, in
the same run, on the same fleet.

Starts its own redis-server on a free loopback port, one ``celery -A worker worker`` (one pool
child, one ONNX Runtime thread, the segment cache off so that no pass finds another's translations)
serving ``models/multi30k-en-de``, and ``nmt serve`` on a free loopback port with one API key and
its default settings (access log on). Each pass sends the N texts (Multi30k validation sentences)
at once, one job each:
- gateway: N threads released together by a barrier, each posting one
  ``{"text": [text], "source_lang": "EN", "target_lang": "DE"}`` with ``Authorization:
  DeepL-Auth-Key`` over its own keep-alive connection (``requests``);
- direct (the baseline): one ``TranslationClient.submit_many`` of the N texts, then their states
  polled together on the gateway's own schedule (``api.fleet.POLL_FIRST`` growing 1.5x to
  ``POLL_MAX``) and their results read: the fleet without HTTP, polled as the gateway polls.
A warm-up pass of each comes first (model loaded, connections open); then ``--rounds`` rounds of
one pass each, the order swapped every round.

Reported per path: requests/s (requests over the summed wall time of its passes, first request
sent to last answer), p50/p99 latency, errors (any answer but 200, a failed job, or no answer
within 300 s), whether the
two paths gave the same translations; the gateway's RSS after the warm-up and its peak (VmHWM of
its process, from /proc); the ratios gateway / direct; the CPU model. Stops only the processes it
started, by pid.

    python bench/gateway.py [--requests 200] [--rounds 2] [--bundle models/multi30k-en-de] [--json]
"""
from __future__ import annotations

import argparse
import gzip
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
if str(REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(REPO_ROOT))

from span_fidelity import cpu_model  # noqa: E402  (bench/ is on sys.path when run as a script)

from tests.queue_harness import CeleryWorker, RedisServer, free_port, wait_for  # noqa: E402  (one harness)

DEFAULT_SRC = REPO_ROOT.parent / "shared" / "data" / "multi30k" / "val.en.gz"
KEY = "bench-gateway-key"
TIMEOUT = 300  # seconds a request or a pass may take before it counts as an error


def texts_from(source: Path, count: int) -> list[str]:
    with gzip.open(source, "rt", encoding="utf-8") as f:
        lines = [line.strip() for line in f if line.strip()]
    return [lines[i % len(lines)] for i in range(count)]


class GatewayProcess:
    """``python -m nmt serve`` on a free loopback port, stopped by the pid this script started."""

    def __init__(self, env: dict[str, str], log: Path) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.env, self.log = env, log
        self.process: subprocess.Popen | None = None

    def start(self) -> "GatewayProcess":
        import requests

        env = os.environ.copy() | self.env | {"PYTHONUNBUFFERED": "1"}
        self.process = subprocess.Popen([sys.executable, "-m", "nmt", "serve", "--port", str(self.port)],
                                        cwd=REPO_ROOT, env=env, stdout=open(self.log, "ab"), stderr=subprocess.STDOUT)

        def up() -> bool:
            if self.process.poll() is not None:
                raise RuntimeError(f"nmt serve exited: {self.log.read_text()[-2000:]}")
            try:
                return requests.get(self.url + "/openapi.json", timeout=1).status_code == 200
            except requests.ConnectionError:
                return False

        wait_for(up, 60, f"nmt serve on port {self.port}")
        return self

    def memory_kib(self, field: str) -> int:
        """``VmRSS`` (now) or ``VmHWM`` (peak) of the gateway process, in KiB."""
        for line in Path(f"/proc/{self.process.pid}/status").read_text().splitlines():
            if line.startswith(field + ":"):
                return int(line.split()[1])
        raise RuntimeError(f"no {field} in /proc/{self.process.pid}/status")

    def stop(self) -> None:
        if self.process and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=10)


class GatewaySender:
    """One request through the gateway, as a thread of the pool sends it: (translation or None, error)."""

    def __init__(self, gateway_url: str) -> None:
        self.url = gateway_url + "/v2/translate"
        self.local = threading.local()

    def __call__(self, text: str) -> tuple[str | None, str | None]:
        import requests

        session = getattr(self.local, "session", None)
        if session is None:
            session = self.local.session = requests.Session()
        try:
            answer = session.post(self.url, headers={"Authorization": f"DeepL-Auth-Key {KEY}"},
                                  json={"text": [text], "source_lang": "EN", "target_lang": "DE"}, timeout=TIMEOUT)
        except requests.RequestException as exc:
            return None, type(exc).__name__
        if answer.status_code != 200:
            return None, str(answer.status_code)
        return answer.json()["translations"][0]["text"], None


def gateway_pass(pool: ThreadPoolExecutor, send: GatewaySender, texts: list[str]) -> dict:
    """All ``texts`` at once, one request per thread, released together; wall time, latencies,
    outputs, errors."""
    barrier = threading.Barrier(len(texts))

    def task(text: str):
        barrier.wait()
        started = time.perf_counter()
        output, error = send(text)
        return started, time.perf_counter(), output, error

    results = list(pool.map(task, texts))
    return _pass([r[0] for r in results], [r[1] for r in results], [r[2] for r in results], [r[3] for r in results])


def direct_pass(client, texts: list[str]) -> dict:
    """All ``texts`` submitted at once (``submit_many``: one job each), their states polled on the
    gateway's schedule and their results read: the fleet without HTTP. A job's latency runs from
    the submission of the first to the poll that saw it end."""
    from api.fleet import POLL_FIRST, POLL_MAX

    started = time.perf_counter()
    ids = [job.id for job in client.submit_many([{"text": text, "src": "en", "tgt": "de"} for text in texts])]
    ended: dict[str, tuple[float, str]] = {}
    delay, deadline = POLL_FIRST, started + TIMEOUT
    while len(ended) < len(ids) and time.perf_counter() < deadline:
        states = client.store.states([job_id for job_id in ids if job_id not in ended])
        now = time.perf_counter()
        ended |= {job_id: (now, state) for job_id, state in states.items()
                  if state in ("done", "failed", "cancelled", "unknown")}
        if len(ended) < len(ids):
            time.sleep(delay)
            delay = min(delay * 1.5, POLL_MAX)
    now = time.perf_counter()
    outputs, errors = [], []
    for job_id in ids:
        state = ended.get(job_id, (now, "timeout"))[1]
        result = client.store.result(job_id) if state == "done" else None
        outputs.append(result["text"] if result else None)
        errors.append(None if result else state)
    return _pass([started] * len(ids), [ended.get(job_id, (now, ""))[0] for job_id in ids], outputs, errors)


def _pass(starts: list[float], ends: list[float], outputs: list, errors: list) -> dict:
    kinds: dict[str, int] = {}
    for error in errors:
        if error is not None:
            kinds[error] = kinds.get(error, 0) + 1
    return {"wall": max(ends) - min(starts), "latencies": [e - s for s, e in zip(starts, ends)], "outputs": outputs,
            "errors": kinds}


def summary(passes: list[dict]) -> dict:
    latencies = sorted(x for p in passes for x in p["latencies"])
    errors: dict[str, int] = {}
    for p in passes:
        for code, n in p["errors"].items():
            errors[code] = errors.get(code, 0) + n
    return {"requests": len(latencies), "requests_per_s": round(len(latencies) / sum(p["wall"] for p in passes), 1),
            "p50_ms": round(1000 * statistics.median(latencies), 1),
            "p99_ms": round(1000 * latencies[min(len(latencies) - 1, int(0.99 * len(latencies)))], 1),
            "errors": sum(errors.values()), "errors_by_kind": errors}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--bundle", default=str(REPO_ROOT / "models" / "multi30k-en-de"))
    parser.add_argument("--src", default=str(DEFAULT_SRC), help="gzipped English sentences, one a line")
    parser.add_argument("--requests", type=int, default=200, help="concurrent requests per pass (default 200)")
    parser.add_argument("--rounds", type=int, default=2, help="measured passes of each path (default 2)")
    parser.add_argument("--json", action="store_true", help="print the figures as one JSON line at the end")
    args = parser.parse_args(argv)
    texts = texts_from(Path(args.src), args.requests)

    from client.client import TranslationClient

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        redis_server = RedisServer(root / "redis").start()
        worker = CeleryWorker("bench-gw", {"NMT_BROKER_URL": redis_server.url, "NMT_BUNDLES": args.bundle,
                                           "NMT_THREADS": "1", "NMT_PROVIDER": "cpu", "NMT_CACHE_SIZE": "0"},
                              root, concurrency=1)
        gateway = GatewayProcess({"NMT_BROKER_URL": redis_server.url, "NMT_API_KEYS": KEY}, root / "gateway.log")
        try:
            worker.start()
            gateway.start()
            client, send = TranslationClient(broker_url=redis_server.url), GatewaySender(gateway.url)
            run = {"direct": lambda: direct_pass(client, texts), "gateway": lambda: gateway_pass(pool, send, texts)}
            with ThreadPoolExecutor(max_workers=args.requests) as pool:
                warm = {name: run[name]() for name in ("direct", "gateway")}
                rss_warm = gateway.memory_kib("VmRSS")
                passes: dict[str, list[dict]] = {"direct": [], "gateway": []}
                for r in range(args.rounds):
                    for name in (("direct", "gateway") if r % 2 == 0 else ("gateway", "direct")):
                        passes[name].append(run[name]())
            rss_peak = gateway.memory_kib("VmHWM")
        finally:
            gateway.stop()
            worker.stop()
            redis_server.stop()

    direct, through = summary(passes["direct"]), summary(passes["gateway"])
    outputs = [p["outputs"] for name in ("direct", "gateway") for p in [warm[name], *passes[name]]]
    same = sum(len(set(column)) == 1 and column[0] is not None for column in zip(*outputs))
    figures = {"cpu": cpu_model(), "cores": os.cpu_count(), "bundle": Path(args.bundle).name, "requests": args.requests,
               "rounds": args.rounds, "direct": direct, "gateway": through,
               "ratio_throughput": round(through["requests_per_s"] / direct["requests_per_s"], 3),
               "ratio_p50": round(through["p50_ms"] / direct["p50_ms"], 3),
               "ratio_p99": round(through["p99_ms"] / direct["p99_ms"], 3),
               "gateway_rss_mib": round(rss_warm / 1024, 1), "gateway_peak_rss_mib": round(rss_peak / 1024, 1),
               "identical_outputs": same, "texts": len(texts)}

    print(f"{figures['cpu']}, {figures['cores']} cores; {args.requests} concurrent requests x {args.rounds} rounds, "
          f"{figures['bundle']}, one worker (1 child, 1 thread)")
    print(f"{'path':8} {'req/s':>8} {'p50 ms':>8} {'p99 ms':>8} {'errors':>7}")
    for name, row in (("direct", direct), ("gateway", through)):
        print(f"{name:8} {row['requests_per_s']:8.1f} {row['p50_ms']:8.1f} {row['p99_ms']:8.1f} {row['errors']:7d}"
              + (f"  {row['errors_by_kind']}" if row["errors"] else ""))
    print(f"gateway / direct: throughput {figures['ratio_throughput']:.2f}x, p50 {figures['ratio_p50']:.2f}x, "
          f"p99 {figures['ratio_p99']:.2f}x")
    print(f"gateway RSS {figures['gateway_rss_mib']} MiB after warm-up, peak {figures['gateway_peak_rss_mib']} MiB; "
          f"identical translations on both paths: {same}/{len(texts)}")
    if args.json:
        print(json.dumps(figures))
    return 0 if through["errors"] == 0 and direct["errors"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
