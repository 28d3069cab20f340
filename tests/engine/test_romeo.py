"""Romeo and Juliet: every ruling (RULINGS.md, Romeo and Juliet 1–5) on
constructed positions, the notation and its errors, the view, the position
text and random play."""

from __future__ import annotations

import json
import random
import re
from pathlib import Path

import pytest

from engine.base import IllegalMove, MalformedMove, MoveError
from engine.cards import FULL_DECK, shuffled
from engine.registry import get_game
from engine.romeo import (
    DECK_50,
    NAMES,
    TURN_LIMIT,
    RomeoAndJuliet,
    RomeoState,
    arrange,
)

GAME = RomeoAndJuliet()
SEVENS = ("7S", "7H", "7D", "7C")
BASE = [c.lower() if c[0] == "7" else c for c in DECK_50 if c != "7D"]
"""49 tokens of a deal with 7D drawn out: Jokers 7s, 7h, 7c."""


def layout(placed: dict[str, str]) -> list[str]:
    """49 tokens: ``placed`` (square → token) plus QS at a7 and QH at g1, the
    other cards filling the other squares in deck order."""
    placed = {"a7": "QS", "g1": "QH", **placed}
    rest = [t for t in BASE if t not in placed.values()]
    return [placed[n] if n in placed else rest.pop(0) for n in NAMES]


def text(
    cells: list[str],
    red: str = "a7",
    black: str = "g1",
    turn: str = "red",
    lock: str = "-",
    turns: int = 10,
    history: str = "-",
) -> str:
    rows = "\n".join(" ".join(cells[r * 7:(r + 1) * 7]) for r in range(7))
    return (f"game: romeo-and-juliet\nturn: {turn}\nred: {red}\nblack: {black}\n"
            f"lock: {lock}\nturns: {turns}\nhistory: {history}\n\n{rows}\n")


def position(placed: dict[str, str] | None = None, **kw: object) -> RomeoState:
    """A constructed position, built through ``from_text``."""
    return GAME.from_text(text(layout(placed or {}), **kw))  # type: ignore[arg-type]


def romeo_moves(state: RomeoState) -> set[str]:
    return {m for m in state.moves if not m.startswith("swap")}


def swaps(state: RomeoState) -> set[str]:
    return {m for m in state.moves if m.startswith("swap")}


def refused(state: RomeoState, seat: str, move: str) -> str:
    """The IllegalMove message for ``move``; checks the state is unchanged."""
    before = GAME.to_text(state)
    with pytest.raises(IllegalMove) as err:
        GAME.apply(state, seat, move)
    assert GAME.to_text(state) == before
    return str(err.value)


# ---- the deal (ruling 1) ---------------------------------------------------------------


def test_registered() -> None:
    game = get_game("romeo-and-juliet")
    assert isinstance(game, RomeoAndJuliet)
    assert game.seats({}) == ("red", "black")
    assert game.check_options({"seed": 3}) == {}


def test_deal_removes_qc_qd_and_one_seven_and_has_three_jokers() -> None:
    removed_sevens = set()
    for seed in range(300):
        cells = GAME.deal(seed, {}, "red").cells
        ups = {t for t in cells if t.isupper() or t[0] != "7"}
        jokers = [t for t in cells if t[0] == "7"]
        assert len(cells) == 49 and len(set(cells)) == 49
        assert "QC" not in cells and "QD" not in cells
        assert len(jokers) == 3 and all(j.islower() for j in jokers)
        assert not ups & set(SEVENS)
        (gone,) = set(SEVENS) - {j.upper() for j in jokers}
        removed_sevens.add(gone)
        assert ups | {j.upper() for j in jokers} == set(FULL_DECK) - {"QC", "QD", gone}
        assert cells[NAMES.index("a7")] == "QS" and cells[NAMES.index("g1")] == "QH"
    assert removed_sevens == set(SEVENS)  # the drawn Seven depends on the seed


def test_deal_is_fixed_by_the_seed() -> None:
    assert GAME.deal(42, {}, "red") == GAME.deal(42, {}, "red")
    assert GAME.deal(42, {}, "red").cells != GAME.deal(43, {}, "red").cells


def test_arrange_queens_even_from_the_other_corner() -> None:
    a7, g1 = NAMES.index("a7"), NAMES.index("g1")
    # QS in g1's corner and QH in a7's: QS goes to a7 (QH moves to g1 by that
    # first exchange), then QH with g1 changes nothing.
    cards = [f"c{i}" for i in range(49)]
    cards[g1], cards[a7] = "QS", "QH"
    out = arrange(cards)
    assert out[a7] == "QS" and out[g1] == "QH" and sorted(out) == sorted(cards)
    # QS at g1 only: the card from a7 goes to g1, then to QH's old square.
    cards = [f"c{i}" for i in range(49)]
    cards[g1], cards[10] = "QS", "QH"
    out = arrange(cards)
    assert out[a7] == "QS" and out[g1] == "QH" and out[10] == f"c{a7}"
    # QH at a7 only: QS's exchange sends QH to QS's old square, then to g1.
    cards = [f"c{i}" for i in range(49)]
    cards[a7], cards[10] = "QH", "QS"
    out = arrange(cards)
    assert out[a7] == "QS" and out[g1] == "QH" and out[10] == f"c{g1}"
    # Ordinary case: two plain exchanges.
    cards = [f"c{i}" for i in range(49)]
    cards[3], cards[20] = "QS", "QH"
    out = arrange(cards)
    assert (out[a7], out[g1], out[3], out[20]) == ("QS", "QH", f"c{a7}", f"c{g1}")


