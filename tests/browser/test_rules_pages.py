"""The rules pages' diagrams on a phone (390 px wide) and a laptop: on a phone
each board fills the width and its smallest text is drawn at 8 px or more
(a wide diagram used to shrink to 5.5–7.5 px text); a board's key goes
beside it on a laptop and below it on a phone."""

from __future__ import annotations

from pathlib import Path

import pytest
from playwright.sync_api import Browser

GAMES = ["get-stuck", "get-stuck-4", "romeo-and-juliet", "suitors", "stucco"]

# Per diagram: its rendered width, the figure's width, the smallest text size
# as drawn (the font size times the diagram's scale) and whether it is a key.
SIZES_JS = """() => [...document.querySelectorAll('.rules figure svg')].map((svg) => {
  const box = svg.getBoundingClientRect();
  const scale = box.width / svg.viewBox.baseVal.width;
  const sizes = [...svg.querySelectorAll('text')]
    .map((t) => parseFloat(getComputedStyle(t).fontSize) * scale);
  return {width: box.width, figure: svg.closest('figure').getBoundingClientRect().width,
          smallest: Math.min(...sizes), key: svg.classList.contains('key')};
})"""


@pytest.mark.parametrize("game", GAMES)
def test_diagrams_are_readable_on_a_phone(server: str, browser: Browser, artifacts: Path, game: str) -> None:
    page = browser.new_page(viewport={"width": 390, "height": 844})
    page.goto(f"{server}/rules/{game}")
    diagrams = page.evaluate(SIZES_JS)
    assert diagrams, "the page has diagrams"
    for d in diagrams:
        assert d["smallest"] >= 8, d
        if not d["key"]:
            assert d["width"] >= d["figure"] - 1, d  # a board takes the whole width
    page.locator("figure").first.screenshot(path=str(artifacts / f"rules-{game}-phone.png"))
    page.close()


@pytest.mark.parametrize(("width", "beside"), [(1280, True), (390, False)])
def test_a_boards_key_is_beside_it_on_a_laptop_and_below_on_a_phone(
        server: str, browser: Browser, width: int, beside: bool) -> None:
    page = browser.new_page(viewport={"width": width, "height": 900})
    page.goto(f"{server}/rules/get-stuck")
    board = page.locator(".diagram-pair svg:not(.key)").first.bounding_box()
    key = page.locator(".diagram-pair svg.key").first.bounding_box()
    assert board is not None and key is not None
    if beside:
        assert key["y"] == board["y"] and key["x"] >= board["x"] + board["width"]
    else:
        assert key["y"] >= board["y"] + board["height"]
    page.close()
