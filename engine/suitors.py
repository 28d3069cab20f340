"""Suitors, a design by Jeff Wofford (2012), for two to four players.

RULINGS.md, Suitors. Each seat is a Jack (``JS``, ``JH``, ``JC``, ``JD``) racing
to the Queen of Hearts in the centre of a layout of face-down cards. A turn is
``reveal c2`` (turn up a face-down card next to your connected region), a jump
``c3-e3`` (the Jumper's square, then the square it lands on: where the farthest
jumped card was) or ``pass`` (only when nothing else is legal).

Variants (room option ``variant``; the rules page says how each open point
was settled):

* ``standard``: one deck, 9×5, the four Jacks in the corners, 7 cards set
  aside unseen.
* ``big``: two decks, 11×9. Every Jack and both Queens of Hearts come out; one
  set of four Jacks and one Queen go back on the layout, the other set stays
  out of the game. The 94 other cards fill the layout exactly: nothing is set
  aside.
* ``colours``: two players only, J♠ (``a1``) against J♥ (``i5``). The other two
  corners are dealt face down; J♣ and J♦ stay out of the game. Your Jumper
  must be of your Jack's colour. 42 cards on the layout, 5 set aside.

Hidden information (ruling 6): a face-down card and the set-aside cards are
secret. The state holds them (face-down cards in lower case), but they leave
the engine only through :meth:`Suitors.view`, which shows them as ``??``.
"""

from __future__ import annotations

import random
import sys
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from engine.base import (
    JSON,
    Game,
    GameInfo,
    IllegalMove,
    Layout,
    MalformedMove,
    Option,
    OptionError,
    Outcome,
    ScoreLine,
    SideScore,
)
from engine.cards import FULL_DECK, Grid, colour, is_card, is_red, pretty, shuffled
from engine.lazy import cached
from engine.notation import format_position, parse_position

JACKS = ("JS", "JH", "JC", "JD")
"""Every seat, in the corner order ``a1 → i1 → i5 → a5`` (ruling 2)."""
QUEEN = "QH"
UNKNOWN = "??"
PASS = "pass"
REVEAL = "reveal "
MAX_TURNS = 1000
"""Ruling 5: 1,000 turns in all is a draw."""
VARIANTS = ("standard", "big", "colours")

_REVEAL, _JUMP = 0, 1
_UNLOCKED: frozenset[int] = frozenset()


def jumper_rank(card: str) -> int:
    """A card's rank as a Jumper: 2–10 at face value, J 11, Q 12, K 13, and an
    Ace 14, above everything (ruling 4)."""
    r = card[0].upper()
    return 14 if r == "A" else "23456789TJQK".index(r) + 2


def jumped_rank(card: str) -> int:
    """A card's rank when jumped: an Ace is 1, below everything (ruling 4);
    the others as in :func:`jumper_rank`."""
    r = card[0].upper()
    return 1 if r == "A" else "23456789TJQK".index(r) + 2


# ---- the layouts ------------------------------------------------------------------------

Ray = tuple[tuple[int, str], ...]
"""Squares met stepping from a square to the edge, each with the text of the
jump landing there (``"c3-e3"``)."""

_DIRS = ((0, -1), (1, 0), (0, 1), (-1, 0))
"""North, east, south, west, as (column, row) steps."""


@dataclass(frozen=True)
class Step:
    """A well-formed move on a layout, parsed once: ``kind`` (reveal or jump),
    ``line``: the revealed square, or the jump's squares from the Jumper to
    the landing square, and ``span``: the slice of the cells that ``line``
    is; for a jump, ``order``: the line sorted, and ``locks``: its squares as
    a set (the cards it locks, ruling 4)."""

    kind: int
    line: tuple[int, ...]
    span: slice
    order: tuple[int, ...] = ()
    locks: frozenset[int] = frozenset()


_OCTETS = tuple(tuple(tuple(8 * k + i for i in range(8) if v >> i & 1) for v in range(256))
                for k in range(13))
"""``_OCTETS[k][v]``: the squares ``8k`` … ``8k + 7`` whose bits are set in
``v`` (enough for the 99 squares of the Big board)."""


def squares_of(bits: int) -> tuple[int, ...]:
    """The squares whose bits are set in ``bits`` (bit ``i`` for square
    ``i``), in square order."""
    out: tuple[int, ...] = ()
    for table in _OCTETS:
        if not bits:
            break
        if bits & 255:
            out += table[bits & 255]
        bits >>= 8
    return out


