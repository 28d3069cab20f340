"""Computer players over the websocket: ``add_bot`` and ``remove_bot``, every
refusal in the protocol's order, their moves, handing an absent player's seat
over and back, clean-up of rooms without people, and no CPU spent for rooms
nobody is in (``docs/protocol.md``, "Computer players")."""

from __future__ import annotations

import asyncio
import contextlib
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from bottest import (
    FAST,
    WAIT,
    Recorder,
    clock_of,
    eventually,
    lobby_of,
    look,
    make_bot_client,
    new_bot_room,
    playing_until,
    quiet_at,
    recorder_of,
    seat_of,
    until,
    watch,
)
from fastapi.testclient import TestClient
from pydantic import ValidationError
from roomtest import Peer, new_room, rebuilt

from app.bots import Bots, Thinker
from app.main import create_app
from app.protocol import BOT_LEVELS, DEFAULT_LEVEL
from app.rooms import Room
from app.settings import Settings
from app.store import MemoryRoomStore
from app.table import BadRecord, Table, computer_seats
from engine.base import OptionError
from engine.bots import LEVELS, choose_move


@pytest.fixture
def client() -> Iterator[TestClient]:
    with make_bot_client() as c:
        yield c


def sit(peer: Peer, seat: str, name: str = "Ann") -> dict[str, Any]:
    """``peer`` takes ``seat`` (skipping the states queued before); returns
    its first state at that seat."""
    peer.send(type="join", seat=seat, name=name)
    while peer.recv()["type"] != "joined":
        pass
    return until(peer, lambda s: s["you"] == seat)


def deal_over(state: dict[str, Any]) -> bool:
    return state["phase"] in ("deal_over", "match_over")


def at(version: int) -> Callable[[dict[str, Any]], bool]:
    """A condition for :func:`until`: the state of ``version``."""
    return lambda s: s["version"] == version


# ---- add_bot / remove_bot ------------------------------------------------------------

def test_add_bot_seats_a_computer_player_that_plays(client: TestClient) -> None:
    room = new_room(client, "get-stuck", seed=3)
    with watch(client, room) as ann, watch(client, room) as spectator:
        sit(ann, "red")
        spectator.state()
        ann.send(type="add_bot", seat="black", level="strong")
        s = ann.state()
        assert s["version"] == 2 and s["phase"] == "playing"
        assert seat_of(s, "black") == {"seat": "black", "name": "Alan (strong)", "kind": "computer",
                                       "connected": True, "level": "strong"}
        assert spectator.state()["view"]["seats"] == s["view"]["seats"]
        end = playing_until(ann, deal_over)
        log = end["view"]["log"]
        assert {e["seat"] for e in log} == {"red", "black"}
    rec = recorder_of(client)
    assert rec.searches and not rec.illegal()
    assert {(x.game_id, x.seat, x.level, x.seconds) for x in rec.searches} == {
        ("get-stuck", "black", "strong", FAST.bot_seconds)}
    assert [e["move"] for e in log if e["seat"] == "black"] == [x.move for x in rec.searches]
    assert lobby_of(client).bots.refused == 0


def test_a_room_is_created_with_a_level_per_computer_player(client: TestClient) -> None:
    """``bots.levels`` gives some seats another level than ``bots.level``
    (a deal played again with the levels it had); a seat there that
    ``bots.seats`` does not name, or an unknown level, is refused."""
    bots = {"level": "easy", "seats": ["E", "S", "W"], "levels": {"S": "strong"}}
    body = {"game": "get-stuck-4", "bots": bots}
    r = client.post("/api/rooms", json=body)
    assert r.status_code == 201, r.text
    with watch(client, r.json()["room"]) as ann:
        seats = ann.last["view"]["seats"] if ann.last else []
        levels = {s["seat"]: s.get("level") for s in seats}
        assert levels == {"N": None, "E": "easy", "S": "strong", "W": "easy"}
    for other, words in (({"N": "strong"}, "bots.levels: seat 'N' is not one of bots.seats"),
                         ({"S": "genius"}, 'the level must be one of easy, medium, strong, not "genius"')):
        bots["levels"] = other
        r = client.post("/api/rooms", json=body)
        assert r.status_code == 422 and words in r.json()["detail"], r.text


