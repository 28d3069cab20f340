"""Stucco in real browsers: two players share a room link, make the secret
opening pick by clicking (the other page must not show which card), see both
picks turn over, then play highlighted cards or press Pass until the deal ends,
and both pages show the same score as its formula."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from browserkit import computer_room, create_room, finish_over_socket, sit, version, wait_version
from playwright.sync_api import Browser, Page, expect

SEATS = ("north", "south")
SUIT = {"S": "♠", "H": "♥", "D": "♦", "C": "♣"}


def pretty(card: str) -> str:
    return ("10" if card[0] == "T" else card[0]) + SUIT[card[1]]


def pick(page: Page, index: int, *, keyboard: bool = False, tap: bool = False) -> str:
    """Pick the ``index``-th card of one's own hand; returns it."""
    card = page.locator(".st-bottom .st-playable").nth(index)
    name = card.get_attribute("data-card")
    assert name
    if keyboard:
        card.focus()
        page.keyboard.press("Enter")
    elif tap:
        card.tap()
    else:
        card.click()
    return name


def shoot(page: Page, path: Path) -> None:
    """A full-page screenshot once the page's animations have finished (a
    function, not an expression: Playwright would eval it, which the CSP forbids)."""
    page.wait_for_function("() => document.getAnimations().length === 0")
    page.screenshot(path=str(path), full_page=True)


def wait_all(pages: dict[str, Page], v: int) -> None:
    for p in pages.values():
        wait_version(p, v)


def assert_pick_hidden(watcher: Page, picker: str, card: str) -> None:
    """``watcher`` knows that ``picker`` picked, but nothing shows which card."""
    slot = watcher.locator(f'.st-pick[data-seat="{picker}"]')
    expect(slot).to_contain_text("has picked")
    assert slot.locator("[data-card]").count() == 0
    assert watcher.locator(".st-chosen, .st-own-pick").count() == 0
    # The card is still in the picker's open hand, and only there.
    assert watcher.locator(f'[data-card="{card}"]').count() == 1
    assert watcher.locator(f'.st-hand[data-seat="{picker}"] [data-card="{card}"]').count() == 1
    assert pretty(card) not in watcher.locator("#log").inner_text()
    assert pretty(card) not in watcher.locator("#banner").inner_text()


SPREAD_JS = """() => {
  const row = document.querySelector('.st-spread');
  const items = [...row.querySelectorAll('.st-sp')].map((i) => i.getBoundingClientRect());
  const line = items.filter((r) => Math.abs(r.top - items[0].top) < 2).length;
  const box = row.getBoundingClientRect();
  const step = line > 1 ? items[1].left - items[0].left : items[0].width;
  return { n: items.length, line, card: items[0].width, step, right: items[line - 1].right - box.left,
           width: box.width };
}"""


def assert_spread_fits(page: Page) -> None:
    """The spread overlaps its cards only as much as its width needs: either
    they do not overlap, or its first line runs to the right edge (and never
    beyond)."""
    s = page.evaluate(SPREAD_JS)
    assert s["right"] <= s["width"] + 1, s
    assert s["step"] >= s["card"] or s["right"] >= s["width"] - 3, s


