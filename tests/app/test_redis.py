"""Several server processes on one real Redis (``docs/scaling.md``): every
game played with its seats split over two uvicorn processes and a spectator
on each; a process killed mid-deal; the same move sent to two processes at
once; Redis restarted mid-game; a computer player's turn claimed once.

Each test starts its own ``redis-server`` (AOF on) in a temporary directory;
without ``/usr/bin/redis-server`` they skip, or fail when required
(``CI=true`` or ``CARDBOARD_REDIS_TESTS=required``).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import random
import re
import signal
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import websockets
from redis.exceptions import RedisError
from redistest import AppServer, Client, RedisServer, app_servers, check_versions, free_port, redis_server
from roomtest import TextConn

from app.lobby import ComputersBusy, Lobby, LobbyFull
from app.logs import room_ref
from app.rooms import Room
from app.settings import Settings
from app.table import Table
from engine.match import Match
from engine.registry import GAMES, get_game

pytestmark = pytest.mark.xdist_group("redis")

SEED = 20240611


class Cluster:
    """A Redis and two server processes shared by the tests that kill
    nothing (handover after 1 s, computer players pausing 0.05 s, rooms made
    as fast as the tests like)."""

    def __init__(self, redis: RedisServer, servers: list[AppServer]) -> None:
        self.redis, self.servers = redis, servers


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    directory = tmp_path_factory.mktemp("cluster")
    with (redis_server(directory) as redis,
          app_servers(redis.url, directory, CARDBOARD_HANDOVER_SECONDS="1",
                      CARDBOARD_BOT_PAUSE="0.05", CARDBOARD_ROOM_CREATE_BURST="1000") as servers):
        yield Cluster(redis, servers)


def seats_of(game_id: str) -> tuple[str, ...]:
    game = get_game(game_id)
    return game.seats(game.check_options({}))


class Replay:
    """The engine's own replay of the moves a test made, by version: what
    each seat must have been shown at each version."""

    def __init__(self, game_id: str, seed: int, dealt_version: int) -> None:
        self.game_id = game_id
        self.game = get_game(game_id)
        self.match = Match.new(game_id, self.game.check_options({}), seed)
        self.start = dealt_version
        self.matches = [self.match]

    def play(self, seat: str, move: str) -> None:
        self.match = self.match.play(seat, move)
        self.matches.append(self.match)

    def ready(self) -> None:
        """A seat said it is ready between deals: a version, the same board."""
        self.matches.append(self.match)

    def next_deal(self) -> None:
        self.match = self.match.next_deal()
        self.matches.append(self.match)

    def board(self, version: int, seat: str | None) -> Any:
        match = self.matches[max(0, version - self.start)]
        return json.loads(json.dumps(self.game.view(match.state, seat)))

    def check(self, client: Client) -> None:
        """Every state ``client`` received shows the board of its version."""
        for state in client.states:
            if state["version"] >= self.start and state["phase"] != "waiting":
                assert state["view"]["board"] == self.board(state["version"], state["you"]), (
                    f"{client.name}: version {state['version']} differs from the replay")


async def seated(label: str, server: AppServer, room: str, seat: str, name: str) -> Client:
    """A client of ``server``, called ``label``, that has joined ``room`` at
    ``seat`` as ``name`` (it holds the seat's token)."""
    client = await Client(label).connect(server.ws, room)
    await client.send(type="join", seat=seat, name=name)
    await client.until(lambda: client.token is not None, f"{label} seated")
    return client


async def seat_clients(servers: list[AppServer], room: str, seats: tuple[str, ...]
                       ) -> tuple[dict[str, Client], list[Client]]:
    """A client per seat, seat ``k`` on server ``k % 2``, joined in seat
    order, and a spectator on each server; every client has seen the last
    join."""
    players: dict[str, Client] = {}
    for k, seat in enumerate(seats):
        players[seat] = await seated(f"{seat}@{k % 2}", servers[k % 2], room, seat, f"P{k}")
    watchers = [await Client(f"spectator@{i}").connect(s.ws, room) for i, s in enumerate(servers)]
    everyone = [*players.values(), *watchers]
    for client in everyone:
        await client.at(len(seats))
    return players, watchers


class SplitTable:
    """A room of ``game_id`` (seeded) made on ``servers[creator]``, its seats
    split over both servers (:func:`seat_clients`), with its replay."""

    def __init__(self, game_id: str, room: str, players: dict[str, Client], watchers: list[Client]
                 ) -> None:
        self.room, self.players, self.watchers = room, players, watchers
        self.seats = tuple(players)
        self.replay = Replay(game_id, SEED, len(self.seats))

    @property
    def everyone(self) -> list[Client]:
        return [*self.players.values(), *self.watchers]

    @staticmethod
    async def make(servers: list[AppServer], game_id: str, creator: int = 0) -> SplitTable:
        room = servers[creator].post("/api/rooms", {"game": game_id, "options": {"seed": SEED}})["room"]
        players, watchers = await seat_clients(servers, room, seats_of(game_id))
        return SplitTable(game_id, room, players, watchers)


async def play_moves(players: dict[str, Client], everyone: list[Client], replay: Replay,
                     rng: random.Random, limit: int) -> int:
    """Play up to ``limit`` random legal moves, one at a time, each by the
    awaited seat's client; after each, every client must reach the new
    version. Returns the version reached."""
    any_client = next(iter(players.values()))
    version = any_client.last["version"]
    for _ in range(limit):
        state = any_client.last
        if state["phase"] != "playing":
            break
        seat = state["to_move"][0]
        mover = players[seat]
        await mover.at(version)
        assert mover.last["legal_moves"], (mover.name, mover.frames[-3:])
        move = rng.choice(mover.last["legal_moves"])
        await mover.send(type="move", move=move, version=version)
        replay.play(seat, move)
        version += 1
        for client in everyone:
            await client.at(version)
    return version


def test_every_game_split_over_two_processes(cluster: Cluster) -> None:
    servers = cluster.servers

    async def play(game_id: str, rng: random.Random) -> None:
        t = await SplitTable.make(servers, game_id)
        players, watchers, everyone, replay = t.players, t.watchers, t.everyone, t.replay
        await play_moves(players, everyone, replay, rng, 400)
        last = watchers[0].last
        assert last["phase"] in ("deal_over", "match_over"), last["phase"]
        for client in everyone:
            check_versions(client)
            replay.check(client)
            assert client.last["version"] == last["version"]
            # Every seat shows connected on both processes.
            assert all(s["connected"] for s in client.last["view"]["seats"]), client.name
        for client in everyone:
            await client.close()

    async def main() -> None:
        rng = random.Random(7)
        for game_id in GAMES:
            await play(game_id, rng)

    asyncio.run(main())


class FakeConn:
    """A connection in the test's own process: frames are kept as JSON."""

    def __init__(self) -> None:
        self.seat: str | None = None
        self.frames: list[dict[str, Any]] = []

    def push(self, text: str) -> None:
        self.frames.append(json.loads(text))


def test_the_room_caps_hold_for_requests_at_once(tmp_path: Path) -> None:
    """Creations at once over Redis: with computer players from one address,
    exactly ``bot_rooms_per_address`` (the check used to come before a round
    trip to Redis, so that all passed it); on two processes at once, never
    more than ``max_rooms`` rooms (each process counts the rooms it is
    making, and a room made past the limit by another process at the same
    moment is closed again)."""
    with redis_server(tmp_path) as redis:
        async def main() -> None:
            settings = Settings(redis_url=redis.url, bot_pool="thread", database=":memory:",
                                max_rooms=12, bot_rooms_per_address=3, room_create_burst=100)
            a, b = Lobby(settings), Lobby(settings)
            await a.open()
            await b.open()
            try:
                made = await asyncio.gather(
                    *(a.create_room("get-stuck", {}, "all", client="10.0.0.1") for _ in range(10)),
                    return_exceptions=True)
                assert sum(isinstance(r, Room) for r in made) == 3, made
                assert all(isinstance(r, Room | ComputersBusy) for r in made), made
                made = await asyncio.gather(*(lobby.create_room("get-stuck", {}, client=f"10.1.0.{n}")
                                              for n in range(15) for lobby in (a, b)),
                                            return_exceptions=True)
                rooms = [r for r in made if isinstance(r, Room)]
                assert all(isinstance(r, Room | LobbyFull) for r in made), made
                assert 1 <= len(rooms) <= 9, len(rooms)  # 3 were made above
                assert await a.storage.count_open() == 3 + len(rooms)
            finally:
                await a.close()
                await b.close()

        asyncio.run(main())


def test_same_move_sent_to_two_processes_plays_once(tmp_path: Path) -> None:
    """Two lobbies (as two processes would have) over one Redis: the same
    seat, seated on both before either hears of the other, sends the same
    move on the same version to both at once, 50 times. Exactly one commit
    wins the compare-and-set; the other is refused with ``stale_version``
    and the fresh state, and the record holds the move once."""
    with redis_server(tmp_path) as redis:
        async def main() -> None:
            settings = Settings(redis_url=redis.url, bot_pool="thread", database=":memory:")
            a, b = Lobby(settings), Lobby(settings)
            await a.open()
            await b.open()
            try:
                await race(a, b)
            finally:
                await a.close()
                await b.close()

        async def race(a: Lobby, b: Lobby) -> None:
            room_a = await a.create_room("get-stuck", {"seed": SEED})
            room_b = await b.room(room_a.id)
            assert room_b is not None
            rooms = (room_a, room_b)
            red, black = FakeConn(), FakeConn()
            for conn in (red, black):
                room_a.attach(conn)
            await room_a.act(lambda: room_a.join(red, "red", "R"), red)
            await room_a.act(lambda: room_a.join(black, "black", "B"), black)
            tokens = {c.seat: next(f["token"] for f in c.frames if f["type"] == "joined")
                      for c in (red, black)}
            twins = {seat: (FakeConn(), FakeConn()) for seat in tokens}
            for pair in twins.values():
                for room, conn in zip(rooms, pair, strict=True):
                    room.attach(conn)
            await room_b.sync()
            wins = 0
            for n in range(50):
                await asyncio.sleep(0.05)  # let the presence of the last resumes settle
                if room_a.phase != "playing":
                    # Both seats say they are ready (each press is stored), on this process.
                    for ready_seat, token in tokens.items():
                        conn = twins[ready_seat][0]
                        room_a.resume(conn, token)
                        await room_a.act(lambda c=conn: room_a.ready(c, room_a.version))
                    assert room_a.phase == "playing"
                    await room_b.sync()
                await room_b.sync()
                assert room_a.version == room_b.version
                version = room_a.version
                seat = room_a.game.to_move(room_a.match.state)[0]
                pair = twins[seat]
                # Both seated at once (no await in between), one per process.
                for room, conn in zip(rooms, pair, strict=True):
                    room.resume(conn, tokens[seat])
                    assert conn.seat == seat
                move = room_a.game.legal_moves(room_a.match.state, seat)[n % 2 - 1]
                for conn in pair:
                    conn.frames.clear()
                results = await asyncio.gather(
                    *(room.act(lambda r=room, c=conn, m=move, v=version: r.move(c, m, v), conn)
                      for room, conn in zip(rooms, pair, strict=True)))
                assert sorted(results) == [False, True], results
                loser = pair[results.index(False)]
                # Refused as stale, with the fresh state (the other process may
                # meanwhile have told it that its seat was taken back).
                codes = [f["code"] for f in loser.frames if f["type"] == "error"]
                assert [c for c in codes if c != "replaced"] == ["stale_version"], loser.frames
                refused = loser.frames.index(next(f for f in loser.frames
                                                  if f.get("code") == "stale_version"))
                assert loser.frames[refused + 1]["type"] == "state"
                assert loser.frames[refused + 1]["version"] == version + 1
                wins += 1
                stored = await a.storage.load(room_a.id)
                assert stored is not None and stored.entries[-1].version == version + 1
                assert [e.action.get("move") for e in stored.entries if e.version == version + 1] == [move]
                await room_b.sync()
                await room_a.sync()
                assert room_a.table == room_b.table
            assert wins == 50
            stored = await a.storage.load(room_a.id)
            assert stored is not None
            assert Room.rebuild(stored, a.storage).table.match == room_a.table.match

        asyncio.run(main())


async def computer_table(servers: list[AppServer]) -> tuple[str, str, tuple[Client, Client], Client]:
    """A seeded Get Stuck room with a computer player, a spectator on each
    server and a person seated through the second one: the room id, the
    person's seat, the spectators and the person."""
    made = servers[0].post("/api/rooms", {"game": "get-stuck", "options": {"seed": SEED},
                                          "bots": {"level": "easy", "seats": "others"}})
    room, seat = made["room"], made["seat"]
    watchers = (await Client("spectator@0").connect(servers[0].ws, room),
                await Client("spectator@1").connect(servers[1].ws, room))
    person = await Client("person@1").connect(servers[1].ws, room)
    await person.send(type="join", seat=seat, name="P")
    await person.until(lambda: person.last["you"] == seat, "the person seated")
    return room, seat, watchers, person


LATE_COPY = ("stale_version", "not_your_turn", "not_playing", "not_seated")


def test_double_click_to_two_processes_plays_once(cluster: Cluster) -> None:
    """Over real processes: the awaited seat's token is resumed on a socket
    to each process, each followed at once by the same move on the same
    version, 50 times. Each time the move plays once: every client sees one
    new version, and the other socket's copy is refused: ``stale_version``
    when the compare-and-set decided, else as one process refuses a late
    copy (the turn or the deal has passed; ``not_seated`` once ``replaced``)."""
    servers = cluster.servers

    async def main() -> None:
        t = await SplitTable.make(servers, "get-stuck")
        replay, watchers = t.replay, t.watchers
        tokens = {seat: c.token for seat, c in t.players.items()}
        twins = {seat: [c, await Client(f"{seat}-twin@{1 - k % 2}").connect(
            servers[1 - k % 2].ws, t.room)] for k, (seat, c) in enumerate(t.players.items())}
        everyone = [*watchers, *(c for pair in twins.values() for c in pair)]
        version = watchers[0].last["version"]
        refusals: list[str] = []
        for _ in range(50):
            if replay.match.deal_over:
                # Each seat says it is ready, each through another process:
                # the first press is stored (version + 1), the second deals.
                for seat, pair in twins.items():
                    await pair[0].send(type="resume", token=tokens[seat])
                    await pair[0].send(type="ready", version=version)
                replay.ready()
                replay.next_deal()
                version += 2
                for client in everyone:
                    await client.at(version)
            seat = replay.game.to_move(replay.match.state)[0]
            move = replay.game.legal_moves(replay.match.state, seat)[0]
            pair = twins[seat]
            seen = [len(c.frames) for c in pair]
            await asyncio.gather(*(c.send(type="resume", token=tokens[seat]) for c in pair))
            await asyncio.gather(*(c.send(type="move", move=move, version=version) for c in pair))
            replay.play(seat, move)
            version += 1
            for client in everyone:
                await client.at(version)
            def refused(pair: list[Client] = pair, seen: list[int] = seen) -> list[str]:
                return [f["code"] for c, n in zip(pair, seen, strict=True) for f in c.frames[n:]
                        if f["type"] == "error" and f["code"] != "replaced"]

            await pair[0].until(lambda: bool(refused()), "the second copy refused")
            await asyncio.sleep(0.05)
            assert watchers[0].last["version"] == version, "a move played twice"
            codes = refused()
            assert len(codes) == 1 and codes[0] in LATE_COPY, codes
            refusals += codes
        for client in everyone:
            check_versions(client)
            replay.check(client)
        # Both processes had the seat at once in most rounds: the race was
        # decided by the compare-and-set.
        assert refusals.count("stale_version") >= 10, refusals

    asyncio.run(main())


def watching(client: Client) -> dict[str, Any] | None:
    """The spectators ``client`` was last told of (a ``spectators`` frame or
    the last state's), as ``{"count": …, "names": […]}``."""
    for frame in reversed(client.frames):
        if frame["type"] == "spectators":
            return {"count": frame["count"], "names": frame["names"]}
        if frame["type"] == "state":
            return dict(frame["view"]["spectators"])
    return None


def test_spectators_on_both_processes_are_counted_and_named_on_both(cluster: Cluster) -> None:
    """A room served by two processes shows the same spectators through
    both: a spectator on one process, and the name it gives, reach the
    players on the other; a seated connection is not counted; one that
    closes is counted out everywhere."""
    servers = cluster.servers

    async def main() -> None:
        room = servers[0].post("/api/rooms", {"game": "get-stuck"})["room"]
        red = await seated("red@0", servers[0], room, "red", "Ann")
        black = await seated("black@1", servers[1], room, "black", "Bob")
        zoe = await Client("zoe@1").connect(servers[1].ws, room)
        await zoe.send(type="watch", name="Zoe")
        max_ = await Client("max@0").connect(servers[0].ws, room)
        await max_.send(type="watch", name="Max")
        anon = await Client("anon@1").connect(servers[1].ws, room)
        both = {"count": 3, "names": ["Max", "Zoe"]}
        for client in (red, black, zoe, max_, anon):
            await client.until(lambda c=client: watching(c) == both, f"{both} through {client.name}")
        await zoe.close()
        await max_.send(type="watch", name=None)
        left = {"count": 2, "names": []}
        for client in (red, black, max_, anon):
            await client.until(lambda c=client: watching(c) == left, f"{left} through {client.name}")

    asyncio.run(main())


def test_two_people_taking_one_seat_on_two_processes_are_told_it_is_taken(cluster: Cluster) -> None:
    """Two people click the same free seat at the same moment, through two
    processes, 20 times: one sits, and the other is told ``seat_taken`` (as
    on one process), never ``stale_version``: a ``join`` names no version,
    so the compare-and-set that decided it is no reason to give."""
    servers = cluster.servers

    async def main() -> None:
        codes: list[str] = []
        for k in range(20):
            room = servers[0].post("/api/rooms", {"game": "get-stuck"})["room"]
            pair = [await Client(f"join{k}@{i}").connect(servers[i].ws, room) for i in (0, 1)]
            await asyncio.gather(*(c.send(type="join", seat="red", name=f"P{i}")
                                   for i, c in enumerate(pair)))
            await pair[0].until(lambda p=pair: sum(c.token is not None for c in p)
                                + sum(len(c.errors("seat_taken")) + len(c.errors("stale_version"))
                                      for c in p) == 2, "one seated, one refused")
            assert sum(c.token is not None for c in pair) == 1
            codes += [f["code"] for c in pair for f in c.frames if f["type"] == "error"]
            for c in pair:
                await c.close()
        assert codes == ["seat_taken"] * 20, codes

    asyncio.run(main())


def test_handover_across_processes(cluster: Cluster) -> None:
    """A person on one process leaves mid-deal: the spectator on the other
    process sees their seat disconnected, then offered for handover at the
    handover time, and a player there may hand it to a computer player."""
    servers = cluster.servers

    async def main() -> None:
        t = await SplitTable.make(servers, "get-stuck-4")
        await play_moves(t.players, t.everyone, t.replay, random.Random(2), 3)
        gone = t.seats[1]  # on the second process
        here = t.players[t.seats[0]]  # on the first
        spectator = t.watchers[0]

        def seat_view() -> dict[str, Any]:
            return next(s for s in spectator.last["view"]["seats"] if s["seat"] == gone)

        await t.players[gone].close()
        started = time.monotonic()
        await spectator.until(lambda: not seat_view()["connected"], "the seat shown away", 5)
        await spectator.until(lambda: seat_view().get("handover") is True, "the handover offer", 5)
        assert time.monotonic() - started >= 0.9
        version = here.last["version"]
        await here.send(type="add_bot", seat=gone, level="easy")
        await spectator.at(version + 1)
        assert seat_view()["kind"] == "computer" and seat_view()["stand_in_for"] == "P1"

    asyncio.run(main())


def test_the_handover_offer_reaches_live_connections_on_both_processes(cluster: Cluster) -> None:
    """Bob leaves mid-deal, in rooms where he sat through the same process as
    Ann and through the other: Ann's live connection is told his seat may be
    handed over, and a spectator on each process sees since when he has been
    away (break-it pass: re-reading the presence hashes moved the away time
    by a rounding, and the notice scheduled for the first time then said
    nothing; the other process showed no ``away_since``)."""
    a, b = cluster.servers

    async def one(bob_on: AppServer) -> None:
        room = a.post("/api/rooms", {"game": "get-stuck"})["room"]
        ann = await Client("Ann").connect(a.ws, room)
        await ann.send(type="join", seat="red", name="Ann")
        bob = await Client("Bob").connect(bob_on.ws, room)
        await bob.send(type="join", seat="black", name="Bob")
        watchers = [await Client(f"W{k}").connect(server.ws, room) for k, server in enumerate((a, b))]
        await ann.until(lambda: ann.last["phase"] == "playing", "the deal")
        await bob.close()

        def black(client: Client) -> dict[str, Any]:
            return next(s for s in client.last["view"]["seats"] if s["seat"] == "black")

        await ann.until(lambda: black(ann).get("handover") is True, "the handover offer", 6)
        for watcher in watchers:
            await watcher.until(lambda w=watcher: black(w).get("handover") is True, "the offer", 6)
            assert abs(black(watcher)["away_since"] - black(ann)["away_since"]) < 1
        for client in (ann, *watchers):
            await client.close()

    async def main() -> None:
        await asyncio.gather(*(one(server) for server in (a, b, a, b, a, b)))

    asyncio.run(main())


def test_a_catch_up_that_failed_is_tried_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                              caplog: pytest.LogCaptureFixture) -> None:
    """A catch-up whose read fails (Redis stalled past the read timeout) is
    tried again until it succeeds, not only at the room's next commit (break-it
    pass: after a 25 s stall a process stayed a version behind for good, and
    the player to move, who saw the table through it, never saw the turn)."""
    import app.bus
    from app.bus import RedisBus
    from app.storage.base import StorageError
    from app.storage.redis import RedisStorage
    from app.store import MemoryRoomStore

    monkeypatch.setattr(app.bus, "CATCH_UP_RETRY_SECONDS", (0.01, 0.04))
    with redis_server(tmp_path) as redis:
        async def main() -> None:
            from types import SimpleNamespace

            store = RedisStorage(redis.url)
            await store.open()
            bus = RedisBus(store, Settings(redis_url=redis.url))
            room = Room.create("get-stuck", {}, room_id="stalled")
            lobby = SimpleNamespace(store=MemoryRoomStore(), bots=SimpleNamespace(poke=lambda r: None))
            lobby.store.add(room)
            bus.lobby = lobby  # type: ignore[assignment]
            tries: list[int | None] = []
            real = room.sync

            async def stalled(version: int | None, check: bool = False) -> bool:
                tries.append(version)
                if len(tries) <= 3:
                    raise StorageError("redis at 127.0.0.1: Timeout reading")
                return await real(version, check=check)

            room.sync = stalled  # type: ignore[method-assign]
            bus.sync(room, None)
            for _ in range(200):
                if len(tries) >= 4 and room.id not in bus._syncing:
                    break
                await asyncio.sleep(0.01)
            assert len(tries) == 4 and room.id not in bus._syncing
            await bus.close()
            await store.close()

        with caplog.at_level("WARNING", logger="app.bus"):
            asyncio.run(main())
    said = [r.getMessage() for r in caplog.records if r.name == "app.bus"]
    assert said == ["room stalled: cannot catch up (redis at 127.0.0.1: Timeout reading); trying again",
                    "room stalled: caught up"], said


