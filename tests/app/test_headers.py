"""Security and cache headers on every answer, the websocket ``Origin``
check, the API docs switch and gzip (``app/security.py``)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from fastapi.routing import APIRoute
from fastapi.testclient import TestClient
from roomtest import finished_match, make_client, new_room
from starlette.routing import Mount, Route, WebSocketRoute
from starlette.websockets import WebSocketDisconnect

from app.security import CSP, DOCS_CSP, DOCS_PATH, origin_allowed
from app.settings import Settings

ROOT = Path(__file__).resolve().parents[2]
COMMON = {"x-content-type-options": "nosniff", "referrer-policy": "no-referrer"}


def check_headers(r: object, csp: str = CSP) -> None:
    headers = r.headers  # type: ignore[attr-defined]
    assert headers["content-security-policy"] == csp, r
    for name, value in COMMON.items():
        assert headers[name] == value, (r, name)


def test_every_route_answers_with_the_headers() -> None:
    with make_client(Settings(api_docs=True)) as client:
        room, match = finished_match(client)
        record = client.get(f"/m/{match}.txt").text
        checked: list[str] = []
        for route in client.app.routes:  # type: ignore[attr-defined]
            if isinstance(route, WebSocketRoute):
                continue  # no HTTP answer: a websocket (checked by the Origin tests below)
            if isinstance(route, Mount):
                assert route.path == "/static"
                r = client.get("/static/css/site.css")
                assert r.headers["cache-control"] == "no-cache" and r.headers["etag"]
            else:
                assert isinstance(route, APIRoute | Route), route
                path = (route.path.replace("{room_id}", room).replace("{game_id}", "get-stuck")
                        .replace("{match_id}", match).replace("{number}", "1"))
                assert "{" not in path, path
                if "POST" in (route.methods or ()):
                    body = {"record": record} if path.startswith("/api/records") else {"game": "get-stuck"}
                    r = client.post(path, json=body)
                else:
                    r = client.get(path)
                    # HEAD answers as GET does, without the body (link previews, monitors)
                    head = client.head(path)
                    assert (head.status_code, head.content) == (r.status_code, b""), path
                    assert head.headers["content-type"] == r.headers["content-type"], path
                    check_headers(head, DOCS_CSP if route.path == DOCS_PATH else CSP)
                if path.startswith(("/r/", "/m/")):
                    assert r.headers["cache-control"] == "no-store"
            assert r.status_code < 300, (route.path, r.status_code)
            check_headers(r, DOCS_CSP if route.path == DOCS_PATH else CSP)
            checked.append(route.path)
        assert {"/", "/r/{room_id}", "/rules/{game_id}", "/api/rooms", "/api/games", "/healthz",
                "/static", DOCS_PATH, "/api/openapi.json"} <= set(checked)


@pytest.mark.parametrize("path", ["/nowhere", "/r/no-such-room", "/rules/chess", "/api/nowhere",
                                  "/static/nothing.css"])
def test_refusals_carry_the_headers_too(client: TestClient, path: str) -> None:
    r = client.get(path)
    assert r.status_code == 404
    check_headers(r)
    if path.startswith("/r/"):
        assert r.headers["cache-control"] == "no-store"


def test_422_and_413_carry_the_headers(client: TestClient) -> None:
    check_headers(client.post("/api/rooms", json={"game": "chess"}))
    check_headers(client.post("/api/rooms", content=b" " * 20000))


def test_a_static_file_is_revalidated_gzipped_and_304_is_bare(client: TestClient) -> None:
    first = client.get("/static/js/room.js", headers={"Accept-Encoding": "gzip"})
    assert first.headers["content-encoding"] == "gzip"
    assert int(first.headers["content-length"]) < len(first.content) / 2  # httpx has unzipped it
    again = client.get("/static/js/room.js", headers={"If-None-Match": first.headers["etag"]})
    assert again.status_code == 304 and again.content == b""
    assert "content-security-policy" not in again.headers


def test_the_api_docs_are_off_by_default(client: TestClient) -> None:
    assert client.get(DOCS_PATH).status_code == 404
    assert client.get("/api/openapi.json").status_code == 404
    assert client.get("/openapi.json").status_code == 404


def test_templates_have_no_inline_script_or_style() -> None:
    for path in sorted((ROOT / "templates").rglob("*.html")):
        text = path.read_text()
        assert not re.search(r"\sstyle\s*=", text), path
        assert not re.search(r"<style\b", text), path
        assert not re.search(r"\son[a-z]+\s*=", text), path
        for tag in re.findall(r"<script\b[^>]*>", text):
            assert "src=" in tag, (path, tag)
    vendor = ROOT / "static" / "js" / "vendor"
    for path in sorted((ROOT / "static" / "js").rglob("*.js")):
        text = path.read_text()
        if path.is_relative_to(vendor):
            continue  # copied unchanged (static/js/vendor/README.md): see below
        assert not re.search(r"\bstyle\s*[:=]\s*[\"'`]", text), path  # element.style.x is fine
        # The vendored QR encoder writes markup with style attributes only in
        # its tag and image helpers: the pages draw its modules themselves.
        assert not re.search(r"\bcreate(Img|Table|Svg)Tag\b|\bcreateDataURL\b|\brenderTo2dContext\b",
                             text), path


# ---- the websocket Origin --------------------------------------------------------------------

def test_origin_allowed() -> None:
    assert origin_allowed(None, "example.org", ())
    assert origin_allowed("https://example.org", "example.org", ())
    assert origin_allowed("http://EXAMPLE.org:8000", "example.org:8000", ())
    assert not origin_allowed("https://example.org", "example.org:8000", ())
    assert not origin_allowed("https://evil.example", "example.org", ())
    assert not origin_allowed("null", "example.org", ())
    assert not origin_allowed("https://example.org", None, ())
    assert origin_allowed("https://play.example.net/", "example.org", ("https://play.example.net",))


def test_a_websocket_from_another_site_is_refused(client: TestClient) -> None:
    room = new_room(client)
    with pytest.raises(WebSocketDisconnect), \
            client.websocket_connect(f"/ws/{room}", headers={"Origin": "https://evil.example"}) as ws:
        ws.receive_json()
    for headers in ({}, {"Origin": "http://testserver"}):
        with client.websocket_connect(f"/ws/{room}", headers=headers) as ws:
            assert ws.receive_json()["type"] == "state"


def test_allowed_origins_let_other_sites_in() -> None:
    settings = Settings(allowed_origins="https://play.example.net, https://b.example/")  # type: ignore[arg-type]
    assert settings.allowed_origins == ("https://play.example.net", "https://b.example")
    with make_client(settings) as client:
        room = new_room(client)
        with client.websocket_connect(f"/ws/{room}", headers={"Origin": "https://B.example"}) as ws:
            assert ws.receive_json()["type"] == "state"
        with pytest.raises(WebSocketDisconnect), \
                client.websocket_connect(f"/ws/{room}", headers={"Origin": "https://c.example"}) as ws:
            ws.receive_json()


def test_the_settings_come_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CARDBOARD_ALLOWED_ORIGINS", "https://a.example,https://b.example/")
    monkeypatch.setenv("CARDBOARD_API_DOCS", "true")
    monkeypatch.setenv("CARDBOARD_WS_PER_ADDRESS", "7")
    settings = Settings()
    assert settings.allowed_origins == ("https://a.example", "https://b.example")
    assert settings.api_docs and settings.ws_per_address == 7
    with make_client(settings) as client:
        assert client.get(DOCS_PATH).status_code == 200
        assert client.get("/api/openapi.json").json()["info"]["title"] == "Cardboard"


def test_search_engines_and_link_previews(client: TestClient) -> None:
    robots = client.get("/robots.txt")
    assert robots.status_code == 200 and robots.headers["content-type"].startswith("text/plain")
    rules = robots.text.splitlines()
    assert rules[0] == "User-agent: *"
    assert {"Disallow: /r/", "Disallow: /m/", "Disallow: /api/"} <= set(rules)
    assert "Disallow: /" not in rules and "Disallow: /rules" not in rules  # home and rules stay findable
    room = new_room(client, "stucco")
    html = client.get(f"/r/{room}").text
    assert '<meta name="robots" content="noindex">' in html
    assert '<meta property="og:title" content="Stucco · Cardboard">' in html
    assert 'A table of Stucco on Cardboard: open the link' in html
    home = client.get("/").text
    assert "noindex" not in home and '<meta property="og:description" content="Card games laid out' in home
