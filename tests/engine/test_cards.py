"""Cards, squares, seeds (engine/cards.py), the shape of position texts
(engine/notation.py) and room options (engine/base.py): RULINGS.md, shared
conventions."""

from __future__ import annotations

import pytest

from engine import cards
from engine.base import SEED_OPTION, Option, OptionError
from engine.cards import GRID_7X7, GRID_9X5, Grid
from engine.notation import format_position, parse_position


def test_the_deck() -> None:
    assert len(cards.FULL_DECK) == 52 == len(set(cards.FULL_DECK))
    assert {c[0] for c in cards.FULL_DECK} == set("A23456789TJQK")
    assert {c[1] for c in cards.FULL_DECK} == set("SHDC")
    assert all(cards.is_card(c) for c in cards.FULL_DECK)
    for bad in ("", "Q", "QHH", "qh", "1H", "10H", "QX", "HQ", " QH"):
        assert not cards.is_card(bad)


def test_card_properties_either_case() -> None:
    assert cards.rank("qh") == "Q" and cards.suit("qh") == "H"
    assert cards.is_red("QH") and cards.is_red("2d") and not cards.is_red("AS") and not cards.is_red("kc")
    assert [cards.colour(c) for c in ("AH", "AD", "AS", "AC")] == ["red", "red", "black", "black"]
    assert [cards.is_court(c) for c in ("JS", "qd", "KH", "TH", "9C", "AS")] == [True] * 3 + [False] * 3


def test_pip_values() -> None:
    assert [cards.pip_value(r + "S") for r in "A23456789T"] == list(range(1, 11))
    assert cards.pip_value("ah") == 1
    for court in ("JS", "QH", "kd"):
        with pytest.raises(ValueError, match="is a court"):
            cards.pip_value(court)


def test_pretty() -> None:
    assert cards.pretty("QH") == "Q♥"
    assert cards.pretty("TS") == "10♠"
    assert cards.pretty("ad") == "A♦"
    assert cards.pretty("9C") == "9♣"


def test_derive_seed_is_stable_in_range_and_label_sensitive() -> None:
    a = cards.derive_seed(1, "deal", 0)
    assert a == cards.derive_seed(1, "deal", 0)
    assert 0 <= a < 2**63
    others = {cards.derive_seed(1, "deal", 1), cards.derive_seed(2, "deal", 0), cards.derive_seed(1, "first")}
    assert a not in others and len(others) == 3
    assert all(0 <= cards.derive_seed(s, "x") < 2**63 for s in (0, 2**63 - 1, -5))


def test_shuffled_is_a_seeded_permutation_and_leaves_its_input() -> None:
    deck = list(cards.FULL_DECK)
    one = cards.shuffled(deck, 42)
    assert one == cards.shuffled(cards.FULL_DECK, 42)
    assert sorted(one) == sorted(deck) and one != deck
    assert one != cards.shuffled(deck, 43)
    assert deck == list(cards.FULL_DECK)


def test_square_names() -> None:
    """Columns a, b, … left to right; rows 1, 2, … top to bottom."""
    g = GRID_7X7
    assert g.size == 49 and g.names[0] == "a1" and g.names[6] == "g1" and g.names[7] == "a2"
    assert g.names[48] == "g7" and g.names[24] == "d4"
    assert g.index["d4"] == 24 and g.parse("g7") == 48
    assert g.parse("h1") is None and g.parse("a8") is None and g.parse("A1") is None
    assert GRID_9X5.names[-1] == "i5" and GRID_9X5.parse("e3") == 22 and GRID_9X5.parse("a6") is None
    assert g.colrow(g.parse("c5") or 0) == (2, 4) and g.square(2, 4) == g.parse("c5")
    assert g.on_board(6, 6) and not g.on_board(7, 0) and not g.on_board(0, -1)


