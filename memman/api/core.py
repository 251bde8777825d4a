"""What every part of MemoryManager works with: the opened store and its settings, the clock,
the write path, and the candidate every written fact becomes.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from memman.api.arguments import Clock
from memman.config import Settings
from memman.llm.client import LLMClient
from memman.scope import Scope
from memman.semantic.embed import Embedder
from memman.semantic.vectors import VectorSearch
from memman.storage.pending import Leases
from memman.storage.store import Store
from memman.timestamps import stamp
from memman.write.candidate import Candidate, make_candidate
from memman.write.decide import LLMDecider
from memman.write.writepath import WritePath


@dataclass(frozen=True)
class Core:
    """What MemoryManager.__init__ opened, shared by its parts (memman/api/manager.py)."""

    settings: Settings
    path: str
    store: Store
    vectors: VectorSearch
    vector_search: str  # the search in use: numpy, sqlite-vec or pgvector
    clock: Clock
    leases: Leases  # this worker's claims on pending facts and buffered messages
    write_path: WritePath  # every long-term write goes through it

    @property
    def embedder(self) -> Embedder | None:
        return self.write_path.embedder

    @property
    def llm_client(self) -> LLMClient | None:
        """The LLM client extraction and merging call; None offline."""
        decider = self.write_path.decider
        return decider.client if isinstance(decider, LLMDecider) else None

    def now(self) -> str:
        """The clock's time as stored."""
        return stamp(self.clock())

    def candidate(
        self,
        fact: Any,
        scope: Scope,
        source: str | None,
        metadata: Any,
        category: Any = None,
        importance: Any = None,
        *,
        observed_at: Any = None,
        subject: Any = None,
        attribute: Any = None,
    ) -> Candidate:
        """A fact as the write path takes it, validated (InvalidInputError saying what is wrong)."""
        return make_candidate(
            fact,
            scope=scope,
            settings=self.settings,
            source=source,
            metadata=metadata,
            category=category,
            importance=importance,
            observed_at=observed_at,
            subject=subject,
            attribute=attribute,
            now=None if observed_at is None else self.clock(),  # the clock read only if needed
        )