def test_the_default_level_is_medium(client: TestClient) -> None:
    """Missing or null, in ``bots`` as in ``add_bot``; a level of another type
    is told which levels there are."""
    for level in (None, 5):
        r = client.post("/api/rooms", json={"game": "stucco", "bots": {"level": level}})
        if level is None:
            assert r.status_code == 201, r.text
            with watch(client, r.json()["room"]) as ann:
                assert ann.last is not None and seat_of(ann.last, "south")["level"] == "medium"
        else:
            assert r.json() == {"detail": "bots.level: the level must be one of easy, medium, strong,"
                                          " not 5"}, r.text
    room = new_room(client, "get-stuck-4")
    with watch(client, room) as ann:
        sit(ann, "N")
        ann.send(type="add_bot", seat="S")
        s = ann.state()
        assert seat_of(s, "S")["level"] == "medium" and seat_of(s, "S")["name"] == "Grace (medium)"
        assert s["phase"] == "waiting"


def test_remove_bot_between_deals_frees_the_seat(client: TestClient) -> None:
    room = new_room(client, "get-stuck", seed=4)
    with watch(client, room) as ann, watch(client, room) as bob:
        sit(ann, "red")
        bob.state()
        ann.send(type="add_bot", seat="black", level="easy")
        end = playing_until(ann, deal_over)
        assert end["phase"] == "deal_over"
        until(bob, lambda s: s["version"] == end["version"])
        ann.send(type="remove_bot", seat="black")
        s = ann.state()
        assert s["version"] == end["version"] + 1 and s["phase"] == "waiting"
        assert seat_of(s, "black") == {"seat": "black", "name": None, "kind": None, "connected": False}
        bob.state()
        sit(bob, "black", "Bob")
        assert until(ann, lambda s: seat_of(s, "black")["name"] == "Bob")["phase"] == "deal_over"


def test_people_start_the_next_deal_where_a_person_sits(client: TestClient) -> None:
    room = new_room(client, "get-stuck", seed=6)
    live = lobby_of(client).store.get(room)
    assert live is not None
    with watch(client, room) as ann:
        sit(ann, "red")
        ann.send(type="add_bot", seat="black")
        end = playing_until(ann, deal_over)
        # The computer players look at the finished deal and leave it to Ann.
        quiet_at(client, live, end["version"])
        assert not [k for k in lobby_of(client).bots.tasks if k[0] == room]
        assert ann.probe()["version"] == end["version"]
        ann.send(type="next_deal", version=end["version"])
        s = until(ann, lambda s: s["view"]["deal"] == 2)
        assert s["phase"] == "playing"


# ---- refusals, in the protocol's order -----------------------------------------------

@contextlib.contextmanager
def mixed_table(client: TestClient) -> Iterator[tuple[Peer, Peer, Peer]]:
    """A Get Stuck for Four room with Ann at N, Bob at E, an easy computer
    player at S and W free (so it waits, and nothing moves). Yields Ann, Bob
    and a spectator, each with the latest state."""
    room = new_room(client, "get-stuck-4", seed=2)
    with watch(client, room) as ann, watch(client, room) as bob, watch(client, room) as spec:
        sit(ann, "N")
        v = sit(bob, "E", "Bob")["version"] + 1
        ann.send(type="add_bot", seat="S", level="easy")
        for p in (ann, bob, spec):
            assert seat_of(until(p, lambda s: s["version"] == v), "S")["kind"] == "computer"
        yield ann, bob, spec


def refused(peer: Peer, others: list[Peer], frame: dict[str, Any], code: str) -> dict[str, Any]:
    """Send ``frame`` from ``peer``: expect ``code``, then the same state as
    before; nobody else hears of it. Returns the error."""
    before = peer.last
    peer.send(**frame)
    err = peer.recv()
    assert err["type"] == "error" and err["code"] == code, err
    if code != "bad_field":
        assert peer.state() == before
    for other in others:
        assert other.probe() == other.last
    assert peer.probe() == before
    return err


@pytest.mark.parametrize(("frame", "code", "says"), [
    ({"type": "add_bot", "seat": "W", "level": "grandmaster"}, "bad_field", "level"),
    ({"type": "add_bot", "seat": "W", "level": 3}, "bad_field", "level"),
    ({"type": "add_bot", "level": "easy"}, "bad_field", "seat"),
    ({"type": "add_bot", "seat": 5}, "bad_field", "seat"),
    ({"type": "remove_bot"}, "bad_field", "seat"),
    ({"type": "add_bot", "seat": "X"}, "bad_seat", "N, E, S, W"),
    ({"type": "remove_bot", "seat": "X"}, "bad_seat", "N, E, S, W"),
    ({"type": "remove_bot", "seat": "W"}, "bad_seat", "free"),
    ({"type": "add_bot", "seat": "E"}, "seat_taken", "Bob"),
    ({"type": "add_bot", "seat": "S"}, "seat_taken", "computer"),
    ({"type": "remove_bot", "seat": "E"}, "seat_taken", "Bob"),
])
def test_refusals_of_a_seated_player(client: TestClient, frame: dict[str, Any], code: str,
                                     says: str) -> None:
    with mixed_table(client) as (ann, bob, spec):
        err = refused(ann, [bob, spec], frame, code)
        assert says in err["message"]


