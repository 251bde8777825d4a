"""The message buffer: chat messages checked and written durably, read back per session and
scope, and pruned once extracted.

Apart from extraction (memman/lifecycle/observe.py) because buffering must succeed whatever happens
to extraction later: a message is in the buffer before any model sees it.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from typing import Any

import sqlalchemy as sa

from memman.config import Settings
from memman.errors import InvalidInputError
from memman.models import MESSAGE_ROLES
from memman.scope import Scope, check_encodable, check_id
from memman.storage.store import Store
from memman.timestamps import check_moment, stamp

# Content parts that carry text ("text" in Chat Completions, "input_text" in Responses);
# images, audio and files are left out.
TEXT_PARTS = frozenset({"text", "input_text"})


def _check_messages(messages: Any, now: dt.datetime) -> list[tuple[str, str, str | None]]:
    """(role, text, when) of each message that has text, as an agent loop hands them over.

    Content may be a string, a list of content parts (their text parts are joined) or None
    (an assistant turn that only calls tools): a message without text is left out, so a
    transcript can be passed as it is. `when` is the message's "timestamp" (or
    "created_at"), when given: the moment its facts were true, not the moment they arrive.
    """
    if isinstance(messages, (str, bytes)) or not isinstance(messages, Sequence):
        raise InvalidInputError("messages must be a list of {'role', 'content'} dicts")
    checked = []
    for index, message in enumerate(messages):
        role = message.get("role") if isinstance(message, dict) else None
        content = message.get("content") if isinstance(message, dict) else None
        text = text_of(content)
        if role not in MESSAGE_ROLES or text is None:
            raise InvalidInputError(
                f"message #{index} needs a role ({', '.join(sorted(MESSAGE_ROLES))}) and content:"
                " a string, a list of content parts, or None"
            )
        check_encodable(f"message #{index}", text)
        when = message.get("timestamp", message.get("created_at"))
        if text:
            moment = None if when is None else check_moment("timestamp", when, now=now)
            checked.append((role, text, moment))
    return checked


def text_of(content: Any) -> str | None:
    """The text of a message's content ("" if it has none), None if it is not content."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list) and all(isinstance(part, dict) for part in content):
        texts = [part.get("text") for part in content if part.get("type") in TEXT_PARTS]
        if all(isinstance(text, str) for text in texts):
            return "\n".join(texts)
    return None


def buffer(
    store: Store,
    scope: Scope,
    session_id: str,
    messages: Any,
    now: dt.datetime,
    *,
    max_chars: int,
    metadata: dict[str, Any] | None = None,
) -> None:
    """Write the messages to the buffer in one transaction (validated first; a message over
    max_chars is refused, like a fact over max_fact_chars, before any is written), with the
    metadata (checked by the caller) that the facts extracted from them will carry."""
    check_id("session_id", session_id)
    checked = _check_messages(messages, now)
    for index, (_, content, _) in enumerate(checked):
        if len(content) > max_chars:
            raise InvalidInputError(
                f"message #{index} has {len(content)} characters; at most {max_chars}"
                " (max_message_chars)"
            )
    if checked:
        store.write(
            lambda conn: store.buffer_messages(
                conn, scope, session_id, checked, stamp(now), metadata
            ),
            scope=scope,
        )


def waiting_rows(store: Store, session_id: str, scope: Scope | None = None) -> list[sa.Row]:
    """The session's buffered messages, oldest first (only the scope's, if given)."""
    with store.read() as conn:
        return store.waiting_messages(conn, session_id, scope)


def waiting_count(store: Store, session_id: str, scope: Scope | None = None) -> int:
    return len(waiting_rows(store, session_id, scope))


def due(
    store: Store, session_id: str, scope: Scope, *, now: dt.datetime, cooldown_s: float
) -> bool:
    """True when the scope's oldest buffered message of the session has waited the cooldown."""
    waiting = waiting_rows(store, session_id, scope)
    if not waiting:
        return False
    oldest = dt.datetime.fromisoformat(waiting[0].created_at)
    return (now - oldest).total_seconds() >= cooldown_s


def rows_by_scope(rows: list[sa.Row]) -> dict[Scope, list[sa.Row]]:
    grouped: dict[Scope, list[sa.Row]] = {}
    for row in rows:
        grouped.setdefault(Scope(row.user_id, row.agent_id or None), []).append(row)
    return grouped


def prune_extracted(
    store: Store, scope: Scope | None, settings: Settings, now: dt.datetime
) -> None:
    """Delete the scope's messages (every scope's if None) extracted longer ago than
    message_retention_days: their facts are in memory, and the buffer must not grow with every
    message ever observed. A flush prunes the scopes it extracted (a hot-path statement
    filters by its scope); consolidate prunes the scopes it runs over, so a user who never
    flushes again is pruned too."""
    before = stamp(now - dt.timedelta(days=settings.message_retention_days))
    store.write(lambda conn: store.prune_extracted(conn, scope, before), scope=scope)
