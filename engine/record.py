"""Match records: one match as text, in the spirit of PGN (``docs/notation.md``,
"Match records").

A record is a header of tag pairs (``[Game "get-stuck"]``), then each deal: a
``[Deal …]`` tag with its number, starter and seed, its moves one per line
(``12. black d3``, in the game's notation, exactly the strings of
``legal_moves`` and ``apply``), and an ``[End …]`` tag with its outcome.
Comments (``{…}`` or ``;`` to the end of the line) may follow the header, a
``[Deal]`` tag or a move.

What a record holds is only what may be shown:

* once the match is over: everything, the match seed included;
* before that (``finished_only=True``): the deals already over, each with its
  own seed, but never the match seed (it would reveal every deal to come) nor
  anything of the deal in play (its seed, its face-down cards, a Stucco pick).

:func:`write_record` writes a match, :func:`read_record` parses a text into a
:class:`Record`, :func:`format_record` writes a :class:`Record` back (the same
text for a text it wrote), and :func:`replay` replays a record through
:class:`engine.match.Match`, checking every move and every deal's outcome.
Every problem raises :class:`RecordError` with a sentence saying what is wrong
and where.
"""

from __future__ import annotations

import datetime
import re
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from engine.base import Game, MalformedMove, MoveError, OptionError, Outcome
from engine.cards import derive_seed
from engine.match import Deal, Match, MatchError
from engine.registry import GAMES, get_game

MAX_SEED = 2**63 - 1
KINDS = ("human", "computer")
META_KEYS = ("date", "room", "match")
SEAT_FIELDS = ("name", "kind", "level")


class RecordError(ValueError):
    """A record that cannot be written, read or replayed. The message says what
    is wrong and where (line, deal, move) in words a player can read."""


# ---- the record as data -----------------------------------------------------------------
@dataclass(frozen=True)
class SeatRecord:
    """Who sat at ``seat``: a ``name`` for people, ``kind`` (``"human"`` or
    ``"computer"``) and a computer player's ``level``; each ``None`` if not
    known. Never a token."""

    seat: str
    name: str | None = None
    kind: str | None = None
    level: str | None = None


@dataclass(frozen=True)
class MoveRecord:
    """One move of a deal: the ``seat`` that played it, the ``move`` in the
    game's notation and the comments written after it."""

    seat: str
    move: str
    comments: tuple[str, ...] = ()


@dataclass(frozen=True)
class DealRecord:
    """One finished deal: its 1-based ``number``, ``starter`` (the seat in the
    role of ``Game.starter``: the first mover, in Stucco the dealer), its own
    ``seed``, its ``moves`` in order, and its outcome: ``winners`` (sides,
    empty for a draw), ``scores`` (``(side, points)`` in the game's side order)
    and ``reason`` (the engine's sentence, for people). ``comments`` are those
    written before the first move."""

    number: int
    starter: str
    seed: int
    moves: tuple[MoveRecord, ...]
    winners: tuple[str, ...]
    scores: tuple[tuple[str, int], ...]
    reason: str = ""
    comments: tuple[str, ...] = ()


@dataclass(frozen=True)
class Record:
    """A match record.

    ``game`` is the game id and ``options`` its checked options as sorted
    pairs; ``seats`` lists every seat in turn order. ``deals`` are the deals
    the record holds, all finished. ``totals`` are ``(side, points)`` summed
    over those deals; ``result`` the match winners once the match is over
    (every side tied for the best total), ``None`` while it is in play.
    ``seed`` is the match seed, present exactly when the match is over;
    ``given`` is how many first deals were given rather than dealt from the
    seed (a match that began with a deal played again,
    :meth:`engine.match.Match.new_from_deals`). ``date`` (``YYYY-MM-DD``),
    ``room`` and ``match`` are optional; ``comments`` are those written after
    the header.
    """

    game: str
    options: tuple[tuple[str, Any], ...]
    seats: tuple[SeatRecord, ...]
    deals: tuple[DealRecord, ...]
    totals: tuple[tuple[str, int], ...]
    result: tuple[str, ...] | None
    seed: int | None = None
    given: int = 0
    date: str | None = None
    room: str | None = None
    match: str | None = None
    comments: tuple[str, ...] = ()

    @property
    def opts(self) -> dict[str, Any]:
        """The options as a dict."""
        return dict(self.options)

    @property
    def over(self) -> bool:
        """True for the record of a finished match (it holds the seed)."""
        return self.result is not None

    def deal(self, number: int) -> DealRecord:
        """Deal ``number`` (1-based). Raises :class:`RecordError` if the record
        has no such deal."""
        held = len(self.deals)
        if number < 1:
            raise RecordError(f"there is no deal {number}: deals are numbered from 1")
        if number > held:
            holds = ("no deal yet" if held == 0 else "deal 1" if held == 1
                     else f"deals 1 to {held}")
            raise RecordError(f"the record has no deal {number}: it holds {holds}")
        return self.deals[number - 1]


