"""A repeat visit of a room page is small: the page itself (``no-store``) and
a revalidation (304, no body) of every static file it loads, at most 5 KB in
all; the first visit gets them gzipped (``bench/pages.py`` prints the same
figures)."""

from __future__ import annotations

from pathlib import Path

from browserkit import create_room
from playwright.sync_api import Browser

from bench.pages import first_and_repeat

ROOT = Path(__file__).resolve().parents[2]
REPEAT_BYTES = 5 * 1024


def test_a_repeat_visit_of_a_room_page_transfers_at_most_5_kb(server: str, browser: Browser) -> None:
    first, again = first_and_repeat(browser, create_room(server, "get-stuck"))
    static = [t for t in first if t.path.startswith("/static/")]
    assert {t.path for t in static} >= {"/static/css/site.css", "/static/js/room.js",
                                        "/static/js/games/get-stuck.js"}
    raw = sum((ROOT / t.path.lstrip("/")).stat().st_size for t in static)
    assert sum(t.received for t in static) < raw / 2  # gzipped
    assert sorted(t.path for t in again) == sorted(t.path for t in first)  # all of it, revalidated
    assert [t.status for t in again if t.path.startswith("/r/")] == [200]
    assert sum(t.received for t in again) <= REPEAT_BYTES, again
    assert all(t.received < 400 for t in again if t.path.startswith("/static/")), again
