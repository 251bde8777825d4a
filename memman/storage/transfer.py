"""Lossless export and import: a scope's memories with every column, its parked and short-term
facts and buffered messages, and its audit events, as JSON lines.

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
here are the ones that apply. A bad line is reported with its number and the rest are
imported. Which events a copied memory gets, also after an import that was stopped (importing
again finishes it) or under a new id (the store held its id in another scope), is
transfer_history.py's.

After a scope's memories come its parked facts, short-term facts and buffered messages, a line
each of "kind" their table (transfer_rows.py: which are written, and how they are read back
without duplicating a row the scope holds). A whole-store copy (store_copy.py) adds vector
lines, read back into an empty store only (or with `raw`) and skipped otherwise. A copied
active memory without a topic that this reader reads one in was labelled by a reader of unknown
age: the store's reader version is set back (storage/labels.py), so `memman check` asks for a
relabel.
"""

from __future__ import annotations

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
from memman.models import Event, Memory, Status, UpdateResult
from memman.scope import Scope
from memman.storage.changes import NewVector
from memman.storage.labels import UNKNOWN_READER, relabel_would_label
from memman.storage.store import Store
from memman.storage.transfer_checks import (
    ScopesHeld,
    checked_event,
    checked_memory,
    memory_scopes,
    names_another_scope,
    too_large,
    unknown_keys,
)
from memman.storage.transfer_history import SameMemories, has_event, without_history
from memman.storage.transfer_rows import VECTOR, Row, ScopeRows, line_row, row_too_large, scope_row
from memman.storage.upkeep import COPIED_TABLES

MEMORY = "memory"
EVENT = "event"
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
    events_held: int = 0  # events of a memory held by id that the store had (a re-import)
    events_written: int = 0  # an ADD event for each copied memory the file had none for
    events_skipped: int = 0  # a merge import records its own decisions instead
    rows_copied: dict[str, int] = field(default_factory=dict)  # vectors and rows, by kind
    rows_skipped: int = 0  # vectors of a whole-store copy, into a store that has memories
    rows_held: int = 0  # parked, short-term facts and messages the scope held already
    rows_renumbered: int = 0  # of those copied, the ones whose id the store held: a new id
    # Memories copied under a new id, the store holding theirs in another scope: old -> new.
    renamed: dict[str, str] = field(default_factory=dict)
    bad: list[str] = field(default_factory=list)  # "line N: why", the line left out


