"""Real restarts: uvicorn as a child process on a temporary SQLite file,
rooms of every game played over websockets with random legal moves, the
server killed (``kill -9``) or stopped (SIGTERM) at random moments and
started again (``docs/protocol.md``, "Restarts").

Checked on the way: every client resumes its seat with its token; no room
comes back older than the newest state any client was sent (nothing
acknowledged is lost); a Stucco opening pick made before a kill is still
made and the other seat is offered the same choice again; a computer player
killed while thinking takes its turn up again; SIGTERM closes every socket
with 1012 and exits cleanly. At the end, every state frame any client got is
checked against the stored record, and each match against an uninterrupted
replay of its seed and moves through the engine alone
(``engine.match.Match``).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import random
import signal
import sqlite3
import sys
import time
import urllib.request
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from serverproc import SHUTDOWN_DONE, STOPPED, Server
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed, WebSocketException

from app.protocol import OutcomeView
from app.table import Table
from engine.match import Match
from engine.registry import get_game

SEED = 20261201
KILLS = 22
"""``kill -9`` restarts at least (special moments included)."""
TERMS = 3
"""SIGTERM restarts besides."""
PICK_KILLS = 1
BOT_KILLS = 3
SETTLE_SECONDS = 30.0
"""How long every client may take to resume after a restart."""
DEADLINE = 600.0
"""Seconds the whole test may take before it fails (about a minute on an idle machine)."""

ENV = {
    "CARDBOARD_BOT_SECONDS": "0.02",
    "CARDBOARD_BOT_PAUSE": "0.15",
    "CARDBOARD_BOT_POOL": "thread",
    "CARDBOARD_BOT_WORKERS": "2",
    "CARDBOARD_BOT_BETWEEN_DEALS": "0.2",
}
ALLOWED_ERRORS = {"stale_version", "not_your_turn"}
"""Refusals a client playing on its latest state may get (a simultaneous
pick, a move sent just before a restart)."""


def post(base: str, body: dict[str, Any]) -> dict[str, Any]:
    req = urllib.request.Request(base + "/api/rooms", data=json.dumps(body).encode(),
                                 headers={"Content-Type": "application/json"}, method="POST")
    with urllib.request.urlopen(req, timeout=10) as r:
        assert r.status == 201
        answer: dict[str, Any] = json.load(r)
        return answer


@dataclass
class Plan:
    """A room to play: its game and options, the mean think time of our
    clients in seconds (enough to stay under the rate limit of 30 frames a
    second), how many matches, and whether computer players take every seat
    but the first."""

    game: str
    options: dict[str, Any]
    think: float
    matches: int = 1
    bots: bool = False


PLANS = [
    Plan("get-stuck", {"deals": 2, "seed": 11}, 0.04, matches=2),
    Plan("get-stuck-4", {"seed": 12}, 0.025),
    Plan("romeo-and-juliet", {"seed": 13}, 0.02),
    Plan("stucco", {"target": 60, "seed": 14}, 0.04),
    Plan("suitors", {"seed": 15}, 0.02),
    Plan("get-stuck", {"deals": 2, "seed": 16}, 0.02, bots=True),
    Plan("stucco", {"target": 12, "seed": 17}, 0.02, bots=True),
    Plan("suitors", {"seed": 18}, 0.01, bots=True),
]


@dataclass
class Seat:
    """One of our clients, holding ``seat`` of ``room``."""

    room: RoomPlay
    seat: str
    rng: random.Random
    token: str | None = None
    last: dict[str, Any] | None = None
    """The newest state received for this seat."""
    acted: int | None = None
    """The version this client last acted on (``None`` after a reconnect)."""
    epoch: int = -1
    """The server start on whose socket this client last got a state for its seat."""
    held: bool = False
    """Do not pick (the second seat of a Stucco pick that a kill is aimed at)."""
    pressed: bool = False
    """Said "ready" in this break already (a press not yet shown is not sent
    twice); forgotten on a reconnect and once a deal is in play."""
    closes: list[tuple[int, int | None]] = field(default_factory=list)
    """(server start, close code) of each socket that closed."""
    connected: bool = False
    sent: dict[int, str] = field(default_factory=dict)
    """Version → the move this client sent on it."""


@dataclass
class RoomPlay:
    """A room being played, and what its clients have seen."""

    plan: Plan
    id: str
    seats: list[Seat] = field(default_factory=list)
    computers: tuple[str, ...] = ()
    frames: list[dict[str, Any]] = field(default_factory=list)
    """Every state frame any of our clients received."""
    seen: int = -1
    """The newest version any client was sent."""
    floor: int = -1
    floor_gen: int = 0
    """Raised with each restart: a socket checks the floor only if it was
    opened after the floor was set (frames of an older socket, read after the
    kill, may be older than what another socket of the room had read)."""
    """The newest version sent before the last restart: none may be older now."""
    match_overs: dict[int, dict[str, Any]] = field(default_factory=dict)
    done: asyncio.Event = field(default_factory=asyncio.Event)
    pick_trap: dict[str, Any] | None = None

    @property
    def game(self) -> str:
        return self.plan.game


class Hub:
    """The server, the rooms and the coordinator's bookkeeping."""

    def __init__(self, server: Server) -> None:
        self.server = server
        self.rooms: list[RoomPlay] = []
        self.epoch = 0
        self.failures: list[str] = []
        self.kill_now = asyncio.Event()
        self.reason = ""
        self.armed = False
        """Special kills may be asked for (every client has resumed)."""
        self.pick_kills = 0
        self.bot_kills: list[tuple[RoomPlay, int, str]] = []
        self.bot_kills_mid_turn = 0
        self.enough = False
        """Every kill the test needs is done: rooms may end. Until then a room
        that has played its matches plays another (on a fast machine rooms
        would otherwise end before the kills)."""

    def fail(self, message: str) -> None:
        self.failures.append(message)

    def ask_kill(self, reason: str) -> bool:
        """Ask the coordinator to kill the server now; False if not the time
        (the server is being restarted, or a kill is asked for already)."""
        if not self.armed or self.kill_now.is_set():
            return False
        self.reason = reason
        self.kill_now.set()
        return True

    def arm(self) -> None:
        """Special kills may be asked for from now on; a Stucco pick waiting
        for its kill gets it at once."""
        self.kill_now.clear()
        self.armed = True
        if any(r.pick_trap and "version" in r.pick_trap for r in self.rooms):
            self.ask_kill("pick")

    @property
    def seats(self) -> Iterable[Seat]:
        return (s for r in self.rooms for s in r.seats)


