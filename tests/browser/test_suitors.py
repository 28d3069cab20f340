"""Suitors in real browsers: three players share a room link and play a game to
its end by clicking the cards the board lights up (a face-down card to turn
it up; a Jumper, then the square it lands on). The engine, replaying the same
moves, is the oracle: before every turn the lit cards are exactly the legal
moves, and after it every page shows that seat's view (cells, region, locks).
Phone-sized pages and the Big board are checked for sideways scrolling, and
the Big board's cards for their size in a laptop's window; a phone's region
marking for its colour and edge.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from browserkit import (
    check_coords,
    computer_room,
    create_room,
    lit,
    press,
    settled_shot,
    sit,
    version,
    wait_version,
)
from playwright.sync_api import Browser, BrowserContext, Page, expect

from engine.match import Match
from engine.registry import get_game
from engine.suitors import SuitorsState

GAME = get_game("suitors")
NAMES = {"JS": "Ann", "JH": "Ben", "JC": "Cat", "JD": "Dan"}

SNAPSHOT_JS = """() => [...document.querySelectorAll('#board .su-cell')].map(c => c.dataset.card)"""
# Every animation a page starts, by the square of the card it moves (read and
# cleared with TAKE_ANIMATED_JS).
COUNT_ANIMATIONS_JS = """
window.__animated = [];
const animate = Element.prototype.animate;
Element.prototype.animate = function (...args) {
  const cell = this.closest && this.closest('.su-cell');
  if (cell) window.__animated.push(cell.dataset.square);
  return animate.apply(this, args);
};
"""
TAKE_ANIMATED_JS = "() => [...new Set(window.__animated.splice(0))].sort()"


def _start(seed: int, options: dict[str, Any]) -> SuitorsState:
    """The deal a room with this seed starts with (the server deals the same)."""
    state: SuitorsState = Match.new("suitors", GAME.check_options(options), seed).state
    return state


def _cell(page: Page, sq: str) -> Any:
    return page.locator(f'#board .su-cell[data-square="{sq}"]')


def _table(browser: Browser, url: str, seats: tuple[str, ...], width: int,
           ) -> tuple[list[BrowserContext], dict[str, Page], list[str]]:
    """One browser context per seat, each seated by clicking; also the list
    that collects the pages' script errors (checked empty at the end)."""
    mobile = width < 500
    ctxs = [browser.new_context(viewport={"width": width, "height": 760 if mobile else 900},
                                has_touch=mobile, is_mobile=mobile) for _ in seats]
    pages = {seat: ctx.new_page() for seat, ctx in zip(seats, ctxs, strict=True)}
    errors: list[str] = []
    for seat, page in pages.items():
        page.add_init_script(COUNT_ANIMATIONS_JS)
        page.on("pageerror", lambda e: errors.append(str(e)))
        sit(page, url, NAMES[seat], seat)
    for page in pages.values():
        expect(page.locator("#room")).to_have_attribute("data-phase", "playing")
    return ctxs, pages, errors


def _split(legal: tuple[str, ...]) -> tuple[list[str], dict[str, list[str]]]:
    """Squares to reveal, and jumps as Jumper square → landing squares."""
    reveals = sorted(m[7:] for m in legal if m.startswith("reveal "))
    jumps: dict[str, list[str]] = {}
    for m in legal:
        if "-" in m:
            a, b = m.split("-")
            jumps.setdefault(a, []).append(b)
    return reveals, {a: sorted(bs) for a, bs in jumps.items()}


def _dist(a: str, b: str) -> int:
    return abs(ord(a[0]) - ord(b[0])) + abs(int(a[1:]) - int(b[1:]))


