"""A network path that dies silently (a proxy or a NAT that stops passing
bytes but never closes the connection): the page cannot see the server's
pings, so it would show "Connected" and "Your turn" for ever and lose the
move clicked. Instead a move with no answer within 5 s makes the page say the
connection is lost and reconnect; once the network is back it resumes its
seat, shows that the move did not get through, and the move played again
lands (static/js/room.js, ANSWER_MS)."""

from __future__ import annotations

import random
from pathlib import Path

from blackhole import BlackholeProxy
from browserkit import computer_room, settled_shot, sit, version, wait_version
from playwright.sync_api import Browser, expect
from test_restart import create_bot_room, my_turn

LOST = "Connection lost, reconnecting…"


def test_a_move_into_a_silent_network_reconnects(browser: Browser, server: str,
                                                 artifacts: Path) -> None:
    url, seat = create_bot_room(server)
    rng = random.Random(7)
    with BlackholeProxy(int(server.rsplit(":", 1)[1])) as proxy:
        context = browser.new_context(viewport={"width": 1366, "height": 768})
        page = context.new_page()
        errors: list[str] = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        sit(page, proxy.base + url.removeprefix(server), "Ann", seat)
        squares = my_turn(page)
        before = version(page)
        expect(page.locator("#conn")).to_have_text("Connected")

        proxy.cut()
        page.click(f'.cell.playable[data-square="{rng.choice(squares)}"]')
        # Within the page's 5 s, and long before the server's pings would
        # close anything (which the dead path would not pass on anyway).
        expect(page.locator("#conn")).not_to_have_text("Connected", timeout=8_000)
        expect(page.locator("#banner")).to_contain_text(LOST)
        expect(page.locator("#board .cell.playable")).to_have_count(0)  # nothing to click while away
        settled_shot(page, artifacts / "connection-lost.png")
        assert version(page) == before

        proxy.heal()
        expect(page.locator("#conn")).to_have_text("Connected", timeout=20_000)
        expect(page.locator(f'.seat-row.you[data-seat="{seat}"]')).to_be_visible()
        expect(page.locator("#banner")).to_contain_text("Your turn.")
        # The move never reached the server: the same position, to play again.
        assert version(page) == before
        page.click(f'.cell.playable[data-square="{rng.choice(my_turn(page))}"]')
        wait_version(page, before + 1)
        expect(page.locator("#conn")).to_have_text("Connected")
        context.close()
    assert errors == []


def _computers_room(base: str) -> str:
    """The path of a Get Stuck room where computer players hold both seats."""
    url: str = computer_room(base, "get-stuck", {"seed": 3}, seats="all")["url"]
    return url


def test_a_watching_page_asks_when_the_network_comes_back(browser: Browser, server: str) -> None:
    """A spectator sends nothing: when the browser says the network is back
    (a phone that changed networks), the page pings, and with no answer
    it reconnects and catches up with the moves it missed."""
    path = _computers_room(server)
    with BlackholeProxy(int(server.rsplit(":", 1)[1])) as proxy:
        context = browser.new_context(viewport={"width": 1366, "height": 768})
        page = context.new_page()
        errors: list[str] = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.goto(proxy.base + path)
        expect(page.locator("#conn")).to_have_text("Connected")
        wait_version(page, version(page) + 1)  # the computers play

        proxy.cut()
        page.evaluate("() => window.dispatchEvent(new Event('online'))")
        expect(page.locator("#conn")).not_to_have_text("Connected", timeout=8_000)
        expect(page.locator("#banner")).to_contain_text(LOST)
        frozen = version(page)
        proxy.heal()
        expect(page.locator("#conn")).to_have_text("Connected", timeout=20_000)
        wait_version(page, frozen + 1)  # caught up, and following again
        context.close()
    assert errors == []


def test_a_page_left_alone_asks_after_a_silence(browser: Browser, server: str) -> None:
    """With nothing sent or received for IDLE_MS (25 s, on the page's own
    clock: faked here), the page pings; the answer keeps it connected, and
    over a silent path its absence makes it reconnect."""
    path = _computers_room(server)
    with BlackholeProxy(int(server.rsplit(":", 1)[1])) as proxy:
        context = browser.new_context(viewport={"width": 1366, "height": 768})
        page = context.new_page()
        page.clock.install()
        page.goto(proxy.base + path)
        expect(page.locator("#conn")).to_have_text("Connected")
        page.clock.run_for(30_000)  # a pong comes back: all is well
        expect(page.locator("#conn")).to_have_text("Connected")

        proxy.cut()
        page.clock.run_for(30_000)  # the next ping, never answered
        page.clock.run_for(6_000)
        expect(page.locator("#conn")).not_to_have_text("Connected", timeout=5_000)
        expect(page.locator("#banner")).to_contain_text(LOST)
        context.close()
