"""Lossless export and import: memories with every column, and their audit events, as JSON lines.

A line is one record: `{"kind": "memory", ...}` with every field of `Memory` (id, scope,
content, category, importance, confidence, status, sources, counters, stamps, metadata,
subject, attribute, observed_at, decayed_at) or `{"kind": "event", ...}` with every field of
`Event`. A line without "kind" that has a memory's fields (an older `memman export`) is a memory.

Importing copies records as they are when the store is empty or when asked (`raw`), so an
export read into a new file gives the same rows back. Into a store that already holds memories,
a memory it already has (same id, or an active one of the scope with the same text) is skipped,
an inactive one is copied with its status (a deleted memory stays deleted), and an active one
is decided against what is there, with why recorded (MemoryManager.ingest: update_memory's
decisions, a chunk at a time; held texts are looked up once per run of such records, so a text
that an earlier decision of the run wrote, an UPDATE's new text, is decided as a hash NOOP rather
than counted a duplicate). The source's events are then not copied, since the decisions made
here are the ones that apply. A copied memory left without any event (an export taken without
its events) gets an ADD event saying so. A bad line is reported with its number and the rest
are imported.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Annotated, Any, Protocol

import sqlalchemy as sa
from pydantic import Discriminator, RootModel, Tag, model_validator

from memman.errors import BadLineError, InvalidInputError, MemmanError
from memman.jsonl import parse_lines
from memman.language.text import content_hash
from memman.models import Event, Memory, Op, Status, Tier, UpdateResult
from memman.scope import Scope
from memman.storage.changes import ChangeSet
from memman.storage.store import Store

MEMORY = "memory"
EVENT = "event"
# Copied records per write transaction: few enough that other writers wait only briefly.
BATCH = 500


class Manager(Protocol):
    """What export and import use of a MemoryManager. A protocol, not the class: the manager
    imports this module, so importing it back would make a cycle."""

    store: Store

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
    bad: list[str] = field(default_factory=list)  # "line N: why", the line left out


def export_lines(
    mm: Manager,
    *,
    user_id: str | None = None,
    agent_id: str | None = None,
    include_inactive: bool = False,
    events: bool = False,
) -> Iterator[str]:
    """The memories of a scope (then its events, if asked) as JSON lines, without newlines."""
    for memory in mm.export(user_id=user_id, agent_id=agent_id, include_inactive=include_inactive):
        yield _line(MEMORY, memory)
    if events:
        for event in mm.export_events(user_id=user_id, agent_id=agent_id):
            yield _line(EVENT, event)


def _line(kind: str, record: Memory | Event) -> str:
    return json.dumps({"kind": kind, **record.model_dump(mode="json")}, ensure_ascii=False)


def _kind(data: Any) -> str | None:
    return data.get("kind", MEMORY) if isinstance(data, dict) else None


class ExportLine(
    RootModel[
        Annotated[
            Annotated[Memory, Tag(MEMORY)] | Annotated[Event, Tag(EVENT)],
            Discriminator(
                _kind,
                custom_error_type="record_kind",
                custom_error_message="expected a JSON object of kind 'memory' or 'event'",
            ),
        ]
    ]
):
    """One line of an export: a memory (also a line without "kind", as older exports wrote)
    or an event, of a scope that passes the same rules as every write."""

    @model_validator(mode="after")
    def _valid_scope(self) -> ExportLine:
        Scope(self.root.user_id, self.root.agent_id)  # InvalidInputError is a ValueError
        return self


def import_lines(mm: Manager, lines: Iterable[str], *, raw: bool = False) -> ImportReport:
    """Read an export into the store (see the module docstring for what is copied and when)."""
    store = mm.store
    with store.read() as conn:
        empty_memories = not store.count_by_status(conn, None)
        events = conn.execute(sa.select(sa.func.count()).select_from(store.events)).scalar()
    copy = raw or empty_memories
    report = ImportReport()
    batch: list[tuple[int, Memory | Event]] = []
    deciding: list[tuple[int, Memory]] = []
    copied: list[Memory] = []

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
        if isinstance(record, Event) and not copy:
            report.events_skipped += 1
        elif copy or isinstance(record, Event) or record.status is not Status.ACTIVE:
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
    batch: list[tuple[int, Memory | Event]],
    renumber_events: bool,
    report: ImportReport,
    copied: list[Memory],
) -> None:
    """Write a batch of records as they are, in one transaction, skipping what is held;
    the memories written are appended to `copied`."""
    store = mm.store
    memories = [record.id for _, record in batch if isinstance(record, Memory)]
    held = store.existing_memory_ids(conn, memories) if memories else set()
    for _, record in batch:
        if isinstance(record, Event):
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
