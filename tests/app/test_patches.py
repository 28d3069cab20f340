"""Patch frames (``app.patch``, ``docs/protocol.md``, "Patches"): a client
that asks for them gets every state as what changed since the last one it
was sent, and what it rebuilds is the very state a full frame would carry."""

from __future__ import annotations

import contextlib
import json
import random
from typing import Any

import pytest
from fastapi.testclient import TestClient
from roomtest import Peer, apply_patch, connect, make_client, new_room, room_of

from app.patch import state_patch
from app.rooms import Room

GAMES = ["get-stuck", "get-stuck-4", "romeo-and-juliet", "suitors", "stucco"]


@pytest.fixture
def client() -> Any:
    with make_client() as c:
        yield c


def full(room: Room, seat: str | None) -> dict[str, Any]:
    """The server's own state for ``seat``, every sentence in."""
    return dict(json.loads(room.state_text(seat)))


@pytest.mark.parametrize("game", GAMES)
def test_patched_states_are_the_full_states(client: TestClient, game: str) -> None:
    room_id = new_room(client, game, seed=4)
    seats = next(g["seats"] for g in client.get("/api/games").json() if g["id"] == game)
    rng = random.Random(game)
    with connect(client, room_id) as plain, connect(client, room_id) as watcher:
        watcher.send(type="patches")
        assert watcher.state()["you"] is None  # the base of the first patch
        peers: list[Peer] = []
        with contextlib.ExitStack() as stack:
            for i in range(len(seats)):
                p = stack.enter_context(connect(client, room_id))
                if i % 2 == 0:
                    p.send(type="patches")
                    p.state()
                peers.append(p)
            everyone = [*peers, plain, watcher]
            for p, seat in zip(peers, seats, strict=True):
                p.send(type="join", seat=seat, name=f"P{seat}")
                p.joined()
                for q in everyone:
                    q.state()
            room = room_of(client, room_id)
            deals = 0
            for _ in range(400):
                state = plain.last
                assert state is not None
                if state["phase"] == "deal_over" and deals < 1:  # a new deal: the log starts again
                    deals += 1
                    peers[0].send(type="next_deal", version=state["version"])
                elif state["phase"] != "playing":
                    break
                else:
                    movers = [p for p in peers if p.last and p.last["legal_moves"]]
                    p = rng.choice(movers)
                    assert p.last is not None
                    p.send(type="move", move=rng.choice(p.last["legal_moves"]), version=p.version)
                for q in everyone:
                    q.state()
                for q in everyone:
                    while q.last is not None and q.last["version"] < room.version:
                        q.state()
                for q in [*peers, watcher]:
                    assert q.last == full(room, q.last["you"] if q.last else None)
            assert watcher.patches > 0 and peers[0].patches > 0
            assert plain.patches == 0 and peers[1].patches == 0
            assert watcher.last == plain.last  # a spectator's, rebuilt, and one sent whole


def test_a_patch_is_shorter_than_the_state_and_rebuilds_it() -> None:
    base = {"type": "state", "version": 3, "view": {"log": [{"seat": "N", "move": "a1", "text": "x"}],
                                                     "board": {"cells": list("abcdefghij")},
                                                     "seats": [{"seat": "N", "connected": True}]}}
    new = json.loads(json.dumps(base))
    new["version"] = 4
    new["view"]["log"].append({"seat": "E", "move": "b2", "text": "y"})
    new["view"]["board"]["cells"][3] = "Z"
    new["view"]["seats"][0]["connected"] = False
    text = state_patch(json.dumps(base), json.dumps(new))
    assert text is not None and len(text) < len(json.dumps(new))
    frame = json.loads(text)
    assert frame["type"] == "patch" and frame["version"] == 4
    assert apply_patch(base, frame["ops"]) == new
    # a key lost sets its object whole; a shorter array is set whole
    newer = json.loads(json.dumps(new))
    del newer["view"]["seats"][0]["connected"]
    newer["view"]["log"] = []
    ops = json.loads(state_patch(json.dumps(new), json.dumps(newer)) or "null")["ops"]
    assert apply_patch(new, ops) == newer
    assert [["view", "log"], []] in ops and [["view", "seats"], [{"seat": "N"}]] in ops


def test_nothing_shorter_no_patch() -> None:
    base = json.dumps({"type": "state", "version": 1, "a": 1})
    assert state_patch(base, json.dumps({"type": "state", "version": 2, "a": 2})) is None
