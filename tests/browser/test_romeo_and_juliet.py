"""Romeo and Juliet in real browsers: two players share a room link and play by
clicking the squares the board lights up (Romeo moves) and Jokers then their
lit partners (swaps). The engine, replaying the same moves, is the oracle:
after every turn both pages must show exactly its position."""

from __future__ import annotations

import random
import re
from collections import deque
from pathlib import Path
from typing import Any

import pytest
from browserkit import check_coords, computer_room, create_room, sit, version, wait_version
from playwright.sync_api import Browser, BrowserContext, Page, expect

from engine.match import Match
from engine.registry import get_game
from engine.romeo import RomeoState

GAME = get_game("romeo-and-juliet")
SEATS = ("red", "black")

SNAPSHOT_JS = """() => [...document.querySelectorAll('#board .rj-cell')].map(c => [
  c.dataset.square, c.dataset.card, c.dataset.romeo || '', c.dataset.juliet || '',
  c.dataset.locked || '', c.dataset.path || ''])"""
LIT_JS = """sel => [...document.querySelectorAll('#board ' + sel)].map(c => c.dataset.square).sort()"""


def _start(seed: int) -> RomeoState:
    """The deal a room with this seed starts with (the server deals the same)."""
    state: RomeoState = Match.new("romeo-and-juliet", {}, seed).state
    return state


def _expected(state: RomeoState) -> list[list[str]]:
    """The snapshot (see SNAPSHOT_JS) the board must show for ``state``."""
    b = GAME.view(state, None)
    where = {sq: seat for seat, sq in b["romeos"].items()}
    goals = {sq: seat for seat, sq in b["juliets"].items()}
    steps: dict[str, list[str]] = {}
    if b["last"] and b["last"]["kind"] == "move":
        for i, sq in enumerate(b["last"]["path"]):
            steps.setdefault(sq, []).append(str(i))
    out = []
    for i, tok in enumerate(b["cells"]):
        sq = f"{'abcdefg'[i % 7]}{i // 7 + 1}"
        out.append([sq, tok, where.get(sq, ""), goals.get(sq, ""),
                    "true" if sq in b["locked"] else "", " ".join(steps.get(sq, []))])
    return out


def _split(moves: tuple[str, ...], jokers: list[str]) -> tuple[list[str], dict[str, dict[str, str]]]:
    """Romeo destinations, and swaps as Joker square → partner square → move."""
    dest = sorted(m for m in moves if m != "pass" and not m.startswith("swap"))
    swaps: dict[str, dict[str, str]] = {}
    for m in moves:
        if m.startswith("swap"):
            a, b = m.split()[1:]
            j, p = (a, b) if a in jokers else (b, a)
            swaps.setdefault(j, {})[p] = m
    return dest, swaps


def _lit(page: Page, selector: str) -> list[str]:
    squares: list[str] = page.evaluate(LIT_JS, selector)
    return squares


def _shot(page: Page, path: Path, *, full_page: bool = False) -> None:
    """A screenshot once the moves' animations are over."""
    page.wait_for_function("() => document.getAnimations().length === 0")
    page.screenshot(path=str(path), full_page=full_page)


def _cell(page: Page, sq: str) -> Any:
    return page.locator(f'#board .rj-cell[data-square="{sq}"]')


def _where(page: Page) -> Any:
    """Where (in page pixels) the layout's cards are drawn, the top of the
    layout with its labels, and the bottom of the prompt (0 when hidden)."""
    return page.evaluate("""() => {
      const box = (e) => { const r = e.getBoundingClientRect();
        return [r.left + scrollX, r.top + scrollY, r.width, r.bottom + scrollY]; };
      const prompt = document.querySelector('.rj-prompt');
      return {
        cells: [...document.querySelectorAll('#board .rj-cell')].map((c) => box(c).slice(0, 3)),
        top: box(document.querySelector('#board .grid-frame'))[1],
        prompt: prompt.hidden ? 0 : box(prompt)[3] };
    }""")


def _choose_joker(page: Page, sq: str, *, tap: bool = False) -> None:
    """Choose the Joker at ``sq``: its prompt shows above the layout, never
    over it, and no card moves."""
    before = _where(page)
    _cell(page, sq).tap() if tap else _cell(page, sq).click()
    expect(page.locator(".rj-prompt")).to_be_visible()
    after = _where(page)
    assert 0 < after["prompt"] <= after["top"], "the prompt covers the layout"
    assert (after["cells"], after["top"]) == (before["cells"], before["top"]), "the layout moved"


