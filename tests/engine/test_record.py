"""Match records (engine/record.py, docs/notation.md "Match records"): the text
round-trips, replays through the engine, refuses bad records with clear
messages and holds nothing hidden."""

from __future__ import annotations

import dataclasses
import random
import re
from pathlib import Path
from typing import Any

import pytest

from engine.base import IllegalMove, MoveError
from engine.match import Deal, Match, MatchError
from engine.record import (
    MoveRecord,
    RecordError,
    deal_states,
    format_record,
    play_again,
    read_record,
    record_of,
    replay,
    write_record,
)
from engine.registry import GAMES, get_game

DOC = Path(__file__).resolve().parents[2] / "docs/notation.md"

SEATS = {"red": {"name": "Ann", "kind": "human"},
         "black": {"name": "Computer (strong)", "kind": "computer", "level": "strong"}}
META = {"date": "2025-03-01", "room": "9KAwYcM-o3lNp7BP"}
SHORT = 4970
"""A seed whose Get Stuck match, played by :func:`random_match` with
``random.Random(SHORT)``, is short: 11 and 8 moves (docs/notation.md shows it)."""


def play_deal(m: Match, rng: random.Random, cap: int | None = None) -> Match:
    """``m`` after random legal moves until the deal is over (or ``cap`` moves)."""
    game = m.game
    n = 0
    while not m.deal_over and (cap is None or n < cap):
        seat = rng.choice(game.to_move(m.state))
        m = m.play(seat, rng.choice(game.legal_moves(m.state, seat)))
        n += 1
    return m


def random_match(m: Match, rng: random.Random, cap: int | None = None,
                 openings: list[str] | None = None) -> Match:
    """``m`` played on with random legal moves to the end of the match, or
    until ``cap`` moves in all; ``openings`` collects each deal's opening
    position text."""
    left = cap
    while True:
        if openings is not None:
            openings.append(m.game.to_text(m.state))
        before = len(m.current.moves)
        m = play_deal(m, rng, left)
        if left is not None:
            left -= len(m.current.moves) - before
        if not m.deal_over or m.over or (left is not None and left <= 0):
            return m
        m = m.next_deal()


def seat_info(game_id: str, options: dict[str, Any], rng: random.Random) -> dict[str, dict[str, str | None]]:
    """Random seat holders, some unknown, names with quotes, backslashes and
    symbols to exercise the escaping."""
    out: dict[str, dict[str, str | None]] = {}
    for seat in get_game(game_id).seats(options):
        pick = rng.randrange(4)
        if pick == 0:
            out[seat] = {"name": f"Computer ({rng.choice(['easy', 'medium', 'strong'])})",
                         "kind": "computer", "level": rng.choice(["easy", "medium", "strong"])}
        elif pick == 1:
            out[seat] = {"name": rng.choice(['Ann "the Fox"', "Bob \\ Ø", "Zoë ♥", "a]b[c"]),
                         "kind": "human"}
        elif pick == 2:
            out[seat] = {"name": "Eve", "kind": "human", "level": "easy"}
    return out


def outcome_of(d: Deal) -> tuple[tuple[str, ...], tuple[tuple[str, int], ...]]:
    """The winners and ``(side, points)`` of a finished deal."""
    assert d.outcome is not None
    return d.outcome.winners, tuple((s.side, s.points) for s in d.outcome.scores)


def written(m: Match, **kw: Any) -> str:
    """The record text of ``m``, only its finished deals while it is in play."""
    return write_record(m, finished_only=not m.over, **kw)


# (game, raw options, matches, move cap): about 2,000 matches in all. Suitors games
# played at random are long (450 moves on average), so they are fewer. A
# match capped at a number of moves is still in play: its record holds only
# its finished deals.
CASES = [
    ("get-stuck", {}, 450, None),
    ("get-stuck", {"deals": 6}, 80, None),
    ("get-stuck-4", {}, 150, None),
    ("romeo-and-juliet", {}, 80, None),
    ("romeo-and-juliet", {}, 150, 40),
    ("stucco", {"target": 1}, 670, None),
    ("stucco", {"target": 40}, 150, None),
    ("stucco", {}, 150, 100),
    ("suitors", {}, 30, None),
    ("suitors", {}, 60, 60),
    ("suitors", {"players": 3}, 12, None),
    ("suitors", {"players": 4}, 12, None),
    ("suitors", {"variant": "colours"}, 15, None),
    ("suitors", {"variant": "big"}, 3, None),
]


