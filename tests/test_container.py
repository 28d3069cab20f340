"""The container files are valid: hadolint passes the Dockerfile and
`docker-compose config` accepts the compose file (no Docker engine runs here)."""

from __future__ import annotations

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
