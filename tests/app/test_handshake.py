"""What a websocket's connection leaves behind is freed by reference counting
alone, without a garbage collection (``app/collector.py`` would keep a
cycle that had survived a collection until its sweep): the HTTP half of the
connection once it is upgraded (``app/handshake.py``), the connection
itself once closed with a send under way (``app/ws.py``), and websockets'
side of a socket once it is lost (``app/wsproto.py``)."""

from __future__ import annotations

import asyncio
import gc
import logging
import socket
import weakref
from typing import Any

import pytest
from inthread import serve
from uvicorn.config import Config
from uvicorn.server import ServerState

from app.handshake import PIPELINE_MAX, DeadlineProtocol
from app.wsproto import LeanProtocol

UPGRADE = (b"GET /ws/room HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
           b"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n")


class Transport(asyncio.Transport):
    """A socket's transport that keeps what it is given."""

    def __init__(self) -> None:
        super().__init__()
        self.protocol: Any = None
        self.written = b""
        self.closed = False

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        return ("127.0.0.1", 5555) if name in ("peername", "sockname") else default

    def set_protocol(self, protocol: Any) -> None:
        self.protocol = protocol

    def write(self, data: Any) -> None:
        self.written += bytes(data)

    def is_closing(self) -> bool:
        return self.closed

    def close(self) -> None:
        self.closed = True

    def pause_reading(self) -> None:
        pass

    def resume_reading(self) -> None:
        pass


async def _never_answers(scope: Any, receive: Any, send: Any) -> None:
    await asyncio.sleep(3600)


def test_the_http_protocol_is_freed_once_upgraded_without_a_collection() -> None:
    async def run() -> None:
        config = Config(app=_never_answers, ws=LeanProtocol, log_level="warning")
        config.load()
        transport = Transport()
        http = DeadlineProtocol(config=config, server_state=ServerState(), app_state={},
                                deadline=30.0)
        http.connection_made(transport)
        gone = weakref.ref(http)
        gc.disable()
        try:
            http.data_received(UPGRADE)
            assert isinstance(transport.protocol, LeanProtocol), "upgraded"
            del http
            assert gone() is None, "freed by reference counting alone"
        finally:
            gc.enable()
        transport.protocol.connection_lost(None)
        await asyncio.sleep(0)
    asyncio.run(run())


@pytest.mark.parametrize("sending", [False, True])
def test_a_closed_connection_is_freed_without_a_collection(sending: bool) -> None:
    """``WsConnection.close`` cancels the task that sends its frames, whether
    it has begun (a send under way) or not yet; either way the connection
    is freed by reference counting alone. A task cancelled before it ran
    keeps the error, whose traceback holds the connection: with the
    connection holding the task, the two made a cycle (found under
    connection churn)."""
    from app.ws import WsConnection

    async def run() -> None:
        async def send(text: str) -> None:
            await asyncio.Event().wait()  # a client that never takes the frame

        gone = weakref.ref(send)
        conn = WsConnection(send)
        del send
        conn.push("a frame")
        if sending:
            await asyncio.sleep(0)
        conn.close()
        for _ in range(3):
            await asyncio.sleep(0)
        gc.disable()
        try:
            del conn
            assert gone() is None, "freed by reference counting alone"
        finally:
            gc.enable()
    asyncio.run(run())


async def _accepts_until_gone(scope: Any, receive: Any, send: Any) -> None:
    await receive()  # websocket.connect
    await send({"type": "websocket.accept"})
    await send({"type": "websocket.send", "text": "hello"})
    while (await receive())["type"] != "websocket.disconnect":
        pass


def _client_frame(text: bytes) -> bytes:
    """A masked text frame, as a client sends it (payload under 126 bytes)."""
    mask = b"\x01\x02\x03\x04"
    return bytes([0x81, 0x80 | len(text)]) + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(text))


_ENDINGS = {
    # The client's last bytes before the socket is lost.
    "clean": b"",
    # Unmasked (a client must mask): websockets' parser fails, 1002.
    "protocol error": b"\x81\x00",
    # Opcode 3 is reserved: the parser fails, 1002.
    "reserved opcode": bytes([0x83, 0x80, 1, 2, 3, 4]),
    # A 2**40-byte frame announced: over the size limit, 1009.
    "oversize": bytes([0x81, 0xFF]) + (1 << 40).to_bytes(8, "big") + b"\x01\x02\x03\x04",
}


