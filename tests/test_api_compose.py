"""The gateway's Docker files (no process here): the compose service runs ``nmt serve`` with known
settings, needs keys, publishes to this host only, and its image installs the ``api`` extra alone."""
from __future__ import annotations

import re
import tomllib

import yaml

from api.settings import PREFIX, WEBHOOK_PREFIX, GatewaySettings, WebhookSettings
from queue_config.settings import QueueSettings

from .conftest import REPO_ROOT

DOCKER = REPO_ROOT / "docker"
GATEWAY = yaml.safe_load((DOCKER / "compose.yaml").read_text())["services"]["gateway"]
EXTRAS = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
SETTINGS = ({f"NMT_{name.upper()}" for name in QueueSettings.__dataclass_fields__}
            | {PREFIX + name.upper() for name in GatewaySettings.__dataclass_fields__}
            | {WEBHOOK_PREFIX + name.upper() for name in WebhookSettings.__dataclass_fields__})


def test_the_gateway_service_runs_nmt_serve_with_known_settings_and_required_keys():
    assert GATEWAY["command"][:2] == ["nmt", "serve"]
    assert set(GATEWAY["environment"]) <= SETTINGS, set(GATEWAY["environment"]) - SETTINGS
    assert GATEWAY["environment"]["NMT_BROKER_URL"].startswith("redis://:")
    assert ":?" in GATEWAY["environment"]["NMT_API_KEYS"]  # compose refuses to start without keys
    assert all(port.startswith("127.0.0.1:") for port in GATEWAY["ports"])


def test_the_gateway_image_installs_the_api_extra_alone_and_checks_the_engine_is_absent():
    text = (DOCKER / GATEWAY["build"]["dockerfile"].removeprefix("docker/")).read_text()
    assert re.findall(r'pip install "\.\[([^\]]+)\]"', text) == ["api"]
    assert not any(dep.startswith(("onnxruntime", "torch", "numpy")) for dep in EXTRAS["api"])
    assert "prometheus-client" in " ".join(EXTRAS["api"])  # the gateway's metrics (api.metrics)
    assert '! python -c "import onnxruntime"' in text
    for source in re.findall(r"^COPY (\S+) ", text, re.M):
        assert (REPO_ROOT / source).exists(), source
    assert 'CMD ["nmt", "serve"' in text
