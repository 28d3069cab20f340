"""The table around the board in real browsers: your-turn alerts (title,
notification while hidden, the sound switch), a seat link opened on a
second device, the chat reaching everyone (and a page that reconnects),
presence, and the size of what a finger taps at 360 px in every game."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from browserkit import computer_room, create_room, play_turns, sit, version, wait_version
from playwright.sync_api import Browser, BrowserContext, Page, expect

DESKTOP = {"width": 1366, "height": 768}
PHONE = {"width": 360, "height": 740}

HIDDEN_AND_NOTIFIED = """
(() => {
  // The test hides the tab (window.__setHidden) and records the notifications
  // the page makes and the permission requests it sends.
  let hidden = false;
  Object.defineProperty(document, "visibilityState",
    { get: () => (hidden ? "hidden" : "visible"), configurable: true });
  Object.defineProperty(document, "hidden", { get: () => hidden, configurable: true });
  window.__setHidden = (h) => { hidden = h; document.dispatchEvent(new Event("visibilitychange")); };
  window.__notes = [];
  window.__asked = 0;
  const Real = window.Notification;
  if (!Real) return;
  function Recorded(title, options) {
    window.__notes.push({ title, body: (options || {}).body || "" });
    return new Real(title, options);
  }
  Object.defineProperty(Recorded, "permission", { get: () => Real.permission });
  Recorded.requestPermission = (...args) => { window.__asked += 1; return Real.requestPermission(...args); };
  window.Notification = Recorded;
})();
"""


def remember(name: str) -> str:
    """An init script: this browser remembers ``name`` (as after a first visit)."""
    return f"localStorage.setItem('cardboard.name', {json.dumps(name)})"


def bot_room(base: str, game: str, options: dict[str, Any] | None = None) -> dict[str, Any]:
    """A room with easy computer players in every seat but the first."""
    return computer_room(base, game, options)


@pytest.fixture
def contexts(browser: Browser) -> Iterator[list[BrowserContext]]:
    """A list the test adds its browser contexts to; all closed at the end."""
    made: list[BrowserContext] = []
    yield made
    for ctx in made:
        ctx.close()


def new_page(browser: Browser, contexts: list[BrowserContext], *, viewport: dict[str, int] = DESKTOP,
             scripts: tuple[str, ...] = (), **options: Any) -> Page:
    ctx = browser.new_context(viewport=viewport, **options)
    contexts.append(ctx)
    for script in scripts:
        ctx.add_init_script(script)
    page = ctx.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.errors = errors  # type: ignore[attr-defined]
    return page


def mover_of(pages: list[Page]) -> Page:
    """The page whose seat has lit cards to play."""
    for page in pages:
        page.wait_for_function("() => document.querySelector('#room').dataset.phase === 'playing'")
    found = [p for p in pages if p.locator("#board .gs-act").count()]
    assert len(found) == 1, "exactly one of the two players is to move"
    return found[0]


# ---- your turn -----------------------------------------------------------------------

def test_your_turn_title_and_notification_while_hidden(server: str, browser: Browser,
                                                       contexts: list[BrowserContext]) -> None:
    url = create_room(server, "get-stuck", {"seed": 11})
    pages = [new_page(browser, contexts, permissions=["notifications"], scripts=(HIDDEN_AND_NOTIFIED,))
             for _ in range(2)]
    ann, bob = pages
    sit(ann, url, "Ann", "red")
    sit(bob, url, "Bob", "black")
    first = mover_of(pages)
    second = bob if first is ann else ann
    expect(first).to_have_title("● Your turn · Get Stuck")
    expect(second).to_have_title("Get Stuck · Cardboard")
    # Permission was granted by the browser: no button, and nothing was asked on load.
    for p in pages:
        expect(p.locator("#notify-btn")).to_be_hidden()
        assert p.evaluate("window.__asked") == 0

    second.evaluate("window.__setHidden(true)")
    v = version(first)
    first.locator("#board .gs-act").first.click()
    wait_version(second, v + 1)
    expect(second).to_have_title("● Your turn · Get Stuck")
    expect(first).to_have_title("Get Stuck · Cardboard")
    notes = second.evaluate("window.__notes")
    assert [n["title"] for n in notes] == ["Your turn · Get Stuck"], notes
    assert first.evaluate("window.__notes") == []  # its turn came while it was in view

    second.evaluate("window.__setHidden(false)")
    second.locator("#board .gs-act").first.click()
    wait_version(second, v + 2)
    expect(second).to_have_title("Get Stuck · Cardboard")
    expect(first).to_have_title("● Your turn · Get Stuck")
    assert all(p.errors == [] for p in pages)  # type: ignore[attr-defined]


def test_the_sound_switch_is_remembered_and_permission_asked_on_a_click(
        server: str, browser: Browser, contexts: list[BrowserContext]) -> None:
    url = create_room(server, "get-stuck")
    page = new_page(browser, contexts, scripts=(HIDDEN_AND_NOTIFIED,))
    page.goto(url)
    wait_version(page, 0)
    expect(page.locator("#sound-btn")).to_have_text("Sound: on")
    notify = page.locator("#notify-btn")
    expect(notify).to_be_visible()
    assert page.evaluate("window.__asked") == 0
    notify.click()
    page.wait_for_function("() => window.__asked === 1")
    page.click("#sound-btn")
    expect(page.locator("#sound-btn")).to_have_text("Sound: off")
    expect(page.locator("#sound-btn")).to_have_attribute("aria-pressed", "false")
    page.reload()
    wait_version(page, 0)
    expect(page.locator("#sound-btn")).to_have_text("Sound: off")
    assert page.evaluate("localStorage.getItem('cardboard.sound')") == "off"


AUDIO_COUNTED = """
(() => {
  const Real = window.AudioContext;
  window.__audioMade = 0;
  window.AudioContext = function (...args) { window.__audioMade += 1; return new Real(...args); };
  // As a browser says before the first click or key press on a page (the
  // test's own calls into the page count as clicks to Chromium).
  Object.defineProperty(navigator, "userActivation", { value: { hasBeenActive: false, isActive: false } });
})();
"""


def test_a_turn_before_any_click_asks_for_no_sound(server: str, browser: Browser,
                                                   contexts: list[BrowserContext]) -> None:
    """A page back at a table where it is its turn, not clicked yet, does not
    start the sound: a browser refuses it and warns in the console at every
    load (new-user pass). The first click or key press makes it."""
    made = bot_room(server, "get-stuck", {"seed": 3})
    page = new_page(browser, contexts, scripts=(remember("Ann"), AUDIO_COUNTED))
    page.goto(f"{server}{made['url']}?sit={made['seat']}")
    expect(page.locator(".seat-row.you")).to_be_visible()
    for _ in range(2):  # a turn of this page's, then the same after a reload
        expect(page.locator("#board .cell.playable").first).to_be_visible(timeout=15_000)
        expect(page).to_have_title(re.compile("Your turn"))
        page.wait_for_timeout(300)
        assert page.evaluate("window.__audioMade") == 0
        page.reload()
    expect(page.locator("#board .cell.playable").first).to_be_visible(timeout=15_000)
    page.locator("#banner").click()
    assert page.evaluate("window.__audioMade") == 1


# ---- a seat on another device --------------------------------------------------------

def test_a_seat_link_opened_in_a_second_context_takes_the_seat(
        server: str, browser: Browser, contexts: list[BrowserContext], artifacts: Path) -> None:
    url = create_room(server, "get-stuck", {"seed": 5})
    room = url.rsplit("/", 1)[1]
    laptop = new_page(browser, contexts)
    sit(laptop, url, "Ann", "red")
    laptop.click("#seat-link-btn")
    dialog = laptop.locator("#seat-link")
    expect(dialog).to_be_visible()
    link = laptop.locator("#seat-url").input_value()
    token = laptop.evaluate(f"localStorage.getItem('cardboard.token.{room}')")
    assert link == f"{server}/r/{room}#seat={token}"
    qr = laptop.locator("#seat-qr svg")
    size = int(qr.get_attribute("viewBox").split()[2])  # type: ignore[union-attr]
    assert (size - 8 - 17) % 4 == 0 and size >= 8 + 33  # a QR code of version ≥ 4: 4v+17 modules
    assert laptop.locator("#seat-qr path").get_attribute("d")
    laptop.screenshot(path=str(artifacts / "table-seat-link-desktop.png"))
    laptop.click("#seat-close")

    phone = new_page(browser, contexts, viewport=PHONE, has_touch=True, is_mobile=True)
    phone.goto(link)
    expect(phone.locator('.seat-row.you[data-seat="red"]')).to_be_visible()
    assert "#" not in phone.url and token not in phone.url
    expect(laptop.locator(".toast")).to_contain_text("opened in another tab or device")
    expect(laptop.locator(".seat-row.you")).to_have_count(0)

    # A new seat link ends the old one.
    phone.click("#seat-link-btn")
    expect(phone.locator("#seat-url")).to_have_value(link)
    phone.click("#seat-new")
    expect(phone.locator("#seat-url")).not_to_have_value(link)
    expect(phone.locator("#seat-new-note")).to_be_visible()
    phone.screenshot(path=str(artifacts / "table-seat-link-phone.png"))
    fresh = phone.locator("#seat-url").input_value()
    stale = new_page(browser, contexts)
    stale.goto(link)
    wait_version(stale, 0)
    expect(stale.locator("#room")).to_have_attribute("data-phase", "waiting")
    expect(stale.locator(".seat-row.you")).to_have_count(0)
    expect(stale.locator(".toast")).to_contain_text("This seat link no longer works")
    expect(phone.locator('.seat-row.you[data-seat="red"]')).to_be_visible()
    assert fresh.endswith(phone.evaluate(f"localStorage.getItem('cardboard.token.{room}')"))
    # The laptop, replaced, is not listed as a spectator under Ann's name.
    expect(laptop.locator("#watchers")).not_to_contain_text("Ann")


SOCKETS_SEEN = """
(() => {
  const Real = window.WebSocket;
  window.socketsSeen = [];
  window.WebSocket = function (url, protocols) {
    const sock = new Real(url, protocols);
    const seen = { offered: protocols || [], accepted: null };
    window.socketsSeen.push(seen);
    sock.addEventListener("open", () => { seen.accepted = sock.protocol; });
    return sock;
  };
  window.WebSocket.prototype = Real.prototype;
  Object.assign(window.WebSocket, { CONNECTING: 0, OPEN: 1, CLOSING: 2, CLOSED: 3 });
})();
"""


def test_a_seated_page_offers_its_token_on_the_handshake(server: str, browser: Browser,
                                                          contexts: list[BrowserContext]) -> None:
    """A page holding a seat's token offers it on the websocket handshake
    (docs/protocol.md, "The room websocket"), so that it gets into a crowded
    room; the server accepts the ``cardboard`` subprotocol and Chromium takes
    the answer. A page with no token offers none."""
    url = create_room(server, "get-stuck")
    room = url.rsplit("/", 1)[1]
    page = new_page(browser, contexts, scripts=(SOCKETS_SEEN,))
    sit(page, url, "Ann", "red")
    token = page.evaluate(f"localStorage.getItem('cardboard.token.{room}')")
    first = page.evaluate("window.socketsSeen")
    assert first == [{"offered": [], "accepted": ""}]
    page.reload()
    expect(page.locator('.seat-row.you[data-seat="red"]')).to_be_visible()
    assert page.evaluate("window.socketsSeen") == [
        {"offered": ["cardboard", f"cardboard.seat.{token}"], "accepted": "cardboard"}]
    assert not page.errors  # type: ignore[attr-defined]


def test_a_spectator_in_a_full_room_gives_a_name(server: str, browser: Browser,
                                                 contexts: list[BrowserContext]) -> None:
    """A visitor who has never sat anywhere, in a room with no free seat, is
    offered a name to watch under (new-user pass: only a name remembered from
    an earlier seat was ever shown); the players see it, and the box goes."""
    url = create_room(server, "get-stuck", {"seed": 2})
    ann = new_page(browser, contexts)
    bob = new_page(browser, contexts)
    sit(ann, url, "Ann", "red")
    sit(bob, url, "Bob", "black")
    zoe = new_page(browser, contexts)
    zoe.goto(url)
    wait_version(zoe, 2)
    expect(ann.locator("#watchers")).to_have_text("1 watching")
    expect(zoe.locator("#joinbox")).to_be_hidden()
    expect(zoe.locator("#watchbox")).to_be_visible()
    expect(ann.locator("#watchbox")).to_be_hidden()
    zoe.fill("#watch-name", "Zoe")
    zoe.click("#watchbox button[type=submit]")
    expect(ann.locator("#watchers")).to_have_text("1 watching: Zoe")
    expect(zoe.locator("#watchers")).to_have_text("1 watching: Zoe (you)")
    expect(zoe.locator("#watchbox")).to_be_hidden()
    # Remembered: a reload watches under it at once.
    zoe.reload()
    wait_version(zoe, 2)
    expect(zoe.locator("#watchers")).to_have_text("1 watching: Zoe (you)")
    expect(zoe.locator("#watchbox")).to_be_hidden()


# ---- chat ----------------------------------------------------------------------------

def test_a_chat_message_reaches_every_context_and_a_reconnecting_one(
        server: str, browser: Browser, contexts: list[BrowserContext], artifacts: Path) -> None:
    url = create_room(server, "get-stuck", {"seed": 2})
    ann = new_page(browser, contexts)
    bob = new_page(browser, contexts, viewport=PHONE, has_touch=True, is_mobile=True)
    sit(ann, url, "Ann", "red")
    sit(bob, url, "Bob", "black")
    zoe = new_page(browser, contexts, scripts=(remember("Zoe"),))
    zoe.goto(url)
    wait_version(zoe, 2)
    expect(ann.locator("#watchers")).to_have_text("1 watching: Zoe")
    expect(zoe.locator("#watchers")).to_have_text("1 watching: Zoe (you)")
    # Spectators read but do not write in this room.
    expect(zoe.locator("#chat-form")).to_be_hidden()
    expect(zoe.locator("#chat-note")).to_have_text("Only the players write here; you can read along.")

    text = "<b>hi</b> all, see https://example.com"
    ann.fill("#chat-text", text)
    ann.press("#chat-text", "Enter")
    for page in (ann, bob, zoe):
        msg = page.locator("#chat-list li")
        expect(msg).to_have_count(1)
        expect(msg.locator(".chat-text")).to_have_text(text)
        expect(msg.locator(".chat-from")).to_have_text("Ann (Red ♥♦)")
        assert page.locator("#chat-list b, #chat-list a").count() == 0
    expect(ann.locator("#chat-text")).to_have_value("")
    bob.fill("#chat-text", "good luck")
    bob.click("#chat-form button[type=submit]")
    expect(zoe.locator("#chat-list li")).to_have_count(2)
    ann.screenshot(path=str(artifacts / "table-chat-desktop.png"))
    bob.screenshot(path=str(artifacts / "table-chat-phone.png"), full_page=True)

    bob.reload()  # reconnects: the messages come back, each once
    expect(bob.locator('.seat-row.you[data-seat="black"]')).to_be_visible()
    expect(bob.locator("#chat-list .chat-text")).to_have_text([text, "good luck"])
    ann.context.set_offline(True)  # a dropped connection, then back
    ann.context.set_offline(False)
    ann.evaluate("window.dispatchEvent(new Event('online'))")
    expect(ann.locator("#conn")).to_have_text("Connected")
    expect(ann.locator("#chat-list .chat-text")).to_have_text([text, "good luck"])
    assert ann.errors == [] and bob.errors == []  # type: ignore[attr-defined]


def test_spectators_chat_where_the_room_allows_it_and_a_player_mutes_them(
        server: str, browser: Browser, contexts: list[BrowserContext]) -> None:
    url = create_room(server, "get-stuck", {"spectator_chat": True})
    ann = new_page(browser, contexts)
    sit(ann, url, "Ann", "red")
    zoe = new_page(browser, contexts, scripts=(remember("Zoe"),))
    zoe.goto(url)
    wait_version(zoe, 1)
    zoe.fill("#chat-text", "hello from the rail")
    zoe.press("#chat-text", "Enter")
    msg = ann.locator("#chat-list li")
    expect(msg.locator(".chat-from")).to_have_text("Zoe (watching)")
    expect(msg).to_have_class(re.compile("chat-spectator"))
    ann.click("#chat-mute")
    expect(zoe.locator("#chat-form")).to_be_hidden()
    expect(zoe.locator("#chat-note")).to_have_text("Ann has muted the spectators.")
    expect(ann.locator("#chat-mute")).to_have_text("Let spectators write")
    ann.click("#chat-mute")
    expect(zoe.locator("#chat-form")).to_be_visible()


# ---- presence ------------------------------------------------------------------------

def test_a_player_away_shows_the_seconds_counting(server: str, browser: Browser,
                                                  contexts: list[BrowserContext], artifacts: Path) -> None:
    url = create_room(server, "get-stuck-4", {"seed": 3})
    pages = {seat: new_page(browser, contexts) for seat in "NE"}
    sit(pages["N"], url, "Ann", "N")
    sit(pages["E"], url, "Ben", "E")
    pages["N"].click('button[data-add-bot="S"]')
    pages["N"].click('button[data-add-bot="W"]')
    expect(pages["N"].locator("#room")).to_have_attribute("data-phase", "playing")
    pages["E"].context.close()
    contexts.remove(pages["E"].context)
    away = pages["N"].locator('.seat-row[data-seat="E"] .presence.away')
    expect(away).to_have_text(re.compile(r"^away [0-9] s$"))
    first = int(away.inner_text().split()[1])
    expect(away).to_have_text(re.compile(r"^away ([3-9]|[1-5][0-9]) s$"), timeout=10_000)
    assert int(away.inner_text().split()[1]) > first
    # Past the handover time the seat may be handed over; the button fits the row.
    button = pages["N"].locator('button[data-hand-over="E"]')
    expect(button).to_be_visible()
    row = pages["N"].locator('.seat-row[data-seat="E"]').bounding_box()
    box = button.bounding_box()
    assert row and box and box["x"] + box["width"] <= row["x"] + row["width"] + 0.5
    pages["N"].screenshot(path=str(artifacts / "table-away-desktop.png"))
    pages["N"].set_viewport_size(PHONE)
    for seat in "NESW":
        row = pages["N"].locator(f'.seat-row[data-seat="{seat}"]').bounding_box()
        assert row and row["x"] + row["width"] <= PHONE["width"]
    box = button.bounding_box()
    assert box and box["x"] + box["width"] <= PHONE["width"] - 8
    pages["N"].locator("#seats").scroll_into_view_if_needed()
    pages["N"].screenshot(path=str(artifacts / "table-away-phone.png"))


# ---- what a finger taps --------------------------------------------------------------

TAPPABLE = "#board .gs-act, #board .rj-act, #board .su-act, #board .st-playable"

TAP_GAMES = [
    ("get-stuck", {}), ("get-stuck-4", {}), ("romeo-and-juliet", {}), ("stucco", {}),
    ("suitors", {"players": 2}), ("suitors", {"players": 4}), ("suitors", {"variant": "big"}),
]


@pytest.mark.parametrize(("game", "options"), TAP_GAMES,
                         ids=[f"{g}-{'-'.join(map(str, o.values())) or 'default'}" for g, o in TAP_GAMES])
def test_tap_sizes_at_360_px(server: str, browser: Browser, contexts: list[BrowserContext], artifacts: Path,
                             game: str, options: dict[str, Any]) -> None:
    made = bot_room(server, game, {**options, "seed": 4})
    page = new_page(browser, contexts, viewport=PHONE, has_touch=True, is_mobile=True,
                    scripts=(remember("Ann"),))
    page.goto(f"{server}{made['url']}?sit={made['seat']}")
    expect(page.locator(".seat-row.you")).to_be_visible()
    page.wait_for_function(f"() => document.querySelectorAll({json.dumps(TAPPABLE)}).length > 0",
                           timeout=20_000)
    widths: list[float] = page.evaluate(
        "sel => [...document.querySelectorAll(sel)].map((e) => e.getBoundingClientRect().width)", TAPPABLE)
    # At least 36 px a card; the Big board's eleven columns all fit the
    # screen instead (hidden columns were missed by players), at about 29 px,
    # above the 24 px that WCAG 2.5.8 asks of a target.
    least = 28 if options.get("variant") == "big" else 36
    assert min(widths) >= least, (game, options, sorted(widths)[:3])
    # The page never scrolls sideways.
    assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]
    # Touch wording: no "Esc", no "click".
    words = page.locator("#room").inner_text()
    assert "Esc" not in words and "click" not in words.lower(), words
    label = f"{game}-{'-'.join(map(str, options.values())) or 'default'}"
    page.screenshot(path=str(artifacts / f"table-taps-{label}-phone.png"))


FIT_GAMES = [
    # game, options, columns, the least width of a column (px)
    ("get-stuck", {}, 7, 50), ("get-stuck-4", {}, 7, 50), ("romeo-and-juliet", {}, 7, 48),
    ("suitors", {"players": 4}, 9, 64), ("suitors", {"variant": "big"}, 11, 36),
]


@pytest.mark.parametrize("viewport", [DESKTOP, {"width": 1280, "height": 800}],
                         ids=lambda v: f"{v['width']}x{v['height']}")
def test_the_grid_layouts_fill_a_laptop_window(server: str, browser: Browser, contexts: list[BrowserContext],
                                              artifacts: Path, viewport: dict[str, int]) -> None:
    """On a laptop the whole board shows without scrolling, from the page's
    top: its last row (in Romeo and Juliet, below the status box and turn
    count) and Suitors' colour legend under it (beside it, with the status
    line, on the Big board); and it is as big as that allows."""
    for game, options, cols, least in FIT_GAMES:
        made = bot_room(server, game, {**options, "seed": 4})
        page = new_page(browser, contexts, viewport=viewport, scripts=(remember("Ann"),))
        page.goto(f"{server}{made['url']}?sit={made['seat']}")
        expect(page.locator(".seat-row.you")).to_be_visible()
        page.wait_for_timeout(500)  # any scroll of the join is over
        page.evaluate("window.scrollTo(0, 0)")
        got = page.evaluate("""() => {
          const box = (s) => document.querySelector(s)?.getBoundingClientRect() || null;
          return { board: box('#board .board'), table: box('.table'), side: box('.side'),
                   legend: box('.table .su-legend'), beside: box('.su-w11 > .su-status'),
                   height: window.innerHeight };
        }""")
        board, table, side, legend = got["board"], got["table"], got["side"], got["legend"]
        # The Big board's status line and legend stand in a column beside it.
        beside = got["beside"]["width"] + 14 if options.get("variant") == "big" else 0
        where = (game, options, got)
        # The board is as tall as the window allows (its last row in view) ...
        assert board["bottom"] <= got["height"], where
        assert legend is None or legend["bottom"] <= got["height"], where
        assert board["height"] >= 0.56 * got["height"], where
        # ... and the table is no wider than it needs: the panels take the rest.
        assert table["width"] <= board["width"] + beside + 180, where
        assert side["left"] >= table["right"], where
        assert board["width"] / cols >= least, where
        label = f"{game}-{'-'.join(map(str, options.values())) or 'default'}"
        size = f"{viewport['width']}x{viewport['height']}"
        page.screenshot(path=str(artifacts / f"table-fit-{label}-{size}.png"))
        page.context.close()
        contexts.remove(page.context)


def test_get_stuck_s_last_move_line_keeps_the_board_in_view(server: str, browser: Browser,
                                                             contexts: list[BrowserContext]) -> None:
    """Get Stuck's "Last move: …" above the board takes one line beside the
    side panels (the whole sentence in its title), so that the board's last
    row stays in view at 1366×768: a second line pushed it out (new-user
    pass)."""
    made = bot_room(server, "get-stuck", {"seed": 4})
    page = new_page(browser, contexts, scripts=(remember("Ann"),))
    page.goto(f"{server}{made['url']}?sit={made['seat']}")
    expect(page.locator(".seat-row.you")).to_be_visible()
    for _ in range(2):  # until the computer player has moved: its sentence is the longer
        page.wait_for_function("() => document.querySelector('#board .cell.playable')", timeout=15_000)
        if page.locator("#log li").count():
            break
        v = int(page.locator("#room").get_attribute("data-version") or 0)
        page.locator("#board .cell.playable").first.click()
        page.wait_for_function("v => Number(document.querySelector('#room').dataset.version) >= v + 2",
                               arg=v, timeout=15_000)
    page.wait_for_timeout(500)  # any scroll of the join is over
    page.evaluate("window.scrollTo(0, 0)")
    got = page.evaluate("""() => {
      const last = document.querySelector('#board .gs-last');
      return { text: last.textContent, title: last.title, height: last.getBoundingClientRect().height,
               lineHeight: parseFloat(getComputedStyle(last).lineHeight),
               bottom: document.querySelector('#board .board').getBoundingClientRect().bottom,
               window: window.innerHeight };
    }""")
    assert got["text"].startswith("Last move: Black moves the ") and got["title"] == got["text"], got
    assert got["height"] < 1.5 * got["lineHeight"], got  # one line
    assert got["bottom"] <= got["window"], got


def test_a_resumed_seat_does_not_scroll_the_page(server: str, browser: Browser,
                                                 contexts: list[BrowserContext]) -> None:
    """Taking a seat brings the banner into view (on a phone it is above the
    seats); a seat resumed after the connection dropped, with the banner in
    view, leaves the page where it is (it used to scroll the header away)."""
    made = bot_room(server, "romeo-and-juliet")
    page = new_page(browser, contexts, viewport=PHONE, has_touch=True, is_mobile=True,
                    scripts=(remember("Ann"),))
    sockets: list[Any] = []

    def through(ws: Any) -> None:  # every socket passes through, so that the test can cut it
        ws.connect_to_server()
        sockets.append(ws)

    page.route_web_socket(re.compile(r"/ws/"), through)
    page.goto(f"{server}{made['url']}?sit={made['seat']}")
    expect(page.locator(".seat-row.you")).to_be_visible()
    page.wait_for_timeout(800)  # the join's smooth scroll is over
    page.evaluate("window.scrollTo(0, 0)")
    sockets[-1].close(code=1011, reason="cut")
    expect(page.locator("#conn")).not_to_have_attribute("data-state", "open", timeout=15_000)
    expect(page.locator("#conn")).to_have_attribute("data-state", "open", timeout=15_000)
    assert len(sockets) == 2
    expect(page.locator(".seat-row.you")).to_be_visible()
    page.wait_for_timeout(800)  # past the smooth scroll a join used to start
    assert page.evaluate("window.scrollY") == 0


def test_a_laptop_shows_a_deal_s_first_moves_without_scrolling(server: str, browser: Browser,
                                                                contexts: list[BrowserContext],
                                                                artifacts: Path) -> None:
    """At 1366×768 the "Moves this deal" list is as tall as the window leaves
    room for: its first nine moves show without scrolling it (new-user
    pass: it scrolled the first move out of view at nine, with room below)."""
    made = bot_room(server, "get-stuck", {"seed": 3})
    page = new_page(browser, contexts, viewport={"width": 1366, "height": 768}, scripts=(remember("Ann"),))
    page.goto(f"{server}{made['url']}?sit={made['seat']}")
    expect(page.locator(".seat-row.you")).to_be_visible()
    rng = __import__("random").Random(2)
    while page.locator("#log li").count() < 9:
        assert page.locator("#room").get_attribute("data-phase") == "playing"
        play_turns(page, rng, 1)
    # (the first nine, however many more came meanwhile)
    sizes = page.locator("#log").evaluate("""(e) => {
      const nine = [...e.children].slice(0, 9).map((li) => li.getBoundingClientRect());
      return [nine[8].bottom - nine[0].top, e.clientHeight];
    }""")
    assert sizes[0] <= sizes[1] + 1, sizes  # (+1: the client height is whole pixels)
    page.screenshot(path=str(artifacts / "table-moves-laptop.png"))


TOAST_SIZES = {"desktop": DESKTOP, "laptop": {"width": 1024, "height": 768},
               "narrow": {"width": 901, "height": 800}, "phone": PHONE}


@pytest.mark.parametrize("size", sorted(TOAST_SIZES))
@pytest.mark.parametrize("game", ["suitors", "stucco"])
def test_a_toast_keeps_off_the_board_and_never_takes_a_click(server: str, browser: Browser,
                                                           contexts: list[BrowserContext],
                                                           game: str, size: str) -> None:
    """A passing message (a refused move, the next deal begun) does not
    cover the board or the hands of a seated player at the top of the page,
    in the widest board (Suitors) or with hands (Stucco); it takes no click
    (what lies under it gets it), and a click or tap anywhere dismisses
    it."""
    viewport = TOAST_SIZES[size]
    made = bot_room(server, game)
    phone = viewport is PHONE
    page = new_page(browser, contexts, viewport=viewport, scripts=(remember("Ann"),),
                    has_touch=phone, is_mobile=phone)
    page.goto(f"{server}{made['url']}?sit={made['seat']}")
    expect(page.locator(".seat-row.you")).to_be_visible()
    page.wait_for_timeout(800)  # the join's smooth scroll is over
    page.evaluate("window.scrollTo(0, 0)")
    page.evaluate("""() => import('/static/js/room.js').then((m) => {
      m.toast('The position changed before your move arrived. Here it is.', 'error');
      m.toast('Deal 2 has begun: back at the table.');
      m.toast('Deal 2 has begun: back at the table.');
    })""")
    toasts = page.locator("#toasts .toast")
    expect(toasts).to_have_count(2)  # the same message shows once
    covered = page.evaluate("""() => {
      const boxes = [...document.querySelectorAll('#board .board, #board .hand, #board .st-cards')]
        .map((e) => e.getBoundingClientRect()).filter((r) => r.width && r.height);
      return [...document.querySelectorAll('#toasts .toast')].flatMap((t) => {
        const a = t.getBoundingClientRect();
        const hit = document.elementFromPoint(a.left + a.width / 2, a.top + a.height / 2);
        return [
          ...boxes.filter((b) => a.left < b.right && b.left < a.right && a.top < b.bottom && b.top < a.bottom)
            .map((b) => `covers ${JSON.stringify(b)}`),
          ...(t.contains(hit) ? ["takes the click at its centre"] : []),
        ];
      });
    }""")
    assert covered == [], (game, size, covered)
    page.locator("h1").first.click()
    expect(toasts).to_have_count(0)
    assert not page.errors  # type: ignore[attr-defined]


def test_no_sideways_scroll_just_above_the_phone_layout(server: str, browser: Browser,
                                                         contexts: list[BrowserContext]) -> None:
    """In a window a little wider than 900 px and tall, the grid boards
    (sized to the window's height) leave room for the side panels: nothing
    scrolls sideways (Suitors' 9×5 board did, 1,008 px wide at 901)."""
    for game, options, _cols, _least in [*FIT_GAMES, ("stucco", {}, 0, 0)]:
        for width in (901, 1000):
            made = bot_room(server, game, {**options, "seed": 4})
            page = new_page(browser, contexts, viewport={"width": width, "height": 800},
                            scripts=(remember("Ann"),))
            page.goto(f"{server}{made['url']}?sit={made['seat']}")
            expect(page.locator(".seat-row.you")).to_be_visible()
            wide = page.evaluate("document.documentElement.scrollWidth")
            assert wide <= width, (game, options, width, wide)
            page.context.close()
            contexts.remove(page.context)


@pytest.mark.parametrize(("game", "seats"), [("get-stuck", ("red", "black")), ("stucco", ("north", "south")),
                                             ("suitors", ("JS", "JC"))])
def test_a_name_of_one_long_word_does_not_widen_a_phone(server: str, browser: Browser, artifacts: Path,
                                                        game: str, seats: tuple[str, str]) -> None:
    """32 W's (the longest name) broke no line in the banner, and the Suitors
    Jack's tag reached past the layout's edge: the page scrolled sideways at
    390 px (verification pass)."""
    url = create_room(server, game)
    ctxs = [browser.new_context(viewport={"width": 390, "height": 844}) for _ in seats]
    pages = [c.new_page() for c in ctxs]
    for page, seat, letter in zip(pages, seats, "WV", strict=True):
        sit(page, url, letter * 32, seat)
    for page in pages:
        expect(page.locator("#room")).to_have_attribute("data-phase", "playing")
        expect(page.locator("#seats")).to_contain_text("W" * 32)
        width = page.evaluate("document.documentElement.scrollWidth")
        assert width <= 390, f"{game}: the page scrolls sideways at 390 px: {width}"
    pages[1].screenshot(path=str(artifacts / f"long-name-{game}-phone.png"))
    for c in ctxs:
        c.close()


def play_to_match_over(socks: dict[str, Any], rng: Any) -> dict[str, Any]:
    """Two people, on websockets sync clients by seat, take their seats (named
    after them) and play random moves until the match is over; the last
    state."""
    for seat, ws in socks.items():
        ws.send(json.dumps({"type": "join", "seat": seat, "name": seat.title()}))
    seen: dict[str, dict[str, Any]] = {seat: {"version": -1} for seat in socks}
    sent = -1
    while True:
        for seat, ws in socks.items():  # the freshest state each socket has
            while True:
                try:
                    frame = json.loads(ws.recv(timeout=0.005))
                except TimeoutError:
                    break
                if frame["type"] == "state" and frame["version"] >= seen[seat]["version"]:
                    seen[seat] = frame
        last = max(seen.values(), key=lambda f: f["version"])
        if last.get("phase") == "match_over":
            return last
        mover = last["to_move"][0] if last.get("phase") == "playing" and last["to_move"] else None
        if mover and seen[mover]["version"] == last["version"] > sent:
            sent = last["version"]
            socks[mover].send(json.dumps({"type": "move", "version": sent,
                                          "move": rng.choice(seen[mover]["legal_moves"])}))


def test_after_the_match_a_free_seat_is_waited_for(server: str, browser: Browser) -> None:
    """Two people finish a game of Romeo and Juliet over their sockets; one
    presses "Ready for a rematch", the other leaves. A watching page says
    the rematch waits for someone to take the free seat (break-it pass: the
    one press dealt the new match with the seat empty)."""
    import random

    from websockets.sync.client import connect

    url = create_room(server, "romeo-and-juliet")
    ws_url = server.replace("http", "ws", 1) + "/ws/" + url.rsplit("/", 1)[1]
    with connect(ws_url) as red, connect(ws_url) as black:
        last = play_to_match_over({"red": red, "black": black}, random.Random(5))
        red.send(json.dumps({"type": "ready", "version": last["version"]}))
        black.send(json.dumps({"type": "leave"}))
        page = browser.new_page(viewport=DESKTOP)
        page.goto(url)
        expect(page.locator("#banner")).to_contain_text(
            "1 of 2 ready · waiting for someone to take the free seat.")
        page.close()


def test_someone_away_after_the_match_is_waited_for_a_counted_time(server: str, browser: Browser,
                                                                  artifacts: Path) -> None:
    """One player presses "Ready for a rematch" and the other's connection
    drops: the banner counts down how much longer the table waits for them
    (new-user pass: it said only "waiting for Bea", then went on a minute
    later without a word)."""
    import random

    from websockets.sync.client import connect

    url = create_room(server, "romeo-and-juliet")
    ws_url = server.replace("http", "ws", 1) + "/ws/" + url.rsplit("/", 1)[1]
    with connect(ws_url) as red:
        with connect(ws_url) as black:
            last = play_to_match_over({"red": red, "black": black}, random.Random(5))
            red.send(json.dumps({"type": "ready", "version": last["version"]}))
        page = browser.new_page(viewport=DESKTOP)
        page.goto(url)
        line = page.locator("#banner .sub")
        expect(line).to_contain_text(re.compile(
            r"^You are watching\. 1 of 2 ready · waiting \d+ s more for Black \(.*\), away\.$"))
        first = int(line.locator(".countdown").inner_text().split()[0])
        assert 50 <= first <= 60, first
        page.wait_for_timeout(3200)  # it counts down by itself (its text is set once a second)
        assert int(line.locator(".countdown").inner_text().split()[0]) <= first - 2
        page.screenshot(path=str(artifacts / "table-away-countdown.png"))
        page.close()


def test_a_break_nobody_is_ready_in_says_what_it_waits_for(browser: Browser) -> None:
    """Both players leave the table after the match without pressing Ready,
    and are away longer than the table waits: a watching page says it waits
    for a player to say they are ready (new-user pass: it said only "not
    waiting for Pat, away", and nothing happened)."""
    import random

    from websockets.sync.client import connect

    from bench.server import free_port, start_server, stop_server

    port = free_port()
    proc = start_server(port, {"CARDBOARD_READY_AWAY_SECONDS": "1"})
    try:
        base = f"http://127.0.0.1:{port}"
        url = create_room(base, "romeo-and-juliet")
        ws_url = base.replace("http", "ws", 1) + "/ws/" + url.rsplit("/", 1)[1]
        with connect(ws_url) as red, connect(ws_url) as black:
            play_to_match_over({"red": red, "black": black}, random.Random(5))
        page = browser.new_page(viewport=DESKTOP)
        page.goto(url)
        expect(page.locator("#banner .sub")).to_have_text(
            "You are watching. 0 of 2 ready · not waiting for Red (Red) and Black (Black), away"
            " · waiting for a player to say they are ready.", timeout=10_000)
        page.close()
    finally:
        stop_server(proc)


def test_a_name_the_server_refuses_leaves_the_seat_button_to_press_again(server: str,
                                                                       browser: Browser) -> None:
    """A name of invisible characters only (a zero-width space pasted in) is
    refused as a bad field, an answer that brings no fresh state: the page
    says why and draws the seats again, so that "Sit here" can be pressed
    with a better name (break-it pass: the button stayed disabled until a
    reload, the only free seat beside a computer player out of reach)."""
    made = computer_room(server, "stucco")
    page = browser.new_page(viewport=DESKTOP)
    page.goto(server + made["url"])
    wait_version(page, 0)
    button = page.locator(f'button[data-join="{made["seat"]}"]')
    page.fill("#name", "\u200b\u200b")
    button.click()
    expect(page.locator("#toasts")).to_contain_text("a name needs at least one visible character")
    expect(button).to_be_enabled()
    page.fill("#name", "Ann")
    button.click()
    expect(page.locator(f'.seat-row.you[data-seat="{made["seat"]}"]')).to_be_visible()
    page.close()


def test_a_refused_name_is_not_offered_again_in_the_next_room(server: str, browser: Browser) -> None:
    """The invisible name refused is forgotten: the next room this browser
    opens does not fill it in, nor send it to watch under, which greeted the
    person with "a name needs at least one visible character" they had not
    asked for (break-it pass)."""
    made = computer_room(server, "romeo-and-juliet")
    context = browser.new_context(viewport=DESKTOP)
    page = context.new_page()
    page.goto(server + made["url"])
    wait_version(page, 0)
    page.fill("#name", "\u200b")
    page.click(f'button[data-join="{made["seat"]}"]')
    expect(page.locator("#toasts")).to_contain_text("a name needs at least one visible character")
    assert page.evaluate("() => localStorage.getItem('cardboard.name')") is None
    other = context.new_page()
    other.goto(server + computer_room(server, "get-stuck")["url"])
    wait_version(other, 0)
    assert other.input_value("#name") == ""
    context.close()
