"""AsyncMemoryManager and AsyncMemory: the same calls as coroutines, the work off the loop.

Each test runs a coroutine with asyncio.run against a real SQLite file; the twin of each
synchronous test is the same call awaited, giving the same answer.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import textwrap
import threading

import numpy as np
import pytest

from memman import AsyncMemoryManager, InvalidInputError, MemoryManager, Op
from memman.mem0 import AsyncMemory, Memory
from tests.docs import blocks, section
from tests.postgres import db_on_each_backend, postgres_url  # noqa: F401
from tests.test_lifecycle_observe import preferences
from tests.test_mem0 import llm_config


class ThreadRecordingEmbedder:
    """A tiny embedder that notes which thread called it (the write path embeds every fact)."""

    name = "thread-recorder"
    dim = 4

    def __init__(self) -> None:
        self.threads: set[int] = set()

    def embed(self, texts: list[str]) -> np.ndarray:
        self.threads.add(threading.get_ident())
        rows = np.array([[len(t), t.count(" ") + 1, 1.0, 0.5] for t in texts], dtype=np.float32)
        return rows / np.linalg.norm(rows, axis=1, keepdims=True)


def test_async_manager_calls_are_the_sync_calls_awaited(db):
    async def main():
        async with AsyncMemoryManager(db) as amm:
            added = await amm.update_memory("User likes jazz", user_id="ann")
            again = await amm.update_memory("user likes JAZZ", user_id="ann")
            batch = await amm.update_many(["User has a dog", "User lives in Porto"], user_id="ann")
            hits = await amm.search("jazz", user_id="ann")
            listed = await amm.list(user_id="ann")
            history = await amm.history(added.memory_id, user_id="ann")
            exported = await amm.export(user_id="ann")
            deleted = await amm.delete(added.memory_id, user_id="ann")
            restored = await amm.restore(added.memory_id, user_id="ann")
            block = await amm.context("which jazz?", user_id="ann")
            return added, again, batch, hits, listed, history, exported, deleted, restored, block

    added, again, batch, hits, listed, history, exported, deleted, restored, block = asyncio.run(
        main()
    )
    assert (added.op, again.op, [r.op for r in batch]) == (Op.ADD, Op.NOOP, [Op.ADD, Op.ADD])
    assert [h.memory.content for h in hits] == ["User likes jazz"]
    assert [m.content for m in listed] == [m.content for m in exported]
    assert [e.op for e in history] == [Op.ADD, Op.NOOP]
    assert (deleted.op, restored.op) == (Op.DELETE, Op.UPDATE)
    assert "User likes jazz" in block.text
    with MemoryManager(db) as mm:  # what the coroutines wrote is on disk
        assert len(mm.list(user_id="ann")) == 3


def test_every_public_manager_method_has_its_coroutine(tmp_path):
    """docs/integrations.md: "every MemoryManager method as a coroutine", erasure and transfer
    included."""
    public = {
        name
        for name, value in inspect.getmembers(MemoryManager)
        if not name.startswith("_") and inspect.isfunction(value)
    }

    async def main(amm: AsyncMemoryManager) -> None:
        missing = {n for n in public if not inspect.iscoroutinefunction(getattr(amm, n, None))}
        assert missing == set()
        await amm.ingest([{"fact": "User likes jazz", "user_id": "ann"}])
        lines = await amm.export_jsonl(user_id="ann")
        assert [json.loads(line)["content"] for line in lines] == ["User likes jazz"]
        async with AsyncMemoryManager(str(tmp_path / "copy.db")) as copy:
            moved = await amm.migrate_to(copy)  # an async target, as a user would pass
            assert moved.differences() == [] and len(await copy.list(user_id="ann")) == 1
        report = await amm.forget("ann")
        assert report.memories == 1
        assert await amm.list(user_id="ann") == []
        await amm.close()

    asyncio.run(main(AsyncMemoryManager(str(tmp_path / "m.db"))))


def test_cancelled_writes_leave_a_consistent_store_and_a_retry_is_a_noop(tmp_path):
    """A cancelled coroutine's worker thread runs on: its write lands whole or not at all.
    Re-issuing every fact then stores each once (the landed ones are NOOPs)."""
    path = str(tmp_path / "m.db")
    users = [f"user{i}" for i in range(40)]  # one fact each: every write is an ADD

    async def cancel_half() -> list[object]:
        async with AsyncMemoryManager(path) as amm:
            tasks = [
                asyncio.create_task(amm.update_memory("Prefers flat white", user_id=u))
                for u in users
            ]
            await asyncio.sleep(0)  # let them start
            for task in tasks[::2]:
                task.cancel()
            return await asyncio.gather(*tasks, return_exceptions=True)

    results = asyncio.run(cancel_half())  # asyncio.run waits for the worker threads
    assert all(isinstance(r, asyncio.CancelledError) for r in results[::2])
    assert all(r.op is Op.ADD for r in results[1::2])
    with MemoryManager(path) as mm:
        landed = {m.user_id for m in mm.export()}
        assert set(users[1::2]) <= landed
        assert len(list(mm.export_events())) == len(landed)  # each with its event
        assert mm.check().integrity == [] and mm.stats()["pending"] == 0
        again = [mm.update_memory("Prefers flat white", user_id=u) for u in users]
        assert [r.op is Op.NOOP for r in again] == [u in landed for u in users]
        assert len(list(mm.export())) == len(users)


def test_the_blocking_work_runs_off_the_event_loop(db):
    embedder = ThreadRecordingEmbedder()

    async def main():
        amm = AsyncMemoryManager(db, embedder=embedder)
        loop_thread = threading.get_ident()
        await asyncio.gather(
            *(amm.update_memory(f"User likes band number {i}", user_id="ann") for i in range(4))
        )
        await amm.close()
        return loop_thread

    loop_thread = asyncio.run(main())
    assert embedder.threads and loop_thread not in embedder.threads


def test_async_errors_are_the_typed_errors(db):
    async def main():
        async with AsyncMemoryManager(db) as amm:
            await amm.update_memory("  ", user_id="ann")

    with pytest.raises(InvalidInputError):
        asyncio.run(main())


def test_async_memory_twins_the_mem0_facade(tmp_path):
    chat = [
        {"role": "user", "content": "I'm vegetarian and I live in Lisbon."},
        {"role": "assistant", "content": "Great, I'll suggest vegetarian places in Lisbon."},
    ]

    async def main():
        async with AsyncMemory(str(tmp_path / "a.db")) as m:
            added = await m.add(chat, user_id="alice")
            found = await m.search("vegetarian", filters={"user_id": "alice"}, top_k=3)
            classic = await m.search("vegetarian", user_id="alice", limit=3)
            listed = await m.get_all(filters={"user_id": "alice"})
            memory_id = listed["results"][0]["id"]
            one = await m.get(memory_id)
            await m.update(memory_id, text="I'm vegetarian and I live in Porto.")
            history = await m.history(memory_id)
            with pytest.raises(ValueError, match="user_id"):
                await m.get_all()
            await m.delete_all(user_id="alice")
            after = await m.get_all(user_id="alice")
            return added, found, classic, listed, one, history, after

    added, found, classic, listed, one, history, after = asyncio.run(main())
    with Memory(str(tmp_path / "s.db")) as sync:  # the same calls, not awaited
        assert [(r["event"], r["memory"]) for r in sync.add(chat, user_id="alice")["results"]] == [
            (r["event"], r["memory"]) for r in added["results"]
        ]
    # offline, the two first-person facts are stored apart (lifecycle/pieces.py)
    assert [r["memory"] for r in found["results"]] == ["I'm vegetarian"]
    assert [r["id"] for r in classic["results"]] == [r["id"] for r in found["results"]]
    assert one["id"] == listed["results"][0]["id"]
    assert history[0]["event"] == "ADD" and history[-1]["event"] in ("UPDATE", "DELETE")
    assert after == {"results": []}


def test_async_memory_shares_an_async_manager(tmp_path):
    async def main():
        amm = AsyncMemoryManager(str(tmp_path / "m.db"))
        m = AsyncMemory(manager=amm)
        await m.add("User likes tea", user_id="bob", infer=False)
        listed = await amm.list(user_id="bob")
        await m.close()
        return listed

    assert [x.content for x in asyncio.run(main())] == ["User likes tea"]


def test_the_docs_async_example_runs(tmp_path):
    [code] = blocks(section("docs/integrations.md", "Async"), "python")
    imports, body = code.split("\n\n", 1)
    source = imports + "\n\nasync def example():\n" + textwrap.indent(body, "    ")
    source += "    return r, hits\n"
    namespace: dict = {}
    exec(compile(source, "docs/integrations.md", "exec"), namespace)
    r, hits = asyncio.run(namespace["example"]())
    assert r.op is Op.ADD and [h.memory.id for h in hits] == [r.memory_id]
    assert (tmp_path / "memory.db").exists()


def test_async_memory_extracts_with_the_llm_and_runs_turns_concurrently(tmp_path, fake_openai):
    fake_openai.script(*(preferences(f"User owns {n} bikes") for n in (1, 2, 3)))

    async def main():
        async with AsyncMemory.from_config(llm_config(tmp_path, fake_openai.base_url)) as m:
            turns = [
                m.add(f"I ride my bikes every day, user {i} here.", user_id=f"u{i}")
                for i in range(3)
            ]
            added = await asyncio.gather(*turns)
            listed = await asyncio.gather(*(m.get_all(user_id=f"u{i}") for i in range(3)))
            return added, listed

    added, listed = asyncio.run(main())
    assert all([r["event"] for r in a["results"]] == ["ADD"] for a in added)
    # Each user got exactly the fact extracted from their own turn.
    for a, mine in zip(added, listed, strict=True):
        assert [i["memory"] for i in mine["results"]] == [a["results"][0]["memory"]]
    assert len(fake_openai.requests) == 3
