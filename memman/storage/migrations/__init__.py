"""Ordered schema migrations, recorded in the database (`_sqlite_migrations`).

A file made by an older memman upgrades in place when it is opened. Each migration is a
small named function applied in one transaction; once released, a migration is never
edited: a change to the schema is a new function, added at the end of CHAIN. The bodies
live by kind: tables.py (tables and columns), fts.py (the full-text index), backfills.py
(columns computed from what rows hold). The order here is the contract: a migration's
name is what a file records, so names and order never change.
"""

from __future__ import annotations

from sqlite_utils.migrations import Migrations

from memman.storage.migrations.backfills import (
    m018_topics_and_observed_at,
    m022_topic_index_ordered,
    m023_events_before_hash,
)
from memman.storage.migrations.fts import (
    m014_fts_sync_on_content_only,
    m020_scoped_fts,
    m021_fts_postings_per_scope,
)
from memman.storage.migrations.tables import (
    m001_long_term,
    m002_events,
    m003_pending,
    m010_vectors,
    m011_short_term,
    m012_message_buffer,
    m013_long_term_decayed_at,
    m015_vector_log,
    m016_short_term_recalls_and_pending_salience,
    m017_short_term_last_recalled_at,
    m019_leases_and_growth,
)

CHAIN = (
    m001_long_term,
    m002_events,
    m003_pending,
    m010_vectors,
    m011_short_term,
    m012_message_buffer,
    m013_long_term_decayed_at,
    m014_fts_sync_on_content_only,
    m015_vector_log,
    m016_short_term_recalls_and_pending_salience,
    m017_short_term_last_recalled_at,
    m018_topics_and_observed_at,
    m019_leases_and_growth,
    m020_scoped_fts,
    m021_fts_postings_per_scope,
    m022_topic_index_ordered,
    m023_events_before_hash,
)

migrations = Migrations("memman")
for step in CHAIN:  # each recorded under its function's name
    migrations()(step)
