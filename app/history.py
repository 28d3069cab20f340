"""Match history: the records and reviews of finished deals and matches
(``docs/protocol.md``, "Records and reviews").

Three sources give one shape, a :class:`Reviewed` (an
:class:`engine.record.Record` and the :class:`engine.match.Match` it is the
record of):

* a room's match in play (:meth:`History.room`): the deals finished so far,
  and the whole match once it is over;
* a finished match by its own id (:meth:`History.match`), from storage, even
  once its room is closed for play, until the room ages out
  (``CARDBOARD_KEEP_DAYS``);
* a record someone pastes or uploads (:func:`read`), checked by the engine and
  kept nowhere.

:func:`match_review` and :func:`deal_review` turn a :class:`Reviewed` into
what a review board draws. Everything here holds only what a record may hold
(``docs/notation.md``, "What a record holds, and when"): no token, no match
seed before the match is over, nothing of a deal in play.
"""

from __future__ import annotations

import asyncio
import datetime
from collections import OrderedDict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from typing import Any, TypeVar

from app.lobby import ROOM_ID, Lobby, Unavailable
from app.logs import get_logger
from app.protocol import (
    DealReview,
    DealSummary,
    MatchReview,
    OutcomeView,
    Phase,
    ReviewMove,
    ReviewSeat,
    ReviewStep,
    SideView,
)
from app.storage import StorageError, StoredRoom
from app.table import MATCH_ID, Action, BadRecord, Table, describe
from engine.match import Match
from engine.record import Record, RecordError, deal_states, read_record, record_of, replay
from engine.registry import get_game

log = get_logger(__name__)

MAX_RECORD_CHARS = 500_000
"""The longest record text :func:`read` accepts, in characters (the body
that carries it is limited too: ``app.limits.MAX_RECORD_BYTES``)."""

REVIEW_THREADS = 2
"""Records read, replayed or turned into reviews at once, each in a thread
off the event loop (:meth:`History.work`): a review of a long record takes
tens of milliseconds or more, and the rooms' play must not wait for it. The
others wait their turn."""

T = TypeVar("T")

CACHED_MATCHES = 64
"""Finished matches kept replayed in memory (they never change)."""

CACHED_ROOMS = 2
"""Rooms whose stored record was replayed last, kept with the table of each
of their matches while the record stays at the same version: the review,
record and deal answers of a room that is not loaded (freed, or on another
server process) and the pages of its matches are replayed once, not on every
request (a break-it pass timed 0.5 s a request for a room of 300 matches)."""


@dataclass
class _Replayed:
    """A room's stored record at ``version`` replayed: the ``tables`` of its
    matches (:func:`match_tables`) and, once asked, the review of the last."""

    version: int
    tables: list[Table]
    last: Reviewed | None = None


@dataclass(frozen=True)
class Reviewed:
    """A match ``record`` and the ``match`` it is the record of (replayed:
    every deal's outcome known); ``closed``: its room is closed for play, so
    a deal it did not finish never will be."""

    record: Record
    match: Match
    closed: bool = False


def seats_of(table: Table) -> dict[str, dict[str, str | None]]:
    """What a record says of each held seat of ``table``: the holder's name,
    kind and computer level (never a token)."""
    return {seat: {"name": h.name, "kind": h.kind, "level": h.level} for seat, h in table.holders}


def day_of(when: float | None) -> str | None:
    """The UTC day of ``when`` (Unix seconds), ``YYYY-MM-DD``; ``None`` for ``None``."""
    if when is None:
        return None
    return datetime.datetime.fromtimestamp(when, datetime.UTC).date().isoformat()


def reviewed(table: Table) -> Reviewed:
    """The record of ``table``'s match: the deals finished so far, the whole
    match (seed included) once it is over; its date is the day the match
    began, and its ``Match`` tag, once over, the match id."""
    match = table.match
    meta = {"date": day_of(table.began), "match": table.match_id if match.over else None}
    return Reviewed(record_of(match, seats=seats_of(table), meta=meta, finished_only=True), match)


