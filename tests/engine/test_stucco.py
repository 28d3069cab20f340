"""Stucco: RULINGS.md, Stucco rules 1–6, the secret opening and the interface."""

from __future__ import annotations

import random
from itertools import pairwise
from typing import Any

import pytest

from engine.base import IllegalMove, MalformedMove, OptionError
from engine.cards import pretty
from engine.match import Match, MatchError
from engine.registry import get_game
from engine.stucco import CARDS, FOLLOWERS, PASS, SEATS, StuccoState

GAME = get_game("stucco")
OPTS = GAME.check_options({})


def opening(north: list[str], dealer: str = "north") -> StuccoState:
    """A fresh deal in which north holds ``north`` and south the other 16 cards."""
    assert len(set(north)) == 16
    south = [c for c in CARDS if c not in north]
    return GAME.from_text(
        f"game: stucco\ndealer: {dealer}\npicks: north=- south=-\nturn: -\nlast: -\n\n"
        f"north: {' '.join(north)}\nsouth: {' '.join(south)}\nspread: -\n"
    )


def open_with(north: list[str], north_pick: str, south_pick: str, dealer: str = "north") -> StuccoState:
    """The state just after both picks of :func:`opening`."""
    state = GAME.apply(opening(north, dealer), "north", north_pick)
    return GAME.apply(state, "south", south_pick)


def fill(cards: list[str], avoid: set[str]) -> list[str]:
    """``cards`` topped up to 16 with cards not in ``avoid``, in deck order."""
    extra = [c for c in CARDS if c not in cards and c not in avoid]
    return cards + extra[: 16 - len(cards)]


def unchanged_after_error(state: StuccoState, seat: str, move: str, error: type[Exception]) -> None:
    before = GAME.to_text(state)
    with pytest.raises(error):
        GAME.apply(state, seat, move)
    assert GAME.to_text(state) == before


# ---- ruling 3: the follow rule ----------------------------------------------------------
@pytest.mark.parametrize(("last", "followers"), [
    ("QH", {"KH", "JD", "QS", "QC"}),
    ("AH", {"7H", "KD", "AS", "AC"}),
    ("7S", {"8S", "AC", "7H", "7D"}),
    ("QS", {"KS", "JC", "QH", "QD"}),
    ("7H", {"8H", "AD", "7S", "7C"}),
])
def test_follow_rule_as_legal_moves(last: str, followers: set[str]) -> None:
    # North (dealer) opens with ``last``; south picks a card of the other colour
    # (so the dealer starts) and holds every follower plus others.
    other = "9S" if last[1] in "HD" else "9H"
    north = fill([last], followers | {other})
    state = open_with(north, last, other)
    assert [e["card"] for e in GAME.view(state, None)["spread"]] == [last]
    assert GAME.to_move(state) == ("south",)
    assert set(GAME.legal_moves(state, "south")) == followers
    assert set(CARDS[f] for f in FOLLOWERS[CARDS.index(last)]) == followers


def test_every_card_has_four_distinct_followers() -> None:
    for c, fs in enumerate(FOLLOWERS):
        assert len(set(fs)) == 4 and c not in fs


# ---- ruling 2: the opening ---------------------------------------------------------------
@pytest.mark.parametrize(("north_pick", "south_pick", "dealer", "starter"), [
    ("QH", "9D", "north", "south"),   # both red: non-dealer starts
    ("QH", "9D", "south", "north"),
    ("QS", "9C", "north", "south"),   # both black
    ("QS", "9C", "south", "north"),
    ("QH", "9C", "north", "north"),   # different colours: dealer starts
    ("QH", "9C", "south", "south"),
    ("QS", "9D", "north", "north"),
    ("QS", "9D", "south", "south"),
])
def test_colour_rule(north_pick: str, south_pick: str, dealer: str, starter: str) -> None:
    north = fill([north_pick], {south_pick})
    state = open_with(north, north_pick, south_pick, dealer)
    view = GAME.view(state, None)
    opener = north_pick if starter == "north" else south_pick
    assert view["starter"] == starter
    assert view["spread"] == [{"card": opener, "seat": starter}]
    assert view["reveal"] == {"north": north_pick, "south": south_pick}
    assert GAME.to_move(state) == (("south",) if starter == "north" else ("north",))