def _two_players(browser: Browser, url: str, width: int, *, reduced_motion: bool = False,
                 ) -> tuple[list[BrowserContext], dict[str, Page], list[str]]:
    """Red and Black seated in two browser contexts; also the list that
    collects the pages' script errors (a test ends by checking it is empty)."""
    mobile = width < 500
    ctxs = [browser.new_context(viewport={"width": width, "height": 900 if not mobile else 760},
                                has_touch=mobile, is_mobile=mobile,
                                reduced_motion="reduce" if reduced_motion else "no-preference")
            for _ in SEATS]
    pages = {seat: ctx.new_page() for seat, ctx in zip(SEATS, ctxs, strict=True)}
    errors: list[str] = []
    for p in pages.values():
        p.on("pageerror", lambda e: errors.append(str(e)))
    sit(pages["red"], url, "Rosa", "red")
    sit(pages["black"], url, "Bram", "black")
    for p in pages.values():
        expect(p.locator("#room")).to_have_attribute("data-phase", "playing")
    return ctxs, pages, errors


def _play_turn(pages: dict[str, Page], state: RomeoState, move: str, *, keyboard: bool = False) -> RomeoState:
    """Play ``move`` for the seat on turn by clicking (or with the keyboard),
    after checking that the board lights up exactly the legal moves; then
    check that both pages show the engine's next position. Returns it."""
    seat = state.mover
    page = pages[seat]
    other = pages[SEATS[1 - state.turn]]
    jokers = GAME.view(state, seat)["jokers"]
    dest, swaps = _split(GAME.legal_moves(state, seat), jokers)
    assert _lit(page, ".cell.playable") == dest
    assert _lit(page, ".cell.rj-swappable") == sorted(swaps)
    assert _lit(other, ".rj-act") == []
    if swaps and not dest:  # the banner says the Romeo is stuck and points at the Jokers
        expect(page.locator("#banner")).to_contain_text("Your Romeo cannot move: click a Joker (★)")
    elif dest:
        expect(page.locator("#banner")).to_contain_text("lit square")
    v = version(page)

    def press(sq: str) -> None:
        if keyboard:
            _cell(page, sq).focus()
            page.keyboard.press("Enter")
        else:
            _cell(page, sq).click()

    if move == "pass":
        page.click("#pass-btn")
    elif move.startswith("swap"):
        a, b = move.split()[1:]
        j, p = (a, b) if a in swaps else (b, a)
        if keyboard:
            press(j)
        else:
            _choose_joker(page, j)
        expect(_cell(page, j)).to_have_class(re.compile(r"\brj-selected\b"))
        assert _lit(page, ".cell.rj-partner") == sorted(swaps[j])
        expect(page.locator(".rj-prompt")).to_contain_text(f"Swap the Joker at {j}")
        press(p)
    elif move in swaps:
        # A Joker the Romeo can land on and that can also swap: the first
        # click chooses it (partners light up), a second one moves onto it.
        if keyboard:
            press(move)
        else:
            _choose_joker(page, move)
        expect(page.locator(".rj-prompt")).to_contain_text("click the Joker again to move your Romeo onto it")
        assert _lit(page, ".cell.rj-partner") == sorted(swaps[move])
        press(move)
    else:
        press(move)
    state = GAME.apply(state, seat, move)
    want = _expected(state)
    for pg in pages.values():
        wait_version(pg, v + 1)
        assert version(pg) == v + 1
        assert pg.evaluate(SNAPSHOT_JS) == want
    view = GAME.view(state, None)
    for pg in pages.values():
        expect(pg.locator(".rj-explain")).to_contain_text(view["explain"])
        # The drawn path: one stroke, and one more for each edge it wraps over.
        strokes = pg.locator("svg.rj-overlay").get_attribute("data-strokes")
        assert strokes == str(1 + _wraps(view["last"])), (strokes, view["last"])
    return state


def _wraps(last: dict[str, Any]) -> int:
    """How many times the last action's path goes over an edge."""
    if last["kind"] != "move":
        return 0
    count = 0
    for a, b in zip(last["path"], last["path"][1:], strict=False):
        dc, dr = abs(ord(a[0]) - ord(b[0])), abs(int(a[1]) - int(b[1]))
        count += last["wraps"] and (dc == 6 or dr == 6)
    return count