def play_out(pages: dict[str, Page], shots: Path, tag: str, *, tap: bool = False) -> tuple[int, int]:
    """Play the deal to its end with the first highlighted card, or Pass;
    returns (cards played, passes). Takes a mid-deal screenshot."""
    cards = passes = 0
    shot = False
    while True:
        v = max(version(p) for p in pages.values())
        wait_all(pages, v)
        if pages["north"].locator("#room").get_attribute("data-phase") != "playing":
            return cards, passes
        movers = [p for p in pages.values() if p.locator(".st-bottom .st-playable, #pass-btn").count()]
        assert len(movers) == 1, "exactly one player may act during the play"
        page = movers[0]
        other = next(p for p in pages.values() if p is not page)
        assert other.locator(".st-playable, #pass-btn").count() == 0
        # The waiting player's hint adds to the banner's "… to move": the
        # card to follow, or the pass.
        sub = other.locator("#banner .sub").inner_text()
        assert "to move" not in sub and ("Card to follow: the " in sub or "passed" in sub), sub
        if page.locator("#pass-btn").count():
            assert page.locator(".st-playable").count() == 0
            expect(page.locator("#banner")).to_contain_text("cannot follow")
            # The room does not pass for the players here: the banner asks for Pass.
            expect(page.locator("#banner .sub")).to_contain_text("plays on. Press Pass.")
            expect(page.locator("#pass-btn")).to_contain_text("cannot follow")
            page.locator("#pass-btn").tap() if tap else page.click("#pass-btn")
            passes += 1
        else:
            target = page.locator(".st-bottom .st-playable").first
            target.tap() if tap else target.click()
            cards += 1
        wait_all(pages, v + 1)
        if cards == 8 and not shot:
            shot = True
            for seat, p in pages.items():
                assert_spread_fits(p)
                shoot(p, shots / f"stucco-{tag}-mid-{seat}.png")
        assert cards + passes < 100


def opening(pages: dict[str, Page], shots: Path, tag: str, *, tap: bool = False,
            spectator: Page | None = None) -> tuple[str, str]:
    """Both players pick by clicking; the first pick stays secret from the
    other page (and a spectator's); both picks turn over together. Returns
    the picks."""
    north, south = pages["north"], pages["south"]
    for p in pages.values():
        expect(p.locator("#room")).to_have_attribute("data-phase", "playing")
        expect(p.locator(".st-bottom .st-playable")).to_have_count(16)
        assert p.locator(".st-top .st-playable").count() == 0
        expect(p.locator("#banner")).to_contain_text("Pick a card in secret")
    shoot(north, shots / f"stucco-{tag}-opening.png")

    v = version(north)
    n_card = pick(north, 2, keyboard=not tap, tap=tap)
    wait_all(pages, v + 1)
    expect(north.locator(".st-chosen [data-card]")).to_have_attribute("data-card", n_card)
    expect(north.locator('.st-pick[data-seat="north"]')).to_contain_text(pretty(n_card))
    assert north.locator(".st-playable").count() == 0, "a pick is final"
    assert_pick_hidden(south, "north", n_card)
    if spectator is not None:
        wait_version(spectator, v + 1)
        assert_pick_hidden(spectator, "north", n_card)
        # A spectator sees south along the bottom, and nothing to click.
        expect(spectator.locator(".st-hand.st-bottom")).to_have_attribute("data-seat", "south")
        assert spectator.locator(".st-playable").count() == 0
        shoot(spectator, shots / f"stucco-{tag}-picked-spectator.png")
    expect(south.locator("#banner")).to_contain_text("North has picked")
    if not tap:
        # A reload keeps the seat, and the pick still shows as chosen.
        north.reload()
        wait_version(north, v + 1)
        expect(north.locator(".st-chosen [data-card]")).to_have_attribute("data-card", n_card)
    for seat, p in pages.items():
        shoot(p, shots / f"stucco-{tag}-picked-{seat}.png")

    s_card = pick(south, 4, tap=tap)
    wait_all(pages, v + 2)
    for p in pages.values():
        expect(p.locator(".st-picks.st-revealed")).to_be_visible()
        expect(p.locator('.st-pick[data-seat="north"] .card')).to_have_attribute("data-card", n_card)
        expect(p.locator('.st-pick[data-seat="south"] .card')).to_have_attribute("data-card", s_card)
        expect(p.locator(".st-sp")).to_have_count(1)
        expect(p.locator("#banner")).to_contain_text("Picks shown")
        assert p.locator(".st-chosen").count() == 0
    starter = north.locator(".st-pick.st-opened").get_attribute("data-seat")
    first = north.locator(".st-sp .card").get_attribute("data-card")
    assert first == {"north": n_card, "south": s_card}[starter or ""]
    other_card = s_card if first == n_card else n_card
    # The other pick is back in its owner's hand.
    back = "south" if starter == "north" else "north"
    expect(north.locator(f'.st-hand[data-seat="{back}"] [data-card="{other_card}"]')).to_have_count(1)
    shoot(north, shots / f"stucco-{tag}-revealed.png")
    return n_card, s_card


