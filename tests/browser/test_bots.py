"""Computer players in real browsers: one person and three computer players
play a whole deal of Get Stuck for Four by clicking, and "Play against the
computer" on the home page seats the user at once (docs/protocol.md,
"Computer players")."""

from __future__ import annotations

import random
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from browserkit import create_room, play_turns, sit, version, wait_version
from playwright.sync_api import Browser, Page, expect

from bench.server import free_port, start_server, stop_server


def phase(page: Page) -> str:
    return page.locator("#room").get_attribute("data-phase") or ""


def test_one_person_and_three_computers_play_a_whole_deal(server: str, browser: Browser,
                                                          artifacts: Path) -> None:
    url = create_room(server, "get-stuck-4", {"seed": 7})
    ctx = browser.new_context(viewport={"width": 1100, "height": 900})
    page = ctx.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    sit(page, url, "Ann", "N")
    expect(page.locator("#bot-level")).to_be_visible()
    for seat, level, name in (("E", "easy", "Alan"), ("S", "strong", "Grace"), ("W", "medium", "Kurt")):
        page.select_option("#bot-level", level)
        page.click(f'button[data-add-bot="{seat}"]')
        row = page.locator(f'.seat-row.computer[data-seat="{seat}"]')
        expect(row.locator(".seat-name")).to_have_text(f"{name} ({level})")
    expect(page.locator("#room")).to_have_attribute("data-phase", "playing")
    expect(page.locator("[data-add-bot]")).to_have_count(0)
    expect(page.locator("#bot-level")).to_be_hidden()
    page.screenshot(path=str(artifacts / "bots-get-stuck-4-start.png"))

    clicked = play_turns(page, random.Random(5), 400)
    expect(page.locator("#room")).to_have_attribute("data-phase", "deal_over")
    assert clicked > 0
    expect(page.locator("#result")).to_be_visible()
    log = page.locator("#log li")
    assert log.count() > clicked, "the computer players never moved"
    page.screenshot(path=str(artifacts / "bots-get-stuck-4-deal-over.png"), full_page=True)

    # Between deals a computer player can be removed and another added.
    expect(page.locator("[data-remove-bot]")).to_have_count(3)
    v = version(page)
    page.click('button[data-remove-bot="W"]')
    wait_version(page, v + 1)
    expect(page.locator('.seat-row[data-seat="W"] .seat-name')).to_have_text("free seat")
    page.select_option("#bot-level", "easy")
    page.click('button[data-add-bot="W"]')
    wait_version(page, v + 2)
    expect(page.locator('.seat-row[data-seat="W"] .seat-name')).to_have_text("Kurt (easy)")
    # People start the next deal: the computers are ready at once, and wait for Ann.
    expect(page.locator("#banner")).to_contain_text("3 of 4 ready · waiting for you.")
    page.click("#next-deal-btn")
    wait_version(page, v + 3)
    expect(page.locator("#banner")).not_to_contain_text("Deal 1 is over")
    assert errors == []
    ctx.close()


@pytest.mark.parametrize("size", [(1366, 768), (1280, 720)], ids=["1366x768", "1280x720"])
def test_both_buttons_of_every_game_are_on_a_laptop_s_first_screen(server: str, browser: Browser,
                                                                     size: tuple[int, int]) -> None:
    """On the home page every game's "Create a room" and "Play the computer"
    are on the first screen of a laptop (new-user pass: "Play against the
    computer" ended at 780 px, below a 768 px window, on every card)."""
    width, height = size
    ctx = browser.new_context(viewport={"width": width, "height": height})
    page = ctx.new_page()
    page.goto(server + "/")
    bottoms = page.eval_on_selector_all(
        "[data-create], [data-vs-computer]", "es => es.map((e) => e.getBoundingClientRect().bottom)")
    assert len(bottoms) == 10 and max(bottoms) <= height, bottoms
    # One line each: the computer's button is no taller than a button's row.
    heights = page.eval_on_selector_all("[data-vs-computer]", "es => es.map((e) => e.offsetHeight)")
    assert max(heights) <= 40, heights
    ctx.close()


