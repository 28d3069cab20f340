"""Server settings, read once from the environment (prefix ``CARDBOARD_``).

``CARDBOARD_GAMES=get-stuck,get-stuck-4`` limits the games on offer;
``CARDBOARD_ROOM_IDLE_HOURS`` and ``CARDBOARD_MAX_ROOMS`` bound the rooms kept
in memory; ``CARDBOARD_BOT_*`` and ``CARDBOARD_HANDOVER_SECONDS`` tune the
computer players (:mod:`app.bots`); ``CARDBOARD_AUTO_PASS_SECONDS`` and
``CARDBOARD_READY_AWAY_SECONDS`` the table's own pauses; ``CARDBOARD_DATABASE``
names the SQLite file, and ``CARDBOARD_REDIS_URL`` keeps rooms in Redis
instead. Tests build their own :class:`Settings` and pass it to
``app.main.create_app``.
"""

from __future__ import annotations

import os
from functools import lru_cache
from pathlib import Path
from typing import Annotated, Any, Literal
from urllib.parse import urlsplit

from pydantic import Field, field_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict

from engine.registry import GAMES


def _all_games() -> tuple[str, ...]:
    return tuple(GAMES)


ROOM_KIB = 64
"""What one room of four seats takes in memory, sockets included, with
room to spare (``bench/load.py`` prints it: 50-55 KiB)."""

ROOMS_MEMORY_SHARE = 0.25
"""The part of the memory the rooms may take by default."""


def memory_bytes(cgroup: Path = Path("/sys/fs/cgroup/memory.max")) -> int | None:
    """The memory this process may use: the container's limit (cgroup v2)
    if it has one, else the machine's; ``None`` if neither can be read."""
    try:
        text = cgroup.read_text().strip()
        if text.isdigit():
            return int(text)
    except OSError:
        pass
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return None


def rooms_memory_allows(memory: int | None = None) -> int:
    """The default room limit: as many rooms of :data:`ROOM_KIB` as fit in
    :data:`ROOMS_MEMORY_SHARE` of ``memory`` (bytes; by default
    :func:`memory_bytes`), at least 1,000 and at most 100,000: about 4,000
    rooms a GiB."""
    memory = memory_bytes() if memory is None else memory
    if memory is None:
        return 1000
    return max(1000, min(100_000, int(memory * ROOMS_MEMORY_SHARE / (ROOM_KIB * 1024))))


