"""Fair use of computer players: the searches' queue (at most ``bot_workers``
at once, rooms where a person plays first, one search of a room in the
queue at a time) and the caps on rooms with computer players per client
address and for the whole server (``docs/protocol.md``, "Fair use").

No test measures time: searches wait at a turnstile that lets them start
one at a time, and the order in which they start is what is checked
(``bench/bot_abuse.py`` measures the reply times)."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from bottest import (
    FAST,
    WAIT,
    eventually,
    lobby_of,
    make_bot_client,
    new_bot_room,
    playing_until,
    until,
    watch,
)
from fastapi.testclient import TestClient
from roomtest import play_one, table

from app.bots import Thinker
from app.lobby import EVICT_AGE, ComputersBusy
from app.rooms import Room
from engine.registry import get_game


class Turnstile:
    """``choose_move`` for a :class:`app.bots.Thinker` with threads: each
    search notes its label (``seat``, or ``game_id/level/seat``), then waits
    until :meth:`let_one` lets it through (or :meth:`open` lets all) and
    plays the first legal move (``legal``: a function of the state and the
    seat; none for searches that need no move). A search waits
    :data:`WAIT` seconds at most, so that a failing test ends."""

    def __init__(self, legal: Callable[[str, Any, str], str] | None = None, full: bool = False) -> None:
        self.started: list[str] = []
        self.legal = legal
        self.full = full
        self._passes = threading.Semaphore(0)
        self._open = threading.Event()
        self._lock = threading.Lock()

    def __call__(self, game_id: str, state: Any, seat: str, level: str, seconds: float, seed: int) -> str:
        with self._lock:
            self.started.append(f"{game_id}/{level}/{seat}" if self.full else seat)
        deadline = time.monotonic() + WAIT  # a failed test must not leave its threads stuck
        while not self._open.is_set() and time.monotonic() < deadline:
            if self._passes.acquire(timeout=0.05):
                break
        return self.legal(game_id, state, seat) if self.legal is not None else "-"

    def let_one(self) -> None:
        """Let one waiting search (or the next to come) through."""
        self._passes.release()

    def open(self) -> None:
        """Let every search through from now on."""
        self._open.set()

    def count(self) -> int:
        with self._lock:
            return len(self.started)


def first_legal(game_id: str, state: Any, seat: str) -> str:
    """The first legal move of ``seat``."""
    return get_game(game_id).legal_moves(state, seat)[0]


async def soon(check: Callable[[], bool], what: str) -> None:
    """Let the event loop run until ``check()`` holds (fails after WAIT s)."""
    async with asyncio.timeout(WAIT):
        while not check():
            await asyncio.sleep(0.001)
    assert check(), what


def search(thinker: Thinker, label: str, room: str, person: bool = False) -> asyncio.Task[str]:
    """A task asking ``thinker`` for a move for ``room``, its search labelled
    ``label`` (passed as the seat)."""
    return asyncio.create_task(thinker.choose("get-stuck", None, label, "strong", 1.0, 0,
                                              room=room, person=person))


async def queue_up(thinker: Thinker, gate: Turnstile,
                   *asked: tuple[str, str, bool]) -> list[asyncio.Task[str]]:
    """With one worker: a search labelled ``x`` that runs (held at the
    turnstile), then the searches ``asked`` (label, room, person) in turn,
    each in the queue before the next is asked for. Returns their tasks,
    ``x``'s first."""
    tasks = [search(thinker, "x", "r0")]
    await soon(lambda: gate.count() == 1 and thinker.running == 1, "the first search runs")
    for n, (label, room, person) in enumerate(asked, 1):
        tasks.append(search(thinker, label, room, person))
        await soon(lambda n=n: thinker.queued == n, f"{label} waits")  # type: ignore[misc]
    return tasks


async def let_through(gate: Turnstile, started: int) -> None:
    """Let searches through one at a time until ``started`` have started."""
    def more_than(count: int) -> Callable[[], bool]:
        return lambda: gate.count() > count

    while (count := gate.count()) < started:
        gate.let_one()
        await soon(more_than(count), f"search {count + 1} starts")


def run_queue(asked: list[tuple[str, str, bool]], cancel: str | None = None) -> list[str]:
    """Queue ``asked`` behind a running search on a thinker with one worker
    (:func:`queue_up`), give up the one labelled ``cancel`` while it waits,
    let the searches through one at a time; the order they started in."""
    gate = Turnstile()
    thinker = Thinker("thread", 1, gate)

    async def scenario() -> None:
        tasks = await queue_up(thinker, gate, *asked)
        kept = tasks
        if cancel is not None:
            dropped = tasks[1 + [label for label, _, _ in asked].index(cancel)]
            dropped.cancel()
            await soon(lambda: thinker.queued == len(asked) - 1, "the dropped search left the queue")
            kept = [t for t in tasks if t is not dropped]
        await let_through(gate, len(kept))
        gate.open()
        assert await asyncio.gather(*kept) == ["-"] * len(kept)
        assert (thinker.searches, thinker.running, thinker.queued) == (len(kept), 0, 0)
        await thinker.close()

    asyncio.run(scenario())
    return gate.started