def _choose(state: SuitorsState) -> str:
    """The mover's jump that brings its Jack nearest the Queen, if one brings
    it nearer; else its reveal nearest the Queen and its Jack; else its
    first other move (the engine plays each jump to see where the Jack ends)."""
    seat = state.mover
    view = GAME.view(state, seat)
    queen, jack = view["queen"], view["jacks"][seat]

    def rank(move: str) -> tuple[int, int, str]:
        if move.startswith("reveal "):
            return 1, _dist(move[7:], queen) + _dist(move[7:], jack), move
        if move == "pass":
            return 3, 0, move
        after = _dist(GAME.view(GAME.apply(state, seat, move), seat)["jacks"][seat], queen)
        return (0 if after < _dist(jack, queen) else 2), after, move

    return min(GAME.legal_moves(state, seat), key=rank)


def _check_views(pages: dict[str, Page], state: SuitorsState) -> None:
    """Every page shows its seat's view: the cells, its region shaded, its
    locked cards marked, and nothing lit on a page whose seat is not awaited."""
    for seat, page in pages.items():
        view = GAME.view(state, seat)
        assert page.evaluate(SNAPSHOT_JS) == view["cells"]
        assert lit(page, ".su-mine") == sorted(view["connected"][seat])
        assert lit(page, ".su-locked") == sorted(view["locked"])
        if state.over or seat != state.mover:
            assert lit(page, ".su-act") == []


def _play_turn(pages: dict[str, Page], state: SuitorsState, move: str, *, keyboard: bool = False,
               cancel_first: bool = False) -> SuitorsState:
    """Play ``move`` for the seat on turn by clicking (or with the keyboard),
    after checking that the board lights up exactly the legal moves; then
    check every page against the engine's next position. Returns it."""
    seat = state.mover
    page = pages[seat]
    reveals, jumps = _split(GAME.legal_moves(state, seat))
    assert lit(page, ".su-reveal") == reveals
    assert lit(page, ".su-jumper") == sorted(jumps)
    v = version(page)
    for pg in pages.values():
        pg.evaluate(TAKE_ANIMATED_JS)

    def click(sq: str) -> None:
        press(page, _cell(page, sq), keyboard=keyboard)

    if move == "pass":
        page.click("#pass-btn")
    elif move.startswith("reveal "):
        click(move[7:])
    else:
        start, end = move.split("-")
        if cancel_first:
            # Choose the Jumper and change your mind: Escape, then a click on
            # a card that is not lit, put the Jumpers back.
            click(start)
            assert lit(page, ".su-land") == jumps[start]
            page.keyboard.press("Escape")
            assert lit(page, ".su-land") == []
            assert lit(page, ".su-jumper") == sorted(jumps)
            click(start)
            page.locator("#board .su-cell.su-queen").click()
            assert lit(page, ".su-selected") == []
        click(start)
        expect(_cell(page, start)).to_have_class(re.compile(r"\bsu-selected\b"))
        assert lit(page, ".su-land") == jumps[start]
        expect(page.locator(".su-status")).to_contain_text(f"at {start}: click a lit square")
        click(end)
    before = state
    state = GAME.apply(state, seat, move)
    for pg in pages.values():
        wait_version(pg, v + 1)
        assert version(pg) == v + 1
    _check_views(pages, state)
    # Every page animates the move: a reveal flips its card; a jump slides
    # the Jumper and each jumped card (every square of the jump's line).
    step = before.board.parse.get(move)
    moved = [] if step is None else sorted(before.board.names[sq] for sq in step.line)
    for pg in pages.values():
        pg.wait_for_function("() => document.getAnimations().length === 0")
        assert pg.evaluate(TAKE_ANIMATED_JS) == moved, move
    return state


