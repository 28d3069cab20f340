"""Browser tests: Debian's Chromium driven by Playwright against a real
uvicorn server on a free loopback port.

They skip when Chromium is missing, unless CARDBOARD_BROWSER_TESTS=required
(as `.ci/run` sets), in which case they fail.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from bench.server import free_port, start_server, stop_server

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


@pytest.fixture(scope="session")
def server() -> Iterator[str]:
    """Base URL of a uvicorn server running the app as ``make run`` starts it
    (``bench/server.py``), with fast computer players, a seat that may be
    handed to a computer after 2 s away, forced passes after 0.3 s, and room
    for the many websockets and rooms (computer players' included) one test
    session opens from one address."""
    port = free_port()
    env = {"CARDBOARD_BOT_SECONDS": "0.05", "CARDBOARD_BOT_PAUSE": "0.05",
           "CARDBOARD_HANDOVER_SECONDS": "2", "CARDBOARD_AUTO_PASS_SECONDS": "0.3",
           "CARDBOARD_WS_PER_MINUTE": "10000",
           "CARDBOARD_WS_PER_ADDRESS": "1000", "CARDBOARD_ROOM_CREATE_BURST": "1000",
           "CARDBOARD_BOT_ROOMS_PER_ADDRESS": "100"}
    proc = start_server(port, env)
    yield f"http://127.0.0.1:{port}"
    stop_server(proc)


@pytest.fixture(scope="session")
def artifacts() -> Path:
    """Folder for screenshots taken during browser tests (not committed)."""
    ARTIFACTS.mkdir(exist_ok=True)
    return ARTIFACTS
