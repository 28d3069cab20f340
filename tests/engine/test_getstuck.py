"""Get Stuck and Get Stuck for Four: every ruling (RULINGS.md, Get Stuck and
Get Stuck for Four), the referee choices of the rules pages, errors, position
text and random play checked against an independent move generator and scorer
written here."""

from __future__ import annotations

import itertools
import random
from dataclasses import replace
from typing import Any

import pytest

from engine.base import IllegalMove, MalformedMove, MoveError, OptionError
from engine.getstuck import GetStuckState
from engine.match import Match
from engine.registry import get_game

TWO = get_game("get-stuck")
FOUR = get_game("get-stuck-4")

# The test's own deck and squares, built independently of the engine.
DECK = [r + s for s in "SHDC" for r in "A23456789JQK"]
SQUARES = [f"{c}{r}" for r in range(1, 8) for c in "abcdefg"]
VALUE = {"A": 1, **{str(n): n for n in range(2, 10)}}
SUITS = {"red": "HD", "black": "SC", "N": "S", "E": "H", "S": "C", "W": "D"}
PARTNERS = {"N-S": ("N", "S"), "E-W": ("E", "W")}
ALL_UP = "N+ E+ S+ W+"


def pos(game: Any, grid: str, turn: str, last: str = "-", indicators: str | None = None) -> GetStuckState:
    """A position built through ``from_text``. ``grid`` is 7 rows of 7 tokens:
    cards (upper case face up, lower case face down), ``..`` for the gap and
    ``??`` for a filler: an unused card, face down."""
    toks = grid.split()
    assert len(toks) == 49
    used = {t.upper() for t in toks if t not in ("..", "??")}
    spare = iter(c for c in DECK if c not in used)
    cells = [next(spare).lower() if t == "??" else t for t in toks]
    rows = "\n".join(" ".join(cells[r * 7:r * 7 + 7]) for r in range(7))
    head = f"game: {game.info.id}\nturn: {turn}\nlast: {last}\n"
    if game is FOUR:
        head += f"indicators: {indicators or ALL_UP}\n"
    return game.from_text(head + "\n" + rows + "\n")


def opening_layout(in_line: list[str]) -> str:
    """A grid with no card face down, the gap at d4, the first 24 cards of
    ``in_line`` on the 24 squares in line with d4 and the rest of the deck
    elsewhere."""
    on = iter(in_line)
    off = iter([c for c in DECK if c not in in_line[:24]])
    cells = []
    for sq in SQUARES:
        dc, dr = ord(sq[0]) - ord("d"), int(sq[1]) - 4
        if sq == "d4":
            cells.append("..")
        else:
            cells.append(next(on) if dc == 0 or dr == 0 or abs(dc) == abs(dr) else next(off))
    return " ".join(cells)


def legal(game: Any, state: GetStuckState) -> set[str]:
    """The legal moves of the seat to move, as a set."""
    seats = game.to_move(state)
    return set(game.legal_moves(state, seats[0])) if seats else set()


# ---- the test's own rules: moves and scores ---------------------------------------------------


def oracle_moves(cells: tuple[str, ...], gap: int, suits: str, four: bool) -> set[str]:
    """Legal moves by the rulings, computed square by square from geometry."""
    gc, gr = gap % 7, gap // 7
    ortho: set[str] = set()
    diag: set[str] = set()
    for i, card in enumerate(cells):
        if card == ".." or card.islower() or card[1] not in suits:
            continue
        dc, dr = i % 7 - gc, i // 7 - gr
        if dc and dr and abs(dc) != abs(dr):
            continue
        sc, sr = (dc > 0) - (dc < 0), (dr > 0) - (dr < 0)
        between = [cells[(gr + k * sr) * 7 + gc + k * sc] for k in range(1, max(abs(dc), abs(dr)))]
        if card[0] not in "JQK" and any(t.islower() for t in between):
            continue
        (diag if dc and dr else ortho).add(SQUARES[i])
    if four:
        return (ortho | diag) or {"pass"}
    return ortho or diag


def oracle_points(cells: tuple[str, ...], suits: str, won: bool) -> int:
    """Face-up numerals at face value, face-up courts +10 (won) or −10."""
    total = 0
    for card in cells:
        if card != ".." and card.isupper() and card[1] in suits:
            total += VALUE.get(card[0], 10 if won else -10)
    return total


# ---- Get Stuck for two -----------------------------------------------------------------------


def test_deal_is_48_cards_face_up_without_tens_and_the_gap_at_d4() -> None:
    """Ruling 1."""
    s = TWO.deal(7, {"deals": 2}, "black")
    assert s.cells[SQUARES.index("d4")] == ".."
    assert sorted(c for c in s.cells if c != "..") == sorted(DECK)
    assert all(c.isupper() for c in s.cells if c != "..")
    assert TWO.to_move(s) == ("black",)
    assert TWO.deal(7, {}, "black") == s
    assert TWO.deal(8, {}, "black").cells != s.cells
    assert TWO.deal(7, {}, "red").cells == s.cells