# ---- from a match -----------------------------------------------------------------------
def record_of(
    match: Match,
    *,
    seats: Mapping[str, Mapping[str, str | None]] | None = None,
    meta: Mapping[str, str | None] | None = None,
    finished_only: bool = False,
) -> Record:
    """The record of ``match``.

    ``seats`` maps a seat to ``{"name", "kind", "level"}`` (any may be left
    out or ``None``); ``meta`` may hold ``date`` (``YYYY-MM-DD``), ``room`` and
    ``match`` (ids of letters, digits, ``-`` and ``_``), ``None`` meaning
    absent. A match that is over gives the whole record, seed included. A match still in play is refused
    unless ``finished_only`` is true; then the record holds only the deals
    already over (with their own seeds) and neither the match seed nor
    anything of the deal in play.

    Raises :class:`RecordError` for a match in play without ``finished_only``,
    an unknown seat or seat field (a token is never written), a kind other
    than human or computer, an unknown ``meta`` key or a bad value.
    """
    game = match.game
    over = match.over
    if not over and not finished_only:
        raise RecordError("the match is still in play: its record may hold only the finished"
                          " deals, without the match seed (pass finished_only=True)")
    done: tuple[Deal, ...] = match.finished + ((match.current,) if match.deal_over else ())
    deals = []
    for number, d in enumerate(done, 1):
        outcome = d.outcome
        assert outcome is not None  # a finished deal has its outcome
        deals.append(DealRecord(
            number, d.starter, d.seed, tuple(MoveRecord(s, m) for s, m in d.moves),
            outcome.winners, _scores(outcome), outcome.reason,
        ))
    info = {k: v for k, v in (meta or {}).items() if v is not None}
    unknown = sorted(set(info) - set(META_KEYS))
    if unknown:
        raise RecordError(f"unknown record field {unknown[0]!r}: the fields are {', '.join(META_KEYS)}")
    return Record(
        game=match.game_id,
        options=match.options,
        seats=_seat_records(game, match.opts, seats or {}),
        deals=tuple(deals),
        totals=tuple(match.totals().items()),
        result=match.winners() if over else None,
        seed=match.seed if over else None,
        given=len(match.given) if over else 0,
        date=_check_date(info["date"]) if "date" in info else None,
        room=_check_id("room", info["room"]) if "room" in info else None,
        match=_check_id("match", info["match"]) if "match" in info else None,
    )


def write_record(
    match: Match,
    *,
    seats: Mapping[str, Mapping[str, str | None]] | None = None,
    meta: Mapping[str, str | None] | None = None,
    finished_only: bool = False,
) -> str:
    """The record of ``match`` as text: ``format_record(record_of(...))``.
    Arguments and errors as :func:`record_of`."""
    return format_record(record_of(match, seats=seats, meta=meta, finished_only=finished_only))


def _scores(outcome: Outcome) -> tuple[tuple[str, int], ...]:
    return tuple((s.side, s.points) for s in outcome.scores)


def _seat_records(game: Game, options: Mapping[str, Any],
                  seats: Mapping[str, Mapping[str, str | None]]) -> tuple[SeatRecord, ...]:
    order = game.seats(options)
    for seat in seats:
        if seat not in order:
            raise RecordError(f"{seat!r} is not a seat of {game.info.id}: {', '.join(order)}")
    out = []
    for seat in order:
        info = dict(seats.get(seat, {}))
        unknown = sorted(set(info) - set(SEAT_FIELDS))
        if unknown:
            raise RecordError(f"unknown field {unknown[0]!r} for seat {seat}: a record holds only"
                              f" {', '.join(SEAT_FIELDS)}")
        out.append(_seat(seat, info.get("name"), info.get("kind"), info.get("level")))
    return tuple(out)


SEAT_TEXT_MAX = 100
"""The longest name or level a record may give a seat, in characters (a
room's names are far shorter: a record is read, not a store of text)."""


