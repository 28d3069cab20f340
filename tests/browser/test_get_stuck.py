"""Get Stuck in real browsers: four players share a room link and play a whole
deal by clicking highlighted cards (the server passes for a player who has
no other move); a reload mid-deal keeps the seat; the result stays on every
screen until all four are ready."""

from __future__ import annotations

import json
import random
import re
from collections import Counter
from pathlib import Path

import pytest
from browserkit import (
    SNAPSHOT,
    check_coords,
    computer_room,
    create_room,
    finish_over_socket,
    sit,
    version,
    wait_version,
)
from playwright.sync_api import Browser, Dialog, Page, expect

SEATS = ("N", "E", "S", "W")


def _mover(pages: dict[str, Page], tries: int = 50) -> tuple[str, Page] | None:
    """The seat (and page) that can act now. Between a server's forced pass
    and the next mover's page drawing it, nobody can for a moment: look again
    for a while (up to ``tries`` times, 0.1 s apart)."""
    for _ in range(tries):
        for seat, page in pages.items():
            if page.locator(".cell.playable, #pass-btn").count():
                return seat, page
        next(iter(pages.values())).wait_for_timeout(100)
    return None


SAW_FORCED_PASS = """
new MutationObserver(() => {
  const b = document.getElementById("banner");
  const said = "The table passes for you in a moment, or press Pass now.";
  if (b && b.textContent.includes(said)) window.__sawForcedPass = true;
}).observe(document, { subtree: true, childList: true, characterData: true });
"""
"""Records whether the banner ever said that the server is about to pass."""


