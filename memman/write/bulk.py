"""The ADDs of one update_many chunk, held back and written together.

A chunk is decided in order inside one write transaction. An ADD is held, and written with
one executemany for the rows and one for the events (apply.write_additions), before the next
fact that is not an exact repeat of a stored memory, and at the end of the chunk: the
transaction commits every held ADD with its event or none.

Why every such fact, not only one that shares a word with a held ADD: BM25's row total and
average length are those of the whole FTS5 index (storage/fts.py), so an unwritten row
shifts every score and can move the top-k cut, and FTS5's Porter stemmer matches words a
plain word comparison misses ("games" finds "game"). Both changed candidate lists before
(benchmarks/RESULTS.md, Session 9, issue 14). A fact settled by its hash reads no index, so
a run of repeats leaves the hold alone. A fact is thus decided on the same rows, with the
same scores, as when written one at a time.

Without an embedder only: with one, every ADD is written at once (the hold is never used).
"""

from __future__ import annotations

from collections.abc import Callable

import sqlalchemy as sa

from memman.models import UpdateResult
from memman.storage.store import Store
from memman.write.apply import Addition, write_additions
from memman.write.candidate import Candidate

# More work for the transaction that applies or parks a fact (see WritePath.process); a held
# ADD's runs when the ADD is written.
Also = Callable[[sa.Connection], None] | None


class HeldAdditions:
    """ADDs decided but not written yet."""

    def __init__(self, store: Store):
        self.store = store
        self.held: list[tuple[int, Addition, Also]] = []

    def read_by(self, conn: sa.Connection, candidate: Candidate, absent: set[str]) -> bool:
        """Will deciding this candidate read the index (so the hold must be written first)?

        `absent`: hashes of the chunk no stored memory held (a held ADD's stays until it is
        written). Any other candidate is a NOOP of the hash tier, which reads nothing else,
        unless the chunk has retired the memory holding its text since: asked again.
        """
        if not self.held:
            return False
        if candidate.content_hash in absent:
            return True
        return self.store.active_by_hash(conn, candidate.scope, candidate.content_hash) is None

    def hold(self, index: int, change: Addition, also: Also) -> None:
        self.held.append((index, change, also))

    def write(self, conn: sa.Connection) -> dict[int, UpdateResult]:
        """Write every held ADD (with its `also`) in the caller's transaction; their results."""
        if not self.held:
            return {}
        indexes = [index for index, _, _ in self.held]
        results = write_additions(
            self.store, conn, [change for _, change, _ in self.held], embedder=None
        )
        for _, _, also in self.held:
            if also is not None:
                also(conn)
        self.held.clear()
        return dict(zip(indexes, results, strict=True))
