"""The match layer (engine/match.py) and the shared result types, played
through Get Stuck and a tiny stand-in game."""

from __future__ import annotations

import json
import random
from collections.abc import Mapping
from typing import Any

import pytest

from engine.base import (
    JSON,
    Game,
    GameInfo,
    IllegalMove,
    MalformedMove,
    MoveError,
    OptionError,
    Outcome,
    ScoreLine,
    SideScore,
)
from engine.cards import derive_seed
from engine.match import Match, MatchError
from engine.registry import GAMES, get_game


def finish_deal(m: Match, rng: random.Random) -> Match:
    """The match after random legal moves to the end of the current deal."""
    while not m.deal_over:
        (seat,) = m.game.to_move(m.state)
        m = m.play(seat, rng.choice(m.game.legal_moves(m.state, seat)))
    return m


def test_a_new_match_deals_its_first_deal_from_the_seed() -> None:
    game = get_game("get-stuck")
    opts = game.check_options({"deals": 4})
    m = Match.new("get-stuck", opts, 123)
    assert m.game is game and m.opts == {"deals": 4}
    assert m.deal_number == 1 and m.finished == () and m.current.moves == ()
    assert not m.deal_over and not m.over and m.outcomes == ()
    assert m.current.seed == derive_seed(123, "deal", 0)
    assert m.current.starter == game.starter(opts, 123, 0)
    assert m.state == game.deal(m.current.seed, opts, m.current.starter)
    assert m.totals() == {"red": 0, "black": 0}
    assert m.winners() == ()
    with pytest.raises(MatchError, match="the deal is still in play"):
        m.next_deal()


def test_play_records_moves_and_leaves_the_old_match_alone() -> None:
    m = Match.new("get-stuck-4", {}, 5)
    assert m.current.starter == "N"
    move = m.game.legal_moves(m.state, "N")[0]
    m2 = m.play("N", move)
    assert m2.current.moves == (("N", move),) and m.current.moves == ()
    assert m2.state == m.game.apply(m.state, "N", move)
    assert m2.state != m.state
    with pytest.raises(MalformedMove):
        m2.play("E", "nowhere")
    with pytest.raises(IllegalMove, match="it is E's turn, not S's"):
        m2.play("S", move)
    assert m2.current.moves == (("N", move),)


@pytest.mark.parametrize(("game_id", "options", "deals"), [
    ("get-stuck", {}, 2), ("get-stuck", {"deals": 6}, 6), ("get-stuck-4", {}, 4),
])
def test_a_whole_match(game_id: str, options: dict[str, Any], deals: int) -> None:
    """Totals add up every deal, the next deal follows, the match ends after
    its number of deals and is won by the highest total."""
    rng = random.Random(game_id)
    game = get_game(game_id)
    m = Match.new(game_id, game.check_options(options), 2024)
    seeds = []
    for k in range(deals):
        assert m.deal_number == k + 1 and not m.deal_over
        seeds.append(m.current.seed)
        m = finish_deal(m, rng)
        assert m.deal_over and len(m.outcomes) == k + 1
        expected = {side: 0 for side, _ in game.sides(m.opts)}
        for o in m.outcomes:
            for s in o.scores:
                expected[s.side] += s.points
        assert m.totals() == expected
        if k < deals - 1:
            assert not m.over and m.winners() == ()
            with pytest.raises(IllegalMove, match="the deal is over"):
                m.play(game.seats(m.opts)[0], "d4")
            m = m.next_deal()
            assert m.finished[-1].outcome == m.outcomes[-1] and m.deal_number == k + 2
            assert m.current.moves == () and m.current.outcome is None
    assert len(set(seeds)) == deals
    assert m.over
    tot = m.totals()
    assert m.winners() == tuple(s for s in tot if tot[s] == max(tot.values()))
    # Worked out once, handed out fresh: a caller's change is its own.
    tot[next(iter(tot))] += 1000
    assert m.totals() != tot and m.totals() is not m.totals()
    assert len(m.winners()) >= 1
    with pytest.raises(MatchError, match="the match is over"):
        m.next_deal()
    with pytest.raises(IllegalMove):
        m.play(game.seats(m.opts)[0], "d4")
    # The record replays to the same match.
    assert Match.from_json(json.loads(json.dumps(m.to_json()))) == m


def test_json_round_trip_by_replay_at_every_step() -> None:
    rng = random.Random(9)
    m = Match.new("get-stuck", {"deals": 2}, 31)
    seen = 0
    while True:
        while not m.deal_over:
            data = json.loads(json.dumps(m.to_json()))
            assert Match.from_json(data) == m
            (seat,) = m.game.to_move(m.state)
            m = m.play(seat, rng.choice(m.game.legal_moves(m.state, seat)))
            seen += 1
        assert Match.from_json(json.loads(json.dumps(m.to_json()))) == m
        if m.over:
            break
        m = m.next_deal()
        assert Match.from_json(m.to_json()) == m
    data = m.to_json()
    assert data["game"] == "get-stuck" and data["options"] == {"deals": 2} and data["seed"] == 31
    assert len(data["deals"]) == 2 and sum(len(d) for d in data["deals"]) == seen
    assert all(isinstance(mv, list) and len(mv) == 2 for d in data["deals"] for mv in d)


