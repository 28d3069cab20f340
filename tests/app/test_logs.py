"""Logs (``app/logs.py``): no room id or ``/m/`` secret reaches them, and a
websocket frame that is not UTF-8 is one line, not a traceback."""

from __future__ import annotations

import logging
import sys
import urllib.request

import pytest
from liveserver import FrameReader, after_headers, client_frame, live_server, raw_handshake

from app.logs import LOGGERS, OneLineUtf8, RedactPaths, install_log_filters, redact


@pytest.mark.parametrize(("text", "shown"), [
    ("/r/AbC-d_9xYz012345", "/r/…"),
    ("/r/AbC-d_9xYz012345?sit=red", "/r/…?sit=red"),
    ('"WebSocket /ws/AbC-d_9xYz012345" [accepted]', '"WebSocket /ws/…" [accepted]'),
    ("GET /m/secret/token?x=1 HTTP/1.1", "GET /m/… HTTP/1.1"),
    ("/rules/get-stuck /static/js/room.js /api/rooms", "/rules/get-stuck /static/js/room.js /api/rooms"),
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
        with urllib.request.urlopen(f"{live.base}/r/{room}", timeout=5) as r:
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
    assert "/r/…" in log and "WebSocket /ws/…" in log
    assert "Traceback" not in log and "UnicodeDecodeError" not in log
    lines = [line for line in log.splitlines() if OneLineUtf8.MESSAGE in line]
    assert len(lines) == 1 and lines[0].startswith("INFO")
