"""The statements of the lifecycle stages: short-term facts, consolidation, merging, recall.

A mixin of `memman.storage.store.Store` (which supplies `long_term`): consolidate.py, merge.py,
shortterm.py and recall.py call these methods instead of writing SQL. Every statement names
the scope it works in, including those that reach rows by id a scoped read just returned,
so the tables can be distributed by scope (tests/test_scope_predicate.py).
"""

from __future__ import annotations

import json
from typing import Any

import sqlalchemy as sa

from memman.errors import LeaseLostError
from memman.models import Status
from memman.scope import Scope
from memman.storage.keyed import keyed_scope


def _in_scope(scope: Scope) -> dict[str, str]:
    return {"u": scope.user_id, "a": scope.agent_key}


_SCOPE = "user_id = :u AND agent_id = :a"
_SHORT_TERM_BY_HASH = sa.text(
    f"SELECT * FROM short_term WHERE {_SCOPE} AND content_hash = :h AND status = 'active'"
)
# "Keep separate" verdicts of the scope's earlier consolidations.
_VERDICTS = sa.text(
    f"SELECT scores FROM events WHERE {_SCOPE} AND source = 'consolidation'"
    " AND op = 'NOOP' AND scores LIKE '%kept_separate%'"
)
_DECAY_ROWS = sa.text(
    "SELECT id, content, category, confidence, updated_at, last_accessed_at, decayed_at"
    f" FROM long_term WHERE {_SCOPE} AND status = 'active' ORDER BY pk"
)
_MERGE_ROWS = sa.text(
    "SELECT pk, id, content, category, confidence, access_count, updated_at FROM long_term"
    f" WHERE {_SCOPE} AND status = 'active' ORDER BY pk"
)
# Every row holding the term, unranked: prefix filtering needs the whole posting list, and
# BM25 ordering would only cost time.
_POSTINGS = "SELECT rowid FROM long_term_fts WHERE long_term_fts MATCH ?"


