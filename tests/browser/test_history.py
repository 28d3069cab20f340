"""Reviews in real browsers (docs/protocol.md, "Records and reviews"): a
finished Get Stuck for Four deal reviewed by keys and the slider on a laptop
and on a phone, a shared /m/ link opened in a fresh browser, and "Play this
deal again" dealing the same layout."""

from __future__ import annotations

import json
import random
import re
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from browserkit import (
    computer_room,
    finish_over_socket,
    finished_record,
    play_turns,
    settled_shot,
    violations,
    wait_version,
    watched,
)
from playwright.sync_api import Browser, Page, Route, expect

DESKTOP = {"viewport": {"width": 1366, "height": 768}}
PHONE = {"viewport": {"width": 360, "height": 740}, "has_touch": True, "is_mobile": True}

BOARD_JS = """sel => [...document.querySelectorAll(sel + ' .cell')].map((c) => {
  const card = c.querySelector('.card, .gap');
  if (card.classList.contains('gap')) return '..';
  return card.classList.contains('back') ? card.dataset.card.toLowerCase() : card.dataset.card;
})"""
"""The layout a page draws in ``sel``, as the view's tokens: ``..`` the gap,
lower case a face-down card, upper case a face-up one."""


def api(base: str, path: str, body: dict[str, Any] | None = None) -> Any:
    req = urllib.request.Request(base + path, method="GET" if body is None else "POST",
                                 data=None if body is None else json.dumps(body).encode(),
                                 headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=10) as r:
        return json.load(r)


def step_of(page: Page) -> int:
    return int(page.locator("#review").get_attribute("data-step") or -1)


def expect_step(page: Page, step: int, review: dict[str, Any]) -> None:
    """The review shows step ``step``: the slider, the highlighted move, the
    caption and the board drawn from the server's position."""
    expect(page.locator("#review")).to_have_attribute("data-step", str(step))
    assert page.locator("#review-slider").input_value() == str(step)
    expect(page.locator("#review-moves li[aria-current=step]")).to_have_attribute("data-step", str(step))
    if step:
        expect(page.locator("#review-caption")).to_contain_text(f"{step}. ")
    page.wait_for_function("() => document.getAnimations().length === 0")  # a move slides in
    assert page.evaluate(BOARD_JS, "#review-board") == review["steps"][step]["board"]["cells"]


