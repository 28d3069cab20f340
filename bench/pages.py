"""Bytes a browser transfers to open a room page, on a first and a repeat visit.

Starts a real server (uvicorn on loopback, a free port, the ``Makefile``'s
flags), creates a Get Stuck room and opens its page twice in one Chromium
(Debian's, ``/usr/bin/chromium``) with one cache: the first visit downloads
the page and every file it loads (gzipped); the repeat visit downloads the
page again (room pages are ``no-store``) and revalidates every static file
with its ETag (``Cache-Control: no-cache``), which answers 304 with no body.

Counts what Chromium's network layer reports as received for each request
(``encodedDataLength``: headers and body as sent, compressed), the
websocket left out. Prints each request and the totals of both visits.

Usage: ``python bench/pages.py [--game get-stuck]``.
"""

from __future__ import annotations

import argparse
import json
import sys
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.server import free_port, start_server, stop_server  # noqa: E402

CHROMIUM = "/usr/bin/chromium"
LAUNCH_ARGS = ["--no-sandbox", "--disable-gpu"]


@dataclass(frozen=True)
class Transfer:
    """One request of a visit: its URL path, HTTP status and the bytes
    received for it (headers and body, as sent)."""

    path: str
    status: int
    received: int


def visit(page: Any, url: str) -> list[Transfer]:
    """Open ``url`` in the Playwright ``page`` and wait until the room has
    drawn its first state and the network is idle; return what each request
    transferred, in the order they finished."""
    cdp = page.context.new_cdp_session(page)
    cdp.send("Network.enable")
    status: dict[str, tuple[str, int]] = {}
    done: list[Transfer] = []

    def received(event: dict[str, Any]) -> None:
        response = event["response"]
        status[event["requestId"]] = (response["url"], int(response["status"]))

    def finished(event: dict[str, Any]) -> None:
        url_, code = status.get(event["requestId"], ("?", 0))
        path = "/" + url_.split("/", 3)[-1] if url_.count("/") >= 3 else url_
        done.append(Transfer(path, code, int(event["encodedDataLength"])))

    cdp.on("Network.responseReceived", received)
    cdp.on("Network.loadingFinished", finished)
    page.goto(url)
    page.wait_for_function("() => Number(document.querySelector('#room').dataset.version || -1) >= 0")
    page.wait_for_load_state("networkidle")
    cdp.detach()
    return done


def first_and_repeat(browser: Any, url: str) -> tuple[list[Transfer], list[Transfer]]:
    """The transfers of a first visit of ``url`` and of a second one in the
    same browser context (same cache)."""
    context = browser.new_context()
    try:
        page = context.new_page()
        first = visit(page, url)
        page.goto("about:blank")
        again = visit(page, url)
        return first, again
    finally:
        context.close()


def new_room(base: str, game: str) -> str:
    """The page URL of a new room of ``game``."""
    req = urllib.request.Request(base + "/api/rooms", data=json.dumps({"game": game}).encode(),
                                 headers={"Content-Type": "application/json"}, method="POST")
    with urllib.request.urlopen(req, timeout=10) as r:
        return base + str(json.load(r)["url"])


def main() -> None:
    from playwright.sync_api import sync_playwright

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--game", default="get-stuck", help="the room's game")
    args = parser.parse_args()
    port = free_port()
    server = start_server(port, {})
    try:
        url = new_room(f"http://127.0.0.1:{port}", args.game)
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=LAUNCH_ARGS)
            first, again = first_and_repeat(browser, url)
            browser.close()
    finally:
        stop_server(server)
    for name, transfers in (("first visit", first), ("repeat visit", again)):
        print(f"{name}: {len(transfers)} requests, {sum(t.received for t in transfers)} bytes")
        for t in transfers:
            print(f"  {t.status}  {t.received:>7}  {t.path}")


if __name__ == "__main__":
    main()
