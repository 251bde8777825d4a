"""mem0's `AsyncMemory`: the facade's methods as coroutines (memman/mem0/memory.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from memman.aio import AsyncMemoryManager, off_loop
from memman.api.manager import MemoryManager
from memman.mem0.config import config_dict as config_dict_of
from memman.mem0.memory import Memory


class AsyncMemory:
    """mem0's `AsyncMemory`: Memory's methods as coroutines, run off the event loop.

    Built on AsyncMemoryManager (`self.manager`); each call runs the one synchronous
    implementation of `Memory` in a worker thread, so the two never differ.
    """

    def __init__(
        self,
        config: str | Path | dict[str, Any] | None = None,
        *,
        manager: AsyncMemoryManager | MemoryManager | None = None,
    ):
        if isinstance(manager, AsyncMemoryManager):
            manager = manager.manager
        self._memory = Memory(config, manager=manager)
        self.manager = AsyncMemoryManager(manager=self._memory.manager)
        for name in (
            "add",
            "update",
            "delete",
            "delete_all",
            "reset",
            "get",
            "get_all",
            "search",
            "history",
        ):
            setattr(self, name, off_loop(getattr(self._memory, name)))

    @classmethod
    def from_config(cls, config_dict: dict[str, Any]) -> AsyncMemory:
        return cls(config_dict_of(config_dict))

    async def close(self) -> None:
        await self.manager.close()

    async def __aenter__(self) -> AsyncMemory:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()
