"""The lifecycle's calls: observe chat messages, extract facts, short-term facts and
consolidation (memman/lifecycle/observe.py, shortterm.py, consolidate.py).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from typing import Any

import sqlalchemy as sa

from memman.api.arguments import all_or_scope, check_count, id_scope
from memman.api.parts import Parts
from memman.errors import InvalidInputError, NotFoundError
from memman.lifecycle import buffer, consolidate, idle, observe, shortterm, turn
from memman.lifecycle.consolidation_report import ConsolidationReport
from memman.lifecycle.idle import SessionExtraction
from memman.lifecycle.observe import ObserveResult
from memman.lifecycle.shortterm import ShortTermFact, ShortTermHit
from memman.models import UpdateResult
from memman.scope import Scope, check_encodable, check_id
from memman.write.candidate import Candidate, check_metadata
from memman.write.decide import Decided
from memman.write.writepath import Also


class LifecycleCalls(Parts):
    """From chat sessions to short-term and long-term memories, and their upkeep."""

    def observe(
        self,
        messages: list[dict[str, Any]],
        *,
        user_id: str,
        session_id: str,
        agent_id: str | None = None,
        metadata: dict[str, Any] | None = None,
    ) -> ObserveResult:
        """Buffer chat messages durably; extract facts once the session's cooldown passed.

        A session belongs to its scope: another user's messages under the same session id are
        neither counted, extracted nor reported here. `metadata` (checked as update_memory's)
        is kept with the messages: every fact extracted from them carries it, whichever
        flush, flush_idle or consolidate extracts them (as update_memory's: an ADD stores it,
        an UPDATE or NOOP keeps the memory's own), short-term facts too (as
        remember_short_term's).
        """
        scope = Scope(user_id, agent_id)
        buffer.buffer(
            self.store,
            scope,
            session_id,
            messages,
            self.clock(),
            max_chars=self.settings.max_message_chars,
            metadata=check_metadata(metadata, self.settings),
        )
        if not buffer.due(
            self.store,
            session_id,
            scope,
            now=self.clock(),
            cooldown_s=self.settings.extract_cooldown_s,
        ):
            return ObserveResult(
                buffered=buffer.waiting_count(self.store, session_id, scope),
                offline=self._llm_client is None,
            )
        return self._flush(session_id, scope)

    def _write_found_fact(
        self,
        fact: str,
        scope: Scope,
        source: str,
        category: str | None,
        importance: float | None,
        also: Also = None,
        metadata: dict[str, Any] | None = None,
    ) -> UpdateResult:
        """A fact extraction or promotion found: validated and decided like update_memory's.

        `also` runs in the transaction that applies or parks it (promotion marks its
        short-term row there); `metadata`, a promoted fact's own.
        """
        candidate = self._candidate(fact, scope, source, metadata, category, importance)
        return self._writes.process(candidate, also=also)

    def _write_found_facts(
        self,
        scope: Scope,
        found: list[observe.Found],
        marks: list[observe.Mark],
        told: list[Decided] | None = None,
    ) -> list[UpdateResult | InvalidInputError]:
        """Facts one extraction batch found, with the decisions the one call made (`told`),
        else through update_many's path (so their ambiguous ones share one decision call); a
        fact refused as input is returned as its error. Each fact's mark runs in the
        transaction that writes it."""
        refused: list[InvalidInputError | None] = []  # None: a candidate, decided below
        candidates: list[Candidate] = []
        decided: list[Decided] = []  # told's, of the candidates
        alsos: dict[int, Also] = {}
        for number, (fact, mark) in enumerate(zip(found, marks, strict=True)):
            try:
                candidates.append(
                    self._candidate(
                        fact.content,
                        scope,
                        fact.source,
                        fact.metadata,
                        fact.category,
                        fact.importance,
                        observed_at=fact.observed_at,
                        subject=fact.subject,
                        attribute=fact.attribute,
                    )
                )
            except InvalidInputError as error:
                refused.append(error)
                continue
            if told is not None:
                decided.append(told[number])
            if mark is not None:
                alsos[len(candidates) - 1] = mark
            refused.append(None)
        if told is not None:
            written = self._writes.apply_told(scope, candidates, decided, alsos)
        else:
            size = self.settings.batch_chunk_size
            written = self._writes.batch(scope, candidates, size, alsos=alsos)
        results = iter(written)
        return [next(results) if error is None else error for error in refused]

    def _ask_turn(self, scope: Scope, rows: list[sa.Row]) -> observe.Turn:
        """The one call for a batch of messages (lifecycle/turn.py), shown the memories its
        user messages touch; DecisionError when it gives no usable answer."""
        assert self._llm_client is not None
        shown = self._writes.shown_for(scope, [row.content for row in rows if row.role == "user"])
        return turn.ask_turn(self._llm_client, rows, shown, self.settings, self.clock().date())

    def flush(
        self, session_id: str, *, user_id: str | None = None, agent_id: str | None = None
    ) -> ObserveResult:
        """Extract the scope's buffered messages of a session now, whatever the cooldown.

        user_id will be required: without it, every user's messages under that session id
        are extracted and reported together.
        """
        scope = id_scope("flush", user_id, agent_id)
        check_id("session_id", session_id)
        return self._flush(session_id, scope)

    def flush_idle(
        self, *, user_id: str | None = None, agent_id: str | None = None
    ) -> list[SessionExtraction]:
        """Extract every session whose newest buffered message waited extract_cooldown_s.

        For a chat that ended: nobody observes that session again, so its cooldown would
        never be checked. One scope (every user's if neither id is given); each session's
        messages of other scopes are left alone. A failed extraction (`result.error`) leaves its
        messages buffered, as flush() does. consolidate() does this first, too.
        """
        return idle.extract_idle(
            self.store,
            all_or_scope(user_id, agent_id),
            now=self.clock(),
            cooldown_s=self.settings.extract_cooldown_s,
            extract=self._flush,
        )

    def _flush(self, session_id: str, only: Scope | None) -> ObserveResult:
        """Extract the session's buffered messages (of the scope `only`, if given)."""
        return observe.extract(
            self.store,
            session_id,
            write_facts=self._write_found_facts,
            remember=lambda found, scope, also: self._remember(
                found.content,
                scope,
                session_id,
                found.category,
                found.importance,
                found.source,
                also,
                metadata=found.metadata,
            ),
            client=self._llm_client,
            settings=self.settings,
            now=self.clock(),
            leases=self._leases,
            only=only,
            ask_turn=self._ask_turn if self._one_call else None,
        )

    @property
    def _one_call(self) -> bool:
        """Extraction decides its facts in the same call (llm_turn_calls "one"): only when an
        LLM both extracts and decides (decider "offline" decides without one)."""
        one = self.settings.llm_turn_calls == "one"
        return one and self._llm_client is not None and not self._writes.offline

    def remember_short_term(
        self,
        fact: str,
        *,
        user_id: str,
        session_id: str,
        agent_id: str | None = None,
        category: str | None = None,
        importance: float = 5.0,
        source: str | None = None,
        metadata: dict[str, Any] | None = None,
    ) -> ShortTermFact:
        """Keep a transient fact until its category's TTL; seen again, its expiry renews.

        Validated like update_memory's facts (extracted ones too); category, importance and
        metadata are handed on at promotion. Seen again, the fact keeps its first metadata
        unless this call's is non-empty (then that replaces it).
        """
        scope = Scope(user_id, agent_id)
        return self._remember(
            fact, scope, session_id, category, importance, source, metadata=metadata
        )

    def _remember(
        self,
        fact: str,
        scope: Scope,
        session_id: str,
        category: str | None,
        importance: float,
        source: str | None,
        also: Also = None,
        *,
        metadata: dict[str, Any] | None = None,
    ) -> ShortTermFact:
        """remember_short_term's work; `also` runs first in the transaction that writes the
        fact (an extraction checks there that the user was not erased meanwhile)."""
        candidate = self._candidate(fact, scope, source, metadata, category, importance)
        check_id("session_id", session_id)

        def transaction(conn: sa.Connection) -> ShortTermFact:
            if also is not None:
                also(conn)
            return shortterm.remember(
                self.store,
                conn,
                candidate.scope,
                candidate.content,
                session_id=session_id,
                category=candidate.category,
                importance=importance if candidate.importance is None else candidate.importance,
                source=candidate.source,
                settings=self.settings,
                now=self.clock(),
                metadata=candidate.metadata,
            )

        return self.store.write(transaction, scope=candidate.scope)

    def short_term(
        self, *, user_id: str | None = None, agent_id: str | None = None, unexpired: bool = False
    ) -> list[ShortTermFact]:
        """Active short-term facts, oldest first (every user's if neither id is given);
        `unexpired`: only those not past their TTL now (consolidate expires the others)."""
        scope = all_or_scope(user_id, agent_id)
        with self.store.read() as conn:
            facts = shortterm.active(self.store, conn, scope)
        now = self.clock()
        return [fact for fact in facts if fact.live(now)] if unexpired else facts

    def get_short_term(
        self, fact_id: int, *, user_id: str | None = None, agent_id: str | None = None
    ) -> ShortTermFact:
        """The short-term fact with this id, whatever its status; NotFoundError for an
        unknown id and one of another scope alike (without user_id: any user's)."""
        scope = id_scope("get_short_term", user_id, agent_id)
        with self.store.read() as conn:
            return shortterm.by_id(self.store, conn, _fact_id(fact_id), scope)

    def search_short_term(
        self, query: str, *, user_id: str, agent_id: str | None = None, limit: int = 5
    ) -> list[ShortTermHit]:
        """The scope's unexpired short-term facts sharing a word with the query, best first,
        scored on search()'s scale (memman/lifecycle/shortterm.py ranked). Each one returned
        counts a recall towards promotion, as context() counts the ones it shows."""
        if not isinstance(query, str):
            raise InvalidInputError("query must be a string")
        check_encodable("query", query)  # as search: else "no hits", never saying why
        check_count("limit", limit, minimum=1)
        scope, now = Scope(user_id, agent_id), self.clock()
        with self.store.read() as conn:
            hits = shortterm.ranked(
                self.store, conn, scope, query, settings=self.settings, now=now
            )[:limit]
        if hits:
            ids = [hit.fact.id for hit in hits]
            spacing = dt.timedelta(hours=self.settings.promote_recall_spacing_hours)
            self.store.try_write(
                lambda conn: shortterm.note_recalled(
                    self.store, conn, scope, ids, now=now, spacing=spacing
                ),
                "counting short-term recalls",
                scope=scope,
            )
        return hits

    def delete_short_term(
        self,
        fact_id: int,
        *,
        user_id: str,
        agent_id: str | None = None,
        reason: str = "deleted by the user",
    ) -> ShortTermFact:
        """Retire an active short-term fact now (status 'deleted'; the row stays), with an
        audit event as expiry has; NotFoundError if the scope has no active fact with this
        id. The fact as it was."""
        scope = Scope(user_id, agent_id)
        fact_id = _fact_id(fact_id)

        def transaction(conn: sa.Connection) -> ShortTermFact:
            fact = shortterm.by_id(self.store, conn, fact_id, scope)
            if fact.status != "active":
                raise NotFoundError(f"no active short-term fact with id {fact_id}")
            shortterm.retire(self.store, conn, scope, fact, reason, now=self.clock())
            return fact

        return self.store.write(transaction, scope=scope)

    def consolidate(
        self,
        *,
        user_id: str | None = None,
        agent_id: str | None = None,
        dry_run: bool = False,
        max_ops: int = 200,
        progress: Callable[[str, int, int], None] | None = None,
    ) -> ConsolidationReport:
        """Extract idle sessions, expire, promote, merge near-duplicates and decay; see
        memman/lifecycle/consolidate.py.

        Sessions idle for extract_cooldown_s are extracted first, one op each (see
        flush_idle); `report.extracted_sessions` / `extracted_messages` count them (a dry run
        lists them in `report.extractions` without extracting).

        With an LLM configured, ambiguous near-duplicate clusters get one merge call each
        (counted in max_ops); a dry run never calls it. `progress(phase, done, total)` is
        called while merging (the CLI draws a bar with it).
        """
        check_count("max_ops", max_ops, minimum=0)
        return consolidate.consolidate(
            self.store,
            all_or_scope(user_id, agent_id),
            settings=self.settings,
            now=self.clock(),
            dry_run=dry_run,
            max_ops=max_ops,
            promote=self._write_found_fact,
            extract=self._flush,
            client=self._llm_client,
            embedder=self.embedder,
            progress=progress,
        )


def _fact_id(value: object) -> int:
    """A short-term fact's id, or NotFoundError: no row has an id that is no positive
    64-bit integer (the database would refuse to compare one)."""
    if isinstance(value, bool) or not isinstance(value, int) or not 0 < value < 2**63:
        raise NotFoundError(f"no short-term fact with id {value!r}")
    return value
