"""update_many's chunks: a window of candidates settled in one write transaction, its ambiguous
facts decided together in one call, facts that depend on them waiting for the next window.

Apart from WritePath's one-fact path (memman/write/writepath.py) because the window's bookkeeping
(which fact waits on which, the vectors computed ahead) is its own idea.
"""

from __future__ import annotations

import datetime as dt
import logging
from collections.abc import Callable, Mapping, Sequence

import numpy as np
import sqlalchemy as sa

from memman.config import Settings
from memman.errors import EmbeddingError
from memman.language.reader import READER
from memman.memo import batch_memo
from memman.models import Op, UpdateResult
from memman.semantic.embed import Embedder, Lookahead, cosine_thresholds
from memman.storage.store import Scope, Store
from memman.write.apply import StaleDecision
from memman.write.candidate import Candidate
from memman.write.decide import Decider, decide_all
from memman.write.retrieval import Retrieved
from memman.write.route import Route

log = logging.getLogger(__name__)


# More work for the transaction that applies or parks a fact (see WritePath.process).
Also = Callable[[sa.Connection], None] | None

# A candidate's embedding: None without an embedder; the EmbeddingError when embedding failed,
# which parks the fact unless the hash tier settles it (see WritePath._settle).
Embedded = np.ndarray | EmbeddingError | None


class ChunkWalk:
    """A mixin of WritePath: update_many's chunks, walked with WritePath's process, _settle,
    _embed, _apply_or_park and _writer."""

    store: Store
    settings: Settings
    decider: Decider
    embedder: Embedder | None
    clock: Callable[[], dt.datetime]

    def batch(
        self,
        scope: Scope,
        candidates: list[Candidate],
        size: int,
        alsos: Mapping[int, Also] | None = None,
    ) -> list[UpdateResult]:
        """Candidates of one scope in order, one write transaction per chunk of `size`
        (MemoryManager.update_many says what a caller can rely on). `alsos[i]` runs in the
        transaction that applies or parks candidate i (extraction marks its messages there)."""
        alsos = alsos or {}
        done: dict[int, UpdateResult] = {}
        waiting = list(range(len(candidates)))  # in order; a fact waiting on another stays
        known = self._known_hashes(scope, candidates)
        # The next chunk is embedded (outside any transaction) while this one is written; what
        # the batch derives from a text (its words, its topic, ...) is derived once (memo.py).
        with (
            batch_memo(),
            Lookahead(lambda batch: self._embed_new(batch, known), candidates, size) as ahead,
        ):
            while waiting:
                window = waiting[:size]
                embedded = ahead.take(window[0], window[-1] + 1)
                vectors = {i: embedded[i - window[0]] for i in window}
                walked = self.store.write(
                    lambda conn, window=window, vectors=vectors: self._settle_independent(
                        conn, window, candidates, vectors, alsos
                    ),
                    scope=scope,
                )
                if walked:
                    done.update(self._decide_walked(candidates, vectors, walked, alsos))
                else:  # the first fact needs a vector it was not given: decide it now
                    first = window[0]
                    done[first] = self.process(
                        candidates[first], vector=vectors[first], also=alsos.get(first)
                    )
                waiting = [i for i in waiting if i not in done]
        return [done[i] for i in range(len(candidates))]

    def _settle_independent(
        self,
        conn: sa.Connection,
        window: list[int],
        candidates: list[Candidate],
        vectors: Mapping[int, Embedded],
        alsos: Mapping[int, Also],
    ) -> dict[int, UpdateResult | Route]:
        """Settle the window's candidates in order; an ambiguous one is kept as its Route for
        the decider, to be decided with the others in one call.

        A fact touching an ambiguous one (see _Claims) waits for the next window, and so does
        any later fact touching a waiting one: "supports Arsenal" after "supports Chelsea
        now" must not be settled on the text the pending decision is about to change. Facts
        that touch none of them are settled meanwhile, on the same memories as in order, but
        not quite the same BM25 scores: a pending ADD or UPDATE is missing from the index's row
        total and average length (storage/fts.py), which can move a top_k cut (RESULTS.md,
        "Bulk ingest"). At most llm_batch_size ambiguous facts per window; a
        fact that needs a vector it was not given waits too (first in a window, the caller
        decides it alone).
        """
        walked: dict[int, UpdateResult | Route] = {}
        claims = _Claims(self.cosine_novel())
        absent = self._absent_hashes(conn, window, candidates)
        for i in window:
            candidate, vector = candidates[i], vectors[i]
            needs_vector = vector is None and self._needs_vector(conn, candidate)
            if needs_vector and not walked:
                break
            if needs_vector or claims.touched_by(candidate, vector):
                claims.wait(candidate, vector)
                continue
            outcome = self._settle(
                conn, candidate, vector=vector, absent=candidate.content_hash in absent
            )
            walked[i] = outcome
            if isinstance(outcome, UpdateResult) and outcome.op in (Op.ADD, Op.UPDATE):
                # Text now stored (the candidate's, an UPDATE's new one): no longer absent.
                absent.discard(READER.content_hash(outcome.content or ""))
            also = alsos.get(i)
            if isinstance(outcome, UpdateResult) and also is not None:
                also(conn)
            if isinstance(outcome, Route):
                claims.add(candidate, vector, outcome.related)
                if claims.count >= self.settings.llm_batch_size:
                    break
        return walked

    def _absent_hashes(
        self, conn: sa.Connection, window: list[int], candidates: list[Candidate]
    ) -> set[str]:
        """The window's hashes no active memory of the scope holds (one query), so the hash
        tier need not ask the store fact by fact."""
        hashes = list(dict.fromkeys(candidates[i].content_hash for i in window))
        if not hashes:
            return set()
        scope = candidates[window[0]].scope
        return set(hashes) - self.store.active_hashes(conn, scope, hashes)

    def _decide_walked(
        self,
        candidates: list[Candidate],
        vectors: Mapping[int, Embedded],
        walked: dict[int, UpdateResult | Route],
        alsos: Mapping[int, Also],
    ) -> dict[int, UpdateResult]:
        """The walk's results, its ambiguous facts decided together (one LLM call) and
        applied in order."""
        routes = {i: o for i, o in walked.items() if isinstance(o, Route)}
        decided = dict(
            zip(
                routes,
                decide_all(
                    self.decider,
                    [(candidates[i], route.related) for i, route in routes.items()],
                    today=self.clock().date(),
                ),
                strict=True,
            )
        )
        results: dict[int, UpdateResult] = {}
        for i, outcome in walked.items():
            if isinstance(outcome, UpdateResult):
                results[i] = outcome
                continue
            also = alsos.get(i)
            try:
                results[i] = self._apply_or_park(
                    candidates[i],
                    outcome,
                    decided[i],
                    vectors[i],
                    None,
                    self._writer(also, candidates[i].scope),
                )
            except StaleDecision as stale:  # changed since: decided again on its own
                log.info("memory %s changed while the LLM decided; deciding again", stale)
                results[i] = self.process(candidates[i], vector=vectors[i], also=also)
        return results

    def cosine_novel(self) -> float | None:
        """The embedder's novel_cosine (None without an embedder)."""
        if self.embedder is None:
            return None
        return cosine_thresholds(self.settings, self.embedder.name)[1]

    def _needs_vector(self, conn: sa.Connection, candidate: Candidate) -> bool:
        """A fact _embed_new skipped as a repeat whose stored text has changed since."""
        if self.embedder is None:
            return False
        return self.store.active_by_hash(conn, candidate.scope, candidate.content_hash) is None

    def _known_hashes(self, scope: Scope, candidates: list[Candidate]) -> set[str]:
        """The candidates' content hashes that active memories of the scope already hold."""
        if self.embedder is None:
            return set()  # only used to skip embedding
        with self.store.read() as conn:
            return self.store.active_hashes(conn, scope, [c.content_hash for c in candidates])

    def _embed_new(self, batch: Sequence[Candidate], known: set[str]) -> list[Embedded]:
        """Vectors for a batch, one per distinct text, computed outside any transaction.

        A text in `known` (already stored) gets None instead: the hash tier settles it without
        a vector, so a re-imported batch costs no model time.
        """
        if self.embedder is None:
            return [None] * len(batch)
        texts = list(dict.fromkeys(c.content for c in batch if c.content_hash not in known))
        vectors = dict(zip(texts, self._embed(texts), strict=True))
        return [vectors.get(c.content) for c in batch]


