"""Romeo and Juliet (two players, Red and Black): David Parlett's race of two
Romeos across a 7×7 layout, adapted from Eric Solomon's Card Maze.

RULINGS.md, Romeo and Juliet, rules 1–5, implemented exactly. Red's Romeo
starts on the Q♠ at ``a7`` and must land exactly on the Q♥ at ``g1`` (his
Juliet); Black's starts on the Q♥ and must land on the Q♠. A turn is a Romeo
move or a swap, or ``pass`` when neither is legal.

Notation (``docs/notation/romeo-and-juliet.md``):

* a Romeo move is its destination square: ``e3``;
* a swap is ``swap b2 b5``: the two squares in canonical order, sorted by
  (column, row), so ``swap b2 b5`` and ``swap a6 c6`` but never ``swap b5 b2``.
  Only the canonical order is notation: the reverse order is a
  :class:`MalformedMove` whose message gives the right spelling, so logs only
  ever hold the canonical form;
* ``pass`` when the mover has no other legal action.

Choices where the rulings are silent (also on the rules page):

* A position, for the threefold-repetition draw, is the layout, where both
  Romeos stand, who is to move and which two cards are locked. The three Jokers
  count as identical (which Seven lies face down does not matter), and the
  deal's first position counts as an occurrence.
* A pass is a turn: it counts towards the 300 turns and towards repetitions.
  If both players are stuck, passing back and forth repeats the position and
  ends the game as a draw.
* The game ends as a draw once 300 turns have been played, unless the 300th
  turn is a winning landing. A third occurrence of a position takes precedence
  over the turn limit in the stated reason.
* The lock of the most recent swap lasts until the next swap, whatever Romeo
  moves happen in between. A Romeo may land on a locked card.
* Passing over (without landing on) either Queen is allowed; only landing on
  your own starting Queen is forbidden, and landing on your Juliet wins.
* A Romeo on a Joker may move to the card it just came from only when that
  card's own rule reaches the Joker (ruling 4), and every square of that
  card's path must be free of the opponent's Romeo, as for a forward move.
* From a Joker the path shown for a move is just the two squares (the Romeo
  jumps); a numeral's path lists every square stepped through, wrap included.

A match is one game (the default). The winner scores 1 point, the loser 0; a
draw scores 0 for both with no winner.
"""

from __future__ import annotations

import random
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from engine.base import (
    JSON,
    Game,
    GameInfo,
    IllegalMove,
    Layout,
    MalformedMove,
    Outcome,
    ScoreLine,
    SideScore,
)
from engine.cards import (
    FULL_DECK,
    GRID_7X7,
    derive_seed,
    is_card,
    is_red,
    pip_value,
    pretty,
    shuffled,
)
from engine.lazy import cached
from engine.notation import format_position, parse_position

G = GRID_7X7
NAMES = G.names
INDEX = G.index
SIZE = G.size
SEATS = ("red", "black")
SEAT_NAME = ("Red", "Black")
PASS = "pass"
TURN_LIMIT = 300
"""RULINGS.md, Romeo and Juliet rule 5: 300 turns in all is a draw."""

HOME = (INDEX["a7"], INDEX["g1"])
"""Each seat's starting Queen square: Red's Q♠ at ``a7``, Black's Q♥ at ``g1``."""
JULIET = (HOME[1], HOME[0])
"""Each seat's goal: the other seat's starting Queen."""
QUEEN_AT = {HOME[0]: "QS", HOME[1]: "QH"}
JOKERS = ("7s", "7h", "7d", "7c")
"""Position-text tokens of a Joker: a face-down Seven, in lower case."""
DECK_50 = tuple(c for c in FULL_DECK if c not in ("QC", "QD"))
"""The deck before one Seven is drawn out: 52 cards less QC and QD."""

# ---------------------------------------------------------------------------------
# Move tables, built once: every route a card can give a Romeo from every square.
# ---------------------------------------------------------------------------------

_KING_STEPS = (
    ((0, -1), "up"), ((1, -1), "up-right"), ((1, 0), "right"), ((1, 1), "down-right"),
    ((0, 1), "down"), ((-1, 1), "down-left"), ((-1, 0), "left"), ((-1, -1), "up-left"),
)
_KNIGHT = ((1, -2), (2, -1), (2, 1), (1, 2), (-1, 2), (-2, 1), (-2, -1), (-1, -2))


@dataclass(frozen=True)
class Route:
    """One way a card sends a Romeo from ``start`` to ``dest`` (square indices).

    ``path`` is every square in order from ``start`` to ``dest`` inclusive
    (for a numeral each square stepped through, wrap-around included; for a
    King or Jack just the two squares). ``blockers`` are the squares the
    opponent's Romeo must not stand on (the path after ``start``). ``label``
    says how, in words: ``"9 up (wraps)"``, ``"one step down-left"``,
    ``"a knight's move"``. ``wraps`` is True if the path crosses an edge.
    """

    start: int
    dest: int
    path: tuple[int, ...]
    blockers: frozenset[int]
    label: str
    wraps: bool


