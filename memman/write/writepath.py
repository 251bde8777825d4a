"""The one write path: candidate -> hash tier -> retrieve -> route -> decide -> apply -> event.

Every long-term write (update_memory, update_many, retry_pending, promotion, extraction)
arrives here as a validated `Candidate`. The cheap tiers and the offline decider run inside
one write transaction; an LLM decision is made outside any transaction (it can take seconds)
and re-checked when applied. Embeddings are computed before a transaction starts, so a slow
or failing model never holds the write lock, and a failure parks the fact instead of losing it.
update_many's chunks are walked by the ChunkWalk mixin (memman/write/chunkwalk.py); decisions
that came with their facts from one extraction call are applied by Told (memman/write/told.py).
"""

from __future__ import annotations

import datetime as dt
import logging
from collections.abc import Callable
from typing import TypeVar

import numpy as np
import sqlalchemy as sa

from memman.config import Settings
from memman.errors import DecisionError, EmbeddingError
from memman.language.reader import READER
from memman.models import Memory, Op, Tier, UpdateResult
from memman.scope import Scope
from memman.semantic.embed import Embedder, cosine_thresholds
from memman.semantic.vectors import VectorSearch
from memman.storage.store import Store
from memman.timestamps import stamp
from memman.write.apply import StaleDecision, apply_decision, park
from memman.write.candidate import Candidate
from memman.write.chunkwalk import Also, ChunkWalk, Embedded
from memman.write.decide import Decided, Decider, Decision, OfflineDecider, decide_all
from memman.write.holders import with_other_side
from memman.write.meaning import kindred, topic_by_meaning
from memman.write.pertinent import pertinent, sharing_topic_words
from memman.write.replaced import with_replacing
from memman.write.retrieval import (
    Retrieved,
    hybrid_candidates,
    lexical_candidates,
    semantic_candidates,
)
from memman.write.route import Route, RouteKind, Thresholds, route, similarity_scores
from memman.write.shown import rank_by_rank, shown_union, user_profile
from memman.write.supersede import route_by_topic
from memman.write.told import Told

log = logging.getLogger(__name__)

# How often an LLM decision is re-made because the memories it was about changed meanwhile.
MAX_STALE_RETRIES = 3

Outcome = TypeVar("Outcome", UpdateResult, UpdateResult | Route)


