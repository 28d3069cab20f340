"""The HTTP API and the pages (docs/protocol.md, "HTTP")."""

from __future__ import annotations

import re
import time
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from roomtest import connect, make_client, new_room

from app.lobby import EVICT_AGE
from app.protocol import BOT_LEVELS, DEFAULT_LEVEL
from app.settings import Settings
from app.table import ROOM_OPTIONS
from engine.base import SEED_OPTION
from engine.registry import GAMES


def test_health(client: TestClient) -> None:
    r = client.get("/healthz")
    assert r.status_code == 200
    assert r.json() == {"status": "ok"}


def test_games_lists_every_registered_game(client: TestClient) -> None:
    games = client.get("/api/games").json()
    assert [g["id"] for g in games] == list(GAMES)
    for g in games:
        game = GAMES[g["id"]]
        # The contract's keys, then what the game declares of itself.
        assert set(g) == {"id", "title", "seats", "options", *game.info.traits()}
        assert {k: g[k] for k in game.info.traits()} == game.info.traits()
        assert g["title"] == game.info.title
        assert g["seats"] == list(game.seats(game.check_options({})))
        assert g["options"] == {
            **{o.name: o.description for o in game.info.options},
            "seed": SEED_OPTION.description,
            **{o.name: o.description for o in ROOM_OPTIONS if o.offered(game)},
        }


def test_games_carry_their_metadata(client: TestClient) -> None:
    games = {g["id"]: g for g in client.get("/api/games").json()}
    assert games["suitors"]["players"] == {"min": 2, "max": 4, "option": "players"}
    assert games["get-stuck-4"]["players"] == {"min": 4, "max": 4, "option": None}
    assert games["suitors"]["layout"] == {"kind": "grid", "width": 9, "height": 5}
    assert games["stucco"]["layout"] == {"kind": "spread"}
    # The Big board's layout is larger: a page can say so before the room exists.
    nine_by_five = {"kind": "grid", "width": 9, "height": 5}
    assert games["suitors"]["layouts"] == {"variant": {
        "standard": nine_by_five, "big": {"kind": "grid", "width": 11, "height": 9}, "colours": nine_by_five}}
    assert [g["id"] for g in games.values() if g["layouts"]] == ["suitors"]
    assert [g["id"] for g in games.values() if g["simultaneous"]] == ["stucco"]
    assert [g["id"] for g in games.values() if g["secret_moves"]] == ["stucco"]
    assert sorted(g["id"] for g in games.values() if g["hidden_information"]) == ["stucco", "suitors"]
    assert {g["id"]: g["deal_noun"] for g in games.values()} == {
        "get-stuck": "deal", "get-stuck-4": "deal", "romeo-and-juliet": "game", "suitors": "game",
        "stucco": "deal"}
    # A room passes for its players only in games with passes.
    assert [g["id"] for g in games.values() if not g["passes"]] == ["get-stuck"]
    assert [g["id"] for g in games.values() if "auto_pass" not in g["options"]] == ["get-stuck"]
    # Every board module named is served.
    for board in {g["board"] for g in games.values()}:
        r = client.get(f"/static/js/games/{board}.js")
        assert r.status_code == 200 and "export function render" in r.text, board
    assert games["get-stuck-4"]["board"] == "get-stuck"


@pytest.mark.parametrize("game", list(GAMES))
def test_create_room_for_each_game(client: TestClient, game: str) -> None:
    r = client.post("/api/rooms", json={"game": game})
    assert r.status_code == 201
    body = r.json()
    assert body == {"room": body["room"], "url": f"/r/{body['room']}"}
    # at least 64 random bits: token_urlsafe(12) is 16 URL-safe characters
    assert re.fullmatch(r"[A-Za-z0-9_-]{16}", body["room"])


def test_room_ids_differ(client: TestClient) -> None:
    ids = {new_room(client) for _ in range(20)}
    assert len(ids) == 20