def _numeral_routes(sq: int, n: int, vertical: bool) -> tuple[Route, ...]:
    """The two routes of a numeral worth ``n`` at ``sq``: exactly n squares
    along its column (red) or row (black), each way, wrapping at the edges
    (ruling 4)."""
    c, r = G.colrow(sq)
    out = []
    for d, word in ((-1, "up"), (1, "down")) if vertical else ((-1, "left"), (1, "right")):
        steps = []
        wraps = False
        for k in range(1, n + 1):
            raw = (r if vertical else c) + d * k
            wraps = wraps or not 0 <= raw < 7
            steps.append(G.square(c, raw % 7) if vertical else G.square(raw % 7, r))
        label = f"{n} {word}" + (" (wraps)" if wraps else "")
        out.append(Route(sq, steps[-1], (sq, *steps), frozenset(steps), label, wraps))
    return tuple(out)


def _court_routes(sq: int, rank: str) -> tuple[Route, ...]:
    """A King's steps or a Jack's knight moves from ``sq``; never over an edge."""
    c, r = G.colrow(sq)
    deltas = _KING_STEPS if rank == "K" else tuple((d, "a knight's move") for d in _KNIGHT)
    out = []
    for (dc, dr), word in deltas:
        if G.on_board(c + dc, r + dr):
            dest = G.square(c + dc, r + dr)
            label = f"one step {word}" if rank == "K" else word
            out.append(Route(sq, dest, (sq, dest), frozenset((dest,)), label, False))
    return tuple(out)


def _routes(sq: int, token: str) -> tuple[Route, ...]:
    """Every route the face-up card ``token`` gives a Romeo standing on ``sq``
    (empty for a Queen)."""
    rank = token[0]
    if rank in "KJ":
        return _court_routes(sq, rank)
    if rank == "Q":
        return ()
    return _numeral_routes(sq, pip_value(token), is_red(token))


MOVERS = tuple(c for c in DECK_50 if c[0] not in "7Q")
"""Every card that moves a Romeo: numerals (no Sevens), Kings and Jacks."""

ROUTES: tuple[dict[str, tuple[Route, ...]], ...] = tuple(
    {tok: _routes(sq, tok) for tok in MOVERS} for sq in range(SIZE)
)
"""``ROUTES[square][card]``: the routes of ``card`` from ``square``."""

FAST: tuple[dict[str, tuple[tuple[int, frozenset[int], str], ...]], ...] = tuple(
    {tok: tuple((rt.dest, rt.blockers, NAMES[rt.dest]) for rt in rts) for tok, rts in d.items()}
    for d in ROUTES
)
"""The same as :data:`ROUTES`, as ``(dest, blockers, dest name)`` for speed."""


def _reverse_table() -> tuple[tuple[tuple[int, str, dict[str, frozenset[int]]], ...], ...]:
    """``REACH[t]``: for each square ``c`` and card that would send a Romeo
    from ``c`` to ``t``, the squares the opponent must avoid (the route's
    blockers plus ``c`` itself, since a Romeo from a Joker lands on ``c``)."""
    found: list[dict[int, dict[str, frozenset[int]]]] = [{} for _ in range(SIZE)]
    for c in range(SIZE):
        for tok, rts in ROUTES[c].items():
            for rt in rts:
                found[rt.dest].setdefault(c, {})[tok] = rt.blockers | {c}
    return tuple(
        tuple((c, NAMES[c], toks) for c, toks in sorted(found[t].items())) for t in range(SIZE)
    )


REACH = _reverse_table()
"""Reverse reach, for a Romeo on a Joker (ruling 4)."""

OPENING = tuple(tuple(rt.dest for rt in _court_routes(h, "K")) for h in HOME)
"""The three squares next to each starting Queen (ruling 3)."""