_NOT_IN_A_LINE = frozenset(("Cc", "Zl", "Zp"))
"""Unicode categories a seat's name or level may not hold: control
characters (C0, DEL and C1, U+0085 the next-line among them) and the line
and paragraph separators."""


def _seat(seat: str, name: str | None, kind: str | None, level: str | None) -> SeatRecord:
    for what, value in (("name", name), ("level", level)):
        if value is not None and (not isinstance(value, str) or not value.strip()
                                  or any(unicodedata.category(c) in _NOT_IN_A_LINE for c in value)):
            raise RecordError(f"the {what} of seat {seat} must be a line of text, not {value!r:.60}")
        if value is not None and len(value) > SEAT_TEXT_MAX:
            raise RecordError(f"the {what} of seat {seat} is {len(value)} characters long: at most"
                              f" {SEAT_TEXT_MAX}")
    if kind is not None and kind not in KINDS:
        raise RecordError(f"the kind of seat {seat} must be human or computer, not {kind!r}")
    return SeatRecord(seat, name, kind, level)


def _check_date(value: str) -> str:
    try:
        ok = bool(re.fullmatch(r"[0-9]{4}-[0-9]{2}-[0-9]{2}", value)) and bool(
            datetime.date.fromisoformat(value))
    except (TypeError, ValueError):
        ok = False
    if not ok:
        raise RecordError(f"the date must be a day written YYYY-MM-DD, not {value!r}")
    return value


def _check_id(field: str, value: str) -> str:
    if not isinstance(value, str) or not re.fullmatch(r"[A-Za-z0-9_-]{1,100}", value):
        raise RecordError(f"the {field} id must be 1 to 100 letters, digits, '-' or '_', not {value!r}")
    return value


# ---- writing ----------------------------------------------------------------------------
def format_record(record: Record) -> str:
    """The text of ``record`` (``docs/notation.md``, "Match records"): the
    header block, then one block per deal, blocks separated by a blank line,
    ending with a newline. ``format_record(read_record(t)) == t`` for every
    text ``t`` this module wrote.

    Raises :class:`RecordError` for a value or comment that cannot be
    written (a line break in a name, a comment holding both ``}`` and a line
    break).
    """
    head = [_tag("Game", record.game), _tag("Options", _pairs(record.options))]
    for s in record.seats:
        fields = {"name": s.name, "kind": s.kind, "level": s.level}
        head.append(_tag("Seat", s.seat, {k: v for k, v in fields.items() if v is not None}))
    for name, value in (("Date", record.date), ("Room", record.room), ("Match", record.match),
                        ("Seed", record.seed), ("Given", record.given or None)):
        if value is not None:
            head.append(_tag(name, str(value)))
    head.append(_tag("Deals", str(len(record.deals))))
    head.append(_tag("Totals", _pairs(record.totals)))
    head.append(_tag("Result", "*" if record.result is None else " ".join(record.result)))
    head.extend(_comment_lines(record.comments))
    blocks = ["\n".join(head)]
    for d in record.deals:
        lines = [_tag("Deal", str(d.number), {"starter": d.starter, "seed": str(d.seed)})]
        lines.extend(_comment_lines(d.comments))
        for i, m in enumerate(d.moves, 1):
            lines.extend(_comment_lines(m.comments, f"{i}. {m.seat} {m.move}"))
        end = {"winners": " ".join(d.winners) or "-", "scores": _pairs(d.scores)}
        if d.reason:
            end["reason"] = d.reason
        lines.append(_tag("End", str(d.number), end))
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks) + "\n"


def _pairs(pairs: tuple[tuple[str, Any], ...]) -> str:
    for key, value in pairs:
        if isinstance(value, bool) or not re.fullmatch(r"[A-Za-z0-9_.-]+", str(value)):
            raise RecordError(f"cannot write {key}={value!r} in a record")
    return " ".join(f"{k}={v}" for k, v in pairs)


def _quote(value: str) -> str:
    if "\n" in value or "\r" in value:
        raise RecordError(f"a record value cannot hold a line break: {value!r}")
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _tag(tag: str, value: str, fields: Mapping[str, str] | None = None) -> str:
    """``[Tag "value" key="value" …]``."""
    items = (fields or {}).items()
    return "[" + " ".join([tag, _quote(value), *(f"{k}={_quote(v)}" for k, v in items)]) + "]"


