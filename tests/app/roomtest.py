"""Helpers for the server tests: an app per test, the websocket test client
(:class:`Peer`: every frame checked against the protocol models, and no read
waits forever), and seated tables."""

from __future__ import annotations

import asyncio
import contextlib
import copy
import json
from collections.abc import Iterator
from typing import Any

import anyio
from fastapi.testclient import TestClient
from starlette.testclient import WebSocketTestSession

from app.main import create_app
from app.protocol import (
    ERROR_CODES,
    ChatMessage,
    ErrorFrame,
    JoinedFrame,
    PongFrame,
    SpectatorsFrame,
    StateFrame,
)
from app.rooms import Room
from app.settings import Settings

STATE_KEYS = {"type", "version", "room", "game", "you", "phase", "to_move", "legal_moves", "moves", "view"}
VIEW_KEYS = {"title", "seats", "sides", "options", "deal", "log", "outcome", "history", "totals",
             "match_winners", "seed", "seeded", "match_id", "board", "deals", "ready", "spectators",
             "chat", "room_options", "earlier"}
WAIT = 30.0
"""Seconds a peer waits for a frame before the test fails, so that a frame
that never comes fails the test instead of hanging it."""


def rebuilt(room: Room) -> Room:
    """``room`` rebuilt from what its journal stored (as after a restart)."""
    stored = asyncio.run(room.journal.load(room.id))
    assert stored is not None
    return Room.rebuild(stored, room.journal)


def make_client(settings: Settings | None = None) -> TestClient:
    """A test client of a fresh app (use it as a context manager)."""
    return TestClient(create_app(settings or Settings()))


def room_of(client: TestClient, room_id: str) -> Room:
    """The live room ``room_id`` of the client's server (it must be loaded)."""
    room = client.app.state.lobby.store.get(room_id)  # type: ignore[attr-defined]
    assert room is not None
    return room  # type: ignore[no-any-return]


def new_room(client: TestClient, game: str = "get-stuck", **options: Any) -> str:
    """Create a room over the API and return its id."""
    r = client.post("/api/rooms", json={"game": game, "options": options})
    assert r.status_code == 201, r.text
    return str(r.json()["room"])