LINE = tuple(
    tuple(j for j in range(SIZE) if j != i and (j % 7 == i % 7 or j // 7 == i // 7))
    for i in range(SIZE)
)
"""The 12 other squares of each square's row and column."""


def _square_key(i: int) -> tuple[int, int]:
    """Canonical order of squares in a swap: by column, then row (``b2 < b5 <
    c1``). With one letter and one digit this is the order of the names."""
    c, r = G.colrow(i)
    return c, r


def _swap_pair(a: int, b: int) -> tuple[int, int]:
    """The two squares of a swap in canonical order."""
    return (a, b) if _square_key(a) < _square_key(b) else (b, a)


SWAP_NAME = tuple(
    tuple(
        "swap {} {}".format(*(NAMES[x] for x in _swap_pair(i, j))) if i != j else "" for j in range(SIZE)
    )
    for i in range(SIZE)
)
"""``SWAP_NAME[i][j]``: the notation of swapping squares i and j (either order)."""
SWAP_MOVES = {SWAP_NAME[i][j]: _swap_pair(i, j) for i in range(SIZE) for j in range(SIZE) if i != j}
"""Every swap in notation (any two distinct squares) → its squares, in order."""
PARTNERS = tuple(
    tuple((p, SWAP_NAME[j][p]) for p in LINE[j] if p not in HOME) for j in range(SIZE)
)
"""For a Joker on each square: the squares it could swap with (Queens'
squares excluded, ruling 4) and the move's notation."""
STEP_TOKEN = tuple(tuple(f"{NAMES[a]}-{NAMES[b]}" for b in range(SIZE)) for a in range(SIZE))
"""History token of a Romeo move from square a to square b (``"a7-a6"``)."""
SWAP_TOKEN = tuple(
    tuple("{}<>{}".format(*(NAMES[x] for x in _swap_pair(i, j))) for j in range(SIZE))
    for i in range(SIZE)
)
"""History token of a swap (``"b2<>b5"``)."""

_SWAP_RE = re.compile(r"^swap ([a-g][1-7]) ([a-g][1-7])$")



def romeo_steps(cells: tuple[str, ...], sq: int, seat: int, other: int) -> list[int]:
    """The squares (indices) a Romeo of ``seat`` (0 Red, 1 Black) standing on
    ``sq`` may move to on the layout ``cells``, with the opponent's Romeo on
    ``other`` (-1: left out of account): RULINGS.md, Romeo and Juliet, rules
    3 and 4. From its starting Queen, a king-step to a neighbour (rule 3);
    from a numeral, exactly n squares along its column (red) or row (black),
    wrapping at the edges; from a King a step, from a Jack a knight's move,
    never over an edge; from a Joker, to every card whose own rule from its
    square would land on the Joker. The opponent's Romeo may be on no square
    of the path, and a Romeo never lands on its own starting Queen. In move
    order (the order of :attr:`RomeoState.moves`)."""
    if sq == HOME[seat]:
        return [d for d in OPENING[seat] if d != other]
    tok = cells[sq]
    if tok[0] == "7":  # a Joker: reverse reach (Queens never reach it)
        out = []
        for c, _, toks in REACH[sq]:
            blk = toks.get(cells[c])
            if blk is not None and other not in blk:
                out.append(c)
        return out
    home = HOME[seat]
    return [d for d, blk, _ in FAST[sq][tok] if other not in blk and d != home]


# ---------------------------------------------------------------------------------
# Position keys (threefold repetition)
# ---------------------------------------------------------------------------------

_META_BITS = 26
CODE = {c: i + 1 for i, c in enumerate(FULL_DECK)} | {j: 53 for j in JOKERS}
"""6-bit code of each token in a position key; every Joker has the same code."""
POW = tuple(1 << (6 * i + _META_BITS) for i in range(SIZE))
DIFF = tuple(tuple(POW[a] - POW[b] for b in range(SIZE)) for a in range(SIZE))


BIT = tuple(1 << i for i in range(SIZE))
LINE_MASK = tuple(sum(BIT[p] for p in LINE[i]) for i in range(SIZE))
LOCK_MASK: dict[tuple[int, ...], int] = {(): 0} | {
    (a, b): BIT[a] | BIT[b] for a in range(SIZE) for b in range(SIZE) if a != b
}
LOCK_META: dict[tuple[int, ...], int] = {(): 0} | {
    (a, b): (a + 1) << 13 | (b + 1) << 19 for a in range(SIZE) for b in range(SIZE) if a != b
}
_BLOOM_SIZE = 2039  # a prime, so that every bit of the hash counts
"""A Bloom filter (an int of this many bits) over the keys seen lets most
turns skip counting them."""
_SWAPS: tuple[dict[int, tuple[str, ...]], ...] = tuple({} for _ in range(SIZE))
"""Memo: for a Joker's square and the blocked squares of its lines (as bits),
its legal swaps. At most 4,096 entries per square; in practice a few dozen."""


def _cell_key(cells: tuple[str, ...]) -> int:
    """The layout part of a position key (an exact encoding, no hashing)."""
    return sum(CODE[t] * POW[i] for i, t in enumerate(cells))


def _meta(romeos: tuple[int, int], turn: int, lock: tuple[int, ...]) -> int:
    """The rest of a position key: both Romeos, who is to move, the lock."""
    return romeos[0] | romeos[1] << 6 | turn << 12 | LOCK_META[lock]


# ---------------------------------------------------------------------------------
# The state
# ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class RomeoState:
    """A Romeo and Juliet position.

    ``cells``: 49 tokens row by row from ``a1``: a face-up card (``"9H"``) or
    a Joker, i.e. a face-down Seven (``"7s"``). ``romeos``: the squares (0–48)
    of Red's and Black's Romeos. ``turn``: 0 for Red to move, 1 for Black.
    ``lock``: the two squares of the most recent swap in canonical order (their
    cards are locked), or ``()``. ``turns``: turns played so far (passes
    included). ``past``: the turns played, oldest first, as history tokens
    (``"a7-a6"`` a Romeo move, ``"b2<>b5"`` a swap, ``"pass"``); it may be
    shorter than ``turns`` in a constructed position. ``seen``: the position
    key of the position before each turn of ``past`` and of this position,
    oldest first (for the repetition rule). ``end``: ``""`` while in play,
    else ``"won"``, ``"repetition"`` or ``"limit"``.

    ``jokers`` (the Joker squares, ascending), ``joker_mask`` (the same as
    bits), ``cell_key`` (the layout part of the position key) and ``bloom``
    (a filter over ``seen``) are derived and kept only for speed: build states
    with :meth:`RomeoAndJuliet.deal`, ``apply`` or ``from_text``.
    """

    cells: tuple[str, ...]
    romeos: tuple[int, int]
    turn: int
    lock: tuple[int, ...]
    turns: int
    past: tuple[str, ...]
    seen: tuple[int, ...]
    end: str = ""
    jokers: tuple[int, ...] = field(default=(), compare=False, repr=False)
    cell_key: int = field(default=0, compare=False, repr=False)
    bloom: int = field(default=0, compare=False, repr=False)
    joker_mask: int = field(default=0, compare=False, repr=False)

    @property
    def mover(self) -> str:
        """The seat whose turn it is (even once the game is over)."""
        return SEATS[self.turn]

    @property
    def opened(self) -> tuple[bool, bool]:
        """Whether each Romeo has made its first step: a Romeo that has left
        its starting Queen can never land on it again (ruling 4)."""
        return self.romeos[0] != HOME[0], self.romeos[1] != HOME[1]

    @property
    def key(self) -> int:
        """This position's key: equal keys mean the same position (exact)."""
        return self.seen[-1]

    def _legal(self) -> tuple[str, ...]:
        """The mover's legal actions: Romeo moves first (destination squares),
        then swaps; ``("pass",)`` if there are none; ``()`` once the game is
        over. Rulings 3–5."""
        if self.end:
            return ()
        t = self.turn
        r = self.romeos[t]
        o = self.romeos[1 - t]
        out = [NAMES[d] for d in romeo_steps(self.cells, r, t, o)]
        if r == HOME[t]:  # ruling 3: no swap before the opening king-step
            return tuple(out) if out else (PASS,)
        # Swaps: a Joker not under a Romeo nor locked, with a partner in its
        # line that is no Queen, Joker, Romeo's card or locked card.
        fixed = BIT[r] | BIT[o] | LOCK_MASK[self.lock]
        blocked = fixed | self.joker_mask
        for j in self.jokers:
            if not fixed >> j & 1:
                mask = blocked & LINE_MASK[j]
                swaps = _SWAPS[j].get(mask)
                if swaps is None:
                    swaps = _SWAPS[j][mask] = tuple(m for p, m in PARTNERS[j] if not mask >> p & 1)
                out += swaps
        return tuple(out) if out else (PASS,)

    moves = cached(_legal)
    """The mover's legal actions, worked out once (see ``_legal``)."""

_new_state = object.__new__


def _make(
    cells: tuple[str, ...],
    romeos: tuple[int, int],
    turn: int,
    lock: tuple[int, ...],
    turns: int,
    past: tuple[str, ...],
    seen: tuple[int, ...],
    jokers: tuple[int, ...],
    cell_key: int,
    bloom: int,
    token: str = "",
) -> RomeoState:
    """A state with ``token`` (the turn just played, if any) appended to
    ``past``, its key appended to ``seen`` and its ``end`` decided (ruling 5: a
    landing on Juliet wins; else a third occurrence, else the turn limit, is a
    draw). ``bloom`` is the filter of ``seen``; the others are the fields of
    :class:`RomeoState`."""
    key = cell_key | romeos[0] | romeos[1] << 6 | turn << 12 | LOCK_META[lock]  # _meta, inlined
    bit = 1 << hash(key) % _BLOOM_SIZE
    mover = 1 - turn
    if romeos[mover] == JULIET[mover]:
        end = "won"
    elif bloom & bit and seen.count(key) >= 2:
        end = "repetition"
    elif turns >= TURN_LIMIT:
        end = "limit"
    else:
        end = ""
    # Built without the frozen dataclass __init__ (four times slower); the
    # fields are exactly those of RomeoState.
    state = _new_state(RomeoState)
    fields = vars(state)
    fields.update(
        # Concatenation is four times faster than unpacking here.
        cells=cells, romeos=romeos, turn=turn, lock=lock, turns=turns,
        past=past + (token,) if token else past,  # noqa: RUF005
        seen=seen + (key,),  # noqa: RUF005
        end=end, jokers=jokers, cell_key=cell_key, bloom=bloom | bit,
        joker_mask=BIT[jokers[0]] | BIT[jokers[1]] | BIT[jokers[2]],
    )
    # Every state that is played on needs its legal moves (apply checks them),
    # so work them out now.
    fields["moves"] = state._legal()
    return state


def arrange(cards: list[str]) -> tuple[str, ...]:
    """The layout after the deal's Queen exchanges (ruling 1): ``cards`` are 49
    tokens row by row; QS is exchanged with the card at ``a7``, then QH with
    the card at ``g1``. Returns a new tuple."""
    out = list(cards)
    for queen, target in (("QS", HOME[0]), ("QH", HOME[1])):
        i = out.index(queen)
        out[i], out[target] = out[target], out[i]
    return tuple(out)


# ---------------------------------------------------------------------------------
# The game
# ---------------------------------------------------------------------------------


class RomeoAndJuliet(Game[RomeoState]):
    """Romeo and Juliet: Red against Black. RULINGS.md, Romeo and Juliet.

    A match is one game (the default :meth:`Game.match_over`).
    """

    info = GameInfo("romeo-and-juliet", "Romeo and Juliet", seats=SEATS,
                    layout=Layout("grid", G.width, G.height), board="romeo-and-juliet",
                    deal_noun="game")

    def starter(self, options: Mapping[str, Any], match_seed: int, deal_index: int) -> str:
        """Red moves first in every game (ruling 2)."""
        return "red"

    def deal(self, seed: int, options: Mapping[str, Any], starter: str) -> RomeoState:
        """The opening layout from ``seed`` (ruling 1): QC, QD and one Seven
        (drawn from the seed) removed; the other 49 cards shuffled and dealt
        row by row from ``a1``; the three remaining Sevens face down as Jokers;
        QS exchanged with the card at ``a7``, then QH with the card at ``g1``.
        Both Romeos on their Queens; ``starter`` (Red) to move."""
        sevens = [c for c in DECK_50 if c[0] == "7"]
        removed = random.Random(derive_seed(seed, "seven")).choice(sevens)
        cards = [c.lower() if c[0] == "7" else c for c in shuffled(DECK_50, seed) if c != removed]
        cells = arrange(cards)
        jokers = tuple(i for i, t in enumerate(cells) if t[0] == "7")
        return _make(cells, HOME, SEATS.index(starter), (), 0, (), (), jokers, _cell_key(cells), 0)

    def to_move(self, state: RomeoState) -> tuple[str, ...]:
        return () if state.end else (SEATS[state.turn],)

    def legal_moves(self, state: RomeoState, seat: str) -> tuple[str, ...]:
        if state.end or seat != SEATS[state.turn]:
            return ()
        return state.moves

    def apply(self, state: RomeoState, seat: str, move: str) -> RomeoState:
        """Raises :class:`MalformedMove` for text outside the notation and
        :class:`IllegalMove` for a legal-looking action that is not legal now
        (wrong seat, game over, or against rulings 3–5)."""
        if state.end or seat != SEATS[state.turn] or move not in state.moves:
            _refuse(state, seat, move)
        t = state.turn
        past = state.past
        if move == PASS:
            return _make(state.cells, state.romeos, 1 - t, state.lock, state.turns + 1,
                         past, state.seen, state.jokers, state.cell_key, state.bloom, PASS)
        pair = SWAP_MOVES.get(move)
        if pair is None:
            dest = INDEX[move]
            r = state.romeos[t]
            romeos = (dest, state.romeos[1]) if t == 0 else (state.romeos[0], dest)
            return _make(state.cells, romeos, 1 - t, state.lock, state.turns + 1,
                         past, state.seen, state.jokers, state.cell_key, state.bloom,
                         STEP_TOKEN[r][dest])
        a, b = pair
        cells = list(state.cells)
        ca, cb = cells[a], cells[b]
        cells[a], cells[b] = cb, ca
        j, p = (a, b) if ca[0] == "7" else (b, a)
        x, y, z = state.jokers
        if x == j:
            x = p
        elif y == j:
            y = p
        else:
            z = p
        if x > y:
            x, y = y, x
        if y > z:
            y, z = z, y
            if x > y:
                x, y = y, x
        return _make(tuple(cells), state.romeos, 1 - t, pair, state.turns + 1,
                     past, state.seen, (x, y, z),
                     state.cell_key + (CODE[cb] - CODE[ca]) * DIFF[a][b], state.bloom,
                     SWAP_TOKEN[a][b])

    def move_structure(self, state: RomeoState, seat: str, move: str) -> dict[str, JSON]:
        """A Romeo move ``{"kind": "move", "from": <the Romeo's square>, "to":
        "e3"}``; a swap ``{"kind": "swap", "a": "b2", "b": "b5", "joker":
        "b2"}`` (``a`` and ``b`` in the notation's order, ``joker`` the one of
        them that holds the Joker); or ``{"kind": "pass"}``."""
        if move == PASS:
            return {"move": move, "kind": "pass"}
        pair = SWAP_MOVES.get(move)
        if pair is None:
            return {"move": move, "kind": "move", "from": NAMES[state.romeos[state.turn]], "to": move}
        a, b = pair
        joker = a if state.cells[a] in JOKERS else b
        return {"move": move, "kind": "swap", "a": NAMES[a], "b": NAMES[b], "joker": NAMES[joker]}

    def describe(self, state: RomeoState, seat: str, move: str) -> str:
        """A sentence for ``move`` by ``seat`` on ``state`` (before it is
        applied), e.g. ``"Red from 9♥: 9 up (wraps), lands on 4♣"``. A move
        that is not legal is described as the move text itself."""
        if seat != state.mover or move not in state.moves:
            return move
        return _explain(state.cells, state.romeos, state.turn, _action(state, move))

    # ---- results --------------------------------------------------------------------
    def outcome(self, state: RomeoState) -> Outcome | None:
        """Ruling 5. A win scores 1 point ("won the game") for the winner and 0
        for the loser; a draw (threefold repetition or 300 turns) scores 0 for
        both, with no winner."""
        if not state.end:
            return None
        if state.end == "won":
            w = 1 - state.turn
            lines = (ScoreLine("Game", "won the game", 1), ScoreLine("Game", "lost the game", 0))
            scores = tuple(
                SideScore(s, (s,), 1 if i == w else 0, (lines[0] if i == w else lines[1],))
                for i, s in enumerate(SEATS)
            )
            reason = f"{SEAT_NAME[w]}'s Romeo reached Juliet at {NAMES[JULIET[w]]}"
            return Outcome((SEATS[w],), scores, reason)
        draw = ScoreLine("Game", "drew the game", 0)
        scores = tuple(SideScore(s, (s,), 0, (draw,)) for s in SEATS)
        if state.end == "repetition":
            reason = "The same position occurred for the third time: a draw"
        else:
            reason = f"{TURN_LIMIT} turns were played without a winner: a draw"
        return Outcome((), scores, reason)

    # ---- views and text -------------------------------------------------------------
    def view(self, state: RomeoState, seat: str | None) -> JSON:
        """The whole position (nothing is hidden: the Jokers are public), the
        same for every seat and spectators. Fields: ``width``, ``height``,
        ``cells`` (49 tokens row by row, Jokers as lower-case ``7x``),
        ``jokers`` (their squares), ``romeos``/``juliets``/``homes`` (seat →
        square), ``turn`` (seat to move, ``None`` once over), ``locked`` (the
        two squares of the most recent swap, or ``[]``), ``last`` (the last
        action, or ``None``), ``opened`` (seat → bool), ``turns``,
        ``turn_limit``, ``repetitions`` (occurrences of this position so far),
        ``over`` and ``explain`` (a sentence on the last action, ``""`` before
        the first). See ``docs/notation/romeo-and-juliet.md``."""
        last: dict[str, Any] | None = None
        explain = ""
        if state.past:
            act = _parse_token(state.past[-1])
            prev = 1 - state.turn
            last = {"seat": SEATS[prev], "kind": act[0]}
            if act[0] == "swap":
                last["squares"] = [NAMES[act[1]], NAMES[act[2]]]
                cells = list(state.cells)
                cells[act[1]], cells[act[2]] = cells[act[2]], cells[act[1]]
                before = tuple(cells)
            else:
                before = state.cells
            romeos = list(state.romeos)
            if act[0] == "move":
                romeos[prev] = act[1]
                route = _route_of(state.cells, act[1], act[2], prev)
                last |= {"from": NAMES[act[1]], "to": NAMES[act[2]],
                         "path": [NAMES[i] for i in route.path], "wraps": route.wraps}
            explain = _explain(before, (romeos[0], romeos[1]), prev, act)
        return {
            "width": 7,
            "height": 7,
            "cells": list(state.cells),
            "jokers": [NAMES[j] for j in state.jokers],
            "romeos": {s: NAMES[state.romeos[i]] for i, s in enumerate(SEATS)},
            "juliets": {s: NAMES[JULIET[i]] for i, s in enumerate(SEATS)},
            "homes": {s: NAMES[HOME[i]] for i, s in enumerate(SEATS)},
            "turn": None if state.end else state.mover,
            "locked": [NAMES[i] for i in state.lock],
            "last": last,
            "opened": dict(zip(SEATS, state.opened, strict=True)),
            "turns": state.turns,
            "turn_limit": TURN_LIMIT,
            "repetitions": state.seen.count(state.key),
            "over": bool(state.end),
            "explain": explain,
        }

    def to_text(self, state: RomeoState) -> str:
        """Header ``turn``, ``red``, ``black`` (the Romeos' squares), ``lock``
        (two squares or ``-``), ``turns`` and ``history`` (the turns played,
        oldest first, or ``-``), then the 7 rows of tokens."""
        header = [
            ("turn", state.mover),
            ("red", NAMES[state.romeos[0]]),
            ("black", NAMES[state.romeos[1]]),
            ("lock", " ".join(NAMES[i] for i in state.lock) or "-"),
            ("turns", str(state.turns)),
            ("history", " ".join(state.past) or "-"),
        ]
        return format_position(self.info.id, header, G.format_rows(state.cells))

    def from_text(self, text: str) -> RomeoState:
        """Raises ``ValueError`` naming the problem if ``text`` is not a valid
        position: the layout must hold the 49 cards of a deal (no QC, QD or
        face-up Seven; exactly three Jokers; QS at ``a7``, QH at ``g1``), the
        Romeos distinct and not on a Queen unless on their own starting Queen
        or (game won) their Juliet, the lock a possible swap, and the history
        consistent with the layout when undone turn by turn."""
        header, lines = parse_position(text, self.info.id)
        cells = tuple(G.parse_rows(lines))
        for tok in cells:
            if tok not in JOKERS and (not is_card(tok) or tok[0] == "7"):
                raise ValueError(f"bad token {tok!r}: a face-up card like 9H or a Joker like 7s")
            if tok in ("QC", "QD"):
                raise ValueError(f"{tok} is removed at the deal")
        if len(set(cells)) != SIZE:
            raise ValueError("a card appears twice in the layout")
        jokers = tuple(i for i, t in enumerate(cells) if t in JOKERS)
        if len(jokers) != 3:
            raise ValueError(f"the layout needs exactly three Jokers, not {len(jokers)}")
        for sq, q in QUEEN_AT.items():
            if cells[sq] != q:
                raise ValueError(f"{q} must lie at {NAMES[sq]}")
        if header.get("turn") not in SEATS:
            raise ValueError("turn must be red or black")
        turn = SEATS.index(header["turn"])
        romeos = (_square(header.get("red", "")), _square(header.get("black", "")))
        if romeos[0] == romeos[1]:
            raise ValueError("the two Romeos cannot share a square")
        for i in (0, 1):
            r = romeos[i]
            if r in QUEEN_AT and r != HOME[i] and not (r == JULIET[i] and turn != i):
                raise ValueError(f"the {SEATS[i]} Romeo cannot stand on the Queen at {NAMES[r]}")
        lock = _parse_lock(header.get("lock", "-"), cells)
        try:
            turns = int(header.get("turns", ""))
        except ValueError:
            raise ValueError("turns must be a whole number") from None
        if not 0 <= turns <= TURN_LIMIT:
            raise ValueError(f"turns must be between 0 and {TURN_LIMIT}")
        hist = header.get("history", "-")
        past = tuple(hist.split()) if hist != "-" else ()
        if len(past) > turns:
            raise ValueError("the history is longer than the turns played")
        seen = _replay_back(cells, romeos, turn, lock, past)
        bloom = 0
        for k in seen:
            bloom |= 1 << hash(k) % _BLOOM_SIZE
        return _make(cells, romeos, turn, lock, turns, past, seen, jokers, _cell_key(cells), bloom)


# ---------------------------------------------------------------------------------
# Helpers: text, history, explanations, refusals
# ---------------------------------------------------------------------------------


def _square(name: str) -> int:
    if name not in INDEX:
        raise ValueError(f"bad square {name!r}")
    return INDEX[name]


def _swap_problem(cells: tuple[str, ...], a: int, b: int) -> str | None:
    """Why the cards at a and b could never be swapped (ignoring Romeos and
    the lock), or ``None``."""
    if a not in LINE[b]:
        return f"{NAMES[a]} and {NAMES[b]} are not in the same row or column"
    for i in (a, b):
        if cells[i][0] == "Q":
            return f"the {pretty(cells[i])} is a Queen and never swaps"
    ja, jb = cells[a] in JOKERS, cells[b] in JOKERS
    if ja and jb:
        return "a Joker never swaps with another Joker"
    if not ja and not jb:
        return f"a swap needs a Joker: neither {NAMES[a]} nor {NAMES[b]} holds one"
    return None


def _parse_lock(text: str, cells: tuple[str, ...]) -> tuple[int, ...]:
    if text == "-":
        return ()
    parts = text.split()
    if len(parts) != 2:
        raise ValueError("lock must be two squares or '-'")
    a, b = _square(parts[0]), _square(parts[1])
    if a == b or _swap_pair(a, b) != (a, b):
        raise ValueError("the lock's squares must be two squares in order (column, then row)")
    problem = _swap_problem(cells, a, b)
    if problem:
        raise ValueError(f"bad lock: {problem}")
    return (a, b)


_TOKEN_RE = re.compile(r"^([a-g][1-7])(-|<>)([a-g][1-7])$")


def _parse_token(tok: str) -> tuple[str, int, int]:
    """A history token as ``("move", from, to)``, ``("swap", a, b)`` or
    ``("pass", -1, -1)``. Raises ``ValueError`` for a bad token."""
    if tok == PASS:
        return ("pass", -1, -1)
    m = _TOKEN_RE.match(tok)
    if not m or m.group(1) == m.group(3):
        raise ValueError(f"bad history token {tok!r}: a7-a6, b2<>b5 or pass")
    a, b = INDEX[m.group(1)], INDEX[m.group(3)]
    if m.group(2) == "-":
        return ("move", a, b)
    if _swap_pair(a, b) != (a, b):
        raise ValueError(f"bad history token {tok!r}: a swap's squares go in order")
    return ("swap", a, b)


def _replay_back(
    cells: tuple[str, ...],
    romeos: tuple[int, int],
    turn: int,
    lock: tuple[int, ...],
    past: tuple[str, ...],
) -> tuple[int, ...]:
    """The keys of the positions before each turn of ``past``, oldest first,
    found by undoing the turns from the current position. The lock before a
    recorded swap is the previous recorded swap, or none if it is the first.
    Raises ``ValueError`` if a turn does not undo onto the layout."""
    acts = [_parse_token(t) for t in past]
    swaps = [(a, b) for kind, a, b in acts if kind == "swap"]
    if swaps and swaps[-1] != lock:
        raise ValueError("the lock must be the squares of the last swap in the history")
    cl = list(cells)
    rs = list(romeos)
    keys = []
    for n in range(len(acts) - 1, -1, -1):
        kind, a, b = acts[n]
        turn = 1 - turn
        if kind == "move":
            if rs[turn] != b:
                raise ValueError(f"history {past[n]}: the {SEATS[turn]} Romeo is not on {NAMES[b]}")
            rs[turn] = a
            if rs[0] == rs[1]:
                raise ValueError(f"history {past[n]}: the two Romeos would share a square")
        elif kind == "swap":
            cl[a], cl[b] = cl[b], cl[a]
            problem = _swap_problem(tuple(cl), a, b)
            if problem:
                raise ValueError(f"history {past[n]}: {problem}")
            swaps.pop()
            lock = swaps[-1] if swaps else ()
        keys.append(_cell_key(tuple(cl)) | _meta((rs[0], rs[1]), turn, lock))
    keys.reverse()
    counts: dict[int, int] = {}
    for k in keys:
        counts[k] = counts.get(k, 0) + 1
        if counts[k] >= 3:
            raise ValueError("the history repeats a position three times: the game would be over")
    return tuple(keys)


def _route_of(cells: tuple[str, ...], start: int, dest: int, seat: int) -> Route:
    """The route a Romeo of ``seat`` took from ``start`` to ``dest``: the
    opening king-step, the card's own route, or a Joker's jump."""
    if start == HOME[seat]:
        return next(rt for rt in _court_routes(start, "K") if rt.dest == dest)
    tok = cells[start]
    if tok in JOKERS:
        return Route(start, dest, (start, dest), frozenset((dest,)), "from a Joker", False)
    return next(rt for rt in ROUTES[start][tok] if rt.dest == dest)


def _card_words(tok: str) -> str:
    return "a Joker" if tok in JOKERS else pretty(tok)


def _action(state: RomeoState, move: str) -> tuple[str, int, int]:
    """A legal ``move`` of the mover as ``(kind, a, b)`` like :func:`_parse_token`."""
    if move == PASS:
        return ("pass", -1, -1)
    if move in SWAP_MOVES:
        return ("swap", *SWAP_MOVES[move])
    return ("move", state.romeos[state.turn], INDEX[move])


def _explain(
    cells: tuple[str, ...], romeos: tuple[int, int], seat: int, act: tuple[str, int, int]
) -> str:
    """The sentence for ``act`` by ``seat`` on the position before it
    (``cells``, ``romeos``): "Red from 9♥: 9 up (wraps), lands on 4♣"."""
    who = SEAT_NAME[seat]
    kind, a, b = act
    if kind == "pass":
        return f"{who} has no legal action and passes"
    if kind == "swap":
        j, p = (a, b) if cells[a] in JOKERS else (b, a)
        return f"{who} swaps the Joker at {NAMES[j]} with the {pretty(cells[p])} at {NAMES[p]}"
    lands = f"lands on {_card_words(cells[b])}"
    if b == JULIET[seat]:
        lands += " and reaches Juliet"
    src = cells[a]
    if a == HOME[seat]:
        rt = _route_of(cells, a, b, seat)
        return f"{who} from {pretty(src)}: {rt.label.replace('one step', 'first step')}, {lands}"
    if src in JOKERS:
        back = next(rt for rt in ROUTES[b][cells[b]] if rt.dest == a)
        how = back.label.removeprefix("a ")
        return f"{who} from a Joker: reverse of the {pretty(cells[b])}'s {how}, {lands}"
    return f"{who} from {pretty(src)}: {_route_of(cells, a, b, seat).label}, {lands}"


def _refuse(state: RomeoState, seat: str, move: str) -> None:
    """Raise the right error for a move that is not legal: MalformedMove if it
    is not notation, else IllegalMove with the reason."""
    if move != PASS and move not in INDEX and move not in SWAP_MOVES:
        m = _SWAP_RE.match(move)
        if m and m.group(1) == m.group(2):
            raise MalformedMove("a swap needs two different squares")
        if m:
            raise MalformedMove(
                f"write a swap with its squares in order, column then row: "
                f"'swap {m.group(2)} {m.group(1)}'"
            )
        raise MalformedMove(
            f"{move[:40]!r} is not a Romeo and Juliet move: give the square your Romeo moves to"
            " (a1 to g7), a swap such as 'swap b2 b5', or 'pass'"
        )
    if state.end:
        raise IllegalMove("the game is over")
    if seat != state.mover:
        if seat not in SEATS:
            raise IllegalMove(f"{seat!r} is not a seat: Romeo and Juliet is played by red and black")
        raise IllegalMove(f"it is {state.mover}'s turn, not {seat}'s")
    raise IllegalMove(_why_illegal(state, move))


def _why_illegal(state: RomeoState, move: str) -> str:
    """A sentence for the player on why ``move`` (notation) is not legal now."""
    t = state.turn
    r, o, home = state.romeos[t], state.romeos[1 - t], HOME[t]
    cells = state.cells
    other = f"the {SEAT_NAME[1 - t]} Romeo"
    if move == PASS:
        return "you may pass only when you have no other legal action"
    if move in SWAP_MOVES:
        a, b = SWAP_MOVES[move]
        if r == home:
            return "no swap before your Romeo has made its first step off your Queen"
        problem = _swap_problem(cells, a, b)
        if problem:
            return problem
        for i in (a, b):
            if i in state.romeos:
                who = "your Romeo" if i == r else other
                return f"{who} stands on {NAMES[i]}: a card with a Romeo on it never swaps"
        for i in (a, b):
            if i in state.lock:
                return (f"the {'Joker' if cells[i] in JOKERS else pretty(cells[i])} at {NAMES[i]}"
                        " was in the most recent swap and stays locked until another swap")
        return "that swap is not allowed now"  # pragma: no cover - every case is named above
    d = INDEX[move]
    if d == r:
        return f"your Romeo is already on {move}"
    if d == o:
        return f"{other} is on {move}: you can never land on it"
    if d == home:
        return f"you can never land again on your starting Queen, the {pretty(cells[home])} at {move}"
    if r == home:
        steps = ", ".join(NAMES[i] for i in OPENING[t])
        return f"your first move must be a king-step off your Queen: to {steps}"
    tok = cells[r]
    if tok in JOKERS:
        what = cells[d]
        if what in JOKERS or what[0] == "Q":
            kind = "Joker" if what in JOKERS else "Queen"
            return f"from a Joker you can reach a King, Jack or numeral only, and {move} holds a {kind}"
        for rt in ROUTES[d][what]:
            if rt.dest == r and o in rt.blockers | {d}:
                return f"{other} blocks the {pretty(what)}'s path to your Joker ({rt.label})"
        return (f"from a Joker your Romeo goes only to a card whose own move reaches the Joker,"
                f" and the {pretty(what)} at {move} does not")
    rank = tok[0]
    for rt in ROUTES[r][tok]:
        if rt.dest == d and rank not in "KJ":
            word = rt.label.split()[1]
            return f"{other} blocks the {pretty(tok)}'s path {word}"
    if rank == "K":
        return f"from the {pretty(tok)} your Romeo steps to a square next to it, never over an edge"
    if rank == "J":
        return f"from the {pretty(tok)} your Romeo makes a knight's move, never over an edge"
    n = pip_value(tok)
    ends = " or ".join(NAMES[rt.dest] for rt in ROUTES[r][tok])
    way = "up or down its column" if is_red(tok) else "left or right along its row"
    return f"from the {pretty(tok)} your Romeo moves exactly {n} squares {way} (to {ends})"