@pytest.mark.parametrize(("frame", "code"), [
    ({"type": "add_bot", "seat": "X"}, "bad_seat"),       # bad_seat before not_seated
    ({"type": "add_bot", "seat": "E"}, "seat_taken"),     # seat_taken before not_seated
    ({"type": "add_bot", "seat": "W"}, "not_seated"),
    ({"type": "remove_bot", "seat": "S"}, "not_seated"),
])
def test_refusals_of_a_spectator(client: TestClient, frame: dict[str, Any], code: str) -> None:
    with mixed_table(client) as (ann, bob, spec):
        refused(spec, [ann, bob], frame, code)


def test_a_computer_player_stays_for_the_whole_deal(client: TestClient) -> None:
    with mixed_table(client) as (ann, bob, spec):
        ann.send(type="add_bot", seat="W", level="easy")
        assert ann.state()["phase"] == "playing"
        for p in (bob, spec):
            until(p, lambda s: s["phase"] == "playing")
        # Spectator first (not_seated comes before not_playing), then a player.
        spec.send(type="remove_bot", seat="W")
        assert until_error(spec)["code"] == "not_seated"
        ann.send(type="remove_bot", seat="W")
        err = until_error(ann)
        assert err["code"] == "not_playing"
        assert seat_of(ann.state(), "W")["kind"] == "computer"


def until_error(peer: Peer) -> dict[str, Any]:
    """Skip states (the computer players keep playing) up to the next error."""
    while True:
        frame = peer.recv()
        if frame["type"] == "error":
            return frame


# ---- handing an absent player's seat to a computer, and back --------------------------

@contextlib.contextmanager
def handed_over(client: TestClient, seed: int) -> Iterator[tuple[str, Peer, str]]:
    """A Get Stuck room where Bob (black) went away mid-deal and Ann (red)
    handed his seat to an easy computer player once allowed (version 3).
    Yields the room id, Ann's peer and Bob's token."""
    room = new_room(client, "get-stuck", seed=seed)
    with watch(client, room) as ann:
        sit(ann, "red")
        with watch(client, room) as bob:
            sit(bob, "black", "Bob")
            token = bob.token
            assert token is not None
            assert until(ann, lambda s: s["phase"] == "playing")["version"] == 2
        gone = until(ann, lambda s: not seat_of(s, "black")["connected"])
        away = seat_of(gone, "black")
        assert away == {"seat": "black", "name": "Bob", "kind": "human", "connected": False,
                        "away_since": away["away_since"],
                        "handover_at": away["away_since"] + FAST.handover_seconds}
        assert abs(away["away_since"] - time.time()) < WAIT
        assert gone["version"] == 2  # presence only
        early = ann_send_until_error(ann, {"type": "add_bot", "seat": "black", "level": "easy"})
        assert early["code"] == "seat_taken" and "away for 0 seconds" in early["message"]
        clock = clock_of(client)
        clock.advance(1)
        later = ann_send_until_error(ann, {"type": "add_bot", "seat": "black", "level": "easy"})
        assert "away for 1 second; the seat can be handed to a computer player after 120 seconds" \
            in later["message"]
        # The handover notice waits on the clock; past the handover time it is sent.
        eventually(lambda: clock.sleeping == 1, "the handover notice is scheduled")
        clock.advance(FAST.handover_seconds + 1)
        due = until(ann, lambda s: seat_of(s, "black").get("handover") is True)
        assert due["version"] == 2  # the notice changes nothing but the seat's flag
        assert "handover_at" not in seat_of(due, "black")  # the time has come
        ann.send(type="add_bot", seat="black", level="easy")
        handed = until(ann, lambda s: s["version"] == 3)
        assert seat_of(handed, "black") == {"seat": "black", "name": "Alan (easy)", "kind": "computer",
                                            "connected": True, "level": "easy", "stand_in_for": "Bob"}
        yield room, ann, token


