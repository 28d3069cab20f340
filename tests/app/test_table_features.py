"""The table around the game, over the websocket (``docs/protocol.md``): the
ready step between deals, presence (away since, left, spectators), chat,
computer players' names, forced passes and new seat links."""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import sqlite3
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from bottest import (
    FAST,
    FakeClock,
    clock_of,
    eventually,
    make_bot_client,
    new_bot_room,
    playing_until,
    seat_of,
    until,
    watch,
)
from fastapi.testclient import TestClient
from redistest import redis_server
from roomtest import (
    Peer,
    TextConn,
    connect,
    drain,
    make_client,
    mover,
    new_room,
    play_deal,
    rebuilt,
    room_of,
    table,
)

from app.protocol import CHAT_HISTORY, CHAT_MAX, CHAT_RATE
from app.rooms import Room
from app.settings import Settings
from app.storage import MemoryStorage, Note, SqliteStorage
from app.storage.base import NOTES_KEPT
from app.table import COMPUTER_NAMES, computer_name
from engine.registry import GAMES, get_game

SETTLE = 0.3
"""Seconds a test lets pass to see that nothing more happens."""

WAIT = {"wait_away": 60.0}
"""How long the table waits for someone away between deals (view.ready)."""


def chats(peer: Peer, n: int) -> list[dict[str, Any]]:
    """The next ``n`` frames of ``peer``, which must be chat messages."""
    out = []
    for _ in range(n):
        frame = peer.recv()
        assert frame["type"] == "chat", frame
        out.append(frame)
    return out


# ---- the ready step ------------------------------------------------------------------

def test_the_result_stays_until_every_player_is_ready(client: TestClient) -> None:
    with table(client, seed=3, spectators=1) as (room_id, peers, watchers):
        red, black = peers
        end = play_deal(peers, watchers)
        v = red.version
        assert end["phase"] == "deal_over"
        assert end["view"]["ready"] == {"ready": [], "missing": ["red", "black"], "away": [], **WAIT}
        red.send(type="ready", version=v)
        for s in drain([red, black, *watchers]):
            # the press is stored (version + 1); the result stays on every screen
            assert s["version"] == v + 1 and s["phase"] == "deal_over"
            assert s["view"]["outcome"] is not None and s["view"]["deal"] == 1
            assert s["view"]["ready"] == {"ready": ["red"], "missing": ["black"], "away": [], **WAIT}
        # a double press changes nothing: only the presser hears back
        for pressed_on in (v, v + 1):
            red.send(type="ready", version=pressed_on)
            again = red.state()
            assert again["version"] == v + 1 and again["view"]["ready"]["ready"] == ["red"]
        assert black.probe()["version"] == v + 1
        # black pressed on the state the deal ended on: still this break's
        black.send(type="ready", version=v)
        for s in drain([red, black, *watchers]):
            assert s["version"] == v + 2 and s["phase"] == "playing" and s["view"]["deal"] == 2
            assert s["view"]["ready"] is None and s["view"]["outcome"] is None
        # a late press made during that break (a double click, or pressing at
        # the same moment as black) has had its effect: no error, nothing skipped
        for late in (v, v + 1):
            red.send(type="ready", version=late)
            again = red.state()
            assert again["version"] == v + 2 and again["view"]["deal"] == 2
        assert black.probe()["version"] == v + 2
        stored = room_of(client, room_id).table
        assert stored.ready == () and stored.match.deal_number == 2
        # a press on a state of the new deal is still out of turn
        red.send(type="ready", version=v + 2)
        assert red.error("not_playing", then_state=True)["view"]["deal"] == 2


