"""What a script expects of the CLI: --version, --json on the read commands, add's columns."""

from __future__ import annotations

import json
from importlib.metadata import version
from pathlib import Path

from memman import MemoryManager
from tests.test_cli import db, memman  # noqa: F401  (fixtures)


def test_version(memman):  # noqa: F811
    run = memman("--version")
    assert run.code == 0 and run.out == f"memman {version('memman')}\n"


def test_py_typed_ships_with_the_package():
    import memman as package

    assert (Path(package.__file__).parent / "py.typed").is_file()


def test_add_takes_category_and_importance(memman, db):  # noqa: F811
    run = memman(
        "add", "User is allergic to peanuts", "--category", "safety", "--importance", "9",
        "--user", "ana", "--db", db,
    )  # fmt: skip
    assert run.code == 0
    with MemoryManager(db) as mm:
        [memory] = mm.list(user_id="ana")
    assert (memory.category, memory.importance) == ("safety", 9)
    bad = memman("add", "User likes tea", "--importance", "11", "--user", "ana", "--db", db)
    assert bad.code == 1 and bad.err.startswith("Error: importance")


def test_read_commands_print_json(memman, db):  # noqa: F811
    memman("add", "User lives in Lisbon", "--user", "ana", "--db", db)
    memman("add", "User has a dog named Rex", "--user", "ana", "--db", db)

    hits = json.loads(memman("search", "dog", "--user", "ana", "--json", "--db", db).out)
    assert [h["memory"]["content"] for h in hits] == ["User has a dog named Rex"]
    assert hits[0]["score"] > 0

    listed = json.loads(memman("list", "--user", "ana", "--json", "--db", db).out)
    assert [m["content"] for m in listed] == ["User lives in Lisbon", "User has a dog named Rex"]

    prefix = listed[0]["id"][:8]
    history = json.loads(memman("history", prefix, "--user", "ana", "--json", "--db", db).out)
    assert history["memory"]["id"] == listed[0]["id"]
    assert [e["op"] for e in history["events"]] == ["ADD"]

    stats = json.loads(memman("stats", "--json", "--db", db).out)
    assert stats["memories"] == {"active": 2} and stats["pending"] == 0

    asked = memman("context", "where do I live", "--user", "ana", "--json", "--db", db)
    block = json.loads(asked.out)
    assert "Lisbon" in block["text"] and block["left_out"] == 0
