"""Docker files (no engine here): the compose file parses, its services run the project's real entry
points with real settings, and the images install the project's own extras without torch."""
from __future__ import annotations

import re
import tomllib

import pytest
import yaml

from queue_config.settings import QueueSettings

from .conftest import REPO_ROOT

DOCKER = REPO_ROOT / "docker"
COMPOSE = yaml.safe_load((DOCKER / "compose.yaml").read_text())
EXTRAS = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
SETTINGS = {f"NMT_{name.upper()}" for name in QueueSettings.__dataclass_fields__}


def test_compose_has_redis_workers_and_flower():
    assert {"redis", "worker-cpu", "worker-gpu", "flower"} <= set(COMPOSE["services"])


def test_redis_runs_with_aof_password_and_noeviction():
    command = COMPOSE["services"]["redis"]["command"]
    for flag in ("--appendonly yes", "--appendfsync everysec", "--maxmemory-policy noeviction", "--requirepass"):
        assert flag in command


@pytest.mark.parametrize("service", ["worker-cpu", "worker-gpu"])
def test_workers_run_celery_on_the_worker_package_with_known_settings(service):
    spec = COMPOSE["services"][service]
    assert spec["command"][:4] == ["celery", "-A", "worker", "worker"]
    assert set(spec["environment"]) <= SETTINGS, set(spec["environment"]) - SETTINGS
    assert spec["environment"]["NMT_BROKER_URL"].startswith("redis://:")  # password in the URL
    assert (REPO_ROOT / spec["build"]["context"].replace("..", ".") / spec["build"]["dockerfile"]).is_file()


def test_gpu_worker_requires_cuda_and_reserves_a_gpu():
    spec = COMPOSE["services"]["worker-gpu"]
    assert spec["environment"]["NMT_PROVIDER"] == "cuda"
    assert spec["deploy"]["resources"]["reservations"]["devices"][0]["capabilities"] == ["gpu"]


@pytest.mark.parametrize("dockerfile", ["worker-cpu.Dockerfile", "worker-gpu.Dockerfile"])
def test_images_install_the_worker_extra_and_no_torch(dockerfile):
    text = (DOCKER / dockerfile).read_text()
    installs = re.findall(r'pip install "\.\[([^\]]+)\]"', text)
    assert installs, "the image must install the project itself"
    for extras in installs:
        for extra in extras.replace("${EXTRAS}", "worker").split(","):
            assert extra in EXTRAS
            assert not any(dep.startswith("torch") for dep in EXTRAS[extra])
    assert "import torch" in text  # the build asserts torch is absent
    for source in re.findall(r"^COPY (\S+) ", text, re.M):
        if source not in ("pyproject.toml", "models"):
            assert (REPO_ROOT / source).exists(), source
    assert 'CMD ["celery", "-A", "worker", "worker"' in text


def test_gpu_image_uses_cuda_13_and_onnxruntime_gpu():
    text = (DOCKER / "worker-gpu.Dockerfile").read_text()
    assert re.search(r"^FROM nvidia/cuda:13\.\d+\.\d+-cudnn-runtime", text, re.M)
    assert "onnxruntime-gpu" in text and "CUDAExecutionProvider" in text


def test_flower_uses_the_monitor_extra():
    spec = COMPOSE["services"]["flower"]
    assert spec["command"][:4] == ["celery", "-A", "worker", "flower"]
    assert "monitor" in spec["build"]["args"]["EXTRAS"] and "flower" in EXTRAS["monitor"][0]


def test_flower_needs_a_password_and_listens_on_this_host_only():
    spec = COMPOSE["services"]["flower"]
    assert any(arg.startswith("--basic-auth=") and "NMT_FLOWER_PASSWORD:?" in arg for arg in spec["command"])
    assert all(port.startswith("127.0.0.1:") for port in spec["ports"])


def test_gpu_extra_is_the_worker_extra_with_the_cuda_runtime():
    assert "onnxruntime-gpu>=1.20" in EXTRAS["gpu"] and not any(d.startswith("onnxruntime>") for d in EXTRAS["gpu"])
    assert {d for d in EXTRAS["worker"] if not d.startswith("onnxruntime")} <= set(EXTRAS["gpu"])