def _comment_lines(comments: tuple[str, ...], first: str | None = None) -> list[str]:
    """``first`` (a move) with ``comments`` after it on its line, or the
    comments one a line. A ``;`` comment ends its line."""
    lines = [] if first is None else [first]
    open_line = first is not None
    for text in comments:
        text = text.strip()
        if "}" not in text:
            written, closes = "{" + text + "}", False
        elif "\n" in text or "\r" in text:
            raise RecordError(f"a comment cannot hold both '}}' and a line break: {text!r}")
        else:
            written, closes = "; " + text, True
        if open_line:
            lines[-1] += " " + written
        else:
            lines.append(written)
        open_line = not closes
    return lines


# ---- reading ----------------------------------------------------------------------------
@dataclass(frozen=True)
class _Tag:
    name: str
    args: tuple[str, ...]
    fields: dict[str, str]
    line: int


@dataclass(frozen=True)
class _Move:
    number: int
    seat: str
    move: str
    line: int


@dataclass(frozen=True)
class _Comment:
    text: str
    line: int


@dataclass
class _DealText:
    """A deal as read: its tags, and its comments and moves (each with the
    comments after it), before their values are checked."""

    tag: _Tag
    comments: list[str] = field(default_factory=list)
    moves: list[tuple[_Move, list[str]]] = field(default_factory=list)
    end: _Tag | None = None


_VALUE = r'"(?:[^"\\\n]|\\["\\])*"'
_TAG_RE = re.compile(rf"\[([A-Za-z]+)((?:[ \t]+(?:[a-z]+=)?{_VALUE})*)[ \t]*\]")
_ARG_RE = re.compile(rf"[ \t]+(?:([a-z]+)=)?({_VALUE})")
_MOVE_RE = re.compile(r"([0-9]{1,9})\.[ \t]+([^\s{};]+)[ \t]+([^{};\n]+)")
"""A numbered move: ASCII digits, few enough for ``int`` (Python refuses over 4,300)."""
_ESCAPE_RE = re.compile(r"\\(.)")
HEADER_TAGS = ("Game", "Options", "Seat", "Date", "Room", "Match", "Seed", "Given", "Deals",
               "Totals", "Result")


def _tokens(text: str) -> list[_Tag | _Move | _Comment]:
    """The tags, moves and comments of a record text, in order."""
    out: list[_Tag | _Move | _Comment] = []
    i, n, line = 0, len(text), 1
    while i < n:
        c = text[i]
        if c in " \t\r\n\ufeff":
            line += c == "\n"
            i += 1
            continue
        if c == "{":
            end = text.find("}", i + 1) + 1
            if not end:
                raise RecordError(f"line {line}: a comment opened with '{{' is never closed"
                                  " (is the record truncated?)")
            out.append(_Comment(text[i + 1:end - 1].strip(), line))
        elif c == ";":
            end = text.find("\n", i)
            end = n if end < 0 else end
            out.append(_Comment(text[i + 1:end].strip(), line))
        elif c == "[":
            tag = _TAG_RE.match(text, i)
            if tag is None:
                raise RecordError(f"line {line}: not a tag: {_line_at(text, i)!r} (a tag reads"
                                  ' [Name "value"] or [Name "value" key="value" …] on one line)')
            out.append(_tag_token(tag, line))
            end = tag.end()
        elif "0" <= c <= "9":
            move = _MOVE_RE.match(text, i)
            if move is None or not move.group(3).strip():
                raise RecordError(f"line {line}: not a move: {_line_at(text, i)!r} (a move reads"
                                  " '<number>. <seat> <move>', e.g. '12. black d3')")
            out.append(_Move(int(move.group(1)), move.group(2), move.group(3).strip(), line))
            end = move.end()
        else:
            raise RecordError(f"line {line}: unexpected text {_line_at(text, i)!r}: a record holds"
                              " tags, numbered moves and comments")
        line += text.count("\n", i, end)
        i = end
    return out


def _tag_token(tag: re.Match[str], line: int) -> _Tag:
    name = tag.group(1)
    args: list[str] = []
    fields: dict[str, str] = {}
    for a in _ARG_RE.finditer(tag.group(2)):
        value = _ESCAPE_RE.sub(r"\1", a.group(2)[1:-1])
        if a.group(1) is None:
            if fields:
                raise RecordError(f"line {line}: in the [{name}] tag the plain value comes before"
                                  ' the key="value" fields')
            args.append(value)
        elif a.group(1) in fields:
            raise RecordError(f"line {line}: the [{name}] tag gives {a.group(1)}= twice")
        else:
            fields[a.group(1)] = value
    return _Tag(name, tuple(args), fields, line)