def _choose(state: RomeoState, rng: random.Random, want_swap: bool) -> str:
    """A move for the seat on turn: a swap if wanted and possible, else a
    Romeo move; never one that ends the game while another move does not."""
    moves = GAME.legal_moves(state, state.mover)
    alive = [m for m in moves if GAME.apply(state, state.mover, m).end == ""] or list(moves)
    swaps = [m for m in alive if m.startswith("swap")]
    steps = [m for m in alive if not m.startswith("swap")]
    pool = swaps if (want_swap and swaps) or not steps else steps
    return rng.choice(pool)


def test_forty_turns_with_swaps_both_pages_agree(server: str, browser: Browser, artifacts: Path) -> None:
    seed = 21
    # The test follows the engine move by move, Pass included: the room does not
    # pass for the players (auto_pass off), they press Pass.
    url = create_room(server, "romeo-and-juliet", {"seed": seed, "auto_pass": False})
    ctxs, pages, errors = _two_players(browser, url, 1100)
    state = _start(seed)
    assert pages["red"].evaluate(SNAPSHOT_JS) == _expected(state)
    assert pages["black"].evaluate(SNAPSHOT_JS) == _expected(state)
    expect(pages["red"].locator("#banner")).to_contain_text("First move")
    expect(pages["red"].locator(".rj-board .rj-romeo.rj-red")).to_have_count(1)
    expect(pages["red"].locator(".rj-board .rj-romeo.rj-black")).to_have_count(1)
    expect(pages["red"].locator(".rj-board .card.rj-joker")).to_have_count(3)
    expect(pages["red"].locator(".rj-juliet-red .rj-goal")).to_contain_text("Red's goal")
    check_coords(pages["red"], 7, 7)
    # One game a match: the room says "game", not "deal".
    expect(pages["red"].locator("#log-h")).to_have_text("Moves this game")
    _shot(pages["red"], artifacts / "romeo-start.png")

    rng = random.Random(4)
    kinds = {"swap": 0, "wrap": 0, "cancel": 0, "keyboard": 0}
    for turn in range(44):
        legal = GAME.legal_moves(state, state.mover)
        page = pages[state.mover]
        jokers = GAME.view(state, None)["jokers"]
        dest, swaps = _split(legal, jokers)
        if swaps and not kinds["cancel"]:
            # Choose a Joker, then change your mind: Escape puts the Romeo's
            # squares back; clicking a Joker then an unlit card cancels too.
            j = sorted(swaps)[0]
            _cell(page, j).click()
            assert _lit(page, ".cell.rj-partner") == sorted(swaps[j])
            _shot(page, artifacts / "romeo-choose-partner.png")
            page.keyboard.press("Escape")
            assert _lit(page, ".cell.rj-partner") == []
            assert _lit(page, ".cell.playable") == dest
            _cell(page, j).click()
            unlit = next(sq for sq in ("a7", "g1") if sq not in swaps[j])
            _cell(page, unlit).click(force=True)
            assert _lit(page, ".cell.rj-partner") == []
            expect(page.locator(".rj-prompt")).to_be_hidden()
            kinds["cancel"] += 1
        move = _choose(state, rng, want_swap=turn % 5 == 4 or (turn > 20 and not kinds["swap"]))
        keyboard = turn in (7, 8)
        state = _play_turn(pages, state, move, keyboard=keyboard)
        kinds["keyboard"] += keyboard
        last = GAME.view(state, None)["last"]
        kinds["swap"] += last["kind"] == "swap"
        if last["kind"] == "move" and last["wraps"]:
            kinds["wrap"] += 1
            if kinds["wrap"] == 1:
                _shot(pages["black"], artifacts / "romeo-wrap.png")
        if last["kind"] == "swap":
            # The two cards of the most recent swap carry the lock.
            for pg in pages.values():
                assert _lit(pg, ".rj-locked") == sorted(last["squares"])
                # ... which the line under the board explains (a tooltip never shows on a phone).
                expect(pg.locator(".rj-legend")).to_have_text(
                    "The two cards of the last swap: no swap may use either of them now.")
        elif not GAME.view(state, None)["locked"]:
            for pg in pages.values():
                expect(pg.locator(".rj-legend")).to_have_count(0)
            if kinds["swap"] == 1:
                _shot(pages["red"], artifacts / "romeo-swap.png")
    assert state.turns >= 40 and state.end == ""
    assert kinds["swap"] >= 2 and kinds["wrap"] >= 1 and kinds["cancel"] == 1, kinds
    log = [pg.locator("#log li").all_inner_texts() for pg in pages.values()]
    assert log[0] == log[1] and len(log[0]) == state.turns
    _shot(pages["red"], artifacts / "romeo-desktop.png", full_page=True)
    # A spectator who opens the link now sees the same position and can click nothing.
    watcher = browser.new_context()
    ctxs.append(watcher)
    spectator = watcher.new_page()
    spectator.goto(url)
    wait_version(spectator, version(pages["red"]))
    assert spectator.evaluate(SNAPSHOT_JS) == _expected(state)
    assert _lit(spectator, ".rj-act") == []
    expect(spectator.locator(".rj-explain")).to_contain_text(GAME.view(state, None)["explain"])
    assert errors == []
    for c in ctxs:
        c.close()