def test_an_absent_players_seat_is_handed_over_and_back(client: TestClient) -> None:
    with handed_over(client, seed=8) as (room, ann, token):
        # The table plays on: the computer moves for black, Ann for red.
        played = playing_until(ann, lambda s: sum(e["seat"] == "black" for e in s["view"]["log"]) >= 2
                               or deal_over(s))
        assert played["phase"] == "playing" and played["to_move"] == ["red"]
        with watch(client, room) as bob:
            bob.send(type="resume", token=token)
            assert bob.joined()["seat"] == "black"
            # Black is not awaited: Bob gets his seat back at once.
            mine = until(bob, lambda s: s["you"] == "black")
            assert mine["version"] == played["version"] + 1
            assert seat_of(mine, "black") == {"seat": "black", "name": "Bob", "kind": "human",
                                              "connected": True}
            # The log names who made each move then: the computer that stood in for Bob,
            # though the seat is Bob's again (each entry's sentence and `by` come once).
            by = [(e["seat"], e["by"]) for e in mine["view"]["log"]]
            assert by and set(by) == {("red", "Ann"), ("black", "Alan (easy)")}
            red = until(ann, lambda s: s["version"] == mine["version"])
            assert red["view"]["seats"] == mine["view"]["seats"]
            ann.send(type="move", move=red["legal_moves"][0], version=red["version"])
            turn = until(bob, lambda s: s["version"] == mine["version"] + 1)
            if turn["phase"] == "playing":
                assert turn["to_move"] == ["black"] and turn["legal_moves"]
                bob.send(type="move", move=turn["legal_moves"][0], version=turn["version"])
                last = until(bob, lambda s: s["version"] == turn["version"] + 1)["view"]["log"][-1]
                assert last["seat"] == "black" and last["move"] == turn["legal_moves"][0]
                assert last["by"] == "Bob"
    assert lobby_of(client).bots.refused == 0


class Gate:
    """``choose_move`` (in a worker thread) that first waits until ``open`` is
    set (at first only if ``is_open``); ``waiting`` is set once a search waits."""

    def __init__(self, is_open: bool = True) -> None:
        self.open = threading.Event()
        if is_open:
            self.open.set()
        self.waiting = threading.Event()

    def __call__(self, game_id: str, state: Any, seat: str, level: str, seconds: float, seed: int) -> str:
        if not self.open.is_set():
            self.waiting.set()
            assert self.open.wait(60)
        return choose_move(game_id, state, seat, level, seconds, seed)


def test_a_computer_finishes_its_turn_before_handing_the_seat_back() -> None:
    gate = Gate()
    with make_bot_client(choose=gate) as client, handed_over(client, seed=10) as (room, ann, token):
        red = playing_until(ann, lambda s: bool(s["legal_moves"]))
        gate.open.clear()
        ann.send(type="move", move=red["legal_moves"][0], version=red["version"])
        thinking = until(ann, lambda s: s["version"] == red["version"] + 1)
        assert thinking["to_move"] == ["black"] and gate.waiting.wait(WAIT)
        with watch(client, room) as bob:
            bob.send(type="resume", token=token)
            assert bob.joined()["seat"] == "black"
            waiting = until(bob, lambda s: s["you"] == "black")
            # Still the computer's turn: Bob is back but may not move yet.
            assert waiting["version"] == thinking["version"] and waiting["to_move"] == ["black"]
            assert waiting["legal_moves"] == [] and seat_of(waiting, "black")["stand_in_for"] == "Bob"
            bob.send(type="move", move="a1", version=waiting["version"])
            err = until_error(bob)
            assert err["code"] == "not_your_turn" and "next turn" in err["message"]
            gate.open.set()
            back = until(bob, lambda s: s["version"] == thinking["version"] + 1)
            assert back["view"]["log"][-1]["seat"] == "black"  # the computer's move
            assert seat_of(back, "black") == {"seat": "black", "name": "Bob", "kind": "human",
                                              "connected": True}
            assert back["phase"] != "playing" or back["to_move"] == ["red"]
    assert lobby_of(client).bots.refused == 0


def ann_send_until_error(peer: Peer, frame: dict[str, Any]) -> dict[str, Any]:
    peer.send(**frame)
    return until_error(peer)