@pytest.mark.parametrize(("game_id", "raw", "count", "cap"), CASES)
def test_round_trip_of_random_matches(game_id: str, raw: dict[str, Any], count: int,
                                      cap: int | None) -> None:
    """write → read → write gives the same text, and the replay reproduces
    every deal (seed, starter, moves, outcome) and writes the same text."""
    game = get_game(game_id)
    options = game.check_options(raw)
    rng = random.Random(f"{game_id}{raw}{cap}")
    finished = over = 0
    for _ in range(count):
        m = random_match(Match.new(game_id, options, rng.getrandbits(63)), rng, cap)
        seats = seat_info(game_id, options, rng)
        meta = {k: v for k, v in META.items() if rng.random() < 0.5}
        text = written(m, seats=seats, meta=meta)
        record = read_record(text, game=game_id)
        assert format_record(record) == text
        deals = (*m.finished, m.current) if m.deal_over else m.finished
        assert [(d.seed, d.starter, tuple((x.seat, x.move) for x in d.moves), d.winners, d.scores)
                for d in record.deals] == [
            (d.seed, d.starter, d.moves, *outcome_of(d)) for d in deals]
        assert record.over == m.over and (record.seed == m.seed) == m.over
        finished += len(record.deals)
        if not record.deals:
            with pytest.raises(RecordError, match="no finished deal"):
                replay(record)
            continue
        again = replay(record)
        assert [(d.seed, d.starter, d.moves, d.outcome) for d in (*again.finished, again.current)] \
            == [(d.seed, d.starter, d.moves, d.outcome) for d in deals]
        assert written(again, seats=seats, meta=meta) == text
        if m.over:
            over += 1
            assert again.to_json() == m.to_json() and again.state == m.state
    if cap is None:
        assert over == count and finished >= count
    else:
        assert over < count  # some matches are still in play


def test_a_record_reads_as_documented() -> None:
    """The record of a Get Stuck match: tags, seats, seeds, numbered moves,
    deal separators with the outcome."""
    game = get_game("get-stuck")
    m = random_match(Match.new("get-stuck", game.check_options({}), SHORT), random.Random(SHORT))
    text = write_record(m, seats=SEATS, meta=META)
    lines = text.splitlines()
    assert lines[:10] == [
        '[Game "get-stuck"]',
        '[Options "deals=2"]',
        '[Seat "red" name="Ann" kind="human"]',
        '[Seat "black" name="Computer (strong)" kind="computer" level="strong"]',
        '[Date "2025-03-01"]',
        '[Room "9KAwYcM-o3lNp7BP"]',
        '[Seed "4970"]',
        '[Deals "2"]',
        f'[Totals "red={m.totals()["red"]} black={m.totals()["black"]}"]',
        f'[Result "{" ".join(m.winners())}"]',
    ]
    d1 = m.finished[0]
    assert lines[10] == ""
    assert lines[11] == f'[Deal "1" starter="{d1.starter}" seed="{d1.seed}"]'
    assert lines[12:12 + len(d1.moves)] == [f"{i}. {s} {mv}" for i, (s, mv) in enumerate(d1.moves, 1)]
    o = d1.outcome
    assert o is not None
    assert lines[12 + len(d1.moves)] == (
        f'[End "1" winners="{" ".join(o.winners)}" scores="red={o.points("red")}'
        f' black={o.points("black")}" reason="{o.reason}"]')
    assert text.endswith("]\n") and "\n\n\n" not in text


def doc_example() -> str:
    doc = DOC.read_text()
    section = doc[doc.index("## Match records"):]
    return re.findall(r"```\n(\[Game .*?)```", section, re.S)[0]


def test_the_example_in_the_docs_replays() -> None:
    """docs/notation.md: the example record is read, replayed (every outcome
    checked) and written back exactly; without its comments it is the
    record the engine writes of that match."""
    text = doc_example()
    record = read_record(text)
    assert format_record(record) == text
    m = replay(record)
    assert m.over and m.seed == record.seed
    seats = {s.seat: {"name": s.name, "kind": s.kind, "level": s.level} for s in record.seats}
    meta = {"date": record.date, "room": record.room}
    bare = dataclasses.replace(record, comments=(), deals=tuple(
        dataclasses.replace(d, comments=(), moves=tuple(dataclasses.replace(mv, comments=())
                                                        for mv in d.moves))
        for d in record.deals))
    assert write_record(m, seats=seats, meta=meta) == format_record(bare)
    assert any(mv.comments for d in record.deals for mv in d.moves) and record.comments
    # The refusal the page quotes.
    quoted = "deal 2, move 3: black's move 'a1' is illegal: the 9♣ at a1 is not in line with the gap at e7"
    assert " ".join(DOC.read_text().split()).count(quoted) == 1
    assert _error(text.replace("\n3. black e6\n", "\n3. black a1\n")) == quoted


