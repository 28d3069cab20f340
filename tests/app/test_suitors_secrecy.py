"""Suitors' hidden cards over the real websocket protocol (docs/protocol.md,
"Hidden information"; RULINGS.md, Suitors 6).

Rooms of every size and variant are played over the websocket with every seat
connected and a spectator, each room through several matches (a rematch
deals a new seeded game with the same seats). Every frame every connection
receives is recorded: states, ``joined``, errors (many of them provoked on
purpose: moves out of turn, illegal reveals and jumps, malformed and stale
moves, a spectator's move, taken seats, bad tokens) and the replies to
reconnects (a seat resumed on a new connection, or dropped and resumed).

The truth comes from the server itself: after every action the test reads
the room's match in-process (``lobby.store``), so each state version is known
with its secret cells, its set-aside cards and its seeds. Then, for every
frame (an error or ``joined`` frame is judged at the state version its
connection last saw):

* a card is *in* a frame if its token (``8D``), its position-text form
  (``8d``) or its pretty form (``8♦``) appears anywhere in the JSON text as a
  word, room id and seat tokens left out (alone, the lower-case ``as``, ``ad``
  and ``ah`` are English words; in a run of tokens they are cards). No frame
  may hold a card that is not face up at that version (in the Big board a
  card with a face-up twin is visible by name; which square holds which copy
  is checked on the cells);
* the view's ``cells`` are exactly the face-up cards on their squares and
  ``??`` everywhere else;
* a set-aside card is never in any frame, not even after the game;
* a match seed appears only as ``view.seed`` once that match is over, and a
  deal seed (derived from it) never appears;
* a seat's token goes to its own connection only.

And, so that these checks are seen to bite, the frame that shows a card
being turned up does show it to every connection (the matcher finds it), and
the ``test_a_leaky_…`` tests run the same checks against a server made leaky
on purpose (its view, an error message, its options). The last test shows a
leak by derivation that the server still has (a strict xfail): in a room
opened with a seed, the seed shown when the first match is over gives away
the rematch's deal.

Moves are chosen fast from the frames alone: a jump that brings one's own
Jack nearer the Queen when there is one, else mostly a reveal near the Jack's
road to the Queen, else any legal move, so games take about 50 turns
(random play takes about 450).
"""

from __future__ import annotations

import contextlib
import json
import random
import re
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from functools import cache, cached_property
from itertools import pairwise
from typing import Any

import pytest
from fastapi.testclient import TestClient
from roomtest import Peer, connect, new_room

from app.protocol import RATE_FRAMES
from app.rooms import Room
from engine.cards import derive_seed
from engine.suitors import Suitors, SuitorsState

# ---- what a frame names --------------------------------------------------------------

CARD_RE = re.compile(
    r"[1-9ATJQKatjqk](?<![\w-].)"  # a rank, not glued to a word or an id before it
    r"(?:(?<=[A2-9TJQK])[SHDC]"  # 8D
    r"|(?<=[a2-9tjqk])[shdc](?:\s+[a2-9tjqk][shdc])*"  # 8d, or a run like "8d 7s qh"
    r"|(?<=[A2-9JQK])[♠♥♦♣]"  # 8♦
    r"|(?<=1)0[♠♥♦♣])"  # 10♦
    r"(?![\w-])"
)
"""Card names in any of the three forms, as whole words (the first character
is matched before the lookbehind so that the scan can jump from rank to rank)."""

ENGLISH = frozenset({"as", "ad", "ah"})
"""Lower-case card tokens that are also English words: alone, they are words
("you are watching as a spectator"); in a run of tokens they are cards."""

SYMBOL_SUIT = {"♠": "S", "♥": "H", "♦": "D", "♣": "C"}
SEED_RE = re.compile(r"\d{6,}")


@cache
def _cards_of(match: str) -> frozenset[str]:
    """The cards (``8D``) one match of :data:`CARD_RE` names."""
    if match[-1] in SYMBOL_SUIT:
        rank = "T" if match[:-1] == "10" else match[:-1]
        return frozenset({rank + SYMBOL_SUIT[match[-1]]})
    words = match.split()
    if len(words) == 1 and words[0] in ENGLISH:
        return frozenset()
    return frozenset(w.upper() for w in words)


