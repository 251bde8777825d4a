"""The `memman` command, run through its real entry point `main()` (typed errors -> one line)."""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import click
import pytest
import sqlite_utils
import typer

from memman import MemoryManager, Op
from memman.cli import app, main
from memman.config import Settings
from memman.language.text import content_hash
from memman.storage.migrations import migrations
from tests.decisions import answer
from tests.docs import read, section
from tests.fake_openai import Reply


@dataclass
class Run:
    code: int
    out: str
    err: str

    @property
    def output(self) -> str:
        return self.out + self.err


@pytest.fixture
def memman(capsys, monkeypatch):
    """Run `memman ARGS...` in-process through main(), as the console script does."""
    monkeypatch.setenv("COLUMNS", "250")  # rich tables must not fold what the tests look for

    def run(*args: str) -> Run:
        monkeypatch.setattr(sys, "argv", ["memman", *args])
        try:
            main()
            code = 0
        except SystemExit as exit_:
            code = exit_.code if isinstance(exit_.code, int) else 1
        captured = capsys.readouterr()
        assert "Traceback" not in captured.out + captured.err
        return Run(code, captured.out, captured.err)

    return run


@pytest.fixture
def db(tmp_path) -> str:
    return str(tmp_path / "cli.db")


def test_demo_runs_offline_and_shows_decisions(memman, tmp_path):
    run = memman("demo", "--db", str(tmp_path / "demo.db"))
    assert run.code == 0
    assert "decider: offline" in run.out
    for word in ("ADD", "NOOP", "UPDATE", "hash", "novel"):
        assert word in run.out
    assert "Long-term memory of 'sam'" in run.out
    with MemoryManager(str(tmp_path / "demo.db")) as mm:
        assert mm.list(user_id="sam")
    again = memman("demo", "--db", str(tmp_path / "demo.db"))  # recreated, not appended
    assert again.out.count("Long-term memory") == 1 and again.code == 0


def test_demo_never_erases_a_store_that_is_not_the_demos(memman, tmp_path):
    # `memman demo --db memman.db` (every other command takes --db) recreated the file:
    # the user's own store was deleted. A file that is not a memman store is left alone too.
    real = tmp_path / "memman.db"
    with MemoryManager(str(real)) as mm:
        mm.update_memory("User is allergic to nuts", user_id="alice")
    run = memman("demo", "--db", str(real))
    assert run.code == 1 and "alice" in run.err and run.out == ""
    with MemoryManager(str(real)) as mm:
        assert [m.content for m in mm.list(user_id="alice")] == ["User is allergic to nuts"]
    notes = tmp_path / "notes.txt"
    notes.write_text("not a database\n" * 100)
    assert memman("demo", "--db", str(notes)).code == 1
    assert notes.read_text() == "not a database\n" * 100


def test_add_search_list_history_stats(memman, db):
    added = memman("add", "User prefers flat white", "--user", "alice", "--db", db)
    assert added.code == 0 and "ADD" in added.out and "novel" in added.out
    repeat = memman("add", "user prefers FLAT white.", "-u", "alice", "--source", "m2", "--db", db)
    assert "NOOP" in repeat.out and "hash" in repeat.out
    memman("add", "User lives in Lisbon", "-u", "alice", "--db", db)

    found = memman("search", "flat white coffee", "-u", "alice", "--db", db)
    assert found.code == 0 and "User prefers flat white" in found.out
    assert "Lisbon" not in found.out
    assert "0 hits" in memman("search", "flat white", "-u", "bob", "--db", db).out

    listed = memman("list", "-u", "alice", "--db", db)
    assert "2 memories of 'alice'" in listed.out and "User lives in Lisbon" in listed.out

    with MemoryManager(db) as mm:
        memory_id = mm.list(user_id="alice")[0].id
    history = memman("history", memory_id[:8], "-u", "alice", "--db", db)
    assert history.code == 0
    assert memory_id in history.out and "ADD" in history.out and "NOOP" in history.out

    stats = memman("stats", "--db", db)
    assert stats.code == 0
    assert "memories active" in stats.out and "decisions NOOP by hash" in stats.out


