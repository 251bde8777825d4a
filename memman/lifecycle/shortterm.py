"""Short-term memory: transient facts with an expiry, kept apart from long-term memory.

A transient fact ("is at the airport right now") is useful for hours, wrong after. It lives
here until it expires (consolidate records an audit event; the row stays, status 'expired')
or recurs in enough sessions, or is recalled on enough occasions hours apart, to be
promoted to long-term through update_memory. Until then, context() shows the unexpired ones
that share a word with the query in a "right now" part of the block, and counts the showings
as recalls (those within promote_recall_spacing_hours of the last counted one as one).
"""

from __future__ import annotations

import datetime as dt
import json
from dataclasses import dataclass, field
from typing import Any

import sqlalchemy as sa

from memman.config import Settings
from memman.errors import NotFoundError
from memman.language.reader import READER
from memman.lifecycle.blend import blend
from memman.models import Op, Tier
from memman.scope import Scope
from memman.storage.busy import stored
from memman.storage.store import Store
from memman.timestamps import stamp
from memman.write.commit import record_event

# At most this many short-term facts go into one context block: the prompt needs the user's
# current situation, not a log of it.
MAX_RELEVANT = 5
# A fact said again keeps its latest sessions only (at least promote_min_sessions of them):
# the list decides promotion (seen in enough sessions) and names the last session; one fact
# said in 20,000 sessions kept a 189 KB list read and rewritten at every mention (issue 29).
# 32 ids of at most 256 characters stay under 9 KB.
KEEP_SESSIONS = 32


@dataclass(frozen=True)
class ShortTermFact:
    id: int
    user_id: str
    agent_id: str | None
    content: str
    category: str | None
    importance: float
    sessions: list[str]
    status: str
    created_at: str
    expires_at: str
    recall_count: int = 0  # occasions context() put it into a prompt (see note_recalled)
    last_recalled_at: str | None = None  # when the last counted recall was
    updated_at: str | None = None  # the last refresh (seen again) or status change
    source: str | None = None  # where it came from (remember_short_term's source)
    # What the caller gave with it (observe()'s or remember_short_term's metadata), handed on
    # at promotion; {} for none. Not hashed: a fact stays usable as a set member.
    metadata: dict[str, Any] = field(default_factory=dict, hash=False)

    def live(self, now: dt.datetime) -> bool:
        """Active and not past its TTL (consolidate may not have expired it yet)."""
        return self.status == "active" and self.expires_at > stamp(now)


@dataclass(frozen=True)
class ShortTermHit:
    """A short-term fact a search found, with recall's blended score (lifecycle/blend.py)."""

    fact: ShortTermFact
    score: float


def ttl(settings: Settings, category: str | None) -> dt.timedelta:
    hours = settings.short_term_ttl_hours
    return dt.timedelta(hours=hours.get(category or "default", hours.get("default", 24.0)))


def _from_row(row: sa.Row) -> ShortTermFact:
    m = row._mapping
    return ShortTermFact(
        id=m["id"],
        user_id=m["user_id"],
        agent_id=m["agent_id"] or None,
        content=m["content"],
        category=m["category"],
        importance=m["importance"],
        sessions=stored("short_term", m["id"], "sessions", json.loads, m["sessions"]),
        status=m["status"],
        created_at=m["created_at"],
        expires_at=m["expires_at"],
        recall_count=m["recall_count"],
        last_recalled_at=m["last_recalled_at"],
        updated_at=m["updated_at"],
        source=m["source"],
        metadata=stored("short_term", m["id"], "metadata", json.loads, m["metadata"]),
    )


def remember(
    store: Store,
    conn: sa.Connection,
    scope: Scope,
    content: str,
    *,
    session_id: str,
    category: str | None,
    importance: float,
    source: str | None,
    settings: Settings,
    now: dt.datetime,
    metadata: dict[str, Any] | None = None,
) -> ShortTermFact:
    """Store a transient fact, or refresh the same active one (its sessions and expiry).

    Seen again, the fact keeps the metadata it was first stored with unless this one is
    non-empty: a repeat that comes with none (a plain observe) does not erase what the first
    mention was tagged with, and one that comes with some says what it is now."""
    encoded = json.dumps(metadata or {}, ensure_ascii=False)
    digest = READER.content_hash(content)
    expires = stamp(now + ttl(settings, category))
    row = store.short_term_by_hash(conn, scope, digest)
    if row is None:
        store.insert_short_term(
            conn,
            scope,
            content=content,
            content_hash=digest,
            category=category,
            importance=importance,
            sessions=json.dumps([session_id]),
            source=source,
            metadata=encoded,
            created_at=stamp(now),
            updated_at=stamp(now),
            expires_at=expires,
        )
    else:
        sessions = kept_sessions(json.loads(row._mapping["sessions"]), session_id, settings)
        store.refresh_short_term(
            conn,
            scope,
            row.id,
            sessions=json.dumps(sessions),
            now=stamp(now),
            expires=expires,
            metadata=encoded if metadata else None,
        )
    fresh = store.short_term_by_hash(conn, scope, digest)
    assert fresh is not None  # written above, in this transaction
    return _from_row(fresh)


