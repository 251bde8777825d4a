"""MemmanStore against LangGraph's own reference store: the same operations on both agree.

LangGraph ships no store tests in its wheels, so InMemoryStore is the reference: every
put/get/delete/search/list_namespaces here runs on both stores and the results must match
(namespace, key and value; timestamps differ by nature). Then what only memman does:
recall with scores, the deciding path, the audit trail, a reopened file, and the async twins.
"""

from __future__ import annotations

import asyncio
import itertools
import threading
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

from memman import MemoryManager, Op, Tier
from memman.errors import InvalidInputError

pytest.importorskip("langgraph.store.memory", reason="the langgraph extra is not installed")

from langgraph.store.base import GetOp, InvalidNamespaceError, PutOp, SearchOp
from langgraph.store.memory import InMemoryStore

from memman.langgraph import KEY, VALUE, MemmanStore
from tests.docs import blocks, section

ALICE = ("users", "alice", "memories")
BOB = ("users", "bob", "memories")
DOCS = ("docs",)


@pytest.fixture
def mm(db):
    with MemoryManager(db) as manager:
        yield manager


@pytest.fixture
def stores(mm):
    return InMemoryStore(), MemmanStore(mm)


def view(item):
    return None if item is None else (item.namespace, item.key, item.value)


def views(items):
    return sorted(view(i) for i in items)


def fill(store):
    store.put(ALICE, "k1", {"text": "Likes hiking in the Alps", "kind": "hobby", "n": 1})
    store.put(ALICE, "k2", {"text": "Works as a nurse", "kind": "job", "n": 3})
    store.put(BOB, "k1", {"text": "Plays chess on Sundays", "kind": "hobby", "n": 5})
    store.put(DOCS, "readme", {"title": "Intro", "pages": 3})  # no text field: JSON


def test_put_get_replace_delete_agree_with_in_memory_store(stores):
    for store in stores:
        fill(store)
    reference, memman = stores
    for namespace, key in [(ALICE, "k1"), (ALICE, "k2"), (BOB, "k1"), (DOCS, "readme")]:
        assert view(memman.get(namespace, key)) == view(reference.get(namespace, key))
    assert view(memman.get(ALICE, "k1"))[2] == {
        "text": "Likes hiking in the Alps",
        "kind": "hobby",
        "n": 1,
    }
    assert memman.get(ALICE, "missing") is None
    assert memman.get(("users", "carol", "memories"), "k1") is None  # scopes never mix

    for store in stores:
        store.put(ALICE, "k1", {"text": "Likes hiking in the Dolomites", "kind": "hobby"})
        store.put(ALICE, "k3", {"text": "Likes hiking in the Alps"})  # the old text, new key
        store.delete(ALICE, "k2")
        store.delete(ALICE, "never-there")
    for namespace, key in [(ALICE, "k1"), (ALICE, "k2"), (ALICE, "k3"), (BOB, "k1")]:
        assert view(memman.get(namespace, key)) == view(reference.get(namespace, key))


def test_an_empty_key_and_a_blank_text_agree_with_in_memory_store(stores):
    for store in stores:
        store.put(ALICE, "", {"text": "Keyed by the empty string"})
        store.put(ALICE, "blank", {"text": "", "n": 2})
    reference, memman = stores
    for key in ("", "blank"):
        assert view(memman.get(ALICE, key)) == view(reference.get(ALICE, key))
    assert views(memman.search(ALICE)) == views(reference.search(ALICE))


def test_search_filters_and_pages_agree_with_in_memory_store(stores):
    for store in stores:
        fill(store)
    reference, memman = stores
    for case in [
        (("users",), {}),
        (("users",), {"filter": {"kind": "hobby"}}),
        (ALICE, {"filter": {"n": {"$gt": 2}}}),
        (("users",), {"filter": {"n": {"$lte": 3}, "kind": {"$ne": "job"}}}),
        ((), {}),
        (("nobody",), {}),
    ]:
        prefix, options = case
        assert views(memman.search(prefix, **options)) == views(
            reference.search(prefix, **options)
        ), case
    assert len(memman.search(("users",), limit=2)) == 2
    assert len(memman.search(("users",), limit=2, offset=2)) == 1


def test_list_namespaces_agrees_with_in_memory_store(stores):
    for store in stores:
        fill(store)
    reference, memman = stores
    for options in [
        {},
        {"prefix": ("users",)},
        {"suffix": ("memories",)},
        {"prefix": ("users", "*", "memories")},
        {"max_depth": 2},
        {"prefix": ("users",), "max_depth": 1},
        {"limit": 1, "offset": 1},
    ]:
        assert memman.list_namespaces(**options) == reference.list_namespaces(**options), options