# ---- comments ---------------------------------------------------------------------------
def small_record() -> str:
    game = get_game("get-stuck")
    m = random_match(Match.new("get-stuck", game.check_options({}), SHORT), random.Random(SHORT))
    return write_record(m, seats=SEATS, meta=META)


def test_comments_are_kept_where_they_stand() -> None:
    text = small_record()
    text = text.replace('[Result', '; exported by hand\n[Result', 1)
    text = text.replace('[Deals "2"]', '[Deals "2"] {a header comment}')
    text = re.sub(r'(\[Deal "1"[^\n]*\])', r'\1\n{Red opens;\nthe deal} ; first to move', text)
    text = text.replace("\n2. ", " {after move 1} ; said {so}\n{and more}\n2. ", 1)
    record = read_record(text)
    assert record.comments == ("a header comment", "exported by hand")
    d1 = record.deals[0]
    assert d1.comments == ("Red opens;\nthe deal", "first to move")
    assert d1.moves[0].comments == ("after move 1", "said {so}", "and more")
    assert all(not mv.comments for mv in d1.moves[1:])
    again = format_record(record)
    assert read_record(again) == record and format_record(read_record(again)) == again
    assert "1. black" in again or "1. red" in again
    assert re.search(r"\n1\. \w+ \w+ \{after move 1\} ; said \{so\}\n\{and more\}\n2\. ", again)
    assert replay(record).to_json() == replay(read_record(text)).to_json()


def test_comments_added_to_a_record_are_written() -> None:
    record = read_record(small_record())
    d1 = record.deals[0]
    moves = (dataclasses.replace(d1.moves[0], comments=("  spaced  ", "{x} y}")), *d1.moves[1:])
    record = dataclasses.replace(record, deals=(dataclasses.replace(d1, moves=moves),
                                                *record.deals[1:]))
    text = format_record(record)
    assert re.search(r"\n1\. \w+ \w+ \{spaced\} ; \{x\} y\}\n2\. ", text)
    assert read_record(text).deals[0].moves[0].comments == ("spaced", "{x} y}")
    bad = dataclasses.replace(record, comments=("a }\nb",))
    with pytest.raises(RecordError, match="both '}' and a line break"):
        format_record(bad)


# ---- bad records ------------------------------------------------------------------------
def move_line(text: str, deal: int, move: int) -> tuple[int, int]:
    """The span of the line of ``move`` in ``deal``."""
    start = text.index(f'[Deal "{deal}"')
    m = re.compile(rf"^{move}\. .*$", re.M).search(text, start)
    assert m is not None
    return m.span()


def test_an_illegal_move_is_refused_naming_it() -> None:
    text = small_record()
    record = read_record(text)
    d2 = record.deals[1]
    # Deal 2, move 3: a square of the right form that is not a legal move now.
    states = deal_states(record, 2)
    game = get_game("get-stuck")
    seat = d2.moves[2].seat
    bad = next(sq for sq in ("a1", "d4", "g7", "c3", "e5", "b6")
               if sq not in game.legal_moves(states[2], seat))
    with pytest.raises(IllegalMove) as engine_error:
        game.apply(states[2], seat, bad)
    a, b = move_line(text, 2, 3)
    broken = text[:a] + f"3. {seat} {bad}" + text[b:]
    record = read_record(broken)  # it reads: the moves are only checked by the replay
    with pytest.raises(RecordError) as e:
        replay(record)
    assert str(e.value) == f"deal 2, move 3: {seat}'s move '{bad}' is illegal: {engine_error.value}"
    with pytest.raises(RecordError, match="deal 2, move 3"):
        deal_states(record, 2)
    # Not a move at all, and a move by the wrong seat.
    malformed = text[:a] + f"3. {seat} z9" + text[b:]
    with pytest.raises(RecordError, match=rf"^deal 2, move 3: {seat}'s move 'z9' is not a move: "):
        replay(read_record(malformed))
    other = "red" if seat == "black" else "black"
    wrong_seat = text[:a] + f"3. {other} {d2.moves[2].move}" + text[b:]
    with pytest.raises(RecordError, match=rf"^deal 2, move 3: {other}'s move .* is illegal:"
                                          rf" it is {seat}'s turn, not {other}'s"):
        replay(read_record(wrong_seat))


