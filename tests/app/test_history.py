"""Records and reviews over the real app (``docs/protocol.md``, "Records and
reviews"): whole matches of every game exported and reviewed deal by deal,
bad records refused with clear messages, nothing hidden before the end, a
deal played again, match ids and their index, and records ageing out."""

from __future__ import annotations

import asyncio
import random
import re
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from bottest import FAST, lobby_of, make_bot_client, new_bot_room, until, watch
from fastapi.testclient import TestClient
from roomtest import Peer, connect, make_client, new_room

from app import history as history_module
from app.history import History
from app.limits import MAX_RECORD_BYTES
from app.settings import Settings
from app.storage import MatchRef, MemoryStorage, SqliteStorage, Storage, StoredRoom
from app.storage.base import Entry, RoomMeta
from app.storage.sqlite import MIGRATIONS
from app.table import MATCH_ID, Table, fallback_match_id
from engine.record import Record, read_record, replay
from engine.registry import GAMES, get_game

SHORT = {"get-stuck": {"deals": 2}, "stucco": {"target": 15}}
"""Options that keep whole matches short."""

CARD_CODE = re.compile(r"\b[a2-9tjqk][shdc]\b")
"""A face-down card as the secret position text writes it."""


@pytest.fixture
def client() -> Iterator[TestClient]:
    with make_bot_client() as c:
        yield c


def play(me: Peer, rng: random.Random, until_phase: str = "match_over") -> dict[str, Any]:
    """Play ``me``'s turns with random legal moves and press Next deal,
    until a state of ``until_phase``; computer players play the other
    seats. A move is sent once, then not again until the log shows it."""
    pending: tuple[int, int] | None = None
    pressed = -1

    def step(state: dict[str, Any]) -> bool:
        nonlocal pending, pressed
        if state["phase"] == until_phase:
            return True
        if state["phase"] == "deal_over" and state["you"] and state["version"] > pressed:
            me.send(type="next_deal", version=state["version"])
            pressed = state["version"]
            return False
        mine = (state["view"]["deal"], sum(e["seat"] == state["you"] for e in state["view"]["log"]))
        if pending is not None and mine <= pending:
            return False
        pending = None
        if state["legal_moves"]:
            me.send(type="move", move=rng.choice(state["legal_moves"]), version=state["version"])
            pending = mine
        return False

    return until(me, step)


def seated(client: TestClient, game: str, seed: int = 21, **options: Any) -> tuple[str, str]:
    """A room of ``game`` with computer players in every seat but the
    first; returns the room id and that seat."""
    made = new_bot_room(client, game, {"level": "medium", "seats": "others"}, seed=seed, **options)
    return made["room"], made["seat"]


def joined(me: Peer, seat: str) -> None:
    me.send(type="join", seat=seat, name="Ann")


# ---- whole matches of every game ---------------------------------------------------------
@pytest.mark.parametrize("game", list(GAMES))
def test_the_record_and_review_of_a_finished_match(client: TestClient, game: str) -> None:
    room, seat = seated(client, game, **SHORT.get(game, {}))
    with watch(client, room) as me:
        joined(me, seat)
        over = play(me, random.Random(game))
        token = me.token
    view = over["view"]
    match_id = view["match_id"]
    assert MATCH_ID.fullmatch(match_id) and room not in match_id and view["seeded"]

    text = client.get(f"/m/{match_id}.txt")
    assert text.status_code == 200 and text.headers["content-type"].startswith("text/plain")
    assert client.get(f"/api/rooms/{room}/record").text == text.text
    assert token is not None and token not in text.text and "token" not in text.text
    assert room not in text.text
    record = read_record(text.text, game)
    assert record.seed == 21 and record.match == match_id and record.over
    assert record.seats[0].name == "Ann"
    match = replay(record)
    assert [o.to_json() for o in match.outcomes] == [h["outcome"] for h in view["history"]]

    summary = client.get(f"/api/matches/{match_id}").json()
    assert summary["over"] and summary["seed"] == "21" and summary["match_id"] == match_id
    assert [d["outcome"] for d in summary["deals"]] == [h["outcome"] for h in view["history"]]
    assert summary["totals"] == view["totals"] and summary["match_winners"] == view["match_winners"]
    assert client.post("/api/records", json={"record": text.text}).json() == summary

    g = get_game(game)
    for d, dealt in zip(summary["deals"], record.deals, strict=True):
        review = client.get(f"/api/matches/{match_id}/deals/{d['deal']}").json()
        assert review["seed"] == str(dealt.seed) and review["starter"] == dealt.starter
        assert [(m["seat"], m["move"]) for m in review["moves"]] == [(m.seat, m.move) for m in dealt.moves]
        assert all(m["text"] for m in review["moves"])
        steps = review["steps"]
        assert len(steps) == len(dealt.moves) + 1 == d["moves"] + 1
        opening = g.deal(dealt.seed, record.opts, dealt.starter)
        assert steps[0]["board"] == g.revealed_view(opening)
        assert all(s["phase"] == "playing" and s["to_move"] for s in steps[:-1])
        last = "match_over" if d["deal"] == len(record.deals) else "deal_over"
        assert steps[-1]["phase"] == last and steps[-1]["to_move"] == []
        assert review["outcome"] == d["outcome"]
        posted = client.post(f"/api/records/deals/{d['deal']}", json={"record": text.text})
        assert posted.json() == review

    page = client.get(f"/m/{match_id}")
    assert page.status_code == 200 and f'data-match="{match_id}"' in page.text
    assert room not in page.text


