"""Erasure that can be verified: after forget() or purge(), the raw bytes of the database and
its WAL hold none of the erased words, and other users' memories are intact and searchable."""

from __future__ import annotations

import hashlib
import sqlite3
from pathlib import Path

import numpy as np
import pytest
import sqlalchemy as sa

from memman import ForgetReport, MemoryManager
from memman.errors import EmbeddingError, LeaseLostError, NotFoundError
from memman.models import Op
from memman.storage.backends import is_postgres_url
from tests.postgres import db_on_each_backend, direct, fresh_database, postgres_url  # noqa: F401

DIM = 32
# Words no other part of the store contains; the FTS index keeps them as they are.
MARKERS = ["qzxalpha", "qzxbravo", "qzxcharlie", "qzxdelta", "qzxfoxtrot", "qzxgolf"]
PARK = "qzxparked"  # the embedder fails on this word, so its fact is parked in pending


class SeededEmbedder:
    """A random unit vector per text (seeded by its hash): every blob is unique."""

    name = "seeded-1"
    dim = DIM

    def embed(self, texts: list[str]) -> np.ndarray:
        if any(PARK in text.lower() for text in texts):
            raise EmbeddingError("embedding server down")
        rows = [
            np.random.default_rng(int(hashlib.sha256(t.encode()).hexdigest()[:16], 16)).random(DIM)
            for t in texts
        ]
        matrix = np.array(rows, dtype=np.float32)
        return matrix / np.linalg.norm(matrix, axis=1, keepdims=True)


def raw_bytes(path: str) -> bytes:
    """The database file and its WAL as they are on disk, lowercased. On PostgreSQL, whose
    files are the server's, every row of every table instead (what a query can still see)."""
    if is_postgres_url(path):
        return _every_row(path)
    return b"".join(Path(p).read_bytes().lower() for p in (path, f"{path}-wal") if Path(p).exists())


def _every_row(url: str) -> bytes:
    with direct(url) as conn:
        tables = conn.execute(
            sa.text("SELECT tablename FROM pg_tables WHERE schemaname = 'public'")
        ).scalars()
        return b"".join(
            _as_found(value)
            for table in list(tables)
            for row in conn.execute(sa.text(f"SELECT * FROM {table}"))
            for value in row
        )


def _as_found(value: object) -> bytes:
    """A value as raw_bytes holds it: bytes lowercased, anything else (a REAL[]'s list of
    floats on PostgreSQL) as its lowercased text."""
    return value.lower() if isinstance(value, bytes) else str(value).lower().encode()


def vector_blobs(path: str, user_id: str) -> list[bytes]:
    """The user's vectors as raw_bytes would hold them."""
    with direct(path) as conn:
        return [
            _as_found(vector)
            for (vector,) in conn.execute(
                sa.text(
                    "SELECT v.vector FROM memory_vectors v JOIN long_term l ON l.pk = v.memory_pk"
                    " WHERE l.user_id = :u"
                ),
                {"u": user_id},
            )
        ]


def open_manager(db: str, clock) -> MemoryManager:
    return MemoryManager(
        db, embedder=SeededEmbedder(), clock=clock, extract_cooldown_s=3600, busy_timeout_s=0.2
    )


def fill_alice(mm: MemoryManager) -> None:
    """Alice's words in every table: memories (one deleted), an UPDATE's history, a parked
    fact, a short-term fact, buffered messages, vectors."""
    mm.update_memory(f"I live in {MARKERS[0]}", user_id="alice")
    assert mm.update_memory(f"I live in {MARKERS[1]}", user_id="alice").op is Op.UPDATE
    gone = mm.update_memory(f"My dog is called {MARKERS[2]}", user_id="alice")
    mm.delete(gone.memory_id, user_id="alice")
    mm.update_memory(f"I collect {MARKERS[3]} stamps", user_id="alice", agent_id="coach")
    assert mm.update_memory(f"I like {PARK}", user_id="alice").op is Op.PENDING
    mm.remember_short_term(f"I am at the {MARKERS[4]} airport", user_id="alice", session_id="s")
    buffered = mm.observe(
        [{"role": "user", "content": f"My sister lives in {MARKERS[5]}"}],
        user_id="alice",
        session_id="s",
    )
    assert buffered.buffered == 1