# ---- one client --------------------------------------------------------------------------
async def run_seat(hub: Hub, s: Seat) -> None:
    """Connect, join or resume, play on the latest state; reconnect after
    every close until the room's matches are over."""
    room = s.room
    while not room.done.is_set():
        try:
            async with connect(f"{hub.server.ws_base}/ws/{room.id}", open_timeout=5, close_timeout=1,
                               ping_interval=None, max_size=2**22, compression=None) as ws:
                # Act only on what this connection is sent (the state from
                # before a restart may be out of date).
                s.connected, s.acted, s.last, s.pressed = True, None, None, False
                try:
                    await ws.send(json.dumps({"type": "resume", "token": s.token} if s.token else
                                             {"type": "join", "seat": s.seat, "name": f"P-{s.seat}"}))
                    await play(hub, s, ws)
                finally:
                    s.connected = False
            s.closes.append((hub.epoch, ws.close_code))
        except ConnectionClosed as exc:
            s.closes.append((hub.epoch, exc.rcvd.code if exc.rcvd is not None else None))
        except (OSError, TimeoutError, WebSocketException):
            pass
        if not room.done.is_set():
            await asyncio.sleep(0.03 + 0.05 * s.rng.random())


async def play(hub: Hub, s: Seat, ws: ClientConnection) -> None:
    room = s.room
    gen = room.floor_gen
    while not room.done.is_set():
        try:
            text = await asyncio.wait_for(ws.recv(), timeout=0.2)
        except TimeoutError:
            await decide(hub, s, ws)
            continue
        frame = json.loads(text)
        kind = frame["type"]
        if kind == "joined":
            if frame["seat"] != s.seat:
                hub.fail(f"{room.game}: {s.seat} got seat {frame['seat']} back")
            s.token = frame["token"]
        elif kind == "error":
            if frame["code"] == "rate_limited":
                s.acted = None
            elif frame["code"] not in ALLOWED_ERRORS:
                hub.fail(f"{room.game} {s.seat}: {frame['code']}: {frame['message']}")
        elif kind == "state":
            on_state(hub, s, frame, gen == room.floor_gen)
            if frame["you"] == s.seat:
                s.last, s.epoch = frame, hub.epoch
                await decide(hub, s, ws)


