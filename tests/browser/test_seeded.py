"""A room created with a chosen seed says so on its page, by the seats,
before anyone sits down (``docs/protocol.md``, ``view.seeded``); a room
dealt at random shows no such note. Screenshots at desktop and phone width."""

from __future__ import annotations

from pathlib import Path

import pytest
from browserkit import create_room, settled_shot, wait_version
from playwright.sync_api import Browser, expect

NOTE = "This room was created with a chosen seed: its creator may know the cards."


@pytest.mark.parametrize(("width", "height", "name"), [(1366, 768, "desktop"), (360, 740, "phone")])
def test_a_seeded_room_says_so_by_the_seats(server: str, browser: Browser, artifacts: Path,
                                            width: int, height: int, name: str) -> None:
    ctx = browser.new_context(viewport={"width": width, "height": height})
    page = ctx.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))

    page.goto(create_room(server, "suitors", {"seed": 12345}))
    wait_version(page, 0)
    note = page.locator("#seeded-note")
    expect(note).to_be_visible()
    expect(note).to_have_text(NOTE)
    # In the seats panel, above the seats and their "Sit here" buttons.
    first_seat = page.locator(".seat-row").first
    expect(first_seat.locator("button[data-join]")).to_be_visible()
    note_box, seat_box = note.bounding_box(), first_seat.bounding_box()
    assert note_box is not None and seat_box is not None
    assert note_box["y"] + note_box["height"] <= seat_box["y"]
    assert page.locator("#seats-h + #seeded-note + #seats").count() == 1
    assert note_box["x"] >= 0 and note_box["x"] + note_box["width"] <= width
    note.scroll_into_view_if_needed()
    settled_shot(page, artifacts / f"seeded-note-{name}.png")

    page.goto(create_room(server, "suitors"))
    wait_version(page, 0)
    expect(page.locator(".seat-row").first).to_be_visible()
    expect(note).to_be_hidden()
    assert not errors
    ctx.close()


def test_a_refused_option_is_named_as_the_form_names_it(server: str, browser: Browser) -> None:
    """The home page's create error says "“Play to” must be at least 1", not
    the API's "option 'target'" (found by the new-user pass); a message
    about no option is shown as it is."""
    page = browser.new_page(viewport={"width": 1366, "height": 800})
    page.goto(server + "/")
    form = page.locator("form:has([data-option=target])").first
    form.locator("[data-option=target]").fill("0")
    form.locator("[data-create]").click()
    expect(form.locator(".create-error")).to_have_text(
        "Could not create the room: “Play to” must be at least 1, not 0")
    seeded = page.locator("form:has([data-option=seed])").first
    seeded.locator("details.seed-opt summary").click()
    seeded.locator("[data-option=seed]").fill("9999999999999999999")
    seeded.locator("[data-create]").click()
    expect(seeded.locator(".create-error")).to_have_text(
        "Could not create the room: “Seed” must be a whole number from 0 to 9223372036854775807"
        " (2^63-1), not 9999999999999999999")
    suitors = page.locator("form[data-game=suitors]")
    suitors.locator("[data-option=variant]").select_option("colours")
    # (the form offers 2 players only with Colours: force 3, as a stale page might send)
    suitors.locator("[data-option=players]").evaluate(
        "(s) => { for (const o of s.options) o.disabled = false; s.value = '3'; }")
    suitors.locator("[data-create]").click()
    expect(suitors.locator(".create-error")).to_have_text(
        "Could not create the room: the Colours variant is for two players: “Players” must be 2, not 3")
    # Get Stuck has no pass, so its form offers no passing for a player; the others do.
    expect(page.locator("form[data-game=get-stuck] [data-option=auto_pass]")).to_have_count(0)
    expect(page.locator("form[data-game=get-stuck-4] [data-option=auto_pass]")).to_have_count(1)
    page.close()


@pytest.mark.parametrize(("width", "height"), [(1366, 768), (1280, 720)])
def test_the_home_page_shows_how_to_start_on_a_laptop(server: str, browser: Browser, artifacts: Path,
                                                       width: int, height: int) -> None:
    """On a laptop's first screen, every game's "Create a room" is in sight
    (new-user pass: they began at 806 px of 768, under the room settings).
    Those settings and the seed wait under "More options", and still reach
    the room: spectators may write in a room created with the box ticked."""
    page = browser.new_page(viewport={"width": width, "height": height})
    page.goto(server + "/")
    buttons = page.locator("[data-create]")
    assert buttons.count() >= 5
    for k in range(buttons.count()):
        box = buttons.nth(k).bounding_box()
        assert box is not None and box["y"] + box["height"] <= height, (k, box)
    form = page.locator("form[data-game=get-stuck-4]")
    chat = form.locator("[data-option=spectator_chat]")
    expect(chat).to_be_hidden()
    form.locator("details.seed-opt summary").click()
    expect(chat).to_be_visible()
    settled_shot(page, artifacts / f"home-{width}x{height}-more-options.png")
    chat.check()
    form.locator("[data-create]").click()
    page.wait_for_url("**/r/*")
    wait_version(page, 0)
    expect(page.locator("#chat-form")).to_be_visible()
    expect(page.locator("#chat-note")).to_be_hidden()
    page.goto(server + "/")
    page.locator("form[data-game=get-stuck-4] [data-create]").click()
    page.wait_for_url("**/r/*")
    wait_version(page, 0)
    expect(page.locator("#chat-note")).to_have_text("Only the players write here; you can read along.")
    expect(page.locator("#chat-form")).to_be_hidden()
    page.close()
