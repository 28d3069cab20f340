"""Joining, resuming, leaving and watching a room over the websocket."""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from fastapi.testclient import TestClient
from inthread import serve
from roomtest import connect, drain, new_room, opened, play_deal, table
from starlette.websockets import WebSocketDisconnect
from websockets.exceptions import ConnectionClosed
from websockets.sync.client import connect as ws_connect

from app.main import create_app
from app.settings import Settings
from app.wsproto import LeanProtocol
from engine.registry import GAMES


@contextlib.contextmanager
def ann_away(counted: list[Any] | None = None) -> Iterator[tuple[str, str]]:
    """A real uvicorn (with LeanProtocol) serving a Get Stuck room whose red
    seat Ann took over a connection now closed: the room's websocket URL and
    Ann's token; ``counted``, if given, gets the room's live connections (a
    set). (The test client runs every socket on a loop of its own, so that
    one connection cannot close another there.)"""
    app = create_app(Settings(database=":memory:"))
    with serve(app, ws=LeanProtocol) as port:
        base = f"http://127.0.0.1:{port}"
        room = httpx.post(base + "/api/rooms", json={"game": "get-stuck"}).json()["room"]
        url = f"ws://127.0.0.1:{port}/ws/{room}"
        with ws_connect(url) as a:
            a.send(json.dumps({"type": "join", "seat": "red", "name": "Ann"}))
            token = frames_until(a, "joined")["token"]
        connections = app.state.lobby.store.get(room).connections
        # The server sees Ann's socket closed a moment after the client does:
        # until then it holds one of the room's places, and which of the next
        # sockets count beyond the limit would depend on the machine's speed.
        deadline = time.monotonic() + 10
        while connections and time.monotonic() < deadline:
            time.sleep(0.01)
        assert not connections, "the server never saw Ann's socket closed"
        if counted is not None:
            counted.append(connections)
        yield url, token


def frames_until(sock: Any, kind: str) -> dict[str, Any]:
    """The next frame of ``kind`` a websockets sync client receives (those
    before it are dropped)."""
    while True:
        frame = json.loads(sock.recv(timeout=10))
        if frame["type"] == kind:
            return dict(frame)


def test_first_state_is_a_spectator_view(client: TestClient) -> None:
    room = new_room(client, "get-stuck-4")
    with connect(client, room) as p:
        s = p.last
        assert s is not None
        assert s["room"] == room and s["game"] == "get-stuck-4"
        assert s["version"] == 0 and s["phase"] == "waiting"
        assert s["you"] is None and s["to_move"] == [] and s["legal_moves"] == []
        assert [x["seat"] for x in s["view"]["seats"]] == ["N", "E", "S", "W"]
        assert all(x == {"seat": x["seat"], "name": None, "kind": None, "connected": False}
                   for x in s["view"]["seats"])
        assert s["view"]["title"] == "Get Stuck for Four"
        assert s["view"]["sides"] == [{"side": "N-S", "seats": ["N", "S"]},
                                      {"side": "E-W", "seats": ["E", "W"]}]
        assert s["view"]["deal"] == 1 and s["view"]["log"] == [] and s["view"]["history"] == []
        assert s["view"]["totals"] == {"N-S": 0, "E-W": 0}
        assert s["view"]["seed"] is None and s["view"]["outcome"] is None


def test_unknown_room_closes_with_4404(client: TestClient) -> None:
    with opened(client, "no-such-room") as peer:
        frame = peer.recv()
        assert frame["type"] == "error" and frame["code"] == "no_such_room"
        with pytest.raises(WebSocketDisconnect) as exc:
            peer.recv()
        assert exc.value.code == 4404


def test_join_named_seat_then_any_seat(client: TestClient) -> None:
    room = new_room(client, "get-stuck-4")
    with connect(client, room) as a, connect(client, room) as b:
        a.send(type="join", seat="S", name="Ann")
        j = a.joined()
        assert j["seat"] == "S" and len(j["token"]) >= 32
        sa, sb = drain([a, b])
        assert sa["you"] == "S" and sb["you"] is None
        assert sa["version"] == sb["version"] == 1
        assert sa["view"]["seats"][2] == {"seat": "S", "name": "Ann", "kind": "human", "connected": True}
        b.send(type="join", seat=None, name="Bob")  # null = any free seat: the first, N
        assert b.joined()["seat"] == "N"
        drain([a, b])
        assert b.version == 2 and b.seat == "N"