def test_a_rematch_keeps_the_finished_match_at_its_id(client: TestClient) -> None:
    room, seat = seated(client, "get-stuck", deals=2)
    with watch(client, room) as me:
        joined(me, seat)
        over = play(me, random.Random(3))
        first = over["view"]["match_id"]
        before = client.get(f"/m/{first}.txt").text
        me.send(type="rematch", version=over["version"])
        again = until(me, lambda s: s["view"]["deal"] == 1 and s["phase"] == "playing"
                      and s["view"]["match_id"] is None)
        assert not again["view"]["seeded"]  # a rematch is dealt at random
        # The room remembers the match it finished: its page, totals and winners.
        assert over["view"]["earlier"] == []
        assert again["view"]["earlier"] == [{"number": 1, "match_id": first, "totals": over["view"]["totals"],
                                             "winners": over["view"]["match_winners"]}]
        assert over["view"]["match_winners"] and set(over["view"]["totals"]) == {"red", "black"}
        assert client.get(f"/m/{first}.txt").text == before
        now = client.get(f"/api/rooms/{room}/record").text
        assert '[Deals "0"]' in now and '[Result "*"]' in now and "[Seed" not in now
        over = play(me, random.Random(4))
    second = over["view"]["match_id"]
    assert second != first
    assert [e["match_id"] for e in over["view"]["earlier"]] == [first]
    assert client.get(f"/m/{second}.txt").text == client.get(f"/api/rooms/{room}/record").text
    assert client.get(f"/m/{first}.txt").text == before
    ref = asyncio.run(lobby_of(client).storage.find_match(second))
    assert ref == MatchRef(room, 1)


# ---- before the end ----------------------------------------------------------------------
def test_a_match_in_play_gives_only_its_finished_deals(client: TestClient) -> None:
    secret = 2**62 + 12345
    room, seat = seated(client, "get-stuck", seed=secret, deals=2)
    table = lobby_of(client).store.get(room)
    assert table is not None
    match_id = table.table.match_id
    with watch(client, room) as me:
        joined(me, seat)
        state = play(me, random.Random(5), until_phase="deal_over")
        assert state["view"]["match_id"] is None
        text = client.get(f"/api/rooms/{room}/record").text
        record = read_record(text)
        assert len(record.deals) == 1 and record.seed is None and not record.over
        assert record.match is None and str(secret) not in text
        summary = client.get(f"/api/rooms/{room}/review").json()
        assert not summary["over"] and summary["seed"] is None and len(summary["deals"]) == 1
        assert client.get(f"/api/rooms/{room}/deals/1").status_code == 200
        me.send(type="next_deal", version=state["version"])
        until(me, lambda s: s["phase"] == "playing" and s["view"]["deal"] == 2)
        for n, why in ((2, "deal 2 is still in play"),
                       (3, "deal 3 has not been dealt yet: deal 2 is in play"),
                       (0, "there is no deal 0: deals are numbered from 1"),
                       ("00", "there is no deal 0: deals are numbered from 1")):
            r = client.get(f"/api/rooms/{room}/deals/{n}")
            assert r.status_code == 404 and why in r.json()["detail"], r.text
        for n in ("1.0", "+1", "-1", "1e0", "one", "١"):  # deal 1 written otherwise is refused
            r = client.get(f"/api/rooms/{room}/deals/{n}")
            assert r.status_code == 422, r.text
            assert r.json()["detail"] == f"number: {n!r} is not a deal number: write a whole number such as 1"
        # The match's own page exists only once it is over.
        assert client.get(f"/api/matches/{match_id}").status_code == 404
        missing = client.get(f"/m/{match_id}.txt")  # said as text, as a record would be
        assert missing.status_code == 404 and missing.headers["content-type"].startswith("text/plain")
        assert missing.text == "there is no finished match with this id (it may have aged out)\n"
        assert client.get(f"/m/{match_id}").status_code == 404