def kept_sessions(sessions: list[str], session_id: str, settings: Settings) -> list[str]:
    """A fact's sessions with session_id as the latest, the oldest dropped beyond
    max(KEEP_SESSIONS, promote_min_sessions): the list only has to tell whether the fact
    recurred in enough sessions to be promoted, and which session saw it last."""
    keep = max(KEEP_SESSIONS, settings.promote_min_sessions)
    others = [s for s in sessions if s != session_id]
    return [*others[max(0, len(others) - keep + 1) :], session_id]


def active(store: Store, conn: sa.Connection, scope: Scope | None) -> list[ShortTermFact]:
    """Active short-term facts (every scope if scope is None), oldest first."""
    return [_from_row(row) for row in store.active_short_term(conn, scope)]


def by_id(store: Store, conn: sa.Connection, fact_id: int, scope: Scope | None) -> ShortTermFact:
    """The fact with this id, any status (of the scope, if given); NotFoundError for an
    unknown id and one of another scope alike."""
    row = store.short_term_by_id(conn, fact_id, scope)
    if row is None:
        raise NotFoundError(f"no short-term fact with id {fact_id}")
    return _from_row(row)


def set_status(
    store: Store, conn: sa.Connection, scope: Scope, fact_id: int, status: str, now: dt.datetime
) -> None:
    store.set_short_term_status(conn, scope, fact_id, status, stamp(now))


def relevant(
    store: Store, conn: sa.Connection, scope: Scope, query: str, *, now: dt.datetime
) -> list[ShortTermFact]:
    """Unexpired active facts sharing a content word with the query, most shared words first.

    Expiry is checked against `now`, not left to consolidate: a fact past its TTL is never
    shown, even if no consolidate has run since. The scope holds a handful of active facts,
    so they are compared in Python (the same stemmed, stopword-free tokens as Jaccard).
    """
    best = sorted(_sharing(store, conn, scope, query, now), key=lambda pair: -pair[0])
    return [fact for _, fact in best[:MAX_RELEVANT]]


def _sharing(
    store: Store, conn: sa.Connection, scope: Scope, query: str, now: dt.datetime
) -> list[tuple[float, ShortTermFact]]:
    """(share of the query's content words, fact) for each unexpired active fact holding at
    least one of them (the same stemmed, stopword-free tokens as Jaccard)."""
    wanted = READER.content_tokens(query)
    found = []
    for row in store.unexpired_short_term(conn, scope, stamp(now)):
        shared = len(wanted & READER.content_tokens(row.content))
        if shared:
            found.append((shared / len(wanted), _from_row(row)))
    return found


def retire(
    store: Store,
    conn: sa.Connection,
    scope: Scope,
    fact: ShortTermFact,
    reason: str,
    *,
    now: dt.datetime,
) -> None:
    """A fact the user deleted: status 'deleted' and its audit event (tier manual; the
    event names the fact as expiry's does, memory_id None)."""
    set_status(store, conn, scope, fact.id, "deleted", now)
    record_event(
        store,
        conn,
        scope,
        memory_id=None,
        op=Op.DELETE.value,
        candidate=fact.content,
        content_before=fact.content,
        content_after=None,
        reason=reason,
        tier=Tier.MANUAL.value,
        scores={"short_term_id": fact.id},
        created_at=stamp(now),
    )


def ranked(
    store: Store,
    conn: sa.Connection,
    scope: Scope,
    query: str,
    *,
    settings: Settings,
    now: dt.datetime,
) -> list[ShortTermHit]:
    """Unexpired facts sharing a content word with the query, best first, scored as recall
    scores memories: relevance is the share of the query's content words the fact holds
    (1.0 when it holds them all, as the best BM25 hit of a pool scores), recency counts
    from the last refresh or counted recall."""
    hits = []
    for relevance, fact in _sharing(store, conn, scope, query, now):
        said = fact.updated_at or fact.created_at
        touched = max(said, fact.last_recalled_at or said)
        score = blend(
            settings, relevance=relevance, touched=touched, importance=fact.importance, now=now
        )
        hits.append(ShortTermHit(fact, score))
    return sorted(hits, key=lambda hit: -hit.score)


def note_recalled(
    store: Store,
    conn: sa.Connection,
    scope: Scope,
    fact_ids: list[int],
    *,
    now: dt.datetime,
    spacing: dt.timedelta,
) -> None:
    """Each of these facts was put into a prompt once more (one UPDATE).

    A recall counts only if the last counted one is at least `spacing` ago, so the turns of
    one conversation that keep showing a fact are one occasion, not many.
    """
    store.note_short_term_recalled(
        conn, scope, fact_ids, now=stamp(now), spaced=stamp(now - spacing)
    )