# ---- the queue of searches --------------------------------------------------------------

def test_a_persons_room_goes_before_rooms_of_computers() -> None:
    started = run_queue([("c2", "r2", False), ("c3", "r3", False), ("p", "rp", True)])
    assert started == ["x", "p", "c2", "c3"]


def test_a_room_has_one_search_in_the_queue_at_a_time() -> None:
    # A room whose three computer players are awaited at once, then another room.
    started = run_queue([("a1", "a", False), ("a2", "a", False), ("a3", "a", False), ("b1", "b", False)])
    # Room b's search did not wait behind all of room a's.
    assert started == ["x", "a1", "b1", "a2", "a3"]


def test_a_search_given_up_in_the_queue_leaves_it() -> None:
    # Room a is freed while its first search waits: its next one takes a
    # place at the back of the queue.
    started = run_queue([("a1", "a", False), ("a2", "a", False), ("b1", "b", False)], cancel="a1")
    assert started == ["x", "b1", "a2"]


# ---- a person's computer opponent among rooms of computers -----------------------------

def test_a_persons_computer_thinks_next_while_rooms_of_computers_fill_the_pool() -> None:
    gate = Turnstile(first_legal, full=True)
    settings = FAST.model_copy(update={"bot_workers": 1})
    with make_bot_client(settings, choose=gate) as client:
        lobby = lobby_of(client)
        thinker = lobby.bots.thinker
        rooms = [new_bot_room(client, "get-stuck-4", {"level": "strong", "seats": "all"}, seed=i)["room"]
                 for i in range(3)]
        with watch(client, rooms[0]), watch(client, rooms[1]), watch(client, rooms[2]):
            # One room's search runs; the two others wait.
            eventually(lambda: gate.count() == 1 and thinker.queued == 2, "the pool is full")
            mine = new_bot_room(client, "get-stuck", {"level": "easy", "seats": "others"}, seed=4)
            with watch(client, mine["room"]) as ann:
                ann.send(type="join", seat="red", name="Ann")
                assert ann.joined()["seat"] == "red"
                playing_until(ann, lambda s: s["to_move"] == ["black"])
                eventually(lambda: thinker.queued == 3, "the person's computer waits for a worker")
                gate.let_one()
                eventually(lambda: gate.count() == 2, "the next search starts")
                assert gate.started[0].startswith("get-stuck-4/strong/")
                assert gate.started[1] == "get-stuck/easy/black"
                gate.open()
                until(ann, lambda s: any(e["seat"] == "black" for e in s["view"]["log"]))
    assert lobby.bots.refused == 0


# ---- caps on rooms with computer players ---------------------------------------------

@pytest.fixture
def capped() -> Iterator[TestClient]:
    """An app where one address may have 2 rooms with computer players in
    use, and the server 3."""
    with make_bot_client(FAST.model_copy(update={"bot_rooms_per_address": 2, "bot_rooms": 3})) as c:
        yield c


def make_from(client: TestClient, address: str, seats: str = "others") -> Room:
    """A room with computer players created by ``address`` (straight through
    the lobby, in the app's event loop: a test client has one address)."""
    lobby = lobby_of(client)
    assert client.portal is not None
    room: Room = client.portal.call(lobby.create_room, "get-stuck", {}, seats, "easy", address)
    return room


def refused_from(client: TestClient, address: str) -> ComputersBusy:
    lobby = lobby_of(client)
    assert client.portal is not None
    with pytest.raises(ComputersBusy) as caught:
        client.portal.call(lobby.create_room, "get-stuck", {}, "others", "easy", address)
    return caught.value


def test_a_cap_of_one_room_reads_in_the_singular() -> None:
    """With caps of one room, the refusals say "1 room … is", not "1 rooms …
    are" (break-it pass)."""
    with make_bot_client(FAST.model_copy(update={"bot_rooms_per_address": 1, "bot_rooms": 1})) as c:
        make_from(c, "198.51.100.8")
        mine = str(refused_from(c, "198.51.100.8"))
        theirs = str(refused_from(c, "198.51.100.9"))
    assert "already has 1 room with computer players in use" in mine, mine
    assert "all busy (1 room with computer players is in use)" in theirs, theirs


