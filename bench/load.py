"""The load benchmark of the server (``make bench-load``): starts the server
as ``make run`` does (one uvicorn worker, SQLite on a temporary file) on a
free port, fresh for each run, and drives it with the shared load client
(``../shared/bench/load.py``, its README beside it) at the three loads the
issues quote: 100 rooms with no think time (saturated), 500 rooms and 1,250
rooms (5,000 sockets) with 1 s think time. Prints the client's summary of
each run, then one line per run: moves/s, round trip p50/p99/max in ms,
server CPU and KiB per room.

Options: ``--only saturated|500|1250`` runs one of them; ``--memory`` keeps
rooms in memory instead of SQLite; ``--reference`` runs the same loads
against the deliberately minimal room server of ``bench/minimal.py``
instead (the yardstick of what this machine allows: the rules and no
service); ``--duration`` shortens the runs;
``--profile DIR`` runs the server under cProfile and writes DIR/RUN.prof
(the figures of a profiled run are lower than without).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import IO, Any

from bench.server import free_port, start_server, stop_server

ROOT = Path(__file__).resolve().parent.parent
LOAD = ROOT.parent / "shared" / "bench" / "load.py"
RUNS = {
    "saturated": ["--rooms", "100", "--think-ms", "0", "--duration", "20"],
    "500": ["--rooms", "500", "--think-ms", "1000", "--duration", "30", "--echo", "--echo-match-rate"],
    "1250": ["--rooms", "1250", "--think-ms", "1000", "--duration", "30"],
}


REFERENCE_FLAGS = ["--ws", "websockets-sansio", "--ws-max-size", "1048576", "--ws-per-message-deflate",
                   "false"]
"""uvicorn's flags for ``bench/minimal.py``: its own sans-I/O websockets,
no compression, as the real server."""


def start(port: int, database: str, log: IO[bytes], profile: Path | None = None,
          reference: bool = False) -> subprocess.Popen[bytes]:
    """A fresh server as ``make run`` starts it, on ``port``, keeping rooms in
    ``database``, with the room limits lifted for the load client's many
    rooms from one address, under :mod:`bench.gcprobe` (its output to
    ``log``; profiled into ``profile`` if given); with ``reference``, the
    minimal server of ``bench/minimal.py`` instead."""
    extra = {"CARDBOARD_PROFILE": str(profile)} if profile is not None else {}
    if reference:
        return start_server(port, extra, log=log, module="bench.gcprobe", target="bench.minimal:app",
                            flags=REFERENCE_FLAGS)
    return start_server(port, {**extra, "CARDBOARD_DATABASE": database, "CARDBOARD_MAX_ROOMS": "100000",
                               "CARDBOARD_ROOM_CREATE_BURST": "100000",
                               "CARDBOARD_ROOM_CREATE_PER_HOUR": "1000000",
                               "CARDBOARD_WS_PER_ADDRESS": "100000", "CARDBOARD_WS_PER_MINUTE": "1000000"},
                        log=log, module="bench.gcprobe")


def run(name: str, memory: bool, duration: float | None, profile: Path | None = None,
        reference: bool = False) -> dict[str, object]:
    """One run on a fresh server; the client's last JSON line."""
    port = free_port()
    with tempfile.TemporaryDirectory() as tmp:
        log = open(Path(tmp) / "server.log", "w+b")  # noqa: SIM115 - read back below
        server = start(port, ":memory:" if memory else str(Path(tmp) / "bench.db"), log,
                       profile / f"{name}.prof" if profile is not None else None, reference)
        args = list(RUNS[name])
        if duration is not None:
            args[args.index("--duration") + 1] = str(duration)
        began = time.time()
        try:
            out = subprocess.run([sys.executable, str(LOAD), "--base", f"http://127.0.0.1:{port}",
                                  "--game", "get-stuck-4", "--server-pid", str(server.pid), *args],
                                 capture_output=True, text=True, timeout=600)
        finally:
            stop_server(server)
        log.seek(0)
        probe = [ln for ln in log.read().decode(errors="replace").splitlines() if ln.startswith("gc ")]
        log.close()
    print(f"==== {name} ({'the minimal server' if reference else 'memory' if memory else 'sqlite'})")
    print(out.stdout.strip())
    print("server " + (probe[-1] if probe else "gc: no report"))
    if out.returncode != 0:
        print(out.stderr.strip()[-2000:])
    lines = [ln for ln in out.stdout.splitlines() if ln.startswith("{")]
    result: dict[str, Any] = json.loads(lines[-1]) if lines else {}
    if probe and result:
        result["gc_in_window"] = in_window(json.loads(probe[-1][3:]), began, result)
        print(f"server full collections in the measured window: {result['gc_in_window']}")
    return result


def in_window(gc_report: dict[str, Any], began: float, result: dict[str, Any]) -> dict[str, Any]:
    """The full collections that fell in the client's measured window (from
    ``began``, when the client started, plus its setup and warm-up, for
    ``window_s``; to within the client's start-up time): how many, and their
    ms (median, max); and under ``"by_generation"`` the same for every
    generation, with their total ms."""
    start = began + float(result.get("setup_s", 0)) + float(result.get("warmup_s", 0))
    end = start + float(result.get("window_s", 0))
    by_generation = {}
    for generation in (0, 1, 2):
        ms = [m for t, g, m in gc_report.get("at", []) if g == generation and start <= t <= end]
        by_generation[str(generation)] = {
            "n": len(ms), "p50_ms": round(statistics.median(ms), 2) if ms else None,
            "max_ms": max(ms) if ms else None, "total_ms": round(sum(ms), 1)}
    full = dict(by_generation["2"])
    del full["total_ms"]
    return {**full, "by_generation": by_generation}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", choices=list(RUNS))
    parser.add_argument("--memory", action="store_true")
    parser.add_argument("--reference", action="store_true")
    parser.add_argument("--duration", type=float)
    parser.add_argument("--profile", type=Path)
    opts = parser.parse_args()
    if not LOAD.exists():
        raise SystemExit(f"the shared load client is not at {LOAD}")
    if opts.profile is not None:
        opts.profile.mkdir(parents=True, exist_ok=True)
    results = {name: run(name, opts.memory, opts.duration, opts.profile, opts.reference) for name in RUNS
               if opts.only in (None, name)}
    print("\nrun        moves/s   p50 ms   p99 ms   max ms  CPU %  KiB/room  errors")
    for name, r in results.items():
        rtt: dict[str, float] = r.get("rtt_ms") or {}  # type: ignore[assignment]
        server: dict[str, float] = r.get("server") or {}  # type: ignore[assignment]
        kib = server.get("kib_per_room_setup", 0)
        print(f"{name:<10} {r.get('moves_per_s', 0):>8} {rtt.get('p50', 0):>8} {rtt.get('p99', 0):>8}"
              f" {rtt.get('max', 0):>8} {r.get('server_cpu_pct', 0):>6} {kib:>9}"
              f"  {r.get('errors') or {}} {r.get('conn_failures') or {}}")


if __name__ == "__main__":
    main()
