"""Stucco, David Parlett's two-player matching game (seats ``north`` and ``south``).

RULINGS.md, Stucco. 32 cards (7 8 9 T J Q K A of each suit, ranked cyclically
so that A is followed by 7) are dealt 16 each, face up. The deal opens with a
secret pick by both seats at once; after the reveal the players add cards to a
single spread, each card following the one before (ruling 3). A move is the
card played (``QH``) or ``pass`` when the awaited seat cannot follow.

Internally a card is a small int ``suit * 8 + rank`` with suits in the display
order ``S H C D`` (black and red alternate) and ranks ``7 8 9 T J Q K A``, so a
hand is a 32-bit mask whose set bits, read upwards, are the hand sorted for
display. See ``docs/notation/stucco.md``.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from dataclasses import dataclass
from itertools import pairwise
from typing import Any

from engine.base import (
    JSON,
    Game,
    GameInfo,
    IllegalMove,
    Layout,
    MalformedMove,
    Option,
    Outcome,
    ScoreLine,
    SideScore,
)
from engine.cards import derive_seed, pretty, shuffled
from engine.lazy import cached
from engine.notation import format_position, parse_position

SEATS = ("north", "south")
SEAT_INDEX = {s: i for i, s in enumerate(SEATS)}
PASS = "pass"

SUIT_ORDER = "SHCD"
"""Display order of the suits; a suit's index is odd for red, and ``s ^ 2`` is
the other suit of the same colour (S↔C, H↔D)."""
RANK_ORDER = "789TJQKA"
"""The cyclic ranking, lowest first: A is followed by 7 (ruling 1)."""
CARDS: tuple[str, ...] = tuple(r + s for s in SUIT_ORDER for r in RANK_ORDER)
"""The 32 cards; ``CARDS[i]`` is the notation of card ``i``."""
CODE: dict[str, int] = {c: i for i, c in enumerate(CARDS)}
PASS_CODE = 32
MOVE_CODE: dict[str, int] = {**CODE, PASS: PASS_CODE}
"""Every well-formed move: the 32 cards and ``pass``."""
FULL_HAND = (1 << 32) - 1
HAND_SIZE = 16
"""Cards dealt to each seat: all 32, 16 each (ruling 1)."""


def _followers(card: int) -> tuple[int, ...]:
    """The four cards that may follow ``card`` (ruling 3): the next higher of
    the same suit, the next lower of the other suit of the same colour, and the
    same rank in both suits of the opposite colour."""
    s, r = divmod(card, 8)
    opposite = (0, 2) if s & 1 else (1, 3)
    return (s * 8 + (r + 1) % 8, (s ^ 2) * 8 + (r - 1) % 8, *(o * 8 + r for o in opposite))


FOLLOWERS: tuple[tuple[int, ...], ...] = tuple(_followers(c) for c in range(32))
FOLLOW_MASK: tuple[int, ...] = tuple(sum(1 << f for f in fs) for fs in FOLLOWERS)


def hand_cards(mask: int) -> list[str]:
    """The cards of a hand mask in display order (by suit S H C D, then rank 7…A)."""
    return [CARDS[i] for i in range(32) if mask >> i & 1]


# The legal moves for each set of followers a hand can hold, precomputed.
_NAMES_OF: dict[int, tuple[str, ...]] = {}
for _fs in FOLLOWERS:
    for _sub in range(16):
        _m = sum(1 << f for k, f in enumerate(_fs) if _sub >> k & 1)
        _NAMES_OF[_m] = tuple(hand_cards(_m))
_PASS_ONLY = (PASS,)


def _words(cards: list[str]) -> str:
    """``["KH", "JD", "QS"]`` → ``"K♥, J♦ or Q♠"``."""
    shown = [pretty(c) for c in cards]
    return shown[0] if len(shown) == 1 else ", ".join(shown[:-1]) + " or " + shown[-1]


def _title(seat: str) -> str:
    """A seat as people write it: ``"north"`` → ``"North"``."""
    return seat.capitalize()


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


@dataclass(frozen=True)
class StuccoState:
    """A Stucco position.

    ``hands``: one 32-bit card mask per seat (north, south); a seat's pick stays
    in its hand until the reveal. ``spread``: the cards played in order, each
    ``card | seat << 5``. ``dealer``: seat index. ``picks``: each seat's opening
    pick (card int, or -1 before it picks); secret while ``spread`` is empty,
    the revealed pair afterwards. ``turn``: the seat to act once the spread is
    open (-1 during the opening); once the deal is over it is the seat that
    could not answer the last card. ``passed``: the last action was a pass by
    the seat other than ``turn``.
    """

    hands: tuple[int, int]
    spread: tuple[int, ...]
    dealer: int
    picks: tuple[int, int] = (-1, -1)
    turn: int = -1
    passed: bool = False

    @property
    def opening(self) -> bool:
        """True while the seats are still picking (ruling 2)."""
        return not self.spread

    @cached
    def moves(self) -> tuple[str, ...]:
        """The legal moves of the seat on turn once the spread is open: the
        cards of its hand that follow the last card; else ``pass`` if the
        opponent can follow; else nothing, and the deal is over (rulings 3–5).
        Empty during the opening."""
        if not self.spread:
            return ()
        follow = FOLLOW_MASK[self.spread[-1] & 31]
        mine = self.hands[self.turn] & follow
        if mine:
            return _NAMES_OF[mine]
        if self.hands[1 - self.turn] & follow:
            return _PASS_ONLY
        return ()

    @property
    def over(self) -> bool:
        """True once neither seat can follow the last card (ruling 5)."""
        return bool(self.spread) and not self.moves

    @property
    def starter(self) -> int:
        """The seat that opened the spread, or -1 during the opening."""
        return self.spread[0] >> 5 if self.spread else -1

    def played(self, seat: int) -> int:
        """How many cards ``seat`` has played to the spread, the opening card
        included."""
        return sum(1 for e in self.spread if e >> 5 == seat)

    @property
    def run(self) -> int:
        """The length of the turn in progress: the cards at the end of the
        spread played in a row by the seat of the last card (passes by the
        other seat do not break it, ruling 4). 0 during the opening."""
        if not self.spread:
            return 0
        seat = self.spread[-1] >> 5
        n = 0
        for e in reversed(self.spread):
            if e >> 5 != seat:
                break
            n += 1
        return n


def colour(card: int) -> int:
    """The colour of card int ``card``: 0 for black (spades, clubs), 1 for red
    (hearts, diamonds)."""
    return card >> 3 & 1


def starter_by_colours(dealer: int, north: int, south: int) -> int:
    """The seat index that opens the spread when the opening picks have the
    colours ``north`` and ``south`` (0 black, 1 red) and ``dealer`` deals:
    RULINGS.md, Stucco, rule 2: same colour, the non-dealer starts;
    different colours, the dealer."""
    return 1 - dealer if north == south else dealer


_new_state = object.__new__


def _state(
    hands: tuple[int, int], spread: tuple[int, ...], dealer: int, picks: tuple[int, int],
    turn: int, passed: bool,
) -> StuccoState:
    """A :class:`StuccoState` built without the frozen dataclass ``__init__``
    (several times slower); the fields are exactly its fields."""
    state = _new_state(StuccoState)
    state.__dict__.update(hands=hands, spread=spread, dealer=dealer, picks=picks, turn=turn,
                          passed=passed)
    return state


def _colour_starter(dealer: int, a: int, b: int) -> int:
    """Ruling 2 for the picked cards ``a`` (north's) and ``b`` (south's)."""
    return starter_by_colours(dealer, colour(a), colour(b))


def spread_score(played: int, run: int) -> int:
    """What the player of the last card scores: RULINGS.md, Stucco, rule 5,
    the cards it played to the spread (opening card included) times the
    cards of its final turn (``run``). The other player scores nothing."""
    return played * run


class Stucco(Game[StuccoState]):
    """Stucco for two, ``north`` and ``south``, played to ``target`` points.
    RULINGS.md, Stucco."""

    info = GameInfo(
        "stucco",
        "Stucco",
        (Option("target", "Points to win the match: a whole number from 1 to 1000.",
                100, minimum=1, maximum=1000),),
        seats=SEATS,
        hidden_information=True,
        simultaneous=True,
        secret_moves=True,
        layout=Layout("spread"),
        board="stucco",
        deal_noun="deal",
    )

    # ---- the match ----------------------------------------------------------------
    def starter(self, options: Mapping[str, Any], match_seed: int, deal_index: int) -> str:
        """The dealer of deal ``deal_index``: drawn from the match seed for
        deal 0, then alternating (ruling 1)."""
        first = random.Random(derive_seed(match_seed, "dealer")).randrange(2)
        return SEATS[(first + deal_index) % 2]

    def match_over(self, options: Mapping[str, Any], outcomes: tuple[Outcome, ...]) -> bool:
        """True once a seat's total reaches ``target`` (ruling 6). Only the
        player of the last card scores in a deal, so at most one seat can reach
        the target in any deal and there are no ties."""
        totals = dict.fromkeys(SEATS, 0)
        for o in outcomes:
            for s in o.scores:
                totals[s.side] += s.points
        return max(totals.values()) >= options["target"]

    # ---- a deal ---------------------------------------------------------------------
    def deal(self, seed: int, options: Mapping[str, Any], starter: str) -> StuccoState:
        """The 32 cards shuffled by ``seed`` and dealt one at a time, the
        non-dealer first, 16 each; ``starter`` is the dealer (ruling 1)."""
        dealer = SEAT_INDEX[starter]
        deck = shuffled(CARDS, seed)
        first = sum(1 << CODE[c] for c in deck[0::2])
        hands = (first, FULL_HAND ^ first) if dealer == 1 else (FULL_HAND ^ first, first)
        return StuccoState(hands, (), dealer)

    def to_move(self, state: StuccoState) -> tuple[str, ...]:
        """During the opening, every seat that has not picked yet (both at
        first); then the seat on turn; empty once over."""
        if not state.spread:
            return tuple(s for s, p in zip(SEATS, state.picks, strict=True) if p < 0)
        return (SEATS[state.turn],) if state.moves else ()

    def legal_moves(self, state: StuccoState, seat: str) -> tuple[str, ...]:
        s = SEAT_INDEX.get(seat, -1)
        if s < 0:
            return ()
        if not state.spread:
            return tuple(hand_cards(state.hands[s])) if state.picks[s] < 0 else ()
        return state.moves if s == state.turn else ()

    def apply(self, state: StuccoState, seat: str, move: str) -> StuccoState:
        """The state after ``seat`` picks, plays or passes.

        Raises :class:`MalformedMove` unless ``move`` is one of the 32 cards or
        ``pass``; :class:`IllegalMove` for an unknown or unawaited seat, a
        second pick (picks are final), a card not in hand, a card that does not
        follow, a pass by a seat that can follow, or any move once the deal is
        over.
        """
        code = MOVE_CODE.get(move) if isinstance(move, str) else None
        if code is None:
            raise MalformedMove(
                f"{str(move)[:40]!r} is not a Stucco move: give a card such as QH"
                " (ranks 7 8 9 T J Q K A, suits S H D C) or 'pass'"
            )
        s = SEAT_INDEX.get(seat, -1)
        if s < 0:
            raise IllegalMove(f"{str(seat)[:40]!r} is not a seat in Stucco: north or south")
        if not state.spread:
            return _pick(state, s, code)
        moves = state.moves
        if not moves:
            raise IllegalMove("the deal is over: neither player can follow the last card")
        if s != state.turn:
            raise IllegalMove(f"it is {SEATS[state.turn]}'s turn, not {seat}'s")
        if move not in moves:
            raise IllegalMove(_why_illegal(state, code))
        if code == PASS_CODE:
            return _state(state.hands, state.spread, state.dealer, state.picks, 1 - s, True)
        hands = (state.hands[0] ^ (1 << code), state.hands[1]) if s == 0 else (
            state.hands[0], state.hands[1] ^ (1 << code))
        return _state(hands, (*state.spread, code | s << 5), state.dealer, state.picks, 1 - s, False)

    def public_move(self, state: StuccoState, seat: str, move: str, viewer: str | None) -> str | None:
        """A pick stays secret from the opponent and spectators until both
        seats have picked (ruling 2); every other move is public."""
        if state.opening and viewer != seat:
            return None
        return move

    def move_structure(self, state: StuccoState, seat: str, move: str) -> dict[str, JSON]:
        """A secret opening pick ``{"kind": "pick", "card": "QH"}``, a card
        played to the spread ``{"kind": "play", "card": "QH"}``, or ``{"kind":
        "pass"}``."""
        if move == PASS:
            return {"move": move, "kind": "pass"}
        return {"move": move, "kind": "pick" if state.opening else "play", "card": move}

    def describe(self, state: StuccoState, seat: str, move: str) -> str:
        """A sentence about ``move``. A first pick is described without its
        card, so the sentence may be shown to everyone (ruling 2)."""
        code = MOVE_CODE.get(move) if isinstance(move, str) else None
        s = SEAT_INDEX.get(seat, -1)
        if code is None or s < 0:
            return str(move)
        if not state.spread:
            other = state.picks[1 - s]
            if other < 0 or code == PASS_CODE:
                return f"{_title(seat)} picks a card"
            picks = (code, other) if s == 0 else (other, code)
            starter = _colour_starter(state.dealer, *picks)
            same = colour(picks[0]) == colour(picks[1])
            rule = ("the same colour, so the non-dealer" if same
                    else "different colours, so the dealer")
            back = 1 - starter
            return (f"{_title(seat)} picks a card; the picks are shown: North {pretty(CARDS[picks[0]])},"
                    f" South {pretty(CARDS[picks[1]])}: {rule}, {_title(SEATS[starter])}, starts with the"
                    f" {pretty(CARDS[picks[starter]])} and the {pretty(CARDS[picks[back]])}"
                    f" goes back to {_title(SEATS[back])}'s hand")
        last = pretty(CARDS[state.spread[-1] & 31])
        if code == PASS_CODE:
            return f"{_title(seat)} cannot follow the {last} and passes"
        return f"{_title(seat)} plays the {pretty(CARDS[code])} on the {last}"

    # ---- results --------------------------------------------------------------------
    def outcome(self, state: StuccoState) -> Outcome | None:
        """Ruling 5: the player of the last card scores the cards they played
        to the spread (opening card included) × the cards of their final turn;
        the other scores 0."""
        if not state.over:
            return None
        last = state.spread[-1]
        winner = last >> 5
        scores = []
        for s, seat in enumerate(SEATS):
            n = state.played(s)
            if s == winner:
                run = state.run
                line = ScoreLine("Spread", f"{_plural(n, 'card')} played × {run} in the last turn",
                                 spread_score(n, run), ((n, "cards played"), (run, "in the last turn")))
            else:
                line = ScoreLine("Spread", f"{_plural(n, 'card')} played, but {_title(SEATS[winner])}"
                                 " played the last card", 0)
            scores.append(SideScore(seat, (seat,), line.points, (line,)))
        reason = (f"Neither player can follow the {pretty(CARDS[last & 31])}:"
                  f" {_title(SEATS[winner])} played the last card.")
        return Outcome((SEATS[winner],), tuple(scores), reason)

    # ---- views and text -------------------------------------------------------------
    def view(self, state: StuccoState, seat: str | None) -> JSON:
        """Both hands (public, ruling 1), the spread and the turn. During the
        opening a seat's pick is shown only to that seat (``pick``); everyone
        else learns only ``picked``. ``reveal`` holds both picks once shown.
        Fields: ``docs/notation/stucco.md``."""
        opening = not state.spread
        me = SEAT_INDEX.get(seat, -1) if seat is not None else -1
        spread = [{"card": CARDS[e & 31], "seat": SEATS[e >> 5]} for e in state.spread]
        if opening:
            last = None
        elif state.passed:
            last = {"seat": SEATS[1 - state.turn], "move": PASS}
        else:
            last = {"seat": spread[-1]["seat"], "move": spread[-1]["card"]}
        over = state.over
        return {
            "phase": "opening" if opening else "over" if over else "play",
            "hands": {s: hand_cards(state.hands[i]) for i, s in enumerate(SEATS)},
            "spread": spread,
            "dealer": SEATS[state.dealer],
            "starter": None if opening else SEATS[state.starter],
            "turn": None if opening or over else SEATS[state.turn],
            "picked": {s: state.picks[i] >= 0 for i, s in enumerate(SEATS)},
            "pick": CARDS[state.picks[me]] if opening and me >= 0 and state.picks[me] >= 0 else None,
            "reveal": None if opening else {s: CARDS[state.picks[i]] for i, s in enumerate(SEATS)},
            "run": state.run,
            "played": {s: state.played(i) for i, s in enumerate(SEATS)},
            "last": last,
        }

    def to_text(self, state: StuccoState) -> str:
        """Header ``dealer``, ``picks`` (secret ones included), ``turn`` and
        ``last``; body lines ``north:``, ``south:`` and ``spread:`` (the spread
        grouped into turns, ``;`` between turns)."""
        picks = " ".join(f"{s}={CARDS[p] if p >= 0 else '-'}"
                         for s, p in zip(SEATS, state.picks, strict=True))
        if not state.spread:
            turn = last = "-"
        else:
            turn = SEATS[state.turn]
            last = (f"{SEATS[1 - state.turn]} {PASS}" if state.passed
                    else f"{SEATS[state.spread[-1] >> 5]} {CARDS[state.spread[-1] & 31]}")
        groups: list[str] = []
        prev = -1
        for e in state.spread:
            if e >> 5 != prev:
                prev = e >> 5
                groups.append(SEATS[prev])
            groups[-1] += " " + CARDS[e & 31]
        body = "\n".join([
            *(f"{s}: {' '.join(hand_cards(state.hands[i])) or '-'}" for i, s in enumerate(SEATS)),
            f"spread: {'; '.join(groups) or '-'}",
        ])
        header = [("dealer", SEATS[state.dealer]), ("picks", picks), ("turn", turn), ("last", last)]
        return format_position(self.info.id, header, body)

    def from_text(self, text: str) -> StuccoState:
        """The state of a position text. Raises ``ValueError`` if the text is
        malformed or the position cannot arise (cards missing or repeated, a
        spread that breaks the follow rule, picks or turn inconsistent)."""
        header, lines = parse_position(text, self.info.id)
        if header.get("dealer") not in SEAT_INDEX:
            raise ValueError("dealer must be north or south")
        dealer = SEAT_INDEX[header["dealer"]]
        picks = _parse_picks(header.get("picks", ""))
        if [ln.partition(":")[0].strip() for ln in lines] != [*SEATS, "spread"]:
            raise ValueError("the body needs the lines 'north:', 'south:' and 'spread:' in that order")
        values = [ln.partition(":")[2].strip() for ln in lines]
        hands = tuple(_parse_cards(v) for v in values[:2])
        spread = _parse_spread(values[2])
        seen = [c for h in hands for c in h] + [e & 31 for e in spread]
        if sorted(seen) != list(range(32)):
            raise ValueError("the hands and the spread must hold each of the 32 cards exactly once")
        masks = (sum(1 << c for c in hands[0]), sum(1 << c for c in hands[1]))
        if not spread:
            if header.get("turn") != "-" or header.get("last") != "-":
                raise ValueError("during the opening turn and last must be '-'")
            if min(picks) >= 0:
                raise ValueError("both seats have picked, so the spread must be open")
            for s in (0, 1):
                if picks[s] >= 0 and not masks[s] >> picks[s] & 1:
                    raise ValueError(f"{SEATS[s]}'s pick is not in {SEATS[s]}'s hand")
            if len(hands[0]) != 16:
                raise ValueError("during the opening each hand holds 16 cards")
            return StuccoState(masks, (), dealer, picks)
        if min(picks) < 0:
            raise ValueError("once the spread is open both picks are known")
        starter = spread[0] >> 5
        if spread[0] & 31 != picks[starter] or starter != _colour_starter(dealer, *picks):
            raise ValueError("the spread must open with the starter's pick (ruling 2)")
        if header.get("turn") not in SEAT_INDEX:
            raise ValueError("turn must be north or south once the spread is open")
        turn = SEAT_INDEX[header["turn"]]
        who, _, what = header.get("last", "").partition(" ")
        passed = what == PASS
        last_card = f"{SEATS[spread[-1] >> 5]} {CARDS[spread[-1] & 31]}"
        if (who not in SEAT_INDEX or (not passed and header["last"] != last_card)
                or turn != 1 - SEAT_INDEX[who] or (passed and who == SEATS[spread[-1] >> 5])):
            raise ValueError(f"last must be '{last_card}' or a pass by the other seat,"
                             " and turn the seat after it")
        state = StuccoState(masks, spread, dealer, picks, turn, passed)
        if passed and state.moves in ((), _PASS_ONLY):
            raise ValueError("after a pass the seat on turn must be able to follow")
        return state

    # ---- for computer players -------------------------------------------------------
    def determinize(self, state: StuccoState, seat: str, rng: random.Random) -> StuccoState:
        """Only the opponent's pick can be hidden (during the opening): it is
        replaced by a random card of the opponent's hand."""
        s = SEAT_INDEX[seat]
        if state.spread or state.picks[1 - s] < 0:
            return state
        guess = CODE[rng.choice(hand_cards(state.hands[1 - s]))]
        picks = (state.picks[0], guess) if s == 0 else (guess, state.picks[1])
        return StuccoState(state.hands, (), state.dealer, picks)


