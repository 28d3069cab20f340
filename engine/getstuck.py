"""Get Stuck (two players, Red and Black) and Get Stuck for Four (partnerships).

RULINGS.md, Get Stuck and Get Stuck for Four. The layout is 7×7 with the gap
at ``d4``; a move is the square of the card to move into the gap (``c4``);
a stuck seat in the four-player game plays ``pass``.
"""

from __future__ import annotations

import random
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from engine.base import (
    JSON,
    Game,
    GameInfo,
    IllegalMove,
    Layout,
    MalformedMove,
    Option,
    Outcome,
    ScoreLine,
    SideScore,
)
from engine.cards import (
    FULL_DECK,
    GRID_7X7,
    SUIT_NAME,
    derive_seed,
    is_card,
    pip_value,
    pretty,
    shuffled,
)
from engine.lazy import cached
from engine.notation import format_position, parse_position

G = GRID_7X7
NAMES = G.names
INDEX = G.index
CENTRE = INDEX["d4"]
GAP = ".."
DECK_48 = tuple(c for c in FULL_DECK if c[0] != "T")

_ORTHO = ((0, -1), (1, 0), (0, 1), (-1, 0))
_DIAG = ((1, -1), (1, 1), (-1, 1), (-1, -1))
ORTHO_RAYS = tuple(tuple(G.ray(i, dc, dr) for dc, dr in _ORTHO) for i in range(G.size))
DIAG_RAYS = tuple(tuple(G.ray(i, dc, dr) for dc, dr in _DIAG) for i in range(G.size))

TWO_SEATS = ("red", "black")
FOUR_SEATS = ("N", "E", "S", "W")
SEAT_SUITS = {"red": "HD", "black": "SC", "N": "S", "E": "H", "S": "C", "W": "D"}
FOUR_SIDES = (("N-S", ("N", "S")), ("E-W", ("E", "W")))
SEAT_TITLE = {"red": "Red", "black": "Black", "N": "North", "E": "East", "S": "South", "W": "West"}
SIDE_TITLE = {"N-S": "North–South", "E-W": "East–West", "red": "Red", "black": "Black"}
PASS = "pass"

TOKEN: dict[str, str] = {GAP: GAP} | {c: c for c in DECK_48} | {
    c.lower(): sys.intern(c.lower()) for c in DECK_48
}
"""Every layout token (face up, face down, the gap) → the one string object
all states share for it, so that a layout holds no strings of its own."""
FACE_DOWN: dict[str, str] = {c: TOKEN[c.lower()] for c in DECK_48}
"""A face-up card → its face-down token."""

_new_state = object.__new__


def _state(
    cells: tuple[str, ...], gap: int, turn: int, indicators: tuple[bool, ...], last: int
) -> GetStuckState:
    """A :class:`GetStuckState` built without the frozen dataclass
    ``__init__`` (several times slower); the fields are exactly its fields."""
    state = _new_state(GetStuckState)
    state.__dict__.update(cells=cells, gap=gap, turn=turn, indicators=indicators, last=last)
    return state


@dataclass(frozen=True)
class GetStuckState:
    """A Get Stuck position.

    ``cells``: 49 tokens row by row from ``a1`` (``"QH"`` face up, ``"qh"``
    face down, ``".."`` the gap). ``gap``: index of the gap. ``turn``: index
    in the seat order of the seat to move. ``indicators``: four-player only,
    one bool per seat N E S W, True when the indicator Ten is face up (empty in
    the two-player game). ``last``: index of the square the last moved card
    went to, or -1 before the first move.
    """

    cells: tuple[str, ...]
    gap: int
    turn: int
    indicators: tuple[bool, ...] = ()
    last: int = -1

    @property
    def four(self) -> bool:
        """True for Get Stuck for Four."""
        return bool(self.indicators)

    @property
    def seats(self) -> tuple[str, ...]:
        """The seat order of this form of the game."""
        return FOUR_SEATS if self.indicators else TWO_SEATS

    @cached
    def mover(self) -> str:
        """The seat whose turn it is (even once the deal is over)."""
        return (FOUR_SEATS if self.indicators else TWO_SEATS)[self.turn]

    @cached
    def moves(self) -> tuple[str, ...]:
        """The mover's legal moves (``pass`` when stuck in the four-player game;
        empty when stuck in the two-player game). Rulings 2–4 (two players)
        and 3–4 (four)."""
        suits = SEAT_SUITS[self.mover]
        if self.indicators:
            found = _reach(self.cells, ORTHO_RAYS[self.gap] + DIAG_RAYS[self.gap], suits)
            return tuple(NAMES[i] for i in found) if found else (PASS,)
        found = _reach(self.cells, ORTHO_RAYS[self.gap], suits)
        if not found:
            found = _reach(self.cells, DIAG_RAYS[self.gap], suits)
        return tuple(NAMES[i] for i in found)

    @cached
    def diagonal(self) -> bool:
        """Two players: True when the mover may (so must) move diagonally."""
        return not self.indicators and bool(self.moves) and not _reach(
            self.cells, ORTHO_RAYS[self.gap], SEAT_SUITS[self.mover]
        )

    @cached
    def loser(self) -> str | None:
        """The losing side once the deal is over, else ``None``: the stuck
        player (two players, ruling 5) or the partnership with both indicators
        face down (four players, ruling 5)."""
        ind = self.indicators
        if ind:
            if not ind[0] and not ind[2]:
                return "N-S"
            if not ind[1] and not ind[3]:
                return "E-W"
            return None
        return None if self.moves else self.mover


