"""Columns derived from what rows already hold, filled for the existing rows.

A memory's topic (m018, indexed for a seek by m022) and an event's before_hash (m023) are
computed from text the file already stores, so each migration backfills them in place.
"""

from __future__ import annotations

import sqlite_utils

from memman.language.text import content_hash


def m018_topics_and_observed_at(db: sqlite_utils.Database) -> None:
    # What a memory is about (subject, attribute: memman/language/topic.py), so a new fact finds the
    # memory it supersedes by topic, not by shared words; and when its statement was made
    # (observed_at), so an older statement imported or retried late never replaces a newer
    # one. Existing memories were observed when their text was last written (updated_at),
    # and get their topic from the extractor. A parked fact keeps what it came with.
    from memman.language.topic import about

    for table in ("long_term", "pending"):
        for column in ("subject", "attribute", "observed_at"):
            db.execute(f"ALTER TABLE {table} ADD COLUMN {column} TEXT")
    db.execute("ALTER TABLE message_buffer ADD COLUMN observed_at TEXT")
    db.execute("UPDATE long_term SET observed_at = updated_at")
    db.execute("UPDATE pending SET observed_at = created_at")
    topics = [
        (topic.subject, topic.attribute, pk)
        for pk, content in db.execute("SELECT pk, content FROM long_term").fetchall()
        if (topic := about(content)) is not None
    ]
    db.conn.executemany("UPDATE long_term SET subject = ?, attribute = ? WHERE pk = ?", topics)
    db.execute(
        "CREATE INDEX long_term_topic ON long_term (user_id, agent_id, subject, attribute)"
        " WHERE status = 'active'"
    )


def m022_topic_index_ordered(db: sqlite_utils.Database) -> None:
    # Memories about one topic, newest observed first, read by one index seek: with
    # observed_at in the index the scan stops after `limit` rows instead of sorting every
    # memory of the topic (a common verb topic holds thousands in a 100k scope: ~1.5 ms a fact).
    db.execute("DROP INDEX long_term_topic")
    db.execute(
        "CREATE INDEX long_term_topic"
        " ON long_term (user_id, agent_id, subject, attribute, observed_at)"
        " WHERE status = 'active'"
    )


M023_BATCH = 20_000


def m023_events_before_hash(db: sqlite_utils.Database) -> None:
    # A text a newer statement replaced, said again, UPDATEs that memory back
    # (supersede._said_again). Word and topic retrieval return a bounded number of memories,
    # so the replacing one can be out of reach in a large scope; the hash of each event's
    # content_before finds it by one index seek instead (Store.active_replacing).
    db.execute("ALTER TABLE events ADD COLUMN before_hash TEXT")
    batch = (
        "SELECT id, content_before FROM events"
        " WHERE id > ? AND content_before IS NOT NULL ORDER BY id LIMIT ?"
    )
    last = -1
    while rows := db.execute(batch, (last, M023_BATCH)).fetchall():
        db.conn.executemany(
            "UPDATE events SET before_hash = ? WHERE id = ?",
            [(content_hash(before), id_) for id_, before in rows],
        )
        last = rows[-1][0]
    db.execute(
        "CREATE INDEX events_before_hash ON events (user_id, agent_id, before_hash)"
        " WHERE before_hash IS NOT NULL"
    )
