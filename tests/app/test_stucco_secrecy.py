"""The secrecy of Stucco's opening pick over the real websocket protocol
(docs/protocol.md, "Hidden information" and "Versions, stale moves and
simultaneous moves"; RULINGS.md, Stucco 2).

Both seats and a spectator are connected and every frame each connection
receives is recorded (``Peer.texts``). Until both seats have picked, no frame to
the opponent or the spectator may show which card a seat picked: not in the
log, not in ``pick`` or ``reveal``, not in the spread, and nowhere else in the
frame once the open hands are set aside (the card is still in its owner's
hand, which is public). Once both have picked, everyone sees both picks.
"""

from __future__ import annotations

import contextlib
import copy
import json
import random
import re
from collections.abc import Iterator
from typing import Any

import pytest
from fastapi.testclient import TestClient
from roomtest import Peer, drain, play_deal, table

from engine.cards import pretty

SEEDS = range(30)
SEATS = ("north", "south")
OTHER = {"north": "south", "south": "north"}


@contextlib.contextmanager
def stucco_table(client: TestClient, seed: int) -> Iterator[dict[str | None, Peer]]:
    """A Stucco room with both seats and one spectator connected; yields the
    peers by seat (``None`` is the spectator). Every frame is kept from the
    first on."""
    with table(client, "stucco", spectators=1, seed=seed, target=100) as (_, (north, south), (spec,)):
        assert north.last is not None and north.last["phase"] == "playing"
        assert north.last["to_move"] == ["north", "south"]
        yield {"north": north, "south": south, None: spec}


def names_card(value: Any, card: str) -> bool:
    """Whether JSON ``value`` names ``card``, in notation (``QH``) or shown
    (``Q♥``), anywhere but in a room id."""
    if isinstance(value, dict) and "room" in value:
        value = {k: v for k, v in value.items() if k != "room"}
    text = json.dumps(value, ensure_ascii=False)
    return any(re.search(rf"(?<![\w-]){re.escape(c)}(?![\w-])", text) for c in (card, pretty(card)))


def leaks(frame: dict[str, Any], viewer: str | None, owner: str, card: str) -> list[str]:
    """The places in ``frame``, sent to ``viewer`` (not ``owner``; ``None`` for
    a spectator), that show that ``owner`` picked ``card``. Only meaningful
    while the opening is on."""
    found = []
    if frame["type"] != "state":
        return ["an error frame names it"] if names_card(frame, card) else []
    view = frame["view"]
    board = view["board"]
    if board["pick"] is not None and (viewer is None or board["pick"] == card):
        found.append(f"pick is {board['pick']!r}")  # only the viewer's own pick may be there
    if board["reveal"] is not None:
        found.append("reveal is set")
    if board["spread"]:
        found.append("the spread is open")
    if board["last"] is not None:
        found.append("last is set")
    for entry in view["log"]:
        if entry["seat"] == owner and entry["move"] is not None:
            found.append(f"the log shows the move {entry['move']!r}")
        if names_card(entry, card):
            found.append(f"the log entry {entry!r} names it")
    rest = copy.deepcopy(frame)
    del rest["view"]["board"]["hands"]  # public: the pick is still in its owner's hand
    if names_card(rest, card):
        found.append("the frame names it outside the hands")
    return found


def frames(peer: Peer, start: int = 0) -> list[dict[str, Any]]:
    return [json.loads(t) for t in peer.texts[start:]]


def check_secrecy(peers: dict[str | None, Peer], picks: dict[str, str],
                  start: dict[str | None, int] | None = None, refused: dict[str, str] | None = None) -> None:
    """Every frame each connection received (from ``start[viewer]`` on, else
    all of them): while the board
    is in the opening, no frame to anyone but the picker shows its pick (or
    the card ``refused[seat]`` the picker tried as well); from the first frame after the opening,
    every connection sees both picks."""
    for viewer, peer in peers.items():
        revealed = False
        for f in frames(peer, (start or {}).get(viewer, 0)):
            if f["type"] == "state" and f["view"]["board"]["phase"] != "opening":
                if not revealed:
                    board = f["view"]["board"]
                    assert board["reveal"] == picks, (viewer, board)
                    assert board["pick"] is None
                    starter = board["starter"]
                    assert board["spread"][0] == {"card": picks[starter], "seat": starter}
                    assert board["hands"][OTHER[starter]].count(picks[OTHER[starter]]) == 1
                    shown = [(e["seat"], e["move"]) for e in f["view"]["log"]]
                    assert sorted(shown) == sorted(picks.items()), (viewer, shown)
                    assert all(names_card(f["view"]["log"], c) for c in picks.values())
                revealed = True
                continue
            assert not revealed, "the opening came back after the reveal"
            if f["type"] == "state" and viewer is not None and f["view"]["board"]["picked"][viewer]:
                assert f["view"]["board"]["pick"] == picks[viewer]
            for owner, card in picks.items():
                if owner == viewer:
                    continue
                tried = (refused or {}).get(owner)
                for c in (card, tried) if tried else (card,):
                    found = leaks(f, viewer, owner, c)
                    assert not found, (viewer, owner, c, found, f)
        assert revealed, f"{viewer} never saw the picks"


def choose(peer: Peer, rng: random.Random) -> str:
    """A random card of the peer's own hand (its legal picks)."""
    assert peer.last is not None
    legal = peer.last["legal_moves"]
    assert len(legal) == 16
    return str(rng.choice(legal))


