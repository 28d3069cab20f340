"""The server on a storage that fails: a move that cannot be saved is refused
with ``unavailable`` and a fresh state, nothing of it applied or sent to
anyone, and play resumes once the storage works again; room creation answers
503; a server whose database cannot be opened does not start and says why
(``docs/protocol.md``, "Errors" and "Restarts")."""

from __future__ import annotations

import asyncio
import json
import logging
import os
import socket
import sqlite3
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from bottest import (
    Gate,
    clock_of,
    eventually,
    lobby_of,
    make_bot_client,
    new_bot_room,
    until,
    watch,
)
from fastapi.testclient import TestClient
from roomtest import Peer, drain, make_client, mover, table
from starlette.websockets import WebSocketDisconnect

from app import bots
from app.lobby import Lobby
from app.rooms import Room
from app.settings import Settings
from app.storage import MemoryStorage, SqliteStorage, StorageError
from engine.match import Match
from engine.registry import get_game

ROOT = Path(__file__).resolve().parents[2]


class Breaker:
    """Makes the storage of a running test client fail its writes, and work again."""

    def __init__(self, client: TestClient, kind: str) -> None:
        self.client = client
        self.kind = kind
        self.lobby: Lobby = client.app.state.lobby  # type: ignore[attr-defined]

    def _pages(self, limit: int | None) -> None:
        storage = self.lobby.storage
        assert isinstance(storage, SqliteStorage)

        def run(conn: sqlite3.Connection) -> None:
            pages = conn.execute("PRAGMA page_count").fetchone()[0]
            conn.execute(f"PRAGMA max_page_count = {pages if limit is None else limit}")
        self.client.portal.call(storage._call, run)  # type: ignore[union-attr]

    def break_(self) -> None:
        """Full disk (SQLite: not one page more), or every write failing (memory)."""
        if self.kind == "sqlite":
            self._pages(None)
        else:
            storage = self.lobby.storage
            assert isinstance(storage, MemoryStorage)
            storage.fail = StorageError("disk full")

    def repair(self) -> None:
        if self.kind == "sqlite":
            self._pages(2**31 - 2)
        else:
            storage = self.lobby.storage
            assert isinstance(storage, MemoryStorage)
            storage.fail = None


@pytest.fixture(params=["sqlite", "memory"])
def broken(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Breaker]:
    """A test client whose storage can be broken: a real SQLite file whose
    disk gets full, or the memory backend told to fail."""
    database = str(tmp_path / "rooms.db") if request.param == "sqlite" else ":memory:"
    with make_client(Settings(database=database, room_create_burst=1000)) as client:
        yield Breaker(client, request.param)


def nothing_sent(peers: list[Peer]) -> None:
    """No peer has been sent anything since its last state (a refused resume
    answers at once with its error, then the very same state)."""
    for p in peers:
        before = p.last
        assert p.probe() == before


def next_frame(peers: list[Peer]) -> tuple[Peer, dict[str, Any]]:
    """Who acts next, and the frame: the awaited seat's first legal move, or
    between deals the "ready" of the first seat not ready yet."""
    last = peers[0].last
    assert last is not None
    if last["phase"] == "deal_over":
        p = next(p for p in peers if p.seat not in last["view"]["ready"]["ready"])
        return p, {"type": "ready", "version": last["version"]}
    p = mover(peers)
    assert p.last is not None
    return p, {"type": "move", "move": p.last["legal_moves"][0], "version": p.version}


def refused_until_full(peers: list[Peer], watchers: list[Peer], room: Room) -> tuple[Peer, dict[str, Any]]:
    """Play until an action is refused with ``unavailable`` (a full disk fills
    within a page: a few dozen actions); check that it changed nothing for
    anyone. Returns who sent it and the frame."""
    for _ in range(300):
        p, frame = next_frame(peers)
        before, table_before = p.last, room.table
        p.send(**frame)
        answer = p.recv()
        if answer["type"] == "state":
            drain([q for q in (*peers, *watchers) if q is not p])
            continue
        assert answer["type"] == "error" and answer["code"] == "unavailable", answer
        assert "nothing was changed" in answer["message"]
        assert p.state() == before  # a fresh state, the same version
        assert room.table == table_before and room.version == frame["version"]
        nothing_sent([q for q in (*peers, *watchers) if q is not p])
        return p, frame
    raise AssertionError("300 actions fitted on a full disk")


