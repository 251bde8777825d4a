"""`MemoryManager`: the public entry point. Every long-term write goes through update_memory.

The manager validates input at the API boundary and hands candidates to the one write path
(memman/write/writepath.py); reads, recall, lifecycle and maintenance live in their own modules.
Its methods are grouped by stage in memman/api/ (write, read, lifecycle, upkeep); this module
opens the store and assembles the parts they share.
"""

from __future__ import annotations

import os
from typing import Any

from memman.api.arguments import Clock, utc_now
from memman.api.lifecycle import LifecycleCalls
from memman.api.read import ReadCalls
from memman.api.upkeep import UpkeepCalls
from memman.api.write import WriteCalls
from memman.config import Settings, load_settings
from memman.errors import ConfigError
from memman.llm.prompts import check_folder
from memman.semantic.embed import Embedder, make_embedder
from memman.semantic.vectors import chosen_search, make_vector_backend
from memman.storage.backends import open_store
from memman.storage.pending import Leases
from memman.write.decide import Decider, make_decider
from memman.write.writepath import WritePath


class MemoryManager(WriteCalls, ReadCalls, LifecycleCalls, UpkeepCalls):
    """Long-term memory over one SQLite file (or ":memory:").

    Safe to share between threads of one process (each call checks out its own connection,
    writes queue on a lock) and between processes on the same file (WAL + BEGIN IMMEDIATE +
    retry on SQLITE_BUSY).
    """

    def __init__(
        self,
        path: str | os.PathLike[str] | None = None,
        *,
        settings: Settings | None = None,
        decider: str | Decider | None = None,
        embedder: str | Embedder | None = None,
        clock: Clock = utc_now,
        **overrides: Any,
    ):
        """Open (creating and migrating if needed) the store at `path`.

        `overrides` are settings (see memman/config.py). `embedder` is a setting's name
        ("none", "local", "openai") or your own object with `name`, `dim` and
        `embed(texts) -> unit float32 rows` (memman.Embedder); vectors are stored under
        its name, and its cosine thresholds are noop_cosine/novel_cosine (conservative
        defaults for a name memman has not calibrated). `decider` likewise is a setting's name
        ("auto", "offline", "llm") or your own object, checked here rather than at the first
        ambiguous fact.
        """
        if isinstance(path, os.PathLike):  # tmp_path / "m.db", as sqlite3 and open() take it
            path = os.fspath(path)
        custom_embedder: Embedder | None = None
        if isinstance(decider, str):  # a registry name, like the decider setting
            overrides["decider"], decider = decider, None
        elif decider is not None and not callable(getattr(decider, "decide", None)):
            raise ConfigError("decider must be a name (auto, offline, llm) or a Decider object")
        if isinstance(embedder, str):
            overrides["embedder"] = embedder
        elif embedder is not None:
            if not isinstance(embedder, Embedder):
                raise ConfigError(
                    "embedder must be a name (none, local, openai) or an object with name, "
                    "dim and embed(texts)"
                )
            custom_embedder = embedder
        if settings is not None and overrides:  # they would be dropped without a word
            raise ConfigError(
                f"give settings= or setting keywords ({', '.join(sorted(overrides))}), not both:"
                " put them in the Settings (settings.model_copy(update=...))"
            )
        self.settings = settings or load_settings(db=path, **overrides)
        self.path = path or self.settings.db
        decider = decider or make_decider(self.settings)  # an unknown name fails before opening
        if self.settings.prompts_dir:
            check_folder(self.settings.prompts_dir)
        backend = make_vector_backend(
            self.settings.vector_search, cache_mb=self.settings.vector_cache_mb
        )
        self.store = open_store(
            self.path,
            busy_timeout_s=self.settings.busy_timeout_s,
            busy_patience_s=self.settings.busy_patience_s,
            journal_size_limit_mb=self.settings.journal_size_limit_mb,
            dbapi=backend.driver.dbapi,
            prepare=backend.driver.prepare,
        )
        try:
            self.vector_search, self.vectors = chosen_search(
                self.settings.vector_search, backend, self.store.server_vector_search()
            )
        except ConfigError:
            self.store.close()
            raise
        self.clock = clock
        self._leases = Leases(self.store, clock, self.settings.lease_s)
        self._writes = WritePath(
            self.store,
            self.settings,
            decider=decider,
            embedder=custom_embedder or make_embedder(self.settings),
            vectors=self.vectors,
            clock=clock,
        )

    def close(self) -> None:
        self.store.close()

    def __enter__(self) -> MemoryManager:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()
