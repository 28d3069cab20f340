"""The lean parts of the websocket protocol (``app/wsproto.py``): its queue
and event behave as asyncio's do where uvicorn uses them."""

from __future__ import annotations

import asyncio
import contextlib
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest
import uvicorn
from websockets.sync.client import connect

from app.wsproto import SEND_NOW, LeanEvent, LeanProtocol, LeanQueue
from bench.server import free_port


def test_queue_hands_items_over_in_order_and_wakes_a_waiting_getter() -> None:
    async def main() -> None:
        q: LeanQueue[int] = LeanQueue()
        assert q.empty() and q.qsize() == 0
        q.put_nowait(1)
        q.put_nowait(2)
        assert not q.empty() and q.qsize() == 2
        assert await q.get() == 1 and await q.get() == 2
        getter = asyncio.create_task(q.get())
        await asyncio.sleep(0)
        assert not getter.done()
        q.put_nowait(3)
        assert await asyncio.wait_for(getter, 1) == 3
        assert q.empty() and q._waiters is None

    asyncio.run(main())


def test_queue_two_getters_each_get_one_item() -> None:
    async def main() -> None:
        q: LeanQueue[str] = LeanQueue()
        a, b = asyncio.create_task(q.get()), asyncio.create_task(q.get())
        await asyncio.sleep(0)
        q.put_nowait("x")
        q.put_nowait("y")
        assert sorted(await asyncio.gather(a, b)) == ["x", "y"]

    asyncio.run(main())


def test_a_cancelled_getter_loses_nothing() -> None:
    async def main() -> None:
        q: LeanQueue[int] = LeanQueue()
        getter = asyncio.create_task(q.get())
        await asyncio.sleep(0)
        getter.cancel()
        with pytest.raises(asyncio.CancelledError):
            await getter
        assert q._waiters is None
        q.put_nowait(7)
        assert await asyncio.wait_for(q.get(), 1) == 7

    asyncio.run(main())


def test_event_wait_returns_at_once_when_set_and_waits_when_cleared() -> None:
    async def main() -> None:
        e = LeanEvent()
        assert not e.is_set()
        e.set()
        assert e.is_set() and await asyncio.wait_for(e.wait(), 1) is True
        e.clear()
        waiters = [asyncio.create_task(e.wait()) for _ in range(2)]
        await asyncio.sleep(0)
        assert not any(w.done() for w in waiters)
        e.set()
        assert await asyncio.wait_for(asyncio.gather(*waiters), 1) == [True, True]
        assert e._waiters is None

    asyncio.run(main())


# ---- sending at once, on a real uvicorn ------------------------------------------------------

@contextlib.contextmanager
def _serve(app: Any) -> Iterator[int]:
    """uvicorn with :class:`LeanProtocol` running ``app`` on a free port in a
    thread, for the ``with`` block: yields the port, then stops it."""
    port = free_port()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, ws=LeanProtocol,
                                           log_level="warning", lifespan="off"))
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


def test_send_now_writes_at_once_and_declines_while_the_transport_is_paused() -> None:
    """After the handshake the scope offers ``SEND_NOW`` (and no longer holds
    the headers); it writes frames in order with those sent through ASGI,
    and says no (writing nothing) while the transport is paused."""
    seen: dict[str, Any] = {}

    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        assert scope["type"] == "websocket"
        seen["before"] = SEND_NOW in scope["extensions"], len(scope["headers"]) > 0
        await receive()
        await send({"type": "websocket.accept"})
        now = scope["extensions"][SEND_NOW]
        seen["headers_after"] = scope["headers"]
        protocol = now.__self__
        assert now("one") is True
        await send({"type": "websocket.send", "text": "two ♥"})
        assert now("three ♥") is True
        protocol.pause_writing()
        seen["paused"] = now("never")
        protocol.resume_writing()
        assert now("four") is True
        await receive()  # the client's close

    with _serve(app) as port, connect(f"ws://127.0.0.1:{port}/", open_timeout=5) as ws:
        got = [ws.recv(timeout=5) for _ in range(4)]
    assert got == ["one", "two ♥", "three ♥", "four"]
    assert seen["before"] == (False, True)
    assert seen["headers_after"] == []
    assert seen["paused"] is False


def test_send_now_says_no_once_the_client_has_gone() -> None:
    result: list[bool] = []
    gone = threading.Event()

    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        await receive()
        await send({"type": "websocket.accept"})
        now = scope["extensions"][SEND_NOW]
        message = await receive()
        assert message["type"] == "websocket.disconnect"
        await asyncio.sleep(0.05)
        result.append(now("late"))
        assert SEND_NOW not in scope["extensions"]  # let go with the protocol
        gone.set()

    with _serve(app) as port:
        with connect(f"ws://127.0.0.1:{port}/", open_timeout=5):
            pass
        assert gone.wait(5)
    assert result == [False]


def test_send_now_says_no_once_the_transport_is_closing() -> None:
    """A transport closed by the server (an unanswered ping does that) takes
    no frame, even before uvicorn has learnt that the connection is lost."""
    result: list[bool] = []
    done = threading.Event()

    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        await receive()
        await send({"type": "websocket.accept"})
        now = scope["extensions"][SEND_NOW]
        now.__self__.transport.close()
        result.append(now("late"))
        done.set()
        await receive()

    with _serve(app) as port, connect(f"ws://127.0.0.1:{port}/", open_timeout=5):
        assert done.wait(5)
    assert result == [False]


def test_a_socket_keeps_few_attributes_in_its_dict() -> None:
    """CPython shares one set of keys among instance dicts of at most 30
    keys; uvicorn sets 37 attributes, so :data:`LeanProtocol.SLOTS` keeps
    enough of them in slots for each socket's dict to stay under that (and
    the socket still works through them: handshake, frames both ways,
    close)."""
    seen: dict[str, Any] = {}

    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        await receive()
        await send({"type": "websocket.accept"})
        protocol = scope["extensions"][SEND_NOW].__self__
        seen["dict"] = sorted(vars(protocol))
        seen["slotted"] = [name for name in LeanProtocol.SLOTS if name in vars(protocol)]
        message = await receive()
        await send({"type": "websocket.send", "text": message["text"].upper()})
        seen["closing"] = await receive()

    with _serve(app) as port, connect(f"ws://127.0.0.1:{port}/", open_timeout=5) as ws:
        ws.send("ping ♠")
        assert ws.recv(timeout=5) == "PING ♠"
    assert seen["slotted"] == []
    assert 0 < len(seen["dict"]) <= 30, seen["dict"]
    assert seen["closing"]["type"] == "websocket.disconnect"