def test_an_emptied_namespace_is_not_listed(stores):
    """The one difference: InMemoryStore keeps listing a namespace whose items are all
    deleted (its dict key stays); memman lists namespaces that hold a memory, as a database
    store does."""
    reference, memman = stores
    for store in stores:
        store.put(BOB, "k1", {"text": "Plays chess on Sundays"})
        store.delete(BOB, "k1")
    assert reference.list_namespaces() == [BOB]
    assert memman.list_namespaces() == []


def test_namespace_rules_are_langgraph_s(stores):
    _, memman = stores
    with pytest.raises(InvalidNamespaceError):
        memman.put(("users.alice",), "k", {"text": "x"})  # "." would break the mapping
    with pytest.raises(InvalidNamespaceError):
        memman.put((), "k", {"text": "x"})


def test_search_with_a_query_is_recall_with_scores(mm):
    store = MemmanStore(mm)
    fill(store)
    hits = store.search(ALICE, query="hiking")
    assert [(h.key, h.value["text"]) for h in hits] == [("k1", "Likes hiking in the Alps")]
    assert isinstance(hits[0].score, float) and hits[0].score > 0
    across = store.search(("users",), query="chess Sundays")
    assert [h.namespace for h in across][:1] == [BOB]
    [bob] = mm.list(user_id="users.bob.memories")
    assert bob.access_count == 1  # recall counts


def test_put_is_a_direct_audited_write_and_update_memory_decides(mm):
    store = MemmanStore(mm)
    store.put(ALICE, "coffee", {"text": "User prefers flat white"})
    [memory] = mm.list(user_id="users.alice.memories")
    [added] = mm.history(memory.id, user_id=memory.user_id)
    assert (added.op, added.tier) == (Op.ADD, Tier.MANUAL)
    assert "direct write" in added.reason

    store.put(ALICE, "coffee", {"text": "User prefers espresso"})
    assert [e.op for e in mm.history(memory.id, user_id=memory.user_id)] == [
        Op.ADD,
        Op.DELETE,
    ]  # replaced, history kept
    assert mm.get(memory.id, user_id=memory.user_id).status == "deleted"

    # The deciding path: a repeat is a NOOP of the memory under "coffee", an extension an UPDATE.
    repeat = store.update_memory(ALICE, "user prefers ESPRESSO.")
    assert repeat.op is Op.NOOP
    assert view(store.get(ALICE, "coffee"))[2] == {"text": "User prefers espresso"}
    extended = store.update_memory(ALICE, "User prefers espresso with a glass of water")
    assert extended.op is Op.UPDATE
    assert view(store.get(ALICE, "coffee"))[2] == {
        "content": "User prefers espresso with a glass of water"
    }  # memman changed the text: the item shows it, under the same key
    new = store.update_memory(ALICE, "User has a cat named Miso")
    assert new.op is Op.ADD
    assert view(store.get(ALICE, new.memory_id)) == (
        ALICE,
        new.memory_id,
        {"content": "User has a cat named Miso"},
    )


def test_one_memory_per_text_a_second_key_is_refused(mm):
    store = MemmanStore(mm)
    store.put(ALICE, "a", {"text": "Likes tea"})
    with pytest.raises(InvalidInputError, match="under key 'a'"):
        store.put(ALICE, "b", {"text": "likes TEA"})
    assert store.get(ALICE, "b") is None


def test_items_survive_reopening_the_file(db):
    with MemoryManager(db) as mm:
        fill(MemmanStore(mm))
    with MemoryManager(db) as mm:
        store = MemmanStore(mm)
        assert view(store.get(DOCS, "readme")) == (DOCS, "readme", {"title": "Intro", "pages": 3})
        assert store.list_namespaces() == sorted([ALICE, BOB, DOCS])


def test_agent_scopes_keep_stores_apart(mm):
    one, two = MemmanStore(mm, agent_id="planner"), MemmanStore(mm, agent_id="writer")
    one.put(ALICE, "k", {"text": "Likes tea"})
    assert two.get(ALICE, "k") is None
    assert two.list_namespaces() == []
    assert one.list_namespaces() == [ALICE]


def test_a_batch_reads_before_its_puts_as_in_memory_store(stores):
    """LangGraph's batch contract: reads see the store before the batch's puts, and the
    last put of a key wins."""
    answers = []
    for store in stores:
        store.put(ALICE, "k1", {"text": "Likes tea"})
        answers.append(
            store.batch(
                [
                    PutOp(ALICE, "k1", {"text": "Likes coffee"}),
                    GetOp(ALICE, "k1"),
                    PutOp(ALICE, "k2", {"text": "Works as a nurse"}),
                    SearchOp(ALICE, limit=10),
                    PutOp(ALICE, "k1", {"text": "Likes juice"}),
                ]
            )
        )
        answers.append(views(store.search(ALICE)))
    reference, memman = answers[:2], answers[2:]
    assert [view(memman[0][1]), views(memman[0][3]), memman[1]] == [
        view(reference[0][1]),
        views(reference[0][3]),
        reference[1],
    ]
    assert memman[1] == [
        (ALICE, "k1", {"text": "Likes juice"}),
        (ALICE, "k2", {"text": "Works as a nurse"}),
    ]


