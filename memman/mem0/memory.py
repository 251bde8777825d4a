"""A mem0-compatible facade: `from memman.mem0 import Memory` in place of `from mem0 import Memory`.

A thin translation layer over one MemoryManager, keeping no state of its own: mem0's call
shapes in (both `search(query, user_id=, limit=)` and `search(query, top_k=, filters=)`),
mem0's dicts out (`{"results": [...]}`, items keyed id, memory, hash, metadata, score,
created_at, updated_at, user_id, agent_id, run_id; history keyed old_memory, new_memory,
event ...). Every write goes through memman's write path, so `add` reports the decision
mem0's current release no longer makes: ADD, UPDATE, DELETE or NONE, with the reason.

Where the models differ (docs/mem0.md):
- memman scopes every memory by user (and optionally agent). Without a user_id, an agent's
  memories live under the user "agent:<agent_id>", a run's alone under "run:<run_id>".
- `run_id` names the chat session `add` buffers its messages in; the facts extracted from
  it are the scope's memories, so reads do not filter by run_id.
- `infer=True` extracts now (memman's `observe` + `flush`: no cooldown) and decides each
  fact, in one LLM call per add by default (`llm_turn_calls`); `infer=False` writes each
  message's text through `update_memory`.
- `update(id, text)` goes through `update_memory` too; when the decision stores the text
  under another id, the old id keeps standing for it (followed through the provenance
  "mem0.update:<id>", so the facade needs no table of its own).
- Deletes are soft (`restore` through MemoryManager brings a memory back); `reset` deletes
  every active memory that way.
"""

from __future__ import annotations

import logging
import uuid
from pathlib import Path
from typing import Any

from memman.api.manager import MemoryManager
from memman.errors import ConfigError, DecisionError, InvalidInputError, NotFoundError
from memman.lifecycle.buffer import text_of
from memman.mem0.config import config_dict as config_dict_of
from memman.mem0.config import settings_from_config
from memman.mem0.ids import MemoryIds, caller_of
from memman.mem0.shapes import (
    UPDATE_SOURCE,
    as_history_entry,
    as_item,
    as_messages,
    as_result,
    check_threshold,
    check_top_k,
    check_unsupported,
    matches,
    matches_item,
    mem0_id,
    scope_of,
    split_filters,
)
from memman.mem0.short_term import ShortTermPart, is_short_term
from memman.models import Memory as StoredMemory
from memman.models import Op
from memman.scope import Scope

log = logging.getLogger(__name__)


