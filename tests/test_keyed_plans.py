"""Statements that reach rows by key use the key's index, not the scope's.

They name their scope as well (tests/test_scope_predicate.py), and without statistics
SQLite's planner may prefer the scope's index for `user_id = ? AND agent_id = ?` over the
key's for `id IN (...)`: that walks every row of the scope, so a search's reinforcement cost
grew with the user's store (16 ms per search at 100,000 memories). The plan depends on how many
keys the statement lists, not on how many rows there are, so a small file shows it.
"""

from __future__ import annotations

import re
import sqlite3

from memman import MemoryManager
from tests.test_scope_predicate import traced  # noqa: F401  (a fixture)

SCOPE_INDEXES = re.compile(r"USING INDEX (long_term_scope|short_term_scope|pending_scope)\b")
BY_KEY = re.compile(r"^(UPDATE|DELETE|SELECT)\b.* WHERE .*\bid (IN \(|= )", re.IGNORECASE)


def test_rows_found_by_key_are_read_through_the_keys_index(tmp_path, traced):  # noqa: F811
    path = tmp_path / "m.db"
    with MemoryManager(str(path), decider="offline") as mm:
        for thing in ("green tea", "hiking", "jazz", "chess", "cycling", "sushi"):
            mm.update_memory(f"User likes {thing}", user_id="alice")
        mm.remember_short_term("User is in Lisbon this week", user_id="alice", session_id="s")
        traced.clear()
        assert len(mm.search("likes", user_id="alice")) > 3  # reinforces its hits by id
        assert "Lisbon" in str(mm.context("Lisbon this week", user_id="alice"))  # short-term
    by_key = [
        flat
        for flat in (" ".join(sql.split()) for sql in traced)
        if not flat.startswith("--") and BY_KEY.match(flat) and "user_id" in flat
    ]
    assert any(flat.startswith("UPDATE long_term") for flat in by_key)
    assert any(flat.startswith("UPDATE short_term") for flat in by_key)
    conn = sqlite3.connect(path)
    plans = {
        flat: " ".join(row[3] for row in conn.execute("EXPLAIN QUERY PLAN " + flat))
        for flat in by_key
    }
    conn.close()
    assert {flat: plan for flat, plan in plans.items() if SCOPE_INDEXES.search(plan)} == {}