def _pick(state: StuccoState, s: int, code: int) -> StuccoState:
    """Ruling 2: seat ``s`` picks card ``code``; after the second pick both are
    shown, the colour rule names the starter, the starter's card opens the
    spread and the other stays in (goes back to) its owner's hand. A pick is
    final: a seat that has picked is no longer awaited."""
    if state.picks[s] >= 0:
        raise IllegalMove("you have already picked a card, and a pick cannot be changed")
    if code == PASS_CODE:
        raise IllegalMove("there is no passing in the opening: pick a card from your hand")
    if not state.hands[s] >> code & 1:
        raise IllegalMove(f"the {pretty(CARDS[code])} is not in your hand: pick one of your own cards")
    picks = (code, state.picks[1]) if s == 0 else (state.picks[0], code)
    if min(picks) < 0:
        return StuccoState(state.hands, (), state.dealer, picks)
    starter = _colour_starter(state.dealer, *picks)
    card = picks[starter]
    hands = (state.hands[0] ^ (1 << card), state.hands[1]) if starter == 0 else (
        state.hands[0], state.hands[1] ^ (1 << card))
    return StuccoState(hands, (card | starter << 5,), state.dealer, picks, 1 - starter)


def _why_illegal(state: StuccoState, code: int) -> str:
    """A sentence for the seat on turn on why card or pass ``code`` is not legal."""
    last = CARDS[state.spread[-1] & 31]
    moves = state.moves
    if code == PASS_CODE:
        return f"you cannot pass: you can follow the {pretty(last)} with {_words(list(moves))}"
    card = CARDS[code]
    if not state.hands[state.turn] >> code & 1:
        where = ("already in the spread" if any(e & 31 == code for e in state.spread)
                 else f"in {SEATS[1 - state.turn]}'s hand")
        return f"the {pretty(card)} is not in your hand: it is {where}"
    may = _words([CARDS[f] for f in FOLLOWERS[state.spread[-1] & 31]])
    if moves == _PASS_ONLY:
        return (f"the {pretty(card)} does not follow the {pretty(last)} (only {may} may),"
                " and you hold none of them: you must pass")
    return f"the {pretty(card)} does not follow the {pretty(last)}: only {may} may"


