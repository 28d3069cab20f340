"""Settings for every test: rooms are kept in memory unless a test names a
database file of its own (``CARDBOARD_DATABASE``).

Browser tests drive Chromium through Playwright's sync API, whose event loop
stays marked as running in the worker's thread for the rest of the session
(the ``playwright`` fixture is session-wide). A test that runs after them in
the same pytest-xdist worker and calls ``asyncio.run`` would fail ("cannot be
called from a running event loop"), so each test that is not a browser test
is set up and run with that mark lifted (the loop is not running meanwhile:
its greenlet waits) and put back after. Teardown is left alone: the last test
of a worker tears Playwright down."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Iterator

import pytest

os.environ.setdefault("CARDBOARD_DATABASE", ":memory:")


def _lifted(item: pytest.Item) -> Iterator[None]:
    held = None if item.get_closest_marker("browser") else asyncio.events._get_running_loop()
    if held is not None:
        asyncio.events._set_running_loop(None)
    try:
        return (yield)
    finally:
        if held is not None:
            asyncio.events._set_running_loop(held)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_setup(item: pytest.Item) -> Iterator[None]:
    return (yield from _lifted(item))


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Iterator[None]:
    return (yield from _lifted(item))
