"""A mem0-compatible facade: `from memman.mem0 import Memory` in place of `from mem0 import Memory`.

A thin translation layer over one MemoryManager, keeping no state of its own: mem0's call
shapes in (both `search(query, user_id=, limit=)` and `search(query, top_k=, filters=)`),
mem0's dicts out (`{"results": [...]}`, items keyed id, memory, hash, metadata, score,
created_at, updated_at, user_id, agent_id, run_id; history keyed old_memory, new_memory,
event ...). Every write goes through memman's write path, so `add` reports the decision
mem0's current release no longer makes: ADD, UPDATE, DELETE or NONE, with the reason.

Where the models differ (README "Switching from mem0"):
- memman scopes every memory by user (and optionally agent). Without a user_id, an agent's
  memories live under the user "agent:<agent_id>", a run's alone under "run:<run_id>".
- `run_id` names the chat session `add` buffers its messages in; the facts extracted from
  it are the scope's memories, so reads do not filter by run_id.
- `infer=True` extracts now (memman's `observe` + `flush`: no cooldown) and decides each
  fact; `infer=False` writes each message's text through `update_memory`.
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

from memman.aio import AsyncMemoryManager, off_loop
from memman.errors import ConfigError, DecisionError, InvalidInputError, NotFoundError
from memman.manager import MemoryManager
from memman.models import Event, Op, Status, UpdateResult
from memman.models import Memory as Record
from memman.text import content_hash

log = logging.getLogger(__name__)

# memman's ops under mem0's event names; PENDING (the decider failed, the fact is parked for
# retry_pending) has no mem0 name and keeps its own.
EVENTS = {Op.ADD: "ADD", Op.UPDATE: "UPDATE", Op.DELETE: "DELETE", Op.NOOP: "NONE"}
SCOPE_KEYS = ("user_id", "agent_id", "run_id")
# Provenance of a text update() wrote: "mem0.update:<id of the memory it replaced>".
UPDATE_SOURCE = "mem0.update:"
# OpenAI-compatible providers of mem0's llm/embedder config, and where each keeps its URL.
BASE_URL_KEYS = {
    "openai": ("openai_base_url", None),
    "ollama": ("ollama_base_url", "/v1"),  # mem0 gives Ollama's root; its OpenAI API is /v1
    "vllm": ("vllm_base_url", None),
    "lmstudio": ("lmstudio_base_url", None),
}
LOCAL_EMBEDDING_MODELS = {"all-MiniLM-L6-v2", "sentence-transformers/all-MiniLM-L6-v2"}
# mem0 config keys that would change behaviour memman cannot reproduce: refused, not ignored.
UNSUPPORTED_CONFIG = (
    "graph_store",
    "reranker",
    "custom_fact_extraction_prompt",
    "custom_update_memory_prompt",
    "custom_instructions",
)


def _provider(section: Any, name: str) -> tuple[str, dict[str, Any]]:
    if not isinstance(section, dict):
        raise ConfigError(f"{name} must be a mapping with provider and config")
    provider = section.get("provider", "openai")
    config = section.get("config") or {}
    if not isinstance(config, dict):
        raise ConfigError(f"{name}.config must be a mapping")
    return provider, config


def _base_url(provider: str, config: dict[str, Any], name: str) -> str | None:
    if provider not in BASE_URL_KEYS:
        raise ConfigError(
            f"{name} provider {provider!r} is not supported by memman: use an OpenAI-compatible "
            f"one ({', '.join(BASE_URL_KEYS)}) with its base URL"
        )
    key, suffix = BASE_URL_KEYS[provider]
    url = config.get(key)
    if url and suffix and not url.rstrip("/").endswith(suffix):
        url = url.rstrip("/") + suffix
    return url


def settings_from_config(config: dict[str, Any]) -> dict[str, Any]:
    """MemoryManager keyword arguments for a mem0 config dict (`Memory.from_config`).

    Maps `llm` (an OpenAI-compatible provider: model, api_key, base URL), `embedder`
    (OpenAI-compatible, or huggingface all-MiniLM-L6-v2 -> memman's local model),
    `history_db_path` or `vector_store.config.path` (the SQLite file). `version` is ignored.
    """
    if not isinstance(config, dict):
        raise ConfigError("a mem0 config must be a dict")
    refused = [key for key in UNSUPPORTED_CONFIG if config.get(key)]
    if refused:
        raise ConfigError(f"memman's mem0 facade does not support {', '.join(refused)}")
    unknown = set(config) - {
        "llm",
        "embedder",
        "vector_store",
        "history_db_path",
        "version",
        *UNSUPPORTED_CONFIG,
    }
    if unknown:
        raise ConfigError(f"unknown mem0 config keys: {', '.join(sorted(unknown))}")
    settings: dict[str, Any] = {}
    urls: dict[str, str] = {}
    if "llm" in config:
        provider, llm = _provider(config["llm"], "llm")
        if url := _base_url(provider, llm, "llm"):
            urls["llm"] = settings["llm_base_url"] = url
        if llm.get("model"):
            settings["llm_model"] = llm["model"]
        if llm.get("api_key"):
            settings["llm_api_key"] = llm["api_key"]
    if "embedder" in config:
        provider, embedder = _provider(config["embedder"], "embedder")
        if provider == "huggingface":
            if embedder.get("model", "all-MiniLM-L6-v2") not in LOCAL_EMBEDDING_MODELS:
                raise ConfigError("memman's local embedder is all-MiniLM-L6-v2 only")
            settings["embedder"] = "local"
        else:
            if url := _base_url(provider, embedder, "embedder"):
                if urls.get("llm", url) != url:
                    raise ConfigError("memman uses one base URL for the LLM and the embedder")
                settings["llm_base_url"] = url
            settings["embedder"] = "openai"
            if embedder.get("model"):
                settings["embedding_model"] = embedder["model"]
            if embedder.get("api_key") and "llm_api_key" not in settings:
                settings["llm_api_key"] = embedder["api_key"]
    store = config.get("vector_store")
    if store:
        provider, store_config = _provider(store, "vector_store")
        if provider not in ("memman", "sqlite"):
            raise ConfigError(
                f"vector_store provider {provider!r}: memman keeps memories and vectors in its "
                "own SQLite file; give its path as history_db_path"
            )
        if store_config.get("path"):
            settings["path"] = str(store_config["path"])
    if config.get("history_db_path"):
        settings["path"] = str(config["history_db_path"])
    return settings


def _entity(value: Any, name: str) -> str | None:
    """mem0's id rules: ints become strings, whitespace is trimmed, blank is refused."""
    if value is None:
        return None
    text = str(value).strip()
    if not text or any(c.isspace() for c in text):
        raise InvalidInputError(f"Invalid {name}: must be a non-empty identifier without spaces")
    return text


def _scope(ids: dict[str, Any]) -> tuple[str, str | None]:
    """(user_id, agent_id) of memman's scope for mem0's user_id/agent_id/run_id."""
    user, agent, run = (_entity(ids.get(key), key) for key in SCOPE_KEYS)
    if user is None and agent is None and run is None:
        raise InvalidInputError(
            "At least one of 'user_id', 'agent_id', or 'run_id' must be provided."
        )
    if user is None:
        user = f"agent:{agent}" if agent is not None else f"run:{run}"
    return user, agent


def _split_filters(filters: Any, **given: Any) -> tuple[dict[str, Any], dict[str, Any]]:
    """(scope ids, metadata equality filters) from mem0's `filters` and top-level ids."""
    if filters is not None and not isinstance(filters, dict):
        raise InvalidInputError("filters must be a dict")
    rest = dict(filters or {})
    ids = {key: rest.pop(key, None) for key in SCOPE_KEYS}
    for key, value in given.items():
        if value is not None:
            ids[key] = value
    for key, value in rest.items():
        if key in ("AND", "OR", "NOT") or isinstance(value, dict | list):
            raise InvalidInputError(
                f"filter {key!r}: memman's mem0 facade filters metadata by equal values only"
            )
    return ids, rest


def _matches(memory: Record, wanted: dict[str, Any]) -> bool:
    return all(
        key in memory.metadata and (value == "*" or memory.metadata[key] == value)
        for key, value in wanted.items()
    )


def _item(memory: Record, score: float | None = None) -> dict[str, Any]:
    """A memory as mem0 returns it."""
    item = {
        "id": memory.id,
        "memory": memory.content,
        "hash": content_hash(memory.content),
        "metadata": memory.metadata or None,
        "score": score,  # None outside search, as in mem0's items
        "created_at": memory.created_at,
        "updated_at": memory.updated_at,
        "user_id": memory.user_id,
        "agent_id": memory.agent_id,
        "run_id": None,  # runs are sessions of the scope, not a property of a memory
    }
    return item


def _result(result: UpdateResult, text: str | None = None) -> dict[str, Any]:
    """One decision as an `add` result: mem0's event name, memman's reason."""
    out: dict[str, Any] = {
        "id": result.memory_id,
        "memory": result.content if result.content is not None else result.previous_content,
        "event": EVENTS.get(result.op, result.op.value),
        "reason": result.reason,
    }
    if out["memory"] is None:
        out["memory"] = text
    if result.op in (Op.UPDATE, Op.DELETE) and result.previous_content is not None:
        out["previous_memory"] = result.previous_content
    return out


def _history_entry(event: Event) -> dict[str, Any]:
    return {
        "id": event.id,
        "memory_id": event.memory_id,
        "old_memory": event.content_before,
        "new_memory": None if event.op is Op.DELETE else event.content_after,  # as mem0's
        "event": EVENTS.get(event.op, event.op.value),
        "created_at": event.created_at,
        "updated_at": None,
        "is_deleted": event.op is Op.DELETE,
        "actor_id": None,
        "role": None,
        "reason": event.reason,
        "tier": event.tier.value,
    }


def _messages(messages: Any) -> list[dict[str, Any]]:
    if isinstance(messages, str):
        return [{"role": "user", "content": messages}]
    if isinstance(messages, dict):
        return [messages]
    if isinstance(messages, list) and all(isinstance(m, dict) for m in messages):
        return messages
    raise InvalidInputError("messages must be str, dict, or list[dict]")


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
        elif config is None or isinstance(config, str | Path):
            self.manager = MemoryManager(None if config is None else str(config))
        else:
            raise ConfigError("Memory takes a database path, a mem0 config dict or manager=")

    @classmethod
    def from_config(cls, config_dict: dict[str, Any]) -> Memory:
        return cls(config_dict)

    def close(self) -> None:
        self.manager.close()

    def __enter__(self) -> Memory:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

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
    ) -> dict[str, Any]:
        """Remember a conversation (or one string): `{"results": [decision, ...]}`.

        infer=True: the messages are buffered in the run's session (a new one without
        run_id) and extracted at once, each fact decided by update_memory; metadata is not
        attached to extracted facts (logged). A failed extraction raises DecisionError and
        leaves the messages buffered (flush or consolidate extracts them later).
        infer=False: each non-system message's text goes through update_memory as it is.
        """
        user, agent = _scope({"user_id": user_id, "agent_id": agent_id, "run_id": run_id})
        chat = _messages(messages)
        if not infer:
            texts = [m.get("content") for m in chat if m.get("role") != "system"]
            if not all(isinstance(text, str) for text in texts):
                raise InvalidInputError("with infer=False every message content must be a string")
            results = self.manager.update_many(
                texts, user_id=user, agent_id=agent, metadata=metadata, source="mem0.add"
            )
            return {"results": [_result(r, t) for r, t in zip(results, texts, strict=True)]}
        if metadata:
            log.warning("add(infer=True): memman does not attach metadata to extracted facts")
        session = _entity(run_id, "run_id") or f"mem0-{uuid.uuid4().hex}"
        observed = self.manager.observe(chat, user_id=user, agent_id=agent, session_id=session)
        flushed = self.manager.flush(session, user_id=user, agent_id=agent)
        if flushed.error:
            raise DecisionError(
                f"extracting the messages failed ({flushed.error}); they stay buffered in "
                f"session {session} for flush or consolidate"
            )
        return {"results": [_result(r) for r in [*observed.results, *flushed.results]]}

    def update(
        self,
        memory_id: str,
        text: str | None = None,
        metadata: dict[str, Any] | None = None,
        data: str | None = None,
    ) -> dict[str, Any]:
        """Replace a memory's text, through update_memory in the memory's scope.

        The decision may keep the id (an UPDATE of this memory) or store the text under
        another (an ADD, or a NOOP of a memory that already says it): then this memory is
        soft-deleted, so the new text replaces it either way, and the old id keeps standing
        for the memory that holds it (get, update, delete, history follow it). The result's
        `id` says where the text lives. A parked decision (PENDING) leaves this memory as it is.
        """
        text = text if text is not None else data
        if metadata is not None:
            raise InvalidInputError("memman's mem0 facade updates a memory's text only")
        if text is None:
            raise InvalidInputError("update() needs the new text (text= or data=)")
        memory = self._active(memory_id)
        result = self.manager.update_memory(
            text,
            user_id=memory.user_id,
            agent_id=memory.agent_id,
            source=UPDATE_SOURCE + memory.id,
        )
        if result.op is not Op.PENDING and result.memory_id != memory.id:
            self.manager.delete(
                memory.id,
                reason=f"replaced by update(): now {result.memory_id}",
                user_id=memory.user_id,
                agent_id=memory.agent_id,
            )
        return {"message": "Memory updated successfully!", **_result(result, text)}

    def delete(self, memory_id: str) -> dict[str, Any]:
        """Soft-delete one memory (MemoryManager.restore brings it back)."""
        memory = self._active(memory_id)
        self.manager.delete(
            memory.id,
            reason="deleted through mem0 delete()",
            user_id=memory.user_id,
            agent_id=memory.agent_id,
        )
        return {"message": "Memory deleted successfully!"}

    def delete_all(
        self, user_id: str | None = None, agent_id: str | None = None, run_id: str | None = None
    ) -> dict[str, Any]:
        """Soft-delete every active memory of the scope."""
        if user_id is None and agent_id is None and run_id is None:
            raise InvalidInputError(
                "At least one filter is required to delete all memories. If you want to "
                "delete all memories, use the `reset()` method."
            )
        user, agent = _scope({"user_id": user_id, "agent_id": agent_id, "run_id": run_id})
        for memory in self.manager.list(user_id=user, agent_id=agent):
            self.manager.delete(
                memory.id, reason="deleted through mem0 delete_all()", user_id=user, agent_id=agent
            )
        return {"message": "Memories deleted successfully!"}

    def reset(self) -> None:
        """Soft-delete every active memory of every scope (the audit trail stays)."""
        memories = list(self.manager.export())
        for memory in memories:
            self.manager.delete(
                memory.id,
                reason="deleted through mem0 reset()",
                user_id=memory.user_id,
                agent_id=memory.agent_id,
            )

    # -- reads -------------------------------------------------------------------------------

    def _owner(self, memory_id: str) -> dict[str, str | None]:
        """The scope of a memory named by id alone, as mem0's calls name one: mem0's ids are
        global, so the facade looks the owner up (NotFoundError for an unknown id)."""
        if not isinstance(memory_id, str):
            raise NotFoundError(f"no memory with id {memory_id!r}")
        with self.manager.store.read() as conn:
            memory = self.manager.store.get(conn, memory_id)
        return {"user_id": memory.user_id, "agent_id": memory.agent_id}

    def _active(self, memory_id: str) -> Record:
        """The active memory an id stands for: itself, or where update() moved its text.

        update() may store the new text under another id (see update); the memory that
        received it carries the source "mem0.update:<old id>", so an id a caller holds keeps
        answering get, update, delete and search results as mem0's ids do.
        """
        try:
            memory = self.manager.get(memory_id, **self._owner(memory_id))
        except NotFoundError:
            raise InvalidInputError(f"Memory with id {memory_id} not found") from None
        seen: set[str] = set()
        while memory.status is not Status.ACTIVE and memory.id not in seen:
            seen.add(memory.id)
            mark = UPDATE_SOURCE + memory.id
            scope = self.manager.list(
                user_id=memory.user_id, agent_id=memory.agent_id, include_inactive=True
            )
            heirs = [m for m in scope if m.id != memory.id and mark in m.sources]
            active = [m for m in heirs if m.status is Status.ACTIVE]
            memory = (active or heirs or [memory])[-1]
        if memory.status is not Status.ACTIVE:
            raise InvalidInputError(f"Memory with id {memory_id} not found")
        return memory

    def get(self, memory_id: str) -> dict[str, Any] | None:
        """The memory as a mem0 item, None if there is no active memory with that id."""
        try:
            return _item(self._active(memory_id))
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
        """The scope's active memories, oldest first: `{"results": [item, ...]}` (100 at most
        unless limit/top_k says otherwise)."""
        ids, wanted = _split_filters(filters, user_id=user_id, agent_id=agent_id, run_id=run_id)
        user, agent = _scope(ids)
        count = _count(top_k if top_k is not None else limit, default=100)
        if not wanted:
            memories = self.manager.list(user_id=user, agent_id=agent, limit=count)
        else:
            found = (m for m in self.manager.iter_all(user_id=user, agent_id=agent))
            memories = [m for m in found if _matches(m, wanted)][:count]
        return {"results": [_item(m) for m in memories]}

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
    ) -> dict[str, Any]:
        """The best memories for a query, best first, with memman's recall score (relevance,
        recency and importance): `{"results": [item with score, ...]}`; 20 unless
        limit/top_k says otherwise. Metadata filters keep equal values among 4x the hits."""
        if not isinstance(query, str) or not query.strip():
            raise InvalidInputError("Invalid query: cannot be empty or whitespace-only.")
        if threshold is not None and not 0 <= threshold <= 1:
            raise InvalidInputError(f"Invalid threshold: {threshold}. Must be between 0 and 1.")
        ids, wanted = _split_filters(filters, user_id=user_id, agent_id=agent_id, run_id=run_id)
        user, agent = _scope(ids)
        count = _count(top_k if top_k is not None else limit, default=20)
        if count == 0:
            return {"results": []}
        hits = self.manager.search(
            query.strip(), user_id=user, agent_id=agent, limit=count * 4 if wanted else count
        )
        kept = [
            hit
            for hit in hits
            if _matches(hit.memory, wanted) and (threshold is None or hit.score >= threshold)
        ]
        return {"results": [_item(hit.memory, hit.score) for hit in kept[:count]]}

    def history(self, memory_id: str) -> list[dict[str, Any]]:
        """Every change of a memory, oldest first, keyed as mem0's history (plus memman's
        reason and tier), with the history of the memory update() moved its text to;
        [] for an unknown id, as mem0 answers."""
        try:
            owner = self._owner(memory_id)
            events = {event.id: event for event in self.manager.history(memory_id, **owner)}
            current = self._active(memory_id).id
        except NotFoundError:
            return []
        except InvalidInputError:  # deleted: its own history only
            current = memory_id
        if current != memory_id:  # update() moved the text: where it went, too
            moved = self.manager.history(current, **owner)
            events.update((event.id, event) for event in moved)
        return [_history_entry(events[key]) for key in sorted(events)]


