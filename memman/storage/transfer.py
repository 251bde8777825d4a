"""Lossless export and import: a scope's memories with every column, its parked and short-term
facts and buffered messages, and its audit events, as JSON lines (export_format.py: what a
line holds and what it must hold to be read back). A file's events come after its memories:
an event before any memory (an audit trail exported alone) refuses the import, as its events
would be copied without their memories or skipped, unless `raw` copies them as they are.

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
imported.

Which history a copied memory gets. Importing is resumable: memories and events are written in
batches, so an import killed between them leaves memories whose events were not copied yet
(issue 29: 3,000 of 4,500, and a second import counted them as duplicates and copied nothing).
A memory of the file the store holds under the same id is the same memory, whatever the store
held before: its events in the file are copied unless the store has them already (same op,
time, texts and reason), so importing the same file again reaches the end state of an import
that was not stopped, and `memman check` counts memories without history meanwhile. A memory
whose id the store holds in another scope is copied under a new id (report.renamed, old id ->
new) and its events follow it, never dropped as a duplicate (decided, it gets an id of its own
anyway). A copied memory left without any event (an export taken without its events) gets an
ADD event saying so (SameMemories, without_history).

After a scope's memories come its parked facts, short-term facts and buffered messages, a line
each of "kind" their table. They are what memman keeps of a user besides memories and events:
a parked fact is one whose decision failed and that retry_pending still owes a decision; a
short-term fact may still be promoted; a buffered message is not yet extracted. A user exported
without them and imported elsewhere loses them without a word, so `export_lines` writes the
scope's live ones (every parked fact, the active short-term facts, the messages not yet
extracted; every row of them with include_inactive) and `import_lines` reads them back. A row
keeps its id unless the store holds that id already (then it takes a new one: ids are per
store, and refusing the row would drop the fact), and a row the scope holds already is not
copied again (ScopeRows: a parked fact of the same text, an active short-term fact of the same
hash, the same message of the same session at the same time), so importing a user twice, or
into a store that holds them, duplicates nothing. A parked fact is parked again rather than
decided at import: deciding it is what failed, and retry_pending decides it through
update_memory, which finds what the memory holds already.

A whole-store copy (store_copy.py) adds vector lines, read back into an empty store only (or
with `raw`) and skipped otherwise. A copied active memory without a topic that this reader reads
one in was labelled by a reader of unknown age: the store's reader version is set back
(storage/labels.py), so `memman check` asks for a relabel.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np
import sqlalchemy as sa

from memman.config import Settings
from memman.errors import BadLineError, InvalidInputError, MemmanError, NotFoundError
from memman.jsonl import parse_lines
from memman.language.text import content_hash
from memman.models import Event, Memory, Op, Status, Tier, UpdateResult
from memman.scope import Scope
from memman.storage.changes import ChangeSet, NewVector
from memman.storage.export_format import (
    EVENT,
    MEMORY,
    VECTOR,
    ExportLine,
    Row,
    record_line,
    row_line,
    row_too_large,
    scope_row,
    too_large,
)
from memman.storage.labels import UNKNOWN_READER, relabel_would_label
from memman.storage.memories import new_memory_id
from memman.storage.store import Store
from memman.storage.upkeep import COPIED_TABLES

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
    (with include_inactive every row of them, else the live ones), then its events if asked
    (only them, if not `memories`) as JSON lines, without newlines."""
    if memories:
        found = mm.export(user_id=user_id, agent_id=agent_id, include_inactive=include_inactive)
        for memory in found:
            yield record_line(MEMORY, memory)
        scope = None if user_id is None else Scope(user_id, agent_id)
        with mm.store.read() as conn:
            for table in COPIED_TABLES:
                for row in mm.store.table_rows(conn, table, scope, live=not include_inactive):
                    yield row_line(table, row)
    if events:
        for event in mm.export_events(user_id=user_id, agent_id=agent_id):
            yield record_line(EVENT, event)


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
    same = SameMemories()  # the file's memories the store holds by id
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


# -- what the store holds of the file's scopes, memories and rows ----------------------------


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


def memory_scopes(conn: sa.Connection, store: Store, ids: list[str]) -> dict[str, Scope]:
    """The scope of each of these memory ids the store holds, in any status: an id held in
    another scope is no duplicate of a line (_copy copies it under a new id)."""
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


# -- which history a copied memory gets -----------------------------------------------------


@dataclass
class SameMemories:
    """The file's memories the store holds under their own id, and of them those it held
    before this import wrote them (an earlier import of the file did)."""

    ids: set[str] = field(default_factory=set)
    held: list[Memory] = field(default_factory=list)
    # (scope, id in the file) -> the new id of a memory whose id the store held in another scope
    renamed: dict[tuple[Scope, str], str] = field(default_factory=dict)

    def add(self, memory: Memory, *, held: bool) -> None:
        self.ids.add(memory.id)
        if held:
            self.held.append(memory)

    def renamed_copy(self, memory: Memory, renamed: dict[str, str]) -> Memory:
        """The memory under a new id (recorded in `renamed`, the report's old -> new), its
        events in the file to follow it."""
        new_id = renamed[memory.id] = new_memory_id()
        self.renamed[(Scope(memory.user_id, memory.agent_id), memory.id)] = new_id
        self.ids.add(memory.id)
        return memory.model_copy(update={"id": new_id})

    def followed(self, event: Event) -> Event:
        """The event, naming the new id of its memory if that was copied under one."""
        new_id = self.renamed.get((Scope(event.user_id, event.agent_id), event.memory_id))
        return event if new_id is None else event.model_copy(update={"memory_id": new_id})


def has_event(conn: sa.Connection, store: Store, event: Event) -> bool:
    """Whether the store has this event of its memory already (an earlier import copied it):
    the same op at the same time, with the same texts and reason."""

    def key(e: Event) -> tuple[Any, ...]:
        return (e.op, e.created_at, e.content_before, e.content_after, e.reason)

    assert event.memory_id is not None
    return any(key(e) == key(event) for e in store.events_for_memory(conn, event.memory_id))


def without_history(conn: sa.Connection, store: Store, memories: list[Memory]) -> int:
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