def test_create_with_options_and_seed(client: TestClient) -> None:
    r = client.post("/api/rooms", json={"game": "get-stuck", "options": {"seed": "9223372036854775807"}})
    assert r.status_code == 201  # a seed may come as its digits, as a browser sends it
    room = new_room(client, "get-stuck", deals=4, seed=2**63 - 1)
    stored = client.app.state.lobby.store.get(room)  # type: ignore[attr-defined]
    assert stored.options == {"deals": 4}
    assert stored.seed_option == 2**63 - 1
    assert stored.match.seed == 2**63 - 1


@pytest.mark.parametrize(
    ("body", "names"),
    [
        ({"game": "no-such-game"}, "no-such-game"),
        ({"game": "get-stuck", "options": {"colour": "red"}}, "colour"),
        ({"game": "get-stuck", "options": {"deals": 3}}, "deals"),
        ({"game": "get-stuck", "options": {"deals": 22}}, "deals"),
        ({"game": "get-stuck", "options": {"deals": "2"}}, "deals"),
        ({"game": "get-stuck", "options": {"seed": -1}}, "seed"),
        ({"game": "get-stuck", "options": {"seed": 2**63}}, "seed"),
        ({"game": "get-stuck", "options": {"seed": 1.5}}, "seed"),
        ({"game": "get-stuck", "options": {"seed": True}}, "seed"),
        ({"game": "get-stuck", "options": {"seed": " 12"}}, "seed"),
        ({"game": "get-stuck", "options": {"seed": "\u0661\u0662"}}, "seed"),  # Arabic-Indic digits
        ({"options": {}}, "game"),
        ({"game": "get-stuck", "options": [1, 2]}, "options"),
    ],
)
def test_create_422_names_the_problem(client: TestClient, body: dict, names: str) -> None:
    r = client.post("/api/rooms", json=body)
    assert r.status_code == 422
    assert names in r.json()["detail"]


@pytest.mark.parametrize(("options", "said"), [
    ({"auto_pass": None}, "option 'auto_pass' must be true or false, not null"),
    ({"spectator_chat": "yes"}, "option 'spectator_chat' must be true or false, not \"yes\""),
    ({"deals": True}, "option 'deals' must be a whole number, not true"),
    ({"deals": 2.5}, "option 'deals' must be a whole number, not 2.5"),
])
def test_a_wrong_option_is_told_as_it_was_written(client: TestClient, options: dict, said: str) -> None:
    """The value in the refusal is the JSON the client sent (``null``,
    ``true``), not Python's writing of it (``None``, ``True``)."""
    r = client.post("/api/rooms", json={"game": "get-stuck", "options": options})
    assert r.status_code == 422
    assert r.json()["detail"] == said


def test_a_number_too_large_for_json_is_said_to_be_out_of_range(client: TestClient) -> None:
    """``1e400`` is read as infinity, which JSON cannot write back: the
    refusal says what it is rather than "not Infinity"."""
    r = client.post("/api/rooms", content=b'{"game": "get-stuck", "options": {"deals": 1e400}}',
                    headers={"content-type": "application/json"})
    assert r.status_code == 422
    assert r.json()["detail"] == "option 'deals' must be a whole number, not a number out of range"


@pytest.mark.parametrize("seed", ["-1", "9223372036854775808", "92233720368547758070", -1, 2**63])
def test_a_seed_out_of_range_is_told_the_range(client: TestClient, seed: int | str) -> None:
    """Digits with a sign, or too many of them (as the home page's field
    sends them), get the seed's range, not only "a whole number"."""
    r = client.post("/api/rooms", json={"game": "get-stuck", "options": {"seed": seed}})
    assert r.status_code == 422
    assert r.json()["detail"] == ("option 'seed' must be a whole number from 0 to 9223372036854775807"
                                  f" (2^63-1), not {seed}")


@pytest.mark.parametrize("body", [b"{nope", b"not json", b'{"game": "\xff\xfe"}', b"[" * 10_000])
def test_create_not_json_is_422(client: TestClient, body: bytes) -> None:
    """A body that is not JSON (or not UTF-8, or nested past what the parser
    takes) is a bad body like any other: 422, saying so in words."""
    r = client.post("/api/rooms", content=body, headers={"content-type": "application/json"})
    assert r.status_code == 422
    assert r.json()["detail"] == "the body must be a JSON object in UTF-8"


