"""The durable part of a room: a :class:`Table`, and the actions that change it.

A table is what must survive a restart: the game and its options, the match
(seed and moves), who holds each seat (names, seat-token *hashes*, computer
levels), the version and the bookkeeping that versions need. It is immutable:
:meth:`Table.apply` returns the table after one action and raises nothing for
an action the room has checked. Rebuilding a room replays its stored actions
through the same :meth:`Table.apply`, so the live path and the restart path
are one path (``docs/protocol.md``, "Restarts").

An action is a small JSON object with a type ``t``; every action raises the
version by one, so a room's actions are numbered by the version they produce:

===============  ==============================================================
``create``       the room (version 0): ``id``, ``game``, ``options``,
                 ``seed_option``, ``seed`` (the match seed: secret),
                 ``created`` (Unix seconds), ``bots`` (seat → level)
``join``         ``seat``, ``name``, ``token_hash`` (SHA-256 of the token)
``leave``        ``seat``
``add_bot``      ``seat``, ``level``: a computer takes a free seat, or stands
                 in for the absent human who holds it
``remove_bot``   ``seat``
``hand_back``    ``seats``: the humans take these seats back from computers
``move``         ``seat``, ``move`` (the game's notation), and ``hand_back``
                 (seats handed back right after the move, possibly empty)
``next_deal``    (nothing)
``rematch``      ``seed``: the new match's seed (fresh random bits)
===============  ==============================================================

Nothing here does I/O; :mod:`app.rooms` checks actions and stores them
(:mod:`app.storage`) before it applies them.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, Literal

from engine.base import SEED_OPTION, Game, OptionError
from engine.match import Match
from engine.registry import get_game

Kind = Literal["human", "computer"]
Phase = Literal["waiting", "playing", "deal_over", "match_over"]
Action = dict[str, Any]
"""One action as JSON (see the module docstring)."""


class BadRecord(ValueError):
    """Stored actions that do not rebuild a room (a damaged or foreign record)."""


def token_hash(token: str) -> str:
    """The SHA-256 of a seat token, in hex: what a table keeps instead of the
    token, so a copied database file seats nobody."""
    return hashlib.sha256(token.encode("utf-8", "surrogatepass")).hexdigest()


def computer_name(level: str) -> str:
    """How a computer player of ``level`` is shown: ``"Computer (strong)"``."""
    return f"Computer ({level})"


@dataclass(frozen=True, slots=True)
class SeatHolder:
    """Who holds a seat, durably: ``name``; ``token_hash`` (``None`` for a
    computer player); ``kind``; ``level``, the level of the computer player
    that plays the seat: always set for a computer, and set for a human while a
    computer stands in for them (``docs/protocol.md``, "Computer players")."""

    name: str
    token_hash: str | None
    kind: Kind = "human"
    level: str | None = None

    @property
    def computer_plays(self) -> bool:
        """True while a computer player makes this seat's moves."""
        return self.level is not None

    @property
    def stand_in(self) -> bool:
        """True while a computer player holds a human's seat for them."""
        return self.kind == "human" and self.level is not None


def check_room_options(game: Game, raw: Mapping[str, Any]) -> tuple[dict[str, Any], int | None]:
    """The game's checked options (defaults filled in, seed excluded) and the
    ``seed`` option (``None`` if absent or null). Raises ``OptionError`` naming
    an unknown option or a bad value."""
    options = game.check_options(raw)
    seed = raw.get("seed")
    return options, None if seed is None else SEED_OPTION.check(seed)


def computer_seats(seats: tuple[str, ...], spec: str | Sequence[str], level: str) -> dict[str, str]:
    """Seat → ``level`` for the seats that ``spec`` names among ``seats``:
    ``"others"`` (every seat but the first, left for the creator), ``"all"``
    or a list of seats. Raises ``OptionError`` for another string, an unknown
    seat or a seat named twice."""
    if spec == "others":
        chosen = list(seats[1:])
    elif spec == "all":
        chosen = list(seats)
    elif isinstance(spec, str):
        raise OptionError(f"bots.seats must be 'others', 'all' or a list of seats, not {spec[:20]!r}")
    else:
        chosen = list(spec)
    if len(set(chosen)) != len(chosen):
        raise OptionError("bots.seats names a seat twice")
    for seat in chosen:
        if seat not in seats:
            raise OptionError(f"bots.seats: there is no seat {str(seat)[:20]!r}; the seats are"
                              f" {', '.join(seats)}")
    return dict.fromkeys(chosen, level)


