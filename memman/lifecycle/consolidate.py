"""consolidate(): extract idle sessions, expire, promote, merge near-duplicates, decay. One
run, bounded by max_ops.

0. Sessions whose newest buffered message has waited extract_cooldown_s are extracted
   (idle.idle_sessions; one op each): a user who leaves never calls observe() again, so
   without this their last messages would wait in the buffer for ever. Extraction goes
   through the same path as flush(); a failed one leaves its messages buffered and is
   reported. It runs first, so the later phases see the facts it wrote. A dry run only
   lists the sessions.
1. Short-term facts past their expiry become 'expired' (the row stays; an audit event says so).
2. Short-term facts seen in >= promote_min_sessions sessions, or put into context blocks on
   at least promote_min_recalls occasions (promote_recall_spacing_hours apart), are promoted
   through update_memory (source "promotion", with their category, importance and metadata):
   promotion never bypasses the decision path. Expiry wins: a fact past its TTL is no longer
   true, so it is not promoted.
3. Near-duplicate long-term memories (lifecycle/near_duplicates.py finds them, merge.py
   merges them): memories with the same wording merge without an LLM; related ones, found by
   prefix-filtered blocking through the FTS5 index (never all pairs) and clustered with
   union-find, form ambiguous clusters if *mutually* related (a chain A~B~C with A!~C is not
   one fact). With an LLM, one call per ambiguous
   cluster (prompts/merge.j2) merges it into one text or keeps it separate; offline, and in
   a dry run (no LLM spend), they are only listed. The representative (highest confidence,
   then access count, then newest) stays; the others become 'superseded' with
   `superseded_by` in their metadata (recoverable with restore). An LLM failure leaves the
   cluster as it is and lists it; a "keep separate" verdict is recorded and not asked again
   until a member changes.
4. Decay: confidence x (1 - rate)^days since max(last access, last decay), floor
   decay_floor, at most once per calendar day per memory; under archive_below -> 'archived'.

Protected memories (category in protected_categories, or confidence >= protected_confidence)
are never merged or decayed. dry_run plans exactly the same changes and writes nothing.
Every change is an audit event with tier 'lifecycle' and source "consolidation".
"""

from __future__ import annotations

import datetime as dt
import logging
from collections.abc import Callable
from typing import Any

import sqlalchemy as sa

from memman.config import Settings
from memman.errors import LeaseLostError
from memman.lifecycle import buffer, idle, shortterm
from memman.lifecycle.consolidation_report import (
    Action,
    AmbiguousCluster,
    Change,
    ConsolidationReport,
)
from memman.lifecycle.decay import decay
from memman.lifecycle.merge import merge_near_duplicates
from memman.lifecycle.observe import ObserveResult
from memman.lifecycle.run import Budget, Progress, Run, lifecycle_event
from memman.lifecycle.shortterm import ShortTermFact
from memman.llm.client import LLMClient
from memman.models import Op, UpdateResult
from memman.scope import Scope
from memman.semantic.embed import Embedder
from memman.storage.store import Store
from memman.write.commit import record_event
from memman.write.writepath import Also

log = logging.getLogger(__name__)

# update_memory(fact, scope, source, category, importance, metadata) as MemoryManager provides
# it, with `also` run in the transaction that applies or parks the fact.
Promote = Callable[[str, Scope, str, str | None, float, Also, dict[str, Any]], UpdateResult]
# flush(session_id) for that scope's messages only, as MemoryManager provides it.
Extract = Callable[[str, Scope], ObserveResult]


