"""Suitors: every ruling of RULINGS.md (Suitors), the variants, position texts,
the view's secrecy, determinization and random play."""

from __future__ import annotations

import json
import pickle
import random
import re
from collections import Counter
from functools import cache
from pathlib import Path

import pytest

from engine.base import IllegalMove, MalformedMove, OptionError
from engine.cards import Grid, derive_seed, pretty
from engine.match import Match
from engine.notation import format_position
from engine.registry import get_game
from engine.suitors import (
    BOARDS,
    DECKS,
    JACKS,
    MAX_TURNS,
    Suitors,
    SuitorsState,
    jacks_on_board,
)

_game = get_game("suitors")
assert isinstance(_game, Suitors)
G: Suitors = _game

# ---- building positions -------------------------------------------------------------------


def position(
    up: dict[str, str],
    *,
    variant: str = "standard",
    players: int = 2,
    turn: str = "JS",
    turns: int = 0,
    passes: int = 0,
    moved: str = "-",
    last: str = "-",
    all_up: bool = False,
) -> SuitorsState:
    """A position read from text: the cards of ``up`` face up at their squares
    (a Jack named there leaves its corner), the Queen and the other Jacks in
    place, every other square filled in card order, face down unless
    ``all_up``; the cards left over are set aside."""
    b = BOARDS[variant]
    cells: list[str | None] = [None] * b.size
    cells[b.queen] = "QH"
    for j, sq in jacks_on_board(variant).items():
        if j not in up.values():
            cells[sq] = j
    for name, card in up.items():
        sq = b.index[name]
        assert cells[sq] is None, f"{name} is taken"
        cells[sq] = card
    rest = Counter(DECKS[variant]) - Counter(c for c in up.values() if c not in JACKS)
    pool = sorted(rest.elements())
    it = iter(pool)
    body = [c if c is not None else (next(it) if all_up else next(it).lower()) for c in cells]
    aside = " ".join(c.lower() for c in it) or "-"
    header = [("variant", variant), ("players", str(players)), ("turn", turn),
              ("turns", str(turns)), ("passes", str(passes)), ("moved", moved),
              ("last", last), ("aside", aside)]
    return G.from_text(format_position("suitors", header, b.grid.format_rows(body)))


def play(state: SuitorsState, *moves: str) -> SuitorsState:
    """``state`` after ``moves``, each played by the seat to move."""
    for m in moves:
        state = G.apply(state, state.mover, m)
    return state


def illegal(state: SuitorsState, move: str, seat: str | None = None) -> str:
    """The message of the IllegalMove that ``move`` raises; checks that the
    state is left unchanged."""
    before = G.to_text(state)
    with pytest.raises(IllegalMove) as err:
        G.apply(state, seat or state.mover, move)
    assert G.to_text(state) == before
    return str(err.value)


# ---- an independent reference for the legal moves -------------------------------------------

_RANKS = "23456789TJQK"


def _up_rank(card: str) -> int:
    return 14 if card[0] == "A" else _RANKS.index(card[0]) + 2


def _down_rank(card: str) -> int:
    return 1 if card[0] == "A" else _RANKS.index(card[0]) + 2


def _red(card: str) -> bool:
    return card[1] in "HD"


@cache
def _grid(width: int, height: int) -> tuple[Grid, list[tuple[int, ...]], list[list[tuple[int, ...]]]]:
    """A grid with its neighbours and its rays, straight from engine.cards."""
    g = Grid(width, height)
    dirs = ((0, -1), (1, 0), (0, 1), (-1, 0))
    return g, [g.neighbours(i) for i in range(g.size)], [
        [g.ray(i, dc, dr) for dc, dr in dirs] for i in range(g.size)]


def reference_moves(state: SuitorsState, locked: set[int]) -> set[str]:
    """The mover's legal moves computed plainly from the rulings, given the
    squares of the cards it may not use as Jumper."""
    width, height = (11, 9) if state.variant == "big" else (9, 5)
    g, neighbours, rays = _grid(width, height)
    cells, seat, names = state.cells, state.mover, g.names
    jack = cells.index(seat)
    region, todo = {jack}, [jack]
    while todo:
        p = todo.pop()
        for q in neighbours[p]:
            if q not in region and not cells[q].islower():
                region.add(q)
                todo.append(q)
    out = {f"reveal {names[q]}" for p in region for q in neighbours[p] if cells[q].islower()}

    def fixed(card: str) -> bool:  # never Jumper nor jumped in this turn
        return card == "QH" or (card[0] == "J" and card != seat)

    for p in region:
        c = cells[p]
        if fixed(c) or p in locked:
            continue
        if state.variant == "colours" and _red(c) != _red(seat):
            continue
        for ray in rays[p]:
            for q in ray:
                d = cells[q]
                if d.islower() or fixed(d) or _red(d) == _red(c) or _down_rank(d) >= _up_rank(c):
                    break
                out.add(f"{names[p]}-{names[q]}")
    return out or {"pass"}


def documented_order(state: SuitorsState, move: str) -> tuple[int, int, int, int]:
    """Where ``move`` stands in the order :attr:`SuitorsState.moves`
    documents: reveals by square, then jumps by Jumper square, direction
    (north, east, south, west) and length, shortest first."""
    width, height = (11, 9) if state.variant == "big" else (9, 5)
    g = _grid(width, height)[0]
    if move.startswith("reveal "):
        return (0, g.index[move[7:]], 0, 0)
    a, c = (g.index[n] for n in move.split("-"))
    (ac, ar), (cc, cr) = divmod(a, width)[::-1], divmod(c, width)[::-1]
    direction = 0 if cr < ar else 1 if cc > ac else 2 if cr > ar else 3
    return (1, a, direction, abs(cc - ac) + abs(cr - ar))