def test_join_without_seat_field(client: TestClient) -> None:
    room = new_room(client)
    with connect(client, room) as a:
        a.send(type="join", name="Ann")
        assert a.joined()["seat"] == "red"
        assert a.state()["you"] == "red"


def test_last_seat_starts_the_deal(client: TestClient) -> None:
    with table(client, "get-stuck-4") as (_, peers, _w):
        for p in peers:
            assert p.last is not None and p.last["phase"] == "playing"
            assert p.version == 4
        to_move = peers[0].last["to_move"]  # type: ignore[index]
        assert len(to_move) == 1
        for p in peers:
            assert p.last["to_move"] == to_move  # type: ignore[index]
            assert bool(p.last["legal_moves"]) == (p.seat in to_move)  # type: ignore[index]


@pytest.mark.parametrize("game", list(GAMES))
def test_each_seat_gets_the_engines_own_view(client: TestClient, game: str) -> None:
    with table(client, game, spectators=1) as (room, peers, watchers):
        stored = client.app.state.lobby.store.get(room)  # type: ignore[attr-defined]
        g = GAMES[game]
        for p in [*peers, *watchers]:
            assert p.last is not None
            assert p.last["view"]["board"] == g.view(stored.match.state, p.seat)
            awaited = p.seat in p.last["to_move"]
            expected = list(g.legal_moves(stored.match.state, p.seat)) if p.seat and awaited else []
            assert p.last["legal_moves"] == expected


def test_bad_seat(client: TestClient) -> None:
    room = new_room(client)
    with connect(client, room) as a:
        before = a.last
        a.send(type="join", seat="N", name="Ann")
        assert a.error("bad_seat", then_state=True) == before


def test_seat_taken(client: TestClient) -> None:
    room = new_room(client)
    with connect(client, room) as a, connect(client, room) as b:
        a.send(type="join", seat="red", name="Ann")
        a.joined()
        drain([a, b])
        b.send(type="join", seat="red", name="Bob")
        s = b.error("seat_taken", then_state=True)
        assert s == b.probe() and s["you"] is None and s["version"] == 1


def test_full_room_leaves_the_joiner_a_spectator(client: TestClient) -> None:
    with table(client, spectators=1) as (_, _peers, (w,)):
        w.send(type="join", name="Late")
        err = w.recv()
        assert err["code"] == "room_full" and "spectator" in err["message"]
        s = w.state()
        assert s["you"] is None and s["legal_moves"] == [] and s["version"] == 2
        w.send(type="join", seat="red", name="Late")
        err = w.recv()
        assert err["code"] == "seat_taken" and "spectator" in err["message"]
        assert w.state() == s


def test_a_name_already_at_the_table_is_refused(client: TestClient) -> None:
    """Two players of one name could only be told apart by their seats
    (new-user pass): the second is asked for another, whatever its case."""
    room = new_room(client, "get-stuck-4")
    with connect(client, room) as a, connect(client, room) as b:
        a.send(type="join", seat="N", name="Romy")
        a.joined()
        drain([a, b])
        # Also in full-width letters, or with look-alike Cyrillic, Greek and
        # Armenian letters: "Rоmy" with a Cyrillic о reads as Romy (break-it
        # pass).
        for name in ("Romy", "ROMY", " romy ", "Ｒｏｍｙ", "R\u043emy", "R\u041eMY", "R\u03bfmy",
                     "R\u0585my", "R\u0555MY"):
            b.send(type="join", seat="E", name=name)
            err = b.recv()
            assert err["code"] == "name_taken" and "already called Romy:" in err["message"], err
            assert b.state()["you"] is None
        # A computer player's name: the one North's computer would get, or any
        # name ending in a level, could pass for one (break-it pass).
        for name in ("Ada (strong)", "ada (STRONG)", "Zed (easy)", "Ada （strong）", "Ada(medium)\u3000",
                     "Ada (str\u043eng)"):
            b.send(type="join", seat="E", name=name)
            err = b.recv()
            assert err["code"] == "name_taken" and "computer players" in err["message"], err
            assert "Ada" not in err["message"]  # one set of brackets: the level's
            assert b.state()["you"] is None
        b.send(type="join", seat="E", name="Romy B (strongest)")
        assert b.joined()["seat"] == "E"