def on_state(hub: Hub, s: Seat, frame: dict[str, Any], since_restart: bool) -> None:
    room = s.room
    v = frame["version"]
    if since_restart and v < room.floor:
        hub.fail(f"{room.game}: a state of version {v} after a restart, but version {room.floor}"
                 " had been sent before it")
    room.frames.append(frame)
    room.seen = max(room.seen, v)
    if frame["phase"] == "match_over":
        room.match_overs.setdefault(v, frame)
        if len(room.match_overs) >= room.plan.matches and hub.enough:
            room.done.set()
    if frame["you"] == s.seat:
        trap = room.pick_trap
        if trap is not None and s.held and frame["to_move"] == [s.seat]:
            # The first pick is made and acknowledged; the second waits for
            # the kill (now, or as soon as the server is up again).
            trap["version"], trap["legal"] = v, frame["legal_moves"]
            hub.ask_kill("pick")
        to_move = frame["to_move"]
        if (room.computers and frame["phase"] == "playing" and len(hub.bot_kills) < BOT_KILLS
                and s.seat not in to_move and any(c in to_move for c in room.computers)
                and hub.ask_kill("bot")):
            hub.bot_kills.append((room, v, next(c for c in to_move if c in room.computers)))


async def decide(hub: Hub, s: Seat, ws: ClientConnection) -> None:
    """Act on the latest state if it is ours to act on and not acted on yet."""
    f, room = s.last, s.room
    if f is None or s.acted == f["version"] or room.done.is_set():
        return
    v, phase = f["version"], f["phase"]
    first = s is room.seats[0]
    message: dict[str, Any] | None = None
    if phase == "playing":
        s.pressed = False
    if phase == "playing" and f["legal_moves"]:
        if (room.game == "stucco" and len(f["to_move"]) == 2 and not room.computers and not first
                and hub.pick_kills < PICK_KILLS and room.pick_trap is None):
            room.pick_trap = {}
            s.held = True
        if s.held:
            return
        move = s.rng.choice(f["legal_moves"])
        s.sent[v] = move
        message = {"type": "move", "move": move, "version": v}
    elif (phase == "deal_over"
          or (phase == "match_over" and (len(room.match_overs) < room.plan.matches or not hub.enough))) \
            and s.seat not in f["view"]["ready"]["ready"] and not s.pressed:
        # Every person says they are ready; the last press deals.
        s.pressed = True
        message = {"type": "ready", "version": v}
    if message is None:
        return
    s.acted = v
    await asyncio.sleep(room.plan.think * (0.5 + s.rng.random()))
    await ws.send(json.dumps(message))


# ---- the coordinator -----------------------------------------------------------------------
def note(hub: Hub, what: str) -> None:
    """A line of progress on stderr (pytest shows it if the test fails)."""
    rooms = " ".join(f"{r.game}:{r.seen}{'.' if r.done.is_set() else ''}" for r in hub.rooms)
    print(f"{time.monotonic():.1f} {what}: {rooms} picks={hub.pick_kills}"
          f" computer turns={len(hub.bot_kills)}/{hub.bot_kills_mid_turn}", file=sys.stderr)


async def start(hub: Hub) -> None:
    hub.epoch += 1  # first: a client may resume before start() returns
    await asyncio.to_thread(hub.server.start)