def test_a_room_behind_its_players_is_rebuilt_from_redis(tmp_path: Path) -> None:
    """Redis lost its last writes (a crash within ``appendfsync everysec``):
    the next action finds the record shorter than the room, which is rebuilt
    from what Redis kept, and the action is judged on that."""
    with redis_server(tmp_path) as redis:
        async def main() -> None:
            lobby = Lobby(Settings(redis_url=redis.url, bot_pool="thread", database=":memory:"))
            await lobby.open()
            try:
                room = await lobby.create_room("get-stuck", {"seed": SEED})
                red, black = FakeConn(), FakeConn()
                for conn, seat in ((red, "red"), (black, "black")):
                    room.attach(conn)
                    await room.act(lambda c=conn, s=seat: room.join(c, s, s), conn)
                for _ in range(4):
                    seat = room.game.to_move(room.match.state)[0]
                    conn = red if seat == "red" else black
                    move = room.game.legal_moves(room.match.state, seat)[0]
                    assert await room.act(lambda c=conn, m=move: room.move(c, m, room.version), conn)
                assert room.version == 6
                storage = lobby.storage
                await storage.client.ltrim(f"cb:room:{room.id}:log", 0, 4)  # versions 5, 6 lost
                seat = room.game.to_move(room.match.state)[0]
                conn = red if seat == "red" else black
                move = room.game.legal_moves(room.match.state, seat)[0]
                await room.act(lambda: room.move(conn, move, room.version), conn)
                stored = await storage.load(room.id)
                assert stored is not None
                assert room.version == stored.entries[-1].version
                assert room.table == Table.replay(e.action for e in stored.entries)
                assert room.version <= 5
            finally:
                await lobby.close()

        asyncio.run(main())