def test_four_players_play_a_whole_deal(server: str, browser: Browser, artifacts: Path) -> None:
    url = create_room(server, "get-stuck-4", {"seed": 7})
    contexts = [browser.new_context(viewport={"width": 1100, "height": 900}) for _ in SEATS]
    for ctx in contexts:
        ctx.add_init_script(SAW_FORCED_PASS)
    pages = {seat: ctx.new_page() for seat, ctx in zip(SEATS, contexts, strict=True)}
    # What each page receives, by frame type: the pages ask for patches.
    received: dict[str, Counter[str]] = {seat: Counter() for seat in SEATS}
    for seat, page in pages.items():
        page.on("websocket", lambda ws, seat=seat: ws.on(
            "framereceived", lambda data, seat=seat: received[seat].update(
                [json.loads(data)["type"]] if isinstance(data, str) else [])))
    names = {"N": "Ann", "E": "Ben", "S": "Cat", "W": "Dan"}
    for seat, page in pages.items():
        sit(page, url, names[seat], seat)
    for page in pages.values():
        expect(page.locator("#room")).to_have_attribute("data-phase", "playing")
    check_coords(pages["N"], 7, 7)
    pages["N"].screenshot(path=str(artifacts / "get-stuck-4-start.png"))

    rng = random.Random(3)
    moves = 0
    reloaded = False
    widths: set[int] = set()
    captions: set[str] = set()
    while True:
        v = max(version(p) for p in pages.values())
        for p in pages.values():
            wait_version(p, v)
        if pages["N"].locator("#room").get_attribute("data-phase") != "playing":
            break
        found = _mover(pages)
        assert found, "nobody can act in a deal that is still playing"
        seat, page = found
        targets = page.locator(".cell.playable")
        if targets.count():
            targets.nth(rng.randrange(targets.count())).click()
        else:
            pass  # stuck: a pass is the only move, and the server plays it after a pause
        moves += 1
        for p in pages.values():
            wait_version(p, v + 1)
        # The line above the board ("Last move: North is stuck: indicator face
        # down") never widens the page.
        widths.add(pages["N"].evaluate("document.documentElement.scrollWidth"))
        caption = pages["N"].locator(".gs-last")
        if "(played by the server" in (caption.get_attribute("title") or ""):
            captions.add(caption.inner_text())  # the log's note in brackets is left out
        if moves == 12 and not reloaded:
            # A reload mid-deal puts the player back in the same seat.
            pages["E"].reload()
            wait_version(pages["E"], v + 1)
            expect(pages["E"].locator('.seat-row.you[data-seat="E"]')).to_be_visible()
            pages["E"].screenshot(path=str(artifacts / "get-stuck-4-after-reload.png"))
            reloaded = True
        assert moves < 400

    assert reloaded
    assert widths == {1100}, widths
    assert captions and all(re.fullmatch(r"Last move: \w+ is (stuck: indicator face down|still stuck and"
                                         r" passes)", c) for c in captions), captions
    # Nobody clicked Pass: every pass of the deal (this one, seed 7, has some)
    # was played by the server.
    passes = pages["W"].locator("#log li", has_text=re.compile(
        "is stuck: indicator face down|is still stuck and passes"))
    by_server = pages["W"].locator("#log li", has_text="(played by the server: no other move)")
    assert passes.count() == by_server.count() > 0
    # ... and the stuck player was told so during the pause.
    assert any(p.evaluate("window.__sawForcedPass === true") for p in pages.values())
    for page in pages.values():
        expect(page.locator("#room")).to_have_attribute("data-phase", "deal_over")
        expect(page.locator("#result")).to_be_visible()
    # Most states came as patches, and the boards drawn from them agree.
    assert all(r["patch"] > 3 * r["state"] for r in received.values()), received
    texts = {seat: page.locator("#result .sides").inner_text() for seat, page in pages.items()}
    assert all(t.count(" (you)") == 1 for t in texts.values()), texts  # each player's own side
    texts = {seat: t.replace(" (you)", "") for seat, t in texts.items()}
    assert len(set(texts.values())) == 1, texts
    totals = {seat: page.locator("#scores tfoot").inner_text() for seat, page in pages.items()}
    assert len(set(totals.values())) == 1, totals
    pages["N"].screenshot(path=str(artifacts / "get-stuck-4-deal-over.png"), full_page=True)

    # The result stays on every screen until all four are ready; then deal 2,
    # opened by East.
    v = version(pages["S"])
    for n, seat in enumerate(("S", "W", "N"), start=1):
        pages[seat].click("#next-deal-btn")
        for p in pages.values():
            expect(p.locator("#banner")).to_contain_text(f"{n} of 4 ready")
            expect(p.locator("#result")).to_be_visible()
            expect(p.locator("#room")).to_have_attribute("data-phase", "deal_over")
        expect(pages[seat].locator("#next-deal-btn")).to_have_text("Ready ✓")
        expect(pages[seat].locator("#next-deal-btn")).to_be_disabled()
    expect(pages["E"].locator("#banner")).to_contain_text("waiting for you")
    expect(pages["N"].locator("#banner")).to_contain_text("waiting for Ben (East")
    pages["N"].screenshot(path=str(artifacts / "get-stuck-4-ready-3-of-4.png"))
    assert version(pages["N"]) == v + 3  # each press is stored; the deal is not dealt
    pages["E"].click("#next-deal-btn")
    for p in pages.values():
        wait_version(p, v + 4)
        expect(p.locator("#room")).to_have_attribute("data-phase", "playing")
        expect(p.locator("#deal-count")).to_have_text("Deal 2 of 4")
    assert pages["E"].locator(".cell.playable, #pass-btn").count() > 0
    for ctx in contexts:
        ctx.close()


def test_two_player_game_on_a_phone(server: str, browser: Browser, artifacts: Path) -> None:
    url = create_room(server, "get-stuck", {"seed": 11})
    ctxs = [browser.new_context(viewport={"width": 360, "height": 740}, has_touch=True, is_mobile=True)
            for _ in range(2)]
    red, black = (c.new_page() for c in ctxs)
    sit(red, url, "Rosa", "red")
    sit(black, url, "Bram", "black")
    expect(red.locator("#room")).to_have_attribute("data-phase", "playing")
    width = red.evaluate("document.documentElement.scrollWidth")
    assert width <= 360, f"the page scrolls sideways at 360 px: {width}"
    # The room's heading and its buttons take two rows, the buttons the second.
    expect(red.locator("#notify-btn")).to_be_visible()  # all four buttons showing
    rows = red.evaluate("""() => new Set([...document.querySelectorAll(
      '.room-head h1, .room-head .btn')].map((e) => Math.round(e.getBoundingClientRect().top))).size""")
    assert rows == 2, f"the room's heading takes {rows} rows at 360 px"
    mover = red if red.locator(".cell.playable").count() else black
    v = version(mover)
    mover.locator(".cell.playable").first.tap()
    wait_version(red, v + 1)
    wait_version(black, v + 1)
    expect(red.locator(".cell.last-to")).to_have_count(1)
    expect(red.locator(".gs-last")).to_contain_text("Last move: ")
    width = red.evaluate("document.documentElement.scrollWidth")
    assert width <= 360, f"after a move the page scrolls sideways at 360 px: {width}"
    check_coords(red, 7, 7)
    red.screenshot(path=str(artifacts / "get-stuck-phone.png"), full_page=True)
    for c in ctxs:
        c.close()