WRAPPED_LINES = """sel => [...document.querySelectorAll(sel)].flatMap((e) => {
  const text = [...e.childNodes].find((n) => n.nodeType === Node.TEXT_NODE);
  if (!text) return [];
  const range = document.createRange();
  range.selectNodeContents(text);
  const lines = [...range.getClientRects()];
  return lines.length > 1 ? [[lines[0].left, lines[1].left]] : [];
})"""
"""For each entry of a move list that wraps: where its text's first and
second lines start."""


def expect_named(page: Page, said: dict[str, str]) -> None:
    """The result and the score table's heads name each seat's side as
    ``said`` does (seat → "Ann (North)")."""
    names = [said[x] for x in SEATS]
    expect(page.locator("#result .side-score strong")).to_have_text(names)
    expect(page.locator("#scores thead th:not(.review-cell)")).to_have_text(["Deal", *names])


def finish(pages: dict[str, Page], names: dict[str, str], shots: Path, tag: str, *, target: int = 100,
           phase: str = "deal_over") -> None:
    """Both pages show the same result, with the score as its formula, and
    the match's target and totals; the result and the score table name each
    side by its player (``names``: seat → name), the page's own "You"."""
    formulas = set()
    for seat, p in pages.items():
        expect(p.locator("#room")).to_have_attribute("data-phase", phase)
        expect(p.locator(".st-formula")).to_be_visible()
        expect(p.locator("#result")).to_be_visible()
        sides = p.locator("#result .sides").inner_text()
        assert re.search(r"\d+ cards? played × \d+ in the last turn = \+\d+", sides), sides
        nums = [int(x) for x in p.locator(".st-formula .st-num").all_inner_texts()]
        assert len(nums) == 3 and nums[0] * nums[1] == nums[2] > 0, nums
        said = {x: f"{'You' if x == seat else names[x]} ({x.capitalize()})" for x in SEATS}
        expect_named(p, said)
        assert "(you)" not in sides, sides  # "You (North)" says it already
        sides = sides.replace(said[seat], f"{names[seat]} ({seat.capitalize()})")
        formulas.add((sides, tuple(nums), p.locator("#scores tfoot").inner_text()))
        expect(p.locator("#scores")).to_contain_text(f"First to {target} points")
        if phase == "match_over":
            expect(p.locator("#match-result")).to_contain_text("the match")
        expect(p.locator(".st-hand.st-bottom")).to_have_attribute("data-seat", seat)
        assert_spread_fits(p)
    assert len(formulas) == 1, formulas
    for seat, p in pages.items():
        shoot(p, shots / f"stucco-{tag}-end-{seat}.png")
        # A move that takes two lines goes on under its text, not under its number.
        lines = p.evaluate(WRAPPED_LINES, "#log li")
        assert all(abs(first - second) < 1 for first, second in lines), lines
        if p.evaluate("document.querySelector('#log').scrollTop") > 0:
            expect(p.locator("#log")).to_have_class(re.compile(r"\bscrolled\b"))  # its top fades out
        # The review of the deal faces the way the table did: the player's own hand at the bottom.
        p.click("#review-last")
        expect(p.locator("#review-board .st-hand.st-bottom")).to_have_attribute("data-seat", seat)
        lines = p.evaluate(WRAPPED_LINES, "#review-moves .review-move")
        assert lines and all(abs(first - second) < 1 for first, second in lines), lines
        shoot(p, shots / f"stucco-{tag}-review-{seat}.png")
        p.click("#review-close")
        expect(p.locator("#room-grid")).to_be_visible()
    pages["north"].locator("#board").screenshot(path=str(shots / f"stucco-{tag}-end-board.png"))