ESCAPE_RE = re.compile(r"\\u([0-9a-fA-F]{4})")


def unescaped(text: str) -> str:
    """``text`` with its JSON escapes of characters outside ASCII written
    out (``\\u2666`` as ``♦``): state frames come in ASCII
    (docs/protocol.md, "The room websocket"), and a card is named the same
    however it is written."""
    return ESCAPE_RE.sub(lambda m: chr(int(m.group(1), 16)), text)


def cards_in(text: str) -> frozenset[str]:
    """Every card ``text`` names, in any form (``8D``, ``8d``, ``8♦``)."""
    out: set[str] = set()
    for m in set(CARD_RE.findall(text)):
        out |= _cards_of(m)
    return frozenset(out)


def test_the_matcher_finds_cards_in_every_form_and_nothing_else() -> None:
    assert cards_in('{"cells":["8D","??"],"x":"the 10♦ and the A♠ at c2"}') == {"8D", "TD", "AS"}
    assert cards_in("aside: 7d 2s as qd") == {"7D", "2S", "AS", "QD"}
    assert cards_in("game: suitors\n\nJS ks 3C") == {"JS", "KS", "3C"}
    assert cards_in("you are watching as a spectator; c3-e3; a1; 110♦; x8D; 8Dx; id-8D") == set()
    assert cards_in(unescaped('{"text":"the 10\\u2666 and the A\\u2660"}')) == {"TD", "AS"}


# ---- the truth, read from the server -----------------------------------------------------


@dataclass(frozen=True)
class Truth:
    """The room at one version: the secret state, the match's number in the
    room (0, 1, …), the match seed and the deal seed."""

    state: SuitorsState
    match: int
    seed: int
    deal_seed: int

    @cached_property
    def public_cells(self) -> list[str]:
        return [c if c.isupper() else "??" for c in self.state.cells]

    @cached_property
    def face_up(self) -> frozenset[str]:
        return frozenset(c for c in self.state.cells if c.isupper())

    @cached_property
    def secret(self) -> frozenset[str]:
        """Cards no one may see named: face down or set aside, with no face-up
        copy (a Big board card whose twin is face up may be named)."""
        hidden = {c.upper() for c in self.state.cells if c.islower()} | set(self.state.aside)
        return frozenset(hidden - self.face_up)


@dataclass
class Conn:
    """One websocket connection of the room and every frame it received, in
    order, as text and parsed."""

    peer: Peer
    texts: list[str] = field(default_factory=list)
    frames: list[dict[str, Any]] = field(default_factory=list)
    sent: int = 0

    def __post_init__(self) -> None:
        self._keep()

    def _keep(self) -> None:
        self.texts.append(self.peer.texts[-1])
        self.frames.append(json.loads(self.texts[-1]))

    def send(self, **frame: Any) -> None:
        self.sent += 1
        self.peer.send(**frame)

    def send_text(self, text: str) -> None:
        self.sent += 1
        self.peer.send_text(text)

    def recv(self) -> dict[str, Any]:
        # Straight from the socket: the frames' shapes are checked by the other
        # server tests, and validating each one would double this file's time.
        # Presence frames (spectators) come when they come: kept, never returned.
        while True:
            self.peer.texts.append(self.peer.ws.receive_text())
            self._keep()
            if self.frames[-1]["type"] != "spectators":
                return self.frames[-1]

    def state(self) -> dict[str, Any]:
        frame = self.recv()
        assert frame["type"] == "state", frame
        return frame

    def expect(self, *kinds: str) -> dict[str, Any]:
        """Receive frames of these types (an error by its code); return the last."""
        frame: dict[str, Any] = {}
        for kind in kinds:
            frame = self.recv()
            got = frame["code"] if frame["type"] == "error" else frame["type"]
            assert got == kind, (kind, frame)
        return frame

    @property
    def last(self) -> dict[str, Any]:
        return next(f for f in reversed(self.frames) if f["type"] == "state")


