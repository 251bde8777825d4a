"""Lossless export and import: memories with every column, and their audit events, as JSON lines.

A line is one record: `{"kind": "memory", ...}` with every field of `Memory` (id, scope,
content, category, importance, confidence, status, sources, counters, stamps, metadata,
subject, attribute, observed_at, decayed_at) or `{"kind": "event", ...}` with every field of
`Event`. A line without "kind" (an older `memman export`) is an event if it has an event's
memory_id and op, else a memory. A file's events come after its memories: an event before
any memory (an audit trail exported alone) refuses the import, as its events would be copied
without their memories or skipped, unless `raw` copies them as they are.

Importing copies records as they are when the store is empty or when asked (`raw`), so an
export read into a new file gives the same rows back, and so for a scope the store held no
memory of (ScopesHeld). Into a scope that holds memories, a memory it has (same id, or an active
one of the scope with the same text) is skipped, an inactive one is copied with its status (a
deleted memory stays deleted), and an active one is decided against what is there, with why
recorded (MemoryManager.ingest: update_memory's
decisions, a chunk at a time; held texts are looked up once per run of such records, so a text
that an earlier decision of the run wrote, an UPDATE's new text, is decided as a hash NOOP rather
than counted a duplicate). The source's events are then not copied, since the decisions made
here are the ones that apply. A copied memory left without any event (an export taken without
its events) gets an ADD event saying so. A bad line is reported with its number and the rest
are imported.

A whole-store copy (store_copy.py) adds vector lines and rows of COPIED_TABLES, read back here
into an empty store only (or with `raw`), ids included, and skipped otherwise.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Annotated, Any, Protocol

import numpy as np
import sqlalchemy as sa
from pydantic import Discriminator, PlainValidator, RootModel, Tag, model_validator

from memman.config import Settings
from memman.errors import BadLineError, InvalidInputError, MemmanError
from memman.jsonl import parse_lines
from memman.language.text import content_hash
from memman.models import Event, Memory, Op, Status, Tier, UpdateResult
from memman.scope import Scope
from memman.storage.changes import ChangeSet, NewVector
from memman.storage.store import Store
from memman.storage.transfer_checks import (
    ScopesHeld,
    checked_event,
    checked_memory,
    names_another_scope,
    too_large,
    unknown_keys,
)
from memman.storage.upkeep import COPIED_TABLES

MEMORY = "memory"
EVENT = "event"
VECTOR = "vector"
# The discriminator's tag for VECTOR and COPIED_TABLES lines (their "kind" varies).
ROW = "row"
# Copied records per write transaction: few enough that other writers wait only briefly.
BATCH = 500


class Manager(Protocol):
    """What export and import use of a MemoryManager. A protocol, not the class: the manager
    imports this module, so importing it back would make a cycle."""

    store: Store
    settings: Settings

    def export(
        self, *, user_id: str | None, agent_id: str | None, include_inactive: bool
    ) -> Iterator[Memory]: ...

    def export_events(self, *, user_id: str | None, agent_id: str | None) -> Iterator[Event]: ...

    def ingest(
        self, records: Iterable[Mapping[str, Any]]
    ) -> list[UpdateResult | InvalidInputError]: ...


@dataclass
class ImportReport:
    """What an import did, line by line counted."""

    copied: int = 0  # memories written as they were: id, status, counters, stamps
    duplicates: int = 0  # memories the store already held (same id, or same active text)
    decided: dict[str, int] = field(default_factory=dict)  # through MemoryManager.ingest, by op
    events_copied: int = 0
    events_written: int = 0  # an ADD event for each copied memory the file had none for
    events_skipped: int = 0  # a merge import records its own decisions instead
    rows_copied: dict[str, int] = field(default_factory=dict)  # vectors and rows, by kind
    rows_skipped: int = 0  # vectors and rows of a whole-store copy, into a store that has some
    bad: list[str] = field(default_factory=list)  # "line N: why", the line left out


@dataclass(frozen=True)
class Row:
    """A line of a whole-store copy that is not a memory or an event: a vector (VECTOR, its
    bytes decoded) or a row of one of COPIED_TABLES (kind: the table)."""

    kind: str
    values: dict[str, Any]


def export_lines(
    mm: Manager,
    *,
    user_id: str | None = None,
    agent_id: str | None = None,
    include_inactive: bool = False,
    events: bool = False,
    memories: bool = True,
) -> Iterator[str]:
    """The memories of a scope (then its events, if asked; only them, if not `memories`) as
    JSON lines, without newlines."""
    found = mm.export(user_id=user_id, agent_id=agent_id, include_inactive=include_inactive)
    for memory in found if memories else ():
        yield _line(MEMORY, memory)
    if events:
        for event in mm.export_events(user_id=user_id, agent_id=agent_id):
            yield _line(EVENT, event)


def _line(kind: str, record: Memory | Event) -> str:
    return json.dumps({"kind": kind, **record.model_dump(mode="json")}, ensure_ascii=False)


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
    return _row(values.pop("kind"), values)  # InvalidInputError is a ValueError


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
    also a vector or a row of one of COPIED_TABLES (checked by _row)."""

    @model_validator(mode="before")
    @classmethod
    def _known_keys(cls, data: Any) -> Any:
        kind = _kind(data)
        if kind in _RECORDS:
            unknown_keys(data, _RECORDS[kind])  # InvalidInputError is a ValueError
        return data

    @model_validator(mode="after")
    def _valid_record(self) -> ExportLine:
        record = self.root
        if isinstance(record, Row):  # _row checked the rows that carry a scope
            return self
        Scope(record.user_id, record.agent_id)
        self.root = checked_memory(record) if isinstance(record, Memory) else checked_event(record)
        return self