def test_deal_places_queens_from_the_other_corner() -> None:
    a7, g1 = NAMES.index("a7"), NAMES.index("g1")
    found = 0
    for seed in range(1500):
        cells = GAME.deal(seed, {}, "red").cells
        gone = (set(SEVENS) - {t.upper() for t in cells if t[0] == "7"}).pop()
        before = [c.lower() if c[0] == "7" else c for c in shuffled(DECK_50, seed) if c != gone]
        if before[g1] == "QS" or before[a7] == "QH":
            found += 1
            assert cells == arrange(before)
            assert cells[a7] == "QS" and cells[g1] == "QH"
    assert found >= 10


def test_opening_position() -> None:
    s = GAME.deal(7, {}, GAME.starter({}, 7, 0))
    assert GAME.to_move(s) == ("red",)
    v = GAME.view(s, None)
    assert v["romeos"] == {"red": "a7", "black": "g1"}
    assert v["juliets"] == {"red": "g1", "black": "a7"}
    assert v["opened"] == {"red": False, "black": False}
    assert GAME.starter({}, 7, 1) == "red"
    assert not GAME.match_over({}, ()) and GAME.outcome(s) is None


# ---- the opening (ruling 3) ------------------------------------------------------------


def test_opening_is_a_king_step_and_no_swap_before_it() -> None:
    s = GAME.deal(1, {}, "red")
    assert set(GAME.legal_moves(s, "red")) == {"a6", "b6", "b7"}
    assert GAME.legal_moves(s, "black") == ()
    assert refused(s, "red", "a5") == "your first move must be a king-step off your Queen: to a6, b6, b7"
    joker = next(NAMES[i] for i, t in enumerate(s.cells) if t[0] == "7")
    partner = next(NAMES[i] for i in range(49) if NAMES[i] != joker and (
        NAMES[i][0] == joker[0] or NAMES[i][1] == joker[1]) and s.cells[i][0] not in "7Q")
    move = "swap " + " ".join(sorted((joker, partner), key=lambda n: (n[0], int(n[1:]))))
    no_swap = "no swap before your Romeo has made its first step off your Queen"
    assert refused(s, "red", move) == no_swap
    s = GAME.apply(s, "red", "b6")
    assert set(GAME.legal_moves(s, "black")) == {"f1", "f2", "g2"}
    assert refused(s, "black", move) == no_swap
    s = GAME.apply(s, "black", "f2")
    assert GAME.view(s, "red")["opened"] == {"red": True, "black": True}


def test_black_cannot_swap_before_opening_even_after_red_has() -> None:
    s = position({"b2": "7s", "b4": "3C", "e5": "7h", "f6": "7c"}, red="c3", black="g1",
                 turn="black", turns=1)
    assert not swaps(s)
    assert romeo_moves(s) == {"f1", "f2", "g2"}
    assert "first step" in refused(s, "black", "swap b2 b4")
    s = GAME.apply(s, "black", "f1")
    assert "swap b2 b4" in s.moves  # Red, who has opened, may swap


# ---- numeral moves (ruling 4) ----------------------------------------------------------


def test_red_numerals_move_vertically_black_horizontally_exactly_n() -> None:
    s = position({"d4": "3H"}, red="d4", black="g7")
    assert romeo_moves(s) == {"d1", "d7"}
    s = position({"d4": "3S"}, red="d4", black="g7")
    assert romeo_moves(s) == {"a4", "g4"}
    s = position({"d4": "2D"}, red="d4", black="g7")
    assert romeo_moves(s) == {"d2", "d6"}
    s = position({"d4": "AC"}, red="d4", black="g7")
    assert romeo_moves(s) == {"c4", "e4"}


def test_numerals_wrap_over_the_edge() -> None:
    s = position({"d2": "5H"}, red="d2", black="g7")
    assert romeo_moves(s) == {"d4", "d7"}  # 5 up: d1, d7, d6, d5, d4
    s = position({"b4": "4C"}, red="b4", black="g7")
    assert romeo_moves(s) == {"e4", "f4"}  # 4 left: a4 g4 f4 e4; 4 right: c4 d4 e4 f4


