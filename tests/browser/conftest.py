"""Browser tests: Debian's Chromium driven by Playwright against a real
uvicorn server on a free loopback port.

They skip when Chromium is missing, unless CARDBOARD_BROWSER_TESTS=required
(as `.ci/run` sets), in which case they fail.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = os.environ.get("CARDBOARD_CHROMIUM", "/usr/bin/chromium")
ARTIFACTS = ROOT / "artifacts"
LAUNCH_ARGS = [
    "--no-sandbox", "--disable-gpu", "--disable-background-networking",
    "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-quic",
]


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    here = Path(__file__).parent
    for item in items:
        if Path(str(item.fspath)).is_relative_to(here):
            item.add_marker(pytest.mark.browser)
            item.add_marker(pytest.mark.xdist_group("browser"))
    if Path(CHROMIUM).exists():
        return
    if os.environ.get("CARDBOARD_BROWSER_TESTS") == "required":
        raise pytest.UsageError(f"browser tests are required but {CHROMIUM} is missing")
    skip = pytest.mark.skip(reason=f"{CHROMIUM} not installed (apt-get install chromium)")
    for item in items:
        if Path(str(item.fspath)).is_relative_to(here):
            item.add_marker(skip)


@pytest.fixture(scope="session")
def browser_type_launch_args(browser_type_launch_args: dict[str, Any]) -> dict[str, Any]:
    return {**browser_type_launch_args, "executable_path": CHROMIUM, "args": LAUNCH_ARGS}


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="session")
def server() -> Iterator[str]:
    """Base URL of a uvicorn server running the app, with fast computer players
    and a seat that may be handed to a computer after 2 s away."""
    port = _free_port()
    env = {**os.environ, "CARDBOARD_BOT_SECONDS": "0.05", "CARDBOARD_BOT_PAUSE": "0.05",
           "CARDBOARD_HANDOVER_SECONDS": "2"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "uvicorn", "app.main:app", "--host", "127.0.0.1", "--port", str(port),
         "--log-level", "warning", "--ws", "websockets-sansio", "--ws-max-size", "1048576",
         "--ws-per-message-deflate", "false"],
        cwd=ROOT, env=env,
    )
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 30
    while True:
        try:
            with urllib.request.urlopen(base + "/healthz", timeout=1) as r:
                if r.status == 200:
                    break
        except OSError:
            pass
        if proc.poll() is not None or time.monotonic() > deadline:
            proc.kill()
            raise RuntimeError("the test server did not start")
        time.sleep(0.1)
    yield base
    proc.terminate()
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()


@pytest.fixture(scope="session")
def artifacts() -> Path:
    """Folder for screenshots taken during browser tests (not committed)."""
    ARTIFACTS.mkdir(exist_ok=True)
    return ARTIFACTS
