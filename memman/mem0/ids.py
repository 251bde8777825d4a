"""How mem0's calls by id reach a memory: whose it is, which memory an id stands for after
update() moved its text, and whether the caller may reach it.

mem0's ids are global: its get, update, delete and history name no user. The facade looks the
owner up; a caller that names its user_id (agent_id, run_id), as the core's calls by id take
them, reaches only that scope's memories (issue 29), and an id of another is "not found".
"""

from __future__ import annotations

from typing import Any

from memman.api.manager import MemoryManager
from memman.errors import InvalidInputError, NotFoundError
from memman.mem0.shapes import UPDATE_SOURCE, scope_of
from memman.models import Memory as Record
from memman.models import Status
from memman.scope import check_id

# (user_id, agent_id or None) a caller named, as shapes.scope_of reads them.
Owner = tuple[str, str | None]


def owns(caller: Owner | None, user_id: str, agent_id: str | None) -> bool:
    """Whether a memory or fact of (user_id, agent_id) is within what the caller named: any,
    if it named no one; the user's of any agent, or of the one agent it named."""
    if caller is None:
        return True
    user, agent = caller
    return user == user_id and (agent is None or agent == agent_id)


def caller_of(user_id: Any, agent_id: Any, run_id: Any) -> Owner | None:
    """The scope a call by id is confined to, as the core's calls by id take user_id: mem0's
    calls name none (then any memory the id names; short-term ids cannot be guessed), memman's
    callers should. user_id alone covers the user's memories of every agent, as delete_all's."""
    if user_id is None and agent_id is None and run_id is None:
        return None
    return scope_of({"user_id": user_id, "agent_id": agent_id, "run_id": run_id})


class MemoryIds:
    """The long-term memories mem0's ids name, over a MemoryManager."""

    def __init__(self, manager: MemoryManager):
        self.manager = manager

    def owner(self, memory_id: str, caller: Owner | None = None) -> dict[str, str | None]:
        """The scope of a memory named by id alone, as mem0's calls name one: mem0's ids are
        global, so the facade looks the owner up (NotFoundError for an unknown id, and for
        one of another scope than the caller named)."""
        try:  # an id no memory can have (not a string, not UTF-8): as unknown as any other
            check_id("memory_id", memory_id)
        except InvalidInputError:
            raise NotFoundError(f"no memory with id {memory_id!r}") from None
        with self.manager.store.read() as conn:
            memory = self.manager.store.get(conn, memory_id)
        if not owns(caller, memory.user_id, memory.agent_id):
            raise NotFoundError(f"no memory with id {memory_id!r}")
        return {"user_id": memory.user_id, "agent_id": memory.agent_id}

    def chain(self, memory_id: str, caller: Owner | None = None) -> list[Record]:
        """The memories an id has stood for, oldest first: itself, then each memory update()
        moved its text to (the last is active unless that text was deleted since).

        update() may store the new text under another id (see update); the memory that
        received it carries the source "mem0.update:<old id>", so an id a caller holds keeps
        answering get, update, delete, history and search results as mem0's ids do.
        """
        try:
            memory = self.manager.get(memory_id, **self.owner(memory_id, caller))
        except NotFoundError:
            raise InvalidInputError(f"Memory with id {memory_id} not found") from None
        chain = [memory]
        while memory.status is not Status.ACTIVE:
            mark = UPDATE_SOURCE + memory.id
            scope = self.manager.list(
                user_id=memory.user_id, agent_id=memory.agent_id, include_inactive=True
            )
            heirs = [m for m in scope if m.id != memory.id and mark in m.sources]
            active = [m for m in heirs if m.status is Status.ACTIVE]
            memory = (active or heirs or [memory])[-1]
            if memory.id in {m.id for m in chain}:
                break
            chain.append(memory)
        return chain

    def active(self, memory_id: str, caller: Owner | None = None) -> Record:
        """The active memory an id stands for: itself, or where update() moved its text."""
        memory = self.chain(memory_id, caller)[-1]
        if memory.status is not Status.ACTIVE:
            raise InvalidInputError(f"Memory with id {memory_id} not found")
        return memory