def _line_at(text: str, i: int) -> str:
    end = text.find("\n", i)
    return text[i:end if end >= 0 else len(text)].strip()[:60]


def read_record(text: str, game: str | None = None) -> Record:
    """The :class:`Record` a record text describes.

    With ``game``, only a record of that game id is accepted. Checks the
    syntax (tags, numbered moves, comments), every header value (a known game,
    its options, its seats, seeds from 0 to 2⁶³−1, the date…), that every
    deal has its ``[End]`` and the record as many deals as ``[Deals]`` says,
    and that ``[Totals]`` and ``[Result]`` add up the deals' scores. It does not
    play the moves: :func:`replay` does.

    Raises :class:`RecordError` naming the line or deal at fault: for a
    truncated record, a record of another game than ``game``, an unknown game,
    a bad or missing header value, a move out of its place.
    """
    if not isinstance(text, str):
        raise RecordError(f"a record is text, not {type(text).__name__}")
    if game is not None and game not in GAMES:
        raise RecordError(f"unknown game {game!r} asked for: the games are {', '.join(GAMES)}")
    header: dict[str, _Tag] = {}
    seat_tags: list[_Tag] = []
    comments: list[str] = []
    deals: list[_DealText] = []
    for tok in _tokens(text):
        current = deals[-1] if deals else None
        if isinstance(tok, _Comment):
            if current is None:
                comments.append(tok.text)
            elif current.end is not None:
                raise RecordError(f"line {tok.line}: a comment after the [End] of deal"
                                  f" {_deal_label(current.tag)}: comments go after the header, after"
                                  " a [Deal] tag or after a move")
            elif current.moves:
                current.moves[-1][1].append(tok.text)
            else:
                current.comments.append(tok.text)
        elif isinstance(tok, _Move):
            if current is None or current.end is not None:
                raise RecordError(f"line {tok.line}: the move '{tok.number}. {tok.seat} {tok.move}'"
                                  " is outside a deal: moves go between a [Deal] and its [End] tag")
            current.moves.append((tok, []))
        elif tok.name == "Deal":
            if current is not None and current.end is None:
                raise RecordError(f"line {tok.line}: deal {_deal_label(current.tag)} has no [End] tag"
                                  " before the next [Deal]")
            deals.append(_DealText(tok))
        elif tok.name == "End":
            if current is None or current.end is not None:
                raise RecordError(f"line {tok.line}: an [End] tag without its [Deal]")
            current.end = tok
        elif tok.name in HEADER_TAGS:
            if deals:
                raise RecordError(f"line {tok.line}: the [{tok.name}] tag belongs in the header,"
                                  " before the first deal")
            if tok.name == "Seat":
                seat_tags.append(tok)
            elif tok.name in header:
                raise RecordError(f"line {tok.line}: the [{tok.name}] tag is there twice")
            else:
                header[tok.name] = tok
        else:
            raise RecordError(f"line {tok.line}: unknown tag [{tok.name}]: the header tags are"
                              f" {', '.join(HEADER_TAGS)}, then [Deal] and [End] for each deal")
    if deals and deals[-1].end is None:
        last = deals[-1]
        after = f"after move {len(last.moves)}" if last.moves else "before any move"
        raise RecordError(f"the record is truncated: deal {_deal_label(last.tag)} ends {after}"
                          " with no [End] tag")
    return _interpret(header, seat_tags, comments, deals, game)


def _deal_label(tag: _Tag) -> str:
    return tag.args[0] if tag.args else "?"


def _value(header: dict[str, _Tag], name: str, required: bool = True) -> str | None:
    tag = header.get(name)
    if tag is None:
        if required:
            raise RecordError(f"the record has no [{name}] tag (is it truncated?)")
        return None
    if len(tag.args) != 1 or tag.fields:
        raise RecordError(f"line {tag.line}: the [{name}] tag takes one value, e.g."
                          f' [{name} "…"]')
    return tag.args[0]


def _int(text: str, what: str, low: int, high: int) -> int:
    if not re.fullmatch(r"0|-?[1-9][0-9]{0,19}", text) or not low <= int(text) <= high:
        raise RecordError(f"{what} must be a whole number from {low} to {high}, not {text!r}")
    return int(text)


def _parse_pairs(text: str, what: str) -> list[tuple[str, str]]:
    out = []
    for item in text.split():
        key, eq, value = item.partition("=")
        if not eq or not key or not value:
            raise RecordError(f"{what}: {item!r} is not written name=value")
        out.append((key, value))
    return out


