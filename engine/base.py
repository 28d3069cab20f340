"""The interface every game implements, its errors and its results.

A game is a stateless object (one instance per game id, see
:mod:`engine.registry`). Its states are immutable frozen dataclasses: applying
a move returns a new state and never changes the old one. Moves are strings in
the game's notation (``docs/notation.md``).
"""

from __future__ import annotations

import json
import math
import random
from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

JSON = Any
"""A value made of dicts, lists, str, int, float, bool and None only."""


class MoveError(ValueError):
    """Base of the two move errors. Its message is meant for a player to read."""


class MalformedMove(MoveError):
    """The text is not a move in the game's notation (``"z9"``, ``"hello"``)."""


class IllegalMove(MoveError):
    """The move is well formed but not legal now, e.g. "the 4♥ at b4 cannot
    pass the face-down card at c4"."""


class OptionError(ValueError):
    """A room option is unknown or has a bad value. The message names it."""


@dataclass(frozen=True)
class ScoreLine:
    """One line of a score breakdown: ``label`` (what is counted), ``detail``
    (how, in words, e.g. ``"3 courts × +10"``) and ``points`` (signed).

    ``factors``, where the points are a product that a board shows as its
    formula (Stucco: cards played × cards of the last turn): each factor's
    number and what it counts, e.g. ``((5, "cards played"), (3, "in the last
    turn"))``; their product is ``points``. Empty otherwise."""

    label: str
    detail: str
    points: int
    factors: tuple[tuple[int, str], ...] = ()

    def to_json(self) -> JSON:
        """``label``, ``detail`` and ``points``; ``factors`` as a list of
        ``{"value", "label"}`` only where there are any."""
        out: dict[str, JSON] = {"label": self.label, "detail": self.detail, "points": self.points}
        if self.factors:
            out["factors"] = [{"value": v, "label": what} for v, what in self.factors]
        return out


@dataclass(frozen=True)
class SideScore:
    """A side's score for one deal: its seats, total points and the lines that
    add up to it (``sum(l.points for l in lines) == points``)."""

    side: str
    seats: tuple[str, ...]
    points: int
    lines: tuple[ScoreLine, ...] = ()


@dataclass(frozen=True)
class Outcome:
    """The end of a deal, as data (convention 5).

    ``winners`` are the winning sides (empty for a draw); ``scores`` holds one
    :class:`SideScore` per side, in the game's side order; ``reason`` says in
    words why the deal ended ("Black is stuck").
    """

    winners: tuple[str, ...]
    scores: tuple[SideScore, ...]
    reason: str

    def points(self, side: str) -> int:
        """The points of ``side`` in this deal. Raises ``KeyError`` if unknown."""
        for s in self.scores:
            if s.side == side:
                return s.points
        raise KeyError(side)

    def to_json(self) -> JSON:
        """A JSON-safe dict of the outcome, breakdown included."""
        return {
            "winners": list(self.winners),
            "reason": self.reason,
            "scores": [
                {
                    "side": s.side,
                    "seats": list(s.seats),
                    "points": s.points,
                    "lines": [ln.to_json() for ln in s.lines],
                }
                for s in self.scores
            ],
        }


