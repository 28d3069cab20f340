"""The match page (/m/<id>) and /review fit the window: on a laptop the
layout is as large as the window's height allows, the green panel is only as
wide as it, and the step controls and the current move are in view without
scrolling; a large screen loses nothing. (The layout was sized
for controls above it and drawn small inside a panel as wide as the page:
cards of 39 px at 1366×768 in a panel 852 px wide.) On a phone the layout
comes first and the step controls directly below it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from browserkit import finish_over_socket, finished_record, settled_shot
from playwright.sync_api import Browser, Page, expect

SIZES = {"1366x768": (1366, 768), "1280x720": (1280, 720), "1920x1080": (1920, 1080), "390x844": (390, 844)}

# The narrowest a card of the layout may be at each size, in px. Before the
# change (1366×768, 1280×720, 1920×1080, 390×844): a 7×7 layout 39, 36, 70
# and 47 (Romeo and Juliet 34, 34, 64, 43); Suitors 63, 56, 76, 37; the Big
# board 31, 28, 55, 30.
SEVEN = {"1366x768": 47, "1280x720": 42, "1920x1080": 78, "390x844": 45}
CASES: dict[str, tuple[str, dict[str, Any], dict[str, int]]] = {
    "get-stuck": ("get-stuck", {"deals": 2}, SEVEN),
    # Twenty deal buttons fill their row: the match's actions must not make another above the layout.
    "get-stuck-20-deals": ("get-stuck", {"deals": 20}, SEVEN),
    "get-stuck-4": ("get-stuck-4", {}, SEVEN),
    "romeo-and-juliet": ("romeo-and-juliet", {}, SEVEN),
    "suitors": ("suitors", {}, {"1366x768": 68, "1280x720": 61, "1920x1080": 74, "390x844": 35}),
    "suitors-big": ("suitors", {"variant": "big"},
                    {"1366x768": 35, "1280x720": 31, "1920x1080": 58, "390x844": 28}),
}

GEOMETRY = """() => {
  const box = (e) => e.getBoundingClientRect();
  const q = (s) => document.querySelector(s);
  const panel = box(q('.review-table'));
  // The layout with its row numbers, and Get Stuck for Four's Tens beside it.
  const parts = [q('.review-board .grid-frame'), q('.review-extra .indicators')].filter(Boolean).map(box);
  const left = Math.min(...parts.map((r) => r.left)), right = Math.max(...parts.map((r) => r.right));
  const controls = [...document.querySelectorAll('#review [data-go], #review-slider')].map(box);
  return {
    card: box(q('.review-board .board .cell')).width,
    spare: panel.width - (right - left),
    last_row: box(q('.review-board .board')).bottom,
    table_bottom: box(q('.review-table')).bottom,
    controls_top: box(q('#review .review-controls')).top,
    controls_bottom: Math.max(...controls.map((r) => r.bottom)),
    controls_right: Math.max(...controls.map((r) => r.right)),
    current_move: box(q('#review-moves li[aria-current=step]')).bottom,
    scroll_y: scrollY, page_width: document.documentElement.scrollWidth,
  };
}"""


def open_record(page: Page, server: str, record: str) -> None:
    """Review ``record`` as a player does, from the home page's form."""
    page.goto(server + "/")
    page.fill("#record-text", record)
    page.click(".record-form button[type=submit]")
    page.wait_for_url("**/review")
    # Shown: until then the page may still write its first position (#deal1-move0)
    # into the address, over the one a test goes to next.
    expect(page.locator("#review-root")).to_have_attribute("data-ready", "true")


