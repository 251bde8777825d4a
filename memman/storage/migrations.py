"""Ordered schema migrations, recorded in the database (`_sqlite_migrations`).

A file made by an older memman upgrades in place when it is opened. Each migration is a
small named function applied in one transaction; once released, a migration is never
edited: a change to the schema is a new function at the end of this file.
"""

from __future__ import annotations

import logging

import sqlite_utils
from sqlite_utils.migrations import Migrations

from memman.language.text import content_hash

migrations = Migrations("memman")

# Porter stemming lets "likes" find "like"; unicode61 with diacritics removed lets "cafe"
# find "café". The query builder in retrieval.py quotes every term, so the tokenizer only
# decides how terms are split, never what counts as syntax.
FTS_TOKENIZE = "porter unicode61 remove_diacritics 2"


@migrations()
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


@migrations()
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


@migrations()
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


@migrations()
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


@migrations()
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


@migrations()
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


@migrations()
def m013_long_term_decayed_at(db: sqlite_utils.Database) -> None:
    # When consolidate last decayed a memory: decay is applied at most once a day, and only
    # for the days since max(last access, last decay), so repeated runs compound correctly.
    db.execute("ALTER TABLE long_term ADD COLUMN decayed_at TEXT")


@migrations()
def m014_fts_sync_on_content_only(db: sqlite_utils.Database) -> None:
    # sqlite-utils' update trigger rewrites the FTS row on every UPDATE, so each reinforcement,
    # access count or status change added an FTS segment (0.06 -> 0.01 ms per reinforcement,
    # and a less fragmented index for every later query). Only a content change needs it.
    db.execute("DROP TRIGGER long_term_au")
    db.execute(
        """
        CREATE TRIGGER long_term_au AFTER UPDATE OF content ON long_term BEGIN
          INSERT INTO long_term_fts (long_term_fts, rowid, content)
            VALUES ('delete', old.rowid, old.content);
          INSERT INTO long_term_fts (rowid, content) VALUES (new.rowid, new.content);
        END
        """
    )
    # update_many interleaves MATCH and INSERT in one transaction, which makes FTS5 flush a tiny
    # segment per fact; merging them in larger steps cut ingest cost per fact by ~40 % at 10k.
    db.execute("INSERT INTO long_term_fts (long_term_fts, rank) VALUES ('automerge', 8)")


@migrations()
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


@migrations()
def m016_short_term_recalls_and_pending_salience(db: sqlite_utils.Database) -> None:
    # How often context() put a short-term fact into a prompt: a transient fact that keeps
    # being recalled is promoted to long-term like one that recurs across sessions.
    db.execute("ALTER TABLE short_term ADD COLUMN recall_count INTEGER NOT NULL DEFAULT 0")
    # A parked fact keeps the category and importance it came with, so retry_pending stores
    # them in long_term's columns instead of dropping them.
    db.execute("ALTER TABLE pending ADD COLUMN category TEXT")
    db.execute("ALTER TABLE pending ADD COLUMN importance REAL")


@migrations()
def m017_short_term_last_recalled_at(db: sqlite_utils.Database) -> None:
    # When a short-term fact's recall was last counted: recalls closer together than
    # promote_recall_spacing_hours are one use (a conversation about the airport shows
    # "is at the airport" every turn; that does not make it a lasting fact).
    db.execute("ALTER TABLE short_term ADD COLUMN last_recalled_at TEXT")


@migrations()
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


@migrations()
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


def scope_token_sql(row: str) -> str:
    """SQL for the FTS5 token naming the scope of a long_term row (`row`: a table or alias).

    hex() makes any user and agent id one run of letters and digits, which unicode61 keeps as
    one token; the "x" cannot occur in hex, so no two scopes share a token; a final digit keeps
    the porter stemmer from cutting a suffix. retrieval.scope_token writes the same in Python.
    """
    return f"'u' || hex({row}.user_id) || 'x' || hex({row}.agent_id) || '0'"