def _row(kind: str, data: dict[str, Any]) -> Row:
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
    missing = sorted({"id", "user_id", "agent_id"} - data.keys())
    if missing:
        raise InvalidInputError(f"not a {kind} row: no {', '.join(missing)}")
    Scope(data["user_id"], data["agent_id"] or None)
    return Row(kind, data)


def import_lines(mm: Manager, lines: Iterable[str], *, raw: bool = False) -> ImportReport:
    """Read an export into the store (see the module docstring for what is copied and when)."""
    store = mm.store
    with store.read() as conn:
        empty_memories = not store.count_by_status(conn, None)
        events = conn.execute(sa.select(sa.func.count()).select_from(store.events)).scalar()
    copy = raw or empty_memories
    held_before = ScopesHeld(store)
    report = ImportReport()
    batch: list[tuple[int, Memory | Event | Row]] = []
    deciding: list[tuple[int, Memory]] = []
    copied: list[Memory] = []
    seen_memory = False

    def flush() -> None:  # in file order: a decision sees every record before it
        if deciding:
            _decide(mm, deciding, report)
            deciding.clear()
        if batch:
            store.write(lambda conn: _copy(conn, mm, batch, bool(events), report, copied))
            batch.clear()

    for number, line in parse_lines(lines, ExportLine):
        if isinstance(line, BadLineError):
            report.bad.append(str(line))
            continue
        record = line.root
        if not isinstance(record, Row) and (why := too_large(record, mm.settings)):
            report.bad.append(f"line {number}: {why}")
            continue
        seen_memory = seen_memory or isinstance(record, Memory)
        if isinstance(record, Event) and not (seen_memory or raw):
            raise InvalidInputError(
                f"line {number}: an audit event before any memory: the file holds events without"
                " their memories (`memman export --events` writes the audit trail alone); export"
                " with --with-events (and --all for inactive memories) to import both, or import"
                " with --raw to copy the events alone"
            )
        copying = copy or (not isinstance(record, Row) and not held_before(record))
        if isinstance(record, Event) and not copying:
            report.events_skipped += 1
        elif isinstance(record, Row) and not copy:
            report.rows_skipped += 1
        elif copying or isinstance(record, Event | Row) or record.status is not Status.ACTIVE:
            if deciding:
                flush()
            batch.append((number, record))
            if len(batch) >= BATCH:
                flush()
        else:
            if batch:
                flush()
            deciding.append((number, record))
            if len(deciding) >= BATCH:
                flush()
    flush()
    for start in range(0, len(copied), BATCH):
        chunk = copied[start : start + BATCH]
        report.events_written += store.write(
            lambda conn, chunk=chunk: _without_history(conn, store, chunk)
        )
    return report


