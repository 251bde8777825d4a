"""The ADDs of one update_many chunk, held back and written together.

A chunk is decided in order inside one write transaction. An ADD changes nothing a later fact
of the chunk is decided on unless that fact could find the new memory: by a word of its FTS
query, by its topic (subject and attribute) or by its exact text. So ADDs are held while the
facts after them are independent of them, and written with one executemany for the rows and
one for the events (apply.write_additions) as soon as a fact touches one, before that fact is
decided, and at the end of the chunk: the transaction commits every held ADD with its event
or none. A fact is decided on the same rows as when written one at a time; BM25 only orders
what a query finds (see retrieval), and held rows share no query word with it.

Without an embedder only: with one, the vector retriever's top k may hold any memory of the
scope, so every ADD is written at once (the hold is never used).
"""

from __future__ import annotations

import unicodedata
from collections.abc import Callable

import sqlalchemy as sa

from memman.language.text import normalize
from memman.memo import memoized
from memman.models import UpdateResult
from memman.storage.fts import FTS_TOKEN
from memman.storage.store import Store
from memman.write.apply import Addition, write_additions
from memman.write.candidate import Candidate
from memman.write.retrieval import fts_terms

# More work for the transaction that applies or parks a fact (see WritePath.process); a held
# ADD's runs when the ADD is written.
Also = Callable[[sa.Connection], None] | None


def _fts_words(text: str) -> frozenset[str]:
    """The words FTS5's unicode61 tokenizer indexes for a text, folded as it folds them
    (case and diacritics), split at anything but letters and digits."""
    folded = unicodedata.normalize("NFKD", text.casefold())
    if not folded.isascii():  # ASCII has no combining marks: most texts skip this loop
        folded = "".join(ch for ch in folded if not unicodedata.combining(ch))
    return frozenset(FTS_TOKEN.findall(normalize(folded)))


def query_words(candidate: Candidate) -> frozenset[str]:
    """Every word the candidate's FTS query can match (an over-estimate: whole phrases)."""
    return _query_words(candidate.content)


@memoized
def _query_words(text: str) -> frozenset[str]:
    return _fts_words(" ".join(fts_terms(text)))


class HeldAdditions:
    """ADDs decided but not written yet, with what a later fact would find them by."""

    def __init__(self, store: Store):
        self.store = store
        self.held: list[tuple[int, Addition, Also]] = []
        self.words: set[str] = set()
        self.topics: set[tuple[str | None, str | None]] = set()
        self.hashes: set[str] = set()

    def touched_by(self, candidate: Candidate) -> bool:
        """Could deciding this candidate read a held ADD (so it must be written first)?"""
        if not self.held:
            return False
        if candidate.content_hash in self.hashes:
            return True
        topic = candidate.topic
        if topic is not None and (topic.subject, topic.attribute) in self.topics:
            return True
        return not self.words.isdisjoint(query_words(candidate))

    def hold(self, index: int, change: Addition, also: Also) -> None:
        self.held.append((index, change, also))
        self.words |= _fts_words(normalize(change.candidate.content))
        self.topics.add((change.row["subject"], change.row["attribute"]))
        self.hashes.add(change.candidate.content_hash)

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
        self.words.clear()
        self.topics.clear()
        self.hashes.clear()
        return dict(zip(indexes, results, strict=True))