@pytest.mark.parametrize("ending", sorted(_ENDINGS))
def test_a_lost_socket_leaves_no_cycle(ending: str) -> None:
    """A socket's whole life (handshake, a frame each way, lost) leaves no
    cycle for the collector, however it ends: everything goes by reference
    counting, so nothing waits, frozen, for a sweep (``app/collector.py``).
    websockets' parser in particular is a generator whose frame holds the
    websockets connection, which holds the parser: a cycle per socket
    (about 1.3 KiB, found under connection churn) unless the protocol closes
    the parser when the socket is lost. A parser that failed (a protocol
    error, an oversize frame) leaves its exception on the connection, whose
    traceback holds the parser's frame and so the connection again (about
    2.7 KiB a socket: a flood of bad frames from one address grew the
    server 7 MiB/s)."""
    async def run() -> None:
        # No pings: the keepalive timer would hold the socket until its due time.
        config = Config(app=_accepts_until_gone, ws=LeanProtocol, log_level="warning",
                        ws_ping_interval=None)
        config.load()
        gc.collect()
        gc.disable()
        try:
            transport = Transport()
            http = DeadlineProtocol(config=config, server_state=ServerState(), app_state={},
                                    deadline=30.0)
            http.connection_made(transport)
            http.data_received(UPGRADE)
            del http
            ws = transport.protocol
            assert isinstance(ws, LeanProtocol)
            ws.data_received(_client_frame(b'{"type":"watch"}'))
            for _ in range(5):
                await asyncio.sleep(0)
            assert b" 101 " in transport.written, "the handshake is answered"
            assert transport.written.endswith(b"\x81\x05hello"), "the app's frame is sent"
            if _ENDINGS[ending]:
                sent = len(transport.written)
                ws.data_received(_ENDINGS[ending])
                for _ in range(5):
                    await asyncio.sleep(0)
                assert ws.conn.parser_exc is not None, "the parser failed"
                assert transport.written[sent:sent + 1] == b"\x88", "a close frame is sent"
            gone = weakref.ref(ws.conn)
            ws.connection_lost(None)
            for _ in range(5):  # the app hears of it and returns
                await asyncio.sleep(0)
            del ws
            transport.protocol = None
            assert gone() is None, "freed by reference counting alone"
            assert gc.collect() == 0, "no cycle left for the collector"
        finally:
            gc.enable()
    asyncio.run(run())


def _answer_ok(scope: Any, pause: float = 0.0) -> Any:
    async def app(scope: Any, receive: Any, send: Any) -> None:
        await asyncio.sleep(pause)
        await send({"type": "http.response.start", "status": 200, "headers": [(b"content-length", b"2")]})
        await send({"type": "http.response.body", "body": b"ok"})
    return app


def _pipelined(port: int, count: int) -> tuple[int, bool]:
    """Send ``count`` GET requests at once on one connection; the answers
    read, and whether the server closed the connection."""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n" * count)
        got = b""
        sock.settimeout(2)
        try:
            while got.count(b"HTTP/1.1 200") < count:
                chunk = sock.recv(65536)
                if not chunk:
                    return got.count(b"HTTP/1.1 200"), True
                got += chunk
        except ConnectionResetError:  # closed with what it sent unread
            return got.count(b"HTTP/1.1 200"), True
        except TimeoutError:
            pass
        return got.count(b"HTTP/1.1 200"), False


def test_a_connection_that_pipelines_too_many_requests_is_closed() -> None:
    """A few pipelined requests are all answered; a connection with more than
    PIPELINE_MAX waiting is closed, and what else it sent is not parsed
    (break-it pass: a million pipelined requests took 2.8 GB)."""
    with serve(_answer_ok(None), http=DeadlineProtocol) as port:
        assert _pipelined(port, 10) == (10, False)
        answered, closed = _pipelined(port, 5000)
        assert closed and answered <= PIPELINE_MAX + 2, answered


def test_a_connection_dropped_for_pipelining_gets_its_answer_under_way(
        caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch) -> None:
    """Dropped while its first request is being answered, the connection is
    closed once that answer is sent: the app is not cut off in the middle
    (verification pass: a traceback in the log for each such connection).
    One warning a minute says so."""
    from app import handshake

    monkeypatch.setattr(handshake, "_warned_at", -handshake.WARN_EVERY)
    with caplog.at_level(logging.INFO), serve(_answer_ok(None, pause=0.2), http=DeadlineProtocol) as port:
        for _ in range(3):
            assert _pipelined(port, 100) == (1, True)
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR], caplog.text
    assert caplog.text.count("pipelined more than") == 1  # then at debug level