class Board:
    """The fixed tables of one layout shape: squares, neighbours, rays and
    every well-formed reveal and in-line jump, so that play never recomputes
    them. ``corners`` are ``a1``, top-right, bottom-right, bottom-left (the
    seat order); ``queen`` is the centre square. A board pickles as a
    reference to the shared one of its shape (states keep theirs)."""

    def __init__(self, width: int, height: int) -> None:
        g = Grid(width, height)
        self.grid = g
        self.width = width
        self.height = height
        self.size = g.size
        self.names = g.names
        self.index = g.index
        self.queen = g.square(width // 2, height // 2)
        self.corners = (
            g.square(0, 0), g.square(width - 1, 0),
            g.square(width - 1, height - 1), g.square(0, height - 1),
        )
        self.near_queen = frozenset(g.neighbours(self.queen))
        # Masks for flood fills over squares as bits: a shift by one square
        # east lands outside the first column, west outside the last.
        self.every = (1 << g.size) - 1
        self.not_first_column = self.every & ~sum(1 << g.square(0, r) for r in range(height))
        self.not_last_column = self.every & ~sum(1 << g.square(width - 1, r) for r in range(height))
        self.reveal_name = tuple(REVEAL + n for n in self.names)
        # rays[p][d]: the ray from p in direction d (possibly empty)
        self.rays: tuple[tuple[Ray, ...], ...] = tuple(
            tuple(
                tuple((q, f"{self.names[p]}-{self.names[q]}") for q in g.ray(p, dc, dr))
                for dc, dr in _DIRS
            )
            for p in range(g.size)
        )
        self.list_jumps, self.jumps_from = _jump_listers(self)
        self.parse: dict[str, Step] = {}
        for p in range(g.size):
            self.parse[self.reveal_name[p]] = Step(_REVEAL, (p,), slice(p, p + 1))
            for ray in self.rays[p]:
                for k, (q, text) in enumerate(ray):
                    d = ray[0][0] - p
                    stop = q + 1 if d > 0 else (q - 1 if q else None)
                    line = (p, *(sq for sq, _ in ray[: k + 1]))
                    self.parse[text] = Step(_JUMP, line, slice(p, stop, d), tuple(sorted(line)),
                                            frozenset(line))

    def around(self, bits: int) -> int:
        """The squares of ``bits`` and their orthogonal neighbours, as bits."""
        return (bits | (bits << 1 & self.not_first_column) | (bits >> 1 & self.not_last_column)
                | bits << self.width | bits >> self.width) & self.every

    def region(self, seed: int, up: int) -> Region:
        """The region (ruling 3) of the face-up squares ``up`` (as bits) joined
        to the squares ``seed`` (bits of face-up squares joined to one another)
        by orthogonal paths of face-up squares, with the face-down squares next
        to it."""
        members = seed
        while True:  # flood fill, one step in every direction at a time
            more = self.around(members) & up
            if more == members:
                break
            members = more
        down = self.around(members) & ~up
        names = self.reveal_name
        revealable = squares_of(down)
        return Region(members, revealable, down, tuple([names[sq] for sq in revealable]))

    def __reduce__(self) -> tuple[Callable[[int, int], Board], tuple[int, int]]:
        return _board, (self.width, self.height)


JumpLister = Callable[[tuple[str, ...], "tuple[str, ...] | list[str]", Mapping[str, frozenset[str]],
                       list[str]], None]
"""``list_jumps(cells, jumpers, beats, out)``: see :func:`_jump_listers`."""
SquareLister = Callable[[tuple[str, ...], frozenset[str], list[str]], None]
"""``jumps_from[p](cells, allowed, out)``: see :func:`_jump_listers`."""


def _jump_listers(b: Board) -> tuple[JumpLister, tuple[SquareLister, ...]]:
    """The functions that list the jumps on layout ``b`` (ruling 4), written
    out square by square and compiled once per layout shape: one for the
    whole layout, and one for each square.

    ``list_jumps(cells, jumpers, beats, out)`` appends to ``out`` the text
    of every jump (``"c3-e3"``), by Jumper square in square order, then
    direction (north, east, south, west), shortest first: from square ``p``
    whose card ``jumpers[p]`` may jump the cards ``beats[jumpers[p]]`` (an
    empty set: none), over the cards ``cells[q]`` along the ray, as long as
    each one is in that set. ``jumpers`` is ``cells`` with the cards that may
    not be the Jumper now replaced (see :attr:`SuitorsState.moves`).
    ``jumps_from[p](cells, allowed, out)`` appends the jumps from square
    ``p`` alone, in the same order, for a Jumper that may jump ``allowed``:
    for a small region, where visiting every square would cost more.

    Written out, with each square's card in a local variable, rather than
    looped over the rays' tables: a position of random play lists about 40
    jumps among some 150 neighbours, and the loops' own steps took more time
    than the rest of a move."""

    def rays(p: int, indent: str, card: Callable[[int], str]) -> list[str]:
        """The lines that list the jumps from ``p`` (allowed: the Jumper's set)."""
        lines = []
        for ray in b.rays[p]:
            inner = indent
            for q, text in ray:  # each further card only if the nearer ones are jumped
                if q == b.queen:  # she never moves, nor is jumped: no ray passes her
                    break
                lines += [f"{inner}if {card(q)} in allowed:", f"{inner}    out.append({text!r})"]
                inner += " " * 4
        return lines

    squares = [p for p in range(b.size) if p != b.queen]
    source = [
        "def list_jumps(cells, jumpers, beats, out):",
        f"    {', '.join(f'c{p}' for p in range(b.size))}, = cells",
        f"    {', '.join(f'j{p}' for p in range(b.size))}, = jumpers",
    ]
    for p in squares:
        source += [f"    allowed = beats[j{p}]", "    if allowed:", *rays(p, " " * 8, "c{}".format)]
    for p in range(b.size):
        source += [f"def from_{p}(cells, allowed, out):", "    pass",
                   *rays(p, " " * 4, "cells[{}]".format)]
    space: dict[str, Any] = {}
    exec(compile("\n".join(source), f"<suitors jumps {b.width}x{b.height}>", "exec"), space)
    return space["list_jumps"], tuple(space[f"from_{p}"] for p in range(b.size))


BOARD_9X5 = Board(9, 5)
BOARD_11X9 = Board(11, 9)
BOARDS = {"standard": BOARD_9X5, "colours": BOARD_9X5, "big": BOARD_11X9}


def _board(width: int, height: int) -> Board:
    """The shared board of that shape (how a pickled board comes back)."""
    return {(9, 5): BOARD_9X5, (11, 9): BOARD_11X9}[width, height]


_DECK_47 = tuple(c for c in FULL_DECK if c[0] != "J" and c != QUEEN)
DECKS: dict[str, tuple[str, ...]] = {
    "standard": _DECK_47,
    "colours": _DECK_47,
    "big": _DECK_47 + _DECK_47,
}
"""The cards shuffled and dealt face down (and set aside) in each variant."""

FACE_DOWN: dict[str, str] = {c: sys.intern(c.lower()) for c in _DECK_47}
"""A card → its face-down token (one string object shared by all states)."""
FACE_UP: dict[str, str] = {down: c for c, down in FACE_DOWN.items()}
"""A face-down token → the card turned up (the deck's own string)."""
_SORTED_DECK = {v: tuple(sorted(d)) for v, d in DECKS.items()}
_PUBLIC_DERIVED = ("board", "mover", "winner", "over", "locked", "regions", "up", "jack_at",
                   "moves")
"""Derived data of a state that depends only on what every seat sees (the
face-up cards, the locks, the turn): a determinized state shares it."""

COLOURS_SEATS = ("JS", "JH")
COLOURS_CORNERS = {"JS": 0, "JH": 2}
"""Colours variant: J♠ at ``a1`` against J♥ at the opposite corner."""


def seats_for(variant: str, players: int) -> tuple[str, ...]:
    """The seats in turn order: two players take J♠ and J♣ (diagonally
    opposite), three J♠ J♥ J♣, four all (ruling 2); Colours is J♠ and J♥."""
    if variant == "colours":
        return COLOURS_SEATS
    return {2: ("JS", "JC"), 3: ("JS", "JH", "JC"), 4: JACKS}[players]


def jacks_on_board(variant: str) -> dict[str, int]:
    """Jack → corner square of every Jack on the layout, used or not."""
    b = BOARDS[variant]
    if variant == "colours":
        return {j: b.corners[c] for j, c in COLOURS_CORNERS.items()}
    return {j: b.corners[k] for k, j in enumerate(JACKS)}


# ---- who may jump whom (ruling 4) ----------------------------------------------------------


def can_jump(jumper: str, card: str) -> bool:
    """True if ``jumper`` outranks ``card`` and is of the other colour (Ace high
    as Jumper, low when jumped). Says nothing about Queens, Jacks or seats."""
    return is_red(jumper) != is_red(card) and jumped_rank(card) < jumper_rank(jumper)


NOT_A_JUMPER = "--"
"""Stands for a card that may not be the mover's Jumper now, in the copy of
the cells that :attr:`SuitorsState.moves` reads the Jumpers from."""
_NOTHING: frozenset[str] = frozenset()
SMALL_REGION = 12
"""A region of at most this many face-up squares has its jumps listed from
its squares one by one; a larger one by a pass over the whole layout (see
:func:`_jump_listers`)."""


def _beats(variant: str, seat: str) -> dict[str, frozenset[str]]:
    """For ``seat``'s turn: every token a square may hold (a face-up card, a
    face-down card, :data:`NOT_A_JUMPER`) → the face-up cards it may jump as
    the Jumper (ruling 4); an empty set if it may not be the Jumper. The
    Queen and every other Jack, used or not, neither jump nor are jumped;
    ``seat``'s own Jack does both. Colours: the Jumper is of the colour of
    ``seat``'s Jack."""
    pool = set(DECKS[variant]) | {seat}
    beats = dict.fromkeys([*FULL_DECK, *FACE_DOWN.values(), NOT_A_JUMPER], _NOTHING)
    beats.update({
        jumper: frozenset(c for c in pool if can_jump(jumper, c))
        for jumper in pool
        if variant != "colours" or is_red(jumper) == is_red(seat)
    })
    return beats


BEATS: dict[tuple[str, str], dict[str, frozenset[str]]] = {
    (v, s): _beats(v, s) for v in VARIANTS for s in JACKS
}
"""(variant, seat) → {token → cards it may jump} (see :func:`_beats`)."""


@dataclass(frozen=True)
class Region:
    """A connected region (ruling 3): ``members`` holds its face-up squares
    as bits (bit ``i`` for square ``i``; :attr:`squares` lists them),
    ``revealable`` (sorted) and ``down`` (bits) the face-down squares next to
    it, ``reveals`` the moves turning them up. Bits rather than sets, so that
    a state's regions hold no containers of their own."""

    members: int
    revealable: tuple[int, ...]
    down: int
    reveals: tuple[str, ...]

    @cached
    def squares(self) -> tuple[int, ...]:
        """The region's face-up squares, sorted."""
        return squares_of(self.members)

    def __contains__(self, square: int) -> bool:
        """True if ``square`` is one of the region's face-up squares."""
        return bool(self.members >> square & 1)


def _bits(squares: list[int]) -> int:
    """The squares as bits (bit ``i`` for square ``i``)."""
    out = 0
    for sq in squares:
        out |= 1 << sq
    return out


# ---- the state --------------------------------------------------------------------------


@dataclass(frozen=True, repr=False)
class SuitorsState:
    """A Suitors position, secret parts included (never send it as it is).

    ``variant``: ``standard``, ``big`` or ``colours``. ``seats``: the Jacks in
    play, in turn order. ``cells``: one token per square row by row from
    ``a1`` (``"9H"`` face up, ``"9h"`` face down). ``aside``: the cards set
    aside unseen (upper case). ``turn``: index in ``seats`` of the seat to
    move. ``turns``: turns taken so far (passes count). ``passes``: passes in a
    row. ``moved``: ``(square, turn number)`` pairs, sorted by square, for the
    cards that were Jumper or jumped in one of the last ``len(seats) - 1``
    turns (older entries are dropped, so equal positions compare equal).
    ``last_seat``/``last_move``: the last action, or ``""`` before the first.

    Derived data (``board`` … ``jack_at`` below: attributes, not compared) is
    worked out from the fields when the constructor makes a state. A state
    made by :meth:`Suitors.apply` is handed it by the move instead, which
    tells it at no cost (the mover, the end of the game, the locks, the
    face-up squares) or leaves it unchanged (the board; the regions, after a
    jump or a pass): ``apply`` builds the new state without the dataclass
    ``__init__`` (it sets the fields and that data in one go), for speed.
    Such a state equals, hashes like and plays like one made by the
    constructor. Plain attributes rather than cached properties, because
    reading a cached property costs about four times as much, and the
    rollouts of the computer players read them millions of times.
    """

    variant: str
    seats: tuple[str, ...]
    cells: tuple[str, ...]
    aside: tuple[str, ...]
    turn: int = 0
    turns: int = 0
    passes: int = 0
    moved: tuple[tuple[int, int], ...] = ()
    last_seat: str = ""
    last_move: str = ""

    board: Board = field(init=False, repr=False, compare=False)
    """The layout tables of this variant."""
    mover: str = field(init=False, repr=False, compare=False)
    """The seat whose turn it is (still set once the game is over)."""
    winner: str | None = field(init=False, repr=False, compare=False)
    """The seat whose Jack ended its own jump orthogonally next to the Queen
    (ruling 5), else ``None``."""
    over: bool = field(init=False, repr=False, compare=False)
    """True once a Jack reached the Queen, every player passed in a row, or
    1,000 turns were played (ruling 5)."""
    locked: frozenset[int] = field(init=False, repr=False, compare=False)
    """Squares of the cards the mover may not use as Jumper: they were Jumper
    or jumped during another player's turn since the mover's last turn
    (ruling 4). ``moved`` keeps exactly these entries."""
    regions: list[Region] = field(init=False, repr=False, compare=False)
    """The connected regions found so far: a cache that depends only on which
    squares are face up. A jump or a pass hands it on unchanged (jumps only
    move face-up cards among face-up squares); a reveal keeps the regions not
    next to the revealed square and joins those next to it, through it, into
    one. Filled lazily by :meth:`region_at`."""
    up: int = field(init=False, repr=False, compare=False)
    """The face-up squares as bits (bit ``i`` for square ``i``)."""
    jack_at: dict[str, int] = field(init=False, repr=False, compare=False)
    """Seat → the square of its Jack (only a seat's own jump moves it)."""

    def __post_init__(self) -> None:
        """Work out the derived data of a state the constructor made."""
        board = BOARDS[self.variant]
        winner = None
        step = board.parse.get(self.last_move)
        if step is not None and step.kind == _JUMP:
            jack = self.cells.index(self.last_seat)
            if jack in step.line and jack in board.near_queen:
                winner = self.last_seat
        self.__dict__.update({
            "board": board, "mover": self.seats[self.turn], "winner": winner,
            "over": (winner is not None or self.passes >= len(self.seats)
                     or self.turns >= MAX_TURNS),
            "locked": frozenset(sq for sq, _ in self.moved), "regions": [],
            "up": _bits([sq for sq, c in enumerate(self.cells) if not c.islower()]),
            "jack_at": {j: self.cells.index(j) for j in self.seats},
        })

    def __repr__(self) -> str:
        """The public side only (face-down cards as ``??``, the set-aside cards
        counted), so that a stray log line or error never shows a hidden card;
        ``Suitors.to_text`` gives the whole state."""
        head = "; ".join(f"{k}: {v}" for k, v in _header(self, secret=False))
        cells = " ".join(UNKNOWN if c.islower() else c for c in self.cells)
        return f"SuitorsState({head}; cells: {cells})"

    def locked_for(self, seat: str) -> list[int]:
        """Squares of the cards that were Jumper or jumped during another
        player's turn since ``seat``'s last turn, sorted (for the mover: the
        squares of :attr:`locked`)."""
        n = len(self.seats)
        k = (self.turn - self.seats.index(seat)) % n or n
        since = self.turns - k  # seat's last turn number (negative: none yet)
        return sorted(sq for sq, t in self.moved if t > since)

    def region_at(self, start: int) -> Region:
        """The region of face-up squares joined to the face-up square ``start``
        by orthogonal paths of face-up squares (ruling 3), with the face-down
        squares next to it."""
        for r in self.regions:
            if r.members >> start & 1:
                return r
        r = self.board.region(1 << start, self.up)
        self.regions.append(r)
        return r

    def region(self, seat: str) -> Region:
        """``seat``'s connected region: its Jack's square and every face-up
        square connected to it (ruling 3); its ``revealable`` squares are the
        cards ``seat`` may turn up (ruling 4)."""
        return self.region_at(self.jack_at[seat])

    @cached
    def moves(self) -> tuple[str, ...]:
        """The mover's legal moves (ruling 4): its reveals by square, then its
        jumps by Jumper square (in square order) and direction (north, east,
        south, west), shortest first; ``("pass",)`` when there is none; empty
        once the game is over."""
        if self.over:
            return ()
        seat = self.mover
        cells = self.cells
        b = self.board
        region = self.region(seat)
        out = list(region.reveals)
        # The Jumper is a card of the mover's region that is not locked. A
        # jump only passes over face-up cards next to one another, so every
        # card it jumps is in the Jumper's region already.
        locked = self.locked
        beats = BEATS[self.variant, seat]
        if region.members.bit_count() <= SMALL_REGION:  # from each of its squares
            jumps_from = b.jumps_from
            for p in region.squares:
                allowed = beats[cells[p]]
                if allowed and p not in locked:
                    jumps_from[p](cells, allowed, out)
            return tuple(out) if out else (PASS,)
        elsewhere = self.up & ~region.members
        jumpers: tuple[str, ...] | list[str] = cells
        if locked or elsewhere:
            jumpers = list(cells)
            for sq in locked:
                jumpers[sq] = NOT_A_JUMPER
            for sq in squares_of(elsewhere):
                jumpers[sq] = NOT_A_JUMPER
        b.list_jumps(cells, jumpers, beats, out)
        return tuple(out) if out else (PASS,)


# ---- the game ---------------------------------------------------------------------------


class Suitors(Game[SuitorsState]):
    """Suitors for two to four players (RULINGS.md, Suitors), with the Big
    board and Colours variants. A match is one game."""

    info = GameInfo(
        "suitors",
        "Suitors",
        (
            Option("players", "Number of players: 2, 3 or 4 (Colours: 2).", 2,
                   kind="choice", choices=(2, 3, 4)),
            Option("variant",
                   "standard (one deck, 9×5), big (two decks, 11×9) or colours"
                   " (two players, your Jumper is of your Jack's colour).",
                   "standard", kind="choice", choices=VARIANTS),
        ),
        seats=JACKS,
        players_option="players",
        hidden_information=True,
        layout=Layout("grid", BOARD_9X5.width, BOARD_9X5.height),
        layouts={"variant": {v: Layout("grid", BOARDS[v].width, BOARDS[v].height) for v in VARIANTS}},
        board="suitors",
        deal_noun="game",
    )

    def check_options(self, raw: Mapping[str, Any]) -> dict[str, Any]:
        """As :meth:`Game.check_options`; also raises :class:`OptionError` for
        the Colours variant with other than two players."""
        out = super().check_options(raw)
        if out["variant"] == "colours" and out["players"] != 2:
            raise OptionError(f"the Colours variant is for two players: option 'players' must be 2,"
                              f" not {out['players']}")
        return out

    def seats(self, options: Mapping[str, Any]) -> tuple[str, ...]:
        return seats_for(options.get("variant", "standard"), options.get("players", 2))

    # ---- a deal ---------------------------------------------------------------------
    def deal(self, seed: int, options: Mapping[str, Any], starter: str) -> SuitorsState:
        """The opening layout (ruling 1 and the variants): the Queen face up in
        the centre, the Jacks face up in their corners, the shuffled deck face
        down on every other square row by row, the rest set aside."""
        variant = options.get("variant", "standard")
        seats = seats_for(variant, options.get("players", 2))
        b = BOARDS[variant]
        fixed = {sq: j for j, sq in jacks_on_board(variant).items()}
        fixed[b.queen] = QUEEN
        deck = shuffled(DECKS[variant], seed)
        free = b.size - len(fixed)
        it = iter(deck[:free])
        cells = tuple(fixed[i] if i in fixed else FACE_DOWN[next(it)] for i in range(b.size))
        return SuitorsState(variant, seats, cells, tuple(deck[free:]), seats.index(starter))

    def to_move(self, state: SuitorsState) -> tuple[str, ...]:
        return () if state.over else (state.mover,)

    def legal_moves(self, state: SuitorsState, seat: str) -> tuple[str, ...]:
        if state.over or seat != state.mover:
            return ()
        return state.moves

    def apply(self, state: SuitorsState, seat: str, move: str) -> SuitorsState:
        """Raises :class:`MalformedMove` for text that is not ``reveal <square>``,
        ``<square>-<square>`` or ``pass`` on this layout, and
        :class:`IllegalMove` (with the reason) otherwise. A jump shifts each
        jumped card one square back toward the Jumper's square and puts the
        Jumper on the farthest jumped card's square (ruling 4)."""
        b = state.board
        step = b.parse.get(move)
        if step is None and move != PASS:
            _check_form(b, move)
        if state.over:
            raise IllegalMove("the game is over")
        if seat != state.mover:
            if seat not in state.seats:
                raise IllegalMove(f"{seat} is not playing in this game")
            raise IllegalMove(f"it is {state.mover}'s turn, not {seat}'s")
        if move not in state.moves:
            raise IllegalMove(_why_illegal(state, move))
        n = len(state.seats)
        turns = state.turns + 1
        turn = (state.turn + 1) % n
        moved = state.moved
        if moved:  # keep the entries of the last n - 1 turns
            if n == 2:  # one turn: the one now played, so none of the old
                moved = ()
            else:
                oldest = turns - (n - 1)
                moved = tuple([e for e in moved if e[1] >= oldest])
        regions = state.regions
        up = state.up
        jack_at = state.jack_at
        winner = None
        if step is None or step.kind == _REVEAL:
            locked = frozenset([sq for sq, _ in moved]) if moved else _UNLOCKED
            if step is None:  # pass
                cells = state.cells
                passes = state.passes + 1
                over = passes >= n or turns >= MAX_TURNS
            else:
                sq = step.line[0]
                listed = list(state.cells)
                listed[sq] = FACE_UP[listed[sq]]
                cells = tuple(listed)
                # The regions next to the card join through it into one
                # (found at once: the flood fill from one square took about a
                # twentieth of all the time of random play).
                joined = 1 << sq
                kept = []
                for r in regions:
                    if r.down >> sq & 1:
                        joined |= r.members
                    else:
                        kept.append(r)
                up |= joined
                kept.append(b.region(joined, up))
                regions = kept
                passes = 0
                over = turns >= MAX_TURNS
        else:
            listed = list(state.cells)
            line = step.line
            if len(line) == 2:  # one card jumped: the two swap (ruling 4)
                a, c = line
                seg = [listed[a], listed[c]]
                listed[a], listed[c] = seg[1], seg[0]
            else:
                span = step.span
                seg = listed[span]
                listed[span] = seg[1:] + seg[:1]  # the shift (ruling 4)
            if seat in seg:  # the seat's Jack moved
                jack_at = {**jack_at, seat: listed.index(seat)}
                if jack_at[seat] in b.near_queen:
                    winner = seat
            cells = tuple(listed)
            passes = 0
            over = winner is not None or turns >= MAX_TURNS
            t = state.turns
            if moved:
                moved = tuple(sorted([e for e in moved if e[0] not in line]
                                     + [(sq, t) for sq in line]))
                locked = frozenset([sq for sq, _ in moved])
            else:
                moved = tuple([(sq, t) for sq in step.order])
                locked = step.locks
        # Fields and derived data at once, without the dataclass __init__
        # (the derived data the move tells for free: see SuitorsState).
        new: SuitorsState = object.__new__(SuitorsState)
        new.__dict__.update({
            "variant": state.variant, "seats": state.seats, "cells": cells,
            "aside": state.aside, "turn": turn, "turns": turns, "passes": passes,
            "moved": moved, "last_seat": seat, "last_move": move,
            "board": b, "mover": state.seats[turn], "winner": winner, "over": over,
            "locked": locked, "regions": regions, "up": up, "jack_at": jack_at,
        })
        return new

    def move_structure(self, state: SuitorsState, seat: str, move: str) -> dict[str, JSON]:
        """A reveal ``{"kind": "reveal", "at": "c2"}``; a jump ``{"kind":
        "jump", "from": "c3", "to": "e3", "jumped": ["d3", "e3"]}`` (the
        Jumper's square, the square it lands on, and the squares of the cards
        it jumps, nearest first: the last is where it lands); or ``{"kind":
        "pass"}``."""
        b = state.board
        step = b.parse.get(move)
        if step is None:
            return {"move": move, "kind": "pass"}
        names = b.names
        line = step.line
        if step.kind == _REVEAL:
            return {"move": move, "kind": "reveal", "at": names[line[0]]}
        return {"move": move, "kind": "jump", "from": names[line[0]], "to": names[line[-1]],
                "jumped": [names[q] for q in line[1:]]}

    def describe(self, state: SuitorsState, seat: str, move: str) -> str:
        """A sentence about ``move``. A reveal names the card only when the move
        is legal (the card is about to be public)."""
        who = pretty(seat) if seat in JACKS else seat
        if move == PASS:
            return f"{who} cannot move and passes"
        b = state.board
        step = b.parse.get(move)
        if step is None:
            return move
        legal = not state.over and seat == state.mover and move in state.moves
        line = step.line
        if step.kind == _REVEAL:
            name = b.names[line[0]]
            if legal:
                return f"{who} reveals the {pretty(state.cells[line[0]])} at {name}"
            return f"{who} reveals the card at {name}"
        jumper = state.cells[line[0]]
        start, end = b.names[line[0]], b.names[line[-1]]
        if not legal:
            return f"{who} jumps from {start} to {end}"
        jumped = ["its own Jack" if state.cells[sq] == seat else f"the {pretty(state.cells[sq])}"
                  for sq in line[1:]]
        over = jumped[0] if len(jumped) == 1 else ", ".join(jumped[:-1]) + " and " + jumped[-1]
        if jumper == seat:
            return f"{who} jumps from {start} to {end} over {over}"
        # "J♠ jumps the K♦" read as the Jack leaping over the King (new-user pass)
        return f"{who} moves the {pretty(jumper)} from {start} to {end} over {over}"

    # ---- results --------------------------------------------------------------------
    def outcome(self, state: SuitorsState) -> Outcome | None:
        """Ruling 5: the Jack that reached the Queen scores 1, every other seat
        0; an all-pass or 1,000-turn draw has no winner and scores 0 all round."""
        if not state.over:
            return None
        win = state.winner
        scores = []
        for s in state.seats:
            if s == win:
                square = state.board.names[state.cells.index(s)]
                line = ScoreLine("Queen", f"reached, beside her at {square}", 1)
            else:
                line = ScoreLine("Queen", "not reached", 0)
            scores.append(SideScore(s, (s,), line.points, (line,)))
        if win:
            reason = f"{pretty(win)} reached the Queen of Hearts"
        elif state.passes >= len(state.seats):
            reason = "every player passed in a row: a draw"
        else:
            reason = f"{MAX_TURNS:,} turns were played: a draw"
        return Outcome((win,) if win else (), tuple(scores), reason)

    # ---- what people see ------------------------------------------------------------
    def view(self, state: SuitorsState, seat: str | None) -> JSON:
        """What ``seat`` may know (``None``: a spectator). Face-down squares are
        ``"??"``; set-aside cards appear only as a count. Fields are listed in
        ``docs/notation/suitors.md``."""
        b = state.board
        names = b.names
        cells = state.cells
        on_board = {j: cells.index(j) for j in JACKS if j in cells}
        over = state.over
        seated = seat in state.seats
        me = seat if seated else None
        lock_seat = me if me is not None else (None if over else state.mover)
        v: dict[str, Any] = {
            "variant": state.variant,
            "width": b.width,
            "height": b.height,
            "seats": list(state.seats),
            "cells": [UNKNOWN if c.islower() else c for c in cells],
            "jacks": {s: names[on_board[s]] for s in state.seats},
            "unused": {j: names[sq] for j, sq in on_board.items() if j not in state.seats},
            "queen": names[b.queen],
            "turn": None if over else state.mover,
            "connected": {s: [names[q] for q in state.region(s).squares] for s in state.seats},
            "revealable": [],
            "locked": [names[q] for q in state.locked_for(lock_seat)] if lock_seat else [],
            "mover_locked": [] if over else [names[q] for q in sorted(state.locked)],
            "last": _last_json(state),
            "passes": state.passes,
            "turns": state.turns,
            "max_turns": MAX_TURNS,
            "face_down": sum(1 for c in cells if c.islower()),
            "aside": len(state.aside),
            "winner": state.winner,
        }
        if me is not None and me == state.mover and not over:
            v["revealable"] = [names[q] for q in state.region(me).revealable]
        return v

    def revealed_view(self, state: SuitorsState) -> JSON:
        """The spectator's view with every card shown, for a review of a
        finished game: ``cells`` hold each face-down card in lower case
        (``"9h"``: still face down, its face known) instead of ``??``, and
        ``aside_cards`` lists the set-aside cards (upper case, in the order
        dealt). Only for a game that is over (``docs/notation/suitors.md``,
        "The revealed view")."""
        v = self.view(state, None)
        v["cells"] = list(state.cells)
        v["aside_cards"] = list(state.aside)
        return v

    # ---- text -----------------------------------------------------------------------
    def to_text(self, state: SuitorsState) -> str:
        """The full, secret position: face-down cards in lower case and the
        set-aside cards in the header (``docs/notation/suitors.md``)."""
        return format_position(self.info.id, _header(state, secret=True),
                               state.board.grid.format_rows(state.cells))

    def public_text(self, state: SuitorsState) -> str:
        """The public position anyone at the table may see: face-down cards as
        ``??`` and the set-aside cards only counted. Not readable by
        :meth:`from_text` (the hidden cards are missing)."""
        cells = [UNKNOWN if c.islower() else c for c in state.cells]
        return format_position(self.info.id, _header(state, secret=False),
                               state.board.grid.format_rows(cells))

    def from_text(self, text: str) -> SuitorsState:
        """Raises ``ValueError`` if ``text`` is not a full Suitors position
        (a public text, with ``??``, is refused)."""
        header, lines = parse_position(text, self.info.id)
        variant = header.get("variant", "standard")
        if variant not in VARIANTS:
            raise ValueError(f"variant must be one of {', '.join(VARIANTS)}")
        try:
            players = int(header.get("players", "2"))
            turns = int(header.get("turns", "0"))
            passes = int(header.get("passes", "0"))
        except ValueError:
            raise ValueError("players, turns and passes must be whole numbers") from None
        if players not in (2, 3, 4) or (variant == "colours" and players != 2):
            raise ValueError("players must be 2, 3 or 4 (2 for colours)")
        seats = seats_for(variant, players)
        if header.get("turn") not in seats:
            raise ValueError(f"turn must be one of {', '.join(seats)}")
        if not 0 <= passes <= len(seats) or not 0 <= turns <= MAX_TURNS:
            raise ValueError("passes or turns out of range")
        b = BOARDS[variant]
        cells = b.grid.parse_rows(lines)
        for tok in cells:
            if not is_card(tok.upper()):
                raise ValueError(f"bad card token {tok!r}")
        aside = tuple(t for t in header.get("aside", "-").split() if t != "-")
        for tok in aside:
            if not is_card(tok.upper()):
                raise ValueError(f"bad set-aside card {tok!r}")
        aside = tuple(c.upper() for c in aside)
        jacks = jacks_on_board(variant)
        want = Counter(DECKS[variant]) + Counter([*jacks, QUEEN])
        if Counter(c.upper() for c in cells) + Counter(aside) != want:
            raise ValueError(f"the cards are not those of a {variant} Suitors layout")
        if cells[b.queen] != QUEEN:
            raise ValueError(f"the Queen of Hearts must be face up at {b.names[b.queen]}")
        for j in jacks:
            if j not in cells:
                raise ValueError(f"the {pretty(j)} must be face up")
        moved = []
        oldest = turns - (len(seats) - 1)
        for tok in header.get("moved", "-").split():
            if tok == "-":
                continue
            sq_name, _, t = tok.partition("@")
            if sq_name not in b.index or not t.isdigit():
                raise ValueError(f"bad moved entry {tok!r}: write square@turn like c3@12")
            if not oldest <= int(t) < turns:
                raise ValueError(f"moved entry {tok!r} is not one of the last {len(seats) - 1} turns")
            moved.append((b.index[sq_name], int(t)))
        last_seat, _, last_move = header.get("last", "-").partition(" ")
        if last_seat == "-":
            last_seat = last_move = ""
        elif last_seat not in seats or (last_move != PASS and last_move not in b.parse):
            raise ValueError("last must read like 'JS c3-e3', 'JC reveal b2', 'JS pass' or '-'")
        return SuitorsState(variant, seats, tuple(cells), aside, seats.index(header["turn"]),
                            turns, passes, tuple(sorted(moved)), last_seat, last_move)

    # ---- for computer players -------------------------------------------------------
    def determinize(self, state: SuitorsState, seat: str, rng: random.Random) -> SuitorsState:
        """A state ``seat`` cannot tell from ``state``: the cards it has not
        seen (the variant's cards minus every face-up card; the hidden cards
        themselves are never read) shuffled by ``rng`` onto the face-down
        squares, row by row, and the rest set aside."""
        variant = state.variant
        if variant == "big":  # two decks: count the cards
            unseen = Counter(DECKS[variant])
            unseen.subtract(c for c in state.cells if not c.islower())
            pool = sorted(unseen.elements())
        else:  # each card once; face-down tokens are lower case, never a card
            up = set(state.cells)
            pool = [c for c in _SORTED_DECK[variant] if c not in up]
        rng.shuffle(pool)
        it = iter(pool)
        cells = tuple(FACE_DOWN[next(it)] if c.islower() else c for c in state.cells)
        # Built like apply builds states, sharing the derived data that only
        # depends on what every seat sees (computed once, not per world).
        new: SuitorsState = object.__new__(SuitorsState)
        fields = new.__dict__
        fields.update({
            "variant": variant, "seats": state.seats, "cells": cells, "aside": tuple(it),
            "turn": state.turn, "turns": state.turns, "passes": state.passes,
            "moved": state.moved, "last_seat": state.last_seat, "last_move": state.last_move,
        })
        known = state.__dict__
        for name in _PUBLIC_DERIVED:
            if name in known:
                fields[name] = known[name]
        return new


# ---- helpers ----------------------------------------------------------------------------


def _header(state: SuitorsState, secret: bool) -> list[tuple[str, str]]:
    """Header fields of a position text; the secret one lists the set-aside cards."""
    names = state.board.names
    players = 2 if state.variant == "colours" else len(state.seats)
    head = [
        ("variant", state.variant),
        ("players", str(players)),
        ("turn", state.mover),
        ("turns", str(state.turns)),
        ("passes", str(state.passes)),
        ("moved", " ".join(f"{names[sq]}@{t}" for sq, t in state.moved) or "-"),
        ("last", f"{state.last_seat} {state.last_move}" if state.last_seat else "-"),
    ]
    if secret:
        head.append(("aside", " ".join(c.lower() for c in state.aside) or "-"))
    else:
        head.append(("aside", f"{len(state.aside)} cards"))
    return head


def _last_json(state: SuitorsState) -> JSON:
    """The last action for the view: a reveal's square and card, or a jump's
    Jumper from/to and the jumped cards' squares before and after the shift."""
    if not state.last_seat:
        return None
    out: dict[str, Any] = {"seat": state.last_seat, "move": state.last_move}
    step = state.board.parse.get(state.last_move)
    names = state.board.names
    if step is None:
        out["kind"] = "pass"
    elif step.kind == _REVEAL:
        sq = step.line[0]
        out.update(kind="reveal", square=names[sq], card=state.cells[sq])
    else:
        line = step.line
        out.update(
            kind="jump",
            **{"from": names[line[0]]},
            to=names[line[-1]],
            jumper=state.cells[line[-1]],
            jumped=[names[q] for q in line[1:]],
            shifted=[names[q] for q in line[:-1]],
            cards=[state.cells[q] for q in line[:-1]],
        )
    return out


def _check_form(b: Board, move: str) -> None:
    """Raise :class:`MalformedMove` unless ``move`` is a jump between two squares
    of the layout that are not in line (well formed, so illegal later)."""
    last = b.names[-1]
    a, dash, c = move.partition("-")
    if dash and a in b.index and c in b.index:
        return
    raise MalformedMove(
        f"{move[:40]!r} is not a Suitors move: write 'reveal c2', a jump like 'c3-e3'"
        f" (squares a1 to {last}) or 'pass'"
    )


def _never_moves(state: SuitorsState, sq: int) -> str:
    """Why the card at ``sq`` can take no part in the mover's jump (the Queen,
    another player's Jack, an unused Jack; ruling 4), or ``""``."""
    card = state.cells[sq]
    at = f"the {pretty(card)} at {state.board.names[sq]}"
    if card == QUEEN:
        return f"{at} is the Queen of Hearts: no one ever moves her"
    if card in JACKS and card != state.mover:
        if card in state.seats:
            return f"{at} is {card}'s Jack: you can never move another player's Jack"
        return f"{at} is not in play: unused Jacks never move"
    return ""


def _why_illegal(state: SuitorsState, move: str) -> str:
    """A sentence for the mover on why ``move`` is not legal. It never names a
    face-down card."""
    if move == PASS:
        return "you cannot pass while you have a legal move"
    b = state.board
    names = b.names
    cells = state.cells
    seat = state.mover
    step = b.parse.get(move)
    region = state.region(seat)
    if step is not None and step.kind == _REVEAL:
        sq = step.line[0]
        if not cells[sq].islower():
            return f"the {pretty(cells[sq])} at {names[sq]} is already face up"
        return (f"the card at {names[sq]} is not next to a face-up card connected to"
                f" your {pretty(seat)}")
    if step is None:
        a, _, c = move.partition("-")
        if a == c:
            return "a jump must pass over at least one card"
        return f"{a} and {c} are not in one row or column: you cannot jump diagonally"
    line = step.line
    p = line[0]
    jumper = cells[p]
    at = f"at {names[p]}"
    if jumper.islower():
        return f"the card {at} is face down and cannot jump"
    fixed = _never_moves(state, p)
    if fixed:
        return fixed
    if p not in region:
        return f"the {pretty(jumper)} {at} is not connected to your {pretty(seat)}"
    if state.variant == "colours" and is_red(jumper) != is_red(seat):
        return (f"in the Colours variant your Jumper must be {colour(seat)} like your"
                f" {pretty(seat)}: the {pretty(jumper)} {at} cannot jump")
    if p in state.locked:
        return (f"the {pretty(jumper)} {at} took part in a jump in another player's turn since"
                " your last turn, so it cannot be your Jumper now")
    for q in line[1:]:
        c = cells[q]
        if c.islower():
            return f"the card at {names[q]} is face down and cannot be jumped"
        fixed = _never_moves(state, q)
        if fixed:
            return fixed
        if is_red(c) == is_red(jumper):
            return (f"the {pretty(c)} is the same colour as the {pretty(jumper)} and cannot be"
                    " jumped by it")
        if jumped_rank(c) >= jumper_rank(jumper):
            return (f"the {pretty(c)} does not rank below the {pretty(jumper)} and cannot be"
                    " jumped by it")
    return f"{move} is not a legal move now"