def test_big_numerals_equal_small_ones() -> None:
    # A red 9 moves like a 2 in the same direction; a 5 like a 2 the other way.
    nine = romeo_moves(position({"d4": "9H"}, red="d4", black="g7"))
    two = romeo_moves(position({"d4": "2H"}, red="d4", black="g7"))
    five = romeo_moves(position({"d4": "5D"}, red="d4", black="g7"))
    assert nine == two == five == {"d2", "d6"}
    s = position({"d4": "9H", "d2": "4C"}, red="d4", black="g7")
    assert GAME.describe(s, "red", "d2") == "Red from 9♥: 9 up (wraps), lands on 4♣"
    assert GAME.describe(s, "red", "d6").startswith("Red from 9♥: 9 down (wraps)")
    s = position({"d4": "5D"}, red="d4", black="g7")
    assert GAME.describe(s, "red", "d6").startswith("Red from 5♦: 5 up (wraps)")
    # Tens and Eights: 10 = 3, 8 = 1, same direction.
    assert romeo_moves(position({"c3": "TS"}, red="c3", black="g7")) == {"f3", "g3"}
    assert romeo_moves(position({"c3": "8S"}, red="c3", black="g7")) == {"b3", "d3"}


def test_the_example_sentence_and_path() -> None:
    s = position({"c5": "9H", "c3": "4C"}, red="c5", black="g7")
    assert GAME.describe(s, "red", "c3") == "Red from 9♥: 9 up (wraps), lands on 4♣"
    after = GAME.apply(s, "red", "c3")
    v = GAME.view(after, "black")
    assert v["explain"] == "Red from 9♥: 9 up (wraps), lands on 4♣"
    assert v["last"] == {
        "seat": "red", "kind": "move", "from": "c5", "to": "c3", "wraps": True,
        "path": ["c5", "c4", "c3", "c2", "c1", "c7", "c6", "c5", "c4", "c3"],
    }


def test_opponent_blocks_anywhere_on_the_path() -> None:
    # Opponent directly below on a red 5: up 5 is legal and lands two below.
    s = position({"d3": "5H"}, red="d3", black="d4")
    assert romeo_moves(s) == {"d5"}
    assert refused(s, "red", "d1") == "the Black Romeo blocks the 5♥'s path down"
    after = GAME.apply(s, "red", "d5")
    assert GAME.view(after, None)["last"]["path"] == ["d3", "d2", "d1", "d7", "d6", "d5"]
    # Black blocked by Red in the middle of a wrapping path.
    s = position({"b2": "4S"}, red="g2", black="b2", turn="black")
    assert romeo_moves(s) == {"f2"}  # 4 right: c2 d2 e2 f2; 4 left: a2, then Red at g2
    assert refused(s, "black", "e2") == "the Red Romeo blocks the 4♠'s path left"


@pytest.mark.parametrize("card", ["TH", "9D", "8H", "TS", "9C", "8S"])
def test_seven_or_more_is_blocked_by_an_opponent_anywhere_in_the_line(card: str) -> None:
    line = ["d1", "d2", "d3", "d5", "d6", "d7"] if card[1] in "HD" else ["a4", "b4", "c4", "e4", "f4", "g4"]
    for sq in line:
        s = position({"d4": card}, red="d4", black=sq)
        assert romeo_moves(s) == set(), sq
    assert len(romeo_moves(position({"d4": card}, red="d4", black="a1"))) == 2


# ---- Kings and Jacks -------------------------------------------------------------------


def test_king_and_jack_never_wrap() -> None:
    assert romeo_moves(position({"a1": "KS"}, red="a1", black="g7")) == {"b1", "a2", "b2"}
    assert romeo_moves(position({"d1": "KH"}, red="d1", black="g7")) == {"c1", "e1", "c2", "d2", "e2"}
    assert romeo_moves(position({"d4": "KD"}, red="d4", black="g7")) == {
        "c3", "d3", "e3", "c4", "e4", "c5", "d5", "e5"}
    assert romeo_moves(position({"a1": "JS"}, red="a1", black="g7")) == {"b3", "c2"}
    assert romeo_moves(position({"g4": "JC"}, red="g4", black="a1")) == {"f2", "e3", "e5", "f6"}
    assert romeo_moves(position({"d4": "JH"}, red="d4", black="g7")) == {
        "c2", "e2", "b3", "f3", "b5", "f5", "c6", "e6"}
    s = position({"a1": "KS"}, red="a1", black="g7")
    edge = "from the K♠ your Romeo steps to a square next to it, never over an edge"
    assert refused(s, "red", "g1") == refused(s, "red", "g2") == refused(s, "red", "a3") == edge
    s = position({"a1": "JS"}, red="a1", black="g7")
    assert refused(s, "red", "f2") == "from the J♠ your Romeo makes a knight's move, never over an edge"


# ---- Jokers: reverse reach -------------------------------------------------------------

JOKER_BOARD = {
    "d4": "7s",  # the Romeo's Joker
    "d1": "3H",  # 3 down from d1 reaches d4
    "a4": "3S",  # 3 right from a4 reaches d4
    "d7": "4C",  # black: moves along row 7, never reaches d4
    "g4": "2H",  # red: moves along column g, never reaches d4
    "c3": "KC",  # a King next to d4
    "b3": "JD",  # a knight's move from d4
    "e5": "7h",  # a Joker next to d4: never an origin
    "d3": "9D",  # 9 down from d3: d4 ... wraps ... d5 (no); 9 up: d1 ... no
}


