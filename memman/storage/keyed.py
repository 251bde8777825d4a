"""The scope predicate of a statement that reaches rows by key.

Such a statement names its scope too, so a key from another scope matches nothing and the
tables can be distributed by scope (tests/test_scope_predicate.py). But SQLite's planner,
given `user_id = ? AND agent_id = ?` beside `id IN (...)` and no statistics, may walk the
scope's index instead of the key's, reading every row of a big scope: a search's reinforcement
of its hits took 16 ms in a 100,000-memory scope instead of a few key lookups. A unary `+`
keeps SQLite from using an index for a column; other databases get the plain predicate.
"""

from __future__ import annotations

import sqlalchemy as sa


def keyed_scope(conn: sa.Connection) -> str:
    """`user_id = :u AND agent_id = :a` for a statement whose rows are found by key."""
    plus = "+" if conn.dialect.name == "sqlite" else ""
    return f"{plus}user_id = :u AND {plus}agent_id = :a"
