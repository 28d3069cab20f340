"""Cards and squares shared by every game.

Notation (RULINGS.md, shared conventions):

* A card is two characters, rank then suit: rank ``A 2 3 4 5 6 7 8 9 T J Q K``,
  suit ``S H D C``. ``TH`` is the ten of hearts. In a position text a face-down
  card is written in lower case (``qh``).
* A square is a column letter and a row number: columns ``a b c …`` left to
  right, rows ``1 2 3 …`` top to bottom (``a1`` is the top-left square).
"""

from __future__ import annotations

import hashlib
import random
import re
from collections.abc import Iterable

RANKS = "A23456789TJQK"
SUITS = "SHDC"
RED_SUITS = "HD"
BLACK_SUITS = "SC"
COURTS = "JQK"
NUMERALS = "A23456789T"

SUIT_SYMBOL = {"S": "♠", "H": "♥", "D": "♦", "C": "♣"}
SUIT_NAME = {"S": "spades", "H": "hearts", "D": "diamonds", "C": "clubs"}
RANK_NAME = {
    "A": "Ace", "2": "2", "3": "3", "4": "4", "5": "5", "6": "6", "7": "7",
    "8": "8", "9": "9", "T": "10", "J": "Jack", "Q": "Queen", "K": "King",
}
FULL_DECK: tuple[str, ...] = tuple(r + s for s in SUITS for r in RANKS)

_CARD_RE = re.compile(r"^[A2-9TJQK][SHDC]$")


def is_card(text: str) -> bool:
    """True if ``text`` is a card in notation, upper case (``"QH"``)."""
    return bool(_CARD_RE.match(text))


def rank(card: str) -> str:
    """The rank character of a card, either case (``"qh"`` → ``"Q"``)."""
    return card[0].upper()


def suit(card: str) -> str:
    """The suit character of a card, either case (``"qh"`` → ``"H"``)."""
    return card[1].upper()


def is_red(card: str) -> bool:
    """True for hearts and diamonds."""
    return card[1].upper() in RED_SUITS


def colour(card: str) -> str:
    """``"red"`` or ``"black"``."""
    return "red" if is_red(card) else "black"


def is_court(card: str) -> bool:
    """True for J, Q and K."""
    return card[0].upper() in COURTS


def pip_value(card: str) -> int:
    """Face value of a numeral: A counts 1, 2–9 at face value, T counts 10.

    Raises ``ValueError`` for a court.
    """
    r = card[0].upper()
    if r == "A":
        return 1
    if r == "T":
        return 10
    if r in COURTS:
        raise ValueError(f"{card} is a court, not a numeral")
    return int(r)


def pretty(card: str) -> str:
    """A card for people: ``"QH"`` → ``"Q♥"``, ``"TS"`` → ``"10♠"``."""
    r = card[0].upper()
    return ("10" if r == "T" else r) + SUIT_SYMBOL[card[1].upper()]


def derive_seed(seed: int, *parts: object) -> int:
    """A seed in 0 … 2⁶³−1 derived from ``seed`` and labels, e.g. the deal number.

    The derivation is a hash, so a derived seed reveals nothing usable about
    its parent.
    """
    text = ":".join([str(seed), *map(str, parts)]).encode()
    return int.from_bytes(hashlib.sha256(text).digest()[:8], "big") & (2**63 - 1)


def shuffled(cards: Iterable[str], seed: int) -> list[str]:
    """The cards in an order fixed by ``seed`` (a new list)."""
    out = list(cards)
    random.Random(seed).shuffle(out)
    return out


class Grid:
    """Squares of a ``width`` × ``height`` layout, indexed row by row from ``a1``.

    Index ``i`` is column ``i % width``, row ``i // width``; names use the
    shared square notation (``a1`` top-left).
    """

    def __init__(self, width: int, height: int) -> None:
        self.width = width
        self.height = height
        self.size = width * height
        self.names: tuple[str, ...] = tuple(
            f"{chr(97 + i % width)}{i // width + 1}" for i in range(self.size)
        )
        self.index: dict[str, int] = {n: i for i, n in enumerate(self.names)}

    def square(self, col: int, row: int) -> int:
        """Index of the square at 0-based column and row."""
        return row * self.width + col

    def colrow(self, i: int) -> tuple[int, int]:
        """0-based (column, row) of a square index."""
        return i % self.width, i // self.width

    def on_board(self, col: int, row: int) -> bool:
        """True if the 0-based column and row lie on the layout."""
        return 0 <= col < self.width and 0 <= row < self.height

    def ray(self, start: int, dc: int, dr: int) -> tuple[int, ...]:
        """Squares from ``start`` (excluded) stepping by (dc, dr) to the edge."""
        c, r = self.colrow(start)
        out = []
        c, r = c + dc, r + dr
        while self.on_board(c, r):
            out.append(self.square(c, r))
            c, r = c + dc, r + dr
        return tuple(out)

    def neighbours(self, i: int) -> tuple[int, ...]:
        """The up to four orthogonal neighbours of square ``i``."""
        c, r = self.colrow(i)
        return tuple(
            self.square(c + dc, r + dr)
            for dc, dr in ((0, -1), (1, 0), (0, 1), (-1, 0))
            if self.on_board(c + dc, r + dr)
        )

    def parse(self, name: str) -> int | None:
        """Index of a square name, or ``None`` if it is not on this layout."""
        return self.index.get(name)

    def format_rows(self, cells: Iterable[str]) -> str:
        """Cells (one token each, row by row) as ``height`` lines of ``width`` tokens."""
        cells = list(cells)
        return "\n".join(
            " ".join(cells[r * self.width:(r + 1) * self.width]) for r in range(self.height)
        )

    def parse_rows(self, lines: list[str]) -> list[str]:
        """Tokens of a grid given as ``height`` lines of ``width`` tokens.

        Raises ``ValueError`` if the shape is wrong.
        """
        if len(lines) != self.height:
            raise ValueError(f"expected {self.height} rows, got {len(lines)}")
        out: list[str] = []
        for n, line in enumerate(lines, 1):
            toks = line.split()
            if len(toks) != self.width:
                raise ValueError(f"row {n}: expected {self.width} cells, got {len(toks)}")
            out.extend(toks)
        return out


GRID_7X7 = Grid(7, 7)
GRID_9X5 = Grid(9, 5)
