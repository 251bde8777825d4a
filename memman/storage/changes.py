"""A change set: a memory's row changes with the audit event that records them (and the vector
of its new text), the unit
`Storage.apply` writes (Store.apply, the one call through which memories and events are
written; outside memman/storage/ the apply layer, memman/write/commit.py, is its one caller).

Each kind of row change is a small value naming what changes; the store's lower-level row
writers (insert_memories, change_content, set_status, ...) and its event writers run only
inside storage, so a row change cannot be written without the event it came with
(tests/test_one_door.py keeps every other module off them).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from memman.models import Memory, Status


@dataclass(frozen=True)
class NewMemory:
    """A new active memory: the long_term values of memories.memory_row (its id included)."""

    row: dict[str, Any]


@dataclass(frozen=True)
class NewText:
    """The memory's text replaced (topic and statement time kept where None)."""

    memory: Memory
    content: str
    content_hash: str
    now: str
    source: str | None
    subject: str | None = None
    attribute: str | None = None
    observed_at: str | None = None


@dataclass(frozen=True)
class NewStatus:
    memory_id: str
    status: Status
    now: str


@dataclass(frozen=True)
class Reinforced:
    """A repeated fact: repetition count + 1, the source kept."""

    memory: Memory
    now: str
    source: str | None


@dataclass(frozen=True)
class NewSalience:
    """category and/or importance (a repetition or correction carrying them)."""

    memory_id: str
    category: str | None = None
    importance: float | None = None


@dataclass(frozen=True)
class NewConfidence:
    """Decay: the new confidence; archived too if `archive`."""

    memory_id: str
    confidence: float
    now: str
    archive: bool


@dataclass(frozen=True)
class Superseded:
    """A merge retired the memory (restorable), with its metadata naming the keeper."""

    memory_id: str
    metadata: dict
    now: str


@dataclass(frozen=True)
class NewMetadata:
    """The memory's metadata replaced: an update by id said what it is now."""

    memory_id: str
    metadata: dict
    now: str


RowChange = (
    NewMemory
    | NewText
    | NewStatus
    | Reinforced
    | NewSalience
    | NewConfidence
    | Superseded
    | NewMetadata
)


@dataclass(frozen=True)
class NewVector:
    """The embedding of a memory's current text for one model (stored, or replaced)."""

    memory_id: str
    model: str
    vector: np.ndarray  # float32, unit length


@dataclass(frozen=True)
class ChangeSet:
    """One audit event, the row changes it records (none: an event that changes no memory,
    such as a parked fact or a verdict to keep memories separate) and the vector of the text
    they wrote, if an embedder is configured.

    `event` holds the events columns (memory_id, op, tier, candidate, content_before,
    content_after, reason, scores, created_at, ...), as Store.insert_event takes them."""

    event: dict[str, Any]
    rows: tuple[RowChange, ...] = field(default=())
    vector: NewVector | None = None

    @property
    def batched(self) -> bool:
        """New rows at most, and an event that is never folded (not a NOOP): written with
        its like neighbours in one executemany for the rows and one for the events, so a
        chunk of ADDs (or an import's events) costs two statements, not two per change."""
        new_rows = all(isinstance(row, NewMemory) for row in self.rows)
        return new_rows and self.event.get("op") != "NOOP"
