"""How the server's garbage collector runs: every collection walks only
what is new.

A server keeps thousands of sockets and rooms alive for hours. CPython's
older generations are walked again and again: a full (generation 2)
collection walks every live container object (at 5,000 sockets some 300,000
objects and 260-400 ms during which no socket is served), and a middle
(generation 1) one walks everything that survived the young collections
since the last (at 1,250 rooms every room's latest table: 20,000-36,000
objects, 10-30 ms every two seconds, the longest pauses a move saw).

:class:`Collector` freezes (:func:`gc.freeze`) whatever survives any
collection, the young ones included, so that the middle and oldest
generations stay empty: every collection walks no more than the objects
made since the last one. And it starts the young collections itself, every
:data:`YOUNG_SECONDS` (:meth:`Collector.run`), so that each walks only that
long's worth of new objects (under 2 ms at 1,250 rooms, where CPython's own
pace let them grow to 2-16 ms). Frozen objects are still freed as soon as nothing
refers to them (reference counting), and most of what a move makes dies
that way (the table it replaced, the frames it sent); only a *cycle* of
frozen objects that nothing else refers to waits, until the sweep: the
frozen objects are thawed and a full collection (:meth:`Collector.run`, a
task of the server's) walks them all once, frees such cycles, and freezes
what is left again. The rooms and their sockets make no such cycles while
they play (none in 15 s of ``bench/load.py`` at 1,250 rooms, nor from
rooms of computer players in every game), nor when a socket ends, whether
cleanly, cut off, or on a protocol error or an oversize frame (the HTTP
half of a websocket's connection is let go without one,
:mod:`app.handshake`, and websockets' own side, its parser and the error
it failed on, once the socket is lost, :mod:`app.wsproto`; both proved by
``tests/app/test_handshake.py``). Pages leave a few (Jinja2's macros, Starlette's
middleware: about one object a request), so the sweep, the one long pause left (about
300 ms at 1,250 rooms), comes only when it may pay: at most every
``sweep_seconds``, and only once the frozen objects have grown by
:data:`GROWTH` since the last sweep (CPython's own rule for its full
collections). A server whose number of rooms holds steady is not swept at
all. ``sweep_seconds`` is ``Settings.gc_sweep_seconds``; 0 leaves CPython's
own policy as it is.
"""

from __future__ import annotations

import asyncio
import gc
import time
from collections.abc import Callable
from typing import Any

GROWTH = 0.25
"""How much the frozen objects must have grown (a fraction of their number
after the last sweep) before the next sweep."""

YOUNG_SECONDS = 0.05
"""Seconds between two young collections that :meth:`Collector.run` starts
(:attr:`Collector.young_seconds`)."""

IDLE_SECONDS = 1.0
"""Seconds between two looks of :meth:`Collector.run` while the server is
idle (fewer young objects than :attr:`Collector.idle_objects`)."""

IDLE_OBJECTS = 200
"""Young objects below which :meth:`Collector.run` takes the server for
idle: no collection, and the next look in :data:`IDLE_SECONDS`."""


class Collector:
    """The policy above, installed with :meth:`install` (a ``gc.callbacks``
    entry) and removed with :meth:`uninstall`, and paced by :meth:`run`;
    ``clock`` (seconds) times the sweeps, ``young_seconds`` (seconds) is
    the pace of the young collections, ``idle_objects`` how few young
    objects make the server idle. ``sweeps`` counts the full
    collections that walked everything. Raises ``ValueError`` if either
    interval is not positive."""

    def __init__(self, sweep_seconds: float, clock: Callable[[], float] = time.monotonic,
                 young_seconds: float = YOUNG_SECONDS, idle_objects: int = IDLE_OBJECTS) -> None:
        if sweep_seconds <= 0:
            raise ValueError("sweep_seconds must be positive")
        if young_seconds <= 0:
            raise ValueError("young_seconds must be positive")
        self.sweep_seconds = sweep_seconds
        self.young_seconds = young_seconds
        self.idle_objects = idle_objects
        self.clock = clock
        self.sweeps = 0
        self._due = clock() + sweep_seconds
        self._frozen = gc.get_freeze_count()  # after the last sweep (or now)
        self._sweeping = False

    def sweep(self) -> None:
        """Walk everything now: thaw what was frozen and run a full
        collection, which frees the cycles that died frozen; what is left
        is frozen again (at the collection's end)."""
        self._due = self.clock()
        gc.collect()

    def grown(self) -> bool:
        """True if the frozen objects have grown by :data:`GROWTH` since the
        last sweep: dead cycles may be among them."""
        return gc.get_freeze_count() >= self._frozen * (1 + GROWTH)

    async def run(self) -> None:
        """For as long as this runs (a task of the server's): a young
        collection every ``young_seconds``, and a sweep every
        ``sweep_seconds`` if the frozen objects have :meth:`grown`
        (``clock`` is looked at each time). A full collection started
        otherwise (``gc.collect()``) sweeps if one is due, grown or not.

        The young collections: CPython starts one once 700 more container
        objects have been made than freed, and a busy server frees about as
        many as it makes (each move makes a table and frees the one
        before), so it walks whatever lived since the last, thousands of
        objects and 2-16 ms at 1,250 rooms, the longest pauses left. Started
        here at a steady pace, each walks a fiftieth of a second's worth:
        the same walk in short pieces. While fewer than ``idle_objects``
        are young the server is idle: nothing is collected and the next
        look comes in :data:`IDLE_SECONDS`, so that an idle server wakes
        once a second for this, not twenty times."""
        while True:
            busy = len(gc.get_objects(generation=0)) >= self.idle_objects
            if busy:
                gc.collect(0)
            await asyncio.sleep(self.young_seconds if busy else IDLE_SECONDS)
            if self.clock() < self._due:
                continue
            if self.grown():
                self.sweep()
            else:
                self._due = self.clock() + self.sweep_seconds

    def install(self) -> None:
        """Run the policy from now on (once, however often called)."""
        if self._callback not in gc.callbacks:
            gc.callbacks.append(self._callback)

    def uninstall(self) -> None:
        """Stop it and thaw what it froze: CPython's own policy again."""
        if self._callback in gc.callbacks:
            gc.callbacks.remove(self._callback)
        gc.unfreeze()

    def _callback(self, phase: str, info: dict[str, Any]) -> None:
        generation = info.get("generation")
        if generation != 2:
            if phase == "stop":
                # The survivors have just joined an older generation.
                gc.freeze()
            return
        if phase == "start":
            now = self.clock()
            if now >= self._due:  # this one walks everything
                gc.unfreeze()
                self.sweeps += 1
                self._due = now + self.sweep_seconds
                self._sweeping = True
        elif phase == "stop":
            # Every generation has just been collected: what is left is alive.
            gc.freeze()
            if self._sweeping:
                self._sweeping = False
                self._frozen = gc.get_freeze_count()