def test_one_address_may_have_so_many_rooms_with_computers(capped: TestClient) -> None:
    first = new_bot_room(capped, "get-stuck", {"level": "easy", "seats": "others"})
    new_bot_room(capped, "get-stuck-4", {"seats": ["E", "S", "W"]})  # in use until opened
    r = capped.post("/api/rooms", json={"game": "suitors", "bots": {"seats": "all"}})
    assert r.status_code == 429 and r.headers["Retry-After"] == "60", r.text
    assert "2 rooms with computer players" in r.json()["detail"]
    assert len(lobby_of(capped).store) == 2
    # Rooms of people only are not capped, and they still play.
    assert capped.post("/api/rooms", json={"game": "get-stuck"}).status_code == 201
    with table(capped, "get-stuck", seed=5) as (_, peers, _watchers):
        assert play_one(peers)["version"] == 3
    # Another address may still have its own.
    other = make_from(capped, "198.51.100.7")
    assert other.computer_plays("black")
    # Once the person has played against the computer and left, that room no
    # longer counts: its computer players think no more.
    with watch(capped, first["room"]) as ann:
        ann.send(type="join", seat=first["seat"], name="Ann")
        assert ann.joined()["seat"] == first["seat"]
        playing_until(ann, lambda s: any(e["seat"] == "black" for e in s["view"]["log"]))
        assert capped.post("/api/rooms", json={"game": "get-stuck", "bots": {}}).status_code == 429
    live = lobby_of(capped).store.get(first["room"])
    assert live is not None
    eventually(lambda: not live.connections, "the server saw Ann leave")
    assert lobby_of(capped).computer_rooms().get("testclient") == 1
    assert capped.post("/api/rooms", json={"game": "get-stuck", "bots": {}}).status_code == 201


def test_a_room_nobody_opens_counts_for_its_first_minutes_only(capped: TestClient) -> None:
    """Rooms with computer players created and never opened count against the
    caps while their creators may still be on their way (lobby.EVICT_AGE),
    not until the idle sweep a day later (break-it pass: ten addresses made
    every other refused for 24 hours)."""
    lobby = lobby_of(capped)
    for _ in range(2):
        make_from(capped, "198.51.100.8")
    make_from(capped, "198.51.100.9")
    assert refused_from(capped, "198.51.100.8").per_address
    assert not refused_from(capped, "198.51.100.10").per_address  # the server's 3
    lobby.wall = lambda: time.time() + EVICT_AGE + 1
    assert lobby.computer_rooms() == {}
    make_from(capped, "198.51.100.8")
    make_from(capped, "198.51.100.10")


def test_computer_players_added_over_the_websocket_are_capped_too(capped: TestClient) -> None:
    """``add_bot`` in a room of people starts a room with computer players in
    use: the same caps as a room created with them apply (docs/protocol.md,
    "add_bot"), refused as ``rate_limited`` with nothing changed, and the
    room counts as the asking address's. A room where a computer player
    plays already may have another."""
    made = new_bot_room(capped, "get-stuck-4", {"seats": ["E"]})
    new_bot_room(capped, "get-stuck", {"seats": "others"})  # this address's two, in use until opened
    people = capped.post("/api/rooms", json={"game": "get-stuck"}).json()["room"]
    with watch(capped, people) as ann:
        ann.send(type="join", seat="red", name="Ann")
        assert ann.joined()["seat"] == "red"
        version = ann.state()["version"]
        ann.send(type="add_bot", seat="black", level="easy")
        assert "2 rooms with computer players" in ann.error("rate_limited")["message"]
        after = ann.state()
        assert after["version"] == version and after["view"]["seats"][1]["kind"] is None
    assert lobby_of(capped).computer_rooms().get("testclient") == 2
    with watch(capped, made["room"]) as bob:
        bob.send(type="join", seat=made["seat"], name="Bob")
        assert bob.joined()["seat"] == made["seat"]
        version = bob.state()["version"]
        bob.send(type="add_bot", seat="S", level="easy")
        frame = until(bob, lambda s: s["version"] > version)
        assert frame["view"]["seats"][2]["kind"] == "computer"


def test_the_server_may_have_so_many_rooms_with_computers(capped: TestClient) -> None:
    made = [make_from(capped, address) for address in ("192.0.2.1", "192.0.2.2")]
    new_bot_room(capped, "get-stuck", {"seats": "others"})
    r = capped.post("/api/rooms", json={"game": "get-stuck", "bots": {"seats": ["black"]}})
    assert r.status_code == 503 and r.headers["Retry-After"] == "60", r.text
    assert "3 rooms with computer players" in r.json()["detail"]
    assert not refused_from(capped, "192.0.2.9").per_address
    # A person's game still starts and plays meanwhile.
    with table(capped, "get-stuck", seed=2) as (_, peers, _watchers):
        assert play_one(peers)["version"] == 3
    # A room opened and left by everyone makes way.
    with watch(capped, made[0].id):
        pass
    eventually(lambda: not made[0].connections, "the server saw the page close")
    assert sum(lobby_of(capped).computer_rooms().values()) == 2
    assert make_from(capped, "192.0.2.3").computer_plays("black")


def test_requests_at_once_cannot_pass_the_cap_together(capped: TestClient) -> None:
    lobby = lobby_of(capped)

    async def at_once() -> list[Any]:
        return await asyncio.gather(*(lobby.create_room("get-stuck", {}, "others", "easy", "203.0.113.4")
                                      for _ in range(5)), return_exceptions=True)

    assert capped.portal is not None
    results = capped.portal.call(at_once)
    assert sum(isinstance(r, Room) for r in results) == 2
    assert all(isinstance(r, ComputersBusy) and r.per_address for r in results if not isinstance(r, Room))
