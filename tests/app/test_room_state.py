"""Rooms without a websocket: JSON round trip, phases, the store and the
idle sweep."""

from __future__ import annotations

import asyncio
import gc
import json
from dataclasses import replace
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from roomtest import connect, make_client, new_room, opened, rebuilt
from starlette.websockets import WebSocketDisconnect

from app.lobby import Lobby, LobbyFull
from app.rooms import Room, RoomError
from app.settings import Settings
from app.store import MemoryRoomStore, RoomStore
from app.table import EARLIER_KEPT, BadRecord, Table
from engine.registry import GAMES


class FakeConn:
    """A connection that keeps the frames pushed to it."""

    def __init__(self) -> None:
        self.seat: str | None = None
        self.frames: list[dict] = []

    def push(self, text: str) -> None:
        self.frames.append(json.loads(text))


def seated_room(game: str = "get-stuck", seed: int | None = 5,
                **options: object) -> tuple[Room, list[FakeConn]]:
    raw = dict(options)
    if seed is not None:
        raw["seed"] = seed
    room = Room.create(game, raw)
    conns = []
    for i, _ in enumerate(room.seats):
        c = FakeConn()
        room.attach(c)
        room.join(c, None, f"P{i}")
        conns.append(c)
    return room, conns


def play_first_legal(room: Room, conns: list[FakeConn], moves: int) -> None:
    for _ in range(moves):
        if room.phase != "playing":
            return
        seat = room.game.to_move(room.match.state)[0]
        conn = next(c for c in conns if c.seat == seat)
        room.move(conn, room.game.legal_moves(room.match.state, seat)[0], room.version)


def everyone_ready(room: Room, conns: list[FakeConn]) -> None:
    """Every seat says it is ready between deals, on the state the deal ended
    on: each press is stored, the last deals the next deal (or match)."""
    v = room.version
    for c in conns:
        room.ready(c, v)
    assert room.version == v + len(conns) and room.phase == "playing"


def round_trip(room: Room) -> Room:
    return rebuilt(room)


def record(room: Room) -> list[dict]:
    stored = asyncio.run(room.journal.load(room.id))
    assert stored is not None
    return [e.action for e in stored.entries]


def seat_view(room: Room, seat: str | None) -> dict:
    """The state of ``seat`` (``None``: a spectator) without ``away_since``
    and ``handover_at``: presence is not stored, so a rebuilt room's people
    are away since it was rebuilt."""
    frame = json.loads(room.state_text(seat))
    for s in frame["view"]["seats"]:
        s.pop("away_since", None)
        s.pop("handover_at", None)
    return dict(frame)


def spectator_view(room: Room) -> dict:
    return seat_view(room, None)


@pytest.mark.parametrize("game", list(GAMES))
def test_json_round_trip_mid_deal(game: str) -> None:
    room, conns = seated_room(game)
    play_first_legal(room, conns, 5)
    for c in conns:
        room.detach(c)  # a saved room has no connections
    back = round_trip(room)
    assert back.table == room.table
    assert back.match == room.match
    assert spectator_view(back) == spectator_view(room)
    for seat in room.seats:
        assert seat_view(back, seat) == seat_view(room, seat)


def test_json_round_trip_across_deals_and_rematch() -> None:
    room, conns = seated_room("get-stuck", seed=9)
    play_first_legal(room, conns, 200)
    assert room.phase == "deal_over"
    v = room.version
    room.ready(conns[0], v)
    assert room.version == v + 1 and room.phase == "deal_over"  # the other seat is not ready yet
    assert room.table.ready == (conns[0].seat,)
    assert round_trip(room).table == room.table  # a press is stored
    room.ready(conns[1], v)
    assert room.version == v + 2 and room.phase == "playing" and room.table.ready == ()
    play_first_legal(room, conns, 3)
    back = round_trip(room)
    assert back.table == room.table
    assert [e.text for e in back.log] == [e.text for e in room.log] and len(back.log) == 3
    play_first_legal(room, conns, 200)
    assert room.phase == "match_over"
    everyone_ready(room, conns)
    back = round_trip(room)
    assert back.table == room.table
    assert back.rematches == 1 and back.deal_started == room.version
    # The finished match is remembered across the round trip.
    assert len(back.table.earlier) == 1 and back.table.earlier == room.table.earlier


def test_resume_after_round_trip() -> None:
    room, conns = seated_room()
    token = next(f["token"] for f in conns[0].frames if f["type"] == "joined")
    back = round_trip(room)
    assert all(not h.connected for h in back.holders.values())
    c = FakeConn()
    back.attach(c)
    back.resume(c, token)
    assert c.seat == conns[0].seat
    assert back.version == room.version