def _quick_win(state: RomeoState) -> list[str]:
    """Moves (Romeo moves only, while there are any) after which Red lands on
    Juliet: a breadth-first search over where the two Romeos stand."""
    todo: deque[tuple[RomeoState, tuple[str, ...]]] = deque([(state, ())])
    seen = {(state.romeos, state.turn)}
    while todo:
        s, path = todo.popleft()
        legal = GAME.legal_moves(s, s.mover)
        for m in [m for m in legal if not m.startswith("swap")] or list(legal):
            n = GAME.apply(s, s.mover, m)
            if n.end == "won" and n.turn == 1:
                return [*path, m]
            if not n.end and (n.romeos, n.turn) not in seen:
                seen.add((n.romeos, n.turn))
                todo.append((n, (*path, m)))
    raise AssertionError("no quick win for Red in this deal")


BADGE_FITS = """b => {
  const r = b.getBoundingClientRect(), c = b.closest('.cell').getBoundingClientRect();
  return r.left >= c.left - 3 && r.right <= c.right + 3;  // as far as the ring round the card
}"""


def test_a_game_to_the_win_on_a_phone(server: str, browser: Browser, artifacts: Path) -> None:
    seed = 7
    url = create_room(server, "romeo-and-juliet", {"seed": seed, "auto_pass": False})
    ctxs, pages, errors = _two_players(browser, url, 360)
    red = pages["red"]
    width = red.evaluate("document.documentElement.scrollWidth")
    assert width <= 360, f"the page scrolls sideways at 360 px: {width}"
    check_coords(red, 7, 7)
    # Each Juliet's badge says whose goal she is on a phone too (Black's
    # Romeo starts on Red's Juliet: a bare "goal" read as Black's own), and
    # fits the width of its card (and of the ring round it).
    for seat, label in (("red", "Red's goal"), ("black", "Black's goal")):
        badge = red.locator(f".rj-juliet-{seat} .rj-goal")
        assert " ".join(badge.inner_text().split()) == label
        assert badge.evaluate(BADGE_FITS), f"{label} sticks out of its card"
    _shot(red, artifacts / "romeo-phone-start.png", full_page=True)
    state = _start(seed)
    moves = _quick_win(state)
    for i, move in enumerate(moves):
        if i == len(moves) - 1:
            # Before the winning move: tap a Joker, see its partners, tap
            # outside the layout to cancel.
            _, swaps = _split(GAME.legal_moves(state, "red"), GAME.view(state, None)["jokers"])
            assert swaps, "Red has a swap to choose from before the winning move"
            j = sorted(swaps)[0]
            _choose_joker(red, j, tap=True)
            assert _lit(red, ".cell.rj-partner") == sorted(swaps[j])
            _shot(red, artifacts / "romeo-phone-choosing.png")
            red.locator("#seats").tap()
            assert _lit(red, ".cell.rj-partner") == []
        state = _play_turn(pages, state, move)
        if i == len(moves) - 2:
            _shot(red, artifacts / "romeo-phone-playing.png", full_page=True)
    outcome = GAME.outcome(state)
    assert outcome is not None and outcome.winners == ("red",)
    for seat, pg in pages.items():
        expect(pg.locator("#room")).to_have_attribute("data-phase", "match_over")
        expect(pg.locator("#result")).to_be_visible()
        expect(pg.locator("#result")).to_contain_text("Red's Romeo reached Juliet at g1")
        # A match is one game here, and the loser is told so.
        won = "The game is over. You win the game." if seat == "red" else \
            "The game is over. Rosa (Red) wins the game. You lose."
        expect(pg.locator("#banner")).to_contain_text(won)
        expect(pg.locator(".rj-explain")).to_contain_text("reaches Juliet")
        assert _lit(pg, ".rj-act") == []
    expect(pages["black"].locator('#result .side-score.won[data-side="red"]')).to_be_visible()
    # One line for the whole game is said once: "Rosa (Red) won the game", no
    # "Game: won the game = +1". The result and the score table name the
    # players, each page its own side "You".
    score = pages["black"].locator("#result .side-score")
    said = [" ".join(t.split()) for t in score.all_inner_texts()]
    assert said == ["Rosa (Red) won the game 1", "You (Black) lost the game 0"]
    expect(pages["black"].locator("#scores thead th:not(.review-cell)")).to_have_text(
        ["Game", "Rosa (Red)", "You (Black)"])
    expect(red.locator("#match-result")).to_contain_text("You (Red) 1 · Bram (Black) 0")
    expect(pages["black"].locator("#result .breakdown")).to_have_count(0)
    assert red.evaluate("document.documentElement.scrollWidth") <= 360
    _shot(red, artifacts / "romeo-phone-won.png", full_page=True)
    assert errors == []
    for c in ctxs:
        c.close()