def test_an_action_that_cannot_be_saved_is_refused(broken: Breaker) -> None:
    with table(broken.client, "get-stuck-4", spectators=1) as (room_id, peers, watchers):
        room = broken.lobby.store.get(room_id)
        assert room is not None
        broken.break_()
        p, frame = refused_until_full(peers, watchers, room)
        version = frame["version"]
        # Still full: the same action is refused again.
        p.send(**frame)
        assert p.error("unavailable", then_state=True)["version"] == version
        # Space again: the same action, on the same version, is taken.
        broken.repair()
        p.send(**frame)
        states = drain([*peers, *watchers])
        assert {s["version"] for s in states} == {version + 1}
        if frame["type"] == "move":
            assert states[0]["view"]["log"][-1]["move"] == frame["move"]
        stored = broken.client.portal.call(broken.lobby.storage.load, room_id)  # type: ignore[union-attr]
        assert stored is not None and stored.meta.version == version + 1
        assert [e.version for e in stored.entries] == list(range(version + 2))
        # The last "ready" of a break is stored as what it starts (Room.ready).
        taken = {"move": ("move",), "ready": ("ready", "next_deal", "rematch")}[frame["type"]]
        assert stored.entries[-1].action["t"] in taken
        rebuilt = Room.rebuild(stored, broken.lobby.storage)
        assert rebuilt.table == room.table
        # And play goes on.
        p, frame = next_frame(peers)
        p.send(**frame)
        assert {s["version"] for s in drain([*peers, *watchers])} == {version + 2}


@pytest.mark.parametrize("broken", ["memory"], indirect=True)  # a join fits in SQLite's last page
def test_a_join_that_cannot_be_saved_is_refused(broken: Breaker) -> None:
    client = broken.client
    room_id = client.post("/api/rooms", json={"game": "get-stuck"}).json()["room"]
    broken.break_()
    with client.websocket_connect(f"/ws/{room_id}") as ws:
        peer = Peer(ws)
        before = peer.state()
        peer.send(type="join", seat="red", name="Ann")
        assert peer.error("unavailable", then_state=True) == before
        assert peer.token is None
        broken.repair()
        peer.send(type="join", seat="red", name="Ann")
        assert peer.joined()["seat"] == "red" and peer.state()["version"] == before["version"] + 1


def test_room_creation_answers_503(broken: Breaker) -> None:
    client = broken.client
    broken.break_()
    for _ in range(200):
        r = client.post("/api/rooms", json={"game": "stucco", "options": {"target": 50}})
        if r.status_code == 503:
            break
        assert r.status_code == 201  # it still fitted in a page
    assert r.status_code == 503, r.text
    assert "cannot save rooms" in r.json()["detail"]
    broken.repair()
    r = client.post("/api/rooms", json={"game": "stucco"})
    assert r.status_code == 201
    assert client.get(r.json()["url"]).status_code == 200