async def settled(hub: Hub) -> None:
    """Wait until every client of a room still playing has resumed on this
    server start (got ``joined``, checked, and a state for its seat)."""
    deadline = time.monotonic() + SETTLE_SECONDS
    while True:
        late = [s for s in hub.seats if not s.room.done.is_set() and s.epoch != hub.epoch]
        if not late:
            return
        if time.monotonic() > deadline:
            raise AssertionError(f"{len(late)} clients did not resume: "
                                 + ", ".join(f"{s.room.game}/{s.seat}" for s in late)
                                 + f"\n{hub.server.tail()}")
        await asyncio.sleep(0.02)


async def restart(hub: Hub, term: bool) -> None:
    """Kill (or SIGTERM) the server and start it again."""
    epoch = hub.epoch
    connected = [s for s in hub.seats if s.connected]
    if term:
        await stop(hub.server)
    else:
        await asyncio.to_thread(hub.server.kill)
    for room in hub.rooms:
        room.floor = room.seen
        room.floor_gen += 1
    # Every socket notices before the new server starts.
    for _ in range(500):
        if not any(s.connected for s in hub.seats):
            break
        await asyncio.sleep(0.01)
    if term:
        # (A client whose match has just ended closes its socket itself.)
        codes = {(s.room.game, s.seat): [c for e, c in s.closes if e == epoch]
                 for s in connected if not s.room.done.is_set()}
        bad = {k: c for k, c in codes.items() if c != [1012]}
        assert not bad, f"SIGTERM closed these sockets otherwise than with 1012: {bad}"
    await start(hub)


async def stop(server: Server) -> None:
    """SIGTERM: the server finishes its writes, closes the database (its
    write-ahead log is folded in and removed) and exits cleanly."""
    done = server.log.read_text().count(SHUTDOWN_DONE)
    status = await asyncio.to_thread(server.terminate)
    assert status in STOPPED, f"SIGTERM: the server exited with {status}\n{server.tail()}"
    assert server.log.read_text().count(SHUTDOWN_DONE) == done + 1, server.tail()
    database = Path(server.env["CARDBOARD_DATABASE"])
    assert not database.with_name(database.name + "-wal").exists()


async def check_pick(hub: Hub, room: RoomPlay) -> None:
    """After a kill between the two Stucco picks: the first pick is still
    made, and the second seat is offered the same choice again."""
    trap = room.pick_trap
    assert trap is not None and trap.get("version") is not None
    picker, waiter = room.seats[0], room.seats[1]
    assert picker.last is not None and waiter.last is not None
    v = trap["version"]
    assert picker.last["version"] == v == waiter.last["version"]
    assert picker.last["to_move"] == [waiter.seat] and picker.last["legal_moves"] == []
    own = picker.last["view"]["log"][-1]
    assert own["seat"] == picker.seat and own["move"] == picker.sent[v - 1]
    assert waiter.last["to_move"] == [waiter.seat]
    assert waiter.last["legal_moves"] == trap["legal"]
    hidden = waiter.last["view"]["log"][-1]
    assert hidden["seat"] == picker.seat and hidden["move"] is None
    hub.pick_kills += 1
    room.pick_trap, waiter.held = None, False


async def check_bot(hub: Hub, room: RoomPlay, version: int, computer: str) -> None:
    """After a kill while ``computer`` was to move at ``version``: it moves."""
    human = room.seats[0]
    assert human.last is not None
    if human.last["version"] == version:
        hub.bot_kills_mid_turn += 1
    deadline = time.monotonic() + 20
    while not any(f["version"] > version for f in room.frames[-50:]):
        assert time.monotonic() < deadline, f"{room.game}: the computer player at {computer} did not move"
        await asyncio.sleep(0.02)
    after = next(f for f in room.frames if f["version"] == version + 1)
    log = after["view"]["log"]  # the deal's log, still shown if that move ended the deal
    assert log and log[-1]["seat"] == computer, log[-3:]


