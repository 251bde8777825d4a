"""Failed extraction batches: counted from their audit events, backed off, and a message that
keeps failing sent alone, so one bad message never holds a session's others back.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

import sqlalchemy as sa

from memman.config import Settings
from memman.errors import DecisionError
from memman.lifecycle.buffer import rows_by_scope
from memman.llm.client import LLMClient
from memman.scope import Scope
from memman.storage.store import Store
from memman.timestamps import stamp
from memman.write.commit import record_event

EXTRACT_TEMPLATE = "extract_facts.j2"
TURN_TEMPLATE = "extract_and_decide.j2"  # the one call per batch (lifecycle/turn.py)


# The slowest retry pace of a failing extraction: backoff doubles per failure up to this.
MAX_BACKOFF_S = 3600.0


# -- failed extraction batches ------------------------------------------------------------
# A failed batch leaves an audit event (op PENDING, no candidate, prompt extract_facts.j2,
# source "extraction:<message ids>"): the events table is where the tries are counted, so a
# restart does not forget them. A message's failures are the failed batches it was in.


@dataclass(frozen=True)
class Failures:
    count: int
    last: dt.datetime


def past_failures(store: Store, scope: Scope) -> dict[int, Failures]:
    """Message id -> its failed extraction tries in this scope (only messages that failed)."""
    with store.read() as conn:
        rows = store.extraction_failures(conn, scope, EXTRACT_TEMPLATE)
    found: dict[int, Failures] = {}
    for source, created_at in rows:
        at = dt.datetime.fromisoformat(created_at)
        for text in source.removeprefix("extraction:").split(","):
            before = found.get(int(text))
            found[int(text)] = Failures(
                (before.count if before else 0) + 1, max(at, before.last) if before else at
            )
    return found


def singled_out(failures: dict[int, Failures], settings: Settings) -> set[int]:
    """Messages in extract_max_tries failed batches: each goes alone, its failure its own."""
    return {i for i, f in failures.items() if f.count >= settings.extract_max_tries}


def backing_off(
    batch: list[sa.Row], failures: dict[int, Failures], settings: Settings, now: dt.datetime
) -> str | None:
    """Why the batch is not sent yet (it failed too recently), or None to send it."""
    seen = [failures[r.id] for r in batch if r.id in failures]
    if not seen:
        return None
    count = max(f.count for f in seen)
    last = max(f.last for f in seen)
    wait = min(settings.extract_retry_backoff_s * 2 ** (count - 1), MAX_BACKOFF_S)
    ready = last + dt.timedelta(seconds=wait)
    if now >= ready:
        return None
    return (
        f"extraction of messages {batch[0].id}-{batch[-1].id} failed {count} times;"
        f" backing off until {stamp(ready)}"
    )


def note_failure(
    conn: sa.Connection,
    store: Store,
    scope: Scope,
    batch: list[sa.Row],
    failure: DecisionError,
    client: LLMClient,
    now: dt.datetime,
    *,
    template: str = EXTRACT_TEMPLATE,
) -> None:
    """The PENDING event of a failed extraction; LeaseLostError (nothing written) if the
    user was erased while the LLM was asked: the event would outlive the erasure.

    `template` TURN_TEMPLATE: the combined call failed and the batch is extracted and
    decided apart (two calls) right after; the event says so, and is not one of the failed
    tries past_failures counts (those are extract_facts.j2's)."""
    store.check_buffered(conn, scope, [row.id for row in batch])
    ids = ",".join(str(row.id) for row in batch)
    then = (
        "stay buffered"
        if template == EXTRACT_TEMPLATE
        else "are extracted and decided apart (llm_turn_calls two)"
    )
    record_event(
        store,
        conn,
        scope,
        memory_id=None,
        op="PENDING",
        tier="pending",
        candidate=None,
        reason=f"extraction failed, messages {ids} {then}: {failure}",
        model=client.model,
        prompt_template=template,
        attempts=failure.attempts,
        tokens=failure.usage.get("total_tokens"),
        error=str(failure),
        source=f"extraction:{ids}",
        created_at=stamp(now),
    )


def stuck_messages(store: Store, settings: Settings, scope: Scope | None = None) -> int:
    """Buffered messages that failed extraction extract_max_tries times (memman stats)."""
    with store.read() as conn:
        rows = store.unextracted_messages(conn)
    by_scope = rows_by_scope(rows)
    if scope is not None:
        by_scope = {scope: by_scope.get(scope, [])}
    stuck = 0
    for where, waiting in by_scope.items():
        alone = singled_out(past_failures(store, where), settings)
        stuck += sum(1 for row in waiting if row.id in alone)
    return stuck


def batches(rows: list[sa.Row], max_chars: int, alone: set[int]) -> list[list[sa.Row]]:
    """Consecutive messages with the same metadata (the facts of a batch carry its
    messages' metadata), each batch within max_chars (a longer message goes alone).

    Messages in `alone` (failed extraction extract_max_tries times) go alone too: the
    batches around one are not held back by it, and its own prompt is as small as it can be.
    """
    batches: list[list[sa.Row]] = []
    size = 0
    for row in rows:
        single = row.id in alone
        if (
            not batches
            or single
            or batches[-1][-1].id in alone
            or batches[-1][-1].metadata != row.metadata
            or (size + len(row.content) > max_chars)
        ):
            batches.append([])
            size = 0
        batches[-1].append(row)
        size += len(row.content)
    return batches
