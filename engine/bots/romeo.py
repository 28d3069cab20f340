"""Romeo and Juliet knowledge for the computer players.

* :func:`distances`: the fewest Romeo moves from each Romeo's square to its
  Juliet on the current layout (ignoring swaps; the other Romeo's blocking
  counted up to :data:`BLOCKED` moves), by breadth-first search over the
  game's own move rule (``romeo_steps``).
* :func:`evaluate`: the searcher's cut-off estimate, from the race between
  the two distances (the seat to move is half a move ahead), drawn towards
  a draw while the race is long or the position repeats, a draw once
  neither Romeo can ever move again.
* :func:`exact_move`: the strong level's exact search once the race is
  short: a move that wins by force within :data:`WIN_DEPTH` of our own turns
  (every reply of the opponent considered, swaps included), else the list of
  moves after which the opponent cannot land on its Juliet at once, for the
  searcher to choose among.
"""

from __future__ import annotations

import math
import random
import time

from engine.base import Game
from engine.bots.mcts import Budget, Rewards
from engine.romeo import HOME, JULIET, NAMES, SEATS, TURN_LIMIT, RomeoState, romeo_steps

UNREACHABLE = 20
"""The distance counted for a Juliet that cannot be reached on this layout."""

BLOCKED = 2
"""Moves added to a Romeo's distance when the other Romeo blocks its path."""

TEMPERATURE = 1.2
"""How sharply a lead of one move in the race raises the estimate."""

PATIENCE = 0.95
"""How much of the race estimate is kept per move the nearer Romeo still
needs (the rest goes to a draw)."""

REPEATED = 0.5
"""How much of the estimate is kept for each earlier occurrence of the
position (a third occurrence is a draw)."""

SWAPS_KEPT = 6
"""Swaps the strong level's search considers (see :func:`focus`)."""

WIN_DEPTH = 2
"""Our own turns within which :func:`exact_move` looks for a forced landing."""

EXACT_RANGE = 3
"""The exact search runs when either Romeo is at most this many moves from
its Juliet (before that no forced landing within :data:`WIN_DEPTH` exists
for us, and the opponent is not about to land)."""


def path_length(state: RomeoState, seat: int, other: int, limit: int = UNREACHABLE) -> int:
    """The fewest Romeo moves that bring ``seat``'s Romeo (0 Red, 1 Black) to
    its Juliet on the current layout without swaps, with the other Romeo on
    square ``other`` (-1: ignore it); :data:`UNREACHABLE` if none does in
    fewer than ``limit`` moves."""
    start, goal = state.romeos[seat], JULIET[seat]
    if start == goal:
        return 0
    cells = state.cells
    seen = {start}
    frontier = [start]
    d = 0
    while frontier and d < limit:
        d += 1
        nxt = []
        for sq in frontier:
            for x in romeo_steps(cells, sq, seat, other):
                if x == goal:
                    return d
                if x not in seen:
                    seen.add(x)
                    nxt.append(x)
        frontier = nxt
    return UNREACHABLE


def distances(state: RomeoState) -> tuple[int, int]:
    """How far Red's and Black's Romeos are from their Juliets, in moves:
    the shortest path on the current layout where the other Romeo stands,
    but at most :data:`BLOCKED` more than the path ignoring it (the other
    Romeo moves on, though a Romeo it walls in may wait long)."""
    out = []
    for seat in (0, 1):
        d = path_length(state, seat, -1)
        if d < UNREACHABLE:  # the path past the other Romeo, if not too long
            d = min(path_length(state, seat, state.romeos[1 - seat], d + BLOCKED), d + BLOCKED)
        out.append(d)
    return out[0], out[1]


def distance(state: RomeoState, seat: int) -> int:
    """``seat``'s entry of :func:`distances` (0 Red, 1 Black)."""
    return distances(state)[seat]


def frozen(state: RomeoState, seat: int) -> bool:
    """True if ``seat``'s Romeo cannot move as long as the other Romeo stays
    where it is, whatever swaps are made: it stands on a card that is no
    Joker (a card under a Romeo never swaps, so its routes never change) and
    every route of that card is barred (by the other Romeo, or ending on its
    own starting Queen). Never true on the starting Queen (three steps, the
    other Romeo can bar one)."""
    sq = state.romeos[seat]
    if sq == HOME[seat] or state.cells[sq][0] == "7":
        return False
    return not romeo_steps(state.cells, sq, seat, state.romeos[1 - seat])


def deadlocked(state: RomeoState) -> bool:
    """True if neither Romeo can ever move again (both :func:`frozen`): only
    swaps are left and the game can only end in a draw."""
    return frozen(state, 0) and frozen(state, 1)


