"""The frames of the room websocket, as pydantic models (``docs/protocol.md``).

Client frames are read with :func:`read_frame`, which applies the contract's
checks in order (``too_large``, ``bad_json``, ``bad_frame``, ``unknown_type``,
``bad_field``) and raises :class:`FrameError` with the first that fails.
Server frames are built as :class:`StateFrame`, :class:`JoinedFrame`,
:class:`ChatMessage` and :class:`ErrorFrame` and turned into text with
:func:`dump`.
"""

from __future__ import annotations

import json
import sys
import unicodedata
from collections.abc import Sequence
from typing import Annotated, Any, Literal

import orjson
from pydantic import AliasChoices, BaseModel, ConfigDict, Field, ValidationError, field_validator
from pydantic_core import PydanticSerializationError

from engine.base import Game, as_json
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

CHAT_MAX = 300
"""The longest chat message, in characters, after cleaning."""

CHAT_RATE = 5
CHAT_SECONDS = 10.0
"""A connection may send at most ``CHAT_RATE`` chat messages in any ``CHAT_SECONDS``."""

CHAT_HISTORY = 50
"""How many of the room's last chat messages a new connection receives after
its first state."""

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
    "name_taken",
    "not_seated",
    "bad_token",
    "replaced",
    "not_playing",
    "not_your_turn",
    "stale_version",
    "malformed_move",
    "illegal_move",
    "muted",
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


def _visible(text: str) -> bool:
    return any(unicodedata.category(ch)[0] in _VISIBLE and ch not in _BLANK_LOOKING for ch in text)


MARKS_MAX = 2
"""Combining marks kept on one character of a name (more would draw over
the lines above and below it)."""


def _few_marks(text: str) -> str:
    """``text`` with at most :data:`MARKS_MAX` combining marks in a row."""
    out: list[str] = []
    run = 0
    for ch in text:
        run = run + 1 if unicodedata.category(ch) in ("Mn", "Me") else 0
        if run <= MARKS_MAX:
            out.append(ch)
    return "".join(out)


def clean_name(raw: str) -> str:
    """A player name with control and format characters (bidi overrides,
    zero-width characters; also lone surrogates, line and paragraph
    separators) removed, combining marks cut to :data:`MARKS_MAX` a
    character, then trimmed. Raises ``ValueError`` unless 1 to
    :data:`NAME_MAX` characters remain. Markup is left as it is: the name
    is text, and escaping is the page's job."""
    name = _few_marks("".join(ch for ch in raw if unicodedata.category(ch) not in _DROP)).strip()
    if not _visible(name):
        raise ValueError("a name needs at least one visible character")
    if len(name) > NAME_MAX:
        raise ValueError(f"a name is at most {NAME_MAX} characters, not {len(name)}")
    return name


_LOOK_ALIKE = str.maketrans(
    "авекмнорстухіјѕԁԛԝһӏαβεζηικμνορτυχօսհոզıɡ",
    "abekmhopctyxijsdqwhlabezhikmnoptuxouhnqig")
"""Cyrillic, Greek and Armenian letters (as :meth:`str.casefold` leaves
them), and Latin's dotless i and script g → the Latin letter they look like,
in lower or upper case (Cyrillic "Аnn" is "Ann" to the eye)."""


def name_key(name: str) -> str:
    """What two names are compared by: compatibility forms folded (NFKC:
    full-width "Ａｎｎ" is "Ann"), case folded, and Cyrillic, Greek and
    Armenian letters that look like Latin ones read as those. Names with the
    same key could not be told apart at the table."""
    return unicodedata.normalize("NFKC", name).casefold().translate(_LOOK_ALIKE)


def computer_like(name: str) -> bool:
    """True if ``name`` ends in a computer player's level in brackets (``"Ada
    (strong)"``, also in full-width brackets, another case or look-alike
    letters): such names are kept for the computer players, so that nobody
    passes for one."""
    folded = name_key(name).rstrip()
    return any(folded.endswith(f"({level})") for level in BOT_LEVELS)


def clean_chat(raw: str) -> str:
    """A chat message as it is kept and shown: line breaks and tabs become
    spaces, other control and format characters are removed (as in
    :func:`clean_name`), runs of spaces become one, and the ends are trimmed.
    Raises ``ValueError`` unless 1 to :data:`CHAT_MAX` characters remain with
    a visible one among them. Markup is left as it is: the message is text."""
    spaced = "".join(" " if ch in "\t\n\r\u2028\u2029\x0b\x0c\x85" else ch for ch in raw)
    text = " ".join("".join(ch for ch in spaced if unicodedata.category(ch) not in _DROP).split())
    if not _visible(text):
        raise ValueError("a chat message needs at least one visible character")
    if len(text) > CHAT_MAX:
        raise ValueError(f"a chat message is at most {CHAT_MAX} characters, not {len(text)}")
    return text


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