def test_already_seated(client: TestClient) -> None:
    room = new_room(client, "get-stuck-4")
    with connect(client, room) as a:
        a.send(type="join", seat="N", name="Ann")
        a.joined()
        s = a.state()
        a.send(type="join", seat="E", name="Ann")
        assert a.error("already_seated", then_state=True) == s
        a.send(type="join", seat="N", name="Ann")  # its own seat
        assert a.error("already_seated", then_state=True) == s
        a.send(type="join", name="Ann")
        assert a.error("already_seated", then_state=True) == s


def test_names_are_cleaned_and_kept_as_text(client: TestClient) -> None:
    room = new_room(client, "get-stuck-4")
    hostile = "<img src=x onerror=alert(1)>"
    with connect(client, room) as a, connect(client, room) as b, connect(client, room) as c:
        a.send(type="join", name=hostile)
        a.joined()
        drain([a, b, c])
        b.send(type="join", name="  \x00Bo\x07b\u2028\n ")
        b.joined()
        s = drain([a, b, c])[2]
        assert s["view"]["seats"][0]["name"] == hostile
        assert s["view"]["seats"][1]["name"] == "Bob"
        c.send(type="join", name="x" * 32)
        c.joined()
        assert drain([a, b, c])[0]["view"]["seats"][2]["name"] == "x" * 32


@pytest.mark.parametrize("name", ["", "   ", "\x00\x01", "x" * 33, 5, None, ["Ann"]])
def test_bad_names(client: TestClient, name: object) -> None:
    room = new_room(client)
    with connect(client, room) as a:
        before = a.last
        a.send(type="join", name=name)
        assert "name" in a.error("bad_field")["message"]
        assert a.probe() == before


def test_missing_name(client: TestClient) -> None:
    room = new_room(client)
    with connect(client, room) as a:
        a.send(type="join", seat="red")
        assert "name" in a.error("bad_field")["message"]


def test_spectators_see_everything_public_and_cannot_act(client: TestClient) -> None:
    with table(client, spectators=2) as (_, peers, watchers):
        w = watchers[0]
        assert w.last is not None and w.last["you"] is None and w.last["legal_moves"] == []
        assert w.last["view"]["board"] == peers[0].last["view"]["board"]  # type: ignore[index]
        for frame in ({"type": "move", "move": "c4", "version": w.version},
                      {"type": "leave"},
                      {"type": "next_deal", "version": w.version},
                      {"type": "rematch", "version": w.version}):
            w.send(**frame)
            assert w.error("not_seated", then_state=True) == w.last
        # a spectator gets every broadcast
        p = next(p for p in peers if p.seat in p.last["to_move"])  # type: ignore[index]
        p.send(type="move", move=p.last["legal_moves"][0], version=p.version)  # type: ignore[index]
        states = drain([*peers, *watchers])
        assert {s["version"] for s in states} == {3}
        assert states[2]["view"]["log"] == states[0]["view"]["log"]


def test_resume_after_reconnect(client: TestClient) -> None:
    room = new_room(client)
    with connect(client, room) as b:
        with connect(client, room) as a:
            a.send(type="join", name="Ann")
            token = a.joined()["token"]
            drain([a, b])
        gone = time.time()
        # a's connection closed: presence only, no version bump
        s = b.state()
        assert s["version"] == 1
        away = s["view"]["seats"][0]
        assert away == {"seat": "red", "name": "Ann", "kind": "human", "connected": False,
                        "away_since": away["away_since"]}
        assert abs(away["away_since"] - gone) < 2
        with connect(client, room) as a2:
            a2.send(type="resume", token=token)
            j = a2.joined()
            assert j == {"type": "joined", "seat": "red", "token": token}
            sa, sb = drain([a2, b])
            assert sa["you"] == "red" and sa["version"] == 1
            assert sb["view"]["seats"][0]["connected"] is True and sb["version"] == 1
            # resuming again on the same connection is harmless
            a2.send(type="resume", token=token)
            assert a2.joined() == j
            assert a2.state() == sa


