"""Computer players: legality at every level in every game, no peeking at
hidden cards, Stucco's exact search against brute force, and the endgame
searches finding forced wins. Budgets are iteration counts, so every test is
deterministic and fast."""

from __future__ import annotations

import pickle
import random
from typing import Any

import pytest

from engine.base import Game
from engine.bots import LEVELS, choose_move, easy_move
from engine.bots import getstuck as gs_bot
from engine.bots import romeo as romeo_bot
from engine.bots import stucco as stucco_bot
from engine.bots.mcts import Budget, Searcher
from engine.bots.solve import Prover, solve_move
from engine.getstuck import DECK_48, GRID_7X7
from engine.registry import GAMES, get_game

TINY = 6
"""Iterations per move in the legality tests."""


def _result(game: Game, state: Any, seat: str) -> int:
    """+1 if ``seat``'s side alone won the ended deal, -1 if another side did, 0 otherwise."""
    outcome = game.outcome(state)
    assert outcome is not None
    if not outcome.winners:
        return 0
    mine = {s.side for s in outcome.scores if seat in s.seats}
    return 1 if mine == set(outcome.winners) else -1 if not mine & set(outcome.winners) else 0


# ---- every move is legal --------------------------------------------------------------------


def _play(game_id: str, options: dict[str, Any], level: str, seed: int, max_moves: int) -> int:
    """Play up to ``max_moves`` moves of a deal where every seat is a bot of
    ``level``; every awaited seat chooses on the same state (simultaneous
    picks), and each move must be legal where it is applied. Returns the
    number of moves played."""
    game = get_game(game_id)
    opts = game.check_options(options)
    state = game.deal(seed, opts, game.starter(opts, seed, 0))
    played = 0
    while game.to_move(state) and played < max_moves:
        awaited = game.to_move(state)
        chosen = []
        for seat in awaited:
            move = choose_move(game_id, state, seat, level, None, seed * 31 + played, TINY)
            assert move in game.legal_moves(state, seat), (game_id, level, seat, move)
            chosen.append((seat, move))
        for seat, move in chosen:
            assert move in game.legal_moves(state, seat)
            state = game.apply(state, seat, move)
            played += 1
    return played


VARIANTS: list[tuple[str, dict[str, Any]]] = [(gid, {}) for gid in GAMES] + [
    ("suitors", {"players": 3}),
    ("suitors", {"players": 4}),
    ("suitors", {"variant": "colours"}),
]


@pytest.mark.parametrize("level", LEVELS)
@pytest.mark.parametrize(("game_id", "options"), VARIANTS)
def test_every_bot_move_is_legal(game_id: str, options: dict[str, Any], level: str) -> None:
    total = sum(_play(game_id, options, level, seed, 30) for seed in range(2))
    assert total > 0


def test_every_registered_game_is_covered() -> None:
    assert {gid for gid, _ in VARIANTS} == set(GAMES)


def test_a_whole_deal_of_bots_ends() -> None:
    for game_id in ("get-stuck", "get-stuck-4", "stucco"):
        game = get_game(game_id)
        opts = game.check_options({})
        state = game.deal(5, opts, game.starter(opts, 5, 0))
        while game.to_move(state):
            for seat in game.to_move(state):
                state = game.apply(state, seat, choose_move(game_id, state, seat, "strong", None, 1, 20))
        assert game.outcome(state) is not None


def test_bad_arguments() -> None:
    game = get_game("get-stuck")
    state = game.deal(1, {}, "red")
    with pytest.raises(ValueError, match="level"):
        choose_move("get-stuck", state, "red", "grandmaster", None, 0, 5)
    with pytest.raises(ValueError, match="not awaited"):
        choose_move("get-stuck", state, "black", "easy", None, 0, 5)
    with pytest.raises(KeyError):
        choose_move("chess", state, "red", "easy", None, 0, 5)


def test_iteration_budget_makes_play_repeatable() -> None:
    game = get_game("get-stuck")
    state = game.deal(9, {}, "red")
    first = [choose_move("get-stuck", state, "red", lvl, None, 3, 40) for lvl in LEVELS]
    again = [choose_move("get-stuck", state, "red", lvl, None, 3, 40) for lvl in LEVELS]
    assert first == again


def test_time_budget_is_honoured_roughly() -> None:
    # Not a timing assertion: just that a seconds budget without iterations works.
    game = get_game("get-stuck")
    state = game.deal(4, {}, "red")
    assert choose_move("get-stuck", state, "red", "strong", 0.05, 1) in game.legal_moves(state, "red")


