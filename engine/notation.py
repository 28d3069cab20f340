"""The shared shape of position texts (``docs/notation.md``).

A position text is a header of ``key: value`` lines, the first of which is
``game: <id>``, then one blank line, then the body (for grid games, one line per
row of space-separated card tokens).
"""

from __future__ import annotations


def format_position(game_id: str, header: list[tuple[str, str]], body: str) -> str:
    """Join a header and a body into a position text."""
    lines = [f"game: {game_id}"] + [f"{k}: {v}" for k, v in header]
    return "\n".join(lines) + "\n\n" + body + "\n"


def parse_position(text: str, game_id: str) -> tuple[dict[str, str], list[str]]:
    """Split a position text into its header (a dict) and its body lines.

    Raises ``ValueError`` if the text is not a position of ``game_id``.
    """
    head, sep, body = text.strip("\n").partition("\n\n")
    if not sep:
        raise ValueError("a position text needs a header, a blank line and a body")
    header: dict[str, str] = {}
    for line in head.splitlines():
        key, colon, value = line.partition(":")
        if not colon:
            raise ValueError(f"bad header line {line!r}: expected 'key: value'")
        header[key.strip()] = value.strip()
    if header.get("game") != game_id:
        raise ValueError(f"not a {game_id} position (game: {header.get('game')!r})")
    return header, [ln for ln in body.splitlines() if ln.strip()]
