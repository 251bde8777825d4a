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
from dataclasses import dataclass

import sqlalchemy as sa

from memman.config import Settings
from memman.language.text import content_hash, content_tokens
from memman.scope import Scope
from memman.storage.store import Store
from memman.timestamps import stamp

# At most this many short-term facts go into one context block: the prompt needs the user's
# current situation, not a log of it.
MAX_RELEVANT = 5


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
        sessions=json.loads(m["sessions"]),
        status=m["status"],
        created_at=m["created_at"],
        expires_at=m["expires_at"],
        recall_count=m["recall_count"],
        last_recalled_at=m["last_recalled_at"],
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
) -> ShortTermFact:
    """Store a transient fact, or refresh the same active one (its sessions and expiry)."""
    digest = content_hash(content)
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
            created_at=stamp(now),
            updated_at=stamp(now),
            expires_at=expires,
        )
    else:
        sessions = json.loads(row._mapping["sessions"])
        if session_id not in sessions:
            sessions.append(session_id)
        store.refresh_short_term(
            conn, scope, row.id, sessions=json.dumps(sessions), now=stamp(now), expires=expires
        )
    fresh = store.short_term_by_hash(conn, scope, digest)
    assert fresh is not None  # written above, in this transaction
    return _from_row(fresh)


def active(store: Store, conn: sa.Connection, scope: Scope | None) -> list[ShortTermFact]:
    """Active short-term facts (every scope if scope is None), oldest first."""
    return [_from_row(row) for row in store.active_short_term(conn, scope)]


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
    rows = store.unexpired_short_term(conn, scope, stamp(now))
    wanted = content_tokens(query)
    shared = [(len(wanted & content_tokens(row.content)), row) for row in rows]
    best = sorted((pair for pair in shared if pair[0]), key=lambda pair: -pair[0])
    return [_from_row(row) for _, row in best[:MAX_RELEVANT]]


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