FOCUS_JS = """() => {
  const a = document.activeElement;
  return { board: document.querySelector('#board').contains(a), playable: a.matches('.cell.playable') };
}"""


def test_keyboard_plays_a_move(server: str, browser: Browser, artifacts: Path) -> None:
    """A move played with the keyboard keeps the focus on the board (it
    used to fall to the page, so the next turn was a dozen Tabs away from
    the top), and at the player's next turn it is on a playable card; its
    ring shows round the lifted card."""
    url = create_room(server, "get-stuck", {"seed": 5})
    ctxs = [browser.new_context(viewport={"width": 1366, "height": 768}) for _ in range(2)]
    a, b = (c.new_page() for c in ctxs)
    sit(a, url, "Ada", "red")
    sit(b, url, "Bo", "black")
    mover, other = (a, b) if a.locator(".cell.playable").count() else (b, a)
    v = version(mover)
    for _ in range(40):  # Tab through the page to the first playable card
        mover.keyboard.press("Tab")
        if mover.evaluate(FOCUS_JS)["playable"]:
            break
    assert mover.evaluate(FOCUS_JS)["playable"]
    # The blue ring, round the card (after its .12 s transition).
    mover.wait_for_function("""() => getComputedStyle(document.activeElement.querySelector('.card'))
      .boxShadow.includes('43, 123, 214')""", timeout=2_000)
    mover.locator("#board").screenshot(path=str(artifacts / "get-stuck-focus-ring.png"))
    mover.keyboard.press("Enter")
    wait_version(mover, v + 1)
    assert mover.evaluate(FOCUS_JS)["board"]  # waiting on the board, not on the page
    other.locator(".cell.playable").first.click()
    wait_version(mover, v + 2)
    expect(mover.locator(".cell.playable").first).to_be_visible()
    assert mover.evaluate(FOCUS_JS) == {"board": True, "playable": True}
    before = version(mover)
    mover.keyboard.press("Enter")  # no Tab needed
    wait_version(mover, before + 1)
    for c in ctxs:
        c.close()


def _col_row(square: str) -> tuple[int, int]:
    return ord(square[0]) - 97, int(square[1:]) - 1


def test_arrow_keys_go_between_playable_cards(server: str, browser: Browser) -> None:
    """On the board, an arrow key takes the focus to the nearest playable
    card in its direction (a step along counts one, a step across two), and
    stays put when there is none; Enter then plays the focused card."""
    url = create_room(server, "get-stuck", {"seed": 5})
    ctxs = [browser.new_context(viewport={"width": 1366, "height": 768}) for _ in range(2)]
    a, b = (c.new_page() for c in ctxs)
    sit(a, url, "Ada", "red")
    sit(b, url, "Bo", "black")
    mover = a if a.locator(".cell.playable").count() else b
    squares = mover.eval_on_selector_all(".cell.playable", "es => es.map((e) => e.dataset.square)")
    assert len(squares) >= 2, squares
    arrows = {"ArrowLeft": (-1, 0), "ArrowRight": (1, 0), "ArrowUp": (0, -1), "ArrowDown": (0, 1)}
    focused = lambda: mover.evaluate("() => document.activeElement.dataset.square || null")  # noqa: E731
    moved = 0
    for start in squares:
        for key, (dx, dy) in arrows.items():
            mover.locator(f'.cell.playable[data-square="{start}"]').focus()
            x0, y0 = _col_row(start)
            best, score = start, None
            for sq in squares:
                x, y = _col_row(sq)
                along = (x - x0) * dx + (y - y0) * dy
                cost = along + 2 * (abs((x - x0) * dy) + abs((y - y0) * dx))
                if along > 0 and (score is None or cost < score):
                    best, score = sq, cost
            mover.keyboard.press(key)
            assert focused() == best, (start, key)
            moved += best != start
    assert moved  # some arrow went somewhere
    v = version(mover)
    mover.keyboard.press("Enter")
    wait_version(mover, v + 1)
    for c in ctxs:
        c.close()