def test_ready_is_refused_out_of_turn(client: TestClient) -> None:
    with table(client, seed=3, spectators=1) as (_, peers, watchers):
        red, black = peers
        red.send(type="ready", version=red.version)
        assert red.error("not_playing", then_state=True)["phase"] == "playing"
        play_deal(peers, watchers)
        v = red.version
        watchers[0].send(type="ready", version=v)
        watchers[0].error("not_seated", then_state=True)
        # a press made before the deal ended, or on a version to come, is stale
        for stale in (v - 1, v + 1):
            red.send(type="ready", version=stale)
            assert red.error("stale_version", then_state=True)["view"]["ready"]["ready"] == []
        # the contract's next_deal deals at once, even while others are not
        # ready yet; rematch is refused before the match is over
        red.send(type="ready", version=v)
        assert drain(peers)[0]["view"]["ready"]["ready"] == ["red"]
        red.send(type="rematch", version=v + 1)
        red.error("not_playing", then_state=True)
        black.send(type="next_deal", version=v)
        assert black.error("stale_version", then_state=True)["version"] == v + 1
        black.send(type="next_deal", version=v + 1)
        dealt = drain(peers)
        assert [s["version"] for s in dealt] == [v + 2, v + 2]
        assert dealt[0]["phase"] == "playing" and dealt[0]["view"]["ready"] is None


def test_readiness_is_kept_across_a_restart(client: TestClient) -> None:
    with table(client, seed=3) as (room_id, peers, _w):
        red = peers[0]
        play_deal(peers)
        red.send(type="ready", version=red.version)
        drain(peers)
        live = room_of(client, room_id)
        back = rebuilt(live)
        assert back.table == live.table and back.table.ready == ("red",)
        assert back.ready_view() == {"ready": ["red"], "missing": ["black"], "away": [], **WAIT}


def test_a_player_who_leaves_and_the_one_who_takes_the_seat(client: TestClient) -> None:
    with table(client, seed=3) as (room, peers, _w):
        red, black = peers
        play_deal(peers)
        v = red.version
        red.send(type="ready", version=v)
        drain(peers)
        black.send(type="leave")
        s = drain(peers)[0]
        assert s["version"] == v + 2 and s["phase"] == "waiting" and s["view"]["ready"] is None
        assert seat_of(s, "black") == {"seat": "black", "name": None, "kind": None, "connected": False,
                                       "left": "P1"}
        # a restart still names who gave the seat up
        assert rebuilt(room_of(client, room)).left_names == {"black": "P1"}
        with connect(client, room) as bea:
            bea.send(type="join", seat="black", name="Bea")
            bea.joined()
            s = drain([red, black, bea])[2]
            assert s["version"] == v + 3 and s["phase"] == "deal_over"
            assert "left" not in seat_of(s, "black")
            assert rebuilt(room_of(client, room)).left_names == {}
            # red's press still holds; the newcomer is awaited
            assert s["view"]["ready"] == {"ready": ["red"], "missing": ["black"], "away": [], **WAIT}
            bea.send(type="ready", version=v + 3)
            assert drain([red, bea])[1]["view"]["deal"] == 2


def test_the_match_over_waits_for_everyone_then_a_rematch(client: TestClient) -> None:
    with table(client, "romeo-and-juliet", seed=2) as (_, peers, _w):
        end = play_deal(peers)
        assert end["phase"] == "match_over" and end["view"]["deals"] == 1
        v = peers[0].version
        peers[0].send(type="ready", version=v)
        assert drain(peers)[1]["view"]["ready"]["ready"] == [peers[0].seat]
        peers[0].send(type="ready", version=v + 1)  # a second press changes nothing
        assert peers[0].state()["version"] == v + 1
        peers[1].send(type="ready", version=v)
        s = drain(peers)[0]
        assert s["version"] == v + 2 and s["phase"] == "playing" and s["view"]["history"] == []


def test_after_the_match_a_seat_left_waits_for_the_one_who_takes_it(client: TestClient) -> None:
    """After ``match_over`` a player leaves: the other's press does not deal
    the rematch with that seat empty; the newcomer presses too."""
    with table(client, "romeo-and-juliet", seed=2) as (room, peers, _w):
        end = play_deal(peers)
        assert end["phase"] == "match_over"
        first, second = peers
        left = second.seat
        second.send(type="leave")
        s = drain(peers)[0]
        assert s["phase"] == "match_over" and seat_of(s, left)["name"] is None
        first.send(type="ready", version=s["version"])
        s = first.state()
        assert s["phase"] == "match_over" and s["view"]["ready"]["ready"] == [first.seat], s["view"]["ready"]
        with connect(client, room) as bea:
            bea.send(type="join", seat=left, name="Bea")
            bea.joined()
            s = drain([first, bea])[1]
            assert s["phase"] == "match_over"
            assert s["view"]["ready"] == {"ready": [first.seat], "missing": [left], "away": [], **WAIT}
            bea.send(type="ready", version=s["version"])
            s = drain([first, bea])[1]
            assert s["phase"] == "playing" and s["view"]["history"] == []