def _log_versions(servers: list[AppServer], room: str) -> list[int]:
    pattern = re.compile(rf"room {re.escape(room_ref(room))}: the computer player at \S+"
                         r" thinks on version (\d+)")
    return sorted(int(v) for s in servers for v in pattern.findall(s.text()))


def test_every_process_steps_back_with_a_redis_that_lost_writes(tmp_path: Path) -> None:
    """Redis comes back without its last writes (a crash within
    ``appendfsync everysec``, or an older copy of its files): once
    subscribed again, every process serving the room rebuilds it from what
    Redis kept, without waiting for a move, so that the two never serve
    different tables of one room; play goes on over both (found by a
    break-it pass: the process that made no move kept its newer table for
    good, and the game was stuck). Redis is made to lose the writes and to
    drop the subscriptions as its restart would."""
    from redis.asyncio import Redis

    with redis_server(tmp_path) as redis, app_servers(redis.url, tmp_path) as servers:
        async def main() -> None:
            t = await SplitTable.make(servers, "get-stuck")
            rng = random.Random(8)
            kept = await play_moves(t.players, t.everyone, t.replay, rng, 4)
            newer = await play_moves(t.players, t.everyone, t.replay, rng, 4)
            assert newer > kept
            client = Redis.from_url(redis.url)
            try:
                await client.ltrim(f"cb:room:{t.room}:log", 0, kept)
                await client.hset(f"cb:room:{t.room}:meta", "version", kept)
                assert await client.client_kill_filter(_type="pubsub") >= 2
            finally:
                await client.aclose()
            since = {c.name: len(c.states) for c in t.everyone}
            for c in t.everyone:
                await c.until(lambda c=c: c.last["version"] == kept, "the room stepped back", 15)
            t.replay.matches = t.replay.matches[:kept - t.replay.start + 1]
            t.replay.match = t.replay.matches[-1]
            await play_moves(t.players, t.everyone, t.replay, rng, 6)
            for c in t.everyone:
                c.states = c.states[since[c.name]:]
                t.replay.check(c)
                assert c.last["version"] == t.watchers[0].last["version"] > kept
                assert not c.errors("stale_version"), c.name

        asyncio.run(main())


