"""What a consolidation run did or would do: its changes, the clusters it listed, the sessions
it extracted.

Below the phases (memman/lifecycle/consolidate.py, merge.py, decay.py) so each can import it.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, computed_field

from memman.lifecycle.idle import SessionExtraction

Action = Literal["expire", "promote", "merge", "decay", "archive"]


class Change(BaseModel):
    """One change consolidate made (or, in a dry run, would make)."""

    model_config = ConfigDict(frozen=True)

    action: Action
    user_id: str
    agent_id: str | None = None
    target: str  # a memory id, or "short_term:<id>"
    content: str
    detail: str
    related: list[str] = Field(default_factory=list)  # merge: the superseded ids
    confidence_before: float | None = None
    confidence_after: float | None = None


# What became of an ambiguous cluster: merged or kept separate by the LLM; not asked (no LLM
# configured, or a dry run); the call failed, or a member changed meanwhile (left as it is).
Outcome = Literal["merged", "kept_separate", "no_llm", "would_ask_llm", "failed", "changed"]


class AmbiguousCluster(BaseModel):
    """Related memories that may be one fact: only the LLM may merge them."""

    model_config = ConfigDict(frozen=True)

    user_id: str
    agent_id: str | None = None
    ids: list[str]
    contents: list[str]
    outcome: Outcome
    detail: str


class ConsolidationReport(BaseModel):
    model_config = ConfigDict(frozen=True)

    dry_run: bool
    changes: list[Change]
    rejected_clusters: list[list[str]] = Field(default_factory=list)  # not mutually similar
    ambiguous_clusters: list[AmbiguousCluster] = Field(default_factory=list)
    truncated: bool = False  # max_ops reached before everything was planned
    # Idle sessions extracted first (in a dry run: found, not extracted; result None).
    extractions: list[SessionExtraction] = Field(default_factory=list)

    def count(self, action: Action) -> int:
        return sum(1 for c in self.changes if c.action == action)

    @computed_field
    @property
    def extracted_sessions(self) -> int:
        """Idle sessions whose messages were extracted (a dry run: would be)."""
        return sum(1 for e in self.extractions if e.result is None or e.result.extracted_messages)

    @computed_field
    @property
    def extracted_messages(self) -> int:
        """Buffered messages extracted from them (a dry run: waiting to be)."""
        return sum(
            e.session.waiting if e.result is None else e.result.extracted_messages
            for e in self.extractions
        )