def test_computer_players_are_ready_at_once() -> None:
    with make_bot_client() as client:
        body = new_bot_room(client, "get-stuck", {"level": "easy", "seats": "others"}, seed=4)
        with watch(client, body["room"]) as ann:
            ann.send(type="join", seat=body["seat"], name="Ann")
            end = playing_until(ann, lambda s: s["phase"] == "deal_over")
            computer = next(s for s in ("red", "black") if s != body["seat"])
            assert end["view"]["ready"] == {"ready": [computer], "missing": [body["seat"]], "away": [],
                                            **WAIT}
            ann.send(type="ready", version=end["version"])
            s = until(ann, lambda s: s["view"]["deal"] == 2)
            assert s["version"] == end["version"] + 1


def play_to_the_end(peers: list[Peer]) -> None:
    """Play first legal moves until the deal is over (peers whose reads time out)."""
    while peers[0].last is not None and peers[0].last["phase"] == "playing":
        p = mover(peers)
        assert p.last is not None
        v = p.version
        p.send(type="move", move=p.last["legal_moves"][0], version=v)
        for q in peers:
            until(q, lambda s, v=v: s["version"] > v)


def test_a_computer_taking_the_last_seat_starts_the_deal() -> None:
    with make_bot_client() as client:
        room = new_room(client, "get-stuck", seed=3)
        with watch(client, room) as ann, watch(client, room) as bob:
            ann.send(type="join", seat="red", name="Ann")
            bob.send(type="join", seat="black", name="Bob")
            until(ann, lambda s: s["phase"] == "playing")
            until(bob, lambda s: s["phase"] == "playing")
            play_to_the_end([ann, bob])
            v = ann.version
            ann.send(type="ready", version=v)
            until(ann, lambda s: bool(s["view"]["ready"]) and s["view"]["ready"]["ready"] == ["red"])
            bob.send(type="leave")
            left = until(ann, lambda s: s["phase"] == "waiting")
            ann.send(type="add_bot", seat="black", level="easy")
            s = until(ann, lambda s: s["view"]["deal"] == 2)
            assert s["version"] == left["version"] + 2 and s["phase"] == "playing"


def test_a_player_away_for_a_while_does_not_hold_the_table() -> None:
    settings = FAST.model_copy(update={"ready_away_seconds": 60.0})
    with make_bot_client(settings) as client:
        clock = clock_of(client)
        room = new_room(client, "get-stuck", seed=3)
        with watch(client, room) as ann:
            ann.send(type="join", seat="red", name="Ann")
            with watch(client, room) as bob:
                bob.send(type="join", seat="black", name="Bob")
                until(bob, lambda s: s["phase"] == "playing")
                until(ann, lambda s: s["phase"] == "playing")
                play_to_the_end([ann, bob])
            gone = until(ann, lambda s: not seat_of(s, "black")["connected"])
            v = gone["version"]
            ann.send(type="ready", version=v)
            waiting = until(ann, lambda s: bool(s["view"]["ready"] and s["view"]["ready"]["ready"]))
            # Bob is still awaited at first; a minute after he went, the table goes on
            assert waiting["view"]["ready"] == {"ready": ["red"], "missing": ["black"], "away": [], **WAIT}
            assert waiting["version"] == v + 1
            eventually(lambda: clock.sleeping == 1, "the table waits for Bob")
            clock.advance(59)
            assert clock.sleeping == 1 and ann.probe()["version"] == v + 1
            clock.advance(1.5)
            s = until(ann, lambda s: s["version"] == v + 2)
            assert s["view"]["deal"] == 2 and s["phase"] == "playing"
            assert s["view"]["ready"] is None


def test_deals_of_a_match_are_counted_where_fixed(client: TestClient) -> None:
    expected = {"get-stuck": 6, "get-stuck-4": 4, "romeo-and-juliet": 1, "stucco": None, "suitors": 1}
    for game, deals in expected.items():
        options = {"deals": 6} if game == "get-stuck" else {}
        with connect(client, new_room(client, game, **options)) as p:
            assert p.last is not None and p.last["view"]["deals"] == deals
            assert get_game(game).deals_in_match(get_game(game).check_options(options)) == deals