def test_a_room_redis_no_longer_holds_is_closed_on_every_process(tmp_path: Path) -> None:
    """Redis comes back empty (its files lost): every process closes the
    room, tells each of its connections ``no_such_room`` (the page says the
    room is gone) and then closes them with 4404 (break-it pass: they stayed
    open on the dead room), and answers a new connection so too, instead of
    serving what it had in memory while the others refuse it."""
    from redis.asyncio import Redis

    with redis_server(tmp_path) as redis, app_servers(redis.url, tmp_path) as servers:
        async def main() -> None:
            t = await SplitTable.make(servers, "get-stuck")
            await play_moves(t.players, t.everyone, t.replay, random.Random(9), 3)
            client = Redis.from_url(redis.url)
            try:
                await client.flushall()
                assert await client.client_kill_filter(_type="pubsub") >= 2
            finally:
                await client.aclose()
            for c in t.everyone:
                await c.until(lambda c=c: bool(c.errors("no_such_room")), "told the room is gone", 15)
            for c in t.everyone:
                await c.until(lambda c=c: c.closed, "closed", 10)
                assert c.ws.close_code == 4404, (c.name, c.ws.close_code)
            # and no presence of the lost room is written back for ever
            client = Redis.from_url(redis.url)
            try:
                for _ in range(50):
                    left = await client.keys(f"cb:room:{t.room}:*")
                    if not left:
                        break
                    await asyncio.sleep(0.1)
                assert left == [], left
            finally:
                await client.aclose()
            for server in servers:
                async with websockets.connect(f"{server.ws}/ws/{t.room}", open_timeout=10) as late:
                    assert json.loads(await late.recv())["code"] == "no_such_room"

        asyncio.run(main())


def test_computer_turn_is_thought_about_once(cluster: Cluster) -> None:
    """Get Stuck with a computer player, the person on one process and a
    spectator on the other: every computer turn is thought about by exactly
    one process (its claim), and played once."""
    servers = cluster.servers

    async def main() -> None:
        room, seat, (watcher, _), person = await computer_table(servers)
        rng = random.Random(3)
        for _ in range(12):
            await person.until(lambda: person.last["phase"] != "playing"
                               or (seat in person.last["to_move"] and bool(person.last["legal_moves"])),
                               "the person's turn")
            if person.last["phase"] != "playing":
                break
            version = person.last["version"]
            await person.send(type="move", move=rng.choice(person.last["legal_moves"]), version=version)
            await person.at(version + 1)
        await watcher.at(person.last["version"])
        for client in (watcher, person):
            check_versions(client)
        computer = [s["version"] for s in watcher.states
                    if s["view"]["log"] and s["view"]["log"][-1]["seat"] != seat]
        thought = _log_versions(servers, room)
        assert len(thought) >= 5
        assert len(thought) == len(set(thought)), f"a turn was thought about twice: {thought}"
        # Each computer move came from one thought, on the version before it.
        assert set(v + 1 for v in thought) >= set(computer)
        assert "was refused" not in servers[0].text() + servers[1].text()

    asyncio.run(main())


def test_a_computer_turn_is_taken_over_when_its_process_dies(tmp_path: Path) -> None:
    """The process thinking about a computer player's turn is killed while
    it thinks: its claim expires and the other process plays the turn."""
    with (redis_server(tmp_path) as redis,
          app_servers(redis.url, tmp_path, CARDBOARD_BOT_PAUSE="1.0") as servers):
        async def main() -> None:
            room, seat, clients, person = await computer_table(servers)
            if seat not in person.last["to_move"]:
                await person.until(lambda: seat in person.last["to_move"], "the person's turn", 10)
            version = person.last["version"]
            await person.send(type="move", move=person.last["legal_moves"][0], version=version)
            turn = version + 1
            pattern = re.compile(rf"room {re.escape(room_ref(room))}: the computer player at \S+"
                                 rf" thinks on version {turn}\b")
            deadline = time.monotonic() + 10
            thinking = None
            while thinking is None:
                assert time.monotonic() < deadline, "no process thinks about the computer's turn"
                thinking = next((k for k, s in enumerate(servers) if pattern.search(s.text())), None)
                await asyncio.sleep(0.02)
            servers[thinking].kill()
            other = 1 - thinking
            witness = clients[other]
            await witness.at(turn + 1, 20)
            assert pattern.search(servers[other].text()), "the surviving process did not take over"
            check_versions(witness)

        asyncio.run(main())


