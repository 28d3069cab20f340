"""Helpers shared by browser tests: create rooms, sit players, wait for versions."""

from __future__ import annotations

import json
import random
import urllib.request
from pathlib import Path
from typing import Any

from playwright.sync_api import BrowserContext, Locator, Page, expect
from playwright.sync_api import TimeoutError as PlaywrightTimeoutError
from websockets.sync.client import connect


def post_room(base: str, body: dict[str, Any]) -> dict[str, Any]:
    """Create a room over the HTTP API (``body`` as ``POST /api/rooms``
    takes it, ``bots`` included); return the answer (``room``, ``url`` and,
    with computer players, the ``seat`` left free)."""
    req = urllib.request.Request(
        base + "/api/rooms",
        data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json"},
        method="POST",
    )
    with urllib.request.urlopen(req, timeout=5) as r:
        answer: dict[str, Any] = json.load(r)
    return answer


def computer_room(base: str, game: str, options: dict[str, Any] | None = None,
                  levels: dict[str, str] | None = None, seats: str = "others") -> dict[str, Any]:
    """A room whose ``seats`` (``"others"``: all but one, ``"all"``) hold easy
    computer players, some at other ``levels`` (seat → level); the answer of
    :func:`post_room` (``url``, ``room`` and the free ``seat``)."""
    bots: dict[str, Any] = {"level": "easy", "seats": seats}
    if levels:
        bots["levels"] = levels
    return post_room(base, {"game": game, "options": options or {}, "bots": bots})


def finished_record(game: str, options: dict[str, Any] | None = None, seed: int = 0) -> str:
    """The record of a whole match of ``game`` played by the engine alone,
    every move chosen at random (``random.Random(seed)``, the deals from
    ``seed`` too): a review to open without playing it on a server."""
    from engine.match import Match
    from engine.record import write_record

    m = Match.new(game, options or {}, seed)
    rng = random.Random(seed)
    while not m.over:
        if m.deal_over:
            m = m.next_deal()
            continue
        seat = m.game.to_move(m.state)[0]
        m = m.play(seat, rng.choice(m.game.legal_moves(m.state, seat)))
    return write_record(m)


def finish_over_socket(base: str, game: str, levels: dict[str, str] | None = None,
                       **options: Any) -> tuple[dict[str, Any], str]:
    """A whole match against computer players, the person's moves chosen at
    random over the websocket; returns the room made and the match id."""
    made = computer_room(base, game, options, levels)
    rng = random.Random(4)
    with connect(base.replace("http", "ws", 1) + "/ws/" + made["room"]) as ws:
        ws.send(json.dumps({"type": "join", "seat": made["seat"], "name": "Ann"}))
        acted = -1
        for _ in range(5000):
            frame = json.loads(ws.recv(timeout=30))
            if frame["type"] != "state" or frame["version"] <= acted:
                continue
            if frame["phase"] == "match_over":
                return made, frame["view"]["match_id"]
            if frame["phase"] == "deal_over" and frame["you"]:
                ws.send(json.dumps({"type": "next_deal", "version": frame["version"]}))
                acted = frame["version"]
            elif frame["legal_moves"]:
                ws.send(json.dumps({"type": "move", "move": rng.choice(frame["legal_moves"]),
                                    "version": frame["version"]}))
                acted = frame["version"]
    raise AssertionError("the match did not end")


def create_room(base: str, game: str, options: dict[str, Any] | None = None) -> str:
    """Create a room over the HTTP API; return its absolute URL."""
    return base + post_room(base, {"game": game, "options": options or {}})["url"]


def version(page: Page) -> int:
    """The state version the page last drew (-1 before the first state)."""
    v = page.locator("#room").get_attribute("data-version")
    return int(v) if v else -1


def record_frames(page: Page, keep: int = 40) -> None:
    """Keep the last ``keep`` websocket events of ``page`` (opened, closed,
    frames in and out, shortened) for :func:`wait_version` to show when it
    times out."""
    seen: list[str] = []
    page._cardboard_frames = seen  # type: ignore[attr-defined]

    def note(text: str) -> None:
        seen.append(text[:160])
        del seen[:-keep]

    def on_socket(ws: Any) -> None:
        note(f"open {ws.url}")
        ws.on("framereceived", lambda f: note(f"in  {f}"))
        ws.on("framesent", lambda f: note(f"out {f}"))
        ws.on("close", lambda _: note("closed"))

    page.on("websocket", on_socket)


DIAGNOSE = """() => ({
  version: document.querySelector('#room').dataset.version,
  phase: document.querySelector('#room').dataset.phase,
  conn: document.querySelector('#conn')?.textContent,
  banner: document.querySelector('#banner')?.textContent,
  toasts: [...document.querySelectorAll('#toasts .toast')].map((t) => t.textContent),
  playable: document.querySelectorAll('.cell.playable').length,
})"""


def wait_version(page: Page, at_least: int, timeout: float = 10_000) -> None:
    """Wait until the page has drawn a state of version ``at_least`` or
    later; on a timeout the error says what the page shows and, if
    :func:`record_frames` watches it, the last frames it got."""
    try:
        page.wait_for_function(
            "v => Number(document.querySelector('#room').dataset.version || -1) >= v",
            arg=at_least, timeout=timeout,
        )
    except PlaywrightTimeoutError as exc:
        shown = page.evaluate(DIAGNOSE)
        frames = "\n".join(getattr(page, "_cardboard_frames", None) or ["(frames not recorded)"])
        raise AssertionError(f"version {at_least} not drawn in {timeout / 1000:.0f} s;"
                             f" the page shows {shown}; its last socket events:\n{frames}") from exc


