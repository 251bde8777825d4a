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
from memman.scope import Scope
from memman.text import content_hash, content_tokens
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
    row = conn.execute(
        sa.text(
            "SELECT * FROM short_term WHERE user_id = :u AND agent_id = :a"
            " AND content_hash = :h AND status = 'active'"
        ),
        {"u": scope.user_id, "a": scope.agent_key, "h": digest},
    ).first()
    if row is None:
        conn.execute(
            sa.text(
                "INSERT INTO short_term (user_id, agent_id, content, content_hash, category,"
                " importance, sessions, source, created_at, updated_at, expires_at)"
                " VALUES (:u, :a, :c, :h, :cat, :imp, :s, :src, :now, :now, :exp)"
            ),
            {
                "u": scope.user_id,
                "a": scope.agent_key,
                "c": content,
                "h": digest,
                "cat": category,
                "imp": importance,
                "s": json.dumps([session_id]),
                "src": source,
                "now": stamp(now),
                "exp": expires,
            },
        )
    else:
        sessions = json.loads(row._mapping["sessions"])
        if session_id not in sessions:
            sessions.append(session_id)
        conn.execute(
            sa.text(
                "UPDATE short_term SET sessions = :s, updated_at = :now, expires_at = :exp"
                " WHERE id = :id"
            ),
            {"s": json.dumps(sessions), "now": stamp(now), "exp": expires, "id": row.id},
        )
    fresh = conn.execute(
        sa.text(
            "SELECT * FROM short_term WHERE user_id = :u AND agent_id = :a"
            " AND content_hash = :h AND status = 'active'"
        ),
        {"u": scope.user_id, "a": scope.agent_key, "h": digest},
    ).one()
    return _from_row(fresh)


def active(conn: sa.Connection, scope: Scope | None) -> list[ShortTermFact]:
    """Active short-term facts (every scope if scope is None), oldest first."""
    sql = "SELECT * FROM short_term WHERE status = 'active'"
    params: dict[str, str] = {}
    if scope is not None:
        sql += " AND user_id = :u AND agent_id = :a"
        params = {"u": scope.user_id, "a": scope.agent_key}
    return [_from_row(row) for row in conn.execute(sa.text(sql + " ORDER BY id"), params)]


def set_status(conn: sa.Connection, fact_id: int, status: str, now: dt.datetime) -> None:
    conn.execute(
        sa.text("UPDATE short_term SET status = :s, updated_at = :now WHERE id = :id"),
        {"s": status, "now": stamp(now), "id": fact_id},
    )


def relevant(
    conn: sa.Connection, scope: Scope, query: str, *, now: dt.datetime
) -> list[ShortTermFact]:
    """Unexpired active facts sharing a content word with the query, most shared words first.

    Expiry is checked against `now`, not left to consolidate: a fact past its TTL is never
    shown, even if no consolidate has run since. The scope holds a handful of active facts,
    so they are compared in Python (the same stemmed, stopword-free tokens as Jaccard).
    """
    rows = conn.execute(
        sa.text(
            "SELECT * FROM short_term WHERE user_id = :u AND agent_id = :a"
            " AND status = 'active' AND expires_at > :now ORDER BY updated_at DESC, id DESC"
        ),
        {"u": scope.user_id, "a": scope.agent_key, "now": stamp(now)},
    ).all()
    wanted = content_tokens(query)
    shared = [(len(wanted & content_tokens(row.content)), row) for row in rows]
    best = sorted((pair for pair in shared if pair[0]), key=lambda pair: -pair[0])
    return [_from_row(row) for _, row in best[:MAX_RELEVANT]]


def note_recalled(
    conn: sa.Connection, fact_ids: list[int], *, now: dt.datetime, spacing: dt.timedelta
) -> None:
    """One UPDATE: each of these facts was put into a prompt once more.

    A recall counts only if the last counted one is at least `spacing` ago, so the turns of
    one conversation that keep showing a fact are one occasion, not many.
    """
    conn.execute(
        sa.text(
            "UPDATE short_term SET recall_count = recall_count + 1, last_recalled_at = :now"
            " WHERE id IN :ids AND (last_recalled_at IS NULL OR last_recalled_at <= :spaced)"
        ).bindparams(sa.bindparam("ids", expanding=True)),
        {"ids": fact_ids, "now": stamp(now), "spaced": stamp(now - spacing)},
    )