class Tracker:
    """Follows a game with its own bookkeeping: a unique id per physical card,
    and which ids were Jumper or jumped in each turn, to know the locks
    (ruling 4) without trusting the engine's ``moved`` field."""

    def __init__(self, state: SuitorsState) -> None:
        self.ids = list(range(len(state.cells)))
        self.history: list[set[int]] = []
        self.moves: list[str] = []

    def locked(self, state: SuitorsState) -> set[int]:
        n = len(state.seats)
        recent: set[int] = set()
        for ids in self.history[len(self.history) - (n - 1):] if n > 1 else []:
            recent |= ids
        return {sq for sq, i in enumerate(self.ids) if i in recent}

    def play(self, state: SuitorsState, move: str) -> None:
        step = state.board.parse.get(move)
        moved: set[int] = set()
        if step is not None and len(step.line) > 1:
            line = step.line
            moved = {self.ids[sq] for sq in line}
            jumper = self.ids[line[0]]
            for i in range(1, len(line)):
                self.ids[line[i - 1]] = self.ids[line[i]]
            self.ids[line[-1]] = jumper
        self.history.append(moved)
        self.moves.append(move)


# ---- ruling 1 and 2: the layout and the seats ---------------------------------------------


def test_standard_deal() -> None:
    opts = G.check_options({})
    assert G.seats(opts) == ("JS", "JC")
    assert G.seats(G.check_options({"players": 3})) == ("JS", "JH", "JC")
    assert G.seats(G.check_options({"players": 4})) == ("JS", "JH", "JC", "JD")
    assert G.starter(opts, 5, 0) == "JS"
    s = G.deal(7, opts, "JS")
    b = s.board
    assert (b.width, b.height) == (9, 5)
    assert s.cells[b.index["e3"]] == "QH"
    assert [s.cells[b.index[n]] for n in ("a1", "i1", "i5", "a5")] == ["JS", "JH", "JC", "JD"]
    down = [c for c in s.cells if c.islower()]
    assert len(down) == 40 and len(s.aside) == 7
    assert Counter([c.upper() for c in down] + list(s.aside)) == Counter(DECKS["standard"])
    assert G.to_move(s) == ("JS",)
    assert G.legal_moves(s, "JC") == ()
    assert set(G.legal_moves(s, "JS")) == {"reveal b1", "reveal a2"}
    assert G.deal(7, opts, "JS") == s and G.deal(8, opts, "JS") != s


def test_options() -> None:
    with pytest.raises(OptionError):
        G.check_options({"players": 5})
    with pytest.raises(OptionError):
        G.check_options({"variant": "tiny"})
    with pytest.raises(OptionError, match="two players"):
        G.check_options({"variant": "colours", "players": 3})
    assert G.check_options({"seed": 3}) == {"players": 2, "variant": "standard"}


# ---- ruling 3: connection -----------------------------------------------------------------


def test_connection_through_the_queen() -> None:
    up = {"c3": "JS", "d3": "5C", "f3": "7H", "g3": "4C"}
    s = position(up)
    assert "f3-g3" in s.moves  # the 7♥ is connected through the Queen
    assert "reveal h3" in s.moves and "reveal i3" not in s.moves
    v = G.view(s, "JS")
    assert {"c3", "d3", "e3", "f3", "g3"} == set(v["connected"]["JS"])
    # without the 5♣ face up, the 7♥ is cut off
    cut = position({"c3": "JS", "f3": "7H", "g3": "4C"})
    assert "f3-g3" not in cut.moves
    assert "not connected to your J♠" in illegal(cut, "f3-g3")


def test_connection_through_other_jacks() -> None:
    row = {"b1": "2S", "c1": "2C", "d1": "3S", "e1": "3C", "f1": "4S", "g1": "4C", "h1": "5S"}
    # J♥ (unused with two players) links the J♠'s row to i2
    s = position({**row, "i2": "9D", "i3": "5C"})
    assert "i2-i3" in s.moves
    assert "reveal i4" in s.moves
    # with three players J♥ is a player's Jack: it still connects
    s3 = position({**row, "i2": "9D", "i3": "5C"}, players=3)
    assert "i2-i3" in s3.moves
    # a face-down card breaks the line
    broken = {k: v for k, v in row.items() if k != "e1"}
    s = position({**broken, "i2": "9D", "i3": "5C"})
    assert "i2-i3" not in s.moves and "reveal e1" in s.moves


def test_reveal_needs_adjacency() -> None:
    s = position({})
    assert "reveal b1" in s.moves
    msg = illegal(s, "reveal c1")
    assert "not next to a face-up card connected to your J♠" in msg
    hidden = s.cells[s.board.index["c1"]].upper()
    assert hidden[0] not in msg.replace("J♠", "")  # the face-down card is never named
    assert "already face up" in illegal(s, "reveal e3")
    s = play(s, "reveal b1")
    assert s.cells[s.board.index["b1"]].isupper()
    assert s.last_move == "reveal b1" and s.mover == "JC"


