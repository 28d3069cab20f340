"""Computer players in rooms: they think off the event loop and act through
the room exactly as people do (``docs/protocol.md``, "Computer players").

:class:`Thinker` runs ``engine.bots.choose_move`` in a pool of worker
processes (or threads, ``Settings.bot_pool``), so a search never holds the
event loop and a room with computer players never delays another room's
messages. It hands the search only what ``choose_move`` takes: the game id,
the deal's state, the seat, the level, the budget in seconds and a fresh
random seed (never the match seed); the engine's search draws the hidden
cards anew from that seat's own knowledge (``Game.determinize``).

:class:`Bots` drives the computer players of every room. :meth:`Bots.poke`,
called after any change to a room, starts what they should do now, as
asyncio tasks (at most one per room and purpose):

* **a turn**, for each awaited seat that a computer player plays: ask the
  thinker for a move on the current version's state, wait until the move has
  taken a natural-looking time (``bot_pause`` to twice that, thinking
  included), then play it with :meth:`app.rooms.Room.computer_move`, which
  runs the checks of a person's move (version, turn, legality);
* **between deals**, in a room where computer players hold every seat and
  someone is watching: after ``bot_between_deals`` seconds, "Next deal" or
  "Rematch" (:meth:`app.rooms.Room.computer_continue`). Wherever a person
  holds a seat, the people start the next deal: they decide when they have
  read the result;
* **a forced pass**, for each awaited seat that a person plays whose only
  legal move is a pass (in a room whose ``auto_pass`` option is on): after
  ``auto_pass_seconds``, the pass is played through
  :meth:`app.rooms.Room.forced_pass`, which runs the checks of a person's
  move (so a pass the person made meanwhile is never played twice);
* **a handover notice**: when a person has been away, in the middle of a
  deal, for ``handover_seconds``, a fresh state (same version) is sent so
  that every client shows the seat with ``handover: true``;
* **going on**, between deals where a person holds a seat: when the table
  is ready without anyone pressing "Ready" (a computer player took the last
  seat that was not ready), the next deal or match is dealt; and when a
  person has been away for ``ready_away_seconds``, the table stops waiting
  for them (:meth:`app.rooms.Room.go_on_if_ready`);
* **clean-up**: a room of computer players only that nobody watches is freed
  once no deal is in play and nobody has watched it since for
  ``bot_room_grace_seconds`` (so a reload, or a server restart, does not
  end a room its spectators are coming back to).

Computer players think only while someone is connected to the room, or when
they hold every seat (such a room finishes the deal in play, then is
freed), so a room whose people have all left burns no CPU. At most
``bot_workers`` searches run at once, and those for rooms where a person
plays go first (:class:`Thinker`), so rooms of computers only, however
many, never keep a person's opponent waiting beyond the searches already
under way.

When several server processes serve a room (:mod:`app.bus`), a turn and a
"next deal" are each claimed first (:class:`Lease`, through ``leases``):
only the process that holds the claim thinks and plays; the others look
again every ``leases.retry_seconds``, to take over if it dies.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import multiprocessing
import os
import random
import signal
import threading
import time
import weakref
from collections import deque
from collections.abc import AsyncIterator, Awaitable, Callable, Coroutine
from concurrent.futures import Executor, ProcessPoolExecutor, ThreadPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from functools import partial
from typing import Any, Protocol

from app.logs import get_logger
from app.rooms import Room, RoomError
from app.settings import Settings
from app.store import RoomStore

log = get_logger(__name__)

Choose = Callable[[str, Any, str, str, float, int], str]
"""``choose_move(game_id, state, seat, level, seconds, seed) -> move``."""

ORPHAN_CHECK = 0.5
"""Seconds between a worker process's checks that the server still runs."""

CLOSE_WAIT = 5.0
"""Seconds the server waits at shutdown for searches under way."""

UNAVAILABLE_WAIT = 2.0
"""Seconds a computer player waits before it tries again when its move could
not be saved (``unavailable``)."""

NOTICE_SLACK = 0.01
"""Seconds a handover notice waits beyond the handover time, so that the
seat is surely due when the state is sent."""


