"""Storage behind one door: the design, and where the move stands (issue 15).

Why. memman's SQL was written in nine modules in five access styles (SQLAlchemy Core,
`text()`, the raw DBAPI connection through `store.run_sql`, sqlite-utils, PRAGMAs). A second
backend (PostgreSQL, for deployments that outgrow one SQLite file) would have meant editing
all nine. The stages should instead call a small typed interface and never write SQL; a
backend implements that interface once.

The interface. `memman.storage.protocol.Storage` lists the operations the stages use today,
each with its contract: what it returns, what it locks, what it raises. Two rules hold for
all of them:

- Transactions are the store's: `read()` gives a snapshot, `write(fn)` runs fn in one write
  transaction and retries it while the database is busy (so fn has no side effects outside
  the connection). Every other method takes that connection and runs inside the caller's
  transaction; none commits. `try_write(fn)` is for a read's own bookkeeping (access counts):
  written if the write lock is free, else kept for later (`later.py`): a read never waits.
- Every statement on a scoped table (long_term, events, pending, short_term, message_buffer,
  memory_vectors, vector_log, the FTS index) names the scope: `user_id = ? AND agent_id = ?`,
  the scope token in an FTS query, or the scope's values in an INSERT.
  tests/test_scope_predicate.py checks this on every statement the write path, recall and
  consolidate send, with a commented list of by-key exceptions. This is what lets the schema
  be distributed by scope later (Citus's distribution column, or a database per tenant group).

The layout. `memman.scope` (Scope, the id checks) and `memman.errors` sit at the bottom and
import no storage; tests/test_layout.py keeps the import graph free of cycles. The interface is
one Protocol, its operations grouped by area (`protocol.py`). This package holds the SQLite
statements as mixins of `memman.storage.store.Store`, one module per area:

- `memories.py`, `events.py`: the memories, and `apply`, which writes a change set (its row
  changes, its audit event and the vector of its new text, `changes.py`) in one call;
- `fts.py`: the write path's and recall's lexical candidates (FTS5, BM25, the re-rank of
  common terms); `vector_rows.py`: the vector tier's reads (a scope's vectors, the change
  log, sqlite-vec's KNN) and its writes (`save_vectors`, reindex's batches);
- `lifecycle.py`: short-term facts, consolidation, merging, recall counts;
- `messages.py`: the chat-message buffer (observe, flush, idle sessions);
- `upkeep.py`: verified erasure, integrity checks, the online backup.

No module outside this package writes SQL (tests/test_storage_protocol.py reads every one),
and only memman/write/commit.py calls the store's writers (tests/test_one_door.py).

PostgreSQL. `backends.open_store(db)` opens a SQLite file or, for a postgresql:// URL,
`postgres.PostgresStore`: Store with the dialect's parts replaced (tsvector candidates, an
advisory lock where SQLite has BEGIN IMMEDIATE), and its schema and ordered migrations in
`postgres_schema.py`. The statements both share stay written once: SQLAlchemy compiles
Core and `text()` for either dialect, and `dialect.py` rewrites run_sql's sqlite3-style
parameters for psycopg. Where the dialects differ, PostgresStore overrides the method
(`lexical_ranked` ranks with ts_rank_cd) or the storage module branches (`vector_rows`,
`vector_format`); no module outside this package branches on the dialect. Where the database
has pgvector, `pgvector.py` holds its statements (an HNSW index per dimension, the server's
k-nearest search); semantic/vectors.py's `PgvectorIndex` asks them.
`.ci/postgres` starts a throwaway PostgreSQL 15 cluster and tests/postgres.py gives the tests
its URL (or skips saying why).
"""
