"""Logs (``app/logs.py``): no room id or ``/m/`` secret reaches them, and a
websocket frame that is not UTF-8 is one line, not a traceback."""

from __future__ import annotations

import importlib
import logging
import pkgutil
import sys
import urllib.request

import pytest
from liveserver import FrameReader, after_headers, client_frame, live_server, raw_handshake

import app
from app.logs import LOGGERS, OneLineUtf8, RedactPaths, RedactRooms, install_log_filters, redact, room_ref


@pytest.mark.parametrize(("text", "shown"), [
    ("/r/AbC-d_9xYz012345", "/r/…"),
    ("/r/AbC-d_9xYz012345?sit=red", "/r/…?sit=red"),
    ('"WebSocket /ws/AbC-d_9xYz012345" [accepted]', '"WebSocket /ws/…" [accepted]'),
    ("GET /m/secret/token?x=1 HTTP/1.1", "GET /m/… HTTP/1.1"),
    ("/rules/get-stuck /static/js/room.js /api/rooms", "/rules/get-stuck /static/js/room.js /api/rooms"),
    ("GET /api/rooms/AbC-d_9xYz012345/record", "GET /api/rooms/…/record"),
    ("/api/rooms/AbC-d_9xYz012345/deals/2", "/api/rooms/…/deals/2"),
    ("/api/matches/AbC-d_9xYz012345", "/api/matches/…"),
    ("room AbC-d_9xYz012345: version 1 was not saved",
     f"room {room_ref('AbC-d_9xYz012345')}: version 1 was not saved"),
    ("the engine failed in room AbC-d_9xYz012345",
     f"the engine failed in room {room_ref('AbC-d_9xYz012345')}"),
    ("the room 7 seats: a bathroom AbC-d_9xYz012345x", "the room 7 seats: a bathroom AbC-d_9xYz012345x"),
])
def test_redact(text: str, shown: str) -> None:
    assert redact(text) == shown


def _record(msg: str, args: tuple[object, ...], exc: BaseException | None = None) -> logging.LogRecord:
    exc_info = (type(exc), exc, exc.__traceback__) if exc is not None else None
    return logging.LogRecord("uvicorn.access", logging.INFO, __file__, 1, msg, args, exc_info)


def test_the_access_record_is_redacted() -> None:
    record = _record('%s - "%s %s HTTP/%s" %d', ("127.0.0.1:5000", "GET", "/r/Secret1234567890", "1.1", 200))
    assert RedactPaths().filter(record)
    assert record.getMessage() == '127.0.0.1:5000 - "GET /r/… HTTP/1.1" 200'


def test_the_apps_own_lines_name_a_room_by_its_reference() -> None:
    """A line of the app about a room (``room %s: …``, the id an argument)
    shows :func:`room_ref`, the same for the same room, never the id
    (found by a break-it pass: warnings carried room ids in full)."""
    record = logging.LogRecord("app.rooms", logging.WARNING, __file__, 1, "room %s: version %d was not saved",
                               ("uzJ7X_k6Ema8LH-p", 1), None)
    assert RedactRooms().filter(record)
    shown = logging.Formatter().format(record)
    assert shown == f"room {room_ref('uzJ7X_k6Ema8LH-p')}: version 1 was not saved"
    assert "uzJ7X_k6Ema8LH-p" not in shown and room_ref("uzJ7X_k6Ema8LH-p").startswith("#")
    assert room_ref("uzJ7X_k6Ema8LH-p") != room_ref("uzJ7X_k6Ema8LH-q")


def test_every_module_of_the_app_logs_through_the_filter() -> None:
    """Each module's ``log`` is made by ``app.logs.get_logger``, so that a
    new line about a room cannot leak its id."""
    modules = [importlib.import_module(m.name)
               for m in pkgutil.walk_packages(app.__path__, "app.")]
    loggers = [m.log for m in modules if isinstance(getattr(m, "log", None), logging.Logger)]
    assert len(loggers) >= 12
    for logger in loggers:
        assert any(isinstance(f, RedactRooms) for f in logger.filters), logger.name


def _utf8_record() -> logging.LogRecord:
    """uvicorn's record for a text frame that is not valid UTF-8."""
    try:
        b"\xff".decode()
    except UnicodeDecodeError as exc:
        record = _record("Invalid UTF-8 sequence received from client.", (), exc)
    record.name = "uvicorn.error"
    return record


@pytest.mark.parametrize("level", [logging.INFO, logging.WARNING])
def test_a_utf8_traceback_becomes_one_info_line(level: int) -> None:
    """One line at INFO, not a traceback; dropped where the log is kept at
    WARNING (``--log-level warning``), so that a client sending such frames
    on purpose cannot fill it, while a real error still shows."""
    logger = logging.getLogger("uvicorn.error")
    before = logger.level
    logger.setLevel(level)
    try:
        record = _utf8_record()
        assert OneLineUtf8().filter(record) == (level == logging.INFO)
        assert record.levelname == "INFO" and record.exc_info is None
        assert "\n" not in logging.Formatter().format(record)
        other = _record("boom", (), ValueError("x"))
        other.name = "uvicorn.error"
        assert OneLineUtf8().filter(other) and other.exc_info is not None
    finally:
        logger.setLevel(before)


def test_install_log_filters_once() -> None:
    install_log_filters()
    install_log_filters()
    for name in LOGGERS:
        assert sum(isinstance(f, RedactPaths) for f in logging.getLogger(name).filters) == 1


def test_a_real_server_logs_no_room_id_and_no_utf8_traceback() -> None:
    with live_server() as live:
        room = live.new_room()
        for path in (f"/r/{room}", f"/api/rooms/{room}/record", f"/api/rooms/{room}/review"):
            with urllib.request.urlopen(f"{live.base}{path}", timeout=5) as r:
                assert r.status == 200
        sock, answer = raw_handshake(live.port, f"/ws/{room}")
        assert answer.startswith(b"HTTP/1.1 101")
        reader = FrameReader(sock, after_headers(answer))
        first = reader.next()
        assert first is not None and first[0] == 1 and b'"state"' in first[1]
        sock.sendall(client_frame(1, b'{"type": "join", "name": "\xff\xfe"}'))
        assert reader.until_close()[1] == 1007
        sock.close()
        log = live.log()
    sys.stdout.write(log)
    assert room not in log
    assert "/r/…" in log and "WebSocket /ws/…" in log and "/api/rooms/…/record" in log
    assert "Traceback" not in log and "UnicodeDecodeError" not in log
    lines = [line for line in log.splitlines() if OneLineUtf8.MESSAGE in line]
    assert len(lines) == 1 and lines[0].startswith("INFO")
