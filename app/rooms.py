"""A room: one match of one game, its seats, its connections and its version.

A :class:`Room` holds the :class:`engine.match.Match` and who sits where. Its
actions (:meth:`Room.join`, :meth:`Room.move`, …) either change the room
completely and tell every connection, or raise :class:`RoomError` and change
nothing. They are synchronous; callers hold ``room.lock`` around them so that
anything that awaits (a computer player's search, a persistent store) can join
in later without races.

Connections are anything with a ``seat`` and a ``push(text)`` that queues a
frame for sending (:class:`Connection`); the websocket layer is in
:mod:`app.ws`.

Phase (``docs/protocol.md``): ``match_over`` once the match has ended, else
``waiting`` while a seat is free, else ``deal_over`` between deals, else
``playing``. The first deal is dealt at creation and starts when the last seat
is taken.

Computer players (:meth:`Room.add_bot`) hold seats like people do. The room
only records them; :mod:`app.bots` makes them think and act, through
:meth:`Room.computer_move` and :meth:`Room.computer_continue`, which run the
same checks as a person's ``move``, ``next_deal`` and ``rematch``.
"""

from __future__ import annotations

import asyncio
import logging
import secrets
import time
from dataclasses import dataclass
from typing import Any, Literal, Protocol

from app.protocol import (
    FrameError,
    HistoryEntry,
    JoinedFrame,
    LogEntry,
    OutcomeView,
    Phase,
    RoomView,
    SeatView,
    SideView,
    StateFrame,
    dump,
    error_text,
)
from engine.base import SEED_OPTION, Game, IllegalMove, MalformedMove, MoveError, OptionError
from engine.match import Match
from engine.registry import get_game

log = logging.getLogger(__name__)

RoomError = FrameError
"""A refused action: ``code`` and ``message`` as in the protocol."""

Kind = Literal["human", "computer"]


class Connection(Protocol):
    """One client of a room. ``seat`` is the seat it holds (``None`` for a
    spectator); ``push`` queues one frame of JSON text for it, in order,
    without waiting."""

    seat: str | None

    def push(self, text: str) -> None:
        """Queue ``text`` to be sent."""
        ...


@dataclass
class Holder:
    """Who holds a seat: ``name``; ``token`` (the secret that resumes the seat,
    ``None`` for a computer player); ``kind`` ``"human"`` or ``"computer"``;
    ``connection`` while a human is connected; ``level``, the level of the
    computer player that plays the seat: always set for a computer, and set
    for a human while a computer stands in for them (issue 6: a seat handed
    over after its holder was away too long); ``away_since``, the monotonic
    time since when a human has been disconnected (``None`` while connected).
    A computer player is driven by :mod:`app.bots`, not a connection, and
    always counts as connected."""

    name: str
    token: str | None
    kind: Kind = "human"
    connection: Connection | None = None
    level: str | None = None
    away_since: float | None = None

    @property
    def connected(self) -> bool:
        """True while a human holder has a connection, always for a computer."""
        return self.kind == "computer" or self.connection is not None

    @property
    def computer_plays(self) -> bool:
        """True while a computer player makes this seat's moves."""
        return self.level is not None

    @property
    def stand_in(self) -> bool:
        """True while a computer player holds a human's seat for them."""
        return self.kind == "human" and self.level is not None


def computer_name(level: str) -> str:
    """How a computer player of ``level`` is shown: ``"Computer (strong)"``."""
    return f"Computer ({level})"


def check_room_options(game: Game, raw: dict[str, Any]) -> tuple[dict[str, Any], int | None]:
    """The game's checked options (defaults filled in, seed excluded) and the
    ``seed`` option (``None`` if absent or null). Raises ``OptionError`` naming
    an unknown option or a bad value."""
    options = game.check_options(raw)
    seed = raw.get("seed")
    return options, None if seed is None else SEED_OPTION.check(seed)


def new_room_id() -> str:
    """A fresh room id: 96 random bits, URL-safe."""
    return secrets.token_urlsafe(12)


