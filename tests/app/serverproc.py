"""A real uvicorn server as a child process, for tests that kill, stop and
restart it: on a free loopback port (kept across restarts), with its
settings in the environment and its output in a log file."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
UVICORN_FLAGS = ["--ws-max-size", "1048576", "--ws-per-message-deflate", "false"]
STOPPED = (0, -signal.SIGTERM)
"""Exit statuses of a server that stopped cleanly on SIGTERM."""
SHUTDOWN_DONE = "Application shutdown complete"
"""What uvicorn logs (at level info) once the app's shutdown has finished."""


def free_port() -> int:
    """A loopback port nobody listens on now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Server:
    """``uvicorn app.main:app`` with ``env`` added to ours (``CARDBOARD_DATABASE``
    and the like), its output appended to ``log``. :meth:`start` and
    :meth:`kill` or :meth:`terminate` may be called again and again; the
    port stays the same."""

    def __init__(self, env: dict[str, str], log: Path, port: int | None = None,
                 log_level: str = "warning", group: bool = False) -> None:
        self.env = {**os.environ, **env}
        self.group = group  # a process group of its own, as a terminal's job
        self.log = log
        self.port = port or free_port()
        self.log_level = log_level
        self.proc: subprocess.Popen[bytes] | None = None
        self.starts = 0

    @property
    def base(self) -> str:
        """``http://127.0.0.1:<port>``."""
        return f"http://127.0.0.1:{self.port}"

    @property
    def ws_base(self) -> str:
        """``ws://127.0.0.1:<port>``."""
        return f"ws://127.0.0.1:{self.port}"

    def start(self, timeout: float = 60.0) -> float:
        """Start the server and wait until ``/healthz`` answers; returns the
        seconds that took. Raises ``RuntimeError`` with the log's end if it
        exits or does not answer in ``timeout`` seconds."""
        assert self.proc is None, "the server runs already"
        began = time.monotonic()
        with self.log.open("ab") as out:
            out.write(f"---- start {self.starts + 1}\n".encode())
            out.flush()
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "uvicorn", "app.main:app", "--host", "127.0.0.1",
                 "--port", str(self.port), "--log-level", self.log_level, "--no-access-log",
                 *UVICORN_FLAGS],
                cwd=ROOT, env=self.env, stdout=out, stderr=subprocess.STDOUT,
                start_new_session=self.group)
        self.starts += 1
        while True:
            try:
                with urllib.request.urlopen(self.base + "/healthz", timeout=1) as r:
                    if r.status == 200:
                        return time.monotonic() - began
            except OSError:
                pass
            if self.proc.poll() is not None or time.monotonic() - began > timeout:
                self.kill()
                raise RuntimeError(f"the server did not start:\n{self.tail()}")
            time.sleep(0.02)

    def kill(self) -> None:
        """``kill -9`` the server (if it runs) and reap it."""
        proc, self.proc = self.proc, None
        if proc is not None and proc.poll() is None:
            proc.send_signal(signal.SIGKILL)
        if proc is not None:
            proc.wait()

    def terminate(self, timeout: float = 30.0) -> int:
        """SIGTERM, as ``docker stop`` sends; waits for the exit and returns
        its status (``kill -9`` after ``timeout`` seconds, then -9). Once it
        has shut down, uvicorn raises the signal it caught again, so a clean
        stop ends with -15 (see :data:`STOPPED`)."""
        proc, self.proc = self.proc, None
        assert proc is not None, "the server is not running"
        proc.send_signal(signal.SIGTERM)
        try:
            return proc.wait(timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
            return -9

    def interrupt(self, timeout: float = 30.0, sig: int = signal.SIGINT) -> int:
        """Ctrl-C as a terminal sends it (or ``sig``, as ``kill -- -PGID``
        does): SIGINT to the server's whole process group (the server made
        with ``group=True``, and its worker processes); waits for the exit
        and returns its status (``kill -9`` after ``timeout`` seconds, then
        -9)."""
        proc, self.proc = self.proc, None
        assert proc is not None and self.group, "the server is not running in a group of its own"
        os.killpg(proc.pid, sig)
        try:
            return proc.wait(timeout)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
            return -9

    def tail(self, chars: int = 4000) -> str:
        """The end of the server's log."""
        try:
            return self.log.read_text(errors="replace")[-chars:]
        except OSError:
            return ""

    def __enter__(self) -> Server:
        return self

    def __exit__(self, *exc: object) -> None:
        self.kill()
