"""An import copies records past the write path, so a line must pass the checks a write makes:
a line that would store what no write stores is reported as a bad line, and the rest of the
file is imported."""

from __future__ import annotations

import json

import pytest

from memman import MemoryManager, Op
from tests.clock import Clock
from tests.test_erase import PARK, SeededEmbedder

USER = "alice"


@pytest.fixture
def lines(tmp_path) -> list[str]:
    """An export with its events: a pinned memory and an unrelated one."""
    with MemoryManager(str(tmp_path / "source.db"), clock=Clock()) as mm:
        mm.update_memory("User lives in Porto", user_id=USER, metadata={"pinned": True})
        mm.update_memory("User plays chess", user_id=USER)
        return list(mm.export_jsonl(include_inactive=True, events=True))


def _edited(line: str, **changes: object) -> str:
    return json.dumps({**json.loads(line), **changes})


MEMORY_EDITS = {
    "NaN in metadata": {"metadata": {"pinned": float("nan")}},
    "NaN importance": {"importance": float("nan")},
    "infinite confidence": {"confidence": float("inf")},
    "created_at not a time": {"created_at": "yesterday"},
    "blank content": {"content": "  "},
    "negative count": {"repetition_count": -5},
    # update_memory refuses importance outside 1-10; copied, 99 outranked every other memory
    # in recall, and a confidence of 5 made a memory protected from decay for good.
    "importance above 10": {"importance": 99},
    "importance below 1": {"importance": 0},
    "confidence above 1": {"confidence": 5},
    "negative confidence": {"confidence": -0.5},
    "unknown field": {"embedding_v2": [0.1, 0.2]},
}


@pytest.mark.parametrize("edit", MEMORY_EDITS.values(), ids=MEMORY_EDITS.keys())
def test_a_memory_line_no_write_would_store_is_a_bad_line(tmp_path, lines, edit):
    bad = _edited(lines[0], **edit)
    with MemoryManager(str(tmp_path / "target.db"), clock=Clock()) as mm:
        report = mm.import_jsonl([bad, *lines[1:]])
        assert [line.split(":")[0] for line in report.bad] == ["line 1"]
        assert report.copied == 1
        assert [m.content for m in mm.list(user_id=USER)] == ["User plays chess"]
        assert "User plays chess" in mm.context("chess", user_id=USER).text
        assert mm.check().ok


def test_an_unknown_field_is_named(tmp_path, lines):
    with MemoryManager(str(tmp_path / "target.db"), clock=Clock()) as mm:
        report = mm.import_jsonl([_edited(lines[0], embedding_v2=[0.1])])
    assert "unknown field 'embedding_v2'" in report.bad[0]


EVENT_EDITS = {
    "NaN latency": {"latency_ms": float("nan")},
    "created_at not a time": {"created_at": "2026-13-45"},
    "unknown field": {"decided_by": "a newer memman"},
}


@pytest.mark.parametrize("edit", EVENT_EDITS.values(), ids=EVENT_EDITS.keys())
def test_an_event_line_no_write_would_store_is_a_bad_line(tmp_path, lines, edit):
    kinds = [json.loads(line)["kind"] for line in lines]
    first_event = kinds.index("event")
    edited = [*lines]
    edited[first_event] = _edited(lines[first_event], **edit)
    with MemoryManager(str(tmp_path / "target.db"), clock=Clock()) as mm:
        report = mm.import_jsonl(edited)
        assert [line.split(":")[0] for line in report.bad] == [f"line {first_event + 1}"]
        assert report.copied == 2 and report.events_copied == kinds.count("event") - 1


def test_a_stamp_is_stored_in_the_stored_form(tmp_path, lines):
    """A date alone is a time memman can read; stored as written it would sort among the
    stored stamps as text, before every other stamp of that day."""
    with MemoryManager(str(tmp_path / "target.db"), clock=Clock()) as mm:
        report = mm.import_jsonl([_edited(lines[0], observed_at="2020-01-02")])
        assert report.bad == []
        (memory,) = mm.list(user_id=USER)
    assert memory.observed_at == "2020-01-02T00:00:00.000+00:00"


