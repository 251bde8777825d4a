"""`UpkeepStorage`: parked facts, the lifecycle stages' rows, lexical search and vectors,
the message buffer, erasure and checks; a part of `memman.storage.protocol.Storage` (see
there for what every method taking `conn` has in common)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any, Protocol

import sqlalchemy as sa

from memman.models import PendingFact
from memman.scope import Scope
from memman.storage.changes import NewVector


class UpkeepStorage(Protocol):
    """Everything around the memories (pending.py, lifecycle.py, fts.py, vector_rows.py,
    messages.py, upkeep.py, labels.py)."""

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