# ---- presence ------------------------------------------------------------------------

def test_away_since_shows_while_a_player_is_disconnected(client: TestClient) -> None:
    room = new_room(client, "get-stuck")
    with connect(client, room) as ann:
        ann.send(type="join", seat="red", name="Ann")
        ann.joined()
        ann.state()
        with connect(client, room) as bob:
            bob.send(type="join", seat="black", name="Bob")
            bob.joined()
            token = bob.token
            drain([ann, bob])
            before = time.time()
        s = ann.state()
        black = seat_of(s, "black")
        assert black["connected"] is False and before - 1 <= black["away_since"] <= time.time()
        assert s["version"] == 2
        with connect(client, room) as again:
            again.send(type="resume", token=token)
            again.joined()
            back = again.state()
            assert seat_of(back, "black") == {"seat": "black", "name": "Bob", "kind": "human",
                                              "connected": True}
            assert ann.state()["version"] == 2


def test_spectators_are_counted_and_named(client: TestClient) -> None:
    with table(client) as (room, peers, _w):
        red = peers[0]
        with connect(client, room) as zoe:
            assert zoe.last is not None
            assert zoe.last["view"]["spectators"] == {"count": 1, "names": []}
            zoe.send(type="watch", name="  Zoe\u200b ")
            with connect(client, room) as anon:
                assert anon.last is not None and anon.last["view"]["spectators"]["count"] == 2
                seen = _spectators_until(red, lambda f: f == {"type": "spectators", "count": 2,
                                                             "names": ["Zoe"]})
                assert seen
                anon.send(type="watch", name="")
                anon.error("bad_field")
                # A seated player's name (refused to the spectator as a
                # player's) is not shown as a spectator's.
                anon.send(type="watch", name="Max")
                _spectators_until(red, lambda f: f["count"] == 2 and sorted(f["names"]) == ["Max", "Zoe"])
                red.watching.clear()
                anon.send(type="watch", name="p0")
                _spectators_until(red, lambda f: f["count"] == 2 and f["names"] == ["Zoe"])
                anon.send(type="watch", name="Max")
                _spectators_until(red, lambda f: f["count"] == 2 and sorted(f["names"]) == ["Max", "Zoe"])
                red.watching.clear()
                anon.send(type="watch", name="Ada (strong)")  # a computer player's kind of name
                _spectators_until(red, lambda f: f["count"] == 2 and f["names"] == ["Zoe"])
            _spectators_until(red, lambda f: f["count"] == 1 and f["names"] == ["Zoe"])
        _spectators_until(red, lambda f: f["count"] == 0)
        assert red.probe()["view"]["spectators"] == {"count": 0, "names": []}


def _spectators_until(peer: Peer, done: Any) -> bool:
    """Wait for a ``spectators`` frame of ``peer`` that satisfies ``done``:
    they come a moment after the change, so the test reads a probe's state
    (which waits for nothing) until one has arrived."""
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        if any(done(f) for f in peer.watching):
            return True
        peer.probe()
        time.sleep(0.05)
    raise AssertionError(f"no spectators frame as expected among {peer.watching}")


# ---- chat ----------------------------------------------------------------------------

def test_a_chat_message_reaches_every_connection_as_text(client: TestClient) -> None:
    with table(client, spectators=1) as (_, peers, watchers):
        red = peers[0]
        v = red.version
        text = '<img src=x onerror="alert(1)"> see https://example.com'
        before = time.time()
        red.send(type="chat", text=f"  {text}\n")
        for p in [*peers, *watchers]:
            (m,) = chats(p, 1)
            assert m["from"] == "P0" and m["seat"] == "red" and m["text"] == text
            assert before - 1 <= m["at"] <= time.time() + 1
        assert red.probe()["version"] == v  # chat raises no version