@dataclass
class Lease:
    """A claim on one piece of computer-player work: ``held`` if this
    process got it. :meth:`keep` once the work is done, so that no process
    does it again while the claim lasts; else it is given up at once."""

    held: bool
    kept: bool = False

    def keep(self) -> None:
        """The work is done: keep the claim until it expires."""
        self.kept = True


class Leases(Protocol):
    """Where claims are made (:meth:`app.bus.RedisBus.hold` across processes)."""

    retry_seconds: float
    """How long a process that did not get a claim waits before trying again."""

    def hold(self, room_id: str, purpose: str,
             version: int) -> contextlib.AbstractAsyncContextManager[Lease]:
        """Claim ``purpose`` in ``room_id`` at ``version`` while the context lasts."""
        ...


class LocalLeases:
    """One server process: every claim is granted."""

    retry_seconds = 1.0

    @contextlib.asynccontextmanager
    async def hold(self, room_id: str, purpose: str, version: int) -> AsyncIterator[Lease]:
        yield Lease(held=True)


def _worker_start(server: int) -> None:
    """In each worker process: think at a lower priority than the server
    (process ``server``), leave Ctrl-C and SIGTERM to the server (a terminal
    sends SIGINT to the whole process group, as ``kill -- -PGID`` or a
    service manager sends SIGTERM: the server shuts down and the workers
    with it, and neither a worker nor the server's pool prints a traceback
    of a worker that ended first), and end as
    soon as the server has gone, however it ended (uvicorn ends on the signal
    it caught, skipping exit handlers)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    with contextlib.suppress(OSError, AttributeError):
        os.nice(5)
    threading.Thread(target=_end_with, args=(server,), name="orphan-watch", daemon=True).start()


def _end_with(server: int) -> None:
    while os.getppid() == server:
        time.sleep(ORPHAN_CHECK)
    os._exit(0)


def engine_choose() -> Choose:
    """``engine.bots.choose_move``, imported when first needed: the server
    itself never searches."""
    choose: Choose = importlib.import_module("engine.bots").choose_move
    return choose


class Thinker:
    """Runs ``choose`` (``engine.bots.choose_move`` by default; in a process
    pool it must pickle, as a module-level function does) off the event loop,
    in a pool of ``workers`` processes or threads (``pool`` is ``"process"``
    or ``"thread"``; ``workers`` 0 means one per CPU). The pool starts on
    first use; worker processes are spawned afresh (never forked from the
    server) and run at a lower priority.

    At most ``workers`` searches run at once; the others wait their turn in
    a fair queue (:meth:`choose`): searches for rooms where a person plays
    before those for rooms of computer players only, and at most one search
    of each room in the queue, so that no room (nor a crowd of rooms of
    computers) keeps a person's computer opponent waiting for more than the
    searches already running. ``searches`` counts the searches started so
    far, ``running`` those under way, ``queued`` those waiting."""

    def __init__(self, pool: str = "process", workers: int = 0, choose: Choose | None = None) -> None:
        self.pool = pool
        self.workers = workers or os.cpu_count() or 1
        self.choose_fn = choose
        self.searches = 0
        self.running = 0
        self.queued = 0
        self._executor: Executor | None = None
        self._queues: tuple[deque[_Waiting], deque[_Waiting]] = (deque(), deque())
        self._in_queue: dict[str, _Waiting] = {}
        self._behind: dict[str, deque[_Waiting]] = {}

    def _get(self) -> Executor:
        if self._executor is None:
            if self.pool == "process":
                self._executor = ProcessPoolExecutor(
                    self.workers, mp_context=multiprocessing.get_context("spawn"),
                    initializer=_worker_start, initargs=(os.getpid(),))
            else:
                self._executor = ThreadPoolExecutor(self.workers, thread_name_prefix="bot")
        return self._executor

    async def choose(self, game_id: str, state: Any, seat: str, level: str, seconds: float,
                     seed: int, *, room: str | None = None, person: bool = True) -> str:
        """The move ``choose`` picks, computed in the pool once a worker is
        free for it: at once if one is, else in queue order (``person``: a
        person plays in ``room``, so the search goes before those of rooms
        of computers only; a second search of the same ``room`` queues
        behind the first and takes its own place in the queue when the
        first starts). Raises whatever ``choose`` raises;
        ``BrokenProcessPool`` if a worker died (the next call starts a fresh
        pool)."""
        await self._admit(room, person)
        try:
            self.searches += 1
            if self.choose_fn is None:
                self.choose_fn = engine_choose()
            executor = self._get()
            loop = asyncio.get_running_loop()
            try:
                return await loop.run_in_executor(executor, self.choose_fn, game_id, state, seat, level,
                                                  seconds, seed)
            except BrokenProcessPool:
                if self._executor is executor:
                    self._executor = None
                raise
        finally:
            self.running -= 1
            self._next()

    async def _admit(self, room: str | None, person: bool) -> None:
        """Return once this search may run (``running`` counts it)."""
        waiting = _Waiting(asyncio.get_running_loop().create_future(), room, person)
        self.queued += 1
        if room is not None and room in self._in_queue:
            self._behind.setdefault(room, deque()).append(waiting)
        else:
            self._enqueue(waiting)
        self._next()
        try:
            await waiting.admitted
        except asyncio.CancelledError:
            if waiting.admitted.done() and not waiting.admitted.cancelled():
                self.running -= 1  # admitted as it was cancelled: pass the worker on
                self._next()
            else:
                self._drop(waiting)
            raise

    def _enqueue(self, waiting: _Waiting) -> None:
        self._queues[0 if waiting.person else 1].append(waiting)
        if waiting.room is not None:
            self._in_queue[waiting.room] = waiting

    def _drop(self, waiting: _Waiting) -> None:
        """A search given up while it waited leaves the queue (its room's
        next search, if any, takes a place at the back)."""
        room = waiting.room
        behind = self._behind.get(room) if room is not None else None
        if behind is not None and waiting in behind:
            self.queued -= 1
            behind.remove(waiting)
            if not behind:
                del self._behind[room]  # type: ignore[arg-type]
            return
        queue = self._queues[0 if waiting.person else 1]
        if waiting in queue:
            self.queued -= 1
            queue.remove(waiting)
            self._promote(room)

    def _promote(self, room: str | None) -> None:
        """``room``'s first search leaves the queue: its next one joins it."""
        if room is None:
            return
        self._in_queue.pop(room, None)
        behind = self._behind.get(room)
        if behind:
            self._enqueue(behind.popleft())
            if not behind:
                del self._behind[room]

    def _next(self) -> None:
        """Start waiting searches while workers are free: people first."""
        while self.running < self.workers:
            queue = self._queues[0] or self._queues[1]
            if not queue:
                return
            waiting = queue.popleft()
            self.queued -= 1
            self._promote(waiting.room)
            if waiting.admitted.done():
                continue  # given up (cancelled) before it could start
            self.running += 1
            waiting.admitted.set_result(None)

    async def close(self, timeout: float = CLOSE_WAIT) -> None:
        """Stop the pool: queued searches are dropped, running ones end on
        their own budget; waits for that (``timeout`` seconds at most)."""
        for queue in (*self._queues, *self._behind.values()):
            for waiting in queue:
                waiting.admitted.cancel()
        executor, self._executor = self._executor, None
        if executor is not None:
            stop = asyncio.to_thread(executor.shutdown, wait=True, cancel_futures=True)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop, timeout)


