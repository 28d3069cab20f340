"""Exact endgame search for Get Stuck and Get Stuck for Four.

Every move turns a card face down for good, so a deal can last at most as
many more moves as there are face-up cards (plus the passes of the
four-player game). Once few enough face-up cards remain, the strong level
proves the result with :class:`engine.bots.solve.Prover` (a win for the
side, whatever the points), trying first the moves that leave the next
seat the fewest replies; before that, and when the proof does not fit in
the budget, the generic searcher plays.
"""

from __future__ import annotations

import time
from typing import Any

from engine.base import Game
from engine.bots.mcts import Budget
from engine.bots.solve import OutOfBudget, Prover, Unsupported
from engine.getstuck import FOUR_SIDES, GAP, GetStuckState

FACE_UP_LIMIT = 44
"""The exact search is tried only with at most this many face-up cards."""

NODES_PER_ITERATION = 10
"""Exact-search nodes allowed per iteration of an iteration budget."""

TIME_SHARE = 0.5
"""Share of a time budget the exact search may use before the searcher."""

DEPTH = 200
"""More plies than any Get Stuck deal can still last (48 cards, passes)."""


def face_up(state: GetStuckState) -> int:
    """The number of face-up cards in the layout."""
    return sum(1 for c in state.cells if c != GAP and c[1].isupper())


def side_of(state: GetStuckState, seat: str) -> frozenset[str]:
    """The seats of ``seat``'s side: the seat alone with two players, the
    partnership with four."""
    if state.four:
        return next(frozenset(seats) for _, seats in FOUR_SIDES if seat in seats)
    return frozenset((seat,))


def mobility_order(game: Game, state: Any, seat: str, moves: tuple[str, ...]) -> tuple[str, ...]:
    """``moves`` sorted by how few moves the next seat has after each (a
    stuck opponent first); stable on ties."""
    def replies(move: str) -> int:
        child = game.apply(state, seat, move)
        awaited = game.to_move(child)
        return len(game.legal_moves(child, awaited[0])) if awaited else -1

    return tuple(sorted(moves, key=replies))


def exact_move(game: Game, state: GetStuckState, seat: str, budget: Budget) -> str | None:
    """A move that forces a win for ``seat``'s side, or ``None`` when the
    position is too large, the proof does not fit in ``budget`` (nodes from
    the iteration budget, time from the seconds budget), or every move
    loses."""
    if face_up(state) > FACE_UP_LIMIT or seat not in game.to_move(state):
        return None
    budget = budget.effective()
    nodes = budget.iterations * NODES_PER_ITERATION if budget.iterations is not None else 10**9
    deadline = None if budget.seconds is None else time.perf_counter() + budget.seconds * TIME_SHARE
    prover = Prover(
        game, side_of(state, seat), nodes, deadline,
        lambda s, who, moves: mobility_order(game, s, who, moves),
    )
    try:
        return prover.winning_move(state, DEPTH)
    except (OutOfBudget, Unsupported):
        return None