def consolidate(
    store: Store,
    scope: Scope | None,
    *,
    settings: Settings,
    now: dt.datetime,
    dry_run: bool,
    max_ops: int,
    promote: Promote,
    extract: Extract,
    client: LLMClient | None = None,
    embedder: Embedder | None = None,
    progress: Progress | None = None,
) -> ConsolidationReport:
    """client: the LLM for ambiguous clusters (None: offline); embedder: refreshes the vector
    of a memory whose text a merge changed; progress(phase, done, total) while merging."""
    budget = Budget(max_ops)
    changes: list[Change] = []
    rejected: list[list[str]] = []
    ambiguous: list[AmbiguousCluster] = []
    # Before the scopes are listed: extraction may write a new user's first memories.
    extractions = idle.extract_idle(
        store,
        scope,
        now=now,
        cooldown_s=settings.extract_cooldown_s,
        extract=None if dry_run else extract,
        take=budget.take,
    )
    if not dry_run:  # a scope that never flushes again keeps its extracted messages no longer
        buffer.prune_extracted(store, scope, settings, now)
    if scope is not None:
        scopes = [scope]
    else:
        with store.read() as conn:
            scopes = store.scopes_with_memories(conn)
    for each in scopes:
        run = Run(store, each, settings, now, dry_run, budget, client, embedder, progress)
        changes += _expire_and_promote(run, promote)
        merged, refused, asked = merge_near_duplicates(run)
        changes += merged
        rejected += refused
        ambiguous += asked
        # Planned merges are skipped by decay, so a dry run plans what a real run does.
        gone = {i for c in merged for i in c.related}
        changes += decay(run, gone)
    return ConsolidationReport(
        dry_run=dry_run,
        changes=changes,
        rejected_clusters=rejected,
        ambiguous_clusters=ambiguous,
        truncated=budget.truncated,
        extractions=extractions,
    )


def _expire_and_promote(run: Run, promote: Promote) -> list[Change]:
    changes = []
    with run.store.read() as conn:
        facts = shortterm.active(run.store, conn, run.scope)
    for fact in facts:
        expired = dt.datetime.fromisoformat(fact.expires_at) <= run.now
        recurring = len(fact.sessions) >= run.settings.promote_min_sessions
        recalled = fact.recall_count >= run.settings.promote_min_recalls
        if not (expired or recurring or recalled) or not run.budget.take():
            continue
        try:  # each writes the fact's new status, which finds its row (else: erased)
            change = _expire(run, fact) if expired else _promote(run, fact, promote)
        except LeaseLostError as erased:  # forget() took the user meanwhile
            log.warning("short-term fact %s left: %s", fact.id, erased)
            continue
        changes.append(change)
    return changes


def _expire(run: Run, fact: ShortTermFact) -> Change:
    """A short-term fact past its TTL: expired, with its event."""
    store, scope = run.store, run.scope
    detail = f"expired at {fact.expires_at}"
    if not run.dry_run:

        def expire(conn: sa.Connection) -> None:
            shortterm.set_status(store, conn, scope, fact.id, "expired", run.now)
            event = lifecycle_event(
                memory_id=None,
                op=Op.DELETE.value,
                candidate=fact.content,
                content_before=fact.content,
                content_after=None,
                reason=f"short-term fact {fact.id} {detail}",
                scores={"short_term_id": fact.id},
                created_at=run.stamp,
            )
            record_event(store, conn, scope, **event)

        store.write(expire, scope=scope)
    return _short_term_change("expire", run.scope, fact, detail)


def _promote(run: Run, fact: ShortTermFact, promote: Promote) -> Change:
    """A recurring or recalled short-term fact: through update_memory, marked promoted."""
    store, scope = run.store, run.scope
    seen, recalled = len(fact.sessions), fact.recall_count
    detail = f"seen in {seen} sessions, recalled on {recalled} occasions"
    if not run.dry_run:
        # Marked in the same transaction: a crash never leaves one done without the other.
        result = promote(
            fact.content,
            scope,
            "promotion",
            fact.category,
            fact.importance,
            lambda conn: shortterm.set_status(store, conn, scope, fact.id, "promoted", run.now),
            fact.metadata,
        )
        detail += f": update_memory {result.op} {result.memory_id or ''}".rstrip()
    return _short_term_change("promote", run.scope, fact, detail)


def _short_term_change(action: Action, scope: Scope, fact: ShortTermFact, detail: str) -> Change:
    return Change(
        action=action,
        user_id=scope.user_id,
        agent_id=scope.agent_id,
        target=f"short_term:{fact.id}",
        content=fact.content,
        detail=detail,
    )