def test_a_suitors_record_before_the_end_reveals_nothing_hidden(client: TestClient) -> None:
    room = new_room(client, "suitors", players=3, seed=77)
    with connect(client, room) as a, connect(client, room) as b, connect(client, room) as c:
        peers = [a, b, c]
        for p, s in zip(peers, ("JS", "JH", "JC"), strict=True):
            p.send(type="join", seat=s, name=f"P{s}")
            p.joined()
            for q in peers:
                q.state()
        rng = random.Random(2)
        for _ in range(12):
            state = a.last
            assert state is not None and state["phase"] == "playing"
            mover = next(p for p in peers if p.seat == state["to_move"][0])
            assert mover.last is not None
            mover.send(type="move", move=rng.choice(mover.last["legal_moves"]), version=mover.version)
            for q in peers:
                q.state()
    live = lobby_of(client).store.get(room)
    assert live is not None and not live.match.deal_over
    secret = get_game("suitors").to_text(live.match.state)
    text = client.get(f"/api/rooms/{room}/record").text
    assert '[Deals "0"]' in text and "[Deal " not in text and "[Seed" not in text
    assert not CARD_CODE.search(text)
    for seed in (live.match.seed, live.match.current.seed):
        assert str(seed) not in text
    hidden = CARD_CODE.findall(secret)
    assert len(hidden) > 20
    for face_down in hidden:
        assert not re.search(rf"\b{face_down}\b", text, re.I)
    summary = client.get(f"/api/rooms/{room}/review").json()
    assert summary["deals"] == [] and summary["seed"] is None
    assert str(live.match.current.seed) not in str(summary)
    r = client.get(f"/api/rooms/{room}/deals/1")
    assert r.status_code == 404 and "still in play" in r.json()["detail"]
    refused = client.post("/api/records", json={"record": text})
    assert refused.status_code == 400 and "no finished deal" in refused.json()["detail"]


def test_a_finished_suitors_game_shows_every_card(client: TestClient) -> None:
    room, seat = seated(client, "suitors", seed=8, players=2)
    with watch(client, room) as me:
        joined(me, seat)
        over = play(me, random.Random(8))
    review = client.get(f"/api/matches/{over['view']['match_id']}/deals/1").json()
    game = get_game("suitors")
    opening = game.deal(int(review["seed"]), game.check_options({"players": 2}), review["starter"])
    first = review["steps"][0]["board"]
    assert first["cells"] == list(opening.cells) and "??" not in first["cells"]
    assert sum(c.islower() for c in first["cells"]) == first["face_down"] > 0
    assert sorted(first["aside_cards"]) == sorted(opening.aside)


# ---- bad records -------------------------------------------------------------------------
def finished_text(client: TestClient) -> str:
    room, seat = seated(client, "get-stuck", deals=2)
    with watch(client, room) as me:
        joined(me, seat)
        over = play(me, random.Random(9))
    return client.get(f"/m/{over['view']['match_id']}.txt").text


def replay_deal_until(record: Record, moves: int) -> Any:
    """The state of the record's first deal after its first ``moves`` moves."""
    d = record.deal(1)
    game = get_game(record.game)
    state = game.deal(d.seed, record.opts, d.starter)
    for m in d.moves[:moves]:
        state = game.apply(state, m.seat, m.move)
    return state


def refusal(client: TestClient, text: str, game: str | None = None) -> str:
    body = {"record": text} if game is None else {"record": text, "game": game}
    r = client.post("/api/records", json=body)
    assert r.status_code == 400, r.text
    detail: str = r.json()["detail"]
    assert client.post("/api/records/deals/1", json=body).json()["detail"] == detail
    return detail