# ---- ruling 4: jumps ------------------------------------------------------------------------


def test_seed_example_jack_jumps_two_red_cards() -> None:
    s = position({"b1": "9H", "c1": "2D", "d1": "8C"})
    assert {"a1-b1", "a1-c1"} <= set(s.moves)
    assert "a1-d1" not in s.moves
    assert illegal(s, "a1-d1") == "the 8♣ is the same colour as the J♠ and cannot be jumped by it"
    after = play(s, "a1-c1")
    idx = s.board.index
    assert [after.cells[idx[n]] for n in ("a1", "b1", "c1", "d1")] == ["9H", "2D", "JS", "8C"]
    assert G.describe(s, "JS", "a1-c1") == "J♠ jumps from a1 to c1 over the 9♥ and the 2♦"
    last = G.view(after, None)["last"]
    assert last == {"seat": "JS", "move": "a1-c1", "kind": "jump", "from": "a1", "to": "c1",
                    "jumper": "JS", "jumped": ["b1", "c1"], "shifted": ["a1", "b1"],
                    "cards": ["9H", "2D"]}


def test_rank_must_be_lower() -> None:
    s = position({"b1": "KD"})
    assert "a1-b1" not in s.moves
    assert "does not rank below the J♠" in illegal(s, "a1-b1")
    s = position({"b1": "TD"})
    assert "a1-b1" in s.moves


def test_ace_high_when_jumping_low_when_jumped() -> None:
    # the A♠ jumps the K♦ (Ace high)
    s = position({"b3": "JS", "c3": "AS", "d3": "KD"})
    assert "c3-d3" in s.moves
    # the 2♥ jumps the A♣ (Ace low)
    s = position({"b3": "JS", "c3": "2H", "d3": "AC"})
    assert "c3-d3" in s.moves and "b3-c3" in s.moves and "b3-d3" not in s.moves
    # an Ace jumps an Ace of the other colour, both ways
    assert "c3-d3" in position({"b3": "JS", "c3": "AS", "d3": "AH"}).moves
    assert "c3-d3" in position({"b3": "JS", "c3": "AH", "d3": "AS"}).moves
    # but never an Ace of its own colour
    s = position({"b3": "JS", "c3": "AS", "d3": "AC"})
    assert "c3-d3" not in s.moves
    assert "same colour" in illegal(s, "c3-d3")
    # the K♦ jumps the A♠, and the A♠ jumps the K♦ back
    s = position({"b3": "JS", "c3": "KD", "d3": "AS"})
    assert {"c3-d3", "d3-c3"} <= set(s.moves)
    # the seed's A♣ over the K♦ and the 10♥ in one move
    s = position({"b2": "JS", "c2": "AC", "d2": "KD", "e2": "TH"})
    assert "c2-e2" in s.moves
    after = play(s, "c2-e2")
    idx = s.board.index
    assert [after.cells[idx[n]] for n in ("c2", "d2", "e2")] == ["KD", "TH", "AC"]


def test_no_diagonal_or_empty_jumps() -> None:
    s = position({"b1": "9H"})
    assert "diagonally" in illegal(s, "a1-b2")
    assert "at least one card" in illegal(s, "a1-a1")
    assert "face down and cannot be jumped" in illegal(s, "a1-a2")
    assert "face down and cannot jump" in illegal(s, "a2-a3")


def test_queen_and_other_jacks_never_take_part() -> None:
    row = {"b1": "2S", "c1": "2C", "d1": "3S", "e1": "3C", "f1": "4S", "g1": "4C", "h1": "5S"}
    s = position({**row, "i2": "5C"})
    # the unused J♥ never jumps...
    assert "i1-i2" not in s.moves
    assert illegal(s, "i1-i2") == "the J♥ at i1 is not in play: unused Jacks never move"
    # ...and is never jumped
    s = position({**row, "h1": "KC"})
    assert "h1-i1" not in s.moves
    assert illegal(s, "h1-i1") == "the J♥ at i1 is not in play: unused Jacks never move"
    # the opponent's Jack: neither Jumper nor jumped in the J♠'s turn
    s = position({"h5": "KD", "i4": "5H", "i3": "8S"}, all_up=True)
    assert not any(m.startswith("i5-") for m in s.moves)
    assert "JC's Jack" in illegal(s, "i5-i4")
    assert "h5-i5" not in s.moves
    assert "JC's Jack" in illegal(s, "h5-i5")
    # in JC's own turn the K♦ may jump the J♣ and the J♣ may jump
    s = position({"h5": "KD", "i4": "5H", "i3": "8S"}, all_up=True, turn="JC")
    assert {"h5-i5", "i5-i4"} <= set(s.moves)
    # the Queen: never Jumper, never jumped
    s = position({"d3": "KS", "c3": "JS"})
    queen = "the Q♥ at e3 is the Queen of Hearts: no one ever moves her"
    assert illegal(s, "d3-e3") == queen and illegal(s, "e3-d3") == queen


def test_own_jack_may_be_jumped() -> None:
    s = position({"b3": "KD", "c3": "JS", "d3": "4C"})
    # the K♦ jumps the J♠ and the 4♣
    assert "b3-d3" in s.moves
    after = play(s, "b3-d3")
    idx = s.board.index
    assert [after.cells[idx[n]] for n in ("b3", "c3", "d3")] == ["JS", "4C", "KD"]