def test_orthogonal_moves_at_any_distance_passing_face_up_cards() -> None:
    """Rulings 2 and 3: any distance, over face-up cards of either colour."""
    grid = """
    ?? ?? ?? 5H ?? ?? ??
    ?? ?? ?? KS ?? ?? ??
    ?? ?? ?? 2C ?? ?? ??
    AH 3S 7D .. 9C 8S 6H
    ?? ?? ?? ?? ?? ?? ??
    ?? ?? ?? ?? ?? ?? ??
    ?? ?? ?? ?? ?? ?? ??
    """
    red = pos(TWO, grid, "red")
    assert legal(TWO, red) == {"d1", "a4", "c4", "g4"}
    assert legal(TWO, pos(TWO, grid, "black")) == {"d2", "d3", "b4", "e4", "f4"}
    after = TWO.apply(red, "red", "d1")
    assert after.cells[SQUARES.index("d4")] == "5h"  # moved and turned face down
    assert after.cells[SQUARES.index("d1")] == ".."  # its old square is the gap
    assert TWO.to_move(after) == ("black",)
    assert TWO.view(after, None)["last"] == {"from": "d1", "to": "d4"}
    # The 5♥, face down now, never moves again, though in line with the gap at d1;
    # the face-up K♠ at d2 passes nothing, the 2♣ at d3 passes the K♠.
    assert legal(TWO, after) == {"d2", "d3"}
    with pytest.raises(IllegalMove, match="the 5♥ at d4 is face down and can never move again"):
        TWO.apply(after, "black", "d4")


def test_a_numeral_may_not_pass_a_face_down_card_but_a_court_may() -> None:
    """Ruling 3, in a row and in a column."""
    grid = """
    ?? ?? ?? QD ?? ?? ??
    ?? ?? ?? ?? ?? ?? ??
    ?? ?? ?? 4S ?? ?? ??
    KH 4H jc .. 5C ?? ??
    ?? ?? ?? ?? ?? ?? ??
    ?? ?? ?? ?? ?? ?? ??
    ?? ?? ?? 3H ?? ?? ??
    """
    s = pos(TWO, grid, "red")
    assert legal(TWO, s) == {"a4", "d1"}
    with pytest.raises(IllegalMove, match=r"4♥ at b4 is a numeral and cannot pass the face-down card at c4"):
        TWO.apply(s, "red", "b4")
    with pytest.raises(IllegalMove, match=r"3♥ at d7 .* cannot pass the face-down card at d5"):
        TWO.apply(s, "red", "d7")
    jumped = TWO.apply(s, "red", "a4")
    assert jumped.cells[SQUARES.index("d4")] == "kh"
    assert jumped.cells[SQUARES.index("a4")] == ".."


def test_diagonal_moves_are_forbidden_while_an_orthogonal_move_exists() -> None:
    """Ruling 4: orthogonal priority."""
    grid = """
    ?? ?? ?? ?? ?? ?? ??
    ?? ?? ?? ?? ?? QH ??
    ?? ?? 9D ?? ?? ?? ??
    ?? ?? 8S .. 3C 5S 2D
    ?? ?? 4D ?? ?? ?? ??
    ?? ?? ?? ?? ?? ?? ??
    ?? ?? ?? ?? ?? ?? ??
    """
    s = pos(TWO, grid, "red")
    assert legal(TWO, s) == {"g4"}  # three squares away, over the face-up 3♣ and 5♠
    assert TWO.view(s, "red")["diagonal"] is False
    with pytest.raises(IllegalMove, match="diagonal to the gap: you must move a card in the gap's row or"):
        TWO.apply(s, "red", "c3")
    with pytest.raises(IllegalMove, match="Q♥ at f2 lies diagonal to the gap"):
        TWO.apply(s, "red", "f2")  # a court jumping the face-down e3 is refused for the same reason


def test_diagonal_moves_only_when_no_orthogonal_move_with_the_same_passing_rule() -> None:
    """Ruling 4: diagonals in all four directions, numerals blocked, courts jump."""
    grid = """
    ?? ?? ?? ?? ?? ?? 9H
    ?? 5D ?? ?? ?? QH ??
    ?? ?? 2S ?? ?? ?? ??
    ?? ?? ?? .. 7S ?? ??
    ?? ?? ?? ?? 4D ?? ??
    ?? 3H ?? ?? ?? ?? ??
    ?? ?? ?? ?? ?? ?? ??
    """
    s = pos(TWO, grid, "red")
    assert legal(TWO, s) == {"b2", "f2", "e5"}
    assert TWO.view(s, None)["diagonal"] is True
    with pytest.raises(IllegalMove, match="9♥ at g1 is a numeral and cannot pass the face-down card at e3"):
        TWO.apply(s, "red", "g1")
    with pytest.raises(IllegalMove, match="cannot pass the face-down card at c5"):
        TWO.apply(s, "red", "b6")
    after = TWO.apply(s, "red", "f2")
    assert after.cells[SQUARES.index("d4")] == "qh" and after.gap == SQUARES.index("f2")


