"""Helpers for the computer-player tests: fast settings, a thinker that
records every search, a clock that moves only when told, peers whose reads
time out instead of hanging, waiting for a state that satisfies a
condition, and for the computer players to have decided to do nothing."""

from __future__ import annotations

import asyncio
import contextlib
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import anyio
from fastapi.testclient import TestClient
from roomtest import Peer
from starlette.testclient import WebSocketTestSession

from app.bots import Thinker
from app.lobby import Lobby
from app.main import create_app
from app.rooms import Room
from app.settings import Settings
from engine.bots import choose_move
from engine.registry import get_game

FAST = Settings(bot_seconds=0.005, bot_pause=0, bot_between_deals=0, bot_pool="thread", bot_workers=2)
"""Computer players that think for 5 ms and never pause, in two threads; a
seat may be handed over after the usual 120 s away (of a :class:`FakeClock`:
a test moves it on)."""

WAIT = 30.0
"""Seconds a test waits for a frame (or a condition) before it fails."""


@dataclass(frozen=True)
class Search:
    """One call of ``choose_move`` as the server made it, and its answer."""

    game_id: str
    state: Any
    seat: str
    level: str
    seconds: float
    seed: int
    move: str
    legal: tuple[str, ...]


class Recorder:
    """``choose_move`` that keeps every call (thread-safe), for a
    :class:`app.bots.Thinker` with threads."""

    def __init__(self) -> None:
        self.searches: list[Search] = []
        self._lock = threading.Lock()

    def __call__(self, game_id: str, state: Any, seat: str, level: str, seconds: float, seed: int) -> str:
        move = choose_move(game_id, state, seat, level, seconds, seed)
        legal = get_game(game_id).legal_moves(state, seat)
        with self._lock:
            self.searches.append(Search(game_id, state, seat, level, seconds, seed, move, legal))
        return move

    def illegal(self) -> list[Search]:
        """The searches whose move was not legal in the state given."""
        with self._lock:
            return [s for s in self.searches if s.move not in s.legal]


class Gate(Recorder):
    """A :class:`Recorder` whose searches wait until ``open`` is set (30 s at
    most): computer players that do not move before the test is ready."""

    def __init__(self) -> None:
        super().__init__()
        self.open = threading.Event()

    def __call__(self, game_id: str, state: Any, seat: str, level: str, seconds: float, seed: int) -> str:
        self.open.wait(30)
        return super().__call__(game_id, state, seat, level, seconds, seed)


class FakeClock:
    """Monotonic seconds that move only when a test calls :meth:`advance`,
    for ``create_app(clock=...)``: calling it gives the time, and its
    :meth:`sleep` (which the computer players use) returns once the clock
    has been moved past the end of the sleep. Thread-safe: the test moves
    it from its own thread while the app sleeps in its event loop."""

    def __init__(self, start: float = 1000.0) -> None:
        self._now = start
        self._lock = threading.Lock()
        self._sleepers: list[tuple[float, asyncio.AbstractEventLoop, asyncio.Future[None]]] = []

    def __call__(self) -> float:
        with self._lock:
            return self._now

    async def sleep(self, seconds: float) -> None:
        """Wait until the clock has moved ``seconds`` on (0 or less: at once,
        after letting other tasks run)."""
        if seconds <= 0:
            await asyncio.sleep(0)
            return
        loop = asyncio.get_running_loop()
        woken: asyncio.Future[None] = loop.create_future()
        with self._lock:
            entry = (self._now + seconds, loop, woken)
            self._sleepers.append(entry)
        try:
            await woken
        finally:
            with self._lock:
                if entry in self._sleepers:
                    self._sleepers.remove(entry)

    @property
    def sleeping(self) -> int:
        """How many sleeps wait for the clock to move."""
        with self._lock:
            return len(self._sleepers)

    def advance(self, seconds: float) -> None:
        """Move the clock ``seconds`` on and wake the sleeps that end by then."""
        with self._lock:
            self._now += seconds
            due = [e for e in self._sleepers if e[0] <= self._now]
            for e in due:
                self._sleepers.remove(e)
        for _, loop, woken in due:
            loop.call_soon_threadsafe(_wake, woken)


def _wake(woken: asyncio.Future[None]) -> None:
    if not woken.done():
        woken.set_result(None)


def make_bot_client(settings: Settings = FAST, choose: Any = None,
                    clock: FakeClock | None = None) -> TestClient:
    """A test client of a fresh app whose computer players think with
    ``choose`` (a :class:`Recorder` by default) in the settings' pool, rooms
    and computer players keeping time by ``clock`` (a fresh
    :class:`FakeClock` by default: :func:`clock_of`)."""
    thinker = Thinker(settings.bot_pool, settings.bot_workers, choose or Recorder())
    return TestClient(create_app(settings, thinker=thinker, clock=clock or FakeClock()))


