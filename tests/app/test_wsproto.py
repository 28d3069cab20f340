"""The lean parts of the websocket protocol (``app/wsproto.py``): its queue
and event behave as asyncio's do where uvicorn uses them."""

from __future__ import annotations

import asyncio
import contextlib
import socket
import struct
import threading
import time
from typing import Any

import pytest
from inthread import serve
from websockets.exceptions import ConnectionClosed
from websockets.sync.client import connect

from app import wsproto
from app.wsproto import READ_INTO, SEND_NOW, Keepalive, LeanEvent, LeanProtocol, LeanQueue


def test_queue_hands_items_over_in_order_and_wakes_a_waiting_getter() -> None:
    async def main() -> None:
        q: LeanQueue[int] = LeanQueue()
        assert q.empty() and q.qsize() == 0
        q.put_nowait(1)
        q.put_nowait(2)
        assert not q.empty() and q.qsize() == 2
        assert await q.get() == 1 and await q.get() == 2
        getter = q.get()
        await asyncio.sleep(0)
        assert not getter.done() and q.waiting()
        assert q.put_nowait(3) is True  # straight to the getter
        assert await asyncio.wait_for(getter, 1) == 3
        assert q.empty() and not q.waiting() and q._getter is None

    asyncio.run(main())


def test_queue_two_getters_each_get_one_item() -> None:
    async def main() -> None:
        q: LeanQueue[str] = LeanQueue()
        a, b = q.get(), q.get()
        await asyncio.sleep(0)
        q.put_nowait("x")
        q.put_nowait("y")
        assert sorted(await asyncio.gather(a, b)) == ["x", "y"]

    asyncio.run(main())


def test_a_cancelled_getter_loses_nothing() -> None:
    async def main() -> None:
        q: LeanQueue[int] = LeanQueue()
        reader = asyncio.create_task(asyncio.wait_for(q.get(), 5))
        await asyncio.sleep(0)
        assert q.waiting()
        reader.cancel()
        with pytest.raises(asyncio.CancelledError):
            await reader
        assert not q.waiting()
        assert q.put_nowait(7) is False  # nobody takes it: it waits
        assert q.qsize() == 1
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

def _serve(app: Any, **config: Any) -> contextlib.AbstractContextManager[int]:
    """uvicorn with :class:`LeanProtocol` running ``app`` on a free port in a
    thread (``config``: more of ``uvicorn.Config``): yields the port."""
    return serve(app, ws=LeanProtocol, **config)


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