def evaluate(state: RomeoState) -> Rewards:
    """Each seat's estimated chance to win: a logistic of the race, the
    opponent's distance minus ours, plus half a move for the seat to move,
    drawn towards a draw by :data:`PATIENCE` per move the nearer Romeo still
    needs (so that a won race is also a short one, and a lead is not spent on
    swaps until the turn limit), and by :data:`REPEATED` for each earlier
    occurrence of the position (a third one is a draw); exactly a draw once
    the Romeos are :func:`deadlocked` or neither can arrive before the turn
    limit."""
    if state.end:
        if state.end == "won":
            w = 1 - state.turn
            return {SEATS[w]: 1.0, SEATS[1 - w]: 0.0}
        return {SEATS[0]: 0.5, SEATS[1]: 0.5}
    if deadlocked(state):
        return {SEATS[0]: 0.5, SEATS[1]: 0.5}
    red_d, black_d = distances(state)
    nearer = min(red_d, black_d)
    if 2 * nearer > TURN_LIMIT - state.turns:  # no Romeo can arrive in time
        return {SEATS[0]: 0.5, SEATS[1]: 0.5}
    lead = black_d - red_d + (0.5 if state.turn == 0 else -0.5)
    red = 1.0 / (1.0 + math.exp(-lead / TEMPERATURE))
    keep = PATIENCE ** nearer * REPEATED ** (state.seen.count(state.key) - 1)
    red = 0.5 + (red - 0.5) * keep
    return {SEATS[0]: red, SEATS[1]: 1.0 - red}


def policy(state: RomeoState, seat: str, moves: tuple[str, ...], rng: random.Random) -> str:
    """Rollout policy: land on Juliet when possible; else usually a Romeo
    move, sometimes a swap."""
    goal = NAMES[JULIET[state.turn]]
    if goal in moves:
        return goal
    steps = [m for m in moves if not m.startswith("swap")]
    if steps and rng.random() < 0.8:
        return steps[rng.randrange(len(steps))]
    return moves[rng.randrange(len(moves))]


def lands(state: RomeoState) -> bool:
    """True if the seat to move can land on its Juliet now."""
    return not state.end and NAMES[JULIET[state.turn]] in state.moves


def forces(game: Game, state: RomeoState, move: str, turns: int, deadline: float | None) -> bool:
    """True if ``move`` by the seat to move in ``state`` forces a landing on
    its Juliet within ``turns`` more of its own turns, whatever the opponent
    replies (a reply that wins or draws refutes it). Raises ``TimeoutError``
    past ``deadline`` (a ``time.perf_counter()`` value)."""
    if deadline is not None and time.perf_counter() > deadline:
        raise TimeoutError
    seat = SEATS[state.turn]
    child = game.apply(state, seat, move)
    if child.end:
        return child.end == "won"
    if turns < 1 or lands(child):
        return False
    other = SEATS[child.turn]
    for r in child.moves:
        reply = game.apply(child, other, r)
        if reply.end or not (
            lands(reply)
            or (turns > 1 and any(forces(game, reply, m, turns - 1, deadline) for m in reply.moves))
        ):
            return False
    return True


def exact_move(
    game: Game, state: RomeoState, seat: str, budget: Budget
) -> tuple[str | None, tuple[str, ...] | None]:
    """For ``seat`` (to move): ``(move, safe)`` where ``move`` lands on our
    Juliet now or forces a landing within :data:`WIN_DEPTH` of our turns
    (else ``None``), and ``safe`` lists the moves after which the opponent
    cannot land at once, narrowed by :func:`focus` (``None`` when no move is
    safe); before the race is close enough to look, every move narrowed by
    :func:`focus`. Half the seconds budget bounds the search."""
    if state.end or SEATS[state.turn] != seat:
        return None, None
    me = state.turn
    goal = NAMES[JULIET[me]]
    if goal in state.moves:
        return goal, None
    if min(distances(state)) > EXACT_RANGE:
        return None, focus(game, state, seat, state.moves)
    seconds = budget.effective().seconds
    deadline = None if seconds is None else time.perf_counter() + seconds / 2
    safe = []
    for move in state.moves:
        child = game.apply(state, seat, move)
        if not child.end and not lands(child):
            safe.append(move)
    try:
        for move in safe:
            if forces(game, state, move, WIN_DEPTH - 1, deadline):
                return move, tuple(safe)
    except TimeoutError:
        pass
    return None, focus(game, state, seat, tuple(safe)) if safe else None


def focus(game: Game, state: RomeoState, seat: str, moves: tuple[str, ...]) -> tuple[str, ...]:
    """The moves of ``moves`` worth the strong level's search: every Romeo
    move (and a pass), and the :data:`SWAPS_KEPT` swaps after which
    :func:`evaluate` rates ``seat`` best (the earlier on ties), in the order
    of ``moves``. Most swaps change nothing that matters, and a search spread
    over all of them sees no further than a move or two."""
    swaps = [m for m in moves if m.startswith("swap")]
    if len(swaps) <= SWAPS_KEPT:
        return moves
    rated = sorted(swaps, key=lambda m: -evaluate(game.apply(state, seat, m))[seat])
    kept = set(rated[:SWAPS_KEPT])
    return tuple(m for m in moves if m in kept or not m.startswith("swap"))