def test_a_seat_is_handed_over_only_mid_deal(client: TestClient) -> None:
    room = new_room(client, "get-stuck", seed=9)
    with watch(client, room) as ann:
        sit(ann, "red")
        ann.send(type="add_bot", seat="black", level="easy")
        end = playing_until(ann, deal_over)
        ann.send(type="remove_bot", seat="black")
        with watch(client, room) as bob:
            sit(bob, "black", "Bob")
        until(ann, lambda s: seat_of(s, "black")["name"] == "Bob" and not seat_of(s, "black")["connected"])
        clock_of(client).advance(FAST.handover_seconds + 1)
        err = ann_send_until_error(ann, {"type": "add_bot", "seat": "black"})
        assert err["code"] == "seat_taken" and "middle of a deal" in err["message"]
        assert ann.state()["version"] == end["version"] + 2


# ---- the natural pause, on the app's clock ---------------------------------------------

def test_a_computer_move_waits_for_its_natural_pause() -> None:
    settings = FAST.model_copy(update={"bot_pause": 0.6})
    with make_bot_client(settings) as client:
        clock = clock_of(client)
        made = new_bot_room(client, "get-stuck", {"level": "easy", "seats": "others"}, seed=7)
        with watch(client, made["room"]) as ann:
            sit(ann, "red")
            awaited = playing_until(ann, lambda s: s["to_move"] == ["black"])
            # The search is done (5 ms); the move waits for 0.6 to 1.2 s of the clock.
            eventually(lambda: clock.sleeping == 1, "the computer player pauses")
            assert recorder_of(client).searches
            clock.advance(0.59)
            assert clock.sleeping == 1
            assert ann.probe()["version"] == awaited["version"]
            clock.advance(0.62)
            moved = until(ann, at(awaited["version"] + 1))
            assert moved["view"]["log"][-1]["seat"] == "black"


def test_a_room_of_computers_shows_the_result_before_the_next_deal() -> None:
    settings = FAST.model_copy(update={"bot_between_deals": 5.0})
    with make_bot_client(settings) as client:
        clock = clock_of(client)
        made = new_bot_room(client, "get-stuck", {"seats": "all"}, seed=4, deals=2)
        with watch(client, made["room"]) as spectator:
            over = until(spectator, deal_over)
            eventually(lambda: clock.sleeping == 1, "the computer players wait to go on")
            clock.advance(4.9)
            assert clock.sleeping == 1
            assert spectator.probe()["version"] == over["version"]
            clock.advance(0.2)
            second = until(spectator, at(over["version"] + 1))
            assert second["phase"] == "playing" and second["view"]["deal"] == 2


# ---- rooms of computer players only ---------------------------------------------------

def test_a_watched_room_of_computers_plays_through_next_deal_and_rematch(client: TestClient) -> None:
    made = new_bot_room(client, "get-stuck", {"level": "medium", "seats": "all"}, seed=1, deals=2)
    assert "seat" not in made
    with watch(client, made["room"]) as spectator:
        until(spectator, lambda s: s["view"]["deal"] == 2 and s["phase"] == "playing")
        over = until(spectator, lambda s: s["phase"] == "match_over")
        assert over["view"]["seed"] == 1
        again = until(spectator, lambda s: s["version"] > over["version"])
        assert again["phase"] == "playing" and again["view"]["deal"] == 1 and again["view"]["history"] == []
    rec = recorder_of(client)
    assert not rec.illegal() and lobby_of(client).bots.refused == 0


def freed_after_grace(client: TestClient, room: Room) -> None:
    """``room`` (computer players only, nobody watching) waits, its deal over,
    for ``bot_room_grace_seconds``, then is freed."""
    lobby = lobby_of(client)
    clock = clock_of(client)
    grace = lobby.settings.bot_room_grace_seconds
    eventually(lambda: room.match.deal_over and clock.sleeping == 1, "the room waits to be freed")
    clock.advance(grace - 1)
    look(client, room)
    assert lobby.store.get(room.id) is room and not room.closed
    clock.advance(1.5)
    eventually(lambda: lobby.store.get(room.id) is None, "the room is freed")


def test_a_room_of_computers_nobody_watches_is_freed_a_while_after_its_deal(client: TestClient) -> None:
    made = new_bot_room(client, "get-stuck", {"seats": "all"}, seed=2)
    lobby = lobby_of(client)
    room = lobby.store.get(made["room"])
    assert room is not None and room.phase == "playing"
    assert lobby.settings.bot_room_grace_seconds == 60
    freed_after_grace(client, room)
    assert room.closed and room.match.deal_over and room.match.deal_number == 1
    assert client.get(made["url"]).status_code == 404
    with client.websocket_connect(f"/ws/{made['room']}") as ws:
        assert ws.receive_json()["code"] == "no_such_room"