@dataclass
class Report:
    """What a room's check found: ``problems`` (empty when nothing leaked)
    and counts that show the checks had something to bite on."""

    problems: list[str] = field(default_factory=list)
    games: int = 0
    frames: int = 0
    errors: Counter[str] = field(default_factory=Counter)
    reveals_seen: int = 0
    seeds_shown: int = 0

    def add(self, other: Report) -> None:
        self.problems += other.problems
        self.games += other.games
        self.frames += other.frames
        self.errors += other.errors
        self.reveals_seen += other.reveals_seen
        self.seeds_shown += other.seeds_shown


class Table:
    """A Suitors room with every seat and one spectator connected, the
    server's room object read in-process, and every frame recorded."""

    def __init__(self, client: TestClient, stack: contextlib.ExitStack, players: int, variant: str,
                 seed: int, rng: random.Random) -> None:
        # A seed too short would be found by chance in other numbers.
        assert seed >= 10**12, "use a long seed (derive_seed)"
        self.client = client
        self.id = new_room(client, "suitors", seed=seed, players=players, variant=variant)
        room = client.app.state.lobby.store.get(self.id)  # type: ignore[attr-defined]
        assert isinstance(room, Room)
        self.room = room
        self.rng = rng
        self.seats: tuple[str, ...] = room.seats
        self.truth: dict[int, Truth] = {}
        self.seeds: list[tuple[int, int]] = []  # (match seed, deal seed) of every match
        self.tokens: dict[str, str] = {}  # seat → token
        self.conns: list[Conn] = []  # every connection ever opened, in order
        self.stacks: dict[int, contextlib.ExitStack] = {}
        self.outer = stack
        self.record()
        self.spectator = self.open()
        self.by_seat: dict[str, Conn] = {}
        for seat in self.seats:
            conn = self.open()
            conn.send(type="join", seat=seat, name=f"Player {seat}")
            joined = conn.recv()
            assert joined["type"] == "joined" and joined["seat"] == seat, joined
            self.tokens[seat] = joined["token"]
            self.by_seat[seat] = conn
            self.broadcast()

    # ---- connections ----------------------------------------------------------------
    @property
    def open_conns(self) -> list[Conn]:
        return [c for c in self.conns if id(c) in self.stacks]

    def open(self) -> Conn:
        """A new connection (a spectator until it joins or resumes)."""
        stack = contextlib.ExitStack()
        self.outer.callback(stack.close)
        conn = Conn(stack.enter_context(connect(self.client, self.id)))
        self.stacks[id(conn)] = stack
        self.conns.append(conn)
        return conn

    def close(self, conn: Conn) -> None:
        self.stacks.pop(id(conn)).close()

    def record(self) -> None:
        """Note the room's true state at its current version."""
        m = self.room.match
        if not self.seeds or self.seeds[-1][0] != m.seed:
            self.seeds.append((m.seed, m.current.seed))
        t = Truth(m.state, len(self.seeds) - 1, m.seed, m.current.seed)
        old = self.truth.setdefault(self.room.version, t)
        assert old == t, "two states under one version"

    def broadcast(self) -> None:
        """Every open connection receives one state (then the room, done with
        the action, is read)."""
        for conn in self.open_conns:
            conn.state()
        self.record()

    # ---- play -----------------------------------------------------------------------
    @property
    def now(self) -> dict[str, Any]:
        return self.spectator.last

    def play_match(self, provoke: float) -> None:
        """Play the match in progress to its end; with probability ``provoke``
        per turn, first provoke an error or reconnect."""
        while self.now["phase"] == "playing":
            if self.rng.random() < provoke:
                self.rng.choice(PROVOCATIONS)(self)
            seat = self.now["to_move"][0]
            if self.by_seat[seat].sent >= RATE_FRAMES // 2:
                resume_elsewhere(self, seat)  # a fresh connection, clear of the rate limit
            conn = self.by_seat[seat]
            move = choose(conn.last, self.rng)
            conn.send(type="move", move=move, version=conn.last["version"])
            self.broadcast()

    def after_match(self) -> None:
        """Refused actions after the end, then some seats, in a random order,
        say they are ready, and one of them (maybe the first) starts the
        rematch at once with ``rematch``."""
        assert self.now["phase"] == "match_over"
        conn = self.by_seat[self.rng.choice(self.seats)]
        v = conn.last["version"]
        conn.send(type="move", move="pass", version=v)
        conn.expect("not_playing", "state")
        conn.send(type="next_deal", version=v)
        conn.expect("not_playing", "state")
        # A "ready" may carry the version the match ended on (each press
        # raises it); the contract's "rematch" starts the match at once.
        order = self.rng.sample(self.seats, len(self.seats))
        rematch_after = self.rng.randrange(len(order))
        for i, seat in enumerate(order):
            assert self.now["phase"] == "match_over"
            if i == rematch_after:
                self.by_seat[seat].send(type="rematch", version=self.now["version"])
                self.broadcast()
                break
            self.by_seat[seat].send(type="ready", version=v)
            self.broadcast()
        assert self.now["phase"] == "playing"
        assert self.now["version"] == v + rematch_after + 1

    # ---- the check ------------------------------------------------------------------
    def check(self) -> Report:
        """Judge every frame every connection received (module docstring)."""
        rep = Report(games=len(self.seeds) - (self.now["phase"] != "match_over"))
        room_id = self.id
        seeds = {str(s): i for i, (s, _) in enumerate(self.seeds)}
        deal_seeds = {str(d) for _, d in self.seeds}
        reader = FrameReader()
        reveal_at = _reveal_versions(self.truth)
        for n, conn in enumerate(self.conns):
            truth: Truth | None = None
            for raw, frame in zip(conn.texts, conn.frames, strict=True):
                text = unescaped(raw)
                rep.frames += 1
                where = _Where(n, frame)
                kind = frame["type"]
                cells_checked = False
                if kind == "state":
                    truth = self.truth[frame["version"]]
                    wrong = _check_state(frame, truth, where)
                    rep.problems += wrong
                    cells_checked = not wrong
                elif kind == "error":
                    rep.errors[frame["code"]] += 1
                assert truth is not None, "the first frame of a connection is a state"
                if kind == "joined":
                    mine = frame["token"]
                    text = text.replace(mine, "")
                for seat, token in self.tokens.items():
                    if token in text:
                        rep.problems.append(f"{seat}'s token is in {where}")
                text = text.replace(room_id, "")
                found, numbers = reader.read(text, cells_checked)
                leaked = found & truth.secret
                if leaked:
                    rep.problems.append(f"hidden cards {sorted(leaked)} are in {where}")
                aside = found & set(truth.state.aside)
                if aside:
                    rep.problems.append(f"set-aside cards {sorted(aside)} are in {where}")
                for number in numbers:
                    for s, i in seeds.items():
                        if s in number and not (kind == "state" and frame["view"]["seed"] == int(s)
                                                and self.truth[frame["version"]].match == i):
                            rep.problems.append(f"the seed of match {i} is in {where}")
                    if any(d in number for d in deal_seeds):
                        rep.problems.append(f"a deal seed is in {where}")
                if kind == "state" and frame["view"]["seed"] is not None:
                    rep.seeds_shown += 1
                if kind == "state":
                    for card in reveal_at.get(frame["version"], ()):
                        if card not in found:
                            rep.problems.append(f"the {card} turned up is not seen in {where}")
                        rep.reveals_seen += 1
        return rep


