"""The store's upkeep and the user's explicit actions (MemoryManager.export, stats, reindex,
relabel, check, backup, delete, restore, purge, forget), and reading an export back in.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

from memman.api.arguments import all_or_scope, check_count
from memman.api.core import Core
from memman.errors import ConfigError, InvalidInputError, StoreCorruptError
from memman.lifecycle import erase, extraction_failures, manual, shortterm
from memman.lifecycle.erase import ForgetReport
from memman.lifecycle.relabel import RelabelReport, relabel
from memman.models import Event, Memory, Op, Status, UpdateResult
from memman.scope import Scope, check_id
from memman.semantic import reindex
from memman.storage import maintenance, transfer
from memman.storage.maintenance import CheckReport
from memman.storage.transfer import ImportReport
from memman.write.candidate import check_text


class Upkeep:
    """Whole-store operations, and the changes a user asks for by id."""

    def __init__(self, core: Core):
        self.core = core

    def export(
        self, user_id: str | None, agent_id: str | None, include_inactive: bool
    ) -> Iterator[Memory]:
        scope = all_or_scope(user_id, agent_id)
        statuses = tuple(Status) if include_inactive else (Status.ACTIVE,)
        store = self.core.store
        with store.read() as conn:
            yield from store.iter_memories(conn, scope, statuses=statuses)

    def export_events(self, user_id: str | None, agent_id: str | None) -> Iterator[Event]:
        scope = all_or_scope(user_id, agent_id)
        store = self.core.store
        with store.read() as conn:
            yield from store.iter_events(conn, scope)

    def stats(self, user_id: str | None, agent_id: str | None) -> dict[str, Any]:
        core = self.core
        store, scope = core.store, all_or_scope(user_id, agent_id)
        # Buffered messages whose extraction failed extract_max_tries times.
        stuck = extraction_failures.stuck_messages(store, core.settings, scope)
        with store.read() as conn:
            return {
                "memories": store.count_by_status(conn, scope),
                "decisions": store.event_counts(conn, scope),
                "pending": len(store.list_pending(conn, scope)),
                "extraction_stuck": stuck,
                # The whole file's, whatever the scope: file and -wal bytes, rows per table.
                "storage": store.sizes() if core.path != ":memory:" else {},
                # Which vector path this manager uses (none without an embedder).
                "vectors": {
                    "embedding_model": core.embedder.name if core.embedder else None,
                    "search": core.vector_search,
                    **store.vector_storage(),
                },
            }

    # -- operations ------------------------------------------------------------------------------

    def reindex(self, batch: int, progress: Callable[[int, int], None] | None) -> int:
        embedder = self.core.embedder
        if embedder is None:
            raise ConfigError("no embedder configured: set embedder = 'local' or 'openai'")
        return reindex.reindex(self.core.store, embedder, batch=batch, progress=progress)

    def relabel(self, user_id: str | None, agent_id: str | None, batch: int) -> RelabelReport:
        scope = all_or_scope(user_id, agent_id)
        check_count("batch", batch, minimum=1)
        return relabel(self.core.store, scope, batch=batch)

    def check(self) -> CheckReport:
        store = self.core.store
        report = maintenance.check(store)
        try:
            with store.read() as conn:
                shortterm.active(store, conn, None)
        except StoreCorruptError as error:
            unreadable = [*report.unreadable, f"short-term facts: {error.reason}"]
            return dataclasses.replace(report, unreadable=unreadable)
        return report

    def backup(self, path: str | Path) -> Path:
        if not isinstance(path, str | os.PathLike):  # else os's TypeError
            raise InvalidInputError(f"backup takes a file path, not {type(path).__name__}")
        return maintenance.backup(self.core.store, path)

    # -- explicit user actions -----------------------------------------------------------------

    def set_status(
        self, memory_id: str, scope: Scope | None, status: Status, op: Op, reason: str
    ) -> UpdateResult:
        """delete (DELETED, a DELETE event) and restore (ACTIVE, an UPDATE event)."""
        core = self.core
        reason = check_text("reason", reason, core.settings.max_fact_chars)  # audit trail text
        return manual.set_status(core.store, memory_id, scope, status, op, reason, core.now)

    def purge(self, memory_id: str, scope: Scope) -> ForgetReport:
        check_id("memory_id", memory_id)
        return erase.purge(self.core.store, memory_id, scope)

    def forget(self, user_id: str, agent_id: str | None) -> ForgetReport:
        Scope(user_id, agent_id)  # validates both ids
        report = erase.forget(self.core.store, user_id, agent_id)
        self.core.vectors.forget(user_id, agent_id)
        return report


def read_export(
    mm: transfer.Manager, source: str | Path | Iterable[str | bytes], raw: bool
) -> ImportReport:
    """A lossless export read into mm's store: a file path, or its lines (text or bytes)."""
    if isinstance(source, str) and _json_lines_text(source):
        # Refused rather than read: a string is a path here, and guessing would make a file
        # named like a record ambiguous; the lines are taken as they are (issue 29).
        raise InvalidInputError(
            "import_jsonl: that looks like JSON-lines text, not a path; pass a file path,"
            " or the lines (text.splitlines())"
        )
    if isinstance(source, str | Path):
        try:
            # A line that is not UTF-8 is reported as a bad line (see jsonl.read_lines).
            with open(source, encoding="utf-8-sig", errors="surrogateescape") as file:
                return transfer.import_lines(mm, file, raw=raw)
        except OSError as error:
            raise InvalidInputError(f"cannot read {source}: {error}") from error
    if not isinstance(source, Iterable):
        raise InvalidInputError("import_jsonl takes a file path or the lines of an export")
    return transfer.import_lines(mm, source, raw=raw)


def _json_lines_text(source: str) -> bool:
    """Whether a string given as a path is an export's text: it holds a line break, is longer
    than any path (PATH_MAX, 4096), or is one JSON object."""
    text = source.strip()
    return "\n" in text or "\r" in text or len(text) > 4096 or text[:1] + text[-1:] == "{}"