@pytest.mark.parametrize("game_id", sorted(GAMES))
def test_inputs_survive_pickling_for_a_process_pool(game_id: str) -> None:
    game = get_game(game_id)
    opts = game.check_options({})
    state = game.deal(8, opts, game.starter(opts, 8, 0))
    seat = game.to_move(state)[-1]
    copy = pickle.loads(pickle.dumps(state))
    assert copy == state
    for level in LEVELS:
        assert choose_move(game_id, copy, seat, level, None, 4, 30) == choose_move(
            game_id, state, seat, level, None, 4, 30
        )


# ---- hidden information ---------------------------------------------------------------------


def _suitors_midgame(seed: int, turns: int) -> Any:
    game = get_game("suitors")
    opts = game.check_options({})
    state = game.deal(seed, opts, "JS")
    rng = random.Random(seed)
    for _ in range(turns):
        seat = game.to_move(state)[0]
        moves = game.legal_moves(state, seat)
        state = game.apply(state, seat, moves[rng.randrange(len(moves))])
    return state


@pytest.mark.parametrize("level", LEVELS)
def test_suitors_bot_sees_only_its_view(level: str) -> None:
    game = get_game("suitors")
    checked = 0
    for seed in range(4):
        state = _suitors_midgame(seed, 6)
        if not game.to_move(state):
            continue
        seat = game.to_move(state)[0]
        # The same view for seat, other face-down and set-aside cards.
        other = game.determinize(state, seat, random.Random(1000 + seed))
        assert other != state
        assert other.cells != state.cells or other.aside != state.aside
        assert game.view(other, seat) == game.view(state, seat)
        a = choose_move("suitors", state, seat, level, None, seed, 60)
        b = choose_move("suitors", other, seat, level, None, seed, 60)
        assert a == b
        checked += 1
    assert checked >= 3


def test_stucco_bot_ignores_the_opponents_secret_pick() -> None:
    game = get_game("stucco")
    state = game.deal(11, {}, "north")
    hand = game.legal_moves(state, "north")
    picked = [game.apply(state, "north", card) for card in (hand[0], hand[-1], hand[7])]
    assert len({game.to_text(s) for s in picked}) == 3
    for level in LEVELS:
        views = {str(game.view(s, "south")) for s in picked}
        assert len(views) == 1
        moves = {choose_move("stucco", s, "south", level, None, 5, 80) for s in picked}
        assert len(moves) == 1, level


# ---- the generic searcher -------------------------------------------------------------------


def test_searcher_takes_an_immediate_win_in_get_stuck() -> None:
    state = _getstuck_trap()
    game = get_game("get-stuck")
    searcher = Searcher(game, "red", random.Random(0))
    assert searcher.best_move(state, Budget(None, 200)) == "d3"
    assert easy_move(game, state, "red", random.Random(0)) == "d3"


def test_searcher_handles_simultaneous_picks() -> None:
    game = get_game("stucco")
    state = game.deal(3, {}, "south")
    stats = Searcher(game, "north", random.Random(2)).search(state, Budget(None, 300))
    assert set(stats) <= set(game.legal_moves(state, "north"))
    assert sum(v for v, _ in stats.values()) == 300


# ---- Get Stuck exact search -----------------------------------------------------------------


def _getstuck_trap() -> Any:
    """Red to move: ``d3`` leaves Black stuck; ``d5`` lets the 4♠ at ``d6`` in
    and then Red is stuck."""
    cards = [c for c in DECK_48 if c not in ("2H", "3H", "4S")]
    random.Random(7).shuffle(cards)
    cells = [c.lower() for c in cards]
    layout: list[str] = []
    special = {"d3": "2H", "d4": "..", "d5": "3H", "d6": "4S"}
    for name in GRID_7X7.names:
        layout.append(special[name] if name in special else cells.pop())
    text = "game: get-stuck\nturn: red\nlast: -\n\n" + GRID_7X7.format_rows(layout) + "\n"
    return get_game("get-stuck").from_text(text)


def test_getstuck_exact_search_finds_the_only_winning_move() -> None:
    game = get_game("get-stuck")
    state = _getstuck_trap()
    assert set(game.legal_moves(state, "red")) == {"d3", "d5"}
    assert gs_bot.exact_move(game, state, "red", Budget(None, 100)) == "d3"
    assert choose_move("get-stuck", state, "red", "strong", None, 0, 5) == "d3"