@dataclass(frozen=True)
class _Where:
    """Which frame a problem is in, written out only when there is one."""

    conn: int
    frame: dict[str, Any]

    def __str__(self) -> str:
        return f"connection {self.conn}, frame {json.dumps(self.frame, ensure_ascii=False)[:500]}"


def _reveal_versions(truth: dict[int, Truth]) -> dict[int, list[str]]:
    """Version → the cards that became visible at that version (turned up,
    with no twin face up before)."""
    out: dict[int, list[str]] = {}
    versions = sorted(truth)
    for a, b in pairwise(versions):
        ta, tb = truth[a], truth[b]
        if ta.match != tb.match:
            continue
        new = sorted(tb.face_up - ta.face_up)
        if new:
            out[b] = new
    return out


Found = tuple[frozenset[str], frozenset[str]]
"""The cards a text names and its runs of six digits or more (seed candidates)."""


def read(text: str) -> Found:
    return cards_in(text), frozenset(SEED_RE.findall(text))


class FrameReader:
    """:func:`read` for frames, fast. The log (the same for every connection
    at one version, one entry longer at the next, and the bulk of a late
    frame) is read once per version, and only its new entries; the cells,
    once they are known to be exactly the face-up cards and ``??``, are not
    read again."""

    def __init__(self) -> None:
        self.logs: dict[str, Found] = {}
        self.last_log = ""

    def read(self, text: str, cells_checked: bool) -> Found:
        start = text.find(',"log":[')
        end = text.find('],"outcome":', start)
        if start < 0 or end < 0:
            return read(text)
        rest = text[:start] + text[end:]
        if cells_checked:
            a = rest.find('"cells":[')
            b = rest.find("]", a)
            rest = rest[:a] + rest[b:]
        (c1, n1), (c2, n2) = self.read_log(text[start:end]), read(rest)
        return c1 | c2, n1 | n2

    def read_log(self, log: str) -> Found:
        found = self.logs.get(log)
        if found is None:
            prev = self.last_log
            if prev and log.startswith(prev):
                (c1, n1), (c2, n2) = self.logs[prev], read(log[len(prev):])
                found = c1 | c2, n1 | n2
            else:
                found = read(log)
            self.logs[log] = found
            self.last_log = log
        return found