def _parse_picks(value: str) -> tuple[int, int]:
    toks = value.split()
    if [t.partition("=")[0] for t in toks] != list(SEATS):
        raise ValueError("picks must read like 'north=QH south=-'")
    out = []
    for t in toks:
        card = t.partition("=")[2]
        if card != "-" and card not in CODE:
            raise ValueError(f"bad pick {card!r}")
        out.append(CODE[card] if card != "-" else -1)
    return out[0], out[1]


def _parse_cards(value: str) -> list[int]:
    if value == "-":
        return []
    for tok in value.split():
        if tok not in CODE:
            raise ValueError(f"{tok!r} is not a Stucco card")
    return [CODE[t] for t in value.split()]


def _parse_spread(value: str) -> tuple[int, ...]:
    """``north 8S 9S; south 9H`` → spread entries; checks the follow rule."""
    if value == "-":
        return ()
    out: list[int] = []
    for group in value.split(";"):
        seat, *cards = group.split()
        if seat not in SEAT_INDEX or not cards:
            raise ValueError(f"bad spread turn {group.strip()!r}: expected a seat then its cards")
        out += [c | SEAT_INDEX[seat] << 5 for c in _parse_cards(" ".join(cards))]
    for a, b in pairwise(out):
        if b & 31 not in FOLLOWERS[a & 31]:
            raise ValueError(f"{CARDS[b & 31]} cannot follow {CARDS[a & 31]} in the spread")
    return tuple(out)
