"""Apply a decision to the store, inside the caller's write transaction, with its audit event.

The row change, its FTS entry (kept in sync by triggers) and the event commit together or
not at all. A decision made outside the transaction (by the LLM) is re-checked here against
the current rows: if a memory it acts on changed meanwhile, `StaleDecision` is raised and
the caller decides again rather than applying a decision about text that no longer exists.
"""

from __future__ import annotations

import numpy as np
import sqlalchemy as sa

from memman.errors import DecisionError, EmbeddingError, NotFoundError
from memman.language.reader import READER
from memman.models import Memory, Op, Status, Tier, UpdateResult
from memman.semantic.embed import Embedder
from memman.storage.changes import (
    ChangeSet,
    NewMemory,
    NewMetadata,
    NewSalience,
    NewStatus,
    NewText,
    NewVector,
    Reinforced,
    RowChange,
)
from memman.storage.memories import memory_row, new_memory_id
from memman.storage.store import Store
from memman.write.candidate import DEFAULT_IMPORTANCE, Candidate
from memman.write.commit import commit, record_event
from memman.write.decide import Decision

# The events columns an LLM call fills (llm.Call.audit_columns); None for the cheap tiers.
AUDIT_COLUMNS = ("model", "prompt_template", "prompt_hash", "latency_ms", "attempts", "tokens")


class StaleDecision(Exception):
    """The memory a decision acts on changed between deciding and applying."""


def _older_news(candidate: Candidate, target: Memory, decision: Decision) -> Decision:
    """An UPDATE or DELETE of a statement made before the memory's current one: a NOOP that
    only records it in the memory's history. Importing old chat history, or retrying a fact
    parked for a day, must not overwrite a value the user stated later."""
    stated = target.observed_at
    if decision.op not in (Op.UPDATE, Op.DELETE) or not stated or not candidate.observed_at:
        return decision
    if candidate.observed_at >= stated:
        return decision
    why = (
        f"{decision.reason}; but it was stated at {candidate.observed_at[:16]}, before the"
        f" memory's current text ({stated[:16]}): kept in its history, not applied"
    )
    return Decision(Op.NOOP, why, decision.tier, target=target, call=decision.call, reinforce=False)


def _topic_columns(
    candidate: Candidate, text: str, told: tuple[str, str] | None = None
) -> dict[str, str | None]:
    """subject and attribute for stored text: the candidate's topic when the text is the
    candidate's (or says nothing the extractor reads), else what the new text is about. Where
    neither is known, or only as the verb fallback ("verb:call" for "User now calls Austin
    home"), `told`: the LLM's labels, or for an UPDATE without them the labels of the memory
    it updates (the decider judged the new text to be about the same thing)."""
    read = READER.about(text) if text != candidate.content else None
    topic = candidate.topic if text == candidate.content else (read or candidate.topic)
    if told is not None and (topic is None or READER.is_verb_topic(topic.attribute)):
        subject, attribute = told
        return {"subject": subject, "attribute": attribute}
    if topic is None:
        return {"subject": None, "attribute": None}
    return {"subject": topic.subject, "attribute": topic.attribute}


def _told(decision: Decision, target: Memory) -> tuple[str, str] | None:
    """The labels an UPDATE's text is given where the reader has none: the LLM's, or those of
    the memory an LLM decision updates. A topic tier's UPDATE keeps what its rule read."""
    if decision.about is not None or decision.tier is not Tier.LLM:
        return decision.about
    if target.subject is None or target.attribute is None:
        return None
    return target.subject, target.attribute


def _current(store: Store, conn: sa.Connection, decided_on: Memory) -> Memory:
    """The memory as it is now; StaleDecision if it changed, or is gone (erased by forget
    or purge while the LLM decided: the fact is decided again, not dropped)."""
    try:
        current = store.get(conn, decided_on.id)
    except NotFoundError as gone:
        raise StaleDecision(decided_on.id) from gone
    if current.status is not Status.ACTIVE or current.content != decided_on.content:
        raise StaleDecision(decided_on.id)
    return current


def _salience(memory: Memory, candidate: Candidate) -> tuple[NewSalience, ...]:
    """A NOOP or UPDATE keeps the stored category (unless it had none) and the higher importance.

    A category names the topic, which a repetition or a correction does not change; taking
    the max means a casual later mention ("importance 3") never lowers a fact first stated as
    vital ("allergic to peanuts", 9), while a fact that turns out to matter more is raised.
    """
    category = candidate.category if memory.category is None else None
    importance = candidate.importance
    if importance is not None and importance <= memory.importance:
        importance = None
    if category is None and importance is None:
        return ()
    return (NewSalience(memory.id, category=category, importance=importance),)