@pytest.mark.parametrize("seed", SEEDS)
def test_a_pick_stays_secret_until_both_have_picked(client: TestClient, seed: int) -> None:
    """Picks in turn on fresh versions, on the same version one after the
    other, or sent together, in either order."""
    rng = random.Random(seed)
    with stucco_table(client, seed) as peers:
        everyone = list(peers.values())
        first = rng.choice(SEATS)
        second = OTHER[first]
        a, b = peers[first], peers[second]
        picks = {first: choose(a, rng), second: choose(b, rng)}
        v = a.version
        mode = seed % 3
        if mode == 2:
            # Both sent on version v before either hears back: both accepted.
            a.send(type="move", move=picks[first], version=v)
            b.send(type="move", move=picks[second], version=v)
            drain(everyone)
            ends = drain(everyone)
        else:
            a.send(type="move", move=picks[first], version=v)
            mid = drain(everyone)
            assert all(s["version"] == v + 1 for s in mid)
            assert all(s["to_move"] == [second] for s in mid)
            assert all(s["view"]["board"]["picked"] == {first: True, second: False} for s in mid)
            # mode 1: the second pick is made on the same version as the first.
            b.send(type="move", move=picks[second], version=v + 1 if mode == 0 else v)
            ends = drain(everyone)
        assert all(s["version"] == v + 2 for s in ends)
        check_secrecy(peers, picks)


def test_the_opponent_learns_the_same_whichever_card_was_picked(client: TestClient) -> None:
    """Two rooms on one seed where north picks different cards: south and the
    spectator receive the same state frames, apart from the room id."""
    seen: list[list[dict[str, Any]]] = []
    for index in (0, 15):
        with stucco_table(client, 5) as peers:
            north = peers["north"]
            assert north.last is not None
            north.send(type="move", move=north.last["legal_moves"][index], version=north.version)
            drain(list(peers.values()))
            states = [f for p in (peers["south"], peers[None]) for f in frames(p) if f["type"] == "state"]
            assert len(states) == 8 and states[-1]["view"]["board"]["picked"]["north"]
            seen.append([{**f, "room": "ROOM"} for f in states])
    assert seen[0] == seen[1]


@pytest.mark.parametrize("seed", range(10))
def test_a_double_pick_is_refused_and_plays_once(client: TestClient, seed: int) -> None:
    """A seat that sends two picks on one version (a double click, or a change
    of mind) has the first accepted and the second refused: a pick is final.
    After the reveal, a stale third click is refused too, even if it is legal
    by then, so nothing is played twice."""
    rng = random.Random(1000 + seed)
    with stucco_table(client, seed) as peers:
        everyone = list(peers.values())
        seat = rng.choice(SEATS)
        p, q = peers[seat], peers[OTHER[seat]]
        v = p.version
        mine = choose(p, rng)
        again = choose(p, rng) if seed % 2 else mine
        p.send(type="move", move=mine, version=v)
        p.send(type="move", move=again, version=v)
        assert p.state()["view"]["board"]["pick"] == mine
        after = p.error("not_your_turn", then_state=True)
        assert after["version"] == v + 1 and after["view"]["board"]["pick"] == mine
        assert q.state()["version"] == v + 1 and peers[None].state()["version"] == v + 1
        # A change of mind on the current version is refused as well.
        p.send(type="move", move=again, version=v + 1)
        assert p.error("not_your_turn", then_state=True)["view"]["board"]["pick"] == mine
        theirs = choose(q, rng)
        q.send(type="move", move=theirs, version=v)
        ends = drain(everyone)
        assert all(s["version"] == v + 2 for s in ends)
        picks = {seat: mine, OTHER[seat]: theirs}
        refused = {seat: again} if again != mine else None
        check_secrecy(peers, picks, refused=refused)
        # A third click from the picker on the old version, whatever it is
        # (even a legal follow now), is refused and plays nothing.
        board = ends[0]["view"]["board"]
        follow = next(iter(ends[SEATS.index(seat)]["legal_moves"]), None)
        p.send(type="move", move=follow or board["hands"][seat][0], version=v)
        code = p.recv()
        assert code["type"] == "error" and code["code"] in {"stale_version", "not_your_turn"}, code
        assert p.state()["version"] == v + 2
        assert len(p.last["view"]["log"]) == 2  # type: ignore[index]


@pytest.mark.parametrize("seed", range(3))
def test_the_pick_of_the_next_deal_is_secret_too(client: TestClient, seed: int) -> None:
    """After a whole deal, the next one (dealt by the other seat) opens with a
    secret pick again, and the old log does not give anything away."""
    rng = random.Random(seed)
    with stucco_table(client, seed) as peers:
        everyone = list(peers.values())
        seated = [peers["north"], peers["south"]]
        first = {s: choose(peers[s], rng) for s in SEATS}
        for s in SEATS:
            peers[s].send(type="move", move=first[s], version=peers[s].version)
            drain(everyone)
        end = play_deal(seated, [peers[None]])
        assert end["phase"] == "deal_over"
        dealer = end["view"]["board"]["dealer"]
        north = peers["north"]
        north.send(type="next_deal", version=north.version)
        fresh = drain(everyone)
        assert all(s["view"]["deal"] == 2 and s["view"]["log"] == [] for s in fresh)
        assert fresh[0]["view"]["board"]["dealer"] == OTHER[dealer]
        start = {k: len(p.texts) - 1 for k, p in peers.items()}
        picks = {s: choose(peers[s], rng) for s in SEATS}
        for s in SEATS:
            peers[s].send(type="move", move=picks[s], version=peers[s].version)
            drain(everyone)
        check_secrecy(peers, picks, start)