def test_a_romeo_that_cannot_move_is_told_to_swap(server: str, browser: Browser) -> None:
    # Seed 1: after these moves Black's Romeo has no square to go to, but
    # swaps are open; the banner says so instead of asking for a lit square.
    seed = 1
    moves = ["a6", "f1", "swap b2 e2", "swap a4 f4", "swap a2 b2", "swap a4 f4", "swap b4 c4",
             "swap a4 f4", "swap b4 b7", "swap f2 f4", "swap a2 e2", "swap c2 f2", "swap b4 b7",
             "f6", "swap e1 e2"]
    url = create_room(server, "romeo-and-juliet", {"seed": seed, "auto_pass": False})
    ctxs, pages, errors = _two_players(browser, url, 1000)
    state = _start(seed)
    for move in moves:
        state = _play_turn(pages, state, move)
    dest, swaps = _split(GAME.legal_moves(state, "black"), GAME.view(state, "black")["jokers"])
    assert state.mover == "black" and not dest and swaps
    expect(pages["black"].locator("#banner")).to_contain_text("Your Romeo cannot move: click a Joker (★)")
    expect(pages["black"].locator(".cell.rj-swappable")).to_have_count(len(swaps))
    assert errors == []
    for c in ctxs:
        c.close()


def _repetition(state: RomeoState) -> list[str]:
    """Moves that repeat a position a third time: both openings, then a
    there-and-back of both Romeos played three times."""
    def steps(s: RomeoState) -> list[str]:
        return [m for m in GAME.legal_moves(s, s.mover) if not m.startswith("swap") and m != "pass"]

    def loops(s: RomeoState, start: RomeoState, depth: int, path: tuple[str, ...]) -> list[str] | None:
        if depth == 0:
            return list(path) if s.key == start.key else None
        for m in steps(s):
            n = GAME.apply(s, s.mover, m)
            if not n.end and (found := loops(n, start, depth - 1, (*path, m))):
                return found
        return None

    for a in steps(state):
        s1 = GAME.apply(state, "red", a)
        for b in steps(s1):
            start = GAME.apply(s1, "black", b)
            cycle = loops(start, start, 4, ())
            if cycle:
                return [a, b, *cycle, *cycle]
    raise AssertionError("no quick repetition in this deal")


def test_a_drawn_game_by_repetition(server: str, browser: Browser, artifacts: Path) -> None:
    seed = 5
    url = create_room(server, "romeo-and-juliet", {"seed": seed, "auto_pass": False})
    ctxs, pages, errors = _two_players(browser, url, 1100, reduced_motion=True)
    state = _start(seed)
    for move in _repetition(state):
        state = _play_turn(pages, state, move)
    assert state.end == "repetition"
    for seat, pg in pages.items():
        expect(pg.locator("#room")).to_have_attribute("data-phase", "match_over")
        expect(pg.locator("#result")).to_contain_text("The same position occurred for the third time: a draw")
        expect(pg.locator(".rj-explain")).to_contain_text("a draw")
        expect(pg.locator("#result .side-score.won")).to_have_count(0)
        red_side = "You (Red)" if seat == "red" else "Rosa (Red)"
        expect(pg.locator("#result .side-score").first).to_have_text(
            re.compile(rf"^{re.escape(red_side)} drew the game\s*0$"))
    _shot(pages["black"], artifacts / "romeo-draw.png", full_page=True)
    assert errors == []
    for c in ctxs:
        c.close()