@pytest.mark.parametrize("field", ["seed", "deals"])
def test_a_number_too_long_to_read_is_told_so(client: TestClient, field: str) -> None:
    """A number of 5,000 digits is valid JSON that Python will not read
    (``sys.get_int_max_str_digits``): the body is refused saying that, not
    that it is not JSON."""
    body = b'{"game": "get-stuck", "options": {"%s": %s}}' % (field.encode(), b"1" * 5000)
    r = client.post("/api/rooms", content=body, headers={"content-type": "application/json"})
    assert r.status_code == 422
    assert r.json()["detail"] == ("a number in the body has more than 4,300 digits; nothing here takes"
                                  " one that long")


def test_max_rooms_gives_503() -> None:
    with make_client(Settings(max_rooms=2)) as c:
        for _ in range(2):
            with connect(c, new_room(c)):  # opened rooms are never evicted to make space
                pass
        r = c.post("/api/rooms", json={"game": "get-stuck"})
        assert r.status_code == 503
        assert "2 rooms" in r.json()["detail"]
        assert r.headers["retry-after"] == "300"  # when a room nobody opened may make way


def test_games_follow_settings() -> None:
    with make_client(Settings(games=("get-stuck-4",))) as c:
        assert [g["id"] for g in c.get("/api/games").json()] == ["get-stuck-4"]
        r = c.post("/api/rooms", json={"game": "get-stuck"})
        assert r.status_code == 422
        assert r.json()["detail"] == ("'get-stuck' is not played on this server; the games here are"
                                      " get-stuck-4")
        r = c.post("/api/rooms", json={"game": "chess"})
        assert r.json()["detail"] == "'chess' is not a game; the games here are get-stuck-4"
        assert c.post("/api/rooms", json={"game": "get-stuck-4"}).status_code == 201
        assert c.get("/rules/get-stuck").status_code == 404
        rules = c.get("/rules", follow_redirects=False)  # a trimmed address: the first game's rules
        assert rules.status_code == 302 and rules.headers["location"] == "/rules/get-stuck-4"
        assert c.get("/rules").status_code == 200
        index = c.get("/")
        assert "Get Stuck for Four" in index.text
        assert 'data-create="get-stuck"' not in index.text


def test_unknown_api_path_is_json_404(client: TestClient) -> None:
    r = client.get("/api/nothing-here")
    assert r.status_code == 404
    assert r.json() == {"detail": "Not Found"}


# ---- pages (templates belong to the front end) -----------------------------------------


def test_index_page_lists_the_games(client: TestClient) -> None:
    r = client.get("/")
    assert r.status_code == 200
    assert r.headers["content-type"].startswith("text/html")
    for game in GAMES.values():
        assert game.info.title in r.text


def test_room_page(client: TestClient) -> None:
    room = new_room(client, "get-stuck-4")
    r = client.get(f"/r/{room}")
    assert r.status_code == 200
    assert room in r.text
    assert "Get Stuck for Four" in r.text
    # The page tells room.js the board module, the deal noun and the levels.
    assert 'data-board="get-stuck"' in r.text and 'data-deal-noun="deal"' in r.text
    assert f'data-levels="{" ".join(BOT_LEVELS)}"' in r.text
    assert f'data-default-level="{DEFAULT_LEVEL}"' in r.text
    suitors = client.get(f"/r/{new_room(client, 'suitors')}").text
    assert 'data-board="suitors"' in suitors and 'data-deal-noun="game"' in suitors
    # The header's Rules link opens the room's game, elsewhere the first game on offer.
    assert '<a href="/rules/suitors">Rules</a>' in suitors
    assert '<a href="/rules">Rules</a>' in client.get("/").text


def test_unknown_room_page_is_404_offering_a_new_room(client: TestClient) -> None:
    r = client.get("/r/no-such-room")
    assert r.status_code == 404
    assert r.headers["content-type"].startswith("text/html")
    assert "no such room" in r.text
    assert 'data-create="get-stuck"' in r.text