def sit(page: Page, url: str, name: str, seat: str) -> None:
    """Open the room, type a name and take ``seat`` by clicking (the page's
    socket frames are recorded for :func:`wait_version`)."""
    if not hasattr(page, "_cardboard_frames"):
        record_frames(page)
    page.goto(url)
    wait_version(page, 0)
    page.fill("#name", name)
    page.click(f'button[data-join="{seat}"]')
    expect(page.locator(f'.seat-row.you[data-seat="{seat}"]')).to_be_visible()


def lit(page: Page, selector: str) -> list[str]:
    """The squares (``data-square``) of the board's elements that match
    ``selector`` (e.g. ``".cell.playable"``), sorted."""
    squares: list[str] = page.evaluate(
        "sel => [...document.querySelectorAll('#board ' + sel)].map(c => c.dataset.square).sort()", selector)
    return squares


def press(page: Page, target: Locator, *, keyboard: bool = False) -> None:
    """Click ``target``, or (``keyboard``) focus it and press Enter."""
    if keyboard:
        target.focus()
        page.keyboard.press("Enter")
    else:
        target.click()


def settled_shot(page: Page, path: Path, *, full_page: bool = False) -> None:
    """A screenshot once the page's animations are over."""
    page.wait_for_function("() => document.getAnimations().length === 0")
    page.screenshot(path=str(path), full_page=full_page)


COORDS_JS = """() => {
  const box = (e) => e.getBoundingClientRect();
  const cols = [...document.querySelectorAll('#board .coord-col')].map((l) => {
    const c = box(l.closest('.cell')), r = box(l);
    return [l.textContent, l.closest('.cell').dataset.square,
            r.bottom <= c.top && Math.abs((r.left + r.right) / 2 - (c.left + c.right) / 2) < 1];
  });
  const rows = [...document.querySelectorAll('#board .coord-row')].map((l) => {
    const c = box(l.closest('.cell')), r = box(l);
    return [l.textContent, l.closest('.cell').dataset.square,
            r.right <= c.left && r.top >= c.top && r.bottom <= c.bottom];
  });
  const board = box(document.querySelector('#board'));
  const labels = [...document.querySelectorAll('#board .coord')].map(box);
  const inside = labels.every((r) => r.left >= board.left && r.top >= board.top);
  return { cols, rows, inside };
}"""


def check_coords(page: Page, width: int, height: int) -> None:
    """The grid board is labelled like the notation: a letter above each
    square of the top row (a, b, …) and a number left of each square of the
    first column (1, 2, …), each outside its square, within the board."""
    got = page.evaluate(COORDS_JS)
    letters = [chr(97 + i) for i in range(width)]
    assert got["cols"] == [[c, f"{c}1", True] for c in letters]
    assert got["rows"] == [[str(r), f"a{r}", True] for r in range(1, height + 1)]
    assert got["inside"], "a coordinate label sticks out of the board"


SNAPSHOT = """() => ({
  version: Number(document.querySelector('#room').dataset.version || -1),
  phase: document.querySelector('#room').dataset.phase,
  squares: [...document.querySelectorAll('.cell.playable')].map((c) => c.dataset.square),
  pass: !!document.querySelector('#pass-btn'),
})"""
"""What the page shows, read at one instant: version, phase, the squares it
offers to play and whether it offers Pass."""


def play_turns(page: Page, rng: random.Random, changes: int,
               until_phase: tuple[str, ...] = ("deal_over", "match_over")) -> int:
    """For up to ``changes`` changes of the state, or until the room's phase
    is one of ``until_phase``: click one of the highlighted cards (or Pass)
    when it is this page's turn, else wait for the computer players. Returns
    the moves clicked."""
    clicked = 0
    for _ in range(changes):
        now = page.evaluate(SNAPSHOT)
        if now["phase"] in until_phase:
            break
        if now["squares"]:
            page.click(f'.cell.playable[data-square="{rng.choice(now["squares"])}"]')
            clicked += 1
        elif now["pass"]:
            # The server may play a forced pass first (docs/protocol.md,
            # "Forced passes"): then the button goes, and nothing is lost.
            try:
                page.click("#pass-btn", timeout=3_000)
                clicked += 1
            except PlaywrightTimeoutError:
                pass
        wait_version(page, now["version"] + 1)
    return clicked


LISTEN = """() => {
  window.__csp = [];
  document.addEventListener("securitypolicyviolation", (e) => {
    window.__csp.push(`${e.violatedDirective} ${e.blockedURI} ${e.sourceFile}:${e.lineNumber}`);
  });
}"""


def watched(context: BrowserContext, console: list[str]) -> Page:
    """A new page of ``context`` that records every Content-Security-Policy
    violation (:func:`violations`); CSP messages of the console and page
    errors go to ``console``."""
    page = context.new_page()
    page.add_init_script(f"({LISTEN})()")
    page.on("console", lambda m: console.append(m.text) if "Content Security Policy" in m.text else None)
    page.on("pageerror", lambda e: console.append(f"page error: {e}"))
    return page


def violations(page: Page) -> list[str]:
    """The CSP violations a :func:`watched` page has seen so far."""
    found: list[str] = page.evaluate("() => window.__csp")
    return found