def test_a_seat_whose_token_another_process_replaced_is_given_up_with_a_word() -> None:
    """Two server processes' rooms on one storage: a connection seated on the
    second with the seat's token loses the seat once that process reads the
    first's ``new_token``, and is told ``replaced`` (break-it pass: it kept
    the seat on a void token, or lost a freed one without a word)."""
    room, conns = seated_room()
    token = next(f["token"] for f in conns[0].frames if f["type"] == "joined")
    other = round_trip(room)  # the same room, loaded by another process
    elsewhere = FakeConn()
    other.attach(elsewhere)
    other.resume(elsewhere, token)
    assert elsewhere.seat == conns[0].seat
    room.new_token(conns[0])
    assert asyncio.run(other.catch_up()) == 1
    assert elsewhere.seat is None and conns[0].seat not in other.seat_conn
    told = [f for f in elsewhere.frames if f["type"] == "error"]
    assert [f["code"] for f in told] == ["replaced"]
    assert "no longer yours" in told[0]["message"]
    assert elsewhere.frames[-1]["type"] == "state" and elsewhere.frames[-1]["you"] is None
    # A seat whose token stays (a move elsewhere) keeps its connection here.
    second = next(f["token"] for f in conns[1].frames if f["type"] == "joined")
    again = FakeConn()
    other.attach(again)
    other.resume(again, second)
    play_first_legal(room, conns, 1)
    assert asyncio.run(other.catch_up()) == 1 and again.seat == conns[1].seat


def test_replay_rejects_a_bad_record() -> None:
    room, _ = seated_room()
    data = record(room)
    bad_seat = [*data, {"t": "join", "seat": "nowhere", "name": "x", "token_hash": "t"}]
    with pytest.raises(BadRecord, match="nowhere"):
        Table.replay(bad_seat)
    bad_game = [{**data[0], "game": "no-such-game"}, *data[1:]]
    with pytest.raises(BadRecord, match="no-such-game"):
        Table.replay(bad_game)
    with pytest.raises(BadRecord, match="creation"):
        Table.replay(data[1:])
    with pytest.raises(BadRecord, match="unknown action"):
        Table.replay([*data, {"t": "teleport"}])


def test_phases() -> None:
    room = Room.create("get-stuck", {"seed": 1})
    assert room.phase == "waiting"
    a, b = FakeConn(), FakeConn()
    room.attach(a)
    room.attach(b)
    room.join(a, "red", "Ann")
    assert room.phase == "waiting"
    room.join(b, "black", "Bob")
    assert room.phase == "playing"
    play_first_legal(room, [a, b], 200)
    assert room.phase == "deal_over"
    room.leave(b)
    assert room.phase == "waiting"


def test_refused_action_changes_nothing() -> None:
    room, (a, b) = seated_room()
    before = room.table
    mover = a if a.seat in room.game.to_move(room.match.state) else b
    for action in (
        lambda: room.move(mover, "z9", room.version),
        lambda: room.move(mover, "a1" if "a1" not in room.game.legal_moves(
            room.match.state, mover.seat or "") else "g7", room.version),
        lambda: room.next_deal(a, room.version),
        lambda: room.leave(a),
        lambda: room.join(FakeConn(), None, "Cy"),
        lambda: room.resume(FakeConn(), "nope"),
    ):
        with pytest.raises(RoomError):
            action()
        assert room.table == before


def test_rematch_seed_without_seed_option_is_random() -> None:
    room, conns = seated_room("get-stuck", seed=None)
    assert room.seed_option is None
    play_first_legal(room, conns, 200)
    everyone_ready(room, conns)
    play_first_legal(room, conns, 200)
    old = room.match.seed
    everyone_ready(room, conns)
    assert room.match.seed != old and 0 <= room.match.seed < 2**63


def test_memory_store() -> None:
    store: RoomStore = MemoryRoomStore()
    room = Room.create("get-stuck", {})
    assert store.get(room.id) is None and len(store) == 0
    store.add(room)
    assert store.get(room.id) is room and store.ids() == [room.id] and len(store) == 1
    store.remove(room.id)
    store.remove(room.id)
    assert store.get(room.id) is None and len(store) == 0


def test_lobby_limits() -> None:
    async def run() -> None:
        lobby = Lobby(Settings(games=("get-stuck",), max_rooms=1))
        with pytest.raises(KeyError, match="get-stuck-4"):
            await lobby.create_room("get-stuck-4", {})
        (await lobby.create_room("get-stuck", {})).visited = True
        with pytest.raises(LobbyFull):
            await lobby.create_room("get-stuck", {})
    asyncio.run(run())