def test_three_players_play_to_the_queen(server: str, browser: Browser, artifacts: Path) -> None:
    seed = 81  # a game of 29 turns with 9 jumps, won by J♥, under _choose
    # The test follows the engine move by move, Pass included: the room does not
    # pass for the players (auto_pass off), they press Pass.
    url = create_room(server, "suitors", {"seed": seed, "players": 3, "auto_pass": False})
    seats = ("JS", "JH", "JC")
    ctxs, pages, errors = _table(browser, url, seats, 1100)
    state = _start(seed, {"players": 3})
    _check_views(pages, state)
    ann = pages["JS"]
    expect(ann.locator('#board .su-cell[data-square="e3"]')).to_have_attribute("data-card", "QH")
    expect(ann.locator('#board .su-cell[data-jack="JS"] .su-tag')).to_have_text("You")
    expect(ann.locator('#board .su-cell[data-jack="JH"] .su-tag')).to_have_text("Ben")
    unused = ann.locator('#board .su-cell.su-unused[data-jack="JD"] .su-tag .su-long')
    expect(unused).to_have_text("not in play")
    expect(ann.locator('.seat-row[data-seat="JS"] .seat-label')).to_have_text("J♠ a1")
    expect(ann.locator("#banner")).to_contain_text(
        "Turn up a lit face-down card. Your J♠ wins by ending a jump next to the Queen.")
    expect(ann.locator("#scores")).to_contain_text("Jeff Wofford")
    check_coords(ann, 9, 5)
    # One game a match: the room says "game", not "deal".
    expect(ann.locator("#log-h")).to_have_text("Moves this game")
    settled_shot(ann, artifacts / "suitors-start.png")

    turns = jumps = 0
    seen_lock = False
    while not state.over:
        move = _choose(state)
        jump = "-" in move
        mover = pages[state.mover]
        if jump and jumps == 2:
            # A picture of a chosen Jumper and its landing squares.
            mover.click(f'#board .su-cell[data-square="{move.split("-")[0]}"]')
            settled_shot(mover, artifacts / "suitors-jumper-chosen.png")
            mover.keyboard.press("Escape")
        state = _play_turn(pages, state, move, keyboard=turns == 1, cancel_first=jump and jumps == 0)
        turns += 1
        jumps += jump
        seen_lock = seen_lock or any(GAME.view(state, s)["locked"] for s in seats)
        if seen_lock and jump and jumps == 6:
            settled_shot(pages[state.mover], artifacts / "suitors-mid.png")
        assert turns < 60
    assert jumps >= 5 and seen_lock

    # The end: every page names the winner, in the board's line, the banner and the result.
    assert state.winner == "JH"
    for seat, page in pages.items():
        expect(page.locator("#room")).to_have_attribute("data-phase", "match_over")
        expect(page.locator("#result")).to_be_visible()
        expect(page.locator("#result")).to_contain_text("J♥ reached the Queen of Hearts")
        who = "The game is over. You win the game." if seat == "JH" else \
            "The game is over. Ben (J♥) wins the game. You lose."
        expect(page.locator("#banner")).to_contain_text(who)
        # The scores' note tells the game's length, no longer how it may end.
        expect(page.locator("#scores")).to_contain_text(f"The game lasted {state.turns} turns.")
        expect(page.locator("#scores")).not_to_contain_text("a draw after")
        line = "Your J♥ reached the Queen of Hearts: you win!" if seat == "JH" else \
            "Ben's J♥ reached the Queen of Hearts: Ben wins."
        expect(page.locator(".su-status")).to_have_text(line)
        expect(page.locator("#board .su-cell.su-winner")).to_have_attribute("data-jack", "JH")
        # The page's own side is "You (J♠)", said once (not "You (J♠) (you)").
        own = page.locator(f'#result .side-score[data-side="{seat}"]')
        expect(own).to_contain_text(f"You (J{dict(JS='♠', JH='♥', JC='♣')[seat]})")
        expect(own).not_to_contain_text("(you)")
    settled_shot(pages["JS"], artifacts / "suitors-end.png", full_page=True)
    assert errors == []
    for ctx in ctxs:
        ctx.close()


def _no_sideways_scroll(page: Page) -> None:
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= page.viewport_size["width"], f"the page scrolls sideways: {width}"  # type: ignore[index]


