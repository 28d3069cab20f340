"""Computer players in every game of the registry: whole matches between
computer players (every move legal), "Play against the computer" over the
API and on the home page, and the API's ``bots`` field (``docs/protocol.md``)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from typing import Any

import pytest
from bottest import (
    Gate,
    lobby_of,
    make_bot_client,
    new_bot_room,
    playing_until,
    recorder_of,
    seat_of,
    until,
    watch,
)
from fastapi.testclient import TestClient

from app.protocol import BOT_LEVELS
from engine.registry import GAMES

SHORT = {"get-stuck": {"deals": 2}, "stucco": {"target": 15}}
"""Options that keep whole matches short."""

SLOW = {("suitors", "easy")}
"""Easy computers wander in Suitors for hundreds of moves, and a deal
between them may take many seconds: left out of the tests that play deals
to the end (the easy level's moves in Suitors are checked in the engine's
tests)."""


MY_MOVES = 60
"""Moves the person makes at most before the test is satisfied (a long
Suitors deal would otherwise run into the rate limit)."""


@pytest.fixture
def client() -> Iterator[TestClient]:
    with make_bot_client() as c:
        yield c


# Easy computers take too long to end a Suitors deal by chance: that pairing
# is left out (easy Suitors moves are still checked by the engine bot tests).
@pytest.mark.parametrize(("game", "level"), [
    (game, level) for game in GAMES for level in BOT_LEVELS if (game, level) not in SLOW])
def test_computers_play_a_whole_match_with_legal_moves(game: str, level: str) -> None:
    # The computers wait for the spectator: a room of computers nobody
    # watches is freed after its first deal.
    gate = Gate()
    with make_bot_client(choose=gate) as client:
        computers_play_a_whole_match(client, gate, game, level)


def computers_play_a_whole_match(client: TestClient, gate: Gate, game: str, level: str) -> None:
    made = new_bot_room(client, game, {"level": level, "seats": "all"}, seed=21, **SHORT.get(game, {}))
    played: Counter[tuple[str, str]] = Counter()
    with watch(client, made["room"]) as spectator:
        gate.open.set()
        def count(state: dict[str, Any]) -> bool:
            if state["phase"] in ("deal_over", "match_over"):
                played.update((e["seat"], e["move"]) for e in state["view"]["log"])
            return state["phase"] == "match_over"
        over = until(spectator, count)
        assert over["view"]["match_winners"] and over["view"]["seed"] == 21
        assert all(s["kind"] == "computer" and s["level"] == level for s in over["view"]["seats"])
    rec = recorder_of(client)
    assert rec.searches and not rec.illegal()
    assert {(x.game_id, x.level) for x in rec.searches} == {(game, level)}
    # Every move of the match is a move a search chose (the room may have
    # gone on into a rematch), and the room refused none.
    searched = Counter((x.seat, x.move) for x in rec.searches)
    assert not played - searched
    assert lobby_of(client).bots.refused == 0


@pytest.mark.parametrize("game", list(GAMES))
def test_play_against_the_computer(client: TestClient, game: str) -> None:
    level = "medium" if (game, "easy") in SLOW else "easy"
    made = new_bot_room(client, game, {"level": level, "seats": "others"})
    seats = next(g["seats"] for g in client.get("/api/games").json() if g["id"] == game)
    assert made["seat"] == seats[0]
    assert made["url"] == f"/r/{made['room']}"
    assert client.get(f"{made['url']}?sit={made['seat']}").status_code == 200
    with watch(client, made["room"]) as me:
        first = me.last
        assert first is not None and first["phase"] == "waiting"
        assert [seat_of(first, s)["kind"] for s in seats] == [None] + ["computer"] * (len(seats) - 1)
        me.send(type="join", seat=made["seat"], name="Me")
        assert me.joined()["seat"] == made["seat"]

        def enough(state: dict[str, Any]) -> bool:
            mine = sum(e["seat"] == made["seat"] for e in state["view"]["log"])
            return state["phase"] in ("deal_over", "match_over") or mine >= MY_MOVES
        end = playing_until(me, enough)
    log = end["view"]["log"]
    assert end["phase"] in ("deal_over", "match_over") or len(log) > MY_MOVES
    assert {e["seat"] for e in log} - {made["seat"]}, "the computer players never moved"
    assert not recorder_of(client).illegal()


def test_the_home_page_offers_play_against_the_computer(client: TestClient) -> None:
    page = client.get("/").text
    for game in GAMES:
        assert f'data-vs-computer="{game}"' in page
    assert page.count("data-bot-level") == len(GAMES)
    for level in BOT_LEVELS:
        assert f'value="{level}"' in page


@pytest.mark.parametrize(("bots", "says"), [
    ({"level": "grandmaster"}, "level"),
    ({"seats": "nobody"}, "seats"),
    ({"seats": ["red", "green"]}, "green"),
    ({"seats": ["red", "red"]}, "twice"),
    ({"colour": "blue"}, "colour"),
    ("all", "bots"),
])
def test_bad_bots_are_refused(client: TestClient, bots: Any, says: str) -> None:
    r = client.post("/api/rooms", json={"game": "get-stuck", "bots": bots})
    assert r.status_code == 422 and says in r.json()["detail"], r.text
    assert len(lobby_of(client).store) == 0


def test_bots_are_optional_and_a_plain_room_answer_is_unchanged(client: TestClient) -> None:
    r = client.post("/api/rooms", json={"game": "get-stuck"})
    assert r.status_code == 201 and set(r.json()) == {"room", "url"}
    made = new_bot_room(client, "get-stuck-4", {"seats": ["E", "W"]})
    room = lobby_of(client).store.get(made["room"])
    assert made["seat"] == "N" and room is not None
    assert {s: h.level for s, h in room.holders.items()} == {"E": "medium", "W": "medium"}
    assert room.version == 0 and room.phase == "waiting"
