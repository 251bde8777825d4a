"""Sessions nobody flushes: the user left, so observe() is never called again for them.
flush_idle() and consolidate() find them here (their newest buffered message has waited the
cooldown) and extract each with observe.extract.
"""

from __future__ import annotations

import datetime as dt
import logging
from collections.abc import Callable

from pydantic import BaseModel, ConfigDict

from memman.errors import LeaseLostError
from memman.lifecycle.observe import ObserveResult
from memman.scope import Scope
from memman.storage.store import Store
from memman.timestamps import stamp

log = logging.getLogger(__name__)


class IdleSession(BaseModel):
    """A session (of one scope) whose newest buffered message has waited the cooldown."""

    model_config = ConfigDict(frozen=True)

    session_id: str
    user_id: str
    agent_id: str | None = None
    waiting: int  # buffered messages found
    newest_at: str  # when its newest buffered message was observed

    @property
    def scope(self) -> Scope:
        return Scope(self.user_id, self.agent_id)


class SessionExtraction(BaseModel):
    """An idle session extracted (flush_idle, consolidate), or found by a dry run."""

    model_config = ConfigDict(frozen=True)

    session: IdleSession
    result: ObserveResult | None = None  # None: a dry run, nothing extracted


def idle_sessions(
    store: Store, scope: Scope | None, *, now: dt.datetime, cooldown_s: float
) -> list[IdleSession]:
    """Sessions of the scope (all scopes if None) whose newest buffered message has waited
    cooldown_s, oldest first; a session shared by two scopes is listed once for each."""
    cutoff = stamp(now - dt.timedelta(seconds=cooldown_s))
    with store.read() as conn:
        rows = store.idle_session_rows(conn, scope, cutoff)
    return [
        IdleSession(
            session_id=row.session_id,
            user_id=row.user_id,
            agent_id=row.agent_id or None,
            waiting=row.waiting,
            newest_at=row.newest_at,
        )
        for row in rows
    ]


def extract_idle(
    store: Store,
    scope: Scope | None,
    *,
    now: dt.datetime,
    cooldown_s: float,
    extract: Callable[[str, Scope], ObserveResult] | None,
    take: Callable[[], bool] = lambda: True,
) -> list[SessionExtraction]:
    """extract(session_id, scope) each idle session of the scope (all if None), oldest first.

    extract None: a dry run, the sessions are only listed. take() is asked before each
    session; False stops (consolidate's max_ops). A failed extraction is in its result.
    """
    done = []
    for session in idle_sessions(store, scope, now=now, cooldown_s=cooldown_s):
        if not take():
            break
        try:
            result = None if extract is None else extract(session.session_id, session.scope)
        except LeaseLostError as erased:  # forget() took the messages: nothing left to do
            log.warning("idle session %s not extracted: %s", session.session_id, erased)
            continue
        if result is not None and result.error is not None:
            log.warning("idle session %s not extracted: %s", session.session_id, result.error)
        done.append(SessionExtraction(session=session, result=result))
    return done