def test_from_json_refuses_records_that_do_not_replay() -> None:
    m = finish_deal(Match.new("get-stuck", {"deals": 2}, 8), random.Random(1))
    good = m.to_json()
    bad_move = json.loads(json.dumps(good))
    bad_move["deals"][0][0][1] = "d4"
    with pytest.raises(IllegalMove):
        Match.from_json(bad_move)
    wrong_seat = json.loads(json.dumps(good))
    wrong_seat["deals"][0][0][0] = "black" if good["deals"][0][0][0] == "red" else "red"
    with pytest.raises(IllegalMove):
        Match.from_json(wrong_seat)
    unfinished = json.loads(json.dumps(good))
    unfinished["deals"][0].pop()
    unfinished["deals"].append([])
    with pytest.raises(MatchError, match="the deal is still in play"):
        Match.from_json(unfinished)
    whole = finish_deal(finish_deal(m, random.Random(2)).next_deal(), random.Random(2))
    assert whole.over
    too_many = whole.to_json()
    too_many["deals"].append([])
    with pytest.raises(MatchError, match="the match is over"):
        Match.from_json(too_many)
    past_the_end = whole.to_json()
    past_the_end["deals"][-1].append(past_the_end["deals"][-1][-1])
    with pytest.raises(MoveError, match="the deal is over"):
        Match.from_json(past_the_end)
    with pytest.raises(OptionError):
        Match.from_json({**good, "options": {"deals": 3}})
    with pytest.raises(KeyError, match="unknown game 'chess'"):
        Match.from_json({**good, "game": "chess"})


def test_same_seed_and_moves_give_the_same_states() -> None:
    for game_id in ("get-stuck", "get-stuck-4"):
        a = finish_deal(Match.new(game_id, get_game(game_id).check_options({}), 77), random.Random(3))
        b = Match.new(game_id, get_game(game_id).check_options({}), 77)
        assert b.state == Match.new(game_id, b.opts, 77).state
        for seat, move in a.current.moves:
            b = b.play(seat, move)
        assert a == b and a.state == b.state and a.current.outcome == b.current.outcome
        c = Match.new(game_id, b.opts, 78)
        assert c.state != Match.new(game_id, b.opts, 77).state


def test_four_player_match_openers_rotate() -> None:
    m = Match.new("get-stuck-4", {}, 1)
    rng = random.Random(2)
    openers = [m.current.starter]
    for _ in range(3):
        m = finish_deal(m, rng).next_deal()
        openers.append(m.current.starter)
    assert openers == ["N", "E", "S", "W"]
    assert finish_deal(m, rng).over


# ---- a stand-in game: every deal ends after one move, 0 to 0 -------------------------------


class Level(Game[int]):
    """A game whose only move is ``go`` and whose every deal is a tie."""

    info = GameInfo("level-test", "Level")

    def seats(self, options: Mapping[str, Any]) -> tuple[str, ...]:
        return ("A", "B")

    def deal(self, seed: int, options: Mapping[str, Any], starter: str) -> int:
        return 0

    def to_move(self, state: int) -> tuple[str, ...]:
        return () if state else ("A",)

    def legal_moves(self, state: int, seat: str) -> tuple[str, ...]:
        return ("go",) if seat in self.to_move(state) else ()

    def apply(self, state: int, seat: str, move: str) -> int:
        if move != "go":
            raise MalformedMove("only 'go'")
        if seat not in self.to_move(state):
            raise IllegalMove("not now")
        return 1

    def outcome(self, state: int) -> Outcome | None:
        if not state:
            return None
        return Outcome((), (SideScore("A", ("A",), 0), SideScore("B", ("B",), 0)), "level")

    def view(self, state: int, seat: str | None) -> JSON:
        return {"done": bool(state)}

    def to_text(self, state: int) -> str:
        return str(state)

    def from_text(self, text: str) -> int:
        return int(text)


def test_a_level_match_is_won_by_every_side_and_defaults_apply(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(GAMES, "level-test", Level())
    m = Match.new("level-test", {}, 4)
    assert m.current.starter == "A"  # default starter: the first seat opens deal 0
    assert Level().starter({}, 4, 1) == "B" and Level().starter({}, 4, 2) == "A"
    assert m.winners() == ()
    m = m.play("A", "go")
    assert m.over  # default: one deal
    assert m.totals() == {"A": 0, "B": 0}
    assert m.winners() == ("A", "B")
    assert Match.from_json(m.to_json()) == m
    assert Level().describe(0, "A", "go") == "go"
    assert Level().determinize(0, "A", random.Random(1)) == 0


def test_outcome_points_and_json() -> None:
    o = Outcome(
        ("red",),
        (SideScore("red", ("red",), 30, (ScoreLine("Red numerals", "4 face-up numerals", 20),
                                          ScoreLine("Red courts", "1 face-up court × +10", 10))),
         SideScore("black", ("black",), -5)),
        "Black is stuck, so Red moved last",
    )
    assert o.points("red") == 30 and o.points("black") == -5
    with pytest.raises(KeyError):
        o.points("green")
    data = o.to_json()
    assert json.loads(json.dumps(data)) == data
    assert data == {
        "winners": ["red"],
        "reason": "Black is stuck, so Red moved last",
        "scores": [
            {"side": "red", "seats": ["red"], "points": 30, "lines": [
                {"label": "Red numerals", "detail": "4 face-up numerals", "points": 20},
                {"label": "Red courts", "detail": "1 face-up court × +10", "points": 10},
            ]},
            {"side": "black", "seats": ["black"], "points": -5, "lines": []},
        ],
    }
