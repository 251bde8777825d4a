"""consolidate(): extract idle sessions, expire, promote, merge near-duplicates, decay. One
run, bounded by max_ops.

0. Sessions whose newest buffered message has waited extract_cooldown_s are extracted
   (observe.idle_sessions; one op each): a user who leaves never calls observe() again, so
   without this their last messages would wait in the buffer for ever. Extraction goes
   through the same path as flush(); a failed one leaves its messages buffered and is
   reported. It runs first, so the later phases see the facts it wrote. A dry run only
   lists the sessions.
1. Short-term facts past their expiry become 'expired' (the row stays; an audit event says so).
2. Short-term facts seen in >= promote_min_sessions sessions, or put into context blocks on
   at least promote_min_recalls occasions (promote_recall_spacing_hours apart), are promoted
   through update_memory (source "promotion", with their category and importance): promotion
   never bypasses the decision path. Expiry wins: a fact past its TTL is no longer true, so
   it is not promoted.
3. Near-duplicate long-term memories (memman/merge.py): memories with the same wording merge
   without an LLM; related ones, found by prefix-filtered blocking through the FTS5 index
   (never all pairs) and clustered with union-find, form ambiguous clusters if *mutually*
   related (a chain A~B~C with A!~C is not one fact). With an LLM, one call per ambiguous
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
import json
import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

import numpy as np
import sqlalchemy as sa
from pydantic import BaseModel, ConfigDict, Field, computed_field

from memman import buffer, merge, observe, shortterm
from memman.config import Settings
from memman.embed import Embedder
from memman.errors import DecisionError
from memman.llm import CallInfo, LLMClient
from memman.merge import Progress, is_protected
from memman.models import Op, Tier, UpdateResult
from memman.observe import ObserveResult, SessionExtraction
from memman.scope import Scope
from memman.store import Store
from memman.text import content_hash
from memman.timestamps import stamp as to_stamp
from memman.topic import about
from memman.vectors import save_vector
from memman.writepath import Also

log = logging.getLogger(__name__)

SOURCE = "consolidation"
MERGE_BATCH = 500  # same-wording merges per write transaction

# update_memory(fact, scope, source, category, importance) as MemoryManager provides it, with
# `also` run in the transaction that applies or parks the fact.
Promote = Callable[[str, Scope, str, str | None, float, Also], UpdateResult]
# flush(session_id) for that scope's messages only, as MemoryManager provides it.
Extract = Callable[[str, Scope], ObserveResult]

Action = Literal["expire", "promote", "merge", "decay", "archive"]


class Change(BaseModel):
    """One change consolidate made (or, in a dry run, would make)."""

    model_config = ConfigDict(frozen=True)

    action: Action
    user_id: str
    agent_id: str | None = None
    target: str  # a memory id, or "short_term:<id>"
    content: str
    detail: str
    related: list[str] = Field(default_factory=list)  # merge: the superseded ids
    confidence_before: float | None = None
    confidence_after: float | None = None


# What became of an ambiguous cluster: merged or kept separate by the LLM; not asked (no LLM
# configured, or a dry run); the call failed, or a member changed meanwhile (left as it is).
Outcome = Literal["merged", "kept_separate", "no_llm", "would_ask_llm", "failed", "changed"]


class AmbiguousCluster(BaseModel):
    """Related memories that may be one fact: only the LLM may merge them."""

    model_config = ConfigDict(frozen=True)

    user_id: str
    agent_id: str | None = None
    ids: list[str]
    contents: list[str]
    outcome: Outcome
    detail: str


class ConsolidationReport(BaseModel):
    model_config = ConfigDict(frozen=True)

    dry_run: bool
    changes: list[Change]
    rejected_clusters: list[list[str]] = Field(default_factory=list)  # not mutually similar
    ambiguous_clusters: list[AmbiguousCluster] = Field(default_factory=list)
    truncated: bool = False  # max_ops reached before everything was planned
    # Idle sessions extracted first (in a dry run: found, not extracted; result None).
    extractions: list[SessionExtraction] = Field(default_factory=list)

    def count(self, action: Action) -> int:
        return sum(1 for c in self.changes if c.action == action)

    @computed_field
    @property
    def extracted_sessions(self) -> int:
        """Idle sessions whose messages were extracted (a dry run: would be)."""
        return sum(1 for e in self.extractions if e.result is None or e.result.extracted_messages)

    @computed_field
    @property
    def extracted_messages(self) -> int:
        """Buffered messages extracted from them (a dry run: waiting to be)."""
        return sum(
            e.session.waiting if e.result is None else e.result.extracted_messages
            for e in self.extractions
        )



@dataclass(frozen=True)
class _Tools:
    client: LLMClient | None
    embedder: Embedder | None
    progress: Progress | None


class _Budget:
    def __init__(self, max_ops: int):
        self.left = max_ops
        self.truncated = False

    def take(self) -> bool:
        if self.left <= 0:
            self.truncated = True
            return False
        self.left -= 1
        return True


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
    budget = _Budget(max_ops)
    tools = _Tools(client, embedder, progress)
    changes: list[Change] = []
    rejected: list[list[str]] = []
    ambiguous: list[AmbiguousCluster] = []
    # Before the scopes are listed: extraction may write a new user's first memories.
    extractions = observe.extract_idle(
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
        changes += _expire_and_promote(store, each, settings, now, dry_run, budget, promote)
        merged, refused, asked = _merge(store, each, settings, now, dry_run, budget, tools)
        changes += merged
        rejected += refused
        ambiguous += asked
        # Planned merges are skipped by decay, so a dry run plans what a real run does.
        gone = {i for c in merged for i in c.related}
        changes += _decay(store, each, settings, now, dry_run, budget, gone)
    return ConsolidationReport(
        dry_run=dry_run,
        changes=changes,
        rejected_clusters=rejected,
        ambiguous_clusters=ambiguous,
        truncated=budget.truncated,
        extractions=extractions,
    )


def _event(conn: sa.Connection, store: Store, scope: Scope, **values: object) -> None:
    store.insert_event(conn, scope, tier=Tier.LIFECYCLE.value, source=SOURCE, **values)


def _expire_and_promote(
    store: Store,
    scope: Scope,
    settings: Settings,
    now: dt.datetime,
    dry_run: bool,
    budget: _Budget,
    promote: Promote,
) -> list[Change]:
    changes = []
    with store.read() as conn:
        facts = shortterm.active(store, conn, scope)
    stamp = to_stamp(now)
    for fact in facts:
        expired = dt.datetime.fromisoformat(fact.expires_at) <= now
        recurring = len(fact.sessions) >= settings.promote_min_sessions
        recalled = fact.recall_count >= settings.promote_min_recalls
        if not (expired or recurring or recalled) or not budget.take():
            continue
        if expired:
            detail = f"expired at {fact.expires_at}"
            change = Change(
                action="expire",
                user_id=scope.user_id,
                agent_id=scope.agent_id,
                target=f"short_term:{fact.id}",
                content=fact.content,
                detail=detail,
            )
            if not dry_run:

                def expire(conn: sa.Connection, fact=fact, detail=detail) -> None:
                    shortterm.set_status(store, conn, scope, fact.id, "expired", now)
                    _event(
                        conn,
                        store,
                        scope,
                        memory_id=None,
                        op=Op.DELETE.value,
                        candidate=fact.content,
                        content_before=fact.content,
                        content_after=None,
                        reason=f"short-term fact {fact.id} {detail}",
                        scores={"short_term_id": fact.id},
                        created_at=stamp,
                    )

                store.write(expire)
        else:
            seen, recalled = len(fact.sessions), fact.recall_count
            detail = f"seen in {seen} sessions, recalled on {recalled} occasions"
            if not dry_run:
                # Marked in the same transaction: a crash never leaves one done without the other.
                result = promote(
                    fact.content,
                    scope,
                    "promotion",
                    fact.category,
                    fact.importance,
                    lambda conn, fact=fact: shortterm.set_status(
                        store, conn, scope, fact.id, "promoted", now
                    ),
                )
                detail += f": update_memory {result.op} {result.memory_id or ''}".rstrip()
            change = Change(
                action="promote",
                user_id=scope.user_id,
                agent_id=scope.agent_id,
                target=f"short_term:{fact.id}",
                content=fact.content,
                detail=detail,
            )
        changes.append(change)
    return changes


def _merge(
    store: Store,
    scope: Scope,
    settings: Settings,
    now: dt.datetime,
    dry_run: bool,
    budget: _Budget,
    tools: _Tools,
) -> tuple[list[Change], list[list[str]], list[AmbiguousCluster]]:
    """Merge same-wording groups; ask the LLM about ambiguous clusters (see memman/merge.py)."""
    with store.read() as conn:
        found = merge.find_clusters(store, conn, scope, settings, tools.progress)
        decided = _kept_separate(store, conn, scope) if tools.client is not None else set()
    stamp = to_stamp(now)
    changes: list[Change] = []
    planned: list[tuple[merge.Row, list[merge.Row]]] = []
    for group in found.same_wording:
        if not budget.take():
            break
        rep = merge.representative(group)
        others = [r for r in group if r.id != rep.id]
        planned.append((rep, others))
        changes.append(
            Change(
                action="merge",
                user_id=scope.user_id,
                agent_id=scope.agent_id,
                target=rep.id,
                content=rep.content,
                detail=f"{len(others)} memories with the same wording superseded by this one",
                related=[r.id for r in others],
            )
        )
    if not dry_run:
        # Many small merges per transaction: one commit each would dominate at 100k memories.
        for start in range(0, len(planned), MERGE_BATCH):
            batch = planned[start : start + MERGE_BATCH]

            def apply(conn: sa.Connection, batch=batch) -> None:
                ids = [r.id for rep, others in batch for r in (rep, *others)]
                current = store.active_contents(conn, scope, ids)  # one read for the batch
                for rep, others in batch:
                    if _unchanged(current, [rep, *others]):  # else changed meanwhile: leave it
                        keeper = (rep.id, rep.content)
                        _supersede(conn, store, scope, keeper, others, current, stamp,
                                   "same wording as")  # fmt: skip

            store.write(apply)
    # Same-wording members left the clusters' lists already: each shows its representative.
    ambiguous = []
    for done, rows in enumerate(found.ambiguous):
        if tools.progress is not None:
            tools.progress("ambiguous clusters", done, len(found.ambiguous))
        outcome = _ambiguous(store, scope, rows, settings, stamp, dry_run, budget, tools, decided)
        if outcome is None:
            continue
        cluster, change = outcome
        ambiguous.append(cluster)
        if change is not None:
            changes.append(change)
    if tools.progress is not None:
        tools.progress("ambiguous clusters", len(found.ambiguous), len(found.ambiguous))
    return changes, found.rejected, ambiguous


def _kept_separate(store: Store, conn: sa.Connection, scope: Scope) -> set[str]:
    """Clusters the LLM already judged distinct (unchanged since): not asked again (see
    _record_kept_separate)."""
    verdicts = store.kept_separate_scores(conn, scope)
    return {key for scores in verdicts if (key := json.loads(scores).get("kept_separate"))}


def _ambiguous(
    store: Store,
    scope: Scope,
    rows: list[merge.Row],
    settings: Settings,
    stamp: str,
    dry_run: bool,
    budget: _Budget,
    tools: _Tools,
    decided: set[str],
) -> tuple[AmbiguousCluster, Change | None] | None:
    """One ambiguous cluster: listed offline and in a dry run, else one LLM call."""
    key = merge.cluster_key(rows)

    def listed(outcome: Outcome, detail: str) -> AmbiguousCluster:
        return AmbiguousCluster(
            user_id=scope.user_id,
            agent_id=scope.agent_id,
            ids=[r.id for r in rows],
            contents=[r.content for r in rows],
            outcome=outcome,
            detail=detail,
        )

    if tools.client is None:
        return listed("no_llm", "no LLM configured: only same-wording memories merge"), None
    if key in decided:
        return None
    if not budget.take():
        return None
    if dry_run:
        return listed("would_ask_llm", "a real run asks the LLM (dry run: no call)"), None
    try:
        answer, call = merge.ask_llm(tools.client, rows, settings)
        vector = None
        if isinstance(answer, merge.MergeOp) and tools.embedder is not None:
            vector = tools.embedder.embed([answer.content.strip()])[0]
    except DecisionError as error:
        log.warning("merge of cluster %s failed, left as it is: %s", key, error)
        return listed("failed", str(error)), None
    if isinstance(answer, merge.KeepSeparateOp):
        store.write(lambda conn: _record_kept_separate(conn, store, scope, rows, key, answer,
                                                         call, stamp))  # fmt: skip
        return listed("kept_separate", answer.reason), None
    keeper = store.write(
        lambda conn: _apply_llm_merge(
            conn, store, scope, rows, answer, call, stamp, tools.embedder, vector
        )
    )
    if keeper is None:
        return listed("changed", "a memory of the cluster changed meanwhile; not merged"), None
    others = [r.id for r in rows if r.id != keeper]
    change = Change(
        action="merge",
        user_id=scope.user_id,
        agent_id=scope.agent_id,
        target=keeper,
        content=answer.content.strip(),
        detail=f"merged by the LLM ({call.model}): {answer.reason}",
        related=others,
    )
    return listed("merged", answer.reason), change


def _unchanged(current: dict[str, tuple[str, str]], rows: list[merge.Row]) -> bool:
    """Every planned memory is still active with the text it was planned on."""
    return all(r.id in current and current[r.id][0] == r.content for r in rows)


def _supersede(
    conn: sa.Connection,
    store: Store,
    scope: Scope,
    keeper: tuple[str, str],
    others: list[merge.Row],
    current: dict[str, tuple[str, str]],
    stamp: str,
    why: str,
) -> None:
    """Others become superseded by keeper (id, content): restorable, with an event each."""
    keeper_id, keeper_content = keeper
    for m in others:
        metadata = {**json.loads(current[m.id][1]), "superseded_by": keeper_id}
        store.supersede(conn, scope, m.id, metadata=metadata, now=stamp)
        _event(
            conn,
            store,
            scope,
            memory_id=m.id,
            op=Op.UPDATE.value,
            candidate=keeper_content,
            content_before=m.content,
            content_after=keeper_content,
            reason=f"{why} memory {keeper_id}; superseded by it (restore to undo)",
            scores={"representative": keeper_id},
            created_at=stamp,
        )


def _record_kept_separate(
    conn: sa.Connection,
    store: Store,
    scope: Scope,
    rows: list[merge.Row],
    key: str,
    answer: merge.KeepSeparateOp,
    call: CallInfo,
    stamp: str,
) -> None:
    rep = merge.representative(rows)
    _event(
        conn,
        store,
        scope,
        memory_id=rep.id,
        op=Op.NOOP.value,
        candidate=None,
        content_before=rep.content,
        content_after=rep.content,
        reason=f"the LLM kept {len(rows)} related memories separate: {answer.reason}",
        scores={"kept_separate": key, "cluster": [r.id for r in rows]},
        created_at=stamp,
        **call.audit_columns(),
    )


def _apply_llm_merge(
    conn: sa.Connection,
    store: Store,
    scope: Scope,
    rows: list[merge.Row],
    answer: merge.MergeOp,
    call: CallInfo,
    stamp: str,
    embedder: Embedder | None,
    vector: np.ndarray | None,
) -> str | None:
    """The merged text goes to the representative, the others are superseded by it.

    If the merged text is already an active memory (text is unique per scope), that one is
    kept as it is and the rest of the cluster is superseded by it. Returns the kept memory's
    id, or None when a memory of the cluster changed since it was shown to the LLM.
    """
    current = store.active_contents(conn, scope, [r.id for r in rows])
    if not _unchanged(current, rows):
        return None
    content = answer.content.strip()
    rep = merge.representative(rows)
    twin = store.active_by_hash(conn, scope, content_hash(content))
    if twin is None:
        keeper = (rep.id, content)
        if content != rep.content:
            topic = about(content)
            store.change_content(
                conn, store.get(conn, rep.id), content=content,
                content_hash=content_hash(content), now=stamp, source=SOURCE,
                subject=topic and topic.subject, attribute=topic and topic.attribute,
            )  # fmt: skip
            if embedder is not None and vector is not None:
                save_vector(conn, rep.id, embedder.name, vector)
        before = rep.content
    else:
        keeper = (twin.id, twin.content)
        before = twin.content
    others = [r for r in rows if r.id != keeper[0]]
    _event(
        conn,
        store,
        scope,
        memory_id=keeper[0],
        op=Op.UPDATE.value if keeper[1] != before else Op.NOOP.value,
        candidate=content,
        content_before=before,
        content_after=keeper[1],
        reason=f"the LLM merged {len(rows)} memories into this one: {answer.reason}",
        scores={"merged": [r.id for r in others]},
        created_at=stamp,
        **call.audit_columns(),
    )
    _supersede(conn, store, scope, keeper, others, current, stamp, "merged by the LLM into")
    return keeper[0]


def decayed(confidence: float, days: float, settings: Settings) -> float:
    """confidence x (1 - rate)^days, never under the floor (nor above where it started)."""
    return max(settings.decay_floor, confidence * (1 - settings.decay_rate) ** days)


def _decay(
    store: Store,
    scope: Scope,
    settings: Settings,
    now: dt.datetime,
    dry_run: bool,
    budget: _Budget,
    superseded: set[str],
) -> list[Change]:
    with store.read() as conn:
        rows = store.decay_rows(conn, scope)
    changes = []
    for row in rows:
        if row.id in superseded or is_protected(row.category, row.confidence, settings):
            continue
        if row.decayed_at and dt.datetime.fromisoformat(row.decayed_at).date() == now.date():
            continue  # at most once a day
        since = max(s for s in (row.updated_at, row.last_accessed_at, row.decayed_at) if s)
        days = (now - dt.datetime.fromisoformat(since)).total_seconds() / 86400
        after = decayed(row.confidence, days, settings)
        if days < 1 or after >= row.confidence:  # less than a day unused: nothing to decay
            continue
        if not budget.take():
            break
        archive = after < settings.archive_below
        changes.append(
            Change(
                action="archive" if archive else "decay",
                user_id=scope.user_id,
                agent_id=scope.agent_id,
                target=row.id,
                content=row.content,
                detail=f"{days:.1f} days since last access",
                confidence_before=row.confidence,
                confidence_after=after,
            )
        )
    if not dry_run and changes:
        store.write(lambda conn: _apply_decay(conn, store, scope, changes, to_stamp(now)))
    return changes


def _apply_decay(
    conn: sa.Connection, store: Store, scope: Scope, changes: list[Change], stamp: str
) -> None:
    for c in changes:
        assert c.confidence_after is not None  # decay changes carry both confidences
        store.set_confidence(
            conn, scope, c.target, c.confidence_after, now=stamp, archive=c.action == "archive"
        )
        _event(
            conn,
            store,
            scope,
            memory_id=c.target,
            op=Op.UPDATE.value,
            candidate=None,
            content_before=c.content,
            content_after=c.content,
            reason=f"{c.action}: confidence {c.confidence_before:.3f} -> "
            f"{c.confidence_after:.3f} ({c.detail})",
            scores={
                "confidence_before": c.confidence_before,
                "confidence_after": c.confidence_after,
            },
            created_at=stamp,
        )
