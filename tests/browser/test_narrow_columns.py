"""Narrow places of the room page, at a laptop's 1366×768 and a phone's
390×844 (found by a new-user pass): the score table's headers of three or
four players, the name tags on the Big board's small Jacks, the seats of
Get Stuck for Four with a "Remove" beside each computer player, and the
colours of your Suitors region while a Jumper is chosen."""

from __future__ import annotations

import json
import random
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import pytest
from browserkit import computer_room, create_room, finish_over_socket, sit, wait_version
from playwright.sync_api import Browser, Page, expect
from websockets.sync.client import connect

VIEWPORTS = [{"width": 1366, "height": 768}, {"width": 390, "height": 844}]
VIEWPORT_IDS = ["desktop", "phone"]


def _room_with_computers(base: str, game: str, options: dict[str, Any]) -> tuple[str, str]:
    """A room whose other seats hold easy computer players: its URL and the seat left free."""
    body = computer_room(base, game, options)
    return base + body["url"], body["seat"]


# Each header of the score table (the Review column's aside): its text, the
# lines it takes, whether a word of it is split across two lines (a line may
# end after a dash), and whether it overflows its cell.
HEADERS_JS = """() => [...document.querySelectorAll('#scores thead th:not(.review-cell)')].map((th) => {
  const all = document.createRange();
  all.selectNodeContents(th);
  const lines = Math.round(all.getBoundingClientRect().height / parseFloat(getComputedStyle(th).lineHeight));
  const split = [];
  const walk = document.createTreeWalker(th, NodeFilter.SHOW_TEXT);
  for (let t = walk.nextNode(); t; t = walk.nextNode()) {
    // A line may end after a dash: "North– / South ♠♣".
    for (const m of t.data.matchAll(/[^\\s–]+–?/g)) {
      const r = document.createRange();
      r.setStart(t, m.index);
      r.setEnd(t, m.index + m[0].length);
      const tops = new Set([...r.getClientRects()].map((b) => Math.round(b.top)));
      if (tops.size > 1) split.push(m[0]);
    }
  }
  return { text: th.textContent, lines, split,
           overflows: th.scrollWidth > th.clientWidth };
})"""


def _check_headers(page: Page) -> list[dict[str, Any]]:
    heads: list[dict[str, Any]] = page.evaluate(HEADERS_JS)
    assert heads, "no score table"
    for h in heads:
        assert h["lines"] <= 2 and not h["split"] and not h["overflows"], heads
    return heads


def _no_sideways_scroll(page: Page) -> None:
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= page.viewport_size["width"], f"the page scrolls sideways: {width}"  # type: ignore[index]


TAGS_JS = """() => [...document.querySelectorAll('#board .su-tag:not(.su-off)')].map((t) =>
  ({ text: t.textContent, cut: t.scrollWidth > t.clientWidth }))"""


@pytest.mark.parametrize("viewport", VIEWPORTS, ids=VIEWPORT_IDS)
@pytest.mark.parametrize("options", [{"players": 4, "variant": "big"}, {"players": 3, "variant": "big"},
                                     {"players": 3}], ids=["4-big", "3-big", "3-standard"])
def test_suitors_headers_and_jack_tags_read_whole(server: str, browser: Browser, artifacts: Path,
                                                  viewport: dict[str, int], options: dict[str, Any]) -> None:
    """The score table heads each player's column with the name and Jack on
    at most two lines, split between words only ("Grace / (J♣)", not
    "Gra / ce / (eas…"); the tag on each Jack shows a short name whole."""
    url, seat = _room_with_computers(server, "suitors", {**options, "seed": 5})
    ctx = browser.new_context(viewport=viewport)
    page = ctx.new_page()
    sit(page, url, "Ann", seat)
    expect(page.locator("#room")).to_have_attribute("data-phase", "playing")
    heads = _check_headers(page)
    assert [h["text"] for h in heads][:2] == ["Game", "You (J♠)"]
    # Computer players are named without their level here ("Grace (J♣)");
    # the seats list gives it.
    assert all("easy" not in h["text"] for h in heads), heads
    tags = page.evaluate(TAGS_JS)
    assert len(tags) == options["players"] and tags[0]["text"] == "You", tags
    assert not any(t["cut"] for t in tags), tags
    _no_sideways_scroll(page)
    shot = f"suitors-{'-'.join(map(str, options.values()))}-{viewport['width']}.png"
    page.screenshot(path=str(artifacts / shot))
    ctx.close()