def test_a_blocked_numeral_does_not_count_as_an_orthogonal_move() -> None:
    """Ruling 4: priority is decided after the passing rule."""
    grid = """
    ?? ?? ?? ?? ?? ?? ??
    ?? ?? ?? ?? ?? ?? ??
    ?? ?? 7H ?? ?? ?? ??
    6H ?? ?? .. ?? ?? ??
    ?? ?? ?? ?? ?? ?? ??
    ?? ?? ?? ?? ?? ?? ??
    ?? ?? ?? ?? ?? ?? ??
    """
    s = pos(TWO, grid, "red")
    assert legal(TWO, s) == {"c3"}
    assert TWO.view(s, "black")["diagonal"] is True
    with pytest.raises(IllegalMove, match="cannot pass"):
        TWO.apply(s, "red", "a4")
    # A court in the same place can move, so it does count: no diagonal then.
    court = pos(TWO, grid.replace("6H", "KH"), "red")
    assert legal(TWO, court) == {"a4"}
    assert TWO.view(court, "black")["diagonal"] is False


# The seed's example: Red numerals 52 and two courts, Black numerals 53 and two
# courts, everything in line with the gap (a1) face down, so either is stuck.
SEED_EXAMPLE = """
.. ?? ?? ?? ?? ?? ??
?? ?? 9H 8H 7H 6H 5H
?? 4H ?? 3H 2H 8D KH
?? QD 9S ?? 8S 7S 6S
?? 5S 4S 3S ?? 2S 9C
?? KS JC ?? ?? ?? ??
?? ?? ?? ?? ?? ?? ??
"""


@pytest.mark.parametrize(
    ("stuck", "winner", "red", "black"),
    [("black", "red", 72, 33), ("red", "black", 32, 73)],
)
def test_the_seed_scoring_example(stuck: str, winner: str, red: int, black: int) -> None:
    """Rulings 5 and 6: Red last → 72 to 33, Black last → 73 to 32."""
    s = pos(TWO, SEED_EXAMPLE, stuck, last="b1")
    assert TWO.to_move(s) == ()
    assert TWO.legal_moves(s, stuck) == ()
    out = TWO.outcome(s)
    assert out is not None
    assert out.winners == (winner,)
    assert (out.points("red"), out.points("black")) == (red, black)
    expected = f"{stuck.capitalize()} is stuck, so {winner.capitalize()} moved last and wins the deal."
    assert out.reason == expected
    for side in out.scores:
        assert sum(line.points for line in side.lines) == side.points
        assert side.lines[0].points == (52 if side.side == "red" else 53)
        assert side.lines[1].points == (20 if side.side == winner else -20)
        assert "2 face-up courts" in side.lines[1].detail


def test_the_last_mover_wins_whatever_the_points() -> None:
    """Ruling 5: Red is stuck with 30 points face up, Black wins with 2."""
    grid = """
    .. ?? ?? ?? ?? ?? ??
    ?? ?? 9H 8H ?? ?? ??
    ?? 7H ?? ?? ?? ?? ??
    ?? 6H ?? ?? ?? ?? ??
    ?? ?? 2S ?? ?? ?? ??
    ?? ?? ?? ?? ?? ?? ??
    ?? ?? ?? ?? ?? ?? ??
    """
    s = pos(TWO, grid, "red", last="a2")
    out = TWO.outcome(s)
    assert out is not None and out.winners == ("black",)
    assert (out.points("red"), out.points("black")) == (30, 2)
    with pytest.raises(IllegalMove, match="the deal is over"):
        TWO.apply(s, "red", "b1")
    with pytest.raises(IllegalMove, match="the deal is over"):
        TWO.apply(s, "black", "c5")


def test_a_player_stuck_on_the_very_first_move_loses_the_deal() -> None:
    """Referee choice (rules page): nobody has moved, the other player wins
    and both score as usual. All 24 squares in line with d4 hold black cards."""
    grid = opening_layout([c for c in DECK if c[1] in "SC"])
    s = pos(TWO, grid, "red")
    assert TWO.to_move(s) == () and TWO.legal_moves(s, "red") == ()
    out = TWO.outcome(s)
    assert out is not None and out.winners == ("black",)
    assert out.reason == "Red is stuck on the first move, so Black wins the deal."
    # Every card is face up: each side has numerals A to 9 twice and 6 courts.
    assert out.points("black") == 2 * 45 + 60
    assert out.points("red") == 2 * 45 - 60
    # With Black to move instead, Black has 12 orthogonal moves.
    assert len(legal(TWO, pos(TWO, grid, "black"))) == 12


