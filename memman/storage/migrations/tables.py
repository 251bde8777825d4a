"""The tables and columns: the store's schema, one migration per step it took.

Each function is one migration of the chain ordered in __init__.py, applied in one
transaction and never edited once released.
"""

from __future__ import annotations

import sqlite_utils

from memman.storage.migrations.fts import FTS_TOKENIZE


def m001_long_term(db: sqlite_utils.Database) -> None:
    db.execute(
        """
        CREATE TABLE long_term (
            pk INTEGER PRIMARY KEY,  -- stable rowid for the external-content FTS index
            id TEXT NOT NULL UNIQUE,
            user_id TEXT NOT NULL,
            agent_id TEXT NOT NULL DEFAULT '',  -- '' = no agent, so the unique index works
            category TEXT,
            content TEXT NOT NULL,
            content_hash TEXT NOT NULL,
            importance REAL NOT NULL DEFAULT 5.0,
            confidence REAL NOT NULL DEFAULT 1.0,
            repetition_count INTEGER NOT NULL DEFAULT 1,
            access_count INTEGER NOT NULL DEFAULT 0,
            last_accessed_at TEXT,
            created_at TEXT NOT NULL,
            updated_at TEXT NOT NULL,
            status TEXT NOT NULL DEFAULT 'active',
            sources TEXT NOT NULL DEFAULT '[]',
            metadata TEXT NOT NULL DEFAULT '{}'
        )
        """
    )
    # Two processes can never store the same fact twice as active in one scope.
    db.execute(
        "CREATE UNIQUE INDEX long_term_active_hash ON long_term (user_id, agent_id, content_hash)"
        " WHERE status = 'active'"
    )
    db.execute("CREATE INDEX long_term_scope ON long_term (user_id, agent_id, status)")
    db["long_term"].enable_fts(["content"], create_triggers=True, tokenize=FTS_TOKENIZE)


def m002_events(db: sqlite_utils.Database) -> None:
    db.execute(
        """
        CREATE TABLE events (
            id INTEGER PRIMARY KEY,
            user_id TEXT NOT NULL,
            agent_id TEXT NOT NULL DEFAULT '',
            memory_id TEXT,
            op TEXT NOT NULL,
            tier TEXT NOT NULL,
            candidate TEXT,
            content_before TEXT,
            content_after TEXT,
            reason TEXT NOT NULL,
            scores TEXT NOT NULL DEFAULT '{}',
            model TEXT,
            prompt_template TEXT,
            prompt_hash TEXT,
            latency_ms REAL,
            attempts INTEGER,
            tokens INTEGER,
            error TEXT,
            source TEXT,
            created_at TEXT NOT NULL
        )
        """
    )
    db.execute("CREATE INDEX events_memory ON events (memory_id)")
    db.execute("CREATE INDEX events_scope ON events (user_id, agent_id, id)")


def m003_pending(db: sqlite_utils.Database) -> None:
    db.execute(
        """
        CREATE TABLE pending (
            id INTEGER PRIMARY KEY,
            user_id TEXT NOT NULL,
            agent_id TEXT NOT NULL DEFAULT '',
            content TEXT NOT NULL,
            source TEXT,
            metadata TEXT NOT NULL DEFAULT '{}',
            error TEXT NOT NULL,
            attempts INTEGER NOT NULL DEFAULT 0,
            created_at TEXT NOT NULL,
            updated_at TEXT NOT NULL
        )
        """
    )
    db.execute("CREATE INDEX pending_scope ON pending (user_id, agent_id)")


def m010_vectors(db: sqlite_utils.Database) -> None:
    # One float32 vector per (memory, embedding model): a model change never mixes vectors,
    # and `memman reindex` fills the new model's rows while the old ones stay usable.
    db.execute(
        """
        CREATE TABLE memory_vectors (
            memory_pk INTEGER NOT NULL REFERENCES long_term(pk),
            model TEXT NOT NULL,
            dim INTEGER NOT NULL,
            vector BLOB NOT NULL,
            PRIMARY KEY (memory_pk, model)
        )
        """
    )


def m011_short_term(db: sqlite_utils.Database) -> None:
    # Transient facts ("is at the airport right now") with an expiry. `sessions` lists the
    # sessions a fact was seen in: seen in enough of them, it is promoted to long-term.
    db.execute(
        """
        CREATE TABLE short_term (
            id INTEGER PRIMARY KEY,
            user_id TEXT NOT NULL,
            agent_id TEXT NOT NULL DEFAULT '',
            content TEXT NOT NULL,
            content_hash TEXT NOT NULL,
            category TEXT,
            importance REAL NOT NULL DEFAULT 5.0,
            sessions TEXT NOT NULL DEFAULT '[]',
            source TEXT,
            status TEXT NOT NULL DEFAULT 'active',  -- active | expired | promoted
            created_at TEXT NOT NULL,
            updated_at TEXT NOT NULL,
            expires_at TEXT NOT NULL
        )
        """
    )
    db.execute("CREATE INDEX short_term_scope ON short_term (user_id, agent_id, status)")