def apply_decision(
    store: Store,
    conn: sa.Connection,
    candidate: Candidate,
    decision: Decision,
    *,
    now: str,
    scores: dict | None = None,
    pending_id: int | None = None,
    embedder: Embedder | None = None,
    vector: np.ndarray | None = None,
    update_vector: np.ndarray | None = None,
) -> UpdateResult:
    """Apply one decision with its event; with an embedder, new text gets its vector too.

    `vector` is the candidate's embedding and `update_vector` that of an UPDATE's new text
    when it differs from the candidate's, both computed by the caller before the transaction:
    no embedding call holds the write lock, and a failed one parks the fact instead of
    failing here.
    """
    scope = candidate.scope
    before: str | None = None
    after: str | None = None
    memory_id: str | None = None
    op = decision.op
    reason = decision.reason

    if op is Op.ADD:
        result = _add(
            store,
            conn,
            candidate,
            decision,
            now=now,
            scores=scores,
            embedder=embedder,
            vector=vector,
        )
        if pending_id is not None:
            store.delete_pending(conn, pending_id)
        return result
    rows: tuple[RowChange, ...] = ()
    new_vector: NewVector | None = None
    if decision.target is not None:  # else a NOOP that names no memory: nothing to change
        target = _current(store, conn, decision.target)
        memory_id, before = target.id, target.content
        decision = _older_news(candidate, target, decision)
        op, reason = decision.op, decision.reason
        kept: Memory | None = target  # the memory holding the text afterwards
        if op is Op.NOOP:
            if decision.reinforce:
                rows = (
                    Reinforced(target, now, candidate.source),
                    *_salience(target, candidate),
                )
            after = before
        elif op is Op.DELETE:
            rows, kept = (NewStatus(target.id, Status.DELETED, now),), None
        elif op is Op.UPDATE:
            assert decision.content is not None
            new_hash = READER.content_hash(decision.content)
            twin = store.active_by_hash(conn, scope, new_hash)
            if twin is not None and twin.id != target.id:
                # The corrected text is already another memory: keep that one, retire this.
                rows = (
                    NewStatus(target.id, Status.SUPERSEDED, now),
                    Reinforced(twin, now, candidate.source),
                    *_salience(twin, candidate),
                )
                reason += (
                    f" (the new text already exists as memory {twin.id}; this one is superseded)"
                )
                after, kept = twin.content, twin
            else:
                rows = (
                    NewText(
                        target,
                        decision.content,
                        new_hash,
                        now,
                        candidate.source,
                        observed_at=candidate.observed_at or now,
                        **_topic_columns(candidate, decision.content, _told(decision, target)),
                    ),
                    *_salience(target, candidate),
                )
                after = decision.content
                if embedder is not None:
                    same = decision.content == candidate.content
                    embedded = vector if same else update_vector
                    assert embedded is not None, "new text is embedded before the transaction"
                    new_vector = NewVector(target.id, embedder.name, embedded)
        if candidate.replace_metadata and kept is not None:
            rows += (NewMetadata(kept.id, candidate.metadata, now),)
            scores = {
                **(scores or {}),
                "metadata": {"before": kept.metadata, "after": candidate.metadata},
            }
            reason += f"; metadata of memory {kept.id} replaced"

    event = {
        "memory_id": memory_id,
        "op": op.value,
        "tier": decision.tier.value,
        "candidate": candidate.content,
        "content_before": before,
        "content_after": after,
        "reason": reason,
        "scores": scores,
        **_audit_columns(decision),
        "source": candidate.source,
        "created_at": now,
    }
    retired = _retired_with(store, conn, candidate, decision, memory_id, now) if op in (
        Op.UPDATE,
        Op.DELETE,
    ) else []
    event_id, *_ = commit(
        store, conn, scope, [ChangeSet(event, rows, new_vector), *(c for _, c in retired)]
    )
    if pending_id is not None:
        store.delete_pending(conn, pending_id)
    return UpdateResult(
        also_retired=[memory.id for memory, _ in retired],
        op=op,
        memory_id=memory_id,
        tier=decision.tier,
        reason=reason,
        event_id=event_id,
        content=after,
        previous_content=before,
        offline=decision.tier is Tier.OFFLINE,
    )


