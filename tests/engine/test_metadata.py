"""What each game declares of itself (``engine.base.GameInfo``) agrees with how
it plays, and each legal move's structure (``Game.move_structure``,
``docs/protocol.md``, "Move structures") with what the move does."""

from __future__ import annotations

import json
import random
from collections.abc import Iterator
from typing import Any

import pytest

from engine.base import Game
from engine.registry import GAMES

PLIES = 160
"""Moves played at most per deal in these random walks."""


def _walk(game: Game, options: dict[str, Any], seed: int) -> Iterator[tuple[Any, str, str]]:
    """Random play of one deal: each state on the way with an awaited seat and
    the move it plays there."""
    rng = random.Random(seed)
    state = game.deal(seed, options, game.starter(options, seed, 0))
    for _ in range(PLIES):
        awaited = game.to_move(state)
        if not awaited:
            return
        seat = rng.choice(awaited)
        move = rng.choice(game.legal_moves(state, seat))
        yield state, seat, move
        state = game.apply(state, seat, move)


def _options(game: Game) -> list[dict[str, Any]]:
    """The game's default options, and every player count it offers."""
    info = game.info
    if info.players_option is None:
        return [game.check_options({})]
    return [game.check_options({info.players_option: n}) for n in info.player_counts]


@pytest.mark.parametrize("game_id", list(GAMES))
def test_seats_and_player_counts(game_id: str) -> None:
    game = GAMES[game_id]
    info = game.info
    assert info.min_players <= info.max_players == max(info.player_counts)
    for options in _options(game):
        seats = game.seats(options)
        assert info.min_players <= len(seats) <= info.max_players
        # A subset of the declared seats, in their order.
        assert [s for s in info.seats if s in seats] == list(seats)
    assert sorted(len(game.seats(o)) for o in _options(game)) == list(info.player_counts)


@pytest.mark.parametrize("game_id", list(GAMES))
def test_declared_traits_agree_with_play(game_id: str) -> None:
    game = GAMES[game_id]
    info = game.info
    simultaneous = hidden = secret = passes = False  # passes: seen in a game without them
    for options in _options(game):
        for seed in range(4):
            played: list[tuple[str, str]] = []
            for state, seat, move in _walk(game, options, seed):
                simultaneous |= len(game.to_move(state)) > 1
                passes |= not info.passes and "pass" in game.legal_moves(state, seat)
                hidden |= any(game.determinize(state, s, random.Random(1)) != state
                              for s in game.seats(options))
                if not info.hidden_information:  # the server encodes one view for every seat
                    assert all(game.view(state, s) == game.view(state, None) for s in game.seats(options))
                secret |= any(game.public_move(state, s, m, viewer) is None
                              for s, m in played for viewer in (None, *game.seats(options)))
                played.append((seat, move))
    assert simultaneous == info.simultaneous
    assert hidden == info.hidden_information
    assert secret == info.secret_moves
    assert not passes  # (passes are too rare in random play to prove the other way)
    # A game whose log is shown per seat says so by overriding public_move.
    assert info.secret_moves == (type(game).public_move is not Game.public_move)


@pytest.mark.parametrize("game_id", list(GAMES))
def test_layout_and_deal_noun_agree_with_play(game_id: str) -> None:
    game = GAMES[game_id]
    info = game.info
    options = game.check_options({})
    state = game.deal(3, options, game.starter(options, 3, 0))
    view = game.view(state, None)
    assert info.layout is not None
    if info.layout.kind == "grid":
        assert (view["width"], view["height"]) == (info.layout.width, info.layout.height)
        assert len(view["cells"]) == view["width"] * view["height"]
    else:
        assert info.layout.kind == "spread" and "spread" in view and "cells" not in view
    # "game" where a match is one deal, "deal" where it goes on.
    rng = random.Random(5)
    while game.to_move(state):
        seat = rng.choice(game.to_move(state))
        state = game.apply(state, seat, rng.choice(game.legal_moves(state, seat)))
    outcome = game.outcome(state)
    assert outcome is not None
    one_deal = game.match_over(options, (outcome,))
    assert info.deal_noun == ("game" if one_deal else "deal")
    assert info.traits()["deal_noun"] == info.deal_noun
    json.dumps(info.traits())


def _check_structure(game: Game, state: Any, seat: str, move: str, st: dict[str, Any]) -> None:
    """``st``, the structure of ``move``, says what playing it does."""
    assert st["move"] == move
    assert json.loads(json.dumps(st)) == st
    assert (st["kind"] == "pass") == (move == "pass")
    if move == "pass":
        assert set(st) == {"move", "kind"}
        return
    before = game.view(state, seat)
    after = game.view(game.apply(state, seat, move), seat)
    last = after.get("last")
    gid = game.info.id
    if gid.startswith("get-stuck"):
        assert st == {"move": move, "kind": "move", "from": move, "to": before["gap"]}
        assert last == {"from": st["from"], "to": st["to"]}
    elif gid == "romeo-and-juliet":
        if st["kind"] == "move":
            assert set(st) == {"move", "kind", "from", "to"}
            assert st["from"] == before["romeos"][seat] and st["to"] == move
            assert (last["kind"], last["from"], last["to"]) == ("move", st["from"], st["to"])
        else:
            assert st["kind"] == "swap" and set(st) == {"move", "kind", "a", "b", "joker"}
            assert move == f"swap {st['a']} {st['b']}" and last["squares"] == [st["a"], st["b"]]
            assert st["joker"] in (st["a"], st["b"]) and st["joker"] in before["jokers"]
    elif gid == "suitors":
        if st["kind"] == "reveal":
            assert set(st) == {"move", "kind", "at"} and move == f"reveal {st['at']}"
            assert (last["kind"], last["square"]) == ("reveal", st["at"])
        else:
            assert st["kind"] == "jump" and set(st) == {"move", "kind", "from", "to", "jumped"}
            assert move == f"{st['from']}-{st['to']}" and st["jumped"][-1] == st["to"]
            assert (last["from"], last["to"], last["jumped"]) == (st["from"], st["to"], st["jumped"])
    else:
        assert gid == "stucco" and set(st) == {"move", "kind", "card"} and st["card"] == move
        assert st["kind"] == ("pick" if before["phase"] == "opening" else "play")


@pytest.mark.parametrize("game_id", list(GAMES))
def test_move_structures_say_what_each_legal_move_does(game_id: str) -> None:
    game = GAMES[game_id]
    kinds: set[str] = set()
    for options in _options(game):
        for seed in range(3):
            rng = random.Random(seed)
            for state, seat, _ in _walk(game, options, seed):
                legal = game.legal_moves(state, seat)
                structures = game.move_structures(state, seat, legal)
                assert [st["move"] for st in structures] == list(legal)
                kinds |= {st["kind"] for st in structures}
                # Playing every move to check it is slow: a sample of each position's.
                pairs = list(zip(legal, structures, strict=True))
                for move, st in rng.sample(pairs, min(6, len(pairs))):
                    _check_structure(game, state, seat, move, st)
    expected = {"get-stuck": {"move"}, "get-stuck-4": {"move", "pass"}, "romeo-and-juliet": {"move", "swap"},
                "suitors": {"reveal", "jump"}, "stucco": {"pick", "play", "pass"}}[game_id]
    assert expected <= kinds, kinds