def test_turns_alternate_and_only_the_mover_may_play() -> None:
    """Convention: errors for a seat that is not awaited or unknown."""
    s = TWO.deal(3, {}, "red")
    move = TWO.legal_moves(s, "red")[0]
    assert TWO.legal_moves(s, "black") == ()
    with pytest.raises(IllegalMove, match="it is red's turn, not black's"):
        TWO.apply(s, "black", move)
    with pytest.raises(IllegalMove, match="it is red's turn, not N's"):
        TWO.apply(s, "N", move)
    after = TWO.apply(s, "red", move)
    assert TWO.to_move(after) == ("black",)
    assert TWO.legal_moves(after, "red") == ()


# ---- Get Stuck for Four ----------------------------------------------------------------------


def test_four_seats_suits_sides_and_indicators() -> None:
    """Four-player ruling 1."""
    assert FOUR.seats({}) == ("N", "E", "S", "W")
    assert FOUR.sides({}) == (("N-S", ("N", "S")), ("E-W", ("E", "W")))
    s = FOUR.deal(5, {}, "N")
    v = FOUR.view(s, "E")
    assert v["suits"] == {"N": "S", "E": "H", "S": "C", "W": "D"}
    assert v["indicators"] == {"N": True, "E": True, "S": True, "W": True}
    assert "diagonal" not in v
    assert sorted(c for c in s.cells if c != "..") == sorted(DECK)
    # Each seat moves only its own suit: the partner's suit is not its.
    for seat in "NESW":
        state = FOUR.deal(5, {}, seat)
        for move in FOUR.legal_moves(state, seat):
            if move != "pass":
                assert state.cells[SQUARES.index(move)][1] == SUITS[seat]


def test_four_turn_order_and_openers() -> None:
    """Four-player ruling 2: N → E → S → W, openers N, E, S, W."""
    assert [FOUR.starter({}, 99, k) for k in range(4)] == ["N", "E", "S", "W"]
    m = Match.new("get-stuck-4", {}, 12)
    openers = []
    rng = random.Random(0)
    while True:
        openers.append(m.state.mover)
        order = []
        while not m.deal_over:
            (seat,) = m.game.to_move(m.state)
            order.append(seat)
            m = m.play(seat, rng.choice(m.game.legal_moves(m.state, seat)))
        assert order == [("N", "E", "S", "W")[("NESW".index(openers[-1]) + k) % 4] for k in range(len(order))]
        if m.over:
            break
        m = m.next_deal()
    assert openers == ["N", "E", "S", "W"]


def test_four_moves_are_free_orthogonal_or_diagonal_with_the_passing_rule() -> None:
    """Four-player ruling 3: no orthogonal priority; numerals blocked, courts jump."""
    grid = """
    ?? ?? ?? ?? ?? ?? ??
    ?? ?? ?? ?? ?? 4S ??
    ?? ?? 7S 5S ?? ?? ??
    ?? ?? 2H .. 3C ?? ??
    ?? ?? ?? ?? ?? ?? ??
    ?? KS ?? ?? ?? ?? ??
    ?? ?? ?? 9S ?? ?? ??
    """
    s = pos(FOUR, grid, "N")
    assert legal(FOUR, s) == {"c3", "d3", "b6"}
    with pytest.raises(IllegalMove, match="4♠ at f2 is a numeral and cannot pass the face-down card at e3"):
        FOUR.apply(s, "N", "f2")
    with pytest.raises(IllegalMove, match="cannot pass the face-down card at d5"):
        FOUR.apply(s, "N", "d7")
    with pytest.raises(IllegalMove, match="3♣ at e4 is not yours: you play spades"):
        FOUR.apply(s, "N", "e4")
    diag = FOUR.apply(s, "N", "c3")
    assert diag.cells[SQUARES.index("d4")] == "7s" and FOUR.to_move(diag) == ("E",)
    assert FOUR.legal_moves(pos(FOUR, grid, "E"), "E") == ("c4",)
    assert FOUR.legal_moves(pos(FOUR, grid, "S"), "S") == ("e4",)
    assert FOUR.legal_moves(pos(FOUR, grid, "W"), "W") == ("pass",)


STUCK_N = """
?? ?? ?? ?? ?? ?? ??
?? ?? ?? ?? ?? ?? ??
?? ?? 7H ?? ?? ?? ??
?? 4S ?? .. 3C ?? ??
?? ?? ?? ?? 9D ?? ??
?? ?? ?? ?? ?? ?? ??
?? ?? ?? ?? ?? ?? ??
"""


