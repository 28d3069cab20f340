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
                 ``created`` (Unix seconds), ``bots`` (seat → level),
                 ``match`` (the first match's id) and, for a deal played
                 again, ``deal`` (``[deal seed, starter]``: the first deal),
                 ``room_options`` (:data:`ROOM_OPTIONS`; absent in older
                 records: the defaults)
``join``         ``seat``, ``name``, ``token_hash`` (SHA-256 of the token)
``new_token``    ``seat``, ``token_hash``: the seat's holder has a new token,
                 and the old one seats nobody any more
``leave``        ``seat``
``add_bot``      ``seat``, ``level``: a computer takes a free seat, or stands
                 in for the absent human who holds it
``remove_bot``   ``seat``
``hand_back``    ``seats``: the humans take these seats back from computers
``move``         ``seat``, ``move`` (the game's notation), and ``hand_back``
                 (seats handed back right after the move, possibly empty);
                 ``forced``: true for a pass the server played because it
                 was the seat's only legal move
``ready``        ``seat``: its person is ready for the next deal (or match),
                 between deals
``next_deal``    (nothing)
``rematch``      ``seed``: the new match's seed (fresh random bits),
                 ``match`` (its id) and ``began`` (Unix seconds)
===============  ==============================================================

Every match of a room has an id of its own (``match`` in the action that
begins it: :func:`new_match_id`), the address of its page once it is over
(``/m/<id>``, ``docs/protocol.md``). It never reveals the room id, which
grants a seat. Actions written before matches had ids replay with
:func:`fallback_match_id`. ``deal`` and ``match`` are optional, so older
records replay unchanged.

Chat messages and other entries that do not change the game are no actions:
they raise no version and are stored as notes (:mod:`app.storage`).

Nothing here does I/O; :mod:`app.rooms` checks actions and stores them
(:mod:`app.storage`) before it applies them.
"""

from __future__ import annotations

import base64
import hashlib
import re
import secrets
import sys
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, fields, replace
from functools import lru_cache
from operator import attrgetter
from typing import Any, Literal

from engine.base import SEED_OPTION, Game, OptionError, as_json
from engine.match import Match, MatchError
from engine.record import MAX_SEED
from engine.registry import get_game

Kind = Literal["human", "computer"]
Phase = Literal["waiting", "playing", "deal_over", "match_over"]
Action = dict[str, Any]
"""One action as JSON (see the module docstring)."""


class BadRecord(ValueError):
    """Stored actions that do not rebuild a room (a damaged or foreign record)."""


MATCH_ID = re.compile(r"[A-Za-z0-9_-]{16,64}")
"""What a match id looks like; anything else is no match, without a look-up."""


def new_match_id() -> str:
    """A fresh match id: 96 random bits, URL-safe (16 characters), unrelated
    to the room id."""
    return secrets.token_urlsafe(12)


def fallback_match_id(room_id: str, number: int) -> str:
    """The id of match ``number`` (0 for the first, 1 after the first
    rematch, …) of a room whose actions carry no match id: 96 bits of a
    SHA-256 of the room id, so as unguessable as the room id, which it does
    not reveal."""
    digest = hashlib.sha256(f"cardboard match {number} of {room_id}".encode()).digest()
    return base64.urlsafe_b64encode(digest[:12]).decode()


def match_id_of(room_id: str, action: Action, number: int) -> str | None:
    """The id of the match that ``action`` begins (a ``create`` or a
    ``rematch`` action: match ``number`` of room ``room_id``), else ``None``."""
    if action.get("t") not in ("create", "rematch"):
        return None
    given = action.get("match")
    return str(given) if given else fallback_match_id(room_id, number)


def token_hash(token: str) -> str:
    """The SHA-256 of a seat token, in hex: what a table keeps instead of the
    token, so a copied database file seats nobody."""
    return hashlib.sha256(token.encode("utf-8", "surrogatepass")).hexdigest()


COMPUTER_NAMES: tuple[str, ...] = ("Ada", "Alan", "Grace", "Kurt", "Emmy", "Hedy")
"""The computer players' names: the one at seat index *i* is called
``COMPUTER_NAMES[i]`` (games have at most four seats)."""


def computer_name(index: int, level: str) -> str:
    """How the computer player at seat number ``index`` (0-based, in seat
    order) of ``level`` is shown, e.g. ``"Ada (strong)"`` at the first seat:
    short enough to show in full, and the same for that seat whatever
    happens in the room."""
    return f"{COMPUTER_NAMES[index % len(COMPUTER_NAMES)]} ({level})"


FORCED_NOTE = " (played by the server: no other move)"
"""What ends the log sentence of a pass the server played for a person
(``docs/protocol.md``, "Forced passes")."""

@dataclass(frozen=True, slots=True)
class RoomOption:
    """A yes/no setting of a room, chosen by its creator next to the game's
    options: its ``name``, a ``description`` for people and its ``default``."""

    name: str
    description: str
    default: bool
    passes_only: bool = False
    """Offered only for games with passes (``engine.base.GameInfo.passes``)."""

    def offered(self, game: Game) -> bool:
        """Whether rooms of ``game`` list this setting (all take it)."""
        return game.info.passes or not self.passes_only

    def check(self, value: Any) -> bool:
        """``value`` if it is ``true`` or ``false``. Raises ``OptionError``
        naming the option."""
        if not isinstance(value, bool):
            raise OptionError(f"option {self.name!r} must be true or false, not {as_json(value)}")
        return value


SPECTATOR_CHAT = RoomOption(
    "spectator_chat",
    "true lets spectators write in the room's chat (a player may still mute them); default false:"
    " only the players write, everyone reads.", False)
AUTO_PASS = RoomOption(
    "auto_pass",
    "true (the default): when a player's only legal move is a pass, the server plays it for them"
    " after a short pause; false: they press Pass themselves.", True, passes_only=True)
ROOM_OPTIONS: tuple[RoomOption, ...] = (SPECTATOR_CHAT, AUTO_PASS)
"""The settings every room has, whatever its game (``docs/protocol.md``)."""


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


def game_options(raw: Mapping[str, Any]) -> dict[str, Any]:
    """``raw`` without the options that every room takes (``seed`` and
    :data:`ROOM_OPTIONS`): the game's own."""
    shared = {SEED_OPTION.name, *(o.name for o in ROOM_OPTIONS)}
    return {k: v for k, v in raw.items() if k not in shared}


def check_room_options(game: Game, raw: Mapping[str, Any]
                       ) -> tuple[dict[str, Any], int | None, dict[str, bool]]:
    """The game's checked options (defaults filled in, seed excluded), the
    ``seed`` option (``None`` if absent or null; a whole number, or its decimal
    digits as a string) and the room's settings (:data:`ROOM_OPTIONS`,
    defaults filled in). Raises ``OptionError`` naming an unknown option or a
    bad value."""
    options = game.check_options(game_options(raw))
    seed = raw.get("seed")
    settings = {o.name: o.check(raw[o.name]) if o.name in raw else o.default for o in ROOM_OPTIONS}
    return options, None if seed is None else check_seed(seed), settings


def check_seed(seed: Any) -> int:
    """A seed as given: a whole number from 0 to 2^63-1, or its decimal
    digits (ASCII, nothing else) as a string, since a browser's numbers cannot
    hold every seed exactly. Raises ``OptionError`` otherwise (``true``,
    ``" 12 "``, ``1.5``)."""
    if isinstance(seed, str) and re.fullmatch(r"-?[0-9]{1,40}", seed):
        seed = int(seed)  # out of range: refused below with the range
    if isinstance(seed, int) and not isinstance(seed, bool) and not 0 <= seed <= MAX_SEED:
        raise OptionError(f"option 'seed' must be a whole number from 0 to {MAX_SEED} (2^63-1),"
                          f" not {seed}")
    checked: int = SEED_OPTION.check(seed)
    return checked


def computer_seats(seats: tuple[str, ...], spec: str | Sequence[str], level: str,
                   levels: Mapping[str, str] | None = None) -> dict[str, str]:
    """Seat → ``level`` for the seats that ``spec`` names among ``seats``:
    ``"others"`` (every seat but the first, left for the creator), ``"all"``
    or a list of seats; ``levels`` (seat → level) gives some of them another
    level. Raises ``OptionError`` for another string, an unknown seat, a
    seat named twice, or a seat in ``levels`` that ``spec`` does not name."""
    if spec == "others":
        chosen = list(seats[1:])
    elif spec == "all":
        chosen = list(seats)
    elif isinstance(spec, str):
        raise OptionError(f"bots.seats must be 'others', 'all' or a list of seats, not {as_json(spec)}")
    else:
        chosen = list(spec)
    if len(set(chosen)) != len(chosen):
        raise OptionError("bots.seats names a seat twice")
    for seat in chosen:
        if seat not in seats:
            raise OptionError(f"bots.seats: there is no seat {str(seat)[:20]!r}; the seats are"
                              f" {', '.join(seats)}")
    out = dict.fromkeys(chosen, level)
    for seat, other in (levels or {}).items():
        if seat not in out:
            raise OptionError(f"bots.levels: seat {str(seat)[:20]!r} is not one of bots.seats"
                              f" ({', '.join(out) or 'none'})")
        out[seat] = other
    return out


@lru_cache(maxsize=512)
def _seats(game_id: str, options: tuple[tuple[str, Any], ...]) -> tuple[str, ...]:
    """The seats of ``game_id`` with ``options``, in order (asked on every
    move, so kept)."""
    return get_game(game_id).seats(dict(options))


EARLIER_KEPT = 20
"""How many of a room's finished matches before the one in play its table
remembers (:attr:`Table.earlier`); every one stays reviewable by its page."""


@dataclass(frozen=True, slots=True)
class EarlierMatch:
    """A match this room finished before a rematch: ``number``, the room's
    count of its matches (the first is 1); ``match_id``, its page
    ``/m/<id>``; ``totals``, the match points per side in side order;
    ``winners``, the sides with the best total (several on a tie)."""

    number: int
    match_id: str
    totals: tuple[tuple[str, int], ...]
    winners: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Table:
    """A room's durable state after ``version`` actions.

    ``holders`` pairs each held seat with its :class:`SeatHolder`, in seat
    order (free seats absent); ``moved_at`` pairs a seat with the version its
    last accepted move produced (this match); ``deal_started`` is the version
    at which the current deal was dealt; ``log`` is this deal's moves as
    ``(seat, move, sentence, by)``, ``by`` naming who made the move as the
    seat's holder was shown then (a computer player's name while one played
    it, standing in or not; ``""`` if no one held it); ``created`` is Unix seconds. ``match_id`` is
    the id of the match in play, ``began`` when it began (Unix seconds;
    ``None`` for a rematch stored before rematches noted it).
    ``room_options`` are the room's settings (:data:`ROOM_OPTIONS`) as sorted
    pairs. Between deals, ``ready`` holds the seats whose people have said
    they are ready (in seat order) and ``ended_at`` is the version whose move
    ended the last deal (-1 before any). ``earlier`` holds the matches
    finished before the one in play, oldest first (the last
    :data:`EARLIER_KEPT`).
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
    log: tuple[tuple[str, str, str, str], ...] = ()
    match_id: str = ""
    began: float | None = None
    room_options: tuple[tuple[str, bool], ...] = ()
    ready: tuple[str, ...] = ()
    ended_at: int = -1
    earlier: tuple[EarlierMatch, ...] = ()

    # ---- making ---------------------------------------------------------------------------
    @staticmethod
    def create_action(room_id: str, game_id: str, raw_options: Mapping[str, Any], seed: int,
                      created: float, bots: Mapping[str, str] | None = None, *,
                      match_id: str | None = None, deal: tuple[int, str] | None = None) -> Action:
        """The ``create`` action of a new room, its options checked. Raises
        ``KeyError`` for an unknown game, ``OptionError`` for a bad option,
        computer seat or deal (messages name them). ``seed`` is the match
        seed, used unless the options fix one; ``bots`` maps seats to
        computer levels; ``match_id`` is the first match's id (fresh if
        ``None``). ``deal`` (``(deal seed, starter)``) makes the first deal
        that deal again: the same layout and the same starter
        (:meth:`engine.match.Match.new_from_deal`), later deals from the
        match seed."""
        game = get_game(game_id)
        options, seed_option, settings = check_room_options(game, raw_options)
        if bots:
            computer_seats(game.seats(options), list(bots), "")
        action: Action = {
            "t": "create", "id": room_id, "game": game_id, "options": options,
            "seed_option": seed_option, "seed": seed if seed_option is None else seed_option,
            "created": created, "bots": dict(bots or {}), "match": match_id or new_match_id(),
            "room_options": settings}
        if deal is not None:
            try:
                Match.new_from_deal(game_id, options, int(deal[0]), str(deal[1]), 0)
            except MatchError as exc:
                raise OptionError(f"deal: {exc}") from None
            action["deal"] = [int(deal[0]), str(deal[1])]
        return action

    @staticmethod
    def new(action: Action) -> Table:
        """The table a ``create`` action makes (deal 1 dealt). Raises
        ``KeyError``/``OptionError`` for a bad game or option."""
        game = get_game(action["game"])
        options, _, settings = check_room_options(
            game, {**action["options"], **(action.get("room_options") or {})})
        seats = game.seats(options)
        bots = action.get("bots") or {}
        computer_seats(seats, list(bots), "")
        holders = tuple((s, SeatHolder(computer_name(i, bots[s]), None, "computer", bots[s]))
                        for i, s in enumerate(seats) if s in bots)
        deal = action.get("deal")
        if deal:
            match = Match.new_from_deal(action["game"], options, int(deal[0]), str(deal[1]),
                                        int(action["seed"]))
        else:
            match = Match.new(action["game"], options, int(action["seed"]))
        seed_option = action.get("seed_option")
        room_id, created = str(action["id"]), float(action["created"])
        return Table(room_id, action["game"], tuple(sorted(options.items())),
                     None if seed_option is None else int(seed_option), created, match, holders,
                     match_id=match_id_of(room_id, action, 0) or "", began=created,
                     room_options=tuple(sorted(settings.items())))

    @staticmethod
    def replay(actions: Iterable[Action]) -> Table:
        """The table that ``actions`` (``create`` first) build. Raises
        :class:`BadRecord` if they do not rebuild a room."""
        last = None
        for table in Table.replay_steps(actions):
            last = table
        assert last is not None  # replay_steps refuses an empty record
        return last

    @staticmethod
    def replay_steps(actions: Iterable[Action]) -> Iterator[Table]:
        """The table after each of ``actions`` (``create`` first), in order.
        Raises :class:`BadRecord` (when it reaches it) if they do not rebuild
        a room."""
        it = iter(actions)
        try:
            first = next(it)
            if first.get("t") != "create":
                raise BadRecord("a room's record must begin with its creation")
            table = Table.new(first)
            yield table
            for action in it:
                table = table.apply(action)
                yield table
        except BadRecord:
            raise
        except StopIteration:
            raise BadRecord("the room's record is empty") from None
        except (KeyError, ValueError, TypeError) as exc:
            raise BadRecord(f"the room's record does not replay: {exc}") from exc

    # ---- derived --------------------------------------------------------------------------
    @property
    def game(self) -> Game:
        """The game's rules."""
        return get_game(self.game_id)

    @property
    def seats(self) -> tuple[str, ...]:
        """Every seat, in order."""
        return _seats(self.game_id, self.options)

    def setting(self, option: RoomOption) -> bool:
        """The room's value of ``option`` (one of :data:`ROOM_OPTIONS`)."""
        return dict(self.room_options).get(option.name, option.default)

    def computer_name(self, seat: str, level: str) -> str:
        """The name of a computer player of ``level`` at ``seat``
        (:func:`computer_name` of the seat's index)."""
        return computer_name(self.seats.index(seat), level)

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
        """True when the match in play was not dealt from fresh random bits:
        the room was created with a chosen ``seed`` option or with a deal
        played again. A rematch is always dealt at random."""
        return self.rematches == 0 and (self.seed_option is not None or bool(self.match.given))

    def last_move_of(self, seat: str) -> int:
        """The version ``seat``'s last accepted move of this match produced, or -1."""
        for s, v in self.moved_at:
            if s == seat:
                return v
        return -1

    def passed_for(self, seat: str, version: int) -> bool:
        """True if ``seat``'s last move, made after the state of ``version``
        in this deal, is a pass the server played for it (``docs/protocol.md``,
        "Forced passes"): the seat has had no move of its own since the
        state of ``version``. The server's pass is judged on the version on
        which its pause began, so a seating change during the pause may put
        a version between the two."""
        if self.last_move_of(seat) <= version or version < self.deal_started:
            return False
        last = next((e for e in reversed(self.log) if e[0] == seat), None)
        return last is not None and last[1] == "pass" and last[2].endswith(FORCED_NOTE)

    # ---- actions --------------------------------------------------------------------------
    def apply(self, action: Action) -> Table:
        """The table after ``action`` (version + 1). The room has checked it;
        a move the engine refuses raises its ``MalformedMove``/``IllegalMove``,
        anything else unreadable raises :class:`BadRecord`."""
        kind = action.get("t")
        if kind == "move":  # the most common, in one step rather than two
            return self._move(action)
        step = _STEPS.get(kind) if isinstance(kind, str) else None
        if step is None:
            raise BadRecord(f"unknown action {str(kind)[:20]!r}")
        return step(_evolve(self, version=self.version + 1), action)

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
        seat = a["seat"]
        table = self._with_holder(seat, SeatHolder(str(a["name"]), str(a["token_hash"])))
        return replace(table, ready=tuple(s for s in self.ready if s != seat))

    def _leave(self, a: Action) -> Table:
        seat = a["seat"]
        return replace(self._with_holder(seat, None),
                       moved_at=tuple(p for p in self.moved_at if p[0] != seat),
                       ready=tuple(s for s in self.ready if s != seat))

    def _ready(self, a: Action) -> Table:
        seat = str(a["seat"])
        if self.holder(seat) is None:
            raise BadRecord(f"seat {seat[:20]!r} is free: nobody there to be ready")
        marked = {*self.ready, seat}
        return replace(self, ready=tuple(s for s in self.seats if s in marked))

    _remove_bot = _leave

    def _add_bot(self, a: Action) -> Table:
        seat, level = a["seat"], str(a["level"])
        held = self.holder(seat)
        if held is None:
            return self._with_holder(seat, SeatHolder(self.computer_name(seat, level), None,
                                                      "computer", level))
        return self._with_holder(seat, replace(held, level=level))

    def _new_token(self, a: Action) -> Table:
        seat = a["seat"]
        held = self.holder(seat)
        if held is None or held.kind != "human":
            raise BadRecord(f"seat {seat[:20]!r} holds no human to give a new token to")
        return self._with_holder(seat, replace(held, token_hash=str(a["token_hash"])))

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
        """The table after the move ``a`` (version + 1, made here too)."""
        seat, move = str(a["seat"]), str(a["move"])
        text = describe(self.game, self.match.state, seat, move)
        if a.get("forced"):
            text = f"{text}{FORCED_NOTE}"
        match = self.match.play(seat, move)
        version = self.version + 1
        held = self.holder(seat)
        by = "" if held is None else (
            held.name if held.level is None else sys.intern(self.computer_name(seat, held.level)))
        # The other seats' pairs are kept, not made again: a move leaves two
        # new tuples for the collector to walk, not five.
        moved = (*(p for p in self.moved_at if p[0] != seat), (seat, version))
        table = _evolve(self, version=version, match=match, moved_at=moved,
                        log=(*self.log, (seat, move, text, by)),
                        ended_at=version if match.deal_over else self.ended_at)
        return table.hand_back(a.get("hand_back") or ())

    def _next_deal(self, a: Action) -> Table:
        return replace(self, match=self.match.next_deal(), deal_started=self.version, log=(), ready=())

    def _rematch(self, a: Action) -> Table:
        match = Match.new(self.game_id, dict(self.options), int(a["seed"]))
        number = self.rematches + 1
        began = a.get("began")
        done = EarlierMatch(number, self.match_id, tuple(self.match.totals().items()),
                            self.match.winners())
        return replace(self, match=match, deal_started=self.version, log=(), moved_at=(), ready=(),
                       rematches=number, match_id=match_id_of(self.id, a, number) or "",
                       began=None if began is None else float(began),
                       earlier=(*self.earlier, done)[-EARLIER_KEPT:])


def describe(game: Game, state: Any, seat: str, move: str) -> str:
    """The log sentence of ``seat`` playing ``move`` on ``state`` (the seat
    and the move if the game cannot say it)."""
    try:
        return game.describe(state, seat, move)
    except Exception:
        return f"{seat}: {move}"


_FIELDS = tuple(f.name for f in fields(Table))
_INDEX = {name: i for i, name in enumerate(_FIELDS)}
_values = attrgetter(*_FIELDS)


def _evolve(table: Table, **changes: Any) -> Table:
    """``dataclasses.replace(table, **changes)`` in two thirds of its time
    (7 against 10.5 us here): a move makes two, the version's and the
    move's. Raises ``KeyError`` for a name that is not a field."""
    values = list(_values(table))
    for name, value in changes.items():
        values[_INDEX[name]] = value
    return Table(*values)


_STEPS = {
    "join": Table._join,
    "ready": Table._ready,
    "new_token": Table._new_token,
    "leave": Table._leave,
    "add_bot": Table._add_bot,
    "remove_bot": Table._remove_bot,
    "hand_back": lambda table, a: table.hand_back(a["seats"]),
    "next_deal": Table._next_deal,
    "rematch": Table._rematch,
}
