"""Consolidation's decay phase: unused memories lose confidence day by day, and are archived
below archive_below; protected ones never decay.
"""

from __future__ import annotations

import datetime as dt

import sqlalchemy as sa

from memman.config import Settings
from memman.lifecycle.consolidation_report import Change
from memman.lifecycle.run import Run, is_protected, lifecycle_event
from memman.models import Op
from memman.storage.changes import ChangeSet, NewConfidence
from memman.write.commit import commit


def decayed(confidence: float, days: float, settings: Settings) -> float:
    """confidence x (1 - rate)^days, never under the floor (nor above where it started)."""
    return max(settings.decay_floor, confidence * (1 - settings.decay_rate) ** days)


def decay(run: Run, superseded: set[str]) -> list[Change]:
    """The scope's decays and archivals, except of the memories in `superseded` (planned
    merges), applied in one transaction unless a dry run."""
    store, scope, settings, now = run.store, run.scope, run.settings, run.now
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
        if not run.budget.take():
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
    if not run.dry_run and changes:
        store.write(lambda conn: _apply_decay(conn, run, changes), scope=scope)
    return changes


def _apply_decay(conn: sa.Connection, run: Run, changes: list[Change]) -> None:
    stamp = run.stamp
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
    commit(run.store, conn, run.scope, change_sets)