def test_joker_moves_use_reverse_reach() -> None:
    s = position(JOKER_BOARD, red="d4", black="g7")
    moves = romeo_moves(s)
    assert {"d1", "a4", "c3", "b3"} <= moves
    assert not {"d7", "g4", "e5", "d3"} & moves
    # Cross-check every destination against the forward rule from there.
    for dest in NAMES:
        if dest in ("d4", "g7", "a7", "g1") or s.cells[NAMES.index(dest)][0] == "7":
            continue
        there = position(JOKER_BOARD, red=dest, black="g7")
        assert (dest in moves) == ("d4" in romeo_moves(there)), dest
    assert "does not" in refused(s, "red", "d7")
    assert "holds a Joker" in refused(s, "red", "e5")


def test_joker_moves_match_the_forward_rule_in_random_positions() -> None:
    """Every Joker move from random play, checked against the forward rule of
    the card at each square: C is a destination iff a Romeo on C could move
    to the Joker now."""
    rng = random.Random(5)
    checked = 0
    for seed in range(400):
        s = GAME.deal(seed, {}, "red")
        while GAME.to_move(s) and checked < 60:
            t = s.turn
            r, o = s.romeos[t], s.romeos[1 - t]
            if s.cells[r][0] == "7" and rng.random() < 0.5:
                checked += 1
                lines = GAME.to_text(s).split("\n")
                for c in range(49):
                    if c in (r, o) or s.cells[c][0] in "7Q":
                        continue
                    seat = ("red", "black")[t]
                    moved = [ln for ln in lines if not ln.startswith(("history:", seat + ":"))]
                    moved.insert(1, f"{seat}: {NAMES[c]}")
                    there = GAME.from_text("\n".join(moved))
                    assert (NAMES[c] in s.moves) == (NAMES[r] in romeo_moves(there)), (seed, c)
            s = GAME.apply(s, s.mover, rng.choice(s.moves))
    assert checked == 60


def test_queens_are_never_origins() -> None:
    # Black on a Joker next to QS (his Juliet): the Queen is no origin.
    s = position({"b6": "7s"}, red="d4", black="b6", turn="black")
    assert "a7" not in romeo_moves(s)
    assert "holds a Queen" in refused(s, "black", "a7")
    s = position({"f2": "7s"}, red="f2", black="d4")
    assert "g1" not in romeo_moves(s)


def test_joker_back_to_the_square_you_came_from() -> None:
    s = position({"d1": "3H", "d4": "7s", "a1": "KH"}, red="d1", black="a1")
    s = GAME.apply(s, "red", "d4")
    s = GAME.apply(s, "black", "a2")
    assert "d1" in romeo_moves(s)  # the 3♥ reaches the Joker by 3 down
    assert GAME.describe(s, "red", "d1") == "Red from a Joker: reverse of the 3♥'s 3 down, lands on 3♥"
    # Came from a King: it reaches back too.
    s = position({"c3": "KS", "d4": "7s", "a1": "KH"}, red="c3", black="a1")
    s = GAME.apply(s, "red", "d4")
    s = GAME.apply(s, "black", "a2")
    assert "c3" in romeo_moves(s)
    # Unless something changed: Black steps onto the 3♥'s path back.
    s = position({"d1": "3H", "d4": "7s", "c2": "KH"}, red="d1", black="c2")
    s = GAME.apply(s, "red", "d4")
    s = GAME.apply(s, "black", "d2")
    assert "d1" not in romeo_moves(s)


def test_joker_reverse_path_is_blocked_by_the_opponent() -> None:
    # 5♥ at d6 reaches d4 by 5 down: d7 d1 d2 d3 d4. Black on d2 blocks it.
    board = {"d6": "5H", "d4": "7s"}
    assert "d6" in romeo_moves(position(board, red="d4", black="a1"))
    s = position(board, red="d4", black="d2")
    assert "d6" not in romeo_moves(s)
    assert refused(s, "red", "d6") == "the Black Romeo blocks the 5♥'s path to your Joker (5 down (wraps))"
    # The opponent standing on the origin: never a landing square.
    s = position(board, red="d4", black="d6")
    assert "d6" not in romeo_moves(s)
    assert "you can never land on it" in refused(s, "red", "d6")


# ---- landing rules ---------------------------------------------------------------------


