"""The store's upkeep and the user's explicit actions: export and import, stats, reindex,
relabel, check, backup, delete, restore, purge and forget.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

from memman.api.arguments import all_or_scope, check_count, id_scope
from memman.api.parts import Parts
from memman.errors import ConfigError, InvalidInputError, StoreCorruptError
from memman.lifecycle import erase, extraction_failures, manual, shortterm
from memman.lifecycle.erase import ForgetReport
from memman.lifecycle.relabel import RelabelReport, relabel
from memman.models import Event, Memory, Op, Status, UpdateResult
from memman.scope import Scope, check_id
from memman.semantic import reindex
from memman.storage import maintenance, store_copy, transfer
from memman.storage.maintenance import CheckReport
from memman.storage.store_copy import MigrateReport
from memman.storage.transfer import ImportReport
from memman.write.candidate import check_text


class UpkeepCalls(Parts):
    """Whole-store operations, and the changes a user asks for by id."""

    def export(
        self,
        *,
        user_id: str | None = None,
        agent_id: str | None = None,
        include_inactive: bool = False,
    ) -> Iterator[Memory]:
        """Every memory of a scope (every user's if neither id is given), oldest first.

        One read snapshot for the whole iteration, so an export taken while others write is a
        consistent point in time; rows stream from the cursor, so 100k memories never sit in a
        list. Active memories only unless include_inactive (then deleted, superseded and
        archived ones too, with their status).
        """
        scope = all_or_scope(user_id, agent_id)
        statuses = tuple(Status) if include_inactive else (Status.ACTIVE,)
        with self.store.read() as conn:
            yield from self.store.iter_memories(conn, scope, statuses=statuses)

    def export_events(
        self, *, user_id: str | None = None, agent_id: str | None = None
    ) -> Iterator[Event]:
        """The whole audit trail of a scope (every user's if neither id is given), oldest first."""
        scope = all_or_scope(user_id, agent_id)
        with self.store.read() as conn:
            yield from self.store.iter_events(conn, scope)

    def export_jsonl(
        self,
        *,
        user_id: str | None = None,
        agent_id: str | None = None,
        include_inactive: bool = False,
        events: bool = False,
        memories: bool = True,
    ) -> Iterator[str]:
        """The lossless export: every column of every memory, then the scope's parked facts,
        active short-term facts and messages not yet extracted (with include_inactive every
        one of them), then the audit events if asked (only them with memories=False, as
        `memman export --events`) as JSON lines without newlines, which `import_jsonl` reads
        back (memman/storage/transfer.py, export_format.py)."""
        return transfer.export_lines(
            self,
            user_id=user_id,
            agent_id=agent_id,
            include_inactive=include_inactive,
            events=events,
            memories=memories,
        )

    def import_jsonl(
        self, source: str | Path | Iterable[str | bytes], *, raw: bool = False
    ) -> ImportReport:
        """Read a lossless export (a file path, or its lines: text, or bytes as a file opened
        in binary mode gives them) into this store.

        Into an empty store (or scope), or with raw=True, records are copied as they are (ids,
        statuses, counters, stamps, events). Into a scope that holds memories, what it has is
        skipped, inactive memories are copied with their status and active ones go through
        update_memory's decisions in chunks (see ingest). Parked facts, short-term facts and
        buffered messages are copied into their line's scope unless the scope holds them
        already (the same parked text, active short-term fact or message), under a new id
        when the store holds theirs. A bad line is reported (`report.bad`)
        and the rest are imported. Events with no memory before them (an audit trail exported
        alone) raise InvalidInputError before anything is written, unless raw.
        """
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
                    return transfer.import_lines(self, file, raw=raw)
            except OSError as error:
                raise InvalidInputError(f"cannot read {source}: {error}") from error
        if not isinstance(source, Iterable):
            raise InvalidInputError("import_jsonl takes a file path or the lines of an export")
        return transfer.import_lines(self, source, raw=raw)

    def migrate_to(self, target: UpkeepCalls) -> MigrateReport:
        """Copy this whole store into target, another MemoryManager's empty store (SQLite to
        PostgreSQL or back): every memory in any status, the audit trail with its ids, the
        vectors, parked facts, short-term facts and buffered messages. InvalidInputError if
        target holds anything. The report's differences() lists any table whose row count
        differs afterwards (none: a complete copy). Stop writers to this store first: each
        part is read in its own snapshot."""
        if not isinstance(target, UpkeepCalls):  # a path: open it with MemoryManager(path)
            raise InvalidInputError(
                f"migrate_to takes another MemoryManager, not {type(target).__name__}"
            )
        return store_copy.migrate(self, target)

    def stats(self, *, user_id: str | None = None, agent_id: str | None = None) -> dict[str, Any]:
        """Counts of a scope (every user's if neither id is given)."""
        scope = all_or_scope(user_id, agent_id)
        # Buffered messages whose extraction failed extract_max_tries times.
        stuck = extraction_failures.stuck_messages(self.store, self.settings, scope)
        with self.store.read() as conn:
            return {
                "memories": self.store.count_by_status(conn, scope),
                "decisions": self.store.event_counts(conn, scope),
                "pending": len(self.store.list_pending(conn, scope)),
                "extraction_stuck": stuck,
                # The whole file's, whatever the scope: file and -wal bytes, rows per table.
                "storage": self.store.sizes() if self.path != ":memory:" else {},
                # Which vector path this manager uses (none without an embedder).
                "vectors": {
                    "embedding_model": self.embedder.name if self.embedder else None,
                    "search": self.vector_search,
                    **self.store.vector_storage(),
                },
            }

    # -- operations ------------------------------------------------------------------------------

    def reindex(
        self, *, batch: int = 256, progress: Callable[[int, int], None] | None = None
    ) -> int:
        """Embed every active memory lacking a vector for the configured model; returns how many.

        Run after configuring an embedder or changing its model: vectors are kept per model, so
        the old model's vectors are never compared with the new one's. `progress(done, total)`
        is called once the total is known (done 0) and after each batch (the CLI draws a bar
        with it). If the embedder fails it stops with EmbeddingError; the batches before stay
        committed and a rerun resumes after them.
        """
        if self.embedder is None:
            raise ConfigError("no embedder configured: set embedder = 'local' or 'openai'")
        return reindex.reindex(self.store, self.embedder, batch=batch, progress=progress)

    def relabel(
        self, *, user_id: str | None = None, agent_id: str | None = None, batch: int = 500
    ) -> RelabelReport:
        """Give a topic to the active memories stored without one (every user's if neither id
        is given) where the reader reads one now.

        A memory is found by topic when a newer fact supersedes it, and its topic is what the
        reader of the day it was stored could read; the reader learns phrasings from release to
        release. Only memories whose attribute is NULL are read: a set label (the caller's, an
        LLM's, an earlier reader's) is never changed. `batch` memories at a time, each batch
        labelled in one transaction; a rerun resumes where a failed one stopped. A whole-store
        run records the reader's version (`report.recorded`), so `check()` stops reporting
        `relabel_due`. Reads every memory without a topic: run it after an upgrade, not on
        every open.
        """
        scope = all_or_scope(user_id, agent_id)
        check_count("batch", batch, minimum=1)
        return relabel(self.store, scope, batch=batch)

    def check(self) -> CheckReport:
        """SQLite integrity, FTS agreement, orphan vectors, stuck pending, rows memman cannot
        read (the active short-term facts' too); see `report.ok`. `report.relabel_due` counts
        the memories without a topic when an older reader labelled the store (see relabel)."""
        report = maintenance.check(self.store)
        try:
            with self.store.read() as conn:
                shortterm.active(self.store, conn, None)
        except StoreCorruptError as error:
            unreadable = [*report.unreadable, f"short-term facts: {error.reason}"]
            return dataclasses.replace(report, unreadable=unreadable)
        return report

    def backup(self, path: str | Path) -> Path:
        """Copy the store to a new file with SQLite's online backup, safe while others write."""
        if not isinstance(path, str | os.PathLike):  # else os's TypeError
            raise InvalidInputError(f"backup takes a file path, not {type(path).__name__}")
        return maintenance.backup(self.store, path)

    # -- explicit user actions -----------------------------------------------------------------

    def delete(
        self,
        memory_id: str,
        *,
        user_id: str | None = None,
        agent_id: str | None = None,
        reason: str = "deleted by the user",
    ) -> UpdateResult:
        """Soft-delete a memory of the scope (recoverable with restore; `purge` erases)."""
        scope = id_scope("delete", user_id, agent_id)
        reason = check_text("reason", reason, self.settings.max_fact_chars)  # audit trail text
        return manual.set_status(
            self.store, memory_id, scope, Status.DELETED, Op.DELETE, reason, self._now
        )

    def restore(
        self,
        memory_id: str,
        *,
        user_id: str | None = None,
        agent_id: str | None = None,
        reason: str = "restored by the user",
    ) -> UpdateResult:
        """Bring back a deleted, superseded or archived memory, unless its text is active again."""
        scope = id_scope("restore", user_id, agent_id)
        reason = check_text("reason", reason, self.settings.max_fact_chars)
        return manual.set_status(
            self.store, memory_id, scope, Status.ACTIVE, Op.UPDATE, reason, self._now
        )

    def purge(self, memory_id: str, *, user_id: str, agent_id: str | None = None) -> ForgetReport:
        """Erase one memory of the scope for good, with its history and vectors.

        Unlike delete() nothing is kept and there is no audit event (it would keep the text);
        the file is vacuumed and its WAL emptied, as forget() does (memman/lifecycle/erase.py).
        NotFoundError for an unknown id or one of another scope.
        """
        scope = Scope(user_id, agent_id)
        check_id("memory_id", memory_id)
        return erase.purge(self.store, memory_id, scope)

    def forget(self, user_id: str, agent_id: str | None = None) -> ForgetReport:
        """Erase everything of a user, verifiably: the right to be forgotten.

        Every memory of every status, its events, pending and short-term facts, buffered
        messages, vectors and their log rows, of every agent of the user (only agent_id's
        scope if given), in one transaction; then the FTS index is optimised, the file
        vacuumed with secure_delete and the WAL checkpointed to zero bytes, so none of the
        user's words stay in the database or its WAL (`report.wal_truncated` is False if a
        reader held an old snapshot: run it again then). Returns rows erased per table.
        """
        Scope(user_id, agent_id)  # validates both ids
        report = erase.forget(self.store, user_id, agent_id)
        self.vectors.forget(user_id, agent_id)
        return report


def _json_lines_text(source: str) -> bool:
    """Whether a string given as a path is an export's text: it holds a line break, is longer
    than any path (PATH_MAX, 4096), or is one JSON object."""
    text = source.strip()
    return "\n" in text or "\r" in text or len(text) > 4096 or text[:1] + text[-1:] == "{}"
