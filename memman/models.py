"""The typed records memman hands back to callers."""

from __future__ import annotations

from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

# Importance is the extraction prompt's 1 (trivia) to 10 (must never be forgotten) scale;
# confidence runs from 0 to 1. update_memory refuses values off them, and so does an import.
MIN_IMPORTANCE, MAX_IMPORTANCE = 1, 10
# The roles of a chat message observe() buffers, and an import copies: OpenAI's chat roles,
# old and new ("function" before tools, "developer" for system prompts of reasoning models).
# Only "user" messages are the user's words; the rest are context.
MESSAGE_ROLES = frozenset({"user", "assistant", "system", "developer", "tool", "function"})


class Op(StrEnum):
    """What a decision did to long-term memory."""

    ADD = "ADD"
    UPDATE = "UPDATE"
    DELETE = "DELETE"
    NOOP = "NOOP"
    PENDING = "PENDING"  # not decided yet: parked with the error, retried by retry_pending()


class Tier(StrEnum):
    """Which part of the pipeline settled a decision; cheaper tiers come first."""

    HASH = "hash"  # same normalised text already stored
    NOVEL = "novel"  # nothing similar retrieved: plain ADD
    LEXICAL = "lexical"  # near-identical by token overlap: NOOP
    SEMANTIC = "semantic"  # near-identical by embedding cosine: NOOP
    TOPIC = "topic"  # same subject and attribute: a new value replaces, retracts or adds
    LLM = "llm"  # the structured LLM decider
    OFFLINE = "offline"  # the deterministic decider used when no LLM is configured
    PENDING = "pending"  # the decider failed; the fact is parked
    MANUAL = "manual"  # an explicit user action (delete, restore)
    LIFECYCLE = "lifecycle"  # consolidate: expiry, merge of near-duplicates, decay, archive


class Status(StrEnum):
    ACTIVE = "active"
    DELETED = "deleted"
    SUPERSEDED = "superseded"
    ARCHIVED = "archived"


# Which statuses a read of memories keeps; None: every row, even of a status no memman
# write stores (another program's edit, which `memman check` looks for).
Statuses = tuple[Status, ...] | None


class Memory(BaseModel):
    """One long-term memory of a scope (user, optionally agent)."""

    model_config = ConfigDict(frozen=True)

    id: str
    user_id: str
    agent_id: str | None = None
    content: str
    category: str | None = None
    importance: float = 5.0
    confidence: float = 1.0
    repetition_count: int = 1
    access_count: int = 0
    last_accessed_at: str | None = None
    created_at: str
    updated_at: str
    status: Status = Status.ACTIVE
    sources: list[str] = Field(default_factory=list)
    metadata: dict[str, Any] = Field(default_factory=dict)
    # What the fact is about (memman/language/topic.py): "user" or another person, and an attribute
    # such as "residence" or "likes". None when it is not known.
    subject: str | None = None
    attribute: str | None = None
    observed_at: str | None = None  # when the user stated the text it holds now
    decayed_at: str | None = None  # when consolidation last lowered its confidence


class SearchHit(BaseModel):
    """A memory returned by search with the score that ranked it."""

    model_config = ConfigDict(frozen=True)

    memory: Memory
    score: float
    # Near-duplicate memories folded into this hit at load time (see recall.collapse).
    collapsed_ids: list[str] = Field(default_factory=list)

    @property
    def id(self) -> str:
        return self.memory.id

    @property
    def content(self) -> str:
        return self.memory.content


class Event(BaseModel):
    """One audit-trail row: a decision about a candidate fact and what it changed."""

    model_config = ConfigDict(frozen=True)

    id: int
    user_id: str
    agent_id: str | None = None
    memory_id: str | None
    op: Op
    tier: Tier
    candidate: str | None
    content_before: str | None
    content_after: str | None
    reason: str
    scores: dict[str, Any] = Field(default_factory=dict)
    model: str | None = None
    prompt_template: str | None = None
    prompt_hash: str | None = None
    latency_ms: float | None = None
    attempts: int | None = None
    tokens: int | None = None
    error: str | None = None
    source: str | None = None
    created_at: str
    # A NOOP repeated with nothing else in between is one row: how many times, and the last.
    repeat_count: int = 1
    last_at: str | None = None


class PendingFact(BaseModel):
    """A candidate the decider could not settle; kept until retry_pending() decides it."""

    model_config = ConfigDict(frozen=True)

    id: int
    user_id: str
    agent_id: str | None = None
    content: str
    source: str | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)
    category: str | None = None  # given with the fact; stored when it is decided
    importance: float | None = None
    subject: str | None = None
    attribute: str | None = None
    observed_at: str | None = None
    error: str
    attempts: int
    created_at: str
    updated_at: str


class UpdateResult(BaseModel):
    """What update_memory did with one candidate fact, and why."""

    model_config = ConfigDict(frozen=True)

    op: Op
    memory_id: str | None
    tier: Tier
    reason: str
    event_id: int | None
    content: str | None = None  # the memory's content after the decision
    previous_content: str | None = None  # for UPDATE and DELETE: what it said before
    pending_id: int | None = None  # set when op is PENDING
    offline: bool = False  # True when no LLM was configured for an ambiguous case
    # Other memories the decision retired: they stated the same old value (superseded, each
    # with its own event; memman restore brings one back).
    also_retired: list[str] = Field(default_factory=list)
