"""memman: long-term memory for chatbots and agents that stays small, current and explainable."""

from memman.aio import AsyncMemoryManager
from memman.api.manager import MemoryManager
from memman.config import Settings, load_settings
from memman.errors import (
    ConfigError,
    DecisionError,
    EmbeddingError,
    InvalidInputError,
    MemmanError,
    NotFoundError,
    StoreBusyError,
    StoreCorruptError,
    StoreError,
)
from memman.lifecycle.erase import ForgetReport
from memman.lifecycle.relabel import RelabelReport
from memman.models import Event, Memory, Op, PendingFact, SearchHit, Status, Tier, UpdateResult
from memman.semantic.embed import Embedder

__all__ = [
    "AsyncMemoryManager",
    "ConfigError",
    "DecisionError",
    "Embedder",
    "EmbeddingError",
    "Event",
    "ForgetReport",
    "InvalidInputError",
    "MemmanError",
    "Memory",
    "MemoryManager",
    "NotFoundError",
    "Op",
    "PendingFact",
    "RelabelReport",
    "SearchHit",
    "Settings",
    "Status",
    "StoreBusyError",
    "StoreCorruptError",
    "StoreError",
    "Tier",
    "UpdateResult",
    "load_settings",
]