@pytest.mark.parametrize(("text", "kept"), [
    ("x" * CHAT_MAX, "x" * CHAT_MAX),
    ("line one\nline two\ttab", "line one line two tab"),
    ("a\u202eb\u0000c", "abc"),
    ("  many    spaces  ", "many spaces"),
])
def test_chat_text_is_cleaned(client: TestClient, text: str, kept: str) -> None:
    with table(client) as (_, peers, _w):
        peers[1].send(type="chat", text=text)
        assert chats(peers[0], 1)[0]["text"] == kept


@pytest.mark.parametrize("text", ["x" * (CHAT_MAX + 1), "", "   ", "\u200b\n", 42, None])
def test_bad_chat_text_is_bad_field(client: TestClient, text: Any) -> None:
    with table(client) as (_, peers, _w):
        peers[0].send(type="chat", text=text)
        message = peers[0].error("bad_field")["message"]  # names the field, or says what a message needs
        assert "'text'" in message or message.startswith("a chat message"), message
        assert peers[1].probe() == peers[1].last


def test_chat_is_rate_limited(client: TestClient) -> None:
    with table(client) as (_, peers, _w):
        red, black = peers
        for i in range(CHAT_RATE):
            red.send(type="chat", text=f"message {i}")
        assert [m["text"] for m in chats(black, CHAT_RATE)] == [f"message {i}" for i in range(CHAT_RATE)]
        chats(red, CHAT_RATE)
        red.send(type="chat", text="one too many")
        red.error("rate_limited", then_state=True)
        black.send(type="chat", text="black's own limit")
        assert chats(red, 1)[0]["text"] == "black's own limit"


def test_the_chat_rate_window_moves_on() -> None:
    room = Room.create("get-stuck", {})
    conn = TextConn()
    room.attach(conn)
    room.join(conn, "red", "Ann")
    for i in range(CHAT_RATE):
        room.chat(conn, f"m{i}", now=100.0 + i)
    with pytest.raises(Exception, match="at most") as refused:
        room.chat(conn, "too soon", now=104.5)
    assert getattr(refused.value, "code", None) == "rate_limited"
    room.chat(conn, "the first has aged out", now=110.0)
    assert [m.text for m in room.chat_log][-1] == "the first has aged out"


def test_spectators_read_but_do_not_write_by_default(client: TestClient) -> None:
    with table(client, spectators=1) as (_, peers, watchers):
        w = watchers[0]
        assert w.last is not None and w.last["view"]["chat"] == {"spectators": "off"}
        w.send(type="chat", text="hello")
        w.error("not_seated", then_state=True)
        peers[0].send(type="chat", text="players only")
        assert chats(w, 1)[0]["text"] == "players only"


def test_spectator_chat_when_the_room_allows_it_and_the_mute(client: TestClient) -> None:
    with table(client, spectators=1, spectator_chat=True) as (_, peers, watchers):
        red, black = peers
        w = watchers[0]
        assert w.last is not None and w.last["view"]["chat"] == {"spectators": "on"}
        assert w.last["view"]["room_options"] == {"spectator_chat": True, "auto_pass": True}
        w.send(type="chat", text="no name yet")
        assert chats(red, 1)[0] == {"type": "chat", "from": None, "seat": None, "text": "no name yet",
                                     "at": chats(w, 1)[0]["at"]}
        chats(black, 1)
        w.send(type="watch", name="Zoe")
        w.send(type="chat", text="hi from Zoe")
        for p in (red, black, w):
            m = chats(p, 1)[0]
            assert m["from"] == "Zoe" and m["seat"] is None
        v = red.version
        w.send(type="mute_spectators", mute=True)
        w.error("not_seated", then_state=True)
        black.send(type="mute_spectators", mute=True)
        for s in drain([red, black, w]):
            assert s["version"] == v and s["view"]["chat"] == {"spectators": "muted", "muted_by": "P1"}
        w.send(type="chat", text="muted?")
        assert "P1" in w.error("muted")["message"]
        w.state()
        red.send(type="chat", text="players still chat")
        assert chats(w, 1)[0]["text"] == "players still chat"
        chats(black, 1)
        chats(red, 1)
        red.send(type="mute_spectators", mute=False)
        for s in drain([red, black, w]):
            assert s["view"]["chat"] == {"spectators": "on"} and s["version"] == v
        w.send(type="chat", text="back")
        assert chats(red, 1)[0]["text"] == "back"


