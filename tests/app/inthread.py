"""uvicorn in a thread of the test process, for tests of the protocols
themselves (``app/handshake.py``, ``app/wsproto.py``) on real sockets."""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Iterator
from typing import Any

import uvicorn

from bench.server import free_port


@contextlib.contextmanager
def serve(app: Any, **config: Any) -> Iterator[int]:
    """uvicorn running ``app`` on a free port in a thread (``config``: more
    of ``uvicorn.Config``, such as ``ws`` or ``http``), for the ``with``
    block: yields the port, then stops it."""
    port = free_port()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning",
                                           lifespan="off", **config))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    try:
        deadline = time.monotonic() + 10
        while not server.started:
            assert time.monotonic() < deadline, "uvicorn did not start"
            time.sleep(0.01)
        yield port
    finally:
        server.should_exit = True
        thread.join(10)