def test_a_move_too_many_or_too_few() -> None:
    text = small_record()
    record = read_record(text)
    n = len(record.deals[0].moves)
    a, b = move_line(text, 1, n)
    with pytest.raises(RecordError, match=rf"^deal 1 is not over after its last move, move {n - 1}"):
        replay(read_record(text[:a] + text[b + 1:]))
    last = record.deals[0].moves[-1]
    extra = text[:b] + f"\n{n + 1}. {last.seat} {last.move}" + text[b:]
    with pytest.raises(RecordError, match=rf"^deal 1, move {n + 1}: .* is illegal: the deal is over"):
        replay(read_record(extra))


def test_every_truncation_is_refused() -> None:
    """Any text cut short of the end of the record is refused, and says so
    where it can tell."""
    text = small_record()
    for cut in range(len(text.rstrip())):
        with pytest.raises(RecordError) as e:
            read_record(text[:cut])
        message = str(e.value)
        assert message
        if "[Deal" in text[:cut]:
            assert "truncated" in message or "not a tag" in message or "not a move" in message, message
    assert "truncated: deal 2 ends after move 4 with no [End] tag" in _error(
        text[:move_line(text, 2, 4)[1]])
    assert 'truncated: [Deals "2"] announces 2 deals, but it holds 1' in _error(
        text[:text.index('[Deal "2"')])
    assert "no [Deals] tag (is it truncated?)" in _error(text[:text.index("[Deals")])
    assert "never closed" in _error(text + "{a comment")


def _error(text: str, **kw: Any) -> str:
    with pytest.raises(RecordError) as e:
        replay(read_record(text, **kw))
    return str(e.value)


def test_a_record_of_another_game_or_an_unknown_game() -> None:
    text = small_record()
    assert _error(text, game="stucco") == "this is a record of get-stuck, not of stucco"
    # asked for a game there is none of (break-it pass: "not of chess")
    assert _error(text, game="chess").startswith("unknown game 'chess' asked for: the games are ")
    assert read_record(text, game="get-stuck").game == "get-stuck"
    message = _error(text.replace('"get-stuck"', '"chess"', 1))
    assert message.startswith("unknown game 'chess': the games are ")
    assert all(g in message for g in GAMES)
    assert _error("") == "the record has no [Game] tag (is it truncated?)"