def test_returned_card_goes_back_to_its_hand() -> None:
    north = fill(["QH"], {"9C"})
    state = open_with(north, "QH", "9C")  # different colours: dealer north starts
    hands = GAME.view(state, None)["hands"]
    assert "9C" in hands["south"] and len(hands["south"]) == 16
    assert "QH" not in hands["north"] and len(hands["north"]) == 15
    # and it may be played later: here it does not follow QH, but QC does
    assert "9C" not in GAME.legal_moves(state, "south")


def test_non_starter_who_cannot_follow_passes_and_starter_plays_again() -> None:
    # 8S is followed by 9S, 7C, 8H, 8D: north holds them all, south none.
    north = fill(["8S", "9S", "7C", "8H", "8D"], {"7H"})
    state = open_with(north, "8S", "7H")  # different colours: dealer north starts
    assert GAME.to_move(state) == ("south",)
    assert GAME.legal_moves(state, "south") == (PASS,)
    assert GAME.view(state, None)["run"] == 1
    state = GAME.apply(state, "south", PASS)
    view = GAME.view(state, "north")
    assert GAME.to_move(state) == ("north",)
    assert view["last"] == {"seat": "south", "move": PASS}
    assert view["run"] == 1
    assert set(GAME.legal_moves(state, "north")) == {"9S", "7C", "8H", "8D"}
    state = GAME.apply(state, "north", "9S")
    view = GAME.view(state, None)
    assert view["run"] == 2  # the opening card is the first card of north's turn
    assert view["played"] == {"north": 2, "south": 0}


def test_both_seats_awaited_until_each_has_picked() -> None:
    state = GAME.deal(7, OPTS, "south")
    assert GAME.to_move(state) == ("north", "south")
    assert len(GAME.legal_moves(state, "north")) == 16
    assert set(GAME.legal_moves(state, "north")) == set(GAME.view(state, None)["hands"]["north"])
    card = GAME.legal_moves(state, "south")[3]
    state = GAME.apply(state, "south", card)
    assert GAME.to_move(state) == ("north",)
    assert GAME.legal_moves(state, "south") == ()


def test_a_pick_is_final() -> None:
    state = GAME.deal(11, OPTS, "north")
    first, second = GAME.legal_moves(state, "north")[:2]
    state = GAME.apply(state, "north", first)
    unchanged_after_error(state, "north", second, IllegalMove)
    unchanged_after_error(state, "north", first, IllegalMove)
    assert GAME.view(state, "north")["pick"] == first


def test_opening_errors() -> None:
    state = GAME.deal(3, OPTS, "north")
    south_card = GAME.legal_moves(state, "south")[0]
    unchanged_after_error(state, "north", south_card, IllegalMove)
    unchanged_after_error(state, "north", PASS, IllegalMove)
    unchanged_after_error(state, "east", GAME.legal_moves(state, "north")[0], IllegalMove)
    unchanged_after_error(state, "north", "2H", MalformedMove)


# ---- secrecy of the pick ------------------------------------------------------------------
def test_pick_is_hidden_from_opponent_and_spectators() -> None:
    state = GAME.deal(21, OPTS, "north")
    before = {s: GAME.view(state, s) for s in ("south", None)}
    assert before["south"]["picked"] == {"north": False, "south": False}
    others: dict[str | None, list[dict[str, Any]]] = {"south": [], None: []}
    for card in GAME.legal_moves(state, "north"):
        assert "picks a card" in GAME.describe(state, "north", card)
        assert card not in GAME.describe(state, "north", card)
        picked = GAME.apply(state, "north", card)
        assert GAME.view(picked, "north")["pick"] == card
        for seat in ("south", None):
            view = GAME.view(picked, seat)
            assert view["picked"] == {"north": True, "south": False}
            assert view["pick"] is None and view["reveal"] is None and view["last"] is None
            assert view["spread"] == [] and view["starter"] is None
            others[seat].append(view)
    # whatever north picked, south and spectators see exactly the same view
    for seat in ("south", None):
        assert all(v == others[seat][0] for v in others[seat])
        assert {k: v for k, v in others[seat][0].items() if k != "picked"} == {
            k: v for k, v in before[seat].items() if k != "picked"}
    # south's own pick is shown to south only; then both are revealed together
    north_card = GAME.legal_moves(state, "north")[0]
    picked = GAME.apply(state, "north", north_card)
    south_card = GAME.legal_moves(picked, "south")[0]
    both = GAME.apply(picked, "south", south_card)
    for seat in ("north", "south", None):
        view = GAME.view(both, seat)
        assert view["reveal"] == {"north": north_card, "south": south_card}
        assert view["pick"] is None
    sentence = GAME.describe(picked, "south", south_card)
    assert pretty(north_card) in sentence and pretty(south_card) in sentence


