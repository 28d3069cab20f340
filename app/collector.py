"""How the server's garbage collector runs: full collections that walk only
what is new.

A server keeps thousands of sockets and rooms alive for hours. CPython's full
(generation 2) collection walks every live container object each time it
runs, and it runs whenever a quarter as many objects again have lived long
enough to reach that generation: at 5,000 sockets that is some 300,000
objects and 260-400 ms during which no socket is served, every few seconds
(``bench/load.py`` prints them). Most of those objects (sockets, rooms, their
tables) are the same from one collection to the next.

:class:`Collector` freezes (:func:`gc.freeze`) whatever survives a
collection of the middle or the oldest generation, so that the oldest
generation stays empty: a full collection then walks no more than a
middle one (the young objects), instead of all that reached the oldest
generation since the last (tens of milliseconds at 1,250 rooms, in most
30 s windows of ``bench/load.py``). Frozen objects are still freed as soon as
nothing refers to them (reference counting); only a *cycle* of them that
nothing else refers to waits, until the sweep: the frozen objects are
thawed and a full collection (:meth:`Collector.run`, a task of the
server's) walks them all once, frees such cycles, and freezes what is left
again. That walk is the one long pause left (about 300 ms at 500 rooms on a
small machine), so it comes only when it may pay: at most every
``sweep_seconds``, and only once the frozen objects have grown by
:data:`GROWTH` since the last sweep (CPython's own rule for its full
collections). A server whose rooms make no garbage cycles, and whose number
of rooms holds steady, is not swept at all. ``sweep_seconds`` is
``Settings.gc_sweep_seconds``; 0 leaves CPython's own policy as it is.
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


class Collector:
    """The policy above, installed with :meth:`install` (a ``gc.callbacks``
    entry) and removed with :meth:`uninstall`; ``clock`` (seconds) times the
    sweeps. ``sweeps`` counts the full collections that walked everything."""

    def __init__(self, sweep_seconds: float, clock: Callable[[], float] = time.monotonic) -> None:
        if sweep_seconds <= 0:
            raise ValueError("sweep_seconds must be positive")
        self.sweep_seconds = sweep_seconds
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
        """Sweep every ``sweep_seconds`` if the frozen objects have
        :meth:`grown`, for as long as this runs (a task of the server's; it
        looks at ``clock`` every second). CPython itself never starts a
        full collection under this policy (a freeze resets the count of
        collections that starts one). A full collection started otherwise
        (``gc.collect()``) sweeps if one is due, grown or not."""
        while True:
            await asyncio.sleep(min(1.0, max(0.0, self._due - self.clock())))
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
        if generation == 1:
            if phase == "stop":
                # The survivors have just joined the oldest generation.
                gc.freeze()
            return
        if generation != 2:
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
