"""What every MemoryManager method works with: the store, the settings, the clock and the
write path, and the candidate every written fact becomes.
"""

from __future__ import annotations

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
from memman.write.decide import Decider, LLMDecider
from memman.write.writepath import WritePath


class Parts:
    """The attributes MemoryManager.__init__ sets, and what derives from them."""

    settings: Settings
    path: str
    store: Store
    vectors: VectorSearch
    vector_search: str  # the search in use: numpy, sqlite-vec or pgvector
    clock: Clock
    _leases: Leases
    _writes: WritePath

    @property
    def decider(self) -> Decider:
        """What settles ambiguous facts; fixed at construction (pass `decider=` to change it)."""
        return self._writes.decider

    @property
    def embedder(self) -> Embedder | None:
        """The embedding model, if any; fixed at construction (pass `embedder=`)."""
        return self._writes.embedder

    @property
    def _llm_client(self) -> LLMClient | None:
        """The LLM client extraction and merging call; None offline."""
        return self.decider.client if isinstance(self.decider, LLMDecider) else None

    @property
    def offline(self) -> bool:
        """True when ambiguous cases are settled without an LLM."""
        return self._writes.offline

    def _now(self) -> str:
        return stamp(self.clock())

    def _candidate(
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