@pytest.mark.parametrize("sync", ["NORMAL", "FULL"])
def test_a_cancelled_commit_does_not_refuse_the_next_action(tmp_path: Path, sync: str) -> None:
    """A move whose sender went away while it was being written, and whose
    write then failed, does not make the next action fail: that one is judged
    (and written) on its own. With ``NORMAL`` the loop commits the move at
    the end of its turn; with ``FULL`` the sync thread does."""
    class Conn:
        def __init__(self) -> None:
            self.seat: str | None = None
            self.frames: list[dict[str, Any]] = []

        def push(self, text: str) -> None:
            self.frames.append(json.loads(text))

    async def scenario() -> None:
        storage = SqliteStorage(tmp_path / "rooms.db", sync)
        await storage.open()
        room = Room.create("get-stuck", {"seed": 3}, journal=storage)
        await room.commit()
        conns = [Conn(), Conn()]
        for i, c in enumerate(conns):
            room.attach(c)
            assert await room.act(lambda c=c, i=i: room.join(c, None, f"P{i}"), c)
        seat = room.game.to_move(room.match.state)[0]
        conn = next(c for c in conns if c.seat == seat)
        move = room.game.legal_moves(room.match.state, seat)[0]
        version = room.version

        def squat(db: sqlite3.Connection) -> None:
            """Take the place where the move's entry must go, so that its write fails."""
            db.execute("INSERT INTO actions (room, version, at, action) VALUES (?, ?, 0, '{}')",
                       (room.id, version + 1))

        def unsquat(db: sqlite3.Connection) -> None:
            db.execute("DELETE FROM actions WHERE room = ? AND version = ?", (room.id, version + 1))

        hold = threading.Event()

        def squat_and_hold(db: sqlite3.Connection) -> None:
            """Hold the writer until the move is queued behind this job."""
            squat(db)
            hold.wait(10)

        if sync == "FULL":
            storage._submit(squat_and_hold)
            first = asyncio.ensure_future(room.act(lambda: room.move(conn, move, version), conn))
            await asyncio.sleep(0.05)
            first.cancel()
            hold.set()
        else:
            await storage._call(squat)
            first = asyncio.ensure_future(room.act(lambda: room.move(conn, move, version), conn))
            for _ in range(100):  # until the move's write waits for the end of the turn
                if storage._turn:
                    break
                await asyncio.sleep(0)
            assert storage._turn
            first.cancel()
        with pytest.raises(asyncio.CancelledError):
            await first
        conn.frames.clear()
        assert not await room.act(lambda: room.move(conn, move, version), conn)
        assert [f.get("code") for f in conn.frames] == ["unavailable", None]
        assert room.version == version
        await storage._call(unsquat)
        assert await room.act(lambda: room.move(conn, move, version), conn)
        assert room.version == version + 1
        await storage.close()
    asyncio.run(scenario())


def test_a_room_that_cannot_be_read_closes_its_socket_with_1011(tmp_path: Path) -> None:
    """A stored room the server cannot read just now: its page answers 503,
    its websocket gets ``unavailable`` and close code 1011; once the storage
    reads again the room opens as it was."""
    settings = Settings(database=str(tmp_path / "rooms.db"))
    with make_client(settings) as client:
        room_id = client.post("/api/rooms", json={"game": "get-stuck"}).json()["room"]
    with make_client(settings) as client:  # a restart: the room is not loaded yet
        storage = client.app.state.lobby.storage  # type: ignore[attr-defined]

        def rename(old: str, new: str) -> Callable[[sqlite3.Connection], None]:
            return lambda db: db.execute(f"ALTER TABLE {old} RENAME TO {new}") and None

        client.portal.call(storage._call, rename("actions", "actions_away"))  # type: ignore[union-attr]
        r = client.get(f"/r/{room_id}")
        assert r.status_code == 503 and "storage" in r.json()["detail"]
        with client.websocket_connect(f"/ws/{room_id}") as ws:
            frame = ws.receive_json()
            assert frame["type"] == "error" and frame["code"] == "unavailable", frame
            with pytest.raises(WebSocketDisconnect) as closed:
                ws.receive_json()
            assert closed.value.code == 1011
        client.portal.call(storage._call, rename("actions_away", "actions"))  # type: ignore[union-attr]
        assert client.get(f"/r/{room_id}").status_code == 200
        with client.websocket_connect(f"/ws/{room_id}") as ws:
            state = Peer(ws).state()
            assert state["room"] == room_id and state["version"] == 0