def test_play_against_the_computer_from_the_home_page(server: str, browser: Browser, artifacts: Path) -> None:
    ctx = browser.new_context(viewport={"width": 360, "height": 740}, has_touch=True, is_mobile=True)
    page = ctx.new_page()
    page.goto(server + "/")
    card = page.locator('form[data-game="get-stuck"]')
    card.locator("summary", has_text="More options").click()  # the level waits there
    card.locator("[data-bot-level]").select_option("strong")
    card.locator('[data-vs-computer="get-stuck"]').click()
    page.wait_for_url("**/r/*?sit=red")
    wait_version(page, 0)
    # No name remembered yet: type one, and "Take a seat" takes red.
    expect(page.locator("#name")).to_be_focused()
    page.fill("#name", "Solo")
    page.click("#join-any")
    expect(page.locator('.seat-row.you[data-seat="red"]')).to_be_visible()
    expect(page.locator('.seat-row[data-seat="black"] .seat-name')).to_have_text("Alan (strong)")
    expect(page.locator("#room")).to_have_attribute("data-phase", "playing")
    assert "sit=" not in page.url
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= 360, f"the page scrolls sideways at 360 px: {width}"
    assert play_turns(page, random.Random(2), 4) >= 1
    black = page.locator("#log li", has_text="Black moves").first
    expect(black).to_be_visible()
    # Each entry says who moved, by name (without the computer's level).
    expect(black.locator(".who")).to_have_text("Alan")
    page.screenshot(path=str(artifacts / "bots-vs-computer-phone.png"), full_page=True)

    # The name is remembered now: the next game seats the user at once.
    page.goto(server + "/")
    expect(page.locator('form[data-game="stucco"] [data-bot-level]')).to_have_value("strong")
    page.locator('[data-vs-computer="stucco"]').click()
    page.wait_for_url("**/r/*")
    expect(page.locator(".seat-row.you")).to_have_count(1)
    expect(page.locator(".seat-row.computer")).to_have_count(1)
    ctx.close()


@pytest.fixture(scope="module")
def slow_handover() -> Iterator[str]:
    """A server on which a seat may be handed to a computer after 60 s away
    (as a real server's 120 s, long enough to be seen counting down)."""
    port = free_port()
    proc = start_server(port, {"CARDBOARD_HANDOVER_SECONDS": "60", "CARDBOARD_BOT_PAUSE": "0.05"})
    yield f"http://127.0.0.1:{port}"
    stop_server(proc)


def test_the_wait_for_someone_away_mid_deal_is_counted_down(slow_handover: str, browser: Browser,
                                                             artifacts: Path) -> None:
    """Bob's connection drops on his turn: Ann's banner says when she may hand
    his seat to a computer player and counts it down (new-user pass: the
    button came after two minutes without a word); a spectator is not told."""
    url = create_room(slow_handover, "get-stuck", {"seed": 3})
    ann_ctx, bob_ctx, eve_ctx = browser.new_context(), browser.new_context(), browser.new_context()
    ann, bob, eve = ann_ctx.new_page(), bob_ctx.new_page(), eve_ctx.new_page()
    sit(ann, url, "Ann", "red")
    sit(bob, url, "Bob", "black")
    eve.goto(url)
    expect(ann.locator("#room")).to_have_attribute("data-phase", "playing")
    if ann.locator(".cell.playable").count():  # Ann's turn first: then Bob's
        v = version(ann)
        ann.locator(".cell.playable").first.click()
        wait_version(ann, v + 1)
    bob_ctx.close()
    banner = ann.locator("#banner .sub")
    expect(banner).to_contain_text("Bob is away: the game waits for them to come back.", timeout=15_000)
    said = re.compile(r"In (\d+) s, you may hand the seat to a computer player\.")
    expect(banner).to_contain_text(said)
    first = int(said.search(banner.inner_text()).group(1))  # type: ignore[union-attr]
    assert 45 <= first <= 61  # (the page knows the server's clock to a second)
    ann.wait_for_timeout(2200)
    assert int(said.search(banner.inner_text()).group(1)) < first  # type: ignore[union-attr]
    ann.screenshot(path=str(artifacts / "bots-handover-countdown.png"))
    expect(eve.locator("#banner .sub")).to_contain_text("Bob is away")
    expect(eve.locator("#banner .sub")).not_to_contain_text("hand the seat")
    ann_ctx.close()
    eve_ctx.close()


