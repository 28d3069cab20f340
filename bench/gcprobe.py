"""uvicorn with a probe of the garbage collector: ``python -m bench.gcprobe
ARGS`` runs ``uvicorn ARGS`` in this process and, when the server stops,
prints one line ``gc {...}`` (JSON) to stderr: how many collections of each
generation ran and how long the full (generation 2) ones took, in ms
(median, max), how many objects the collector tracked at the end,
``full_at``: each full collection's Unix time, ms and objects collected, and
``at``: every collection's Unix time, generation and ms. Used
by ``bench/load.py``. With ``CARDBOARD_PROFILE=FILE`` in the environment,
the server also runs under :mod:`cProfile` and writes its statistics to
FILE when it stops (``python -m pstats FILE``)."""

from __future__ import annotations

import cProfile
import gc
import json
import os
import statistics
import sys
import time
from typing import Any

import uvicorn
import uvicorn.main

_runs: dict[int, list[float]] = {0: [], 1: [], 2: []}
_start = [0.0]
_full_at: list[tuple[float, float, int]] = []  # (Unix seconds, ms, objects collected) per full collection
_at: list[tuple[float, int, float]] = []  # (Unix seconds, generation, ms) per collection


def _track(phase: str, info: dict[str, Any]) -> None:
    if phase == "start":
        _start[0] = time.perf_counter()
    else:
        ms = (time.perf_counter() - _start[0]) * 1000.0
        _runs[info["generation"]].append(ms)
        _at.append((time.time(), info["generation"], ms))
        if info["generation"] == 2:
            _full_at.append((time.time(), ms, info.get("collected", 0)))


def _report() -> None:
    full = _runs[2]
    out = {"collections": {str(g): len(r) for g, r in _runs.items()},
           "full_ms": {"n": len(full), "p50": round(statistics.median(full), 2) if full else None,
                       "max": round(max(full), 2) if full else None},
           "tracked_objects": len(gc.get_objects()),
           "full_at": [[round(t, 2), round(ms, 1), n] for t, ms, n in _full_at],
           "at": [[round(t, 3), g, round(ms, 2)] for t, g, ms in _at]}
    print("gc " + json.dumps(out), file=sys.stderr, flush=True)


_profile = cProfile.Profile() if os.environ.get("CARDBOARD_PROFILE") else None


def _reporting_shutdown(shutdown: Any) -> Any:
    async def wrapped(self: uvicorn.Server, *args: Any, **kwargs: Any) -> None:
        await shutdown(self, *args, **kwargs)
        if _profile is not None:
            _profile.disable()
            _profile.dump_stats(os.environ["CARDBOARD_PROFILE"])
        _report()
    return wrapped


if __name__ == "__main__":
    gc.callbacks.append(_track)
    # uvicorn ends by raising the signal it caught again, so exit handlers
    # do not run: report once its shutdown is done.
    uvicorn.Server.shutdown = _reporting_shutdown(uvicorn.Server.shutdown)  # type: ignore[method-assign]
    sys.argv[0] = "uvicorn"
    if _profile is not None:
        _profile.enable()
    uvicorn.main.main()