def _brute(game: Game, state: Any, seat: str, memo: dict[Any, int] | None = None) -> int:
    """Plain minimax (with a memo) over the public interface: +1 if
    ``seat``'s side can force a win, -1 if not (Get Stuck has no draws)."""
    memo = {} if memo is None else memo
    if state in memo:
        return memo[state]
    awaited = game.to_move(state)
    if not awaited:
        return _result(game, state, seat)
    mover = awaited[0]
    values = [_brute(game, game.apply(state, mover, m), seat, memo) for m in game.legal_moves(state, mover)]
    memo[state] = max(values) if mover in gs_bot.side_of(state, seat) else min(values)
    return memo[state]


def _endgames(game_id: str, count: int, backs: tuple[int, ...]) -> list[Any]:
    """Positions some moves before the end of random deals (``backs[i]``
    moves for the ``i``-th, cyclically)."""
    game = get_game(game_id)
    out: list[Any] = []
    seed = 0
    while len(out) < count:
        seed += 1
        back = backs[len(out) % len(backs)]
        rng = random.Random(seed)
        state = game.deal(seed, {}, game.seats({})[0])
        seen = [state]
        while game.to_move(state):
            seat = game.to_move(state)[0]
            state = game.apply(state, seat, rng.choice(game.legal_moves(state, seat)))
            seen.append(state)
        if len(seen) > 2 * back:
            out.append(seen[-1 - back])
    return out


@pytest.mark.parametrize(("game_id", "backs"), [("get-stuck", (2, 3, 4)), ("get-stuck-4", (3, 4, 5))])
def test_getstuck_prover_agrees_with_brute_force(game_id: str, backs: tuple[int, ...]) -> None:
    game = get_game(game_id)
    wins = losses = 0
    for state in _endgames(game_id, 9, backs):
        seat = game.to_move(state)[0]
        side = gs_bot.side_of(state, seat)
        proved = Prover(game, side, 10**6).wins(state, gs_bot.DEPTH)
        assert proved == (_brute(game, state, seat) == 1)
        move = gs_bot.exact_move(game, state, seat, Budget(None, 10**5))
        if proved:
            assert move is not None
            after = game.apply(state, seat, move)
            assert not game.to_move(after) or _brute(game, after, seat) == 1
            wins += 1
        else:
            assert move is None
            losses += 1
    assert wins and losses


def test_solve_move_reports_safe_moves() -> None:
    game = get_game("get-stuck")
    state = _getstuck_trap()
    move, safe = solve_move(game, state, "red", frozenset({"red"}), frozenset({"black"}), 10, 1000, None)
    assert move == "d3" and safe is None


# ---- Stucco exact search --------------------------------------------------------------------


def _stucco_minimax(game: Game, state: Any, seat: str) -> int:
    """Brute force through the engine: ``seat``'s deal score minus the
    opponent's under perfect play."""
    awaited = game.to_move(state)
    if not awaited:
        outcome = game.outcome(state)
        assert outcome is not None
        other = "south" if seat == "north" else "north"
        return outcome.points(seat) - outcome.points(other)
    mover = awaited[0]
    moves = game.legal_moves(state, mover)
    values = [_stucco_minimax(game, game.apply(state, mover, m), seat) for m in moves]
    return max(values) if mover == seat else min(values)


def _stucco_endings(count: int, left: int) -> list[Any]:
    game = get_game("stucco")
    out: list[Any] = []
    seed = 0
    while len(out) < count:
        seed += 1
        rng = random.Random(seed)
        state = game.deal(seed, {}, "north")
        for seat in ("north", "south"):
            state = game.apply(state, seat, rng.choice(game.legal_moves(state, seat)))
        while game.to_move(state) and (state.hands[0] | state.hands[1]).bit_count() > left:
            seat = game.to_move(state)[0]
            state = game.apply(state, seat, rng.choice(game.legal_moves(state, seat)))
        if game.to_move(state):
            out.append(state)
    return out


HAND_MADE = """game: stucco
dealer: north
picks: north=7C south=AS
turn: north
last: south JC

north: KS AH QC 7D 8D QD KD
south: QS QH KH KC JD
spread: south AS; north AD; south AC; north 7C; south 7H 8H; north 8C; south 7S; north 8S; \
south 9S; north 9D; south TD; north 9H; south 9C TC; north TH TS; south JS; north JH; south JC
"""


def test_stucco_hand_made_ending() -> None:
    # North must play Q♣. South then wins with Q♥ (North cannot follow, so
    # South goes on): J♦ Q♦ Q♠ K♠ K♥ A♥ pass K♦ K♣: 16 cards × 1 = 16.
    game = get_game("stucco")
    state = game.from_text(HAND_MADE.replace("\\\n", ""))
    solver = stucco_bot.Solver(stucco_bot.dealt(state))
    rest = state.hands[0] | state.hands[1]
    assert solver.value(rest, state.spread[-1] & 31, state.run) == 16  # for south, who played J♣
    after = game.apply(state, "north", "QC")
    assert stucco_bot.best_play(after) == ("QH", 16)
    assert _stucco_minimax(game, after, "south") == 16