def test_forget_leaves_none_of_the_users_words_in_the_file(db, clock):
    with open_manager(db, clock) as mm:
        fill_alice(mm)
        kept = mm.update_memory("I play the vwkoboe", user_id="bob")
        mm.update_memory("I live in vwkhaven", user_id="bob")
        mm.update_memory("I live in vwkport", user_id="bob")  # an UPDATE of bob's too
        mm.observe([{"role": "user", "content": "I am vwkbusy"}], user_id="bob", session_id="s")
        mm.search("vwkoboe", user_id="bob")  # bob's vectors cached in this process
        mm.search(MARKERS[1], user_id="alice")  # and alice's
        blobs = vector_blobs(db, "alice")
        assert len(blobs) >= 3
        before = raw_bytes(db)
        assert all(marker.encode() in before for marker in [*MARKERS, PARK])

        report = mm.forget("alice")

        assert isinstance(report, ForgetReport) and report.wal_truncated
        # The UPDATE changed its memory in place: three memories, one deleted, one of "coach".
        assert (report.memories, report.pending, report.short_term, report.messages) == (3, 1, 1, 1)
        assert report.events >= 6 and report.vectors == len(blobs)
        during = raw_bytes(db)  # still open: the WAL was checkpointed to nothing
        assert mm.list(user_id="alice", include_inactive=True) == []
        assert mm.list(user_id="alice", agent_id="coach", include_inactive=True) == []
        assert mm.search(MARKERS[1], user_id="alice") == []
        assert mm.pending() == [] and mm.short_term(user_id="alice") == []
        assert mm.events(user_id="alice") == []
        assert mm.search("vwkoboe", user_id="bob")[0].id == kept.memory_id
        assert [m.content for m in mm.list(user_id="bob")] == [
            "I play the vwkoboe",
            "I live in vwkport",
        ]
        assert mm.check().ok
    after = raw_bytes(db)
    for found in (during, after):
        assert [m for m in [*MARKERS, PARK] if m.encode() in found] == []
        assert not any(blob in found for blob in blobs)
        assert b"vwkoboe" in found and b"vwkbusy" in found
    with open_manager(db, clock) as mm:
        assert len(mm.history(kept.memory_id, user_id="bob")) == 1
        assert mm.flush("s", user_id="bob").extracted_messages == 1


def test_forget_one_agent_keeps_the_users_other_scopes(db, clock):
    with open_manager(db, clock) as mm:
        mm.update_memory("I collect qzxstamps", user_id="alice", agent_id="coach")
        mm.update_memory("I live in vwkhaven", user_id="alice")
        report = mm.forget("alice", agent_id="coach")
        assert report.memories == 1
        assert mm.list(user_id="alice", agent_id="coach") == []
        assert [m.content for m in mm.list(user_id="alice")] == ["I live in vwkhaven"]
    assert b"qzxstamp" not in raw_bytes(db)


def test_purge_erases_one_memory_with_its_history(db, clock):
    with open_manager(db, clock) as mm:
        first = mm.update_memory(f"I live in {MARKERS[0]}", user_id="alice")
        mm.update_memory(f"I live in {MARKERS[1]}", user_id="alice")  # UPDATE: both in history
        other = mm.update_memory("I play the vwkoboe", user_id="alice")
        with pytest.raises(NotFoundError):
            mm.purge(first.memory_id, user_id="bob")
        report = mm.purge(first.memory_id, user_id="alice")
        assert (report.memories, report.events, report.vectors) == (1, 2, 1)
        with pytest.raises(NotFoundError):
            mm.get(first.memory_id, user_id="alice")
        with pytest.raises(NotFoundError):
            mm.purge(first.memory_id, user_id="alice")
        assert [h.id for h in mm.search("vwkoboe", user_id="alice")][:1] == [other.memory_id]
    found = raw_bytes(db)
    assert MARKERS[0].encode() not in found and MARKERS[1].encode() not in found
    assert b"vwkoboe" in found


