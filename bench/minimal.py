"""A deliberately minimal room server, the yardstick of ``bench/load.py
--reference``: what the load benchmark's figures would be on this machine
with the same rules and none of the service.

It speaks just enough of ``docs/protocol.md`` for ``../shared/bench/load.py``:
``GET /api/games``, ``POST /api/rooms`` and the ``join``, ``move``,
``next_deal`` and ``rematch`` frames, answered by ``joined``, ``state`` and
``error`` frames. The rules are the engine's (:class:`engine.match.Match`);
each seat's ``state`` frame carries the version, the phase, the seats to
move, its legal moves and its own view of the board (``Game.view``),
encoded with orjson. Everything else the real server does is left out on
purpose: rooms live in memory only (no durability, no journal), no log, no
presence, no chat, no patches, no rate limits, no computer players, no
checks beyond the engine's own, and plain FastAPI websockets on uvicorn's
``websockets-sansio`` protocol. Run it with ``uvicorn bench.minimal:app``.
Not a server for people: anyone may take any seat."""

from __future__ import annotations

import secrets
from typing import Any

import orjson
from fastapi import FastAPI, WebSocket, WebSocketDisconnect
from fastapi.responses import JSONResponse

from engine.base import IllegalMove, MalformedMove
from engine.match import Match
from engine.registry import GAMES, get_game


class MiniRoom:
    """One room: its match, its version and the socket of each seat taken."""

    def __init__(self, game_id: str) -> None:
        self.game_id = game_id
        self.match = Match.new(game_id, {}, secrets.randbits(64))
        self.version = 0
        self.seats = get_game(game_id).seats({})
        self.sockets: dict[str, WebSocket] = {}

    def phase(self) -> str:
        if len(self.sockets) < len(self.seats):
            return "waiting"
        if self.match.over:
            return "match_over"
        return "deal_over" if self.match.deal_over else "playing"

    def frame(self, seat: str) -> str:
        game, state, phase = self.match.game, self.match.state, self.phase()
        to_move = list(game.to_move(state)) if phase == "playing" else []
        legal = list(game.legal_moves(state, seat)) if seat in to_move else []
        return orjson.dumps({"type": "state", "version": self.version, "phase": phase, "you": seat,
                             "to_move": to_move, "legal_moves": legal,
                             "view": game.view(state, seat)}).decode()

    async def broadcast(self) -> None:
        for seat, socket in list(self.sockets.items()):
            try:
                await socket.send_text(self.frame(seat))
            except (WebSocketDisconnect, RuntimeError):
                self.sockets.pop(seat, None)


app = FastAPI()
ROOMS: dict[str, MiniRoom] = {}


@app.get("/healthz")
async def healthz() -> dict[str, str]:
    return {"status": "ok"}


@app.get("/api/games")
async def games() -> list[dict[str, Any]]:
    return [{"id": game_id, "seats": list(get_game(game_id).seats({}))} for game_id in GAMES]


@app.post("/api/rooms", status_code=201)
async def create_room(body: dict[str, Any]) -> Any:
    game_id = body.get("game")
    if game_id not in GAMES:
        return JSONResponse({"detail": "unknown game"}, status_code=422)
    room_id = secrets.token_urlsafe(12)
    ROOMS[room_id] = MiniRoom(str(game_id))
    return {"room": room_id}


def _error(code: str, message: str) -> str:
    return orjson.dumps({"type": "error", "code": code, "message": message}).decode()


@app.websocket("/ws/{room_id}")
async def play(websocket: WebSocket, room_id: str) -> None:
    await websocket.accept()
    room = ROOMS.get(room_id)
    if room is None:
        await websocket.close(4404)
        return
    seat: str | None = None
    try:
        while True:
            frame = orjson.loads(await websocket.receive_text())
            kind = frame.get("type")
            if kind == "join" and seat is None and frame.get("seat") in room.seats:
                seat = str(frame["seat"])
                room.sockets[seat] = websocket
                await websocket.send_text(orjson.dumps({"type": "joined", "seat": seat}).decode())
                await room.broadcast()
                continue
            if seat is None or frame.get("version") != room.version:
                await websocket.send_text(_error("stale_version", "not on this version"))
                await websocket.send_text(room.frame(seat or room.seats[0]))
                continue
            try:
                if kind == "move" and room.phase() == "playing":
                    room.match = room.match.play(seat, str(frame.get("move")))
                elif kind == "next_deal" and room.phase() == "deal_over":
                    room.match = room.match.next_deal()
                elif kind == "rematch" and room.phase() == "match_over":
                    room.match = Match.new(room.game_id, {}, secrets.randbits(64))
                else:
                    await websocket.send_text(_error("not_playing", f"no {kind} now"))
                    continue
            except (MalformedMove, IllegalMove) as exc:
                await websocket.send_text(_error("illegal_move", str(exc)))
                continue
            room.version += 1
            await room.broadcast()
    except WebSocketDisconnect:
        pass
    finally:
        if seat is not None and room.sockets.get(seat) is websocket:
            del room.sockets[seat]
        if not room.sockets:
            ROOMS.pop(room_id, None)
