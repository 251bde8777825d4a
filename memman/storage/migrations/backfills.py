"""Columns derived from what rows already hold, filled for the existing rows.

A memory's topic (m018, indexed for a seek by m022), an event's before_hash (m023) and its
absorbed_hash (m025) are computed from text the file already stores, so each migration
backfills them in place; m027 files the subjects stored before a person had one name.
"""

from __future__ import annotations

import logging

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


M025_BATCH = 20_000
ABSORBED_PROGRESS = "hashing the texts events absorbed: %d of %d"
log = logging.getLogger(__name__)


def m025_events_absorbed_hash(db: sqlite_utils.Database) -> None:
    # A text an earlier event settled into a memory without becoming its text (a NOOP into
    # a memory that says more, an UPDATE's statement) is, said again, settled by that memory
    # (the router's NOOP) only if retrieval's top k finds it, which a large scope may not
    # (issue 11); the hash of the text said finds it by one index seek (active_absorbing).
    # Every event is read once, in id order, in batches; the migration is one transaction.
    from memman.storage.events import absorbed_hash

    db.execute("ALTER TABLE events ADD COLUMN absorbed_hash TEXT")
    (total,) = db.execute("SELECT count(*) FROM events WHERE op IN ('NOOP', 'UPDATE')").fetchone()
    batch = (
        "SELECT id, op, memory_id, candidate, content_after FROM events"
        " WHERE id > ? AND op IN ('NOOP', 'UPDATE') ORDER BY id LIMIT ?"
    )
    done, last = 0, -1
    while rows := list(db.query(batch, (last, M025_BATCH))):
        hashes = [(h, row["id"]) for row in rows if (h := absorbed_hash(row)) is not None]
        db.conn.executemany("UPDATE events SET absorbed_hash = ? WHERE id = ?", hashes)
        done, last = done + len(rows), rows[-1]["id"]
        log.info(ABSORBED_PROGRESS, done, total, extra={"progress": (done, total)})
    db.execute(
        "CREATE INDEX events_absorbed_hash ON events (user_id, agent_id, absorbed_hash)"
        " WHERE absorbed_hash IS NOT NULL"
    )


def kin_subjects(table: str, mark: str) -> tuple[str, list[str]]:
    """The statement (and its parameters, `mark` the driver's placeholder) that files a
    table's subjects by person (language/attributes.KIN: "mom" is "mother"), on either
    backend: m027 here, p008 on PostgreSQL."""
    from memman.language.attributes import KIN

    cases = " ".join(f"WHEN {mark} THEN {mark}" for _ in KIN)
    sql = (
        f"UPDATE {table} SET subject = CASE subject {cases} END"
        f" WHERE subject IN ({', '.join([mark] * len(KIN))})"
    )
    return sql, [word for pair in KIN.items() for word in pair] + list(KIN)


def m027_kin_subjects(db: sqlite_utils.Database) -> None:
    # "My mom lives in Rome" was stored with the subject "mom", "My mother moved to Paris"
    # with "mother": two people, so the newer residence stayed beside the old (issue 11).
    # The extractor and the labels now file a person by one name; the rows stored before
    # are filed the same way, parked facts too. One statement per table, on the topic index.
    for table in ("long_term", "pending"):
        db.execute(*kin_subjects(table, "?"))


def m029_store_state(db: sqlite_utils.Database) -> None:
    # The store's own state by key, first which reader version (language/topic.py
    # READER_VERSION) labelled its memories: a memory stored with no topic when the reader could
    # not read its phrasing is read again by `memman relabel`, and `memman check` says when one
    # is due. The memories stored before were labelled by a reader of unknown age; a new store
    # starts at the current version.
    from memman.language.topic import READER_VERSION
    from memman.storage.labels import READER_KEY, STATE_TABLE, first_reader_version

    db.execute(STATE_TABLE)
    (held,) = db.execute("SELECT EXISTS (SELECT 1 FROM long_term)").fetchone()
    version = first_reader_version(bool(held), READER_VERSION)
    db.execute("INSERT INTO store_state (key, value) VALUES (?, ?)", (READER_KEY, version))