def test_a_game_taken_off_is_reviewed_but_not_offered_to_play_again(client: TestClient) -> None:
    """A record of a game this server no longer deals (CARDBOARD_GAMES) is
    reviewed with ``offered`` false, so that the review offers no "Play this
    deal again" (break-it pass: the buttons were there, and answered 422)."""
    from roomtest import make_client

    from app.settings import Settings

    text = finished_text(client)
    assert client.post("/api/records", json={"record": text}).json()["offered"] is True
    with make_client(Settings(games=("get-stuck-4",))) as other:
        review = other.post("/api/records", json={"record": text}).json()
        assert review["game"] == "get-stuck" and review["offered"] is False


def test_the_pages_of_a_game_taken_off_link_to_no_rules(tmp_path: Path) -> None:
    """After a restart with a game taken off (CARDBOARD_GAMES), its open room
    and its match page still work but offer no "Rules" link, since the rules
    page of a game not offered is not served (break-it pass: they linked to a
    404). A self-hoster may take a game off not to show it at all."""
    every = FAST.model_copy(update={"database": str(tmp_path / "rooms.db")})
    with make_bot_client(every) as c:
        room, seat = seated(c, "get-stuck", deals=2)
        with watch(c, room) as me:
            joined(me, seat)
            match = play(me, random.Random(9))["view"]["match_id"]
        pages = (f"/r/{room}", f"/m/{match}")
        assert all('href="/rules/get-stuck"' in c.get(p).text for p in pages)
    with make_bot_client(every.model_copy(update={"games": ("get-stuck-4",)})) as c:
        for p in pages:
            answer = c.get(p)
            assert answer.status_code == 200 and "/rules/get-stuck" not in answer.text, p
        assert c.get("/rules/get-stuck").status_code == 404


def test_bad_records_are_refused_with_clear_messages(client: TestClient) -> None:
    text = finished_text(client)
    lines = text.split("\n")
    third = next(i for i, ln in enumerate(lines) if ln.startswith("3. "))
    n, seat, _ = lines[third].split(" ", 2)
    record = read_record(text)
    before = replay_deal_until(record, 2)
    legal = get_game("get-stuck").legal_moves(before, seat)
    other = next(sq for sq in (f"{c}{r}" for c in "abcdefg" for r in range(1, 8)) if sq not in legal)
    illegal = "\n".join([*lines[:third], f"{n} {seat} {other}", *lines[third + 1:]])
    assert refusal(client, illegal).startswith(f"deal 1, move 3: {seat}'s move '{other}' is illegal: ")
    bad = "\n".join([*lines[:third], f"{n} {seat} zz9", *lines[third + 1:]])
    assert refusal(client, bad).startswith(f"deal 1, move 3: {seat}'s move 'zz9' is not a move")
    cut = text[: text.index("[End")]
    assert "truncated" in refusal(client, cut)
    assert "truncated" in refusal(client, text[: text.rindex("[Deal ")])
    assert refusal(client, text, "stucco") == "this is a record of get-stuck, not of stucco"
    assert "unknown game 'chess'" in refusal(client, text.replace('"get-stuck"', '"chess"', 1))
    four = refusal(client, text.replace('[Game "get-stuck"]', '[Game "get-stuck-4"]'))
    assert four == "[Options]: unknown option 'deals' for get-stuck-4"
    assert refusal(client, "hello")
    assert "at most 500,000 characters" in refusal(client, " " * 500_001)
    assert client.post("/api/records", json={"record": 5}).status_code == 422
    assert client.post("/api/records", json={}).status_code == 422
    # The good record goes through, and a deal it does not hold is a 404.
    assert client.post("/api/records", json={"record": text}).status_code == 200
    missing = client.post("/api/records/deals/9", json={"record": text})
    assert missing.status_code == 404 and "no deal 9" in missing.json()["detail"]


def test_unknown_ids_are_404(client: TestClient) -> None:
    for path in ("/api/matches/short", "/api/matches/" + "A" * 16, "/api/matches/x/deals/1",
                 "/api/rooms/nosuchroom1/record",
                 "/api/rooms/nosuchroom1/review", "/api/rooms/nosuchroom1/deals/1"):
        r = client.get(path)
        assert r.status_code == 404 and r.json()["detail"], path
    for path in ("/m/" + "A" * 16 + ".txt", "/m/x.txt.txt"):  # a record's address: said as text
        r = client.get(path)
        assert r.status_code == 404 and r.text.startswith("there is no finished match"), path
    page = client.get("/m/" + "A" * 16)
    assert page.status_code == 404 and "no finished match" in page.text