_OTHER, _NUMERAL, _COURT, _DOWN = 0, 1, 2, 3
_KIND: dict[str, dict[str, int]] = {
    suits: {GAP: _OTHER} | {
        c: (_COURT if c[0] in "JQK" else _NUMERAL) if c[1] in suits else _OTHER for c in DECK_48
    } | {FACE_DOWN[c]: _DOWN for c in DECK_48}
    for suits in set(SEAT_SUITS.values())
}
"""For a seat's suits: each layout token → what it is to that seat (a card
of its own, numeral or court; another face-up card; a face-down card)."""


def _reach(cells: tuple[str, ...], rays: tuple[tuple[int, ...], ...], suits: str) -> list[int]:
    """Squares along ``rays`` holding a face-up card of ``suits`` that may move
    to the rays' origin: a numeral may not pass a face-down card, a court may
    (ruling 3)."""
    kind = _KIND[suits]
    out = []
    for ray in rays:
        blocked = False
        for i in ray:
            k = kind[cells[i]]
            if k:
                if k == _DOWN:
                    blocked = True
                elif k == _COURT or not blocked:
                    out.append(i)
    return out


def _with(ind: tuple[bool, ...], seat: int, up: bool) -> tuple[bool, ...]:
    return tuple(up if k == seat else v for k, v in enumerate(ind))


_SET: dict[tuple[bool, ...], tuple[tuple[tuple[bool, ...], tuple[bool, ...]], ...]] = {
    ind: tuple(
        (_with(ind, seat, False), _with(ind, seat, True)) for seat in range(4)
    )
    for ind in ((a, b, c, d) for a in (True, False) for b in (True, False)
                for c in (True, False) for d in (True, False))
}
"""``_SET[indicators][seat][up]``: the four indicators with that seat's
turned face up (``up``) or face down; the tuples are shared by all states."""


