"""Helpers for the tests on a real Redis: a ``redis-server`` of the test's
own (a free port, a temporary directory, AOF on), uvicorn server processes
pointed at it, and asyncio websocket clients that keep every frame.

Without ``/usr/bin/redis-server`` the tests skip, unless ``CI=true`` or
``CARDBOARD_REDIS_TESTS=required``: then they fail.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import websockets

REDIS_SERVER = Path("/usr/bin/redis-server")
ROOT = Path(__file__).resolve().parents[2]


def need_redis() -> None:
    """Skip (or fail, when required) without Debian's redis-server."""
    if REDIS_SERVER.exists():
        return
    required = (os.environ.get("CI") == "true"
                or os.environ.get("CARDBOARD_REDIS_TESTS") == "required")
    message = f"{REDIS_SERVER} is missing (apt-get install redis-server)"
    if required:
        pytest.fail(f"Redis tests are required but {message}")
    pytest.skip(message)


def free_port() -> int:
    """A free TCP port on loopback."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_for(check: Any, seconds: float, what: str) -> None:
    """Call ``check`` until it is true; fail after ``seconds``."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        with contextlib.suppress(Exception):
            if check():
                return
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


class RedisServer:
    """A ``redis-server`` on ``port`` keeping its files in ``directory``,
    with ``appendonly yes`` and ``appendfsync everysec`` as the compose file
    has it."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.port = free_port()
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        self.proc = subprocess.Popen(
            [str(REDIS_SERVER), "--port", str(self.port), "--bind", "127.0.0.1", "--dir",
             str(self.directory), "--appendonly", "yes", "--appendfsync", "everysec", "--save", "",
             "--protected-mode", "no", "--daemonize", "no", "--logfile", str(self.directory / "log")],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        wait_for(self.ping, 10, "redis-server to answer")

    def ping(self) -> bool:
        with socket.create_connection(("127.0.0.1", self.port), timeout=1) as s:
            s.sendall(b"PING\r\n")
            return s.recv(16).startswith(b"+PONG")

    def stop(self) -> None:
        """A clean stop (SIGTERM: Redis writes its AOF and exits)."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            self.proc.wait(10)
        self.proc = None


@contextlib.contextmanager
def redis_server(directory: Path) -> Iterator[RedisServer]:
    """A running :class:`RedisServer`, stopped at the end."""
    need_redis()
    server = RedisServer(directory)
    server.start()
    try:
        yield server
    finally:
        server.stop()


LOG_CONFIG = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"plain": {"format": "%(name)s %(levelname)s %(message)s"}},
    "handlers": {"err": {"class": "logging.StreamHandler", "formatter": "plain",
                         "stream": "ext://sys.stderr"}},
    "loggers": {"app": {"handlers": ["err"], "level": "DEBUG", "propagate": False},
                "uvicorn": {"handlers": ["err"], "level": "WARNING"}},
}
"""uvicorn's log configuration for the test servers: the app's own lines
(``app.bots`` says at debug level when a computer player thinks)."""


