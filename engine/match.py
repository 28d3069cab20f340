"""A match: the deals of one game in order, shared by every game.

A :class:`Match` is immutable. It holds the finished deals (each with its seed,
starter, moves and outcome), the deal in play and its moves, so that the match
seed plus the moves replay everything exactly (convention 7). Deal ``k`` is
dealt from ``derive_seed(match_seed, "deal", k)``, except in a match that
begins with given deals (:meth:`Match.new_from_deals`, "play this deal
again"), whose first deals keep the seeds and starters they were given.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from engine.base import JSON, Game, Outcome
from engine.cards import derive_seed
from engine.lazy import cached
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
    play (or the last one, once it is over) and ``current`` its record.

    ``given`` is empty for a match dealt wholly from ``seed``; in a match made
    by :meth:`new_from_deals` it holds the ``(seed, starter)`` of its first
    deals, and ``offset`` shifts the starters of the later deals so that the
    game's rotation goes on from the last given starter."""

    game_id: str
    options: tuple[tuple[str, Any], ...]
    seed: int
    finished: tuple[Deal, ...]
    current: Deal
    state: Any
    given: tuple[tuple[int, str], ...] = ()
    offset: int = 0

    # ---- construction ---------------------------------------------------------------
    @staticmethod
    def new(game_id: str, options: Mapping[str, Any], seed: int) -> Match:
        """A match with its first deal dealt. ``options`` must be checked
        (``Game.check_options``)."""
        game = get_game(game_id)
        opts = tuple(sorted(options.items()))
        return Match(game_id, opts, seed, (), *_start(game, dict(opts), seed, 0, (), 0))

    @staticmethod
    def new_from_deals(
        game_id: str, options: Mapping[str, Any], deals: Sequence[tuple[int, str]], seed: int
    ) -> Match:
        """A match whose first deals are dealt from the given ``(deal seed,
        starter)`` pairs instead of from ``seed``, with the first of them dealt.
        Later deals come from ``seed`` as in :meth:`new` (deal ``k`` from
        ``derive_seed(seed, "deal", k)``), their starters going on in the game's
        rotation after the last given starter (after a Get Stuck deal started by
        black, red starts). ``options`` must be checked.

        Raises :class:`MatchError` if ``deals`` is empty, a deal seed is not in
        0 … 2⁶³−1, or a starter is not a seat that starts a deal of this game
        (in Romeo and Juliet only red does).
        """
        game = get_game(game_id)
        opts = tuple(sorted(options.items()))
        given = tuple((int(s), str(st)) for s, st in deals)
        if not given:
            raise MatchError("a match from given deals needs at least one deal")
        n = len(game.seats(dict(opts)))
        starters = [game.starter(dict(opts), seed, k) for k in range(len(given) - 1, len(given) - 1 + n)]
        for s, st in given:
            if not 0 <= s < 2**63:
                raise MatchError(f"a deal seed must be from 0 to 2^63-1, not {s}")
            if st not in starters:
                raise MatchError(f"{st!r} never starts a deal of {game_id}"
                                 f" (starters: {', '.join(dict.fromkeys(starters))})")
        offset = starters.index(given[-1][1])
        deal, state = _start(game, dict(opts), seed, 0, given, offset)
        return Match(game_id, opts, seed, (), deal, state, given, offset)

    @staticmethod
    def new_from_deal(game_id: str, options: Mapping[str, Any], deal_seed: int, starter: str,
                      seed: int) -> Match:
        """A match that begins with the deal of ``deal_seed`` and ``starter`` again
        (the same layout, the same first mover): :meth:`new_from_deals` with one
        deal. ``seed`` deals the rest of the match; it should be fresh."""
        return Match.new_from_deals(game_id, options, ((deal_seed, starter),), seed)

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

    @cached
    def outcomes(self) -> tuple[Outcome, ...]:
        """Outcomes of every ended deal, the current one included if over
        (worked out once per match value: a room asks several times a move)."""
        done = tuple(d.outcome for d in self.finished if d.outcome is not None)
        return done + ((self.current.outcome,) if self.current.outcome else ())

    @cached
    def over(self) -> bool:
        """True when the match has ended (worked out once per match value)."""
        return self.deal_over and self.game.match_over(self.opts, self.outcomes)

    def totals(self) -> dict[str, int]:
        """Cumulative points per side over every ended deal (a new dict each
        call, of figures worked out once per match value)."""
        return dict(self._totals)

    @cached
    def _totals(self) -> tuple[tuple[str, int], ...]:
        tot = {name: 0 for name, _ in self.game.sides(self.opts)}
        for o in self.outcomes:
            for s in o.scores:
                tot[s.side] += s.points
        return tuple(tot.items())

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
        return Match(self.game_id, self.options, self.seed, self.finished, deal, state, self.given,
                     self.offset)

    def next_deal(self) -> Match:
        """The match with its next deal dealt. Raises :class:`MatchError` if the
        current deal is not over or the match is."""
        if not self.deal_over:
            raise MatchError("the deal is still in play")
        if self.over:
            raise MatchError("the match is over")
        finished = (*self.finished, self.current)
        deal, state = _start(self.game, self.opts, self.seed, len(finished), self.given, self.offset)
        return Match(self.game_id, self.options, self.seed, finished, deal, state, self.given,
                     self.offset)

    # ---- JSON -----------------------------------------------------------------------
    def to_json(self) -> JSON:
        """The match as JSON: game, options, seed and every deal's moves (and
        ``given``, the seeds and starters of given first deals, when there are
        any). Secret (it holds the seed): never send it to a browser."""
        out: dict[str, Any] = {
            "game": self.game_id,
            "options": dict(self.options),
            "seed": self.seed,
            "deals": [[list(m) for m in d.moves] for d in (*self.finished, self.current)],
        }
        if self.given:
            out["given"] = [list(g) for g in self.given]
        return out

    @staticmethod
    def from_json(data: JSON) -> Match:
        """Rebuild a match from :meth:`to_json` output by replaying its moves.

        Raises ``ValueError`` (or a move error) if the record does not replay.
        """
        game = get_game(data["game"])
        options = game.check_options(data["options"])
        if data.get("given"):
            m = Match.new_from_deals(data["game"], options,
                                     [(int(s), str(st)) for s, st in data["given"]], int(data["seed"]))
        else:
            m = Match.new(data["game"], options, int(data["seed"]))
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


def _start(game: Game, options: dict[str, Any], seed: int, index: int,
           given: tuple[tuple[int, str], ...], offset: int) -> tuple[Deal, Any]:
    """Deal ``index`` (0-based) dealt: a given deal's seed and starter, else
    those the match seed gives."""
    if index < len(given):
        deal_seed, starter = given[index]
    else:
        deal_seed = derive_seed(seed, "deal", index)
        starter = game.starter(options, seed, index + offset)
    state = game.deal(deal_seed, options, starter)
    return Deal(deal_seed, starter, (), game.outcome(state)), state
