"""The frames of the room websocket, as pydantic models (``docs/protocol.md``).

Client frames are read with :func:`read_frame`, which applies the contract's
checks in order (``too_large``, ``bad_json``, ``bad_frame``, ``unknown_type``,
``bad_field``) and raises :class:`FrameError` with the first that fails.
Server frames are built as :class:`StateFrame`, :class:`JoinedFrame` and
:class:`ErrorFrame` and turned into text with :func:`dump`.
"""

from __future__ import annotations

import json
import unicodedata
from collections.abc import Sequence
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator
from pydantic_core import PydanticSerializationError

from engine.base import Game
from engine.bots import LEVELS

MAX_FRAME_BYTES = 64 * 1024
"""The largest client frame accepted, in bytes (UTF-8 for text frames)."""

RATE_FRAMES = 300
RATE_SECONDS = 10.0
"""A connection may send at most ``RATE_FRAMES`` frames in any ``RATE_SECONDS``."""

NAME_MAX = 32
"""The longest player name, in characters, after cleaning."""

BOT_LEVELS: tuple[str, ...] = LEVELS
"""The levels of computer players, weakest first: ``engine.bots.LEVELS``."""

DEFAULT_LEVEL = "medium"
"""The level of a computer player when ``add_bot`` (or room creation) names none."""

ErrorCode = Literal[
    "rate_limited",
    "too_large",
    "bad_json",
    "bad_frame",
    "unknown_type",
    "bad_field",
    "no_such_room",
    "bad_seat",
    "seat_taken",
    "room_full",
    "already_seated",
    "not_seated",
    "bad_token",
    "replaced",
    "not_playing",
    "not_your_turn",
    "stale_version",
    "malformed_move",
    "illegal_move",
    "unavailable",
]
ERROR_CODES: tuple[str, ...] = ErrorCode.__args__  # type: ignore[attr-defined]
"""Every error code, in the order the checks run (``rate_limited`` first)."""

Phase = Literal["waiting", "playing", "deal_over", "match_over"]


class FrameError(Exception):
    """A frame or an action refused with ``code`` and a ``message`` for people."""

    def __init__(self, code: ErrorCode, message: str) -> None:
        super().__init__(message)
        self.code: ErrorCode = code
        self.message = message


# ---- names ---------------------------------------------------------------------------

_DROP = {"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"}
"""Unicode categories removed from names: controls, format characters (bidi
overrides, zero-width characters), surrogates, private use, unassigned, and
line/paragraph separators."""
_VISIBLE = ("L", "N", "P", "S")
"""A name needs a character of one of these categories (letter, number,
punctuation, symbol) that is not blank, e.g. U+3164 HANGUL FILLER."""
_BLANK_LOOKING = {"\u3164", "\u2800", "\u115f", "\u1160", "\uffa0"}


def clean_name(raw: str) -> str:
    """A player name with control and format characters (bidi overrides,
    zero-width characters; also lone surrogates, line and paragraph
    separators) removed, then trimmed. Raises ``ValueError`` unless
    1 to :data:`NAME_MAX` characters remain. Markup is left as it is: the name
    is text, and escaping is the page's job."""
    name = "".join(ch for ch in raw if unicodedata.category(ch) not in _DROP).strip()
    if not any(unicodedata.category(ch)[0] in _VISIBLE and ch not in _BLANK_LOOKING for ch in name):
        raise ValueError("a name needs at least one visible character")
    if len(name) > NAME_MAX:
        raise ValueError(f"a name is at most {NAME_MAX} characters, not {len(name)}")
    return name


# ---- client frames -------------------------------------------------------------------


class _ClientFrame(BaseModel):
    model_config = ConfigDict(strict=True, extra="ignore", frozen=True)


Version = Annotated[int, Field(ge=0)]


class JoinFrame(_ClientFrame):
    """Take a seat: ``seat`` names it, or is missing/null for any free seat."""

    type: Literal["join"]
    name: str
    seat: str | None = None

    @field_validator("name")
    @classmethod
    def _clean(cls, value: str) -> str:
        return clean_name(value)


class ResumeFrame(_ClientFrame):
    """Take back the seat that ``token`` was issued for."""

    type: Literal["resume"]
    token: str


class MoveFrame(_ClientFrame):
    """Play ``move`` (the game's notation), made on the state of ``version``."""

    type: Literal["move"]
    move: str
    version: Version


class NextDealFrame(_ClientFrame):
    """Start the next deal; ``version`` is the state it was asked on."""

    type: Literal["next_deal"]
    version: Version


class RematchFrame(_ClientFrame):
    """Start a new match with the same seats; ``version`` as for next_deal."""

    type: Literal["rematch"]
    version: Version


class LeaveFrame(_ClientFrame):
    """Give up one's seat (while waiting or between deals)."""

    type: Literal["leave"]