def _without_history(conn: sa.Connection, store: Store, memories: list[Memory]) -> int:
    """An ADD event (tier manual, source import) for each copied memory that arrived without
    one (an export taken without its events), so every memory has an audit trail; how many."""
    ev = store.events
    ids = [memory.id for memory in memories]
    held = set(conn.execute(sa.select(ev.c.memory_id).where(ev.c.memory_id.in_(ids))).scalars())
    by_scope: dict[Scope, list[ChangeSet]] = {}
    for memory in memories:
        if memory.id in held:
            continue
        event = {
            "memory_id": memory.id,
            "op": Op.ADD.value,
            "tier": Tier.MANUAL.value,
            "candidate": None,
            "content_before": None,
            "content_after": memory.content,
            "reason": f"copied from an export that carried no history for it ({memory.status})",
            "source": "import",
            "created_at": memory.created_at,
        }
        by_scope.setdefault(Scope(memory.user_id, memory.agent_id), []).append(ChangeSet(event))
    written = 0
    for scope, changes in by_scope.items():
        written += len(store.apply(conn, scope, changes))
    return written


def _copy(
    conn: sa.Connection,
    mm: Manager,
    batch: list[tuple[int, Memory | Event | Row]],
    renumber_events: bool,
    report: ImportReport,
    copied: list[Memory],
) -> None:
    """Write a batch of records as they are, in one transaction, skipping what is held;
    the memories written are appended to `copied`."""
    store = mm.store
    memories = [record.id for _, record in batch if isinstance(record, Memory)]
    held = store.existing_memory_ids(conn, memories) if memories else set()
    rows: dict[str, list[dict[str, Any]]] = {}
    for number, record in batch:
        if isinstance(record, Row):
            if record.kind != VECTOR and store.row_held(conn, record.kind, record.values["id"]):
                report.bad.append(f"line {number}: the store holds that {record.kind} id already")
                continue
            report.rows_copied[record.kind] = report.rows_copied.get(record.kind, 0) + 1
            if record.kind != VECTOR:
                rows.setdefault(record.kind, []).append(record.values)
                continue
            vector = np.frombuffer(record.values["vector"], dtype=np.float32)
            # Through the store: on PostgreSQL with pgvector, a new dimension gets its index.
            new = NewVector(record.values["memory_id"], record.values["model"], vector)
            store.save_vectors(conn, [new])
            continue
        if isinstance(record, Event):
            if names_another_scope(conn, store, record):
                report.bad.append(f"line {number}: the event names another scope's memory")
                continue
            store.copy_event(conn, record, keep_id=not renumber_events)
            report.events_copied += 1
            continue
        digest = content_hash(record.content)
        scope = Scope(record.user_id, record.agent_id)
        active = record.status is Status.ACTIVE
        if record.id in held or (active and store.active_by_hash(conn, scope, digest)):
            report.duplicates += 1
            continue
        store.copy_memory(conn, record, digest)
        copied.append(record)
        held.add(record.id)
        report.copied += 1
    for table, values in rows.items():
        store.copy_rows(conn, table, values)


def _decide(mm: Manager, memories: list[tuple[int, Memory]], report: ImportReport) -> None:
    """Active memories into a store that has some: each skipped if held (same id, or same
    active text of the scope, earlier lines of the run included), the rest decided together
    by MemoryManager.ingest (one transaction per chunk)."""
    store = mm.store
    with store.read() as conn:
        held_ids = store.existing_memory_ids(conn, [m.id for _, m in memories])
        held_texts = {
            (scope, digest)
            for scope, digests in _hashes_by_scope(memories).items()
            for digest in store.active_hashes(conn, scope, digests)
        }
    numbers, records = [], []
    for number, memory in memories:
        key = (Scope(memory.user_id, memory.agent_id), content_hash(memory.content))
        if memory.id in held_ids or key in held_texts:
            report.duplicates += 1
            continue
        held_ids.add(memory.id)
        held_texts.add(key)
        numbers.append(number)
        records.append(
            {
                "fact": memory.content,
                "user_id": memory.user_id,
                "agent_id": memory.agent_id,
                "source": memory.sources[0] if memory.sources else "import",
                "metadata": memory.metadata,
                "category": memory.category,
                "importance": memory.importance,
                "subject": memory.subject,
                "attribute": memory.attribute,
                "observed_at": memory.observed_at,
            }
        )
    for number, result in zip(numbers, mm.ingest(records), strict=True):
        if isinstance(result, MemmanError):
            report.bad.append(f"line {number}: {result}")
        else:
            report.decided[result.op.value] = report.decided.get(result.op.value, 0) + 1


def _hashes_by_scope(memories: list[tuple[int, Memory]]) -> dict[Scope, list[str]]:
    by_scope: dict[Scope, list[str]] = {}
    for _, memory in memories:
        scope = Scope(memory.user_id, memory.agent_id)
        by_scope.setdefault(scope, []).append(content_hash(memory.content))
    return by_scope