GLOW_REACH = """() => {
  const card = document.querySelector('.su-board .cell.playable .card');
  const shadows = getComputedStyle(card).boxShadow.split(/,(?![^(]*\\))/);
  // each shadow: colour, x, y, blur, spread (px): how far it reaches
  return Math.max(...shadows.map((s) => {
    const [x, y, blur, spread] = (s.match(/-?[\\d.]+px/g) || []).map(parseFloat);
    return Math.max(Math.abs(x), Math.abs(y)) + blur + (spread || 0);
  }));
}"""


def test_a_phone_plays_a_reveal_and_a_jump(server: str, browser: Browser, artifacts: Path) -> None:
    seed = 3
    url = create_room(server, "suitors", {"seed": seed, "auto_pass": False})
    ctxs, pages, errors = _table(browser, url, ("JS", "JC"), 360)
    state = _start(seed, {})
    # A lit card's glow reaches a few pixels past it, not 15: side by side,
    # lit cards stay apart (new-user pass: on a phone they merged into bands).
    reach = pages[state.mover].evaluate(GLOW_REACH)
    assert 0 < reach <= 6, reach
    kinds: set[str] = set()
    while not {"reveal", "jump"} <= kinds and not state.over:
        move = _choose(state)
        page = pages[state.mover]
        v = version(page)
        if "-" in move:
            start, end = move.split("-")
            where = _cell(page, end).bounding_box()
            _cell(page, start).tap()
            assert end in lit(page, ".su-land")
            # Blue where it lands, and the chosen Jumper ringed in blue, as on
            # a laptop (new-user pass: a phone's tight gold glow for lit cards
            # covered both, so a player could not tell where a tap would land).
            # (The box shadows change over 0.12 s.)
            ringed = """([sq, colour]) => getComputedStyle(document.querySelector(
              `#board .su-cell[data-square="${sq}"] .card`)).boxShadow.includes(colour)"""
            page.wait_for_function(ringed, arg=[end, "rgb(76, 195, 255)"], timeout=3000)
            page.wait_for_function(ringed, arg=[start, "rgb(31, 155, 209)"], timeout=3000)
            # The prompt takes the status line's place: the cards stay put.
            expect(page.locator(".su-status")).to_have_text(re.compile(
                rf"^Jumper \S+ at {start}: tap a lit square to land on\. Tap elsewhere to cancel\.$"))
            assert _cell(page, end).bounding_box() == where
            settled_shot(page, artifacts / "suitors-phone-jumper.png")
            _cell(page, end).tap()
            kinds.add("jump")
        else:
            assert move.startswith("reveal ")
            _cell(page, move[7:]).tap()
            kinds.add("reveal")
        state = GAME.apply(state, state.mover, move)
        for pg in pages.values():
            wait_version(pg, v + 1)
        _check_views(pages, state)
    for page in pages.values():
        _no_sideways_scroll(page)
    settled_shot(pages["JS"], artifacts / "suitors-phone.png", full_page=True)
    assert errors == []
    for ctx in ctxs:
        ctx.close()


def test_the_big_board_fits_a_phone_and_a_desktop(server: str, browser: Browser, artifacts: Path) -> None:
    url = create_room(server, "suitors", {"seed": 8, "players": 4, "variant": "big", "auto_pass": False})
    ctxs, pages, errors = _table(browser, url, ("JS", "JH", "JC", "JD"), 360)
    state = _start(8, {"players": 4, "variant": "big"})
    _check_views(pages, state)
    ann = pages["JS"]
    expect(ann.locator('#board .su-cell[data-square="f5"]')).to_have_attribute("data-card", "QH")
    expect(ann.locator("#board .su-cell.su-jack, #board .su-cell[data-jack]")).to_have_count(4)
    _no_sideways_scroll(ann)
    check_coords(ann, 11, 9)
    settled_shot(ann, artifacts / "suitors-big-phone.png", full_page=True)
    desk = browser.new_context(viewport={"width": 1100, "height": 900})
    watcher = desk.new_page()
    watcher.goto(url)
    wait_version(watcher, version(ann))
    assert watcher.evaluate(SNAPSHOT_JS) == GAME.view(state, None)["cells"]
    expect(watcher.locator("#banner")).to_contain_text("Ann (J♠ a1) to move")
    _no_sideways_scroll(watcher)
    check_coords(watcher, 11, 9)
    settled_shot(watcher, artifacts / "suitors-big-desktop.png")
    assert errors == []
    for ctx in [*ctxs, desk]:
        ctx.close()


