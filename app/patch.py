"""Patch frames: a state told as what changed since the last one.

A client that sends ``{"type": "patches"}`` receives, in place of most
state frames, ``{"type": "patch", "version": V, "ops": [...]}``: the ops
turn the last state it was sent (sentences filled in, ``docs/protocol.md``,
"log") into the new one. Each op is ``[path, value]``: set ``value`` at
``path``, a list of object keys and array indices from the frame's root (an
empty path: the whole frame), an index equal to the array's length
appending. Short arrays, arrays that
shrink and objects that lose a key are set whole, so a client that applies
the ops in order to its copy gets exactly the server's frame
(``docs/protocol.md``, "Patches").
"""

from __future__ import annotations

from typing import Any

import orjson

Op = list[Any]

WHOLE_BELOW = 8
"""Arrays shorter than this are set whole rather than element by element:
cheaper to apply, and never indexed past a client's own copy."""


def diff(old: Any, new: Any, path: list[Any], ops: list[Op]) -> None:
    """Append to ``ops`` the ops that turn ``old`` into ``new`` (JSON
    values), at ``path``."""
    if old == new:
        return
    if isinstance(old, dict) and isinstance(new, dict) and old.keys() <= new.keys():
        for key, value in new.items():
            if key not in old:
                ops.append([[*path, key], value])
            else:
                diff(old[key], value, [*path, key], ops)
        return
    if (isinstance(old, list) and isinstance(new, list) and path
            and WHOLE_BELOW <= len(old) <= len(new)):
        for i, value in enumerate(new):
            if i < len(old):
                diff(old[i], value, [*path, i], ops)
            else:
                ops.append([[*path, i], value])
        return
    ops.append([path, new])


def state_patch(base: str, new: str) -> str | None:
    """The patch frame that turns the state frame ``base`` into ``new``
    (both JSON text), or ``None`` if a patch would be no shorter than ``new``
    itself."""
    old_frame, new_frame = orjson.loads(base), orjson.loads(new)
    ops: list[Op] = []
    diff(old_frame, new_frame, [], ops)
    text = orjson.dumps({"type": "patch", "version": new_frame["version"], "ops": ops}).decode()
    return text if len(text) < len(new) else None
