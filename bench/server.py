"""A real Cardboard server for benchmarks and process tests: uvicorn in a
subprocess on a free loopback port, started with the ``Makefile``'s uvicorn
flags (``UVICORN_HTTP`` and ``UVICORN_WS``, read from the ``Makefile`` so
that there is one list of them)."""

from __future__ import annotations

import os
import re
import shlex
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import IO

ROOT = Path(__file__).resolve().parent.parent

_FLAG_LINE = re.compile(r"^UVICORN_(?:HTTP|WS)[ \t]*:?=[ \t]*(.*)$", re.MULTILINE)


def makefile_flags(root: Path = ROOT) -> list[str]:
    """The uvicorn flags ``make run`` passes (``UVICORN_HTTP`` then
    ``UVICORN_WS`` in the ``Makefile`` of the checkout at ``root``)."""
    text = (root / "Makefile").read_text()
    return [flag for line in _FLAG_LINE.findall(text) for flag in shlex.split(line)]


def free_port() -> int:
    """A free TCP port on loopback."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start_server(port: int, env: dict[str, str], *, log: IO[bytes] | None = None,
                 log_level: str = "warning", flags: list[str] | None = None,
                 root: Path = ROOT, module: str = "uvicorn", target: str = "app.main:app"
                 ) -> subprocess.Popen[bytes]:
    """uvicorn running the app of the checkout at ``root`` on
    ``127.0.0.1:port`` with ``env`` added to the environment and ``flags``
    (by default :func:`makefile_flags`), returned once it answers
    ``/healthz``; its output goes to ``log`` (by default this process's).
    ``module`` is what ``python -m`` runs (uvicorn, or a wrapper of it),
    ``target`` the ASGI app it serves.
    Raises ``RuntimeError`` if it has not started within 30 s."""
    proc = subprocess.Popen(
        [sys.executable, "-m", module, target, "--host", "127.0.0.1", "--port", str(port),
         "--log-level", log_level, *(makefile_flags() if flags is None else flags)],
        cwd=root, env={**os.environ, **env}, stdout=log, stderr=log,
    )
    deadline = time.monotonic() + 30
    while True:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=1) as r:
                if r.status == 200:
                    return proc
        except OSError:
            pass
        if proc.poll() is not None or time.monotonic() > deadline:
            proc.kill()
            raise RuntimeError("the server did not start")
        time.sleep(0.1)


def stop_server(proc: subprocess.Popen[bytes]) -> None:
    """Stop a server from :func:`start_server` (SIGTERM, then SIGKILL after 10 s)."""
    proc.terminate()
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
