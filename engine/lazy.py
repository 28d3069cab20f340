"""A lock-free cached property for the games' immutable states."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Generic, TypeVar, overload

_T = TypeVar("_T")


class cached(Generic[_T]):
    """Like :func:`functools.cached_property` (computed once, then kept in the
    instance's ``__dict__``), without the lock Python 3.11 takes on every
    first access, which costs about as much as a whole move of a game. Two
    threads racing compute the same value twice: it is only for values that
    are pure functions of an immutable state."""

    def __init__(self, func: Callable[[Any], _T]) -> None:
        self.func = func
        self.name = func.__name__
        self.__doc__ = func.__doc__

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    @overload
    def __get__(self, instance: None, owner: type | None = None) -> cached[_T]: ...

    @overload
    def __get__(self, instance: object, owner: type | None = None) -> _T: ...

    def __get__(self, instance: object | None, owner: type | None = None) -> _T | cached[_T]:
        if instance is None:
            return self
        value = instance.__dict__[self.name] = self.func(instance)
        return value
