"""Which memory and event lines of an export are copied into a store as they are
(ScopesHeld), and what such a line must hold to be.

An import copies records past the write path (transfer.py), so the checks every write makes
are made here: without them a line could store what no write stores and what later reads
fail on. A NaN in metadata made SQLite's json_extract fail every context block of the user;
a NaN importance failed the import's transaction with an untyped IntegrityError; a stamp
that is not a time sorted among the others as text. A key memman does not know (a newer
memman's export) would be dropped without a word, so it is refused too. A failed check is a
ValueError (InvalidInputError), which the line's validation reports as that line's error.
"""

from __future__ import annotations

import json
from typing import Any

import sqlalchemy as sa
from pydantic import BaseModel

from memman.config import Settings
from memman.errors import InvalidInputError, NotFoundError
from memman.models import MAX_IMPORTANCE, MIN_IMPORTANCE, Event, Memory
from memman.scope import Scope, check_encodable, check_id
from memman.storage.store import Store
from memman.timestamps import check_moment

# Keys of a line that are no field of its record.
_LINE_KEYS = frozenset({"kind"})


def unknown_keys(data: Any, record: type[BaseModel]) -> None:
    """InvalidInputError naming the keys of a line that `record` has no field for."""
    if isinstance(data, dict):
        unknown = sorted(data.keys() - record.model_fields.keys() - _LINE_KEYS)
        if unknown:
            raise InvalidInputError(
                f"unknown field {', '.join(map(repr, unknown))} (written by a newer memman?);"
                " nothing of the line imported"
            )


def checked_memory(memory: Memory) -> Memory:
    """The memory with its stamps in the stored form, or InvalidInputError."""
    storable(memory)
    check_id("id", memory.id)
    if not memory.content.strip() or "\x00" in memory.content:
        raise InvalidInputError("content is empty or holds a NUL byte")
    if memory.repetition_count < 1 or memory.access_count < 0:
        raise InvalidInputError("repetition_count must be at least 1, access_count at least 0")
    on_the_scale(memory.importance)
    if not 0 <= memory.confidence <= 1:
        raise InvalidInputError(f"confidence must be from 0 to 1, not {memory.confidence}")
    stamps = ("created_at", "updated_at", "last_accessed_at", "observed_at", "decayed_at")
    return memory.model_copy(update=_stamps(memory, stamps))


def on_the_scale(importance: float | None) -> None:
    """InvalidInputError for an importance off update_memory's scale: copied, an importance of
    99 outranked every other memory of the user in recall."""
    if importance is not None and not MIN_IMPORTANCE <= importance <= MAX_IMPORTANCE:
        raise InvalidInputError(
            f"importance must be from {MIN_IMPORTANCE} to {MAX_IMPORTANCE}, not {importance}"
        )


def checked_event(event: Event) -> Event:
    """The event with its stamps in the stored form, or InvalidInputError."""
    storable(event)
    if event.memory_id is not None:
        check_id("memory_id", event.memory_id)
    if event.repeat_count < 1:
        raise InvalidInputError("repeat_count must be at least 1")
    return event.model_copy(update=_stamps(event, ("created_at", "last_at")))


def storable(record: BaseModel) -> None:
    """Every value is strict JSON (no NaN or infinity, which SQLite's JSON functions and
    NOT NULL REAL columns refuse) and every text is valid Unicode."""
    try:
        # The Python dump: the JSON one writes a NaN as null. default=str for the enums.
        values = record.model_dump()
        text = json.dumps(values, ensure_ascii=False, allow_nan=False, default=str)
    except ValueError as error:
        raise InvalidInputError(f"a number is not finite: {error}") from None
    check_encodable("the line", text)


def _stamps(record: BaseModel, names: tuple[str, ...]) -> dict[str, str]:
    """The record's stamps that are set, each an ISO 8601 time written as memman stores it
    (what an export holds comes back unchanged)."""
    values = {name: getattr(record, name) for name in names}
    return {name: check_moment(name, value) for name, value in values.items() if value is not None}


def too_large(record: Memory | Event, settings: Settings) -> str | None:
    """Why a record holds more than this store takes in a write (a fact over max_fact_chars,
    metadata over max_metadata_bytes), or None. A 50 MB content copied as it is took 20 s and
    4 GB of memory, and no later write could have been compared with it cheaply."""
    texts = (
        [record.content]
        if isinstance(record, Memory)
        else [record.candidate, record.content_before, record.content_after]
    )
    longest = max((len(text) for text in texts if text is not None), default=0)
    metadata = (
        len(json.dumps(record.metadata, ensure_ascii=False).encode())
        if isinstance(record, Memory)
        else 0
    )
    return over_limits(longest, metadata, settings)


def over_limits(longest: int, metadata_bytes: int, settings: Settings) -> str | None:
    """Why a line's longest text (characters) or its metadata (bytes) is more than this store
    takes in a write, or None: too_large's test, and transfer_rows' for the other tables."""
    if longest > settings.max_fact_chars:
        return f"a text is {longest} characters; the limit is {settings.max_fact_chars}"
    if metadata_bytes > settings.max_metadata_bytes:
        return f"metadata is {metadata_bytes} bytes; the limit is {settings.max_metadata_bytes}"
    return None


def memory_scopes(conn: sa.Connection, store: Store, ids: list[str]) -> dict[str, Scope]:
    """The scope of each of these memory ids the store holds, in any status: an id held in
    another scope is no duplicate of a line (transfer.py copies it under a new id)."""
    lt = store.long_term
    rows = conn.execute(sa.select(lt.c.id, lt.c.user_id, lt.c.agent_id).where(lt.c.id.in_(ids)))
    return {memory_id: Scope(user, agent or None) for memory_id, user, agent in rows}


def names_another_scope(conn: sa.Connection, store: Store, event: Event) -> bool:
    """Whether the event names a memory the store holds in another scope: history() reads a
    memory's events by its id alone, so another user's line would show in that history."""
    if event.memory_id is None:
        return False
    try:
        memory = store.get(conn, event.memory_id, None)
    except NotFoundError:
        return False
    return Scope(memory.user_id, memory.agent_id) != Scope(event.user_id, event.agent_id)


class ScopesHeld:
    """Whether the store held memories of a record's scope before the import: a scope it held
    none of is copied as it is (ids, history), as into an empty store, so moving a user into a
    store that serves others keeps their memories' ids and audit trail. Asked once per scope,
    when its first record is read, before any of the scope's records is written."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self.held: dict[Scope, bool] = {}

    def __call__(self, record: Memory | Event) -> bool:
        scope = Scope(record.user_id, record.agent_id)
        if scope not in self.held:
            with self.store.read() as conn:
                self.held[scope] = bool(self.store.count_by_status(conn, scope))
        return self.held[scope]