def export_lines(
    mm: Manager,
    *,
    user_id: str | None = None,
    agent_id: str | None = None,
    include_inactive: bool = False,
    events: bool = False,
    memories: bool = True,
) -> Iterator[str]:
    """The memories of a scope, then its parked facts, short-term facts and buffered messages
    (transfer_rows.py; with include_inactive every row of them, else the live ones), then its
    events if asked (only them, if not `memories`) as JSON lines, without newlines."""
    if memories:
        found = mm.export(user_id=user_id, agent_id=agent_id, include_inactive=include_inactive)
        for memory in found:
            yield _line(MEMORY, memory)
        scope = None if user_id is None else Scope(user_id, agent_id)
        with mm.store.read() as conn:
            for table in COPIED_TABLES:
                for row in mm.store.table_rows(conn, table, scope, live=not include_inactive):
                    yield json.dumps({"kind": table, **row}, ensure_ascii=False)
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
    also a vector or a row of one of COPIED_TABLES (checked by transfer_rows.line_row)."""

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
    same = SameMemories()  # the file's memories the store holds by id (transfer_history.py)
    seen_memory = after_event = False

    def flush() -> None:  # in file order: a decision sees every record before it
        if deciding:
            _decide(mm, deciding, report, same)
            deciding.clear()
        if batch:
            store.write(lambda conn: _copy(conn, mm, batch, bool(events), report, copied, same))
            batch.clear()

    for number, line in parse_lines(lines, ExportLine):
        if isinstance(line, BadLineError):
            report.bad.append(str(line))
            continue
        record = line.root
        if isinstance(record, Row):
            why = row_too_large(record.values, mm.settings) if scope_row(record) else None
        else:
            why = too_large(record, mm.settings)
        if why:
            report.bad.append(f"line {number}: {why}")
            continue
        # A scope's rows count as its data: a user whose only fact is parked has no memory.
        seen_memory = seen_memory or isinstance(record, Memory) or scope_row(record)
        if isinstance(record, Event) and not (seen_memory or raw):
            raise InvalidInputError(
                f"line {number}: an audit event before any memory: the file holds events without"
                " their memories (`memman export --events` writes the audit trail alone); export"
                " with --with-events (and --all for inactive memories) to import both, or import"
                " with --raw to copy the events alone"
            )
        if isinstance(record, Event) and (deciding or (batch and not after_event)):
            flush()  # the first event after memories: which the store holds by id is known
        after_event = isinstance(record, Event)
        copying = copy or (not isinstance(record, Row) and not held_before(record))
        if isinstance(record, Event) and record.memory_id in same.ids:
            copying = True
        if isinstance(record, Event) and not copying:
            report.events_skipped += 1
        elif isinstance(record, Row) and not (copy or scope_row(record)):
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
    unrecorded = copied + same.held  # held: an earlier import may have stopped before this
    for start in range(0, len(unrecorded), BATCH):
        chunk = unrecorded[start : start + BATCH]
        report.events_written += store.write(
            lambda conn, chunk=chunk: without_history(conn, store, chunk)
        )
    return report


def _copy(
    conn: sa.Connection,
    mm: Manager,
    batch: list[tuple[int, Memory | Event | Row]],
    renumber_events: bool,
    report: ImportReport,
    copied: list[Memory],
    same: SameMemories,
) -> None:
    """Write a batch of records as they are, in one transaction, skipping what is held;
    the memories written are appended to `copied`, they and those held by id to `same`."""
    store = mm.store
    start = len(copied)
    memories = [record.id for _, record in batch if isinstance(record, Memory)]
    held = memory_scopes(conn, store, memories) if memories else {}
    rows: dict[tuple[str, bool], list[dict[str, Any]]] = {}
    scope_rows = ScopeRows(conn, store)
    for number, record in batch:
        if isinstance(record, Row):
            if record.kind != VECTOR:
                new, values = scope_rows.place(record.kind, record.values)
                report.rows_held += not new
                report.rows_renumbered += new and "id" not in values
                if new:
                    rows.setdefault((record.kind, "id" in values), []).append(values)
                    report.rows_copied[record.kind] = report.rows_copied.get(record.kind, 0) + 1
                continue
            report.rows_copied[VECTOR] = report.rows_copied.get(VECTOR, 0) + 1
            vector = np.frombuffer(record.values["vector"], dtype=np.float32)
            # Through the store: on PostgreSQL with pgvector, a new dimension gets its index.
            new = NewVector(record.values["memory_id"], record.values["model"], vector)
            store.save_vectors(conn, [new])
            continue
        if isinstance(record, Event):
            record = same.followed(record)  # its memory may have been copied under a new id
            if names_another_scope(conn, store, record):
                report.bad.append(f"line {number}: the event names another scope's memory")
                continue
            if record.memory_id in same.ids and has_event(conn, store, record):
                report.events_held += 1
                continue
            store.copy_event(conn, record, keep_id=not renumber_events)
            report.events_copied += 1
            continue
        digest = content_hash(record.content)
        scope = Scope(record.user_id, record.agent_id)
        active = record.status is Status.ACTIVE
        if held.get(record.id) == scope:
            if record.id not in same.ids:  # not an earlier line of this file
                same.add(record, held=True)
            report.duplicates += 1
            continue
        if active and store.active_by_hash(conn, scope, digest):
            report.duplicates += 1
            continue
        if record.id in held:  # another scope's id here: copied under a new one
            record = same.renamed_copy(record, report.renamed)
        store.copy_memory(conn, record, digest)
        copied.append(record)
        same.add(record, held=False)
        held[record.id] = scope
        report.copied += 1
    if any(relabel_would_label(m) for m in copied[start:]):  # by a reader of unknown age
        store.set_reader_version(conn, UNKNOWN_READER)
    # Rows keeping their ids first: on PostgreSQL the id sequence then moves past them.
    for (table, _), values in sorted(rows.items(), key=lambda item: not item[0][1]):
        store.copy_rows(conn, table, values)


def _decide(
    mm: Manager, memories: list[tuple[int, Memory]], report: ImportReport, same: SameMemories
) -> None:
    """Active memories into a store that has some: each skipped if held (same id, or same
    active text of the scope, earlier lines of the run included), the rest decided together
    by MemoryManager.ingest (one transaction per chunk)."""
    store = mm.store
    with store.read() as conn:
        owners = memory_scopes(conn, store, [m.id for _, m in memories])
        held_texts = {
            (scope, digest)
            for scope, digests in _hashes_by_scope(memories).items()
            for digest in store.active_hashes(conn, scope, digests)
        }
    # The ids the store holds in the line's own scope (another scope's id is no duplicate: the
    # decision gives the memory an id of its own), and the lines of this run already decided.
    decided: set[tuple[Scope, str]] = set()
    numbers, records = [], []
    for number, memory in memories:
        scope = Scope(memory.user_id, memory.agent_id)
        key = (scope, content_hash(memory.content))
        held_here = owners.get(memory.id) == scope
        if held_here and memory.id not in same.ids:
            same.add(memory, held=True)
        if held_here or (scope, memory.id) in decided or key in held_texts:
            report.duplicates += 1
            continue
        decided.add((scope, memory.id))
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
