"""Fixtures for the server tests (helpers are in ``roomtest.py``)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from fastapi.testclient import TestClient
from roomtest import make_client


@pytest.fixture
def client() -> Iterator[TestClient]:
    """A running app (lifespan included) with the default settings."""
    with make_client() as c:
        yield c