class WritePath(ChunkWalk, Told):
    """Decides and applies candidates for one store with the manager's decider and embedder."""

    def __init__(
        self,
        store: Store,
        settings: Settings,
        *,
        decider: Decider,
        embedder: Embedder | None,
        vectors: VectorSearch,
        clock: Callable[[], dt.datetime],
    ):
        self.store = store
        self.settings = settings
        self.decider = decider
        self.embedder = embedder
        self.vectors = vectors
        self.clock = clock

    @property
    def offline(self) -> bool:
        """True when ambiguous cases are settled without an LLM."""
        return isinstance(self.decider, OfflineDecider)

    def _now(self) -> str:
        return stamp(self.clock())

    def _embed(self, texts: list[str]) -> list[Embedded]:
        """One batched embedding call for these texts (Nones when no embedder is configured).

        A failure is returned in place of every vector, not raised: the facts are parked.
        """
        if self.embedder is None:
            return [None] * len(texts)
        try:
            return list(self.embedder.embed(texts))
        except EmbeddingError as error:
            log.warning("embedding failed, parking facts that need a vector: %s", error)
            return [error] * len(texts)

    def _retrieve(
        self, conn: sa.Connection, candidate: Candidate, vector: np.ndarray | None
    ) -> tuple[list[Retrieved], Thresholds | None]:
        """Memories that share words (or meaning, with an embedder) with the candidate, and
        the cosine thresholds when the embedder's cosines are to be used."""
        if self.embedder is None or vector is None:
            retrieved = lexical_candidates(
                self.store, conn, candidate.scope, candidate.content, self.settings.top_k
            )
            return retrieved, None
        retrieved = hybrid_candidates(
            self.store,
            conn,
            candidate.scope,
            candidate.content,
            self.settings.top_k,
            index=self.vectors,
            model=self.embedder.name,
            vector=vector,
        )
        cosine = cosine_thresholds(self.settings, self.embedder.name)
        return retrieved, Thresholds("cosine", *cosine)

    def _route(
        self, conn: sa.Connection, candidate: Candidate, vector: np.ndarray | None
    ) -> Route | tuple[Decision, dict]:
        """Candidates by topic and by words, then routing: a decision settled by topic (with
        the audit scores), or the Route of the word-based router.

        The decider sees the union of the memories with the candidate's subject and attribute
        and the retrieved ones (replaced.py), less those known to be about something else.
        """
        retrieved, cosine = self._retrieve(conn, candidate, vector)
        retrieved, replacing = with_replacing(self.store, conn, candidate, retrieved)
        topic = candidate.topic
        same = self._about(conn, candidate.scope, topic and (topic.subject, topic.attribute))
        near = kindred(topic)  # "retired" settles a job memory too (holders.py)
        other_side = self._about(conn, candidate.scope, near)
        same = with_other_side(topic, same, other_side)
        topical = route_by_topic(
            candidate,
            same,
            [r.memory for r in retrieved],
            single_valued=frozenset(self.settings.single_valued_attributes),
            by_meaning=cosine is not None,
            replacing=replacing,
        )
        settled = topical.decision
        if settled is not None and (self.offline or self._certain(settled)):
            scores = {m.id: {"topic": 1.0} for m in topical.same_topic}
            return self._whole(candidate, settled), scores | similarity_scores(retrieved)
        related = [r for r in retrieved if r.memory.id not in topical.other_topics]
        shown = {r.memory.id for r in related}
        tokens = READER.content_tokens(candidate.content)
        # The attribute the fact is nearest to by meaning when the extractor reads none
        # (memman/write/meaning.py): its memories are shown to the decider, never settled on.
        if near is None and vector is not None and self.embedder is not None:
            near = topic_by_meaning(topic, vector, self.embedder.name)
            other_side = self._about(conn, candidate.scope, near)
        known = {m.id for m in same}
        nearby = [m for m in other_side if m.id not in known]
        apart = topical.other_values  # the cosine's to judge, if retrieval found them
        same_topic = [m for m in topical.same_topic if m.id not in apart] + nearby
        about_it = [
            Retrieved(
                m, bm25=None, jaccard=READER.jaccard(tokens, READER.content_tokens(m.content))
            )
            for m in same_topic
            if m.id not in shown
        ]
        compared = pertinent(candidate, related + about_it, cosine, {m.id for m in nearby}, apart)
        routed = route(
            candidate.content,
            compared,
            noop_jaccard=self.settings.noop_jaccard,
            novel_jaccard=self.settings.novel_jaccard,
            cosine=cosine,
        )
        same_ids = {m.id for m in same_topic} & {r.memory.id for r in compared}
        if routed.kind is RouteKind.NOVEL and same_ids:
            # Below the word thresholds, but about the same thing: the decider must see it.
            reason = f"{len(same_ids)} memories with the same subject and attribute"
            shown_same = [r for r in compared if r.memory.id in same_ids]
            routed = Route(RouteKind.AMBIGUOUS, reason, shown_same)
        elif routed.kind is RouteKind.NOVEL and len(related) < len(retrieved):
            reason = f"{routed.reason}; {len(retrieved) - len(related)} about other topics"
            routed = Route(RouteKind.NOVEL, reason)
        if self.offline:
            return routed
        proposed = [] if settled is None or settled.target is None else [settled.target]
        # A verb's fallback topic names no attribute ("I used to own a boat" / "I used to have
        # a cat"): its memories come by words or meaning, like any other.
        named = topic is not None and not READER.is_verb_topic(topic.attribute)
        nearest = sorted(  # the most alike in words first, as the router orders its related
            same_topic if named else nearby,
            key=lambda m: READER.jaccard(tokens, READER.content_tokens(m.content)),
            reverse=True,
        )
        return self._for_reader(conn, candidate, vector, routed, [*proposed, *nearest])

    def _for_reader(
        self,
        conn: sa.Connection,
        candidate: Candidate,
        vector: np.ndarray | None,
        routed: Route,
        about_it: list[Memory],
    ) -> Route:
        """With an LLM: the DUPLICATE the router found, else an AMBIGUOUS route showing the
        decider the union of every signal's candidates (write/shown.py); NOVEL only when the
        scope holds nothing to show."""
        if routed.kind is RouteKind.DUPLICATE:
            return routed
        memories = self._shown(conn, candidate.scope, [(candidate.content, vector)], about_it)
        if not memories:
            return Route(RouteKind.NOVEL, routed.reason)  # nothing any signal or profile shows
        reason = f"{len(memories)} memories shown to the decider ({routed.reason})"
        near = frozenset(r.memory.id for r in routed.related) | {m.id for m in about_it}
        return Route(RouteKind.AMBIGUOUS, reason, memories, routed.measure, near)

    def _shown(
        self,
        conn: sa.Connection,
        scope: Scope,
        texts: list[tuple[str, Embedded]],
        about_it: list[Memory],
    ) -> list[Retrieved]:
        """What a decision is shown (write/shown.py) for these texts (a candidate's, or the
        user's messages of one extraction batch) with their vectors: `about_it` first, then
        each signal's memories, rank by rank over the texts, then the profile; none when no
        signal nor the profile shows anything."""
        k = self.settings.top_k
        # Each signal's own bar, and no other's: by words, a memory sharing a word that names
        # what the text is about, not only "User", "I'm" or "love" (write/pertinent.py); by
        # meaning, the top_k nearest whatever their cosine: a fact sharing no word with what
        # it replaces scores low ("User drinks black coffee" / "User quit caffeine and sticks
        # to herbal tea"), and a bar at the novel cosine (MiniLM 0.5) cut the replaced memory
        # shown from 0.95 to 0.90 on a dev set (benchmarks/RESULTS.md, "Routing (issue 27)").
        words = [lexical_candidates(self.store, conn, scope, text, k) for text, _ in texts]
        by_words = [
            sharing_topic_words(text, [r for r in found if r.jaccard > 0])
            for (text, _), found in zip(texts, words, strict=True)
        ]
        by_meaning = [
            semantic_candidates(
                self.store,
                conn,
                scope,
                text,
                k,
                index=self.vectors,
                model=self.embedder.name,
                vector=vector,
            )
            for text, vector in texts
            if self.embedder is not None and isinstance(vector, np.ndarray)
        ]
        limit = self.settings.decision_memories
        single = self.settings.single_valued_attributes
        memories = shown_union(
            " ".join(text for text, _ in texts),
            first=about_it,
            by_words=rank_by_rank(by_words),
            by_meaning=rank_by_rank(by_meaning),
            profile=user_profile(self.store, conn, scope, single, limit),
            limit=limit,
        )
        if not memories:
            return []
        # The call is made: retrieval's other top_k by words are shown too, last ("I go to St
        # Mark's church" shares only "go" with "I started going to a mosque now").
        seen = {r.memory.id for r in memories}
        rest = [r for r in rank_by_rank(words) if r.memory.id not in seen]
        return memories + rest[: max(0, limit - len(memories))]

    def _certain(self, decision: Decision) -> bool:
        """With an LLM, whether a topic rule's decision stands without it: a restatement
        (NOOP) only. A replacement or a retraction the rule reads is a proposal: the model
        decides it, shown the memory the rule picked first beside every other memory that
        may hold the old value. Measured from outside (issue 27), rules settled alone ended
        a memory other than the one meant (a take-back, a second job) and left a second
        memory of the old value active, which one decision naming both (`also`) fixes; and
        with the profile in every decision the call is made for nearly every fact anyway."""
        return decision.op is Op.NOOP

    def _whole(self, candidate: Candidate, decision: Decision) -> Decision:
        """Offline, a topic rule replaces or retracts a memory only when it states nothing
        else (language/clauses.py): "I live in Leeds and work as a nurse" is not ended
        whole by a move, the job would be lost. Such a fact is kept beside it."""
        target = decision.target
        if decision.op not in (Op.UPDATE, Op.DELETE) or target is None:
            return decision
        topic = candidate.topic
        if topic is None or not READER.states_other_facts(
            target.content, (topic.subject, topic.attribute)
        ):
            return decision
        why = (
            f"{decision.reason}; but memory {target.id} states other facts too, so the fact"
            " is kept beside it rather than replacing it whole"
        )
        return Decision(Op.ADD, why, decision.tier, about=decision.about)

    def _about(
        self, conn: sa.Connection, scope: Scope, topic: tuple[str, str] | None
    ) -> list[Memory]:
        """The scope's newest active memories about (subject, attribute); none without one."""
        if topic is None:
            return []
        return self.store.active_by_topic(conn, scope, *topic, self.settings.top_k)

    def _settle(
        self,
        conn: sa.Connection,
        candidate: Candidate,
        pending_id: int | None = None,
        vector: Embedded = None,
        *,
        absent: bool = False,
        told: bool = False,
    ) -> UpdateResult | Route:
        """Inside a write transaction: settle the candidate by the cheap tiers if possible.

        Returns the applied result, or the ambiguous Route when an LLM has to decide.
        `absent` says the store holds no active memory with the candidate's hash (checked for
        update_many's whole chunk at once). `told`: the LLM has decided already (the one-call
        extraction, write/told.py), so only what the cheap tiers settle for certain is applied
        here (the same text, a near-copy, a restatement the topic tier reads); a NOVEL route is
        returned like an AMBIGUOUS one, the model having seen more than this fact's words. When
        embedding failed, the hash tier may still settle an exact repeat (it needs no vector
        and decides the same with or without one); anything else is parked, because routing
        without the vector would decide differently from the configured semantic tier.
        """
        existing = (
            None
            if absent
            else self.store.active_by_hash(conn, candidate.scope, candidate.content_hash)
        )
        if existing is not None:
            decision = Decision(
                Op.NOOP, "same normalised text as an existing memory", Tier.HASH, target=existing
            )
            return self._apply(conn, candidate, decision, None, pending_id, vector=None)
        if isinstance(vector, EmbeddingError):
            return self._park(conn, candidate, vector, pending_id)
        routed = self._route(conn, candidate, vector)
        if isinstance(routed, tuple):
            decision, scores = routed
            return self._apply(conn, candidate, decision, scores, pending_id, vector)
        if routed.kind is RouteKind.DUPLICATE:
            assert routed.target is not None
            tier = Tier.SEMANTIC if routed.measure == "cosine" else Tier.LEXICAL
            decision = Decision(Op.NOOP, routed.reason, tier, target=routed.target.memory)
        elif routed.kind is RouteKind.NOVEL and not told:
            decision = Decision(Op.ADD, routed.reason, Tier.NOVEL)
        elif self.offline:
            decision = self.decider.decide(candidate, routed.related, today=self.clock().date())
        else:
            return routed
        return self._apply(conn, candidate, decision, routed.scores(), pending_id, vector)

    def process(
        self,
        candidate: Candidate,
        pending_id: int | None = None,
        vector: Embedded = None,
        also: Also = None,
    ) -> UpdateResult:
        """Decide and apply one candidate; an undecidable one is parked, never dropped.

        An LLM decision is re-made (up to MAX_STALE_RETRIES times) when the memories it was
        about changed while the model answered. `vector` is the candidate's embedding when the
        caller already has it; `pending_id` is the parked row a retry settles; `also` runs in
        the transaction that applies or parks the fact (promotion marks its short-term row
        there, so a crash can never leave one done without the other).
        """

        write = self._writer(also, candidate.scope)
        if vector is None:
            (vector,) = self._embed([candidate.content])  # before the write transaction
        for _ in range(MAX_STALE_RETRIES):
            outcome = write(lambda conn: self._settle(conn, candidate, pending_id, vector))
            if isinstance(outcome, UpdateResult):
                return outcome
            assert isinstance(outcome, Route), "only the chunk path holds an ADD back"
            (decided,) = decide_all(
                self.decider, [(candidate, outcome.related)], today=self.clock().date()
            )
            try:
                return self._apply_or_park(candidate, outcome, decided, vector, pending_id, write)
            except StaleDecision as stale:
                log.info("memory %s changed while the LLM decided; deciding again", stale)
        error = DecisionError(
            f"related memories kept changing during {MAX_STALE_RETRIES} decisions"
        )
        return write(lambda conn: self._park(conn, candidate, error, pending_id))

    def _writer(self, also: Also, scope: Scope) -> Callable[[Callable[..., Outcome]], Outcome]:
        """store.write of the scope (`also` writes its rows only), with `also` run in the same
        transaction when a fact is written."""

        def write(step: Callable[[sa.Connection], Outcome]) -> Outcome:
            def both(conn: sa.Connection) -> Outcome:
                outcome = step(conn)
                if also is not None and isinstance(outcome, UpdateResult):
                    also(conn)
                return outcome

            return self.store.write(both, scope=scope)

        return write

    def _apply_or_park(
        self,
        candidate: Candidate,
        route: Route,
        decided: Decided,
        vector: Embedded,
        pending_id: int | None,
        write: Callable[[Callable[[sa.Connection], UpdateResult]], UpdateResult],
    ) -> UpdateResult:
        """Apply a decision made outside any transaction, or park the fact when there is none
        (or its new text cannot be embedded). Raises StaleDecision when the memories it is
        about changed meanwhile."""
        scores = route.scores()
        try:
            if isinstance(decided, DecisionError):
                raise decided
            update_vector = self._update_vector(candidate, decided)
        except DecisionError as error:  # EmbeddingError included
            log.warning("no decision, parking the fact: %s", error)
            return write(
                lambda conn, error=error: self._park(conn, candidate, error, pending_id, scores)
            )
        return write(
            lambda conn: self._apply_decided(
                conn, candidate, decided, scores, pending_id, vector, update_vector
            )
        )

    def _update_vector(self, candidate: Candidate, decision: Decision) -> np.ndarray | None:
        """An UPDATE's new text, embedded outside the transaction (raises EmbeddingError).

        None when nothing new is stored: the candidate's own vector serves an UPDATE to the
        candidate's text.
        """
        if self.embedder is None or decision.op is not Op.UPDATE:
            return None
        if decision.content is None or decision.content == candidate.content:
            return None
        return self.embedder.embed([decision.content])[0]

    def _park(
        self,
        conn: sa.Connection,
        candidate: Candidate,
        error: DecisionError,
        pending_id: int | None,
        scores: dict | None = None,
    ) -> UpdateResult:
        """Keep the fact in `pending` with the error; the audit event names the failed model."""
        embedding = isinstance(error, EmbeddingError) and self.embedder is not None
        return park(
            self.store,
            conn,
            candidate,
            error,
            now=self._now(),
            model=self.embedder.name if embedding else self.settings.llm_model,
            scores=scores,
            pending_id=pending_id,
        )

    def _apply_decided(
        self,
        conn: sa.Connection,
        candidate: Candidate,
        decision: Decision,
        scores: dict,
        pending_id: int | None,
        vector: Embedded,
        update_vector: np.ndarray | None,
    ) -> UpdateResult:
        if decision.op is Op.ADD:
            # Another writer may have stored the same text while the LLM was thinking.
            twin = self.store.active_by_hash(conn, candidate.scope, candidate.content_hash)
            if twin is not None:
                decision = Decision(
                    Op.NOOP, "same normalised text stored meanwhile", Tier.HASH, target=twin
                )
        return self._apply(conn, candidate, decision, scores, pending_id, vector, update_vector)

    def _apply(
        self,
        conn: sa.Connection,
        candidate: Candidate,
        decision: Decision,
        scores: dict | None,
        pending_id: int | None,
        vector: Embedded,
        update_vector: np.ndarray | None = None,
    ) -> UpdateResult:
        """apply_decision with this path's store, clock and embedder."""
        return apply_decision(
            self.store,
            conn,
            candidate,
            decision,
            now=self._now(),
            scores=scores,
            pending_id=pending_id,
            embedder=self.embedder,
            vector=vector,
            update_vector=update_vector,
        )