class ReadyFrame(_ClientFrame):
    """The sender's seat is ready for the next deal (or the rematch), on the
    state of ``version``."""

    type: Literal["ready"]
    version: Version


class NextDealFrame(_ClientFrame):
    """Ready for the next deal (the older name of ``ready``, in ``deal_over``
    only); ``version`` is the state it was asked on."""

    type: Literal["next_deal"]
    version: Version


class RematchFrame(_ClientFrame):
    """Ready for a new match with the same seats (the older name of
    ``ready``, in ``match_over`` only); ``version`` as for next_deal."""

    type: Literal["rematch"]
    version: Version


class NewTokenFrame(_ClientFrame):
    """Give the sender's seat a new token (a new seat link): the old token
    seats nobody any more."""

    type: Literal["new_token"]


class WatchFrame(_ClientFrame):
    """The name a connection shows while it watches (``null`` or missing: no
    name); cleaned like a player's name."""

    type: Literal["watch"]
    name: str | None = None

    @field_validator("name")
    @classmethod
    def _clean(cls, value: str | None) -> str | None:
        return None if value is None else clean_name(value)


class ChatFrame(_ClientFrame):
    """A chat message, ``text`` (cleaned by :func:`clean_chat`)."""

    type: Literal["chat"]
    text: str

    @field_validator("text")
    @classmethod
    def _clean(cls, value: str) -> str:
        return clean_chat(value)


class MuteSpectatorsFrame(_ClientFrame):
    """A seated player mutes (``mute`` true) or unmutes the spectators' chat."""

    type: Literal["mute_spectators"]
    mute: bool


class PatchesFrame(_ClientFrame):
    """From now on, send this connection ``patch`` frames where they are
    shorter than the state (``app.patch``); a full state follows at once."""

    type: Literal["patches"]


class PingFrame(_ClientFrame):
    """Is this connection still open end to end? Answered at once with a
    ``pong`` to the sender alone, without touching the room: a page, which
    cannot see the websocket's own pings, sends it after a silence to find
    out whether the path to the server died without closing."""

    type: Literal["ping"]


class LeaveFrame(_ClientFrame):
    """Give up one's seat (while waiting or between deals)."""

    type: Literal["leave"]


def check_level(value: str) -> str:
    """``value`` if it is one of :data:`BOT_LEVELS`, else ``ValueError``."""
    if value not in BOT_LEVELS:
        raise ValueError(f"the level must be one of {', '.join(BOT_LEVELS)}, not {as_json(value)}")
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
    JoinFrame | ResumeFrame | MoveFrame | ReadyFrame | NextDealFrame | RematchFrame | LeaveFrame
    | AddBotFrame | RemoveBotFrame | NewTokenFrame | WatchFrame | ChatFrame | MuteSpectatorsFrame
    | PatchesFrame | PingFrame
)

CLIENT_FRAMES: dict[str, type[_ClientFrame]] = {
    "join": JoinFrame,
    "resume": ResumeFrame,
    "move": MoveFrame,
    "ready": ReadyFrame,
    "next_deal": NextDealFrame,
    "rematch": RematchFrame,
    "leave": LeaveFrame,
    "add_bot": AddBotFrame,
    "remove_bot": RemoveBotFrame,
    "new_token": NewTokenFrame,
    "watch": WatchFrame,
    "chat": ChatFrame,
    "mute_spectators": MuteSpectatorsFrame,
    "patches": PatchesFrame,
    "ping": PingFrame,
}


def too_many_digits(where: str, exc: BaseException) -> str | None:
    """If ``exc`` is Python refusing to read a number of more digits than
    ``sys.get_int_max_str_digits`` (valid JSON all the same), a sentence
    saying so about ``where`` ("the body", "the frame"); else ``None``."""
    if isinstance(exc, ValueError) and "integer string conversion" in str(exc):
        return (f"a number in {where} has more than {sys.get_int_max_str_digits():,} digits;"
                " nothing here takes one that long")
    return None


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _loads(text: str) -> Any:
    """``text`` as JSON: NaN and Infinity are refused. orjson reads what
    the standard library reads, several times as fast, except a few things
    it refuses that the standard library takes (a lone surrogate such as
    ``"\\ud800"``, an integer beyond 64 bits): those the standard library
    reads, so that every frame is judged the same either way. Raises
    ``ValueError`` (or ``RecursionError``) for text that is not JSON."""
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError:
        return json.loads(text, parse_constant=_reject_constant)