async def coordinate(hub: Hub, rng: random.Random) -> tuple[int, int]:
    """Kill the server at random moments (and when a client asks, at special
    ones), now and then stopping it with SIGTERM instead, until enough of
    each are done, then let every room finish. Returns the numbers of kills
    and of SIGTERMs."""
    kills = terms = 0
    while not all(r.done.is_set() for r in hub.rooms):
        if (kills >= KILLS and terms >= TERMS and hub.pick_kills >= PICK_KILLS
                and hub.bot_kills_mid_turn):
            if not hub.enough:
                hub.enough = True
                for room in hub.rooms:  # a room between matches now ends there
                    if (len(room.match_overs) >= room.plan.matches and room.frames
                            and room.frames[-1]["phase"] == "match_over"):
                        room.done.set()
            await asyncio.sleep(0.05)
            continue
        await settled(hub)
        hub.arm()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(hub.kill_now.wait(), timeout=rng.uniform(0.1, 0.9))
        hub.armed = False
        reason = hub.reason if hub.kill_now.is_set() else "random"
        term = reason == "random" and terms < TERMS and kills >= 4 * (terms + 1)
        note(hub, f"{'SIGTERM' if term else 'kill'} {kills + terms} ({reason})")
        await restart(hub, term=term)
        kills, terms = kills + (not term), terms + term
        await settled(hub)
        if reason == "pick":
            room = next(r for r in hub.rooms if r.pick_trap is not None and "version" in r.pick_trap)
            await check_pick(hub, room)
        elif reason == "bot":
            room, version, computer = hub.bot_kills[-1]
            await check_bot(hub, room, version, computer)
        assert not hub.failures, hub.failures[:5]
    return kills, terms


# ---- the checks at the end ----------------------------------------------------------------
def record(database: Path, room_id: str) -> list[dict[str, Any]]:
    with sqlite3.connect(database) as conn:
        rows = conn.execute("SELECT version, action FROM actions WHERE room = ? ORDER BY version",
                            (room_id,)).fetchall()
    assert [v for v, _ in rows] == list(range(len(rows))), "the stored versions have a hole"
    return [json.loads(a) for _, a in rows]


def normal(value: Any) -> Any:
    return json.loads(json.dumps(value))


def check_frames(room: RoomPlay, actions: list[dict[str, Any]]) -> None:
    """Every state frame a client got is the state the record gives at that
    version: phase, deal, whose turn, the legal moves, the seat's own view of
    the board and the log (secret picks hidden from those who may not see them)."""
    tables = [Table.new(actions[0])]
    for a in actions[1:]:
        tables.append(tables[-1].apply(a))
    game = get_game(room.game)
    for f in room.frames:
        t = tables[f["version"]]
        state, you = t.match.state, f["you"]
        where = f"{room.game} version {f['version']} for {you}"
        assert f["phase"] == t.phase, where
        assert f["view"]["deal"] == t.match.deal_number, where
        to_move = list(game.to_move(state)) if t.phase == "playing" else []
        assert f["to_move"] == to_move, where
        holder = t.holder(you) if you is not None else None
        mine = you in to_move and holder is not None and not holder.computer_plays
        assert f["legal_moves"] == (list(game.legal_moves(state, you)) if mine else []), where
        assert f["view"]["board"] == normal(game.view(state, you)), where
        log = f["view"]["log"]
        # A sentence comes once per connection (docs/protocol.md, "log"):
        # where it is sent it is the record's.
        assert [(e["seat"], e.get("text", x)) for e, (_, _, x, _) in zip(log, t.log, strict=False)] \
            == [(s, x) for s, _, x, _ in t.log], where
        for e, (seat, move, _, _) in zip(log, t.log, strict=True):
            assert e["move"] in (move, None), where
            if e["move"] is None:
                assert game.public_move(state, seat, move, you) is None, where


def check_matches(room: RoomPlay, actions: list[dict[str, Any]]) -> None:
    """Each match a client saw end is what the engine makes of its seed and
    the stored moves, played without interruption."""
    assert len(room.match_overs) >= room.plan.matches
    game = get_game(room.game)
    options = game.check_options(actions[0]["options"])
    for version, seen in room.match_overs.items():
        start = max(i for i, a in enumerate(actions[: version + 1]) if a["t"] in ("create", "rematch"))
        match = Match.new(room.game, options, int(actions[start]["seed"]))
        for a in actions[start + 1: version + 1]:
            if a["t"] == "move":
                match = match.play(a["seat"], a["move"])
            elif a["t"] == "next_deal":
                match = match.next_deal()
        assert match.over, f"{room.game}: the replayed match is not over at version {version}"
        view = seen["view"]
        assert view["seed"] == match.seed
        assert view["totals"] == match.totals()
        assert view["match_winners"] == list(match.winners())
        assert [h["outcome"] for h in view["history"]] == [
            OutcomeView.model_validate(o.to_json()).model_dump(mode="json") for o in match.outcomes]