GOALS_INSIDE = """() => {
  const felt = document.querySelector('section.table').getBoundingClientRect();
  return [...document.querySelectorAll('.rj-goal')].map((g) => {
    const r = g.getBoundingClientRect();
    return [g.textContent, r.left >= felt.left && r.right <= felt.right];
  });
}"""


def test_the_goal_flags_keep_inside_the_table_on_a_laptop(server: str, browser: Browser) -> None:
    """At 1366×768 the flag under the Juliet in a corner of the layout stays on
    the green table (new-user pass: "Red's goal" ran past its right edge)."""
    page = browser.new_page(viewport={"width": 1366, "height": 768})
    page.goto(create_room(server, "romeo-and-juliet", {"seed": 3}))
    wait_version(page, 0)
    assert page.evaluate(GOALS_INSIDE) == [["Red's goal", True], ["Black's goal", True]]
    page.close()


ROMEO_OVER_FACE = """() => [...document.querySelectorAll('#board .rj-cell.rj-has-romeo')].map((c) => {
  const box = (e) => e.getBoundingClientRect();
  const card = box(c.querySelector('.card')), face = box(c.querySelector('.card .face'));
  const letter = box(c.querySelector('.card .face .letter')), romeo = box(c.querySelector('.rj-romeo'));
  const covered = (r) => Math.max(0, Math.min(r.right, romeo.right) - Math.max(r.left, romeo.left))
    * Math.max(0, Math.min(r.bottom, romeo.bottom) - Math.max(r.top, romeo.top)) / (r.width * r.height);
  const mid = [(romeo.left + romeo.right) / 2, (romeo.top + romeo.bottom) / 2];
  return { square: c.dataset.square, card: c.dataset.card, face: covered(face), letter: covered(letter),
           width: romeo.width / card.width,
           onCard: mid[0] > card.left && mid[0] < card.right && mid[1] > card.top && mid[1] < card.bottom };
})"""


@pytest.mark.parametrize("size", [(390, 844), (1366, 768)], ids=["phone", "laptop"])
def test_a_romeo_leaves_the_face_of_its_queen_in_view(server: str, browser: Browser, artifacts: Path,
                                                       size: tuple[int, int]) -> None:
    """At the start each Romeo stands on a Queen in a corner of the layout:
    the Queen's face (her Q and suit) stays in view beside the Romeo, which
    is still a good half of the card's width and stands on it (a phone
    player saw only the corner index: the king covered the face)."""
    width, height = size
    mobile = width < 500
    ctx = browser.new_context(viewport={"width": width, "height": height}, has_touch=mobile, is_mobile=mobile)
    page = ctx.new_page()
    page.goto(create_room(server, "romeo-and-juliet", {"seed": 7}))
    wait_version(page, 0)
    got = page.evaluate(ROMEO_OVER_FACE)
    assert sorted((r["square"], r["card"][0]) for r in got) == [("a7", "Q"), ("g1", "Q")]
    for r in got:
        assert r["face"] <= 0.2, f"the Romeo covers {r['face']:.0%} of the face of the Queen at {r['square']}"
        assert r["letter"] <= 0.05, f"the Romeo covers the Q of the Queen at {r['square']}"
        assert r["width"] >= 0.45 and r["onCard"], r
    _shot(page, artifacts / f"romeo-queens-{width}.png")
    ctx.close()


SEAT_ROW = """() => [...document.querySelectorAll('#seats .seat-row')].map((row) => {
  const right = (e) => (e ? Math.round(e.getBoundingClientRect().right) : null);
  const token = row.querySelector('.rj-seat-token'), leave = row.querySelector('#leave-btn');
  return { token: [Math.round(token.getBoundingClientRect().left), right(token)], leave: right(leave),
           row: right(row) };
})"""


def test_the_seat_romeo_stands_after_leave_as_in_other_rooms(server: str, browser: Browser) -> None:
    """A seated player's row reads name, Leave, then the seat's Romeo at the
    row's right edge, in line with the other seat's Romeo, as Get Stuck for
    Four's rows end in their indicator Ten (the Romeo stood between the name
    and Leave)."""
    for width in (390, 1366):
        page = browser.new_page(viewport={"width": width, "height": 800})
        sit(page, create_room(server, "romeo-and-juliet"), "Rosa", "red")
        expect(page.locator("#leave-btn")).to_be_visible()
        red, black = page.evaluate(SEAT_ROW)
        assert red["leave"] <= red["token"][0], (width, red)
        assert red["token"][1] == black["token"][1] == red["row"], (width, red, black)
        page.close()


