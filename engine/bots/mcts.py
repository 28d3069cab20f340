"""Monte Carlo tree search over the public :class:`engine.base.Game` interface.

One searcher serves every game: it only calls ``to_move``, ``legal_moves``,
``apply``, ``outcome`` and ``determinize``. It is UCT with three extensions:

* **Information sets.** Every iteration starts from
  ``game.determinize(state, seat, rng)``, a state the searching seat cannot
  tell apart from the real one, so the search only ever uses that seat's
  knowledge (single-observer information-set MCTS: the tree is keyed on move
  sequences and each move's UCB counts the iterations in which it was legal).
* **Simultaneous picks.** When several seats are awaited at once (Stucco's
  secret opening), each awaited seat chooses from its own statistics without
  seeing the others' picks (decoupled UCT); the joint pick leads to the child.
* **Many seats and sides.** Rewards are a value in [0, 1] per seat, taken
  from the :class:`engine.base.Outcome` (by default win, draw or loss of the
  seat's side, optionally blended with its margin over the best opposing side;
  see :class:`Reward`), and every seat maximises its own.

Budgets are a number of seconds and/or a number of iterations
(:class:`Budget`); an iteration budget alone makes the search a pure function
of its inputs and the rng.
"""

from __future__ import annotations

import math
import random
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from engine.base import Game, Outcome

Rewards = dict[str, float]
"""Reward per seat, each in [0, 1] (1 is best for that seat)."""

Evaluate = Callable[[Any], Rewards]
"""A heuristic estimate of a non-final state's rewards, per seat."""

Policy = Callable[[Any, str, tuple[str, ...], random.Random], str]
"""A rollout policy: ``(state, seat, legal moves, rng) -> move``."""


@dataclass(frozen=True)
class Budget:
    """How long a search may think: ``seconds`` of wall time and/or
    ``iterations`` of the searcher (the exact searches turn iterations into a
    node limit, see their modules). ``None`` means no limit of that kind;
    with both ``None`` the default is one second."""

    seconds: float | None = None
    iterations: int | None = None

    def scaled(self, factor: float) -> Budget:
        """The same budget times ``factor`` (at least one iteration)."""
        return Budget(
            None if self.seconds is None else self.seconds * factor,
            None if self.iterations is None else max(1, int(self.iterations * factor)),
        )

    def effective(self) -> Budget:
        """This budget, or one second if it sets no limit at all."""
        return self if self.seconds is not None or self.iterations is not None else Budget(1.0)


@dataclass(frozen=True)
class Reward:
    """How an outcome turns into per-seat rewards.

    A seat's reward is ``(1 - margin_weight) * result + margin_weight * m``
    where ``result`` is 1 for a sole winner, 0 for a loser and ``1 / n`` when
    ``n`` sides share the win or for a draw (``n`` = number of sides), and
    ``m`` maps the side's points minus the best opposing side's points
    (``d``) into [0, 1] as ``0.5 + 0.5 * d / (|d| + margin_scale)``.
    """

    margin_weight: float = 0.0
    margin_scale: float = 20.0

    def __call__(self, outcome: Outcome) -> Rewards:
        sides = outcome.scores
        n = max(1, len(sides))
        out: Rewards = {}
        for s in sides:
            if not outcome.winners:
                result = 1.0 / n
            elif s.side in outcome.winners:
                result = 1.0 / len(outcome.winners)
            else:
                result = 0.0
            value = result
            if self.margin_weight:
                others = [o.points for o in sides if o.side != s.side]
                d = s.points - max(others) if others else 0
                m = 0.5 + 0.5 * d / (abs(d) + self.margin_scale)
                value = (1 - self.margin_weight) * result + self.margin_weight * m
            for seat in s.seats:
                out[seat] = value
        return out


def random_policy(state: Any, seat: str, moves: tuple[str, ...], rng: random.Random) -> str:
    """The uniform rollout policy."""
    return moves[rng.randrange(len(moves))]


class _Edge:
    """Statistics of one seat's move at a node: times chosen, reward summed
    for that seat, and times it was legal when the node was visited."""

    __slots__ = ("avail", "total", "visits")

    def __init__(self) -> None:
        self.visits = 0
        self.total = 0.0
        self.avail = 0


class _Node:
    """A node: per awaited seat its move statistics, and the children by joint
    pick (a tuple with one move per awaited seat, in ``to_move`` order)."""

    __slots__ = ("children", "edges")

    def __init__(self) -> None:
        self.edges: dict[str, dict[str, _Edge]] = {}
        self.children: dict[tuple[str, ...], _Node] = {}


