"""`memman ingest` takes what MemoryManager.ingest takes, and never brings back what an
export marks as gone."""

from __future__ import annotations

import json

from memman import MemoryManager
from tests.test_cli import db, memman  # noqa: F401 (fixtures)
from tests.test_erase import PARK, SeededEmbedder


def test_ingest_keeps_every_field_the_library_takes_and_refuses_unknown_ones(memman, db, tmp_path):  # noqa: F811
    # MemoryManager.ingest takes category, importance, subject, attribute and observed_at;
    # the command dropped them without a word, and a misspelt key the same way.
    full = {"fact": "User is allergic to nuts", "category": "safety", "importance": 9}
    dated = {"fact": "User lives in Oslo", "observed_at": "2024-05-03T10:00:00+00:00"}
    lines = [full, dated, {"fact": "User likes tea", "catgory": "drinks"}]
    path = tmp_path / "facts.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    run = memman("ingest", str(path), "-u", "alice", "--db", db)
    assert run.code == 2 and "2 facts decided" in run.out
    assert "line 3: catgory: Extra inputs are not permitted" in run.err
    with MemoryManager(db) as mm:
        nuts, oslo = mm.list(user_id="alice")
    assert (nuts.category, nuts.importance) == ("safety", 9)
    assert (oslo.observed_at or "").startswith("2024-05-03")


def test_ingest_of_an_export_with_deleted_memories_does_not_bring_them_back(memman, db, tmp_path):  # noqa: F811
    with MemoryManager(str(tmp_path / "src.db")) as mm:
        gone = mm.update_memory("User smokes", user_id="alice").memory_id
        mm.update_memory("User likes tea", user_id="alice")
        mm.delete(gone, user_id="alice")
        lines = list(mm.export_jsonl(include_inactive=True))
    path = tmp_path / "export.jsonl"
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    run = memman("ingest", str(path), "--db", db)
    assert run.code == 2 and "line 1: " in run.err and "deleted" in run.err
    with MemoryManager(db) as mm:
        assert [m.content for m in mm.list(user_id="alice")] == ["User likes tea"]


def test_ingest_of_an_audit_trail_says_what_the_lines_are(memman, db, tmp_path):  # noqa: F811
    with MemoryManager(str(tmp_path / "src.db")) as mm:
        mm.update_memory("User likes tea", user_id="alice")
        lines = list(mm.export_jsonl(events=True, memories=False))
    path = tmp_path / "events.jsonl"
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    run = memman("ingest", str(path), "--db", db)
    assert run.code == 2
    assert "line 1: an audit event of an export, not a fact" in run.err.replace("\n", " ")
    assert "Extra inputs" not in run.err  # one reason, not a complaint per field


def test_ingest_of_an_export_s_other_rows_says_what_they_are(memman, db, tmp_path):  # noqa: F811
    # An export carries parked facts, short-term facts and buffered messages besides the
    # memories. Read as memory lines, an agent's buffered assistant message became one of
    # the user's facts, and the others failed on a field ("metadata: Input should be an
    # object") that did not say what the line was.
    with MemoryManager(str(tmp_path / "src.db"), embedder=SeededEmbedder()) as mm:
        mm.update_memory("User likes tea", user_id="alice", agent_id="bot")
        assert mm.update_memory(f"User said {PARK}", user_id="alice", agent_id="bot").pending_id
        mm.remember_short_term("User is at the airport", user_id="alice", agent_id="bot",
                               session_id="s1")  # fmt: skip
        said = [{"role": "assistant", "content": "Sure, I can book the flight for you"}]
        mm.observe(said, user_id="alice", agent_id="bot", session_id="s1")
        lines = list(mm.export_jsonl())
    assert [json.loads(line)["kind"] for line in lines] == [
        "memory", "pending", "short_term", "message_buffer",
    ]  # fmt: skip
    path = tmp_path / "export.jsonl"
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    run = memman("ingest", str(path), "--db", db)
    err = run.err.replace("\n", " ")
    assert run.code == 2 and "line 2: a parked fact of an export" in err
    assert "line 3: a short-term fact of an export" in err
    assert "line 4: a buffered chat message of an export" in err
    with MemoryManager(db) as mm:
        stored = [m.content for m in mm.list(user_id="alice", agent_id="bot")]
        assert stored == ["User likes tea"]


def test_ingest_of_only_bad_lines_draws_no_empty_bar(memman, db, tmp_path):  # noqa: F811
    path = tmp_path / "bad.jsonl"
    path.write_text('{"fakt": "User likes tea"}\n{"fact": "User owns a bike"}\n', encoding="utf-8")
    run = memman("ingest", str(path), "--db", db)
    assert run.code == 2 and "line 1:" in run.err and "line 2: no user_id" in run.err
    assert "0/0" not in run.err
