"""A TCP proxy for browser tests whose network can die silently, as a proxy
or a NAT that stops passing bytes without closing anything: after
:meth:`BlackholeProxy.cut`, the connections open through it stay open at
both ends but pass nothing (what either end sends is dropped, a close
included), and new connections are closed at once (the network is down);
after :meth:`BlackholeProxy.heal`, new connections pass again, while the
silent ones stay silent."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Coroutine
from types import TracebackType
from typing import Any


class BlackholeProxy:
    """Forwards ``127.0.0.1:<port>`` (:attr:`base`) to ``127.0.0.1:<target>``,
    on an event loop of its own in a thread; a context manager."""

    def __init__(self, target: int) -> None:
        self.target = target
        self.port = 0
        self.down = False           # new connections are closed at once
        self._silent: set[int] = set()  # ids of the connections cut
        self._open: dict[int, tuple[asyncio.StreamWriter, asyncio.StreamWriter]] = {}
        self._next = 0
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)
        self._server: asyncio.Server | None = None

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def __enter__(self) -> BlackholeProxy:
        self._thread.start()
        self._server = asyncio.run_coroutine_threadsafe(
            asyncio.start_server(self._accept, "127.0.0.1", 0), self._loop).result(10)
        self.port = self._server.sockets[0].getsockname()[1]
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        async def close() -> None:
            assert self._server is not None
            self._server.close()
            for pair in self._open.values():
                for w in pair:
                    w.close()
            others = asyncio.all_tasks() - {asyncio.current_task()}
            if others:  # their pumps end now that their sockets are closed
                await asyncio.wait(others, timeout=5)
        self._run(close)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)
        self._loop.close()

    def _run(self, fn: Callable[[], Coroutine[Any, Any, None]]) -> None:
        """Run ``fn()`` on the proxy's loop and wait for it."""
        asyncio.run_coroutine_threadsafe(fn(), self._loop).result(10)

    def cut(self) -> None:
        """Every open connection goes silent; new ones are closed at once."""
        async def cut() -> None:
            self.down = True
            self._silent.update(self._open)
        self._run(cut)

    def heal(self) -> None:
        """New connections pass again (the silent ones stay silent)."""
        async def heal() -> None:
            self.down = False
        self._run(heal)

    async def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        if self.down:
            writer.close()
            return
        try:
            up_reader, up_writer = await asyncio.open_connection("127.0.0.1", self.target)
        except OSError:
            writer.close()
            return
        key = self._next
        self._next += 1
        self._open[key] = (writer, up_writer)
        await asyncio.gather(self._pump(key, reader, up_writer), self._pump(key, up_reader, writer))
        self._open.pop(key, None)

    async def _pump(self, key: int, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        """Copy ``reader`` to ``writer`` until the end, closing ``writer`` then,
        unless the connection is silent: then drop whatever comes, and keep
        ``writer`` open."""
        try:
            while data := await reader.read(65536):
                if key in self._silent:
                    continue
                writer.write(data)
                await writer.drain()
        except (ConnectionError, OSError):
            pass
        if key not in self._silent:
            writer.close()
