"""A user moved between stores with export and import keeps what is not a memory yet: the
facts parked when their decision failed (retry_pending still owes them one), the short-term
facts with their metadata, and the chat messages buffered but not yet extracted.

The source store parks a fact for real: its decider is the fake OpenAI server answering 500.
Each test runs with the store under test on SQLite, then on PostgreSQL (`db`).
"""

from __future__ import annotations

import json

import pytest

from memman import MemoryManager, Op
from memman.errors import InvalidInputError
from tests.clock import Clock
from tests.decisions import NEW, OLD, llm_manager
from tests.fake_openai import Reply
from tests.postgres import db_on_each_backend, fresh_database, postgres_url  # noqa: F401
from tests.test_cli import memman  # noqa: F401  (the CLI runner fixture)

ROW_KINDS = ("pending", "short_term", "message_buffer")
TRIP = "User is at the airport in Lisbon right now"
CAT = "I adopted a cat called Miso yesterday"


def fill(mm: MemoryManager, fake_openai, user: str) -> None:
    """A memory, a fact parked by a failed decision, a short-term fact with metadata and a
    buffered message of user (session "s1", which the other user's messages share)."""
    mm.update_memory(OLD, user_id=user)  # novel: no LLM call
    fake_openai.script(Reply(500, {"error": {"message": "the decider is down"}}))
    assert mm.update_memory(NEW, user_id=user, source="msg-2").op is Op.PENDING
    mm.remember_short_term(
        f"{TRIP} ({user})", user_id=user, session_id="s1", metadata={"trip": "Lisbon"}
    )
    result = mm.observe(
        [{"role": "user", "content": f"{CAT} ({user})"}], user_id=user, session_id="s1"
    )
    assert result.buffered == 1


def export_of(path: str, fake_openai) -> list[str]:
    """alice's export from a store at path that serves bob too."""
    with llm_manager(
        path, fake_openai.base_url, llm_max_retries=0, llm_mode="tools", clock=Clock()
    ) as mm:
        fill(mm, fake_openai, "alice")
        fill(mm, fake_openai, "bob")
        assert len(mm.pending()) == 2
        return list(mm.export_jsonl(user_id="alice"))


@pytest.fixture
def lines(db, fake_openai) -> list[str]:
    """alice's export from the store at `db` (each backend)."""
    return export_of(db, fake_openai)


def rows(mm: MemoryManager, user: str) -> list[dict]:
    """A user's memories and rows as their export gives them, in a stable order."""
    records = [json.loads(line) for line in mm.export_jsonl(user_id=user, include_inactive=True)]
    return sorted(records, key=lambda record: (record["kind"], str(record["id"])))


def kinds(lines: list[str]) -> list[str]:
    return [json.loads(line)["kind"] for line in lines]


def test_a_user_moved_to_a_new_store_keeps_parked_short_term_and_buffered(tmp_path, lines):
    assert kinds(lines) == ["memory", *ROW_KINDS]
    assert "bob" not in "".join(lines)  # another user's rows never leave with alice's
    target = str(tmp_path / "target.db")
    with MemoryManager(target, clock=Clock()) as mm:
        report = mm.import_jsonl(lines)
        assert report.bad == []
        assert report.rows_copied == dict.fromkeys(ROW_KINDS, 1)
        (parked,) = mm.pending(user_id="alice")
        assert (parked.content, parked.source, parked.attempts) == (NEW, "msg-2", 1)
        assert "the decider is down" in parked.error
        (fact,) = mm.short_term(user_id="alice")
        assert (fact.content, fact.metadata) == (f"{TRIP} (alice)", {"trip": "Lisbon"})
        moved = rows(mm, "alice")
    assert moved == sorted(map(json.loads, lines), key=lambda r: (r["kind"], str(r["id"])))


def test_importing_into_a_store_holding_the_user_duplicates_nothing(db, lines):
    """alice's export read back into the store she is in: every row is found held."""
    with MemoryManager(db, clock=Clock()) as mm:
        before = rows(mm, "alice")
        again = mm.import_jsonl(lines)
        assert again.bad == []
        assert (again.rows_held, again.rows_copied, again.duplicates) == (3, {}, 1)
        assert rows(mm, "alice") == before
        assert len(mm.pending(user_id="alice")) == 1
        assert len(mm.short_term(user_id="alice")) == 1


def test_a_row_whose_id_the_store_holds_takes_a_new_one_once(db, tmp_path, fake_openai):
    """Into a store (each backend) whose own buffered message holds the id of alice's: hers
    is buffered under a new id, and read again it is found held, not buffered twice."""
    lines = export_of(str(tmp_path / "source.db"), fake_openai)
    with MemoryManager(db, clock=Clock()) as mm:
        mm.observe([{"role": "user", "content": "hello"}], user_id="carol", session_id="s1")
        mm.remember_short_term("User is on a train", user_id="carol", session_id="c")
        first = mm.import_jsonl(lines)
        assert (first.bad, first.rows_renumbered, first.copied) == ([], 2, 1)
        before = rows(mm, "alice")
        again = mm.import_jsonl(lines)
        assert (again.bad, again.rows_held, again.rows_copied) == ([], 3, {})
        assert rows(mm, "alice") == before
        assert [r["kind"] for r in before] == ["memory", *sorted(ROW_KINDS)]
        assert kinds(list(mm.export_jsonl(user_id="carol"))) == ["short_term", "message_buffer"]