class _Claims:
    """What the ambiguous facts of a walk may still change: a later fact touching any of it
    waits until they are applied.

    A fact is independent of them when it shares no content word with them or with the
    memories they were compared with, no topic (subject and attribute), and, with an
    embedder, is not as close to one of them as a related memory would be (novel_cosine).
    Without an embedder a fact with words that name its topic (language/bearing.py) is
    compared only on those: a memory sharing nothing else ("like") is not shown to it
    (write/pertinent.py), so neither can a pending fact's outcome be.
    """

    def __init__(self, novel_cosine: float | None):
        self.novel_cosine = novel_cosine
        self.words: set[str] = set()
        self.bearing: set[str] = set()
        self.topics: set[tuple[str, str]] = set()
        self.vectors: list[np.ndarray] = []
        self.count = 0

    def add(self, candidate: Candidate, vector: Embedded, related: list[Retrieved]) -> None:
        self.count += 1
        self.words |= READER.content_tokens(candidate.content)
        self.bearing |= READER.bearing_words(candidate.content)
        if candidate.topic is not None:
            self.topics.add((candidate.topic.subject, candidate.topic.attribute))
        for r in related:
            if r.bm25 is None and r.cosine is None:
                # Shown for its topic or as the user's profile (write/shown.py), not found by
                # the fact's words or meaning: every fact of a window is shown the profile, so
                # claiming it made each one wait for the last and cost a call of its own
                # (update_many, batch 8: 0.27 -> 0.56 calls a fact). The candidate's own topic
                # still claims its topic's memories; an UPDATE of one applied meanwhile makes
                # the decision stale, and it is decided again (StaleDecision).
                continue
            self.words |= READER.content_tokens(r.memory.content)
            self.bearing |= READER.bearing_words(r.memory.content)
            if r.memory.subject and r.memory.attribute:
                self.topics.add((r.memory.subject, r.memory.attribute))
        if isinstance(vector, np.ndarray):
            self.vectors.append(vector)

    def wait(self, candidate: Candidate, vector: Embedded) -> None:
        """A fact left for the next window: later facts touching it wait too (order)."""
        self.add(candidate, vector, [])
        self.count -= 1

    def touched_by(self, candidate: Candidate, vector: Embedded) -> bool:
        if not self.words and not self.topics and not self.vectors:
            return False
        bearing = READER.bearing_words(candidate.content) if self.novel_cosine is None else None
        if bearing:  # compared on its topic words only (write/pertinent.py)
            if bearing & self.bearing:
                return True
        elif READER.content_tokens(candidate.content) & self.words:
            return True
        topic = candidate.topic
        if topic is not None and (topic.subject, topic.attribute) in self.topics:
            return True
        if self.novel_cosine is None or not isinstance(vector, np.ndarray):
            return False
        return any(float(vector @ claimed) >= self.novel_cosine for claimed in self.vectors)
