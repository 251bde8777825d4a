"""What the phases of a consolidation run share (memman/lifecycle/consolidate.py, merge.py,
decay.py): the run's context over one scope, its op budget, the protection rule and the audit
event every change records.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from dataclasses import dataclass

from memman.config import Settings
from memman.llm.client import LLMClient
from memman.models import Tier
from memman.scope import Scope
from memman.semantic.embed import Embedder
from memman.storage.store import Store
from memman.timestamps import stamp as to_stamp

SOURCE = "consolidation"

# Phase name, done, total: consolidate reports its progress through this (the CLI draws a bar).
Progress = Callable[[str, int, int], None]


class Budget:
    """max_ops, shared by every phase of a run: take() is False once it is spent, and the
    run is then reported as truncated."""

    def __init__(self, max_ops: int):
        self.left = max_ops
        self.truncated = False

    def take(self) -> bool:
        if self.left <= 0:
            self.truncated = True
            return False
        self.left -= 1
        return True


@dataclass(frozen=True)
class Run:
    """One consolidation run over one scope: what every phase reads and may call.

    `budget` is the run's, shared by all its scopes; `client` is the LLM for ambiguous
    clusters (None: offline), `embedder` refreshes the vector of a memory whose text a merge
    changed, `progress(phase, done, total)` is called while merging.
    """

    store: Store
    scope: Scope
    settings: Settings
    now: dt.datetime
    dry_run: bool
    budget: Budget
    client: LLMClient | None = None
    embedder: Embedder | None = None
    progress: Progress | None = None

    @property
    def stamp(self) -> str:
        """`now` as the events and rows of the run record it."""
        return to_stamp(self.now)


def is_protected(category: str | None, confidence: float, settings: Settings) -> bool:
    """Protected categories and sure memories are never merged or decayed automatically."""
    return category in settings.protected_categories or confidence >= settings.protected_confidence


def lifecycle_event(**values: object) -> dict[str, object]:
    """The events columns of a consolidation change (tier lifecycle, source consolidation)."""
    return {"tier": Tier.LIFECYCLE.value, "source": SOURCE, **values}