def _scores_of(text: str, what: str, sides: tuple[str, ...]) -> tuple[tuple[str, int], ...]:
    pairs = _parse_pairs(text, what)
    if [k for k, _ in pairs] != list(sides):
        raise RecordError(f"{what} must give the sides {' '.join(sides)} in this order,"
                          f" not {' '.join(k for k, _ in pairs) or 'none'}")
    return tuple((k, _int(v, f"{what}: the points of {k}", -10**9, 10**9)) for k, v in pairs)


def _sides_of(text: str, what: str, sides: tuple[str, ...]) -> tuple[str, ...]:
    names = tuple(text.split())
    for s in names:
        if s not in sides:
            raise RecordError(f"{what}: {s!r} is not a side of this game ({', '.join(sides)})")
    if len(set(names)) != len(names) or list(names) != [s for s in sides if s in names]:
        raise RecordError(f"{what} must list each side once, in the order {' '.join(sides)}")
    return names


def _interpret(
    header: dict[str, _Tag],
    seat_tags: list[_Tag],
    comments: list[str],
    deal_texts: list[_DealText],
    expected: str | None,
) -> Record:
    game_id = _value(header, "Game")
    assert game_id is not None
    if game_id not in GAMES:
        raise RecordError(f"unknown game {game_id!r}: the games are {', '.join(GAMES)}")
    if expected is not None and game_id != expected:
        raise RecordError(f"this is a record of {game_id}, not of {expected}")
    game = get_game(game_id)
    options_text = _value(header, "Options")
    assert options_text is not None
    raw: dict[str, Any] = {}
    for key, value in _parse_pairs(options_text, "[Options]"):
        if key == "seed":
            raise RecordError("[Options]: the seed is not an option here: a finished match's record"
                              " gives it in [Seed]")
        if key in raw:
            raise RecordError(f"[Options] gives {key} twice")
        raw[key] = int(value) if re.fullmatch(r"-?[0-9]{1,19}", value) else value
    try:
        options = game.check_options(raw)
    except OptionError as e:
        raise RecordError(f"[Options]: {e}") from None
    seats = game.seats(options)
    sides = tuple(name for name, _ in game.sides(options))

    by_seat: dict[str, SeatRecord] = {}
    for tag in seat_tags:
        if len(tag.args) != 1:
            raise RecordError(f'line {tag.line}: a [Seat] tag reads [Seat "<seat>" name="…"'
                              ' kind="…" level="…"]')
        seat = tag.args[0]
        if seat not in seats:
            raise RecordError(f"line {tag.line}: {seat!r} is not a seat of {game_id}"
                              f" ({', '.join(seats)})")
        if seat in by_seat:
            raise RecordError(f"line {tag.line}: seat {seat} is there twice")
        unknown = sorted(set(tag.fields) - set(SEAT_FIELDS))
        if unknown:
            raise RecordError(f"line {tag.line}: unknown field {unknown[0]}= in [Seat]: the fields"
                              f" are {', '.join(SEAT_FIELDS)}")
        try:
            by_seat[seat] = _seat(seat, tag.fields.get("name"), tag.fields.get("kind"),
                                  tag.fields.get("level"))
        except RecordError as e:
            raise RecordError(f"line {tag.line}: {e}") from None
    seat_records = tuple(by_seat.get(s, SeatRecord(s)) for s in seats)

    date = _value(header, "Date", required=False)
    room = _value(header, "Room", required=False)
    match = _value(header, "Match", required=False)
    seed_text = _value(header, "Seed", required=False)
    given_text = _value(header, "Given", required=False)
    count = _int(_value(header, "Deals") or "", "[Deals]", 0, 10**6)
    totals = _scores_of(_value(header, "Totals") or "", "[Totals]", sides)
    result_text = _value(header, "Result")
    assert result_text is not None
    seed = None if seed_text is None else _int(seed_text, "[Seed]", 0, MAX_SEED)
    result = None if result_text == "*" else _sides_of(result_text, "[Result]", sides)
    if seed is None and result is not None:
        raise RecordError("[Result] names the winners of a finished match, but there is no [Seed]:"
                          " the record of a finished match gives its seed")
    if seed is not None and result is None:
        raise RecordError('[Result "*"] says the match is in play, but there is a [Seed]: the'
                          " record of a match in play never holds the match seed")
    deals = tuple(_deal(d, i, game_id, seats, sides) for i, d in enumerate(deal_texts, 1))
    if count != len(deals):
        if count > len(deals):
            raise RecordError(f"the record is truncated: [Deals \"{count}\"] announces {count} deals,"
                              f" but it holds {len(deals)}")
        raise RecordError(f"[Deals \"{count}\"] announces {count} deals, but the record holds"
                          f" {len(deals)}")
    given = 0
    if given_text is not None:
        if seed is None:
            raise RecordError("[Given] belongs only in the record of a finished match")
        given = _int(given_text, "[Given]", 1, max(1, len(deals)))
    sums = {s: 0 for s in sides}
    for d in deals:
        for side, points in d.scores:
            sums[side] += points
    if dict(totals) != sums:
        raise RecordError(f"[Totals \"{_pairs(totals)}\"] does not add up the deals' scores"
                          f" ({_pairs(tuple(sums.items()))})")
    if result is not None:
        best = max(sums.values())
        winners = tuple(s for s in sides if sums[s] == best)
        if result != winners:
            raise RecordError(f"[Result \"{' '.join(result)}\"] does not follow from the totals:"
                              f" the highest total is {' '.join(winners)}'s")
    return Record(
        game=game_id,
        options=tuple(sorted(options.items())),
        seats=seat_records,
        deals=deals,
        totals=totals,
        result=result,
        seed=seed,
        given=given,
        date=None if date is None else _check_date(date),
        room=None if room is None else _check_id("room", room),
        match=None if match is None else _check_id("match", match),
        comments=tuple(comments),
    )