def test_the_path_ends_at_the_romeo(server: str, browser: Browser) -> None:
    """The line of the last move ends where its Romeo stands (on its card's
    corner), not in the middle of the card under it."""
    made = computer_room(server, "romeo-and-juliet", {"seed": 7})
    page = browser.new_page(viewport={"width": 390, "height": 844})
    sit(page, server + made["url"], "Rosa", made["seat"])
    v = version(page)
    page.locator("#board .cell.playable").first.click()
    wait_version(page, v + 2)  # and the computer's first step
    expect(page.locator("#board .cell.playable").first).to_be_visible()
    page.wait_for_function("() => document.getAnimations().length === 0")
    gap = page.evaluate("""() => {
      const wrap = document.querySelector('.rj-wrap').getBoundingClientRect();
      const lines = document.querySelectorAll('svg.rj-overlay polyline.rj-line');
      const pts = lines[lines.length - 1].getAttribute('points').trim().split(' ');
      const [x, y] = pts[pts.length - 1].split(',').map(Number);
      const r = document.querySelector('#board .cell.last-to .rj-romeo').getBoundingClientRect();
      return Math.hypot(wrap.left + x - (r.left + r.right) / 2, wrap.top + y - (r.top + r.bottom) / 2);
    }""")
    assert gap < 2, f"the path ends {gap:.0f} px from its Romeo"
    page.close()


FIT_JS = """() => {
  const board = document.querySelector('#board .board').getBoundingClientRect();
  const card = document.querySelector('#board .cell').getBoundingClientRect();
  return { bottom: board.bottom, card: card.width, scroll_y: scrollY,
           prompt: !!document.querySelector('.rj-prompt:not([hidden])') };
}"""


def test_a_phone_shows_the_whole_layout_during_play(server: str, browser: Browser, artifacts: Path) -> None:
    """On a 390×844 phone, seated against a computer player, the layout's
    seven rows are all on the screen at each of your turns with the page at
    its top, with the status above the layout and while a Joker is chosen
    (its prompt takes the status's place), and its cards are as wide as Get
    Stuck's on the same phone (new-user pass: row 7 ended 34 px below the
    screen, under the banner's three lines of help and the status's)."""
    phone = {"viewport": {"width": 390, "height": 844}, "has_touch": True, "is_mobile": True}
    ctx = browser.new_context(**phone)
    try:
        page = ctx.new_page()
        page.goto(create_room(server, "get-stuck"))
        wait_version(page, 0)
        get_stuck = page.evaluate(FIT_JS)["card"]
        made = computer_room(server, "romeo-and-juliet", {"seed": 7})
        sit(page, server + made["url"], "Rosa", made["seat"])
        seen, joker = [], False
        for turn in range(3):
            expect(page.locator("#board .cell.playable").first).to_be_visible()
            page.wait_for_function("() => document.getAnimations().length === 0")
            page.evaluate("window.scrollTo(0, 0)")
            got = page.evaluate(FIT_JS)
            seen.append(got)
            if turn == 1:
                _shot(page, artifacts / "romeo-phone-fit.png")
            swappable = page.locator("#board .cell.rj-swappable")
            if swappable.count() and not joker:
                swappable.first.tap()
                expect(page.locator(".rj-prompt")).to_be_visible()
                chosen = page.evaluate(FIT_JS)
                seen.append(chosen)
                assert chosen["bottom"] == got["bottom"], (got, chosen)  # the layout does not move
                _shot(page, artifacts / "romeo-phone-fit-joker.png")
                page.locator("#seats").tap()  # cancels the choice
                expect(page.locator(".rj-prompt")).to_be_hidden()
                joker = True
            v = version(page)
            page.locator("#board .cell.playable").first.tap()
            wait_version(page, v + 2)  # and the computer's reply
        assert joker, "no Joker was offered to choose"
        for got in seen:
            assert got["scroll_y"] == 0 and got["bottom"] <= 844, seen
            assert got["card"] >= get_stuck, (get_stuck, seen)
    finally:
        ctx.close()
