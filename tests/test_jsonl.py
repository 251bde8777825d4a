"""Every JSON-lines input is read one way: a bad line is one typed error naming the file and
line (the CLI: one line, no traceback); lenient readers report it and go on."""

from __future__ import annotations

import json

import pytest

from memman import MemoryManager
from memman.errors import InvalidInputError
from memman.tuning.calibrate import load_pairs
from memman.tuning.evaluate import load_cases
from tests.test_cli import memman  # noqa: F401  (the CLI runner fixture)

GOOD_PAIR = json.dumps({"text_a": "Has a cat", "text_b": "Has a dog", "label": "different"})
SAME_PAIR = json.dumps({"text_a": "Has a cat", "text_b": "Has a cat", "label": "same"})


@pytest.mark.parametrize(
    ("line", "why"),
    [
        ("{not json", "Invalid JSON"),
        ('{"text_a": "x", "text_b": "y"}', "label: Field required"),
        ('{"text_a": "x", "text_b": "y", "label": "maybe"}', "label must be one of"),
        ('["x", "y", "same"]', "Input should be"),
    ],
)
def test_a_bad_pair_line_names_the_file_and_line(tmp_path, line, why):
    path = tmp_path / "pairs.jsonl"
    path.write_text(f"{GOOD_PAIR}\n\n{SAME_PAIR}\n{line}\n")
    with pytest.raises(InvalidInputError, match=rf"pairs\.jsonl:4: .*{why}"):
        load_pairs(path)


def test_calibrate_with_a_bad_line_is_one_clean_line(memman, tmp_path):  # noqa: F811
    path = tmp_path / "pairs.jsonl"
    path.write_text(f"{GOOD_PAIR}\n{SAME_PAIR}\n{{not json\n")
    run = memman("calibrate", str(path))
    assert run.code == 1 and run.out == ""
    assert run.err.startswith(f"Error: {path}:3: Invalid JSON")
    assert len(run.err.strip().splitlines()) == 1


def test_a_pair_file_may_start_with_a_byte_order_mark(tmp_path):
    path = tmp_path / "pairs.jsonl"
    path.write_text(f"\ufeff{GOOD_PAIR}\n{SAME_PAIR}\n", encoding="utf-8")
    assert [p.label for p in load_pairs(path)] == ["different", "same"]


def test_a_case_target_must_index_an_existing_memory(tmp_path):
    path = tmp_path / "cases.jsonl"
    case = {"existing": ["User likes tea"], "candidate": "User hates tea", "op": "update"}
    path.write_text(json.dumps(case | {"target": 0}) + "\n" + json.dumps(case | {"target": -1}))
    with pytest.raises(InvalidInputError, match=r"cases\.jsonl:2: target: "):
        load_cases(path)


def test_cases_are_named_by_their_line_unless_named(tmp_path):
    path = tmp_path / "cases.jsonl"
    case = {"existing": [], "candidate": "User likes tea", "op": "add"}
    path.write_text("\n" + json.dumps(case) + "\n" + json.dumps(case | {"name": "tea"}) + "\n")
    assert [(c.name, c.op) for c in load_cases(path)] == [("case 2", "ADD"), ("tea", "ADD")]


def test_ingest_reads_a_file_with_a_byte_order_mark(memman, tmp_path):  # noqa: F811
    path = tmp_path / "facts.jsonl"
    path.write_text('\ufeff{"fact": "User likes tea"}\n', encoding="utf-8")
    db = str(tmp_path / "m.db")
    run = memman("ingest", str(path), "-u", "alice", "--db", db)
    assert run.code == 0 and "1 facts decided (ADD 1); 0 bad lines" in run.out
    with MemoryManager(db) as mm:
        assert [m.content for m in mm.list(user_id="alice")] == ["User likes tea"]


