"""``nmt serve [--host 127.0.0.1] [--port 8000]``: the HTTP gateway (DeepL API v2 subset) over the
Celery fleet. Settings: NMT_BROKER_URL and the other NMT_* queue settings, NMT_API_* and
NMT_WEBHOOK_* (docs/api.md)."""
from __future__ import annotations

import argparse
import ipaddress
import sys

DEFAULT_HOST, DEFAULT_PORT = "127.0.0.1", 8000


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser("serve", description=__doc__)
    p.add_argument("--host", default=DEFAULT_HOST,
                   help=f"address to listen on (default {DEFAULT_HOST}: this machine only; another address "
                        "needs NMT_API_KEYS)")
    p.add_argument("--port", type=int, default=DEFAULT_PORT, help=f"TCP port (default {DEFAULT_PORT})")
    p.add_argument("--workers", type=int, default=1, help="gateway processes (default 1); they share quotas and "
                                                          "rates through Redis")
    p.add_argument("--log-level", default="info", choices=("critical", "error", "warning", "info", "debug"),
                   help="log level of the gateway and its access log (default info)")
    p.add_argument("--hash-key", action="store_true",
                   help="print the 'sha256:<hex>' digest of the key read from standard input (for NMT_API_KEYS or "
                        "NMT_API_KEYS_FILE, so the clear key is stored nowhere on the gateway's host) and exit")
    p.set_defaults(handler=run)


def hash_key() -> int:
    from .keys import digest

    key = sys.stdin.readline().rstrip("\r\n")
    if not key:
        print("nmt serve: error: --hash-key reads a key from standard input, and got none", file=sys.stderr)
        return 2
    print(f"sha256:{digest(key)}")
    return 0


def loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _serve_metrics(port: int, host: str) -> None:
    """The metrics endpoint, in this process; the gateway processes count into a shared directory."""
    from . import metrics

    metrics.share_directory()
    from queue_config.jobstore import JobStore
    from queue_config.settings import load_settings

    from .job_records import WATCH
    from .outbox import DUE

    queue = load_settings()
    store = JobStore.for_settings(queue)  # plain Redis or through Sentinel
    metrics.serve(port, host, metrics.WebhookCollector(store.redis, DUE, WATCH))


def run(args: argparse.Namespace) -> int:
    if args.hash_key:
        return hash_key()
    import logging

    import uvicorn

    from queue_config.settings import SettingsError, load_settings

    from .callbacks import AllowList
    from .keys import KeyRing
    from .settings import load_gateway_settings, load_webhook_settings

    try:
        settings = load_gateway_settings()
        keys = KeyRing.from_settings(settings)
        webhooks = AllowList.parse(load_webhook_settings().allow)
        load_settings()
    except SettingsError as exc:
        print(f"nmt serve: error: {exc}", file=sys.stderr)
        return 2
    if not keys.required and not loopback(args.host):
        print(f"nmt serve: error: refusing to listen on {args.host} without API keys: set NMT_API_KEYS or "
              "NMT_API_KEYS_FILE, or listen on 127.0.0.1 behind a proxy that authenticates", file=sys.stderr)
        return 2
    if args.workers < 1:
        print("nmt serve: error: --workers must be >= 1", file=sys.stderr)
        return 2
    logging.basicConfig(level=args.log_level.upper(), format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    if settings.metrics_port:
        _serve_metrics(settings.metrics_port, settings.metrics_host)
    print(f"nmt serve: listening on http://{args.host}:{args.port} ({len(keys) or 'no'} API keys; webhooks "
          f"{'on' if webhooks else 'off'}; OpenAPI at /docs)", file=sys.stderr)
    # The access log is the app's own (api.app.AccessLog): uvicorn's would print query strings, keys included.
    uvicorn.run("api.app:create_app", factory=True, host=args.host, port=args.port, workers=args.workers,
                log_level=args.log_level, access_log=False, server_header=False)
    return 0
