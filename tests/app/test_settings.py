"""Server settings from the environment."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest
from pydantic import ValidationError

from app.settings import Settings
from engine.registry import GAMES


def test_defaults() -> None:
    s = Settings()
    assert s.games == tuple(GAMES)
    assert s.bot_seconds == 1.0
    assert s.room_idle_hours > 0 and s.max_rooms >= 1
    assert s.room_idle_seconds == s.room_idle_hours * 3600


def test_games_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CARDBOARD_GAMES", " get-stuck-4 , get-stuck,get-stuck-4 ")
    monkeypatch.setenv("CARDBOARD_MAX_ROOMS", "7")
    monkeypatch.setenv("CARDBOARD_ROOM_IDLE_HOURS", "0.5")
    s = Settings()
    assert s.games == ("get-stuck-4", "get-stuck")
    assert s.max_rooms == 7 and s.room_idle_seconds == 1800


def test_empty_games_means_all(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CARDBOARD_GAMES", "")
    assert Settings().games == tuple(GAMES)


def test_unknown_game_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CARDBOARD_GAMES", "get-stuck,chess")
    with pytest.raises(ValidationError, match=r"unknown game id.*'chess'"):
        Settings()


@pytest.mark.parametrize("field", [{"max_rooms": 0}, {"room_idle_hours": 0}, {"bot_seconds": -1},
                                   {"bot_seconds": float("inf")}, {"handover_seconds": float("nan")},
                                   {"bot_pause": 1e300}, {"auto_pass_seconds": 61}])
def test_bad_numbers(field: dict) -> None:
    """Below the minimum, infinite, NaN, or so long that computer players
    would never move (break-it pass: 'inf' passed a > 0 check)."""
    with pytest.raises(ValidationError):
        Settings(**field)


@pytest.mark.parametrize(("url", "why"), [
    ("garbage", "begins with redis://, rediss:// or unix://"),
    ("localhost:6379", "begins with redis://"), ("http://redis:6379", "begins with redis://"),
    ("redis://:notaport/0", "cannot be read: port"), ("redis://127.0.0.1:99999/0", "cannot be read: port"),
    ("redis://[::1", "cannot be read"), ("redis://h:6379/abc", "database of a Redis address is a number"),
    ("redis://", "names its host"), ("unix://", "names its socket")])
def test_a_bad_redis_address_is_a_clear_error(url: str, why: str) -> None:
    """Each said in one line at start-up (break-it and verification passes:
    some gave a 60-line traceback, a bad database number was taken as 0)."""
    with pytest.raises(ValidationError, match=re.escape(why)):
        Settings(redis_url=url)


@pytest.mark.parametrize("url", ["redis://cache:6379/0", "rediss://u:p@h:6380/2", "redis://h",
                                 "unix:///run/redis.sock"])
def test_good_redis_addresses(url: str) -> None:
    assert Settings(redis_url=url).redis_url == url


def test_games_as_a_list() -> None:
    assert Settings(games=["get-stuck"]).games == ("get-stuck",)  # type: ignore[arg-type]


def test_a_full_server_frees_a_room_nobody_opened_rather_than_refusing() -> None:
    """A flood of created-but-never-opened rooms cannot lock everyone out, and
    a room is never evicted in its first minutes (before its creator opens it)."""
    import asyncio

    from app.lobby import EVICT_AGE, Lobby, LobbyFull

    async def run() -> None:
        lobby = Lobby(Settings(max_rooms=3))
        first = await lobby.create_room("get-stuck", {})
        for _ in range(2):
            await lobby.create_room("get-stuck", {})
        with pytest.raises(LobbyFull):  # all three are young
            await lobby.create_room("get-stuck", {})
        lobby.wall = lambda: time.time() + EVICT_AGE + 1
        for _ in range(5):
            await lobby.create_room("get-stuck", {})
        assert len(lobby.store) == 3 and await lobby.storage.count_open() == 3
        assert lobby.store.get(first.id) is None  # the oldest unopened room went first
        for room_id in lobby.store.ids():
            room = lobby.store.get(room_id)
            assert room is not None
            room.visited = True
        with pytest.raises(LobbyFull):
            await lobby.create_room("get-stuck", {})
    asyncio.run(run())


def test_the_room_limit_follows_what_memory_allows(tmp_path: Path) -> None:
    """By default a quarter of the memory, at 64 KiB a room: about 4,000
    rooms a GiB, at least 1,000 and at most 100,000; a container's limit
    (cgroup v2 ``memory.max``) counts rather than the machine's."""
    from app.settings import memory_bytes, rooms_memory_allows

    assert rooms_memory_allows(2**30) == 4096
    assert rooms_memory_allows(8 * 2**30) == 32768
    assert rooms_memory_allows(64 * 2**20) == 1000 and rooms_memory_allows(2**40) == 100_000
    limit = tmp_path / "memory.max"
    limit.write_text("536870912\n")
    assert memory_bytes(limit) == 2**29
    limit.write_text("max\n")  # no limit in the container: the machine's memory
    machine = memory_bytes(limit)
    assert machine is not None and machine > 2**29
    assert Settings().max_rooms == rooms_memory_allows()
    assert Settings(max_rooms=7).max_rooms == 7


def test_a_wrong_setting_stops_the_server_with_a_line_not_a_traceback(tmp_path: Path) -> None:
    """``uvicorn app.main:app`` with wrong settings: the process stops (exit
    status 1) and says which setting is wrong and why, one line each."""
    env = {**os.environ, "CARDBOARD_GAMES": "chess", "CARDBOARD_KEEP_DAYS": "-5",
           "CARDBOARD_DATABASE": str(tmp_path / "cb.db")}
    run = subprocess.run([sys.executable, "-c", "import app.main"], env=env, capture_output=True,
                         text=True, timeout=60, cwd=Path(__file__).parents[2])
    assert run.returncode == 1
    assert "Traceback" not in run.stderr
    lines = run.stderr.strip().splitlines()
    assert lines[0] == "Cardboard cannot start: a setting is wrong", run.stderr
    assert sorted(line.strip().split(":")[0] for line in lines[1:]) == [
        "CARDBOARD_GAMES", "CARDBOARD_KEEP_DAYS"], run.stderr
    assert "unknown game id(s) 'chess'" in run.stderr