def _deal(
    text: _DealText,
    number: int,
    game_id: str,
    seats: tuple[str, ...],
    sides: tuple[str, ...],
) -> DealRecord:
    tag, comments, moves, end = text.tag, text.comments, text.moves, text.end
    assert end is not None  # read_record refuses a deal without its [End]
    where = f"line {tag.line}"
    if tag.args != (str(number),):
        raise RecordError(f"{where}: expected [Deal \"{number}\" …] (deals are numbered from 1"
                          f" in order), not deal {_deal_label(tag)!r}")
    if set(tag.fields) != {"starter", "seed"}:
        raise RecordError(f'{where}: a [Deal] tag reads [Deal "{number}" starter="<seat>"'
                          ' seed="<deal seed>"]')
    starter = tag.fields["starter"]
    if starter not in seats:
        raise RecordError(f"{where}: deal {number}'s starter {starter!r} is not a seat of"
                          f" {game_id} ({', '.join(seats)})")
    seed = _int(tag.fields["seed"], f"{where}: deal {number}'s seed", 0, MAX_SEED)
    out = []
    for i, (mv, after) in enumerate(moves, 1):
        if mv.number != i:
            raise RecordError(f"line {mv.line}: deal {number}: move {mv.number} where move {i}"
                              " was expected (moves are numbered from 1 in each deal)")
        if mv.seat not in seats:
            raise RecordError(f"line {mv.line}: deal {number}, move {i}: {mv.seat!r} is not a seat"
                              f" of {game_id} ({', '.join(seats)})")
        out.append(MoveRecord(mv.seat, mv.move, tuple(after)))
    where = f"line {end.line}"
    if end.args != (str(number),):
        raise RecordError(f"{where}: the [End] of deal {number} must read [End \"{number}\" …]")
    if not {"winners", "scores"} <= set(end.fields) <= {"winners", "scores", "reason"}:
        raise RecordError(f'{where}: an [End] tag reads [End "{number}" winners="<sides or ->"'
                          ' scores="<side>=<points> …" reason="…"]')
    winners_text = end.fields["winners"]
    winners = () if winners_text == "-" else _sides_of(
        winners_text, f"{where}: deal {number}'s winners", sides)
    scores = _scores_of(end.fields["scores"], f"{where}: deal {number}'s scores", sides)
    return DealRecord(number, starter, seed, tuple(out), winners, scores,
                      end.fields.get("reason", ""), tuple(comments))