def test_two_players_play_a_whole_deal(server: str, browser: Browser, artifacts: Path) -> None:
    # The players press Pass themselves here (the room does not pass for them).
    url = create_room(server, "stucco", {"seed": 12, "auto_pass": False})
    contexts = [browser.new_context(viewport={"width": 1100, "height": 900}) for _ in SEATS]
    pages = {seat: ctx.new_page() for seat, ctx in zip(SEATS, contexts, strict=True)}
    watcher_ctx = browser.new_context(viewport={"width": 1100, "height": 900})
    watcher = watcher_ctx.new_page()
    watcher.goto(url)
    notes = watcher.locator(".st-pick-note")
    # Nobody is choosing an opening card before the deal starts (new-user pass).
    expect(notes).to_have_text(["waiting for a player", "waiting for a player"])
    for (seat, page), name in zip(pages.items(), ("Ann", "Ben"), strict=True):
        sit(page, url, name, seat)
        if seat == SEATS[0]:
            expect(notes).to_contain_text(["waiting to start"])
    expect(notes).to_have_text(["choosing…", "choosing…"])
    opening(pages, artifacts, "desktop", spectator=watcher)
    cards, passes = play_out(pages, artifacts, "desktop")
    assert cards > 8 and passes > 0
    finish(pages, {"north": "Ann", "south": "Ben"}, artifacts, "desktop")
    for ctx in [*contexts, watcher_ctx]:
        ctx.close()


def test_a_whole_deal_on_phones(server: str, browser: Browser, artifacts: Path) -> None:
    url = create_room(server, "stucco", {"seed": 7, "target": 20, "auto_pass": False})
    contexts = [browser.new_context(viewport={"width": 360, "height": 740}, has_touch=True, is_mobile=True)
                for _ in SEATS]
    pages = {seat: ctx.new_page() for seat, ctx in zip(SEATS, contexts, strict=True)}
    for (seat, page), name in zip(pages.items(), ("Cat", "Dan"), strict=True):
        sit(page, url, name, seat)
    opening(pages, artifacts, "phone", tap=True)
    cards, passes = play_out(pages, artifacts, "phone", tap=True)
    assert cards > 8 and passes > 0
    for p in pages.values():
        width = p.evaluate("document.documentElement.scrollWidth")
        assert width <= 360, f"the page scrolls sideways at 360 px: {width}"
    finish(pages, {"north": "Cat", "south": "Dan"}, artifacts, "phone", target=20, phase="match_over")
    for ctx in contexts:
        ctx.close()


def test_a_watching_tab_keeps_facing_its_seat(server: str, browser: Browser) -> None:
    """A visitor asked to take North (``?sit=north``) sees the table from
    North before sitting down, and a tab whose seat was opened in another
    tab keeps facing that seat while it watches: the table no longer turns
    round under the player (new-user pass)."""
    url = create_room(server, "stucco", {"seed": 12})
    ctx = browser.new_context(viewport={"width": 1100, "height": 900})
    first = ctx.new_page()
    first.goto(url + "?sit=north")
    wait_version(first, 0)
    bottom = first.locator("#board .st-hand.st-bottom")
    expect(bottom).to_have_attribute("data-seat", "north")
    first.get_by_placeholder("Your name").fill("Ann")
    first.locator("#join-any").click()
    expect(first.locator('.seat-row.you[data-seat="north"]')).to_be_visible()
    second = ctx.new_page()  # the same browser: it resumes the seat
    second.goto(url)
    expect(second.locator('.seat-row.you[data-seat="north"]')).to_be_visible()
    expect(first.locator(".seat-row.you")).to_have_count(0)  # the first tab watches now
    expect(bottom).to_have_attribute("data-seat", "north")
    ctx.close()