def test_lock_two_players() -> None:
    up = {"b2": "KS", "c2": "5H", "d2": "3D", "a2": "2S", "a3": "4H"}
    s = position(up, all_up=True)
    s = play(s, "b2-c2")  # J♠: the K♠ jumps the 5♥
    idx = s.board.index
    assert s.cells[idx["c2"]] == "KS" and s.cells[idx["b2"]] == "5H"
    assert s.mover == "JC"
    assert "c2-d2" not in s.moves  # the K♠ moved in J♠'s turn
    msg = illegal(s, "c2-d2")
    assert "took part in a jump in another player's turn" in msg
    assert "b2-a2" not in s.moves  # the jumped 5♥ too
    assert set(G.view(s, "JC")["locked"]) == {"b2", "c2"}
    assert G.view(s, "JS")["locked"] == []
    assert set(G.view(s, None)["mover_locked"]) == {"b2", "c2"}
    s = play(s, next(m for m in s.moves if _avoids(s, m, {"b2", "c2", "d2", "a2"})))
    # back to J♠: its own jump does not lock the K♠ for it, J♣'s jump locks its cards
    assert "c2-d2" in s.moves
    locked = set(G.view(s, "JS")["locked"])
    assert len(locked) >= 2 and not locked & {"b2", "c2"}
    assert set(s.moves) == reference_moves(s, {s.board.index[n] for n in locked})


def _avoids(s: SuitorsState, move: str, squares: set[str]) -> bool:
    """True if ``move`` is a jump whose line avoids ``squares`` and that does
    not end the game."""
    step = s.board.parse.get(move)
    if step is None or len(step.line) < 2:
        return False
    if {s.board.names[q] for q in step.line} & squares:
        return False
    return G.outcome(play(s, move)) is None


@pytest.mark.parametrize("players", [3, 4])
def test_lock_three_and_four_players(players: int) -> None:
    up = {"b2": "KS", "c2": "5H", "d2": "3D", "a2": "2S", "a3": "4H"}
    s = position(up, all_up=True, players=players)
    seats = s.seats
    s = play(s, "b2-c2")  # turn 0, J♠
    guard = {"b2", "c2", "d2", "a2", "a3", "b3", "c3", "d3"}
    # every other seat, before J♠ plays again, finds the K♠ and 5♥ locked
    for seat in seats[1:]:
        assert s.mover == seat
        assert "c2-d2" not in s.moves and "b2-a2" not in s.moves
        assert {"b2", "c2"} <= set(G.view(s, seat)["locked"])
        tracker_locked = {sq for sq, _ in s.moved}
        assert reference_moves(s, tracker_locked) == set(s.moves)
        s = play(s, next(m for m in s.moves if _avoids(s, m, guard)))
    # J♠ again: its own jump locks nothing for it, the others' jumps do
    assert s.mover == "JS"
    assert "c2-d2" in s.moves
    assert "b2" not in G.view(s, "JS")["locked"]
    assert len(G.view(s, "JS")["locked"]) >= 2
    s = play(s, next(m for m in s.moves if _avoids(s, m, guard)))
    # J♥ again: the K♠ moved before J♥'s last turn, so it is free now
    assert s.mover == "JH"
    assert "c2-d2" in s.moves


def test_lock_follows_the_card() -> None:
    # the 5♥ jumped in J♠'s turn is locked for J♣ wherever it went
    s = position({"b2": "KS", "c2": "5H", "a2": "2S"}, all_up=True)
    s = play(s, "b2-c2")
    assert s.cells[s.board.index["b2"]] == "5H"
    assert "b2-a2" not in s.moves
    assert "b2-a2" in reference_moves(s, set())


# ---- ruling 5: the end ---------------------------------------------------------------------


def test_jack_jumps_next_to_the_queen_and_wins() -> None:
    s = position({"c3": "JS", "d3": "5H"})
    after = play(s, "c3-d3")
    out = G.outcome(after)
    assert out is not None and out.winners == ("JS",)
    assert out.points("JS") == 1 and out.points("JC") == 0
    assert out.reason == "J♠ reached the Queen of Hearts"
    # The square named is the Jack's, beside the Queen at e3 (new-user pass:
    # "reached the Queen at d3" read as the Queen's square).
    details = {side.side: [line.detail for line in side.lines] for side in out.scores}
    assert details == {"JS": ["reached, beside her at d3"], "JC": ["not reached"]}
    assert G.to_move(after) == () and G.legal_moves(after, "JC") == ()
    assert illegal(after, "reveal b1", "JC") == "the game is over"
    assert G.view(after, None)["winner"] == "JS"


def test_own_jack_jumped_next_to_the_queen_wins() -> None:
    s = position({"d3": "KD", "c3": "JS"})
    after = play(s, "d3-c3")  # the K♦ jumps the J♠, which shifts to d3
    assert after.cells[s.board.index["d3"]] == "JS"
    out = G.outcome(after)
    assert out is not None and out.winners == ("JS",)
    # J♣ can never do that to the J♠
    s = position({"d3": "KD", "c3": "JS", "d4": "5C", "c4": "6C"}, turn="JC",
                 all_up=True)
    assert "d3-c3" not in s.moves
    assert "JS's Jack" in illegal(s, "d3-c3")


def test_jack_already_next_to_queen_must_take_part() -> None:
    s = position({"d3": "JS", "c3": "9S", "b3": "4H"})
    after = play(s, "c3-b3")
    assert G.outcome(after) is None


