"""Exact win proofs over the public game interface, for two-sided games of
perfect information with one seat awaited at a time.

:class:`Prover` answers "can these seats force a win within ``depth`` moves
(plies)?" by AND/OR search with a memo, under a node and time limit. A
``True`` answer is a proof; ``False`` means no forced win within ``depth``
(with ``depth`` at least the longest possible remaining deal, a proof that
the other side can at least hold a draw). When the limit is hit the search
raises :class:`OutOfBudget`. The game-specific modules decide when a
position is small enough to try it.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from engine.base import Game

Order = Callable[[Any, str, tuple[str, ...]], tuple[str, ...]]
"""Move ordering for the search: ``(state, seat, moves) -> moves``, best first."""


class OutOfBudget(Exception):
    """The exact search ran out of nodes or time before it could answer."""


class Unsupported(Exception):
    """The position awaits several seats at once (simultaneous picks), which
    this search does not handle."""


@dataclass
class Prover:
    """Proves forced wins for the side made of ``seats``.

    ``max_nodes`` bounds the positions expanded, ``deadline`` is a
    ``time.perf_counter()`` value (or ``None``), and ``order`` sorts moves
    (best first) to find proofs sooner. ``nodes`` counts the positions
    expanded so far; the memo persists across calls on the same prover.
    """

    game: Game
    seats: frozenset[str]
    max_nodes: int = 100_000
    deadline: float | None = None
    order: Order | None = None
    nodes: int = 0
    _proved: set[Any] = field(default_factory=set)
    _refuted: dict[Any, int] = field(default_factory=dict)

    def wins(self, state: Any, depth: int) -> bool:
        """True if ``seats`` can force a win from ``state`` within ``depth``
        plies, whatever the others do. Raises :class:`OutOfBudget` or
        :class:`Unsupported`."""
        if state in self._proved:
            return True
        known = self._refuted.get(state)
        if known is not None and known >= depth:
            return False
        game = self.game
        awaited = game.to_move(state)
        if not awaited:
            outcome = game.outcome(state)
            won = outcome is not None and len(outcome.winners) == 1 and any(
                s.side in outcome.winners and set(s.seats) & self.seats for s in outcome.scores
            )
            if won:
                self._proved.add(state)
            else:
                self._refuted[state] = 1 << 30
            return won
        if depth <= 0:
            return False
        if len(awaited) > 1:
            raise Unsupported("several seats are awaited at once")
        self.nodes += 1
        if self.nodes > self.max_nodes or (
            self.deadline is not None and self.nodes % 256 == 0 and time.perf_counter() > self.deadline
        ):
            raise OutOfBudget
        seat = awaited[0]
        moves = game.legal_moves(state, seat)
        if self.order is not None:
            moves = self.order(state, seat, moves)
        mine = seat in self.seats
        result = not mine
        for move in moves:
            if self.wins(game.apply(state, seat, move), depth - 1) is mine:
                result = mine
                break
        if result:
            self._proved.add(state)
        else:
            self._refuted[state] = max(depth, known or 0)
        return result

    def winning_move(self, state: Any, depth: int) -> str | None:
        """A move for the awaited seat (one of ``seats``) that forces a win
        within ``depth`` plies, or ``None`` if there is none. Raises
        :class:`OutOfBudget` or :class:`Unsupported`."""
        game = self.game
        awaited = game.to_move(state)
        if len(awaited) != 1 or awaited[0] not in self.seats:
            raise Unsupported("the prover's side is not the one seat awaited")
        seat = awaited[0]
        moves = game.legal_moves(state, seat)
        if self.order is not None:
            moves = self.order(state, seat, moves)
        for move in moves:
            if self.wins(game.apply(state, seat, move), depth - 1):
                return move
        return None


def solve_move(
    game: Game,
    state: Any,
    seat: str,
    friends: frozenset[str],
    foes: frozenset[str],
    depth: int,
    max_nodes: int,
    deadline: float | None,
    order: Order | None = None,
) -> tuple[str | None, tuple[str, ...] | None]:
    """Exact search for ``seat`` (of the side ``friends``, against ``foes``)
    within ``depth`` plies.

    Returns ``(move, safe)``: ``move`` is a move that forces a win, else
    ``None``; ``safe`` lists the moves after which ``foes`` cannot force a win
    within ``depth - 1`` plies (``None`` if that could not be settled within
    the budget; every move if all of them lose, so the caller still has a
    choice). Never raises: an exhausted budget just gives ``(None, None)``.
    """
    mine = Prover(game, friends, max_nodes, deadline, order)
    try:
        move = mine.winning_move(state, depth)
    except (OutOfBudget, Unsupported):
        return None, None
    if move is not None:
        return move, None
    theirs = Prover(game, foes, max(0, max_nodes - mine.nodes), deadline, order)
    moves = game.legal_moves(state, seat)
    try:
        safe = tuple(m for m in moves if not theirs.wins(game.apply(state, seat, m), depth - 1))
    except (OutOfBudget, Unsupported):
        return None, None
    return None, safe or moves