class LifecycleRows:
    """Short-term facts, consolidation's reads and changes, merge candidates, recall counts."""

    long_term: sa.Table

    # -- short-term facts -------------------------------------------------------------------

    def short_term_by_hash(
        self, conn: sa.Connection, scope: Scope, content_hash: str
    ) -> sa.Row | None:
        """The scope's active short-term row with this content hash, or None."""
        return conn.execute(_SHORT_TERM_BY_HASH, {**_in_scope(scope), "h": content_hash}).first()

    def insert_short_term(self, conn: sa.Connection, scope: Scope, **values: Any) -> None:
        """A new active short-term fact (content, content_hash, category, importance,
        sessions JSON, source, metadata JSON, created_at, updated_at, expires_at)."""
        row = {"user_id": scope.user_id, "agent_id": scope.agent_key, **values}
        columns = ", ".join(row)  # column names from memman's callers, never from user input
        marks = ", ".join(f":{name}" for name in row)
        conn.execute(sa.text(f"INSERT INTO short_term ({columns}) VALUES ({marks})"), row)

    def short_term_by_id(
        self, conn: sa.Connection, fact_id: int, scope: Scope | None
    ) -> sa.Row | None:
        """The short-term row with this id, whatever its status (in the scope, if given),
        or None."""
        sql = "SELECT * FROM short_term WHERE id = :id"
        params: dict[str, object] = {"id": fact_id}
        if scope is not None:
            sql += f" AND {_SCOPE}"
            params.update(_in_scope(scope))
        return conn.execute(sa.text(sql), params).first()

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
        """A short-term fact seen again: its sessions (JSON), a new expiry and, unless None,
        new metadata (JSON)."""
        conn.execute(
            sa.text(
                "UPDATE short_term SET sessions = :s, updated_at = :now, expires_at = :exp,"
                f" metadata = coalesce(:m, metadata) WHERE id = :id AND {_SCOPE}"
            ),
            {
                **_in_scope(scope),
                **{"s": sessions, "now": now, "exp": expires, "m": metadata, "id": fact_id},
            },
        )

    def active_short_term(self, conn: sa.Connection, scope: Scope | None) -> list[sa.Row]:
        """Active short-term rows of the scope (every scope's if None), oldest first."""
        sql = "SELECT * FROM short_term WHERE status = 'active'"
        params: dict[str, str] = {}
        if scope is not None:
            sql += f" AND {_SCOPE}"
            params = _in_scope(scope)
        return conn.execute(sa.text(sql + " ORDER BY id"), params).all()

    def unexpired_short_term(self, conn: sa.Connection, scope: Scope, now: str) -> list[sa.Row]:
        """The scope's active short-term rows expiring after now, newest first."""
        return conn.execute(
            sa.text(
                f"SELECT * FROM short_term WHERE {_SCOPE} AND status = 'active'"
                " AND expires_at > :now ORDER BY updated_at DESC, id DESC"
            ),
            {**_in_scope(scope), "now": now},
        ).all()

    def set_short_term_status(
        self, conn: sa.Connection, scope: Scope, fact_id: int, status: str, now: str
    ) -> None:
        """expired, promoted or deleted (the row stays for the audit trail). LeaseLostError (the
        caller's transaction, which writes the promoted memory or the expiry's event, rolls
        back) if the row is gone: the user was erased (forget) since it was read."""
        changed = conn.execute(
            sa.text(
                f"UPDATE short_term SET status = :s, updated_at = :now WHERE id = :id AND {_SCOPE}"
            ),
            {**_in_scope(scope), "s": status, "now": now, "id": fact_id},
        )
        if changed.rowcount == 0:
            raise LeaseLostError(f"short-term fact {fact_id} was erased; nothing of it written")

    def note_short_term_recalled(
        self, conn: sa.Connection, scope: Scope, fact_ids: list[int], *, now: str, spaced: str
    ) -> None:
        """One UPDATE: each fact whose last counted recall is at or before `spaced` counts
        one more, at `now`."""
        conn.execute(
            sa.text(
                "UPDATE short_term SET recall_count = recall_count + 1, last_recalled_at = :now"
                f" WHERE id IN :ids AND {keyed_scope(conn)}"
                " AND (last_recalled_at IS NULL OR last_recalled_at <= :spaced)"
            ).bindparams(sa.bindparam("ids", expanding=True)),
            {**_in_scope(scope), "ids": fact_ids, "now": now, "spaced": spaced},
        )

    # -- consolidation ----------------------------------------------------------------------

    def scopes_with_memories(self, conn: sa.Connection) -> list[Scope]:
        """Every scope with a long-term or short-term row (a run over all scopes)."""
        rows = conn.execute(
            sa.text(
                "SELECT user_id, agent_id FROM long_term UNION SELECT user_id, agent_id"
                " FROM short_term ORDER BY 1, 2"
            )
        ).all()
        return [Scope(u, a or None) for u, a in rows]

    def kept_separate_scores(self, conn: sa.Connection, scope: Scope) -> list[str]:
        """The scores JSON of the scope's "keep separate" verdicts."""
        return list(conn.execute(_VERDICTS, _in_scope(scope)).scalars())

    def active_contents(
        self, conn: sa.Connection, scope: Scope, ids: list[str]
    ) -> dict[str, tuple[str, str]]:
        """id -> (content, metadata JSON) of those of the scope's memories still active."""
        lt = self.long_term
        rows = conn.execute(
            sa.select(lt.c.id, lt.c.content, lt.c.metadata).where(
                lt.c.id.in_(ids),
                lt.c.user_id == scope.user_id,
                lt.c.agent_id == scope.agent_key,
                lt.c.status == Status.ACTIVE.value,
            )
        )
        return {memory_id: (content, metadata) for memory_id, content, metadata in rows}

    def supersede(
        self, conn: sa.Connection, scope: Scope, memory_id: str, *, metadata: dict, now: str
    ) -> None:
        """The memory becomes superseded (restorable), with this metadata."""
        self._change(
            conn,
            scope,
            memory_id,
            status=Status.SUPERSEDED.value,
            updated_at=now,
            metadata=json.dumps(metadata),
        )

    def decay_rows(self, conn: sa.Connection, scope: Scope) -> list[sa.Row]:
        """The scope's active memories with what decay reads of them, in pk order."""
        return conn.execute(_DECAY_ROWS, _in_scope(scope)).all()

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
        """Decay: the new confidence, stamped decayed_at; archived too if `archive`."""
        values: dict[str, object] = {"confidence": confidence, "decayed_at": now}
        if archive:
            values.update(status=Status.ARCHIVED.value, updated_at=now)
        self._change(conn, scope, memory_id, **values)

    def _change(self, conn: sa.Connection, scope: Scope, memory_id: str, **values: Any) -> None:
        lt = self.long_term
        conn.execute(
            lt.update()
            .where(
                lt.c.id == memory_id,
                lt.c.user_id == scope.user_id,
                lt.c.agent_id == scope.agent_key,
            )
            .values(**values)
        )

    # -- merging ----------------------------------------------------------------------------

    def merge_rows(self, conn: sa.Connection, scope: Scope) -> list[sa.Row]:
        """The scope's active memories with what clustering reads of them, in pk order."""
        return conn.execute(_MERGE_ROWS, _in_scope(scope)).all()

    def fts_rowids(self, conn: sa.Connection, match: str) -> list[int]:
        """The pks of every memory the FTS5 query matches, unranked. `match` must come from
        fts.scoped_match, which puts the scope's token into it."""
        return [pk for (pk,) in conn.exec_driver_sql(_POSTINGS, (match,))]

    # -- recall -----------------------------------------------------------------------------

    def note_accessed(
        self, conn: sa.Connection, scope: Scope, memory_ids: list[str], now: str
    ) -> None:
        """One UPDATE: each of these memories was recalled once more, at now."""
        lt = self.long_term
        conn.execute(
            lt.update()
            .where(
                lt.c.id.in_(memory_ids), sa.text(keyed_scope(conn)).bindparams(**_in_scope(scope))
            )
            .values(access_count=lt.c.access_count + 1, last_accessed_at=now)
        )
