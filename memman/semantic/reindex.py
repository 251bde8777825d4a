"""Vectors for the memories that lack one for the configured model, batch by batch.

Each batch is embedded outside any transaction and written in its own, so a failing model
keeps the batches before it and a rerun resumes after them.
"""

from __future__ import annotations

from collections.abc import Callable

from memman.errors import EmbeddingError
from memman.semantic.embed import Embedder
from memman.storage.changes import NewVector
from memman.storage.store import Store


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
        total = store.count_missing_vectors(conn, model)
    if progress is not None:
        progress(0, total)
    done, after = 0, 0
    while True:
        with store.read() as conn:
            rows = store.missing_vectors(conn, model, after_pk=after, limit=batch)
        if not rows:
            return done
        try:
            vectors = embedder.embed([content for _, _, content in rows])
        except EmbeddingError as error:
            raise EmbeddingError(
                f"{error} ({done} of {total} memories embedded and kept; rerun to resume)"
            ) from error

        embedded = [
            NewVector(memory_id, model, vector)
            for (_, memory_id, _), vector in zip(rows, vectors, strict=True)
        ]
        store.write(lambda conn, embedded=embedded: store.save_vectors(conn, embedded))
        done += len(rows)
        after = rows[-1][0]
        if progress is not None:
            progress(done, total)