def test_a_computer_player_whose_move_cannot_be_saved_waits_then_plays() -> None:
    """While the storage fails, a computer player does not search again and
    again: it waits (``app.bots.UNAVAILABLE_WAIT``, on the computer players'
    clock) before it tries again, and plays once the storage works."""
    seed = next(s for s in range(100)
                if get_game("get-stuck").to_move(Match.new("get-stuck", {"deals": 2}, s).state) == ("black",))
    gate = Gate()
    with make_bot_client(choose=gate) as client:
        lobby = lobby_of(client)
        clock = clock_of(client)
        storage = lobby.storage
        assert isinstance(storage, MemoryStorage)
        room = new_bot_room(client, "get-stuck", {"level": "easy", "seats": "others"}, seed=seed)["room"]
        with watch(client, room) as ann:
            ann.send(type="join", seat="red", name="Ann")
            assert until(ann, lambda s: s["you"] == "red")["to_move"] == ["black"]
            storage.fail = StorageError("disk full")  # the computer is thinking: its move will fail
            gate.open.set()
            eventually(lambda: lobby.bots.refused >= 1, "the computer's move is refused")
            # It waits on its clock: no second search until the clock moves on.
            eventually(lambda: clock.sleeping >= 1, "the computer player waits")
            assert len(gate.searches) == 1 and lobby.bots.played == 0
            assert ann.probe()["version"] == 1
            clock.advance(bots.UNAVAILABLE_WAIT)  # still failing: one more search, refused again
            eventually(lambda: lobby.bots.refused >= 2, "the computer tries again, once")
            assert len(gate.searches) == 2
            storage.fail = None
            clock.advance(bots.UNAVAILABLE_WAIT)
            state = until(ann, lambda s: s["version"] == 2)
            assert state["view"]["log"][0]["seat"] == "black"


# ---- a server that cannot open its database ----------------------------------------------
def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def damaged(path: Path) -> str:
    path.write_bytes(os.urandom(16 * 1024))
    return "file is not a database"


def newer(path: Path) -> str:
    with sqlite3.connect(path) as conn:
        conn.execute("PRAGMA user_version = 99")
    return "schema version 99, newer than this server knows"


@pytest.mark.parametrize("spoil", [damaged, newer], ids=["damaged", "newer"])
def test_a_server_whose_database_cannot_be_opened_does_not_start(
        tmp_path: Path, spoil: Callable[[Path], str]) -> None:
    path = tmp_path / "cardboard.db"
    expected = spoil(path)
    env = {**os.environ, "CARDBOARD_DATABASE": str(path)}
    result = subprocess.run(
        [sys.executable, "-m", "uvicorn", "app.main:app", "--host", "127.0.0.1",
         "--port", str(_free_port())],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=60, check=False)
    assert result.returncode != 0
    assert f"Cardboard cannot start: the database {str(path)!r}" in result.stderr, result.stderr
    assert expected in result.stderr
    assert "Application startup failed" in result.stderr
    assert "Uvicorn running" not in result.stderr


def test_a_room_whose_record_is_damaged_is_no_such_room_and_says_why_in_the_log(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """A stored action that is not JSON (a damaged file, a hand edit) will
    never read: the room answers ``no_such_room`` (4404) and 404, so that
    clients stop, not ``unavailable`` for ever, and the log says why (found
    by a break-it pass)."""
    settings = Settings(database=str(tmp_path / "rooms.db"))
    with make_client(settings) as client:
        room_id = client.post("/api/rooms", json={"game": "get-stuck"}).json()["room"]
    with sqlite3.connect(tmp_path / "rooms.db") as db:
        db.execute("UPDATE actions SET action = '{not json' WHERE room = ?", (room_id,))
    with make_client(settings) as client, caplog.at_level(logging.ERROR, logger="app.lobby"):
        assert client.get(f"/r/{room_id}").status_code == 404
        assert client.get(f"/api/rooms/{room_id}/record").status_code == 404
        with client.websocket_connect(f"/ws/{room_id}") as ws:
            assert ws.receive_json()["code"] == "no_such_room"
            with pytest.raises(WebSocketDisconnect) as closed:
                ws.receive_json()
            assert closed.value.code == 4404
    assert any("stored version 0 is damaged" in r.getMessage() for r in caplog.records), caplog.text