def test_arrow_keys_go_along_the_hand(server: str, browser: Browser) -> None:
    """In one's own hand, the arrow keys take the focus to the previous or
    next playable card (and no further than the last); the focus stays on
    its card when the other player's move redraws the table, and Enter picks
    the focused card."""
    url = create_room(server, "stucco", {"seed": 3})
    contexts = [browser.new_context(viewport={"width": 1100, "height": 900}) for _ in SEATS]
    pages = {seat: ctx.new_page() for seat, ctx in zip(SEATS, contexts, strict=True)}
    for (seat, page), name in zip(pages.items(), ("Ann", "Ben"), strict=True):
        sit(page, url, name, seat)
    page = pages["north"]
    cards = page.eval_on_selector_all(".st-bottom .st-playable", "es => es.map((e) => e.dataset.card)")
    assert len(cards) == 16  # every card may be picked
    focused = lambda: page.evaluate("() => document.activeElement.dataset.card || null")  # noqa: E731
    page.locator(".st-bottom .st-playable").first.focus()
    for key, want in (("ArrowRight", 1), ("ArrowDown", 2), ("ArrowLeft", 1), ("ArrowUp", 0),
                      ("ArrowLeft", 0)):
        page.keyboard.press(key)
        assert focused() == cards[want], key
    page.locator(".st-bottom .st-playable").last.focus()
    page.keyboard.press("ArrowRight")
    assert focused() == cards[-1]
    page.keyboard.press("ArrowLeft")
    # The other player's pick redraws the table: the focus stays on the card
    # it was on (it used to go back to the first card, so Enter picked that).
    v = version(page)
    pick(pages["south"], 0)
    wait_version(page, v + 1)
    assert focused() == cards[-2]
    page.keyboard.press("Enter")
    wait_version(page, v + 2)
    # Both picks are shown now: North's is the card the focus was on.
    expect(page.locator('.st-pick[data-seat="north"] [data-card]')).to_have_attribute("data-card", cards[-2])
    for ctx in contexts:
        ctx.close()


@pytest.mark.parametrize("size", [(390, 844), (375, 667)], ids=["390x844", "375x667"])
def test_a_phone_shows_its_whole_hand_at_the_opening_pick(server: str, browser: Browser,
                                                          artifacts: Path, size: tuple[int, int]) -> None:
    """At 390×844 and on a small phone (375×667), seated against a computer
    player, the player's own 16 cards, every one of them a pick to tap, and
    both picks' places are on the screen at the opening pick with the page at
    its top: the rule of who starts is said once, beside the picks (new-user
    pass: the banner said it too, and half the hand was below the fold; at
    375×667 only its first row showed, until the picks and the opponent's
    hand were drawn smaller there)."""
    width, height = size
    made = computer_room(server, "stucco", {"seed": 5})
    ctx = browser.new_context(viewport={"width": width, "height": height}, has_touch=True, is_mobile=True)
    try:
        ctx.add_init_script("localStorage.setItem('cardboard.name', 'Ann')")
        page = ctx.new_page()
        page.goto(f"{server}{made['url']}?sit={made['seat']}")
        expect(page.locator(".st-pick-note").first).to_have_text(re.compile("has picked|choosing…"))
        page.wait_for_timeout(800)  # the join's smooth scroll is over
        page.evaluate("window.scrollTo(0, 0)")
        expect(page.locator("#banner")).not_to_contain_text("colour")
        expect(page.locator(".st-hand.st-bottom .card.st-playable")).to_have_count(16)
        bottoms = page.evaluate("""() => [...document.querySelectorAll('.st-hand.st-bottom .card, .st-pick')]
          .map((c) => c.getBoundingClientRect().bottom)""")
        assert len(bottoms) == 18 and max(bottoms) <= height, bottoms
        page.screenshot(path=str(artifacts / f"stucco-phone-opening-{width}.png"))
    finally:
        ctx.close()