class Peer:
    """One websocket connection of a test: the one websocket client of the
    server tests. Every frame received is parsed, checked against its
    pydantic model and kept (the raw ``texts``, the ``last`` state, the
    ``token``). A read fails after ``wait`` seconds without a frame, and
    raises ``WebSocketDisconnect`` (with the close code) once the server has
    closed the socket. ``spectators`` frames (presence, sent a moment
    after someone comes or goes) are kept in ``watching`` and never
    returned by :meth:`recv`."""

    def __init__(self, ws: WebSocketTestSession, wait: float = WAIT) -> None:
        self.ws = ws
        self.wait = wait
        self.texts: list[str] = []
        self.last: dict[str, Any] | None = None
        self.token: str | None = None
        self.watching: list[dict[str, Any]] = []
        self.sentences: list[dict[str, str]] = []
        self.patches = 0  # patch frames received (and turned into states)

    def send(self, **frame: Any) -> None:
        self.ws.send_json(frame)

    def send_text(self, text: str) -> None:
        self.ws.send_text(text)

    def receive_text(self) -> str:
        """The next frame's text, waiting at most ``wait`` seconds (it reads
        the session's queue through the session's own portal, as
        ``WebSocketTestSession.receive_text`` does, with a deadline)."""
        ws = self.ws

        async def get() -> Any:
            with anyio.fail_after(self.wait):
                return await ws._send_rx.receive()

        message = ws.portal.call(get)
        ws._raise_on_close(message)
        return str(message["text"])

    def recv(self) -> dict[str, Any]:
        while True:
            frame = self._recv()
            if frame["type"] != "spectators":
                return frame
            self.watching.append(frame)

    def _recv(self) -> dict[str, Any]:
        text = self.receive_text()
        self.texts.append(text)
        frame = json.loads(text)
        kind = frame["type"]
        if kind == "patch":
            # A peer that asked for patches (docs/protocol.md, "Patches") turns
            # each into the state it stands for, and checks that like any other.
            assert self.last is not None, "a patch came before any state"
            frame = apply_patch(self.last, frame["ops"])
            assert frame["type"] == "state"
            self.patches += 1
            kind = "state"
        if kind == "state":
            StateFrame.model_validate(frame)
            assert set(frame) == STATE_KEYS
            # Each legal move comes with its structure, in the same order
            # (empty until the room fills it: docs/protocol.md, "Move structures").
            assert [m["move"] for m in frame["moves"]] == frame["legal_moves"]
            assert set(frame["view"]) == VIEW_KEYS
            self._fill_sentences(frame["view"]["log"])
            self.last = frame
        elif kind == "joined":
            JoinedFrame.model_validate(frame)
            self.token = frame["token"]
        elif kind == "chat":
            ChatMessage.model_validate(frame)
            assert set(frame) == {"type", "from", "seat", "text", "at"}
        elif kind == "spectators":
            SpectatorsFrame.model_validate(frame)
        elif kind == "pong":
            assert frame == {"type": "pong"}
            PongFrame.model_validate(frame)
        else:
            ErrorFrame.model_validate(frame)
            assert frame["code"] in ERROR_CODES
            assert frame["message"]
        return dict(frame)

    def _fill_sentences(self, log: list[dict[str, Any]]) -> None:
        """Keep each log entry's sentence and ``by``, sent once per connection,
        and put them back where a later state leaves them out, as a client
        does (``docs/protocol.md``, "log")."""
        for i, entry in enumerate(log):
            if "text" in entry:
                assert entry["text"], entry
                assert entry.get("by", "?"), entry
                self.sentences[i:i + 1] = [{k: entry[k] for k in ("text", "by") if k in entry}]
            else:
                assert "by" not in entry, f"entry {i} came with its author but not its sentence"
                assert i < len(self.sentences), f"entry {i} came without its sentence"
                entry.update(self.sentences[i])
        del self.sentences[len(log):]

    def state(self) -> dict[str, Any]:
        """The next frame, which must be a state."""
        frame = self.recv()
        assert frame["type"] == "state", frame
        return frame

    def error(self, code: str, then_state: bool = False) -> dict[str, Any]:
        """The next frame, which must be an error with ``code``; with
        ``then_state`` the state that follows it is returned instead."""
        frame = self.recv()
        assert frame["type"] == "error" and frame["code"] == code, frame
        return self.state() if then_state else frame

    def joined(self) -> dict[str, Any]:
        frame = self.recv()
        assert frame["type"] == "joined", frame
        return frame

    def probe(self) -> dict[str, Any]:
        """A fresh state, fetched by a resume that is refused and changes
        nothing (``bad_token`` for a spectator, ``already_seated`` when seated)."""
        self.send(type="resume", token="not-a-token")
        frame = self.recv()
        assert frame["type"] == "error" and frame["code"] in {"bad_token", "already_seated"}, frame
        return self.state()

    @property
    def seat(self) -> str | None:
        assert self.last is not None
        seat: str | None = self.last["you"]
        return seat

    @property
    def version(self) -> int:
        assert self.last is not None
        return int(self.last["version"])


def apply_patch(base: dict[str, Any], ops: list[list[Any]]) -> dict[str, Any]:
    """The state that the ops of a patch frame make of ``base`` (which is
    left as it was): each sets a value at a path of keys and indices, an
    index at an array's end appending (``docs/protocol.md``, "Patches")."""
    frame: Any = copy.deepcopy(base)
    for path, value in ops:
        if not path:
            frame = value
            continue
        node = frame
        for key in path[:-1]:
            node = node[key]
        if isinstance(node, list) and path[-1] == len(node):
            node.append(value)
        else:
            assert not isinstance(node, list) or 0 <= path[-1] < len(node), (path, len(node))
            node[path[-1]] = value
    return dict(frame)


@contextlib.contextmanager
def opened(client: TestClient, room: str) -> Iterator[Peer]:
    """A peer on the socket of ``room``, before any frame is read (for a room
    that may not exist)."""
    with client.websocket_connect(f"/ws/{room}") as ws:
        yield Peer(ws)