def as_json(value: Any, limit: int = 40) -> str:
    """``value`` as a client wrote it, for an error message: JSON (``true``,
    ``null``, ``"3"``, ``2.5``), cut to ``limit`` characters. A number JSON
    cannot hold (``1e400`` is read as infinity) is said to be out of range."""
    if isinstance(value, float) and not math.isfinite(value):
        return "a number out of range"
    try:
        text = json.dumps(value, ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


@dataclass(frozen=True)
class Option:
    """A room option a game accepts: its name, a description for people, its
    default, and the check that turns a raw JSON value into a valid one."""

    name: str
    description: str
    default: Any
    kind: str = "int"  # "int" or "choice"
    minimum: int | None = None
    maximum: int | None = None
    choices: tuple[Any, ...] = ()
    even: bool = False

    def check(self, value: Any) -> Any:
        """The value if valid. Raises :class:`OptionError` naming the option."""
        if self.kind == "choice":
            # Compare type and value, so that 3.0 or True never pass for 3 or 1.
            if not any(type(value) is type(c) and value == c for c in self.choices):
                allowed = ", ".join(map(str, self.choices))
                raise OptionError(f"option {self.name!r} must be one of {allowed}, not {as_json(value)}")
            return value
        if isinstance(value, bool) or not isinstance(value, int):
            raise OptionError(f"option {self.name!r} must be a whole number, not {as_json(value)}")
        if self.minimum is not None and value < self.minimum:
            raise OptionError(f"option {self.name!r} must be at least {self.minimum}, not {value}")
        if self.maximum is not None and value > self.maximum:
            raise OptionError(f"option {self.name!r} must be at most {self.maximum}, not {value}")
        if self.even and value % 2:
            raise OptionError(f"option {self.name!r} must be an even number, not {value}")
        return value


SEED_OPTION = Option(
    "seed",
    "An integer from 0 to 2^63-1 that fixes every deal of the match (random if absent).",
    None,
    minimum=0,
    maximum=2**63 - 1,
)

S = TypeVar("S")


@dataclass(frozen=True)
class Layout:
    """How a game's cards lie on the table: ``kind`` ``"grid"``, a layout of
    ``width`` × ``height`` squares named as in ``docs/notation.md``
    ("Squares"), or ``"spread"``, open hands and a row of cards played (no
    squares, so no width or height)."""

    kind: str
    width: int | None = None
    height: int | None = None

    def to_json(self) -> JSON:
        """``{"kind": …}``, with ``width`` and ``height`` for a grid."""
        if self.kind == "grid":
            return {"kind": self.kind, "width": self.width, "height": self.height}
        return {"kind": self.kind}


@dataclass(frozen=True)
class GameInfo:
    """What a game is, declared once by its module, in the spirit of
    OpenSpiel's ``GameType``: the server, the pages and the boards read these
    facts from here (``GET /api/games`` carries them, ``docs/protocol.md``).

    - ``id``, ``title``; ``options``, the room options it takes (besides
      ``seed``);
    - ``seats``: every seat the game can have, in turn order. A game whose
      number of players is an option (``players_option``, e.g. Suitors'
      ``players``) seats a subset of them, in the same order
      (:meth:`Game.seats`); the choices of that option are the player
      counts (:attr:`player_counts`);
    - ``hidden_information``: some seat is shown less than the whole state
      (face-down cards, a secret pick), so views differ from seat to seat;
      without it, :meth:`Game.view` is the same for every seat and for a
      spectator (the server encodes it once);
    - ``simultaneous``: two seats can be awaited at once (Stucco's pick);
    - ``secret_moves``: a move already played can still be secret from other
      seats, so the log is shown per seat through :meth:`Game.public_move`;
    - ``layout``: how the cards lie, with the default options (the view of a
      state gives the real size, e.g. Suitors' Big board);
    - ``layouts``: where the choice of an option changes the layout, that
      option → each choice → its layout (Suitors' ``variant``: ``big`` is
      11×9, the others 9×5), so that a page can say the size of the table
      a choice makes before the room exists;
    - ``board``: the name of the browser board module,
      ``static/js/games/<board>.js`` (the id if not given);
    - ``deal_noun``: what the pages call one deal, ``"deal"``, or ``"game"``
      for games whose match is a single deal;
    - ``passes``: a seat can have ``pass`` as its only legal move (not in the
      two-player Get Stuck, where a seat that cannot move has lost: ruling 5),
      so a room may offer to pass for its players.
    """

    id: str
    title: str
    options: tuple[Option, ...] = field(default=())
    seats: tuple[str, ...] = ()
    players_option: str | None = None
    hidden_information: bool = False
    simultaneous: bool = False
    secret_moves: bool = False
    layout: Layout | None = None
    layouts: Mapping[str, Mapping[str, Layout]] = field(default_factory=dict)
    board: str = ""
    deal_noun: str = "deal"
    passes: bool = True

    def __post_init__(self) -> None:
        if not self.board:
            object.__setattr__(self, "board", self.id)

    @property
    def player_counts(self) -> tuple[int, ...]:
        """The numbers of players the game is for, ascending: the choices of
        ``players_option``, else the number of ``seats``."""
        if self.players_option is not None:
            option = next(o for o in self.options if o.name == self.players_option)
            return tuple(sorted(option.choices))
        return (len(self.seats),)

    @property
    def min_players(self) -> int:
        """The fewest players the game is for."""
        return self.player_counts[0]

    @property
    def max_players(self) -> int:
        """The most players the game is for."""
        return self.player_counts[-1]

    def traits(self) -> JSON:
        """The declared facts beyond id, title, seats and options, JSON-safe,
        as ``GET /api/games`` lists them: ``players`` (``min``, ``max`` and
        the ``option`` that sets the number, or ``null``),
        ``hidden_information``, ``simultaneous``, ``secret_moves``,
        ``layout`` (:meth:`Layout.to_json`, or ``null``), ``layouts``
        (option → choice → :meth:`Layout.to_json`, ``{}`` where no option
        changes the layout), ``board``, ``deal_noun`` and ``passes``."""
        return {
            "players": {"min": self.min_players, "max": self.max_players,
                        "option": self.players_option},
            "hidden_information": self.hidden_information,
            "simultaneous": self.simultaneous,
            "secret_moves": self.secret_moves,
            "layout": None if self.layout is None else self.layout.to_json(),
            "layouts": {name: {choice: layout.to_json() for choice, layout in each.items()}
                        for name, each in self.layouts.items()},
            "board": self.board,
            "deal_noun": self.deal_noun,
            "passes": self.passes,
        }


class Game(ABC, Generic[S]):
    """The rules of one game. Stateless: every method is a pure function of
    its arguments.

    ``options`` everywhere is a complete, checked mapping as returned by
    :meth:`check_options` (seed excluded).
    """

    info: GameInfo

    # ---- options, seats and sides -------------------------------------------------
    def check_options(self, raw: Mapping[str, Any]) -> dict[str, Any]:
        """The game's options with defaults filled in, ``seed`` left out.

        Raises :class:`OptionError` for an unknown option or a bad value.
        """
        known = {o.name: o for o in self.info.options}
        out = {o.name: o.default for o in self.info.options}
        for name, value in raw.items():
            if name == "seed":
                continue
            if name not in known:
                raise OptionError(f"unknown option {name!r} for {self.info.id}")
            out[name] = known[name].check(value)
        return out

    def seats(self, options: Mapping[str, Any]) -> tuple[str, ...]:
        """The seats at the table, in turn order (e.g. ``("N", "E", "S", "W")``).
        Default: every seat of ``info.seats``."""
        return self.info.seats

    def sides(self, options: Mapping[str, Any]) -> tuple[tuple[str, tuple[str, ...]], ...]:
        """The sides that score, each ``(name, seats)``. By default each seat is
        its own side, named after it."""
        return tuple((s, (s,)) for s in self.seats(options))

    # ---- the match ----------------------------------------------------------------
    def starter(self, options: Mapping[str, Any], match_seed: int, deal_index: int) -> str:
        """The seat that starts deal ``deal_index`` (0-based) of a match: for
        most games the first to move, for Stucco the dealer. By default the
        first seat opens deal 0 and the role rotates in seat order."""
        seats = self.seats(options)
        return seats[deal_index % len(seats)]

    def deals_in_match(self, options: Mapping[str, Any]) -> int | None:
        """How many deals a match has, where that number is fixed (Get Stuck:
        the ``deals`` option; Get Stuck for Four: 4), or ``None`` where a
        match ends on points instead (Stucco). Default: one deal."""
        return 1

    def match_over(self, options: Mapping[str, Any], outcomes: tuple[Outcome, ...]) -> bool:
        """True once the finished deals ``outcomes`` complete a match. Default:
        after :meth:`deals_in_match` deals (a game whose match ends on points
        overrides this)."""
        deals = self.deals_in_match(options)
        return deals is not None and len(outcomes) >= deals

    # ---- a deal ---------------------------------------------------------------------
    @abstractmethod
    def deal(self, seed: int, options: Mapping[str, Any], starter: str) -> S:
        """The opening state of a deal from ``seed`` (0 … 2⁶³−1), with
        ``starter`` in the role given by :meth:`starter`."""

    @abstractmethod
    def to_move(self, state: S) -> tuple[str, ...]:
        """The seats whose action is awaited; empty once the deal is over."""

    @abstractmethod
    def legal_moves(self, state: S, seat: str) -> tuple[str, ...]:
        """Every legal move of ``seat`` in notation; empty when it is not awaited."""

    @abstractmethod
    def apply(self, state: S, seat: str, move: str) -> S:
        """The state after ``seat`` plays ``move``.

        Raises :class:`MalformedMove` if ``move`` is not in the notation, and
        :class:`IllegalMove` if it is well formed but not legal for ``seat``
        now (including when ``seat`` is not awaited).
        """

    @abstractmethod
    def outcome(self, state: S) -> Outcome | None:
        """The result once the deal is over, else ``None``."""

    # ---- what people see ----------------------------------------------------------
    @abstractmethod
    def view(self, state: S, seat: str | None) -> JSON:
        """Everything ``seat`` may know of the state, JSON-safe; ``None`` is a
        spectator. The only way hidden information leaves the engine."""

    def revealed_view(self, state: S) -> JSON:
        """The view of ``state`` in a review of its deal once that deal is
        over: what a spectator sees, plus whatever the deal kept hidden that
        its end lets everyone know (the record of a finished deal holds its
        seed, from which every card follows). The same fields as
        :meth:`view`. Default: the spectator's view, for games that hide
        nothing a spectator may not see at the end. Only for states of a
        finished deal: never sent while the deal is in play."""
        return self.view(state, None)

    def public_move(self, state: S, seat: str, move: str, viewer: str | None) -> str | None:
        """How a move already played in this deal by ``seat`` shows to
        ``viewer`` (``None``: a spectator) now that the deal is at ``state``:
        the move itself, or ``None`` while it is still secret (a Stucco pick
        before both have picked). Default: every move is public. A game that
        overrides it declares ``info.secret_moves``."""
        return move

    def move_structure(self, state: S, seat: str, move: str) -> dict[str, JSON]:
        """What ``move``, a legal move of ``seat`` on ``state``, does, as data,
        so that a client need not parse the notation (``docs/protocol.md``,
        "Move structures"): always ``move`` (the notation, as in
        ``legal_moves``) and ``kind``, then the squares or cards of that kind,
        e.g. ``{"move": "c3-e3", "kind": "jump", "from": "c3", "to": "e3",
        "jumped": ["d3", "e3"]}``. Default: kind ``"pass"`` for ``pass``,
        else ``"other"`` with nothing more."""
        return {"move": move, "kind": "pass" if move == "pass" else "other"}

    def move_structures(self, state: S, seat: str, moves: Sequence[str]) -> list[dict[str, JSON]]:
        """:meth:`move_structure` of each of ``moves`` (legal moves of ``seat``
        on ``state``, e.g. ``legal_moves(state, seat)``), in the same order."""
        return [self.move_structure(state, seat, m) for m in moves]

    def describe(self, state: S, seat: str, move: str) -> str:
        """A sentence for people about ``move`` played by ``seat`` on
        ``state`` (before it is applied). Default: the move itself."""
        return move

    # ---- text -----------------------------------------------------------------------
    @abstractmethod
    def to_text(self, state: S) -> str:
        """The position as text (``docs/notation.md``); ``from_text`` reverses it."""

    @abstractmethod
    def from_text(self, text: str) -> S:
        """The state a position text describes. Raises ``ValueError`` if it is not
        a valid position text."""

    # ---- for computer players -------------------------------------------------------
    def determinize(self, state: S, seat: str, rng: random.Random) -> S:
        """A state that ``seat`` cannot tell apart from ``state``: hidden cards
        re-dealt at random consistently with what ``seat`` has seen. Games with
        no hidden information return ``state`` itself."""
        return state