def test_a_computer_player_is_named_in_the_result(server: str, browser: Browser, artifacts: Path) -> None:
    """After a match against a computer player, the result, the match's
    totals and the score table name both players, the computer by its name
    without its level ("Alan (South)"; the seats list gives "Alan (easy)"),
    not by their seats."""
    made, _ = finish_over_socket(server, "stucco", target=20)
    ctx = browser.new_context(viewport={"width": 1366, "height": 768})
    page = ctx.new_page()
    page.goto(server + made["url"])
    expect(page.locator("#result")).to_be_visible()
    bot = next(x for x in SEATS if x != made["seat"])
    bot_name = page.locator(f'.seat-row[data-seat="{bot}"] .seat-name').inner_text()
    assert bot_name.endswith(" (easy)"), bot_name
    said = {made["seat"]: "Ann", bot: bot_name.removesuffix(" (easy)")}
    said = {x: f"{said[x]} ({x.capitalize()})" for x in SEATS}
    expect_named(page, said)
    for x in SEATS:
        expect(page.locator("#match-result")).to_contain_text(said[x])
    shoot(page, artifacts / "stucco-named-result.png")
    ctx.close()


HAND_BOTTOM = """() => ({
  scroll_y: scrollY,
  cards: [...document.querySelectorAll('.st-hand.st-bottom .card')]
    .map((c) => c.getBoundingClientRect().bottom),
  label: document.querySelector('.st-hand.st-bottom .st-hand-label').getBoundingClientRect().bottom,
  banner: document.querySelector('#banner .sub').textContent,
})"""


@pytest.mark.parametrize("size", [(375, 667), (390, 844)], ids=["375x667", "390x844"])
def test_a_phone_shows_its_whole_hand_in_play(server: str, browser: Browser, artifacts: Path,
                                              size: tuple[int, int]) -> None:
    """After the opening pick, on a small phone (375×667) and at 390×844,
    the player's whole hand and the line under it are on the screen with the
    page at its top, the spread and its heading above it: at the first turn,
    when the banner also tells the picks (the other player picked so as to
    start), and at the next (new-user pass: at 375×667 the hand's second row
    was below the screen)."""
    width, height = size
    url = create_room(server, "stucco", {"seed": 3, "auto_pass": False})
    phone = browser.new_context(viewport={"width": width, "height": height}, has_touch=True, is_mobile=True)
    desk = browser.new_context()
    try:
        ann, ben = phone.new_page(), desk.new_page()
        sit(ann, url, "Ann", "north")
        sit(ben, url, "Ben", "south")
        expect(ann.locator(".st-hand.st-bottom .card.st-playable")).to_have_count(16)
        # South starts: with the same colours if North deals, else with different ones.
        north_deals = ann.locator('.st-hand[data-seat="north"] .st-tag', has_text="dealer").count() == 1
        red = lambda card: card[1] in "HD"  # noqa: E731
        theirs = pick(ben, 0)
        hand = ann.eval_on_selector_all(".st-bottom .st-playable", "es => es.map((e) => e.dataset.card)")
        mine = next(c for c in hand if red(c) == (red(theirs) if north_deals else not red(theirs)))
        ann.locator(f'.st-bottom .st-playable[data-card="{mine}"]').tap()
        seen = []
        for turn in range(2):
            expect(ann.locator(".st-hand.st-bottom .card.st-playable").first).to_be_visible()
            ann.wait_for_function("() => document.getAnimations().length === 0")
            ann.evaluate("window.scrollTo(0, 0)")
            seen.append(ann.evaluate(HAND_BOTTOM))
            ann.screenshot(path=str(artifacts / f"stucco-phone-play-{width}-{turn + 1}.png"))
            v = version(ann)
            ann.locator(".st-hand.st-bottom .card.st-playable").first.tap()
            wait_version(ben, v + 1)
            if turn == 0:  # Ben follows, or passes
                ben.locator(".st-bottom .st-playable, #pass-btn").first.click()
                wait_version(ann, v + 2)
        assert seen[0]["banner"].startswith("Picks shown: South starts"), seen
        for got in seen:
            assert got["scroll_y"] == 0 and len(got["cards"]) >= 14, seen
            assert max(got["cards"]) <= height and got["label"] <= height, seen
    finally:
        phone.close()
        desk.close()