def test_stucco_exact_values_match_brute_force() -> None:
    game = get_game("stucco")
    for state in _stucco_endings(25, 11):
        mover = game.to_move(state)[0]
        values = stucco_bot.Solver(stucco_bot.dealt(state)).move_values(state)
        for card, value in values.items():
            assert value == _stucco_minimax(game, game.apply(state, mover, card), mover)
        found = stucco_bot.best_play(state)
        if values:
            assert found is not None
            assert found[1] == _stucco_minimax(game, state, mover) == max(values.values())
            assert choose_move("stucco", state, mover, "strong", None, 0, 5) == found[0]
        else:
            assert found is None
        top = state.spread[-1]
        last = ("north", "south")[top >> 5]
        solver = stucco_bot.Solver(stucco_bot.dealt(state))
        rest = state.hands[0] | state.hands[1]
        assert solver.value(rest, top & 31, state.run) == _stucco_minimax(game, state, last)


def test_stucco_window_bounds_are_sound() -> None:
    game = get_game("stucco")
    for state in _stucco_endings(10, 13):
        top = state.spread[-1]
        rest = state.hands[0] | state.hands[1]
        exact = stucco_bot.Solver(stucco_bot.dealt(state)).value(rest, top & 31, state.run)
        for floor in (exact - 5, exact, exact + 5):
            bound = stucco_bot.Solver(stucco_bot.dealt(state)).value(rest, top & 31, state.run, floor)
            assert bound == exact if exact > floor else bound <= floor
    assert game is not None


def test_stucco_equilibrium() -> None:
    eq = stucco_bot.equilibrium
    # Saddle point: row 1 guarantees 2.
    assert eq({(0, 0): 1, (0, 1): -3, (1, 0): 2, (1, 1): 5}) == {1: 1.0}
    # Matching pennies-like: mix 0.6 / 0.4 makes the column player indifferent.
    mix = eq({(0, 0): 3, (0, 1): -1, (1, 0): -2, (1, 1): 4})
    assert mix[0] == pytest.approx(0.6) and mix[1] == pytest.approx(0.4)
    # One colour only.
    assert eq({(1, 0): -4, (1, 1): 7}) == {1: 1.0}


def test_stucco_opening_matrix_follows_the_colour_rule() -> None:
    game = get_game("stucco")
    state = game.deal(21, {}, "north")
    solver = stucco_bot.Solver(stucco_bot.dealt(state))
    matrix, best = stucco_bot.opening_matrix(state, "north", solver)
    values = {c: solver.opening_value(c) for c in range(32)}
    mine, theirs = state.hands
    for (ours, their), payoff in matrix.items():
        a = max(values[c] for c in range(32) if mine >> c & 1 and stucco_bot.colour(c) == ours)
        b = max(values[c] for c in range(32) if theirs >> c & 1 and stucco_bot.colour(c) == their)
        # north deals: same colour, south's card opens; different, north's.
        assert payoff == (-b if ours == their else a)
        assert values[best[ours]] == a
    pick = choose_move("stucco", state, "north", "strong", None, 0, 5)
    assert pick in game.legal_moves(state, "north")


# ---- Romeo and Juliet -----------------------------------------------------------------------

ROMEO_FORCED = """game: romeo-and-juliet
turn: red
red: g6
black: f3
lock: c5 f5
turns: 6
history: a7-a6 g1-f2 e4<>g4 f2-f3 a6-g6 c5<>f5

5S 8D KC TD 7s 3H QH
TH TS 4D 9D 9H 6H 2C
AD 8H 8S 6C 5H TC 5D
3C KS JD 2H 2S AS 7h
6D 9S KH 3D 9C 7c 2D
8C KD 3S 4C AH AC 4H
QS 5C JS JH JC 6S 4S
"""


def _forces_landing(game: Game, state: Any, move: str) -> bool:
    """Brute force: after ``move`` the mover lands on its Juliet next turn
    whatever the opponent replies."""
    seat = game.to_move(state)[0]
    child = game.apply(state, seat, move)
    if game.outcome(child) is not None:
        return _result(game, child, seat) == 1
    other = game.to_move(child)[0]
    for reply in game.legal_moves(child, other):
        after = game.apply(child, other, reply)
        if game.outcome(after) is not None:
            return False
        if not any(
            _result(game, game.apply(after, seat, m), seat) == 1
            for m in game.legal_moves(after, seat)
            if game.outcome(game.apply(after, seat, m)) is not None
        ):
            return False
    return True