def test_never_land_on_the_opponent_or_your_starting_queen() -> None:
    s = position({"d2": "2H"}, red="d2", black="d4")
    assert romeo_moves(s) == {"d7"}  # 2 down would land on Black; 2 up wraps to d7
    assert "d4" not in s.moves and refused(s, "red", "d4") == (
        "the Black Romeo is on d4: you can never land on it")
    s = position({"c3": "KS"}, red="c3", black="d4")
    assert "d4" not in romeo_moves(s) and len(romeo_moves(s)) == 7
    # Own starting Queen: Red on the A♥ at a6 may go up but not down to a7.
    s = position({"a6": "AH"}, red="a6", black="g7")
    assert romeo_moves(s) == {"a5"}
    assert refused(s, "red", "a7") == "you can never land again on your starting Queen, the Q♠ at a7"
    s = position({"g2": "AD"}, red="a1", black="g2", turn="black")
    assert romeo_moves(s) == {"g3"}
    s = position({"b6": "KH"}, red="b6", black="g7")
    assert "a7" not in romeo_moves(s)
    # Passing over your own Queen is allowed: 2♥ at a6 goes 2 down to a1.
    s = position({"a6": "2H"}, red="a6", black="g7")
    assert romeo_moves(s) == {"a4", "a1"}


def test_juliet_occupied_by_an_unopened_opponent() -> None:
    s = position({"f2": "KS"}, red="f2", black="g1")
    assert "g1" not in s.moves
    assert "you can never land on it" in refused(s, "red", "g1")


# ---- swaps -----------------------------------------------------------------------------

SWAP_BOARD = {"b2": "7s", "b6": "7h", "f4": "7c", "b5": "4C", "e2": "9D", "g2": "KH",
              "b1": "3D", "c3": "5S", "d4": "KC", "d6": "KD"}


def test_swap_same_row_or_column_any_distance() -> None:
    s = position(SWAP_BOARD, red="d4", black="d6")
    sw = swaps(s)
    assert {"swap b2 e2", "swap b2 g2", "swap a2 b2", "swap b1 b2", "swap b2 b5", "swap b2 b7"} <= sw
    assert "swap b2 c3" not in sw
    assert refused(s, "red", "swap b2 c3") == "b2 and c3 are not in the same row or column"
    # Exactly the 12 line squares less Queens, Jokers and Romeos.
    b2 = {m for m in sw if "b2" in m.split()}
    assert len(b2) == 12 - 1  # b6 is a Joker
    after = GAME.apply(s, "red", "swap b2 e2")
    assert after.cells[NAMES.index("b2")] == "9D" and after.cells[NAMES.index("e2")] == "7s"
    assert GAME.view(after, None)["explain"] == "Red swaps the Joker at b2 with the 9♦ at e2"
    assert GAME.view(after, None)["last"] == {"seat": "red", "kind": "swap", "squares": ["b2", "e2"]}


def test_swap_never_a_queen_a_romeo_square_or_two_jokers() -> None:
    s = position({"a1": "7s", "b6": "7h", "f4": "7c", "f2": "3C"}, red="f2", black="d6")
    assert refused(s, "red", "swap a1 a7") == "the Q♠ is a Queen and never swaps"
    assert refused(s, "red", "swap a1 g1") == "the Q♥ is a Queen and never swaps"
    assert "swap b6 f6" in s.moves
    assert refused(s, "red", "swap b6 d6") == (
        "the Black Romeo stands on d6: a card with a Romeo on it never swaps")
    assert refused(s, "red", "swap f2 f4") == (
        "your Romeo stands on f2: a card with a Romeo on it never swaps")
    s2 = position({"a1": "7s", "b6": "7h", "b1": "7c"}, red="c3", black="d6")
    assert refused(s2, "red", "swap a1 b1") == "a Joker never swaps with another Joker"
    assert refused(s2, "red", "swap c3 c5") == "a swap needs a Joker: neither c3 nor c5 holds one"
    # A Joker under a Romeo never swaps either.
    s3 = position({"c3": "7s", "b6": "7h", "f4": "7c"}, red="c3", black="d6")
    assert not any("c3" in m.split() for m in swaps(s3))


def test_swap_lock_on_the_two_cards_of_the_most_recent_swap() -> None:
    s = position(SWAP_BOARD, red="d4", black="d6")
    s = GAME.apply(s, "red", "swap b2 b5")  # the Joker goes to b5, the 4♣ to b2
    assert GAME.view(s, None)["locked"] == ["b2", "b5"]
    assert not any({"b2", "b5"} & set(m.split()) for m in swaps(s))
    msg = refused(s, "black", "swap b5 e5")
    assert msg == "the Joker at b5 was in the most recent swap and stays locked until another swap"
    assert "4♣ at b2 was in the most recent swap" in refused(s, "black", "swap b2 b6")
    # The lock holds through Romeo moves, for both players.
    s = GAME.apply(s, "black", "c7")
    assert not any({"b2", "b5"} & set(m.split()) for m in swaps(s))
    assert "locked" in refused(s, "red", "swap b5 e5")
    # A new swap moves the lock.
    s = GAME.apply(s, "red", "swap b6 d6")
    assert GAME.view(s, None)["locked"] == ["b6", "d6"]
    assert "swap b5 e5" in s.moves and "swap b2 b5" in s.moves


