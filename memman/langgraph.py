"""`MemmanStore`: memman as a LangGraph `BaseStore`, for agents built on LangGraph.

A thin layer over a MemoryManager holding no state of its own; everything it knows is in the
memories' rows. The mapping:

- namespace <-> scope: the labels joined with "." are the user id (LangGraph forbids "." in a
  label, so the join is reversible): ("memories", "alice") is user "memories.alice". The
  store's `agent_id` (default None) is the agent of every scope it touches.
- key <-> memory: a `put` stores its key and value in the memory's metadata (`langgraph_key`,
  `langgraph_value`); a memory written by memman itself (update_memory, observe) has its id as
  key and `{"content": text}` as value. The memory's text is the value's `content`, `text`,
  `memory` or `data` string, else the value as canonical JSON.
- search(query=...) <-> recall (`MemoryManager.search`), with its scores; search without a query
  lists the namespace, scores None. Filters compare values as LangGraph's InMemoryStore does.

Two ways to write. `put` is a direct write: the value lands under its key as given, with no
decision (a memory already under that key is soft-deleted first, and both steps are audited),
so LangGraph code that expects key-value semantics gets them. `update_memory` is the deciding
one: the fact goes through memman's write path (ADD/UPDATE/DELETE/NOOP, with why), and the
result names the memory (the key) it touched.

Needs the optional `langgraph` extra (`pip install 'memman[langgraph]'`).
"""

from __future__ import annotations

import asyncio
import datetime as dt
import json
from collections.abc import Iterable, Iterator
from typing import Any

import sqlalchemy as sa

from memman.api.arguments import MAX_COUNT
from memman.api.manager import MemoryManager
from memman.errors import ConfigError, InvalidInputError
from memman.language.text import content_hash
from memman.models import Memory, Op, Status, Tier, UpdateResult
from memman.scope import Scope
from memman.storage.changes import ChangeSet, NewMemory, NewStatus, NewVector
from memman.storage.memories import memory_row, new_memory_id
from memman.timestamps import stamp
from memman.write.candidate import make_candidate
from memman.write.commit import commit

try:
    from langgraph.store.base import (
        BaseStore,
        GetOp,
        Item,
        ListNamespacesOp,
        PutOp,
        Result,
        SearchItem,
        SearchOp,
        validate_op_namespace,
    )
    from langgraph.store.base import Op as StoreOp

    # The reference semantics of namespace matching and value filters, reused, not copied.
    from langgraph.store.memory import _compare_values, _does_match
except ImportError as error:  # the optional extra is missing
    raise ConfigError(
        "memman.langgraph needs LangGraph: pip install 'memman[langgraph]'"
    ) from error

KEY = "langgraph_key"
VALUE = "langgraph_value"
SEPARATOR = "."  # never inside a LangGraph namespace label
TEXT_FIELDS = ("content", "text", "memory", "data")  # where a value usually keeps its text


def text_of(value: dict[str, Any]) -> str:
    """The memory text a LangGraph value stands for (a blank text field is no text: the
    value is then stored as JSON, as any value without one)."""
    for name in TEXT_FIELDS:
        if isinstance(value.get(name), str) and value[name].strip():
            return value[name]
    return json.dumps(value, sort_keys=True, ensure_ascii=False)