@migrations()
def m020_scoped_fts(db: sqlite_utils.Database) -> None:
    # The index held content only, so a query for one user's rows ranked the matching rows of
    # every user in the file and filtered afterwards: a user's latency grew with the others
    # (9 ms per write at 1,000 users x 100 against 0.8 ms alone). A second indexed column holds
    # the row's scope token, and queries AND it in (`scope : "<token>" AND content : (...)`),
    # so FTS5 only walks the scope's postings. The column's text comes from a view, since
    # long_term has no such column. bm25 gives it weight 0 (fts.RANK). 'rebuild' fills
    # the new index from the view in one statement, inside the migration's transaction.
    for trigger in ("long_term_ai", "long_term_ad", "long_term_au"):
        db.execute(f"DROP TRIGGER IF EXISTS {trigger}")
    db.execute("DROP TABLE long_term_fts")
    db.execute(
        f"""
        CREATE VIEW long_term_fts_source AS
        SELECT pk, content, {scope_token_sql("long_term")} AS scope FROM long_term
        """
    )
    db.execute(
        f"""
        CREATE VIRTUAL TABLE long_term_fts USING fts5(
            content, scope, content='long_term_fts_source', content_rowid='pk',
            tokenize='{FTS_TOKENIZE}'
        )
        """
    )
    new, old = scope_token_sql("new"), scope_token_sql("old")
    insert = (
        f"INSERT INTO long_term_fts (rowid, content, scope) VALUES (new.pk, new.content, {new})"
    )
    delete = (
        "INSERT INTO long_term_fts (long_term_fts, rowid, content, scope)"
        f" VALUES ('delete', old.pk, old.content, {old})"
    )
    db.execute(f"CREATE TRIGGER long_term_ai AFTER INSERT ON long_term BEGIN {insert}; END")
    db.execute(f"CREATE TRIGGER long_term_ad AFTER DELETE ON long_term BEGIN {delete}; END")
    db.execute(
        "CREATE TRIGGER long_term_au AFTER UPDATE OF content, user_id, agent_id ON long_term"
        f" BEGIN {delete}; {insert}; END"
    )
    db.execute("INSERT INTO long_term_fts (long_term_fts) VALUES ('rebuild')")
    # As m014: fewer, larger segment merges while update_many interleaves MATCH and INSERT.
    db.execute("INSERT INTO long_term_fts (long_term_fts, rank) VALUES ('automerge', 8)")


# What the FTS5 tokenizer splits words at that m021 turns into spaces before keying each word:
# ASCII whitespace and punctuation and the typographic marks facts are written with. A character
# missing here still splits a word, leaving its second part unkeyed in the index, where no
# scoped query finds it.
FTS_SEPARATORS = tuple("\t\n\r!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~") + tuple(
    "\u00a0\u2018\u2019\u201c\u201d\u2013\u2014\u2026\u00ab\u00bb\u00b7\u2022\u00bf\u00a1"
    # Currency and common symbols, which chat glues to numbers and words ("£900", "5°C").
    "\u00a3\u20ac\u00a5\u20b9\u00a2\u00b0\u00d7\u00f7\u00b1\u2265\u2264\u2192\u2122\u00a9\u00ae\u00b4\u201a"
)
# Runs of up to 32 spaces become one: a run left over would index a bare key as a word,
# which makes the row look longer to bm25 (", " would count as a word).
_COLLAPSE_SPACES = 5


def scope_key(scope_id: int) -> str:
    """The prefix of every indexed token of a scope: consonants and digits only.

    Porter's rules count vowel-consonant runs and look for a vowel in the stem, so a prefix
    without vowels stems "q7jlikes" as it stems "likes"; the final "j" ends the number, so
    no two scopes' tokens can coincide. m021's SQL writes the same ('q' || id || 'j').
    """
    return f"q{scope_id}j"


def keyed_rows_sql(rows: str) -> str:
    """SQL selecting (pk, content) from rows, a SELECT of (pk, t, k): t's words separated by
    single spaces, each prefixed by the key k. keyed_text computes the same in Python.

    The replace() calls are staged in nested subqueries of twelve, because SQLite's parser
    overflows its stack at about thirty nested calls in one expression.
    """
    for start in range(0, len(FTS_SEPARATORS), 12):
        expr = "t"
        for char in FTS_SEPARATORS[start : start + 12]:
            expr = f"replace({expr}, char({ord(char)}), ' ')"
        rows = f"SELECT pk, {expr} AS t, k FROM ({rows})"
    expr = "t"
    for _ in range(_COLLAPSE_SPACES):
        expr = f"replace({expr}, '  ', ' ')"
    return f"SELECT pk, k || replace(trim({expr}), ' ', ' ' || k) AS content FROM ({rows})"


_TO_SPACE = {ord(char): " " for char in FTS_SEPARATORS}


def keyed_text(text: str, key: str) -> str:
    """What keyed_rows_sql makes of text, computed in Python: m021 fills the index with this
    (str.translate is one C pass; the SQL's replace() chain cost ~14 us a row), triggers use
    the SQL."""
    text = text.translate(_TO_SPACE)
    for _ in range(_COLLAPSE_SPACES):
        text = text.replace("  ", " ")
    return key + text.strip(" ").replace(" ", " " + key)


M021_BATCH = 20_000
log = logging.getLogger(__name__)


def _log_progress(done: int, total: int) -> None:
    """One INFO record per batch of a long migration; `extra` carries the numbers a bar needs."""
    log.info(
        "indexing memories per scope: %d of %d", done, total, extra={"progress": (done, total)}
    )