def test_env_db_is_used(memman, db, monkeypatch):
    monkeypatch.setenv("MEMMAN_DB", db)
    memman("add", "User lives in Lisbon", "-u", "alice")
    with MemoryManager(db) as mm:
        assert [m.content for m in mm.list(user_id="alice")] == ["User lives in Lisbon"]


def test_delete_and_restore(memman, db):
    memman("add", "User has a cat named Miso", "-u", "alice", "--db", db)
    with MemoryManager(db) as mm:
        memory_id = mm.list(user_id="alice")[0].id
    deleted = memman("delete", memory_id[:8], "-u", "alice", "--db", db)
    assert deleted.code == 0 and f"deleted {memory_id}" in deleted.out
    assert "0 memories" in memman("list", "-u", "alice", "--db", db).out
    assert "deleted" in memman("list", "-u", "alice", "--all", "--db", db).out
    again = memman("delete", memory_id, "-u", "alice", "--db", db)
    assert again.code == 1 and again.err.startswith("Error: ")
    restored = memman("restore", memory_id[:8], "-u", "alice", "--db", db)
    assert restored.code == 0 and "restored" in restored.out
    assert "1 memories" in memman("list", "-u", "alice", "--db", db).out


def test_there_is_no_default_user(memman, db, tmp_path):
    for command in (["add", "User likes tea"], ["search", "tea"], ["list"], ["context", "tea"]):
        assert memman(*command, "--db", db).code == 2, command  # --user is required
    lines = tmp_path / "facts.jsonl"
    lines.write_text('{"fact": "User likes tea"}\n{"fact": "User likes jazz", "user_id": "a"}\n')
    run = memman("ingest", str(lines), "--db", db)
    assert run.code == 2 and "line 1: no user_id: give one in the line or --user" in run.err
    with MemoryManager(db) as mm:
        assert [m.content for m in mm.list(user_id="a")] == ["User likes jazz"]
        assert mm.stats()["memories"] == {"active": 1}


def test_commands_by_id_need_the_user_and_never_reach_another(memman, db):
    memman("add", "User has a cat named Miso", "-u", "alice", "--db", db)
    with MemoryManager(db) as mm:
        memory_id = mm.list(user_id="alice")[0].id
    for command in ("history", "delete", "restore"):
        assert memman(command, memory_id[:8], "--db", db).code == 2  # --user is required
        run = memman(command, memory_id[:8], "-u", "bob", "--db", db)
        assert (run.code, run.err) == (1, f"Error: no memory with id {memory_id[:8]!r}\n")
    assert "1 memories" in memman("list", "-u", "alice", "--db", db).out


def test_forget_erases_the_user(memman, db):
    memman("add", "User has a cat named Qzxmiso", "-u", "alice", "--db", db)
    memman("add", "User has a dog", "-u", "bob", "--db", db)
    run = memman("forget", "-u", "alice", "--yes", "--db", db)
    assert run.code == 0 and "forgot 'alice': 1 memories, 1 events" in run.out
    assert b"qzxmiso" not in Path(db).read_bytes().lower()
    assert "1 memories" in memman("list", "-u", "bob", "--db", db).out


