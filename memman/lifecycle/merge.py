"""Consolidation's merge phase: the near-duplicate clusters lifecycle/near_duplicates.py finds
are merged by wording, or by one LLM call per ambiguous cluster (`ask_llm`, prompts/merge.j2:
MERGE with one text keeping every detail, or KEEP_SEPARATE), or kept separate; each change is
an event.
"""

from __future__ import annotations

import json
import logging
from typing import Annotated, ClassVar, Literal

import numpy as np
import sqlalchemy as sa
from pydantic import BaseModel, Field, field_validator, model_validator

from memman.config import Settings
from memman.errors import DecisionError
from memman.language.reader import READER
from memman.lifecycle.consolidation_report import AmbiguousCluster, Change, Outcome
from memman.lifecycle.near_duplicates import Row, cluster_key, find_clusters, representative
from memman.lifecycle.run import SOURCE, Run, lifecycle_event
from memman.llm.client import CallInfo, LLMClient, answer_budget
from memman.llm.per_call import with_values
from memman.llm.prompts import render
from memman.models import Op
from memman.storage.changes import ChangeSet, NewText, NewVector, Superseded
from memman.write.candidate import model_reason, model_text
from memman.write.commit import commit, record_event

log = logging.getLogger(__name__)

MERGE_TEMPLATE = "merge.j2"

MERGE_BATCH = 500  # same-wording merges per write transaction


def merge_near_duplicates(
    run: Run,
) -> tuple[list[Change], list[list[str]], list[AmbiguousCluster]]:
    """Merge same-wording groups; ask the LLM about ambiguous clusters (near_duplicates.py)."""
    store, scope = run.store, run.scope
    with store.read() as conn:
        found = find_clusters(store, conn, scope, run.settings, run.progress)
        decided = _kept_separate(run, conn) if run.client is not None else set()
    changes: list[Change] = []
    planned: list[tuple[Row, list[Row]]] = []
    for group in found.same_wording:
        if not run.budget.take():
            break
        rep = representative(group)
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
    if not run.dry_run:
        # Many small merges per transaction: one commit each would dominate at 100k memories.
        for start in range(0, len(planned), MERGE_BATCH):
            batch = planned[start : start + MERGE_BATCH]

            def apply(conn: sa.Connection, batch=batch) -> None:
                ids = [r.id for rep, others in batch for r in (rep, *others)]
                current = store.active_contents(conn, scope, ids)  # one read for the batch
                for rep, others in batch:
                    if _unchanged(current, [rep, *others]):  # else changed meanwhile: leave it
                        keeper = (rep.id, rep.content)
                        _supersede(conn, run, keeper, others, current, "same wording as")

            store.write(apply, scope=scope)
    # Same-wording members left the clusters' lists already: each shows its representative.
    ambiguous = []
    for done, rows in enumerate(found.ambiguous):
        if run.progress is not None:
            run.progress("ambiguous clusters", done, len(found.ambiguous))
        outcome = _ambiguous(run, rows, decided)
        if outcome is None:
            continue
        cluster, change = outcome
        ambiguous.append(cluster)
        if change is not None:
            changes.append(change)
    if run.progress is not None:
        run.progress("ambiguous clusters", len(found.ambiguous), len(found.ambiguous))
    return changes, found.rejected, ambiguous


def _kept_separate(run: Run, conn: sa.Connection) -> set[str]:
    """Clusters the LLM already judged distinct (unchanged since): not asked again (see
    _record_kept_separate)."""
    verdicts = run.store.kept_separate_scores(conn, run.scope)
    return {key for scores in verdicts if (key := json.loads(scores).get("kept_separate"))}


