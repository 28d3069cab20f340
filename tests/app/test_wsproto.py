"""The lean parts of the websocket protocol (``app/wsproto.py``): its queue
and event behave as asyncio's do where uvicorn uses them."""

from __future__ import annotations

import asyncio

import pytest

from app.wsproto import LeanEvent, LeanQueue


def test_queue_hands_items_over_in_order_and_wakes_a_waiting_getter() -> None:
    async def main() -> None:
        q: LeanQueue[int] = LeanQueue()
        assert q.empty() and q.qsize() == 0
        q.put_nowait(1)
        q.put_nowait(2)
        assert not q.empty() and q.qsize() == 2
        assert await q.get() == 1 and await q.get() == 2
        getter = asyncio.create_task(q.get())
        await asyncio.sleep(0)
        assert not getter.done()
        q.put_nowait(3)
        assert await asyncio.wait_for(getter, 1) == 3
        assert q.empty() and q._getters is None

    asyncio.run(main())


def test_queue_two_getters_each_get_one_item() -> None:
    async def main() -> None:
        q: LeanQueue[str] = LeanQueue()
        a, b = asyncio.create_task(q.get()), asyncio.create_task(q.get())
        await asyncio.sleep(0)
        q.put_nowait("x")
        q.put_nowait("y")
        assert sorted(await asyncio.gather(a, b)) == ["x", "y"]

    asyncio.run(main())


def test_a_cancelled_getter_loses_nothing() -> None:
    async def main() -> None:
        q: LeanQueue[int] = LeanQueue()
        getter = asyncio.create_task(q.get())
        await asyncio.sleep(0)
        getter.cancel()
        with pytest.raises(asyncio.CancelledError):
            await getter
        assert q._getters is None
        q.put_nowait(7)
        assert await asyncio.wait_for(q.get(), 1) == 7

    asyncio.run(main())


def test_event_wait_returns_at_once_when_set_and_waits_when_cleared() -> None:
    async def main() -> None:
        e = LeanEvent()
        assert not e.is_set()
        e.set()
        assert e.is_set() and await asyncio.wait_for(e.wait(), 1) is True
        e.clear()
        waiters = [asyncio.create_task(e.wait()) for _ in range(2)]
        await asyncio.sleep(0)
        assert not any(w.done() for w in waiters)
        e.set()
        assert await asyncio.wait_for(asyncio.gather(*waiters), 1) == [True, True]
        assert e._waiters is None

    asyncio.run(main())