def test_ingest_reports_bad_lines_by_number_and_keeps_good_ones(memman, db, tmp_path):
    lines = [
        json.dumps({"fact": "User prefers flat white", "source": "chat:1"}),
        "{not json",
        json.dumps({"fact": ""}),
        "",
        json.dumps("User lives in Lisbon"),
        json.dumps({"text": "no fact key"}),
        json.dumps({"fact": "User plays chess", "user_id": "bob", "metadata": {"turn": 7}}),
        json.dumps({"fact": "User likes tea", "metadata": "not a dict"}),
    ]
    path = tmp_path / "facts.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    run = memman("ingest", str(path), "-u", "alice", "--db", db)
    assert run.code == 2
    reported = [line for line in run.err.splitlines() if line.startswith("line ")]
    assert [line.split(":")[0] for line in reported] == ["line 2", "line 3", "line 6", "line 8"]
    assert "3 facts decided" in run.out and "4 bad lines" in run.out
    with MemoryManager(db) as mm:
        alice = mm.list(user_id="alice")
        assert [m.content for m in alice] == ["User prefers flat white", "User lives in Lisbon"]
        assert alice[0].sources == ["chat:1"]
        assert alice[1].sources == ["facts.jsonl:5"]
        (bob,) = mm.list(user_id="bob")
        assert bob.metadata == {"turn": 7}


def test_ingest_all_good_exits_zero(memman, db, tmp_path):
    path = tmp_path / "facts.jsonl"
    path.write_text(json.dumps({"fact": "User lives in Lisbon"}) + "\n", encoding="utf-8")
    run = memman("ingest", str(path), "-u", "alice", "--db", db)
    assert run.code == 0 and "1 facts decided (ADD 1); 0 bad lines" in run.out


def test_pending_and_retry_with_an_llm(memman, db, monkeypatch, fake_openai):
    monkeypatch.setenv("MEMMAN_LLM_MODEL", "gpt-4o-mini")
    monkeypatch.setenv("OPENAI_BASE_URL", fake_openai.base_url)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    monkeypatch.setenv("MEMMAN_LLM_MAX_RETRIES", "0")
    memman("add", "User supports Arsenal", "-u", "alice", "--db", db)
    fake_openai.script(Reply(500, {"error": {"message": "model overloaded"}}))
    parked = memman("add", "User supports Chelsea now", "-u", "alice", "--db", db)
    assert parked.code == 0 and "PENDING" in parked.out

    pending = memman("pending", "--db", db)
    assert "1 pending" in pending.out and "model overloaded" in pending.out

    fake_openai.script(Reply(500, {"error": {"message": "model overloaded"}}))
    still = memman("retry", "--db", db)  # parked again: the table names the fact, not a blank
    assert "PENDING" in still.out and "User supports Chelsea now" in still.out

    fake_openai.script(answer("UPDATE", id=1, content="User supports Chelsea"))
    retried = memman("retry", "--db", db)
    assert retried.code == 0
    assert "decider: LLM gpt-4o-mini" in retried.out and "UPDATE" in retried.out
    assert "0 pending" in memman("pending", "--db", db).out
    with MemoryManager(db) as mm:
        assert [m.content for m in mm.list(user_id="alice")] == ["User supports Chelsea"]
        assert mm.events(user_id="alice", limit=1)[0].op is Op.UPDATE


