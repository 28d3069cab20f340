"""Logging filters for uvicorn's loggers, installed by
:func:`install_log_filters` when the app is built.

* :class:`RedactPaths`: room ids and anything after ``/m/`` never reach a
  log. A room id is its invitation (``docs/protocol.md``), so the access
  log of ``GET /r/<id>`` (or ``/api/rooms/<id>/record``) or the
  ``WebSocket /ws/<id>`` line would hand every room to whoever reads the
  logs; they show ``/r/…`` instead. The server's own lines about a room
  (``room <id>: …``) name it by :func:`room_ref` instead: enough to tell
  one room's lines from another's, and to find a room whose id you know.
* :class:`OneLineUtf8`: a websocket text frame that is not valid UTF-8 is
  closed by uvicorn with 1007 and logged with a traceback (``logger.exception``
  in its websockets protocol, before the app sees the frame); this turns that
  record into one line at INFO, like the other lines a client's own fault
  makes (its socket's "connection closed"): a client that sends such frames
  on purpose cannot fill a log kept at WARNING.
"""

from __future__ import annotations

import hashlib
import logging
import re

REDACTED = "…"

_SECRET_PATH = re.compile(
    r"(/(?:r|ws|api/rooms|api/matches)/)[^/?#\s\"']+|(/m/)[^\s\"']*")
_ROOM_ID = re.compile(r"(\broom )([A-Za-z0-9_-]{16})(?![A-Za-z0-9_-])")

LOGGERS = ("uvicorn.access", "uvicorn.error")
"""The loggers the filters go on: the access log, and the error log where
uvicorn writes its ``"WebSocket /ws/…" [accepted]`` lines (the ``app``
package's own loggers come from :func:`get_logger`)."""


def room_ref(room_id: str) -> str:
    """How logs name a room: ``#`` and the first 8 hex digits of the SHA-256
    of its id (``python -c 'import hashlib,sys; print(hashlib.sha256(
    sys.argv[1].encode()).hexdigest()[:8])' <id>`` finds a room's)."""
    return "#" + hashlib.sha256(room_id.encode()).hexdigest()[:8]


def redact(text: str) -> str:
    """``text`` with the id of every ``/r/<id>``, ``/ws/<id>``,
    ``/api/rooms/<id>`` and ``/api/matches/<id>`` path, and everything
    after ``/m/``, replaced by :data:`REDACTED`, and each ``room <id>``
    written ``room <ref>`` (:func:`room_ref`)."""
    text = _SECRET_PATH.sub(lambda m: (m.group(1) or m.group(2)) + REDACTED, text)
    return _ROOM_ID.sub(lambda m: m.group(1) + room_ref(m.group(2)), text)


class RedactPaths(logging.Filter):
    """Applies :func:`redact` to a record's message and its string arguments
    one by one (uvicorn passes the path as an argument, and its access log's
    formatter reads the arguments themselves)."""

    def filter(self, record: logging.LogRecord) -> bool:
        if isinstance(record.msg, str):
            record.msg = redact(record.msg)
        if isinstance(record.args, tuple):
            record.args = tuple(redact(a) if isinstance(a, str) else a for a in record.args)
        return True


class RedactRooms(RedactPaths):
    """For the app's own loggers, whose lines pass a room id as an argument
    (``"room %s: …"``): applies :func:`redact` to the message once its
    arguments are in."""

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            text = record.getMessage()
        except (TypeError, ValueError):  # a line whose arguments do not fit
            return super().filter(record)
        record.msg, record.args = redact(text), ()
        return True


class OneLineUtf8(logging.Filter):
    """Turns uvicorn's traceback for a text frame that is not valid UTF-8
    (a ``UnicodeDecodeError`` logged with ``exc_info``) into one line at
    INFO: the fault is the client's, not the server's. Dropped where the
    logger is kept at WARNING or above."""

    MESSAGE = "a websocket text frame was not valid UTF-8: closed the connection with 1007"

    def filter(self, record: logging.LogRecord) -> bool:
        exc = record.exc_info[1] if record.exc_info else None
        if isinstance(exc, UnicodeDecodeError):
            record.msg, record.args = self.MESSAGE, ()
            record.exc_info = record.exc_text = None
            record.levelno, record.levelname = logging.INFO, "INFO"
            # The logger let the error through; it must let the info through too.
            return logging.getLogger(record.name).isEnabledFor(logging.INFO)
        return True


def get_logger(name: str) -> logging.Logger:
    """``logging.getLogger(name)`` with :class:`RedactRooms` on it: how each
    module of the ``app`` package makes its logger."""
    logger = logging.getLogger(name)
    if not any(type(f) is RedactRooms for f in logger.filters):
        logger.addFilter(RedactRooms())
    return logger


def install_log_filters() -> None:
    """Put :class:`RedactPaths` on :data:`LOGGERS` and :class:`OneLineUtf8`
    on ``uvicorn.error``, once (calling again adds nothing)."""
    for name in LOGGERS:
        logger = logging.getLogger(name)
        wanted: list[type[logging.Filter]] = [RedactPaths]
        if name == "uvicorn.error":
            wanted.append(OneLineUtf8)
        for kind in wanted:
            if not any(type(f) is kind for f in logger.filters):
                logger.addFilter(kind())