@dataclass(frozen=True, slots=True)
class Table:
    """A room's durable state after ``version`` actions.

    ``holders`` pairs each held seat with its :class:`SeatHolder`, in seat
    order (free seats absent); ``moved_at`` pairs a seat with the version its
    last accepted move produced (this match); ``deal_started`` is the version
    at which the current deal was dealt; ``log`` is this deal's moves as
    ``(seat, move, sentence)``; ``created`` is Unix seconds.
    """

    id: str
    game_id: str
    options: tuple[tuple[str, Any], ...]
    seed_option: int | None
    created: float
    match: Match
    holders: tuple[tuple[str, SeatHolder], ...]
    version: int = 0
    moved_at: tuple[tuple[str, int], ...] = ()
    deal_started: int = 0
    rematches: int = 0
    log: tuple[tuple[str, str, str], ...] = ()

    # ---- making ---------------------------------------------------------------------------
    @staticmethod
    def create_action(room_id: str, game_id: str, raw_options: Mapping[str, Any], seed: int,
                      created: float, bots: Mapping[str, str] | None = None) -> Action:
        """The ``create`` action of a new room, its options checked. Raises
        ``KeyError`` for an unknown game, ``OptionError`` for a bad option or
        computer seat (messages name them). ``seed`` is the match seed, used
        unless the options fix one; ``bots`` maps seats to computer levels."""
        game = get_game(game_id)
        options, seed_option = check_room_options(game, raw_options)
        if bots:
            computer_seats(game.seats(options), list(bots), "")
        return {"t": "create", "id": room_id, "game": game_id, "options": options,
                "seed_option": seed_option, "seed": seed if seed_option is None else seed_option,
                "created": created, "bots": dict(bots or {})}

    @staticmethod
    def new(action: Action) -> Table:
        """The table a ``create`` action makes (deal 1 dealt). Raises
        ``KeyError``/``OptionError`` for a bad game or option."""
        game = get_game(action["game"])
        options, _ = check_room_options(game, action["options"])
        seats = game.seats(options)
        bots = action.get("bots") or {}
        computer_seats(seats, list(bots), "")
        holders = tuple((s, SeatHolder(computer_name(bots[s]), None, "computer", bots[s]))
                        for s in seats if s in bots)
        match = Match.new(action["game"], options, int(action["seed"]))
        seed_option = action.get("seed_option")
        return Table(str(action["id"]), action["game"], tuple(sorted(options.items())),
                     None if seed_option is None else int(seed_option), float(action["created"]),
                     match, holders)

    @staticmethod
    def replay(actions: Iterable[Action]) -> Table:
        """The table that ``actions`` (``create`` first) build. Raises
        :class:`BadRecord` if they do not rebuild a room."""
        it = iter(actions)
        try:
            first = next(it)
            if first.get("t") != "create":
                raise BadRecord("a room's record must begin with its creation")
            table = Table.new(first)
            for action in it:
                table = table.apply(action)
        except BadRecord:
            raise
        except StopIteration:
            raise BadRecord("the room's record is empty") from None
        except (KeyError, ValueError, TypeError) as exc:
            raise BadRecord(f"the room's record does not replay: {exc}") from exc
        return table

    # ---- derived --------------------------------------------------------------------------
    @property
    def game(self) -> Game:
        """The game's rules."""
        return get_game(self.game_id)

    @property
    def seats(self) -> tuple[str, ...]:
        """Every seat, in order."""
        return self.game.seats(dict(self.options))

    def holder(self, seat: str) -> SeatHolder | None:
        """Who holds ``seat``, or ``None`` if it is free."""
        for s, h in self.holders:
            if s == seat:
                return h
        return None

    @property
    def phase(self) -> Phase:
        """``match_over``, ``waiting`` (a seat is free), ``deal_over`` or
        ``playing`` (``docs/protocol.md``, "Phases")."""
        match = self.match
        if match.over:
            return "match_over"
        if len(self.holders) < len(self.seats):
            return "waiting"
        if match.deal_over:
            return "deal_over"
        return "playing"

    @property
    def computer_only(self) -> bool:
        """True when every seat is held by a computer player (and no absent
        human has a claim on any of them)."""
        return len(self.holders) == len(self.seats) and all(
            h.kind == "computer" for _, h in self.holders)

    @property
    def seeded(self) -> bool:
        """True while the match in play was dealt from the room's chosen
        ``seed`` option, so its creator may know every card: the first match
        of a room created with one (a rematch is always dealt at random)."""
        return self.seed_option is not None and self.rematches == 0

    def last_move_of(self, seat: str) -> int:
        """The version ``seat``'s last accepted move of this match produced, or -1."""
        for s, v in self.moved_at:
            if s == seat:
                return v
        return -1

    # ---- actions --------------------------------------------------------------------------
    def apply(self, action: Action) -> Table:
        """The table after ``action`` (version + 1). The room has checked it;
        a move the engine refuses raises its ``MalformedMove``/``IllegalMove``,
        anything else unreadable raises :class:`BadRecord`."""
        kind = action.get("t")
        step = _STEPS.get(kind) if isinstance(kind, str) else None
        if step is None:
            raise BadRecord(f"unknown action {str(kind)[:20]!r}")
        return step(replace(self, version=self.version + 1), action)

    def _with_holder(self, seat: str, holder: SeatHolder | None) -> Table:
        if seat not in self.seats:
            raise BadRecord(f"no seat {seat[:20]!r} in {self.game_id}")
        held = dict(self.holders)
        if holder is None:
            held.pop(seat, None)
        else:
            held[seat] = holder
        return replace(self, holders=tuple((s, held[s]) for s in self.seats if s in held))

    def _join(self, a: Action) -> Table:
        return self._with_holder(a["seat"], SeatHolder(str(a["name"]), str(a["token_hash"])))

    def _leave(self, a: Action) -> Table:
        seat = a["seat"]
        return replace(self._with_holder(seat, None),
                       moved_at=tuple((s, v) for s, v in self.moved_at if s != seat))

    _remove_bot = _leave

    def _add_bot(self, a: Action) -> Table:
        seat, level = a["seat"], str(a["level"])
        held = self.holder(seat)
        if held is None:
            return self._with_holder(seat, SeatHolder(computer_name(level), None, "computer", level))
        return self._with_holder(seat, replace(held, level=level))

    def hand_back(self, seats: Iterable[str]) -> Table:
        """The table with the humans of ``seats`` playing them again instead of
        the computers standing in for them (the version stays). Raises
        :class:`BadRecord` if a seat holds no human."""
        table = self
        for seat in seats:
            held = table.holder(seat)
            if held is None or held.kind != "human":
                raise BadRecord(f"seat {seat[:20]!r} holds no human to hand back to")
            table = table._with_holder(seat, replace(held, level=None))
        return table

    def _move(self, a: Action) -> Table:
        seat, move = str(a["seat"]), str(a["move"])
        text = describe(self.game, self.match, seat, move)
        match = self.match.play(seat, move)
        moved = (*((s, v) for s, v in self.moved_at if s != seat), (seat, self.version))
        table = replace(self, match=match, moved_at=moved, log=(*self.log, (seat, move, text)))
        return table.hand_back(a.get("hand_back") or ())

    def _next_deal(self, a: Action) -> Table:
        return replace(self, match=self.match.next_deal(), deal_started=self.version, log=())

    def _rematch(self, a: Action) -> Table:
        match = Match.new(self.game_id, dict(self.options), int(a["seed"]))
        return replace(self, match=match, deal_started=self.version, log=(), moved_at=(),
                       rematches=self.rematches + 1)


def describe(game: Game, match: Match, seat: str, move: str) -> str:
    """The log sentence of ``seat`` playing ``move`` in the deal in play (the
    seat and the move if the game cannot say it)."""
    try:
        return game.describe(match.state, seat, move)
    except Exception:
        return f"{seat}: {move}"


_STEPS = {
    "join": Table._join,
    "leave": Table._leave,
    "add_bot": Table._add_bot,
    "remove_bot": Table._remove_bot,
    "hand_back": lambda table, a: table.hand_back(a["seats"]),
    "move": Table._move,
    "next_deal": Table._next_deal,
    "rematch": Table._rematch,
}