def m012_message_buffer(db: sqlite_utils.Database) -> None:
    # observe() writes messages here before extracting from them, so a crash between the two
    # loses nothing; extracted_at is set only once the facts of a message were written.
    db.execute(
        """
        CREATE TABLE message_buffer (
            id INTEGER PRIMARY KEY,
            user_id TEXT NOT NULL,
            agent_id TEXT NOT NULL DEFAULT '',
            session_id TEXT NOT NULL,
            role TEXT NOT NULL,
            content TEXT NOT NULL,
            created_at TEXT NOT NULL,
            extracted_at TEXT
        )
        """
    )
    db.execute("CREATE INDEX message_buffer_session ON message_buffer (session_id, extracted_at)")


def m013_long_term_decayed_at(db: sqlite_utils.Database) -> None:
    # When consolidate last decayed a memory: decay is applied at most once a day, and only
    # for the days since max(last access, last decay), so repeated runs compound correctly.
    db.execute("ALTER TABLE long_term ADD COLUMN decayed_at TEXT")


def m015_vector_log(db: sqlite_utils.Database) -> None:
    # Every change to the set of active vectors (vector written or dropped, memory status
    # changed) appends the memory's pk here, so a VectorIndex checks its cached matrix with two
    # primary-key lookups and patches only the changed rows, for its own writes and other
    # processes' alike. `token` is random per row: a rolled-back change may reuse a seq, never
    # its token. Only the last 100k changes are kept; an older cache simply reloads.
    db.execute(
        """
        CREATE TABLE vector_log (
            seq INTEGER PRIMARY KEY,
            user_id TEXT NOT NULL,
            agent_id TEXT NOT NULL,
            memory_pk INTEGER NOT NULL,
            token BLOB NOT NULL
        )
        """
    )
    for event, row in (("INSERT", "new"), ("DELETE", "old")):
        db.execute(
            f"""
            CREATE TRIGGER memory_vectors_log_{event.lower()} AFTER {event} ON memory_vectors
            BEGIN
              INSERT INTO vector_log (user_id, agent_id, memory_pk, token)
                SELECT user_id, agent_id, pk, randomblob(8) FROM long_term
                WHERE pk = {row}.memory_pk;
            END
            """
        )
    db.execute(
        """
        CREATE TRIGGER long_term_status_log AFTER UPDATE OF status ON long_term
        WHEN old.status != new.status
          AND EXISTS (SELECT 1 FROM memory_vectors WHERE memory_pk = new.pk)
        BEGIN
          INSERT INTO vector_log (user_id, agent_id, memory_pk, token)
            VALUES (new.user_id, new.agent_id, new.pk, randomblob(8));
        END
        """
    )
    db.execute(
        """
        CREATE TRIGGER vector_log_prune AFTER INSERT ON vector_log BEGIN
          DELETE FROM vector_log WHERE seq <= new.seq - 100000;
        END
        """
    )


def m016_short_term_recalls_and_pending_salience(db: sqlite_utils.Database) -> None:
    # How often context() put a short-term fact into a prompt: a transient fact that keeps
    # being recalled is promoted to long-term like one that recurs across sessions.
    db.execute("ALTER TABLE short_term ADD COLUMN recall_count INTEGER NOT NULL DEFAULT 0")
    # A parked fact keeps the category and importance it came with, so retry_pending stores
    # them in long_term's columns instead of dropping them.
    db.execute("ALTER TABLE pending ADD COLUMN category TEXT")
    db.execute("ALTER TABLE pending ADD COLUMN importance REAL")


def m017_short_term_last_recalled_at(db: sqlite_utils.Database) -> None:
    # When a short-term fact's recall was last counted: recalls closer together than
    # promote_recall_spacing_hours are one use (a conversation about the airport shows
    # "is at the airport" every turn; that does not make it a lasting fact).
    db.execute("ALTER TABLE short_term ADD COLUMN last_recalled_at TEXT")


def m019_leases_and_growth(db: sqlite_utils.Database) -> None:
    # A worker claims a parked fact or a buffered message before deciding or extracting it
    # (lease_owner, until lease_expires): two processes running retry_pending or flush never
    # work on the same row, and a crashed worker's claim lapses. An event that repeats the
    # previous NOOP of the same memory is folded into it: repeat_count and last_at.
    for table in ("pending", "message_buffer"):
        db.execute(f"ALTER TABLE {table} ADD COLUMN lease_owner TEXT")
        db.execute(f"ALTER TABLE {table} ADD COLUMN lease_expires TEXT")
    db.execute("ALTER TABLE events ADD COLUMN repeat_count INTEGER NOT NULL DEFAULT 1")
    db.execute("ALTER TABLE events ADD COLUMN last_at TEXT")
    # Extracted messages are pruned by age: find them without scanning the buffer.
    db.execute("CREATE INDEX message_buffer_extracted ON message_buffer (extracted_at)")


def m026_message_metadata(db: sqlite_utils.Database) -> None:
    # The metadata observe() was given with the messages (JSON, NULL for none): the facts
    # extracted from them carry it, also when extraction fails and a later flush or
    # consolidate retries it (mem0's add(messages, metadata=..., infer=True)).
    db.execute("ALTER TABLE message_buffer ADD COLUMN metadata TEXT")


def m028_short_term_metadata(db: sqlite_utils.Database) -> None:
    # The metadata a short-term fact came with (JSON object; observe()'s or
    # remember_short_term's): shown with it and handed on when it is promoted. Facts stored
    # before had none: '{}'.
    db.execute("ALTER TABLE short_term ADD COLUMN metadata TEXT NOT NULL DEFAULT '{}'")
