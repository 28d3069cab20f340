"""The container files are valid: hadolint passes the Dockerfile and
`docker-compose config` accepts the compose file (no Docker engine runs here)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent


def _tool(name: str) -> str:
    path = BIN / name
    found = str(path) if path.exists() else shutil.which(name)
    assert found, f"{name} is not installed: it comes with the test extras"
    return found


def test_dockerfile_passes_hadolint() -> None:
    res = subprocess.run([_tool("hadolint"), str(ROOT / "Dockerfile")], capture_output=True, text=True)
    assert res.returncode == 0, res.stdout + res.stderr


def test_dockerfile_runs_as_non_root_with_a_healthcheck() -> None:
    text = (ROOT / "Dockerfile").read_text()
    assert "FROM python:3.11-slim" in text
    assert "\nUSER 10001:10001" in text and "useradd" in text
    assert "HEALTHCHECK" in text and "/healthz" in text
    assert "app.main:app" in text


def test_compose_file_is_valid() -> None:
    res = subprocess.run(
        [_tool("docker-compose"), "-f", str(ROOT / "docker-compose.yml"), "config"],
        capture_output=True, text=True, cwd=ROOT,
    )
    assert res.returncode == 0, res.stdout + res.stderr
    assert "8000" in res.stdout and "cardboard" in res.stdout


def test_scale_compose_file_runs_redis_replicas_and_nginx() -> None:
    res = subprocess.run(
        [_tool("docker-compose"), "-f", str(ROOT / "docker-compose.scale.yml"), "config", "--format",
         "json"], capture_output=True, text=True, cwd=ROOT,
    )
    assert res.returncode == 0, res.stdout + res.stderr
    services = json.loads(res.stdout)["services"]
    assert set(services) == {"redis", "cardboard", "nginx"}
    redis = services["redis"]
    assert redis["image"].startswith("redis:")
    assert redis["command"][:5] == ["redis-server", "--appendonly", "yes", "--appendfsync", "everysec"]
    assert redis["healthcheck"]["test"][-1] == "ping"
    app = services["cardboard"]
    assert app["environment"]["CARDBOARD_REDIS_URL"].startswith("redis://redis:")
    assert app["deploy"]["replicas"] >= 2 and "ports" not in app
    assert app["depends_on"]["redis"]["condition"] == "service_healthy"
    assert services["nginx"]["ports"][0]["published"] == "8000"
    # The plain compose file stays one container on SQLite.
    plain = subprocess.run([_tool("docker-compose"), "-f", str(ROOT / "docker-compose.yml"), "config",
                            "--format", "json"], capture_output=True, text=True, cwd=ROOT)
    assert plain.returncode == 0, plain.stderr
    one = json.loads(plain.stdout)["services"]
    assert list(one) == ["cardboard"] and "CARDBOARD_REDIS_URL" not in one["cardboard"]["environment"]


def test_nginx_config_forwards_websockets() -> None:
    text = (ROOT / "deploy" / "nginx.conf").read_text()
    assert "proxy_set_header Upgrade $http_upgrade;" in text
    assert "proxy_set_header Connection $connection_upgrade;" in text
    assert "proxy_http_version 1.1;" in text
    assert "proxy_read_timeout 3600s;" in text
    assert "server cardboard:8000" in text