def test_chat_is_sent_to_a_new_connection_and_kept_across_a_restart(client: TestClient) -> None:
    with table(client) as (room_id, peers, _w):
        red, black = peers
        for i in range(CHAT_HISTORY + 3):
            (red if i % 2 else black).send(type="chat", text=f"m{i}")
            chats(red, 1)
            chats(black, 1)
            room_of(client, room_id)._chat_times.clear()  # the rate limit is tested above
        with connect(client, room_id) as late:
            got = chats(late, CHAT_HISTORY)
            assert [m["text"] for m in got] == [f"m{i}" for i in range(3, CHAT_HISTORY + 3)]
            assert got[-1]["from"] == "P1" and got[-1]["seat"] == "black"
        live = room_of(client, room_id)
        back = rebuilt(live)
        assert list(back.chat_log) == list(live.chat_log)
        assert back.version == live.version


async def written(pending: Any) -> None:
    """Wait for a storage write (a concurrent or an asyncio future)."""
    await (asyncio.wrap_future(pending) if isinstance(pending, concurrent.futures.Future) else pending)


@pytest.mark.parametrize("backend", ["sqlite", "redis", "memory"])
def test_notes_are_kept_by_the_storage(tmp_path: Path, backend: str) -> None:
    """Each backend keeps a room's last notes of each kind with the room and
    forgets them with it (SQLite here; Redis on a real redis-server). Older
    notes are not kept at all (break-it pass: SQLite kept every chat message
    of a room, and read them all at every load)."""
    with contextlib.ExitStack() as stack:
        if backend == "redis":
            from app.storage.redis import RedisStorage
            url = stack.enter_context(redis_server(tmp_path)).url
            asyncio.run(_notes_kept(lambda: RedisStorage(url)))
        elif backend == "memory":
            asyncio.run(_notes_kept(MemoryStorage))
        else:
            asyncio.run(_notes_kept(lambda: SqliteStorage(tmp_path / "rooms.db")))
            with contextlib.closing(sqlite3.connect(tmp_path / "rooms.db")) as db:
                assert db.execute("SELECT count(*) FROM room_notes").fetchone() == (0,)


async def _notes_held(storage: Any, room_id: str) -> int | None:
    """How many notes ``storage`` holds for the room, all kinds and ages
    (``None`` where it cannot be asked: Redis trims its lists as it writes)."""
    if isinstance(storage, MemoryStorage):
        return len(storage._notes[room_id])
    if isinstance(storage, SqliteStorage):
        with contextlib.closing(sqlite3.connect(storage.path)) as db:
            row = db.execute("SELECT count(*) FROM room_notes WHERE room = ?", (room_id,)).fetchone()
            return int(row[0])
    return None


async def _notes_kept(make: Any) -> None:
    storage = make()
    await storage.open()
    room = Room.create("get-stuck", {"spectator_chat": True}, journal=storage)
    await room.commit()
    for i in range(NOTES_KEPT + 5):
        await written(storage.note(room.id, Note("chat", float(i), {"text": f"m{i}"})))
    await written(storage.note(room.id, Note("mute", 1.0, {"by": "Ann"})))
    stored = await storage.load(room.id)
    assert stored is not None
    texts = [n.data.get("text") for n in stored.notes if n.kind == "chat"]
    assert texts == [f"m{i}" for i in range(5, NOTES_KEPT + 5)]
    assert [n.data for n in stored.notes if n.kind == "mute"] == [{"by": "Ann"}]
    assert await _notes_held(storage, room.id) in (None, NOTES_KEPT + 1)
    back = Room.rebuild(stored, storage)
    assert back.muted_by == "Ann" and len(back.chat_log) == CHAT_HISTORY
    with pytest.raises(Exception, match="no such room"):
        await written(storage.note("no-such-room-x", Note("chat", 1.0, {})))
    await storage.close_room(room.id)  # no match finished: deleted, notes too
    assert await storage.load(room.id) is None
    if hasattr(storage, "client"):
        assert await storage.client.keys("*notes*") == []
    await storage.close()


# ---- computer players' names ---------------------------------------------------------