def test_take_a_seat_pressed_twice_seats_you_without_an_error(server: str, page: Page) -> None:
    """A double click on "Take a seat" seats you once; the second press's
    refusal ("you already sit at red") is not shown (new-user pass)."""
    page.goto(create_room(server, "get-stuck"))
    wait_version(page, 0)
    page.get_by_placeholder("Your name").fill("Ann")
    page.locator("#join-any").dblclick()
    expect(page.locator(".seat-row.you")).to_have_count(1)
    page.wait_for_timeout(500)  # the second press's answer has come by now
    expect(page.locator("#toasts .toast")).to_have_count(0)


def test_seat_buttons_pressed_twice_act_once_without_an_error(server: str, page: Page) -> None:
    """"Add computer player", "Remove" and "Leave" are disabled on their
    first click: a double click acts once, with no refusal for the second
    ("seat E is already played by a computer player"; break-it pass)."""
    page.goto(create_room(server, "get-stuck-4"))
    wait_version(page, 0)
    page.get_by_placeholder("Your name").fill("Ann")
    page.locator("#join-any").click()
    expect(page.locator(".seat-row.you")).to_have_count(1)
    page.locator('button[data-add-bot="E"]').dblclick()
    expect(page.locator('.seat-row.computer[data-seat="E"]')).to_have_count(1)
    page.locator('button[data-remove-bot="E"]').dblclick()
    expect(page.locator(".seat-row.computer")).to_have_count(0)
    page.locator("#leave-btn").dblclick()
    expect(page.locator(".seat-row.you")).to_have_count(0)
    page.wait_for_timeout(500)  # the second presses' answers have come by now
    expect(page.locator("#toasts .toast")).to_have_count(0)


def test_home_page_creates_a_room_and_copies_its_link(server: str, page: Page, artifacts: Path) -> None:
    page.goto(server + "/")
    expect(page.locator("h1")).to_contain_text("cardboard games")
    page.screenshot(path=str(artifacts / "home.png"), full_page=True)
    page.click('form[data-game="get-stuck-4"] button[data-create="get-stuck-4"]')
    page.wait_for_url("**/r/*")
    wait_version(page, 0)
    expect(page.locator("#banner")).to_contain_text("Waiting for players")
    page.click("#copy-link")
    expect(page.locator("#copy-link")).to_have_text("Link copied!")


def test_hostile_name_shows_as_text(server: str, browser: Browser) -> None:
    url = create_room(server, "get-stuck")
    ctx = browser.new_context()
    page = ctx.new_page()
    dialogs: list[str] = []

    def dismiss(d: Dialog) -> None:
        dialogs.append(d.message)
        d.dismiss()

    page.on("dialog", dismiss)
    evil = "<img src=x onerror=alert(1)>"
    sit(page, url, evil, "red")
    expect(page.locator('.seat-row[data-seat="red"] .seat-name')).to_have_text(evil)
    assert page.locator("#seats img").count() == 0
    assert dialogs == []
    ctx.close()


def test_unknown_room_offers_to_create_one(server: str, page: Page) -> None:
    resp = page.goto(server + "/r/no-such-room")
    assert resp is not None and resp.status == 404
    words = page.locator(".notfound").inner_text().lower()
    assert words.count("new one") == 1, words  # the invitation is made once
    expect(page.locator("[data-create]").first).to_be_visible()
    page.locator('[data-create="get-stuck"]').click()
    page.wait_for_url(lambda u: "/r/" in u and "no-such-room" not in u)
    wait_version(page, 0)


HOLD_ANIMATIONS = """
const animate = Element.prototype.animate;
Element.prototype.animate = function (...args) {
  const anim = animate.apply(this, args);
  anim.pause();
  return anim;
};
"""
"""Every animation the page starts stays at its first frame until played."""

UNDER_FLYING_CARD = """() => {
  const card = document.querySelector('#board .in-flight');
  if (!card) return null;
  const r = card.getBoundingClientRect();
  const hit = document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2);
  const cell = hit && hit.closest('.cell');
  return { inside: card.contains(hit), cell: cell ? cell.dataset.square : null };
}"""