def pass_layout(jc_can_move: bool) -> dict[str, str]:
    """Every card face up, black and red in blocks whose only contacts are
    cards of equal rank: nobody can jump, except (if asked) the J♣ over the 7♦."""
    pairs = {"b1": "2S", "c1": "2H", "b2": "3S", "c2": "3H", "c3": "3C", "d3": "4S",
             "d2": "4H", "f4": "5S", "f3": "5H", "g4": "6S", "g3": "6H", "h4": "7S",
             "h3": "7H", "i4": "7D" if jc_can_move else "8S", "i3": "8H"}
    black_sq = ["a2", "a3", "b3", "a4", "b4", "c4", "d4", "e4", "b5", "c5", "d5", "e5",
                "f5", "g5", "h5"]
    red_sq = ["d1", "e1", "f1", "g1", "h1", "e2", "f2", "g2", "h2", "i2"]
    used = set(pairs.values())
    black = [c for c in DECKS["standard"] if c[1] in "SC" and c not in used]
    red = [c for c in DECKS["standard"] if c[1] in "HD" and c not in used]
    up = dict(pairs)
    up.update(zip(black_sq, black, strict=False))
    up.update(zip(red_sq, red, strict=False))
    return up


def test_pass_and_all_pass_draw() -> None:
    s = position(pass_layout(False), all_up=True)
    assert not any(c.islower() for c in s.cells)
    assert s.moves == ("pass",) and reference_moves(s, set()) == {"pass"}
    assert G.describe(s, "JS", "pass") == "J♠ cannot move and passes"
    s = play(s, "pass")
    assert s.passes == 1 and G.outcome(s) is None and s.moves == ("pass",)
    s = play(s, "pass")
    out = G.outcome(s)
    assert out is not None and out.winners == () and "passed" in out.reason
    assert all(sc.points == 0 for sc in out.scores)


def test_pass_only_without_a_move_and_passes_reset() -> None:
    s = position(pass_layout(True), all_up=True)
    s = play(s, "pass")
    assert s.mover == "JC" and "pass" not in s.moves and "i5-i4" in s.moves
    assert illegal(s, "pass") == "you cannot pass while you have a legal move"
    s = play(s, "i5-i4")
    assert s.passes == 0 and G.outcome(s) is None


def test_turn_limit_draw() -> None:
    s = position({"b1": "9H"}, turns=MAX_TURNS - 1, turn="JC")
    s = play(s, "reveal h5")
    out = G.outcome(s)
    assert out is not None and out.winners == () and "1,000 turns" in out.reason


# ---- variants -----------------------------------------------------------------------------


def test_big_board() -> None:
    opts = G.check_options({"variant": "big", "players": 4})
    s = G.deal(11, opts, "JS")
    b = s.board
    assert (b.width, b.height) == (11, 9)
    assert s.cells[b.index["f5"]] == "QH"
    assert [s.cells[b.index[n]] for n in ("a1", "k1", "k9", "a9")] == list(JACKS)
    assert s.aside == ()
    down = Counter(c.upper() for c in s.cells if c.islower())
    assert sum(down.values()) == 94 and set(down.values()) == {2}
    assert "J" not in {c[0] for c in down} and "QH" not in down
    assert set(s.moves) == {"reveal b1", "reveal a2"}
    # two decks: both 9♥ may be jumped in one move
    s = position({"b1": "9H", "c1": "2D", "d1": "9H", "e1": "8C"}, variant="big")
    assert "a1-d1" in s.moves and "a1-e1" not in s.moves


def test_colours_variant() -> None:
    opts = G.check_options({"variant": "colours"})
    assert G.seats(opts) == ("JS", "JH")
    s = G.deal(3, opts, "JS")
    idx = s.board.index
    assert s.cells[idx["a1"]] == "JS" and s.cells[idx["i5"]] == "JH"
    assert s.cells[idx["i1"]].islower() and s.cells[idx["a5"]].islower()
    assert "JC" not in s.cells and "JD" not in s.cells
    assert len(s.aside) == 5 and sum(c.islower() for c in s.cells) == 42
    # J♠'s Jumper must be black: the 9♥ may not jump the 5♣, the 9♣ may jump the 5♥
    s = position({"b1": "9H", "c1": "5C", "a2": "9C", "a3": "5H"}, variant="colours")
    assert "b1-c1" not in s.moves and "a2-a3" in s.moves and "a1-b1" in s.moves
    assert "must be black like your J♠" in illegal(s, "b1-c1")
    # J♥'s Jumpers are red
    s = position({"h5": "9H", "g5": "5C", "i4": "9C", "i3": "5H"}, variant="colours", turn="JH")
    assert "h5-g5" in s.moves and "i4-i3" not in s.moves
    assert "must be red like your J♥" in illegal(s, "i4-i3")


# ---- errors, text, describe ---------------------------------------------------------------


def test_errors_leave_the_state_unchanged() -> None:
    s = G.deal(5, G.check_options({}), "JS")
    before = G.to_text(s)
    for bad in ("hello", "", "reveal", "reveal z9", "reveal j1", "a1-j1", "a1-", "PASS", "reveal b1 "):
        with pytest.raises(MalformedMove):
            G.apply(s, "JS", bad)
    with pytest.raises(MalformedMove):
        G.apply(s, "JC", "nonsense")  # malformed comes first
    assert illegal(s, "reveal b1", "JC") == "it is JS's turn, not JC's"
    assert illegal(s, "reveal b1", "JH") == "JH is not playing in this game"
    assert illegal(s, "pass") == "you cannot pass while you have a legal move"
    assert G.to_text(s) == before
    assert G.legal_moves(s, "JS") == s.moves