def test_a_killed_process_loses_nothing(tmp_path: Path) -> None:
    """Get Stuck for Four split over two processes; one is killed (``kill -9``)
    mid-deal. Its clients reconnect to the other with their tokens and the
    deal is finished there; the seat of a client that has not come back yet
    shows disconnected once the dead process's heartbeat has lapsed."""
    game_id = "get-stuck-4"
    with redis_server(tmp_path) as redis, app_servers(redis.url, tmp_path) as servers:
        async def main() -> None:
            t = await SplitTable.make(servers, game_id, creator=1)
            room, seats, players, watchers = t.room, t.seats, t.players, t.watchers
            everyone, replay = t.everyone, t.replay
            rng = random.Random(11)
            version = await play_moves(players, everyone, replay, rng, 12)
            assert players[seats[0]].last["phase"] == "playing"
            servers[0].kill()
            lost = [s for k, s in enumerate(seats) if k % 2 == 0]
            survivor = watchers[1]
            for seat in lost:
                await players[seat].until(lambda c=players[seat]: c.closed, "the socket to close")
            # The first comes back at once; the second later, after its seat
            # showed disconnected on the surviving process.
            back: dict[str, Client] = {}

            async def resume(seat: str) -> None:
                old = players[seat]
                client = await Client(f"{seat}@1").connect(servers[1].ws, room)
                await client.send(type="resume", token=old.token)
                await client.until(lambda: client.token == old.token and client.last["you"] == seat,
                                   "resumed")
                back[seat] = client

            await resume(lost[0])
            started = time.monotonic()
            await survivor.until(
                lambda: not next(s for s in survivor.last["view"]["seats"] if s["seat"] == lost[1])
                ["connected"], "the dead process's seat to show disconnected", 15)
            assert time.monotonic() - started < 12
            await resume(lost[1])
            moved = {**players, **back}
            live = [c for c in [*moved.values(), watchers[1]] if not c.closed]
            for client in live:
                await client.at(version)
            await play_moves(moved, live, replay, rng, 400)
            assert survivor.last["phase"] in ("deal_over", "match_over")
            assert all(s["connected"] for s in survivor.last["view"]["seats"])
            for client in [*players.values(), *watchers, *back.values()]:
                check_versions(client)
                replay.check(client)

        asyncio.run(main())


def test_a_process_stopping_starts_no_catch_up(tmp_path: Path) -> None:
    """A server process stopped the usual way (SIGTERM) with rooms loaded and
    sockets open: its shutdown drops the subscription, which is not taken for
    a Redis connection restored (break-it pass: every room then started a
    catch-up on a client being closed, and each failed with a traceback)."""
    with redis_server(tmp_path) as redis, app_servers(redis.url, tmp_path, count=1) as (server,):
        async def main() -> None:
            clients = []
            for k in range(12):
                room = server.post("/api/rooms", {"game": "get-stuck"})["room"]
                client = await Client(f"c{k}").connect(server.ws, room)
                if k % 2:
                    await client.send(type="join", seat=None, name=f"P{k}")
                clients.append(client)
            for client in clients[1::2]:
                await client.until(lambda c=client: c.token is not None, "a seat")
            server.stop()
            for client in clients:
                await client.until(lambda c=client: c.closed, "the socket to close")

        asyncio.run(main())
        text = server.text()
        assert "connection restored" not in text, text[-3000:]
        assert "never retrieved" not in text, text[-3000:]
        assert "Traceback" not in text, text[-3000:]


def test_redis_restart_mid_game(tmp_path: Path) -> None:
    """Redis stops mid-deal: a move is refused with ``unavailable`` and the
    state stays; once Redis is back (its AOF reloaded) the same move is
    accepted and play goes on over both processes, nothing lost."""
    game_id = "get-stuck"
    with redis_server(tmp_path) as redis, app_servers(redis.url, tmp_path) as servers:
        async def main() -> None:
            t = await SplitTable.make(servers, game_id)
            seats, players, watchers, everyone, replay = t.seats, t.players, t.watchers, t.everyone, t.replay
            rng = random.Random(5)
            version = await play_moves(players, everyone, replay, rng, 6)
            redis.stop()
            seat = players[seats[0]].last["to_move"][0]
            mover = players[seat]
            move = rng.choice(mover.last["legal_moves"])
            count = len(mover.errors("unavailable"))
            await mover.send(type="move", move=move, version=version)
            await mover.until(lambda: len(mover.errors("unavailable")) > count, "unavailable", 10)
            await asyncio.sleep(0.2)
            assert mover.last["version"] == version
            restart(redis)
            # Accepted once Redis answers again (a retry, as a client would).
            deadline = time.monotonic() + 15
            while mover.last["version"] == version:
                assert time.monotonic() < deadline, "play did not resume"
                await mover.send(type="move", move=move, version=version)
                await asyncio.sleep(0.3)
            replay.play(seat, move)
            for client in everyone:
                await client.at(version + 1, 15)
            await play_moves(players, everyone, replay, rng, 400)
            for client in everyone:
                check_versions(client)
                replay.check(client)
                assert client.last["version"] == watchers[0].last["version"]

        asyncio.run(main())


def restart(redis: RedisServer) -> None:
    redis.start()


def test_redis_storage_records_rooms_and_refuses_what_does_not_follow(tmp_path: Path) -> None:
    """The storage itself: a taken id and a version that is not the next one
    are conflicts; rooms are counted, closed (kept while a finished match is
    young, never while a connection is open anywhere) and purged; the room
    creation limit is one bucket per address for every process."""
    from app.bus import RedisBus
    from app.storage import StorageConflict
    from app.storage.base import Entry, MatchRef, RoomMeta
    from app.storage.redis import RedisStorage
    from app.table import fallback_match_id

    with redis_server(tmp_path) as redis:
        async def main() -> None:
            store = RedisStorage(redis.url)
            await store.open()
            now = time.time()

            def meta(room: str, version: int, **kw: Any) -> RoomMeta:
                return RoomMeta(room, "get-stuck", now - 100, now - 100, now - 100, version, "playing", **kw)

            first = Entry(0, now, {"t": "create", "id": "x", "match": "m-first"})
            for room in ("aaaaaaaa", "bbbbbbbb"):
                await store.create(meta(room, 0), Entry(0, now, {**first.action, "match": f"m-{room}"}))
            with pytest.raises(StorageConflict):
                await store.create(meta("aaaaaaaa", 0), first)
            await store.append(meta("aaaaaaaa", 1), Entry(1, now, {"t": "next_deal"}))
            # The very same entry again is saved already (a copy sent twice);
            # another at that version is a conflict.
            await store.append(meta("aaaaaaaa", 1), Entry(1, now, {"t": "next_deal"}))
            with pytest.raises(StorageConflict):
                await store.append(meta("aaaaaaaa", 1), Entry(1, now + 1, {"t": "next_deal"}))
            with pytest.raises(StorageConflict):
                await store.append(meta("aaaaaaaa", 3), Entry(3, now, {"t": "next_deal"}))
            await store.append(meta("bbbbbbbb", 1, finished=now - 50), Entry(1, now, {"t": "leave"}))
            # The match index: ids given by the actions, the fallback for a
            # rematch that carries none.
            rematch = {"t": "rematch", "seed": 1, "match": "m-2"}
            await store.append(meta("aaaaaaaa", 2), Entry(2, now, rematch))
            await store.append(meta("aaaaaaaa", 3), Entry(3, now, {"t": "rematch", "seed": 2}))
            assert await store.find_match("m-aaaaaaaa") == MatchRef("aaaaaaaa", 0)
            assert await store.find_match("m-2") == MatchRef("aaaaaaaa", 1)
            assert await store.find_match(fallback_match_id("aaaaaaaa", 2)) == MatchRef("aaaaaaaa", 2)
            assert await store.find_match("m-bbbbbbbb") == MatchRef("bbbbbbbb", 0)
            assert await store.find_match("nothing") is None
            assert [e.version for e in await store.since("aaaaaaaa", 0)] == [1, 2, 3]
            stored = await store.load("aaaaaaaa")
            assert stored is not None and [e.action["t"] for e in stored.entries] == [
                "create", "next_deal", "rematch", "rematch"]
            assert await store.count_open() == 2
            # A connection open on some process keeps a room from being closed.
            await store.client.hset("cb:room:bbbbbbbb:conns", "p:1", "1")
            await store.close_room("bbbbbbbb")
            assert await store.count_open() == 2
            await store.client.delete("cb:room:bbbbbbbb:conns")
            await store.client.hset("cb:room:bbbbbbbb:seats", "red", "- 1")
            await store.close_room("bbbbbbbb")
            assert not await store.client.exists("cb:room:bbbbbbbb:seats")
            assert await store.count_open() == 1
            kept = await store.load("bbbbbbbb")
            assert kept is not None and kept.meta.closed
            with pytest.raises(StorageConflict):
                await store.append(meta("bbbbbbbb", 2), Entry(2, now, {"t": "leave"}))
            # Idle for longer than the limit: deleted (never finished); the
            # match that ended long ago: deleted as history too.
            assert sorted(await store.purge(now, now)) == ["aaaaaaaa", "bbbbbbbb"]
            assert await store.load("aaaaaaaa") is None and await store.load("bbbbbbbb") is None
            assert await store.rooms(closed=None) == []
            assert await store.client.keys("cb:room:*") == []
            assert await store.find_match("m-2") is None and await store.find_match("m-bbbbbbbb") is None
            assert await store.client.hlen("cb:matches") == 0
            settings = Settings(redis_url=redis.url, room_create_burst=2, room_create_per_hour=1)
            buses = [RedisBus(store, settings), RedisBus(store, settings)]
            waits = [await buses[k % 2].creation_wait("10.0.0.1") for k in range(3)]
            assert waits[:2] == [0.0, 0.0] and waits[2] is not None and waits[2] > 3000
            assert await buses[1].creation_wait("10.0.0.2") == 0.0
            # One given back (no room was made after all): one more may be made, not two.
            assert await buses[0].creation_refund("10.0.0.1") is True
            assert await buses[1].creation_wait("10.0.0.1") == 0.0
            assert (await buses[0].creation_wait("10.0.0.1") or 0) > 3000
            await store.close()

        asyncio.run(main())


