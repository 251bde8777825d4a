"""The row counts fts.py's candidate query is built from, kept for the rest of a transaction.

In a large scope every fact's query counts the scope's rows and each term's rows (is it held
by more than fts.COMMON_TERM_ROWS?): at 100k rows ~0.3 ms of a ~2.8 ms fact in update_many,
which decides a chunk of facts in one transaction and asks about the same scope and the same
common words ("like", "dog") fact after fact (RESULTS.md, "Bulk ingest").

A count read earlier in the transaction is used again while it cannot have crossed the
threshold. Inside a transaction only this connection changes what it reads (SQLite reads a
snapshot; a write transaction holds the write lock), and one row change moves a count by at
most one, so a count c read when total_changes() was t still says which side of the threshold
its rows are on while total_changes() - t < |c - threshold|. total_changes() counts every row
the connection changed, the triggers' and FTS5's own tables' included: an over-estimate, so a
count is read again sooner than needed, never later. A count read again in the transaction is
read further (SLACK rows past the threshold), so it lasts longer the next time.

(A bulk rebuild of the FTS index in the middle of a transaction would break the premise; the
index is only rebuilt by migrations, which run no candidate query.)
"""

from __future__ import annotations

import weakref
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import sqlalchemy as sa

from memman.scope import Scope
from memman.storage.sql import run_sql

# How far past the threshold a count is read the second time in a transaction: 4 * 2,000
# rows covers the total_changes() of a whole update_many chunk (~6 per fact written).
SLACK = 8000

# count(phrase, bound): the scope's rows holding phrase, counted up to bound.
Count = Callable[[str, int], int]


@dataclass
class _Read:
    rows: int  # min(rows, bound)
    at: int  # total_changes() then


@dataclass
class _ScopeCounts:
    key: str
    scope_rows: _Read
    terms: dict[str, _Read] = field(default_factory=dict)


# Per open transaction (its SQLAlchemy transaction object), per scope; dropped with it.
_KEPT: weakref.WeakKeyDictionary[Any, dict[Scope, _ScopeCounts]] = weakref.WeakKeyDictionary()


def _total_changes(conn: sa.Connection) -> int:
    """Rows this connection has changed since it opened (SQLite's total_changes())."""
    return int(run_sql(conn, "SELECT total_changes()").fetchone()[0])


def _still(read: _Read, changes: int, threshold: int) -> bool:
    """Does a count read earlier still say which side of threshold its rows are on?"""
    moved = changes - read.at
    if read.rows <= threshold:
        return read.rows + moved <= threshold
    return read.rows - moved > threshold


class KeptCounts:
    """The counts of one scope in one transaction (a fresh one outside a transaction)."""

    def __init__(self, conn: sa.Connection, scope: Scope, threshold: int):
        transaction = conn.get_transaction()
        self.kept: dict[Scope, _ScopeCounts] = (
            {} if transaction is None else _KEPT.setdefault(transaction, {})
        )
        self.conn, self.scope, self.threshold = conn, scope, threshold
        self.changes: int | None = None  # total_changes(), read once per query

    def _changes(self) -> int:
        if self.changes is None:
            self.changes = _total_changes(self.conn)
        return self.changes

    def scope_index(
        self, read_scope: Callable[[int], tuple[str, int, int] | None]
    ) -> tuple[str, bool] | None:
        """(index key, more than threshold rows?) of the scope, None if it never had a row.
        read_scope(bound): (key, rows up to bound, total_changes()) or None."""
        known = self.kept.get(self.scope)
        if known is not None:
            changes = self._changes()
            # The key stays while the scope keeps a row (its last row gone, fts_scopes drops it).
            if _still(known.scope_rows, changes, self.threshold) and (
                known.scope_rows.rows - (changes - known.scope_rows.at) > 0
            ):
                return known.key, known.scope_rows.rows > self.threshold
        bound = self.threshold + 1 + (SLACK if known is not None else 0)
        found = read_scope(bound)
        if found is None:
            self.kept.pop(self.scope, None)
            return None
        key, rows, self.changes = found
        if known is not None and known.key == key:  # its term counts stay as they were
            known.scope_rows = _Read(rows, self.changes)
        else:
            self.kept[self.scope] = _ScopeCounts(key, _Read(rows, self.changes))
        return key, rows > self.threshold

    def term_rows(self, phrases: list[str], count: Count) -> list[int]:
        """Each phrase's rows as counted up to at least threshold + 1, maybe earlier in the
        transaction: not exact, but on the side of threshold the rows are on now."""
        terms = self.kept[self.scope].terms
        changes = self._changes()
        rows = []
        for phrase in phrases:
            known = terms.get(phrase)
            if known is None or not _still(known, changes, self.threshold):
                bound = self.threshold + 1 + (SLACK if known is not None else 0)
                known = terms[phrase] = _Read(count(phrase, bound), changes)
            rows.append(known.rows)
        return rows