REVIEW_BUTTON_JS = """() => {
  const b = document.querySelector('#scores [data-review="1"]').getBoundingClientRect();
  const t = document.querySelector('#scores table').getBoundingClientRect();
  return { width: b.width, height: b.height, inside: b.left >= t.left && b.right <= t.right + 0.5 };
}"""


@pytest.mark.parametrize("variant", ["standard", "big"])
def test_a_finished_four_player_game_keeps_the_names_whole_beside_review(
        server: str, browser: Browser, artifacts: Path, variant: str) -> None:
    """Once a four-player Suitors game is over the score table gains its
    Review column; in a laptop's window the four names above it still read
    whole ("Grace (J♣)" was "Grac / e / (J♣)" on the Big board, whose side
    panels are 278 px wide), and the Review button stays in the table, large
    enough to click, named in words, and opens the review."""
    strong = {"JH": "strong", "JC": "strong", "JD": "strong"}  # they end the game soon
    made, _ = finish_over_socket(server, "suitors", strong, players=4, variant=variant, seed=5)
    ctx = browser.new_context(viewport={"width": 1366, "height": 768})
    page = ctx.new_page()
    page.goto(server + made["url"])
    review = page.locator('#scores [data-review="1"]')
    expect(review).to_be_visible()
    heads = _check_headers(page)
    assert len(heads) == 5 and heads[1]["text"] == "Ann (J♠)", heads
    button = page.evaluate(REVIEW_BUTTON_JS)
    assert button["inside"] and button["width"] >= 32 and button["height"] >= 28, button
    expect(review).to_have_accessible_name("Review game 1")
    expect(review).to_have_attribute("title", "Review game 1")
    _no_sideways_scroll(page)
    page.locator(".scores").screenshot(path=str(artifacts / f"suitors-4-{variant}-review-column.png"))
    review.click()
    expect(page.locator(".review-board .board")).to_be_visible()
    ctx.close()


# Every seat row: whether the name keeps one line, whether the seat's label
# starts on the line under it, and whether a "Remove" keeps off them both.
SEAT_ROWS_JS = """() => [...document.querySelectorAll('#seats .seat-row')].map((r) => {
    const box = (node) => {
      const range = document.createRange();
      range.selectNodeContents(node);
      return [...range.getClientRects()].filter((b) => b.width > 0);
    };
    const spread = (rects, side) => {
      const at = rects.map((b) => b[side]);
      return Math.max(...at) - Math.min(...at);
    };
    const name = box(r.querySelector('.seat-name'));
    const label = box(r.querySelector('.seat-label'));
    const text = r.querySelector('.grow').getBoundingClientRect();
    const remove = r.querySelector('[data-remove-bot]');
    const btn = remove ? remove.getBoundingClientRect() : null;
    return {
      seat: r.dataset.seat,
      remove: !!remove,
      nameOneLine: spread(name, 'bottom') < 4,
      labelUnder: Math.min(...label.map((b) => b.top)) >= Math.max(...name.map((b) => b.bottom)) - 1,
      labelOneLine: label.length > 0 && spread(label, 'top') < 4,
      apart: !btn || btn.left >= text.right || btn.top >= text.bottom,
    };
  })"""