def check_level(value: str) -> str:
    """``value`` if it is one of :data:`BOT_LEVELS`, else ``ValueError``."""
    if value not in BOT_LEVELS:
        raise ValueError(f"the level must be one of {', '.join(BOT_LEVELS)}, not {_short(value)}")
    return value


class AddBotFrame(_ClientFrame):
    """Seat a computer player at ``seat``, of an optional ``level`` (one of
    :data:`BOT_LEVELS`; missing or null: :data:`DEFAULT_LEVEL`)."""

    type: Literal["add_bot"]
    seat: str
    level: str | None = None

    @field_validator("level")
    @classmethod
    def _known_level(cls, value: str | None) -> str | None:
        return None if value is None else check_level(value)


class RemoveBotFrame(_ClientFrame):
    """Free the computer player's ``seat``."""

    type: Literal["remove_bot"]
    seat: str


ClientFrame = (
    JoinFrame | ResumeFrame | MoveFrame | NextDealFrame | RematchFrame | LeaveFrame
    | AddBotFrame | RemoveBotFrame
)

CLIENT_FRAMES: dict[str, type[_ClientFrame]] = {
    "join": JoinFrame,
    "resume": ResumeFrame,
    "move": MoveFrame,
    "next_deal": NextDealFrame,
    "rematch": RematchFrame,
    "leave": LeaveFrame,
    "add_bot": AddBotFrame,
    "remove_bot": RemoveBotFrame,
}


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _field_problem(err: ValidationError) -> str:
    first = err.errors()[0]
    field = ".".join(str(p) for p in first["loc"]) or "frame"
    if first["type"] == "missing":
        return f"the field {field!r} is missing"
    msg = first["msg"]
    if first["type"] == "value_error":
        msg = str(first.get("ctx", {}).get("error", msg))
    return f"the field {field!r} is wrong: {msg}"


def read_frame(text: str | None, data: bytes | None) -> ClientFrame:
    """The client frame in a websocket message (``text`` for a text frame,
    ``data`` for a binary one).

    Raises :class:`FrameError`: ``too_large`` over :data:`MAX_FRAME_BYTES`,
    ``bad_frame`` for any binary frame, ``bad_json`` for text that is not JSON
    (NaN and Infinity included), ``bad_frame`` for JSON that is not an object,
    ``bad_field`` for a missing or non-string ``type``, ``unknown_type``, then
    ``bad_field`` for a missing or mistyped field or a bad name.
    """
    if data is not None or text is None:
        size = len(data or b"")
        if size > MAX_FRAME_BYTES:
            raise FrameError("too_large", f"a frame may be at most {MAX_FRAME_BYTES} bytes, not {size}")
        raise FrameError("bad_frame", "binary frames are not accepted: send each frame as JSON text")
    if len(text) > MAX_FRAME_BYTES or len(text.encode("utf-8", "surrogatepass")) > MAX_FRAME_BYTES:
        raise FrameError("too_large", f"a frame may be at most {MAX_FRAME_BYTES} bytes")
    try:
        obj = json.loads(text, parse_constant=_reject_constant)
    except (ValueError, RecursionError) as exc:
        raise FrameError("bad_json", f"the frame is not valid JSON ({str(exc)[:80]})") from None
    if not isinstance(obj, dict):
        raise FrameError("bad_frame", "a frame must be a JSON object with a 'type'")
    kind = obj.get("type")
    if not isinstance(kind, str):
        raise FrameError("bad_field", "the field 'type' is missing or not a string")
    model = CLIENT_FRAMES.get(kind)
    if model is None:
        raise FrameError(
            "unknown_type",
            f"unknown frame type {_short(kind)}; expected one of {', '.join(CLIENT_FRAMES)}",
        )
    try:
        return model.model_validate(obj)  # type: ignore[return-value]
    except ValidationError as exc:
        raise FrameError("bad_field", _field_problem(exc)) from None


# ---- server frames -------------------------------------------------------------------


class _ServerModel(BaseModel):
    model_config = ConfigDict(frozen=True)


def _absent(value: Any) -> bool:
    return value is None or value is False


class SeatView(_ServerModel):
    """One seat at the table: its holder's name (``"Computer (strong)"`` for a
    computer player), kind, and whether the holder is connected. All
    null/false when free.

    Three keys appear only when they apply (so a seat of a person at the table
    is exactly ``{seat, name, kind, connected}``): ``level`` for a computer
    player; ``stand_in_for``, the name of the absent person a computer player
    is holding the seat for (they get it back when they resume); and
    ``handover: true`` on a person's seat that has been disconnected for
    longer than the handover time in the middle of a deal, which a seated
    player may hand to a computer player with ``add_bot``."""

    seat: str
    name: str | None
    kind: Literal["human", "computer"] | None
    connected: bool
    level: str | None = Field(default=None, exclude_if=_absent)
    stand_in_for: str | None = Field(default=None, exclude_if=_absent)
    handover: bool = Field(default=False, exclude_if=_absent)


