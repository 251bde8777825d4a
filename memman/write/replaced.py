"""The memory that replaced or absorbed a text, found by the text's hash, for when it is said again.

Word retrieval and the topic query return a bounded number of memories (top_k), so in a large
scope the memory whose text replaced the candidate's very text can rank out of reach, and the
repeat became a second row (issue 11: replaying a conversation twice). Looked up directly it
joins the candidates: supersede._said_again UPDATEs it back to the text, or, when the memory
holds the text and more, the router's NOOP settles the repeat. Likewise the memory an earlier
event absorbed the very text into (a NOOP into a memory that says it and more, an UPDATE that
wrote other words: Store.active_absorbing): it joins the candidates, so the router settles the
repeat as it settled the first saying instead of a decider call ADDing it.
"""

from __future__ import annotations

import sqlalchemy as sa

from memman.language.reader import READER
from memman.models import Memory
from memman.storage.store import Store
from memman.write.candidate import Candidate
from memman.write.retrieval import Retrieved


def with_replacing(
    store: Store, conn: sa.Connection, candidate: Candidate, retrieved: list[Retrieved]
) -> tuple[list[Retrieved], Memory | None]:
    """The retrieved memories, with the active memory an UPDATE took the candidate's text out
    of (Store.active_replacing) and the one an event absorbed that text into
    (Store.active_absorbing) added if retrieval missed them (one index seek each), and the
    replacing memory (None if there is none)."""
    replacing = store.active_replacing(conn, candidate.scope, candidate.content_hash)
    absorbing = store.active_absorbing(conn, candidate.scope, candidate.content_hash)
    known = {r.memory.id for r in retrieved}
    for found in (replacing, absorbing):
        if found is not None and found.id not in known:
            known.add(found.id)
            shared = READER.jaccard(
                READER.content_tokens(candidate.content), READER.content_tokens(found.content)
            )
            retrieved = [*retrieved, Retrieved(found, bm25=None, jaccard=shared)]
    return retrieved, replacing