def test_each_computer_player_has_its_own_name() -> None:
    with make_bot_client() as client:
        body = new_bot_room(client, "get-stuck-4", {"level": "strong", "seats": ["E", "W"]})
        with watch(client, body["room"]) as p:
            assert p.last is not None
            names = {s["seat"]: s["name"] for s in p.last["view"]["seats"]}
            assert names == {"N": None, "E": "Alan (strong)", "S": None, "W": "Kurt (strong)"}
            p.send(type="join", seat="N", name="Ann")
            until(p, lambda s: s["you"] == "N")
            p.send(type="add_bot", seat="S", level="easy")
            s = until(p, lambda s: seat_of(s, "S")["name"] is not None)
            assert seat_of(s, "S")["name"] == "Grace (easy)" == computer_name(2, "easy")
    assert len(set(COMPUTER_NAMES)) == len(COMPUTER_NAMES)
    assert max(len(computer_name(i, "medium")) for i in range(4)) <= 14


# ---- forced passes -------------------------------------------------------------------

PASSING = FAST.model_copy(update={"auto_pass_seconds": 0.2})


@contextlib.contextmanager
def four_people(client: TestClient, **options: Any) -> Iterator[list[Peer]]:
    """Four people at a Get Stuck for Four table (seed 1: East is stuck after
    13 first legal moves), each peer's reads timing out."""
    room = new_room(client, "get-stuck-4", seed=1, **options)
    with contextlib.ExitStack() as stack:
        peers = [stack.enter_context(watch(client, room)) for _ in range(4)]
        for p, seat in zip(peers, "NESW", strict=True):
            p.send(type="join", seat=seat, name=f"P{seat}")
        for p in peers:
            until(p, lambda s: s["phase"] == "playing")
        yield peers


def play_until_a_pass_is_due(peers: list[Peer]) -> tuple[Peer, dict[str, Any]]:
    """Play first legal moves until an awaited seat has only a pass; return
    its peer and its state."""
    while True:
        p = mover(peers)
        assert p.last is not None
        if p.last["legal_moves"] == ["pass"]:
            return p, p.last
        v = p.version
        p.send(type="move", move=p.last["legal_moves"][0], version=v)
        for q in peers:
            until(q, lambda s, v=v: s["version"] > v)


def pass_is_due(client: TestClient) -> FakeClock:
    """The app's clock, once the server waits to pass for someone."""
    clock = clock_of(client)
    eventually(lambda: clock.sleeping == 1, "the server waits before it passes")
    return clock


def test_the_server_passes_for_a_player_with_no_other_move() -> None:
    with make_bot_client(PASSING) as client, four_people(client) as peers:
        stuck, before = play_until_a_pass_is_due(peers)
        clock = pass_is_due(client)
        clock.advance(PASSING.auto_pass_seconds / 2)
        assert stuck.probe()["version"] == before["version"]  # a visible pause first
        clock.advance(PASSING.auto_pass_seconds)
        after = until(stuck, lambda s: s["version"] > before["version"])
        assert after["version"] == before["version"] + 1
        last = after["view"]["log"][-1]
        assert last["seat"] == stuck.seat and last["move"] == "pass"
        assert last["text"].endswith("(played by the server: no other move)")
        assert "East" in last["text"]


def test_a_pass_made_in_the_pause_is_played_once() -> None:
    with make_bot_client(PASSING) as client, four_people(client) as peers:
        stuck, before = play_until_a_pass_is_due(peers)
        clock = pass_is_due(client)
        stuck.send(type="move", move="pass", version=before["version"])
        after = until(stuck, lambda s: s["version"] > before["version"])
        clock.advance(PASSING.auto_pass_seconds * 2)
        eventually(lambda: clock.sleeping == 0, "the server's pass is over")
        time.sleep(SETTLE)
        now = stuck.probe()
        passes = [e for e in now["view"]["log"] if e["move"] == "pass"]
        assert now["version"] == after["version"] and len(passes) == 1
        assert "played by the server" not in passes[0]["text"]