@dataclass
class Searcher:
    """Information-set UCT for ``seat`` in ``game``.

    ``reward`` maps an outcome to per-seat rewards; ``policy`` picks rollout
    moves; with ``rollout_depth`` set and ``evaluate`` given, rollouts stop
    after that many steps and ``evaluate`` estimates the rewards. ``c`` is
    the UCB exploration constant.
    """

    game: Game
    seat: str
    rng: random.Random
    reward: Callable[[Outcome], Rewards] = Reward()
    policy: Policy = random_policy
    evaluate: Evaluate | None = None
    rollout_depth: int | None = None
    c: float = 0.7

    def search(
        self, state: Any, budget: Budget, candidates: Sequence[str] | None = None
    ) -> dict[str, tuple[int, float]]:
        """Run the search from ``state`` (``seat`` must be awaited) and return,
        for each of ``seat``'s root moves (restricted to ``candidates`` if
        given), ``(visits, mean reward)``. Raises ``ValueError`` if ``seat``
        is not awaited."""
        game = self.game
        if self.seat not in game.to_move(state):
            raise ValueError(f"{self.seat} is not awaited")
        budget = budget.effective()
        deadline = None if budget.seconds is None else time.perf_counter() + budget.seconds
        limit = budget.iterations
        allowed = None if candidates is None else frozenset(candidates)
        root = _Node()
        done = 0
        while True:
            self._iterate(root, game.determinize(state, self.seat, self.rng), allowed)
            done += 1
            if limit is not None and done >= limit:
                break
            if deadline is not None and time.perf_counter() >= deadline:
                break
        edges = root.edges.get(self.seat, {})
        return {m: (e.visits, e.total / e.visits if e.visits else 0.0) for m, e in edges.items()}

    def best_move(
        self, state: Any, budget: Budget, candidates: Sequence[str] | None = None
    ) -> str:
        """The most visited root move of ``seat`` (ties: higher mean reward,
        then the earlier legal move). A single legal move is returned without
        searching."""
        moves = self.game.legal_moves(state, self.seat)
        if candidates is not None:
            moves = tuple(m for m in moves if m in candidates) or moves
        if len(moves) == 1:
            return moves[0]
        stats = self.search(state, budget, moves)
        order = {m: i for i, m in enumerate(moves)}
        return max(
            (m for m in moves if m in stats),
            key=lambda m: (stats[m][0], stats[m][1], -order[m]),
            default=moves[0],
        )

    # ---- one iteration ---------------------------------------------------------------
    def _iterate(self, root: _Node, state: Any, allowed: frozenset[str] | None) -> None:
        game, rng, c = self.game, self.rng, self.c
        sqrt, log = math.sqrt, math.log
        node = root
        path: list[tuple[_Edge, str]] = []
        while True:
            seats = game.to_move(state)
            if not seats:
                break
            picks: list[str] = []
            for seat in seats:
                moves = game.legal_moves(state, seat)
                if node is root and seat == self.seat and allowed is not None:
                    moves = tuple(m for m in moves if m in allowed) or moves
                edges = node.edges.get(seat)
                if edges is None:
                    edges = node.edges[seat] = {}
                untried = []
                best: _Edge | None = None
                best_move = ""
                best_score = -1.0
                for m in moves:
                    e = edges.get(m)
                    if e is None:
                        untried.append(m)
                        continue
                    e.avail += 1
                    if not untried:
                        visits = e.visits
                        score = e.total / visits + c * sqrt(log(e.avail) / visits)
                        if score > best_score:
                            best, best_move, best_score = e, m, score
                if untried:
                    move = untried[rng.randrange(len(untried))]
                    best = edges[move] = _Edge()
                    best.avail = 1
                    best_move = move
                assert best is not None
                path.append((best, seat))
                picks.append(best_move)
            for seat, move in zip(seats, picks, strict=True):
                state = game.apply(state, seat, move)
            key = tuple(picks)
            child = node.children.get(key)
            if child is None:
                node.children[key] = _Node()
                break
            node = child
        rewards = self.rollout(state)
        for edge, seat in path:
            edge.visits += 1
            edge.total += rewards.get(seat, 0.0)

    def rollout(self, state: Any) -> Rewards:
        """Play ``policy`` moves from ``state`` to the end (or for
        ``rollout_depth`` steps, then ``evaluate``) and return the rewards."""
        game, rng, policy = self.game, self.rng, self.policy
        depth = 0
        cut = self.rollout_depth if self.evaluate is not None else None
        while True:
            seats = game.to_move(state)
            if not seats:
                outcome = game.outcome(state)
                return self.reward(outcome) if outcome is not None else {}
            if cut is not None and depth >= cut:
                assert self.evaluate is not None
                return self.evaluate(state)
            for seat in seats:
                state = game.apply(state, seat, policy(state, seat, game.legal_moves(state, seat), rng))
            depth += 1