class Memory:
    """mem0's `Memory` over a MemoryManager: `Memory()`, `Memory("memory.db")`,
    `Memory(config_dict)`, `Memory.from_config(config_dict)` or `Memory(manager=mm)`."""

    def __init__(
        self,
        config: str | Path | dict[str, Any] | None = None,
        *,
        manager: MemoryManager | None = None,
    ):
        if manager is not None:
            self.manager = manager
        elif isinstance(config, dict):
            settings = settings_from_config(config)
            self.manager = MemoryManager(settings.pop("path", None), **settings)
            if config.get("llm") and self.manager.settings.llm_model is None:
                # mem0 picks a model for a provider named without one; memman picks none, and
                # running offline instead of the LLM the config asks for would be a surprise.
                self.manager.close()
                raise ConfigError(
                    "the config's llm names no model: set llm.config.model (or "
                    "MEMMAN_LLM_MODEL); memman has no default model and would run offline"
                )
        elif config is None or isinstance(config, str | Path):
            self.manager = MemoryManager(None if config is None else str(config))
        else:
            raise ConfigError("Memory takes a database path, a mem0 config dict or manager=")
        self.ids = MemoryIds(self.manager)
        self.short_term = ShortTermPart(self.manager)

    @classmethod
    def from_config(cls, config_dict: dict[str, Any]) -> Memory:
        """mem0's constructor from a config dict; anything else is a ConfigError."""
        return cls(config_dict_of(config_dict))

    def close(self) -> None:
        self.manager.close()

    def __enter__(self) -> Memory:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def _delete(self, memory: StoredMemory, reason: str) -> None:
        """Soft-delete a memory in its own scope: update, delete, delete_all and reset alike."""
        self.manager.delete(
            memory.id, reason=reason, user_id=memory.user_id, agent_id=memory.agent_id
        )

    # -- writes ------------------------------------------------------------------------------

    def add(
        self,
        messages: Any,
        *,
        user_id: str | None = None,
        agent_id: str | None = None,
        run_id: str | None = None,
        metadata: dict[str, Any] | None = None,
        infer: bool = True,
        memory_type: str | None = None,
        prompt: str | None = None,
    ) -> dict[str, Any]:
        """Remember a conversation (or one string): `{"results": [decision, ...]}`.

        infer=True: the messages are buffered in the run's session (a new one without
        run_id) with the metadata and extracted at once, each fact decided through the write
        path with that metadata (in the extraction's own call with llm_turn_calls "one"; kept
        with the buffered messages: also when a failed extraction raises DecisionError and
        flush or consolidate extracts them later).
        infer=False: each non-system message's text goes through update_memory as it is.
        mem0's memory_type (procedural memory) and prompt (its extraction prompt in place of
        the default) have no memman counterpart: anything but None is an InvalidInputError
        saying so (memman's prompts are files: the prompts_dir setting), never ignored.
        """
        check_unsupported(memory_type=memory_type, prompt=prompt)
        user, agent = scope_of({"user_id": user_id, "agent_id": agent_id, "run_id": run_id})
        chat = as_messages(messages)
        if metadata is not None and not isinstance(metadata, dict):
            raise InvalidInputError("metadata must be a dict")
        if not infer:
            # As observe reads a transcript: text parts joined, a tool-call turn (None) skipped.
            contents = [text_of(m.get("content")) for m in chat if m.get("role") != "system"]
            if any(text is None for text in contents):
                raise InvalidInputError(
                    "with infer=False every message content must be a string, a list of "
                    "content parts or None"
                )
            texts = [text for text in contents if text]
            results = self.manager.update_many(
                texts, user_id=user, agent_id=agent, metadata=metadata, source="mem0.add"
            )
            return {"results": [as_result(r, t) for r, t in zip(results, texts, strict=True)]}
        session = mem0_id(run_id, "run_id") or f"mem0-{uuid.uuid4().hex}"
        observed = self.manager.observe(
            chat, user_id=user, agent_id=agent, session_id=session, metadata=metadata
        )
        flushed = self.manager.flush(session, user_id=user, agent_id=agent)
        if flushed.error:
            raise DecisionError(
                f"extracting the messages failed ({flushed.error}); they stay buffered in "
                f"session {session} for flush or consolidate"
            )
        kept = self.short_term.added(
            [*observed.short_term_ids, *flushed.short_term_ids], user, agent
        )
        return {"results": [*(as_result(r) for r in [*observed.results, *flushed.results]), *kept]}

    def update(
        self,
        memory_id: str,
        text: str | None = None,
        metadata: dict[str, Any] | None = None,
        data: str | None = None,
        *,
        user_id: str | None = None,
        agent_id: str | None = None,
        run_id: str | None = None,
    ) -> dict[str, Any]:
        """Replace a memory's text, through update_memory in the memory's scope.

        The decision may keep the id (an UPDATE of this memory) or store the text under
        another (an ADD, or a NOOP of a memory that already says it): then this memory is
        soft-deleted, so the new text replaces it either way, and the old id keeps standing
        for the memory that holds it (get, update, delete, history follow it). The result's
        `id` says where the text lives. A parked decision (PENDING) leaves this memory as it is.
        `metadata`, as in mem0, replaces the custom metadata of the memory holding the text,
        in the transaction that writes the decision (update_memory's replace_metadata);
        without it the memory's own metadata goes with the text (mem0 would clear it).
        user_id, agent_id, run_id (not mem0's): the memory must be the caller's (mem0/ids.py).
        """
        caller = caller_of(user_id, agent_id, run_id)
        text = text if text is not None else data
        if text is None:
            raise InvalidInputError("update() needs the new text (text= or data=)")
        if metadata is not None and not isinstance(metadata, dict):
            raise InvalidInputError("metadata must be a dict")
        if is_short_term(memory_id):
            return {
                "message": "Memory updated successfully!",
                **self.short_term.update(memory_id, text, metadata, caller),
            }
        memory = self.ids.active(memory_id, caller)
        result = self.manager.update_memory(
            text,
            user_id=memory.user_id,
            agent_id=memory.agent_id,
            source=UPDATE_SOURCE + memory.id,
            metadata=memory.metadata if metadata is None else metadata,
            replace_metadata=metadata is not None,
        )
        if result.op is not Op.PENDING and result.memory_id != memory.id:
            self._delete(memory, f"replaced by update(): now {result.memory_id}")
        return {"message": "Memory updated successfully!", **as_result(result, text)}

    def delete(
        self,
        memory_id: str,
        *,
        user_id: str | None = None,
        agent_id: str | None = None,
        run_id: str | None = None,
    ) -> dict[str, Any]:
        """Soft-delete one memory (MemoryManager.restore brings it back); a short-term fact
        is retired for good. user_id, agent_id, run_id: the memory must be the caller's."""
        caller = caller_of(user_id, agent_id, run_id)
        if is_short_term(memory_id):
            self.short_term.delete(memory_id, "deleted through mem0 delete()", caller)
            return {"message": "Memory deleted successfully!"}
        memory = self.ids.active(memory_id, caller)
        self._delete(memory, "deleted through mem0 delete()")
        return {"message": "Memory deleted successfully!"}

    def delete_all(
        self, user_id: str | None = None, agent_id: str | None = None, run_id: str | None = None
    ) -> dict[str, Any]:
        """Soft-delete every active memory the ids match, as mem0 filters: user_id alone is
        the user's memories of every agent, agent_id alone the agent's of every user (a run
        alone is its "run:<run_id>" user). Reads the store once (as reset does)."""
        if user_id is None and agent_id is None and run_id is None:
            raise InvalidInputError(
                "At least one filter is required to delete all memories. If you want to "
                "delete all memories, use the `reset()` method."
            )
        user, agent = scope_of({"user_id": user_id, "agent_id": agent_id, "run_id": run_id})
        by_user = user_id is not None or agent_id is None
        matched = [
            m
            for m in self.manager.export()
            if (not by_user or m.user_id == user) and (agent_id is None or m.agent_id == agent)
        ]
        for memory in matched:
            self._delete(memory, "deleted through mem0 delete_all()")
        scope = Scope(user, agent if agent_id is not None else None)
        self.short_term.delete_where(
            scope, by_user=by_user, reason="deleted through mem0 delete_all()"
        )
        return {"message": "Memories deleted successfully!"}

    def reset(self) -> None:
        """Soft-delete every active memory of every scope (the audit trail stays)."""
        memories = list(self.manager.export())
        for memory in memories:
            self._delete(memory, "deleted through mem0 reset()")
        self.short_term.delete_where(None, by_user=False, reason="deleted through mem0 reset()")

    # -- reads -------------------------------------------------------------------------------

    def get(
        self,
        memory_id: str,
        *,
        user_id: str | None = None,
        agent_id: str | None = None,
        run_id: str | None = None,
    ) -> dict[str, Any] | None:
        """The memory as a mem0 item, None if there is no active memory with that id (of the
        caller's, when it names user_id, agent_id or run_id: see _caller)."""
        caller = caller_of(user_id, agent_id, run_id)
        try:
            if is_short_term(memory_id):
                return self.short_term.item(self.short_term.live(memory_id, caller))
            return as_item(self.ids.active(memory_id, caller))
        except InvalidInputError:
            return None

    def get_all(
        self,
        *,
        user_id: str | None = None,
        agent_id: str | None = None,
        run_id: str | None = None,
        filters: dict[str, Any] | None = None,
        limit: int | None = None,
        top_k: int | None = None,
    ) -> dict[str, Any]:
        """The scope's active memories, oldest first, then its unexpired short-term facts:
        `{"results": [item, ...]}` (100 at most unless limit/top_k says otherwise)."""
        ids, wanted = split_filters(filters, user_id=user_id, agent_id=agent_id, run_id=run_id)
        user, agent = scope_of(ids)
        count = check_top_k(top_k if top_k is not None else limit, default=100)
        if not wanted:
            memories = self.manager.list(user_id=user, agent_id=agent, limit=count)
        else:
            found = (m for m in self.manager.iter_all(user_id=user, agent_id=agent))
            memories = [m for m in found if matches(m, wanted)][:count]
        items = [as_item(m) for m in memories]
        if len(items) < count:
            short = self.short_term.listed(user, agent)
            items += [i for i in short if matches_item(i, wanted)][: count - len(items)]
        return {"results": items}

    def search(
        self,
        query: str,
        *,
        user_id: str | None = None,
        agent_id: str | None = None,
        run_id: str | None = None,
        filters: dict[str, Any] | None = None,
        limit: int | None = None,
        top_k: int | None = None,
        threshold: float | None = None,
        rerank: bool = True,
    ) -> dict[str, Any]:
        """The best memories and unexpired short-term facts for a query, best first, with
        memman's recall score (relevance, recency and importance, one scale for both):
        `{"results": [item with score, ...]}`; 20 unless limit/top_k says otherwise.
        Metadata filters keep equal values among 4x the hits. rerank is taken as mem0 takes
        it with no reranker configured: memman has none, the order is the same either way."""
        if not isinstance(query, str) or not query.strip():
            raise InvalidInputError("Invalid query: cannot be empty or whitespace-only.")
        check_threshold(threshold)
        ids, wanted = split_filters(filters, user_id=user_id, agent_id=agent_id, run_id=run_id)
        user, agent = scope_of(ids)
        count = check_top_k(top_k if top_k is not None else limit, default=20)
        if count == 0:
            return {"results": []}
        hits = self.manager.search(
            query.strip(), user_id=user, agent_id=agent, limit=count * 4 if wanted else count
        )
        short = self.short_term.found(query.strip(), user, agent, count * 4 if wanted else count)
        # Short-term facts first on a tie (a stable sort): they are about the moment.
        found = [item for item in short if matches_item(item, wanted)]
        found += [as_item(hit.memory, hit.score) for hit in hits if matches(hit.memory, wanted)]
        found.sort(key=lambda item: -item["score"])
        kept = [item for item in found if threshold is None or item["score"] >= threshold]
        return {"results": kept[:count]}

    def history(
        self,
        memory_id: str,
        *,
        user_id: str | None = None,
        agent_id: str | None = None,
        run_id: str | None = None,
    ) -> list[dict[str, Any]]:
        """Every change of a memory, oldest first, keyed as mem0's history (plus memman's
        reason and tier), with the history of each memory update() moved its text to;
        [] for an unknown id (or one of another scope than the caller named), as mem0 answers."""
        caller = caller_of(user_id, agent_id, run_id)
        if is_short_term(memory_id):
            return self.short_term.history(memory_id, caller)
        try:
            owner = self.ids.owner(memory_id, caller)
            chain = self.ids.chain(memory_id, caller)
        except (NotFoundError, InvalidInputError):
            return []
        events = {
            event.id: event
            for memory in chain
            for event in self.manager.history(memory.id, **owner)
        }
        return [as_history_entry(events[key]) for key in sorted(events)]

