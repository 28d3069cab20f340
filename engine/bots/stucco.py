"""Perfect play for Stucco (the strong level).

After the opening Stucco is a small game of perfect information: both hands
are public and the spread is a path through the 32 cards. :class:`Solver`
searches it exactly: negamax with alpha-beta over the cards still in hand,
the last card (whose owner is the seat that played it), and the length of
that seat's current turn, with a transposition table of value bounds. The
value is the deal score of the seat that played the last card minus its
opponent's (only the player of the last card scores, ruling 5), so
maximising it maximises the mover's score minus the opponent's.

The secret opening (ruling 2) is a 2×2 zero-sum game in colours. Let
``W(x)`` be the exact value, for its owner, of opening the spread with card
``x``. Whoever's card opens the spread, its owner would pick the best card of
the colour it chose, so each seat's only real choice is a colour: with
``A[col]`` the best ``W`` of our cards of colour ``col`` and ``B[col]`` the
opponent's, the payoff to us of colours ``(ours, theirs)`` is ``A[ours]`` when
our card opens and ``-B[theirs]`` when theirs does (the colour rule says
which). :func:`opening_pick` plays the optimal mixed strategy of that matrix
(a pure one when it has a saddle point), drawing the colour from the rng, then
the best card of that colour. It never looks at the opponent's pick: only at
the public hands and the dealer.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from engine.stucco import (
    CARDS,
    CODE,
    FOLLOW_MASK,
    HAND_SIZE,
    SEAT_INDEX,
    SEATS,
    StuccoState,
    colour,
    spread_score,
    starter_by_colours,
)

INF = 1 << 20
FULL = (1 << 32) - 1


@dataclass
class Solver:
    """Exact Stucco search for one deal, whose seats were dealt the card masks
    ``own`` (north, south: hand plus cards already played). The
    transposition table persists across calls; ``nodes`` counts the positions
    searched."""

    own: tuple[int, int]
    nodes: int = 0
    _table: dict[int, tuple[int, int]] = field(default_factory=dict)

    def owner(self, card: int) -> int:
        """The seat index that was dealt ``card``."""
        return 0 if self.own[0] >> card & 1 else 1

    def value(self, rest: int, last: int, run: int, alpha: int = -INF, beta: int = INF) -> int:
        """The exact deal-score difference for the seat that played ``last``
        (card int) as the ``run``-th card of its current turn, with the cards
        of ``rest`` (mask) still in the hands, both sides playing perfectly.
        With a window, a result ``<= alpha`` or ``>= beta`` is only a bound
        (fail-soft alpha-beta)."""
        key = rest | last << 32 | run << 37
        table = self._table
        entry = table.get(key)
        lo, hi = -INF, INF
        if entry is not None:
            lo, hi = entry
            if lo >= beta or lo == hi:
                return lo
            if hi <= alpha:
                return hi
            alpha = max(alpha, lo)
            beta = min(beta, hi)
        self.nodes += 1
        a0, b0 = alpha, beta
        follow = FOLLOW_MASK[last]
        p = self.owner(last)
        mine = rest & self.own[p]
        theirs = rest & self.own[1 - p] & follow
        best = -INF
        if theirs:  # the opponent must follow: our value is minus its best
            cards = _bits(theirs)
            if len(cards) > 1:  # first the cards we cannot answer
                cards.sort(key=lambda d: (FOLLOW_MASK[d] & mine).bit_count())
            q_alpha, q_beta = -beta, -alpha
            for d in cards:
                x = self.value(rest ^ (1 << d), d, 1, q_alpha, q_beta)
                if x > best:
                    best = x
                    if x > q_alpha:
                        q_alpha = x
                        if q_alpha >= q_beta:
                            break
            best = -best
        elif mine & follow:  # the opponent passes and our turn goes on
            for d in _bits(mine & follow):
                x = self.value(rest ^ (1 << d), d, run + 1, alpha, beta)
                if x > best:
                    best = x
                    if x > alpha:
                        alpha = x
                        if alpha >= beta:
                            break
        else:  # nobody can follow: we played the last card (ruling 5)
            best = spread_score(HAND_SIZE - mine.bit_count(), run)
            table[key] = (best, best)
            return best
        if best <= a0:
            table[key] = (lo, best)
        elif best >= b0:
            table[key] = (best, hi)
        else:
            table[key] = (best, best)
        return best

    def opening_value(self, card: int, floor: int = -INF) -> int:
        """``W(card)``: the exact value, for its owner, of the spread opened
        with ``card``; only an upper bound when it is at most ``floor`` (a
        value already found, which this card must beat to matter)."""
        return self.value(FULL ^ (1 << card), card, 1, floor, INF)

    def move_values(self, state: StuccoState) -> dict[str, int]:
        """The exact value of each card the seat on turn may play, for that
        seat (its deal score minus the opponent's). Empty when it can only
        pass or the deal is over."""
        if not state.spread:
            return {}
        rest = state.hands[0] | state.hands[1]
        top = state.spread[-1]
        last, p = top & 31, top >> 5
        mover = state.turn
        options = state.hands[mover] & FOLLOW_MASK[last]
        out: dict[str, int] = {}
        for d in _bits(options):
            if mover == p:  # the opponent passed: our turn goes on
                out[CARDS[d]] = self.value(rest ^ (1 << d), d, state.run + 1)
            else:
                out[CARDS[d]] = self.value(rest ^ (1 << d), d, 1)
        return out


def _bits(mask: int) -> list[int]:
    """The set bit positions of ``mask``, lowest first."""
    out = []
    while mask:
        low = mask & -mask
        out.append(low.bit_length() - 1)
        mask ^= low
    return out


def dealt(state: StuccoState) -> tuple[int, int]:
    """Each seat's dealt cards (hand plus cards it played to the spread)."""
    own = [state.hands[0], state.hands[1]]
    for e in state.spread:
        own[e >> 5] |= 1 << (e & 31)
    return own[0], own[1]


def best_play(state: StuccoState) -> tuple[str, int] | None:
    """After the opening: the card that maximises the mover's deal score
    minus the opponent's, with that exact value (the first such card in
    notation order on ties); ``None`` when the mover can only pass or the
    deal is over."""
    values = Solver(dealt(state)).move_values(state)
    if not values:
        return None
    card = max(values, key=lambda c: (values[c], -CODE[c]))
    return card, values[card]


def opening_matrix(state: StuccoState, seat: str, solver: Solver | None = None) -> tuple[
    dict[tuple[int, int], int], dict[int, int]
]:
    """For ``seat`` during the opening: the payoff to ``seat`` of each pair
    of colours ``(ours, theirs)`` (0 black, 1 red; only colours each seat
    holds), and the best card of ours in each colour. Uses only the public
    hands and the dealer."""
    me = SEAT_INDEX[seat]
    solver = solver or Solver(dealt(state))
    best_a: dict[int, int] = {}
    value_a: dict[int, int] = {}
    value_b: dict[int, int] = {}
    for card in _bits(state.hands[me]):
        col = colour(card)
        w = solver.opening_value(card, value_a.get(col, -INF))
        if col not in value_a or w > value_a[col]:
            value_a[col], best_a[col] = w, card
    for card in _bits(state.hands[1 - me]):
        col = colour(card)
        w = solver.opening_value(card, value_b.get(col, -INF))
        value_b[col] = max(w, value_b.get(col, -INF))
    matrix = {}
    for ours, a in value_a.items():
        for theirs, b in value_b.items():
            north, south = (ours, theirs) if me == 0 else (theirs, ours)
            we_open = starter_by_colours(state.dealer, north, south) == me
            matrix[ours, theirs] = a if we_open else -b
    return matrix, best_a


def equilibrium(matrix: dict[tuple[int, int], int]) -> dict[int, float]:
    """An optimal mixed strategy of the row player in a zero-sum game with at
    most 2×2 entries ``matrix[row, col]`` (payoff to the row player): the
    probability of each row. A pure strategy when there is a saddle point."""
    rows = sorted({r for r, _ in matrix})
    cols = sorted({c for _, c in matrix})
    maximin = max(rows, key=lambda r: min(matrix[r, c] for c in cols))
    lower = min(matrix[maximin, c] for c in cols)
    upper = min(max(matrix[r, c] for r in rows) for c in cols)
    if lower == upper or len(rows) == 1 or len(cols) == 1:
        return {maximin: 1.0}
    (a, b), (c, d) = [[matrix[r, col] for col in cols] for r in rows]
    p = (d - c) / (a - b - c + d)
    return {rows[0]: p, rows[1]: 1.0 - p}


def opening_pick(state: StuccoState, seat: str, rng: random.Random) -> str:
    """The strong level's secret pick: a colour drawn from the equilibrium of
    :func:`opening_matrix`, then our best card of that colour."""
    matrix, best = opening_matrix(state, seat)
    mix = equilibrium(matrix)
    roll = rng.random()
    chosen = max(mix)
    for col in sorted(mix):
        if roll < mix[col]:
            chosen = col
            break
        roll -= mix[col]
    return CARDS[best[chosen]]


def exact_move(state: StuccoState, seat: str, rng: random.Random) -> str | None:
    """The strong level's Stucco move for ``seat``: the opening pick, or the
    best card after the opening; ``None`` when ``seat`` can only pass."""
    if not state.spread:
        return opening_pick(state, seat, rng)
    if SEATS[state.turn] != seat:
        return None
    found = best_play(state)
    return None if found is None else found[0]