# ---- play it again -----------------------------------------------------------------------
def test_play_this_deal_again_deals_the_same_layout_and_starter(client: TestClient) -> None:
    room, seat = seated(client, "get-stuck-4", seed=12)
    with watch(client, room) as me:
        joined(me, seat)
        over = play(me, random.Random(12))
    summary = client.get(f"/api/matches/{over['view']['match_id']}").json()
    deal = summary["deals"][0]
    review = client.get(f"/api/matches/{over['view']['match_id']}/deals/1").json()
    computers = [s["seat"] for s in summary["seats"] if s["kind"] == "computer"]
    made = client.post("/api/rooms", json={
        "game": "get-stuck-4", "options": summary["options"],
        "deal": {"seed": deal["seed"], "starter": deal["starter"]},
        "bots": {"level": "medium", "seats": computers}})
    assert made.status_code == 201, made.text
    assert made.json()["seat"] == seat
    with watch(client, made.json()["room"]) as fresh:
        first = fresh.last
        assert first is not None and first["view"]["seeded"]
        assert first["view"]["board"] == review["steps"][0]["board"]
        assert first["view"]["board"]["turn"] == deal["starter"]
        assert review["steps"][0]["to_move"] == [deal["starter"]]


def test_a_new_match_from_the_seed_deals_the_match_again(client: TestClient) -> None:
    room, seat = seated(client, "get-stuck", seed=2**63 - 5, deals=2)
    with watch(client, room) as me:
        joined(me, seat)
        over = play(me, random.Random(1))
    summary = client.get(f"/api/matches/{over['view']['match_id']}").json()
    assert summary["seed"] == str(2**63 - 5)
    review = client.get(f"/api/matches/{over['view']['match_id']}/deals/1").json()
    again = new_room(client, "get-stuck", **summary["options"], seed=summary["seed"])
    with connect(client, again) as peer:
        assert peer.last is not None and peer.last["view"]["seeded"]
        assert peer.last["view"]["board"] == review["steps"][0]["board"]
    live = lobby_of(client).store.get(again)
    assert live is not None and live.match.seed == 2**63 - 5


def test_a_deal_played_again_replays_after_a_restart() -> None:
    with make_client() as client:
        first = client.post("/api/rooms", json={"game": "get-stuck",
                                                "deal": {"seed": 99, "starter": "black"}})
        assert first.status_code == 201, first.text
        live = lobby_of(client).store.get(first.json()["room"])
        assert live is not None
        stored = asyncio.run(live.journal.load(live.id))
        assert stored is not None and stored.entries[0].action["deal"] == [99, "black"]
        table = Table.replay(e.action for e in stored.entries)
        assert table.match.current.seed == 99 and table.match.current.starter == "black"
        assert table.seeded and table.match_id == live.table.match_id


@pytest.mark.parametrize(("deal", "words"), [
    ({"seed": 1, "starter": "black"}, "never starts a deal"),
    ({"seed": 1, "starter": "blue"}, "never starts a deal"),
    ({"seed": -1, "starter": "red"}, "deal.seed"),
    ({"seed": 2**63, "starter": "red"}, "deal.seed"),
    ({"seed": 1.5, "starter": "red"}, "deal.seed"),
    ({"seed": True, "starter": "red"}, "deal.seed"),
    ({"seed": " 12 ", "starter": "red"}, "deal.seed"),
    ({"seed": "١٢", "starter": "red"}, "deal.seed"),
    ({"seed": 1, "starter": "red", "token": "x"}, "deal.token"),
])
def test_a_bad_deal_is_refused(client: TestClient, deal: dict[str, Any], words: str) -> None:
    r = client.post("/api/rooms", json={"game": "romeo-and-juliet", "deal": deal})
    assert r.status_code == 422 and words in r.json()["detail"], r.text


def test_a_seed_as_digits(client: TestClient) -> None:
    room = new_room(client, "get-stuck", seed="9223372036854775807")
    live = lobby_of(client).store.get(room)
    assert live is not None and live.match.seed == 2**63 - 1 and live.table.seeded
    for bad in ("12a", "-1", "9223372036854775808", ""):
        r = client.post("/api/rooms", json={"game": "get-stuck", "options": {"seed": bad}})
        assert r.status_code == 422 and "seed" in r.json()["detail"], bad
    plain = lobby_of(client).store.get(new_room(client, "get-stuck"))
    assert plain is not None and not plain.table.seeded