@pytest.mark.parametrize("device", ["desktop", "phone"])
def test_review_a_finished_get_stuck_for_four_deal(server: str, browser: Browser, artifacts: Path,
                                                   device: str) -> None:
    made = computer_room(server, "get-stuck-4", {"seed": 31})
    ctx = browser.new_context(**(DESKTOP if device == "desktop" else PHONE))
    errors: list[str] = []
    page = watched(ctx, errors)
    page.goto(f"{server}{made['url']}?sit={made['seat']}")
    wait_version(page, 0)
    page.fill("#name", "Ann")
    page.click("#join-any")
    expect(page.locator(f'.seat-row.you[data-seat="{made["seat"]}"]')).to_be_visible()
    play_turns(page, random.Random(2), 400)
    expect(page.locator("#room")).to_have_attribute("data-phase", "deal_over")
    result = page.locator("#result .sides").inner_text()
    assert result.count("(you)") == 1, result  # "North–South (you)": Ann's side, at once

    page.click('#scores button[data-review="1"]')
    expect(page.locator("#review")).to_be_visible()
    expect(page.locator("#room-grid")).to_be_hidden()
    expect(page.locator("#review-deal")).to_be_focused()  # a screen reader says where it is
    # The caption runs above the board (beside it, it was a word a line), and
    # the indicator Tens stand beside the board as at the table.
    cap, board = page.locator("#review-caption").bounding_box(), page.locator("#review-board").bounding_box()
    tens = page.locator("#review .indicators").bounding_box()
    assert cap and board and tens and cap["y"] + cap["height"] <= board["y"] + 1, (cap, board)
    if device == "desktop":
        assert tens["x"] >= board["x"] + board["width"] - 1, (tens, board)
    review = api(server, f"/api/rooms/{made['room']}/deals/1")
    last = len(review["steps"]) - 1
    expect(page.locator("#review")).to_have_attribute("data-steps", str(last))
    expect_step(page, 0, review)
    assert page.locator("#review-moves li").count() == last + 1

    # Keys: → one move on, ← one back, End the last position, Home the first.
    for _ in range(3):
        page.keyboard.press("ArrowRight")
    expect_step(page, 3, review)
    page.keyboard.press("ArrowLeft")
    expect_step(page, 2, review)
    page.keyboard.press("End")
    expect_step(page, last, review)
    expect(page.locator("#review-result")).to_be_visible()
    assert page.locator("#review-result .sides").inner_text() == result
    page.keyboard.press("ArrowRight")  # nothing after the last position
    expect_step(page, last, review)
    page.keyboard.press("Home")
    expect_step(page, 0, review)
    expect(page.locator("#review-result")).to_be_hidden()

    # The slider: its own keys, and a click (or tap) along it.
    slider = page.locator("#review-slider")
    slider.focus()
    page.keyboard.press("ArrowRight")
    expect_step(page, 1, review)
    page.keyboard.press("End")
    expect_step(page, last, review)
    box = slider.bounding_box()
    assert box is not None
    if device == "phone":
        page.touchscreen.tap(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    else:
        page.mouse.click(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    page.wait_for_function(
        "n => Math.abs(Number(document.querySelector('#review').dataset.step) - n / 2) <= 2", arg=last)
    expect_step(page, step_of(page), review)
    # A move of the list, and the step buttons.
    item = page.locator('#review-moves li[data-step="5"] button')
    item.tap() if device == "phone" else item.click()
    expect_step(page, 5, review)
    page.locator('[data-go="next"]').click()
    expect_step(page, 6, review)
    page.locator('[data-go="first"]').click()
    expect_step(page, 0, review)
    expect(page.locator('[data-go="prev"]')).to_be_disabled()

    page.keyboard.press("End")
    if device == "phone":
        width = page.evaluate("document.documentElement.scrollWidth")
        assert width <= 360, f"the review scrolls sideways at 360 px: {width}"
    page.keyboard.press("Home")
    for _ in range(4):
        page.keyboard.press("ArrowRight")
    settled_shot(page, artifacts / f"review-room-{device}.png")
    page.keyboard.press("End")
    settled_shot(page, artifacts / f"review-room-{device}-end.png", full_page=True)

    page.click("#review-close")
    expect(page.locator("#review")).to_be_hidden()
    expect(page.locator('#scores button[data-review="1"]')).to_be_focused()  # back where it began
    expect(page.locator("#room-grid")).to_be_visible()
    # Escape, as "Back to the table", even while the deal is still loading
    # (held here): the table comes back, and the focus to the button.
    held: list[Route] = []

    def hold(route: Route) -> None:
        held.append(route)

    page.route("**/api/rooms/*/deals/1", hold)
    page.locator('#scores button[data-review="1"]').click()
    expect(page.locator("#review")).to_be_visible()
    page.keyboard.press("Escape")
    expect(page.locator("#review")).to_be_hidden()
    expect(page.locator("#room-grid")).to_be_visible()
    expect(page.locator('#scores button[data-review="1"]')).to_be_focused()
    assert held, "the deal was not asked for while the review was open"
    held[0].continue_()
    page.unroute("**/api/rooms/*/deals/1", hold)
    page.wait_for_timeout(300)  # the deal arrives: the closed review stays closed
    expect(page.locator("#review")).to_be_hidden()
    expect(page.locator("#room-grid")).to_be_visible()
    page.locator('#scores button[data-review="1"]').click()  # and opens again
    expect(page.locator("#review")).to_be_visible()
    expect(page.locator("#review-moves li")).not_to_have_count(0)
    page.keyboard.press("Escape")
    expect(page.locator("#review")).to_be_hidden()
    expect(page.locator('#scores button[data-review="1"]')).to_be_focused()
    assert errors == [] and violations(page) == []
    ctx.close()


def test_a_shared_match_link_opens_in_a_fresh_browser(server: str, browser: Browser,
                                                       artifacts: Path) -> None:
    made, match_id = finish_over_socket(server, "get-stuck", deals=2)
    assert made["room"] not in match_id
    review = api(server, f"/api/matches/{match_id}/deals/2")
    ctx = browser.new_context(**DESKTOP)
    errors: list[str] = []
    page = watched(ctx, errors)
    page.goto(f"{server}/m/{match_id}#deal2-move5")
    expect(page.locator("#review-root")).to_have_attribute("data-ready", "true")
    expect(page.locator("#review")).to_have_attribute("data-deal", "2")
    expect_step(page, 5, review)
    expect(page.locator("#review-deal")).to_have_text("Deal 2 of 2")
    expect(page.locator('.review-deals [data-deal="2"]')).to_have_attribute("aria-pressed", "true")
    assert page.locator("#review-link-field").input_value() == f"{server}/m/{match_id}#deal2-move5"
    page.keyboard.press("ArrowRight")
    expect_step(page, 6, review)
    assert page.evaluate("location.hash") == "#deal2-move6"
    # Nothing in the page leads back to the room, whose id grants a seat.
    assert made["room"] not in page.content()
    page.click('.review-deals [data-deal="1"]')
    expect(page.locator("#review")).to_have_attribute("data-deal", "1")
    assert page.evaluate("location.hash") == "#deal1-move0"
    # An address edited by hand to a deal that is not there shows the nearest one, without a toast.
    page.evaluate("location.hash = '#deal99999999999999999999'")
    expect(page.locator("#review")).to_have_attribute("data-deal", "2")
    page.evaluate("location.hash = '#deal0'")
    expect(page.locator("#review")).to_have_attribute("data-deal", "1")
    assert page.evaluate("location.hash") == "#deal1-move0"
    expect(page.locator(".toast")).to_have_count(0)
    page.keyboard.press("End")
    expect(page.locator("#review-match-result")).to_be_hidden()  # deal 1 is not the last
    page.click('.review-deals [data-deal="2"]')
    page.keyboard.press("End")
    expect(page.locator("#review-match-result")).to_contain_text(re.compile("the match", re.I))  # or a tie
    settled_shot(page, artifacts / "review-match-desktop.png", full_page=True)
    record = page.locator("#record-link")
    assert record.get_attribute("href") == f"/m/{match_id}.txt"
    text = page.request.get(f"{server}/m/{match_id}.txt").text()
    assert text.startswith('[Game "get-stuck"]') and f'[Match "{match_id}"]' in text
    page.click("#copy-position")
    expect(page.locator("#copy-position")).not_to_have_text("Copy")
    assert violations(page) == []

    phone = browser.new_context(**PHONE).new_page()
    phone.goto(f"{server}/m/{match_id}#deal1-move3")
    expect(phone.locator("#review")).to_have_attribute("data-step", "3")
    width = phone.evaluate("document.documentElement.scrollWidth")
    assert width <= 360, f"the match page scrolls sideways at 360 px: {width}"
    # The match's actions are on the first screen, above the board (they used
    # to come after the whole list of moves).
    boxes = {sel: phone.locator(sel).bounding_box() or {} for sel in
             ("#play-again", "#new-from-seed", "#record-link", "#review-board")}
    for button in ("#play-again", "#new-from-seed", "#record-link"):
        assert boxes[button]["y"] + boxes[button]["height"] <= PHONE["viewport"]["height"], boxes
        assert boxes[button]["y"] < boxes["#review-board"]["y"], boxes
    settled_shot(phone, artifacts / "review-match-phone.png")
    phone.context.close()

    missing = ctx.new_page()
    missing.goto(f"{server}/m/{'x' * 16}")
    expect(missing.locator("h1")).to_have_text("Nothing here")
    assert errors == []
    ctx.close()


def test_play_this_deal_again_deals_the_same_layout(server: str, browser: Browser, artifacts: Path) -> None:
    """The same layout and starter, with each computer player at the level
    it had (they used to take the first one's level)."""
    made, match_id = finish_over_socket(server, "get-stuck-4", {"S": "medium"})
    summary = api(server, f"/api/matches/{match_id}")
    review = api(server, f"/api/matches/{match_id}/deals/3")
    ctx = browser.new_context(**DESKTOP)
    page = ctx.new_page()
    page.goto(f"{server}/m/{match_id}#deal3-move0")
    expect(page.locator("#review")).to_have_attribute("data-deal", "3")
    shown = page.evaluate(BOARD_JS, "#review-board")
    assert shown == review["steps"][0]["board"]["cells"]
    page.click("#play-again")
    page.wait_for_url("**/r/*?sit=*")
    assert page.url.endswith(f"?sit={made['seat']}")
    wait_version(page, 0)
    assert page.evaluate(BOARD_JS, "#board") == shown
    assert [(x["seat"], x["level"]) for x in summary["seats"][1:]] == [("E", "easy"), ("S", "medium"),
                                                                        ("W", "easy")]
    for seat in summary["seats"][1:]:
        row = page.locator(f'.seat-row.computer[data-seat="{seat["seat"]}"]')
        expect(row).to_contain_text(f"({seat['level']})")
    page.fill("#name", "Ann")
    page.click("#join-any")
    expect(page.locator("#room")).to_have_attribute("data-phase", "playing")
    starter = summary["deals"][2]["starter"]
    if starter == made["seat"]:
        expect(page.locator("#banner")).to_contain_text("Your turn")
    else:  # the computer players may have moved already: the first move is the starter's
        name = {"N": "North", "E": "East", "S": "South", "W": "West"}[starter]
        expect(page.locator("#log li").first).to_contain_text(f"{name} ")
    expect(page.locator("#seeded-note")).to_be_visible()
    settled_shot(page, artifacts / "review-played-again.png")
    ctx.close()


def test_the_home_page_reviews_a_record_and_takes_a_seed(server: str, browser: Browser, artifacts: Path,
                                                         tmp_path: Path) -> None:
    _, match_id = finish_over_socket(server, "get-stuck", deals=2)
    with urllib.request.urlopen(f"{server}/m/{match_id}.txt", timeout=10) as r:
        text = r.read().decode()
    ctx = browser.new_context(**DESKTOP)
    errors: list[str] = []
    page = watched(ctx, errors)
    page.goto(server + "/")
    page.fill("#record-text", text.replace('[Game "get-stuck"]', '[Game "chess"]'))
    page.click(".record-form button[type=submit]")
    expect(page.locator("[data-record-error]")).to_contain_text("unknown game 'chess'")
    expect(page.locator("[data-record-error]")).to_have_css("color", "rgb(179, 38, 30)")  # an error
    moves = text.split("\n")
    third = next(i for i, ln in enumerate(moves) if ln.startswith("3. "))
    page.fill("#record-text", "\n".join([*moves[:third], "3. red zz9", *moves[third + 1:]]))
    page.click(".record-form button[type=submit]")
    expect(page.locator("[data-record-error]")).to_contain_text("deal 1, move 3: red's move 'zz9'")
    upload = tmp_path / "match.txt"
    upload.write_text(text)
    page.set_input_files("[data-record-file]", str(upload))
    expect(page.locator("#record-text")).to_have_value(text)
    page.click(".record-form button[type=submit]")
    page.wait_for_url("**/review")
    expect(page.locator("#review-root")).to_have_attribute("data-ready", "true")
    expect(page.locator("#review-title")).to_have_text("Get Stuck: review")
    review = api(server, "/api/records/deals/1", {"record": text})
    expect_step(page, 0, review)
    page.keyboard.press("ArrowRight")
    expect_step(page, 1, review)
    assert page.evaluate("location.hash") == "#deal1-move1"
    settled_shot(page, artifacts / "review-record-desktop.png")
    assert errors == [] and violations(page) == []

    # A seed typed on the home page deals the room from it.
    seed = str(2**63 - 1)
    page.goto(server + "/")
    card = page.locator('form[data-game="get-stuck"]')
    card.locator("details.seed-opt summary").click()
    card.locator('[data-option="seed"]').fill(seed)
    card.locator('[data-create="get-stuck"]').click()
    page.wait_for_url("**/r/*")
    wait_version(page, 0)
    expect(page.locator("#seeded-note")).to_be_visible()
    other = ctx.new_page()
    again = api(server, "/api/rooms", {"game": "get-stuck", "options": {"seed": seed}})
    other.goto(server + again["url"])
    wait_version(other, 0)
    assert other.evaluate(BOARD_JS, "#board") == page.evaluate(BOARD_JS, "#board")
    ctx.close()


RESULT_IN_VIEW = """() => {
  const r = document.querySelector('#result').getBoundingClientRect();
  return r.top >= 0 && r.bottom <= window.innerHeight + 1;
}"""


def test_a_review_open_when_the_next_deal_starts_gives_way_to_the_table(server: str, browser: Browser,
                                                                          artifacts: Path) -> None:
    """At a deal's end the result, under the board on a laptop, scrolls
    into view, and the scores say that the deal is over. A review opened
    then closes by itself when the next deal (or a rematch) starts, and the
    live table shows: the review's board looked live, and the real one
    stayed hidden until "Back to the table"."""
    made = computer_room(server, "get-stuck", {"deals": 2, "seed": 12})
    ctx = browser.new_context(viewport={"width": 1280, "height": 800})
    errors: list[str] = []
    page = watched(ctx, errors)
    page.goto(f"{server}{made['url']}?sit={made['seat']}")
    wait_version(page, 0)
    page.fill("#name", "Ann")
    page.click("#join-any")
    expect(page.locator(f'.seat-row.you[data-seat="{made["seat"]}"]')).to_be_visible()
    rng = random.Random(8)
    steps = ((1, "#next-deal-btn", "Deal 2 has begun"), (2, "#rematch-btn", "Deal 1 has begun"))
    for deal, button, then in steps:
        play_turns(page, rng, 400)
        over = "match_over" if deal == 2 else "deal_over"
        expect(page.locator("#room")).to_have_attribute("data-phase", over)
        page.wait_for_function(RESULT_IN_VIEW)
        expect(page.locator("#deal-of")).to_have_text(f"Deal {deal} of 2 is over")
        ready = "Ready for a rematch" if deal == 2 else "Ready for deal 2"
        expect(page.locator("#result [data-ready-copy]")).to_have_text(ready)
        if deal == 1:
            settled_shot(page, artifacts / "deal-over-result-in-view.png")
        page.click("#review-last")
        expect(page.locator("#review")).to_be_visible()
        expect(page.locator("#room-grid")).to_be_hidden()
        page.click(button)
        expect(page.locator("#room")).to_have_attribute("data-phase", "playing")
        expect(page.locator("#review")).to_be_hidden()
        expect(page.locator("#room-grid")).to_be_visible()
        expect(page.locator("#board .cell").first).to_be_visible()
        expect(page.locator("#toasts")).to_contain_text(then)
        if deal == 1:
            settled_shot(page, artifacts / "review-closed-by-next-deal.png")
    # The rematch cleared the deals' scores; the match before is listed under
    # them, its winner's total in bold, with a link to its page.
    expect(page.locator("#scores table:not(.earlier) tbody tr")).to_have_count(0)
    earlier = page.locator("#scores table.earlier tbody tr")
    expect(earlier).to_have_count(1)
    expect(earlier.locator("td").first).to_have_text("1")
    expect(earlier.locator("strong")).not_to_have_count(0)
    href = earlier.locator("a").get_attribute("href")
    assert href is not None and href.startswith("/m/")
    assert page.request.get(server + href).status == 200
    assert earlier.locator("a").get_attribute("target") == "_blank"  # the room stays open
    # Named by seats, not by whoever sits there now.
    expect(page.locator("#scores table.earlier thead")).not_to_contain_text("Ann")
    settled_shot(page, artifacts / "earlier-matches.png")
    assert errors == [] and violations(page) == []
    ctx.close()


def drawn_romeo_and_juliet() -> str:
    """The record of a finished match of Romeo and Juliet (random play from
    seed 0, drawn at its turn limit)."""
    record = finished_record("romeo-and-juliet")
    assert '[Result "red black"]' in record  # a draw: both win
    return record


def test_a_drawn_game_reads_as_a_draw_in_its_review(server: str, browser: Browser) -> None:
    """Romeo and Juliet drawn at its turn limit (random play from seed 0):
    the review says "draw", the word of the game's rules, not "tie"
    (self-hoster pass: the banner, the result and the match page said "a
    tie")."""
    record = drawn_romeo_and_juliet()
    ctx = browser.new_context(**DESKTOP)
    errors: list[str] = []
    page = watched(ctx, errors)
    page.goto(server + "/")
    page.fill("#record-text", record)
    page.click(".record-form button[type=submit]")
    page.wait_for_url("**/review")
    expect(page.locator("#review-root")).to_have_attribute("data-ready", "true")
    expect(page.locator("#review-root")).to_contain_text("Totals: Red 0 · Black 0. A draw.")
    page.keyboard.press("End")
    expect(page.locator("#review-match-result")).to_contain_text("The game is a draw.")
    assert errors == [] and "tie" not in page.locator("#review-root").inner_text()
    ctx.close()


def test_a_romeo_and_juliet_review_fits_a_laptop_window(server: str, browser: Browser) -> None:
    """On a 1366×768 laptop the whole 7×7 layout of a Romeo and Juliet
    review is in the window, and the controls beside it, without scrolling:
    no room is kept above it for the Joker prompt of play (nothing is chosen
    in a review). It ran 51 px below the window, under 108 px of status."""
    ctx = browser.new_context(**DESKTOP)
    page = ctx.new_page()
    page.goto(server + "/")
    page.fill("#record-text", drawn_romeo_and_juliet())
    page.click(".record-form button[type=submit]")
    page.wait_for_url("**/review")
    expect(page.locator("#review-root")).to_have_attribute("data-ready", "true")
    box = page.evaluate("""() => {
      const r = (s) => document.querySelector(s).getBoundingClientRect();
      return { board: r('.review-board .board').bottom, status: r('.review-board .rj-status').height,
               controls: r('.review-controls').bottom, top: r('.review-board .board').top, y: scrollY };
    }""")
    assert box["y"] == 0 and box["controls"] <= DESKTOP["viewport"]["height"], box
    assert box["board"] <= DESKTOP["viewport"]["height"], box
    assert box["status"] < 70, box  # the two status lines only
    ctx.close()


def test_a_deal_lost_on_more_points_says_the_totals_decide(server: str, browser: Browser) -> None:
    """Get Stuck for Four: a side can lose the deal yet score more (its
    face-up cards count); the result under the board says that the match
    goes by the totals (self-hoster pass: "won the deal 35" beside 44 read as
    a mistake). Not said where the winners scored more."""
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
    from engine.match import Match
    from engine.record import write_record

    ctx = browser.new_context(**DESKTOP)
    errors: list[str] = []
    page = watched(ctx, errors)
    for seed, ahead in ((13, True), (0, False)):
        m = Match.new("get-stuck-4", {}, seed)
        rng = random.Random(seed)
        while not m.deal_over:
            seat = m.game.to_move(m.state)[0]
            m = m.play(seat, rng.choice(m.game.legal_moves(m.state, seat)))
        outcome = m.current.outcome
        assert outcome is not None
        won = {s.side: s.points for s in outcome.scores}
        assert (won["E-W"] > won["N-S"] and outcome.winners == ("N-S",)) == ahead, won
        page.goto(server + "/")
        page.fill("#record-text", write_record(m, finished_only=True))
        page.click(".record-form button[type=submit]")
        page.wait_for_url("**/review")
        expect(page.locator("#review-root")).to_have_attribute("data-ready", "true")
        page.keyboard.press("End")
        expect(page.locator("#review-result")).to_be_visible()
        note = page.locator("#review-result .more-points")
        if ahead:
            expect(note).to_have_text("East–West ♥♦ scored more points this deal than the side that won it:"
                                      " the match goes to the higher total.")
        else:
            assert note.count() == 0
    assert errors == []
    ctx.close()


def test_a_game_taken_off_is_reviewed_without_play_again(server: str, browser: Browser) -> None:
    """A review whose game this server no longer deals (``offered`` false:
    CARDBOARD_GAMES) shows no "Play this game again" nor "New match from this
    seed" (break-it pass: both answered 422); one it deals shows both."""
    record = drawn_romeo_and_juliet()
    ctx = browser.new_context(**DESKTOP)
    errors: list[str] = []
    page = watched(ctx, errors)

    def taken_off(route: Any) -> None:  # as a server without Romeo and Juliet answers
        answer = route.fetch()
        route.fulfill(response=answer, json={**answer.json(), "offered": False})

    for offered in (True, False):
        if not offered:
            page.route("**/api/records", taken_off)
        page.goto(server + "/")
        page.fill("#record-text", record)
        page.click(".record-form button[type=submit]")
        page.wait_for_url("**/review")
        expect(page.locator("#review-root")).to_have_attribute("data-ready", "true")
        expect(page.locator("#review-deal")).to_be_visible()
        expect(page.locator("#play-again, #new-from-seed")).to_have_count(2 if offered else 0)
    assert errors == []
    ctx.close()
