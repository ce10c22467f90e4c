"""Webhook callback URLs and signatures. A callback URL is accepted only when its host is on the
operator's allow-list (``NMT_WEBHOOK_ALLOW``), so a key holder cannot make the gateway call into
the operator's network. Each delivery is signed as Stripe signs its webhooks:

    NMT-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256(secret, "<t>.<body>")>
"""
from __future__ import annotations

import hashlib
import hmac
import ipaddress
import time
from dataclasses import dataclass
from urllib.parse import urlsplit

from queue_config.settings import SettingsError

from .errors import ApiError

SIGNATURE_HEADER = "NMT-Signature"
EVENT_HEADER = "NMT-Event-Id"
ATTEMPT_HEADER = "NMT-Delivery-Attempt"  # 1 for the first attempt
MAX_URL = 2048


@dataclass(frozen=True)
class AllowList:
    """Hosts (exact names), ``*.`` wildcards (any subdomain) and IP networks a callback may name."""
    names: frozenset[str]
    suffixes: tuple[str, ...]  # ".example.com" for "*.example.com"
    networks: tuple[ipaddress.IPv4Network | ipaddress.IPv6Network, ...]

    @classmethod
    def parse(cls, spec: str) -> "AllowList":
        names, suffixes, networks = set(), [], []
        for entry in (part.strip().lower().rstrip(".") for part in spec.split(",")):
            if not entry:
                continue
            if entry.startswith("*."):
                if "*" in entry[2:] or "." not in entry[2:]:
                    raise SettingsError(f"NMT_WEBHOOK_ALLOW: {entry!r}: a wildcard covers the subdomains of a "
                                        "domain of at least two labels, e.g. '*.hooks.example.com'")
                suffixes.append(entry[1:])
                continue
            if "*" in entry or "/" in entry and not _network(entry):
                raise SettingsError(f"NMT_WEBHOOK_ALLOW: {entry!r} is not a host, '*.domain', IP address or network")
            network = _network(entry)
            if network is not None:
                networks.append(network)
            else:
                names.add(entry)
        return cls(frozenset(names), tuple(suffixes), tuple(networks))

    def __bool__(self) -> bool:
        return bool(self.names or self.suffixes or self.networks)

    def allows(self, host: str) -> bool:
        host = host.lower().rstrip(".")
        try:
            address = ipaddress.ip_address(host)
        except ValueError:
            return host in self.names or any(host.endswith(suffix) for suffix in self.suffixes)
        return any(address in network for network in self.networks)


def _network(entry: str) -> ipaddress.IPv4Network | ipaddress.IPv6Network | None:
    try:
        return ipaddress.ip_network(entry, strict=False)
    except ValueError:
        return None


def check_callback(url: str, allow: AllowList) -> str:
    """``url`` if it may receive webhooks: http(s), no user info, a host on the allow-list;
    else ``ApiError`` 400 saying why."""
    if not allow:
        raise ApiError(400, "Webhooks are off on this server: callback_url needs its host on NMT_WEBHOOK_ALLOW, "
                            "which is empty")
    if len(url) > MAX_URL or any(ch.isspace() or ord(ch) < 32 for ch in url):
        raise ApiError(400, f"callback_url must be a URL of at most {MAX_URL} characters without spaces")
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 -- raises ValueError for a port out of range
    except ValueError:
        raise ApiError(400, "callback_url is not a valid URL") from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ApiError(400, "callback_url must be an http:// or https:// URL with a host")
    if "@" in parts.netloc:
        raise ApiError(400, "callback_url must not hold a user name or password")
    if not allow.allows(parts.hostname):
        raise ApiError(400, f"callback_url's host {parts.hostname!r} is not on this server's webhook allow-list "
                            "(NMT_WEBHOOK_ALLOW)")
    return url


def sign(secret: str, body: bytes, timestamp: int | None = None) -> str:
    """The NMT-Signature header's value for ``body`` sent at ``timestamp`` (now if None)."""
    timestamp = int(time.time()) if timestamp is None else timestamp
    mac = hmac.new(secret.encode("utf-8"), f"{timestamp}.".encode("ascii") + body, hashlib.sha256).hexdigest()
    return f"t={timestamp},v1={mac}"


def verify(secret: str, header: str, body: bytes, tolerance: float = 300.0, now: float | None = None) -> bool:
    """What a receiver checks: a v1 signature of ``body`` made with ``secret`` no more than
    ``tolerance`` seconds ago (replays of older deliveries fail)."""
    fields = [part.split("=", 1) for part in header.split(",") if "=" in part]
    stamps = [value for name, value in fields if name.strip() == "t"]
    if len(stamps) != 1 or not stamps[0].strip().isdigit():
        return False
    timestamp = int(stamps[0])
    if abs((time.time() if now is None else now) - timestamp) > tolerance:
        return False
    expected = sign(secret, body, timestamp).split("v1=", 1)[1]
    return any(name.strip() == "v1" and hmac.compare_digest(value.strip(), expected) for name, value in fields)