def test_a_romeo_may_land_on_a_locked_card() -> None:
    s = position({"b2": "7s", "b5": "4C", "b6": "7h", "f4": "7c", "e5": "3S", "g7": "KH"},
                 red="e5", black="g7")
    s = GAME.apply(s, "red", "swap b2 b5")
    s = GAME.apply(s, "black", "g6")
    assert "b5" in s.moves  # 3 left from e5 lands on the locked Joker
    s = GAME.apply(s, "red", "b5")
    assert GAME.view(s, None)["locked"] == ["b2", "b5"]


# ---- winning, passing and draws (ruling 5) ---------------------------------------------


def test_exact_landing_wins() -> None:
    s = position({"g4": "3H"}, red="g4", black="a1")
    assert "g1" in s.moves
    won = GAME.apply(s, "red", "g1")
    assert GAME.to_move(won) == () and GAME.legal_moves(won, "black") == ()
    out = GAME.outcome(won)
    assert out is not None and out.winners == ("red",)
    assert out.points("red") == 1 and out.points("black") == 0
    assert out.scores[0].lines[0].detail == "won the game"
    assert GAME.match_over({}, (out,))
    assert GAME.view(won, None)["explain"].endswith("lands on Q♥ and reaches Juliet")
    assert refused(won, "black", "a2") == "the game is over"


def test_passing_over_juliet_does_not_win() -> None:
    s = position({"g4": "4H"}, red="g4", black="a1")
    assert romeo_moves(s) == {"g7", "g1"}  # 4 down wraps onto Juliet: that one wins
    after = GAME.apply(s, "red", "g7")  # 4 up: g3 g2 g1 g7, over Juliet
    assert GAME.view(after, None)["last"]["path"] == ["g4", "g3", "g2", "g1", "g7"]
    assert GAME.outcome(after) is None


def test_black_wins_from_a_king_and_a_jack() -> None:
    s = position({"b6": "KS"}, red="e4", black="b6", turn="black")
    out = GAME.outcome(GAME.apply(s, "black", "a7"))
    assert out is not None and out.winners == ("black",) and out.points("black") == 1
    s = position({"c6": "JS"}, red="e4", black="c6", turn="black")
    out = GAME.outcome(GAME.apply(s, "black", "a7"))
    assert out is not None and out.winners == ("black",)


def test_third_repetition_is_a_draw() -> None:
    s = position({"c3": "KS", "c4": "KC", "e5": "KH", "e4": "KD"}, red="c3", black="e5")
    cycle = [("red", "c4"), ("black", "e4"), ("red", "c3"), ("black", "e5")]
    for n, (seat, move) in enumerate(cycle * 2, 1):
        assert GAME.outcome(s) is None
        s = GAME.apply(s, seat, move)
        assert GAME.view(s, None)["repetitions"] == 1 + n // 4
    out = GAME.outcome(s)
    assert out is not None and out.winners == () and "third time" in out.reason
    assert [sc.points for sc in out.scores] == [0, 0]
    assert GAME.to_move(s) == ()


def test_repetition_counts_the_lock_and_treats_jokers_alike() -> None:
    a = position({"b2": "7s", "b6": "7h", "f4": "7c"}, red="d4", black="d6")
    b = position({"b2": "7h", "b6": "7s", "f4": "7c"}, red="d4", black="d6")
    assert a.key == b.key
    c = position({"b2": "7s", "b6": "7h", "f4": "7c", "b1": "3D"}, red="d4", black="d6", lock="b1 b2")
    d = position({"b2": "7s", "b6": "7h", "f4": "7c", "b1": "3D"}, red="d4", black="d6")
    assert c.key != d.key


def test_repetition_from_a_recorded_history() -> None:
    hist = "c3-c4 e5-e4 c4-c3 e4-e5 c3-c4 e5-e4 c4-c3"
    s = position({"c3": "KS", "c4": "KC", "e5": "KH", "e4": "KD"}, red="c3", black="e4",
                 turn="black", history=hist)
    assert GAME.outcome(s) is None
    s = GAME.apply(s, "black", "e5")
    out = GAME.outcome(s)
    assert out is not None and out.winners == ()


def test_turn_limit_is_a_draw_unless_the_last_turn_wins() -> None:
    s = position({"g4": "3H"}, red="g4", black="a1", turns=TURN_LIMIT - 1)
    drawn = GAME.apply(s, "red", "g7")  # 3 down: g5 g6 g7
    out = GAME.outcome(drawn)
    assert out is not None and out.winners == () and "300 turns" in out.reason
    won = GAME.apply(s, "red", "g1")
    assert GAME.outcome(won) is not None and GAME.outcome(won).winners == ("red",)  # type: ignore[union-attr]