def test_a_seat_left_mid_deal_is_handed_to_a_computer(server: str, browser: Browser, artifacts: Path) -> None:
    url = create_room(server, "get-stuck", {"seed": 3})
    ann_ctx, bob_ctx = browser.new_context(), browser.new_context()
    ann, bob = ann_ctx.new_page(), bob_ctx.new_page()
    sit(ann, url, "Ann", "red")
    sit(bob, url, "Bob", "black")
    expect(ann.locator("#room")).to_have_attribute("data-phase", "playing")
    # Bob makes a move of his own first (Ann moves first if it is her turn).
    for page in (ann, bob) if ann.locator(".cell.playable").count() else (bob,):
        v = version(page)
        page.locator(".cell.playable").first.click()
        wait_version(page, v + 1)
    bob_saved = bob_ctx.storage_state()  # his seat's token, for when he comes back
    bob_ctx.close()  # Bob's laptop goes to sleep in the middle of the deal
    if ann.locator(".cell.playable").count():  # Ann's turn first: then Bob's
        v = version(ann)
        ann.locator(".cell.playable").first.click()
        wait_version(ann, v + 1)
    # The banner says who is awaited and away, with the button a phone would
    # otherwise have to scroll to the seats for.
    expect(ann.locator("#banner")).to_contain_text("Bob is away", timeout=15_000)
    button = ann.locator('button[data-hand-over="black"]')
    expect(button).to_be_visible(timeout=15_000)  # after the handover time (2 s here)
    in_banner = ann.locator('#banner button[data-hand-over-banner="black"]')
    expect(in_banner).to_have_text("Hand Bob's seat to a computer")
    expect(ann.locator("#bot-level")).to_be_visible()
    ann.select_option("#bot-level", "easy")
    ann.screenshot(path=str(artifacts / "bots-hand-over.png"))
    in_banner.click()
    row = ann.locator('.seat-row[data-seat="black"]')
    expect(row.locator(".seat-name")).to_have_text("Alan (easy), playing for Bob")
    expect(button).to_have_count(0)
    expect(in_banner).to_have_count(0)
    expect(ann.locator("#banner")).not_to_contain_text("away")
    # The computer plays black's turns: Ann's moves are answered.
    play_turns(ann, random.Random(1), 4)
    expect(ann.locator("#log li", has_text="Black moves").first).to_be_visible()
    # Bob comes back and has his seat again; the log still names the computer
    # for the moves it made for him, not Bob.
    back_ctx = browser.new_context(storage_state=bob_saved)
    back = back_ctx.new_page()
    back.goto(url)
    expect(row.locator(".seat-name")).to_have_text("Bob", timeout=15_000)
    black = ann.locator("#log li", has_text="Black moves")
    expect(black.first.locator(".who")).to_have_text("Bob")  # his own move
    expect(black.nth(1).locator(".who")).to_have_text("Alan (easy)")
    # Bob's page tells him, once, what the computer did in his place.
    played = ann.locator("#log li .who", has_text="Alan (easy)").count()
    told = f"While you were away, Alan (easy) played {played} move{'' if played == 1 else 's'} for you."
    expect(back.locator(".toast", has_text="While you were away")).to_have_text(told)
    back.screenshot(path=str(artifacts / "bots-told-on-return.png"))
    # Once: not again after a reload.
    back.reload()
    expect(back.locator(".seat-row.you")).to_have_attribute("data-seat", "black")
    back.wait_for_timeout(800)
    # (counted now: a toast goes by itself, which expect() would wait for)
    assert back.locator(".toast", has_text="While you were away").count() == 0
    expect(ann.locator("#log li", has_text="Red moves").first.locator(".who")).to_have_text("Ann")
    ann.screenshot(path=str(artifacts / "bots-handed-back.png"))
    back_ctx.close()
    ann_ctx.close()