def test_resume_from_a_second_tab_replaces_the_first(client: TestClient) -> None:
    with table(client) as (room, (red, black), _):
        token = red.token
        before = red.last
        with connect(client, room) as tab2:
            tab2.send(type="resume", token=token)
            err = red.recv()
            assert err["code"] == "replaced"
            old = red.state()
            assert old["you"] is None and old["legal_moves"] == []
            assert tab2.joined()["seat"] == "red"
            new = tab2.state()
            assert new["you"] == "red" and new["version"] == before["version"]  # type: ignore[index]
            assert new["view"]["spectators"] == {"count": 1, "names": []}  # the old tab
            assert unwatched(new) == unwatched(before)
            # the old tab is only a spectator now
            red.send(type="move", move="c4", version=red.version)
            red.error("not_seated", then_state=True)
            # black saw nothing change but the spectators, of which it is told apart
            assert unwatched(black.probe()) == unwatched(black.last)
            # closing the old tab does not disconnect the seat
            red.ws.close()
            assert unwatched(black.probe()) == unwatched(black.last)
            assert black.last["view"]["seats"][0]["connected"] is True  # type: ignore[index]


def unwatched(state: dict[str, Any] | None) -> dict[str, Any]:
    """A state without its legal moves and spectators (which only a
    ``spectators`` frame tells others of)."""
    assert state is not None
    return {**state, "legal_moves": [], "view": {**state["view"], "spectators": None}}


def test_bad_token(client: TestClient) -> None:
    room = new_room(client)
    with connect(client, room) as a:
        a.send(type="resume", token="x" * 32)
        assert a.error("bad_token", then_state=True)["you"] is None
        a.send(type="resume", token=5)
        a.error("bad_field")


def test_resume_while_holding_another_seat(client: TestClient) -> None:
    with table(client) as (_room, (red, black), _):
        red.send(type="resume", token=black.token)
        assert red.error("already_seated", then_state=True)["you"] == "red"


def test_leave_while_waiting(client: TestClient) -> None:
    room = new_room(client)
    with connect(client, room) as a, connect(client, room) as b:
        a.send(type="join", name="Ann")
        token = a.joined()["token"]
        drain([a, b])
        a.send(type="leave")
        sa, sb = drain([a, b])
        assert sa["you"] is None and sa["version"] == 2
        assert sb["view"]["seats"][0]["name"] is None
        # the old token is worthless now
        a.send(type="resume", token=token)
        a.error("bad_token", then_state=True)
        a.send(type="leave")
        a.error("not_seated", then_state=True)


def test_leave_refused_during_a_deal(client: TestClient) -> None:
    with table(client) as (_, (red, black), _w):
        red.send(type="leave")
        err = red.recv()
        assert err["code"] == "not_playing" and "during a deal" in err["message"]
        assert red.state() == red.last
        assert black.probe() == black.last


def test_leave_between_deals_and_a_new_player_sits(client: TestClient) -> None:
    with table(client, seed=5) as (room, peers, _):
        red, black = peers
        assert play_deal(peers)["phase"] == "deal_over"
        v = red.version
        black.send(type="leave")
        s = drain(peers)[0]
        assert s["phase"] == "waiting" and s["version"] == v + 1
        red.send(type="next_deal", version=s["version"])
        assert "every seat" in red.error("not_playing")["message"]
        red.state()
        with connect(client, room) as c:
            c.send(type="join", name="Cy")
            assert c.joined()["seat"] == "black"
            s = drain([red, black, c])[2]
            assert s["phase"] == "deal_over" and s["you"] == "black"
            assert s["view"]["totals"] == red.last["view"]["totals"]  # type: ignore[index]


def test_names_lose_format_characters_and_need_something_visible() -> None:
    from app.protocol import clean_name

    assert clean_name("An\u202en") == "Ann"
    assert clean_name("\u200bBo\u2060") == "Bo"
    # A pile of combining marks on one letter draws over the lines around the
    # name (break-it pass): two a letter are kept ("Zoë", Vietnamese "Ngộ").
    assert clean_name("Z" + "\u0301" * 31) == "Z\u0301\u0301"
    assert clean_name("Zoe\u0308 Ngo\u0323\u0302") == "Zoe\u0308 Ngo\u0323\u0302"
    for blank in ("\u200b", "\ufeff", "\u2060\u00ad", "\u3164", "\u2800 ", "\U000e0041"):
        with pytest.raises(ValueError):
            clean_name(blank)


