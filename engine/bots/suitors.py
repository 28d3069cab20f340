"""Suitors knowledge for the generic searcher: a cut-off evaluation and a
rollout policy.

Random Suitors games wander for hundreds of turns, so rollouts stop after a
few moves and :func:`evaluate` scores the position by how close each Jack
is to the Queen. Both functions are only ever called on states drawn by
``determinize`` inside the search, and only look at face-up cards (the
Jacks' squares), so they use nothing a seat could not see.
"""

from __future__ import annotations

import math
import random

from engine.bots.mcts import Rewards
from engine.suitors import SuitorsState

TEMPERATURE = 1.5
"""How sharply a step nearer the Queen raises a seat's estimate."""


def distance(state: SuitorsState, seat: str) -> int:
    """Orthogonal steps from ``seat``'s Jack to the nearest square next to the
    Queen (0 when it is there)."""
    board = state.board
    w = board.width
    jack = state.cells.index(seat)
    jc, jr = jack % w, jack // w
    return min(abs(jc - sq % w) + abs(jr - sq // w) for sq in board.near_queen)


def evaluate(state: SuitorsState) -> Rewards:
    """An estimate of each seat's chance to win: a softmax of minus the
    Jacks' distances to the Queen, the winner (if any) taking 1."""
    if state.over:
        win = state.winner
        n = len(state.seats)
        return {s: (1.0 if s == win else 0.0) if win else 1.0 / n for s in state.seats}
    weights = {s: math.exp(-distance(state, s) / TEMPERATURE) for s in state.seats}
    total = sum(weights.values())
    return {s: w / total for s, w in weights.items()}


def policy(state: SuitorsState, seat: str, moves: tuple[str, ...], rng: random.Random) -> str:
    """Rollout policy: half the time a jump (if any), else any move at random."""
    if rng.random() < 0.5:
        jumps = [m for m in moves if "-" in m]
        if jumps:
            return jumps[rng.randrange(len(jumps))]
    return moves[rng.randrange(len(moves))]