def test_text_round_trip_and_public_text() -> None:
    s = position({"b2": "KS", "c2": "5H"}, all_up=True, players=3)
    s = play(s, "b2-c2")
    text = G.to_text(s)
    assert "moved: b2@0 c2@0" in text and "last: JS b2-c2" in text
    assert G.from_text(text) == s
    d = G.deal(9, G.check_options({}), "JS")
    text = G.to_text(d)
    assert G.from_text(text) == d
    assert re.search(r"^aside: ([a2-9tjqk][shdc] ){6}[a2-9tjqk][shdc]$", text, re.M)
    pub = G.public_text(d)
    assert "??" in pub and not re.search(r"\b[a2-9tjqk][shdc]\b", pub)
    assert "aside: 7 cards" in pub
    for card in d.aside:
        assert card not in pub
    with pytest.raises(ValueError):
        G.from_text(pub)
    with pytest.raises(ValueError):
        G.from_text(text.replace("turn: JS", "turn: JH"))
    with pytest.raises(ValueError):
        G.from_text(text.replace("QH", "qh"))
    with pytest.raises(ValueError):
        G.from_text(text.replace("game: suitors", "game: get-stuck"))


def test_describe() -> None:
    s = position({"b1": "9H"})
    card = pretty(s.cells[s.board.index["a2"]])
    assert G.describe(s, "JS", "reveal a2") == f"J♠ reveals the {card} at a2"
    assert G.describe(s, "JS", "reveal c3") == "J♠ reveals the card at c3"  # not legal: unnamed
    assert G.describe(s, "JS", "a1-b1") == "J♠ jumps from a1 to b1 over the 9♥"
    s = position({"b3": "JS", "c3": "KD", "d3": "AS"})
    assert G.describe(s, "JS", "c3-d3") == "J♠ moves the K♦ from c3 to d3 over the A♠"
    # the K♦ jumps J♠'s own Jack: not "over the J♠", which reads as the Jack jumping itself
    s = position({"b1": "KD"})
    assert G.describe(s, "JS", "b1-a1") == "J♠ moves the K♦ from b1 to a1 over its own Jack"


def test_the_notation_docs_example() -> None:
    doc = (Path(__file__).parents[2] / "docs" / "notation" / "suitors.md").read_text()
    secret, public, view = re.findall(r"```(?:json)?\n(.*?)```", doc, re.S)
    s = G.from_text(secret)
    assert G.to_text(s) == secret and G.public_text(s) == public
    assert json.loads(view) == G.view(s, "JS")
    assert set(s.moves) == {"reveal c1", "reveal a2", "reveal c2", "reveal a3", "reveal c3",
                            "reveal b4", "b1-a1", "b2-b3"}


# ---- hidden information -------------------------------------------------------------------

_CARD = re.compile(r"(?<![A-Za-z0-9])[A2-9TJQK][SHDC](?![A-Za-z0-9])")
_LOWER = re.compile(r"(?<![A-Za-z0-9])[a2-9tjqk][shdc](?![A-Za-z0-9])")


def assert_view_hides(state: SuitorsState, secrets: list[str]) -> None:
    """No seat's view nor the spectator's holds a face-down or set-aside card
    (only face-up cards appear) or any of ``secrets``."""
    face_up = {c for c in state.cells if not c.islower()}
    down = sum(c.islower() for c in state.cells)
    for seat in (*state.seats, None):
        v = G.view(state, seat)
        dump = json.dumps(v, ensure_ascii=False)
        assert set(_CARD.findall(dump)) <= face_up, seat
        assert not _LOWER.search(dump)
        assert v["cells"].count("??") == down
        for secret in secrets:
            assert secret not in dump
        assert "aside" not in v or isinstance(v["aside"], int)
        assert (v["revealable"] != []) <= (seat == state.mover and not state.over)


@pytest.mark.parametrize("opts", [{}, {"players": 4}, {"variant": "colours"}, {"variant": "big"}])
def test_views_never_show_hidden_cards(opts: dict[str, object]) -> None:
    checked = G.check_options(opts)
    for k in range(3):
        match_seed = 7_000_000_000_000_000_000 + 977 * k
        m = Match.new("suitors", checked, match_seed)
        deal_seed = derive_seed(match_seed, "deal", 0)
        rng = random.Random(k)
        while not m.deal_over and m.state.turns < 150:
            s = m.state
            if s.turns % 5 == 0:
                assert_view_hides(s, [str(match_seed), str(deal_seed)])
                if checked["variant"] != "big":  # one deck: a hidden card is nowhere face up
                    hidden = {c.upper() for c in s.cells if c.islower()} | set(s.aside)
                    dump = json.dumps([G.view(s, x) for x in (*s.seats, None)])
                    assert hidden and not hidden & set(_CARD.findall(dump))
            m = m.play(s.mover, rng.choice(G.legal_moves(s, s.mover)))
        assert_view_hides(m.state, [str(match_seed), str(deal_seed)])