def test_the_room_limit_holds_for_requests_at_once(tmp_path: Path) -> None:
    """Twenty creations at once against ``max_rooms=5`` on a SQLite file (its
    writes wait on a thread, so the requests interleave): five rooms, fifteen
    refusals. Each used to pass the count before any was stored."""
    async def run() -> None:
        lobby = Lobby(Settings(database=str(tmp_path / "cb.db"), max_rooms=5))
        await lobby.open()
        try:
            made = await asyncio.gather(*(lobby.create_room("get-stuck", {}) for _ in range(20)),
                                        return_exceptions=True)
            rooms = [r for r in made if isinstance(r, Room)]
            assert len(rooms) == 5 and await lobby.storage.count_open() == 5
            assert all(isinstance(r, LobbyFull) for r in made if not isinstance(r, Room)), made
        finally:
            await lobby.close()
    asyncio.run(run())


def test_sweep_frees_idle_rooms_only() -> None:
    async def run() -> None:
        lobby = Lobby(Settings(room_idle_hours=1))
        idle = await lobby.create_room("get-stuck", {})
        busy = await lobby.create_room("get-stuck", {})
        busy.attach(FakeConn())
        assert idle.idle_since is not None and busy.idle_since is None
        idle.idle_since = 1000.0  # exact values: no float rounding at the boundary
        assert await lobby.sweep(4599.0) == []
        assert await lobby.sweep(4600.0) == [idle.id]
        assert idle.closed and lobby.store.get(idle.id) is None
        assert lobby.store.get(busy.id) is busy
    asyncio.run(run())


def test_room_idle_again_after_the_last_connection_closes() -> None:
    room, conns = seated_room()
    for c in conns:
        assert room.idle_since is None
        room.detach(c, now=1000.0)
    assert room.idle_since == 1000.0
    assert all(not h.connected for h in room.holders.values())


def test_swept_room_is_gone_for_clients() -> None:
    with make_client(Settings(room_idle_hours=1)) as c:
        room = new_room(c)
        lobby = c.app.state.lobby  # type: ignore[attr-defined]
        with connect(c, room):
            assert c.portal.call(lobby.sweep, 1e12) == []  # type: ignore[union-attr]
        assert c.portal.call(lobby.sweep, 1e12) == [room]  # type: ignore[union-attr]
        assert c.get(f"/r/{room}").status_code == 404
        with opened(c, room) as peer:
            assert peer.recv()["code"] == "no_such_room"
            with pytest.raises(WebSocketDisconnect):
                peer.recv()


def test_lifespan_sweeper_runs(client: TestClient) -> None:
    # the sweeper task is started by the lifespan and stopped cleanly at exit
    assert client.get("/healthz").status_code == 200


def test_a_refused_action_leaves_no_garbage_cycle() -> None:
    """A refusal raised out of the commit point (here a forced pass at a seat
    no person plays) leaves nothing for the garbage collector: the error and
    the frame its traceback holds are freed at once by reference counting.
    Before, every refusal was a cycle: at 500 rooms, 5,000 objects in 5 s that
    the collector had to find (and, once frozen, kept until its sweep)."""
    async def scenario() -> int:
        room = Room.create("get-stuck", {"seed": 3})
        await room.commit()
        seat = room.game.to_move(room.match.state)[0]
        gc.collect()
        gc.disable()
        try:
            for _ in range(5):
                with pytest.raises(RoomError, match="no person plays"):
                    await room.act(lambda: room.forced_pass(seat, room.version))
            return gc.collect()
        finally:
            gc.enable()
    assert asyncio.run(scenario()) == 0


def test_the_log_in_a_state_frame_is_the_deal_s_log_at_every_move() -> None:
    """A state frame's ``log`` is this deal's log, the entries before
    ``texts_from`` without their sentence, whatever frames came before it
    (its start is encoded once and kept: ``Room._log_text``): broadcasts
    after each move, a full state now and then, a frame of an older
    ``texts_from``, and a new deal."""
    room, conns = seated_room("get-stuck-4", seed=11)

    def expected(texts_from: int) -> list[dict]:
        return [{"seat": s, "move": m, "text": t, "by": b} if i >= texts_from
                else {"seat": s, "move": m}
                for i, (s, m, t, b) in enumerate(room.table.log)]

    checked = 0
    for deal in range(2):
        if deal:
            everyone_ready(room, conns)
        step = 0
        while room.phase == "playing":
            play_first_legal(room, conns, 1)
            step += 1
            n = len(room.table.log)
            for texts_from in (n - 1, n, 0 if step % 5 == 0 else n, max(0, n - 3)):
                frame = json.loads(room.state_frames({None, "N"}, texts_from)["N"])
                assert frame["view"]["log"] == expected(texts_from), (deal, step, texts_from)
                checked += 1
    assert checked > 40
    # Another log as long as the one kept (a room's table replaced) is not
    # taken for it.
    n = len(room.table.log)
    assert n > 1
    room.state_frames({"N"}, n)
    room.table = replace(room.table, log=tuple(reversed(room.table.log)))
    assert json.loads(room.state_frames({"N"}, n)["N"])["view"]["log"] == expected(n)


