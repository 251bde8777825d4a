"""The full-text index over memory content: its tokenizer, its triggers and its per-scope keys.

The index is FTS5 external-content, kept in sync by triggers (m001, m014); m020 and m021
made a query walk one scope's postings only. The helpers here write a row's indexed text the
way m021's triggers do, for retrieval (scope_key) and the PostgreSQL schema (FTS_SEPARATORS).
"""

from __future__ import annotations

import logging

import sqlite_utils

# Porter stemming lets "likes" find "like"; unicode61 with diacritics removed lets "cafe"
# find "café". The query builder in retrieval.py quotes every term, so the tokenizer only
# decides how terms are split, never what counts as syntax.
FTS_TOKENIZE = "porter unicode61 remove_diacritics 2"


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


def scope_token_sql(row: str) -> str:
    """SQL for the FTS5 token naming the scope of a long_term row (`row`: a table or alias).

    hex() makes any user and agent id one run of letters and digits, which unicode61 keeps as
    one token; the "x" cannot occur in hex, so no two scopes share a token; a final digit keeps
    the porter stemmer from cutting a suffix. retrieval.scope_token writes the same in Python.
    """
    return f"'u' || hex({row}.user_id) || 'x' || hex({row}.agent_id) || '0'"


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


def m024_fts_automerge_2(db: sqlite_utils.Database) -> None:
    # m014 set FTS5's 'automerge' to 8 for update_many, whose flushes make a tiny segment per
    # fact. One fact per transaction flushes a segment per write too, and every term of every
    # query is looked up in each segment left unmerged. At 2, FTS5 merges earlier, in smaller
    # steps: on a file written one fact at a time a write costs ~10 % less at 5,000 memories
    # (its FTS statements ~18 %), ~1-5 % more in a scope of 100k, and update_many no more
    # (RESULTS.md, "FTS candidate query"). Only the index's config row
    # changes; the segments already there merge as later writes come.
    db.execute("INSERT INTO long_term_fts (long_term_fts, rank) VALUES ('automerge', 2)")