BIG_LAYOUT_JS = """() => {
  const box = (e) => e.getBoundingClientRect();
  const shown = [...document.querySelectorAll('#board .su-cell'), document.querySelector('.su-status'),
                 document.querySelector('#board-extra .su-legend')].map(box);
  return {
    card: box(document.querySelector('#board .su-cell .card')).width,
    inside: shown.every((r) => r.top >= 0 && r.left >= 0 && r.bottom <= innerHeight && r.right <= innerWidth),
    logTop: box(document.querySelector('#log')).top,
  };
}"""


def test_the_big_board_fills_a_laptop_window(server: str, browser: Browser, artifacts: Path) -> None:
    """On a laptop the Big board's cards are as large as the window's height
    allows, with every card, the status line and the legend in the window
    (new-user pass: at 1366×768 its cards were 31 px wide, a third of the
    window's height left to the status line, the legend and empty felt)."""
    made = computer_room(server, "suitors", {"seed": 8, "players": 4, "variant": "big"})
    ctx = browser.new_context(viewport={"width": 1366, "height": 768})
    try:
        page = ctx.new_page()
        sit(page, server + made["url"], "Ann", made["seat"])
        expect(page.locator("#banner")).to_contain_text("Your turn")
        # (window, the narrowest card it must show; 31, 30 and 55 px before)
        for (width, height), least in (((1366, 768), 39), ((1280, 720), 35), ((1920, 1080), 60)):
            page.set_viewport_size({"width": width, "height": height})
            page.evaluate("() => scrollTo(0, 0)")
            got = page.evaluate(BIG_LAYOUT_JS)
            assert got["card"] >= least, (width, height, got)
            assert got["inside"], (width, height, got)
            _no_sideways_scroll(page)
            settled_shot(page, artifacts / f"suitors-big-{width}x{height}.png")
            if width == 1366:
                # Two columns of side panels beside it: the moves log is in view too.
                assert got["logTop"] < height - 100, got
    finally:
        ctx.close()


REGION_JS = """() => {
  const rgb = (text) => (text.match(/rgba?\\([^)]*\\)/g) || [])
    .map((c) => c.match(/[\\d.]+/g).slice(0, 3).map(Number));
  const mean = (cs) => [0, 1, 2].map((i) => cs.reduce((sum, c) => sum + c[i], 0) / cs.length);
  const paint = (card) => {
    const s = getComputedStyle(card);
    const face = s.backgroundImage === 'none' ? s.backgroundColor : s.backgroundImage; // the gradient's stops
    return { face: mean(rgb(face)), edge: rgb(s.borderTopColor)[0], edgeWidth: parseFloat(s.borderTopWidth),
             shadow: s.boxShadow };
  };
  const mine = document.querySelector('#board .su-cell.su-mine:not(.playable) .card')
    || document.querySelector('#board .su-cell.su-mine .card');
  const other = document.querySelector('#board .su-cell:not(.su-mine):not(.su-unused) .card:not(.back)');
  const lit = document.querySelector('#board .su-cell.su-mine.playable .card');
  // The corner index of the region's card is what shows at its place: no mark covers it.
  const corner = mine.querySelector('.corner').getBoundingClientRect();
  const top = document.elementFromPoint((corner.left + corner.right) / 2, (corner.top + corner.bottom) / 2);
  const accent = rgb(getComputedStyle(document.documentElement).getPropertyValue('--accent').replace(
    /#(..)(..)(..)/, (_, r, g, b) => `rgb(${parseInt(r, 16)}, ${parseInt(g, 16)}, ${parseInt(b, 16)})`))[0];
  return { mine: paint(mine), other: paint(other), lit: paint(lit), accent, cornerShows: mine.contains(top) };
}"""


