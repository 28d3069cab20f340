"""The pages work under the strict Content-Security-Policy (``app/security.py``):
the home page, a room where two players make moves, a rules page and the
404 page report no violation, and the styles that were inline still apply."""

from __future__ import annotations

from pathlib import Path

from browserkit import create_room, sit, version, violations, wait_version, watched
from playwright.sync_api import Browser, expect


def test_pages_report_no_csp_violation(server: str, browser: Browser, artifacts: Path) -> None:
    console: list[str] = []
    contexts = [browser.new_context(viewport={"width": 1366, "height": 768}) for _ in range(2)]
    red, black = (watched(c, console) for c in contexts)

    red.goto(server + "/")
    expect(red.locator(".game-card").first).to_be_visible()
    fan = red.locator(".game-card .fan .card").first
    assert fan.evaluate("e => getComputedStyle(e).transform") != "none"  # was an inline style
    assert red.locator('input[data-option="target"]').evaluate("e => getComputedStyle(e).width") != "auto"
    # the listener works: an inline style attribute is refused and reported
    probe = "<p id=probe style='color:red'>x</p>"
    red.evaluate("html => document.body.insertAdjacentHTML('beforeend', html)", probe)
    red.wait_for_function("() => window.__csp.length > 0")
    assert red.locator("#probe").evaluate("e => getComputedStyle(e).color") != "rgb(255, 0, 0)"
    console.clear()

    url = create_room(server, "get-stuck", {"seed": 11})
    sit(red, url, "Ann", "red")
    sit(black, url, "Ben", "black")
    for page in (red, black):
        expect(page.locator("#room")).to_have_attribute("data-phase", "playing")
    for _ in range(4):
        v = max(version(red), version(black))
        mover = next(p for p in (red, black) if p.locator(".cell.playable").count())
        mover.locator(".cell.playable").first.click()
        for page in (red, black):
            wait_version(page, v + 1)
    red.click("#copy-link")
    expect(red.locator("#copy-link")).not_to_have_text("Copy link")
    assert violations(red) == [] and violations(black) == []
    red.screenshot(path=str(artifacts / "csp-room.png"))

    for path in ("/rules/get-stuck-4", "/rules/suitors", "/no/such/page"):
        black.goto(server + path)
        expect(black.locator("main")).to_be_visible()
        assert violations(black) == [], path
    black.goto(server + "/rules/get-stuck-4")
    assert black.locator(".suit-red").first.evaluate("e => getComputedStyle(e).color") == "rgb(192, 37, 43)"
    black.screenshot(path=str(artifacts / "csp-rules.png"))
    red.goto(server + "/")
    assert violations(red) == []
    red.set_viewport_size({"width": 360, "height": 740})
    red.screenshot(path=str(artifacts / "csp-home-phone.png"))
    red.set_viewport_size({"width": 1366, "height": 768})
    red.screenshot(path=str(artifacts / "csp-home.png"))
    assert console == []
    for c in contexts:
        c.close()
