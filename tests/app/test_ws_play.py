"""Moves, versions, deals and matches over the websocket (docs/protocol.md,
"Versions, stale moves and simultaneous moves" and "Hidden information")."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from fastapi.testclient import TestClient
from pickgame import PickGame
from roomtest import (
    Peer,
    all_ready,
    connect,
    drain,
    make_client,
    mover,
    new_room,
    play_deal,
    play_one,
    table,
)

from app.settings import Settings
from engine.cards import derive_seed
from engine.registry import GAMES

SQUARES = [f"{c}{r}" for r in range(1, 8) for c in "abcdefg"]


def other(peers: list[Peer], p: Peer) -> Peer:
    return next(q for q in peers if q is not p)


def an_illegal_square(state: dict[str, Any]) -> str:
    return next(sq for sq in SQUARES if sq not in state["legal_moves"])


def test_a_move_is_broadcast(client: TestClient) -> None:
    with table(client, spectators=1) as (_, peers, watchers):
        p = mover(peers)
        q = other(peers, p)
        before = p.last
        assert before is not None
        move = before["legal_moves"][0]
        p.send(type="move", move=move, version=p.version)
        sp, sq, sw = (x.state() for x in (p, q, *watchers))
        assert sp["version"] == sq["version"] == sw["version"] == before["version"] + 1
        entry = sp["view"]["log"][-1]
        assert entry["seat"] == p.seat and entry["move"] == move
        assert " moves the " in entry["text"] and f"from {move}" in entry["text"]
        assert sq["to_move"] == [q.seat] and sq["legal_moves"]
        assert sp["legal_moves"] == []
        assert sp["view"]["board"]["cells"] != before["view"]["board"]["cells"]


def test_illegal_move_changes_nothing(client: TestClient) -> None:
    with table(client) as (_, peers, _w):
        p = mover(peers)
        before = p.last
        assert before is not None
        p.send(type="move", move=an_illegal_square(before), version=p.version)
        err = p.recv()
        assert err["code"] == "illegal_move" and err["message"]
        assert p.state() == before
        q = other(peers, p)
        assert q.probe() == q.last


@pytest.mark.parametrize("move", ["z9", "", "hello", "c44", "C4", "<b>x</b>", "\ud800", "x" * 5000])
def test_malformed_move_changes_nothing(client: TestClient, move: str) -> None:
    with table(client) as (_, peers, _w):
        p = mover(peers)
        before = p.last
        p.send(type="move", move=move, version=p.version)
        assert p.error("malformed_move", then_state=True) == before


def test_move_for_a_seat_you_do_not_hold(client: TestClient) -> None:
    with table(client) as (_, peers, _w):
        p = mover(peers)
        q = other(peers, p)
        assert p.last is not None
        before = q.last
        q.send(type="move", move=p.last["legal_moves"][0], version=q.version)
        err = q.recv()
        assert err["code"] == "not_your_turn" and p.seat in err["message"]
        assert q.state() == before
        assert p.probe() == p.last


def test_two_moves_sent_on_one_version(client: TestClient) -> None:
    with table(client) as (_, peers, _w):
        p = mover(peers)
        q = other(peers, p)
        assert p.last is not None and len(p.last["legal_moves"]) >= 2
        v = p.version
        first, second = p.last["legal_moves"][:2]
        p.send(type="move", move=first, version=v)
        p.send(type="move", move=second, version=v)
        after = p.state()
        assert after["version"] == v + 1 and after["view"]["log"][-1]["move"] == first
        assert p.error("not_your_turn", then_state=True) == after
        assert q.state() == {**after, "you": q.seat, "legal_moves": q.last["legal_moves"],  # type: ignore[index]
                             "moves": q.last["moves"]}  # type: ignore[index]
        assert q.probe() == q.last  # nothing else was sent


def test_stale_version_after_own_move(client: TestClient) -> None:
    with table(client) as (_, peers, _w):
        p = mover(peers)
        q = other(peers, p)
        v = p.version
        play_one(peers)  # p moves: v + 1
        play_one(peers)  # q moves: v + 2, p's turn again
        assert p.last is not None and p.last["legal_moves"]
        now = p.last
        p.send(type="move", move=now["legal_moves"][0], version=v)
        err = p.recv()
        assert err["code"] == "stale_version"
        assert p.state() == now
        assert q.probe() == q.last


def test_old_version_accepted_if_legal_and_no_move_since(client: TestClient) -> None:
    with table(client) as (_, peers, _w):
        p = mover(peers)
        assert p.last is not None
        v = p.version
        assert v == 2  # the second join started the deal
        p.send(type="move", move=p.last["legal_moves"][0], version=v - 1)
        s = drain(peers)
        assert s[0]["version"] == v + 1


def test_old_version_illegal_now_is_stale(client: TestClient) -> None:
    with table(client) as (_, peers, _w):
        p = mover(peers)
        before = p.last
        assert before is not None
        p.send(type="move", move=an_illegal_square(before), version=p.version - 1)
        assert p.error("stale_version", then_state=True) == before


def test_future_version_is_stale(client: TestClient) -> None:
    with table(client) as (_, peers, _w):
        p = mover(peers)
        before = p.last
        assert before is not None
        p.send(type="move", move=before["legal_moves"][0], version=p.version + 5)
        err = p.error("stale_version")
        assert f"names version {p.version + 5}, which the game has not reached" in err["message"], err
        assert p.state() == before


def test_move_made_in_the_previous_deal_is_stale(client: TestClient) -> None:
    with table(client, seed=11) as (_, peers, _w):
        play_deal(peers)
        all_ready(peers)
        p = mover(peers)
        before = p.last
        assert before is not None and before["view"]["deal"] == 2
        p.send(type="move", move=before["legal_moves"][0], version=p.version - 1)
        assert p.error("stale_version", then_state=True) == before


def test_not_playing(client: TestClient) -> None:
    room = new_room(client)
    with connect(client, room) as a:
        a.send(type="join", name="Ann")
        a.joined()
        waiting = a.state()
        assert waiting["phase"] == "waiting"
        a.send(type="move", move="d3", version=a.version)
        assert a.error("not_playing", then_state=True) == waiting
    with table(client) as (_, peers, _w):
        p = peers[0]
        for kind in ("next_deal", "rematch"):
            p.send(type=kind, version=p.version)
            assert p.error("not_playing", then_state=True) == p.last
        play_deal(peers)
        q = peers[0]
        q.send(type="move", move="d3", version=q.version)
        assert q.error("not_playing", then_state=True)["phase"] == "deal_over"
        q.send(type="rematch", version=q.version)
        assert q.error("not_playing", then_state=True)["phase"] == "deal_over"


def test_next_deal_pressed_twice(client: TestClient) -> None:
    with table(client, seed=3) as (_, peers, _w):
        red, black = peers
        end = play_deal(peers)
        assert end["phase"] == "deal_over" and end["view"]["outcome"] is not None
        first_mover = end["view"]["log"][0]["seat"]
        v = red.version
        red.send(type="next_deal", version=v)
        red.send(type="next_deal", version=v)
        black.send(type="next_deal", version=v)
        s = red.state()
        assert s["version"] == v + 1 and s["phase"] == "playing" and s["view"]["deal"] == 2
        assert s["view"]["log"] == [] and s["view"]["outcome"] is None
        assert len(s["view"]["history"]) == 1
        assert s["to_move"] != [first_mover]  # the first move alternates
        assert red.error("not_playing", then_state=True) == s
        assert black.state()["version"] == v + 1
        assert black.error("not_playing", then_state=True)["view"]["deal"] == 2


def test_next_deal_on_a_stale_version(client: TestClient) -> None:
    with table(client, seed=3) as (room, peers, _w):
        red, black = peers
        play_deal(peers)
        v = red.version
        black.send(type="leave")
        drain(peers)
        with connect(client, room) as again:
            again.send(type="join", name="Bea")
            again.joined()
            drain([red, black, again])
            assert red.last["phase"] == "deal_over" and red.version == v + 2  # type: ignore[index]
            red.send(type="next_deal", version=v)
            assert red.error("stale_version", then_state=True) == red.last
            red.send(type="next_deal", version=v + 2)
            assert drain([red, again])[0]["view"]["deal"] == 2


def test_whole_match_to_match_over_then_rematch(client: TestClient) -> None:
    with table(client, spectators=1, seed=7) as (room, peers, watchers):
        red, black = peers
        totals = {"red": 0, "black": 0}
        for deal in (1, 2):
            end = play_deal(peers, watchers)
            outcome = end["view"]["outcome"]
            assert outcome is not None and end["view"]["history"][-1] == {"deal": deal, "outcome": outcome}
            for score in outcome["scores"]:
                assert score["points"] == sum(line["points"] for line in score["lines"])
                totals[score["side"]] += score["points"]
            assert end["view"]["totals"] == totals
            if deal == 1:
                assert end["phase"] == "deal_over" and end["view"]["seed"] is None
                red.send(type="next_deal", version=red.version)
                drain([*peers, *watchers])
        final = red.last
        assert final is not None and final["phase"] == "match_over"
        assert final["view"]["seed"] == 7
        best = max(totals.values())
        assert final["view"]["match_winners"] == [s for s, p in totals.items() if p == best]
        assert watchers[0].last["view"]["seed"] == 7  # type: ignore[index]
        # nothing before the end showed the seed
        for p in [*peers, *watchers]:
            states = [f for f in map(_load, p.texts) if f["type"] == "state"]
            assert all(s["view"]["seed"] is None for s in states if s["phase"] != "match_over")
        # a finished match takes no moves and no next deal
        black.send(type="next_deal", version=black.version)
        black.error("not_playing", then_state=True)

        # rematch: same seats, a new match with a fresh seed that nothing shown so far gives away
        v = red.version
        red.send(type="rematch", version=v)
        black.send(type="rematch", version=v)
        s = red.state()
        assert s["version"] == v + 1 and s["phase"] == "playing"
        assert s["view"]["deal"] == 1 and s["view"]["history"] == [] and s["view"]["seed"] is None
        assert s["view"]["totals"] == {"red": 0, "black": 0}
        assert [x["name"] for x in s["view"]["seats"]] == ["P0", "P1"]
        assert black.state()["version"] == v + 1
        assert black.error("not_playing", then_state=True)["version"] == v + 1
        stored = client.app.state.lobby.store.get(room)  # type: ignore[attr-defined]
        assert stored.match.seed not in (7, derive_seed(7, "rematch", 1))


def test_every_seat_sees_a_room_was_created_with_a_chosen_seed(client: TestClient) -> None:
    # Before anyone sits down, a visitor of a seeded room is told so; a room
    # dealt at random (no seed, or a null one) says it is not seeded.
    for options, seeded in (({"seed": 7}, True), ({"seed": 0}, True), ({}, False), ({"seed": None}, False)):
        room = new_room(client, "suitors", **options)
        with connect(client, room) as visitor:
            first = visitor.last
            assert first is not None and first["phase"] == "waiting" and first["you"] is None
            assert first["view"]["seeded"] is seeded and first["view"]["seed"] is None
    # Every seat keeps seeing it for the whole match; the rematch is dealt at random.
    with table(client, spectators=1, seed=7) as (_, peers, watchers):
        for deal in (1, 2):
            end = play_deal(peers, watchers)
            if deal == 1:
                all_ready(peers, watchers)
        assert end["phase"] == "match_over" and end["view"]["seeded"] is True
        for p in [*peers, *watchers]:
            states = [f for f in map(_load, p.texts) if f["type"] == "state"]
            assert states and all(st["view"]["seeded"] is True for st in states)
        again = all_ready(peers, watchers)
        assert all(st["phase"] == "playing" and st["view"]["seeded"] is False for st in again)


def _load(text: str) -> dict[str, Any]:
    import json

    return dict(json.loads(text))


def test_tokens_reach_only_their_own_connection(client: TestClient) -> None:
    with table(client, spectators=1) as (_, peers, watchers):
        red, black = peers
        play_one(peers, watchers)
        assert red.token and black.token and red.token != black.token
        for p in [*peers, *watchers]:
            text = "".join(p.texts)
            for q in peers:
                assert q.token is not None
                assert (q.token in text) == (q is p)


def test_rematch_on_a_stale_version(client: TestClient) -> None:
    with table(client, seed=1, deals=2) as (room, peers, _w):
        red, black = peers
        for _ in range(2):
            play_deal(peers)
            if red.last["phase"] == "deal_over":  # type: ignore[index]
                all_ready(peers)
        assert red.last["phase"] == "match_over"  # type: ignore[index]
        v = red.version
        black.send(type="leave")  # allowed once the match is over
        drain(peers)
        with connect(client, room) as again:
            again.send(type="join", name="Bea")
            again.joined()
            drain([red, black, again])
            red.send(type="rematch", version=v)
            assert red.error("stale_version", then_state=True)["phase"] == "match_over"


def test_four_player_deal(client: TestClient) -> None:
    with table(client, "get-stuck-4", seed=99) as (_, peers, _w):
        end = play_deal(peers)
        assert end["phase"] == "deal_over"
        outcomes = [p.last["view"]["outcome"] for p in peers]  # type: ignore[index]
        assert all(o == outcomes[0] for o in outcomes) and outcomes[0]["winners"]
        boards = [p.last["view"]["board"] for p in peers]  # type: ignore[index]
        assert all(b == boards[0] for b in boards)


# ---- two seats at once (a test game) -----------------------------------------------------


@pytest.fixture
def pick_client(monkeypatch: pytest.MonkeyPatch) -> Iterator[TestClient]:
    monkeypatch.setitem(GAMES, "pick", PickGame())
    with make_client(Settings(games=("pick",))) as c:
        yield c


def test_two_seats_acting_on_one_version_are_both_accepted(pick_client: TestClient) -> None:
    with table(pick_client, "pick") as (_, (a, b), _w):
        v = a.version
        assert a.last["to_move"] == ["a", "b"]  # type: ignore[index]
        a.send(type="move", move="3", version=v)
        b.send(type="move", move="2", version=v)
        sa1, sb1 = drain([a, b])
        assert sa1["version"] == v + 1
        assert sb1["view"]["board"] == {"a": True, "b": False}  # a's pick is hidden from b
        assert sa1["view"]["board"] == {"a": 3, "b": False}
        assert sa1["view"]["log"] == [{"seat": "a", "move": "3", "text": "a picks", "by": "P0"}]
        assert sb1["view"]["log"] == [{"seat": "a", "move": None, "text": "a picks", "by": "P0"}]
        sa2, sb2 = drain([a, b])
        assert sa2["version"] == v + 2 and sa2["phase"] == "match_over"
        assert sb2["view"]["board"] == {"a": 3, "b": 2}
        assert sa2["view"]["log"] == sb2["view"]["log"] == [
            {"seat": "a", "move": "3", "text": "a picks", "by": "P0"},
            {"seat": "b", "move": "2", "text": "b picks", "by": "P1"}]
        assert sa2["view"]["match_winners"] == ["a"]


def test_double_pick_on_one_version_plays_once(pick_client: TestClient) -> None:
    with table(pick_client, "pick") as (_, (a, b), _w):
        v = a.version
        a.send(type="move", move="1", version=v)
        a.send(type="move", move="3", version=v)
        assert a.state()["view"]["board"]["a"] == 1
        assert a.error("not_your_turn", then_state=True)["view"]["board"]["a"] == 1
        assert b.state()["version"] == v + 1


def test_an_engine_failure_is_refused_not_fatal(pick_client: TestClient) -> None:
    with table(pick_client, "pick") as (_, (a, b), _w):
        before = a.last
        a.send(type="move", move="boom", version=a.version)
        assert a.error("malformed_move", then_state=True) == before
        a.send(type="move", move="2", version=a.version)
        assert before is not None
        assert drain([a, b])[0]["version"] == before["version"] + 1


@pytest.mark.parametrize("game", list(GAMES))
def test_every_game_plays_and_shows_each_seat_its_own_log(client: TestClient, game: str) -> None:
    g = GAMES[game]
    with table(client, game, spectators=1, seed=4) as (room, peers, watchers):
        stored = client.app.state.lobby.store.get(room)  # type: ignore[attr-defined]
        for _ in range(6):
            last = peers[0].last
            assert last is not None
            if last["phase"] != "playing":
                break
            p = next(q for q in peers if q.seat == last["to_move"][0])
            assert p.last is not None
            p.send(type="move", move=p.last["legal_moves"][0], version=p.version)
            drain([*peers, *watchers])
            played = stored.match.current.moves
            for q in [*peers, *watchers]:
                assert q.last is not None
                assert q.last["view"]["board"] == g.view(stored.match.state, q.seat)
                assert [(e["seat"], e["move"]) for e in q.last["view"]["log"]] == [
                    (s, g.public_move(stored.match.state, s, m, q.seat)) for s, m in played]
