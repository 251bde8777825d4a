"""Bulk ingest (issue 14): update_many decides a chunk in one write transaction, with the same
decisions, scores and resulting store as writing the facts one at a time."""

from __future__ import annotations

import json
import sys

import pytest

from memman import MemoryManager, Op
from memman.errors import InvalidInputError, StoreError
from memman.storage.store import Store
from tests.postgres import db_on_each_backend, postgres_url  # noqa: F401

STORED = [
    "I live in Paris",
    "I work at Google",
    "I enjoy reading mystery novels",
    "My sister is a nurse",
]
CORPUS = [
    "I play the violin",
    "My brother collects stamps",
    "i play the violin.",  # a duplicate inside the chunk (same normalised text)
    "I am 30 years old",
    "Tomatoes grow on my balcony",
    "I enjoy reading mystery novels",  # an exact repeat of a stored fact
    "I really enjoy reading mystery novels at night",  # a paraphrase of a stored fact
    "I moved to Berlin",  # replaces the stored residence
    "I am 31 years old",  # contradicts a fact earlier in the same chunk
    "My favorite color is blue",
    "Winter evenings are for chess",
    "My favorite color is green",  # single-valued: replaces blue, same chunk
    "I work at Apple",
    "Our cat sleeps on the piano",
    "My sister is a nurse",
    "I drive a red bicycle to work",
    "Saturday mornings mean pancakes",
    "I play the violin",
    "I no longer work at Apple",
    "Jazz records fill my shelves",
]


def snapshot(mm: MemoryManager) -> list[tuple]:
    """Every memory of user u (any status) with its event kinds, independent of ids and order."""
    rows = []
    for memory in mm.export(user_id="u", include_inactive=True):
        events = tuple((e.op.value, e.tier.value) for e in mm.history(memory.id, user_id="u"))
        rows.append((memory.content, memory.status.value, memory.subject, memory.attribute, events))
    return sorted(rows)


def seeded(path: str, clock) -> MemoryManager:
    mm = MemoryManager(path, decider="offline", clock=clock)
    for fact in STORED:
        mm.update_memory(fact, user_id="u")
    return mm


@pytest.mark.parametrize("chunk_size", [1, 6, 500])
def test_update_many_gives_the_store_of_one_at_a_time(tmp_path, clock, chunk_size, db):
    """db: the bulk store, a SQLite file or a PostgreSQL database; the one-at-a-time store is
    SQLite's in both cases, so PostgreSQL is held to SQLite's decisions."""
    with seeded(str(tmp_path / "single.db"), clock) as single:
        one_by_one = [single.update_memory(fact, user_id="u") for fact in CORPUS]
        expected = snapshot(single)
    with seeded(db, clock) as bulk:
        together = bulk.update_many(CORPUS, user_id="u", chunk_size=chunk_size)
        assert snapshot(bulk) == expected
    assert [(r.op, r.tier) for r in together] == [(r.op, r.tier) for r in one_by_one]
    assert {r.op for r in together} >= {Op.ADD, Op.NOOP, Op.UPDATE}


def scored(mm: MemoryManager, results: list) -> list[tuple]:
    """Each result's op and tier and what its audit event scored: memories named by their text,
    with their scores (bm25 included)."""
    texts = {m.id: m.content for m in mm.export(user_id="u", include_inactive=True)}
    events = {e.id: e for e in mm.events(user_id="u", limit=1000)}
    return [
        (
            r.op,
            r.tier,
            sorted((texts[i], sorted(s.items())) for i, s in events[r.event_id].scores.items()),
        )
        for r in results
    ]


@pytest.mark.parametrize(
    "facts",
    [
        # FTS5 stems: "games" finds the "game" of an ADD made earlier in the chunk.
        ["I have played a table game called Vampire.", "I design video games."],
        # An ADD sharing no word with the next fact still counts in bm25's row total and
        # average length, so the next fact's scores (and, at top_k, its list) move with it.
        ["My neighbor Tom can speak French.", "My sister reads mystery novels"],
    ],
)
def test_a_chunk_scores_candidates_as_one_at_a_time_does(tmp_path, clock, facts):
    with seeded(str(tmp_path / "single.db"), clock) as single:
        expected = scored(single, [single.update_memory(f, user_id="u") for f in facts])
    with seeded(str(tmp_path / "bulk.db"), clock) as bulk:
        assert scored(bulk, bulk.update_many(facts, user_id="u")) == expected
    assert expected[-1][2]  # the last fact was compared with something


def test_a_failed_chunk_leaves_nothing_half_written(tmp_path, clock, monkeypatch):
    def broken(self, conn, scope, rows):
        raise StoreError("disk gone")

    path = str(tmp_path / "m.db")
    with MemoryManager(path, decider="offline", clock=clock) as mm:
        monkeypatch.setattr(Store, "insert_events", broken)
        with pytest.raises(StoreError):
            mm.update_many(
                ["Tomatoes grow on my balcony", "Jazz records fill my shelves"], user_id="u"
            )
        monkeypatch.undo()
        assert mm.list(user_id="u") == []
        assert mm.events(user_id="u") == []