def test_an_append_whose_answer_never_came_is_settled_before_anyone_is_told(tmp_path: Path) -> None:
    """Redis paused (SIGSTOP) while an append is on its way: the append times
    out, but Redis may still carry it out once it reads the command again.
    The storage learns the outcome before it answers, so what it says holds:
    saved means the entry is in the record, a failure means it is not and
    never will be (a later copy of the append is fenced off). An entry given
    up on is refused if it comes again; another at that version is taken.
    A room's creation is settled alike."""
    from app.storage import StorageError
    from app.storage.base import Entry, RoomMeta
    from app.storage.redis import RedisStorage, entry_text

    with redis_server(tmp_path) as redis:
        assert redis.proc is not None
        pid = redis.proc.pid

        async def main() -> None:
            store = RedisStorage(redis.url)
            await store.open()
            now = time.time()

            def meta(version: int) -> RoomMeta:
                return RoomMeta("pausedrm", "get-stuck", now, now, now, version, "playing")

            async def versions() -> list[int]:
                stored = await store.load("pausedrm")
                assert stored is not None
                return [e.version for e in stored.entries]

            await store.create(meta(0), Entry(0, now, {"t": "create", "id": "x", "match": "m"}))
            os.kill(pid, signal.SIGSTOP)
            try:
                write = asyncio.ensure_future(store.append(meta(1), Entry(1, now, {"t": "next_deal"})))
                await asyncio.sleep(5)  # past the time-out and its one retry
                assert not write.done()  # still settling: nobody has been told anything
            finally:
                os.kill(pid, signal.SIGCONT)
            try:
                await write
                saved = True
            except StorageError:
                saved = False
            await asyncio.sleep(0.5)  # any copy of the append still on its way has arrived
            assert await versions() == ([0, 1] if saved else [0])
            # Given up on: the same entry is refused when it comes again, and
            # another at that version is taken.
            late = Entry(len(await versions()), now + 1, {"t": "leave"})
            assert not await store._settle_write("pausedrm", late.version, entry_text(late),
                                                  RedisError("test"), asyncio.get_running_loop().time())
            with pytest.raises(StorageError, match="given up"):
                await store.append(meta(late.version), late)
            other = Entry(late.version, now + 2, {"t": "leave"})
            await store.append(meta(late.version), other)
            assert (await versions())[-1] == late.version
            # A room's creation is settled the same way (its version 0).
            made = RoomMeta("neverrm1", "get-stuck", now, now, now, 0, "waiting")
            first = Entry(0, now, {"t": "create", "id": "neverrm1", "match": "m2"})
            assert not await store._settle_write("neverrm1", 0, entry_text(first), RedisError("test"),
                                                  asyncio.get_running_loop().time())
            with pytest.raises(StorageError, match="given up"):
                await store.create(made, first)
            assert await store.load("neverrm1") is None
            await store.create(made, Entry(0, now + 1, first.action))
            assert await store.load("neverrm1") is not None
            await store.close()

        asyncio.run(main())


def test_an_append_sent_twice_after_a_time_out_is_saved_once_and_told_as_saved(tmp_path: Path) -> None:
    """Redis paused for longer than a command's time-out: redis-py sends the
    append a second time, and once Redis reads again it carries out both.
    The copy that finds its very entry in place answers as saved (the append
    is idempotent), so the room is told the truth: the move was saved, once;
    the same for a room's creation. Another entry at that version is still a
    conflict."""
    from app.storage import StorageConflict
    from app.storage.base import Entry, RoomMeta
    from app.storage.redis import SOCKET_SECONDS, RedisStorage

    with redis_server(tmp_path) as redis:
        assert redis.proc is not None
        pid = redis.proc.pid

        async def main() -> None:
            store = RedisStorage(redis.url)
            await store.open()
            now = time.time()

            def meta(version: int) -> RoomMeta:
                return RoomMeta("twicerm1", "get-stuck", now, now, now, version, "playing")

            first = Entry(0, now, {"t": "create", "id": "twicerm1", "match": "m3"})
            await store.create(meta(0), first)
            await store.create(meta(0), first)  # the same creation again: made already
            with pytest.raises(StorageConflict):
                await store.create(meta(0), Entry(0, now + 1, first.action))
            move = Entry(1, now, {"t": "move", "seat": "red", "move": "c3"})
            os.kill(pid, signal.SIGSTOP)
            try:
                write = asyncio.ensure_future(store.append(meta(1), move))
                await asyncio.sleep(SOCKET_SECONDS + 1.5)  # timed out, and sent again
            finally:
                os.kill(pid, signal.SIGCONT)
            await write  # saved, not a conflict with itself
            stored = await store.load("twicerm1")
            assert stored is not None and [e.version for e in stored.entries] == [0, 1]
            await store.append(meta(1), move)  # idempotent
            with pytest.raises(StorageConflict):
                await store.append(meta(1), Entry(1, now + 1, move.action))
            await store.close()

        asyncio.run(main())


