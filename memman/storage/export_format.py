"""An export's lines: the record each kind of line holds, how it is written, and what it must
hold to be read back.

A line is one JSON object whose "kind" names its record: a memory (every field of `Memory`),
an event (every field of `Event`), a scope's parked fact, short-term fact or buffered message
(kind: its table, every column; the lines a whole-store copy writes too, store_copy.py), or in
a whole-store copy a vector. A line without "kind" (an older `memman export`) is an event if it
has an event's memory_id and op, else a memory.

An import copies records past the write path (transfer.py), so the checks every write makes
are made here: without them a line could store what no write stores and what later reads
fail on. A NaN in metadata made SQLite's json_extract fail every context block of the user;
a NaN importance failed the import's transaction with an untyped IntegrityError; a stamp
that is not a time sorted among the others as text. A key memman does not know (a newer
memman's export) would be dropped without a word, so it is refused too. A failed check is a
ValueError (InvalidInputError), which the line's validation reports as that line's error.

A row of the other tables is checked as a memory is (checked_row): a field the table has not,
a value of the wrong type, a number that is not finite, a stamp that is not a time, metadata
that is not a JSON object or a message's role that observe refuses make it a bad line. Read
back, it is in the stored form: stamps as memman writes them, short_term's hash of this
memman, and no lease (a lease is a worker's claim in its own store).
"""

from __future__ import annotations

import base64
import binascii
import json
from dataclasses import dataclass
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    Discriminator,
    PlainValidator,
    RootModel,
    Tag,
    ValidationError,
    model_validator,
)

from memman.config import Settings
from memman.errors import InvalidInputError, validation_problems
from memman.language.text import content_hash
from memman.models import MAX_IMPORTANCE, MESSAGE_ROLES, MIN_IMPORTANCE, Event, Memory
from memman.scope import Scope, check_encodable, check_id
from memman.storage.upkeep import COPIED_TABLES
from memman.timestamps import check_moment

MEMORY = "memory"
EVENT = "event"
VECTOR = "vector"
# The discriminator's tag for VECTOR and COPIED_TABLES lines (their "kind" varies).
ROW = "row"
# Keys of a line that are no field of its record.
_LINE_KEYS = frozenset({"kind"})


def record_line(kind: str, record: Memory | Event) -> str:
    """The line of a memory (MEMORY) or an event (EVENT), without a newline."""
    return json.dumps({"kind": kind, **record.model_dump(mode="json")}, ensure_ascii=False)


def row_line(table: str, row: dict[str, Any]) -> str:
    """The line of a row of one of COPIED_TABLES (as Store.table_rows gives it)."""
    return json.dumps({"kind": table, **row}, ensure_ascii=False)


@dataclass(frozen=True)
class Row:
    """A line of a whole-store copy that is not a memory or an event: a vector (VECTOR, its
    bytes decoded) or a row of one of COPIED_TABLES (kind: the table)."""

    kind: str
    values: dict[str, Any]


def line_row(kind: str, data: dict[str, Any]) -> Row:
    """A vector or a table's row of a whole-store copy, checked as far as its line tells."""
    if kind == VECTOR:
        try:
            blob = base64.b64decode(data["vector"], validate=True)
            fits = len(blob) == 4 * int(data["dim"])
        except (KeyError, TypeError, ValueError, binascii.Error) as error:
            raise InvalidInputError(f"not a vector: {error!r}") from error
        if not (fits and isinstance(data.get("memory_id"), str) and data.get("model")):
            raise InvalidInputError("not a vector: memory_id, model and dim float32s expected")
        return Row(kind, {**data, "vector": blob})
    return Row(kind, checked_row(kind, data))


def scope_row(record: Any) -> bool:
    """Whether the record is a scope's parked fact, short-term fact or buffered message."""
    return isinstance(record, Row) and record.kind in COPIED_TABLES


class PendingRow(BaseModel):
    """A row of pending (a parked fact), as table_rows gives it."""

    id: int | None = None
    user_id: str
    agent_id: str = ""
    content: str
    source: str | None = None
    metadata: str = "{}"
    error: str
    attempts: int = 0
    created_at: str
    updated_at: str
    category: str | None = None
    importance: float | None = None
    subject: str | None = None
    attribute: str | None = None
    observed_at: str | None = None
    lease_owner: str | None = None
    lease_expires: str | None = None


class ShortTermRow(BaseModel):
    """A row of short_term; its content_hash is computed again when it is read back."""

    id: int | None = None
    user_id: str
    agent_id: str = ""
    content: str
    content_hash: str | None = None
    category: str | None = None
    importance: float = 5.0
    sessions: str = "[]"
    source: str | None = None
    status: Literal["active", "expired", "promoted", "deleted"] = "active"
    created_at: str
    updated_at: str
    expires_at: str
    recall_count: int = 0
    last_recalled_at: str | None = None
    metadata: str = "{}"


class MessageRow(BaseModel):
    """A row of message_buffer (extracted_at None: not yet extracted)."""

    id: int | None = None
    user_id: str
    agent_id: str = ""
    session_id: str
    role: str
    content: str
    created_at: str
    extracted_at: str | None = None
    observed_at: str | None = None
    lease_owner: str | None = None
    lease_expires: str | None = None
    metadata: str | None = None


