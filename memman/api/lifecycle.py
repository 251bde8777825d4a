"""The lifecycle's calls (MemoryManager.observe, flush, flush_idle, consolidate): chat messages
buffered, facts extracted from them into short-term and long-term memory, and consolidation
(memman/lifecycle/observe.py, turn.py, idle.py, consolidate.py).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import sqlalchemy as sa

from memman.api.arguments import all_or_scope, check_count
from memman.api.core import Core
from memman.api.short_term import ShortTermMemory
from memman.errors import InvalidInputError
from memman.lifecycle import buffer, consolidate, idle, observe, turn
from memman.lifecycle.consolidation_report import ConsolidationReport
from memman.lifecycle.idle import SessionExtraction
from memman.lifecycle.observe import Found, Mark, ObserveResult, Turn
from memman.models import UpdateResult
from memman.scope import Scope, check_id
from memman.write.candidate import Candidate, check_metadata
from memman.write.decide import Decided
from memman.write.writepath import Also


class Lifecycle:
    """From chat sessions to short-term and long-term memories, and their consolidation.

    Extracted facts go through the write path as update_memory's do, transient ones into
    `short_term` (the manager's ShortTermMemory).
    """

    def __init__(self, core: Core, short_term: ShortTermMemory):
        self.core = core
        self.short_term = short_term

    def observe(
        self,
        messages: list[dict[str, Any]],
        scope: Scope,
        session_id: str,
        metadata: dict[str, Any] | None,
    ) -> ObserveResult:
        core = self.core
        buffer.buffer(
            core.store,
            scope,
            session_id,
            messages,
            core.clock(),
            max_chars=core.settings.max_message_chars,
            metadata=check_metadata(metadata, core.settings),
        )
        if not buffer.due(
            core.store,
            session_id,
            scope,
            now=core.clock(),
            cooldown_s=core.settings.extract_cooldown_s,
        ):
            return ObserveResult(
                buffered=buffer.waiting_count(core.store, session_id, scope),
                offline=core.llm_client is None,
            )
        return self.extract(session_id, scope)

    def flush(self, session_id: str, scope: Scope | None) -> ObserveResult:
        check_id("session_id", session_id)
        return self.extract(session_id, scope)

    def flush_idle(self, user_id: str | None, agent_id: str | None) -> list[SessionExtraction]:
        return idle.extract_idle(
            self.core.store,
            all_or_scope(user_id, agent_id),
            now=self.core.clock(),
            cooldown_s=self.core.settings.extract_cooldown_s,
            extract=self.extract,
        )

    def consolidate(
        self,
        user_id: str | None,
        agent_id: str | None,
        *,
        dry_run: bool,
        max_ops: int,
        progress: Callable[[str, int, int], None] | None,
    ) -> ConsolidationReport:
        check_count("max_ops", max_ops, minimum=0)
        core = self.core
        return consolidate.consolidate(
            core.store,
            all_or_scope(user_id, agent_id),
            settings=core.settings,
            now=core.clock(),
            dry_run=dry_run,
            max_ops=max_ops,
            promote=self._write_found_fact,
            extract=self.extract,
            client=core.llm_client,
            embedder=core.embedder,
            progress=progress,
        )

    # -- extraction ----------------------------------------------------------------------------

    def extract(self, session_id: str, only: Scope | None) -> ObserveResult:
        """Extract the session's buffered messages (of the scope `only`, if given)."""
        core = self.core
        return observe.extract(
            core.store,
            session_id,
            write_facts=self._write_found_facts,
            remember=lambda found, scope, also: self.short_term.remember(
                found.content,
                scope,
                session_id,
                found.category,
                found.importance,
                found.source,
                also,
                metadata=found.metadata,
            ),
            client=core.llm_client,
            settings=core.settings,
            now=core.clock(),
            leases=core.leases,
            only=only,
            ask_turn=self._ask_turn if self._one_call else None,
        )

    @property
    def _one_call(self) -> bool:
        """Extraction decides its facts in the same call (llm_turn_calls "one"): only when an
        LLM both extracts and decides (decider "offline" decides without one)."""
        core = self.core
        one = core.settings.llm_turn_calls == "one"
        return one and core.llm_client is not None and not core.write_path.offline

    def _ask_turn(self, scope: Scope, rows: list[sa.Row]) -> Turn:
        """The one call for a batch of messages (lifecycle/turn.py), shown the memories its
        user messages touch; DecisionError when it gives no usable answer."""
        core = self.core
        assert core.llm_client is not None
        users = [row.content for row in rows if row.role == "user"]
        shown = core.write_path.shown_for(scope, users)
        return turn.ask_turn(core.llm_client, rows, shown, core.settings, core.clock().date())

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
        candidate = self.core.candidate(fact, scope, source, metadata, category, importance)
        return self.core.write_path.process(candidate, also=also)

    def _write_found_facts(
        self,
        scope: Scope,
        found: list[Found],
        marks: list[Mark],
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
                    self.core.candidate(
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
        write_path = self.core.write_path
        if told is not None:
            written = write_path.apply_told(scope, candidates, decided, alsos)
        else:
            size = self.core.settings.batch_chunk_size
            written = write_path.batch(scope, candidates, size, alsos=alsos)
        results = iter(written)
        return [next(results) if error is None else error for error in refused]