def _check_state(frame: dict[str, Any], truth: Truth, where: _Where) -> list[str]:
    """The structure of a state frame against the truth at its version."""
    out = []
    board = frame["view"]["board"]
    if board["cells"] != truth.public_cells:
        out.append(f"the cells are not the face-up cards and ?? in {where}")
    if board["aside"] != len(truth.state.aside):
        out.append(f"aside is not the count of set-aside cards in {where}")
    seed = frame["view"]["seed"]
    if (seed is not None) != (frame["phase"] == "match_over") or seed not in (None, truth.seed):
        out.append(f"view.seed is {seed} in phase {frame['phase']} in {where}")
    return out


# ---- choosing moves fast -----------------------------------------------------------------


def _colrow(square: str) -> tuple[int, int]:
    return ord(square[0]) - 97, int(square[1:]) - 1


def _dist(a: str, b: str) -> int:
    (ca, ra), (cb, rb) = _colrow(a), _colrow(b)
    return abs(ca - cb) + abs(ra - rb)


def _jack_after(jack: str, move: str) -> str:
    """Where one's Jack is after the jump ``move`` (notation only: the Jumper
    lands on the last square; a jumped card shifts one square back)."""
    start, end = move.split("-")
    if jack == start:
        return end
    (c0, r0), (c1, r1), (cj, rj) = _colrow(start), _colrow(end), _colrow(jack)
    on_line = (c0 == c1 == cj and min(r0, r1) < rj <= max(r0, r1)) or (
        r0 == r1 == rj and min(c0, c1) < cj <= max(c0, c1))
    if not on_line:
        return jack
    dc, dr = (c0 > cj) - (c0 < cj), (r0 > rj) - (r0 < rj)
    return chr(97 + cj + dc) + str(rj + dr + 1)