def test_a_client_that_pings_and_never_reads_fills_no_memory(monkeypatch: pytest.MonkeyPatch) -> None:
    """Pings sent by a client that reads nothing: their pongs stop once the
    transport's buffer is past its high-water mark (break-it pass: every pong
    was kept, 480 MB in 21 seconds); the frames after them still come. (The
    limit on pings, below, is lifted here.)"""
    monkeypatch.setattr(wsproto, "PINGS_MAX", 10**9)
    seen: dict[str, Any] = {}

    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        await receive()
        await send({"type": "websocket.accept"})
        protocol = scope["extensions"][SEND_NOW].__self__
        message = await receive()  # after every ping
        seen["text"] = message.get("text")
        seen["buffered"] = protocol.transport.get_write_buffer_size()
        await receive()

    pings = 100_000  # 12.7 MB of pongs
    frame = struct.pack("!BB4s", 0x89, 0x80 | 125, b"\0\0\0\0") + b"p" * 125
    done = struct.pack("!BB4s", 0x81, 0x80 | 4, b"\0\0\0\0") + b"done"
    with _serve(app) as port, socket.socket() as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        sock.connect(("127.0.0.1", port))
        sock.sendall(b"GET / HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                     b"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n")
        sock.settimeout(10)
        assert sock.recv(4096).startswith(b"HTTP/1.1 101")  # accepted
        sock.sendall(frame * pings + done)
        deadline = time.monotonic() + 30
        while "buffered" not in seen:
            assert time.monotonic() < deadline, "the text frame after the pings never came"
            time.sleep(0.05)
    assert seen["text"] == "done"
    assert seen["buffered"] < 1 << 20, seen  # the high-water mark and a frame, not megabytes


def test_a_client_that_pings_too_often_is_closed() -> None:
    """Up to PINGS_MAX pings in PINGS_WINDOW seconds are answered; one more
    closes the socket with 1008 (verification pass: a flood of pings slowed
    every other answer of the server)."""
    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        await receive()
        await send({"type": "websocket.accept"})
        while (await receive())["type"] != "websocket.disconnect":
            pass

    with _serve(app) as port, connect(f"ws://127.0.0.1:{port}/", open_timeout=5) as ws:
        for k in range(wsproto.PINGS_MAX):
            assert ws.ping(str(k)).wait(5), k
        ws.ping("one more")
        with pytest.raises(ConnectionClosed) as closed:
            ws.recv(timeout=5)
        assert closed.value.rcvd is not None and closed.value.rcvd.code == 1008


@pytest.mark.parametrize("request_head", [
    b"Sec-WebSocket-Protocol: cardboard, cardboard.seat." + b"y" * 9000 + b"\r\n",  # a header over 8 KB
    b"".join(b"X-%d: 1\r\n" % k for k in range(300)),  # too many headers
])
def test_a_handshake_websockets_refuses_is_answered_and_closed(request_head: bytes) -> None:
    """A handshake websockets refuses before parsing it whole gets its
    answer (431) and is closed at once (verification pass: it got nothing and
    stayed open for ever, past every limit on sockets)."""
    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        raise AssertionError("never reached")

    with _serve(app) as port, socket.create_connection(("127.0.0.1", port)) as sock:
        sock.sendall(b"GET /ws/x HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                     b"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n"
                     + request_head + b"\r\n")
        sock.settimeout(5)
        answer = b""
        while chunk := sock.recv(4096):  # until the server closes
            answer += chunk
        assert answer.startswith(b"HTTP/1.1 431"), answer[:80]


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


# ---- frames received, and the keepalive ---------------------------------------------------

class _Socket:
    """What :class:`Keepalive` uses of a protocol, recording its calls."""

    def __init__(self, name: str, calls: list[tuple[str, str]], fail: bool = False) -> None:
        self.name, self.calls, self.fail = name, calls, fail
        self.ping_due = self.pong_due = 0.0

    def send_keepalive_ping(self) -> None:
        self.calls.append(("ping", self.name))
        if self.fail:
            raise RuntimeError("this socket's ping fails")

    def keepalive_timeout(self) -> None:
        self.calls.append(("timeout", self.name))


def test_keepalive_serves_every_socket_on_one_timer() -> None:
    """Pings go out when due, in order, one failing does not stop the
    others, a closed socket (due time cleared) is passed over, a pong
    deadline fires only if still set, and the timer stops when nothing is
    due."""
    calls: list[tuple[str, str]] = []

    async def main() -> None:
        wheel = Keepalive(asyncio.get_running_loop())
        a, b, c = _Socket("a", calls), _Socket("b", calls, fail=True), _Socket("c", calls)
        for s in (a, b, c):
            wheel.ping(s, 0.05)  # type: ignore[arg-type]
        timer = wheel.timer
        c.ping_due = 0.0  # c has closed
        wheel.pong(a, 0.3)  # type: ignore[arg-type]
        wheel.pong(b, 0.3)  # type: ignore[arg-type]
        assert wheel.timer is timer  # one timer, for the earliest due time
        await asyncio.sleep(0.2)
        assert calls == [("ping", "a"), ("ping", "b")]
        a.pong_due = 0.0  # a's pong came
        await asyncio.sleep(0.35)
        assert calls == [("ping", "a"), ("ping", "b"), ("timeout", "b")]
        assert wheel.timer is None and not wheel.pings and not wheel.pongs

    asyncio.run(main())


def test_a_ping_set_sooner_waits_its_turn() -> None:
    """The queues stay in order of due time: a ping asked for sooner than
    the last one queued goes with it."""
    async def main() -> None:
        wheel = Keepalive(asyncio.get_running_loop())
        late, soon = _Socket("late", []), _Socket("soon", [])
        wheel.ping(late, 0.4)  # type: ignore[arg-type]
        wheel.ping(soon, 0.1)  # type: ignore[arg-type]
        assert soon.ping_due == late.ping_due and list(wheel.ping_at) == sorted(wheel.ping_at)
        wheel.pings.clear()
        wheel.ping_at.clear()
        assert wheel.timer is not None
        wheel.timer.cancel()

    asyncio.run(main())


def test_sockets_ping_on_the_shared_timer_and_read_frames_in_order() -> None:
    """On a real uvicorn pinging every 0.1 s and giving up 0.15 s after an
    unanswered ping: the client's pongs come back and the socket stays
    open, with none of uvicorn's own ping timers; the app's ``receive`` is
    a future, not a chain of coroutines; a burst of
    frames arrives whole and in order; and the lists websockets writes and
    reads through are kept, not made anew for every frame."""
    seen: dict[str, Any] = {}

    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        await receive()
        await send({"type": "websocket.accept"})
        protocol = scope["extensions"][SEND_NOW].__self__
        writes, events = protocol.conn.writes, protocol.conn.events
        waiting = receive()
        seen["receive_is_a_future"] = isinstance(waiting, asyncio.Future)
        texts = [(await waiting)["text"]]
        while texts[-1] != "last":
            texts.append((await receive())["text"])
        began = protocol.loop.time()
        await asyncio.sleep(0.6)  # pings every 0.1 s meanwhile, each closing it if unanswered
        seen["pinging"] = protocol.ping_sent_at > began + 0.3 and not protocol.close_sent
        seen["timers"] = (protocol.ping_timer, protocol.pong_timer)
        seen["due"] = protocol.ping_due > 0 or protocol.pong_due > 0
        for text in texts:
            assert scope["extensions"][SEND_NOW](text.upper())
        seen["same_lists"] = protocol.conn.writes is writes and protocol.conn.events is events
        seen["closing"] = await receive()

    with (_serve(app, ws_ping_interval=0.1, ws_ping_timeout=0.15) as port,
          connect(f"ws://127.0.0.1:{port}/", open_timeout=5) as ws):
        sent = [f"frame {i} ♣" for i in range(20)] + ["last"]
        for text in sent:
            ws.send(text)
        got = [ws.recv(timeout=5) for _ in sent]
    assert got == [t.upper() for t in sent]
    assert seen["receive_is_a_future"] is True
    assert seen["pinging"] is True and seen["due"] is True
    assert seen["timers"] == (None, None)
    assert seen["same_lists"] is True
    assert seen["closing"]["type"] == "websocket.disconnect"


def test_read_into_hands_every_message_over_as_it_comes_and_holds_when_asked() -> None:
    """``READ_INTO``: the frames come to the sink in order (the one queued
    before it was set first), nothing waits on the queue between them,
    ``hold`` stops and restarts reading, and the disconnect comes last."""
    seen: dict[str, Any] = {}

    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        await receive()
        await send({"type": "websocket.accept"})
        protocol = scope["extensions"][SEND_NOW].__self__
        got: list[Any] = []
        first = asyncio.get_running_loop().create_future()
        ended = asyncio.get_running_loop().create_future()

        def sink(message: Any) -> None:
            got.append(message)
            if len(got) == 1:
                first.set_result(None)
            if message["type"] == "websocket.disconnect" and not ended.done():
                ended.set_result(None)  # (uvicorn's shutdown may send another)

        await asyncio.sleep(0.2)  # the first frame waits in the queue meanwhile
        hold = scope["extensions"][READ_INTO](sink)
        await asyncio.wait_for(first, 5)
        seen["queued_first"] = got[0].get("text")
        hold(True)
        seen["held"] = protocol.held
        scope["extensions"][SEND_NOW]("go on")
        await asyncio.sleep(0.2)
        seen["while_held"] = len(got)
        hold(False)
        while len(got) < 21:
            await asyncio.sleep(0.01)
        seen["texts"] = [m.get("text") for m in got]
        seen["nobody_waits"] = protocol.queue._getter is None and protocol.queue.empty()
        scope["extensions"][SEND_NOW]("done")
        await asyncio.wait_for(ended, 5)
        seen["last"] = got[-1]["type"]

    with _serve(app) as port, connect(f"ws://127.0.0.1:{port}/", open_timeout=5) as ws:
        ws.send("first")
        assert ws.recv(timeout=5) == "go on"
        for i in range(20):
            ws.send(f"frame {i}")
        assert ws.recv(timeout=5) == "done"
    assert seen["queued_first"] == "first"
    assert seen["held"] is True and seen["while_held"] == 1
    assert seen["texts"] == ["first"] + [f"frame {i}" for i in range(20)]
    assert seen["nobody_waits"] is True
    assert seen["last"] == "websocket.disconnect"


def test_a_socket_that_talks_is_not_pinged_and_a_quiet_one_is() -> None:
    """Pinging every 0.3 s: while the client sends a frame every 0.05 s the
    server sends it no ping (its frames show it is there); once it goes
    quiet it is pinged again, answers (websockets does), and stays open."""
    seen: dict[str, Any] = {}

    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        await receive()
        await send({"type": "websocket.accept"})
        protocol = scope["extensions"][SEND_NOW].__self__
        ticks = 0
        while (await receive())["text"] == "tick":
            ticks += 1
        seen["ticks"], seen["pinged_while_talking"] = ticks, protocol.ping_sent_at
        quiet = protocol.loop.time()
        # Over three intervals: pinged, and closed 0.3 s after a ping
        # left unanswered. (Not the round trip: the loop's clock may count
        # whole milliseconds, and a pong on this host comes sooner.)
        await asyncio.sleep(1.0)
        seen["pinged_when_quiet"] = protocol.ping_sent_at > quiet
        seen["open"] = not protocol.close_sent
        scope["extensions"][SEND_NOW]("done")
        await receive()

    with (_serve(app, ws_ping_interval=0.3, ws_ping_timeout=0.3) as port,
          connect(f"ws://127.0.0.1:{port}/", open_timeout=5) as ws):
        for _ in range(16):  # 0.8 s: over two intervals
            ws.send("tick")
            time.sleep(0.05)
        ws.send("quiet")
        assert ws.recv(timeout=5) == "done"
    assert seen["ticks"] == 16
    assert seen["pinged_while_talking"] == 0.0
    assert seen["pinged_when_quiet"] is True and seen["open"] is True