def test_delete_alone_leaves_the_words_in_the_file(tmp_path, clock):
    """Why forget exists: a soft delete, even vacuumed, keeps the text (and history)."""
    db = str(tmp_path / "m.db")
    with open_manager(db, clock) as mm:
        memory = mm.update_memory(f"I live in {MARKERS[0]}", user_id="alice")
        mm.delete(memory.memory_id, user_id="alice")
    with sqlite3.connect(db) as conn:
        conn.execute("VACUUM")
    assert MARKERS[0].encode() in raw_bytes(db)


def test_no_cached_vector_outlives_a_forget_in_this_or_another_manager(db, clock):
    """Another manager (as another process would) had alice's vectors cached; after forget,
    new memories of bob's reuse her rows' numbers, and alice's search must not find them."""
    with open_manager(db, clock) as mm, open_manager(db, clock) as other:
        first = mm.update_memory("I own a vwkbike", user_id="bob")
        for n in range(3):
            mm.update_memory(f"I own qzxboat number {n}", user_id="alice")
        mm.delete(first.memory_id, user_id="bob")  # the newest vector change is bob's
        assert len(other.search("qzxboat", user_id="alice")) == 3  # cached in `other`
        assert mm.vectors.cached_bytes > 0
        mm.forget("alice")
        assert mm.vectors.cached_bytes == 0  # this manager dropped alice's matrix
        bob = [mm.update_memory(f"I own vwkcar number {n}", user_id="bob") for n in range(3)]
        assert other.search("qzxboat", user_id="alice") == []
        assert {h.id for h in other.search("vwkcar", user_id="bob")} == {r.memory_id for r in bob}


def test_a_reader_holding_an_old_snapshot_is_reported_and_a_rerun_scrubs(tmp_path, clock):
    """The WAL cannot be emptied under a reader's snapshot: forget says so, and forgetting
    again once the reader is done scrubs what the WAL still held (SQLite's WAL only)."""
    db = str(tmp_path / "m.db")
    with open_manager(db, clock) as mm:
        mm.update_memory(f"I live in {MARKERS[0]}", user_id="alice")
        mm.update_memory("I live in vwkhaven", user_id="bob")
        reader = sqlite3.connect(db, isolation_level=None)
        try:
            reader.execute("BEGIN")
            reader.execute("SELECT count(*) FROM long_term").fetchone()
            held = mm.forget("alice")
            assert (held.memories, held.wal_truncated) == (1, False)
            assert MARKERS[0].encode() in raw_bytes(db)  # the old page images, in the WAL
            reader.execute("COMMIT")
        finally:
            reader.close()
        again = mm.forget("alice")
        assert (again.memories, again.wal_truncated) == (0, True)
        found = raw_bytes(db)
        assert MARKERS[0].encode() not in found and b"vwkhaven" in found


ERASED_TABLES = [
    "vector_log",
    "memory_vectors",
    "events",
    "long_term",
    "pending",
    "short_term",
    "message_buffer",
    "fts_scopes",
]


def test_forget_on_postgresql_vacuums_every_table_it_deleted_from(postgres_url, clock):  # noqa: F811
    """docs/postgresql.md's promise: the tables forget deletes from are vacuumed, the parked
    facts, short-term facts, buffered messages and scope ids too, not only memories and events."""

    def vacuums(url: str) -> dict[str, int]:
        with direct(url) as conn:
            rows = conn.execute(sa.text("SELECT relname, vacuum_count FROM pg_stat_user_tables"))
            return {name: count for name, count in rows if name in ERASED_TABLES}

    with fresh_database(postgres_url) as url, open_manager(url, clock) as mm:
        fill_alice(mm)
        before = vacuums(url)
        mm.forget("alice")
        after = vacuums(url)
    assert sorted(before) == sorted(ERASED_TABLES)
    assert [t for t in ERASED_TABLES if after[t] <= before[t]] == []