@pytest.mark.parametrize(("old", "new", "message"), [
    ('[Options "deals=2"]', '[Options "deals=3"]',
     "[Options]: option 'deals' must be an even number, not 3"),
    ('[Options "deals=2"]', f'[Options "deals={"9" * 4301}"]',
     "[Options]: option 'deals' must be a whole number"),
    ('[Options "deals=2"]', '[Options "decks=2"]', "[Options]: unknown option 'decks' for get-stuck"),
    ('[Options "deals=2"]', '[Options "deals"]', "[Options]: 'deals' is not written name=value"),
    ('[Options "deals=2"]', '[Options "seed=4"]', "[Options]: the seed is not an option here"),
    ('[Seed "4970"]', '[Seed "-1"]', "[Seed] must be a whole number from 0 to 9223372036854775807"),
    ('[Seed "4970"]', '[Seed "04970"]', "[Seed] must be a whole number"),
    ('[Seed "4970"]', '[Seed "9223372036854775808"]', "[Seed] must be a whole number"),
    ('[Seed "4970"]', '', "[Result] names the winners of a finished match, but there is no [Seed]"),
    ('[Date "2025-03-01"]', '[Date "2025-13-01"]', "the date must be a day written YYYY-MM-DD"),
    ('[Date "2025-03-01"]', '[Date "1 March"]', "the date must be a day written YYYY-MM-DD"),
    ('[Room "9KAwYcM-o3lNp7BP"]', '[Room "a b"]', "the room id must be 1 to 100 letters"),
    ('[Seat "red" name="Ann" kind="human"]', '[Seat "blue" name="Ann"]',
     "line 3: 'blue' is not a seat of get-stuck (red, black)"),
    ('[Seat "red" name="Ann" kind="human"]', '[Seat "red" name="Ann" kind="robot"]',
     "line 3: the kind of seat red must be human or computer, not 'robot'"),
    ('[Seat "red" name="Ann" kind="human"]', '[Seat "red" name="Ann" token="s3cr3t"]',
     "line 3: unknown field token= in [Seat]"),
    ('[Seat "red" name="Ann" kind="human"]', '[Seat "black"]', "line 4: seat black is there twice"),
    ('[Seat "red" name="Ann" kind="human"]', f'[Seat "red" name="{"A" * 101}"]',
     "line 3: the name of seat red is 101 characters long: at most 100"),
    ('[Deals "2"]', '[Deals "3"]', 'the record is truncated: [Deals "3"] announces 3 deals'),
    ('[Deals "2"]', '[Deals "two"]', "[Deals] must be a whole number"),
    ('[Deals "2"]', '[Deals "2"]\n[Deals "2"]', "line 9: the [Deals] tag is there twice"),
    ('[Deals "2"]', '[Deals "2" x="1"]', "line 8: the [Deals] tag takes one value"),
    ('[Deals "2"]', '[Round "2"]', "line 8: unknown tag [Round]"),
    ('[Deals "2"]', 'Deals 2', "line 8: unexpected text 'Deals 2'"),
    ('[Deals "2"]', '[Deals 2]', "line 8: not a tag: '[Deals 2]'"),
    ('[Result "red"]', '[Result "black"]', "[Result \"black\"] does not follow from the totals"),
    ('[Result "red"]', '[Result "red black"]', "[Result \"red black\"] does not follow from the totals"),
    ('[Result "red"]', '[Result "*"]', '[Result "*"] says the match is in play, but there is a [Seed]'),
    ('[Result "red"]', '[Result "black red"]', "[Result] must list each side once, in the order red black"),
    ('[Result "red"]', '[Result "red red"]', "[Result] must list each side once, in the order red black"),
    ('[Result "red"]', '[Result "green"]', "[Result]: 'green' is not a side of this game (red, black)"),
    ('[Totals "red=241 black=107"]', '[Totals "red=240 black=107"]',
     "[Totals \"red=240 black=107\"] does not add up the deals' scores (red=241 black=107)"),
    ('[Totals "red=241 black=107"]', '[Totals "black=107 red=241"]',
     "[Totals] must give the sides red black in this order"),
    ('[Totals "red=241 black=107"]', '[Totals "red=241"]',
     "[Totals] must give the sides red black in this order"),
    ('[Seed "4970"]\n[Deals "2"]\n[Totals "red=241 black=107"]\n[Result "red"]',
     '[Given "1"]\n[Deals "2"]\n[Totals "red=241 black=107"]\n[Result "*"]',
     "[Given] belongs only in the record of a finished match"),
    ('[Seed "4970"]', '[Seed "4970"]\n[Given "3"]', "[Given] must be a whole number from 1 to 2"),
    # Numbers longer than Python turns into an int (4,300 digits) are refused as any bad number.
    ('[Seed "4970"]', f'[Seed "{"9" * 5000}"]', "[Seed] must be a whole number from 0 to"),
    ('[Deals "2"]', f'[Deals "{"9" * 4301}"]', "[Deals] must be a whole number"),
    ('[Deals "2"]', '[Deals "\u0662"]', "[Deals] must be a whole number"),  # an Arabic-Indic 2
])
def test_bad_header_values(old: str, new: str, message: str) -> None:
    text = small_record()
    assert old in text
    assert message in _error(text.replace(old, new, 1))