class MeetingEmbedder:
    """Embeds; its first `parties` calls wait for each other, so that many puts are all past
    their reads before any writes (the interleaving that lost the one-memory-per-key rule)."""

    name = "meeting"
    dim = 2

    def __init__(self, parties: int) -> None:
        self.barrier = threading.Barrier(parties)
        self.calls = itertools.count()

    def embed(self, texts: list[str]) -> np.ndarray:
        if next(self.calls) < self.barrier.parties:
            self.barrier.wait(timeout=60)  # a deadlock guard, not a timing assumption
        return np.array([[1.0, 0.0]] * len(texts), dtype=np.float32)


def test_concurrent_puts_of_one_key_leave_one_item(db):
    with MemoryManager(db, embedder=MeetingEmbedder(4)) as manager:
        store = MemmanStore(manager)
        with ThreadPoolExecutor(4) as pool:
            values = [{"text": f"Lives in city number {i}"} for i in range(4)]
            list(pool.map(lambda v: store.put(ALICE, "home", v), values))
        held = [m for m in manager.list(user_id=".".join(ALICE)) if m.metadata.get(KEY) == "home"]
        assert len(held) == 1
        assert store.get(ALICE, "home").value == held[0].metadata[VALUE]


class MeetingManager(MemoryManager):
    """A MemoryManager whose first two deletes wait for each other: both deleters have read
    the key's memory before either deletes it."""

    barrier = threading.Barrier(2)

    def delete(self, *args, **kwargs):
        self.barrier.wait(timeout=60)  # a deadlock guard, not a timing assumption
        return super().delete(*args, **kwargs)


def test_concurrent_deletes_of_one_key_both_succeed(db):
    with MeetingManager(db) as manager:
        store = MemmanStore(manager)
        store.put(ALICE, "home", {"text": "Lives in Porto"})
        with ThreadPoolExecutor(2) as pool:
            assert list(pool.map(lambda _: store.delete(ALICE, "home"), range(2))) == [None, None]
        assert store.get(ALICE, "home") is None


def test_a_ttl_is_refused_not_ignored(mm):
    store = MemmanStore(mm)
    with pytest.raises(NotImplementedError, match="TTL"):
        store.put(ALICE, "k1", {"text": "Likes tea"}, ttl=5)
    assert store.get(ALICE, "k1") is None


def test_async_twins_agree_with_in_memory_store(stores):
    async def run(store):
        await store.aput(ALICE, "k1", {"text": "Likes hiking in the Alps", "kind": "hobby"})
        await store.aput(ALICE, "k2", {"text": "Works as a nurse", "kind": "job"})
        await store.aput(BOB, "k1", {"text": "Plays chess on Sundays", "kind": "hobby"})
        await store.adelete(ALICE, "k2")
        got = await store.aget(ALICE, "k1")
        found = await store.asearch(("users",), filter={"kind": "hobby"})
        spaces = await store.alist_namespaces(prefix=("users",))
        return view(got), views(found), spaces

    reference, memman = stores
    assert asyncio.run(run(memman)) == asyncio.run(run(reference))


def test_the_docs_example_runs():
    [code] = blocks(section("docs/integrations.md", "LangGraph store"), "python")
    exec(compile(code, "docs/integrations.md", "exec"), {})  # cwd is tmp_path: memory.db there
    with MemoryManager("memory.db") as mm:
        [memory] = mm.list(user_id="memories.alice")
        assert memory.content == "Prefers flat white with oat milk"


def test_a_langgraph_graph_uses_the_store(mm):
    """A compiled graph hands MemmanStore to its nodes, as it would any BaseStore."""
    from typing import TypedDict

    from langgraph.graph import END, START, StateGraph
    from langgraph.store.base import BaseStore

    class State(TypedDict):
        message: str
        recalled: list[str]

    def node(state: State, *, store: BaseStore) -> dict:
        store.put(("chat", "alice"), "last", {"text": state["message"]})
        return {"recalled": [h.value["text"] for h in store.search(("chat",), query="Lisbon")]}

    builder = StateGraph(State)
    builder.add_node("remember", node)
    builder.add_edge(START, "remember")
    builder.add_edge("remember", END)
    graph = builder.compile(store=MemmanStore(mm))
    out = graph.invoke({"message": "I moved to Lisbon", "recalled": []})
    assert out["recalled"] == ["I moved to Lisbon"]
    assert [m.content for m in mm.list(user_id="chat.alice")] == ["I moved to Lisbon"]