def test_rays_and_neighbours() -> None:
    g = GRID_7X7
    names = g.names
    d4 = g.index["d4"]
    assert [names[i] for i in g.ray(d4, 1, 0)] == ["e4", "f4", "g4"]
    assert [names[i] for i in g.ray(d4, 0, -1)] == ["d3", "d2", "d1"]
    assert [names[i] for i in g.ray(d4, -1, 1)] == ["c5", "b6", "a7"]
    assert g.ray(g.index["a1"], -1, 0) == ()
    assert [names[i] for i in g.neighbours(d4)] == ["d3", "e4", "d5", "c4"]
    assert [names[i] for i in g.neighbours(g.index["a1"])] == ["b1", "a2"]
    assert len(Grid(3, 2).neighbours(4)) == 3


def test_rows_format_and_parse() -> None:
    g = Grid(3, 2)
    cells = ["AS", "..", "qh", "2C", "KD", "TH"]
    text = g.format_rows(cells)
    assert text == "AS .. qh\n2C KD TH"
    assert g.parse_rows(text.splitlines()) == cells
    with pytest.raises(ValueError, match="expected 2 rows, got 1"):
        g.parse_rows(["AS .. qh"])
    with pytest.raises(ValueError, match="row 2: expected 3 cells, got 2"):
        g.parse_rows(["AS .. qh", "2C KD"])


def test_position_text_shape() -> None:
    """A header of ``key: value`` lines (``game`` first), a blank line, the body."""
    text = format_position("demo", [("turn", "N"), ("last", "-")], "AS ..\nqh 2C")
    assert text == "game: demo\nturn: N\nlast: -\n\nAS ..\nqh 2C\n"
    header, body = parse_position(text, "demo")
    assert header == {"game": "demo", "turn": "N", "last": "-"}
    assert body == ["AS ..", "qh 2C"]
    # Surrounding blank lines and spaces around values are tolerated.
    assert parse_position("\n" + text.replace(": N", ":   N") + "\n\n", "demo")[0]["turn"] == "N"
    with pytest.raises(ValueError, match="needs a header, a blank line and a body"):
        parse_position("game: demo\nturn: N", "demo")
    with pytest.raises(ValueError, match="bad header line 'turn N'"):
        parse_position("game: demo\nturn N\n\nAS", "demo")
    with pytest.raises(ValueError, match="not a demo position"):
        parse_position(text.replace("game: demo", "game: other"), "demo")
    with pytest.raises(ValueError, match="not a demo position"):
        parse_position(text.replace("game: demo\n", ""), "demo")


def test_options() -> None:
    deals = Option("deals", "d", 2, minimum=2, maximum=20, even=True)
    assert deals.check(2) == 2 and deals.check(20) == 20
    for bad, why in ((1, "at least 2"), (22, "at most 20"), (3, "even"), ("4", "whole number"),
                     (4.0, "whole number"), (True, "whole number"), (None, "whole number")):
        with pytest.raises(OptionError, match=f"option 'deals' must be .*{why}"):
            deals.check(bad)
    size = Option("size", "s", "small", kind="choice", choices=("small", "large"))
    assert size.check("large") == "large"
    with pytest.raises(OptionError, match="option 'size' must be one of small, large, not \"huge\""):
        size.check("huge")
    assert SEED_OPTION.check(0) == 0 and SEED_OPTION.check(2**63 - 1) == 2**63 - 1
    for bad_seed in (-1, 2**63, "7"):
        with pytest.raises(OptionError, match="'seed'"):
            SEED_OPTION.check(bad_seed)


def test_a_choice_option_refuses_a_float_or_bool_that_equals_a_choice() -> None:
    import pytest

    from engine.base import Option, OptionError

    opt = Option("players", "seats", 2, kind="choice", choices=(2, 3, 4))
    assert opt.check(3) == 3
    for bad in (3.0, True, "3"):
        with pytest.raises(OptionError, match="players"):
            opt.check(bad)