def test_config_masks_the_key(memman, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-supersecret-123456")
    monkeypatch.setenv("MEMMAN_LLM_MODEL", "gpt-4o-mini")
    run = memman("config")
    assert run.code == 0
    assert "supersecret" not in run.output
    assert "sk-…" in run.out and "gpt-4o-mini" in run.out


def test_config_masks_the_passwords_of_urls(memman, monkeypatch):
    # The API key was masked, the PostgreSQL password and a base URL's credentials were
    # printed as they are (`memman config` is what users paste into bug reports).
    monkeypatch.setenv("MEMMAN_DB", "postgresql+psycopg://memman:s3cret@db.internal:5432/mm")
    monkeypatch.setenv("OPENAI_BASE_URL", "https://bob:pw-123@llm.internal/v1")
    run = memman("config")
    assert run.code == 0 and "s3cret" not in run.output and "pw-123" not in run.output
    assert "postgresql+psycopg://memman:***@db.internal:5432/mm" in run.out
    assert "https://bob:***@llm.internal/v1" in run.out


def test_config_reads_a_toml_file(memman, tmp_path):
    (tmp_path / "memman.toml").write_text('[memman]\ntop_k = 3\nllm_mode = "json"\n')
    run = memman("config")
    assert "top_k" in run.out and " 3 " in run.out and "json" in run.out


@pytest.mark.parametrize(
    "args",
    [
        ["list", "-u", "alice"],
        ["search", "tea", "-u", "alice"],
        ["history", "abcd1234", "-u", "alice"],
        ["stats"],
        ["check"],
        ["backup", "copy.db"],
        ["export"],
        ["pending", "-u", "alice"],
        ["forget", "-u", "alice", "--yes"],
        ["flush", "--idle"],
        ["consolidate"],
    ],
)
def test_a_command_that_writes_no_fact_in_refuses_a_path_holding_no_store(memman, tmp_path, args):
    """A mistyped --db made an empty store there and every command answered with exit 0
    (list: nothing; backup: a backup of it; forget: nobody's memories erased)."""
    missing = tmp_path / "typo.db"
    run = memman(*args, "--db", str(missing))
    assert run.code == 1 and run.out == ""
    assert run.err.startswith(f"Error: no memman store at {missing}")
    assert len(run.err.strip().splitlines()) == 1
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    "args", [["add", "User likes tea", "-u", "alice"], ["ingest", "facts.jsonl"]]
)
def test_a_command_that_writes_facts_in_creates_the_store(memman, tmp_path, monkeypatch, args):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "facts.jsonl").write_text('{"user_id": "alice", "fact": "User likes tea"}\n')
    run = memman(*args, "--db", "new.db")
    assert run.code == 0, run.err
    with MemoryManager(str(tmp_path / "new.db")) as mm:
        assert [m.content for m in mm.list(user_id="alice")] == ["User likes tea"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["add", "", "-u", "alice"], "Error: fact is empty"),
        (["add", "x\x01\x00y", "-u", "alice"], "Error: fact contains a NUL byte"),
        (["add", "User likes tea", "-u", " "], "Error: user_id"),
        (["history", "zzzzzzzz", "-u", "alice"], "Error: "),
        (["history", "ab", "-u", "alice"], "Error: "),
        (["delete", "nope-nope", "-u", "alice"], "Error: "),
        (["restore", "nope-nope", "-u", "alice"], "Error: "),
        (["forget", "-u", "alice"], "Error: forget erases"),
        (["search", "tea", "-u", "alice", "--limit", "0"], "Error: limit must be from 1 to"),
        (["search", "tea", "-u", "a", "--limit", str(10**20)], "Error: limit must be from 1 to"),
        (["list", "-u", "alice", "--limit", str(10**20)], "Error: limit must be from 0 to"),
        (["ingest", "no-such-file.jsonl"], "Error: cannot read"),
    ],
)
def test_bad_input_is_one_clean_line(memman, db, args, message):
    MemoryManager(db).close()  # the store exists: the message is about the input
    run = memman(*args, "--db", db)
    assert run.code == 1
    assert run.out == ""
    assert run.err.startswith(message)
    assert len(run.err.strip().splitlines()) == 1


def test_bad_configuration_is_one_clean_line(memman, monkeypatch):
    monkeypatch.setenv("MEMMAN_LLM_MAX_RETRIES", "many")
    run = memman("stats")
    assert run.code == 1
    assert run.err.startswith("Error: invalid configuration: llm_max_retries")
    assert len(run.err.strip().splitlines()) == 1


def test_usage_errors_exit_non_zero_without_traceback(memman):
    assert memman("no-such-command").code == 2
    assert memman("add").code == 2


def test_console_script_bad_input(tmp_path):
    """The installed entry point, in a fresh process: one line on stderr, exit 1."""
    memman_bin = Path(sys.executable).with_name("memman")
    done = subprocess.run(
        [str(memman_bin), "add", "   ", "-u", "alice", "--db", str(tmp_path / "x.db")],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=tmp_path,
    )
    assert done.returncode == 1
    assert done.stdout == ""
    assert done.stderr == "Error: fact is empty\n"