def clock_of(client: TestClient) -> FakeClock:
    """The :class:`FakeClock` of an app from :func:`make_bot_client`."""
    clock = lobby_of(client).clock
    assert isinstance(clock, FakeClock)
    return clock


def lobby_of(client: TestClient) -> Lobby:
    """The app's lobby (its rooms and computer players)."""
    lobby: Lobby = client.app.state.lobby  # type: ignore[attr-defined]
    return lobby


def recorder_of(client: TestClient) -> Recorder:
    """The :class:`Recorder` the app's computer players think with."""
    rec = lobby_of(client).bots.thinker.choose_fn
    assert isinstance(rec, Recorder)
    return rec


class _Timed:
    """A websocket test session whose ``receive_text`` fails after
    :data:`WAIT` seconds instead of waiting forever (it reads the session's
    queue through the session's own portal)."""

    def __init__(self, ws: WebSocketTestSession) -> None:
        self._ws = ws

    def __getattr__(self, name: str) -> Any:
        return getattr(self._ws, name)

    def receive_text(self) -> str:
        ws = self._ws

        async def get() -> Any:
            with anyio.fail_after(WAIT):
                return await ws._send_rx.receive()

        message = ws.portal.call(get)
        ws._raise_on_close(message)
        return str(message["text"])


@contextlib.contextmanager
def watch(client: TestClient, room: str) -> Iterator[Peer]:
    """A peer connected to ``room`` whose reads time out; its first state is
    received (any seat may already be held)."""
    with client.websocket_connect(f"/ws/{room}") as ws:
        peer = Peer(_Timed(ws))  # type: ignore[arg-type]
        assert peer.state()["you"] is None
        yield peer


def until(peer: Peer, done: Callable[[dict[str, Any]], bool], frames: int = 20_000) -> dict[str, Any]:
    """Read ``peer``'s frames until a state satisfies ``done``; return it.
    Fails on an error frame, after ``frames`` frames or a silence of
    :data:`WAIT` seconds."""
    if peer.last is not None and done(peer.last):
        return peer.last
    for _ in range(frames):
        frame = peer.recv()
        assert frame["type"] != "error", frame
        if frame["type"] == "state" and done(frame):
            return frame
    raise AssertionError(f"no state satisfied the condition in {frames} frames")


def eventually(check: Callable[[], bool], what: str) -> None:
    """Wait (polling) until ``check()`` is true; fail after :data:`WAIT` s."""
    deadline = time.monotonic() + WAIT
    while not check():
        assert time.monotonic() < deadline, f"never: {what}"
        time.sleep(0.01)


def quiet_at(client: TestClient, room: Room, version: int) -> None:
    """Wait until the computer players have looked at ``room`` at
    ``version`` and decided to do nothing (``app.bots.Bots.quiet``): none of
    them thinks or is about to act. Fails after :data:`WAIT` seconds."""
    bots = lobby_of(client).bots
    eventually(lambda: bots.quiet.get(room) == version,
               f"the computer players leave room {room.id} alone at version {version}")


def look(client: TestClient, room: Room) -> None:
    """Have the computer players look at ``room`` now, in the app's event
    loop, as they do after any change to it (``app.bots.Bots.poke``): what
    they start, they have started when this returns."""
    bots = lobby_of(client).bots

    async def poke() -> None:
        bots.poke(room)

    assert client.portal is not None, "use the client as a context manager"
    client.portal.call(poke)


def seat_of(state: dict[str, Any], seat: str) -> dict[str, Any]:
    """The ``view.seats`` entry of ``seat``."""
    return next(s for s in state["view"]["seats"] if s["seat"] == seat)


def new_bot_room(client: TestClient, game: str, bots: dict[str, Any],
                 **options: Any) -> dict[str, Any]:
    """Create a room with computer players over the API; return the answer."""
    r = client.post("/api/rooms", json={"game": game, "options": options, "bots": bots})
    assert r.status_code == 201, r.text
    body: dict[str, Any] = r.json()
    return body


def playing_until(peer: Peer, done: Callable[[dict[str, Any]], bool], frames: int = 20_000) -> dict[str, Any]:
    """Play ``peer``'s turns (its first legal move) until a state satisfies
    ``done``, and return that state; computer players play the other seats.
    A move is sent once, then not again until the log shows it (a computer
    acting at the same moment, as in Stucco's secret pick, sends a state in
    between)."""
    pending: tuple[int, int] | None = None

    def step(state: dict[str, Any]) -> bool:
        nonlocal pending
        if done(state):
            return True
        mine = (state["view"]["deal"], sum(e["seat"] == state["you"] for e in state["view"]["log"]))
        if pending is not None and mine <= pending:
            return False
        pending = None
        if state["legal_moves"]:
            peer.send(type="move", move=state["legal_moves"][0], version=state["version"])
            pending = mine
        return False

    return until(peer, step, frames)