def test_bad_deal_tags_and_moves() -> None:
    text = small_record()
    record = read_record(text)
    d1 = record.deals[0]
    cases = [
        (f'[Deal "1" starter="{d1.starter}"', f'[Deal "2" starter="{d1.starter}"',
         "line 12: expected [Deal \"1\" …] (deals are numbered from 1 in order), not deal '2'"),
        (f'starter="{d1.starter}" seed="{d1.seed}"', f'starter="green" seed="{d1.seed}"',
         "line 12: deal 1's starter 'green' is not a seat of get-stuck"),
        (f'starter="{d1.starter}" seed="{d1.seed}"', f'starter="{d1.starter}"',
         '[Deal "1" starter="<seat>" seed="<deal seed>"]'),
        ("\n1. ", "\n2. ", "deal 1: move 2 where move 1 was expected"),
        ("\n1. ", f"\n{'9' * 4301}. ", "not a move"),
        ("\n1. ", "\n\u0661. ", "unexpected text"),
        ("\n1. ", "\n1. green ", "deal 1, move 1: 'green' is not a seat of get-stuck"),
        ('[End "1" winners="', '[End "2" winners="', 'the [End] of deal 1 must read [End "1" …]'),
        ('[End "1" winners="', '[End "1" winner="', '[End "1" winners="<sides or ->"'),
        ('[End "1" winners="red"', '[End "1" winners="blue"', "'blue' is not a side"),
        ('scores="red=', 'scores="red=x', "deal 1's scores: the points of red must be a whole number"),
        ('[Deal "2"', '[End "1" winners="-" scores="red=0 black=0"]\n[Deal "2"',
         "an [End] tag without its [Deal]"),
        ('[Deal "2"', '1. red d4\n[Deal "2"', "is outside a deal"),
        ('[Deal "2"', '{late}\n[Deal "2"', "a comment after the [End] of deal 1"),
        ('[Deal "2"', '[Seed "4"]\n[Deal "2"', "the [Seed] tag belongs in the header"),
    ]
    for old, new, message in cases:
        assert old in text, old
        assert message in _error(text.replace(old, new, 1)), (new, _error(text.replace(old, new, 1)))
    start = text.index('[End "1"')
    no_end = text[:start] + text[text.index("\n", start) + 1:]
    assert "deal 1 has no [End] tag before the next [Deal]" in _error(no_end)


def test_an_outcome_the_replay_contradicts() -> None:
    text = small_record()
    record = read_record(text)
    d1 = record.deals[0]
    red, black = (p for _, p in d1.scores)
    # Scores and totals changed together still read, but the replay refuses.
    changed = text.replace(f'scores="red={red} black={black}"', f'scores="red={red + 1} black={black}"')
    changed = changed.replace(f'[Totals "red={record.totals[0][1]}',
                              f'[Totals "red={record.totals[0][1] + 1}')
    message = _error(changed)
    assert message == (f"deal 1: the record gives the outcome winners {' '.join(d1.winners)},"
                       f" red={red + 1} black={black}, but the moves give winners"
                       f" {' '.join(d1.winners)}, red={red} black={black}")
    # The winners.
    loser = "red" if d1.winners == ("black",) else "black"
    assert "the moves give winners" in _error(text.replace(f'winners="{d1.winners[0]}"',
                                                           f'winners="{loser}"', 1))
    # A deal seed the match seed does not give.
    assert (f"deal 1: the record gives seed {d1.seed + 1} and starter {d1.starter}, but the match"
            f" seed deals it from seed {d1.seed} with starter {d1.starter}") == _error(
        text.replace(f'seed="{d1.seed}"', f'seed="{d1.seed + 1}"'))
    # A match over too early, or not over at the end.
    m = replay(record)
    assert m.over
    one = dataclasses.replace(record, deals=record.deals[:1], totals=tuple(
        (s, p) for s, p in d1.scores), result=tuple(
        s for s, p in d1.scores if p == max(p for _, p in d1.scores)))
    assert "the record ends after deal 1, but the match is not over" in _error(format_record(one))


def test_a_match_in_play_is_not_written_whole() -> None:
    game = get_game("get-stuck")
    m = Match.new("get-stuck", game.check_options({}), 5)
    with pytest.raises(RecordError, match="finished_only=True"):
        write_record(m)
    text = write_record(m, finished_only=True)
    assert '[Deals "0"]' in text and '[Result "*"]' in text and "Seed" not in text
    with pytest.raises(RecordError, match="no finished deal to replay"):
        replay(read_record(text))


@pytest.mark.parametrize(("seats", "meta", "message"), [
    ({"red": {"name": "Ann", "token": "s3cr3t"}}, {}, "unknown field 'token' for seat red"),
    ({"blue": {"name": "Ann"}}, {}, "'blue' is not a seat of get-stuck"),
    ({"red": {"kind": "robot"}}, {}, "the kind of seat red must be human or computer"),
    ({"red": {"name": "Ann\nBob"}}, {}, "the name of seat red must be a line of text"),
    ({"red": {"name": " "}}, {}, "the name of seat red must be a line of text"),
    ({"red": {"name": "Ann\x7f"}}, {}, "the name of seat red must be a line of text"),
    ({"red": {"name": "Ann\x85Bob"}}, {}, "the name of seat red must be a line of text"),
    ({"red": {"level": "easy\u2028"}}, {}, "the level of seat red must be a line of text"),
    ({}, {"site": "x"}, "unknown record field 'site'"),
    ({}, {"date": "yesterday"}, "the date must be a day written YYYY-MM-DD"),
    ({}, {"room": "../etc"}, "the room id must be"),
])
def test_bad_arguments_to_write_record(seats: Any, meta: Any, message: str) -> None:
    game = get_game("get-stuck")
    m = random_match(Match.new("get-stuck", game.check_options({}), SHORT), random.Random(SHORT))
    with pytest.raises(RecordError, match=re.escape(message)):
        write_record(m, seats=seats, meta=meta)