def _retired_with(
    store: Store,
    conn: sa.Connection,
    candidate: Candidate,
    decision: Decision,
    memory_id: str | None,
    now: str,
) -> list[tuple[Memory, ChangeSet]]:
    """The other memories an UPDATE or DELETE ends (Decision.also), each superseded
    (restorable) with an event of its own, so its history says what ended it. StaleDecision
    when one changed while the LLM decided, like the decision's own target."""
    retired = []
    for also in decision.also:
        if also.id == memory_id:
            continue
        current = _current(store, conn, also)
        event = {
            "memory_id": current.id,
            "op": Op.DELETE.value,
            "tier": decision.tier.value,
            "candidate": candidate.content,
            "content_before": current.content,
            "content_after": None,
            "reason": f"out of date with the {decision.op.value} of memory {memory_id}:"
            f" {decision.reason}",
            "scores": None,
            **dict.fromkeys(AUDIT_COLUMNS),
            "source": candidate.source,
            "created_at": now,
        }
        rows = (NewStatus(current.id, Status.SUPERSEDED, now),)
        retired.append((current, ChangeSet(event, rows)))
    return retired


def _audit_columns(decision: Decision) -> dict[str, object]:
    """The events columns of the LLM call behind a decision (all None without one), so every
    event row has the same columns (Store.insert_events writes many in one statement)."""
    if decision.call is not None:
        return decision.call.audit_columns()
    return dict.fromkeys(AUDIT_COLUMNS)


def _add(
    store: Store,
    conn: sa.Connection,
    candidate: Candidate,
    decision: Decision,
    *,
    now: str,
    scores: dict | None,
    embedder: Embedder | None,
    vector: np.ndarray | None,
) -> UpdateResult:
    """Write an ADD decision inside the caller's transaction: the new memory's row, its audit
    event and (with an embedder) its vector, as one change set."""
    row = memory_row(
        memory_id=new_memory_id(),
        content=candidate.content,
        content_hash=candidate.content_hash,
        now=now,
        source=candidate.source,
        metadata=candidate.metadata,
        confidence=candidate.confidence,
        category=candidate.category,
        importance=DEFAULT_IMPORTANCE if candidate.importance is None else candidate.importance,
        observed_at=candidate.observed_at or now,
        **_topic_columns(candidate, candidate.content, decision.about),
    )
    event = {
        "memory_id": row["id"],
        "op": Op.ADD.value,
        "tier": decision.tier.value,
        "candidate": candidate.content,
        "content_before": None,
        "content_after": candidate.content,
        "reason": decision.reason,
        "scores": scores,
        **_audit_columns(decision),
        "source": candidate.source,
        "created_at": now,
    }
    new_vector = None
    if embedder is not None:
        assert vector is not None, "the candidate is embedded before the transaction"
        new_vector = NewVector(row["id"], embedder.name, vector)
    (event_id,) = commit(
        store, conn, candidate.scope, [ChangeSet(event, (NewMemory(row),), new_vector)]
    )
    return UpdateResult(
        op=Op.ADD,
        memory_id=row["id"],
        tier=decision.tier,
        reason=decision.reason,
        event_id=event_id,
        content=candidate.content,
        previous_content=None,
        offline=decision.tier is Tier.OFFLINE,
    )


def park(
    store: Store,
    conn: sa.Connection,
    candidate: Candidate,
    error: DecisionError,
    *,
    now: str,
    model: str | None,
    scores: dict | None = None,
    pending_id: int | None = None,
) -> UpdateResult:
    """The decider or the embedder failed: keep the candidate in `pending`, memory untouched."""
    message = str(error)
    if pending_id is None:
        pending_id = store.insert_pending(
            conn,
            candidate.scope,
            content=candidate.content,
            source=candidate.source,
            metadata=candidate.metadata,
            category=candidate.category,
            importance=candidate.importance,
            observed_at=candidate.observed_at or now,
            **_topic_columns(candidate, candidate.content),
            error=message,
            attempts=1,
            created_at=now,
            updated_at=now,
        )
    else:
        store.note_pending_failure(conn, pending_id, message, now)
    failed = "embedding" if isinstance(error, EmbeddingError) else "decider"
    reason = f"{failed} failed, fact parked as pending #{pending_id}: {message}"
    event_id = record_event(
        store,
        conn,
        candidate.scope,
        memory_id=None,
        op=Op.PENDING.value,
        tier=Tier.PENDING.value,
        candidate=candidate.content,
        reason=reason,
        scores=scores,
        model=model,
        attempts=error.attempts,
        tokens=error.usage.get("total_tokens"),
        error=message,
        source=candidate.source,
        created_at=now,
    )
    return UpdateResult(
        op=Op.PENDING,
        memory_id=None,
        tier=Tier.PENDING,
        reason=reason,
        event_id=event_id,
        pending_id=pending_id,
    )