class AppServer:
    """One Cardboard server process (uvicorn) on ``port``, its rooms in the
    Redis at ``redis_url``; its log goes to ``log``."""

    def __init__(self, redis_url: str, directory: Path, name: str, **env: str) -> None:
        self.port = free_port()
        self.log = directory / f"{name}.log"
        config = directory / "log.json"
        config.write_text(json.dumps(LOG_CONFIG))
        self.env = {**os.environ, "CARDBOARD_REDIS_URL": redis_url, "CARDBOARD_BOT_POOL": "thread",
                    "CARDBOARD_BOT_WORKERS": "1", "CARDBOARD_BOT_PAUSE": "0",
                    "CARDBOARD_BOT_SECONDS": "0.05", **env}
        self.config = config
        self.proc: subprocess.Popen[bytes] | None = None
        self.started = False

    @property
    def args(self) -> list[str]:
        return [sys.executable, "-m", "uvicorn", "app.main:app", "--host", "127.0.0.1", "--port",
                str(self.port), "--log-config", str(self.config), "--ws-max-size", "1048576",
                "--ws-per-message-deflate", "false"]

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def ws(self) -> str:
        return f"ws://127.0.0.1:{self.port}"

    def start(self) -> AppServer:
        """Start the process and wait until it answers. A first start whose
        port another process took meanwhile (``free_port`` only finds one
        free at the time) is tried again on another port; a restart keeps
        its port."""
        for _ in range(3):
            with self.log.open("ab") as out:
                self.proc = subprocess.Popen(self.args, cwd=ROOT, env=self.env, stdout=out, stderr=out)
            proc = self.proc
            wait_for(lambda proc=proc: proc.poll() is not None  # type: ignore[misc]
                     or urllib.request.urlopen(self.base + "/healthz", timeout=1).status == 200, 30,
                     f"the server on port {self.port}")
            if proc.poll() is None:
                self.started = True
                return self
            if self.started or "address already in use" not in self.text():
                break
            self.port = free_port()
        raise AssertionError(f"the server on port {self.port} did not start:\n{self.text()[-2000:]}")

    def kill(self) -> None:
        """``kill -9``."""
        if self.proc is not None:
            self.proc.kill()
            self.proc.wait(10)
            self.proc = None

    def stop(self) -> None:
        if self.proc is not None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)
            self.proc = None

    def text(self) -> str:
        """What the server has logged so far."""
        return self.log.read_text(errors="replace")

    def post(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
        req = urllib.request.Request(self.base + path, json.dumps(body).encode(),
                                     {"Content-Type": "application/json"})
        with urllib.request.urlopen(req, timeout=10) as res:
            data: dict[str, Any] = json.loads(res.read())
            return data


@contextlib.contextmanager
def app_servers(redis_url: str, directory: Path, count: int = 2, **env: str) -> Iterator[list[AppServer]]:
    """``count`` running :class:`AppServer` processes on one Redis."""
    servers = [AppServer(redis_url, directory, f"app{i}", **env) for i in range(count)]
    try:
        for server in servers:
            server.start()
        yield servers
    finally:
        for server in servers:
            server.stop()


class Client:
    """One websocket client; a reader task keeps every frame (``frames``),
    and ``states`` holds the state frames in the order received."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.frames: list[dict[str, Any]] = []
        self.states: list[dict[str, Any]] = []
        self.token: str | None = None
        self.ws: Any = None
        self._reader: asyncio.Task[None] | None = None
        self._changed = asyncio.Event()
        self.closed = False

    async def connect(self, ws_base: str, room: str) -> Client:
        self.ws = await websockets.connect(f"{ws_base}/ws/{room}", open_timeout=10, max_size=2**22)
        self.closed = False
        self._reader = asyncio.get_running_loop().create_task(self._read())
        await self.until(lambda: bool(self.states), "a first state")
        return self

    async def _read(self) -> None:
        try:
            async for text in self.ws:
                frame = json.loads(text)
                self.frames.append(frame)
                if frame["type"] == "state":
                    self.states.append(frame)
                elif frame["type"] == "joined":
                    self.token = frame["token"]
                self._changed.set()
        except websockets.ConnectionClosed:
            pass
        finally:
            self.closed = True
            self._changed.set()

    async def send(self, **frame: Any) -> None:
        await self.ws.send(json.dumps(frame))

    async def until(self, check: Any, what: str, seconds: float = 10.0) -> None:
        """Wait until ``check()`` is true (it may look at other clients too:
        it is tried again at least every 50 ms)."""
        deadline = asyncio.get_running_loop().time() + seconds
        while not check():
            left = deadline - asyncio.get_running_loop().time()
            if left <= 0:
                last = self.states[-1] if self.states else None
                raise AssertionError(f"{self.name}: timed out waiting for {what}; last frames"
                                     f" {self.frames[-3:]!r}; last state version"
                                     f" {last and last['version']}")
            self._changed.clear()
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(self._changed.wait(), min(left, 0.05))

    async def at(self, version: int, seconds: float = 10.0) -> dict[str, Any]:
        """The first state of ``version`` or later."""
        await self.until(lambda: bool(self.states) and self.states[-1]["version"] >= version,
                         f"version {version}", seconds)
        return self.states[-1]

    def errors(self, code: str) -> list[dict[str, Any]]:
        return [f for f in self.frames if f["type"] == "error" and f["code"] == code]

    @property
    def last(self) -> dict[str, Any]:
        return self.states[-1]

    async def close(self) -> None:
        if self.ws is not None:
            await self.ws.close()
        if self._reader is not None:
            with contextlib.suppress(Exception):
                await self._reader


def check_versions(client: Client, since: int = 0) -> None:
    """Every state ``client`` received from its ``since``-th on has a version
    no lower than the one before, and no version is skipped."""
    versions = [s["version"] for s in client.states[since:]]
    for a, b in itertools.pairwise(versions):
        assert b in (a, a + 1), f"{client.name}: versions {a} then {b} in {versions}"