# ---- match ids and their index -----------------------------------------------------------
def old_actions(room_id: str) -> list[dict[str, Any]]:
    """A room's actions as written before matches had ids: created, both
    seats joined, a deal played to its end and a rematch."""
    create = Table.create_action(room_id, "get-stuck", {"deals": 2}, 5, 1000.0)
    del create["match"]
    table = Table.new(create)
    actions = [create, {"t": "join", "seat": "red", "name": "A", "token_hash": "0" * 64},
               {"t": "join", "seat": "black", "name": "B", "token_hash": "1" * 64}]
    for a in actions[1:]:
        table = table.apply(a)
    while not table.match.over:
        if table.match.deal_over:
            action: dict[str, Any] = {"t": "next_deal"}
        else:
            seat = table.game.to_move(table.match.state)[0]
            action = {"t": "move", "seat": seat, "move": table.game.legal_moves(table.match.state, seat)[0]}
        table = table.apply(action)
        actions.append(action)
    actions.append({"t": "rematch", "seed": 6})
    return actions


def test_records_without_match_ids_replay_with_fallback_ids() -> None:
    room_id = "oldroom-0123456789"
    table = Table.replay(old_actions(room_id))
    assert table.rematches == 1 and table.match_id == fallback_match_id(room_id, 1)
    first = Table.new(old_actions(room_id)[0])
    assert first.match_id == fallback_match_id(room_id, 0) != table.match_id
    assert MATCH_ID.fullmatch(first.match_id) and room_id not in first.match_id
    assert fallback_match_id(room_id, 0) != fallback_match_id(room_id + "x", 0)


def _store(storage: Storage, room_id: str, actions: list[dict[str, Any]],
           finished: float | None = None) -> None:
    async def run() -> None:
        await storage.open()
        meta = RoomMeta(room_id, "get-stuck", 1000.0, 1000.0, 1000.0, 0, "waiting")
        await asyncio.wrap_future(storage.create(meta, Entry(0, 1000.0, actions[0])))  # type: ignore[arg-type]
        for v, a in enumerate(actions[1:], 1):
            meta = RoomMeta(room_id, "get-stuck", 1000.0, 1000.0 + v, 1000.0, v, "playing", finished=finished)
            await asyncio.wrap_future(storage.append(meta, Entry(v, 1000.0 + v, a)))  # type: ignore[arg-type]
    asyncio.run(run())


@pytest.mark.parametrize("backend", ["memory", "sqlite"])
def test_storage_indexes_every_match(tmp_path: Path, backend: str) -> None:
    storage: Storage = MemoryStorage() if backend == "memory" else SqliteStorage(tmp_path / "c.db")
    room_id = "room-with-ids-01"
    actions = old_actions(room_id)
    actions[0]["match"] = "first-match-id-0001"
    _store(storage, room_id, actions)  # the rematch has no id: the fallback one

    async def check() -> None:
        assert await storage.find_match("first-match-id-0001") == MatchRef(room_id, 0)
        assert await storage.find_match(fallback_match_id(room_id, 1)) == MatchRef(room_id, 1)
        assert await storage.find_match(fallback_match_id(room_id, 0)) is None
        await storage.close_room(room_id)  # no finished match in meta: deleted
        assert await storage.find_match("first-match-id-0001") is None
        await storage.close()
    asyncio.run(check())