def _count(value: Any, *, default: int) -> int:
    if value is None:
        return default
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise InvalidInputError(f"Invalid top_k: {value}. Must be a non-negative integer.")
    return value


class AsyncMemory:
    """mem0's `AsyncMemory`: Memory's methods as coroutines, run off the event loop.

    Built on AsyncMemoryManager (`self.manager`); each call runs the one synchronous
    implementation of `Memory` in a worker thread, so the two never differ.
    """

    def __init__(
        self,
        config: str | Path | dict[str, Any] | None = None,
        *,
        manager: AsyncMemoryManager | MemoryManager | None = None,
    ):
        if isinstance(manager, AsyncMemoryManager):
            manager = manager.manager
        self._memory = Memory(config, manager=manager)
        self.manager = AsyncMemoryManager(manager=self._memory.manager)
        for name in (
            "add",
            "update",
            "delete",
            "delete_all",
            "reset",
            "get",
            "get_all",
            "search",
            "history",
        ):
            setattr(self, name, off_loop(getattr(self._memory, name)))

    @classmethod
    def from_config(cls, config_dict: dict[str, Any]) -> AsyncMemory:
        return cls(config_dict)

    async def close(self) -> None:
        await self.manager.close()

    async def __aenter__(self) -> AsyncMemory:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()