def _field_problem(err: ValidationError) -> str:
    first = err.errors()[0]
    field = ".".join(str(p) for p in first["loc"]) or "frame"
    if first["type"] == "missing":
        return f"the field {field!r} is missing"
    if first["type"] == "value_error":  # our own checks: a sentence for people
        return str(first.get("ctx", {}).get("error", first["msg"]))
    return f"the field {field!r} is wrong: {first['msg']}"


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
        obj = _loads(text)
    except (ValueError, RecursionError) as exc:
        raise FrameError("bad_json", too_many_digits("the frame", exc)
                         or f"the frame is not valid JSON ({str(exc)[:80]})") from None
    if not isinstance(obj, dict):
        raise FrameError("bad_frame", "a frame must be a JSON object with a 'type'")
    kind = obj.get("type")
    if not isinstance(kind, str):
        raise FrameError("bad_field", "the field 'type' is missing or not a string")
    model = CLIENT_FRAMES.get(kind)
    if model is None:
        raise FrameError(
            "unknown_type",
            f"unknown frame type {as_json(kind)}; expected one of {', '.join(CLIENT_FRAMES)}",
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
    """One seat at the table: its holder's name (``"Ada (strong)"`` for a
    computer player, :func:`app.table.computer_name`), kind, and whether the
    holder is connected. All null/false when free.

    Six keys appear only when they apply (so a seat of a person at the table
    is exactly ``{seat, name, kind, connected}``): ``level`` for a computer
    player; ``stand_in_for``, the name of the absent person a computer player
    is holding the seat for (they get it back when they resume);
    ``handover: true`` on a person's seat that has been disconnected for
    longer than the handover time in the middle of a deal, which a seated
    player may hand to a computer player with ``add_bot``; ``away_since``,
    when the person holding the seat lost their connection (Unix seconds, the
    server's clock); ``handover_at``, in the middle of a deal, when that seat
    may be handed over, until it may (Unix seconds, the server's clock); and
    on a free seat ``left``, the name of the person who gave it up (until
    someone sits there)."""

    seat: str
    name: str | None
    kind: Literal["human", "computer"] | None
    connected: bool
    level: str | None = Field(default=None, exclude_if=_absent)
    stand_in_for: str | None = Field(default=None, exclude_if=_absent)
    handover: bool = Field(default=False, exclude_if=_absent)
    away_since: float | None = Field(default=None, exclude_if=_absent)
    handover_at: float | None = Field(default=None, exclude_if=_absent)
    left: str | None = Field(default=None, exclude_if=_absent)


class SideView(_ServerModel):
    """A scoring side and its seats."""

    side: str
    seats: list[str]


class LogEntry(_ServerModel):
    """A move of this deal: its seat, the move in notation (``None`` while the
    game keeps it secret from the recipient, as a Stucco pick before both
    have picked), a sentence that anyone may read and ``by``, the name of who
    made the move as the seat was shown then (a computer player's name for
    the moves one made, standing in for a person or not). The sentence and
    ``by`` are sent once per connection: a state leaves them out of the
    entries that an earlier state sent to this connection carried
    (``docs/protocol.md``)."""

    seat: str
    move: str | None
    text: str | None = Field(default=None, exclude_if=_absent)
    by: str | None = Field(default=None, exclude_if=_absent)


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


class EarlierMatchView(_ServerModel):
    """A match the room finished before the one in play (a rematch followed):
    its number in the room (the first is 1), its page's id, its match points
    per side and its winning sides."""

    number: int
    match_id: str
    totals: dict[str, int]
    winners: list[str]


class ReadyView(_ServerModel):
    """Between deals (phases ``deal_over`` and ``match_over``): who is ready
    to go on. ``ready``: the seats ready (computer players always are);
    ``missing``: the people still awaited; ``away``: the people who have been
    disconnected so long that the table goes on without waiting for them.
    Every seat is in exactly one of the three lists. ``wait_away``: how long
    (seconds) a person may be disconnected before they count as away (a
    ``missing`` seat's ``away_since`` plus this is when)."""

    ready: list[str]
    missing: list[str]
    away: list[str]
    wait_away: float


class SpectatorsView(_ServerModel):
    """The connections that watch without a seat: how many, and the names
    of those who gave one (``watch``), in the order they came."""

    count: int
    names: list[str]


class ChatView(_ServerModel):
    """Whether spectators may chat: ``"off"`` (the room's
    ``spectator_chat`` option is false), ``"muted"`` (a player has muted
    them; ``muted_by`` is their name) or ``"on"``."""

    spectators: Literal["off", "muted", "on"]
    muted_by: str | None = Field(default=None, exclude_if=_absent)


class RoomView(_ServerModel):
    """The ``view`` of a state frame (``docs/protocol.md``, "state"). ``board``
    is the engine's ``view(state, seat)`` for the recipient; ``seed`` stays
    null until the match is over; ``options`` never holds the seed.
    ``seeded`` says the match was dealt from a chosen seed or deal, not at
    random; ``match_id`` is the id of the match's page (``/m/<id>``), null
    until the match is over; ``earlier``, the room's matches finished before
    this one (oldest first, at most ``app.table.EARLIER_KEPT``)."""

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
    match_id: str | None = None
    board: Any
    deals: int | None
    ready: ReadyView | None
    spectators: SpectatorsView
    chat: ChatView
    room_options: dict[str, bool]
    earlier: list[EarlierMatchView] = []


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


class ChatMessage(_ServerModel):
    """A chat message, sent to every connection of the room: who wrote it
    (``from``: the seat holder's name, or the spectator's name, ``null`` for
    a spectator who gave none), their ``seat`` (``null`` for a spectator),
    the ``text`` (to be shown as text, never as HTML) and ``at`` (Unix
    seconds, the server's clock)."""

    model_config = ConfigDict(frozen=True, serialize_by_alias=True)

    type: Literal["chat"] = "chat"
    sender: str | None = Field(validation_alias=AliasChoices("from", "sender"),
                               serialization_alias="from")
    seat: str | None
    text: str
    at: float


class SpectatorsFrame(_ServerModel):
    """Sent to every connection when the spectators change between states
    (someone comes to watch, goes, or gives a name): the new
    ``view.spectators``."""

    type: Literal["spectators"] = "spectators"
    count: int
    names: list[str]


class PongFrame(_ServerModel):
    """The answer to a ``ping``, sent to its sender alone."""

    type: Literal["pong"] = "pong"


PONG_TEXT = PongFrame().model_dump_json()
"""A ``pong`` frame as sent."""

PING_TEXT = '{"type":"ping"}'
"""A ``ping`` frame as the room page writes it (``JSON.stringify``)."""

ServerFrame = StateFrame | JoinedFrame | ChatMessage | SpectatorsFrame | ErrorFrame | PongFrame


# ---- reviews (HTTP answers, docs/protocol.md "Reviews") ------------------------------


class ReviewSeat(_ServerModel):
    """Who sat at ``seat`` in a reviewed match, as its record says: ``name``,
    ``kind`` and a computer player's ``level``, each null if not known."""

    seat: str
    name: str | None
    kind: Literal["human", "computer"] | None
    level: str | None = None


class DealSummary(_ServerModel):
    """A finished deal of a reviewed match: its number, ``starter``, own
    ``seed`` (decimal digits: 63 bits are more than a JavaScript number holds
    exactly), how many ``moves`` it took and its ``outcome``."""

    deal: int
    starter: str
    seed: str
    moves: int
    outcome: OutcomeView


class MatchReview(_ServerModel):
    """A match as a review shows it: the game (its ``board`` module and
    ``deal_noun``, as ``engine.base.GameInfo`` declares them) and its
    options, the seats, the finished deals, the totals over them; ``over``
    once the match is over,
    and then its winners and ``seed`` (digits); ``given``: how many first
    deals were given (a deal played again); ``date`` (``YYYY-MM-DD``) and,
    once over, ``match_id``, the id of its page ``/m/<id>``; ``offered``:
    false if this server deals no rooms of the game (``CARDBOARD_GAMES``), so
    that it cannot be played again here."""

    game: str
    title: str
    board: str
    deal_noun: str
    options: dict[str, Any]
    seats: list[ReviewSeat]
    sides: list[SideView]
    deals: list[DealSummary]
    totals: dict[str, int]
    over: bool
    match_winners: list[str]
    seed: str | None
    given: int
    date: str | None
    match_id: str | None
    offered: bool = True


class ReviewMove(_ServerModel):
    """One move of a reviewed deal: the seat, the move in notation, and its
    sentence."""

    seat: str
    move: str
    text: str


class ReviewStep(_ServerModel):
    """One position of a reviewed deal: the ``phase`` (``playing``, then
    ``deal_over`` or ``match_over`` at the end), the seats ``to_move`` and
    the ``board`` (the engine's ``revealed_view``: a finished deal hides
    nothing)."""

    phase: Phase
    to_move: list[str]
    board: Any


class DealReview(_ServerModel):
    """A finished deal, step by step: ``steps[0]`` is the opening position
    and ``steps[i]`` the position after ``moves[i - 1]``; ``outcome`` (with
    each side's score lines) is the result after the last move."""

    deal: int
    starter: str
    seed: str
    moves: list[ReviewMove]
    steps: list[ReviewStep]
    outcome: OutcomeView


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
