"""Logging filters for uvicorn's loggers, installed by
:func:`install_log_filters` when the app is built.

* :class:`RedactPaths`: room ids and anything after ``/m/`` never reach a
  log. A room id is its invitation (``docs/protocol.md``), so the access
  log of ``GET /r/<id>`` or the ``WebSocket /ws/<id>`` line would hand every
  room to whoever reads the logs; they show ``/r/…`` instead.
* :class:`OneLineUtf8`: a websocket text frame that is not valid UTF-8 is
  closed by uvicorn with 1007 and logged with a traceback (``logger.exception``
  in its websockets protocol, before the app sees the frame); this turns that
  record into one line at INFO, like the other lines a client's own fault
  makes (its socket's "connection closed"): a client that sends such frames
  on purpose cannot fill a log kept at WARNING.
"""

from __future__ import annotations

import logging
import re

REDACTED = "…"

_SECRET_PATH = re.compile(r"(/(?:r|ws)/)[^/?#\s\"']+|(/m/)[^\s\"']*")

LOGGERS = ("uvicorn.access", "uvicorn.error")
"""The loggers the filters go on: the access log, and the error log where
uvicorn writes its ``"WebSocket /ws/…" [accepted]`` lines."""


def redact(text: str) -> str:
    """``text`` with the room id of every ``/r/<id>`` and ``/ws/<id>`` path,
    and everything after ``/m/``, replaced by :data:`REDACTED`."""
    return _SECRET_PATH.sub(lambda m: (m.group(1) or m.group(2)) + REDACTED, text)


class RedactPaths(logging.Filter):
    """Applies :func:`redact` to a record's message and its string
    arguments (uvicorn passes the path as an argument)."""

    def filter(self, record: logging.LogRecord) -> bool:
        if isinstance(record.msg, str):
            record.msg = redact(record.msg)
        if isinstance(record.args, tuple):
            record.args = tuple(redact(a) if isinstance(a, str) else a for a in record.args)
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


def install_log_filters() -> None:
    """Put :class:`RedactPaths` on :data:`LOGGERS` and :class:`OneLineUtf8`
    on ``uvicorn.error``, once (calling again adds nothing)."""
    for name in LOGGERS:
        logger = logging.getLogger(name)
        wanted: list[type[logging.Filter]] = [RedactPaths]
        if name == "uvicorn.error":
            wanted.append(OneLineUtf8)
        for kind in wanted:
            if not any(isinstance(f, kind) for f in logger.filters):
                logger.addFilter(kind())