def test_four_pass_only_when_stuck_and_the_indicator_goes_down() -> None:
    """Four-player ruling 4."""
    s = pos(FOUR, STUCK_N, "N")
    assert FOUR.legal_moves(s, "N") == ("pass",)
    with pytest.raises(IllegalMove, match="4♠ at b4 is a numeral and cannot pass the face-down card at c4"):
        FOUR.apply(s, "N", "b4")
    passed = FOUR.apply(s, "N", "pass")
    assert passed.indicators == (False, True, True, True)
    assert (passed.cells, passed.gap, passed.last) == (s.cells, s.gap, s.last)
    assert FOUR.to_move(passed) == ("E",)
    assert FOUR.view(passed, None)["indicators"]["N"] is False
    assert FOUR.describe(s, "N", "pass") == "North is stuck: indicator face down"
    # Stuck again on a later turn: the indicator is down already and stays so.
    again = replace(s, indicators=(False, True, True, True))
    assert FOUR.describe(again, "N", "pass") == "North is still stuck and passes"
    with pytest.raises(IllegalMove, match="you cannot pass while you have a legal move"):
        FOUR.apply(passed, "E", "pass")
    assert FOUR.legal_moves(passed, "E") == ("c3",)


def test_four_indicator_comes_up_again_on_a_later_move() -> None:
    """Four-player ruling 4: being stuck does not stop you moving later."""
    grid = STUCK_N.replace("4S", "KS")
    s = pos(FOUR, grid, "N", indicators="N- E+ S+ W+")
    assert FOUR.legal_moves(s, "N") == ("b4",)
    moved = FOUR.apply(s, "N", "b4")
    assert moved.indicators == (True, True, True, True)
    # Stuck again while already down: it stays down and the turn passes on.
    again = FOUR.apply(pos(FOUR, STUCK_N, "N", indicators="N- E+ S+ W+"), "N", "pass")
    assert again.indicators == (False, True, True, True) and FOUR.to_move(again) == ("E",)
    # Moving while up leaves everything up.
    up = FOUR.apply(pos(FOUR, grid, "N"), "N", "b4")
    assert up.indicators == (True, True, True, True)


def test_four_deal_ends_the_moment_one_partnership_has_both_indicators_down() -> None:
    """Four-player ruling 5."""
    # One indicator down on each side: play goes on.
    s = pos(FOUR, STUCK_N.replace("3C", "3S"), "W", indicators="N- E- S+ W+")
    assert FOUR.to_move(s) == ("W",) and FOUR.outcome(s) is None
    # S is stuck while N is down: the deal ends at once, though W could move.
    grid = STUCK_N.replace("3C", "3S")
    s = pos(FOUR, grid, "S", indicators="N- E+ S+ W+")
    assert FOUR.legal_moves(s, "S") == ("pass",)
    end = FOUR.apply(s, "S", "pass")
    assert end.indicators == (False, True, False, True)
    assert FOUR.to_move(end) == () and FOUR.legal_moves(end, "W") == ()
    out = FOUR.outcome(end)
    assert out is not None and out.winners == ("E-W",)
    assert out.reason == ("North–South are both stuck, with both indicators face down:"
                          " East–West win the deal.")
    with pytest.raises(IllegalMove, match="the deal is over"):
        FOUR.apply(end, "W", "e5")
    # E-W can lose the same way.
    out = FOUR.outcome(pos(FOUR, grid, "S", indicators="N+ E- S+ W-"))
    assert out is not None and out.winners == ("N-S",)


FEW_UP = """
?? ?? ?? ?? ?? ?? ??
?? 5H ?? ?? ?? KD ??
?? ?? ?? ?? ?? ?? ??
?? ?? ?? .. ?? ?? ??
?? ?? ?? ?? ?? ?? ??
?? 3S ?? ?? ?? QC ??
?? ?? ?? ?? ?? ?? ??
"""


@pytest.mark.parametrize(
    ("indicators", "winner", "bonus"),
    [("N- E+ S- W+", "E-W", 50), ("N- E- S- W+", "E-W", 0), ("N- E+ S- W-", "E-W", 0),
     ("N+ E- S+ W-", "N-S", 50), ("N+ E- S- W-", "N-S", 0)],
)
def test_four_scores_and_the_bonus_only_with_both_winners_indicators_up(
    indicators: str, winner: str, bonus: int
) -> None:
    """Four-player ruling 5: courts ±10, +50 with both winners' indicators up,
    indicator Tens score nothing."""
    out = FOUR.outcome(pos(FOUR, FEW_UP, "N", indicators=indicators))
    assert out is not None and out.winners == (winner,)
    ew = 5 + (10 if winner == "E-W" else -10) + (bonus if winner == "E-W" else 0)
    ns = 3 + (10 if winner == "N-S" else -10) + (bonus if winner == "N-S" else 0)
    assert (out.points("E-W"), out.points("N-S")) == (ew, ns)
    win = next(s for s in out.scores if s.side == winner)
    assert win.lines[-1].label == "Bonus" and win.lines[-1].points == bonus
    # (a bonus of 0 says there is none, and why: new-user pass)
    said = "both indicators face up" if bonus else "none (an indicator is face down)"
    assert win.lines[-1].detail == said
    lose = next(s for s in out.scores if s.side != winner)
    assert all(line.label != "Bonus" for line in lose.lines)
    labels = [line.label for s in out.scores for line in s.lines]
    assert not any("10" in label or "Ten" in label for label in labels)
    assert [s.side for s in out.scores] == ["N-S", "E-W"]