@pytest.mark.parametrize("game", ["get-stuck", "get-stuck-4"])
def test_rules_page(client: TestClient, game: str) -> None:
    r = client.get(f"/rules/{game}")
    assert r.status_code == 200
    assert GAMES[game].info.title in r.text


def test_suitors_rules_shade_a_region_as_the_board_does(client: TestClient) -> None:
    """The rules page's diagrams draw a connected region's cards with the
    edge colour the board gives them (static/css/site.css), and frame what
    may be revealed and where a Jumper lands in the board's colours, so that
    a player who reads the rules knows them on the table."""
    css = (Path(__file__).resolve().parents[2] / "static/css/site.css").read_text()
    rule = re.search(r"\.su-cell\.su-mine \.card[^{]*\{([^}]*)\}", css)
    assert rule is not None, "the board's rule for region cards"
    edge = re.search(r"border:\s*2px solid (#[0-9a-f]{6})", rule.group(1))
    assert edge is not None, rule.group(1)
    page = client.get("/rules/suitors").text
    assert f'stroke="{edge.group(1)}"' in page
    # What may be revealed is framed in the table's gold, where a Jumper lands in its blue.
    gold = re.search(r"--accent:\s*(#[0-9a-f]{6})", css)
    land = re.search(r"\.su-board \.cell\.su-land \.card \{ box-shadow: 0 0 0 3px (#[0-9a-f]{6})", css)
    assert gold is not None and land is not None
    assert f'stroke="{gold.group(1)}" stroke-width="3"' in page
    assert f'stroke="{land.group(1)}" stroke-width="3"' in page


def test_unknown_rules_page_is_404(client: TestClient) -> None:
    r = client.get("/rules/no-such-game")
    assert r.status_code == 404
    assert r.headers["content-type"].startswith("text/html")


def test_other_404_is_the_html_page(client: TestClient) -> None:
    r = client.get("/no/such/page")
    assert r.status_code == 404
    assert r.headers["content-type"].startswith("text/html")
    assert "nothing at this address" in r.text


def test_static_files_are_served(client: TestClient) -> None:
    r = client.get("/static/img/favicon.svg")
    assert r.status_code == 200
    assert "svg" in r.text


def test_a_refused_creation_uses_up_none_of_the_address_s_allowance() -> None:
    """Bad options, a bad deal, computer seats that do not exist: each is
    refused (422) before the room is counted against the address's creation
    allowance, so the next good request is made."""
    bad = [{"game": "get-stuck", "options": {"deals": 99}},
           {"game": "get-stuck", "options": {"seed": True}},
           {"game": "get-stuck", "deal": {"seed": 1, "starter": "blue"}},
           {"game": "get-stuck", "bots": {"seats": ["green"]}}]
    with make_client(Settings(room_create_burst=2, room_create_per_hour=1)) as client:
        for body in bad * 5:
            r = client.post("/api/rooms", json=body)
            assert r.status_code == 422, r.text
        assert [client.post("/api/rooms", json={"game": "get-stuck"}).status_code
                for _ in range(3)] == [201, 201, 429]



def test_a_full_server_uses_up_none_of_the_address_s_allowance() -> None:
    """A creation refused because the server holds ``max_rooms`` rooms (503)
    gives its part of the allowance back: once a room is freed, the address
    may create again, however often it tried meanwhile (self-hoster pass:
    two refusals as full then brought 429 for six minutes)."""
    with make_client(Settings(max_rooms=2, room_create_burst=3, room_create_per_hour=1)) as client:
        made = [client.post("/api/rooms", json={"game": "get-stuck"}) for _ in range(2)]
        assert [r.status_code for r in made] == [201, 201]
        codes = [client.post("/api/rooms", json={"game": "stucco"}).status_code for _ in range(5)]
        assert codes == [503] * 5
        # Later, an unopened room makes way (lobby.EVICT_AGE): the allowance's
        # last room is still there, and then none.
        lobby = client.app.state.lobby  # type: ignore[attr-defined]
        lobby.wall = lambda: time.time() + EVICT_AGE + 1
        codes = [client.post("/api/rooms", json={"game": "get-stuck"}).status_code for _ in range(2)]
        assert codes == [201, 429]