def test_determinize_guesses_the_hidden_pick() -> None:
    state = GAME.deal(5, OPTS, "north")
    state = GAME.apply(state, "north", GAME.legal_moves(state, "north")[0])
    rng = random.Random(0)
    guesses = {GAME.view(GAME.determinize(state, "south", rng), "north")["pick"] for _ in range(60)}
    assert len(guesses) > 1
    assert guesses <= set(GAME.view(state, None)["hands"]["north"])
    for _ in range(20):
        guess = GAME.determinize(state, "south", rng)
        assert GAME.view(guess, "south") == GAME.view(state, "south")
    assert GAME.determinize(state, "north", rng) == state


# ---- ruling 4: forced play and passing -----------------------------------------------------
def test_forced_play_and_passing_only_when_unable() -> None:
    north = fill(["QH"], {"9C", "KH", "JD"})
    state = open_with(north, "QH", "9C")
    legal = GAME.legal_moves(state, "south")
    assert PASS not in legal and legal
    unchanged_after_error(state, "south", PASS, IllegalMove)
    unchanged_after_error(state, "south", "9C", IllegalMove)   # in hand, does not follow
    unchanged_after_error(state, "south", "AH", IllegalMove)   # north's card
    unchanged_after_error(state, "south", "QH", IllegalMove)   # already in the spread
    unchanged_after_error(state, "north", "KS", IllegalMove)   # not north's turn
    # south cannot follow the 8S while north can: every card of south's is refused
    north = fill(["8S", "9S", "7C", "8H", "8D"], {"7H"})
    state = open_with(north, "8S", "7H")
    for card in GAME.view(state, None)["hands"]["south"]:
        unchanged_after_error(state, "south", card, IllegalMove)


# ---- ruling 5: scoring --------------------------------------------------------------------
# A real deal (seed 46462, north deals) with the seed text's shape: north opens
# with an 8, south cannot answer it so north plays twice in the first turn, and
# north ends with 12 cards played, the last turn being two cards with a pass by
# south between them.
SHAPE_SEED = 46462
SHAPE_MOVES = [
    ("north", "8S"), ("south", "JH"), ("south", "pass"), ("north", "8D"), ("south", "7H"),
    ("north", "7C"), ("south", "AS"), ("north", "AD"), ("south", "AC"), ("north", "AH"),
    ("south", "pass"), ("north", "KD"), ("south", "pass"), ("north", "QH"), ("south", "JD"),
    ("north", "pass"), ("south", "JC"), ("north", "QC"), ("south", "JS"), ("north", "TC"),
    ("south", "TH"), ("north", "9D"), ("south", "TD"), ("north", "9H"), ("south", "pass"),
    ("north", "9C"),
]