class FlakyEmbedder(SeededEmbedder):
    """SeededEmbedder whose server can be down."""

    down = False

    def embed(self, texts: list[str]) -> np.ndarray:
        if self.down:
            raise EmbeddingError("embedding server down")
        return super().embed(texts)


def test_purge_takes_the_parked_copies_of_the_memorys_text_and_their_events(db, clock):
    """A fact parked while the embedder was down is an event naming no memory and a pending
    row; once the same text is a memory, purging it must take those too, or its words stay
    in the file and retry_pending brings the memory back."""
    embedder = FlakyEmbedder()
    text = f"I collect {MARKERS[3]} stamps"
    with MemoryManager(db, embedder=embedder, clock=clock) as mm:
        embedder.down = True
        assert mm.update_memory(text, user_id="alice").op is Op.PENDING
        assert mm.update_memory("I play the vwkoboe", user_id="alice").op is Op.PENDING
        embedder.down = False
        memory = mm.update_memory(text, user_id="alice")
        assert memory.op is Op.ADD and len(mm.pending()) == 2
        report = mm.purge(memory.memory_id, user_id="alice")
        assert (report.memories, report.pending) == (1, 1)
        assert [p.content for p in mm.pending()] == ["I play the vwkoboe"]
        mm.retry_pending()
        assert [m.content for m in mm.list(user_id="alice")] == ["I play the vwkoboe"]
    found = raw_bytes(db)
    assert MARKERS[3].encode() not in found and b"vwkoboe" in found


class ForgettingEmbedder(SeededEmbedder):
    """Erases alice through another manager (as another process would) when asked to embed
    a fact of hers: a forget that lands while a flush extracts her buffered messages."""

    def __init__(self, db: str, clock) -> None:
        self.other: MemoryManager | None = open_manager(db, clock)

    def embed(self, texts: list[str]) -> np.ndarray:
        if self.other is not None and any(MARKERS[5] in text for text in texts):
            other, self.other = self.other, None
            with other:
                assert other.forget("alice").messages == 1
        return super().embed(texts)


def test_a_forget_during_a_flush_writes_nothing_of_the_erased_messages(tmp_path, clock):
    db = str(tmp_path / "m.db")
    embedder = ForgettingEmbedder(db, clock)
    with MemoryManager(db, embedder=embedder, clock=clock, extract_cooldown_s=3600) as mm:
        message = {"role": "user", "content": f"My sister lives in {MARKERS[5]}"}
        mm.observe([message], user_id="alice", session_id="s")
        with pytest.raises(LeaseLostError, match="erased"):
            mm.flush("s", user_id="alice")
        assert mm.list(user_id="alice", include_inactive=True) == []
        assert mm.events(user_id="alice") == []
    assert MARKERS[5].encode() not in raw_bytes(db)


def test_a_forget_during_an_idle_flush_skips_the_erased_session(tmp_path, clock):
    """consolidate() and flush_idle() go on with the other sessions."""
    db = str(tmp_path / "m.db")
    embedder = ForgettingEmbedder(db, clock)
    with MemoryManager(db, embedder=embedder, clock=clock, extract_cooldown_s=3600) as mm:
        message = {"role": "user", "content": f"My sister lives in {MARKERS[5]}"}
        mm.observe([message], user_id="alice", session_id="a")
        bobs = {"role": "user", "content": "I play the vwkoboe"}
        mm.observe([bobs], user_id="bob", session_id="b")
        clock.advance(hours=2)
        done = mm.flush_idle()
        assert [d.session.session_id for d in done] == ["b"]
        assert [m.content for m in mm.list(user_id="bob")] == ["I play the vwkoboe"]
        assert mm.list(user_id="alice", include_inactive=True) == []
    assert MARKERS[5].encode() not in raw_bytes(db)
