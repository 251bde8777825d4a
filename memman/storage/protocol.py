"""`Storage`: the operations memman's stages ask of a store, each with its contract.

Read from what the stages call today (store.py and the statements the lifecycle modules used
to write). `memman.storage.store.Store` implements it for SQLite; tests/test_storage_protocol.py
checks that every operation listed here exists there with the same parameters.
`memman.storage.postgres.PostgresStore` implements the same list for PostgreSQL (a subclass:
it replaces the dialect's parts). There a write transaction takes an advisory lock first,
so "locks" below is what that lock already covers.

Common to every method that takes `conn`: it runs inside the caller's transaction (from
`read()` or `write()`), never commits, and raises what the driver raised, wrapped by
SQLAlchemy (`write()` turns "busy", "full" and "read-only" into memman's typed errors). On
SQLite a `write()` transaction holds the file's write lock from its first statement
(`BEGIN IMMEDIATE`), so "locks" below only says what a row-locking backend must lock.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any, Protocol, TypeVar

import sqlalchemy as sa

from memman.models import Event, Memory, PendingFact, Status, Statuses
from memman.scope import Scope
from memman.storage.changes import ChangeSet, NewText, NewVector

T = TypeVar("T")


class Storage(Protocol):
    """A memman store. Every scoped statement names the scope (see memman/storage/__init__)."""

    # -- transactions and the store as a whole -----------------------------------------------

    def read(self) -> AbstractContextManager[sa.Connection]:
        """A consistent snapshot for reads; takes no write lock, waits for none."""
        ...

    def write(self, fn: Callable[[sa.Connection], T], *, scope: Scope | None = None) -> T:
        """fn's return value; all of fn's changes commit together or not at all. fn may run
        again while the database is busy. Locks: with `scope`, fn writes only that scope's
        rows and waits only for writers of the same scope (and for unscoped ones); without,
        it waits for every writer. Raises StoreBusyError after busy_patience_s,
        StoreFullError, StoreReadOnlyError."""
        ...

    def try_write(
        self, fn: Callable[[sa.Connection], object], what: str, *, scope: Scope | None = None
    ) -> None:
        """fn (bookkeeping a read does) written now if the write lock is free, else kept for
        a later try; never waits, never raises for a busy, full or read-only store."""
        ...

    def sizes(self) -> dict[str, Any]:
        """Bytes on disk and rows per growing table (memman stats); a snapshot, no lock."""
        ...

    def vector_storage(self) -> dict[str, str]:
        """How vectors are stored ("stored_as"), and on a server which vector extension it
        offers ("pgvector"), for memman stats; reads the catalog, no lock."""
        ...

    def server_vector_search(self) -> bool:
        """Whether the database can find a scope's nearest vectors itself (pgvector installed
        on PostgreSQL; memman/storage/pgvector.py); the answer of when the store opened."""
        ...

    def scrub(self) -> bool:
        """Rewrite the file without free pages and empty the log; takes the write lock.
        False when a reader's older snapshot kept the log."""
        ...

    def close(self) -> None:
        """Release every connection."""
        ...

    # -- long-term memories -------------------------------------------------------------------

    def active_by_hash(self, conn: sa.Connection, scope: Scope, content_hash: str) -> Memory | None:
        """The scope's active memory with this content hash (unique per scope), or None."""
        ...

    def active_hashes(self, conn: sa.Connection, scope: Scope, hashes: list[str]) -> set[str]:
        """Which of these hashes an active memory of the scope holds."""
        ...

    def active_by_topic(
        self, conn: sa.Connection, scope: Scope, subject: str, attribute: str, limit: int
    ) -> list[Memory]:
        """The scope's active memories about (subject, attribute), newest observed first."""
        ...

    def active_unlabelled(self, conn: sa.Connection, scope: Scope, limit: int) -> list[Memory]:
        """The scope's active memories no reader labelled, newest observed first."""
        ...

    def active_replacing(
        self, conn: sa.Connection, scope: Scope, content_hash: str
    ) -> Memory | None:
        """The scope's active memory out of which an UPDATE event took a text with this
        content hash (its content_before; the latest such event's memory), or None. One index
        seek (events: user_id, agent_id, hash of content_before), whatever the scope's size:
        the write path asks it for every novel fact. Every event with a content_before stores
        that text's hash (insert_event, insert_events, copy_event)."""
        ...

    def active_absorbing(
        self, conn: sa.Connection, scope: Scope, content_hash: str
    ) -> Memory | None:
        """The scope's active memory into which an event settled a text with this content hash
        without making it the memory's text (a NOOP into a memory that says more, an UPDATE
        whose new text is not the statement's: events.absorbed_hash; the latest such event's
        memory), or None. One index seek (events: user_id, agent_id, absorbed_hash), asked
        for every novel fact. Every event stores it (insert_event, insert_events, copy_event)."""
        ...

    def get(self, conn: sa.Connection, memory_id: str, scope: Scope | None = None) -> Memory:
        """The memory; NotFoundError if absent or of another scope (the same error)."""
        ...

    def resolve_id(self, conn: sa.Connection, prefix: str, scope: Scope | None = None) -> str:
        """The one id starting with prefix; NotFoundError, or InvalidInputError if ambiguous
        or shorter than 4 characters."""
        ...

    def memories_by_pk(self, conn: sa.Connection, pks: list[int]) -> dict[int, Memory]:
        """pk -> memory for the pks a scoped retrieval returned (any number of them)."""
        ...

    def list(
        self,
        conn: sa.Connection,
        scope: Scope,
        *,
        statuses: tuple[Status, ...] = ...,
        limit: int | None = None,
        offset: int = 0,
    ) -> list[Memory]:
        """The scope's memories in these statuses, oldest first, one page."""
        ...

    def iter_memories(
        self, conn: sa.Connection, scope: Scope | None, *, statuses: Statuses
    ) -> Iterator[Memory]:
        """Memories of the scope (every scope if None), oldest first, streamed; of any
        status, known or not, if statuses is None (`memman check`)."""
        ...

    def core_memories(
        self,
        conn: sa.Connection,
        scope: Scope,
        *,
        categories: list[str],
        safety: frozenset[str],
        attributes: frozenset[str],
        limit: int,
    ) -> list[Memory]:
        """The scope's protected (categories, or safety attributes of anyone), pinned and
        profile memories, in that order, at most limit."""
        ...

    def count_by_status(self, conn: sa.Connection, scope: Scope | None) -> dict[str, int]:
        """status -> memories of the scope (every scope if None)."""
        ...

    # -- memories and their events: written through apply -------------------------------------

    def apply(self, conn: sa.Connection, scope: Scope, changes: Sequence[ChangeSet]) -> list[int]:
        """Write change sets of one scope in order, each its row changes then its audit
        event (consecutive ones that only add rows and whose event is no NOOP: their rows in
        one batch, then their events in another), then the change sets' vectors (save_vectors);
        the event ids, one per change set (a folded NOOP's is the event it was folded into).
        Locks the rows it changes. The one call through which memories and events are
        written outside memman/storage/ (the apply layer, memman/write/commit.py): the writers
        below run inside it (and inside imports and erasure, which are storage's own)."""
        ...

    def insert_memory(self, conn: sa.Connection, scope: Scope, **fields: Any) -> str:
        """The new active memory's id. `fields` are memory_row's (memman/storage/memories.py,
        the one list of a new memory's values), its memory_id a new one unless given. Raises
        IntegrityError if the scope already holds the hash as an active memory (the unique
        index: a concurrent writer won)."""
        ...

    def insert_memories(
        self, conn: sa.Connection, scope: Scope, rows: list[dict[str, Any]]
    ) -> None:
        """Insert memory_row()s of one scope in one statement batch; IntegrityError as for
        insert_memory, and then none of the rows is written (the caller's transaction)."""
        ...

    def change_content(self, conn: sa.Connection, change: NewText) -> None:
        """The memory's new text (locks its row); the FTS index follows."""
        ...

    def set_status(self, conn: sa.Connection, memory_id: str, status: Status, now: str) -> None:
        """The memory's new status (locks its row)."""
        ...

    def reinforce(
        self, conn: sa.Connection, memory: Memory, *, now: str, source: str | None
    ) -> None:
        """A repeated fact: repetition_count + 1 and the source kept (locks the row)."""
        ...

    def copy_memory(self, conn: sa.Connection, memory: Memory, content_hash: str) -> None:
        """Insert the memory as given, id and status included (an import)."""
        ...

    def existing_memory_ids(self, conn: sa.Connection, ids: list[str]) -> set[str]:
        """Which of these ids the store holds, in any status."""
        ...

    # -- audit events (memman/storage/events.py) ----------------------------------------------

    def insert_event(self, conn: sa.Connection, scope: Scope, **values: Any) -> int:
        """The event's id; a NOOP repeating the memory's previous event is folded into it
        (repeat_count, last_at; locks that event's row)."""
        ...

    def insert_events(
        self, conn: sa.Connection, scope: Scope, rows: list[dict[str, Any]]
    ) -> list[int]:
        """Record new audit events of one scope (ADDs: never folded) in one statement batch;
        their ids, in the order of rows."""
        ...

    def copy_event(self, conn: sa.Connection, event: Event, *, keep_id: bool) -> None:
        """Insert the event as given (its id too if keep_id), never folded into another."""
        ...

    # -- the rest of a whole-store copy (memman migrate-db) -----------------------------------

    def table_rows(
        self, conn: sa.Connection, table: str, scope: Scope | None = None, *, live: bool = False
    ) -> Iterator[dict[str, Any]]:
        """Every row (every column, by id) of pending, short_term or message_buffer, every
        scope's or only the scope's, streamed; `live`: only every parked fact, the active
        short-term facts, the messages not yet extracted (a scope's export without inactive
        rows); InvalidInputError for another table."""
        ...

    def vector_rows(self, conn: sa.Connection) -> Iterator[tuple[str, str, int, bytes]]:
        """(memory id, model, dim, float32 bytes) of every stored vector, streamed."""
        ...

    def copy_rows(self, conn: sa.Connection, table: str, rows: list[dict[str, Any]]) -> None:
        """Insert rows of table_rows' tables as they are, ids included, in the caller's
        transaction (the ids must be free: an empty store)."""
        ...

    def row_held(self, conn: sa.Connection, table: str, row_id: Any) -> bool:
        """Whether one of copy_rows' tables holds a row with this id."""
        ...

    def events_for_memory(self, conn: sa.Connection, memory_id: str) -> list[Event]:
        """The memory's events, oldest first."""
        ...

    def recent_events(self, conn: sa.Connection, scope: Scope | None, limit: int) -> list[Event]:
        """The newest events of the scope (every scope if None), newest first."""
        ...

    def iter_events(self, conn: sa.Connection, scope: Scope | None) -> Iterator[Event]:
        """Events of the scope (every scope if None), oldest first, streamed."""
        ...

    def event_counts(self, conn: sa.Connection, scope: Scope | None) -> dict[str, dict[str, int]]:
        """op -> tier -> events, folded repeats counted."""
        ...

    # -- lexical search and vectors (memman/storage/fts.py, vector_rows.py) ---------------------

    def lexical_ranked(
        self, conn: sa.Connection, scope: Scope, terms: list[str], k: int
    ) -> list[tuple[int, float]]:
        """(pk, score) of the scope's top-k active memories holding any of the terms (each a
        word's tokens joined by spaces, retrieval.fts_terms), best first, the score lower-is-
        better (bm25 on SQLite, -ts_rank_cd on PostgreSQL); empty for no terms."""
        ...

    def fts_index_key(self, conn: sa.Connection, scope: Scope) -> str | None:
        """The prefix of the scope's tokens in the full-text index (for fts.scoped_match),
        None if the scope never had a row."""
        ...

    def save_vectors(self, conn: sa.Connection, vectors: Sequence[NewVector]) -> None:
        """Store (or replace) each memory's vector for its model; a vector of no memory
        writes nothing. Locks the vectors' rows. Called by apply for a change set's vector,
        and by reindex, which embeds memories written without one (no event: the text did
        not change)."""
        ...

    def count_missing_vectors(self, conn: sa.Connection, model: str) -> int:
        """Active memories (all scopes) with no vector for this model."""
        ...

    def missing_vectors(
        self, conn: sa.Connection, model: str, *, after_pk: int, limit: int
    ) -> list[tuple[int, str, str]]:
        """The next (pk, id, content), in pk order after after_pk, of active memories with no
        vector for this model, at most limit."""
        ...

    # -- parked facts and leases --------------------------------------------------------------

    def insert_pending(self, conn: sa.Connection, scope: Scope, **values: Any) -> int:
        """Park a fact that could not be decided; its id."""
        ...

    def list_pending(self, conn: sa.Connection, scope: Scope | None) -> list[PendingFact]:
        """Parked facts of the scope (every scope if None), oldest first."""
        ...

    def delete_pending(self, conn: sa.Connection, pending_id: int) -> None:
        """Settle a parked fact; LeaseLostError if another worker settled it first."""
        ...

    def note_pending_failure(
        self, conn: sa.Connection, pending_id: int, error: str, now: str
    ) -> None:
        """One more failed attempt on the parked fact, with its error."""
        ...

    def claim(self, table: str, ids: list[int], owner: str, now: str, expires: str) -> set[int]:
        """Lease these rows of pending or message_buffer to owner until expires, in its own
        short write transaction; the ids it got (not those another owner holds unexpired).
        InvalidInputError for another table."""
        ...

    def release(self, table: str, ids: list[int], owner: str) -> None:
        """Give back owner's leases on these rows, in its own write transaction."""
        ...

    # -- short-term facts (memman/storage/lifecycle.py) ---------------------------------------

    def short_term_by_hash(
        self, conn: sa.Connection, scope: Scope, content_hash: str
    ) -> sa.Row | None:
        """The scope's active short-term row with this hash, or None."""
        ...

    def insert_short_term(self, conn: sa.Connection, scope: Scope, **values: Any) -> None:
        """A new active short-term fact."""
        ...

    def short_term_by_id(
        self, conn: sa.Connection, fact_id: int, scope: Scope | None
    ) -> sa.Row | None:
        """The short-term row with this id, any status (in the scope, if given), or None."""
        ...

    def refresh_short_term(
        self,
        conn: sa.Connection,
        scope: Scope,
        fact_id: int,
        *,
        sessions: str,
        now: str,
        expires: str,
        metadata: str | None = None,
    ) -> None:
        """A short-term fact seen again: its sessions, expiry and (unless None) metadata
        (locks its row)."""
        ...

    def active_short_term(self, conn: sa.Connection, scope: Scope | None) -> list[sa.Row]:
        """Active short-term rows of the scope (every scope if None), oldest first."""
        ...

    def unexpired_short_term(self, conn: sa.Connection, scope: Scope, now: str) -> list[sa.Row]:
        """The scope's active short-term rows expiring after now, newest first."""
        ...

    def set_short_term_status(
        self, conn: sa.Connection, scope: Scope, fact_id: int, status: str, now: str
    ) -> None:
        """expired, promoted or deleted (locks the row); LeaseLostError if the row was erased."""
        ...

    def note_short_term_recalled(
        self, conn: sa.Connection, scope: Scope, fact_ids: list[int], *, now: str, spaced: str
    ) -> None:
        """recall_count + 1 for those last counted at or before `spaced` (locks the rows)."""
        ...

    # -- consolidation, merging, recall (memman/storage/lifecycle.py) -------------------------

    def scopes_with_memories(self, conn: sa.Connection) -> list[Scope]:
        """Every scope with a long-term or short-term row."""
        ...

    def kept_separate_scores(self, conn: sa.Connection, scope: Scope) -> list[str]:
        """The scores JSON of the scope's "keep separate" verdicts."""
        ...

    def active_contents(
        self, conn: sa.Connection, scope: Scope, ids: list[str]
    ) -> dict[str, tuple[str, str]]:
        """id -> (content, metadata JSON) of those of the scope's memories still active."""
        ...

    def supersede(
        self, conn: sa.Connection, scope: Scope, memory_id: str, *, metadata: dict, now: str
    ) -> None:
        """The scope's memory becomes superseded with this metadata (locks its row)."""
        ...

    def decay_rows(self, conn: sa.Connection, scope: Scope) -> list[sa.Row]:
        """The scope's active memories with what decay reads, in pk order."""
        ...

    def set_confidence(
        self,
        conn: sa.Connection,
        scope: Scope,
        memory_id: str,
        confidence: float,
        *,
        now: str,
        archive: bool,
    ) -> None:
        """Decayed confidence (archived too if `archive`), locks the row."""
        ...

    def merge_rows(self, conn: sa.Connection, scope: Scope) -> list[sa.Row]:
        """The scope's active memories with what clustering reads, in pk order."""
        ...

    def fts_rowids(self, conn: sa.Connection, match: str) -> list[int]:
        """pks matching a scoped full-text query (from fts.scoped_match), unranked."""
        ...

    def note_accessed(
        self, conn: sa.Connection, scope: Scope, memory_ids: list[str], now: str
    ) -> None:
        """access_count + 1 for the scope's recalled memories (locks the rows)."""
        ...

    # -- the message buffer (memman/storage/messages.py) --------------------------------------

    def buffer_messages(
        self,
        conn: sa.Connection,
        scope: Scope,
        session_id: str,
        messages: list[tuple[str, str, str | None]],
        now: str,
        metadata: dict[str, Any] | None = None,
    ) -> None:
        """Append (role, content, observed_at) messages of the session, with the metadata
        their extracted facts carry."""
        ...

    def waiting_messages(
        self, conn: sa.Connection, session_id: str, scope: Scope | None
    ) -> list[sa.Row]:
        """The session's messages not yet extracted (the scope's, if given), oldest first."""
        ...

    def idle_session_rows(
        self, conn: sa.Connection, scope: Scope | None, cutoff: str
    ) -> list[sa.Row]:
        """Sessions whose newest waiting message is at or before cutoff, oldest first."""
        ...

    def extraction_failures(
        self, conn: sa.Connection, scope: Scope, template: str
    ) -> list[tuple[str, str]]:
        """(source, created_at) of the scope's failed extractions."""
        ...

    def unextracted_messages(self, conn: sa.Connection) -> list[sa.Row]:
        """(id, user_id, agent_id) of every waiting message (memman stats)."""
        ...

    def mark_extracted(self, conn: sa.Connection, scope: Scope, ids: list[int], now: str) -> None:
        """These messages of the scope are extracted; their leases end (locks the rows)."""
        ...

    def check_buffered(self, conn: sa.Connection, scope: Scope, ids: list[int]) -> None:
        """LeaseLostError if one of these messages of the scope was erased."""
        ...

    def prune_extracted(self, conn: sa.Connection, scope: Scope | None, before: str) -> int:
        """Delete messages of the scope (every scope if None) extracted before `before`."""
        ...

    # -- erasure, checks, backup (memman/storage/upkeep.py) -----------------------------------

    def forget_rows(
        self, conn: sa.Connection, user_id: str, agent_key: str | None
    ) -> dict[str, int]:
        """Delete every row of the user (or of one agent's scope) securely; rows per table."""
        ...

    def purge_rows(self, conn: sa.Connection, memory_id: str) -> dict[str, int]:
        """Delete one memory with its events and vectors securely; rows per table."""
        ...

    def integrity_problems(self, conn: sa.Connection) -> list[str]:
        """What the database's own integrity check found (empty: sound)."""
        ...

    def checks_not_run(self) -> dict[str, str]:
        """The checks of `memman check` this backend has no need of, and why ("integrity",
        "fts"): shown instead of an "ok" for a check never run."""
        ...

    def pending_counts(self, conn: sa.Connection, stuck_attempts: int) -> tuple[int, int]:
        """(parked facts, those failed at least stuck_attempts times)."""
        ...

    def memories_without_history(self, conn: sa.Connection) -> int:
        """Memories no audit event names."""
        ...

    def orphan_vectors(self, conn: sa.Connection) -> int:
        """Vectors of no memory, or malformed."""
        ...

    def check_fts(self, conn: sa.Connection) -> None:
        """Raises sa.exc.DatabaseError if the full-text index disagrees with long_term
        (needs a write transaction on SQLite; changes nothing)."""
        ...

    def check_fts_of_snapshot(self) -> str | None:
        """The full-text index check on an in-memory copy, for a read-only store; why the
        index disagrees with long_term, or None. Holds the whole store in memory meanwhile."""
        ...

    def backup_to(self, target: Path) -> None:
        """A consistent copy into a new file; InvalidInputError if it cannot be created."""
        ...

    # -- topics stored by an older reader (memman/storage/labels.py) ----------------------------

    def reader_version(self, conn: sa.Connection) -> str:
        """The reader version that last labelled the store ("0": unknown, no reader's)."""
        ...

    def set_reader_version(self, conn: sa.Connection, version: str) -> None:
        """Record the reader version that labelled the store."""
        ...

    def state(self, conn: sa.Connection, key: str) -> str | None:
        """The store's own state under key (store_state), None if nothing is on record."""
        ...

    def keep_state(self, conn: sa.Connection, key: str, value: str) -> str:
        """Record value under key unless one is on record; the value on record."""
        ...

    def count_unlabelled(self, conn: sa.Connection, scope: Scope | None) -> int:
        """Active memories of the scope (every scope's if None) without an attribute."""
        ...

    def unlabelled(
        self, conn: sa.Connection, scope: Scope | None, *, after_pk: int, limit: int
    ) -> list[tuple[int, str, str]]:
        """(pk, content, content_hash) of up to `limit` active memories without an attribute
        after after_pk, in pk order."""
        ...

    def fill_labels(self, conn: sa.Connection, labels: list[tuple[str, str, int, str]]) -> int:
        """Label each (subject, attribute, pk, content_hash) memory whose attribute is still
        NULL and text unchanged (a set subject stays); how many were labelled. Locks: those
        rows."""
        ...