@pytest.mark.parametrize("viewport", VIEWPORTS, ids=VIEWPORT_IDS)
def test_get_stuck_four_headers_and_seats_with_remove(server: str, browser: Browser, artifacts: Path,
                                                      viewport: dict[str, int]) -> None:
    """Get Stuck for Four: the partnerships head the score table on at most
    two lines ("North– / South ♠♣"); every seat reads alike, its name on one
    line and its seat's label under it, with a computer player's "Remove"
    beside them or under them. (At 1366 px the side panels are 300 px wide:
    "Grace (medium) South ♣" beside the indicator Ten used to push the
    label alone onto a second line, unlike the rows around it.)"""
    url = create_room(server, "get-stuck-4")
    ctx = browser.new_context(viewport=viewport)
    page = ctx.new_page()
    sit(page, url, "Ann", "N")
    page.select_option("#bot-level", "medium")
    for seat in ("E", "S"):
        page.click(f'button[data-add-bot="{seat}"]')
    expect(page.locator("[data-remove-bot]")).to_have_count(2)
    heads = _check_headers(page)
    assert [h["text"] for h in heads] == ["Deal", "North–South ♠♣", "East–West ♥♦"]
    rows = page.evaluate(SEAT_ROWS_JS)
    assert [r["seat"] for r in rows] == ["N", "E", "S", "W"]
    assert [r["remove"] for r in rows] == [False, True, True, False]
    assert all(r["nameOneLine"] and r["labelUnder"] and r["labelOneLine"] and r["apart"] for r in rows), rows
    if viewport["width"] < 480:  # the four indicator Tens share one row (they wrapped three and one)
        tops = page.evaluate("() => [...document.querySelectorAll('.indicator')]"
                             ".map((d) => d.getBoundingClientRect().top)")
        assert len(tops) == 4 and max(tops) - min(tops) < 2, tops
    _no_sideways_scroll(page)
    page.locator(".side").screenshot(path=str(artifacts / f"get-stuck-4-remove-{viewport['width']}.png"))
    ctx.close()


# While a Jumper is chosen: the filter on the cards of your region (not lit,
# face up, not an unused Jack), on the other cards not lit, and the unused
# Jacks' opacity.
CHOOSING_JS = """() => {
  const card = (c) => getComputedStyle(c.querySelector('.card'));
  const cells = [...document.querySelectorAll('#board .su-cell:not(.su-act)')];
  return {
    choosing: document.querySelector('.su-board').classList.contains('su-choosing'),
    mine: cells.filter((c) => c.matches('.su-mine:not(.su-unused)') && c.dataset.card !== '??')
      .map((c) => card(c).filter),
    others: cells.filter((c) => !c.matches('.su-mine')).map((c) => card(c).filter),
    unused: [...document.querySelectorAll('#board .su-unused')].map((c) => Number(card(c).opacity)),
  };
}"""

TURN_JS = """() => ({
  version: Number(document.querySelector('#room').dataset.version || -1),
  phase: document.querySelector('#room').dataset.phase,
  reveals: [...document.querySelectorAll('#board .su-cell.playable:not(.su-jumper)')]
    .map((c) => c.dataset.square),
  jumpers: [...document.querySelectorAll('#board .su-cell.su-jumper')].map((c) => c.dataset.square),
})"""


def test_suitors_region_keeps_its_colours_while_a_jumper_is_chosen(server: str, browser: Browser,
                                                                    artifacts: Path) -> None:
    """Once a Jumper is chosen the layout dims around the landing squares,
    but the face-up cards of your own region keep their colours (they looked
    disabled); unused Jacks stay dimmed."""
    url, seat = _room_with_computers(server, "suitors", {"players": 3, "seed": 7, "auto_pass": False})
    ctx = browser.new_context(viewport={"width": 1366, "height": 768})
    page = ctx.new_page()
    sit(page, url, "Ann", seat)
    seen = False
    for _ in range(60):
        page.wait_for_function("""() => document.querySelector('#room').dataset.phase !== 'playing'
          || document.querySelector('#board .su-cell.playable') || document.querySelector('#pass-btn')""")
        now = page.evaluate(TURN_JS)
        if now["phase"] != "playing":
            break
        if now["jumpers"]:
            page.click(f'#board .su-cell[data-square="{now["jumpers"][0]}"]')
            got = page.evaluate(CHOOSING_JS)
            assert got["choosing"], got
            if got["mine"]:
                assert set(got["mine"]) == {"none"}, got
                assert any(f != "none" for f in got["others"]), got
                assert got["unused"] and all(o < 1 for o in got["unused"]), got
                page.locator("#board").screenshot(path=str(artifacts / "suitors-choosing-region.png"))
                seen = True
                break
            # Every other card of the region is lit too: try a later turn.
            page.keyboard.press("Escape")
        if now["reveals"]:
            page.click(f'#board .su-cell[data-square="{now["reveals"][0]}"]')
        elif now["jumpers"]:
            page.click(f'#board .su-cell[data-square="{now["jumpers"][0]}"]')
            page.locator("#board .su-cell.su-land").first.click()
        else:
            page.click("#pass-btn")
        wait_version(page, now["version"] + 1)
    assert seen, "no turn offered a Jumper beside other cards of the region"
    ctx.close()


