"""The memory that replaced a text, found by the text's hash, for when that text is said again.

Word retrieval and the topic query return a bounded number of memories (top_k), so in a large
scope the memory whose text replaced the candidate's very text can rank out of reach, and the
repeat became a second row (issue 11: replaying a conversation twice). Looked up directly it
joins the candidates: supersede._said_again UPDATEs it back to the text, or, when the memory
holds the text and more, the router's NOOP settles the repeat.
"""

from __future__ import annotations

import sqlalchemy as sa

from memman.language.text import content_tokens, jaccard
from memman.models import Memory
from memman.storage.store import Store
from memman.write.candidate import Candidate
from memman.write.retrieval import Retrieved


def with_replacing(
    store: Store, conn: sa.Connection, candidate: Candidate, retrieved: list[Retrieved]
) -> tuple[list[Retrieved], Memory | None]:
    """The retrieved memories, with the active memory an UPDATE took the candidate's text out
    of added if retrieval missed it (Store.active_replacing: one index seek), and that memory
    (None if there is none)."""
    found = store.active_replacing(conn, candidate.scope, candidate.content_hash)
    if found is None or any(r.memory.id == found.id for r in retrieved):
        return retrieved, found
    shared = jaccard(content_tokens(candidate.content), content_tokens(found.content))
    return [*retrieved, Retrieved(found, bm25=None, jaccard=shared)], found