@pytest.mark.parametrize("case", list(CASES))
def test_the_reviewed_layout_uses_the_room_it_has(server: str, browser: Browser, artifacts: Path,
                                                   case: str) -> None:
    game, options, least = CASES[case]
    ctx = browser.new_context(viewport={"width": 1366, "height": 768})
    page = ctx.new_page()
    if case == "get-stuck":  # the match page of a match played in a room
        _, match_id = finish_over_socket(server, game, **options)
        address = f"{server}/m/{match_id}#deal1-move6"
    else:  # a record reviewed on /review
        open_record(page, server, finished_record(game, options, seed=1))
        address = f"{server}/review#deal1-move6"
    for size, (width, height) in SIZES.items():
        page.set_viewport_size({"width": width, "height": height})
        page.goto(address)
        page.reload()  # a fresh page at this size (going to the same address only moves to its #position)
        expect(page.locator("#review-root")).to_have_attribute("data-ready", "true")
        expect(page.locator("#review")).to_have_attribute("data-step", "6")
        if game == "suitors":
            # The cards set aside are listed, and none is on the Big board, whose
            # layout takes every card (new-user pass: "Set aside, unseen in play:"
            # ended there); the legend speaks of the mover, not of "you".
            expect(page.locator(".su-aside")).to_have_count(0 if options.get("variant") else 1)
            expect(page.locator(".su-legend")).to_contain_text("moved since the mover's last turn")
        settled_shot(page, artifacts / f"review-fit-{case}-{size}.png")
        got = page.evaluate(GEOMETRY)
        where = f"{case} at {size}: {got}"
        assert got["card"] >= least[size], where
        assert got["page_width"] <= width, where  # nothing scrolls sideways
        assert got["scroll_y"] == 0, where
        assert got["controls_right"] <= width, where
        if width <= 480:
            # On a phone the layout comes first, and the step controls
            # directly below it (they were above it, and its last row below
            # the first screen); twenty deal buttons take three rows above it.
            assert got["last_row"] <= height or options.get("deals") == 20, where
            assert 0 <= got["controls_top"] - got["table_bottom"] <= 12, where
        else:
            # Elsewhere the step controls are on the first screen too.
            assert got["controls_bottom"] <= height, where
        if width > 900:
            # The whole layout, and the move shown in the list, are in the window...
            assert got["last_row"] <= height, where
            assert got["current_move"] <= height, where
            # ... and the green panel hugs the layout (it was 516 px wider at 1366×768).
            assert got["spare"] <= 40, where
            # So is the last position's, with how the game ended above the layout
            # (new-user pass: Suitors' result pushed the Big board's last row out).
            page.keyboard.press("End")
            expect(page.locator("#review")).not_to_have_attribute("data-step", "6")
            settled_shot(page, artifacts / f"review-fit-{case}-{size}-end.png")
            end = page.evaluate(GEOMETRY)
            assert end["last_row"] <= height, f"{case} at {size}, the end: {end}"
    ctx.close()


@pytest.mark.parametrize("game", ["get-stuck", "romeo-and-juliet"])
def test_a_review_in_the_room_uses_the_room_it_has(server: str, browser: Browser, artifacts: Path,
                                                   game: str) -> None:
    """"Review" on a finished deal, in the room: on a laptop the step controls
    stand beside the layout, as on the match page, and the whole layout is in
    the window as the review opens (new-user pass: the controls took a box
    above it, and its last rows were below the window)."""
    made, _ = finish_over_socket(server, game)
    for size in ("1366x768", "1280x720"):
        width, height = SIZES[size]
        ctx = browser.new_context(viewport={"width": width, "height": height})
        page = ctx.new_page()
        page.goto(server + made["url"])
        page.click('[data-review="1"]')
        expect(page.locator(".review-board .board")).to_be_visible()
        settled_shot(page, artifacts / f"review-in-room-{game}-{size}.png")
        got = page.evaluate("""() => {
          const box = (s) => document.querySelector(s).getBoundingClientRect();
          return { board: box('.review-board .board'), controls: box('#review .review-controls'),
                   banner: box('#banner') };
        }""")
        where = f"{game} at {size}: {got}"
        # The review scrolls the room's banner to the top of the window (as far
        # as the page goes): from there the layout's last row is in the window.
        assert got["board"]["bottom"] - got["banner"]["top"] <= height, where
        assert got["controls"]["left"] >= got["board"]["right"], where
        ctx.close()
