"""A server restart in real browsers: a page seated against a computer player
and a spectator on a phone; SIGTERM stops the server (sockets closed with
1012) and both pages say "Server restarting, reconnecting…"; the server
starts again on the same port and database, and with no reload the pages
come back by themselves, the seated one resumes its seat with its token,
makes a move and the computer player answers (docs/protocol.md, "Restarts")."""

from __future__ import annotations

import random
from pathlib import Path

from browserkit import computer_room, settled_shot, sit, version, wait_version
from playwright.sync_api import Browser, Page, expect
from serverproc import STOPPED, Server

RESTARTING = "Server restarting, reconnecting…"
GREEN_DOTS = """() => [...document.querySelectorAll('.seat-row .dot')]
    .filter((d) => getComputedStyle(d).backgroundColor !== 'rgb(187, 187, 187)').length"""


def create_bot_room(base: str) -> tuple[str, str]:
    """A Get Stuck room with a computer player; its URL and the seat left free."""
    answer = computer_room(base, "get-stuck", {"seed": 21})
    return base + answer["url"], answer["seat"]


def my_turn(page: Page) -> list[str]:
    """The squares this page offers to play once it is its turn."""
    page.wait_for_function("() => document.querySelectorAll('#board .cell.playable').length > 0",
                           timeout=15_000)
    squares: list[str] = page.evaluate(
        "() => [...document.querySelectorAll('#board .cell.playable')].map((c) => c.dataset.square)")
    return squares


def test_the_game_goes_on_by_itself_after_a_restart(browser: Browser, tmp_path: Path,
                                                    artifacts: Path) -> None:
    server = Server({"CARDBOARD_DATABASE": str(tmp_path / "cardboard.db"),
                     "CARDBOARD_BOT_SECONDS": "0.05", "CARDBOARD_BOT_PAUSE": "0.05",
                     "CARDBOARD_BOT_POOL": "thread"}, tmp_path / "server.log")
    rng = random.Random(4)
    with server:
        server.start()
        url, seat = create_bot_room(server.base)
        desk = browser.new_context(viewport={"width": 1366, "height": 768})
        phone = browser.new_context(viewport={"width": 360, "height": 740}, is_mobile=True,
                                    has_touch=True)
        page, watcher = desk.new_page(), phone.new_page()
        errors: list[str] = []
        for p in (page, watcher):
            p.on("pageerror", lambda e: errors.append(str(e)))
        sit(page, url, "Ann", seat)
        watcher.goto(url)
        # A move, then stop the server while it is the page's turn. (One
        # only: the computer plays at random, and after a few moves it may
        # leave this seat stuck, which ends the deal.)
        v = version(page)
        page.click(f'.cell.playable[data-square="{rng.choice(my_turn(page))}"]')
        wait_version(page, v + 2)  # the move, then the computer's answer
        squares = my_turn(page)
        before = version(page)
        logged = page.locator("#log li").count()
        wait_version(watcher, before)

        assert server.terminate() in STOPPED
        for p in (page, watcher):
            expect(p.locator("#banner")).to_contain_text(RESTARTING)
            expect(p.locator("#conn")).to_have_text(RESTARTING)
            expect(p.locator("#banner")).to_have_class("banner outage")
        expect(page.locator("#banner")).to_contain_text("Your seat is kept")
        expect(page.locator("#board .cell.playable")).to_have_count(0)  # nothing to click while away
        # Who is connected is unknown while the page is cut off: no green
        # dot (self-hoster pass: both stayed green), and green again after.
        for p in (page, watcher):
            assert p.locator(".seat-row .dot").count() == 2
            assert p.evaluate(GREEN_DOTS) == 0
        settled_shot(page, artifacts / "restart-banner-desktop.png")
        settled_shot(watcher, artifacts / "restart-banner-phone.png")

        server.start()
        for p in (page, watcher):
            expect(p.locator("#conn")).to_have_text("Connected", timeout=30_000)
            expect(p.locator("#banner")).not_to_contain_text(RESTARTING)
        expect(page.locator("#banner-text")).to_have_text("Your turn.")
        expect(page.locator(f'.seat-row.you[data-seat="{seat}"]')).to_be_visible()
        page.wait_for_function(f"() => ({GREEN_DOTS})() === 2")
        assert version(page) == before and my_turn(page) == squares
        page.click(f'.cell.playable[data-square="{rng.choice(squares)}"]')
        wait_version(page, before + 2, timeout=15_000)  # the move, and the computer's answer
        wait_version(watcher, before + 2, timeout=15_000)
        assert page.locator("#log li").count() >= logged + 2
        settled_shot(page, artifacts / "restart-after-desktop.png")
        assert not errors, errors
        desk.close()
        phone.close()