def _ambiguous(
    run: Run, rows: list[Row], decided: set[str]
) -> tuple[AmbiguousCluster, Change | None] | None:
    """One ambiguous cluster: listed offline and in a dry run, else one LLM call."""
    store, scope = run.store, run.scope
    key = cluster_key(rows)

    def listed(outcome: Outcome, detail: str) -> AmbiguousCluster:
        return AmbiguousCluster(
            user_id=scope.user_id,
            agent_id=scope.agent_id,
            ids=[r.id for r in rows],
            contents=[r.content for r in rows],
            outcome=outcome,
            detail=detail,
        )

    if run.client is None:
        return listed("no_llm", "no LLM configured: only same-wording memories merge"), None
    if key in decided:
        return None
    if not run.budget.take():
        return None
    if run.dry_run:
        return listed("would_ask_llm", "a real run asks the LLM (dry run: no call)"), None
    try:
        answer, call = ask_llm(run.client, rows, run.settings)
        vector = None
        if isinstance(answer, MergeOp) and run.embedder is not None:
            vector = run.embedder.embed([answer.content.strip()])[0]
    except DecisionError as error:
        log.warning("merge of cluster %s failed, left as it is: %s", key, error)
        return listed("failed", str(error)), None
    if isinstance(answer, KeepSeparateOp):
        kept = store.write(
            lambda conn: _record_kept_separate(conn, run, rows, key, answer, call), scope=scope
        )
        if not kept:
            return listed("changed", "a memory of the cluster changed meanwhile"), None
        return listed("kept_separate", answer.reason), None
    keeper = store.write(
        lambda conn: _apply_llm_merge(conn, run, rows, answer, call, vector), scope=scope
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


def _unchanged(current: dict[str, tuple[str, str]], rows: list[Row]) -> bool:
    """Every planned memory is still active with the text it was planned on."""
    return all(r.id in current and current[r.id][0] == r.content for r in rows)


def _supersede(
    conn: sa.Connection,
    run: Run,
    keeper: tuple[str, str],
    others: list[Row],
    current: dict[str, tuple[str, str]],
    why: str,
) -> None:
    """Others become superseded by keeper (id, content): restorable, with an event each."""
    keeper_id, keeper_content = keeper
    stamp = run.stamp
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
    commit(run.store, conn, run.scope, changes)


def _record_kept_separate(
    conn: sa.Connection, run: Run, rows: list[Row], key: str, answer: KeepSeparateOp, call: CallInfo
) -> bool:
    """The verdict's event, unless a memory of the cluster changed or is gone since it was
    shown to the LLM (False): erased by forget meanwhile, the event would quote its text."""
    store, scope = run.store, run.scope
    if not _unchanged(store.active_contents(conn, scope, [r.id for r in rows]), rows):
        return False
    rep = representative(rows)
    event = lifecycle_event(
        memory_id=rep.id,
        op=Op.NOOP.value,
        candidate=None,
        content_before=rep.content,
        content_after=rep.content,
        reason=f"the LLM kept {len(rows)} related memories separate: {answer.reason}",
        scores={"kept_separate": key, "cluster": [r.id for r in rows]},
        created_at=run.stamp,
        **call.audit_columns(),
    )
    record_event(store, conn, scope, **event)
    return True


def _apply_llm_merge(
    conn: sa.Connection,
    run: Run,
    rows: list[Row],
    answer: MergeOp,
    call: CallInfo,
    vector: np.ndarray | None,
) -> str | None:
    """The merged text goes to the representative, the others are superseded by it.

    If the merged text is already an active memory (text is unique per scope), that one is
    kept as it is and the rest of the cluster is superseded by it. Returns the kept memory's
    id, or None when a memory of the cluster changed since it was shown to the LLM.
    """
    store, scope, stamp, embedder = run.store, run.scope, run.stamp, run.embedder
    current = store.active_contents(conn, scope, [r.id for r in rows])
    if not _unchanged(current, rows):
        return None
    content = answer.content.strip()
    rep = representative(rows)
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
    _supersede(conn, run, keeper, others, current, "merged by the LLM into")
    return keeper[0]


# -- the LLM call ---------------------------------------------------------------------------

_REASON = Field(description="One short sentence: why.")


class MergeOp(BaseModel):
    """The memories shown all state one fact; `content` states it once with every detail."""

    op: Literal["MERGE"]
    content: str = Field(description="The one merged memory, keeping every detail of each.")
    reason: str = _REASON
    _reason = field_validator("reason")(model_reason)


class KeepSeparateOp(BaseModel):
    """The memories shown are distinct facts, or contradict each other: change nothing."""

    op: Literal["KEEP_SEPARATE"]
    reason: str = _REASON
    _reason = field_validator("reason")(model_reason)


class MergeDecision(BaseModel):
    """Whether the memories shown are one fact, and if so its merged text."""

    decision: Annotated[MergeOp | KeepSeparateOp, Field(discriminator="op")]

    # Filled per call by `for_cluster`: the texts shown and the longest acceptable merge.
    shown: ClassVar[list[str]] = []
    max_chars: ClassVar[int] = 4000

    @model_validator(mode="after")
    def _check_against_shown(self) -> MergeDecision:
        # The messages below are read by the model: instructor sends them back as the re-ask.
        d = self.decision
        if not isinstance(d, MergeOp):
            return self
        given = d.content.strip()
        if not given:
            raise ValueError("MERGE content is empty: write the one merged memory text.")
        if len(given) > self.max_chars:
            raise ValueError(
                f"MERGE content is too long ({len(given)} characters); a merge restates the"
                f" memories shown once, in at most {self.max_chars} characters."
            )
        # The checks a user's fact passes (no NUL, not only invisible characters, ...).
        content = model_text("MERGE content", d.content, self.max_chars)
        first = self.shown[0]
        differs = READER.negations(content) != READER.negations(first)
        if differs or READER.numbers(content) != READER.numbers(first):
            raise ValueError(
                "MERGE content changes a number or a negation the memories shown agree on;"
                " keep them exactly, or answer KEEP_SEPARATE."
            )
        return self

    @classmethod
    def for_cluster(cls, shown: list[str], max_chars: int) -> type[MergeDecision]:
        return with_values(cls, shown=shown, max_chars=max_chars)


def ask_llm(
    client: LLMClient, rows: list[Row], settings: Settings
) -> tuple[MergeOp | KeepSeparateOp, CallInfo]:
    """One structured call for one ambiguous cluster; raises DecisionError on failure."""
    prompt = render(
        MERGE_TEMPLATE,
        {
            "memories": [
                {"id": i, "content": r.content, "date": r.updated_at[:10]}
                for i, r in enumerate(rows, start=1)
            ]
        },
        directory=settings.prompts_dir,
    )
    # A merge restates the cluster once: never longer than all its texts together.
    limit = min(settings.max_fact_chars, sum(len(r.content) for r in rows))
    model = MergeDecision.for_cluster([r.content for r in rows], limit)
    answer, call = client.structured_call(prompt, model, max_tokens=answer_budget(settings, limit))
    decision = answer.decision
    if call.fallback is not None:  # the audit reason records the one mode fallback
        decision = decision.model_copy(update={"reason": call.noted(decision.reason)})
    return decision, call
