"""A scope's rows beyond its memories in an export: parked facts (pending), short-term facts
(short_term) and buffered messages (message_buffer), one line each whose "kind" is the table,
every column (the lines a whole-store copy writes too, store_copy.py).

They are what memman keeps of a user besides memories and events: a parked fact is one whose
decision failed and that retry_pending still owes a decision; a short-term fact may still be
promoted; a buffered message is not yet extracted. A user exported without them and imported
elsewhere loses them without a word, so `export_lines` writes the scope's live ones (every
parked fact, the active short-term facts, the messages not yet extracted; every row of them
with include_inactive) and `import_lines` reads them back here.

A line is checked as a memory's is (checked_row): a field the table has not, a value of the
wrong type, a number that is not finite, a stamp that is not a time, metadata that is not a
JSON object or a message's role that observe refuses make it a bad line. Read back, a row
keeps its id unless the store holds that id already (then it takes a new one: ids are per
store, and refusing the row would drop the fact), and a row the scope holds already is not
copied again (ScopeRows: a parked fact of the same text, an active short-term fact of the same
hash, the same message of the same session at the same time), so importing a user twice, or
into a store that holds them, duplicates nothing. A parked fact is parked again rather than
decided at import: deciding it is what failed, and retry_pending decides it through
update_memory, which finds what the memory holds already. Leases are a worker's claim in its
own store: a copied row has none.
"""

from __future__ import annotations

import base64
import binascii
import json
from dataclasses import dataclass
from typing import Any, Literal

import sqlalchemy as sa
from pydantic import BaseModel, ValidationError

from memman.config import Settings
from memman.errors import InvalidInputError, validation_problems
from memman.language.text import content_hash
from memman.models import MESSAGE_ROLES
from memman.scope import Scope, check_id
from memman.storage.store import Store
from memman.storage.transfer_checks import on_the_scale, over_limits, storable, unknown_keys
from memman.storage.upkeep import COPIED_TABLES
from memman.timestamps import check_moment

VECTOR = "vector"


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
                f"role {row.role!r} is no role observe buffers"
                f" ({', '.join(sorted(MESSAGE_ROLES))})"
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
    """Why a row holds more than this store takes in a write (as transfer_checks.too_large)."""
    metadata = len((values.get("metadata") or "").encode())
    return over_limits(len(values["content"]), metadata, settings)


def _key(table: str, values: dict[str, Any]) -> tuple[Any, ...]:
    """What makes two rows of a scope the same fact or message (see the module docstring)."""
    if table == "pending":
        return (content_hash(values["content"]),)
    if table == "short_term":
        digest = content_hash(values["content"])
        status = values["status"]
        return (digest, status) if status == "active" else (digest, status, values["created_at"])
    return (values["session_id"], values["role"], values["content"], values["created_at"])


class ScopeRows:
    """The keys of the rows each scope holds in each table, read once per (scope, table) in
    the import's transaction, and the ids taken; `place` says whether a line's row is copied
    and with which id."""

    def __init__(self, conn: sa.Connection, store: Store) -> None:
        self.conn, self.store = conn, store
        self.keys: dict[tuple[str, Scope], set[tuple[Any, ...]]] = {}
        self.ids: dict[str, set[int]] = {}

    def place(self, table: str, values: dict[str, Any]) -> tuple[bool, dict[str, Any]]:
        """(False, values) for a row the scope holds already, else (True, the values to
        insert: without id when the store holds that id, so the store numbers it)."""
        scope = Scope(values["user_id"], values["agent_id"] or None)
        held = self.keys.get((table, scope))
        if held is None:
            rows = self.store.table_rows(self.conn, table, scope)
            held = self.keys[(table, scope)] = {_key(table, row) for row in rows}
        key = _key(table, values)
        if key in held:
            return False, values
        held.add(key)
        taken = self.ids.setdefault(table, set())
        row_id = values.get("id")
        if row_id is None or row_id in taken or self.store.row_held(self.conn, table, row_id):
            return True, {name: value for name, value in values.items() if name != "id"}
        taken.add(row_id)
        return True, values
