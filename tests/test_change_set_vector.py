"""A change set carries the vector of the text it writes, and Store.apply writes it in the same
call (issue 15: "apply hands storage one change set (row change + audit event + vector)")."""

from __future__ import annotations

import numpy as np
import pytest
import sqlalchemy as sa

from memman import MemoryManager, Op
from memman.language.text import content_hash
from memman.scope import Scope
from memman.storage.changes import ChangeSet, NewMemory, NewVector
from memman.storage.memories import memory_row, new_memory_id
from memman.storage.vector_format import decoded
from memman.timestamps import stamp
from tests.postgres import db_on_each_backend, direct, postgres_url  # noqa: F401

MODEL = "test-model"
SCOPE = Scope("alice")


@pytest.fixture
def db(db_on_each_backend):  # noqa: F811
    return db_on_each_backend


def _stored(db: str) -> dict[str, np.ndarray]:
    with direct(db) as conn:
        rows = conn.execute(
            sa.text(
                "SELECT l.id, v.vector FROM memory_vectors v JOIN long_term l"
                " ON l.pk = v.memory_pk WHERE v.model = :model"
            ),
            {"model": MODEL},
        )
        return {memory_id: decoded(vector) for memory_id, vector in rows}


def _added(text: str, now: str) -> tuple[dict, ChangeSet]:
    row = memory_row(
        memory_id=new_memory_id(),
        content=text,
        content_hash=content_hash(text),
        now=now,
        source=None,
        metadata={},
    )
    event = {
        "memory_id": row["id"],
        "op": Op.ADD.value,
        "tier": "hash",
        "candidate": text,
        "content_before": None,
        "content_after": text,
        "reason": "a test",
        "scores": {},
        "created_at": now,
    }
    return row, ChangeSet(event, (NewMemory(row),))


def test_apply_writes_each_change_set_s_vector_with_its_row_and_event(db, clock):
    with MemoryManager(db, clock=clock) as mm:
        now = stamp(clock())
        rows, changes, vectors = [], [], {}
        for i, text in enumerate(["User keeps bees", "User plays the banjo"]):
            row, change = _added(text, now)
            vectors[row["id"]] = np.full(4, i + 0.5, dtype=np.float32)
            rows.append(row)
            changes.append(
                ChangeSet(
                    change.event, change.rows, NewVector(row["id"], MODEL, vectors[row["id"]])
                )
            )
        ids = mm.store.write(lambda conn: mm.store.apply(conn, SCOPE, changes), scope=SCOPE)
        assert len(ids) == 2
        assert [e.op for e in mm.history(rows[0]["id"], user_id="alice")] == [Op.ADD]
    stored = _stored(db)
    assert stored.keys() == vectors.keys()
    for memory_id, vector in vectors.items():
        np.testing.assert_array_equal(stored[memory_id], vector)


def test_a_failing_change_set_writes_neither_its_row_nor_its_vector(db, clock):
    with MemoryManager(db, clock=clock) as mm:
        row, change = _added("User keeps bees", stamp(clock()))
        vector = NewVector(row["id"], MODEL, np.ones(4, dtype=np.float32))
        broken = ChangeSet({**change.event, "op": None}, change.rows, vector)  # op is NOT NULL
        with pytest.raises(sa.exc.IntegrityError):
            mm.store.write(lambda conn: mm.store.apply(conn, SCOPE, [broken]), scope=SCOPE)
        assert mm.list(user_id="alice") == []
    assert _stored(db) == {}
