"""The garbage-collection policy (``app/collector.py``): what survives any
collection, young, middle or full, is frozen, later ones leave it be, and
the sweep frees the cycles that died frozen."""

from __future__ import annotations

import asyncio
import contextlib
import gc
import weakref
from collections.abc import Callable, Iterator

import pytest

from app.collector import Collector


class Node:
    """An object in a reference cycle with itself: only a collection frees it."""

    def __init__(self) -> None:
        self.me = self


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def policy() -> Iterator[tuple[Collector, Clock]]:
    gc.collect()
    clock = Clock()
    collector = Collector(60.0, clock)
    collector.install()
    try:
        yield collector, clock
    finally:
        collector.uninstall()
        gc.collect()


def test_survivors_of_a_full_collection_are_frozen(policy: tuple[Collector, Clock]) -> None:
    kept = Node()
    gc.collect()
    assert gc.get_freeze_count() > 0
    assert gc.is_tracked(kept)
    assert all(kept is not o for o in gc.get_objects(generation=2)), "kept is in no generation"


@pytest.mark.parametrize("generation", [0, 1])
def test_survivors_of_a_young_or_middle_collection_are_frozen(
        policy: tuple[Collector, Clock], generation: int) -> None:
    """The middle and oldest generations stay empty: every collection walks
    only the objects made since the last (a middle one at 1,250 rooms had
    walked every room's latest table, 10-30 ms)."""
    gc.collect()
    frozen = gc.get_freeze_count()
    kept = Node()
    gc.collect(generation)
    assert gc.get_freeze_count() > frozen
    assert all(kept is not o for g in range(3) for o in gc.get_objects(generation=g))
    assert gc.get_objects(generation=1) == [] and gc.get_objects(generation=2) == []


def test_a_cycle_that_dies_young_is_freed_at_once(policy: tuple[Collector, Clock]) -> None:
    gc.collect()  # freezes what lives now
    young = Node()
    gone = weakref.ref(young)
    del young
    gc.collect()
    assert gone() is None


def test_a_cycle_that_dies_frozen_waits_for_the_sweep(policy: tuple[Collector, Clock]) -> None:
    collector, clock = policy
    old = Node()
    gone = weakref.ref(old)
    gc.collect()  # old survives: frozen
    del old
    gc.collect()
    assert gone() is not None, "a frozen cycle is not walked before the sweep"
    assert collector.sweeps == 0
    clock.now = 61.0
    gc.collect()
    assert gone() is None, "the sweep walks everything"
    assert collector.sweeps == 1
    assert gc.get_freeze_count() > 0, "and freezes what is left again"
    clock.now = 100.0
    gc.collect()
    assert collector.sweeps == 1, "the next sweep is 60 s after the last"


def _run_until(collector: Collector, clock: Clock, done: Callable[[], bool]) -> None:
    """Run :meth:`Collector.run` with ``clock`` past the next sweep's time,
    until ``done()`` or 3 s."""
    async def wait() -> None:
        task = asyncio.create_task(collector.run())
        await asyncio.sleep(0.05)
        clock.now += 61.0
        for _ in range(300):
            await asyncio.sleep(0.01)
            if done():
                break
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
    asyncio.run(wait())


def test_the_sweep_comes_without_anyone_collecting(policy: tuple[Collector, Clock]) -> None:
    """CPython never starts a full collection under this policy (a freeze
    resets its count): :meth:`Collector.run` sweeps when one is due and the
    frozen objects have grown by a quarter, and the cycles that died frozen
    are freed with no ``gc.collect()`` called."""
    collector, clock = policy
    collector.sweep()  # the baseline
    assert collector.sweeps == 1
    old = [Node() for _ in range(max(1000, gc.get_freeze_count() // 2))]
    gone = weakref.ref(old[0])
    gc.collect(1)  # they survive a middle collection: frozen
    del old
    junk = [[Node() for _ in range(100)] for _ in range(100)]  # collections of the young
    del junk
    assert gone() is not None and collector.grown()
    _run_until(collector, clock, lambda: gone() is None)
    assert gone() is None, "the sweep freed them"
    assert collector.sweeps == 2 and gc.get_freeze_count() > 0
    assert not collector.grown()


def test_no_sweep_while_the_frozen_objects_hold_steady(policy: tuple[Collector, Clock]) -> None:
    """The walk of everything is the one long pause left: with as many
    objects frozen as after the last sweep, none comes when due."""
    collector, clock = policy
    collector.sweep()
    few = Node()
    gone = weakref.ref(few)
    gc.collect(1)
    del few
    assert not collector.grown()
    _run_until(collector, clock, lambda: False)
    assert collector.sweeps == 1 and gone() is not None, "not swept: a few dead cycles wait"
    clock.now += 61.0
    gc.collect()  # an explicit full collection, due, sweeps all the same
    assert collector.sweeps == 2 and gone() is None


@pytest.mark.parametrize("busy", [True, False])
def test_young_collections_come_at_a_steady_pace_while_busy(
        policy: tuple[Collector, Clock], busy: bool) -> None:
    """:meth:`Collector.run` starts a young collection every
    ``young_seconds`` while the server is busy (at least ``idle_objects``
    young objects): with CPython's own collections off, what is made is
    walked (and frozen) all the same, and a young cycle that died is
    freed. An idle server is left be."""
    collector = Collector(60.0, Clock(), young_seconds=0.01, idle_objects=0 if busy else 10**9)
    gc.collect()
    kept, dead = Node(), Node()
    gone = weakref.ref(dead)
    del dead
    frozen = gc.get_freeze_count()

    async def run_a_while() -> None:
        task = asyncio.create_task(collector.run())
        await asyncio.sleep(0.2)
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task

    gc.disable()
    try:
        assert any(kept is o for o in gc.get_objects(generation=0))
        asyncio.run(run_a_while())
        young = any(kept is o for o in gc.get_objects(generation=0))
        if busy:
            assert not young and all(kept is not o for g in range(3) for o in gc.get_objects(generation=g))
            assert gc.get_freeze_count() > frozen
            assert gone() is None
        else:
            assert young and gone() is not None, "not collected"
    finally:
        gc.enable()


def test_uninstall_thaws_everything_and_stops_freezing() -> None:
    collector = Collector(60.0, Clock())
    collector.install()
    collector.install()
    gc.collect()
    assert gc.get_freeze_count() > 0
    collector.uninstall()
    assert gc.get_freeze_count() == 0
    gc.collect()
    assert gc.get_freeze_count() == 0


def test_sweep_seconds_must_be_positive() -> None:
    with pytest.raises(ValueError):
        Collector(0)
    with pytest.raises(ValueError):
        Collector(60.0, young_seconds=0)


def test_the_server_runs_the_policy_while_it_runs() -> None:
    from fastapi.testclient import TestClient

    from app.main import create_app
    from app.settings import Settings

    before = list(gc.callbacks)
    with TestClient(create_app(Settings(database=":memory:", gc_sweep_seconds=30))):
        added = [cb for cb in gc.callbacks if cb not in before]
        owner = getattr(added[0], "__self__", None) if len(added) == 1 else None
        assert isinstance(owner, Collector) and owner.sweep_seconds == 30
    assert gc.callbacks == before
    with TestClient(create_app(Settings(database=":memory:", gc_sweep_seconds=0))):
        assert gc.callbacks == before, "0 keeps CPython's own policy"