@migrations()
def m021_fts_postings_per_scope(db: sqlite_utils.Database) -> None:
    # m020 ANDed a scope token into every query, but each content term still had one posting
    # list spanning every user, and bm25() counts a term's rows file-wide for its IDF: a user's
    # query cost still grew with the file (search 0.42 -> 1.22 ms at 10,000 users x 100). Now
    # every indexed token carries its scope's key ("q7jhiking"), so a term's posting list holds
    # one scope's rows: the MATCH, and bm25's count of the rows holding a term, stay within the
    # scope (its row total and average length remain the file's). Scopes get a small id here
    # (the key must stay short: porter stems tokens of up to 64 characters). The index is filled
    # in batches of M021_BATCH rows, each logged (the CLI draws a bar), all in the migration's
    # one transaction: a crash leaves the file at m020.
    for trigger in ("long_term_ai", "long_term_ad", "long_term_au"):
        db.execute(f"DROP TRIGGER IF EXISTS {trigger}")
    db.execute("DROP TABLE long_term_fts")
    db.execute("DROP VIEW long_term_fts_source")
    db.execute(
        """
        CREATE TABLE fts_scopes (
            id INTEGER PRIMARY KEY,
            user_id TEXT NOT NULL,
            agent_id TEXT NOT NULL,
            UNIQUE (user_id, agent_id)
        )
        """
    )
    db.execute(
        "INSERT INTO fts_scopes (user_id, agent_id)"
        " SELECT DISTINCT user_id, agent_id FROM long_term ORDER BY user_id, agent_id"
    )
    key = "'q' || s.id || 'j' AS k"
    scope_of = "fts_scopes s WHERE s.user_id = {0}.user_id AND s.agent_id = {0}.agent_id"
    db.execute(
        "CREATE VIEW long_term_fts_source AS "
        + keyed_rows_sql(
            f"SELECT long_term.pk AS pk, long_term.content AS t, {key} FROM long_term"
            " JOIN fts_scopes s"
            " ON s.user_id = long_term.user_id AND s.agent_id = long_term.agent_id"
        )
    )
    db.execute(
        f"""
        CREATE VIRTUAL TABLE long_term_fts USING fts5(
            content, content='long_term_fts_source', content_rowid='pk',
            tokenize='{FTS_TOKENIZE}'
        )
        """
    )
    add_scope = (
        "INSERT OR IGNORE INTO fts_scopes (user_id, agent_id) VALUES (new.user_id, new.agent_id)"
    )
    new_rows = keyed_rows_sql(
        f"SELECT new.pk AS pk, new.content AS t, {key} FROM {scope_of.format('new')}"
    )
    old_rows = keyed_rows_sql(
        f"SELECT old.pk AS pk, old.content AS t, {key} FROM {scope_of.format('old')}"
    )
    insert = f"INSERT INTO long_term_fts (rowid, content) SELECT pk, content FROM ({new_rows})"
    delete = (
        "INSERT INTO long_term_fts (long_term_fts, rowid, content)"
        f" SELECT 'delete', pk, content FROM ({old_rows})"
    )
    db.execute(
        f"CREATE TRIGGER long_term_ai AFTER INSERT ON long_term BEGIN {add_scope}; {insert}; END"
    )
    # A scope's last row gone (forget, purge), its ids leave fts_scopes too: erasure leaves no
    # trace of the user in the file.
    drop_scope = (
        "DELETE FROM fts_scopes WHERE user_id = old.user_id AND agent_id = old.agent_id"
        " AND NOT EXISTS (SELECT 1 FROM long_term"
        " WHERE user_id = old.user_id AND agent_id = old.agent_id)"
    )
    db.execute(
        f"CREATE TRIGGER long_term_ad AFTER DELETE ON long_term BEGIN {delete}; {drop_scope}; END"
    )
    db.execute(
        "CREATE TRIGGER long_term_au AFTER UPDATE OF content, user_id, agent_id ON long_term"
        f" BEGIN {delete}; {add_scope}; {insert}; {drop_scope}; END"
    )
    (total,) = db.execute("SELECT count(*) FROM long_term").fetchone()
    batch = (
        "SELECT long_term.pk, long_term.content, s.id FROM long_term JOIN fts_scopes s"
        " ON s.user_id = long_term.user_id AND s.agent_id = long_term.agent_id"
        " WHERE long_term.pk > ? ORDER BY long_term.pk LIMIT ?"
    )
    done, last = 0, -1
    if total:  # a blank file has nothing to show
        _log_progress(done, total)
    while rows := db.execute(batch, (last, M021_BATCH)).fetchall():
        db.conn.executemany(
            "INSERT INTO long_term_fts (rowid, content) VALUES (?, ?)",
            [(pk, keyed_text(content, scope_key(id_))) for pk, content, id_ in rows],
        )
        done, last = done + len(rows), rows[-1][0]
        _log_progress(done, total)
    db.execute("INSERT INTO long_term_fts (long_term_fts, rank) VALUES ('automerge', 8)")


@migrations()
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


@migrations()
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