def test_a_spectator_back_within_the_grace_keeps_a_room_of_computers(client: TestClient) -> None:
    """A spectator who reloads, or whose server restarted, comes back to a
    room of computers that nobody watched between deals: it is still there
    and plays on (found by a break-it pass: a restart freed every such room
    before its spectators were back)."""
    made = new_bot_room(client, "get-stuck", {"seats": "all"}, seed=6, deals=2)
    lobby = lobby_of(client)
    clock = clock_of(client)
    room = lobby.store.get(made["room"])
    assert room is not None
    eventually(lambda: room.match.deal_over and clock.sleeping == 1, "the room waits to be freed")
    clock.advance(59)
    with watch(client, made["room"]) as spectator:
        again = until(spectator, lambda s: s["view"]["deal"] == 2 and s["phase"] == "playing")
        assert again["view"]["history"]
        clock.advance(10)  # the grace that began unwatched is over: nothing happens
        assert lobby.store.get(made["room"]) is room and not room.closed
    # Left again: a new grace once its deal is over.
    freed_after_grace(client, room)
    assert room.closed


def test_the_last_spectator_leaving_stops_a_room_of_computers(client: TestClient) -> None:
    made = new_bot_room(client, "get-stuck", {"seats": "all"}, seed=3, deals=20)
    lobby = lobby_of(client)
    room = lobby.store.get(made["room"])
    assert room is not None
    with watch(client, made["room"]) as spectator:
        until(spectator, lambda s: s["view"]["deal"] == 2)
    freed_after_grace(client, room)
    # Every task of the room has ended (a search under way was dropped), and
    # when the computer players look at the freed room again they start nothing.
    quiet_at(client, room, room.version)
    assert room.closed and room.match.deal_over
    look(client, room)
    assert not [k for k in lobby.bots.tasks if k[0] == made["room"]]
    assert lobby.bots.quiet.get(room) == room.version


# ---- no CPU for rooms nobody is in ----------------------------------------------------

def test_computer_players_stop_thinking_when_the_people_leave() -> None:
    gate = Gate()
    with make_bot_client(choose=gate) as client:
        lobby = lobby_of(client)
        made = new_bot_room(client, "get-stuck-4", {"level": "easy", "seats": "others"}, seed=5)
        room = lobby.store.get(made["room"])
        assert made["seat"] == "N" and room is not None
        with watch(client, made["room"]) as ann:
            sit(ann, "N")
            token = ann.token
            mine = playing_until(ann, lambda s: len(s["view"]["log"]) >= 4 and bool(s["legal_moves"]))
            # East's search waits at the gate while Ann's tab closes.
            gate.open.clear()
            ann.send(type="move", move=mine["legal_moves"][0], version=mine["version"])
            until(ann, at(mine["version"] + 1))
            assert gate.waiting.wait(WAIT)
        searches = lobby.bots.thinker.searches  # East's, under way
        eventually(lambda: not room.connections, "the server saw the tab close")
        gate.open.set()
        # East's search under way ends and its move is played; South, awaited
        # now, does not start thinking while nobody is there.
        version = mine["version"] + 2
        quiet_at(client, room, version)
        assert room.version == version and room.phase == "playing"
        assert room.game.to_move(room.match.state) == ("S",) and room.computer_plays("S")
        assert lobby.bots.thinker.searches == searches
        assert not [k for k in lobby.bots.tasks if k[0] == room.id and k[1].startswith("turn")]
        assert lobby.store.get(room.id) is room
        # Back in the room, the table goes on.
        with watch(client, made["room"]) as ann:
            ann.send(type="resume", token=token)
            until(ann, lambda s: s["you"] == "N")
            playing_until(ann, lambda s: s["version"] > version)
        assert lobby.bots.thinker.searches > searches


def test_a_person_leaving_between_deals_leaves_the_computers_idle(client: TestClient) -> None:
    lobby = lobby_of(client)
    made = new_bot_room(client, "get-stuck-4", {"level": "easy", "seats": "others"}, seed=6)
    room = lobby.store.get(made["room"])
    assert room is not None
    with watch(client, made["room"]) as ann:
        sit(ann, "N")
        end = playing_until(ann, deal_over)
        assert end["phase"] == "deal_over"
        quiet_at(client, room, end["version"])
        searches = lobby.bots.thinker.searches
        ann.send(type="leave")
        left = ann.state()
        assert left["phase"] == "waiting" and left["version"] == end["version"] + 1
    eventually(lambda: not room.connections, "the server saw the tab close")
    # They have looked at the room since Ann left, and start nothing.
    look(client, room)
    assert lobby.bots.quiet.get(room) == left["version"]
    assert lobby.bots.thinker.searches == searches
    assert lobby.store.get(made["room"]) is room and room.phase == "waiting"


