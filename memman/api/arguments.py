"""Checks of MemoryManager's arguments shared by its methods: counts, listing scopes, scopes of
calls by id.

At the API boundary, so a bad argument is an InvalidInputError before any stage runs.
"""

from __future__ import annotations

import datetime as dt
import warnings
from collections.abc import Callable, Iterable

from memman.errors import InvalidInputError
from memman.scope import Scope

Clock = Callable[[], dt.datetime]


# Any larger limit or offset overflows SQLite's integer binding (OverflowError, not our error).
MAX_COUNT = 2**31 - 1


def utc_now() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


def check_count(name: str, value: object, *, minimum: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidInputError(f"{name} must be an integer")
    if not minimum <= value <= MAX_COUNT:
        raise InvalidInputError(f"{name} must be from {minimum} to {MAX_COUNT}")


def check_batch(call: str, items: object, what: str) -> None:
    """A batch is a list (any iterable) of items, never one string: iterated, each character
    would be an item."""
    if isinstance(items, str | bytes) or not isinstance(items, Iterable):
        given = "one string" if isinstance(items, str | bytes) else type(items).__name__
        raise InvalidInputError(f"{call} takes a list of {what}, not {given}")


def all_or_scope(user_id: str | None, agent_id: str | None) -> Scope | None:
    """The scope of a listing call, or None for every user's: only when neither id is given.

    An agent_id without a user_id used to be ignored silently (every user's rows came back);
    "all users" must be asked for by giving neither.
    """
    if user_id is None:
        if agent_id is not None:
            raise InvalidInputError(
                "agent_id needs a user_id; give neither to mean every user's data"
            )
        return None
    return Scope(user_id, agent_id)


def id_scope(call: str, user_id: str | None, agent_id: str | None) -> Scope | None:
    """The scope a call by id is confined to; None (deprecated) reaches any user's memory."""
    if user_id is None:
        if agent_id is not None:
            raise InvalidInputError("agent_id needs a user_id")
        warnings.warn(
            f"{call}() without user_id reaches any user's memory; pass user_id= (and"
            " agent_id=): it will be required",
            DeprecationWarning,
            stacklevel=3,
        )
        return None
    return Scope(user_id, agent_id)
