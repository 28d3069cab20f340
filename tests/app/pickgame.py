"""A tiny game for the server tests in which two seats act at once, the way
Stucco's secret pick does: each of ``a`` and ``b`` picks 1, 2 or 3, hidden
from the other until both have picked; the higher pick wins the deal."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from engine.base import JSON, Game, GameInfo, IllegalMove, MalformedMove, Outcome, SideScore

SEATS = ("a", "b")


@dataclass(frozen=True)
class PickState:
    """The picks so far, one per seat (0 = not yet)."""

    picks: tuple[int, int] = (0, 0)


class PickGame(Game[PickState]):
    """Both seats pick at once; one deal per match."""

    info = GameInfo("pick", "Pick", seats=SEATS, hidden_information=True, simultaneous=True,
                    secret_moves=True)

    def deal(self, seed: int, options: Mapping[str, Any], starter: str) -> PickState:
        return PickState()

    def to_move(self, state: PickState) -> tuple[str, ...]:
        return tuple(s for s, p in zip(SEATS, state.picks, strict=True) if not p)

    def legal_moves(self, state: PickState, seat: str) -> tuple[str, ...]:
        return ("1", "2", "3") if seat in self.to_move(state) else ()

    def apply(self, state: PickState, seat: str, move: str) -> PickState:
        if move == "boom":
            raise RuntimeError("an engine bug")
        if move not in ("1", "2", "3"):
            raise MalformedMove(f"{move[:10]!r} is not a pick: say 1, 2 or 3")
        if seat not in self.to_move(state):
            raise IllegalMove(f"{seat} has picked already")
        i = SEATS.index(seat)
        picks = list(state.picks)
        picks[i] = int(move)
        return PickState((picks[0], picks[1]))

    def outcome(self, state: PickState) -> Outcome | None:
        if self.to_move(state):
            return None
        a, b = state.picks
        winners = () if a == b else (("a",) if a > b else ("b",))
        return Outcome(winners, (SideScore("a", ("a",), a), SideScore("b", ("b",), b)), "both picked")

    def view(self, state: PickState, seat: str | None) -> JSON:
        done = not self.to_move(state)
        return {s: (p if done or s == seat else bool(p)) for s, p in zip(SEATS, state.picks, strict=True)}

    def public_move(self, state: PickState, seat: str, move: str, viewer: str | None) -> str | None:
        return None if self.to_move(state) and viewer != seat else move

    def describe(self, state: PickState, seat: str, move: str) -> str:
        return f"{seat} picks"

    def to_text(self, state: PickState) -> str:
        return f"game: pick\n\n{state.picks[0]} {state.picks[1]}\n"

    def from_text(self, text: str) -> PickState:
        a, b = text.split("\n\n")[1].split()
        return PickState((int(a), int(b)))