def test_repr_hides_cards() -> None:
    s = G.deal(4, G.check_options({}), "JS")
    text = repr(s)
    assert "??" in text and not _LOWER.search(text)
    assert set(_CARD.findall(text)) <= {"QH", *JACKS}


def test_view_fields() -> None:
    s = position({"b1": "9H"}, players=3)
    v = G.view(s, "JS")
    assert (v["width"], v["height"], v["queen"], v["turn"]) == (9, 5, "e3", "JS")
    assert v["jacks"] == {"JS": "a1", "JH": "i1", "JC": "i5"} and v["unused"] == {"JD": "a5"}
    assert v["revealable"] == ["c1", "a2", "b2"]
    assert v["connected"]["JS"] == ["a1", "b1"] and v["connected"]["JH"] == ["i1"]
    assert G.view(s, "JH")["revealable"] == [] and G.view(s, None)["revealable"] == []
    assert v["last"] is None and v["passes"] == 0 and v["turns"] == 0 and v["aside"] == 7
    s = play(s, "reveal c1")
    last = G.view(s, "JH")["last"]
    assert last["kind"] == "reveal" and last["square"] == "c1" and last["card"] == s.cells[2]


def test_determinize_keeps_the_view_and_changes_hidden_cards() -> None:
    for opts in ({}, {"variant": "big"}, {"variant": "colours"}):
        s = G.deal(21, G.check_options(opts), "JS")
        rng = random.Random(4)
        for _ in range(12):
            s = G.apply(s, s.mover, rng.choice(G.legal_moves(s, s.mover)))
        hidden = Counter(c.upper() for c in s.cells if c.islower()) + Counter(s.aside)
        dets = [G.determinize(s, "JS", random.Random(k)) for k in range(5)]
        for d in dets:
            for seat in (*s.seats, None):
                assert G.view(d, seat) == G.view(s, seat)
            assert d.moves == s.moves
            assert Counter(c.upper() for c in d.cells if c.islower()) + Counter(d.aside) == hidden
            assert G.from_text(G.to_text(d)) == d
        assert any(d.cells != s.cells or d.aside != s.aside for d in dets)
        # built from public information only: other hidden cards, same result
        shuffled = G.determinize(s, "JC", random.Random(99))
        assert G.determinize(shuffled, "JS", random.Random(3)) == G.determinize(s, "JS", random.Random(3))


# ---- states made by apply -------------------------------------------------------------------


@pytest.mark.parametrize("opts", [{}, {"players": 3}, {"variant": "colours"}, {"variant": "big"}])
def test_applied_states_match_states_read_from_text(opts: dict[str, object]) -> None:
    """``apply`` builds states without the dataclass ``__init__`` and hands
    them derived data (the locks, the end, the regions): each one equals,
    hashes like and plays like the same position read from its text."""
    checked = G.check_options(opts)
    for k in range(4):
        s = G.deal(k, checked, "JS")
        rng = random.Random(k)
        while True:
            fresh = G.from_text(G.to_text(s))
            assert s == fresh and hash(s) == hash(fresh) and repr(s) == repr(fresh)
            assert (s.mover, s.over, s.winner, s.locked) == (
                fresh.mover, fresh.over, fresh.winner, fresh.locked)
            assert s.moves == fresh.moves and G.outcome(s) == G.outcome(fresh)
            for seat in s.seats:
                assert s.region(seat) == fresh.region(seat)
            if not G.to_move(s):
                break
            s = G.apply(s, s.mover, rng.choice(s.moves))
            with pytest.raises(AttributeError):
                s.turns = 0  # type: ignore[misc]  # still frozen


def test_states_pickle_small_and_alike() -> None:
    """A state sent to a worker process pickles without its layout tables
    (the board comes back as the shared one) and plays on alike."""
    s = G.deal(6, G.check_options({}), "JS")
    rng = random.Random(6)
    for _ in range(40):
        s = G.apply(s, s.mover, rng.choice(s.moves))
    data = pickle.dumps(s)
    back = pickle.loads(data)
    assert len(data) < 4000
    assert back == s and back.board is s.board and back.moves == s.moves
    move = s.moves[-1]
    assert G.to_text(G.apply(back, back.mover, move)) == G.to_text(G.apply(s, s.mover, move))


# ---- random play --------------------------------------------------------------------------

CONFIGS: list[dict[str, object]] = [{}, {"players": 3}, {"players": 4}, {"variant": "colours"}]


