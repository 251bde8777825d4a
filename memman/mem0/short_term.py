"""Short-term facts through the mem0 facade: findable as long as they hold.

Offline, a plan for tonight or where the user is right now goes to short-term memory with a
TTL (memman/lifecycle/pieces.py; with an LLM, its "transient" facts), not to long-term
memory. mem0 has no such tier, and its users expect what `add` reported to be findable, so
the facade shows the scope's unexpired short-term facts as mem0 items: id
"short_term:<n>-<token>", metadata the fact's own (add's) with {"short_term": true,
"expires_at": ...} over it, so a metadata filter matches either. get, delete, update and
history accept those ids; an id of no live fact is "not found", as a deleted memory's is. Past
its TTL a fact is gone from every read, whether or not consolidate has marked it expired yet.

mem0's calls by id name no user, so an id is all a caller needs to read or delete a fact:
ids must not be guessable (issue 29: "short_term:1", "short_term:2", ... let anyone count
through every user's facts). The token is an HMAC of the fact's row (its number, owner and
creation time) under a random key the store keeps (store_state), so it is the same on every
call and in every process, and nobody without the store can make one; a row number reused
after an erasure gets another token. When the caller names its user_id (agent_id, run_id),
a fact of another scope is "not found" too, as the core's calls by id answer.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from typing import Any

from memman.api.manager import MemoryManager
from memman.errors import InvalidInputError, NotFoundError
from memman.language.text import content_hash
from memman.lifecycle import shortterm
from memman.lifecycle.shortterm import ShortTermFact
from memman.mem0.ids import Owner, owns
from memman.mem0.shapes import UPDATE_SOURCE
from memman.scope import Scope

PREFIX = "short_term:"
# Row ids are positive 64-bit integers; a longer string of digits names no fact.
MAX_DIGITS = 18
# The store_state key of the facade's id key, and the token's length: 96 bits of HMAC-SHA256.
ID_KEY = "mem0_short_term_id_key"
TOKEN_HEX = 24


def is_short_term(memory_id: object) -> bool:
    return isinstance(memory_id, str) and memory_id.startswith(PREFIX)


def _id_key(manager: MemoryManager) -> bytes:
    """The store's key for short-term ids, made on first use; a read-only store without one
    gets a key for this process only (its ids cannot outlive it, nothing can be written)."""
    store = manager.store
    with store.read() as conn:
        key = store.state(conn, ID_KEY)
    if key is None and store.read_only:
        key = secrets.token_hex(32)
    elif key is None:
        fresh = secrets.token_hex(32)
        key = store.write(lambda conn: store.keep_state(conn, ID_KEY, fresh))
    return bytes.fromhex(key)


def as_short_item(fact: ShortTermFact, fact_id: str, score: float | None = None) -> dict[str, Any]:
    """A short-term fact as a mem0 item (the keys of shapes.as_item) under its facade id."""
    return {
        "id": fact_id,
        "memory": fact.content,
        "hash": content_hash(fact.content),
        # The markers win over a caller's key of the same name: the item must say what it is.
        "metadata": {**fact.metadata, "short_term": True, "expires_at": fact.expires_at},
        "score": score,
        "created_at": fact.created_at,
        "updated_at": fact.updated_at,
        "user_id": fact.user_id,
        "agent_id": fact.agent_id,
        "run_id": None,
    }


class ShortTermPart:
    """The facade's calls on short-term facts, over the manager's public short-term API."""

    def __init__(self, manager: MemoryManager):
        self.manager = manager
        self._key = _id_key(manager)

    def item_id(self, fact: ShortTermFact) -> str:
        """The fact's facade id: its row number and a token only this store can make."""
        row = f"{fact.id}\x1f{fact.user_id}\x1f{fact.agent_id or ''}\x1f{fact.created_at}"
        token = hmac.new(self._key, row.encode(), hashlib.sha256).hexdigest()[:TOKEN_HEX]
        return f"{PREFIX}{fact.id}-{token}"

    def item(self, fact: ShortTermFact, score: float | None = None) -> dict[str, Any]:
        return as_short_item(fact, self.item_id(fact), score)

    def fact(self, memory_id: str, caller: Owner | None = None) -> ShortTermFact:
        """The fact an id names, any status, of any user's or of the caller's if it named
        one; NotFoundError for an id this store did not make and a fact of another scope."""
        digits, _, token = memory_id[len(PREFIX) :].partition("-")
        named = digits.isascii() and digits.isdigit() and len(digits) <= MAX_DIGITS
        missing = NotFoundError(f"no short-term fact with id {memory_id!r}")
        if not named or str(int(digits)) != digits or len(token) != TOKEN_HEX:
            raise missing  # one spelling: "short_term:007-..." is none
        with self.manager.store.read() as conn:
            fact = shortterm.by_id(self.manager.store, conn, int(digits), None)
        made = hmac.compare_digest(self.item_id(fact).encode(), memory_id.encode())
        if not made or not owns(caller, fact.user_id, fact.agent_id):
            raise missing
        return fact

    def heir(self, fact: ShortTermFact) -> ShortTermFact | None:
        """The live fact update() replaced a deleted one by, through any number of updates:
        each replacement's source names the first fact of the line ("mem0.update:<id>"),
        so this is the newest live fact naming that one, written after `fact`."""
        if fact.status != "deleted":
            return None
        line = UPDATE_SOURCE + self._first(fact)
        scope = self.manager.short_term(
            user_id=fact.user_id, agent_id=fact.agent_id, unexpired=True
        )
        heirs = [other for other in scope if other.id > fact.id and other.source == line]
        return heirs[-1] if heirs else None

    def successor(self, fact: ShortTermFact) -> ShortTermFact | None:
        """The fact update() replaced this deleted one by, whatever became of it since: the
        first fact of the same update() line written after it (history walks the line)."""
        if fact.status != "deleted":
            return None
        line, scope = UPDATE_SOURCE + self._first(fact), Scope(fact.user_id, fact.agent_id)
        store = self.manager.store
        with store.read() as conn:
            rows = store.table_rows(conn, "short_term", scope)
            later = [row["id"] for row in rows if row["id"] > fact.id and row["source"] == line]
            return shortterm.by_id(store, conn, min(later), scope) if later else None

    def live(self, memory_id: str, caller: Owner | None = None) -> ShortTermFact:
        """The live fact an id stands for: its own, or the one update() replaced it by;
        InvalidInputError "not found" (mem0's words) else."""
        try:
            fact: ShortTermFact | None = self.fact(memory_id, caller)
        except NotFoundError:
            fact = None
        if fact is not None and not fact.live(self.manager.clock()):
            fact = self.heir(fact)
        if fact is None:
            raise InvalidInputError(f"Memory with id {memory_id} not found")
        return fact

    def added(self, fact_ids: list[int], user: str, agent: str | None) -> list[dict[str, Any]]:
        """`add` results for the short-term facts an extraction kept: ADD for a new one,
        NONE for one it had already (seen again: its expiry renewed)."""
        results = []
        for fact_id in dict.fromkeys(fact_ids):
            fact = self.manager.get_short_term(fact_id, user_id=user, agent_id=agent)
            new = fact.updated_at == fact.created_at
            results.append(
                {
                    "id": self.item_id(fact),
                    "memory": fact.content,
                    "event": "ADD" if new else "NONE",
                    "reason": f"short-term ({fact.category or 'default'}) until "
                    f"{fact.expires_at}" + ("" if new else ": said again, expiry renewed"),
                }
            )
        return results

    def listed(self, user: str, agent: str | None) -> list[dict[str, Any]]:
        facts = self.manager.short_term(user_id=user, agent_id=agent, unexpired=True)
        return [self.item(fact) for fact in facts]

    def found(self, query: str, user: str, agent: str | None, limit: int) -> list[dict[str, Any]]:
        hits = self.manager.search_short_term(query, user_id=user, agent_id=agent, limit=limit)
        return [self.item(hit.fact, hit.score) for hit in hits]

    def delete(self, memory_id: str, reason: str, caller: Owner | None = None) -> ShortTermFact:
        fact = self.live(memory_id, caller)
        return self.manager.delete_short_term(
            fact.id, user_id=fact.user_id, agent_id=fact.agent_id, reason=reason
        )

    def delete_where(self, scope: Scope | None, *, by_user: bool, reason: str) -> None:
        """Retire the live facts of every scope delete_all's ids match (all, for reset)."""
        now = self.manager.clock()
        for fact in self.manager.short_term():
            if scope is not None and (
                (by_user and fact.user_id != scope.user_id)
                or (scope.agent_id is not None and fact.agent_id != scope.agent_id)
            ):
                continue
            if fact.live(now):
                self.manager.delete_short_term(
                    fact.id, user_id=fact.user_id, agent_id=fact.agent_id, reason=reason
                )

    def update(
        self,
        memory_id: str,
        text: str,
        metadata: dict[str, Any] | None,
        caller: Owner | None = None,
    ) -> dict[str, Any]:
        """The new text replaces the fact as a short-term fact of the same category (a
        fresh TTL from now) and metadata (`metadata` if given, as mem0's update replaces it),
        the old one is deleted; the result's id names the new one, and the old id keeps
        standing for it (get, update, delete and history follow it)."""
        fact = self.live(memory_id, caller)
        new = self.manager.remember_short_term(
            text,
            user_id=fact.user_id,
            agent_id=fact.agent_id,
            session_id=fact.sessions[-1] if fact.sessions else "mem0-update",
            category=fact.category,
            importance=fact.importance,
            source=UPDATE_SOURCE + self._first(fact),
            metadata=fact.metadata if metadata is None else metadata,
        )
        if new.id != fact.id:
            self.manager.delete_short_term(
                fact.id,
                user_id=fact.user_id,
                agent_id=fact.agent_id,
                reason=f"replaced by update(): now {self.item_id(new)}",
            )
        return {"id": self.item_id(new), "memory": new.content, "event": "UPDATE", "reason": None}

    def history(self, memory_id: str, caller: Owner | None = None) -> list[dict[str, Any]]:
        """The fact's life in mem0's history keys: its ADD, how it ended (deleted, expired
        or promoted to long-term memory) if it did, then the life of each fact that held
        its text after it if update() replaced it (as for memories); [] for an unknown id.
        Read off the rows (a short-term fact's ADD has no event of its own)."""
        try:
            fact: ShortTermFact | None = self.fact(memory_id, caller)
        except NotFoundError:
            return []
        entries: list[dict[str, Any]] = []
        while fact is not None:
            after = self.successor(fact)
            fact_id = self.item_id(fact)
            entries.append(_entry(fact, fact_id, "ADD", fact.created_at, "short-term fact"))
            if after is not None:
                reason = f"replaced by update(): now {self.item_id(after)}"
                entries.append(_entry(fact, fact_id, "DELETE", fact.updated_at or "", reason))
            elif fact.status != "active":
                ended, why = fact.updated_at or fact.expires_at, f"short-term fact {fact.status}"
                entries.append(_entry(fact, fact_id, "DELETE", ended, why))
            elif not fact.live(self.manager.clock()):
                why = "short-term fact expired"
                entries.append(_entry(fact, fact_id, "DELETE", fact.expires_at, why))
            fact = after
        return entries

    def _first(self, fact: ShortTermFact) -> str:
        """The id of the first fact of the update() line this one is in (its own if none)."""
        if fact.source and fact.source.startswith(UPDATE_SOURCE + PREFIX):
            return fact.source[len(UPDATE_SOURCE) :]
        return self.item_id(fact)


def _entry(
    fact: ShortTermFact, fact_id: str, event: str, when: str, reason: str
) -> dict[str, Any]:
    """One history entry (shapes.as_history_entry's keys) read off the fact's row."""
    added = event == "ADD"
    return {
        "id": None,  # no event row of its own: the entry is read off the fact
        "memory_id": fact_id,
        "old_memory": None if added else fact.content,
        "new_memory": fact.content if added else None,
        "event": event,
        "created_at": when,
        "updated_at": None,
        "is_deleted": not added,
        "actor_id": None,
        "role": None,
        "reason": reason,
        "tier": "short_term",
    }
