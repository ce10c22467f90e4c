"""API keys at rest: ``nmt serve --hash-key`` prints a key's digest, ``NMT_API_KEYS_FILE`` holds
digests only (keys in clear are refused with the line named), and a key is accepted by its digest."""
from __future__ import annotations

import hashlib
import os
import subprocess
import sys

import pytest

pytest.importorskip("fastapi")

from api.keys import KeyRing  # noqa: E402
from api.settings import load_gateway_settings  # noqa: E402
from queue_config.settings import SettingsError  # noqa: E402

from .conftest import REPO_ROOT  # noqa: E402
from .queue_harness import free_port  # noqa: E402


def _nmt(*args: str, stdin: str = "", env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "nmt", *args], cwd=REPO_ROOT, input=stdin, capture_output=True,
                          text=True, timeout=60, env=os.environ.copy() | (env or {}))


def test_hash_key_prints_the_digest_of_the_key_on_standard_input():
    out = _nmt("serve", "--hash-key", stdin="s3cret-key\n")
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "sha256:" + hashlib.sha256(b"s3cret-key").hexdigest()
    empty = _nmt("serve", "--hash-key", stdin="")
    assert empty.returncode == 2 and "standard input" in empty.stderr


def test_a_keys_file_of_digests_adds_its_keys(tmp_path):
    path = tmp_path / "keys"
    path.write_text(f"# gateway keys\n\nsha256:{hashlib.sha256(b'from-file').hexdigest()}  # team a\n"
                    f"SHA256:{hashlib.sha256(b'second').hexdigest().upper()}\n")
    ring = KeyRing.from_settings(load_gateway_settings({"NMT_API_KEYS": "from-env",
                                                        "NMT_API_KEYS_FILE": str(path)}))
    assert len(ring) == 3 and ring.required
    assert all(ring.identify(k) for k in ("from-env", "from-file", "second"))
    assert ring.identify("sha256:" + hashlib.sha256(b"from-file").hexdigest()) is None  # a digest is no key
    assert ring.identify("other") is None and ring.identify(None) is None


@pytest.mark.parametrize("text, problem", [
    ("# nothing\n", "holds no key digest"),
    (f"sha256:{'a' * 64}\nplain-key\n", "line 2: not a 'sha256:<64 hex digits>' digest"),
    ("sha256:abc\n", "line 1"),
])
def test_a_keys_file_that_holds_no_digest_or_a_clear_key_is_refused(tmp_path, text, problem):
    path = tmp_path / "keys"
    path.write_text(text)
    with pytest.raises(SettingsError, match=problem) as caught:
        KeyRing.from_settings(load_gateway_settings({"NMT_API_KEYS_FILE": str(path)}))
    assert "plain-key" not in str(caught.value)  # a key in clear is never echoed


def test_serve_names_a_missing_or_bad_keys_file_and_starts_nothing(tmp_path):
    missing = _nmt("serve", "--port", str(free_port()), env={"NMT_API_KEYS_FILE": str(tmp_path / "none")})
    assert missing.returncode == 2 and "NMT_API_KEYS_FILE: cannot read" in missing.stderr
    clear = tmp_path / "keys"
    clear.write_text("my-clear-key\n")
    bad = _nmt("serve", "--host", "0.0.0.0", "--port", str(free_port()), env={"NMT_API_KEYS_FILE": str(clear)})
    assert bad.returncode == 2 and "line 1" in bad.stderr and "my-clear-key" not in bad.stderr