def _colour_gap(a: list[float], b: list[float]) -> float:
    """How far apart two RGB colours are (0 to 441)."""
    return float(sum((x - y) ** 2 for x, y in zip(a, b, strict=True)) ** .5)


def test_a_phone_marks_your_region_on_its_cards(server: str, browser: Browser, artifacts: Path) -> None:
    """On a phone the cards of your connected region are set apart from the
    other face-up cards by their own colour and a thick edge of a colour that
    is not the lit cards' gold, their faces uncovered and a lit Jumper's glow
    kept (new-user pass: the region's faint wash showed only in the 2 px gaps
    between cards, so a player could not tell which cards were theirs)."""
    seed = 3
    url = create_room(server, "suitors", {"seed": seed, "auto_pass": False})
    ctxs, pages, errors = _table(browser, url, ("JS", "JC"), 390)
    state = _start(seed, {})
    # Each seat turns up cards until the one to move has a region of three
    # cards or more and a Jumper in it.
    while True:
        legal = GAME.legal_moves(state, state.mover)
        if any("-" in m for m in legal) and len(GAME.view(state, state.mover)["connected"][state.mover]) >= 3:
            break
        move = min(m for m in legal if m.startswith("reveal "))
        page = pages[state.mover]
        v = version(page)
        _cell(page, move[7:]).tap()
        state = GAME.apply(state, state.mover, move)
        for pg in pages.values():
            wait_version(pg, v + 1)
    page = pages[state.mover]
    page.set_viewport_size({"width": 390, "height": 844})
    got = page.evaluate(REGION_JS)
    mine, other, lit_card = got["mine"], got["other"], got["lit"]
    assert _colour_gap(mine["face"], other["face"]) >= 25, got  # a tint of its own (the same cream before)
    assert mine["edgeWidth"] >= 2 and mine["edge"] != other["edge"], got  # an edge (1 px of grey before)
    assert _colour_gap(mine["edge"], got["accent"]) >= 100, got  # ... unlike the lit cards' gold
    assert got["cornerShows"], got
    # A lit Jumper of the region keeps its gold ring and glow outside that edge.
    ring = "rgb({}, {}, {})".format(*got["accent"])
    assert lit_card["shadow"].startswith(ring) and lit_card["edge"] == mine["edge"], got
    settled_shot(page, artifacts / "suitors-phone-region.png")
    assert errors == []
    for ctx in ctxs:
        ctx.close()