def test_resume_with_a_non_ascii_token_is_a_bad_token(client: TestClient) -> None:
    room = new_room(client, "get-stuck")
    with connect(client, room) as a, connect(client, room) as b:
        a.send(type="join", seat="red", name="Ann")
        a.joined()
        assert b.state()["view"]["seats"][0]["name"] == "Ann"
        b.send(type="resume", token="é")
        b.error("bad_token", then_state=True)


def test_a_room_full_of_spectators_still_lets_its_players_back(client: TestClient,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """Past the room's connection limit, as many connections more as it has
    seats are let in for a few seconds: one that takes its seat back (or a
    free one) stays; one that does not is told ``rate_limited`` and closed
    (1013); one past even that is refused at once. Idle spectators cannot shut
    a player out of their own room."""
    from app import ws

    monkeypatch.setattr(ws, "ROOM_CONNECTIONS", 3)
    monkeypatch.setattr(ws, "CLAIM_SECONDS", 0.5)
    room = new_room(client)
    with contextlib.ExitStack() as stack:
        b = stack.enter_context(connect(client, room))
        with connect(client, room) as a:
            a.send(type="join", name="Ann")
            token = a.joined()["token"]
            drain([a, b])
        b.state()  # Ann is away
        b.send(type="join", name="Bob")
        assert b.joined()["seat"] == "black"
        for _ in range(2):  # the room is full: Bob and two who only watch
            stack.enter_context(connect(client, room))
        a2 = stack.enter_context(connect(client, room))  # let in: a seat is Ann's
        a2.send(type="resume", token=token)
        assert a2.joined()["seat"] == "red"
        # Let in for a while, it takes no seat.
        with pytest.raises(WebSocketDisconnect) as closed, connect(client, room) as idle:
            assert "only a player taking a seat" in idle.error("rate_limited")["message"]
            idle.recv()
        assert closed.value.code == 1013
        time.sleep(0.7)  # Ann's time to claim is over: she keeps her seat
        a2.send(type="resume", token=token)
        frames = [a2.recv() for _ in range(3)]
        assert {"type": "joined", "seat": "red", "token": token} in frames, frames


def test_connections_that_claim_nothing_make_way_for_a_player(monkeypatch: pytest.MonkeyPatch) -> None:
    """The places let in beyond the room's limit all taken by connections
    that never claim a seat: one that has had ``CLAIM_FIRST`` seconds makes
    way for a newer connection, which takes its seat back (break-it pass:
    such connections, opened one after the other, kept a player out). On a
    real uvicorn: the test client runs every socket on a loop of its own."""
    from app import ws

    monkeypatch.setattr(ws, "ROOM_CONNECTIONS", 3)
    monkeypatch.setattr(ws, "CLAIM_SECONDS", 30.0)
    monkeypatch.setattr(ws, "CLAIM_FIRST", 0.2)

    with ann_away() as (url, token), ws_connect(url) as bob, ws_connect(url) as w1, ws_connect(url) as w2:
        bob.send(json.dumps({"type": "join", "seat": "black", "name": "Bob"}))
        frames_until(bob, "joined")
        with ws_connect(url) as s1, ws_connect(url) as s2:  # the extra places, claiming nothing
            for sock in (w1, w2, s1, s2):
                frames_until(sock, "state")
            time.sleep(0.3)
            with ws_connect(url) as ann:
                ann.send(json.dumps({"type": "resume", "token": token}))
                assert frames_until(ann, "joined")["seat"] == "red"
                # The one let in first was told, then closed.
                assert "only a player taking a seat" in frames_until(s1, "error")["message"]
                with pytest.raises(ConnectionClosed) as closed:
                    frames_until(s1, "never")
                assert closed.value.rcvd is not None and closed.value.rcvd.code == 1013


def test_a_connection_that_claimed_a_seat_is_an_ordinary_one_after() -> None:
    """Let in beyond the limit, it took a seat within CLAIM_SECONDS: from then
    on it is not one of those that make way, even once it leaves the seat
    (verification pass: such a player, up again later, was closed for a
    newcomer minutes after)."""
    from app import ws

    conn = ws.WsConnection(lambda text: asyncio.sleep(0))
    conn.claim_at, conn.seat = 12.0, "N"
    ws._claimed_or_closed(conn)
    assert conn.claim_at == 0.0 and not conn.too_slow
    conn.seat = None  # left the seat later
    ws._claimed_or_closed(conn)  # (a second timer would not cut it either)
    assert not conn.too_slow and not conn.closed


def test_a_seat_token_on_the_handshake_lets_its_player_into_a_crowded_room(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Every place of a crowded room held by connections younger than
    ``CLAIM_FIRST`` (verification pass: sockets opened as fast as possible
    from ten addresses kept a resuming player out): a connection offering
    its seat's token as the ``cardboard.seat.<token>`` subprotocol is let in,
    the oldest of them making way, and takes its seat back. One with no token,
    or with one that holds no seat, is refused. With no such connection left, the
    one holding the seat makes way for its player (a dead socket that does
    not know it yet). On a real uvicorn, with LeanProtocol."""
    from app import ws

    monkeypatch.setattr(ws, "ROOM_CONNECTIONS", 3)
    monkeypatch.setattr(ws, "CLAIM_SECONDS", 30.0)
    monkeypatch.setattr(ws, "CLAIM_FIRST", 30.0)

    def closed_with(sock: Any) -> tuple[list[str], int | None]:
        """The frames' types until the socket closes, and its close code."""
        seen = []
        with pytest.raises(ConnectionClosed) as closed:
            while True:
                seen.append(json.loads(sock.recv(timeout=10))["type"])
        return seen, closed.value.rcvd.code if closed.value.rcvd else None

    def offering(token: str) -> list[Any]:
        return ["cardboard", f"cardboard.seat.{token}"]

    with ann_away() as (url, token), ws_connect(url) as w1, ws_connect(url) as w2, \
            ws_connect(url) as w3, ws_connect(url) as bob, ws_connect(url) as s1:  # Bob, s1: the extra places
        bob.send(json.dumps({"type": "join", "seat": "black", "name": "Bob"}))
        frames_until(bob, "joined")
        for sock in (w1, w2, w3, s1):
            frames_until(sock, "state")
        for refused in ([], offering("not-a-token")):  # s1 is younger than CLAIM_FIRST
            with ws_connect(url, subprotocols=refused or None) as late:
                assert "only a player taking a seat" in frames_until(late, "error")["message"]
                assert closed_with(late)[1] == 1013
        with ws_connect(url, subprotocols=offering(token)) as ann:
            assert ann.subprotocol == "cardboard"
            ann.send(json.dumps({"type": "resume", "token": token}))
            assert frames_until(ann, "joined")["seat"] == "red"
            seen, code = closed_with(s1)  # the one that claimed nothing made way
            assert code == 1013 and seen[-1] == "error"
            # No place is held by a connection that claimed nothing now:
            # Ann on another device takes the place of her socket.
            with ws_connect(url) as late:
                frames_until(late, "error")
                assert closed_with(late)[1] == 1013
            with ws_connect(url, subprotocols=offering(token)) as again:
                again.send(json.dumps({"type": "resume", "token": token}))
                assert frames_until(again, "joined")["seat"] == "red"
                seen, code = closed_with(ann)
                assert code == 1013 and seen[-1] == "error"
                for sock in (w1, w2, w3, bob):  # the others stay
                    sock.send(json.dumps({"type": "ping"}))
                    frames_until(sock, "pong")


def _offering(token: str) -> list[Any]:
    """The subprotocols that offer a seat's token on the handshake."""
    return ["cardboard", f"cardboard.seat.{token}"]


def test_a_seated_player_s_own_token_cannot_keep_another_player_out(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Bob, seated, keeps opening sockets that offer his own token and never
    resume (verification pass: they kept Ann out of the crowded room six
    times in ten). His token holds one of the places kept for players at a
    time, and Ann, offering hers, takes it and her seat; Bob's further tries
    only ever replace Bob."""
    from app import ws

    monkeypatch.setattr(ws, "ROOM_CONNECTIONS", 3)
    monkeypatch.setattr(ws, "CLAIM_SECONDS", 30.0)
    monkeypatch.setattr(ws, "CLAIM_FIRST", 30.0)
    with ann_away() as (url, token), ws_connect(url) as w1, ws_connect(url) as w2, \
            ws_connect(url) as w3, ws_connect(url) as bob, contextlib.ExitStack() as tries:
        bob.send(json.dumps({"type": "join", "seat": "black", "name": "Bob"}))
        bob_token = frames_until(bob, "joined")["token"]
        for _ in range(3):  # each takes the place of the one before
            frames_until(tries.enter_context(ws_connect(url, subprotocols=_offering(bob_token))), "state")
        with ws_connect(url, subprotocols=_offering(token)) as ann:
            frames_until(ann, "state")
            for _ in range(2):  # before Ann has sent resume
                frames_until(tries.enter_context(ws_connect(url, subprotocols=_offering(bob_token))), "state")
            ann.send(json.dumps({"type": "resume", "token": token}))
            assert frames_until(ann, "joined")["seat"] == "red"
            for _ in range(3):
                frames_until(tries.enter_context(ws_connect(url, subprotocols=_offering(bob_token))), "state")
            ann.send(json.dumps({"type": "ping"}))
            frames_until(ann, "pong")  # Ann is still there, in her seat
            for sock in (w1, w2, w3):
                sock.send(json.dumps({"type": "ping"}))
                frames_until(sock, "pong")


def test_a_burst_of_one_token_stays_within_the_room_s_places(monkeypatch: pytest.MonkeyPatch) -> None:
    """Bob's seat held by a raw socket that takes no frame and answers no
    close; then many connections offering his token, one after the other,
    each resuming. Each takes the place of the one before, which leaves the
    room at once: the room never holds more connections than its places
    (verification pass: 200 such connections at once were all let in, 226
    connections against 102 places, each replacing the same dying holder)."""
    import socket

    from app import ws

    monkeypatch.setattr(ws, "ROOM_CONNECTIONS", 3)
    monkeypatch.setattr(ws, "CLAIM_SECONDS", 30.0)
    counted: list[Any] = []
    with ann_away(counted) as (url, _), ws_connect(url) as w1, ws_connect(url) as w2, \
            ws_connect(url) as w3, ws_connect(url), socket.create_connection(
                ("127.0.0.1", int(url.split(":")[2].split("/")[0]))) as raw:
        join = json.dumps({"type": "join", "seat": "black", "name": "Bob"}).encode()
        raw.sendall(b"GET /ws/" + url.rsplit("/", 1)[1].encode() + b" HTTP/1.1\r\nHost: x\r\n"
                    b"Upgrade: websocket\r\nConnection: Upgrade\r\n"
                    b"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n")
        raw.settimeout(10)
        seen = raw.recv(65536)
        assert seen.startswith(b"HTTP/1.1 101")
        raw.sendall(bytes([0x81, 0x80 | len(join), 0, 0, 0, 0]) + join)
        while b'"joined"' not in seen or b'"token"' not in seen.split(b'"joined"', 1)[1][:200]:
            seen += raw.recv(65536)
        bob_token = seen.split(b'"joined"', 1)[1].split(b'"token":"', 1)[1].split(b'"', 1)[0].decode()
        # (from now on the raw socket reads nothing and answers nothing)
        places = ws.ROOM_CONNECTIONS + 2
        room = counted[0]
        assert len(room) == places  # Ann gone; w1..w4 and Bob's raw socket
        with contextlib.ExitStack() as agains:
            for _ in range(8):  # each stays open, and each takes Bob's seat in turn
                again = agains.enter_context(ws_connect(url, subprotocols=_offering(bob_token)))
                again.send(json.dumps({"type": "resume", "token": bob_token}))
                assert frames_until(again, "joined")["seat"] == "black"
                assert len(room) <= places, len(room)
            for sock in (w1, w2, w3, again):  # (the fourth, claiming nothing, made way)
                sock.send(json.dumps({"type": "ping"}))
                frames_until(sock, "pong")