def test_an_export_without_these_lines_still_imports(tmp_path, lines):
    """An export written before the rows were carried: its memories come as before."""
    old = [line for line in lines if json.loads(line)["kind"] == "memory"]
    with MemoryManager(str(tmp_path / "target.db"), clock=Clock()) as mm:
        report = mm.import_jsonl(old)
        assert (report.copied, report.rows_copied, report.bad) == (1, {}, [])
        assert [m.content for m in mm.list(user_id="alice")] == [OLD]
        assert mm.pending() == [] and mm.short_term() == []


def test_a_row_line_with_a_bad_or_unknown_field_is_a_bad_line(tmp_path, lines):
    records = [json.loads(line) for line in lines]
    at = {record["kind"]: number for number, record in enumerate(records)}
    records[at["pending"]]["attempts"] = "many"
    records[at["short_term"]]["colour"] = "red"
    with MemoryManager(str(tmp_path / "target.db"), clock=Clock()) as mm:
        report = mm.import_jsonl(json.dumps(record) for record in records)
        bad = {int(line.split(":")[0].removeprefix("line ")) for line in report.bad}
        assert bad == {at["pending"] + 1, at["short_term"] + 1}
        assert "unknown field 'colour'" in " ".join(report.bad)
        assert report.rows_copied == {"message_buffer": 1}
        assert report.copied == 1


@pytest.mark.parametrize("role", ["wizard", "User", ""])
def test_a_buffered_message_of_a_role_observe_refuses_is_a_bad_line(tmp_path, lines, role):
    """observe refuses a message whose role is no chat role; an import copied such a row as
    it was, a message no observe could have buffered. Now it is that line's error, the line
    left out and the others imported, as for any other bad field of a row."""
    records = [json.loads(line) for line in lines]
    at = kinds(lines).index("message_buffer")
    records[at]["role"] = role
    with MemoryManager(str(tmp_path / "target.db"), clock=Clock()) as mm:
        with pytest.raises(InvalidInputError):
            mm.observe([{"role": role, "content": CAT}], user_id="alice", session_id="s1")
        report = mm.import_jsonl(json.dumps(record) for record in records)
        assert report.bad == [
            f"line {at + 1}: row: role {role!r} is no role observe buffers"
            " (assistant, developer, function, system, tool, user)"
        ]
        assert report.rows_copied == {"pending": 1, "short_term": 1}
        assert kinds(list(mm.export_jsonl(user_id="alice"))) == ["memory", "pending", "short_term"]


def test_the_cli_names_the_line_of_a_role_observe_refuses(tmp_path, lines, memman):  # noqa: F811
    records = [json.loads(line) for line in lines]
    at = kinds(lines).index("message_buffer")
    records[at]["role"] = "wizard"
    dump, target = tmp_path / "alice.jsonl", str(tmp_path / "target.db")
    dump.write_text("".join(json.dumps(record) + "\n" for record in records))
    run = memman("import", str(dump), "--db", target)
    assert run.code == 2
    assert run.err.splitlines() == [
        f"line {at + 1}: row: role 'wizard' is no role observe buffers"
        " (assistant, developer, function, system, tool, user)"
    ]
    with MemoryManager(target) as mm:
        assert "message_buffer" not in kinds(list(mm.export_jsonl(user_id="alice")))


def test_rows_go_to_the_scope_their_line_names(tmp_path, lines):
    """A line is imported into its own user's scope, never the store's other users'."""
    moved = [line.replace('"alice"', '"dora"') for line in lines]
    with MemoryManager(str(tmp_path / "target.db"), clock=Clock()) as mm:
        mm.import_jsonl(moved)
        assert mm.pending(user_id="alice") == [] and len(mm.pending(user_id="dora")) == 1
        assert mm.short_term(user_id="alice") == [] and len(mm.short_term(user_id="dora")) == 1


def test_the_cli_moves_a_user_with_their_rows(tmp_path, db, fake_openai, memman):  # noqa: F811
    with llm_manager(
        db, fake_openai.base_url, llm_max_retries=0, llm_mode="tools", clock=Clock()
    ) as mm:
        fill(mm, fake_openai, "alice")
        fill(mm, fake_openai, "bob")
    dump, target = tmp_path / "alice.jsonl", str(tmp_path / "target.db")
    run = memman("export", "--user", "alice", "--db", db, "-o", str(dump))
    assert run.code == 0, run.output
    assert kinds(dump.read_text().splitlines()) == ["memory", *ROW_KINDS]
    run = memman("import", str(dump), "--db", target)
    assert run.code == 0, run.output
    assert "1 message_buffer, 1 pending, 1 short_term copied" in run.out
    again = memman("import", str(dump), "--db", target)
    assert "3 parked, short-term or buffered already held" in again.out
    with MemoryManager(target) as mm:
        assert [p.content for p in mm.pending()] == [NEW]
        assert [f.content for f in mm.short_term()] == [f"{TRIP} (alice)"]