def _deal_between(base: str, names: dict[str, str]) -> str:
    """A Get Stuck room whose first deal two people (``names``: seat → name)
    have played to its end over the websocket, each move chosen at random;
    its URL."""
    url = create_room(base, "get-stuck", {"seed": 7})
    rng = random.Random(5)
    with ExitStack() as stack:
        at = base.replace("http", "ws", 1) + "/ws/" + url.rsplit("/", 1)[1]
        socks = {seat: stack.enter_context(connect(at)) for seat in names}
        for seat, name in names.items():
            socks[seat].send(json.dumps({"type": "join", "seat": seat, "name": name}))
        latest: dict[str, dict[str, Any]] = {}
        acted = {seat: -1 for seat in names}
        for _ in range(2000):
            for seat, ws in socks.items():
                try:
                    while True:
                        frame = json.loads(ws.recv(timeout=0.05))
                        if frame["type"] == "state":
                            latest[seat] = frame
                except TimeoutError:
                    pass
            if any(f["phase"] == "deal_over" for f in latest.values()):
                return url
            for seat, f in latest.items():
                if f["legal_moves"] and f["version"] > acted[seat]:
                    socks[seat].send(json.dumps({"type": "move", "move": rng.choice(f["legal_moves"]),
                                                 "version": f["version"]}))
                    acted[seat] = f["version"]
    raise AssertionError("the deal did not end")


# Each header of the score table: its text and whether the part in brackets
# ("(Black ♠♣)") lies on one line.
BRACKETS_JS = """() => [...document.querySelectorAll('#scores thead th:not(.review-cell)')].map((th) => {
  const walk = document.createTreeWalker(th, NodeFilter.SHOW_TEXT);
  for (let t = walk.nextNode(); t; t = walk.nextNode()) {
    const at = t.data.indexOf('(');
    if (at < 0) continue;
    const r = document.createRange();
    r.setStart(t, at);
    r.setEnd(t, t.data.length);
    const tops = new Set([...r.getClientRects()].filter((b) => b.width > 0).map((b) => Math.round(b.top)));
    return { text: th.textContent, whole: tops.size === 1 };
  }
  return { text: th.textContent, whole: true };
})"""


@pytest.mark.parametrize("viewport", VIEWPORTS, ids=VIEWPORT_IDS)
def test_get_stuck_headers_keep_the_seat_in_brackets_whole(server: str, browser: Browser, artifacts: Path,
                                                           viewport: dict[str, int]) -> None:
    """After a deal of Get Stuck between two people, the score table (with
    its Review column) heads each column with the player and the seat, and
    a header that takes two lines breaks before the brackets ("Ben / (Black
    ♠♣)"), never inside them (new-user pass: at 1366×768 it read "Ben
    (Black / ♠♣)", the suits alone on the second line)."""
    url = _deal_between(server, {"red": "Ann", "black": "Ben"})
    ctx = browser.new_context(viewport=viewport)
    page = ctx.new_page()
    page.goto(url)
    expect(page.locator("#scores [data-review]")).to_have_count(1)
    heads = page.evaluate(BRACKETS_JS)
    assert [" ".join(h["text"].split()) for h in heads] == ["Deal", "Ann (Red ♥♦)", "Ben (Black ♠♣)"], heads
    assert all(h["whole"] for h in heads), heads
    _check_headers(page)
    _no_sideways_scroll(page)
    shot = artifacts / f"get-stuck-named-headers-{viewport['width']}.png"
    page.locator(".scores").screenshot(path=str(shot))
    ctx.close()