class _GetStuckBase(Game[GetStuckState]):
    four = False

    def deal(self, seed: int, options: Mapping[str, Any], starter: str) -> GetStuckState:
        """48 cards (Tens removed) shuffled by ``seed`` and dealt face up with
        the gap at ``d4``; ``starter`` moves first (ruling 1)."""
        cards = shuffled(DECK_48, seed)
        cards.insert(CENTRE, GAP)
        seats = self.seats(options)
        return GetStuckState(
            tuple(cards),
            CENTRE,
            seats.index(starter),
            (True,) * 4 if self.four else (),
        )

    def to_move(self, state: GetStuckState) -> tuple[str, ...]:
        return () if state.loser else (state.mover,)

    def legal_moves(self, state: GetStuckState, seat: str) -> tuple[str, ...]:
        if state.loser or seat != state.mover:
            return ()
        return state.moves

    def apply(self, state: GetStuckState, seat: str, move: str) -> GetStuckState:
        if move != PASS and move not in INDEX:
            raise MalformedMove(
                f"{move[:40]!r} is not a Get Stuck move: give the square of the card to"
                " move, a1 to g7" + (", or 'pass'" if self.four else "")
            )
        if state.loser:
            raise IllegalMove("the deal is over")
        if seat != state.mover:
            raise IllegalMove(f"it is {state.mover}'s turn, not {seat}'s")
        if move not in state.moves:
            raise IllegalMove(_why_illegal(state, move))
        ind = state.indicators
        turn = state.turn
        if move == PASS:
            return _state(state.cells, state.gap, (turn + 1) % 4, _SET[ind][turn][0], state.last)
        i = INDEX[move]
        cells = list(state.cells)
        cells[state.gap] = FACE_DOWN[cells[i]]
        cells[i] = GAP
        if ind:
            if not ind[turn]:
                ind = _SET[ind][turn][1]
            return _state(tuple(cells), i, (turn + 1) % 4, ind, state.gap)
        return _state(tuple(cells), i, 1 - turn, ind, state.gap)

    def move_structure(self, state: GetStuckState, seat: str, move: str) -> dict[str, JSON]:
        """A card moved into the gap: ``{"kind": "move", "from": "c4", "to":
        "d4"}`` (``from`` is the move itself, ``to`` the gap); or ``{"kind":
        "pass"}``."""
        if move == PASS:
            return {"move": move, "kind": "pass"}
        return {"move": move, "kind": "move", "from": move, "to": NAMES[state.gap]}

    def describe(self, state: GetStuckState, seat: str, move: str) -> str:
        if move == PASS:
            who = SEAT_TITLE.get(seat, seat)
            if state.indicators and seat in FOUR_SEATS and not state.indicators[FOUR_SEATS.index(seat)]:
                return f"{who} is still stuck and passes"  # ruling 4
            return f"{who} is stuck: indicator face down"  # short: the line above the board
        i = INDEX.get(move)
        if i is None:
            return move
        who = SEAT_TITLE.get(seat, seat)
        return f"{who} moves the {pretty(state.cells[i])} from {move} to {NAMES[state.gap]}"

    # ---- results --------------------------------------------------------------------
    def outcome(self, state: GetStuckState) -> Outcome | None:
        """Rulings 5–6 (two players) and 5 (four): face-up numerals at face
        value, face-up courts +10 each for the winners and −10 for the losers,
        and in the four-player game +50 to winners with both indicators up."""
        loser = state.loser
        if loser is None:
            return None
        sides = self.sides({})
        winner = next(s for s, _ in sides if s != loser)
        scores = []
        for side, seats in sides:
            won = side == winner
            lines = []
            for seat in seats:
                suits = SEAT_SUITS[seat]
                up = [c for c in state.cells if c[1] in suits]
                nums = [c for c in up if c[0] not in "JQK"]
                courts = len(up) - len(nums)
                label = SUIT_NAME[suits].capitalize() if len(suits) == 1 else seat.capitalize()
                lines.append(ScoreLine(
                    f"{label} numerals", f"{len(nums)} face-up numerals",
                    sum(pip_value(c) for c in nums),
                ))
                lines.append(ScoreLine(
                    f"{label} courts",
                    f"{courts} face-up court{'s' if courts != 1 else ''} × {'+10' if won else '−10'}",
                    courts * (10 if won else -10),
                ))
            if self.four and won:
                both_up = all(state.indicators[FOUR_SEATS.index(s)] for s in seats)
                lines.append(ScoreLine(
                    "Bonus",
                    "both indicators face up" if both_up else "none (an indicator is face down)",
                    50 if both_up else 0,
                ))
            scores.append(SideScore(side, seats, sum(ln.points for ln in lines), tuple(lines)))
        if self.four:
            reason = (f"{SIDE_TITLE[loser]} are both stuck, with both indicators face down:"
                      f" {SIDE_TITLE[winner]} win the deal.")
        else:
            stuck_name, last_name = SIDE_TITLE[loser], SIDE_TITLE[winner]
            reason = f"{stuck_name} is stuck, so {last_name} moved last and wins the deal."
            if not any(c.islower() for c in state.cells):
                reason = f"{stuck_name} is stuck on the first move, so {last_name} wins the deal."
        return Outcome((winner,), tuple(scores), reason)

    # ---- views and text -------------------------------------------------------------
    def view(self, state: GetStuckState, seat: str | None) -> JSON:
        """The whole layout (Get Stuck hides nothing; face-down cards are
        public since everyone saw them face up)."""
        v: dict[str, Any] = {
            "width": 7,
            "height": 7,
            "cells": list(state.cells),
            "gap": NAMES[state.gap],
            "turn": state.mover,
            "last": None if state.last < 0 else {"from": NAMES[state.gap], "to": NAMES[state.last]},
            "suits": {s: SEAT_SUITS[s] for s in state.seats},
        }
        if self.four:
            v["indicators"] = dict(zip(FOUR_SEATS, state.indicators, strict=True))
        else:
            v["diagonal"] = state.diagonal
        return v

    def to_text(self, state: GetStuckState) -> str:
        header = [("turn", state.mover), ("last", NAMES[state.last] if state.last >= 0 else "-")]
        if self.four:
            header.append(("indicators", " ".join(
                f"{s}{'+' if up else '-'}" for s, up in zip(FOUR_SEATS, state.indicators, strict=True)
            )))
        return format_position(self.info.id, header, G.format_rows(state.cells))

    def from_text(self, text: str) -> GetStuckState:
        header, lines = parse_position(text, self.info.id)
        cells = G.parse_rows(lines)
        for tok in cells:
            if tok != GAP and not is_card(tok.upper()):
                raise ValueError(f"bad card token {tok!r}")
        if cells.count(GAP) != 1:
            raise ValueError("a Get Stuck layout has exactly one gap '..'")
        if sorted(t.upper() for t in cells if t != GAP) != sorted(DECK_48):
            raise ValueError("a Get Stuck layout holds the 48 cards without Tens, each once")
        for tok in cells:
            if tok not in TOKEN:
                raise ValueError(f"bad card token {tok!r}: face up in capitals (QH), face down"
                                 " in small letters (qh)")
        extra = set(header) - {"game", "turn", "last"} - ({"indicators"} if self.four else set())
        if extra:
            raise ValueError(f"unknown header key {sorted(extra)[0]!r}")
        seats = self.seats({})
        if header.get("turn") not in seats:
            raise ValueError(f"turn must be one of {', '.join(seats)}")
        last_name = header.get("last", "-")
        if last_name != "-" and (last_name not in INDEX or not cells[INDEX[last_name]].islower()):
            raise ValueError(f"bad last square {last_name!r}: it must hold a face-down card")
        ind: tuple[bool, ...] = ()
        if self.four:
            toks = header.get("indicators", "").split()
            if [t[:-1] for t in toks] != list(FOUR_SEATS) or any(t[-1] not in "+-" for t in toks):
                raise ValueError("indicators must read like 'N+ E+ S- W+'")
            ind = tuple(t[-1] == "+" for t in toks)
            if not any(ind):
                raise ValueError("the deal ends as soon as one partnership has both indicators down")
        return GetStuckState(
            tuple(TOKEN[t] for t in cells),
            cells.index(GAP),
            seats.index(header["turn"]),
            ind,
            INDEX[last_name] if last_name != "-" else -1,
        )


