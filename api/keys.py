"""API keys, held only as SHA-256 digests and compared in constant time. A key is named in Redis
and in logs by its key id (the first 12 hex digits of its digest), never by itself."""
from __future__ import annotations

import hashlib
import hmac
import re
from pathlib import Path

from queue_config.settings import SettingsError

ANONYMOUS = "anonymous"  # the key id of every request when no keys are configured
_DIGEST = re.compile(r"^sha256:([0-9a-f]{64})$")


def digest(key: str) -> str:
    return hashlib.sha256(key.encode("utf-8")).hexdigest()


def key_id(hex_digest: str) -> str:
    return hex_digest[:12]


class KeyRing:
    """The keys a gateway accepts (``NMT_API_KEYS``: keys in clear or ``sha256:<hex>`` digests;
    ``NMT_API_KEYS_FILE``: a file of digests, one a line)."""

    @classmethod
    def from_settings(cls, settings) -> "KeyRing":
        """The keys of ``NMT_API_KEYS`` and of the file ``NMT_API_KEYS_FILE`` names (api.settings)."""
        ring = cls(settings.keys)
        if settings.keys_file:
            ring._digests += read_keys_file(Path(settings.keys_file))
        return ring

    def __init__(self, spec: str) -> None:
        digests = []
        for entry in (part.strip() for part in spec.split(",")):
            if not entry:
                continue
            match = _DIGEST.match(entry.lower()) if entry.lower().startswith("sha256:") else None
            if entry.lower().startswith("sha256:") and match is None:
                raise SettingsError("NMT_API_KEYS: an entry starting 'sha256:' must be followed by 64 hex digits")
            digests.append(match.group(1) if match else digest(entry))
        self._digests = tuple(digests)

    @property
    def required(self) -> bool:
        return bool(self._digests)

    def __len__(self) -> int:
        return len(self._digests)

    def identify(self, key: str | None) -> str | None:
        """The key id of a valid ``key`` (``ANONYMOUS`` when no keys are configured), else None."""
        if not self._digests:
            return ANONYMOUS
        if not key:
            return None
        candidate = digest(key)
        found = None
        for known in self._digests:  # every digest is compared: the time taken says nothing of which matched
            if hmac.compare_digest(candidate, known):
                found = known
        return key_id(found) if found else None


def read_keys_file(path: Path) -> tuple[str, ...]:
    """The digests in a keys file: one ``sha256:<hex>`` a line (``printf %s KEY | sha256sum``, or
    ``nmt serve --hash-key``); blank lines and ``#`` comments are skipped. Keys in clear are refused:
    the file holds digests only, so the clear keys live nowhere on the gateway's host."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise SettingsError(f"NMT_API_KEYS_FILE: cannot read {path}: {exc}") from None
    digests = []
    for number, line in enumerate(text.splitlines(), 1):
        entry = line.split("#", 1)[0].strip()
        if not entry:
            continue
        match = _DIGEST.match(entry.lower())
        if match is None:
            raise SettingsError(f"NMT_API_KEYS_FILE: {path}, line {number}: not a 'sha256:<64 hex digits>' digest "
                                "(the file holds digests, never keys in clear: nmt serve --hash-key prints one)")
        digests.append(match.group(1))
    if not digests:
        raise SettingsError(f"NMT_API_KEYS_FILE: {path} holds no key digest")
    return tuple(digests)
