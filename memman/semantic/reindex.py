"""Vectors for the memories that lack one for the configured model, batch by batch.

Each batch is embedded outside any transaction and written in its own, so a failing model
keeps the batches before it and a rerun resumes after them.
"""

from __future__ import annotations

from collections.abc import Callable

import sqlalchemy as sa

from memman.errors import EmbeddingError
from memman.semantic.embed import Embedder
from memman.semantic.vectors import count_missing, missing_batch
from memman.storage.store import Store
from memman.storage.vector_format import save_vector


def reindex(
    store: Store,
    embedder: Embedder,
    *,
    batch: int,
    progress: Callable[[int, int], None] | None,
) -> int:
    """MemoryManager.reindex: how many memories were embedded."""
    model = embedder.name
    with store.read() as conn:
        total = count_missing(conn, model)
    done, after = 0, 0
    while True:
        with store.read() as conn:
            rows = missing_batch(conn, model, after_pk=after, limit=batch)
        if not rows:
            return done
        try:
            vectors = embedder.embed([content for _, _, content in rows])
        except EmbeddingError as error:
            raise EmbeddingError(
                f"{error} ({done} of {total} memories embedded and kept; rerun to resume)"
            ) from error

        def write(conn: sa.Connection, rows=rows, vectors=vectors) -> None:
            for (_, memory_id, _), vector in zip(rows, vectors, strict=True):
                save_vector(conn, memory_id, model, vector)

        store.write(write)
        done += len(rows)
        after = rows[-1][0]
        if progress is not None:
            progress(done, total)