# ---- thinking off the event loop ------------------------------------------------------

def test_a_thinking_computer_never_delays_another_room() -> None:
    gate = Gate(is_open=False)
    with make_bot_client(choose=gate) as client:
        busy = new_bot_room(client, "get-stuck", {"seats": "others"}, seed=1)
        with watch(client, busy["room"]) as ann:
            sit(ann, "red")
            # Ann plays until the computer is awaited; its search then blocks.
            state = playing_until(ann, lambda s: s["to_move"] == ["black"])
            assert gate.waiting.wait(WAIT)
            other = new_room(client, "get-stuck", seed=2)
            with watch(client, other) as cy, watch(client, other) as di:
                sit(cy, "red", "Cy")
                v = sit(di, "black", "Di")["version"]
                for _ in range(6):
                    states = [until(p, at(v)) for p in (cy, di)]
                    mover, state_now = next((p, s) for p, s in zip((cy, di), states, strict=True)
                                            if s["legal_moves"])
                    mover.send(type="move", move=state_now["legal_moves"][0], version=v)
                    v += 1
            assert ann.probe()["version"] == state["version"]  # still thinking
            gate.open.set()
            until(ann, lambda s: s["version"] == state["version"] + 1)



def test_computer_players_think_in_worker_processes() -> None:
    settings = Settings(bot_seconds=0.01, bot_pause=0, bot_pool="process", bot_workers=1)
    with TestClient(create_app(settings)) as client:
        made = new_bot_room(client, "stucco", {"level": "strong", "seats": "others"}, seed=4)
        with watch(client, made["room"]) as ann:
            sit(ann, made["seat"])
            end = playing_until(ann, lambda s: sum(e["seat"] != made["seat"] for e in s["view"]["log"]) >= 2
                                or deal_over(s))
            assert any(e["seat"] != made["seat"] for e in end["view"]["log"])
        assert lobby_of(client).bots.thinker.searches >= 1


def test_the_search_gets_a_fresh_seed_never_the_matchs(client: TestClient) -> None:
    made = new_bot_room(client, "suitors", {"seats": "all"}, seed=12345)
    room = lobby_of(client).store.get(made["room"])
    assert room is not None
    eventually(lambda: room.match.deal_over, "the deal is played")
    rec: Recorder = recorder_of(client)
    assert rec.searches and not rec.illegal()
    seeds = {x.seed for x in rec.searches}
    assert 12345 not in seeds and len(seeds) == len(rec.searches)


# ---- the room record and the settings ---------------------------------------------------

def test_computer_players_survive_a_rebuild() -> None:
    room = Room.create("get-stuck-4", {"seed": 3}, bots={"E": "strong", "W": "strong"})
    ann, bob = Conn(), Conn()
    for conn, seat, name in ((ann, "N", "Ann"), (bob, "S", "Bob")):
        room.attach(conn)
        room.join(conn, seat, name)
    room.detach(bob, now=0.0)
    room.handover_seconds = 0
    room.add_bot(ann, "S", "easy", now=1.0)
    back = rebuilt(room)
    assert {s: (h.kind, h.level, h.name) for s, h in back.holders.items()} == {
        "N": ("human", None, "Ann"), "S": ("human", "easy", "Bob"),
        "E": ("computer", "strong", "Alan (strong)"), "W": ("computer", "strong", "Kurt (strong)")}
    assert back.holders["S"].token_hash == room.holders["S"].token_hash and back.computer_plays("S")
    stored = asyncio.run(room.journal.load(room.id))
    assert stored is not None
    first = stored.entries[0].action
    broken = [first, *(e.action for e in stored.entries[1:])]
    broken[0] = {**first, "bots": {"E": "strong", "nowhere": "easy"}}
    with pytest.raises(BadRecord, match="nowhere"):
        Table.replay(broken)