@contextlib.contextmanager
def connect(client: TestClient, room: str) -> Iterator[Peer]:
    """A peer connected to ``room`` as a spectator, its first state already
    received (any seat may already be held)."""
    with opened(client, room) as peer:
        first = peer.state()
        assert first["you"] is None
        yield peer


def drain(peers: list[Peer]) -> list[dict[str, Any]]:
    """One state from each peer (after a broadcast); returns them."""
    return [p.state() for p in peers]


@contextlib.contextmanager
def table(client: TestClient, game: str = "get-stuck", names: list[str] | None = None,
          spectators: int = 0, **options: Any) -> Iterator[tuple[str, list[Peer], list[Peer]]]:
    """A room of ``game`` with every seat taken by a peer (in seat order) and
    ``spectators`` more peers; every broadcast so far drained. Yields the room
    id, the seated peers and the spectators."""
    room = new_room(client, game, **options)
    seats = next(g["seats"] for g in client.get("/api/games").json() if g["id"] == game)
    with contextlib.ExitStack() as stack:
        peers = [stack.enter_context(connect(client, room)) for _ in seats]
        watchers = [stack.enter_context(connect(client, room)) for _ in range(spectators)]
        for i, (peer, seat) in enumerate(zip(peers, seats, strict=True)):
            name = names[i] if names else f"P{i}"
            peer.send(type="join", seat=seat, name=name)
            assert peer.joined()["seat"] == seat
            drain(peers + watchers)
        yield room, peers, watchers


def mover(peers: list[Peer]) -> Peer:
    """The peer whose seat is awaited (one seat awaited, as in Get Stuck)."""
    last = peers[0].last
    assert last is not None and len(last["to_move"]) == 1, last
    return next(p for p in peers if p.seat == last["to_move"][0])


def play_one(peers: list[Peer], watchers: list[Peer] | None = None) -> dict[str, Any]:
    """The awaited peer plays its first legal move; every peer receives the
    new state, which is returned (as the mover saw it)."""
    p = mover(peers)
    assert p.last is not None
    p.send(type="move", move=p.last["legal_moves"][0], version=p.version)
    states = drain([*peers, *(watchers or [])])
    return states[peers.index(p)]


def all_ready(peers: list[Peer], watchers: list[Peer] | None = None) -> list[dict[str, Any]]:
    """Between deals, every peer presses "Ready" in turn on the version the
    deal ended on: each press but the last is a ``ready`` action that shows in
    ``view.ready``, the last deals the next deal or match; each raises the
    version by one. Every peer and watcher receives each of those states; the
    last ones are returned (peers, then watchers)."""
    assert peers[0].last is not None
    v = peers[0].version
    for i, p in enumerate(peers):
        p.send(type="ready", version=v)
        states = drain([*peers, *(watchers or [])])
        assert all(s["version"] == v + i + 1 for s in states), states
        last = i == len(peers) - 1
        assert all((s["view"]["ready"] is None) == last for s in states), states
    return states


def play_deal(peers: list[Peer], watchers: list[Peer] | None = None) -> dict[str, Any]:
    """Play the current deal to its end; return the last state of peers[0]."""
    while peers[0].last is not None and peers[0].last["phase"] == "playing":
        play_one(peers, watchers)
    assert peers[0].last is not None
    return peers[0].last


def finished_match(client: TestClient) -> tuple[str, str]:
    """A room whose two-deal Get Stuck match is over (every move the first
    legal one); returns the room id and the match id."""
    with table(client, "get-stuck", deals=2) as (room, peers, _):
        play_deal(peers)
        all_ready(peers)
        last = play_deal(peers)
        assert last["phase"] == "match_over", last
        return room, str(last["view"]["match_id"])


class TextConn:
    """A connection of a room driven without a socket: its ``seat`` and the
    frames pushed to it, as text."""

    def __init__(self) -> None:
        self.seat: str | None = None
        self.texts: list[str] = []

    def push(self, text: str) -> None:
        self.texts.append(text)