# ---- hidden information -----------------------------------------------------------------
def test_a_suitors_record_before_the_end_reveals_nothing() -> None:
    """Before the end of a Suitors match (one deal), the record holds no card
    that is face down, no seed, and nothing that depends on the deal: it is
    the same text at every position of the deal and for any seed."""
    game = get_game("suitors")
    options = game.check_options({"players": 3})
    seats = {"JS": {"name": "Ann", "kind": "human"}}
    rng = random.Random(7)
    texts = set()
    for seed in (2**40 + 3, 2**62 + 77):
        m = Match.new("suitors", options, seed)
        for _ in range(60):
            text = write_record(m, seats=seats, meta=META, finished_only=True)
            texts.add(text)
            assert str(m.seed) not in text and str(m.current.seed) not in text
            hidden = [c.upper() for c in m.state.cells if c.islower()] + list(m.state.aside)
            tokens = set(re.findall(r"[A-Z0-9]+", text))
            assert hidden and not tokens & set(hidden)
            seat = game.to_move(m.state)[0]
            m = m.play(seat, rng.choice(game.legal_moves(m.state, seat)))
        with pytest.raises(RecordError, match="still in play"):
            write_record(m)
    assert len(texts) == 1
    # Once over, it shows everything: the seed and every move.
    m = play_deal(m, rng)
    text = write_record(m, seats=seats)
    assert f'[Seed "{m.seed}"]' in text and f'seed="{m.current.seed}"' in text
    assert replay(read_record(text)).state == m.state


def test_a_stucco_record_in_play_holds_only_the_finished_deals() -> None:
    """The finished deals of a Stucco match in play are written with their own
    seeds (their picks were shown); the deal in play, its secret pick and the
    match seed are not, so the record does not change while that deal goes
    on. A spectator has seen every move written."""
    game = get_game("stucco")
    options = game.check_options({"target": 1000})
    rng = random.Random(11)
    m = Match.new("stucco", options, 2**62 + 12345)
    for _ in range(3):
        m = play_deal(m, rng)
        after_deal = write_record(m, finished_only=True)
        m = m.next_deal()
        assert write_record(m, finished_only=True) == after_deal
        m = m.play("north", rng.choice(game.legal_moves(m.state, "north")))  # a secret pick
        text = write_record(m, finished_only=True)
        assert text == after_deal
        assert str(m.seed) not in text and str(m.current.seed) not in text
        record = read_record(text)
        assert [d.seed for d in record.deals] == [d.seed for d in m.finished]
        for d, states in zip(record.deals, [deal_states(record, d.number) for d in record.deals],
                             strict=True):
            final = states[-1]
            for mv in d.moves:
                assert game.public_move(final, mv.seat, mv.move, None) == mv.move
        m = play_deal(m, rng)
    replayed = replay(read_record(write_record(m, finished_only=True)))
    assert [d.outcome for d in replayed.finished] == [d.outcome for d in m.finished]
    assert replayed.current.outcome == m.current.outcome