def test_sqlite_migration_indexes_the_rooms_kept_already(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    conn = sqlite3.connect(path)
    for statement in MIGRATIONS[0]:
        assert isinstance(statement, str)
        conn.execute(statement)
    conn.execute("PRAGMA user_version = 1")
    room_id = "oldroom-0123456789"
    for v, a in enumerate(old_actions(room_id)):
        conn.execute("INSERT INTO actions VALUES (?,?,?,?)", (room_id, v, 1000.0 + v,
                                                             Entry(v, 0, a).text()))
    conn.execute("INSERT INTO rooms VALUES (?,?,?,?,?,?,?,?,?,?,?)",
                 (room_id, "get-stuck", 1000.0, 1000.0, 1000.0, 0, "playing", 1, 1050.0, 0, 0))
    conn.commit()
    conn.close()
    storage = SqliteStorage(path)

    async def check() -> None:
        await storage.open()
        assert await storage.find_match(fallback_match_id(room_id, 0)) == MatchRef(room_id, 0)
        assert await storage.find_match(fallback_match_id(room_id, 1)) == MatchRef(room_id, 1)
        await storage.close()
    asyncio.run(check())
    version = sqlite3.connect(path).execute("PRAGMA user_version").fetchone()[0]
    assert version == len(MIGRATIONS)


def test_an_old_room_s_finished_match_is_reviewed_at_its_fallback_id(tmp_path: Path) -> None:
    path = tmp_path / "c.db"
    room_id = "oldroom-0123456789"
    _store(SqliteStorage(path), room_id, old_actions(room_id), finished=1500.0)
    with make_client(Settings(database=str(path))) as client:
        first = fallback_match_id(room_id, 0)
        text = client.get(f"/m/{first}.txt")
        assert text.status_code == 200, text.text
        record = read_record(text.text)
        assert record.over and record.match == first and record.seed == 5
        assert [s.name for s in record.seats] == ["A", "B"]
        assert client.get(f"/m/{fallback_match_id(room_id, 1)}.txt").status_code == 404  # in play
        r = client.get(f"/api/rooms/{room_id}/deals/1")
        assert r.status_code == 404 and "still in play" in r.json()["detail"]

    async def free() -> None:  # as the lobby frees a room nobody uses
        storage = SqliteStorage(path)
        await storage.open()
        await storage.close_room(room_id)
        await storage.close()

    asyncio.run(free())
    with make_client(Settings(database=str(path))) as client:
        r = client.get(f"/api/rooms/{room_id}/deals/1")
        assert r.status_code == 404 and "never finished: its room closed" in r.json()["detail"], r.text


# ---- ageing out --------------------------------------------------------------------------
def test_records_age_out_with_keep_days(tmp_path: Path) -> None:
    settings = Settings(database=str(tmp_path / "c.db"), keep_days=2, room_idle_hours=1,
                        bot_seconds=0.005, bot_pause=0, bot_between_deals=0, bot_pool="thread")
    with make_bot_client(settings) as client:
        room, seat = seated(client, "get-stuck", deals=2)
        with watch(client, room) as me:
            joined(me, seat)
            over = play(me, random.Random(6))
        match_id = over["view"]["match_id"]
        lobby = lobby_of(client)
        wall = lobby.wall()

        def sweep(days: float) -> list[str]:
            async def run() -> list[str]:
                freed = await lobby.sweep(now=10**9, wall=wall + 2 * 3600 + days * 86400)
                await asyncio.sleep(0.2)  # the freed room's close is written in the background
                return freed
            return client.portal.call(run)  # type: ignore[union-attr]

        assert room in sweep(0)  # idle: freed, and kept as history (its match finished)
        assert client.get(f"/r/{room}").status_code == 404
        assert client.get(f"/m/{match_id}.txt").status_code == 200
        assert client.get(f"/api/rooms/{room}/record").status_code == 200
        sweep(1)
        assert client.get(f"/m/{match_id}").status_code == 200
        sweep(2.1)
        for path in (f"/m/{match_id}.txt", f"/api/matches/{match_id}", f"/api/rooms/{room}/record",
                     f"/api/matches/{match_id}/deals/1"):
            assert client.get(path).status_code == 404, path
        assert client.portal.call(lobby.storage.find_match, match_id) is None  # type: ignore[union-attr]


def test_a_long_record_may_be_sent_but_not_an_endless_one(client: TestClient) -> None:
    text = finished_text(client)
    long = text.replace("\n\n", "\n{" + "a long comment " * 4000 + "}\n\n", 1)
    assert 50_000 < len(long.encode()) < MAX_RECORD_BYTES
    r = client.post("/api/records", json={"record": long})
    assert r.status_code == 200, r.text
    huge = client.post("/api/records", json={"record": long * 20})
    assert huge.status_code == 413 and str(MAX_RECORD_BYTES) in huge.json()["detail"]
    # Other requests keep the small limit.
    big = client.post("/api/rooms", json={"game": "get-stuck", "options": {"x": "y" * 20_000}})
    assert big.status_code == 413


def test_a_refusal_quotes_only_an_excerpt_of_a_bad_move(client: TestClient) -> None:
    text = finished_text(client)
    lines = text.split("\n")
    first = next(i for i, ln in enumerate(lines) if ln.startswith("1. "))
    seat = lines[first].split(" ")[1]
    detail = refusal(client, "\n".join([*lines[:first], f"1. {seat} {'z' * 5000}", *lines[first + 1:]]))
    assert detail.startswith(f"deal 1, move 1: {seat}'s move 'zzz") and "…" in detail
    assert len(detail) <= 300


def test_a_record_is_read_off_the_event_loop(monkeypatch: pytest.MonkeyPatch) -> None:
    """Reading and replaying a posted record (up to a MiB of it) runs in a
    thread: while one is under way, the server goes on answering. Here the
    reading is held until the server has answered another request; on the
    event loop it would hold that request up, and the test would fail."""
    import threading
    from concurrent.futures import ThreadPoolExecutor

    import app.main

    held = threading.Event()
    reading = threading.Event()
    real_read = app.main.read

    def slow_read(text: str, game: str | None = None) -> Any:
        reading.set()
        assert held.wait(20), "the other request was never answered"
        return real_read(text, game)

    monkeypatch.setattr(app.main, "read", slow_read)
    with make_client(Settings()) as client, ThreadPoolExecutor(1) as pool:
        posted = pool.submit(client.post, "/api/records", json={"record": "not a record"})
        assert reading.wait(20)
        assert client.get("/healthz").status_code == 200  # answered while the record is read
        held.set()
        refused = posted.result(20)
        assert refused.status_code == 400 and refused.json()["detail"]


def test_a_room_is_loaded_off_the_event_loop(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Loading a stored room (after a restart, or once it was unloaded)
    replays its actions in a thread: a long history took seconds, and every
    room of the server waited. Here the replay is held until the server has
    answered another request; on the event loop that request would wait,
    and the test would fail."""
    import threading
    from concurrent.futures import ThreadPoolExecutor

    path = tmp_path / "c.db"
    room_id = "oldroom-0123456789"
    _store(SqliteStorage(path), room_id, old_actions(room_id))
    held = threading.Event()
    replaying = threading.Event()
    real = Table.replay_steps

    def slow_replay(actions: Any) -> Iterator[Table]:
        replaying.set()
        assert held.wait(20), "the other request was never answered"
        yield from real(actions)

    monkeypatch.setattr(Table, "replay_steps", staticmethod(slow_replay))
    with make_client(Settings(database=str(path))) as client, ThreadPoolExecutor(1) as pool:
        page = pool.submit(client.get, f"/r/{room_id}")
        assert replaying.wait(20)
        assert client.get("/healthz").status_code == 200  # answered while the room loads
        held.set()
        assert page.result(20).status_code == 200


def test_a_room_not_in_play_is_replayed_once_for_all_its_reviews(monkeypatch: pytest.MonkeyPatch) -> None:
    """The record of a room that is not loaded (freed, or on another server
    process) is replayed once while it stays at the same version, not on
    every review, record or deal request (a break-it pass timed 0.5 s a
    request for a freed room of 300 matches, and a few clients slowed every
    room); a record that has moved on is replayed again."""
    room_id = "room-with-ids-01"
    actions = old_actions(room_id)
    entries = tuple(Entry(v, 1000.0 + v, a) for v, a in enumerate(actions))  # type: ignore[arg-type]
    meta = RoomMeta(room_id, "get-stuck", 1000.0, 1000.0, 1000.0, len(actions) - 1, "playing", closed=True)
    kept = {room_id: StoredRoom(meta, entries)}
    replays: list[int] = []
    real = history_module.match_tables

    def counted(actions: Any) -> list[Table]:
        replays.append(len(list(actions)))
        return real(actions)

    monkeypatch.setattr(history_module, "match_tables", counted)

    class Kept:
        """What History asks of a lobby, for a room that is stored only."""

        async def room(self, room_id: str) -> None:
            return None

        async def stored(self, room_id: str) -> StoredRoom | None:
            return kept.get(room_id)

    history = History(Kept())  # type: ignore[arg-type]

    async def review() -> Any:
        return await history.room(room_id)

    first, again = asyncio.run(review()), asyncio.run(review())
    assert first is not None and again is first and replays == [len(entries)]
    kept[room_id] = StoredRoom(meta, entries[:-1])  # another version: replayed again
    shorter = asyncio.run(review())
    assert shorter is not None and replays == [len(entries), len(entries) - 1]
