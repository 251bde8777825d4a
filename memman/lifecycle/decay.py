"""Consolidation's decay phase: unused memories lose confidence day by day, and are archived
below archive_below; protected ones never decay.
"""

from __future__ import annotations

import datetime as dt

import sqlalchemy as sa

from memman.config import Settings
from memman.lifecycle.consolidation_report import (
    Budget,
    Change,
    lifecycle_event,
)
from memman.lifecycle.merge import is_protected
from memman.models import Op
from memman.scope import Scope
from memman.storage.changes import ChangeSet, NewConfidence
from memman.storage.store import Store
from memman.timestamps import stamp as to_stamp
from memman.write.commit import commit


def decayed(confidence: float, days: float, settings: Settings) -> float:
    """confidence x (1 - rate)^days, never under the floor (nor above where it started)."""
    return max(settings.decay_floor, confidence * (1 - settings.decay_rate) ** days)


def decay(
    store: Store,
    scope: Scope,
    settings: Settings,
    now: dt.datetime,
    dry_run: bool,
    budget: Budget,
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
        store.write(
            lambda conn: _apply_decay(conn, store, scope, changes, to_stamp(now)), scope=scope
        )
    return changes


def _apply_decay(
    conn: sa.Connection, store: Store, scope: Scope, changes: list[Change], stamp: str
) -> None:
    change_sets = []
    for c in changes:
        assert c.confidence_after is not None  # decay changes carry both confidences
        event = lifecycle_event(
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
        archive = c.action == "archive"
        row = NewConfidence(c.target, c.confidence_after, stamp, archive)
        change_sets.append(ChangeSet(event, (row,)))
    commit(store, conn, scope, change_sets)
