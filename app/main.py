"""The Cardboard web server: pages, the HTTP API and the room websocket.

``app`` is the ASGI app (``uvicorn app.main:app``), built by
:func:`create_app` from the environment's :class:`app.settings.Settings`.
Tests call ``create_app`` with their own settings and store.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from functools import partial
from pathlib import Path
from typing import Annotated, Any, Literal

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import HTMLResponse, JSONResponse, PlainTextResponse, RedirectResponse, Response
from fastapi.staticfiles import StaticFiles
from fastapi.templating import Jinja2Templates
from jinja2 import TemplateNotFound
from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
)
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.types import Message, Receive, Scope, Send

from app.bots import Thinker
from app.collector import Collector
from app.history import History, Reviewed, deal_review, match_review, read
from app.limits import excerpt
from app.lobby import EVICT_AGE, ComputersBusy, Lobby, LobbyFull, TooManyRooms, Unavailable
from app.logs import get_logger, install_log_filters
from app.protocol import BOT_LEVELS, DEFAULT_LEVEL, DealReview, MatchReview, check_level, too_many_digits
from app.security import guard_sockets, openapi_url, protect
from app.settings import Settings, get_settings
from app.storage import Storage, StorageError
from app.table import ROOM_OPTIONS, check_seed
from app.ws import serve
from engine.base import OptionError
from engine.record import MAX_SEED, RecordError, format_record

log = get_logger(__name__)

ROOT = Path(__file__).resolve().parent.parent
TEMPLATES = ROOT / "templates"
STATIC = ROOT / "static"


class BotSeats(BaseModel):
    """Computer players to seat as the room is created (an addition to the
    contract, ``docs/protocol.md``): their ``level`` and their ``seats``,
    ``"others"`` (every seat but the first, left for the creator), ``"all"``
    or a list of seats."""

    model_config = ConfigDict(extra="forbid")

    level: str = DEFAULT_LEVEL
    seats: Literal["others", "all"] | list[str] = "others"
    levels: dict[str, str] | None = None
    """Seat → level, for seats of ``seats`` that play at another level than
    ``level`` (a deal played again with the levels it had)."""

    @field_validator("level", mode="before")
    @classmethod
    def _known_level(cls, value: Any) -> str:
        """Null is the default level, as in ``add_bot``."""
        return DEFAULT_LEVEL if value is None else check_level(value)

    @field_validator("levels")
    @classmethod
    def _known_levels(cls, value: dict[str, str] | None) -> dict[str, str] | None:
        for level in (value or {}).values():
            check_level(level)
        return value


class GivenDeal(BaseModel):
    """A deal to deal again as the first deal of a new room ("Play this deal
    again", ``docs/protocol.md``): its own ``seed`` (a whole number, or its
    digits as a string) and its ``starter`` seat."""

    model_config = ConfigDict(extra="forbid")

    seed: int = Field(ge=0, le=MAX_SEED)
    starter: str

    @field_validator("seed", mode="before")
    @classmethod
    def _seed(cls, value: Any) -> int:
        """As the ``seed`` option takes it (``app.table.check_seed``): not
        ``true``, not ``" 12 "``."""
        return check_seed(value)


class CreateRoom(BaseModel):
    """The body of ``POST /api/rooms``; an unknown field is refused."""

    model_config = ConfigDict(extra="forbid")

    game: str
    options: dict[str, Any] = Field(default_factory=dict)
    bots: BotSeats | None = None
    deal: GivenDeal | None = None


class RecordText(BaseModel):
    """The body of ``POST /api/records``: a match record's text
    (``docs/notation.md``, "Match records") and, if given, the game it must
    be a record of."""

    model_config = ConfigDict(extra="forbid")

    record: str
    game: str | None = None


NOT_JSON = "the body must be a JSON object in UTF-8"
"""What a request whose body is not JSON at all is told (422)."""
ROBOTS = ("User-agent: *\nDisallow: /r/\nDisallow: /m/\nDisallow: /api/\nDisallow: /ws/\n"
          "Disallow: /review\n")
"""``/robots.txt``: rooms, match pages, the API and the review page stay out
of search engines (a room's address grants a seat)."""


def _deal_number(raw: Any) -> int:
    """A deal's number in an address, from 1 (``/deals/2``): digits only, so
    that ``/deals/1.0`` or ``/deals/+1`` is refused, not read as deal 1.
    Raises ``ValueError`` with a sentence otherwise."""
    text = str(raw)
    if not (text.isascii() and text.isdigit()) or len(text) > 9:
        raise ValueError(f"{excerpt(text)!r} is not a deal number: write a whole number such as 1")
    return int(text)


DealNumber = Annotated[int, BeforeValidator(_deal_number)]
"""The ``number`` of a ``…/deals/<number>`` address (see :func:`_deal_number`)."""


class CreatedRoom(BaseModel):
    """The answer to ``POST /api/rooms``: the room id and its page; with
    ``bots``, also ``seat``, the first seat left free for the creator (absent
    when computer players took every seat)."""

    room: str
    url: str
    seat: str | None = None


class Cardboard(FastAPI):
    """The app: FastAPI, except that the room websocket ``/ws/{room}`` goes
    straight to :func:`app.ws.serve` (its routing and middleware layers would
    otherwise stay alive for as long as each socket is open). A start the
    storage refused (``state.refused``: the reason is logged in one line
    already) is told to uvicorn without Starlette's traceback. A ``HEAD``
    request is answered as a ``GET``, without the body."""

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "websocket" and scope["path"].startswith("/ws/") \
                and "/" not in scope["path"][4:]:
            await self.state.serve_socket(scope, receive, send)
            return
        if scope["type"] == "lifespan":
            async def quiet(message: Message) -> None:
                if message["type"] == "lifespan.startup.failed" and getattr(self.state, "refused", False):
                    message = {**message, "message": ""}
                await send(message)

            await super().__call__(scope, receive, quiet)
            return
        if scope["type"] == "http" and scope["method"] == "HEAD":
            # A HEAD request is answered as the GET would be, without the body
            # (link previews and uptime monitors ask so; FastAPI's routes
            # would answer 405).
            async def headers_only(message: Message) -> None:
                if message["type"] == "http.response.body":
                    if message.get("more_body"):
                        return
                    message = {"type": "http.response.body", "body": b""}
                await send(message)

            await super().__call__({**scope, "method": "GET"}, receive, headers_only)
            return
        await super().__call__(scope, receive, send)


def create_app(settings: Settings | None = None, storage: Storage | None = None,
               thinker: Thinker | None = None, *,
               clock: Callable[[], float] = time.monotonic) -> FastAPI:
    """The server for ``settings`` (from the environment by default) keeping
    rooms in ``storage`` (by default the one ``settings.database`` names),
    its computer players thinking with ``thinker`` (by default as
    ``settings`` say), rooms and computer players keeping time by ``clock``
    (:class:`app.lobby.Lobby`). The storage is opened when the app starts;
    if it cannot be, the server does not start and says why."""
    settings = settings if settings is not None else get_settings()
    lobby = Lobby(settings, storage, thinker, clock=clock)
    history = History(lobby)
    templates = Jinja2Templates(directory=str(TEMPLATES))

    @contextlib.asynccontextmanager
    async def lifespan(server: FastAPI) -> AsyncIterator[None]:
        try:
            await lobby.open()
        except StorageError as exc:
            log.critical("Cardboard cannot start: %s", exc)
            server.state.refused = True
            raise
        # What is alive now (modules, routes, models) lives as long as the
        # server: keep it out of every later full collection.
        gc.collect()
        gc.freeze()
        collector = Collector(settings.gc_sweep_seconds) if settings.gc_sweep_seconds > 0 else None
        tasks = [asyncio.create_task(_sweep_forever(lobby))]
        if collector is not None:
            collector.install()
            tasks.append(asyncio.create_task(collector.run()))
        try:
            yield
        finally:
            if collector is not None:
                collector.uninstall()
            for task in tasks:
                task.cancel()
            for task in tasks:
                with contextlib.suppress(asyncio.CancelledError):
                    await task
            await lobby.close()

    app = Cardboard(title="Cardboard", lifespan=lifespan, docs_url=None, redoc_url=None,
                    openapi_url=openapi_url(settings))
    protect(app, settings)
    install_log_filters()
    app.state.lobby = lobby
    app.state.settings = settings

    def page(request: Request, name: str, context: dict[str, Any], status: int = 200) -> Response:
        return templates.TemplateResponse(request, name, context, status_code=status)

    def storage_down(then: str = "try again in a moment") -> Response:
        return JSONResponse({"detail": f"the server cannot reach its storage just now; {then}"},
                            status_code=503)

    def not_found(request: Request, message: str) -> Response:
        try:
            return page(request, "404.html", {"games": lobby.games(), "message": message}, 404)
        except TemplateNotFound:
            return HTMLResponse(f"<!doctype html><title>Not found</title><p>{_escape(message)}</p>"
                                '<p><a href="/">Create a room</a></p>', status_code=404)

    # ---- errors ---------------------------------------------------------------------------
    @app.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, exc: StarletteHTTPException) -> Response:
        if exc.status_code == 404 and not request.url.path.startswith("/api/"):
            return not_found(request, "There is nothing at this address.")
        if exc.status_code == 400 and exc.detail == "There was an error parsing the body":
            # FastAPI's answer to a body it cannot decode (not UTF-8, nested
            # too deep, a number longer than Python reads): a bad body, like
            # any other (docs/protocol.md).
            digits = exc.__cause__ and too_many_digits("the body", exc.__cause__)
            return JSONResponse({"detail": digits or NOT_JSON}, status_code=422)
        return JSONResponse({"detail": exc.detail}, status_code=exc.status_code,
                            headers=getattr(exc, "headers", None))

    @app.exception_handler(RequestValidationError)
    async def bad_request(request: Request, exc: RequestValidationError) -> Response:
        first: dict[str, Any] = dict(exc.errors()[0]) if exc.errors() else {"loc": (), "msg": "bad request"}
        if first.get("type") == "json_invalid":
            return JSONResponse({"detail": NOT_JSON}, status_code=422)
        where = ".".join(str(p) for p in first["loc"] if p not in ("body", "path")) or "body"
        msg = first["msg"]
        if first.get("type") == "value_error":  # our own checks: their sentence alone
            msg = str(first.get("ctx", {}).get("error", msg))
        return JSONResponse({"detail": excerpt(f"{where}: {msg}")}, status_code=422)

    # ---- API ------------------------------------------------------------------------------
    @app.get("/healthz")
    async def healthz() -> dict[str, str]:
        return {"status": "ok"}

    @app.get("/robots.txt", response_class=PlainTextResponse, include_in_schema=False)
    async def robots() -> str:
        # A room's address is its invitation, a match page is for those it is
        # shared with: search engines index the home and rules pages only.
        return ROBOTS

    @app.get("/api/games")
    async def games() -> list[dict[str, Any]]:
        return lobby.games()

    @app.post("/api/rooms", status_code=201, response_model=CreatedRoom, response_model_exclude_none=True)
    async def create_room(body: CreateRoom, request: Request) -> CreatedRoom | JSONResponse:
        bots = body.bots
        client = request.client.host if request.client is not None else None
        try:
            room = await lobby.create_room(body.game, body.options, bots.seats if bots else None,
                                           bots.level if bots else DEFAULT_LEVEL, client,
                                           (body.deal.seed, body.deal.starter) if body.deal else None,
                                           bots.levels if bots else None)
        except KeyError as exc:
            return JSONResponse({"detail": excerpt(str(exc.args[0]))}, status_code=422)
        except OptionError as exc:
            return JSONResponse({"detail": excerpt(str(exc))}, status_code=422)
        except TooManyRooms as exc:
            return JSONResponse({"detail": str(exc)}, status_code=429,
                                headers={"Retry-After": str(max(1, round(exc.retry_after)))})
        except ComputersBusy as exc:
            return JSONResponse({"detail": str(exc)}, status_code=429 if exc.per_address else 503,
                                headers={"Retry-After": str(round(exc.retry_after))})
        except LobbyFull as exc:
            # A room nobody opened makes way once it is EVICT_AGE old.
            return JSONResponse({"detail": str(exc)}, status_code=503,
                                headers={"Retry-After": str(round(EVICT_AGE))})
        except Unavailable:
            return JSONResponse({"detail": "the server cannot save rooms just now; try again in a"
                                 " moment"}, status_code=503)
        free = room.free_seats()
        seat = free[0] if bots is not None and free else None
        return CreatedRoom(room=room.id, url=f"/r/{room.id}", seat=seat)

    # ---- records and reviews (docs/protocol.md, "Records and reviews") -------------------
    async def look_up(find: Callable[[], Awaitable[Reviewed | None]], missing: str,
                      answer: Callable[[Reviewed], Response], text: bool = False) -> Response:
        """``answer`` of what ``find`` finds, or a 404 saying ``missing`` (as
        text for a ``text`` address, a record's, which a browser may open)."""
        try:
            found = await find()
        except Unavailable:
            return storage_down()
        if found is None:
            if text:
                return PlainTextResponse(f"{missing}\n", status_code=404)
            return JSONResponse({"detail": missing}, status_code=404)
        return await history.work(answer, found)

    def deal_of(found: Reviewed, number: int) -> Response:
        record = found.record
        if number == len(record.deals) + 1 and not record.over:
            why = ("was never finished: its room closed while it was in play" if found.closed
                   else "is still in play: it can be reviewed once it is over")
            return JSONResponse({"detail": f"deal {number} {why}"}, status_code=404)
        if number > len(record.deals) + 1 and not record.over and not found.closed:
            return JSONResponse({"detail": f"deal {number} has not been dealt yet: deal"
                                           f" {len(record.deals) + 1} is in play"}, status_code=404)
        try:
            review = deal_review(found, number)
        except RecordError as exc:
            return JSONResponse({"detail": excerpt(str(exc))}, status_code=404)
        return JSONResponse(review.model_dump(mode="json"))

    def summary(found: Reviewed) -> Response:
        offered = lobby.offers(found.record.game)
        return JSONResponse(match_review(found, offered).model_dump(mode="json"))

    def record_text(found: Reviewed) -> Response:
        r = found.record
        name = f"{r.game}-{r.date or 'match'}.txt"
        return PlainTextResponse(format_record(r),
                                 headers={"Content-Disposition": f'inline; filename="{name}"'})

    no_room = "there is no such room"
    no_match = "there is no finished match with this id (it may have aged out)"

    @app.get("/api/rooms/{room_id}/record", response_class=PlainTextResponse)
    async def room_record(room_id: str) -> Response:
        return await look_up(lambda: history.room(room_id), no_room, record_text)

    @app.get("/api/rooms/{room_id}/review", response_model=MatchReview)
    async def room_review(room_id: str) -> Response:
        return await look_up(lambda: history.room(room_id), no_room, summary)

    @app.get("/api/rooms/{room_id}/deals/{number}", response_model=DealReview)
    async def room_deal(room_id: str, number: DealNumber) -> Response:
        return await look_up(lambda: history.room(room_id), no_room, lambda f: deal_of(f, number))

    @app.get("/api/matches/{match_id}", response_model=MatchReview)
    async def match_summary(match_id: str) -> Response:
        return await look_up(lambda: history.match(match_id), no_match, summary)

    @app.get("/api/matches/{match_id}/deals/{number}", response_model=DealReview)
    async def match_deal(match_id: str, number: DealNumber) -> Response:
        return await look_up(lambda: history.match(match_id), no_match, lambda f: deal_of(f, number))

    def checked(body: RecordText, answer: Callable[[Reviewed], Response]) -> Response:
        try:
            found = read(body.record, body.game)
        except RecordError as exc:
            return JSONResponse({"detail": excerpt(str(exc))}, status_code=400)
        return answer(found)

    # A record is read and replayed off the event loop (History.work).
    @app.post("/api/records", response_model=MatchReview)
    async def record_review(body: RecordText) -> Response:
        return await history.work(checked, body, summary)

    @app.post("/api/records/deals/{number}", response_model=DealReview)
    async def record_deal(body: RecordText, number: DealNumber) -> Response:
        return await history.work(checked, body, lambda found: deal_of(found, number))

    # ---- pages ----------------------------------------------------------------------------
    @app.get("/", response_class=HTMLResponse, include_in_schema=False)
    async def index(request: Request) -> Response:
        return page(request, "index.html", {"games": lobby.games(), "levels": BOT_LEVELS,
                                            "default_level": DEFAULT_LEVEL,
                                            "room_options": [o.name for o in ROOM_OPTIONS]})

    @app.get("/r/{room_id}", response_class=HTMLResponse, include_in_schema=False)
    async def room_page(request: Request, room_id: str) -> Response:
        try:
            room = await lobby.room(room_id)
        except Unavailable:
            return storage_down("reload in a moment")
        if room is None:
            return not_found(request, "There is no such room: it may have been closed after a long"
                             " idle time. Create a new one below.")
        return page(request, "room.html", {"room_id": room.id, "game": lobby.game_info(room.game_id),
                                           "offered": lobby.offers(room.game_id),
                                           "levels": BOT_LEVELS, "default_level": DEFAULT_LEVEL,
                                           "server_time": round(time.time(), 3)})

    @app.get("/m/{match_id}.txt", response_class=PlainTextResponse, include_in_schema=False)
    async def match_text(match_id: str) -> Response:
        return await look_up(lambda: history.match(match_id), no_match, record_text, text=True)

    @app.get("/m/{match_id}", response_class=HTMLResponse, include_in_schema=False)
    async def match_page(request: Request, match_id: str) -> Response:
        try:
            found = await history.match(match_id)
        except Unavailable:
            return storage_down("reload in a moment")
        if found is None:
            return not_found(request, "There is no finished match at this address: it may have aged"
                             " out. Create a new room below.")
        return page(request, "review.html", {"source": "match", "match_id": match_id,
                                             "game": lobby.game_info(found.record.game),
                                             "offered": lobby.offers(found.record.game)})

    @app.get("/review", response_class=HTMLResponse, include_in_schema=False)
    async def review_page(request: Request) -> Response:
        return page(request, "review.html", {"source": "record", "match_id": None, "game": None})

    @app.get("/rules", include_in_schema=False)
    async def rules_index() -> Response:
        """The rules of the first game on offer (each page links the others)."""
        return RedirectResponse(f"/rules/{settings.games[0]}", status_code=302)

    @app.get("/rules/{game_id}", response_class=HTMLResponse, include_in_schema=False)
    async def rules_page(request: Request, game_id: str) -> Response:
        if not lobby.offers(game_id):
            return not_found(request, "There is no such game here.")
        try:
            return page(request, f"rules/{game_id}.html",
                        {"game": lobby.game_info(game_id), "games": lobby.games()})
        except TemplateNotFound:
            return not_found(request, "The rules of this game are not written up yet.")

    app.mount("/static", StaticFiles(directory=str(STATIC), check_dir=False), name="static")

    # ---- websocket ------------------------------------------------------------------------
    # Served by ``Cardboard.__call__`` ahead of the routing and HTTP middleware
    # (thousands of sockets: each layer stays alive as long as its socket),
    # behind the origin check and the per-address connection limits only.
    app.state.serve_socket = guard_sockets(partial(serve, lobby=lobby), settings)

    return app


async def _sweep_forever(lobby: Lobby) -> None:
    """Free idle rooms now and then (every minute, or more often for short
    idle limits)."""
    every = max(0.05, min(60.0, lobby.settings.room_idle_seconds / 4))
    while True:
        await asyncio.sleep(every)
        await lobby.sweep()


def _escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _app_from_environment() -> FastAPI:
    """The server as the environment's settings make it. A setting that is
    wrong stops the process with one line per problem that names it and
    says why (``SystemExit``), not a traceback."""
    try:
        settings = get_settings()
    except ValidationError as exc:
        problems = [("CARDBOARD_" + "_".join(str(p) for p in e["loc"]).upper() if e["loc"] else "settings")
                    + ": " + e["msg"].removeprefix("Value error, ") for e in exc.errors()]
        raise SystemExit("Cardboard cannot start: a setting is wrong\n  " + "\n  ".join(problems)) from None
    return create_app(settings)


app = _app_from_environment()