def test_a_table_evolved_is_the_table_replaced() -> None:
    """``app.table._evolve``, the quicker ``dataclasses.replace`` a move uses,
    changes the fields named and keeps every other one."""
    import dataclasses

    from app.table import _evolve

    room, _ = seated_room("get-stuck-4", seed=3)
    table = room.table
    for f in dataclasses.fields(table):
        value = (getattr(table, f.name), "changed")
        assert _evolve(table, **{f.name: value}) == dataclasses.replace(table, **{f.name: value})
        assert getattr(_evolve(table, **{f.name: value}), f.name) == value
    assert _evolve(table) == table and _evolve(table) is not table
    with pytest.raises(KeyError):
        _evolve(table, no_such_field=1)


def test_state_frames_are_ascii_and_read_back_as_what_they_say() -> None:
    """A state frame is written in ASCII, every other character a JSON
    escape (docs/protocol.md, "The room websocket"): names with accents and
    beyond the Basic Multilingual Plane, and the suit symbols of the log's
    sentences and of a deal's outcome, read back exactly."""
    room = Room.create("get-stuck", {"seed": 5})
    names = ["Zoë", "Ånne 🃏"]
    conns = []
    for name in names:
        c = FakeConn()
        room.attach(c)
        room.join(c, None, name)
        conns.append(c)
    frames = 0
    while room.phase == "playing":
        play_first_legal(room, conns, 1)
        for seat in (None, *room.seats):
            text = room.state_text(seat)
            assert text.isascii()
            frame = json.loads(text)
            assert [s["name"] for s in frame["view"]["seats"]] == names
            assert frame["view"]["log"][-1]["text"] == room.table.log[-1][2]
            frames += 1
    assert any(not t.isascii() for _, _, t, _ in room.table.log)  # the sentences name suits
    outcome = json.loads(room.state_text(None))["view"]["outcome"]
    assert outcome is not None and outcome == room.match.outcomes[-1].to_json()
    assert frames > 10


def test_the_state_after_a_resume_carries_every_sentence() -> None:
    """A seat taken back (``resume``) is told of it by a state whose log
    carries every entry's sentence (docs/protocol.md, "log"), while the
    others get only the new ones; the state after that is short again."""
    room, conns = seated_room("get-stuck", seed=5)
    play_first_legal(room, conns, 4)
    token = next(f["token"] for f in conns[0].frames if f["type"] == "joined")
    room.detach(conns[0])
    back = FakeConn()
    room.attach(back)
    play_first_legal(room, [back, *conns[1:]], 1)  # a move while the seat is away: black's, or none
    other = conns[1].frames[-1]
    room.resume(back, token)
    log = back.frames[-1]["view"]["log"]
    assert back.frames[-2]["type"] == "joined" and len(log) >= 4
    assert all("text" in e for e in log), log
    assert conns[1].frames[-1] is not other  # the others were told too
    assert [e for e in conns[1].frames[-1]["view"]["log"] if "text" in e] == []
    play_first_legal(room, [back, *conns[1:]], 1)
    assert [e for e in back.frames[-1]["view"]["log"] if "text" in e] == [back.frames[-1]["view"]["log"][-1]]


def test_a_table_remembers_its_last_earlier_matches() -> None:
    """Each rematch adds the finished match to ``Table.earlier`` (its id,
    totals and winners), keeping the last ``EARLIER_KEPT``, oldest first."""
    table = Table.new(Table.create_action("r1", "get-stuck", {}, 5, 0.0, match_id="m0"))
    for n in range(1, EARLIER_KEPT + 6):
        table = table.apply({"t": "rematch", "seed": n, "match": f"m{n}", "began": float(n)})
    assert len(table.earlier) == EARLIER_KEPT
    assert [e.match_id for e in table.earlier] == [f"m{n}" for n in range(5, EARLIER_KEPT + 5)]
    assert [e.number for e in table.earlier] == list(range(6, EARLIER_KEPT + 6))
    assert table.match_id == f"m{EARLIER_KEPT + 5}"
    assert all(e.totals == (("red", 0), ("black", 0)) and e.winners == () for e in table.earlier)


@pytest.mark.parametrize(("here", "there"), [("ann", "Ann"), ("Ann", "ann"), ("Zoe", "Ｚoe")])
def test_spectator_names_are_listed_alike_on_every_process(here: str, there: str) -> None:
    """Two names that differ only by case or width (the same ``name_key``),
    one watching through this process and one through another: every
    process lists them in one order (break-it pass: each listed its own
    first, and at the 20-name cut the two showed different names)."""
    room, _ = seated_room()
    watcher = FakeConn()
    room.attach(watcher)
    room.watch(watcher, here)
    room.remote_spectators = (there,)
    assert room.spectators_view() == {"count": 2, "names": sorted([here, there])}