# ---- the test -------------------------------------------------------------------------------
async def setup(hub: Hub, rng: random.Random) -> None:
    base = hub.server.base
    games = {g["id"]: g for g in json.load(urllib.request.urlopen(base + "/api/games", timeout=10))}
    for plan in PLANS:
        body: dict[str, Any] = {"game": plan.game, "options": plan.options}
        if plan.bots:
            body["bots"] = {"level": "medium", "seats": "others"}
        answer = post(base, body)
        room = RoomPlay(plan, answer["room"])
        seats = games[plan.game]["seats"]
        ours = [answer["seat"]] if plan.bots else seats
        room.computers = tuple(s for s in seats if s not in ours)
        room.seats = [Seat(room, seat, random.Random(rng.random())) for seat in ours]
        hub.rooms.append(room)


@pytest.mark.slow
def test_kill_and_restart_while_playing_every_game(tmp_path: Path) -> None:
    database = tmp_path / "cardboard.db"
    server = Server({**ENV, "CARDBOARD_DATABASE": str(database)}, tmp_path / "server.log",
                    log_level="info")
    rng = random.Random(SEED)

    async def main() -> tuple[int, int]:
        hub = Hub(server)
        await start(hub)
        await setup(hub, rng)
        tasks = [asyncio.ensure_future(run_seat(hub, s)) for s in hub.seats]
        try:
            kills, terms = await asyncio.wait_for(coordinate(hub, rng), DEADLINE)
            await asyncio.gather(*tasks)
        finally:
            for t in tasks:
                t.cancel()
        assert not hub.failures, hub.failures[:5]
        assert hub.pick_kills >= PICK_KILLS and hub.bot_kills_mid_turn >= 1
        await stop(server)
        for room in hub.rooms:
            actions = record(database, room.id)
            check_frames(room, actions)
            check_matches(room, actions)
        assert "Traceback" not in server.log.read_text(), server.tail()
        return kills, terms

    with server:
        kills, terms = asyncio.run(main())
    assert kills >= KILLS and terms >= TERMS


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["ctrl-c", "sigterm"])
def test_ctrl_c_stops_the_server_and_its_thinking_processes_without_a_traceback(
        tmp_path: Path, sig: int) -> None:
    """Ctrl-C on ``make run`` reaches the server and its computer players'
    worker processes at once (one process group), as SIGTERM to the group
    does: the server shuts down cleanly, no worker prints a
    ``KeyboardInterrupt`` traceback and the server no ``BrokenProcessPool``
    (a break-it pass found one for SIGTERM)."""
    database = tmp_path / "rooms.db"
    log = tmp_path / "server.log"
    server = Server({"CARDBOARD_DATABASE": str(database), "CARDBOARD_BOT_PAUSE": "0",
                     "CARDBOARD_BOT_SECONDS": "0.05", "CARDBOARD_BOT_WORKERS": "2"},
                    log, log_level="info", group=True)
    with server:
        server.start()
        room = post(server.base, {"game": "romeo-and-juliet", "bots": {"level": "strong", "seats": "all"}})
        deadline = time.monotonic() + 60
        while len(record(database, room["room"])) < 6:  # the workers have thought
            assert time.monotonic() < deadline, server.tail()
            time.sleep(0.1)
        status = server.interrupt(sig=sig)
    text = log.read_text(errors="replace")
    assert status in (0, -sig), text[-3000:]
    assert SHUTDOWN_DONE in text
    assert "Traceback" not in text and "KeyboardInterrupt" not in text, text[-3000:]