class SideView(_ServerModel):
    """A scoring side and its seats."""

    side: str
    seats: list[str]


class LogEntry(_ServerModel):
    """A move of this deal: its seat, the move in notation (``None`` while the
    game keeps it secret from the recipient, as a Stucco pick before both
    have picked), and a sentence that anyone may read. The sentence is sent
    once per connection: a state leaves it out of the entries that an
    earlier state sent to this connection carried (``docs/protocol.md``)."""

    seat: str
    move: str | None
    text: str | None = Field(default=None, exclude_if=_absent)


class FactorView(_ServerModel):
    """One factor of a score line whose points are a product: its ``value``
    and what it counts (``label``)."""

    value: int
    label: str


class ScoreLineView(_ServerModel):
    """One line of a score breakdown (``engine.base.ScoreLine.to_json``);
    ``factors`` only where the points are a product of them."""

    label: str
    detail: str
    points: int
    factors: list[FactorView] | None = Field(default=None, exclude_if=_absent)


class SideScoreView(_ServerModel):
    """A side's score for one deal (``engine.base.SideScore``)."""

    side: str
    seats: list[str]
    points: int
    lines: list[ScoreLineView]


class OutcomeView(_ServerModel):
    """The end of a deal (``engine.base.Outcome.to_json``)."""

    winners: list[str]
    reason: str
    scores: list[SideScoreView]


class HistoryEntry(_ServerModel):
    """An ended deal of the match, 1-based."""

    deal: int
    outcome: OutcomeView


class RoomView(_ServerModel):
    """The ``view`` of a state frame (``docs/protocol.md``, "state"). ``board``
    is the engine's ``view(state, seat)`` for the recipient; ``seed`` stays
    null until the match is over; ``options`` never holds the seed;
    ``seeded`` is true while the match in play was dealt from a seed chosen
    when the room was created (its creator may know the cards)."""

    title: str
    seats: list[SeatView]
    sides: list[SideView]
    options: dict[str, Any]
    deal: int
    log: list[LogEntry]
    outcome: OutcomeView | None
    history: list[HistoryEntry]
    totals: dict[str, int]
    match_winners: list[str]
    seed: int | None
    seeded: bool = False
    board: Any


class MoveView(_ServerModel):
    """One of the recipient's legal moves as data (``docs/protocol.md``, "Move
    structures"): ``move``, its notation (as in ``legal_moves``), ``kind``,
    and the squares or cards of that kind, kept as the engine gives them
    (``engine.base.Game.move_structure``)."""

    model_config = ConfigDict(frozen=True, extra="allow")

    move: str
    kind: str


def move_views(game: Game, state: Any, seat: str | None, legal_moves: Sequence[str]) -> list[MoveView]:
    """The structure of each of ``legal_moves`` (the moves of ``seat`` on
    ``state`` that a state frame lists), in the same order, for
    ``StateFrame.moves``: ``Game.move_structures``, or ``[]`` for a
    spectator or a seat with no legal move."""
    if seat is None or not legal_moves:
        return []
    return [MoveView.model_validate(st) for st in game.move_structures(state, seat, legal_moves)]


class StateFrame(_ServerModel):
    """The room as one connection sees it. ``moves`` holds the structure of
    each of ``legal_moves``, in the same order (:func:`move_views`);
    ``legal_moves`` stays for clients that read the notation."""

    type: Literal["state"] = "state"
    version: int
    room: str
    game: str
    you: str | None
    phase: Phase
    to_move: list[str]
    legal_moves: list[str]
    moves: list[MoveView] = Field(default_factory=list)
    view: RoomView


class JoinedFrame(_ServerModel):
    """Sent to a connection that took or took back ``seat``; ``token`` lets it
    resume later. Never sent to anyone else."""

    type: Literal["joined"] = "joined"
    seat: str
    token: str


class ErrorFrame(_ServerModel):
    """A refusal, sent only to the connection whose frame caused it (and
    ``replaced`` to a connection whose seat was taken back elsewhere)."""

    type: Literal["error"] = "error"
    code: ErrorCode
    message: str


ServerFrame = StateFrame | JoinedFrame | ErrorFrame


def dump(frame: _ServerModel) -> str:
    """A server frame as JSON text (UTF-8 characters kept; anything that cannot
    be encoded as UTF-8 falls back to ASCII escapes)."""
    try:
        return frame.model_dump_json()
    except PydanticSerializationError:
        return json.dumps(frame.model_dump(mode="python"), ensure_ascii=True)


def error_text(code: ErrorCode, message: str) -> str:
    """An ``error`` frame as JSON text."""
    return dump(ErrorFrame(code=code, message=message))