class MemmanStore(BaseStore):
    """A LangGraph store whose items are the memories of a MemoryManager (see module doc)."""

    def __init__(self, manager: MemoryManager, *, agent_id: str | None = None):
        self.manager = manager
        self.agent_id = agent_id

    # -- the mapping -----------------------------------------------------------------------

    def scope(self, namespace: tuple[str, ...]) -> Scope:
        return Scope(SEPARATOR.join(namespace), self.agent_id)

    @staticmethod
    def _fields(memory: Memory) -> dict[str, Any]:
        """An item's fields: the value put under the key, unless memman has since changed the
        memory's text (or wrote it itself): then {"content": its text}."""
        value = memory.metadata.get(VALUE)
        if not isinstance(value, dict) or content_hash(text_of(value)) != content_hash(
            memory.content
        ):
            value = {"content": memory.content}
        return {
            "namespace": tuple(memory.user_id.split(SEPARATOR)),
            "key": str(memory.metadata.get(KEY, memory.id)),  # "" is a key too
            "value": value,
            "created_at": dt.datetime.fromisoformat(memory.created_at),
            "updated_at": dt.datetime.fromisoformat(memory.updated_at),
        }

    def _memories(self, scope: Scope) -> Iterator[Memory]:
        return self.manager.iter_all(user_id=scope.user_id, agent_id=scope.agent_id)

    def _find(self, scope: Scope, key: str) -> Memory | None:
        """The active memory under `key`: the one a put stored it in, else the one with that id."""
        for memory in self._memories(scope):
            if memory.metadata.get(KEY, memory.id) == key:
                return memory
        return None

    def _namespaces(self) -> list[tuple[str, ...]]:
        """Every namespace holding an active memory of this store's agent (one pass)."""
        users = {
            m.user_id
            for m in self.manager.export()
            if m.agent_id == self.agent_id and m.status is Status.ACTIVE
        }
        return sorted(tuple(user.split(SEPARATOR)) for user in users)

    # -- BaseStore -------------------------------------------------------------------------

    def batch(self, ops: Iterable[StoreOp]) -> list[Result]:
        """LangGraph's batch semantics (InMemoryStore's and PostgresStore's): the reads see
        the store as it was before the batch, then its puts are applied, the last put of a
        key winning."""
        ops = list(ops)
        for op in ops:  # every op checked before any is run
            validate_op_namespace(op)
            if not isinstance(op, GetOp | SearchOp | ListNamespacesOp | PutOp):
                raise InvalidInputError(f"unknown store operation {type(op).__name__}")
        results: list[Result] = []
        puts: dict[tuple[tuple[str, ...], str], PutOp] = {}
        for op in ops:
            if isinstance(op, GetOp):
                memory = self._find(self.scope(op.namespace), op.key)
                results.append(None if memory is None else Item(**self._fields(memory)))
            elif isinstance(op, SearchOp):
                results.append(self._search(op))
            elif isinstance(op, ListNamespacesOp):
                results.append(self._list_namespaces(op))
            else:
                puts[(op.namespace, op.key)] = op
                results.append(None)
        for op in puts.values():
            self._put(op)
        return results

    async def abatch(self, ops: Iterable[StoreOp]) -> list[Result]:
        """batch in a worker thread: SQLite and the embedder block."""
        return await asyncio.to_thread(self.batch, list(ops))

    def _search(self, op: SearchOp) -> list[SearchItem]:
        prefix = op.namespace_prefix
        namespaces = [ns for ns in self._namespaces() if ns[: len(prefix)] == prefix]
        items: list[SearchItem] = []
        for namespace in namespaces:
            scope = self.scope(namespace)
            if op.query:
                # A filter is applied after recall, so recall is asked for more than the page.
                wanted = MAX_COUNT if op.filter else op.offset + op.limit
                hits = self.manager.search(
                    op.query, user_id=scope.user_id, agent_id=scope.agent_id, limit=wanted
                )
                items += [SearchItem(**self._fields(h.memory), score=h.score) for h in hits]
            else:
                items += [SearchItem(**self._fields(m)) for m in self._memories(scope)]
        if op.filter:
            items = [
                i
                for i in items
                if all(_compare_values(i.value.get(k), v) for k, v in op.filter.items())
            ]
        if op.query:
            items.sort(key=lambda i: i.score or 0.0, reverse=True)
        return items[op.offset : op.offset + op.limit]

    def _list_namespaces(self, op: ListNamespacesOp) -> list[tuple[str, ...]]:
        namespaces = [
            ns
            for ns in self._namespaces()
            if all(_does_match(condition, ns) for condition in op.match_conditions or ())
        ]
        if op.max_depth is not None:
            namespaces = sorted({ns[: op.max_depth] for ns in namespaces})
        return namespaces[op.offset : op.offset + op.limit]

    def _put(self, op: PutOp) -> None:
        scope = self.scope(op.namespace)
        if op.value is None:
            old = self._find(scope, op.key)
            while old is not None:  # idempotent, as LangGraph's delete is
                try:
                    self.manager.delete(
                        old.id,
                        reason="deleted by a LangGraph store delete",
                        user_id=old.user_id,
                        agent_id=old.agent_id,
                    )
                    return
                except InvalidInputError:  # retired since it was read: what is there now?
                    old = self._find(scope, op.key)
            return
        self._write_direct(scope, op.key, dict(op.value))

    def _write_direct(self, scope: Scope, key: str, value: dict[str, Any]) -> None:
        """Store `value` under `key` as given, replacing what the key holds: one transaction.

        The only write here that is not update_memory: the public API has no undecided write.
        The memory is validated like any fact and embedded when an embedder is configured.
        What the key holds is read inside the write transaction, so concurrent puts of one
        key leave one memory under it (the last writer's), not one per put.
        """
        mm = self.manager
        candidate = make_candidate(
            text_of(value),
            scope=scope,
            settings=mm.settings,
            source=f"langgraph:{key}",
            metadata={KEY: key, VALUE: value},
        )
        embedder = mm.embedder
        vector = embedder.embed([candidate.content])[0] if embedder is not None else None

        def write(conn: sa.Connection) -> None:
            now = stamp(mm.clock())
            event = {"tier": Tier.MANUAL.value, "source": candidate.source, "created_at": now}
            held = mm.store.iter_memories(conn, scope, statuses=(Status.ACTIVE,))
            for old in [m for m in held if m.metadata.get(KEY, m.id) == key]:
                deleted = {
                    "memory_id": old.id,
                    "op": Op.DELETE.value,
                    "candidate": candidate.content,
                    "content_before": old.content,
                    "content_after": old.content,
                    "reason": f"replaced by a LangGraph put under key {key!r}",
                    **event,
                }
                retired = ChangeSet(deleted, (NewStatus(old.id, Status.DELETED, now),))
                commit(mm.store, conn, scope, [retired])  # before the twin check: no twin then
            twin = mm.store.active_by_hash(conn, scope, candidate.content_hash)
            if twin is not None:
                raise InvalidInputError(
                    f"namespace already holds this text under key "
                    f"{twin.metadata.get(KEY, twin.id)!r}; memman keeps one memory per text"
                )
            row = memory_row(
                memory_id=new_memory_id(),
                content=candidate.content,
                content_hash=candidate.content_hash,
                now=now,
                source=candidate.source,
                metadata=candidate.metadata,
            )
            added = {
                "memory_id": row["id"],
                "op": Op.ADD.value,
                "candidate": candidate.content,
                "content_before": None,
                "content_after": candidate.content,
                "reason": f"LangGraph put under key {key!r}: a direct write, not decided",
                **event,
            }
            new_vector = None if vector is None else NewVector(row["id"], embedder.name, vector)
            commit(mm.store, conn, scope, [ChangeSet(added, (NewMemory(row),), new_vector)])

        mm.store.write(write, scope=scope)

    # -- the deciding path -----------------------------------------------------------------

    def update_memory(self, namespace: tuple[str, ...], fact: str, **options: Any) -> UpdateResult:
        """Decide what `fact` does to the namespace's memories (MemoryManager.update_memory,
        with its options); the memory it touched is then the item under `result.memory_id`."""
        scope = self.scope(namespace)
        return self.manager.update_memory(
            fact, user_id=scope.user_id, agent_id=scope.agent_id, **options
        )

    async def aupdate_memory(
        self, namespace: tuple[str, ...], fact: str, **options: Any
    ) -> UpdateResult:
        return await asyncio.to_thread(self.update_memory, namespace, fact, **options)
