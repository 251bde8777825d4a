"""Consolidation's merge phase: near-duplicate clusters (found by lifecycle/merge.py) merged by
wording, or by one LLM call per ambiguous cluster, or kept separate, each change an event.
"""

from __future__ import annotations

import datetime as dt
import json
import logging

import numpy as np
import sqlalchemy as sa

from memman.config import Settings
from memman.errors import DecisionError
from memman.language.reader import READER
from memman.lifecycle import merge
from memman.lifecycle.consolidation_report import (
    SOURCE,
    AmbiguousCluster,
    Budget,
    Change,
    Outcome,
    Tools,
    lifecycle_event,
)
from memman.llm.client import CallInfo
from memman.models import Op
from memman.scope import Scope
from memman.semantic.embed import Embedder
from memman.storage.changes import ChangeSet, NewText, NewVector, Superseded
from memman.storage.store import Store
from memman.timestamps import stamp as to_stamp
from memman.write.commit import commit, record_event

log = logging.getLogger(__name__)


MERGE_BATCH = 500  # same-wording merges per write transaction


def merge_near_duplicates(
    store: Store,
    scope: Scope,
    settings: Settings,
    now: dt.datetime,
    dry_run: bool,
    budget: Budget,
    tools: Tools,
) -> tuple[list[Change], list[list[str]], list[AmbiguousCluster]]:
    """Merge same-wording groups; ask the LLM about ambiguous clusters (lifecycle/merge.py)."""
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

            store.write(apply, scope=scope)
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
    budget: Budget,
    tools: Tools,
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
        kept = store.write(
            lambda conn: _record_kept_separate(conn, store, scope, rows, key, answer, call, stamp),
            scope=scope,
        )
        if not kept:
            return listed("changed", "a memory of the cluster changed meanwhile"), None
        return listed("kept_separate", answer.reason), None
    keeper = store.write(
        lambda conn: _apply_llm_merge(
            conn, store, scope, rows, answer, call, stamp, tools.embedder, vector
        ),
        scope=scope,
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
    changes = []
    for m in others:
        metadata = {**json.loads(current[m.id][1]), "superseded_by": keeper_id}
        event = lifecycle_event(
            memory_id=m.id,
            op=Op.UPDATE.value,
            candidate=keeper_content,
            content_before=m.content,
            content_after=keeper_content,
            reason=f"{why} memory {keeper_id}; superseded by it (restore to undo)",
            scores={"representative": keeper_id},
            created_at=stamp,
        )
        changes.append(ChangeSet(event, (Superseded(m.id, metadata, stamp),)))
    commit(store, conn, scope, changes)


def _record_kept_separate(
    conn: sa.Connection,
    store: Store,
    scope: Scope,
    rows: list[merge.Row],
    key: str,
    answer: merge.KeepSeparateOp,
    call: CallInfo,
    stamp: str,
) -> bool:
    """The verdict's event, unless a memory of the cluster changed or is gone since it was
    shown to the LLM (False): erased by forget meanwhile, the event would quote its text."""
    if not _unchanged(store.active_contents(conn, scope, [r.id for r in rows]), rows):
        return False
    rep = merge.representative(rows)
    event = lifecycle_event(
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
    record_event(store, conn, scope, **event)
    return True


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
    twin = store.active_by_hash(conn, scope, READER.content_hash(content))
    new_text: tuple[NewText, ...] = ()
    new_vector: NewVector | None = None
    if twin is None:
        keeper = (rep.id, content)
        if content != rep.content:
            topic = READER.about(content)
            new_text = (
                NewText(
                    store.get(conn, rep.id), content, READER.content_hash(content), stamp, SOURCE,
                    subject=topic and topic.subject, attribute=topic and topic.attribute,
                ),
            )  # fmt: skip
            if embedder is not None and vector is not None:
                new_vector = NewVector(rep.id, embedder.name, vector)
        before = rep.content
    else:
        keeper = (twin.id, twin.content)
        before = twin.content
    others = [r for r in rows if r.id != keeper[0]]
    event = lifecycle_event(
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
    commit(store, conn, scope, [ChangeSet(event, new_text, new_vector)])
    _supersede(conn, store, scope, keeper, others, current, stamp, "merged by the LLM into")
    return keeper[0]