def test_score_shape_of_the_seed_example() -> None:
    state = GAME.deal(SHAPE_SEED, OPTS, "north")
    for seat, move in SHAPE_MOVES:
        assert GAME.outcome(state) is None
        state = GAME.apply(state, seat, move)
    outcome = GAME.outcome(state)
    assert outcome is not None
    view = GAME.view(state, None)
    # the opening 8S is north's (8S black, JH red: the dealer starts) and counts
    assert view["spread"][0] == {"card": "8S", "seat": "north"}
    north_cards = [m for s, m in SHAPE_MOVES[2:] if s == "north" and m != PASS]
    assert len(north_cards) + 1 == view["played"]["north"] == 12
    # the last turn, 9H then (south passes) 9C, is two cards
    assert [e["seat"] for e in view["spread"][-3:]] == ["south", "north", "north"]
    assert view["run"] == 2
    assert outcome.winners == ("north",)
    assert outcome.points("north") == 12 * 2
    assert outcome.points("south") == 0
    north_score = outcome.scores[0]
    assert north_score.lines[0].detail == "12 cards played × 2 in the last turn"
    assert sum(ln.points for ln in north_score.lines) == north_score.points
    assert outcome.to_json()["scores"][1]["lines"][0]["points"] == 0


def test_end_when_neither_can_play() -> None:
    state = GAME.deal(SHAPE_SEED, OPTS, "north")
    for seat, move in SHAPE_MOVES[:-2]:
        state = GAME.apply(state, seat, move)
    # north has just played 9H: south cannot follow, north can, so south passes
    assert GAME.legal_moves(state, "south") == (PASS,)
    state = GAME.apply(state, "south", PASS)
    state = GAME.apply(state, "north", "9C")
    # nobody can follow the 9C: the deal ends without anyone having to pass
    hands = GAME.view(state, None)["hands"]
    assert not {"TC", "8S", "9H", "9D"} & set(hands["north"] + hands["south"])
    assert GAME.to_move(state) == ()
    assert GAME.legal_moves(state, "north") == () and GAME.legal_moves(state, "south") == ()
    unchanged_after_error(state, "south", PASS, IllegalMove)
    unchanged_after_error(state, "north", hands["north"][0], IllegalMove)
    view = GAME.view(state, None)
    assert view["phase"] == "over" and view["turn"] is None
    assert GAME.outcome(state) is not None


# ---- ruling 1 and 6: the match ------------------------------------------------------------
def play_deal(match: Match, rng: random.Random) -> Match:
    while not match.deal_over:
        seat = GAME.to_move(match.state)[0]
        match = match.play(seat, rng.choice(GAME.legal_moves(match.state, seat)))
    return match


def test_match_ends_at_target_and_dealer_alternates() -> None:
    rng = random.Random(4)
    options = GAME.check_options({"target": 60})
    first_dealers = set()
    for seed in range(6):
        match = Match.new("stucco", options, seed)
        first_dealers.add(match.current.starter)
        dealers = []
        while True:
            assert not any(t >= 60 for t in match.totals().values())
            dealers.append(match.current.starter)
            assert GAME.view(match.state, None)["dealer"] == match.current.starter
            match = play_deal(match, rng)
            if match.over:
                break
            match = match.next_deal()
        assert dealers[0] == GAME.starter(options, seed, 0)
        assert all(a != b for a, b in pairwise(dealers))
        totals = match.totals()
        assert max(totals.values()) >= 60 and min(totals.values()) < 60
        assert match.winners() == (max(totals, key=lambda s: totals[s]),)
        with pytest.raises(MatchError):
            match.next_deal()
    assert first_dealers == set(SEATS)  # the first dealer is drawn from the seed


def test_target_option() -> None:
    assert GAME.check_options({}) == {"target": 100}
    assert GAME.check_options({"target": 1}) == {"target": 1}
    for bad in (0, 1001, "100", 2.5, True):
        with pytest.raises(OptionError, match="target"):
            GAME.check_options({"target": bad})


# ---- errors, views and text ----------------------------------------------------------------
MALFORMED = ["", "2H", "TX", "qh", "Q H", "10H", "QHX", "Pass", "pass ", "QH,KH", "z9"]


def test_malformed_moves() -> None:
    state = open_with(fill(["QH"], {"9C"}), "QH", "9C")
    for text in MALFORMED:
        unchanged_after_error(state, "south", text, MalformedMove)


