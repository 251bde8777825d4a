"""PostgreSQL's migrations that fill a derived column from what rows already hold.

The twins of SQLite's memman/storage/migrations/backfills.py: the value is computed in Python
(the same function the write path stores it with), read and written in batches inside the
migration's transaction, so a crash midway leaves the previous schema (postgres_schema.py).
A column whose default is what the rows stored before hold (p009) is filled by its ALTER.
"""

from __future__ import annotations

import logging

import sqlalchemy as sa

from memman.language.topic import READER_VERSION
from memman.storage.events import absorbed_hash
from memman.storage.labels import READER_KEY, STATE_TABLE, first_reader_version
from memman.storage.migrations.backfills import ABSORBED_PROGRESS, M025_BATCH, kin_subjects

log = logging.getLogger("memman.storage.migrations.postgres")


def p006_events_absorbed_hash(conn: sa.Connection) -> None:
    """m025's column, backfill and index: the hash of a text an event settled into a memory
    without making it the memory's text, so said again it finds that memory by one seek."""
    conn.exec_driver_sql("ALTER TABLE events ADD COLUMN absorbed_hash TEXT")
    absorbing = "op IN ('NOOP', 'UPDATE')"
    total = conn.exec_driver_sql(f"SELECT count(*) FROM events WHERE {absorbing}").scalar_one()
    batch = (
        "SELECT id, op, memory_id, candidate, content_after FROM events"
        f" WHERE id > %s AND {absorbing} ORDER BY id LIMIT %s"
    )
    done, last = 0, -1
    while rows := conn.exec_driver_sql(batch, (last, M025_BATCH)).mappings().all():
        hashes = [(h, row["id"]) for row in rows if (h := absorbed_hash(row)) is not None]
        if hashes:
            conn.exec_driver_sql("UPDATE events SET absorbed_hash = %s WHERE id = %s", hashes)
        done, last = done + len(rows), rows[-1]["id"]
        log.info(ABSORBED_PROGRESS, done, total, extra={"progress": (done, total)})
    conn.exec_driver_sql(
        "CREATE INDEX events_absorbed_hash ON events (user_id, agent_id, absorbed_hash)"
        " WHERE absorbed_hash IS NOT NULL"
    )


def p008_kin_subjects(conn: sa.Connection) -> None:
    """m027's filing of the stored subjects by person ("mom" is "mother")."""
    for table in ("long_term", "pending"):
        sql, params = kin_subjects(table, "%s")
        conn.exec_driver_sql(sql, tuple(params))


def p009_short_term_metadata(conn: sa.Connection) -> None:
    """m028's column: a short-term fact's metadata (JSON object), '{}' for those stored
    before."""
    conn.exec_driver_sql("ALTER TABLE short_term ADD COLUMN metadata TEXT NOT NULL DEFAULT '{}'")


def p010_store_state(conn: sa.Connection) -> None:
    """m029's table of the store's own state, with the reader version that labelled the
    memories: of unknown age where there are any, the current one for a new database."""
    conn.exec_driver_sql(STATE_TABLE)
    held = conn.exec_driver_sql("SELECT EXISTS (SELECT 1 FROM long_term)").scalar_one()
    version = first_reader_version(bool(held), READER_VERSION)
    insert = "INSERT INTO store_state (key, value) VALUES (%s, %s)"
    conn.exec_driver_sql(insert, (READER_KEY, version))