@pytest.mark.parametrize("seating_change", [False, True])
def test_a_pass_sent_just_after_the_server_played_it_is_no_error(seating_change: bool) -> None:
    """The person presses Pass as the server passes for them: their pass,
    made on a version from before the server's, is that same move, played
    already. They get the state, no error, and nothing else changes; also
    when a seating change (a new seat link) came during the server's pause,
    a version between the state they saw and the server's pass."""
    with make_bot_client(PASSING) as client, four_people(client) as peers:
        stuck, before = play_until_a_pass_is_due(peers)
        clock = pass_is_due(client)
        if seating_change:
            other = next(p for p in peers if p is not stuck)
            other.send(type="new_token")
            other.joined()
            until(stuck, lambda s: s["version"] == before["version"] + 1)
        clock.advance(PASSING.auto_pass_seconds * 2)
        after = until(stuck, lambda s: s["view"]["log"][-1]["seat"] == stuck.seat)
        assert after["view"]["log"][-1]["text"].endswith("(played by the server: no other move)")
        assert after["version"] == before["version"] + (2 if seating_change else 1)
        stuck.send(type="move", move="pass", version=before["version"])
        again = stuck.recv()
        assert again["type"] == "state", again
        assert again["version"] == after["version"]
        assert len(again["view"]["log"]) == len(after["view"]["log"])
        # Any other move on that version is refused as before.
        stuck.send(type="move", move="a1", version=before["version"])
        refused = stuck.recv()
        assert refused["type"] == "error" and refused["code"] in ("not_your_turn", "not_playing")


def test_no_forced_passes_when_the_room_says_so() -> None:
    with make_bot_client(PASSING) as client, four_people(client, auto_pass=False) as peers:
        stuck, before = play_until_a_pass_is_due(peers)
        assert before["view"]["room_options"]["auto_pass"] is False
        time.sleep(SETTLE)
        clock = clock_of(client)
        assert clock.sleeping == 0  # no pass waits to be played
        clock.advance(PASSING.auto_pass_seconds * 10)
        time.sleep(SETTLE)
        assert stuck.probe()["version"] == before["version"]


# ---- new seat links ------------------------------------------------------------------

def test_a_new_seat_link_ends_the_old_one(client: TestClient) -> None:
    with table(client, spectators=1) as (room, peers, watchers):
        red = peers[0]
        old = red.token
        v = red.version
        red.send(type="new_token")
        joined = red.joined()
        assert joined["seat"] == "red" and joined["token"] != old
        for s in drain([*peers, *watchers]):
            assert s["version"] == v + 1
        for p in [peers[1], *watchers]:
            assert joined["token"] not in "".join(p.texts)
        with connect(client, room) as stale:
            stale.send(type="resume", token=old)
            stale.error("bad_token", then_state=True)
        with connect(client, room) as phone:
            phone.send(type="resume", token=joined["token"])
            phone.joined()
            assert phone.state()["you"] == "red"
            assert red.error("replaced", then_state=True)["you"] is None
        with connect(client, room) as spectator:
            spectator.send(type="new_token")
            spectator.error("not_seated", then_state=True)


def test_the_new_token_survives_a_restart(client: TestClient) -> None:
    with table(client) as (room_id, peers, _w):
        peers[1].send(type="new_token")
        token = peers[1].joined()["token"]
        drain(peers)
        back = rebuilt(room_of(client, room_id))
        assert back.table == room_of(client, room_id).table
        conn = TextConn()
        back.attach(conn)
        back.resume(conn, token)
        assert conn.seat == "black"


# ---- room options --------------------------------------------------------------------

def test_room_options_are_offered_and_checked() -> None:
    with make_client(Settings()) as client:
        for g in client.get("/api/games").json():
            offered = {"spectator_chat", "auto_pass"} if g["passes"] else {"spectator_chat"}
            assert offered <= set(g["options"]) and (g["passes"] or "auto_pass" not in g["options"])
        # Older clients send auto_pass to the two-player Get Stuck too: still taken.
        assert client.post("/api/rooms", json={"game": "get-stuck",
                                               "options": {"auto_pass": False}}).status_code == 201
        for bad in ({"spectator_chat": "yes"}, {"auto_pass": 1}):
            r = client.post("/api/rooms", json={"game": "stucco", "options": bad})
            assert r.status_code == 422 and next(iter(bad)) in r.json()["detail"]
        with connect(client, new_room(client, "stucco")) as p:
            assert p.last is not None
            assert p.last["view"]["room_options"] == {"spectator_chat": False, "auto_pass": True}
            assert p.last["view"]["options"] == {"target": 100}
    assert set(GAMES)
