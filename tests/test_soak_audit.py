"""benchmarks/soak.py's audit finds what it is there to find: a soak that reports 0 lost and 0
duplicated means something only if a planted lost write and a planted duplicate are caught."""

from __future__ import annotations

import sqlite3

from benchmarks.soak import audit
from memman import MemoryManager


def _store(path: str) -> list[dict]:
    """Three written facts and one buffered message, and the journal lines acknowledging them."""
    lines = []
    with MemoryManager(path, decider="offline", extract_cooldown_s=3600) as mm:
        for n, text in enumerate(["User keeps red kites", "User sells old maps", "User paints"]):
            r = mm.update_memory(text, user_id=f"u{n}")
            lines.append(
                {"kind": "write", "user": f"u{n}", "text": text, "op": r.op.value,
                 "id": r.memory_id}
            )  # fmt: skip
        message = [{"role": "user", "content": "I collect brass bells"}]
        mm.observe(message, user_id="u0", session_id="s")
        lines.append({"kind": "observe", "user": "u0", "text": "I collect brass bells"})
    return lines


def test_a_clean_store_passes(tmp_path):
    path = str(tmp_path / "m.db")
    result = audit(path, _store(path))
    assert (sum(result.acknowledged.values()), result.lost, result.duplicated) == (4, [], [])


def test_a_planted_lost_write_and_message_are_found(tmp_path):
    path = str(tmp_path / "m.db")
    lines = _store(path)
    lines.append({"kind": "write", "user": "u0", "text": "User never said this", "op": "ADD",
                  "id": "nope"})  # fmt: skip
    lines.append({"kind": "observe", "user": "u1", "text": "a message never buffered"})
    with sqlite3.connect(path) as conn:  # retired with no event saying why
        conn.execute("UPDATE long_term SET status = 'deleted' WHERE id = ?", (lines[1]["id"],))
    result = audit(path, lines)
    assert len(result.lost) == 3, result.lost
    assert "User sells old maps" in result.lost[0]


def test_a_planted_duplicate_is_found(tmp_path):
    path = str(tmp_path / "m.db")
    lines = _store(path)
    with sqlite3.connect(path) as conn:  # the same write applied twice (another hash: the
        conn.executescript(  # unique index would refuse an exact copy)
            "CREATE TEMP TABLE copy AS SELECT * FROM long_term WHERE user_id = 'u2';"
            "UPDATE copy SET pk = NULL, id = 'planted', content_hash = 'planted';"
            "INSERT INTO long_term SELECT * FROM copy;"
        )
    result = audit(path, lines)
    assert result.lost == []
    assert result.duplicated == ["u2: 'User paints' active 2 times"]