def test_four_first_player_stuck_before_any_move_just_passes() -> None:
    """Referee choice (rules page): nothing special, the indicator goes down
    and play goes on. All 24 squares in line with d4 hold no spade."""
    s = pos(FOUR, opening_layout([c for c in DECK if c[1] != "S"]), "N")
    assert FOUR.legal_moves(s, "N") == ("pass",)
    after = FOUR.apply(s, "N", "pass")
    assert after.indicators == (False, True, True, True)
    assert FOUR.to_move(after) == ("E",) and FOUR.outcome(after) is None


def test_the_view_hides_nothing() -> None:
    """Face-down cards were seen by everyone: every seat and spectators get
    the same view, face-down cards included."""
    for game in (TWO, FOUR):
        s = game.deal(21, game.check_options({}), game.seats({})[0])
        for _ in range(6):
            (seat,) = game.to_move(s)
            s = game.apply(s, seat, game.legal_moves(s, seat)[0])
        views = [game.view(s, seat) for seat in (*game.seats({}), None)]
        assert all(v == views[0] for v in views)
        assert views[0]["cells"] == list(s.cells) and sum(c.islower() for c in views[0]["cells"]) == 6


# ---- errors, text and options ---------------------------------------------------------------


MALFORMED = ["", "z9", "h1", "a0", "a8", "C4", " c4", "c4 ", "pass!", "PASS", "hello" * 30]


@pytest.mark.parametrize("move", MALFORMED)
@pytest.mark.parametrize("game", [TWO, FOUR])
def test_malformed_moves(game: Any, move: str) -> None:
    s = game.deal(1, game.check_options({}), game.seats({})[0])
    with pytest.raises(MalformedMove, match="is not a Get Stuck move: give the square of the card") as err:
        game.apply(s, game.seats({})[0], move)
    assert len(str(err.value)) < 140
    # Malformed even when it is not your turn or the deal is over.
    with pytest.raises(MalformedMove):
        game.apply(s, game.seats({})[1], move)


def test_pass_is_never_legal_in_the_two_player_game() -> None:
    s = TWO.deal(1, {}, "red")
    with pytest.raises(IllegalMove, match="there is no passing in two-player Get Stuck"):
        TWO.apply(s, "red", "pass")


def test_illegal_move_messages() -> None:
    grid = """
    ?? ?? ?? ?? ?? ?? ??
    ?? ?? ?? ?? ?? ?? 6D
    ?? ?? ?? ?? ?? ?? ??
    ?? ?? 2S .. 5H ?? ??
    ?? ?? ?? ?? ?? ?? ??
    ?? ?? ?? ?? ?? ?? ??
    ?? ?? ?? ?? ?? ?? ??
    """
    s = pos(TWO, grid, "red")
    cases = {
        "d4": "d4 is the gap: choose a card to move into it",
        "c4": "the 2♠ at c4 is not yours: you play hearts and diamonds",
        "a1": "at a1 is face down and can never move again",
        "g2": "the 6♦ at g2 is not in line with the gap at d4",
    }
    for move, message in cases.items():
        with pytest.raises(IllegalMove, match=message):
            TWO.apply(s, "red", move)
    with pytest.raises(IllegalMove, match="you play spades and clubs"):
        TWO.apply(pos(TWO, grid, "black"), "black", "e4")
    assert TWO.describe(s, "red", "e4") == "Red moves the 5♥ from e4 to d4"


def test_applying_never_changes_the_old_state() -> None:
    for game in (TWO, FOUR):
        s = game.deal(11, game.check_options({}), game.seats({})[0])
        for _ in range(15):
            text = game.to_text(s)
            copy = game.from_text(text)
            (seat,) = game.to_move(s)
            moves = game.legal_moves(s, seat)
            stray = next(sq for i, sq in enumerate(SQUARES) if sq not in moves and s.cells[i].isupper())
            for bad in ("zz", SQUARES[s.gap], stray):
                with pytest.raises(MoveError):
                    game.apply(s, seat, bad)
            nxt = game.apply(s, seat, moves[-1])
            assert nxt != s
            assert game.to_text(s) == text and s == copy
            s = nxt


def _text(g: Any, /, **changes: str) -> str:
    """A valid position text of game ``g`` after one move, with header values
    changed (``""`` drops the line) or the body replaced."""
    s = g.deal(2, g.check_options({}), g.seats({})[0])
    s = g.apply(s, g.seats({})[0], g.legal_moves(s, g.seats({})[0])[0])
    assert s.cells[0] != ".." and sum(c.islower() for c in s.cells) == 1
    head, body = g.to_text(s).split("\n\n")
    lines = dict(line.split(": ", 1) for line in head.splitlines())
    body = changes.pop("body", body)
    for key, value in changes.items():
        if value == "":
            lines.pop(key, None)
        else:
            lines[key] = value
    return "\n".join(f"{k}: {v}" for k, v in lines.items()) + "\n\n" + body