def test_a_text_or_metadata_larger_than_a_write_takes_is_a_bad_line(tmp_path, lines):
    """A fact over max_fact_chars (or metadata over max_metadata_bytes) that a write refuses
    is not copied either: a 50 MB content took 20 s and 4 GB of memory to import."""
    long_text = _edited(lines[0], content="User lives in " + "a very long town name " * 20)
    big_metadata = _edited(lines[0], id="f" * 32, metadata={"note": "x" * 300})
    target = str(tmp_path / "target.db")
    with MemoryManager(target, clock=Clock(), max_fact_chars=100, max_metadata_bytes=200) as mm:
        report = mm.import_jsonl([long_text, big_metadata, *lines[1:]])
        assert report.bad == [
            "line 1: a text is 454 characters; the limit is 100",
            "line 2: metadata is 312 bytes; the limit is 200",
        ]
        assert [m.content for m in mm.list(user_id=USER)] == ["User plays chess"]


def test_an_event_naming_another_users_memory_is_a_bad_line(tmp_path, lines):
    """history() reads a memory's events by its id: an imported event of alice's naming
    bob's memory would show in bob's history."""
    with MemoryManager(str(tmp_path / "target.db"), clock=Clock()) as mm:
        bob = mm.update_memory("User plays the oboe", user_id="bob").memory_id
        kinds = [json.loads(line)["kind"] for line in lines]
        event = kinds.index("event")
        forged = [*lines[:event], _edited(lines[event], memory_id=bob), *lines[event + 1 :]]
        report = mm.import_jsonl(forged)
        assert report.bad == [f"line {event + 1}: the event names another scope's memory"]
        assert [e.op for e in mm.history(bob, user_id="bob")] == ["ADD"]
        assert report.copied == 2


def test_a_copied_row_whose_id_the_store_holds_takes_a_new_one(tmp_path):
    """A whole-store copy read with raw into a store with parked facts of its own: the row
    whose id is taken is parked under a new id, neither an untyped IntegrityError that loses
    the batch nor a bad line that drops the fact."""
    from memman.storage import store_copy
    from tests.test_erase import FlakyEmbedder

    embedder = FlakyEmbedder()
    embedder.down = True
    with MemoryManager(str(tmp_path / "a.db"), embedder=embedder, clock=Clock()) as mm:
        mm.update_memory("User likes green tea", user_id="u")
        mm.update_memory("User plays chess", user_id="u", agent_id="coach")
        lines = list(store_copy.store_lines(mm))
    with MemoryManager(str(tmp_path / "b.db"), embedder=embedder, clock=Clock()) as mm:
        mm.update_memory("User likes coffee", user_id="v")  # parked as pending #1
        report = mm.import_jsonl(lines, raw=True)
        parked = sorted(p.content for p in mm.pending())
    assert (report.bad, report.rows_renumbered) == ([], 1)
    assert parked == ["User likes coffee", "User likes green tea", "User plays chess"]


@pytest.mark.parametrize("kind", ["pending", "short_term"])
def test_a_parked_or_short_term_importance_off_the_scale_is_a_bad_line(tmp_path, kind):
    source = str(tmp_path / "source.db")
    with MemoryManager(source, embedder=SeededEmbedder(), clock=Clock()) as mm:
        mm.remember_short_term("User is at the airport", user_id=USER, session_id="s")
        assert mm.update_memory(f"User said {PARK}", user_id=USER).op is Op.PENDING
        exported = list(mm.export_jsonl())
    line = next(line for line in exported if json.loads(line)["kind"] == kind)
    with MemoryManager(str(tmp_path / "target.db"), clock=Clock()) as mm:
        report = mm.import_jsonl([_edited(line, importance=50)])
        assert len(report.bad) == 1 and "importance" in report.bad[0]
        assert mm.short_term(user_id=USER) == [] and mm.pending(user_id=USER) == []


def test_a_file_opened_in_binary_mode_imports_as_its_path_does(tmp_path, lines):
    # open(path, "rb") is how many readers hand a file on; each line was bytes, and the
    # import died on its first one with an untyped AttributeError.
    dump = tmp_path / "dump.jsonl"
    dump.write_bytes(("\n".join(lines) + "\n").encode() + b"\xff not utf-8\n")
    with open(dump, "rb") as file, MemoryManager(str(tmp_path / "target.db")) as mm:
        report = mm.import_jsonl(file)
        assert report.copied == 2 and report.events_copied == 2
        assert report.bad == [f"line {len(lines) + 1}: not UTF-8 text (byte 0xff at character 1)"]
        assert sorted(m.content for m in mm.list(user_id=USER)) == [
            "User lives in Porto",
            "User plays chess",
        ]


def test_a_line_that_is_not_text_is_a_bad_line(tmp_path, lines):
    with MemoryManager(str(tmp_path / "target.db")) as mm:
        report = mm.import_jsonl([lines[0], 5, None, *lines[1:]])
        assert [line.split(":")[0] for line in report.bad] == ["line 2", "line 3"]
        assert report.copied == 2