def test_view_fields_during_play() -> None:
    state = GAME.apply(open_with(fill(["QH"], {"9C", "QS"}), "QH", "9C"), "south", "QS")
    view = GAME.view(state, "north")
    assert view["phase"] == "play" and view["turn"] == "north" and view["dealer"] == "north"
    assert view["spread"] == [{"card": "QH", "seat": "north"}, {"card": "QS", "seat": "south"}]
    assert view["last"] == {"seat": "south", "move": "QS"} and view["run"] == 1
    assert view["picked"] == {"north": True, "south": True}
    hand = view["hands"]["south"]
    suits = [c[1] for c in hand]
    assert suits == sorted(suits, key="SHCD".index)
    assert GAME.describe(state, "north", "KS") == "North plays the K♠ on the Q♠"


def test_text_rejects_bad_positions() -> None:
    good = GAME.to_text(open_with(fill(["QH"], {"9C"}), "QH", "9C"))
    assert GAME.from_text(good) == open_with(fill(["QH"], {"9C"}), "QH", "9C")
    bad = [
        good.replace("dealer: north", "dealer: east"),
        good.replace("game: stucco", "game: get-stuck"),
        good.replace("picks: north=QH south=9C", "picks: north=QH"),
        good.replace("turn: south", "turn: north"),
        good.replace("last: north QH", "last: south pass"),
        good.replace("spread: north QH", "spread: north QH 9C"),
        good.replace("spread: north QH", "spread: -"),
        good.replace("north: ", "north: QH "),
    ]
    for text in bad:
        assert text != good
        with pytest.raises(ValueError):
            GAME.from_text(text)


# ---- random play ----------------------------------------------------------------------------
@pytest.mark.slow
def test_random_play_2000_deals() -> None:
    rng = random.Random(2024)
    game = GAME
    winners = set()
    for deal in range(2000):
        state = game.deal(deal, OPTS, SEATS[deal % 2])
        check_text = deal < 200
        for _ in range(80):
            if check_text:
                assert game.from_text(game.to_text(state)) == state
            awaited = game.to_move(state)
            if not awaited:
                break
            assert game.outcome(state) is None
            for seat in SEATS:
                if seat not in awaited:
                    assert game.legal_moves(state, seat) == ()
            seat = rng.choice(awaited)
            legal = game.legal_moves(state, seat)
            assert legal
            illegal = rng.choice([m for m in (*CARDS, PASS) if m not in legal])
            with pytest.raises(IllegalMove):
                game.apply(state, seat, illegal)
            with pytest.raises(MalformedMove):
                game.apply(state, seat, rng.choice(MALFORMED))
            idle = [s for s in SEATS if s not in awaited]
            if idle:
                with pytest.raises(IllegalMove):
                    game.apply(state, idle[0], legal[0])
            state = game.apply(state, seat, rng.choice(legal))
        else:
            pytest.fail(f"deal {deal} did not end")
        outcome = game.outcome(state)
        assert outcome is not None and len(outcome.winners) == 1
        view = game.view(state, None)
        winner = outcome.winners[0]
        assert view["spread"][-1]["seat"] == winner
        assert outcome.points(winner) == view["played"][winner] * view["run"] > 0
        assert sum(outcome.points(s) for s in SEATS) == outcome.points(winner)
        cards = [e["card"] for e in view["spread"]] + [c for s in SEATS for c in view["hands"][s]]
        assert sorted(cards) == sorted(CARDS)
        for seat in SEATS:
            with pytest.raises(IllegalMove):
                game.apply(state, seat, PASS)
        winners.add(winner)
    assert winners == set(SEATS)


def test_a_pick_is_public_only_to_its_own_seat_until_both_have_picked() -> None:
    from engine.registry import get_game

    game = get_game("stucco")
    state = game.deal(5, game.check_options({}), "north")
    card = game.legal_moves(state, "north")[0]
    after = game.apply(state, "north", card)
    assert game.public_move(after, "north", card, "north") == card
    assert game.public_move(after, "north", card, "south") is None
    assert game.public_move(after, "north", card, None) is None
    reply = game.legal_moves(after, "south")[0]
    both = game.apply(after, "south", reply)
    assert game.public_move(both, "north", card, "south") == card
    assert game.public_move(both, "north", card, None) == card