def test_a_card_sliding_past_lets_clicks_through(server: str, browser: Browser) -> None:
    """The card just moved slides over other squares for a moment: a click
    there must reach the square beneath, not the card in flight (it once
    swallowed a click made just as an opponent's card slid past)."""
    url = create_room(server, "get-stuck", {"seed": 11})
    ctxs = [browser.new_context() for _ in range(2)]
    red, black = (c.new_page() for c in ctxs)
    for page in (red, black):
        page.add_init_script(HOLD_ANIMATIONS)
    sit(red, url, "Ada", "red")
    sit(black, url, "Bo", "black")
    mover, other = (red, black) if red.locator(".cell.playable").count() else (black, red)
    v = version(mover)
    mover.locator(".cell.playable").first.click()
    wait_version(other, v + 1)
    gap = other.evaluate("() => document.querySelector('#board .cell.last-from').dataset.square")
    # Held at its first frame, the moved card lies over its old square, now the gap.
    assert other.evaluate(UNDER_FLYING_CARD) == {"inside": False, "cell": gap}
    other.evaluate("""() => { window.__clicked = [];
      document.addEventListener('click', (e) => window.__clicked.push(
        e.target.closest('.cell') ? e.target.closest('.cell').dataset.square : e.target.tagName)); }""")
    box = other.locator("#board .in-flight").bounding_box()
    assert box is not None
    other.mouse.click(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    assert other.evaluate("() => window.__clicked") == [gap]
    # Once it has landed, the card takes clicks again.
    other.evaluate("() => document.getAnimations().forEach((a) => a.finish())")
    expect(other.locator("#board .in-flight")).to_have_count(0)
    for c in ctxs:
        c.close()


def assert_tens_line_up(page: Page) -> None:
    """The four indicator Tens of the seats panel share their right edge."""
    rights = page.evaluate("""() => [...document.querySelectorAll('#seats .seat-row .card.ind')]
      .map((c) => Math.round(c.getBoundingClientRect().right))""")
    assert len(rights) == 4 and max(rights) - min(rights) <= 1, rights


SEAT_ROWS = """() => [...document.querySelectorAll('#seats .seat-row')].map((r) => {
  const box = (s) => r.querySelector(s).getBoundingClientRect();
  return { seat: r.dataset.seat, ind: box('.card.ind').width,
           sitBesideName: box('[data-join]').top < box('.seat-name').bottom };
})"""


@pytest.mark.parametrize("viewport", [{"width": 1280, "height": 800}, {"width": 1000, "height": 800},
                                      {"width": 390, "height": 844}],
                         ids=["desktop", "narrow-desktop", "phone"])
def test_the_empty_four_player_room_lists_its_seats_one_a_line(server: str, browser: Browser, artifacts: Path,
                                                               viewport: dict[str, int]) -> None:
    """Each seat of an empty Get Stuck for Four room takes one row: its
    indicator Ten big enough to read and its "Sit here" beside the name (each
    button wrapped onto a line of its own). Seated, the Tens still line up:
    "Leave" comes before the player's own (self-hoster pass: it pushed that
    Ten out of line)."""
    url = create_room(server, "get-stuck-4")
    ctx = browser.new_context(viewport=viewport)
    page = ctx.new_page()
    page.goto(url)
    wait_version(page, 0)
    rows = page.evaluate(SEAT_ROWS)
    assert [r["seat"] for r in rows] == list(SEATS)
    for r in rows:
        assert r["ind"] >= 28 and r["sitBesideName"], rows
    assert_tens_line_up(page)
    page.locator("#seats").screenshot(path=str(artifacts / f"get-stuck-4-seats-{viewport['width']}.png"))
    sit(page, url, "Ann", "E")
    expect(page.locator("#leave-btn")).to_be_visible()
    # (and "Add computer player" on the free seats: inline on a wide seats
    # panel, where it pushed the Tens left of the seated row's: verification pass)
    assert_tens_line_up(page)
    page.locator("#seats").screenshot(path=str(artifacts / f"get-stuck-4-seated-{viewport['width']}.png"))
    ctx.close()


def test_the_first_tab_offers_a_skip_to_the_content(server: str, page: Page) -> None:
    page.goto(create_room(server, "get-stuck"))
    skip = page.locator(".skip-link")
    top = "document.querySelector('.skip-link').getBoundingClientRect().top"
    assert page.evaluate(top) < 0  # out of sight until a keyboard reaches it
    page.keyboard.press("Tab")
    expect(skip).to_be_focused()
    page.wait_for_function(f"{top} >= 0 && {top} < 50")
    page.keyboard.press("Enter")
    assert page.evaluate("location.hash") == "#main"


@pytest.mark.parametrize("size", [(1366, 768), (1280, 720)])
def test_a_pass_fits_the_line_above_the_board_on_a_laptop(server: str, browser: Browser,
                                                          artifacts: Path, size: tuple[int, int]) -> None:
    """Get Stuck for Four on laptops: "Last move: West is stuck: indicator
    face down" fits the line above the board (new-user pass: the sentence
    was cut short after "turns the indica…"; verification pass: still cut
    at 1280×720, where the board is narrower)."""
    made = computer_room(server, "get-stuck-4", {"seed": 7}, seats="all")
    ctx = browser.new_context(viewport={"width": size[0], "height": size[1]})
    try:
        page = ctx.new_page()
        page.goto(server + made["url"])
        seen = page.wait_for_function("""() => {
          const e = document.querySelector(".gs-last");
          return e && e.textContent.includes(" is stuck")
            && [e.textContent, e.scrollWidth, e.clientWidth];
        }""", timeout=60_000).json_value()
        assert seen[1] <= seen[2], seen
        page.screenshot(path=str(artifacts / f"get-stuck-4-pass-{size[0]}.png"))
    finally:
        ctx.close()


def test_a_stuck_player_s_banner_keeps_the_layout_in_a_laptop_window(server: str, browser: Browser,
                                                                     artifacts: Path) -> None:
    """Get Stuck for Four at 1366×768, the room not passing for anyone: when
    North is stuck, the banner's line and its Pass button share two rows and
    the layout's last row stays in the window (new-user pass: the heading,
    the line and the button took three rows, and row 7 fell below)."""
    made = computer_room(server, "get-stuck-4", {"seed": 7, "auto_pass": False})
    ctx = browser.new_context(viewport={"width": 1366, "height": 768})
    try:
        page = ctx.new_page()
        sit(page, server + made["url"], "Ann", made["seat"])
        rng = random.Random(3)
        for _ in range(2000):  # (deal after deal, until North is stuck)
            now = page.evaluate(SNAPSHOT)
            if now["pass"] or now["phase"] == "match_over":
                break
            if now["phase"] == "deal_over":
                page.click("#next-deal-btn")
            elif now["squares"]:
                page.click(f'.cell.playable[data-square="{rng.choice(now["squares"])}"]')
            wait_version(page, now["version"] + 1)
        expect(page.locator("#pass-btn")).to_be_visible()
        expect(page.locator("#banner .sub")).to_contain_text("You are stuck")
        page.screenshot(path=str(artifacts / "get-stuck-4-stuck-1366.png"))
        banner = page.locator("#banner").bounding_box()
        row7 = page.locator('.cell[data-square="a7"]').bounding_box()
        assert banner is not None and row7 is not None
        assert banner["height"] <= 80, banner
        assert row7["y"] + row7["height"] <= 768, row7
    finally:
        ctx.close()



def test_two_players_are_named_in_the_result(server: str, browser: Browser, artifacts: Path) -> None:
    """After a two-player match against a computer player, the result, the
    match's totals and the score table name both players with their seats
    ("Ann (Red ♥♦)", the computer by its name without its level), not by
    their seats alone ("Red ♥♦")."""
    made, _ = finish_over_socket(server, "get-stuck")
    ctx = browser.new_context(viewport={"width": 1366, "height": 768})
    page = ctx.new_page()
    page.goto(server + made["url"])
    expect(page.locator("#result")).to_be_visible()
    seats = ("red", "black")
    bot = next(x for x in seats if x != made["seat"])
    bot_name = page.locator(f'.seat-row[data-seat="{bot}"] .seat-name').inner_text()
    assert bot_name.endswith(" (easy)"), bot_name
    suits = {"red": "Red ♥♦", "black": "Black ♠♣"}
    names = {made["seat"]: "Ann", bot: bot_name.removesuffix(" (easy)")}
    said = [f"{names[x]} ({suits[x]})" for x in seats]
    expect(page.locator("#result .side-score strong")).to_have_text(said)
    expect(page.locator("#scores thead th:not(.review-cell)")).to_have_text(["Deal", *said])
    for text in said:
        expect(page.locator("#match-result")).to_contain_text(text)
    page.screenshot(path=str(artifacts / "get-stuck-named-result.png"))
    ctx.close()