def choose(state: dict[str, Any], rng: random.Random) -> str:
    """A legal move for the recipient of ``state``: a jump bringing its Jack
    nearest the Queen if one brings it nearer, else (4 times in 5) a reveal
    near the Jack's road to the Queen, else any legal move."""
    legal = state["legal_moves"]
    board = state["view"]["board"]
    jack, queen = board["jacks"][state["you"]], board["queen"]
    here = _dist(jack, queen)
    nearer = {m: _dist(_jack_after(jack, m), queen) for m in legal if "-" in m}
    nearer = {m: d for m, d in nearer.items() if d < here}
    if nearer:
        best = min(nearer.values())
        return rng.choice(sorted(m for m, d in nearer.items() if d == best))
    reveals = [m for m in legal if m.startswith("reveal ")]
    if reveals and rng.random() < 0.8:
        score = {m: _dist(m[7:], queen) + _dist(m[7:], jack) for m in reveals}
        best = min(score.values())
        return rng.choice([m for m in reveals if score[m] == best])
    return str(rng.choice(legal))


# ---- provoked errors and reconnects ----------------------------------------------------


def _squares(board: dict[str, Any], face_down: bool) -> list[str]:
    w = board["width"]
    return [chr(97 + i % w) + str(i // w + 1) for i, c in enumerate(board["cells"])
            if (c == "??") == face_down]


def _refused(conn: Conn, code: str | None = None, **frame: Any) -> None:
    conn.send(**frame)
    got = conn.recv()
    assert got["type"] == "error" and got["code"] == (code or got["code"]), got
    conn.state()


def _mover(t: Table) -> Conn:
    return t.by_seat[t.now["to_move"][0]]


def out_of_turn(t: Table) -> None:
    """A seat that is not awaited tries the mover's first legal move."""
    mover = _mover(t)
    other = t.by_seat[t.rng.choice([s for s in t.seats if t.by_seat[s] is not mover])]
    _refused(other, "not_your_turn", type="move", move=mover.last["legal_moves"][0],
             version=other.last["version"])


def illegal_reveal(t: Table) -> None:
    """The mover reveals a face-down card it may not reach (or, on a stale
    version, any face-down card)."""
    mover = _mover(t)
    state = mover.last
    far = [sq for sq in _squares(state["view"]["board"], True) if f"reveal {sq}" not in state["legal_moves"]]
    if not far:
        return
    stale = t.rng.random() < 0.3 and state["version"] > 0
    _refused(mover, "stale_version" if stale else "illegal_move", type="move",
             move=f"reveal {t.rng.choice(far)}", version=state["version"] - stale)


def illegal_jump(t: Table) -> None:
    """The mover jumps over a face-down card, or with one."""
    mover = _mover(t)
    board = mover.last["view"]["board"]
    w, h = board["width"], board["height"]
    down = _squares(board, True)
    if not down:
        return
    c, r = _colrow(t.rng.choice(down))
    near = [(c + dc, r + dr) for dc, dr in ((0, 1), (1, 0), (0, -1), (-1, 0))
            if 0 <= c + dc < w and 0 <= r + dr < h]
    a, b = t.rng.choice(near)
    hidden, other = f"{chr(97 + c)}{r + 1}", f"{chr(97 + a)}{b + 1}"
    move = t.rng.choice([f"{other}-{hidden}", f"{hidden}-{other}"])
    _refused(mover, "illegal_move", type="move", move=move, version=mover.last["version"])


def malformed(t: Table) -> None:
    mover = _mover(t)
    move = t.rng.choice(["reveal z9", "hello", "reveal", "a1-", "pass please", "e3-e3"])
    _refused(mover, None, type="move", move=move, version=mover.last["version"])


def needless_pass(t: Table) -> None:
    mover = _mover(t)
    if mover.last["legal_moves"] != ["pass"]:
        _refused(mover, "illegal_move", type="move", move="pass", version=mover.last["version"])


def spectator_tries(t: Table) -> None:
    """The spectator moves, takes a taken seat, resumes a bad token, sends bad JSON."""
    if t.spectator.sent >= RATE_FRAMES // 2:
        old, t.spectator = t.spectator, t.open()
        t.close(old)
    spec = t.spectator
    v = spec.last["version"]
    _refused(spec, "not_seated", type="move", move=_mover(t).last["legal_moves"][0], version=v)
    _refused(spec, "seat_taken", type="join", seat=t.rng.choice(t.seats), name="Eve")
    _refused(spec, "bad_token", type="resume", token="x" * 32)
    spec.send_text("{not json")
    spec.expect("bad_json")


def wrong_time(t: Table) -> None:
    """A seat asks for the next deal, a rematch or to leave during play."""
    conn = t.by_seat[t.rng.choice(t.seats)]
    kind = t.rng.choice(["next_deal", "rematch", "leave"])
    frame: dict[str, Any] = {"type": kind}
    if kind != "leave":
        frame["version"] = conn.last["version"]
    _refused(conn, "not_playing", **frame)


def resume_elsewhere(t: Table, seat: str | None = None) -> None:
    """A seat (``seat``, else one at random) is taken back on a new
    connection: the old one is replaced (then closed), the new one is told
    ``joined`` and sent the state."""
    seat = seat or t.rng.choice(t.seats)
    old = t.by_seat[seat]
    new = t.open()
    new.send(type="resume", token=t.tokens[seat])
    old.expect("replaced", "state")
    new.expect("joined", "state")
    t.by_seat[seat] = new
    t.close(old)


def drop_and_resume(t: Table) -> None:
    """A seat's connection closes (everyone sees it away), then it comes
    back on a new connection and resumes (everyone sees it back)."""
    seat = t.rng.choice(t.seats)
    old = t.by_seat[seat]
    t.close(old)
    t.broadcast()
    new = t.open()
    new.send(type="resume", token=t.tokens[seat])
    new.expect("joined")
    t.by_seat[seat] = new
    t.broadcast()


PROVOCATIONS: list[Callable[[Table], None]] = [
    out_of_turn, illegal_reveal, illegal_reveal, illegal_jump, illegal_jump, malformed,
    needless_pass, spectator_tries, wrong_time, resume_elsewhere, drop_and_resume,
]


# ---- the runs --------------------------------------------------------------------------


def play_room(client: TestClient, players: int, variant: str, seed: int, matches: int,
              provoke: float = 0.08) -> Report:
    """Play ``matches`` games in one room (rematches after the first) and
    check every frame."""
    with contextlib.ExitStack() as stack:
        t = Table(client, stack, players, variant, seed, random.Random(seed))
        for k in range(matches):
            t.play_match(provoke)
            if k < matches - 1:
                t.after_match()
        assert t.now["phase"] == "match_over"
        return t.check()


ROOMS = [
    # players, variant, rooms, games per room: 201 games in all
    (2, "standard", 4, 14),
    (3, "standard", 4, 14),
    (4, "standard", 4, 14),
    (2, "colours", 3, 10),
    (2, "big", 1, 1),
    (3, "big", 1, 1),
    (4, "big", 1, 1),
]


@pytest.mark.parametrize(("players", "variant", "rooms", "games"), ROOMS)
def test_no_hidden_card_or_seed_leaves_the_server(client: TestClient, players: int, variant: str,
                                                 rooms: int, games: int) -> None:
    total = Report()
    for r in range(rooms):
        total.add(play_room(client, players, variant, derive_seed(4, "leak", players, variant, r), games))
    assert total.problems == [], "\n".join(total.problems[:20])
    assert total.games == rooms * games
    # The checks had something to bite on: cards seen as they turned up, the
    # seed shown once each game was over, and refusals of every kind.
    assert total.reveals_seen > rooms * games * 10 * (players + 1)
    assert total.seeds_shown >= rooms * games * (players + 1)
    assert total.errors["illegal_move"] and total.errors.total() >= 2 * rooms * games, total.errors


# ---- the checks bite -------------------------------------------------------------------


def _leak_lower_case(game: Suitors, state: SuitorsState, seat: str | None, view: dict[str, Any]) -> None:
    """Face-down cards in position-text form, as Get Stuck shows them."""
    view["cells"] = list(state.cells)


def _leak_aside_to_spectators(game: Suitors, state: SuitorsState, seat: str | None,
                              view: dict[str, Any]) -> None:
    if seat is None:
        view["aside"] = len(state.aside)
        view["note"] = f"not in play: {state.aside[0]}"


def _leak_next_card_in_the_log(game: Suitors, state: SuitorsState, seat: str | None,
                               view: dict[str, Any]) -> None:
    """The pretty name of a face-down card, in a hint once the game is under way."""
    down = [c for c in state.cells if c.islower()]
    if state.turns > 10 and down:
        view["hint"] = f"the {_pretty(down[-1])} is near"


def _pretty(card: str) -> str:
    rank = "10" if card[0].upper() == "T" else card[0].upper()
    return rank + {"S": "♠", "H": "♥", "D": "♦", "C": "♣"}[card[1].upper()]


@pytest.fixture
def leaky(monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[[Callable[..., None]], None]]:
    """Make ``Suitors.view`` leaky with a function that edits the view it returns."""
    original = Suitors.view

    def install(edit: Callable[..., None]) -> None:
        def view(self: Suitors, state: SuitorsState, seat: str | None) -> Any:
            v = original(self, state, seat)
            edit(self, state, seat, v)
            return v

        monkeypatch.setattr(Suitors, "view", view)

    yield install


@pytest.mark.parametrize("edit", [_leak_lower_case, _leak_aside_to_spectators, _leak_next_card_in_the_log])
def test_a_leaky_view_is_caught(client: TestClient, leaky: Callable[[Callable[..., None]], None],
                                edit: Callable[..., None]) -> None:
    leaky(edit)
    rep = play_room(client, 3, "standard", derive_seed(99, "leak"), 1)
    assert rep.problems, "a leaky view went unnoticed"
    assert any("hidden cards" in p or "set-aside" in p for p in rep.problems), rep.problems[:5]


def test_a_leaky_error_message_is_caught(client: TestClient, monkeypatch: pytest.MonkeyPatch) -> None:
    """An illegal reveal refused with the name of the card (as a careless
    engine might word it) shows up in the error frame."""
    import engine.suitors as suitors

    original = suitors._why_illegal

    def why(state: SuitorsState, move: str) -> str:
        step = state.board.parse.get(move)
        if step is not None and move.startswith("reveal ") and state.cells[step.line[0]].islower():
            return f"the {_pretty(state.cells[step.line[0]])} there is out of reach"
        return original(state, move)

    monkeypatch.setattr(suitors, "_why_illegal", why)
    rep = play_room(client, 2, "standard", derive_seed(7, "leak"), 1, provoke=0.5)
    assert rep.errors["illegal_move"]
    assert any("hidden cards" in p and '"type": "error"' in p for p in rep.problems), rep.problems[:5]


def test_a_seed_among_the_options_is_caught(client: TestClient) -> None:
    """A server that kept the seed among the room's public options."""
    with contextlib.ExitStack() as stack:
        t = Table(client, stack, 2, "standard", derive_seed(5, "leak"), random.Random(5))
        table = t.room.table
        t.room.table = replace(table, options=(*table.options, ("seed", table.match.seed)))
        t.play_match(0.0)
        rep = t.check()
    assert any("the seed of match 0" in p for p in rep.problems), rep.problems[:5]


def test_the_seed_shown_after_a_match_gives_nothing_away_about_the_rematch(client: TestClient) -> None:
    with contextlib.ExitStack() as stack:
        t = Table(client, stack, 2, "standard", derive_seed(6, "leak"), random.Random(6))
        t.play_match(0.0)
        shown = t.now["view"]["seed"]
        t.after_match()
        dealt = t.truth[t.now["version"]].state
        # What anyone who saw the seed can work out, from the protocol's docs.
        game = Suitors()
        options = game.check_options({"players": 2})
        guess = derive_seed(shown, "rematch", 1)
        worked_out = game.deal(derive_seed(guess, "deal", 0), options, game.starter(options, guess, 0))
        assert worked_out.cells != dealt.cells