def match_tables(actions: Iterable[Action]) -> list[Table]:
    """The table of each match that ``actions`` (a room's record, ``create``
    first) played, in order: as it was when the match ended (its seats then),
    or as it is now for the match in play. Raises
    :class:`app.table.BadRecord` if the actions do not replay."""
    out: list[Table] = []
    current: Table | None = None
    ended: Table | None = None
    for table in Table.replay_steps(actions):
        if current is not None and table.rematches != current.rematches:
            out.append(ended or current)
            ended = None
        if ended is None and table.match.over:
            ended = table
        current = table
    assert current is not None  # replay_steps refuses an empty record
    out.append(ended or current)
    return out


def read(text: str, game: str | None = None) -> Reviewed:
    """A record text checked through and through: read (:func:`read_record`,
    which refuses a record of another game than ``game`` if given) and
    replayed by the engine (:func:`replay`). Raises
    :class:`engine.record.RecordError` saying what is wrong and where, for a
    text over :data:`MAX_RECORD_CHARS` too."""
    if len(text) > MAX_RECORD_CHARS:
        raise RecordError(f"a record may be at most {MAX_RECORD_CHARS:,} characters long, not"
                          f" {len(text):,}")
    record = read_record(text, game)
    return Reviewed(record, replay(record))


class History:
    """The records of a server's rooms and matches, read through ``lobby``
    (its live rooms and its storage). The replayed finished matches asked for
    last are cached; the storage's index is asked first every time, so a
    match whose room has aged out is gone at once."""

    def __init__(self, lobby: Lobby) -> None:
        self.lobby = lobby
        self._cache: OrderedDict[str, Reviewed] = OrderedDict()
        self._rooms: OrderedDict[str, _Replayed] = OrderedDict()
        """Room id → its stored record, replayed (the last :data:`CACHED_ROOMS`)."""
        self._slots = asyncio.Semaphore(REVIEW_THREADS)

    async def work(self, fn: Callable[..., T], *args: Any) -> T:
        """``fn(*args)`` in a thread, at most :data:`REVIEW_THREADS` at once:
        for reading, replaying and reviewing records, which would otherwise
        hold up every room of the server while they run."""
        async with self._slots:
            return await asyncio.to_thread(fn, *args)

    async def room(self, room_id: str) -> Reviewed | None:
        """The record of the match in play in room ``room_id`` (the room's
        last match if it is closed for play), or ``None`` if there is no such
        room. Raises :class:`app.lobby.Unavailable` if the storage fails."""
        live = await self.lobby.room(room_id)
        if live is not None:
            return await self.work(reviewed, live.table)
        if not ROOM_ID.fullmatch(room_id):
            return None
        stored = await self.lobby.stored(room_id)
        if stored is None:
            return None
        replayed = await self._replayed(room_id, stored)
        if not replayed.tables:
            return None
        last = replayed.last
        if last is None:
            last = await self.work(reviewed, replayed.tables[-1])
        if last.closed != stored.meta.closed:
            last = replace(last, closed=stored.meta.closed)
        replayed.last = last
        return last

    async def _replayed(self, room_id: str, stored: StoredRoom) -> _Replayed:
        """The room ``stored`` replayed, or as kept in :attr:`_rooms` if its
        record has not changed since."""
        version = stored.entries[-1].version if stored.entries else -1
        hit = self._rooms.get(room_id)
        if hit is not None and hit.version == version:
            self._rooms.move_to_end(room_id)
            return hit
        tables = await self.work(self._tables, room_id, [e.action for e in stored.entries])
        replayed = self._rooms[room_id] = _Replayed(version, tables)
        while len(self._rooms) > CACHED_ROOMS:
            self._rooms.popitem(last=False)
        return replayed

    async def match(self, match_id: str) -> Reviewed | None:
        """The record of the finished match with this id, or ``None`` (no
        such id, the match is not over, or its room has aged out). Raises
        :class:`app.lobby.Unavailable` if the storage fails."""
        if not MATCH_ID.fullmatch(match_id):
            return None
        try:
            ref = await self.lobby.storage.find_match(match_id)
        except StorageError as exc:
            raise Unavailable(str(exc)) from None
        if ref is None:
            self._cache.pop(match_id, None)
            return None
        cached = self._cache.get(match_id)
        if cached is not None:
            self._cache.move_to_end(match_id)
            return cached
        stored = await self.lobby.stored(ref.room)
        if stored is None:
            return None
        tables = (await self._replayed(ref.room, stored)).tables
        if len(tables) <= ref.number:
            return None
        table = tables[ref.number]
        if table.match_id != match_id or not table.match.over:
            return None
        found = await self.work(reviewed, table)
        self._cache[match_id] = found
        while len(self._cache) > CACHED_MATCHES:
            self._cache.popitem(last=False)
        return found

    @staticmethod
    def _tables(room_id: str, actions: list[Action]) -> list[Table]:
        try:
            return match_tables(actions)
        except BadRecord as exc:
            log.error("room %s: its record does not replay: %s", room_id, exc)
            return []