def test_a_second_server_process_on_the_same_sqlite_file_refuses_to_start(tmp_path: Path) -> None:
    """Two processes on one SQLite file (``--workers 2`` without Redis) would
    each serve rooms the other has moved on: the second refuses to start and
    says why; once the first is killed (-9), a new one starts on the file."""
    env = {"CARDBOARD_DATABASE": str(tmp_path / "rooms.db")}
    first = Server(env, tmp_path / "first.log")
    second = Server(env, tmp_path / "second.log")
    with first, second:
        first.start()
        with pytest.raises(RuntimeError, match="in use by another server process"):
            second.start(timeout=30)
        assert "CARDBOARD_REDIS_URL" in second.tail()
        refusal = (tmp_path / "second.log").read_text(errors="replace")
        assert "Cardboard cannot start" in refusal and "Traceback" not in refusal, refusal
        # ... also by another path to the file (break-it pass)
        (tmp_path / "alias.db").symlink_to(tmp_path / "rooms.db")
        with Server({"CARDBOARD_DATABASE": str(tmp_path / "alias.db")}, tmp_path / "alias.log") as alias, \
                pytest.raises(RuntimeError, match="in use by another server process"):
            alias.start(timeout=30)
        first.kill()
        second.start()
        room = post(second.base, {"game": "get-stuck"})
        assert record(tmp_path / "rooms.db", room["room"])[0]["t"] == "create"


async def state_until(ws: ClientConnection, done: Any, seconds: float = 60.0) -> dict[str, Any]:
    """The first state frame on ``ws`` for which ``done(frame)`` is true."""
    async def read() -> dict[str, Any]:
        while True:
            frame: dict[str, Any] = json.loads(await ws.recv())
            assert frame["type"] != "error", frame
            if frame["type"] == "state" and done(frame):
                return frame
    return await asyncio.wait_for(read(), seconds)


def deals_reviewed(base: str, room_id: str) -> int:
    """How many deals of ``room_id``'s match have finished (its review)."""
    with urllib.request.urlopen(f"{base}/api/rooms/{room_id}/review", timeout=10) as r:
        return len(json.load(r)["deals"])


def test_rooms_of_computers_wait_for_their_spectators_across_a_kill(tmp_path: Path) -> None:
    """A room of computer players only whose spectator was watching when the
    server was killed (-9) is there when the spectator comes back, whether
    the kill came between deals or in a deal the restarted server played
    out alone (found by a break-it pass: both were freed at once, and the
    spectator got ``no_such_room``). ``CARDBOARD_BOT_ROOM_GRACE_SECONDS``
    is left at its default."""
    env = {**ENV, "CARDBOARD_DATABASE": str(tmp_path / "rooms.db"),
           "CARDBOARD_BOT_BETWEEN_DEALS": "120", "CARDBOARD_BOT_PAUSE": "0.05"}
    server = Server(env, tmp_path / "server.log")
    game = {"game": "get-stuck", "options": {"deals": 4}, "bots": {"level": "easy", "seats": "all"}}

    async def main() -> None:
        server.start()
        between, playing = post(server.base, game)["room"], ""
        async with connect(f"{server.ws_base}/ws/{between}") as first:
            over = await state_until(first, lambda f: f["phase"] == "deal_over")
            playing = post(server.base, game)["room"]
            async with connect(f"{server.ws_base}/ws/{playing}") as second:
                mid = await state_until(second, lambda f: f["version"] >= 3)
                assert mid["phase"] == "playing"
                server.kill()
        server.env["CARDBOARD_BOT_PAUSE"] = "0"
        server.start()
        # The restarted server plays the second room's deal out, nobody watching.
        deadline = time.monotonic() + 60
        while deals_reviewed(server.base, playing) < 1:
            assert time.monotonic() < deadline, server.tail()
            await asyncio.sleep(0.1)
        await asyncio.sleep(1.0)  # what freed it came at once
        async with connect(f"{server.ws_base}/ws/{between}") as back:
            again = await state_until(back, lambda f: True)
            assert (again["phase"], again["version"]) == ("deal_over", over["version"])
        async with connect(f"{server.ws_base}/ws/{playing}") as back:
            again = await state_until(back, lambda f: True)
            assert again["phase"] == "deal_over" and again["version"] > mid["version"]

    with server:
        asyncio.run(main())
    assert "Traceback" not in server.log.read_text(), server.tail()