def test_cli_ingest_decides_like_one_at_a_time(tmp_path, clock, monkeypatch):
    from memman.cli import main

    with seeded(str(tmp_path / "single.db"), clock) as single:
        for fact in CORPUS:
            single.update_memory(fact, user_id="u")
        expected = snapshot(single)
    path = str(tmp_path / "bulk.db")
    seeded(path, clock).close()
    lines = tmp_path / "facts.jsonl"
    lines.write_text("\n".join(json.dumps({"fact": fact}) for fact in CORPUS) + "\n")
    monkeypatch.setenv("MEMMAN_DECIDER", "offline")
    monkeypatch.setattr(sys, "argv", ["memman", "ingest", str(lines), "-u", "u", "--db", path])
    with pytest.raises(SystemExit) as exit_:
        main()
    assert exit_.value.code in (0, None)
    with MemoryManager(path, decider="offline", clock=clock) as bulk:
        assert snapshot(bulk) == expected


def test_a_merging_import_decides_its_records(tmp_path, clock):
    with MemoryManager(str(tmp_path / "source.db"), decider="offline", clock=clock) as source:
        source.update_many(CORPUS, user_id="u")
        dump = list(source.export_jsonl(user_id="u"))
    with seeded(str(tmp_path / "target.db"), clock) as target:
        report = target.import_jsonl(dump)
        assert report.bad == []
        added = report.decided.get("ADD", 0)
        assert added > 1
        contents = {m.content for m in target.list(user_id="u", limit=100)}
        assert "Jazz records fill my shelves" in contents


def test_ingest_writes_records_of_several_scopes_and_reports_bad_ones_in_place(tmp_path, clock):
    records = [
        {"fact": "Tomatoes grow on my balcony", "user_id": "a", "source": "crm:1"},
        {"fact": "Jazz records fill my shelves", "user_id": "b"},
        {"fact": "Jazz records fill my shelves"},  # user_id from the argument: "a"
        {"user_id": "a"},  # no fact
        {"fact": "Our cat sleeps on the piano", "colour": "red"},  # unknown key
        {"fact": "Tomatoes grow on my balcony", "user_id": "a"},
    ]
    with MemoryManager(str(tmp_path / "m.db"), decider="offline", clock=clock) as mm:
        results = mm.ingest(records, user_id="a")
        assert [getattr(r, "op", type(r).__name__) for r in results] == [
            Op.ADD,
            Op.ADD,
            Op.ADD,
            "InvalidInputError",
            "InvalidInputError",
            Op.NOOP,
        ]
        assert "unknown keys: colour" in str(results[4])
        assert sorted(m.content for m in mm.list(user_id="a")) == [
            "Jazz records fill my shelves",
            "Tomatoes grow on my balcony",
        ]
        assert [m.sources for m in mm.list(user_id="b")] == [[]]
        assert mm.get(results[0].memory_id, user_id="a").sources == ["crm:1"]


def test_one_string_given_for_a_batch_is_refused_not_split_into_characters(tmp_path):
    # update_many("User likes tea") used to iterate the string: "fact #4: fact is empty".
    with MemoryManager(str(tmp_path / "m.db")) as mm:
        with pytest.raises(InvalidInputError, match="a list of facts, not one string"):
            mm.update_many("User likes tea", user_id="alice")
        with pytest.raises(InvalidInputError, match="a list of records, not one string"):
            mm.ingest('{"fact": "User likes tea"}', user_id="alice")
        assert mm.list(user_id="alice") == []


@pytest.mark.parametrize("chunk_size", [-1, 1.5, "2"])
def test_a_chunk_size_that_is_no_count_is_refused_before_anything_is_written(tmp_path, chunk_size):
    # chunk_size=-1 wrote the first fact, then raised an untyped IndexError: the second was
    # lost; 1.5 raised TypeError from a slice.
    facts = ["User likes tea", "User plays chess"]
    with MemoryManager(str(tmp_path / "m.db")) as mm:
        with pytest.raises(InvalidInputError, match="chunk_size"):
            mm.update_many(facts, user_id="alice", chunk_size=chunk_size)
        with pytest.raises(InvalidInputError, match="chunk_size"):
            mm.ingest([{"fact": fact} for fact in facts], user_id="alice", chunk_size=chunk_size)
        assert mm.list(user_id="alice") == []


@pytest.mark.parametrize("batch", [None, 5])
def test_a_batch_that_is_no_list_is_an_invalid_input_error(tmp_path, batch):
    with MemoryManager(str(tmp_path / "m.db")) as mm:  # was TypeError: not iterable
        with pytest.raises(InvalidInputError, match="a list of facts"):
            mm.update_many(batch, user_id="alice")
        with pytest.raises(InvalidInputError, match="a list of records"):
            mm.ingest(batch, user_id="alice")