# ---- playing a deal again ---------------------------------------------------------------
@pytest.mark.parametrize(("game_id", "raw"), [
    ("get-stuck", {"deals": 4}), ("get-stuck-4", {}), ("romeo-and-juliet", {}),
    ("stucco", {"target": 60}), ("suitors", {"players": 4}),
])
def test_play_a_deal_again(game_id: str, raw: dict[str, Any]) -> None:
    """A deal of a record, played again, has the same layout and starter; the
    rest of the match deals on in the game's rotation."""
    game = get_game(game_id)
    options = game.check_options(raw)
    rng = random.Random(game_id)
    openings: list[str] = []
    m = random_match(Match.new(game_id, options, 99), rng, openings=openings)
    record = read_record(write_record(m))
    assert len(record.deals) == len(openings)
    for d in record.deals:
        again = play_again(record, d.number, 12345)
        assert game.to_text(again.state) == openings[d.number - 1]
        assert again.current.seed == d.seed and again.current.starter == d.starter
        assert game.to_move(again.state) == game.to_move(deal_states(record, d.number)[0])
        assert again.current.moves == () and again.given == ((d.seed, d.starter),)
        # Its replay, and the JSON a server keeps, deal the same again.
        assert Match.from_json(again.to_json()).state == again.state
        done = random_match(again, rng)
        rotation = game.seats(options) if game_id != "romeo-and-juliet" else ("red",)
        assert [x.starter for x in (*done.finished, done.current)] == [
            rotation[(rotation.index(d.starter) + k) % len(rotation)]
            for k in range(len(done.finished) + 1)]
        text = write_record(done)
        assert '[Given "1"]' in text
        assert replay(read_record(text)).to_json() == done.to_json()
        assert Match.from_json(done.to_json()).to_json() == done.to_json()


def test_a_deal_cannot_be_given_to_a_seat_that_never_starts() -> None:
    with pytest.raises(MatchError, match="'black' never starts a deal of romeo-and-juliet"):
        Match.new_from_deal("romeo-and-juliet", {}, 5, "black", 6)
    with pytest.raises(MatchError, match="at least one deal"):
        Match.new_from_deals("get-stuck", {"deals": 2}, [], 6)
    with pytest.raises(MatchError, match="from 0 to 2"):
        Match.new_from_deal("get-stuck", {"deals": 2}, -1, "red", 6)
    record = read_record(small_record())
    with pytest.raises(RecordError, match="the record has no deal 3: it holds deals 1 to 2"):
        play_again(record, 3, 1)
    with pytest.raises(RecordError, match="there is no deal 0: deals are numbered from 1"):
        record.deal(0)
    romeo = Match.new("romeo-and-juliet", {}, 3)
    romeo = play_deal(romeo, random.Random(3))
    text = write_record(romeo).replace('starter="red"', 'starter="black"')
    assert ("deal 1: the record gives seed" in _error(text)
            and "with starter red" in _error(text))
    with pytest.raises(RecordError, match="deal 1: 'black' never starts a deal of romeo-and-juliet"):
        play_again(read_record(text), 1, 5)


def test_deal_states_step_through_a_deal() -> None:
    record = read_record(small_record())
    game = get_game("get-stuck")
    for d in record.deals:
        states = deal_states(record, d.number)
        assert len(states) == len(d.moves) + 1
        assert states[0] == game.deal(d.seed, record.opts, d.starter)
        for before, after, mv in zip(states, states[1:], d.moves, strict=False):
            assert game.apply(before, mv.seat, mv.move) == after
        outcome = game.outcome(states[-1])
        assert outcome is not None and outcome.winners == d.winners


def test_moves_in_a_record_are_the_engine_strings() -> None:
    """Moves with spaces (Suitors, Romeo and Juliet swaps) are kept verbatim,
    and anything the engine would not take is refused by the replay."""
    game = get_game("suitors")
    m = random_match(Match.new("suitors", game.check_options({}), 3), random.Random(3), 30)
    assert record_of(m, finished_only=True).deals == ()
    m = play_deal(m, random.Random(4))
    text = write_record(m)
    assert re.search(r"\n\d+\. J[SC] reveal [a-i][1-5]\n", text)
    record = read_record(text)
    first = record.deals[0].moves[0]
    assert isinstance(first, MoveRecord) and first.move.startswith("reveal ")
    doubled = text.replace(f"1. {first.seat} {first.move}",
                           f"1. {first.seat} {first.move.replace(' ', '  ')}", 1)
    message = _error(doubled)
    assert message.startswith(f"deal 1, move 1: {first.seat}'s move") and "is not a move" in message
    with pytest.raises(MoveError):
        game.apply(deal_states(record, 1)[0], first.seat, first.move.replace(" ", "  "))


def test_line_numbers_and_line_ends() -> None:
    """Errors count lines across comments of every kind; Windows line ends and
    a byte-order mark read the same."""
    text = small_record()
    assert read_record("\ufeff" + text.replace("\n", "\r\n")) == read_record(text)
    assert text.splitlines()[7] == '[Deals "2"]'
    moved = text.replace('[Deals "2"]', '; a note\n{two\nlines} ; and more\n[Deals 2]')
    assert _error(moved).startswith("line 11: not a tag: '[Deals 2]'")