def new_token() -> str:
    """A fresh seat token: 192 random bits, URL-safe."""
    return secrets.token_urlsafe(24)


class Room:
    """A room. Create with :meth:`create`, or :meth:`from_json` for a saved one.

    Attributes: ``id``; ``game_id``; ``options`` (checked, no seed);
    ``seed_option`` (the ``seed`` room option or ``None``); ``match``;
    ``holders`` (seat → :class:`Holder`, free seats absent); ``version``
    (raised by one on every change to the game or the seating);
    ``moved_at`` (seat → the version its last accepted move produced);
    ``deal_started`` (the version at which the current deal was dealt);
    ``rematches`` (how many rematches so far); ``connections``; ``lock``;
    ``idle_since`` (monotonic time since when no connection is open, or
    ``None``); ``closed`` (set once the room is freed); ``handover_seconds``
    (how long a human must have been away, mid-deal, before their seat may be
    handed to a computer player; ``Settings.handover_seconds``).
    """

    def __init__(
        self,
        room_id: str,
        game_id: str,
        options: dict[str, Any],
        seed_option: int | None,
        match: Match,
        *,
        now: float | None = None,
    ) -> None:
        self.id = room_id
        self.game_id = game_id
        self.game: Game = get_game(game_id)
        self.options = dict(options)
        self.seed_option = seed_option
        self.match = match
        self.seats: tuple[str, ...] = self.game.seats(self.options)
        self.sides = self.game.sides(self.options)
        self.holders: dict[str, Holder] = {}
        self.version = 0
        self.moved_at: dict[str, int] = {}
        self.deal_started = 0
        self.rematches = 0
        self.connections: set[Connection] = set()
        self.lock = asyncio.Lock()
        self.idle_since: float | None = time.monotonic() if now is None else now
        self.closed = False
        self.visited = False
        self.log: list[LogEntry] = []
        self.handover_seconds = 120.0

    @staticmethod
    def create(game_id: str, raw_options: dict[str, Any], *, room_id: str | None = None) -> Room:
        """A new room with deal 1 dealt. Raises ``KeyError`` for an unknown game
        and ``OptionError`` for a bad option (messages name them). The match
        seed is the ``seed`` option, else 63 random bits."""
        game = get_game(game_id)
        options, seed = check_room_options(game, raw_options)
        match = Match.new(game_id, options, secrets.randbits(63) if seed is None else seed)
        return Room(room_id or new_room_id(), game_id, options, seed, match)

    # ---- derived ------------------------------------------------------------------------
    @property
    def phase(self) -> Phase:
        """``match_over``, ``waiting``, ``deal_over`` or ``playing``."""
        if self.match.over:
            return "match_over"
        if len(self.holders) < len(self.seats):
            return "waiting"
        if self.match.deal_over:
            return "deal_over"
        return "playing"

    def free_seats(self) -> list[str]:
        """The free seats, in seat order."""
        return [s for s in self.seats if s not in self.holders]

    @property
    def watched(self) -> bool:
        """True while any connection (seated or spectator) is open."""
        return bool(self.connections)

    @property
    def computer_only(self) -> bool:
        """True when every seat is held by a computer player (and no absent
        human has a claim on any of them)."""
        return len(self.holders) == len(self.seats) and all(
            h.kind == "computer" for h in self.holders.values())

    def computer_plays(self, seat: str) -> bool:
        """True if a computer player makes ``seat``'s moves now."""
        holder = self.holders.get(seat)
        return holder is not None and holder.computer_plays

    def may_hand_over(self, seat: str, now: float | None = None) -> bool:
        """True if ``seat`` may be handed to a computer player now: a deal is
        in play and its human holder has been disconnected for more than
        :attr:`handover_seconds` (issue 6)."""
        holder = self.holders.get(seat)
        if holder is None or holder.kind != "human" or holder.computer_plays:
            return False
        if holder.connection is not None or holder.away_since is None or self.phase != "playing":
            return False
        now = time.monotonic() if now is None else now
        return now - holder.away_since > self.handover_seconds

    # ---- frames -------------------------------------------------------------------------
    def state_frames(self, seats: set[str | None]) -> dict[str | None, str]:
        """The state frame as JSON text for each of ``seats`` (``None`` is a
        spectator): the shared part is built once, the engine's view and the
        legal moves once per seat."""
        match, game = self.match, self.game
        phase = self.phase
        to_move = list(game.to_move(match.state)) if phase == "playing" else []
        outcome = match.current.outcome
        history = [
            HistoryEntry(deal=i + 1, outcome=OutcomeView.model_validate(o.to_json()))
            for i, o in enumerate(match.outcomes)
        ]
        common: dict[str, Any] = {
            "title": game.info.title,
            "seats": [self._seat_view(s) for s in self.seats],
            "sides": [SideView(side=name, seats=list(ss)) for name, ss in self.sides],
            "options": self.options,
            "deal": match.deal_number,
            "log": self.log,
            "outcome": history[-1].outcome if outcome is not None else None,
            "history": history,
            "totals": match.totals(),
            "match_winners": list(match.winners()),
            "seed": match.seed if match.over else None,
        }
        secret_moves = type(game).public_move is not Game.public_move
        out: dict[str | None, str] = {}
        for seat in seats:
            legal: list[str] = []
            if seat is not None and seat in to_move and not self.computer_plays(seat):
                legal = list(game.legal_moves(match.state, seat))
            if secret_moves:
                common["log"] = self._public_log(seat)
            frame = StateFrame(
                version=self.version,
                room=self.id,
                game=self.game_id,
                you=seat,
                phase=phase,
                to_move=to_move,
                legal_moves=legal,
                view=RoomView(board=game.view(match.state, seat), **common),
            )
            out[seat] = dump(frame)
        return out

    def _public_log(self, viewer: str | None) -> list[LogEntry]:
        """This deal's log as ``viewer`` may see it: a move still secret from
        them (``Game.public_move`` gives ``None``) shows as ``null``; the
        sentences are written to be shown to everyone."""
        state, game = self.match.state, self.game
        out = []
        for e in self.log:
            shown = game.public_move(state, e.seat, e.move, viewer) if e.move is not None else None
            out.append(e if shown == e.move else LogEntry(seat=e.seat, move=shown, text=e.text))
        return out

    def _seat_view(self, seat: str) -> SeatView:
        h = self.holders.get(seat)
        if h is None:
            return SeatView(seat=seat, name=None, kind=None, connected=False)
        if h.level is not None:
            return SeatView(seat=seat, name=computer_name(h.level), kind="computer", connected=True,
                            level=h.level, stand_in_for=h.name if h.kind == "human" else None)
        return SeatView(seat=seat, name=h.name, kind=h.kind, connected=h.connected,
                        handover=self.may_hand_over(seat))

    def state_text(self, seat: str | None) -> str:
        """The state frame for one seat (or a spectator) as JSON text."""
        return self.state_frames({seat})[seat]

    def send_state(self, conn: Connection) -> None:
        """Queue a fresh state for one connection."""
        conn.push(self.state_text(conn.seat))

    def broadcast(self) -> None:
        """Queue the current state for every connection, each with its view."""
        texts = self.state_frames({c.seat for c in self.connections})
        for conn in self.connections:
            conn.push(texts[conn.seat])

    def refuse(self, conn: Connection, error: RoomError) -> None:
        """Tell ``conn`` why its action was refused, then send it a fresh state."""
        conn.push(error_text(error.code, error.message))
        self.send_state(conn)

    # ---- connections --------------------------------------------------------------------
    def attach(self, conn: Connection) -> None:
        """A new connection, as a spectator: it receives the state at once."""
        conn.seat = None
        self.connections.add(conn)
        self.visited = True
        self.idle_since = None
        self.send_state(conn)

    def detach(self, conn: Connection, now: float | None = None) -> None:
        """A connection has closed. If it held a seat, the holder shows as
        disconnected (a presence change: no version bump)."""
        self.connections.discard(conn)
        seat, conn.seat = conn.seat, None
        holder = self.holders.get(seat) if seat is not None else None
        if holder is not None and holder.connection is conn:
            holder.connection = None
            holder.away_since = time.monotonic() if now is None else now
            self.broadcast()
        if not self.connections:
            self.idle_since = time.monotonic() if now is None else now

    # ---- seating ------------------------------------------------------------------------
    def join(self, conn: Connection, seat: str | None, name: str) -> None:
        """``conn`` takes ``seat`` (any free seat when ``None``) under ``name``
        (already cleaned). Sends it ``joined`` with its token, then the state to
        everyone.

        Raises ``bad_seat``, ``seat_taken``, ``room_full`` or ``already_seated``,
        checked in that order.
        """
        full = not self.free_seats()
        if seat is not None:
            self._check_seat(seat)
            holder = self.holders.get(seat)
            if holder is not None and holder.connection is not conn:
                extra = " The room is full: you are watching as a spectator." if full else ""
                raise RoomError("seat_taken", f"seat {seat} is taken by {holder.name}.{extra}")
        elif full:
            raise RoomError("room_full", "the room is full: you are watching as a spectator")
        if conn.seat is not None:
            raise RoomError("already_seated", f"you already sit at {conn.seat}")
        seat = seat if seat is not None else self.free_seats()[0]
        token = new_token()
        self.holders[seat] = Holder(name, token, "human", conn)
        conn.seat = seat
        self.version += 1
        conn.push(dump(JoinedFrame(seat=seat, token=token)))
        self.broadcast()

    def resume(self, conn: Connection, token: str) -> None:
        """``conn`` takes back the seat ``token`` was issued for. A connection
        that held it before gets ``replaced`` and becomes a spectator. Not a
        seating change, so the version stays, unless a computer player was
        holding the seat for its human: the human gets it back at once
        (version + 1), or after the computer's move if the seat is awaited.

        Raises ``already_seated`` (``conn`` holds another seat) or ``bad_token``.
        """
        seat = next(
            (s for s, h in self.holders.items()
             if h.token is not None and secrets.compare_digest(h.token.encode(), token.encode())),
            None,
        )
        if conn.seat is not None and conn.seat != seat:
            raise RoomError("already_seated", f"you already sit at {conn.seat}")
        if seat is None:
            raise RoomError("bad_token", "this token holds no seat in this room")
        holder = self.holders[seat]
        assert holder.token is not None
        joined = dump(JoinedFrame(seat=seat, token=holder.token))
        old = holder.connection
        if old is conn:
            conn.push(joined)
            self.send_state(conn)
            return
        was_connected = holder.connected
        holder.connection = conn
        holder.away_since = None
        conn.seat = seat
        self.idle_since = None
        if old is not None:
            old.seat = None
            old.push(error_text("replaced", f"seat {seat} was taken back by another connection;"
                                " you are now watching as a spectator"))
            self.send_state(old)
        conn.push(joined)
        if self._hand_back():
            self.version += 1
            self.broadcast()
        elif was_connected:
            self.send_state(conn)
        else:
            self.broadcast()

    def _hand_back(self) -> bool:
        """Give every seat a computer player holds for a human who has come
        back to that human, unless the seat is awaited right now (the computer
        player finishes that turn first: issue 6, "they get their seat back at
        the next turn"). True if any seat changed hands."""
        awaited = set(self.game.to_move(self.match.state)) if self.phase == "playing" else set()
        changed = False
        for seat, h in self.holders.items():
            if h.stand_in and h.connection is not None and seat not in awaited:
                h.level = None
                changed = True
        return changed

    def leave(self, conn: Connection) -> None:
        """``conn`` gives up its seat. Raises ``not_seated``, or ``not_playing``
        during a deal."""
        seat = self._seated(conn)
        if self.phase == "playing":
            raise RoomError("not_playing", "you cannot leave during a deal: the seat is needed until"
                            " the deal ends")
        del self.holders[seat]
        self.moved_at.pop(seat, None)
        conn.seat = None
        self.version += 1
        self.broadcast()

    def add_bot(self, conn: Connection, seat: str, level: str, now: float | None = None) -> None:
        """A computer player of ``level`` takes ``seat`` for ``conn``'s table:
        a free seat, or a human's seat that :meth:`may_hand_over` (the human
        keeps their token and gets the seat back when they resume). Version + 1.

        Raises ``bad_seat``, ``seat_taken`` (held, and not to be handed over)
        or ``not_seated`` (``conn`` holds no seat), checked in that order.
        """
        self._check_seat(seat)
        holder = self.holders.get(seat)
        if holder is not None and not self.may_hand_over(seat, now):
            raise RoomError("seat_taken", self._why_taken(seat, holder, now))
        self._seated(conn)
        if holder is None:
            self.holders[seat] = Holder(computer_name(level), None, "computer", level=level)
        else:
            holder.level = level
        self.version += 1
        self.broadcast()

    def seat_computers(self, seats: list[str], level: str) -> None:
        """Computer players of ``level`` take ``seats`` as the room is created
        (before anyone has seen it, so the version stays). Raises
        ``OptionError`` naming an unknown or repeated seat."""
        if len(set(seats)) != len(seats):
            raise OptionError("bots.seats names a seat twice")
        for seat in seats:
            if seat not in self.seats:
                raise OptionError(f"bots.seats: there is no seat {seat[:20]!r} in {self.game_id};"
                                  f" the seats are {', '.join(self.seats)}")
        for seat in seats:
            self.holders[seat] = Holder(computer_name(level), None, "computer", level=level)

    def _why_taken(self, seat: str, holder: Holder, now: float | None) -> str:
        if holder.computer_plays:
            return f"seat {seat} is already played by a computer player"
        if holder.connection is not None:
            return f"seat {seat} is taken by {holder.name}"
        if self.phase != "playing":
            return (f"seat {seat} is held by {holder.name}, who is away; a seat can be handed to a"
                    " computer player only in the middle of a deal")
        now = time.monotonic() if now is None else now
        away = 0.0 if holder.away_since is None else now - holder.away_since
        return (f"seat {seat} is held by {holder.name}, who has been away for {away:.0f} seconds; the"
                f" seat can be handed to a computer player after {self.handover_seconds:g} seconds")

    def remove_bot(self, conn: Connection, seat: str) -> None:
        """Free the seat of the computer player at ``seat`` (a computer standing
        in for an absent human frees it too: that human's token is void).
        Version + 1.

        Raises ``bad_seat`` (no such seat, or no computer player there),
        ``seat_taken`` (a human plays it), ``not_seated`` or ``not_playing``
        (during a deal), checked in that order.
        """
        self._check_seat(seat)
        holder = self.holders.get(seat)
        if holder is None:
            raise RoomError("bad_seat", f"seat {seat} is free: there is no computer player to remove")
        if not holder.computer_plays:
            raise RoomError("seat_taken", f"seat {seat} is held by {holder.name}, not a computer player")
        self._seated(conn)
        if self.phase == "playing":
            raise RoomError("not_playing", "a computer player cannot leave during a deal: remove it"
                            " when the deal is over")
        del self.holders[seat]
        self.moved_at.pop(seat, None)
        self.version += 1
        self.broadcast()

    def _check_seat(self, seat: str) -> None:
        if seat not in self.seats:
            raise RoomError("bad_seat", f"there is no seat {seat[:20]!r}: the seats are "
                            + ", ".join(self.seats))

    def _seated(self, conn: Connection) -> str:
        if conn.seat is None:
            raise RoomError("not_seated", "you are watching: join a seat first")
        return conn.seat

    def _not_playing(self, wanted: Phase) -> RoomError:
        phase = self.phase
        if phase == "waiting":
            return RoomError("not_playing", "waiting for every seat to be taken")
        what = {"playing": "a deal is in play", "deal_over": "the deal is over",
                "match_over": "the match is over"}[phase]
        doing = {"playing": "moves", "deal_over": "the next deal",
                 "match_over": "a rematch"}[wanted]
        return RoomError("not_playing", f"{what}: this is not the time for {doing}")

    # ---- play ---------------------------------------------------------------------------
    def move(self, conn: Connection, move: str, version: int) -> None:
        """``conn``'s seat plays ``move``, made on the state of ``version``.

        On the current version the move is judged on its legality. On an older
        one it is accepted only if it is legal now, the current deal had begun
        by then, and the seat has had no move accepted since; otherwise
        ``stale_version`` (PROTOCOL.md, "Versions and simultaneous moves").

        Raises ``not_seated``, ``not_playing``, ``not_your_turn`` (also while
        a computer player finishes the turn of a seat handed back to ``conn``),
        ``stale_version``, ``malformed_move`` or ``illegal_move``, in that order.
        """
        self._judge(self._seated(conn), move, version, computer=False)

    def computer_move(self, seat: str, move: str, version: int) -> None:
        """The computer player at ``seat`` plays ``move``, chosen on the state of
        ``version``: exactly the checks and effects of :meth:`move`.

        Raises ``not_seated`` (no computer player plays ``seat``), then as
        :meth:`move`.
        """
        if not self.computer_plays(seat):
            raise RoomError("not_seated", f"no computer player plays seat {seat}")
        self._judge(seat, move, version, computer=True)

    def _judge(self, seat: str, move: str, version: int, computer: bool) -> None:
        if self.phase != "playing":
            raise self._not_playing("playing")
        awaited = self.game.to_move(self.match.state)
        if seat not in awaited:
            raise RoomError("not_your_turn", f"it is {' and '.join(awaited)}'s turn, not yours")
        if self.computer_plays(seat) != computer:
            raise RoomError("not_your_turn", "a computer player is finishing this turn for you: your"
                            " seat is yours again from the next turn")
        if version != self.version:
            stale = (
                version > self.version
                or version < self.deal_started
                or self.moved_at.get(seat, -1) > version
            )
            after = None if stale else self._try_play(seat, move)
            if after is None:
                raise RoomError("stale_version", f"that move was made on version {version}, but the"
                                f" game has moved on to version {self.version}: here is the state now")
        else:
            after = self._play(seat, move)
        text = self._describe(seat, move)
        self.match = after
        self.version += 1
        self.moved_at[seat] = self.version
        self.log.append(LogEntry(seat=seat, move=move, text=text))
        self._hand_back()
        self.broadcast()

    def _try_play(self, seat: str, move: str) -> Match | None:
        try:
            return self._play(seat, move)
        except RoomError:
            return None

    def _play(self, seat: str, move: str) -> Match:
        try:
            return self.match.play(seat, move)
        except MalformedMove as exc:
            raise RoomError("malformed_move", str(exc)) from None
        except IllegalMove as exc:
            raise RoomError("illegal_move", str(exc)) from None
        except MoveError as exc:
            raise RoomError("illegal_move", str(exc)) from None
        except Exception:
            log.exception("the engine failed on move %r by %s in room %s", move[:40], seat, self.id)
            raise RoomError("malformed_move", "this move could not be read") from None

    def _describe(self, seat: str, move: str) -> str:
        try:
            return self.game.describe(self.match.state, seat, move)
        except Exception:
            log.exception("describe failed on move %r in room %s", move[:40], self.id)
            return f"{seat}: {move}"

    def next_deal(self, conn: Connection, version: int) -> None:
        """Deal the next deal. Raises ``not_seated``, ``not_playing`` (not
        ``deal_over``) or ``stale_version`` (``version`` is not current)."""
        self._seated(conn)
        self._next_deal(version)

    def computer_continue(self, version: int) -> None:
        """A computer player presses "Next deal" (``deal_over``) or "Rematch"
        (``match_over``) on the state of ``version``, with the checks of
        :meth:`next_deal` and :meth:`rematch`. Raises ``not_seated`` unless a
        computer player holds a seat, then ``not_playing`` or ``stale_version``."""
        if not any(h.computer_plays for h in self.holders.values()):
            raise RoomError("not_seated", "no computer player sits in this room")
        if self.phase == "match_over":
            self._rematch(version)
        else:
            self._next_deal(version)

    def _next_deal(self, version: int) -> None:
        if self.phase != "deal_over":
            raise self._not_playing("deal_over")
        self._check_current(version)
        self.match = self.match.next_deal()
        self._new_deal()

    def rematch(self, conn: Connection, version: int) -> None:
        """A new match with the same seats, dealt from a fresh random seed
        (never derived from a seed already shown, even in a seeded room).
        Raises ``not_seated``, ``not_playing`` (not ``match_over``) or
        ``stale_version``."""
        self._seated(conn)
        self._rematch(version)

    def _rematch(self, version: int) -> None:
        if self.phase != "match_over":
            raise self._not_playing("match_over")
        self._check_current(version)
        n = self.rematches + 1
        # Always a fresh random seed: the seed of the match just ended is shown
        # to everyone, so nothing derived from it may deal the next one.
        seed = secrets.randbits(63)
        self.match = Match.new(self.game_id, self.options, seed)
        self.rematches = n
        self.moved_at.clear()
        self._new_deal()

    def _check_current(self, version: int) -> None:
        if version != self.version:
            raise RoomError("stale_version", f"that was asked on version {version}, but the room is at"
                            f" version {self.version}: here is the state now")

    def _new_deal(self) -> None:
        self.version += 1
        self.deal_started = self.version
        self.log = []
        self.broadcast()

    # ---- JSON ---------------------------------------------------------------------------
    def to_json(self) -> dict[str, Any]:
        """The whole room as JSON (secret: it holds the seed and the tokens).
        Connections are not saved; after :meth:`from_json` every human is
        disconnected until they resume."""
        return {
            "id": self.id,
            "game": self.game_id,
            "options": dict(self.options),
            "seed": self.seed_option,
            "match": self.match.to_json(),
            "holders": {
                seat: {"name": h.name, "token": h.token, "kind": h.kind, "level": h.level}
                for seat, h in self.holders.items()
            },
            "version": self.version,
            "moved_at": dict(self.moved_at),
            "deal_started": self.deal_started,
            "rematches": self.rematches,
        }

    @staticmethod
    def from_json(data: dict[str, Any], *, now: float | None = None) -> Room:
        """A room rebuilt from :meth:`to_json` output (the match replayed).

        Raises ``KeyError``, ``ValueError`` (``OptionError``) or a move error if
        the data is not a valid room.
        """
        game = get_game(data["game"])
        options, seed = check_room_options(game, {**data["options"], "seed": data["seed"]})
        room = Room(data["id"], data["game"], options, seed, Match.from_json(data["match"]), now=now)
        for seat, h in data["holders"].items():
            if seat not in room.seats:
                raise OptionError(f"no seat {seat!r} in {room.game_id}")
            level = h.get("level")
            if h["kind"] == "computer" and level is None:
                raise OptionError(f"the computer player at {seat!r} has no level")
            room.holders[seat] = Holder(h["name"], h["token"], h["kind"], level=level,
                                        away_since=None if h["kind"] == "computer" else room.idle_since)
        room.version = int(data["version"])
        room.moved_at = {s: int(v) for s, v in data["moved_at"].items()}
        room.deal_started = int(data["deal_started"])
        room.rematches = int(data["rematches"])
        room.log = room._replay_log()
        return room

    def _replay_log(self) -> list[LogEntry]:
        current = self.match.current
        state = self.game.deal(current.seed, self.options, current.starter)
        out = []
        for seat, move in current.moves:
            out.append(LogEntry(seat=seat, move=move, text=self.game.describe(state, seat, move)))
            state = self.game.apply(state, seat, move)
        return out
