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

from memman.storage.migrations import backfills, fts, tables

CHAIN = (
    tables.m001_long_term,
    tables.m002_events,
    tables.m003_pending,
    tables.m010_vectors,
    tables.m011_short_term,
    tables.m012_message_buffer,
    tables.m013_long_term_decayed_at,
    fts.m014_fts_sync_on_content_only,
    tables.m015_vector_log,
    tables.m016_short_term_recalls_and_pending_salience,
    tables.m017_short_term_last_recalled_at,
    backfills.m018_topics_and_observed_at,
    tables.m019_leases_and_growth,
    fts.m020_scoped_fts,
    fts.m021_fts_postings_per_scope,
    backfills.m022_topic_index_ordered,
    backfills.m023_events_before_hash,
    fts.m024_fts_automerge_2,
    backfills.m025_events_absorbed_hash,
    tables.m026_message_metadata,
    backfills.m027_kin_subjects,
    tables.m028_short_term_metadata,
    backfills.m029_store_state,
)

migrations = Migrations("memman")
for step in CHAIN:  # each recorded under its function's name
    migrations()(step)
