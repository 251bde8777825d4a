"""mem0's call shapes in and dicts out: ids and filters checked as mem0 checks them, memories,
decisions and history entries shaped as mem0 returns them.

Apart from the facade's methods (memman/mem0/memory.py) so each method reads as one MemoryManager
call between a translation in and a translation out.
"""

from __future__ import annotations

from typing import Any

from memman.errors import InvalidInputError
from memman.language.text import content_hash
from memman.models import Event, Op, UpdateResult
from memman.models import Memory as Record

# memman's ops under mem0's event names; PENDING (the decider failed, the fact is parked for
# retry_pending) has no mem0 name and keeps its own.
EVENTS = {Op.ADD: "ADD", Op.UPDATE: "UPDATE", Op.DELETE: "DELETE", Op.NOOP: "NONE"}
SCOPE_KEYS = ("user_id", "agent_id", "run_id")
# Provenance of a text update() wrote: "mem0.update:<id of what it replaced>".
UPDATE_SOURCE = "mem0.update:"


def mem0_id(value: Any, name: str) -> str | None:
    """mem0's id rules: whitespace is trimmed, blank is refused; an id is a string, as the
    core's are (an int was stored as the user "5", issue 29)."""
    if value is None:
        return None
    if not isinstance(value, str):
        raise InvalidInputError(f"Invalid {name}: must be a string, not {type(value).__name__}")
    text = value.strip()
    if not text or any(c.isspace() for c in text):
        raise InvalidInputError(f"Invalid {name}: must be a non-empty identifier without spaces")
    return text


def scope_of(ids: dict[str, Any]) -> tuple[str, str | None]:
    """(user_id, agent_id) of memman's scope for mem0's user_id/agent_id/run_id."""
    user, agent, run = (mem0_id(ids.get(key), key) for key in SCOPE_KEYS)
    if user is None and agent is None and run is None:
        raise InvalidInputError(
            "At least one of 'user_id', 'agent_id', or 'run_id' must be provided."
        )
    if user is None:
        user = f"agent:{agent}" if agent is not None else f"run:{run}"
    return user, agent


def split_filters(filters: Any, **given: Any) -> tuple[dict[str, Any], dict[str, Any]]:
    """(scope ids, metadata equality filters) from mem0's `filters` and top-level ids."""
    if filters is not None and not isinstance(filters, dict):
        raise InvalidInputError("filters must be a dict")
    rest = dict(filters or {})
    ids = {key: rest.pop(key, None) for key in SCOPE_KEYS}
    for key, value in given.items():
        if value is None:
            continue
        if ids[key] is not None and mem0_id(ids[key], key) != mem0_id(value, key):
            raise InvalidInputError(
                f"{key} given twice, {value!r} and filters[{key!r}]={ids[key]!r}: give it once"
            )
        ids[key] = value
    for key, value in rest.items():
        if key in ("AND", "OR", "NOT") or isinstance(value, dict | list):
            raise InvalidInputError(
                f"filter {key!r}: memman's mem0 facade filters metadata by equal values only"
            )
    return ids, rest


def matches(memory: Record, wanted: dict[str, Any]) -> bool:
    return _matches(memory.metadata, wanted)


def matches_item(item: dict[str, Any], wanted: dict[str, Any]) -> bool:
    """matches() for an item already shaped (a short-term fact's)."""
    return _matches(item["metadata"] or {}, wanted)


def _matches(metadata: dict[str, Any], wanted: dict[str, Any]) -> bool:
    return all(
        key in metadata and (value == "*" or metadata[key] == value)
        for key, value in wanted.items()
    )


def as_item(memory: Record, score: float | None = None) -> dict[str, Any]:
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


def as_result(result: UpdateResult, text: str | None = None) -> dict[str, Any]:
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


def as_history_entry(event: Event) -> dict[str, Any]:
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


def as_messages(messages: Any) -> list[dict[str, Any]]:
    if isinstance(messages, str):
        return [{"role": "user", "content": messages}]
    if isinstance(messages, dict):
        return [messages]
    if isinstance(messages, list) and all(isinstance(m, dict) for m in messages):
        return messages
    raise InvalidInputError("messages must be str, dict, or list[dict]")


def check_top_k(value: Any, *, default: int) -> int:
    if value is None:
        return default
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise InvalidInputError(f"Invalid top_k: {value}. Must be a non-negative integer.")
    return value


def check_threshold(value: Any) -> None:
    """mem0's threshold rule: None, or a number from 0 to 1 (a string is refused, not compared)."""
    if value is None:
        return
    if not isinstance(value, int | float) or isinstance(value, bool):
        raise InvalidInputError("threshold must be a valid number")
    if not 0 <= value <= 1:
        raise InvalidInputError(f"Invalid threshold: {value}. Must be between 0 and 1.")


# mem0 add() arguments with no memman counterpart, and what to do instead.
UNSUPPORTED = {
    "memory_type": "memman keeps facts about users and agents, not procedural memory",
    "prompt": "memman's extraction prompt is prompts/extract_facts.j2: set prompts_dir to"
    " replace it",
}


def check_unsupported(**arguments: Any) -> None:
    """An InvalidInputError naming the first of mem0's arguments memman cannot honour that
    is given (not None): never ignored, and clearer than a TypeError."""
    for name, value in arguments.items():
        if value is not None:
            raise InvalidInputError(f"add({name}=...) is mem0's; {UNSUPPORTED[name]}")