def test_a_write_to_a_redis_that_stays_silent_is_unknown_by_the_deadline(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Redis paused for longer than the settling time: the append's outcome
    is reported unknown by the deadline (counted from when it was sent),
    however long redis-py's own time-outs and retries would wait; once Redis
    answers again the entry is there or not, and the record is whole."""
    from app.storage import redis as redis_storage
    from app.storage.base import Entry, RoomMeta, StorageUnknown

    monkeypatch.setattr(redis_storage, "SETTLE_SECONDS", 5.0)
    with redis_server(tmp_path) as redis:
        assert redis.proc is not None
        pid = redis.proc.pid

        async def main() -> None:
            store = redis_storage.RedisStorage(redis.url)
            await store.open()
            now = time.time()
            meta = RoomMeta("silentrm", "get-stuck", now, now, now, 0, "playing")
            await store.create(meta, Entry(0, now, {"t": "create", "id": "silentrm", "match": "m4"}))
            os.kill(pid, signal.SIGSTOP)
            try:
                loop = asyncio.get_running_loop()
                began = loop.time()
                with pytest.raises(StorageUnknown, match="may or may not have been saved"):
                    await store.append(RoomMeta("silentrm", "get-stuck", now, now, now, 1, "playing"),
                                       Entry(1, now, {"t": "leave"}))
                took = loop.time() - began
                assert 4.5 < took < 7.0, took
            finally:
                os.kill(pid, signal.SIGCONT)
            await asyncio.sleep(0.5)
            stored = await store.load("silentrm")
            assert stored is not None and [e.version for e in stored.entries] in ([0], [0, 1])
            await store.close()

        asyncio.run(main())



class TwoProcesses:
    """The buses of two server processes A and B on one Redis, in one event
    loop, whose beats and bus messages the test drives by hand (nothing runs
    by itself but the presence writers): room ``takenfordead`` loaded on
    both, Ann at red on A, Bob at black and a spectator on B."""

    ROOM = "takenfordead"

    async def open(self, url: str) -> None:
        from types import SimpleNamespace

        from app.bus import RedisBus
        from app.storage.redis import RedisStorage
        from app.store import MemoryRoomStore

        self.stores = [RedisStorage(url), RedisStorage(url)]
        self.buses: list[RedisBus] = []
        self.rooms: list[Room] = []
        for store in self.stores:
            await store.open()
            bus = RedisBus(store, Settings(redis_url=url))
            lobby = SimpleNamespace(store=MemoryRoomStore(), bots=SimpleNamespace(poke=lambda r: None))
            bus.lobby = lobby  # type: ignore[assignment]
            bus.redis_presence.start()
            await bus._beat_once(first=True)
            room = Room.create("get-stuck", {}, room_id=self.ROOM)
            room.presence = bus.presence
            lobby.store.add(room)
            self.buses.append(bus)
            self.rooms.append(room)
        self.a, self.b = self.buses
        # The room as Redis storage would hold it: presence is kept only for such rooms.
        await self.a.client.hset(f"cb:room:{self.ROOM}:meta", "game", "get-stuck")
        ann, bob, watcher = TextConn(), TextConn(), TextConn()
        self.rooms[0].attach(ann)
        self.rooms[0]._sit(ann, "red")
        self.rooms[1].attach(bob)
        self.rooms[1]._sit(bob, "black")
        self.rooms[1].attach(watcher)
        await self.settled(self.a, self.b)
        assert self.shown_on_a()

    async def settled(self, *hearing: Any) -> None:
        """The presence writes queued are done; then each bus of ``hearing``
        hears ``p {room}`` (as if published now) and reads the room."""
        for bus in self.buses:
            await bus.redis_presence._queue.join()
        for bus in hearing:
            bus._on(f"p {self.ROOM}")
            await bus.redis_presence._queue.join()

    async def lapse_b(self) -> None:
        """B's last heartbeat is older than ``DEAD_MS`` (Redis was paused)."""
        from app.presence import DEAD_MS

        now = int(await self.a._now_ms())
        await self.a.client.zadd("cb:procs", {self.b.proc: now - DEAD_MS - 1000})
        self.a._beat_at, self.a._steady_since = now, now - DEAD_MS  # A has beaten all along

    def shown_on_a(self) -> bool:
        """A shows Bob connected and B's two connections watching."""
        room = self.rooms[0]
        return (room.connected("black") and "black" not in room.away_since
                and room.remote_watchers == 2 and room.watched)

    async def close(self) -> None:
        for bus in self.buses:
            await bus.close()
        for store in self.stores:
            await store.close()


def test_a_process_taken_for_dead_shows_connected_again(tmp_path: Path) -> None:
    """Process B falls silent (Redis paused) and A buries it; B hears it was
    taken for dead and writes its presence again, and A reads that while B
    is still among its dead: A's next heartbeat, which finds B alive, shows
    Bob (seated on B) connected and B's spectator watching again, without
    any other change in the room (a seat shown away could be handed to a
    computer, a room shown unwatched freed)."""
    with redis_server(tmp_path) as redis:
        async def main() -> None:
            t = TwoProcesses()
            await t.open(redis.url)
            a, b, room = t.a, t.b, t.rooms[0]
            await t.lapse_b()
            await a._beat_once()
            assert a.redis_presence.dead == {b.proc}
            await t.settled(a)
            assert not room.connected("black") and room.remote_watchers == 0
            # B learns it was taken for dead and writes its presence again;
            # A reads it while B is still among its dead.
            await b._beat_once()
            await t.settled(a)
            assert not room.connected("black")
            # A's next beat finds B alive: the room is read again.
            await a._beat_once()
            assert a.redis_presence.dead == set()
            await t.settled()
            assert t.shown_on_a()
            await t.close()

        asyncio.run(main())


def test_presence_written_while_redis_was_down_is_mended_once_it_is_back(tmp_path: Path) -> None:
    """Redis stops; meanwhile Bob (seated on B) and B's spectator, who gave a
    name, close, and their closing cannot be written. Once Redis is back, B
    writes its whole presence again by itself (no lost subscription is heard
    here: nothing runs but the presence writers), and A then shows Bob away
    and nobody watching through B (break-it pass: they were counted for
    ever, and a room of computer players went on playing to nobody)."""
    with redis_server(tmp_path) as redis:
        async def main() -> None:
            t = TwoProcesses()
            await t.open(redis.url)
            for bus in t.buses:
                bus.redis_presence.rooms = bus._rooms
            a_room, b_room = t.rooms
            bob = b_room.seat_conn["black"]
            watcher = next(c for c in b_room.connections if c is not bob)
            b_room.watch(watcher, "Zoe")
            await t.settled(t.a)
            assert a_room.remote_spectators == ("Zoe",) and a_room.connected("black")
            redis.stop()
            b_room.detach(watcher)
            b_room.detach(bob)
            await t.b.redis_presence._queue.join()  # both writes fail
            restart(redis)
            deadline = time.monotonic() + 20
            while a_room.connected("black") or a_room.remote_watchers:
                assert time.monotonic() < deadline, (a_room.remote_spectators, a_room.remote_seats)
                await asyncio.sleep(0.2)
                with contextlib.suppress(RedisError):
                    await t.settled(t.a)
            assert "black" in a_room.away_since and a_room.remote_spectators == ()
            await t.close()

        asyncio.run(main())


def test_a_process_stopping_takes_out_whatever_presence_it_left(tmp_path: Path) -> None:
    """A connection of B's whose closing was never written (a ghost) is
    counted by A until B stops: B then takes out all of its presence, since
    nobody buries a process that is no longer among the heartbeats."""
    with redis_server(tmp_path) as redis:
        async def main() -> None:
            t = TwoProcesses()
            await t.open(redis.url)
            a_room = t.rooms[0]
            await t.a.client.hset(f"cb:room:{t.ROOM}:conns", f"{t.b.proc}:999", "n Ghost")
            await t.settled(t.a)
            assert "Ghost" in a_room.remote_spectators and a_room.remote_watchers == 3
            await t.b.close()
            await t.settled(t.a)
            assert a_room.remote_watchers == 0 and not a_room.connected("black")
            fields = await t.a.client.hkeys(f"cb:room:{t.ROOM}:conns")
            assert fields and not any(str(f).startswith(f"{t.b.proc}:") for f in fields), fields
            await t.a.close()
            for store in t.stores:
                await store.close()

        asyncio.run(main())


def test_after_a_stall_nobody_is_taken_for_dead_until_all_could_beat(tmp_path: Path) -> None:
    """Redis stalled for 25 s: every heartbeat is old, A's own included. A's
    first beats after it bury nobody, and B, beating again within the next
    seconds, is never taken for dead (break-it pass: A buried B, and Bob,
    seated on B, showed away for a moment). Once A has beaten steadily for
    DEAD_MS, a process that stays silent is buried."""
    from app.presence import DEAD_MS, HEARTBEAT_MS

    with redis_server(tmp_path) as redis:
        async def main() -> None:
            t = TwoProcesses()
            await t.open(redis.url)
            a, b, room = t.a, t.b, t.rooms[0]
            now = int(await a._now_ms())
            await a.client.zadd("cb:procs", {a.proc: now - 25_000, b.proc: now - 25_000})
            a._beat_at = b._beat_at = now - 25_000  # neither could beat meanwhile
            await a._beat_once()
            assert a.redis_presence.dead == set()
            await b._beat_once()
            await a._beat_once()
            await t.settled(a)
            assert a.redis_presence.dead == set() and t.shown_on_a()
            assert room.connected("black")
            # B stays silent from now on: A, beating steadily, buries it.
            for _ in range(DEAD_MS // HEARTBEAT_MS + 2):
                await asyncio.sleep(HEARTBEAT_MS / 1000)
                await a._beat_once()
            assert await a.client.zscore("cb:procs", b.proc) is None  # buried
            await t.settled(a)
            assert not room.connected("black")
            await t.close()

        asyncio.run(main())


def test_short_hiccups_do_not_keep_a_dead_process_from_being_found(tmp_path: Path) -> None:
    """Redis pausing 1.5 s now and then: A's heartbeats come 2.5 s apart, too
    little for a live process to look dead, so they do not count as a stall,
    and B, silent, is buried (verification pass: hiccups every 4 s kept a
    killed process's players shown connected for ever)."""
    from app.presence import DEAD_MS, HEARTBEAT_MS

    with redis_server(tmp_path) as redis:
        async def main() -> None:
            t = TwoProcesses()
            await t.open(redis.url)
            a, b = t.a, t.b
            await b._beat_once()
            for _ in range(DEAD_MS // HEARTBEAT_MS + 2):
                await asyncio.sleep(HEARTBEAT_MS / 1000)
                a._beat_at -= 1500  # as if this beat had waited 1.5 s on Redis
                await a._beat_once()
            assert await a.client.zscore("cb:procs", b.proc) is None  # buried
            await t.close()

        asyncio.run(main())


def test_a_process_that_beats_while_it_is_buried_is_not_buried(tmp_path: Path) -> None:
    """A finds B's heartbeat lapsed, and B beats (and, had it been removed
    already, writes its presence again) before A buries it: A buries it only
    if its heartbeat is still lapsed, at once with removing it, so B's
    presence is never lost without B knowing it."""
    with redis_server(tmp_path) as redis:
        async def main() -> None:
            t = TwoProcesses()
            await t.open(redis.url)
            a, b = t.a, t.b
            presence = a.redis_presence
            bury = presence.bury

            async def late_bury(*args: Any) -> Any:
                await b._beat_once()
                await t.settled()
                return await bury(*args)

            presence.bury = late_bury  # type: ignore[method-assign]
            await t.lapse_b()
            await a._beat_once()
            presence.bury = bury  # type: ignore[method-assign]
            await t.settled(a, b)
            for bus in (a, b, a, b):
                await bus._beat_once()
            await t.settled(a, b)
            assert t.shown_on_a()
            assert str(await a.client.hget(f"cb:room:{t.ROOM}:seats", "black")).startswith(b.proc)
            await t.close()

        asyncio.run(main())


def test_chat_and_the_mute_reach_every_process(cluster: Cluster) -> None:
    """A chat message written on one process reaches the connections of the
    other at once and is in the history a new connection there gets; a
    player's mute of the spectators holds for a spectator on the other
    process too (docs/scaling.md, "Chat and spectators across processes")."""
    servers = cluster.servers

    def chats(client: Client) -> list[str]:
        return [f["text"] for f in client.frames if f["type"] == "chat"]

    async def main() -> None:
        room = servers[0].post("/api/rooms", {"game": "get-stuck",
                                              "options": {"spectator_chat": True}})["room"]
        ann = await seated("ann@0", servers[0], room, "red", "Ann")
        spectator = await Client("spectator@1").connect(servers[1].ws, room)
        await ann.send(type="chat", text="hello from process 0")
        await spectator.until(lambda: chats(spectator) == ["hello from process 0"],
                              "Ann's message on the other process", 5)
        await spectator.send(type="chat", text="hello from process 1")
        await ann.until(lambda: chats(ann) == ["hello from process 0", "hello from process 1"],
                        "the spectator's message on the first process", 5)
        for server in servers:
            late = await Client("late").connect(server.ws, room)
            await late.until(lambda c=late: len(chats(c)) == 2, "the chat history", 5)
            assert chats(late) == ["hello from process 0", "hello from process 1"]
            await late.close()
        assert chats(spectator) == ["hello from process 0", "hello from process 1"]

        version = ann.last["version"]
        await ann.send(type="mute_spectators", mute=True)
        await spectator.until(lambda: spectator.last["view"]["chat"].get("spectators") == "muted",
                              "the mute on the other process", 5)
        assert spectator.last["view"]["chat"]["muted_by"] == "Ann"
        assert spectator.last["version"] == version
        late = await Client("late spectator@1").connect(servers[1].ws, room)
        assert late.last["view"]["chat"]["spectators"] == "muted"
        await late.send(type="chat", text="can anyone hear me?")
        await late.until(lambda: bool(late.errors("muted")), "the muted refusal", 5)
        await ann.send(type="mute_spectators", mute=False)
        await spectator.until(lambda: spectator.last["view"]["chat"].get("spectators") == "on",
                              "the unmute on the other process", 5)
        await spectator.send(type="chat", text="thanks")
        await ann.until(lambda: chats(ann)[-1:] == ["thanks"], "the spectator's message again", 5)
        assert "can anyone hear me?" not in chats(ann) + chats(spectator)
        for client in (ann, spectator, late):
            await client.close()

    asyncio.run(main())


def test_a_seat_given_up_on_one_process_names_its_person_on_the_other(cluster: Cluster) -> None:
    """Ann gives up her seat on one process: a connection on the other shows
    the free seat as Ann's (``left``), as a single process does; when Bob
    takes it there, neither shows it any more."""
    servers = cluster.servers

    def left(client: Client) -> str | None:
        seat = next(s for s in client.last["view"]["seats"] if s["seat"] == "red")
        return seat.get("left")

    async def main() -> None:
        room = servers[0].post("/api/rooms", {"game": "get-stuck"})["room"]
        ann = await seated("ann@0", servers[0], room, "red", "Ann")
        watcher = await Client("watcher@1").connect(servers[1].ws, room)
        await ann.send(type="leave")
        await ann.until(lambda: left(ann) == "Ann", "Ann's own process shows her seat left")
        await watcher.until(lambda: left(watcher) == "Ann", "the other process shows it too", 5)
        late = await Client("late@1").connect(servers[1].ws, room)
        assert left(late) == "Ann"
        bob = await Client("bob@1").connect(servers[1].ws, room)
        await bob.send(type="join", seat="red", name="Bob")
        await bob.until(lambda: bob.token is not None, "Bob joined")
        await ann.until(lambda: left(ann) is None and ann.last["version"] == bob.last["version"],
                        "the seat no longer shown left", 5)
        for client in (ann, watcher, late, bob):
            await client.close()

    asyncio.run(main())


def test_a_redis_nobody_answers_is_named_at_start() -> None:
    """Opening a Redis storage that nothing listens to says where it looked
    and what to do, in one sentence each. Under uvicorn's event loop (uvloop)
    the driver's own message ends with a full stop ("Connection refused."):
    the storage's must not add a second."""
    import uvloop

    from app.storage import StorageError
    from app.storage.redis import RedisStorage

    port = free_port()

    async def main() -> None:
        store = RedisStorage(f"redis://127.0.0.1:{port}/0")
        try:
            with pytest.raises(StorageError) as caught:
                await store.open()
        finally:
            await store.close()
        text = str(caught.value)
        assert text.startswith(f"cannot reach Redis at 127.0.0.1:{port} (CARDBOARD_REDIS_URL): "), text
        assert "Connection refused." in text and ".." not in text, text
        assert text.endswith("Start Redis, or unset CARDBOARD_REDIS_URL to keep rooms in SQLite"), text

    uvloop.run(main())