# ---- replaying --------------------------------------------------------------------------
def replay(record: Record) -> Match:
    """The match ``record`` describes, replayed through
    :class:`engine.match.Match`, every move checked by the engine and every
    deal's written outcome (winners and scores; the reason's wording is not
    checked) compared with the one the engine computes.

    The record of a finished match is replayed from its match seed
    (:meth:`Match.new`, or :meth:`Match.new_from_deals` for its ``given``
    first deals); each deal's seed and starter must be those the match seed
    gives, and the match must end with the last deal. The record of a match in
    play has no match seed: each deal is dealt from its own seed and starter
    (:meth:`Match.new_from_deals` with every deal given); the match must not be
    over after them. Such a match knows no match seed, so were it dealt on, its
    next deals would come from a seed derived from its last deal's seed, not
    the ones the real match will have.

    Raises :class:`RecordError` for a record with no deal, an illegal or
    malformed move (naming the deal, the move number, the seat, the move and
    the engine's reason), a deal not over after its last move, an outcome, a
    seed or a starter the replay contradicts, or a match that ends too early or
    not at all.
    """
    if not record.deals:
        raise RecordError("the record holds no finished deal to replay")
    try:
        if record.seed is None:
            pairs = [(d.seed, d.starter) for d in record.deals]
            m = Match.new_from_deals(record.game, record.opts, pairs,
                                     derive_seed(record.deals[-1].seed, "record"))
        elif record.given:
            pairs = [(d.seed, d.starter) for d in record.deals[:record.given]]
            m = Match.new_from_deals(record.game, record.opts, pairs, record.seed)
        else:
            m = Match.new(record.game, record.opts, record.seed)
    except MatchError as e:
        raise RecordError(f"deal 1: {e}") from None
    for d in record.deals:
        if d.number > 1:
            if m.over:
                raise RecordError(f"the match is over after deal {d.number - 1}, but the record goes"
                                  f" on with deal {d.number}")
            m = m.next_deal()
        if (m.current.seed, m.current.starter) != (d.seed, d.starter):
            raise RecordError(f"deal {d.number}: the record gives seed {d.seed} and starter"
                              f" {d.starter}, but the match seed deals it from seed"
                              f" {m.current.seed} with starter {m.current.starter}")
        m = _play(m, d)
    if record.over and not m.over:
        raise RecordError(f"the record ends after deal {len(record.deals)}, but the match is not"
                          " over (is it truncated?)")
    if not record.over and m.over:
        raise RecordError(f'the record says the match is in play ([Result "*"]), but deal'
                          f" {len(record.deals)} ends it")
    if tuple(m.totals().items()) != record.totals or (record.over and m.winners() != record.result):
        raise RecordError("the match's totals or winners differ from [Totals] and [Result]")
    return m


def _play(m: Match, d: DealRecord, states: list[Any] | None = None) -> Match:
    """``m`` with deal ``d``'s moves played and its outcome checked; each
    state after a move is added to ``states`` if given."""
    for i, mv in enumerate(d.moves, 1):
        try:
            m = m.play(mv.seat, mv.move)
        except MoveError as e:
            kind = "is not a move" if isinstance(e, MalformedMove) else "is illegal"
            raise RecordError(f"deal {d.number}, move {i}: {mv.seat}'s move {mv.move!r} {kind}:"
                              f" {e}") from None
        if states is not None:
            states.append(m.state)
    outcome = m.current.outcome
    if outcome is None:
        last = f"its last move, move {len(d.moves)}" if d.moves else "its start"
        raise RecordError(f"deal {d.number} is not over after {last}: a move is missing"
                          " (is the record truncated?)")
    if (outcome.winners, _scores(outcome)) != (d.winners, d.scores):
        raise RecordError(
            f"deal {d.number}: the record gives the outcome winners {' '.join(d.winners) or '-'},"
            f" {_pairs(d.scores)}, but the moves give winners {' '.join(outcome.winners) or '-'},"
            f" {_pairs(_scores(outcome))}")
    return m


def deal_states(record: Record, number: int) -> tuple[Any, ...]:
    """The states of deal ``number`` (1-based) of ``record``: the opening
    state, then the state after each move, replayed from the deal's own seed
    and starter alone (a review steps through them with ``Game.view``).

    Raises :class:`RecordError` as :func:`replay` does for that deal.
    """
    d = record.deal(number)
    m = play_again(record, number, derive_seed(d.seed, "record"))
    states = [m.state]
    _play(m, d, states)
    return tuple(states)


def play_again(record: Record, number: int, seed: int) -> Match:
    """A new match that begins with deal ``number`` of ``record`` again: the
    same layout and the same starter (:meth:`Match.new_from_deal`); ``seed``
    (fresh, 0 … 2⁶³−1) deals the rest of the match.

    Raises :class:`RecordError` if the record has no such deal or the deal
    cannot start a match of its game.
    """
    d = record.deal(number)
    try:
        return Match.new_from_deal(record.game, record.opts, d.seed, d.starter, seed)
    except MatchError as e:
        raise RecordError(f"deal {number}: {e}") from None