def test_romeo_forced_win_in_two() -> None:
    game = get_game("romeo-and-juliet")
    state = game.from_text(ROMEO_FORCED)
    assert not romeo_bot.lands(state)
    forcing = [m for m in game.legal_moves(state, "red") if _forces_landing(game, state, m)]
    assert forcing
    move, _ = romeo_bot.exact_move(game, state, "red", Budget(None, 10))
    assert move in forcing
    assert choose_move("romeo-and-juliet", state, "red", "strong", None, 0, 5) in forcing


def test_romeo_lands_at_once_when_it_can() -> None:
    game = get_game("romeo-and-juliet")
    state = game.from_text(ROMEO_FORCED)
    state = game.apply(state, "red", romeo_bot.exact_move(game, state, "red", Budget(None, 10))[0] or "")
    reply = game.legal_moves(state, "black")[0]
    state = game.apply(state, "black", reply)
    assert romeo_bot.lands(state)
    for level in LEVELS:
        move = choose_move("romeo-and-juliet", state, "red", level, None, 0, 10)
        assert _result(game, game.apply(state, "red", move), "red") == 1


def test_romeo_distance() -> None:
    game = get_game("romeo-and-juliet")
    state = game.from_text(ROMEO_FORCED)
    assert romeo_bot.distance(state, 0) == 2
    assert 0 < romeo_bot.distance(state, 1) <= romeo_bot.UNREACHABLE
    values = romeo_bot.evaluate(state)
    assert values["red"] > values["black"]
    assert values["red"] + values["black"] == pytest.approx(1.0)


ROMEO_DEADLOCK = """game: romeo-and-juliet
turn: black
red: c5
black: f5
lock: -
turns: 101
history: -

JD 3H 4H 5C 8H 8D QH
9S AS 5D TH 9H 4S 9D
2C AD 6H TC 3S AC 6D
JC 8C TS 6S KH 3D 2H
JS 6C 5S 7d 4C 9C 8S
KS 7c KC 2S TD JH 7s
QS AH 4D KD 2D 3C 5H
"""


def test_romeo_deadlock_is_a_draw_to_the_bots() -> None:
    """Both Romeos on numerals of one row, each barring the other's every
    route: no swap can ever free them (a card under a Romeo never swaps), so
    the evaluation calls it a draw, and only swaps are legal."""
    game = get_game("romeo-and-juliet")
    state = game.from_text(ROMEO_DEADLOCK)
    assert all(m.startswith("swap") for m in game.legal_moves(state, "black"))
    assert romeo_bot.frozen(state, 0) and romeo_bot.frozen(state, 1)
    assert romeo_bot.deadlocked(state)
    assert romeo_bot.evaluate(state) == {"red": 0.5, "black": 0.5}
    free = game.from_text(ROMEO_FORCED)
    assert not romeo_bot.deadlocked(free)


def test_romeo_focus_keeps_every_romeo_move() -> None:
    """The strong level's search looks at every Romeo move and the best few
    swaps only."""
    game = get_game("romeo-and-juliet")
    state = game.from_text(ROMEO_FORCED)
    moves = game.legal_moves(state, "red")
    kept = romeo_bot.focus(game, state, "red", moves)
    steps = [m for m in moves if not m.startswith("swap")]
    assert [m for m in kept if not m.startswith("swap")] == steps
    swaps = [m for m in kept if m.startswith("swap")]
    assert len(swaps) == min(romeo_bot.SWAPS_KEPT, len(moves) - len(steps))
    assert set(kept) <= set(moves)


def test_easy_romeo_mostly_steps_its_romeo() -> None:
    """Uniformly random, nine moves in ten of an easy Romeo and Juliet player
    were Joker swaps and its games drifted to the turn limit; it now plays
    the game's rollout policy, mostly Romeo steps."""
    game = get_game("romeo-and-juliet")
    rng = random.Random(4)
    steps = swaps = 0
    for seed in range(4):
        state = game.deal(seed, {}, game.starter({}, seed, 0))
        for _ in range(60):
            awaited = game.to_move(state)
            if not awaited:
                break
            seat = awaited[0]
            moves = game.legal_moves(state, seat)
            move = choose_move("romeo-and-juliet", state, seat, "easy", rng=rng)
            if len(moves) > 1 and any(not m.startswith("swap") for m in moves):
                if move.startswith("swap"):
                    swaps += 1
                else:
                    steps += 1
            state = game.apply(state, seat, move)
    assert steps + swaps >= 40
    assert steps > 2 * swaps, (steps, swaps)