ROW_MODELS: dict[str, type[BaseModel]] = {
    "pending": PendingRow,
    "short_term": ShortTermRow,
    "message_buffer": MessageRow,
}
_STAMPS = (
    "created_at",
    "updated_at",
    "observed_at",
    "expires_at",
    "last_recalled_at",
    "extracted_at",
)


def checked_row(table: str, data: dict[str, Any]) -> dict[str, Any]:
    """The values of a line of one of ROW_MODELS' tables, checked and in the stored form
    (stamps as memman writes them, no lease, short_term's hash of this memman), or
    InvalidInputError saying what is wrong."""
    model = ROW_MODELS[table]
    unknown_keys(data, model)
    try:
        row = model.model_validate(data)
    except ValidationError as error:
        raise InvalidInputError(f"not a {table} row: {validation_problems(error)}") from None
    storable(row)
    Scope(row.user_id, row.agent_id or None)
    if isinstance(row, MessageRow):
        check_id("session_id", row.session_id)
        if row.role not in MESSAGE_ROLES:  # what observe refuses to buffer, so does an import
            raise InvalidInputError(
                f"role {row.role!r} is no role observe buffers ({', '.join(sorted(MESSAGE_ROLES))})"
            )
    values = row.model_dump()
    if not values["content"].strip() or "\x00" in values["content"]:
        raise InvalidInputError("content is empty or holds a NUL byte")
    if min(values.get("attempts", 0), values.get("recall_count", 0)) < 0 or (
        values.get("id") is not None and values["id"] < 1
    ):
        raise InvalidInputError("an id below 1, or a negative count")
    on_the_scale(values.get("importance"))
    for name in ("metadata", "sessions"):
        if values.get(name) is not None and not _json_of(values[name], name):
            raise InvalidInputError(f"{name} is not JSON text of an object (sessions: a list)")
    for name in _STAMPS:
        if values.get(name) is not None:
            values[name] = check_moment(name, values[name])
    if table == "short_term":
        values["content_hash"] = content_hash(values["content"])
    if "lease_owner" in values:
        values["lease_owner"] = values["lease_expires"] = None
    return values


def _json_of(text: str, name: str) -> bool:
    try:
        value = json.loads(text)
    except ValueError:
        return False
    return isinstance(value, list if name == "sessions" else dict)


def row_too_large(values: dict[str, Any], settings: Settings) -> str | None:
    """Why a row holds more than this store takes in a write (as too_large)."""
    metadata = len((values.get("metadata") or "").encode())
    return over_limits(len(values["content"]), metadata, settings)


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
    takes in a write, or None: too_large's test, and row_too_large's."""
    if longest > settings.max_fact_chars:
        return f"a text is {longest} characters; the limit is {settings.max_fact_chars}"
    if metadata_bytes > settings.max_metadata_bytes:
        return f"metadata is {metadata_bytes} bytes; the limit is {settings.max_metadata_bytes}"
    return None


def _kind(data: Any) -> str | None:
    if not isinstance(data, dict):
        return None
    # Without "kind": a memory (an older export), or an event (an older `export --events`).
    kind = data.get("kind", EVENT if {"memory_id", "op"} <= data.keys() else MEMORY)
    return ROW if kind == VECTOR or kind in COPIED_TABLES else kind


def _copied_row(data: Any) -> Row:
    if isinstance(data, Row):
        return data
    values = dict(data)
    return line_row(values.pop("kind"), values)  # InvalidInputError is a ValueError


_RECORDS: dict[str, type[Memory] | type[Event]] = {MEMORY: Memory, EVENT: Event}


class ExportLine(
    RootModel[
        Annotated[
            Annotated[Memory, Tag(MEMORY)]
            | Annotated[Event, Tag(EVENT)]
            | Annotated[Row, PlainValidator(_copied_row), Tag(ROW)],
            Discriminator(
                _kind,
                custom_error_type="record_kind",
                custom_error_message="expected a JSON object of kind 'memory' or 'event'",
            ),
        ]
    ]
):
    """One line of an export: a memory (also a line without "kind", as older exports wrote)
    or an event, of a scope that passes the same rules as every write; in a whole-store copy
    also a vector or a row of one of COPIED_TABLES (checked by line_row)."""

    @model_validator(mode="before")
    @classmethod
    def _known_keys(cls, data: Any) -> Any:
        if isinstance(data, str) or (
            isinstance(data, dict) and "fact" in data and "kind" not in data
        ):
            # A line of `memman ingest` input ({"fact": ...} or a bare string) was refused as
            # "written by a newer memman?", which sent the user looking for an upgrade.
            raise InvalidInputError(
                "looks like ingest input (a fact, not an export line): `memman ingest` takes it"
            )
        kind = _kind(data)
        if kind in _RECORDS:
            unknown_keys(data, _RECORDS[kind])  # InvalidInputError is a ValueError
        return data

    @model_validator(mode="after")
    def _valid_record(self) -> ExportLine:
        record = self.root
        if isinstance(record, Row):  # line_row checked the rows that carry a scope
            return self
        Scope(record.user_id, record.agent_id)
        self.root = checked_memory(record) if isinstance(record, Memory) else checked_event(record)
        return self