def _toward_queen(s: SuitorsState, moves: tuple[str, ...]) -> list[str]:
    """The mover's jumps that bring its Jack closer to the Queen."""
    b = s.board
    w = b.width
    j = s.cells.index(s.mover)

    def dist(a: int) -> int:
        return abs(a % w - b.queen % w) + abs(a // w - b.queen // w)

    out = []
    for m in moves:
        step = b.parse.get(m)
        if step is None or len(step.line) < 2 or j not in step.line:
            continue
        i = step.line.index(j)
        if dist(step.line[-1] if i == 0 else step.line[i - 1]) < dist(j):
            out.append(m)
    return out


def random_game(seed: int, opts: dict[str, object], uniform: bool, reference: bool) -> SuitorsState:
    """One seeded game. Seats play uniformly at random, or (unless
    ``uniform``) half the time a random move bringing their Jack closer to the
    Queen. Checks invariants on every move, wrong moves now and then, and (if
    ``reference``) every move list against :func:`reference_moves`."""
    checked = G.check_options(opts)
    rng = random.Random(seed)
    s = G.deal(derive_seed(seed, "suitors-test"), checked, G.starter(checked, seed, 0))
    b = s.board
    tracker = Tracker(s)
    start_cards = Counter(c.upper() for c in s.cells)
    down = sum(c.islower() for c in s.cells)
    while G.to_move(s):
        others = [j for j in JACKS if j != s.mover and j in s.cells]
        spots = [s.cells.index(j) for j in others]
        seat = s.mover
        moves = G.legal_moves(s, seat)
        assert moves and len(set(moves)) == len(moves)
        if reference:
            assert set(moves) == reference_moves(s, tracker.locked(s)), G.to_text(s)
            if moves != ("pass",):
                assert list(moves) == sorted(moves, key=lambda m: documented_order(s, m))
        if s.turns % 17 == 0:
            other = next(x for x in s.seats if x != seat)
            with pytest.raises(IllegalMove):
                G.apply(s, other, moves[0])
            with pytest.raises(MalformedMove):
                G.apply(s, seat, rng.choice(["", "jump", "reveal", "a0-a1", "reveal e3 ", "z1-a1"]))
            wrong = rng.choice([f"reveal {n}" for n in b.names] + [f"{p}-{q}" for p in b.names[:9]
                                                                    for q in b.names[-9:]])
            if wrong not in moves:
                with pytest.raises(IllegalMove):
                    G.apply(s, seat, wrong)
        toward = [] if uniform or rng.random() < 0.5 else _toward_queen(s, moves)
        move = rng.choice(toward or moves)
        tracker.play(s, move)
        s = G.apply(s, seat, move)
        # the Queen and the other Jacks never move
        assert s.cells[b.queen] == "QH"
        assert [s.cells.index(j) for j in others] == spots
    # no card came or went; only reveals turned cards up
    assert Counter(c.upper() for c in s.cells) == start_cards
    assert sum(c.islower() for c in s.cells) == down - sum(m.startswith("reveal") for m in tracker.moves)
    out = G.outcome(s)
    assert out is not None and s.turns <= MAX_TURNS
    assert set(out.winners) <= set(s.seats) and len(out.winners) <= 1
    assert sum(sc.points for sc in out.scores) == len(out.winners)
    assert G.from_text(G.to_text(s)) == s
    return s


@pytest.mark.parametrize("opts", [{}, {"players": 4}, {"variant": "big"}, {"variant": "colours"}])
def test_both_ways_of_listing_jumps_agree(opts: dict[str, object], monkeypatch: pytest.MonkeyPatch) -> None:
    """A region's jumps are listed from its squares one by one when it is
    small, else by a pass over the whole layout: on every position of a few
    random games the two give the same moves in the same order."""
    import engine.suitors as suitors

    def listed(state: SuitorsState, small: int) -> tuple[str, ...]:
        monkeypatch.setattr(suitors, "SMALL_REGION", small)
        fresh = G.from_text(G.to_text(state))  # no moves worked out yet
        return fresh.moves

    small = suitors.SMALL_REGION
    rng = random.Random(3)
    checked = G.check_options(opts)
    sizes = set()
    for seed in range(3):
        s = G.deal(seed, checked, G.starter(checked, seed, 0))
        while G.to_move(s):
            region = s.region(s.mover)
            sizes.add(region.members.bit_count() <= small)
            assert listed(s, 0) == listed(s, 10_000), G.to_text(s)
            s = G.apply(s, s.mover, rng.choice(s.moves))
    assert sizes == {True, False}  # both small and large regions were seen


@pytest.mark.slow
@pytest.mark.parametrize("chunk", range(4))
def test_random_play(chunk: int) -> None:
    """2,000 seeded games in four chunks: every tenth plays uniformly at random
    (long games, draws), every fifteenth is checked against the reference."""
    ends: Counter[str] = Counter()
    for n in range(chunk * 500, chunk * 500 + 500):
        s = random_game(n, CONFIGS[n % len(CONFIGS)], uniform=n % 10 == 0, reference=n % 15 == 7)
        ends["win" if s.winner else "draw"] += 1
    assert ends["win"] > 400


def test_random_play_big_board() -> None:
    for n in range(6):
        random_game(10_000 + n, {"variant": "big", "players": 2 + n % 3}, uniform=False,
                    reference=n == 0)


def test_revealed_view_shows_every_card_and_nothing_else_changes() -> None:
    d = G.deal(9, G.check_options({"players": 3}), "JS")
    shown, public = G.revealed_view(d), G.view(d, None)
    assert shown["cells"] == list(d.cells) and "??" not in shown["cells"]
    assert sorted(shown["aside_cards"]) == sorted(d.aside) and len(d.aside) == public["aside"]
    hidden = [i for i, c in enumerate(public["cells"]) if c == "??"]
    assert hidden and all(shown["cells"][i].islower() for i in hidden)
    assert {k: v for k, v in shown.items() if k not in ("cells", "aside_cards")} == {
        k: v for k, v in public.items() if k != "cells"}
    for name in ("get-stuck", "get-stuck-4", "romeo-and-juliet", "stucco"):
        game = get_game(name)
        state = game.deal(5, game.check_options({}), game.starter(game.check_options({}), 5, 0))
        assert game.revealed_view(state) == game.view(state, None)