# Both Romeos on Jokers with no origins and the third Joker locked: neither
# player has any legal action.
STUCK = {
    "d4": "7s", "a1": "7h", "g7": "7c", "f7": "9S",
    "d1": "2S", "d2": "3S", "d3": "4S", "d5": "5S", "d6": "6S", "d7": "8S",
    "a2": "2C", "a3": "3C", "a4": "2H", "a5": "4C", "a6": "5C",
    "b4": "3H", "c4": "4H", "e4": "5H", "f4": "6H", "g4": "8H",
    "b1": "AH", "c1": "AD", "e1": "2D", "f1": "3D",
    "g2": "KS", "g3": "KH", "g5": "KD", "g6": "KC",
    "e7": "JS", "c7": "JH", "b7": "JD", "f6": "JC",
}


def test_pass_only_when_nothing_else_is_legal() -> None:
    s = position(STUCK, red="d4", black="a1", lock="f7 g7")
    assert GAME.legal_moves(s, "red") == ("pass",)
    assert refused(s, "red", "d1").startswith("from a Joker")
    s = GAME.apply(s, "red", "pass")
    assert s.turns == 11 and GAME.to_move(s) == ("black",)
    assert GAME.view(s, None)["explain"] == "Red has no legal action and passes"
    assert GAME.legal_moves(s, "black") == ("pass",)
    # Both stuck: passing back and forth repeats the position, a draw.
    s = GAME.apply(s, "black", "pass")
    s = GAME.apply(s, "red", "pass")
    s = GAME.apply(s, "black", "pass")
    out = GAME.outcome(s)
    assert out is not None and out.winners == () and "third time" in out.reason
    fresh = position(SWAP_BOARD, red="d4", black="d6")
    assert refused(fresh, "red", "pass") == "you may pass only when you have no other legal action"


# ---- seats, errors and notation --------------------------------------------------------


def test_wrong_seat_and_unknown_seat() -> None:
    s = GAME.deal(3, {}, "red")
    assert refused(s, "black", "a6") == "it is red's turn, not black's"
    assert "not a seat" in refused(s, "green", "a6")
    assert GAME.legal_moves(s, "black") == ()
    assert GAME.apply(s, "red", "a6").romeos[0] == NAMES.index("a6")


@pytest.mark.parametrize("bad", ["", "z9", "h1", "a0", "a8", "A1", "e3 ", "swap", "swap a1",
                                 "swap a1 a1", "swap b5 b2", "swap  b2 b5", "SWAP b2 b5",
                                 "Pass", "resign", "a1-a2", "swap b2 b5 c1"])
def test_malformed_moves(bad: str) -> None:
    s = GAME.deal(3, {}, "red")
    before = GAME.to_text(s)
    with pytest.raises(MalformedMove):
        GAME.apply(s, "red", bad)
    with pytest.raises(MalformedMove):
        GAME.apply(s, "black", bad)  # notation is checked first
    assert GAME.to_text(s) == before


def test_reverse_order_swap_names_the_canonical_spelling() -> None:
    s = position(SWAP_BOARD, red="d4", black="d6")
    with pytest.raises(MalformedMove, match="'swap b2 e2'"):
        GAME.apply(s, "red", "swap e2 b2")
    with pytest.raises(MalformedMove, match="'swap a6 c6'"):
        GAME.apply(s, "red", "swap c6 a6")


def test_swaps_are_listed_in_canonical_order() -> None:
    rng = random.Random(9)
    for seed in range(40):
        s = GAME.deal(seed, {}, "red")
        for _ in range(rng.randrange(2, 60)):
            if not GAME.to_move(s):
                break
            for m in swaps(s):
                a, b = m.split()[1:]
                assert (a[0], int(a[1])) < (b[0], int(b[1]))
            s = GAME.apply(s, s.mover, rng.choice(s.moves))


# ---- view and text ---------------------------------------------------------------------


def test_view_fields() -> None:
    s = GAME.deal(5, {}, "red")
    v = GAME.view(s, None)
    assert v == GAME.view(s, "red") == GAME.view(s, "black")  # nothing is hidden
    assert (v["width"], v["height"], len(v["cells"])) == (7, 7, 49)
    assert sum(1 for t in v["cells"] if re.fullmatch("7[shdc]", t)) == 3
    assert len(v["jokers"]) == 3
    assert v["homes"] == {"red": "a7", "black": "g1"}
    assert v["turn"] == "red" and v["last"] is None and v["explain"] == "" and v["locked"] == []
    assert v["turns"] == 0 and v["turn_limit"] == TURN_LIMIT and v["repetitions"] == 1
    s = GAME.apply(s, "red", "b6")
    v = GAME.view(s, "black")
    assert v["last"]["path"] == ["a7", "b6"] and v["explain"].startswith("Red from Q♠: first step up-right")
    assert v["opened"] == {"red": True, "black": False} and v["turns"] == 1