@dataclass(eq=False)
class _Waiting:
    """A search waiting for a worker: ``admitted`` is set when it may run."""

    admitted: asyncio.Future[None]
    room: str | None
    person: bool


def _acts(purpose: str) -> bool:
    """True for the tasks in which a computer player acts: a turn, or going on
    between deals (those that keep a room from being :attr:`Bots.quiet`)."""
    return purpose == "continue" or purpose.startswith("turn ")


class Bots:
    """The computer players of every room in ``store``, thinking with
    ``thinker`` (by default a :class:`Thinker` set up from ``settings``).

    Time is kept by ``clock`` (monotonic seconds, ``time.monotonic`` by
    default) for the natural pause, the pause between deals and handover
    notices, and waited for with ``sleep`` (by default the clock's own
    ``sleep`` method if it has one, else ``asyncio.sleep``): a test gives a
    clock that moves only when told.

    ``played`` counts the computer moves accepted; ``refused`` those the room
    refused (a defect if it is ever not 0 outside of races with the room
    moving on); ``tasks`` maps ``(room id, purpose)`` to the running task;
    ``leases`` grants claims on turns (every claim, by default);
    ``quiet`` maps a room to its version when the computer players last
    looked at it (:meth:`poke`, or one of their tasks ending) and left it
    with none of them thinking or about to act (a handover notice waiting
    does not count): they had decided to do nothing at that version.
    """

    def __init__(self, settings: Settings, store: RoomStore, thinker: Thinker | None = None,
                 on_free: Callable[[str], None] | None = None, leases: Leases | None = None, *,
                 clock: Callable[[], float] = time.monotonic,
                 sleep: Callable[[float], Awaitable[None]] | None = None) -> None:
        self.settings = settings
        self.store = store
        self.on_free = on_free
        self.leases: Leases = leases if leases is not None else LocalLeases()
        self.thinker = thinker or Thinker(settings.bot_pool, settings.bot_workers)
        self.clock = clock
        self.sleep: Callable[[float], Awaitable[None]] = (
            sleep if sleep is not None else getattr(clock, "sleep", asyncio.sleep))
        self.tasks: dict[tuple[str, str], asyncio.Task[None]] = {}
        self._acting: dict[str, int] = {}  # room id -> its tasks of a computer's turn or going on
        self.quiet: weakref.WeakKeyDictionary[Room, int] = weakref.WeakKeyDictionary()
        self._forsaken: weakref.WeakKeyDictionary[Room, float] = weakref.WeakKeyDictionary()
        """Room of computer players only → when they first found nobody
        watching it between deals (:meth:`_free_when_forsaken`)."""
        self.played = 0
        self.refused = 0
        self.closing = False
        self._rng = random.Random()

    # ---- scheduling -----------------------------------------------------------------------
    def poke(self, room: Room) -> None:
        """Start whatever ``room``'s computer players should do now (see the
        module's docstring). Call it after every change to the room; it never
        waits, and does nothing outside a running event loop."""
        if self.closing:
            return
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            return
        if room.watched:
            self._forsaken.pop(room, None)
        if not room.closed:
            self._schedule(room)
        self._note_quiet(room)

    def _schedule(self, room: Room) -> None:
        phase = room.phase
        if phase == "playing":
            if room.watched or room.computer_only:
                for seat in room.game.to_move(room.match.state):
                    if room.computer_plays(seat) and self._idle(room, f"turn {seat}"):
                        self._start(room, f"turn {seat}", self._turn(room, seat))
                    elif room.watched and room.must_pass(seat) and self._idle(room, f"pass {seat}"):
                        self._start(room, f"pass {seat}", self._pass(room, seat))
            self._watch_absences(room)
        elif phase in ("deal_over", "match_over") and room.computer_only:
            if not room.watched:
                self._free_when_forsaken(room)
            elif self._idle(room, "continue"):
                self._start(room, "continue", self._continue(room))
        elif phase in ("deal_over", "match_over"):
            if room.all_ready() and self._idle(room, "go on"):
                self._start(room, "go on", self._ready_go_on(room))
            self._watch_ready(room)

    def _free_when_forsaken(self, room: Room) -> None:
        """Free ``room`` (computer players only, between deals, nobody
        watching) once nobody has watched it for ``bot_room_grace_seconds``
        since the computer players first found it so; until then, look again
        when that time is up."""
        now = self.clock()
        since = self._forsaken.setdefault(room, now)
        left = self.settings.bot_room_grace_seconds - (now - since)
        if left <= 0:
            self.free(room)
        elif self._idle(room, "free"):
            self._start(room, "free", self._wait(left))

    async def _wait(self, seconds: float) -> None:
        """Sleep ``seconds``; the room is poked when the task ends."""
        await self.sleep(seconds)

    def _idle(self, room: Room, purpose: str) -> bool:
        return (room.id, purpose) not in self.tasks

    def _note_quiet(self, room: Room) -> None:
        """Record in :attr:`quiet` that no computer player of ``room`` is
        thinking or about to act, if so."""
        busy = room.id in self._acting
        if busy:
            self.quiet.pop(room, None)
        else:
            self.quiet[room] = room.version

    def _start(self, room: Room, purpose: str, work: Coroutine[Any, Any, None]) -> None:
        task = asyncio.get_running_loop().create_task(work, name=f"room {room.id}: {purpose}")
        self.tasks[(room.id, purpose)] = task
        if _acts(purpose):
            self._acting[room.id] = self._acting.get(room.id, 0) + 1
        task.add_done_callback(partial(self._done, room, purpose))

    def _done(self, room: Room, purpose: str, task: asyncio.Task[None]) -> None:
        if self.tasks.get((room.id, purpose)) is task:
            del self.tasks[(room.id, purpose)]
            if _acts(purpose):
                left = self._acting.pop(room.id) - 1
                if left:
                    self._acting[room.id] = left
        if task.cancelled():
            self._note_quiet(room)
            return
        error = task.exception()
        if error is not None:
            log.error("room %s: the computer players' %s failed", room.id, purpose, exc_info=error)
            self._note_quiet(room)
            return
        self.poke(room)

    def free(self, room: Room) -> None:
        """Close ``room``, forget it, stop its computer players and tell
        ``on_free`` (which ends it in storage)."""
        if room.closed:
            return
        room.closed = True
        if self.store.get(room.id) is room:
            self.store.remove(room.id)
        if self.on_free is not None:
            self.on_free(room.id)
        for (room_id, _), task in list(self.tasks.items()):
            if room_id == room.id and task is not asyncio.current_task():
                task.cancel()

    async def close(self) -> None:
        """Stop every computer player and the thinker (server shutdown)."""
        self.closing = True
        tasks = list(self.tasks.values())
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        await self.thinker.close()

    # ---- the work -------------------------------------------------------------------------
    async def _turn(self, room: Room, seat: str) -> None:
        """Claim ``seat``'s turn on the current version, then choose and play
        its move; without the claim, wait and let the poke try again. The
        turn may have been scheduled some versions ago (a server process
        catching up with several versions committed elsewhere pokes after
        each): if ``seat`` is no longer awaited, there is nothing to do."""
        if not self._awaits(room, seat):
            return
        version = room.version
        async with self.leases.hold(room.id, f"turn {seat}", version) as lease:
            if not lease.held:
                await self.sleep(self.leases.retry_seconds)
                return
            if room.version == version and await self._play_turn(room, seat, version):
                lease.keep()

    @staticmethod
    def _awaits(room: Room, seat: str) -> bool:
        """Whether ``room`` is playing and waits for the computer player at ``seat``."""
        return (not room.closed and room.phase == "playing" and room.computer_plays(seat)
                and seat in room.game.to_move(room.match.state))

    async def _play_turn(self, room: Room, seat: str, version: int) -> bool:
        """Choose and play one move for ``seat`` on ``version``; True if played."""
        start = self.clock()
        state = room.match.state
        holder = room.table.holder(seat)
        level = holder.level if holder is not None else None
        if level is None:
            return False
        log.debug("room %s: the computer player at %s thinks on version %d", room.id, seat, version)
        pause = self._rng.uniform(self.settings.bot_pause, 2 * self.settings.bot_pause)
        try:
            move = await self.thinker.choose(room.game_id, state, seat, level, self.settings.bot_seconds,
                                             self._rng.getrandbits(63), room=room.id,
                                             person=not room.computer_only)
        except Exception:
            log.exception("room %s: the computer player at %s could not choose a move;"
                          " it plays a random legal move", room.id, seat)
            move = self._rng.choice(room.game.legal_moves(state, seat))
        wait = pause - (self.clock() - start)
        if wait > 0:
            await self.sleep(wait)
        def play() -> None:
            if room.closed:
                raise RoomError("not_seated", "the room has been closed")
            room.computer_move(seat, move, version)
        try:
            await room.act(play)
            self.played += 1
        except RoomError as exc:
            self.refused += 1
            level_log = log.error if exc.code in ("malformed_move", "illegal_move") else log.info
            level_log("room %s: the computer player's move %r at %s was refused (%s: %s)",
                      room.id, move, seat, exc.code, exc.message)
            if exc.code == "unavailable":
                # The storage fails: try again later, not in a tight loop of
                # searches (this task holds the turn until then).
                await self.sleep(UNAVAILABLE_WAIT)
                return False
        return True

    async def _pass(self, room: Room, seat: str) -> None:
        """After ``auto_pass_seconds``, pass for the person at ``seat``, whose
        only legal move on the current version is a pass."""
        version = room.version
        async with self.leases.hold(room.id, f"pass {seat}", version) as lease:
            if not lease.held:  # another server process passes for them
                await self.sleep(self.leases.retry_seconds)
                return
            await self.sleep(self.settings.auto_pass_seconds)
            if room.closed or not room.must_pass(seat):
                return  # the person passed (or the game went on) meanwhile
            try:
                await room.act(lambda: room.forced_pass(seat, version))
                lease.keep()
            except RoomError as exc:
                log.info("room %s: the forced pass at %s was not played (%s: %s)", room.id, seat,
                         exc.code, exc.message)
                if exc.code == "unavailable":
                    await self.sleep(UNAVAILABLE_WAIT)

    async def _ready_go_on(self, room: Room) -> None:
        """Deal the next deal or match of a table that has become ready."""
        version = room.version
        await self.sleep(0)
        if room.closed:
            return
        try:
            await room.act(lambda: room.go_on_if_ready(version))
        except RoomError as exc:
            log.info("room %s: the table could not go on (%s)", room.id, exc.message)
            await self.sleep(UNAVAILABLE_WAIT)  # a failing storage: do not retry at once

    def _watch_ready(self, room: Room) -> None:
        """Between deals, schedule for each person away (and still waited
        for) the moment the table stops waiting for them."""
        now = self.clock()
        for seat, holder in room.holders.items():
            since = holder.away_since
            if holder.computer_plays or room.connected(seat) or since is None:
                continue
            if now - since >= room.ready_away_seconds or not self._idle(room, f"ready {seat}"):
                continue
            delay = since + room.ready_away_seconds - now + NOTICE_SLACK
            self._start(room, f"ready {seat}", self._ready_notice(room, seat, since, delay))

    async def _ready_notice(self, room: Room, seat: str, since: float, delay: float) -> None:
        """After ``delay`` seconds, stop waiting for ``seat`` (away since
        ``since``): go on if the others are ready, else tell everyone."""
        await self.sleep(delay)
        holder = room.holders.get(seat)
        if room.closed or holder is None or holder.away_since != since:
            return
        try:
            await room.act(lambda: room.go_on_if_ready(announce=True))
        except RoomError as exc:
            log.info("room %s: the table could not go on (%s)", room.id, exc.message)

    async def _continue(self, room: Room) -> None:
        """Start the next deal or match of a watched room of computer players,
        after a pause for the spectators to read the result."""
        version = room.version
        async with self.leases.hold(room.id, "continue", version) as lease:
            if not lease.held:
                await self.sleep(self.leases.retry_seconds)
                return
            await self._go_on(room, version)
            lease.keep()

    async def _go_on(self, room: Room, version: int) -> None:
        await self.sleep(self.settings.bot_between_deals)
        if room.closed or not room.computer_only or not room.watched:
            return

        def go_on() -> None:
            if not room.closed and room.computer_only and room.watched:
                room.computer_continue(version)
        try:
            await room.act(go_on)
        except RoomError as exc:
            log.info("room %s: the computer players could not go on (%s)", room.id, exc.message)

    def _watch_absences(self, room: Room) -> None:
        """Schedule a notice for each person away mid-deal whose seat is not
        yet due for handing over."""
        if not room.away_since:
            return
        now = self.clock()
        for seat, holder in room.holders.items():
            since = holder.away_since
            if holder.kind != "human" or holder.computer_plays or holder.connection is not None:
                continue
            if since is None or now - since > room.handover_seconds:
                continue
            if self._idle(room, f"away {seat}"):
                delay = since + room.handover_seconds - now + NOTICE_SLACK
                self._start(room, f"away {seat}", self._notice(room, seat, delay))

    async def _notice(self, room: Room, seat: str, delay: float) -> None:
        """After ``delay`` seconds, tell everyone that ``seat`` may be handed
        to a computer player, if it may. Its away time may have moved
        meanwhile (with Redis, each reading of the presence hashes sets it
        again, to within a rounding): if it is not due yet, the poke that
        ends this task schedules the notice again."""
        await self.sleep(delay)
        async with room.lock:
            holder = room.holders.get(seat)
            if room.closed or holder is None or holder.away_since is None:
                return
            if room.may_hand_over(seat, self.clock()):
                room.broadcast()