def test_a_process_catching_up_two_versions_plays_only_the_seat_still_awaited(
        caplog: pytest.LogCaptureFixture) -> None:
    """Another server process commits one seat's move and then the other's;
    this one catches up with both at once, poking its computer players after
    each: the turn scheduled after the first finds its seat no longer
    awaited and does nothing, and the first seat's turn is played on the
    newest version (a break-it pass found the stale turn thought about
    anyway: 'red is not awaited', then a random move from no legal moves,
    logged as a failure)."""
    here = Room.create("get-stuck", {"seed": 3}, bots={"red": "easy", "black": "easy"})
    there = rebuilt(here)
    start = here.version
    movers: list[str] = []
    for _ in range(2):
        seat, = there.game.to_move(there.match.state)
        there.computer_move(seat, there.legal_moves(seat)[0], there.version)
        movers.append(seat)
    assert there.version == start + 2
    recorder = Recorder()

    async def catch_up() -> tuple[int, Bots]:
        bots = Bots(FAST, MemoryRoomStore(), Thinker("thread", 1, recorder))
        here.attach(Conn())  # a spectator: the room is watched
        here.on_commit = bots.poke
        async with here.lock:
            applied = await here.catch_up()
        assert {purpose for _, purpose in bots.tasks} == {f"turn {seat}" for seat in movers}
        deadline = time.monotonic() + WAIT
        while here.version < start + 3 and time.monotonic() < deadline:
            await asyncio.sleep(0.01)
        await bots.close()
        return applied, bots

    with caplog.at_level("INFO", logger="app.bots"):
        applied, bots = asyncio.run(catch_up())
    assert applied == 2 and here.version >= start + 3
    assert [s.seat for s in recorder.searches][:1] == movers[:1] and recorder.illegal() == []
    assert bots.played >= 1 and bots.refused == 0
    assert [r.getMessage() for r in caplog.records if r.levelname in ("WARNING", "ERROR")] == []


def test_a_bot_seat_list_is_checked() -> None:
    for seats, says in ((["red", "red"], "twice"), (["blue"], "'blue'")):
        with pytest.raises(OptionError, match=says):
            computer_seats(("red", "black"), seats, "easy")
    with pytest.raises(OptionError, match="'blue'"):
        Room.create("get-stuck", {}, bots={"blue": "easy"})


class Conn:
    """A connection that keeps nothing."""

    def __init__(self) -> None:
        self.seat: str | None = None

    def push(self, text: str) -> None:
        pass


def test_settings_of_computer_players(monkeypatch: pytest.MonkeyPatch) -> None:
    s = Settings()
    assert (s.bot_pause, s.bot_pool, s.bot_workers, s.handover_seconds) == (0.6, "process", 0, 120.0)
    assert (s.bot_rooms_per_address, s.bot_rooms) == (10, 100)
    for name, value in (("BOT_PAUSE", "0"), ("BOT_POOL", "thread"), ("BOT_WORKERS", "3"),
                        ("HANDOVER_SECONDS", "30"), ("BOT_BETWEEN_DEALS", "1.5"),
                        ("BOT_ROOMS_PER_ADDRESS", "2"), ("BOT_ROOMS", "40")):
        monkeypatch.setenv(f"CARDBOARD_{name}", value)
    s = Settings()
    assert (s.bot_pause, s.bot_pool, s.bot_workers, s.handover_seconds, s.bot_between_deals) == (
        0.0, "thread", 3, 30.0, 1.5)
    assert (s.bot_rooms_per_address, s.bot_rooms) == (2, 40)
    monkeypatch.setenv("CARDBOARD_BOT_POOL", "gpu")
    with pytest.raises(ValidationError):
        Settings()
    monkeypatch.setenv("CARDBOARD_BOT_POOL", "thread")
    monkeypatch.setenv("CARDBOARD_BOT_ROOMS", "0")
    with pytest.raises(ValidationError):
        Settings()


def test_the_protocol_levels_are_the_engines() -> None:
    assert BOT_LEVELS == LEVELS and DEFAULT_LEVEL in LEVELS


def test_seconds_in_words_count_those_gone_by() -> None:
    """The handover refusal counts the seconds gone by, as a clock does:
    4.6 s away is "4 seconds" (verification pass: it said 5, and then "after
    5 seconds" of a wait of 5); a wait under a second keeps its fraction."""
    from app.rooms import _seconds

    assert [_seconds(x) for x in (0.0, 1.0, 1.9, 4.6, 120.0, 0.5)] == [
        "0 seconds", "1 second", "1 second", "4 seconds", "120 seconds", "0.5 seconds"]