def test_text_round_trip_examples_and_errors() -> None:
    s = position(SWAP_BOARD, red="d4", black="d6", lock="b1 b2", turns=57)
    assert GAME.from_text(GAME.to_text(s)) == s
    good = text(layout({}), red="c3", black="e5")
    GAME.from_text(good)
    bad_cases = {
        "two Romeos": text(layout({}), red="c3", black="c3"),
        "QC": text(layout({"c3": "QC"}), red="c4", black="e5"),
        "face-up Seven": text(layout({"c3": "7D"}), red="c4", black="e5"),
        "queen square": text(layout({}), red="a7", black="a7"),
        "red on black home": text(layout({}), red="g1", black="e5", turn="red"),
        "bad lock": text(layout({"c3": "4S", "c5": "5S"}), red="c4", black="e5", lock="c3 c5"),
        "lock order": text(layout({"c3": "7s", "c5": "5S"}), red="c4", black="e5", lock="c5 c3"),
        "turns": text(layout({}), red="c4", black="e5", turns=301),
        "history": text(layout({}), red="c4", black="e5", history="c3-c5"),
        "history too long": text(layout({}), red="c4", black="e5", turns=0, history="c3-c4"),
    }
    for name, t in bad_cases.items():
        with pytest.raises(ValueError):
            GAME.from_text(t)
            pytest.fail(name)
    with pytest.raises(ValueError):
        GAME.from_text(good.replace("game: romeo-and-juliet", "game: get-stuck"))


def test_the_notation_doc_example() -> None:
    """docs/notation/romeo-and-juliet.md: its position text and view are what
    the engine gives after those eight turns of the deal with seed 2."""
    doc = (Path(__file__).resolve().parents[2] / "docs/notation/romeo-and-juliet.md").read_text()
    blocks = re.findall(r"```(\w*)\n(.*?)```", doc, re.S)
    position_text = next(b for lang, b in blocks if b.startswith("game: romeo-and-juliet"))
    view_json = next(b for lang, b in blocks if lang == "json")
    s = GAME.deal(2, {}, "red")
    for move in ["b7", "g2", "swap e1 e7", "swap c1 c5", "swap e1 e4", "swap b1 c1", "g7", "b2"]:
        s = GAME.apply(s, s.mover, move)
    assert GAME.to_text(s) == position_text
    assert GAME.from_text(position_text) == s
    assert GAME.view(s, "red") == json.loads(view_json)
    assert romeo_moves(s) == {"c7", "d7"}
    assert {m.split()[1] for m in swaps(s)} | {m.split()[2] for m in swaps(s)} >= {"e1", "e7"}
    assert not any("b1" in m.split() or "c1" in m.split() for m in swaps(s))


def test_text_round_trip_over_random_play() -> None:
    rng = random.Random(11)
    for seed in range(25):
        s = GAME.deal(seed, {}, "red")
        while True:
            if rng.random() < 0.15 or not GAME.to_move(s):
                back = GAME.from_text(GAME.to_text(s))
                assert back == s
                assert back.moves == s.moves
                assert GAME.outcome(back) == GAME.outcome(s)
                assert GAME.view(back, None) == GAME.view(s, None)
            if not GAME.to_move(s):
                break
            s = GAME.apply(s, s.mover, rng.choice(s.moves))


# ---- random play -----------------------------------------------------------------------

_SQ = re.compile(r"^[a-g][1-7]$")


def is_notation(move: str) -> bool:
    """An independent reading of the notation: a square, pass, or a swap of
    two squares in (column, row) order."""
    if move == "pass" or _SQ.match(move):
        return True
    parts = move.split(" ")
    if len(parts) != 3 or parts[0] != "swap" or not all(_SQ.match(p) for p in parts[1:]):
        return False
    a, b = parts[1], parts[2]
    return (a[0], int(a[1])) < (b[0], int(b[1]))


def candidates(rng: random.Random) -> list[str]:
    sq = [f"{c}{r}" for c in "abcdefgh" for r in range(0, 9)]
    return [
        rng.choice(sq),
        f"swap {rng.choice(sq)} {rng.choice(sq)}",
        f"swap {rng.choice(NAMES)} {rng.choice(NAMES)}",
        rng.choice(["pass", "", "xx", "swap", "Swap a1 a2", "a1 ", "e4e5"]),
    ]


@pytest.mark.slow
def test_random_play_2000_games() -> None:
    rng = random.Random(2024)
    ends: dict[str, int] = {}
    for seed in range(2000):
        s = GAME.deal(seed, {}, "red")
        while GAME.to_move(s):
            seat = GAME.to_move(s)[0]
            legal = GAME.legal_moves(s, seat)
            assert legal and GAME.legal_moves(s, "black" if seat == "red" else "red") == ()
            assert (legal == ("pass",)) or "pass" not in legal
            if s.turns % 37 == 0:
                for c in candidates(rng):
                    if c in legal:
                        continue
                    expected: type[MoveError] = IllegalMove if is_notation(c) else MalformedMove
                    with pytest.raises(MoveError) as err:
                        GAME.apply(s, seat, c)
                    assert type(err.value) is expected, (c, err.value)
            s = GAME.apply(s, seat, rng.choice(legal))
        out = GAME.outcome(s)
        assert out is not None and s.turns <= TURN_LIMIT
        ends[s.end] = ends.get(s.end, 0) + 1
    assert ends.get("won", 0) > 0 and ends.get("limit", 0) > 0
