"""Server frames built from the engine (app/protocol.py): the move structures
of a state frame and the factors of a score line (docs/protocol.md)."""

from __future__ import annotations

import json
from typing import Any

from roomtest import STATE_KEYS

from app.protocol import (
    ChatView,
    OutcomeView,
    RoomView,
    SpectatorsView,
    StateFrame,
    dump,
    move_views,
)
from engine.match import Match
from engine.registry import get_game

TABLE: dict[str, Any] = {"deals": 1, "ready": None, "spectators": SpectatorsView(count=0, names=[]),
                         "chat": ChatView(spectators="off"), "room_options": {}}
"""The table's keys of a view (docs/protocol.md, "state"), as in a new room."""


def _frame(game_id: str, seat: str | None, state: object, legal: list[str]) -> dict:
    game = get_game(game_id)
    frame = StateFrame(
        version=3, room="r", game=game_id, you=seat, phase="playing", to_move=list(game.to_move(state)),
        legal_moves=legal, moves=move_views(game, state, seat, legal),
        view=RoomView(title=game.info.title, seats=[], sides=[], options={}, deal=1, log=[], outcome=None,
                      history=[], totals={}, match_winners=[], seed=None, board=game.view(state, seat),
                      **TABLE),
    )
    out: dict = json.loads(dump(frame))
    return out


def test_a_state_frame_carries_each_legal_move_with_its_structure() -> None:
    game = get_game("romeo-and-juliet")
    state = Match.new("romeo-and-juliet", {}, 21).state
    legal = list(game.legal_moves(state, "red"))
    frame = _frame("romeo-and-juliet", "red", state, legal)
    assert set(frame) == STATE_KEYS
    assert frame["moves"] == game.move_structures(state, "red", legal)
    assert [m["move"] for m in frame["moves"]] == frame["legal_moves"]
    assert {m["kind"] for m in frame["moves"]} == {"move"} and all("to" in m for m in frame["moves"])


def test_no_move_structures_without_legal_moves() -> None:
    state = Match.new("suitors", get_game("suitors").check_options({}), 3).state
    assert _frame("suitors", None, state, [])["moves"] == []
    assert move_views(get_game("suitors"), state, "JC", []) == []
    # A frame built without them (an older room) has the key, empty.
    game = get_game("suitors")
    bare = StateFrame(version=0, room="r", game="suitors", you=None, phase="waiting", to_move=[],
                      legal_moves=[], view=RoomView(title="", seats=[], sides=[], options={}, deal=1, log=[],
                                                    outcome=None, history=[], totals={}, match_winners=[],
                                                    seed=None, board=game.view(state, None), **TABLE))
    assert json.loads(dump(bare))["moves"] == []


def test_score_line_factors_reach_the_wire_only_where_there_are_some() -> None:
    game = get_game("stucco")
    state = Match.new("stucco", {"target": 100}, 12).state
    while game.to_move(state):
        seat = game.to_move(state)[0]
        state = game.apply(state, seat, game.legal_moves(state, seat)[0])
    outcome = game.outcome(state)
    assert outcome is not None
    wire = json.loads(OutcomeView.model_validate(outcome.to_json()).model_dump_json())
    assert wire == outcome.to_json()
    winner = next(s for s in wire["scores"] if s["side"] in wire["winners"])
    loser = next(s for s in wire["scores"] if s["side"] not in wire["winners"])
    (line,) = winner["lines"]
    a, b = line["factors"]
    assert a["value"] * b["value"] == line["points"] == winner["points"] > 0
    assert (a["label"], b["label"]) == ("cards played", "in the last turn")
    assert "factors" not in loser["lines"][0]


def test_frame_text_is_ascii_and_reads_back_whatever_the_characters() -> None:
    """``app.rooms._encode``, which every state frame is built from: ASCII
    out, the same value back, for text with quotes, backslashes and control
    characters, Latin-1 letters, characters up to U+FFFF (an en dash, the
    suits) and beyond (a playing card, an emoji), alone or mixed."""
    import random

    from app.rooms import _encode

    pool = ([chr(c) for c in range(32, 127)] + [chr(c) for c in range(0x80, 0x100)]
            + ["–", "♠", "♥", "♦", "♣", "\ufffd", "🃏", "😀", "\U00010000", "\U0010ffff", '"', "\\", "\n"])
    rng = random.Random(3)
    for _ in range(2000):
        key = "".join(rng.choices(pool, k=rng.randint(0, 4)))
        value = {key: ["".join(rng.choices(pool, k=rng.randint(0, 12)))],
                 "side": rng.choice(["North–South", "Zoë", "Ånne 🃏", "plain"])}
        text = _encode(value)
        assert text.isascii() and json.loads(text) == value, (value, text)
    assert _encode({"side": "North–South"}) == '{"side":"North\\u2013South"}'
