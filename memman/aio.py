"""AsyncMemoryManager: MemoryManager's methods as coroutines, run off the event loop.

Every call is the synchronous method run in a worker thread (`asyncio.to_thread`): the
blocking SQLite and HTTP work never stalls the loop, and there is one implementation of each
method, not a sync and an async copy. A MemoryManager may be shared by the threads of a
process, so concurrent coroutines are as safe as concurrent threads.
"""

from __future__ import annotations

import asyncio
import functools
import os
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

from memman.api.manager import MemoryManager
from memman.storage.store_copy import MigrateReport

T = TypeVar("T")

# Methods that return a value; they become coroutines returning the same value.
CALLS = (
    "update_memory",
    "update_many",
    "ingest",
    "pending",
    "retry_pending",
    "resolve_id",
    "get",
    "list",
    "search",
    "context",
    "history",
    "events",
    "stats",
    "reindex",
    "relabel",
    "check",
    "backup",
    "import_jsonl",
    "observe",
    "flush",
    "flush_idle",
    "remember_short_term",
    "short_term",
    "get_short_term",
    "search_short_term",
    "delete_short_term",
    "consolidate",
    "delete",
    "restore",
    "purge",
    "forget",
)
# Methods that stream from one read snapshot; the snapshot (and its connection) lives in one
# thread, so the coroutine reads the whole stream there and returns a list.
STREAMS = ("export", "export_events", "export_jsonl", "iter_all")


def off_loop(method: Callable[..., T]) -> Callable[..., Coroutine[Any, Any, T]]:
    """`method` as a coroutine function that runs it in a worker thread."""

    @functools.wraps(method)
    async def call(*args: Any, **kwargs: Any) -> T:
        return await asyncio.to_thread(method, *args, **kwargs)

    return call


def _listed(method: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(method)
    def read_all(*args: Any, **kwargs: Any) -> list[Any]:
        return list(method(*args, **kwargs))

    return read_all


class AsyncMemoryManager:
    """MemoryManager with every method a coroutine: `await amm.update_memory(...)`.

    Open it like MemoryManager (`AsyncMemoryManager("memory.db", llm_model=...)`), or wrap
    one you have (`AsyncMemoryManager(manager=mm)`); `manager` is the synchronous one.
    `export`, `export_events`, `export_jsonl` and `iter_all` return lists.
    """

    def __init__(
        self,
        path: str | os.PathLike[str] | None = None,
        *,
        manager: MemoryManager | None = None,
        **kwargs: Any,
    ):
        self.manager = manager if manager is not None else MemoryManager(path, **kwargs)
        for name in CALLS:
            setattr(self, name, off_loop(getattr(self.manager, name)))
        for name in STREAMS:
            setattr(self, name, off_loop(_listed(getattr(self.manager, name))))

    async def migrate_to(self, target: AsyncMemoryManager | MemoryManager) -> MigrateReport:
        """MemoryManager.migrate_to, into another async manager or a synchronous one."""
        if isinstance(target, AsyncMemoryManager):
            target = target.manager
        return await asyncio.to_thread(self.manager.migrate_to, target)

    @property
    def offline(self) -> bool:
        return self.manager.offline

    async def close(self) -> None:
        await asyncio.to_thread(self.manager.close)

    async def __aenter__(self) -> AsyncMemoryManager:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()