def commands() -> dict[str, click.Command]:
    return typer.main.get_command(app).commands


def test_every_command_is_documented_with_help():
    # In the hand-written table of docs/cli.md, not only in the reference generated from --help.
    table = read("docs/cli.md").split("## Reference")[0]
    assert set(commands()) >= {
        "demo", "add", "ingest", "search", "list", "history", "pending", "retry", "stats",
        "config", "delete", "restore", "forget",
    }  # fmt: skip
    for name, command in commands().items():
        assert command.help, f"memman {name} has no help text"
        assert f"`memman {name}" in table, f"memman {name} is not in docs/cli.md's table"


def test_every_setting_is_in_the_configuration_table():
    table = section("docs/configuration.md", "Configuration")
    missing = [name for name in Settings.model_fields if f"`{name}`" not in table]
    assert missing == [], f"settings missing from docs/configuration.md's table: {missing}"


def test_help_lists_every_command(memman):
    run = memman("--help")
    assert run.code == 0
    for name in commands():
        assert name in run.out


def test_context_prints_the_block_unwrapped_for_a_prompt(memman, db, monkeypatch):
    fact = "User is allergic to peanuts and carries an epinephrine auto-injector [always]"
    with MemoryManager(db) as mm:
        mm.update_memory(fact, user_id="u")
    monkeypatch.setenv("COLUMNS", "40")  # a narrow terminal must not break lines
    run = memman("context", "peanuts", "--db", db, "-u", "u")
    assert run.code == 0
    assert f"- {fact} (" in run.out  # one line, brackets kept (no rich markup)


def test_text_that_looks_like_rich_markup_prints_as_is(memman, db):
    fact = "User tags notes with [/bold] and [red]urgent[/red]"
    added = memman("add", fact, "--db", db, "-u", "[/u]")
    assert added.code == 0 and fact in added.out  # was a MarkupError traceback
    for command in (["list"], ["search", "notes"], ["context", "notes"]):
        run = memman(*command, "--db", db, "-u", "[/u]")
        assert run.code == 0 and fact in run.out, command
    bad = memman("list", "--db", db, "-u", "[/u]", "--limit", "-1")
    assert bad.code == 1 and bad.err.startswith("Error: ")


def _file_before_m021(db: str, memories: int) -> None:
    stamp = "2025-01-01T00:00:00.000+00:00"
    older = sqlite_utils.Database(db)
    migrations.apply(older, stop_before="m021_fts_postings_per_scope")
    older["long_term"].insert_all(
        {
            "id": f"m{i}",
            "user_id": "alice",
            "content": f"User likes hiking trail {i}",
            "content_hash": content_hash(f"User likes hiking trail {i}"),
            "created_at": stamp,
            "updated_at": stamp,
            "observed_at": stamp,
        }
        for i in range(memories)
    )
    older.close()


def test_opening_a_store_that_migrates_draws_a_bar(memman, db):
    _file_before_m021(db, 30)
    run = memman("search", "hiking", "--user", "alice", "--db", db)
    assert run.code == 0 and "5 hits" in run.out
    assert "upgrading the store" in run.err and "30/30" in run.err
    # Up to date now: the next open draws nothing.
    assert memman("search", "hiking", "--user", "alice", "--db", db).err == ""


def test_the_migration_bar_alone_reaches_the_terminal(db, tmp_path):
    """In a fresh process (main() configures the root logger): the bar, not the log records."""
    _file_before_m021(db, 30)
    done = subprocess.run(
        [sys.executable, "-m", "memman", "search", "hiking", "-u", "alice", "--db", db],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=tmp_path,
    )
    assert done.returncode == 0
    assert "upgrading the store" in done.stderr
    assert "indexing memories" not in done.stderr and "INFO" not in done.stderr