# ---- what a review board draws ----------------------------------------------------------
def match_review(r: Reviewed, offered: bool = True) -> MatchReview:
    """The summary of a reviewed match: its seats and finished deals, each
    with its outcome and score lines; ``offered``: whether this server deals
    rooms of its game."""
    record, game = r.record, get_game(r.record.game)
    outcomes = r.match.outcomes
    assert len(outcomes) == len(record.deals)  # the record is of this match
    return MatchReview(
        game=record.game,
        title=game.info.title,
        board=game.info.board,
        deal_noun=game.info.deal_noun,
        options=record.opts,
        seats=[ReviewSeat(seat=s.seat, name=s.name, kind=s.kind, level=s.level)  # type: ignore[arg-type]
               for s in record.seats],
        sides=[SideView(side=name, seats=list(seats)) for name, seats in game.sides(record.opts)],
        deals=[DealSummary(deal=d.number, starter=d.starter, seed=str(d.seed), moves=len(d.moves),
                           outcome=OutcomeView.model_validate(o.to_json()))
               for d, o in zip(record.deals, outcomes, strict=True)],
        totals=dict(record.totals),
        over=record.over,
        match_winners=list(record.result or ()),
        seed=None if record.seed is None else str(record.seed),
        given=record.given,
        date=record.date,
        match_id=record.match if record.over else None,
        offered=offered,
    )


def deal_review(r: Reviewed, number: int) -> DealReview:
    """Deal ``number`` (1-based) of a reviewed match, step by step: every
    position's revealed view (``Game.revealed_view``: the deal is over), the
    moves with their sentences and the outcome. Raises
    :class:`engine.record.RecordError` if the record holds no such deal."""
    record = r.record
    d = record.deal(number)
    game = get_game(record.game)
    states = deal_states(record, number)
    last = len(states) - 1
    end: Phase = "match_over" if record.over and number == len(record.deals) else "deal_over"
    outcome = game.outcome(states[-1])
    assert outcome is not None  # deal_states checks that the deal is over
    return DealReview(
        deal=number,
        starter=d.starter,
        seed=str(d.seed),
        moves=[ReviewMove(seat=m.seat, move=m.move, text=describe(game, states[i], m.seat, m.move))
               for i, m in enumerate(d.moves)],
        steps=[ReviewStep(phase="playing" if i < last else end,
                          to_move=list(game.to_move(s)) if i < last else [],
                          board=game.revealed_view(s))
               for i, s in enumerate(states)],
        outcome=OutcomeView.model_validate(outcome.to_json()),
    )