def test_from_text_accepts_its_own_text_and_an_absent_last() -> None:
    for game in (TWO, FOUR):
        s = game.from_text(_text(game))
        assert game.from_text(game.to_text(s)) == s
        assert game.from_text(_text(game, last="")).last == -1


@pytest.mark.parametrize("game", [TWO, FOUR])
def test_from_text_rejects_bad_texts(game: Any) -> None:
    good = _text(game)
    body = good.split("\n\n")[1]
    rows = body.splitlines()
    bad = [
        "",
        "garbage",
        good.replace("\n\n", "\n"),  # no blank line
        good.replace(f"game: {game.info.id}", "game: suitors"),
        _text(game, game=""),
        "no colon here\n" + good,
        _text(game, turn=""),
        _text(game, turn="blue"),
        _text(game, turn="N" if game is TWO else "red"),
        _text(game, last="z9"),
        _text(game, last="a1"),  # a face-up card
        _text(game, colour="red"),
        _text(game, body="\n".join(rows[:6])),
        _text(game, body="\n".join([*rows, rows[0]])),
        _text(game, body="\n".join([rows[0] + " QS", *rows[1:]])),
        _text(game, body=body.replace(body.split()[0], "XX", 1)),
        _text(game, body=body.replace(body.split()[0], "TH", 1)),  # a Ten
        _text(game, body=body.replace(body.split()[0], "..", 1)),  # two gaps
        _text(game, body=body.replace("..", "th")),  # no gap
        _text(game, body=body.replace(body.split()[1], body.split()[0], 1)),  # a card twice
    ]
    if game is FOUR:
        bad += [
            _text(game, indicators=""),
            _text(game, indicators="N+ E+ S+"),
            _text(game, indicators="E+ N+ S+ W+"),
            _text(game, indicators="N+ E* S+ W+"),
            _text(game, indicators="N- E- S- W-"),
        ]
    else:
        bad.append(_text(game, indicators=ALL_UP))
    for text in bad:
        with pytest.raises(ValueError):
            game.from_text(text)
    assert game.from_text(good)  # the unchanged text is fine


def test_texts_of_one_game_are_refused_by_the_other() -> None:
    with pytest.raises(ValueError, match="not a get-stuck position"):
        TWO.from_text(_text(FOUR))
    with pytest.raises(ValueError, match="not a get-stuck-4 position"):
        FOUR.from_text(_text(TWO))


def test_position_text_shape() -> None:
    s = pos(FOUR, STUCK_N, "E", last="c4", indicators="N- E+ S+ W-")
    text = FOUR.to_text(s)
    head, body = text.split("\n\n")
    assert head.splitlines() == ["game: get-stuck-4", "turn: E", "last: c4", "indicators: N- E+ S+ W-"]
    assert body.splitlines()[3].split()[3] == ".." and len(body.splitlines()) == 7
    assert text.endswith("\n")
    assert FOUR.from_text(text) == s


def test_options() -> None:
    """Two-player ruling 7: an even number of deals, 2 to 20, default 2."""
    assert TWO.check_options({}) == {"deals": 2}
    assert TWO.check_options({"deals": 20, "seed": 5}) == {"deals": 20}
    for n in range(2, 21, 2):
        assert TWO.check_options({"deals": n}) == {"deals": n}
    for bad in (0, 1, 3, 19, 21, 22, -2, "2", 2.0, True, None):
        with pytest.raises(OptionError, match="'deals'"):
            TWO.check_options({"deals": bad})
    with pytest.raises(OptionError, match="unknown option 'rounds'"):
        TWO.check_options({"rounds": 2})
    assert FOUR.check_options({}) == {}
    with pytest.raises(OptionError, match="unknown option 'deals'"):
        FOUR.check_options({"deals": 4})


def test_two_player_match_deals_first_mover_and_fixed_colours() -> None:
    """Two-player ruling 7."""
    firsts = {TWO.starter({"deals": 2}, seed, 0) for seed in range(40)}
    assert firsts == {"red", "black"}
    for seed in range(10):
        starts = [TWO.starter({"deals": 6}, seed, k) for k in range(6)]
        assert all(a != b for a, b in itertools.pairwise(starts))
    rng = random.Random(4)
    m = Match.new("get-stuck", {"deals": 4}, 77)
    movers = []
    while True:
        movers.append(m.state.mover)
        assert m.current.starter == movers[-1]
        while not m.deal_over:
            (seat,) = m.game.to_move(m.state)
            move = rng.choice(m.game.legal_moves(m.state, seat))
            colour = m.state.cells[SQUARES.index(move)][1]
            assert colour in SUITS[seat]  # Red always hearts and diamonds, Black spades and clubs
            m = m.play(seat, move)
        out = m.current.outcome
        assert out is not None and [s.side for s in out.scores] == ["red", "black"]
        if m.over:
            break
        m = m.next_deal()
    assert len(movers) == 4 and movers[0] == TWO.starter({}, 77, 0)
    assert movers[0] != movers[1] and movers[1] != movers[2] and movers[2] != movers[3]