def _why_illegal(state: GetStuckState, move: str) -> str:
    """A sentence for the player on why ``move`` is not legal for the mover."""
    if move == PASS:
        return "you cannot pass while you have a legal move" if state.four else (
            "there is no passing in two-player Get Stuck")
    i = INDEX[move]
    card = state.cells[i]
    suits = SEAT_SUITS[state.mover]
    own = "spades" if suits == "S" else SUIT_NAME[suits] if len(suits) == 1 else (
        "hearts and diamonds" if suits == "HD" else "spades and clubs")
    if card == GAP:
        return f"{move} is the gap: choose a card to move into it"
    if card.islower():
        return f"the {pretty(card)} at {move} is face down and can never move again"
    if card[1] not in suits:
        return f"the {pretty(card)} at {move} is not yours: you play {own}"
    gap = NAMES[state.gap]
    for rays in (ORTHO_RAYS, DIAG_RAYS):
        for ray in rays[state.gap]:
            if i in ray:
                for j in ray[: ray.index(i)]:
                    if state.cells[j].islower() and card[0] not in "JQK":
                        return (f"the {pretty(card)} at {move} is a numeral and cannot pass"
                                f" the face-down card at {NAMES[j]}")
                return (f"the {pretty(card)} at {move} lies diagonal to the gap: you must move"
                        " a card in the gap's row or column while you can")
    return f"the {pretty(card)} at {move} is not in line with the gap at {gap}"


class GetStuck(_GetStuckBase):
    """Two-player Get Stuck: Red (hearts, diamonds) against Black (spades,
    clubs). RULINGS.md, Get Stuck."""

    info = GameInfo(
        "get-stuck",
        "Get Stuck",
        (Option("deals", "Number of deals in the match: an even number from 2 to 20.",
                2, minimum=2, maximum=20, even=True),),
        seats=TWO_SEATS,
        layout=Layout("grid", G.width, G.height),
        board="get-stuck",
        deal_noun="deal",
        passes=False,
    )

    def starter(self, options: Mapping[str, Any], match_seed: int, deal_index: int) -> str:
        """The first mover: drawn from the match seed for deal 0, then
        alternating (ruling 7)."""
        first = random.Random(derive_seed(match_seed, "first")).randrange(2)
        return TWO_SEATS[(first + deal_index) % 2]

    def deals_in_match(self, options: Mapping[str, Any]) -> int | None:
        """The ``deals`` option (ruling 7)."""
        return int(options["deals"])


class GetStuckFour(_GetStuckBase):
    """Get Stuck for Four: N (spades) and S (clubs) against E (hearts) and W
    (diamonds). RULINGS.md, Get Stuck for Four."""

    info = GameInfo("get-stuck-4", "Get Stuck for Four", seats=FOUR_SEATS,
                    layout=Layout("grid", G.width, G.height), board="get-stuck", deal_noun="deal")
    four = True

    def sides(self, options: Mapping[str, Any]) -> tuple[tuple[str, tuple[str, ...]], ...]:
        return FOUR_SIDES

    def deals_in_match(self, options: Mapping[str, Any]) -> int | None:
        """Four deals (ruling 6)."""
        return 4
