"""A match: the deals of one game in order, shared by every game.

A :class:`Match` is immutable. It holds the finished deals (each with its seed,
starter, moves and outcome), the deal in play and its moves, so that the match
seed plus the moves replay everything exactly (convention 7). Deal ``k`` is
dealt from ``derive_seed(match_seed, "deal", k)``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from engine.base import JSON, Game, Outcome
from engine.cards import derive_seed
from engine.registry import get_game


class MatchError(ValueError):
    """An action that the match does not allow now (e.g. the next deal while a
    deal is in play)."""


@dataclass(frozen=True)
class Deal:
    """One deal: its seed, its starter seat, the moves as ``(seat, move)``
    pairs, and its outcome once over."""

    seed: int
    starter: str
    moves: tuple[tuple[str, str], ...]
    outcome: Outcome | None


@dataclass(frozen=True)
class Match:
    """A match of ``game_id`` with checked ``options`` (as sorted pairs) and
    ``seed``. ``finished`` are the deals already over; ``state`` is the deal in
    play (or the last one, once it is over) and ``current`` its record."""

    game_id: str
    options: tuple[tuple[str, Any], ...]
    seed: int
    finished: tuple[Deal, ...]
    current: Deal
    state: Any

    # ---- construction ---------------------------------------------------------------
    @staticmethod
    def new(game_id: str, options: Mapping[str, Any], seed: int) -> Match:
        """A match with its first deal dealt. ``options`` must be checked
        (``Game.check_options``)."""
        game = get_game(game_id)
        opts = tuple(sorted(options.items()))
        return Match(game_id, opts, seed, (), *_start(game, dict(opts), seed, 0))

    @property
    def game(self) -> Game:
        """The game's rules."""
        return get_game(self.game_id)

    @property
    def opts(self) -> dict[str, Any]:
        """The options as a dict."""
        return dict(self.options)

    # ---- queries --------------------------------------------------------------------
    @property
    def deal_number(self) -> int:
        """1-based number of the deal in play (or just finished)."""
        return len(self.finished) + 1

    @property
    def deal_over(self) -> bool:
        """True when the current deal has ended."""
        return self.current.outcome is not None

    @property
    def outcomes(self) -> tuple[Outcome, ...]:
        """Outcomes of every ended deal, the current one included if over."""
        done = tuple(d.outcome for d in self.finished if d.outcome is not None)
        return done + ((self.current.outcome,) if self.current.outcome else ())

    @property
    def over(self) -> bool:
        """True when the match has ended."""
        return self.deal_over and self.game.match_over(self.opts, self.outcomes)

    def totals(self) -> dict[str, int]:
        """Cumulative points per side over every ended deal."""
        game = self.game
        tot = {name: 0 for name, _ in game.sides(self.opts)}
        for o in self.outcomes:
            for s in o.scores:
                tot[s.side] += s.points
        return tot

    def winners(self) -> tuple[str, ...]:
        """The sides with the highest total (all of them on a tie); empty before
        the match is over."""
        if not self.over:
            return ()
        tot = self.totals()
        best = max(tot.values())
        return tuple(s for s, p in tot.items() if p == best)

    # ---- actions --------------------------------------------------------------------
    def play(self, seat: str, move: str) -> Match:
        """The match after ``seat`` plays ``move`` in the current deal.

        Raises ``MalformedMove`` / ``IllegalMove`` from the game.
        """
        game = self.game
        state = game.apply(self.state, seat, move)
        deal = Deal(
            self.current.seed,
            self.current.starter,
            (*self.current.moves, _pair(seat, move)),
            game.outcome(state),
        )
        return Match(self.game_id, self.options, self.seed, self.finished, deal, state)

    def next_deal(self) -> Match:
        """The match with its next deal dealt. Raises :class:`MatchError` if the
        current deal is not over or the match is."""
        if not self.deal_over:
            raise MatchError("the deal is still in play")
        if self.over:
            raise MatchError("the match is over")
        finished = (*self.finished, self.current)
        deal, state = _start(self.game, self.opts, self.seed, len(finished))
        return Match(self.game_id, self.options, self.seed, finished, deal, state)

    # ---- JSON -----------------------------------------------------------------------
    def to_json(self) -> JSON:
        """The match as JSON: game, options, seed and every deal's moves. Secret
        (it holds the seed): never send it to a browser."""
        return {
            "game": self.game_id,
            "options": dict(self.options),
            "seed": self.seed,
            "deals": [[list(m) for m in d.moves] for d in (*self.finished, self.current)],
        }

    @staticmethod
    def from_json(data: JSON) -> Match:
        """Rebuild a match from :meth:`to_json` output by replaying its moves.

        Raises ``ValueError`` (or a move error) if the record does not replay.
        """
        game = get_game(data["game"])
        m = Match.new(data["game"], game.check_options(data["options"]), int(data["seed"]))
        for i, moves in enumerate(data["deals"]):
            if i:
                m = m.next_deal()
            for seat, move in moves:
                m = m.play(seat, move)
        return m


_PAIRS: dict[tuple[str, str], tuple[str, str]] = {}
"""Every ``(seat, move)`` pair played so far, kept once for all matches: a
move record holds shared pairs, not two strings and a tuple of its own per
move. Only moves that a game accepted get here, so the table is bounded by
the games' notations (seats times well-formed moves)."""


def _pair(seat: str, move: str) -> tuple[str, str]:
    """The shared ``(seat, move)`` pair (see :data:`_PAIRS`)."""
    pair = (seat, move)
    return _PAIRS.setdefault(pair, pair)


def _start(game: Game, options: dict[str, Any], seed: int, index: int) -> tuple[Deal, Any]:
    deal_seed = derive_seed(seed, "deal", index)
    starter = game.starter(options, seed, index)
    state = game.deal(deal_seed, options, starter)
    return Deal(deal_seed, starter, (), game.outcome(state)), state
