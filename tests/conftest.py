"""Settings for every test: rooms are kept in memory unless a test names a
database file of its own (``CARDBOARD_DATABASE``)."""

from __future__ import annotations

import os

os.environ.setdefault("CARDBOARD_DATABASE", ":memory:")