# ---- random play ----------------------------------------------------------------------------

GARBAGE = ["", "x", "d0", "h4", "D4", "4d", "a10", "pass pass", "Pass", "..", "c 4", "d4\n", "♥"]


def _random_deal(game: Any, seed: int, rng: random.Random, texts: bool) -> None:
    """One deal by random legal moves, every step checked against the oracle."""
    four = game is FOUR
    seats = game.seats({})
    state = game.deal(seed, game.check_options({}), seats[seed % len(seats)])
    turn = seed % len(seats)
    steps = 0
    while game.to_move(state):
        (seat,) = game.to_move(state)
        assert seat == seats[turn]
        moves = game.legal_moves(state, seat)
        assert len(set(moves)) == len(moves)
        assert set(moves) == oracle_moves(state.cells, state.gap, SUITS[seat], four)
        if not four:
            assert game.view(state, None)["diagonal"] == (moves[0] not in ORTHO_SQUARES[state.gap])
        other = seats[(turn + 1 + rng.randrange(len(seats) - 1)) % len(seats)]
        assert game.legal_moves(state, other) == ()
        with pytest.raises(IllegalMove, match="turn"):
            game.apply(state, other, moves[0])
        wrong = rng.choice([m for m in [*SQUARES, "pass"] if m not in moves])
        with pytest.raises(IllegalMove):
            game.apply(state, seat, wrong)
        with pytest.raises(MalformedMove):
            game.apply(state, seat, rng.choice(GARBAGE))
        move = rng.choice(moves)
        nxt = game.apply(state, seat, move)
        if four:
            up = move != "pass"
            expected = (*state.indicators[:turn], up, *state.indicators[turn + 1:])
            assert nxt.indicators == expected
        if move != "pass":
            src = SQUARES.index(move)
            assert nxt.cells[state.gap] == state.cells[src].lower() and nxt.cells[src] == ".."
            assert [i for i in range(49) if nxt.cells[i] != state.cells[i]] == sorted((src, state.gap))
        else:
            assert nxt.cells == state.cells
        if texts:
            text = game.to_text(nxt)
            assert game.from_text(text) == nxt and game.to_text(game.from_text(text)) == text
        state, turn, steps = nxt, (turn + 1) % len(seats), steps + 1
        assert steps <= 48 * 4
    _check_end(game, state, seats[turn])


ORTHO_SQUARES = [
    {sq for i, sq in enumerate(SQUARES) if i != gap and (i % 7 == gap % 7 or i // 7 == gap // 7)}
    for gap in range(49)
]


def _check_end(game: Any, state: GetStuckState, mover: str) -> None:
    """The ended deal: who lost, and scores recomputed from the layout."""
    out = game.outcome(state)
    assert out is not None
    if game is FOUR:
        ind = dict(zip("NESW", state.indicators, strict=True))
        down = [side for side, (a, b) in PARTNERS.items() if not ind[a] and not ind[b]]
        assert len(down) == 1
        winner = next(s for s in PARTNERS if s not in down)
        assert out.winners == (winner,)
        for side, seats in PARTNERS.items():
            won = side == winner
            pts = sum(oracle_points(state.cells, SUITS[s], won) for s in seats)
            if won and all(ind[s] for s in seats):
                pts += 50
            assert out.points(side) == pts
    else:
        assert oracle_moves(state.cells, state.gap, SUITS[mover], False) == set()
        winner = "black" if mover == "red" else "red"
        assert out.winners == (winner,)
        for side in ("red", "black"):
            assert out.points(side) == oracle_points(state.cells, SUITS[side], side == winner)
    for score in out.scores:
        assert sum(line.points for line in score.lines) == score.points
    assert game.to_move(state) == ()


@pytest.mark.slow
@pytest.mark.parametrize("game", [TWO, FOUR], ids=["get-stuck", "get-stuck-4"])
def test_random_play(game: Any) -> None:
    """2,000 seeded deals: legal moves match the oracle and never raise, other
    moves raise the right error, every deal ends, the scores match the layout;
    the first 150 deals also round-trip every position text."""
    rng = random.Random(game.info.id)
    for seed in range(2000):
        _random_deal(game, seed, rng, texts=seed < 150)


def test_position_text_tokens_in_one_case() -> None:
    """A layout token is a face-up card in capitals or a face-down card in
    small letters: a token in mixed case is refused with a message."""
    game = get_game("get-stuck")
    text = game.to_text(game.deal(1, {}, "red"))
    card = next(t for t in text.split() if len(t) == 2 and t[0] in "JQKA" and t[1] in "SHDC")
    with pytest.raises(ValueError, match="capitals"):
        game.from_text(text.replace(card, card[0] + card[1].lower(), 1))
