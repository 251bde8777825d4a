"""consolidate(): expire, promote, merge near-duplicates, decay. One run, bounded by max_ops.

1. Short-term facts past their expiry become 'expired' (the row stays; an audit event says so).
2. Short-term facts seen in >= promote_min_sessions sessions, or put into at least
   promote_min_recalls context blocks, are promoted through update_memory (source
   "promotion", with their category and importance): promotion never bypasses the decision
   path. Expiry wins: a fact past its TTL is no longer true, so it is not promoted.
3. Near-duplicate long-term memories are found by blocking through the candidate retriever
   (each memory's top-k lexical neighbours, never all pairs), clustered with union-find, and
   a cluster merges only if its members are *mutually* near-identical: a chain A~B~C with
   A!~C is not one fact. The representative (highest confidence, then access count, then
   newest) stays; the others become 'superseded' with `superseded_by` in their metadata
   (recoverable with restore). Offline, near-identical means the router's DUPLICATE test.
4. Decay: confidence x (1 - rate)^days since max(last access, last decay), floor
   decay_floor, at most once per calendar day per memory; under archive_below -> 'archived'.

Protected memories (category in protected_categories, or confidence >= protected_confidence)
are never merged or decayed. dry_run plans exactly the same changes and writes nothing.
Every change is an audit event with tier 'lifecycle' and source "consolidation".
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Callable
from itertools import combinations
from typing import Literal

import sqlalchemy as sa
from pydantic import BaseModel, ConfigDict, Field

from memman import shortterm
from memman.config import Settings
from memman.models import Memory, Op, Status, Tier, UpdateResult
from memman.retrieval import lexical_candidates
from memman.store import Scope, Store
from memman.text import content_tokens, jaccard, polarity_or_number_differs

SOURCE = "consolidation"
PAGE = 1000

# update_memory(fact, scope, source, category, importance) as MemoryManager provides it.
Promote = Callable[[str, Scope, str, str | None, float], UpdateResult]

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


class ConsolidationReport(BaseModel):
    model_config = ConfigDict(frozen=True)

    dry_run: bool
    changes: list[Change]
    rejected_clusters: list[list[str]] = Field(default_factory=list)  # not mutually similar
    truncated: bool = False  # max_ops reached before everything was planned

    def count(self, action: Action) -> int:
        return sum(1 for c in self.changes if c.action == action)


def _stamp(moment: dt.datetime) -> str:
    return moment.astimezone(dt.UTC).isoformat(timespec="milliseconds")


def is_protected(memory_category: str | None, confidence: float, settings: Settings) -> bool:
    return (
        memory_category in settings.protected_categories
        or confidence >= settings.protected_confidence
    )


def _scopes(conn: sa.Connection, scope: Scope | None) -> list[Scope]:
    if scope is not None:
        return [scope]
    rows = conn.execute(
        sa.text(
            "SELECT user_id, agent_id FROM long_term UNION SELECT user_id, agent_id"
            " FROM short_term ORDER BY 1, 2"
        )
    ).all()
    return [Scope(u, a or None) for u, a in rows]


def _same_fact(a: Memory, b: Memory) -> bool:
    return not polarity_or_number_differs(a.content, b.content)


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
) -> ConsolidationReport:
    budget = _Budget(max_ops)
    changes: list[Change] = []
    rejected: list[list[str]] = []
    with store.read() as conn:
        scopes = _scopes(conn, scope)
    for each in scopes:
        changes += _expire_and_promote(store, each, settings, now, dry_run, budget, promote)
        merged, refused = _merge(store, each, settings, now, dry_run, budget)
        changes += merged
        rejected += refused
        # Planned merges are skipped by decay, so a dry run plans what a real run does.
        gone = {i for c in merged for i in c.related}
        changes += _decay(store, each, settings, now, dry_run, budget, gone)
    return ConsolidationReport(
        dry_run=dry_run, changes=changes, rejected_clusters=rejected, truncated=budget.truncated
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
        facts = shortterm.active(conn, scope)
    stamp = _stamp(now)
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
                    shortterm.set_status(conn, fact.id, "expired", now)
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
            detail = f"seen in {len(fact.sessions)} sessions, recalled {fact.recall_count} times"
            if not dry_run:
                result = promote(fact.content, scope, "promotion", fact.category, fact.importance)
                store.write(
                    lambda conn, fact=fact: shortterm.set_status(conn, fact.id, "promoted", now)
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


def _find(parent: dict[str, str], x: str) -> str:
    while parent[x] != x:
        parent[x] = parent[parent[x]]
        x = parent[x]
    return x


def _merge(
    store: Store, scope: Scope, settings: Settings, now: dt.datetime, dry_run: bool, budget: _Budget
) -> tuple[list[Change], list[list[str]]]:
    """Block by lexical neighbours, union near-identical pairs, merge mutually similar clusters."""
    threshold = settings.noop_jaccard
    memories: dict[str, Memory] = {}
    parent: dict[str, str] = {}
    with store.read() as conn:
        offset = 0
        while page := store.list(conn, scope, limit=PAGE, offset=offset):
            offset += len(page)
            for m in page:
                if is_protected(m.category, m.confidence, settings):
                    continue
                memories[m.id] = m
                parent.setdefault(m.id, m.id)
                for r in lexical_candidates(store, conn, scope, m.content, settings.top_k):
                    other = r.memory
                    if (
                        other.id == m.id
                        or r.jaccard < threshold
                        or is_protected(other.category, other.confidence, settings)
                        or not _same_fact(m, other)
                    ):
                        continue
                    memories[other.id] = other
                    parent.setdefault(other.id, other.id)
                    parent[_find(parent, other.id)] = _find(parent, m.id)
    clusters: dict[str, list[Memory]] = {}
    for memory_id in parent:
        clusters.setdefault(_find(parent, memory_id), []).append(memories[memory_id])
    changes, rejected = [], []
    stamp = _stamp(now)
    for members in clusters.values():
        if len(members) < 2:
            continue
        tokens = {m.id: content_tokens(m.content) for m in members}
        if any(
            jaccard(tokens[a.id], tokens[b.id]) < threshold or not _same_fact(a, b)
            for a, b in combinations(members, 2)
        ):
            rejected.append(sorted(m.id for m in members))
            continue
        if not budget.take():
            break
        rep = max(members, key=lambda m: (m.confidence, m.access_count, m.updated_at))
        others = [m for m in members if m.id != rep.id]
        changes.append(
            Change(
                action="merge",
                user_id=scope.user_id,
                agent_id=scope.agent_id,
                target=rep.id,
                content=rep.content,
                detail=f"{len(others)} near-identical memories superseded by this one",
                related=[m.id for m in others],
            )
        )
        if not dry_run:
            store.write(
                lambda conn, rep=rep, others=others: _supersede(
                    conn, store, scope, rep, others, stamp
                )
            )
    return changes, rejected


def _supersede(
    conn: sa.Connection, store: Store, scope: Scope, rep: Memory, others: list[Memory], stamp: str
) -> None:
    lt = store.long_term
    for m in others:
        current = store.get(conn, m.id)
        if current.status is not Status.ACTIVE:  # changed since planning: leave it
            continue
        metadata = {**current.metadata, "superseded_by": rep.id}
        conn.execute(
            lt.update()
            .where(lt.c.id == m.id)
            .values(status=Status.SUPERSEDED.value, updated_at=stamp, metadata=json.dumps(metadata))
        )
        _event(
            conn,
            store,
            scope,
            memory_id=m.id,
            op=Op.UPDATE.value,
            candidate=rep.content,
            content_before=m.content,
            content_after=rep.content,
            reason=f"near-duplicate of memory {rep.id}; superseded by it (restore to undo)",
            scores={"representative": rep.id},
            created_at=stamp,
        )


_DECAY_SQL = sa.text(
    "SELECT id, content, category, confidence, updated_at, last_accessed_at, decayed_at"
    " FROM long_term WHERE user_id = :u AND agent_id = :a AND status = 'active' ORDER BY pk"
)


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
        rows = conn.execute(_DECAY_SQL, {"u": scope.user_id, "a": scope.agent_key}).all()
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
        store.write(lambda conn: _apply_decay(conn, store, scope, changes, _stamp(now)))
    return changes


def _apply_decay(
    conn: sa.Connection, store: Store, scope: Scope, changes: list[Change], stamp: str
) -> None:
    lt = store.long_term
    for c in changes:
        values: dict[str, object] = {"confidence": c.confidence_after, "decayed_at": stamp}
        if c.action == "archive":
            values.update(status=Status.ARCHIVED.value, updated_at=stamp)
        conn.execute(lt.update().where(lt.c.id == c.target).values(**values))
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