class Settings(BaseSettings):
    """What the server offers and how long it keeps rooms.

    * ``games``: ids of the games on offer, in order; given as a comma-separated
      string (``"get-stuck,get-stuck-4"``) or a sequence. Empty or absent means
      every game in :data:`engine.registry.GAMES`. An unknown id fails
      validation with a message naming it, so the server does not start.
    * ``bot_seconds``: thinking budget of a strong computer player, in seconds
      per move (``engine.bots.choose_move``: medium thinks a tenth of it).
    * ``bot_pause``: a computer player's move takes, thinking included, at
      least a random time between ``bot_pause`` and twice that, in seconds, so
      that it looks natural (0 in tests).
    * ``bot_between_deals``: seconds a room of computer players only, while
      watched, shows a deal's result before starting the next deal or match.
    * ``bot_room_grace_seconds``: a room of computer players only that nobody
      watches between deals is freed once it has been so for this many
      seconds, so that its spectators can come back after a reload or a
      server restart.
    * ``bot_pool``: where computer players think: ``"process"`` (a pool of
      worker processes, the default: a search holds the GIL) or ``"thread"``.
    * ``bot_workers``: size of that pool; 0 means one per CPU. At most this
      many searches run at once; the others queue, those of rooms where a
      person plays first (:class:`app.bots.Thinker`).
    * ``bot_rooms_per_address``: rooms with computer players in use (played,
      watched or not opened yet: ``app.lobby.Lobby.computer_rooms``) that
      one client address may have created; creating one more answers 429.
    * ``bot_rooms``: the same for the whole server; one more answers 503.
    * ``handover_seconds``: a human disconnected for longer than this in the
      middle of a deal may have their seat handed to a computer player.
    * ``auto_pass_seconds``: when a person's only legal move is a pass, the
      server plays it for them after this many seconds (in rooms whose
      ``auto_pass`` option is on), so that everyone sees whose turn it was.
    * ``ready_away_seconds``: between deals, a person disconnected for this
      long is not waited for: the others' "Ready" starts the next deal.
    * ``room_idle_hours``: a room with no connection for this many hours is
      freed by the periodic sweep.
    * ``max_rooms``: creating a room beyond this many open rooms answers 503,
      unless a room nobody opened in its first minutes makes way.
    * ``database``: the SQLite file that keeps rooms across restarts
      (``data/cardboard.db``, relative to the working directory), or
      ``":memory:"`` to keep them in memory only (tests).
    * ``keep_days``: a room whose match has finished is kept this many days
      after that (for its history) once it is no longer used.
    * ``room_create_burst``, ``room_create_per_hour``: one client address may
      create this many rooms at once, then this many an hour.
    * ``max_rooms``: creating a room beyond this many answers 503. By default
      what memory allows (:func:`rooms_memory_allows`).
    * ``ws_per_address``: websockets one client address may hold open at once
      (``app.limits``; an IPv6 address counts as its /64).
    * ``ws_per_minute``: websockets one client address may open in any 60 s.
    * ``handshake_seconds``: a connection must send a whole HTTP request (a
      websocket handshake included) within this many seconds of opening, or
      of its last answer, or it is closed (``app.handshake``).
    * ``allowed_origins``: origins (``https://example.org``) whose pages may
      open the room websocket besides the server's own host; comma-separated
      like ``games``. A websocket with no ``Origin`` is not a browser's and is
      let in (``app.security``).
    * ``api_docs``: serve the interactive API docs at ``/api/docs`` (off by
      default: they load Swagger UI from a public CDN).
    * ``redis_url``: when set (``redis://host:6379/0``), rooms are kept in this
      Redis instead of ``database``, and every server process pointed at it
      serves the same rooms (``docs/scaling.md``).
    * ``redis_prefix``: the prefix of every key and channel Cardboard uses in
      that Redis (so that one Redis can serve other things too).
    * ``gc_sweep_seconds``: every garbage collection walks only the objects
      that are new since the last one (a young collection every 50 ms),
      and all of them at most every this many seconds, once their number
      has grown by a quarter (:mod:`app.collector`); 0 keeps CPython's own
      policy.
    """

    # No setting is infinite or NaN: "inf" seconds passed a ``gt=0`` check,
    # and computer players then never moved.
    model_config = SettingsConfigDict(env_prefix="CARDBOARD_", frozen=True, allow_inf_nan=False)

    games: Annotated[tuple[str, ...], NoDecode] = Field(default_factory=_all_games)
    bot_seconds: float = Field(default=1.0, gt=0, le=60)
    bot_pause: float = Field(default=0.6, ge=0, le=60)
    bot_between_deals: float = Field(default=5.0, ge=0)
    bot_room_grace_seconds: float = Field(default=60.0, ge=0)
    bot_pool: Literal["process", "thread"] = "process"
    bot_workers: int = Field(default=0, ge=0)
    bot_rooms_per_address: int = Field(default=10, ge=1)
    bot_rooms: int = Field(default=100, ge=1)
    handover_seconds: float = Field(default=120.0, ge=0)
    auto_pass_seconds: float = Field(default=1.5, ge=0, le=60)
    ready_away_seconds: float = Field(default=60.0, ge=0)
    room_idle_hours: float = Field(default=24.0, gt=0)
    max_rooms: int = Field(default_factory=lambda: rooms_memory_allows(), ge=1)
    database: str = "data/cardboard.db"
    keep_days: float = Field(default=30.0, ge=0)
    room_create_burst: int = Field(default=30, ge=1)
    room_create_per_hour: float = Field(default=120.0, gt=0)
    ws_per_address: int = Field(default=50, ge=1)
    ws_per_minute: int = Field(default=120, ge=1)
    handshake_seconds: float = Field(default=10.0, gt=0)
    allowed_origins: Annotated[tuple[str, ...], NoDecode] = ()
    api_docs: bool = False
    redis_url: str | None = None
    redis_prefix: str = "cb:"
    gc_sweep_seconds: float = Field(default=600.0, ge=0)

    @field_validator("redis_url", mode="before")
    @classmethod
    def _empty_is_none(cls, value: Any) -> Any:
        return None if value == "" else value

    @field_validator("redis_url")
    @classmethod
    def _redis_address(cls, value: str | None) -> str | None:
        if value is not None:
            _check_redis_url(value)
        return value

    @field_validator("games", mode="before")
    @classmethod
    def _split_games(cls, value: Any) -> Any:
        if isinstance(value, str):
            value = [part.strip() for part in value.split(",")]
        if isinstance(value, list | tuple):
            value = tuple(dict.fromkeys(v for v in value if v))
            return value or _all_games()
        return value

    @field_validator("allowed_origins", mode="before")
    @classmethod
    def _split_origins(cls, value: Any) -> Any:
        if isinstance(value, str):
            value = value.split(",")
        if isinstance(value, list | tuple):
            return tuple(v.strip().rstrip("/").lower() for v in value if v.strip())
        return value

    @field_validator("games")
    @classmethod
    def _known_games(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        unknown = [g for g in value if g not in GAMES]
        if unknown:
            raise ValueError(
                f"unknown game id(s) {', '.join(map(repr, unknown))} in CARDBOARD_GAMES;"
                f" known games: {', '.join(GAMES)}"
            )
        return value

    @property
    def room_idle_seconds(self) -> float:
        """``room_idle_hours`` in seconds."""
        return self.room_idle_hours * 3600.0


def _check_redis_url(url: str) -> None:
    """Raise ``ValueError`` saying what is wrong with ``url`` as a Redis
    address (``redis://host:6379/0``, ``rediss://…`` or ``unix:///path``),
    so that the server says it in one line rather than failing later."""
    example = " (redis://host:6379/0)"
    if not url.startswith(("redis://", "rediss://", "unix://")):
        raise ValueError("a Redis address begins with redis://, rediss:// or unix://" + example)
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 (raises for a port that is not a number from 0 to 65535)
    except ValueError as exc:
        why = str(exc)
        raise ValueError(f"this Redis address cannot be read: {why[:1].lower()}{why[1:]}{example}") from None
    if parts.scheme == "unix":
        if not parts.path:
            raise ValueError("a unix:// Redis address names its socket (unix:///run/redis.sock)")
        return
    if not parts.hostname:
        raise ValueError("a Redis address names its host" + example)
    db = parts.path.lstrip("/")
    if db and not db.isdigit():
        raise ValueError(f"the database of a Redis address is a number, not {db[:20]!r}" + example)


@lru_cache(maxsize=1)
def get_settings() -> Settings:
    """The settings from the environment, read once per process."""
    return Settings()