def test_an_import_line_of_an_unknown_kind_is_reported_and_the_rest_imported(tmp_path):
    with MemoryManager(str(tmp_path / "a.db")) as mm:
        mm.update_memory("User likes tea", user_id="alice")
        lines = list(mm.export_jsonl())
    with MemoryManager(str(tmp_path / "b.db")) as mm:
        report = mm.import_jsonl([json.dumps({"kind": "note"}), *lines])
        assert [m.content for m in mm.export()] == ["User likes tea"]
    assert report.bad == ["line 1: expected a JSON object of kind 'memory' or 'event'"]


def test_a_line_that_is_not_utf8_is_one_bad_line_of_ingest_and_import(memman, tmp_path):  # noqa: F811
    # A file pasted together from a Latin-1 source: its other lines must still be read, as
    # "bad lines are reported by number and skipped" promises, not the whole file refused.
    facts = tmp_path / "facts.jsonl"
    facts.write_bytes(
        b'{"fact": "User likes tea"}\n{"fact": "User likes caf\xe9"}\n"User has a dog"\n'
    )
    db = str(tmp_path / "m.db")
    run = memman("ingest", str(facts), "-u", "alice", "--db", db)
    assert run.code == 2 and "2 facts decided (ADD 2); 1 bad lines" in run.out
    assert "line 2: not UTF-8 text (byte 0xe9 at character 25)" in run.err
    with MemoryManager(db) as mm:
        exported = list(mm.export_jsonl())
    dump = tmp_path / "dump.jsonl"
    dump.write_bytes(exported[0].encode() + b"\n\xff\xfe\n" + exported[1].encode() + b"\n")
    run = memman("import", str(dump), "--db", str(tmp_path / "copy.db"))
    assert run.code == 2 and "line 2: not UTF-8 text (byte 0xff at character 1)" in run.err
    with MemoryManager(str(tmp_path / "copy.db")) as copy:
        assert sorted(m.content for m in copy.list(user_id="alice")) == [
            "User has a dog",
            "User likes tea",
        ]


def test_an_export_holding_line_separators_in_a_fact_is_read_back_by_ingest(memman, tmp_path):  # noqa: F811
    # JSON keeps U+2028, NEL and the other characters str.splitlines() breaks at unescaped:
    # a line of `memman export` must stay one line when ingest reads it.
    fact = "User likes tea\u2028with milk\x85and\x1choney"
    with MemoryManager(str(tmp_path / "a.db")) as mm:
        mm.update_memory(fact, user_id="alice")
        out = tmp_path / "export.jsonl"
        out.write_text("".join(line + "\n" for line in mm.export_jsonl()), encoding="utf-8")
    db = str(tmp_path / "b.db")
    run = memman("ingest", str(out), "--db", db)
    assert run.code == 0 and "1 facts decided (ADD 1); 0 bad lines" in run.out
    with MemoryManager(db) as mm:
        assert [m.content for m in mm.list(user_id="alice")] == [fact]


def test_import_of_neither_a_path_nor_lines_is_invalid_input(tmp_path):
    with MemoryManager(str(tmp_path / "m.db")) as mm, pytest.raises(InvalidInputError):
        mm.import_jsonl(12)  # was a TypeError from iterating an int


@pytest.mark.parametrize("size", [1, 30])
def test_export_text_given_as_a_path_is_refused_in_one_short_line(tmp_path, size):
    """Issue 29: JSON-lines text passed as one string was opened as a path, and the error
    repeated the whole text twice (10 MB of it). It is refused in one short line; the lines
    themselves import."""
    with MemoryManager(str(tmp_path / "a.db")) as mm:
        for n in range(size):
            mm.update_memory(f"User collects stamps from land number {n}", user_id="alice")
        text = "\n".join(mm.export_jsonl()) + "\n"
    with MemoryManager(str(tmp_path / "b.db")) as mm:
        with pytest.raises(InvalidInputError) as refused:
            mm.import_jsonl(text)
        message = str(refused.value)
        assert "looks like JSON-lines text, not a path" in message
        assert len(message) < 200 and "\n" not in message
        with pytest.raises(InvalidInputError, match="not a path"):
            mm.import_jsonl(text.splitlines()[0])  # one record, no line break
        assert mm.import_jsonl(text.splitlines()).copied == size
