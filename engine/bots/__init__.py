"""Computer players for every game in the registry.

The one entry point is :func:`choose_move`. It is a pure function of
picklable inputs (game id, state, seat, level, budget, seed), so the server
can run it in a thread or process pool. Every move it returns comes from
``legal_moves``.

Levels:

* ``easy``: a random legal move, except that it takes a move that wins at
  once and avoids a move that lets the next seat win at once (on its own
  seat's knowledge only). "Random" is the game's rollout policy: uniform,
  except in Romeo and Juliet, where it mostly steps its Romeo (uniform, nine
  moves in ten would be Joker swaps, and the game drifted to the turn limit).
* ``medium``: a move that wins at once if there is one, else the generic
  searcher (:mod:`engine.bots.mcts`) with a tenth of the budget
  (``Profile.medium_share``).
* ``strong``: the whole budget, plus the game's exact search where there is
  one (:data:`PROFILES`): Stucco after the opening, Get Stuck endgames,
  Romeo and Juliet short forced wins.

Hidden information: every level works on ``game.determinize(state, seat,
rng)``, never on the state itself, so it only uses what ``seat`` may know.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from engine.base import Game, Outcome
from engine.bots import getstuck, romeo, stucco, suitors
from engine.bots.mcts import Budget, Evaluate, Policy, Reward, Searcher, random_policy
from engine.registry import get_game

LEVELS = ("easy", "medium", "strong")
"""The levels, weakest first."""

DEFAULT_SECONDS = 1.0
"""Default thinking time of the strong level, in seconds per move."""

Exact = Callable[[Game, Any, str, Budget, random.Random], "tuple[str | None, tuple[str, ...] | None]"]
"""A game's exact search for the strong level: ``(game, state, seat, budget,
rng) -> (move, candidates)``: a move it proved best (or ``None`` when it
cannot settle the position in budget), else optionally the moves the searcher
should choose among (``None``: all of them)."""


@dataclass(frozen=True)
class Profile:
    """How the generic searcher plays one game, and its exact search.

    ``reward`` turns outcomes into rewards (win/loss, maybe with the
    margin); ``policy``, ``evaluate`` and ``rollout_depth`` shape rollouts
    (see :class:`engine.bots.mcts.Searcher`); ``c`` is the exploration
    constant; ``exact`` is the strong level's exact search (or ``None``);
    ``medium_share`` is the share of the budget the medium level uses.
    """

    reward: Reward = field(default_factory=Reward)
    policy: Policy = random_policy
    evaluate: Evaluate | None = None
    rollout_depth: int | None = None
    c: float = 0.7
    exact: Exact | None = None
    medium_share: float = 0.1


Found = tuple[str | None, tuple[str, ...] | None]


def _getstuck_exact(game: Game, state: Any, seat: str, budget: Budget, rng: random.Random) -> Found:
    return getstuck.exact_move(game, state, seat, budget), None


def _stucco_exact(game: Game, state: Any, seat: str, budget: Budget, rng: random.Random) -> Found:
    return stucco.exact_move(state, seat, rng), None


def _romeo_exact(game: Game, state: Any, seat: str, budget: Budget, rng: random.Random) -> Found:
    return romeo.exact_move(game, state, seat, budget)


PROFILES: dict[str, Profile] = {
    "get-stuck": Profile(reward=Reward(0.1, 40.0), exact=_getstuck_exact),
    "get-stuck-4": Profile(reward=Reward(0.1, 60.0), exact=_getstuck_exact),
    "stucco": Profile(reward=Reward(0.5, 15.0), exact=_stucco_exact),
    "romeo-and-juliet": Profile(
        policy=romeo.policy, evaluate=romeo.evaluate, rollout_depth=2, exact=_romeo_exact
    ),
    "suitors": Profile(policy=suitors.policy, evaluate=suitors.evaluate, rollout_depth=8),
}
"""Per game id; a game missing here gets the default :class:`Profile`."""


def profile(game_id: str) -> Profile:
    """The searcher settings for ``game_id`` (the default for a game without
    its own)."""
    return PROFILES.get(game_id, Profile())


def choose_move(
    game_id: str,
    state: Any,
    seat: str,
    level: str = "medium",
    seconds: float | None = DEFAULT_SECONDS,
    rng: random.Random | int = 0,
    iterations: int | None = None,
) -> str:
    """The move the computer player at ``seat`` makes in ``state``.

    ``level`` is one of :data:`LEVELS`. The budget is ``seconds`` of thinking
    (the strong level's; medium uses a tenth or less, easy next to nothing) and/or
    ``iterations`` of search; give ``seconds=None`` and an ``iterations``
    count for play that depends only on the inputs. ``rng`` is a seed or a
    ``random.Random``. The result is always one of ``legal_moves(state,
    seat)``.

    Raises ``KeyError`` for an unknown game and ``ValueError`` for an unknown
    level or a seat that is not awaited.
    """
    if level not in LEVELS:
        raise ValueError(f"unknown level {level!r}: choose one of {', '.join(LEVELS)}")
    game = get_game(game_id)
    if seat not in game.to_move(state):
        raise ValueError(f"{seat} is not awaited")
    rand = rng if isinstance(rng, random.Random) else random.Random(rng)
    moves = game.legal_moves(state, seat)
    if len(moves) == 1:
        return moves[0]
    budget = Budget(seconds, iterations).effective()
    prof = profile(game_id)
    if level == "easy":
        move = easy_move(game, state, seat, rand, prof.policy)
    elif level == "medium":
        move = winning_now(game, state, seat, rand) or _search(
            game, prof, state, seat, budget.scaled(prof.medium_share), rand
        )
    else:
        move = _strong(game, prof, state, seat, budget, rand)
    if move not in moves:  # a defect in a bot: never let it reach the game
        raise AssertionError(f"bot chose {move!r}, which is not legal")
    return move


def _search(
    game: Game,
    prof: Profile,
    state: Any,
    seat: str,
    budget: Budget,
    rng: random.Random,
    candidates: tuple[str, ...] | None = None,
) -> str:
    searcher = Searcher(
        game, seat, rng, prof.reward, prof.policy, prof.evaluate, prof.rollout_depth, prof.c
    )
    return searcher.best_move(state, budget, candidates)


def _strong(game: Game, prof: Profile, state: Any, seat: str, budget: Budget, rng: random.Random) -> str:
    candidates = None
    if prof.exact is not None:
        start = time.perf_counter()
        move, candidates = prof.exact(game, state, seat, budget, rng)
        if move is not None:
            return move
        if budget.seconds is not None:
            left = max(budget.seconds * 0.1, budget.seconds - (time.perf_counter() - start))
            budget = Budget(left, budget.iterations)
    return winning_now(game, state, seat, rng) or _search(
        game, prof, state, seat, budget, rng, candidates
    )


def winning_now(game: Game, state: Any, seat: str, rng: random.Random) -> str | None:
    """The first legal move that ends the deal with ``seat``'s side the sole
    winner (judged on a state drawn from ``seat``'s knowledge), or ``None``.
    Skipped while several seats pick at once."""
    if len(game.to_move(state)) > 1:
        return None
    world = game.determinize(state, seat, rng)
    for move in game.legal_moves(state, seat):
        if _result(game.outcome(game.apply(world, seat, move)), seat) == 1:
            return move
    return None


def easy_move(game: Game, state: Any, seat: str, rng: random.Random,
              policy: Policy = random_policy) -> str:
    """The easy level: on a state drawn from ``seat``'s knowledge, a move that
    wins at once if there is one, else one ``policy`` picks (the game's
    rollout policy; uniform by default) among the moves after which the next
    seat cannot win at once (among all if none is safe)."""
    moves = game.legal_moves(state, seat)
    if len(game.to_move(state)) > 1:
        return moves[rng.randrange(len(moves))]
    world = game.determinize(state, seat, rng)
    wins, safe = [], []
    for move in moves:
        child = game.apply(world, seat, move)
        result = _result(game.outcome(child), seat)
        if result == 1:
            wins.append(move)
        elif result is None and not _reply_wins(game, child, seat):
            safe.append(move)
    if wins:
        return wins[rng.randrange(len(wins))]
    return policy(world, seat, tuple(safe) or tuple(moves), rng)


def _result(outcome: Outcome | None, seat: str) -> int | None:
    """For ``seat``'s side: 1 for a sole win, -1 for a loss, 0 for a draw or
    a shared win, ``None`` while the deal is in play."""
    if outcome is None:
        return None
    if not outcome.winners:
        return 0
    mine = {s.side for s in outcome.scores if seat in s.seats}
    if not mine & set(outcome.winners):
        return -1
    return 1 if len(outcome.winners) == 1 else 0


def _reply_wins(game: Game, state: Any, seat: str) -> bool:
    """True if a seat awaited in ``state`` (other than ``seat``) has a move
    that ends the deal with ``seat``'s side losing."""
    return any(
        _result(game.outcome(game.apply(state, other, move)), seat) == -1
        for other in game.to_move(state)
        if other != seat
        for move in game.legal_moves(state, other)
    )