def test_a_computer_standing_in_wins_for_the_person(server: str, browser: Browser, artifacts: Path) -> None:
    """Bob's seat, handed to a computer player while he is away, reaches the
    Queen: the table says Bob wins, played by the computer, and names the side
    Bob (J♣) as the match's review and record do (new-user pass: the table
    said "Alan (easy) wins" and the review "Bob wins")."""
    import json
    import random
    import time

    from websockets.sync.client import connect

    seed = 11
    room = create_room(server, "suitors", {"seed": seed}).rsplit("/", 1)[1]
    url = server.replace("http", "ws", 1) + "/ws/" + room
    state = _start(seed, {})
    rng = random.Random(2)

    def last_state(sock: Any, version: int) -> dict[str, Any]:
        while True:
            frame = json.loads(sock.recv(timeout=10))
            if frame["type"] == "state" and frame["version"] >= version:
                return dict(frame)

    def wins(move: str) -> bool:
        return GAME.apply(state, state.mover, move).winner == state.mover

    with connect(url) as ann:
        ann.send(json.dumps({"type": "join", "seat": "JS", "name": "Ann"}))
        with connect(url) as bob:  # closed on his turn: he is away
            bob.send(json.dumps({"type": "join", "seat": "JC", "name": "Bob"}))
            version = last_state(bob, 2)["version"]
            socks = {"JS": ann, "JC": bob}
            while True:  # Ann never wins; Bob heads for the Queen until he could reach it
                legal = GAME.legal_moves(state, state.mover)
                if state.mover == "JC" and any(wins(m) for m in legal):
                    break
                safe = [m for m in legal if not wins(m)]
                move = _choose(state) if state.mover == "JC" else rng.choice(safe)
                socks[state.mover].send(json.dumps({"type": "move", "move": move, "version": version}))
                state = GAME.apply(state, state.mover, move)
                version = last_state(ann, version + 1)["version"]
                assert version < 2000
        deadline = time.monotonic() + 30
        while not any(s.get("handover") for s in last_state(ann, version)["view"]["seats"]):
            assert time.monotonic() < deadline
        ann.send(json.dumps({"type": "add_bot", "seat": "JC", "level": "easy"}))
        ctx = browser.new_context()
        try:
            page = ctx.new_page()
            page.goto(f"{server}/r/{room}")
            final = page.locator(".su-status.su-final")
            expect(final).to_have_text(re.compile(
                r"Bob's J♣ reached the Queen of Hearts, played by \w+ \(easy\): Bob wins\."), timeout=20_000)
            expect(page.locator(".seat-row[data-seat=JC] .seat-name")).to_contain_text("playing for Bob")
            expect(page.locator("#scores thead")).to_contain_text("Bob (J♣)")
            settled_shot(page, artifacts / "suitors-stand-in-wins.png")
            match = None  # the match's id, from Ann's socket
            while match is None:
                match = last_state(ann, version)["view"].get("match_id")
            page.goto(f"{server}/m/{match}")
            expect(page.locator(".review-seats")).to_contain_text(
                "Bob · J♣ i5, played by an easy computer for a while")  # not "a easy"
        finally:
            ctx.close()


def test_the_home_form_offers_colours_for_two_players_only(server: str, browser: Browser) -> None:
    """Choosing the Colours variant on the home page leaves only 2 players
    to choose (new-user pass: 3 and 4 were offered, and the room refused);
    another variant offers 3 and 4 again. The room made is a Colours room."""
    ctx = browser.new_context()
    try:
        page = ctx.new_page()
        page.goto(server + "/")
        card = page.locator('form[data-game="suitors"]')
        players = card.locator('[data-option="players"]')
        disabled = "(s) => [...s.options].filter((o) => o.disabled).map((o) => o.value)"
        players.select_option("4")
        card.locator('[data-option="variant"]').select_option("colours")
        expect(players).to_have_value("2")
        assert players.evaluate(disabled) == ["3", "4"]
        card.locator('[data-option="variant"]').select_option("big")
        assert players.evaluate(disabled) == []
        card.locator('[data-option="variant"]').select_option("colours")
        card.locator('[data-create="suitors"]').click()
        page.wait_for_url("**/r/*")
        expect(page.locator(".seat-row")).to_have_count(2)
        expect(page.locator('.seat-row[data-seat="JH"]')).to_have_count(1)  # J♠ against J♥
    finally:
        ctx.close()


def test_the_home_card_gives_the_size_of_the_variant_chosen(server: str, browser: Browser,
                                                            artifacts: Path) -> None:
    """The Suitors card on the home page says how large the layout of the
    chosen variant is: 11×9 for the Big board, 9×5 for the others (it said
    9×5 whatever was chosen)."""
    ctx = browser.new_context(viewport={"width": 1366, "height": 768})
    try:
        page = ctx.new_page()
        page.goto(server + "/")
        card = page.locator('form[data-game="suitors"]')
        blurb = card.locator(".blurb")
        expect(blurb).to_contain_text("a mostly hidden 9×5 layout.")
        for variant, size in (("big", "11×9"), ("colours", "9×5"), ("big", "11×9"), ("standard", "9×5")):
            card.locator('[data-option="variant"]').select_option(variant)
            expect(blurb).to_contain_text(f"a mostly hidden {size} layout.")
            if variant == "big":
                card.screenshot(path=str(artifacts / "home-suitors-big-board.png"))
    finally:
        ctx.close()
