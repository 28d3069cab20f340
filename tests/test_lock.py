"""The lock files match ``pyproject.toml``: every dependency it names is
locked, at a version its specifier allows, with hashes; the runtime lock
(the container's) agrees with the test lock (``make``'s); and this
environment holds the locked versions (``make`` installs from the lock).
``make lock`` writes both files again (README "Dependencies")."""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

import pytest
from packaging.markers import Marker
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

ROOT = Path(__file__).resolve().parent.parent
LOCK = ROOT / "requirements.lock"
TEST_LOCK = ROOT / "requirements-test.lock"

_ENTRY = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==([^\s;\\]+)\s*(?:;\s*([^\\]+?))?\s*\\?$")


@dataclass(frozen=True)
class Locked:
    """One entry of a lock file."""

    version: Version
    marker: Marker | None
    hashes: int


def read_lock(path: Path) -> dict[str, list[Locked]]:
    """The entries of a lock file by canonical name (a name may have one
    entry per marker, e.g. per Python version)."""
    entries: dict[str, list[Locked]] = {}
    name = None
    for line in path.read_text().splitlines():
        match = _ENTRY.match(line)
        if match:
            name = canonicalize_name(match.group(1))
            marker = Marker(match.group(3)) if match.group(3) else None
            entries.setdefault(name, []).append(Locked(Version(match.group(2)), marker, 0))
        elif line.strip().startswith("--hash=sha256:") and name is not None:
            last = entries[name][-1]
            entries[name][-1] = Locked(last.version, last.marker, last.hashes + 1)
        elif line.strip() and not line.lstrip().startswith("#") and not line.startswith("    "):
            raise AssertionError(f"{path.name}: a line that is no lock entry: {line!r}")
    return entries


def project() -> dict[str, list[Requirement]]:
    """pyproject.toml's requirements: ``runtime``, ``test`` and ``build``."""
    data = tomllib.loads((ROOT / "pyproject.toml").read_text())
    return {"runtime": [Requirement(r) for r in data["project"]["dependencies"]],
            "test": [Requirement(r) for r in data["project"]["optional-dependencies"]["test"]],
            "build": [Requirement(r) for r in data["build-system"]["requires"]]}


def test_every_lock_entry_has_hashes() -> None:
    for path in (LOCK, TEST_LOCK):
        entries = read_lock(path)
        assert len(entries) > 10, path
        for name, locked in entries.items():
            assert all(e.hashes >= 1 for e in locked), (path.name, name)


@pytest.mark.parametrize(("path", "groups"), [(LOCK, ("runtime", "build")),
                                              (TEST_LOCK, ("runtime", "test", "build"))])
def test_the_lock_holds_every_dependency_of_pyproject(path: Path, groups: tuple[str, ...]) -> None:
    entries = read_lock(path)
    reqs = project()
    for group in groups:
        for req in reqs[group]:
            name = canonicalize_name(req.name)
            assert name in entries, f"{req} ({group}) is not in {path.name}: run `make lock`"
            for locked in entries[name]:
                assert req.specifier.contains(locked.version, prereleases=True), (
                    f"{path.name} locks {name} {locked.version}, which {req} does not allow: run `make lock`")


def test_the_runtime_lock_agrees_with_the_test_lock() -> None:
    runtime, test = read_lock(LOCK), read_lock(TEST_LOCK)
    for name, locked in runtime.items():
        assert name in test, name
        assert {e.version for e in locked} == {e.version for e in test[name]}, name


def test_the_lock_holds_what_uvicorn_standard_needs() -> None:
    # an extra (uvicorn[standard]) pulls packages pyproject does not name
    entries = read_lock(LOCK)
    for name in ("httptools", "uvloop", "websockets", "h11"):
        assert name in entries, name


def test_this_environment_holds_the_locked_versions() -> None:
    for name, locked in read_lock(TEST_LOCK).items():
        wanted = [e for e in locked if e.marker is None or e.marker.evaluate()]
        if not wanted:
            continue  # not for this platform or Python
        try:
            installed = Version(metadata.version(name))
        except metadata.PackageNotFoundError:
            raise AssertionError(f"{name} is locked but not installed: run `make`") from None
        assert installed in {e.version for e in wanted}, (
            f"{name} {installed} is installed, the lock says {wanted[0].version}: run `make`")
