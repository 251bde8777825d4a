"""`MemoryManager`: the public entry point. Every long-term write goes through update_memory.

The manager opens the store and composes its parts, one per stage of the flow, each in its
own module of memman/api/: `writes` (write.py: update_memory, update_many, ingest, pending),
`reads` (read.py: get, list, search, context, history), `short_term_memory` (short_term.py),
`lifecycle` (lifecycle.py: observe, flush, consolidate) and `upkeep` (upkeep.py: export,
stats, reindex, check, backup, delete, restore, purge, forget). They share one `Core`
(core.py): the store, the settings, the clock and the write path (memman/write/writepath.py).

Each public method below states the API (its arguments and their defaults, what it returns
and raises) and hands its call to one part, so "go to definition" from a call leads to the
code that runs. A call by id turns its ids into a scope here, where the deprecation of a
missing user_id is reported against the caller's line.
"""

from __future__ import annotations

import builtins  # annotations below `def list` name the type as builtins.list
import datetime as dt
import os
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

from memman.api.arguments import Clock, id_scope, utc_now
from memman.api.core import Core
from memman.api.lifecycle import Lifecycle
from memman.api.read import Reads
from memman.api.short_term import ShortTermMemory
from memman.api.upkeep import Upkeep, read_export
from memman.api.write import Writes
from memman.config import Settings, load_settings
from memman.errors import ConfigError, InvalidInputError
from memman.lifecycle.block import ContextBlock
from memman.lifecycle.consolidation_report import ConsolidationReport
from memman.lifecycle.erase import ForgetReport
from memman.lifecycle.idle import SessionExtraction
from memman.lifecycle.observe import ObserveResult
from memman.lifecycle.relabel import RelabelReport
from memman.lifecycle.shortterm import ShortTermFact, ShortTermHit
from memman.llm.prompts import check_folder
from memman.models import Event, Memory, Op, PendingFact, SearchHit, Status, UpdateResult
from memman.scope import Scope
from memman.semantic.embed import Embedder, make_embedder
from memman.semantic.vectors import chosen_search, make_vector_backend
from memman.storage import store_copy, transfer
from memman.storage.backends import open_store
from memman.storage.maintenance import CheckReport
from memman.storage.pending import Leases
from memman.storage.store_copy import MigrateReport
from memman.storage.transfer import ImportReport
from memman.write.decide import Decider, make_decider
from memman.write.writepath import WritePath


class MemoryManager:
    """Long-term memory over one SQLite file (or ":memory:").

    Safe to share between threads of one process (each call checks out its own connection,
    writes queue on a lock) and between processes on the same file (WAL + BEGIN IMMEDIATE +
    retry on SQLITE_BUSY).
    """

    def __init__(
        self,
        path: str | os.PathLike[str] | None = None,
        *,
        settings: Settings | None = None,
        decider: str | Decider | None = None,
        embedder: str | Embedder | None = None,
        clock: Clock = utc_now,
        **overrides: Any,
    ):
        """Open (creating and migrating if needed) the store at `path`.

        `overrides` are settings (see memman/config.py). `embedder` is a setting's name
        ("none", "local", "openai") or your own object with `name`, `dim` and
        `embed(texts) -> unit float32 rows` (memman.Embedder); vectors are stored under
        its name, and its cosine thresholds are noop_cosine/novel_cosine (conservative
        defaults for a name memman has not calibrated). `decider` likewise is a setting's name
        ("auto", "offline", "llm") or your own object, checked here rather than at the first
        ambiguous fact.
        """
        if isinstance(path, os.PathLike):  # tmp_path / "m.db", as sqlite3 and open() take it
            path = os.fspath(path)
        custom_embedder: Embedder | None = None
        if isinstance(decider, str):  # a registry name, like the decider setting
            overrides["decider"], decider = decider, None
        elif decider is not None and not callable(getattr(decider, "decide", None)):
            raise ConfigError("decider must be a name (auto, offline, llm) or a Decider object")
        if isinstance(embedder, str):
            overrides["embedder"] = embedder
        elif embedder is not None:
            if not isinstance(embedder, Embedder):
                raise ConfigError(
                    "embedder must be a name (none, local, openai) or an object with name, "
                    "dim and embed(texts)"
                )
            custom_embedder = embedder
        if settings is not None and overrides:  # they would be dropped without a word
            raise ConfigError(
                f"give settings= or setting keywords ({', '.join(sorted(overrides))}), not both:"
                " put them in the Settings (settings.model_copy(update=...))"
            )
        self.settings = settings or load_settings(db=path, **overrides)
        self.path = path or self.settings.db
        decider = decider or make_decider(self.settings)  # an unknown name fails before opening
        if self.settings.prompts_dir:
            check_folder(self.settings.prompts_dir)
        backend = make_vector_backend(
            self.settings.vector_search, cache_mb=self.settings.vector_cache_mb
        )
        self.store = open_store(
            self.path,
            busy_timeout_s=self.settings.busy_timeout_s,
            busy_patience_s=self.settings.busy_patience_s,
            journal_size_limit_mb=self.settings.journal_size_limit_mb,
            dbapi=backend.driver.dbapi,
            prepare=backend.driver.prepare,
        )
        try:
            self.vector_search, self.vectors = chosen_search(
                self.settings.vector_search, backend, self.store.server_vector_search()
            )
        except ConfigError:
            self.store.close()
            raise
        self.clock = clock
        core = Core(
            settings=self.settings,
            path=self.path,
            store=self.store,
            vectors=self.vectors,
            vector_search=self.vector_search,
            clock=clock,
            leases=Leases(self.store, clock, self.settings.lease_s),
            write_path=WritePath(
                self.store,
                self.settings,
                decider=decider,
                embedder=custom_embedder or make_embedder(self.settings),
                vectors=self.vectors,
                clock=clock,
            ),
        )
        self._core = core
        # The parts, in the order of the flow; each method below hands its call to one of them.
        self.writes = Writes(core)
        self.reads = Reads(core)
        self.short_term_memory = ShortTermMemory(core)
        self.lifecycle = Lifecycle(core, self.short_term_memory)
        self.upkeep = Upkeep(core)

    @property
    def decider(self) -> Decider:
        """What settles ambiguous facts; fixed at construction (pass `decider=` to change it)."""
        return self._core.write_path.decider

    @property
    def embedder(self) -> Embedder | None:
        """The embedding model, if any; fixed at construction (pass `embedder=`)."""
        return self._core.embedder

    @property
    def offline(self) -> bool:
        """True when ambiguous cases are settled without an LLM."""
        return self._core.write_path.offline

    def _now(self) -> str:
        return self._core.now()

    def close(self) -> None:
        self.store.close()

    def __enter__(self) -> MemoryManager:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    # -- writes: the write path's calls (write.py) -------------------------------------------------

    def update_memory(
        self,
        fact: str,
        *,
        user_id: str,
        agent_id: str | None = None,
        source: str | None = None,
        metadata: dict[str, Any] | None = None,
        category: str | None = None,
        importance: float | None = None,
        subject: str | None = None,
        attribute: str | None = None,
        observed_at: dt.datetime | str | None = None,
        replace_metadata: bool = False,
    ) -> UpdateResult:
        """Decide what one candidate fact does to long-term memory, apply it, record why.

        `category` (lowercased) and `importance` (1-10) go into the memory's columns, which
        recall ranks by and consolidation protects by. An ADD stores them (importance 5 if not
        given); a NOOP or UPDATE keeps the stored category unless there was none and raises the
        importance to the higher of the two (see apply._carry_salience).

        `subject` ("user", or another person: "sister") and `attribute` ("residence",
        "employer", "likes" ...) say what the fact is about; when not given, memman's extractor
        reads them from the text (memman/language/topic.py). A different value of a single-valued
        attribute (settings.single_valued_attributes) replaces the memory that held it.
        `observed_at` is when the user said it (default: now): a statement older than a
        memory's current one never overwrites it, it goes into that memory's history.

        `metadata` goes into a memory the fact ADDs; an UPDATE or NOOP keeps the memory's own,
        unless `replace_metadata`: then the memory the fact ends in takes `metadata` in its
        place, in the same transaction, its event's scores recording both ("metadata":
        {"before", "after"}); a DELETE or a parked fact changes no metadata.

        Never drops the fact: if the decider fails the result is PENDING and the fact waits in
        `pending()` for `retry_pending()`.
        """
        return self.writes.update_memory(
            fact,
            Scope(user_id, agent_id),
            source=source,
            metadata=metadata,
            category=category,
            importance=importance,
            subject=subject,
            attribute=attribute,
            observed_at=observed_at,
            replace_metadata=replace_metadata,
        )

    def update_many(
        self,
        facts: Iterable[str],
        *,
        user_id: str,
        agent_id: str | None = None,
        source: str | None = None,
        metadata: dict[str, Any] | None = None,
        chunk_size: int | None = None,
        category: str | None = None,
        importance: float | None = None,
        observed_at: dt.datetime | str | None = None,
    ) -> list[UpdateResult]:
        """update_memory for a batch of one scope, one transaction per chunk, results in order.

        Every fact is validated before anything is written. Facts are decided in order: a chunk
        commits up to the first fact that needs the LLM, which is then decided outside any
        transaction (an LLM call never holds the write lock) before the next chunk starts.
        With an embedder, the next chunk is embedded while this one is written, and texts the
        scope already holds are not embedded at all (the hash tier settles them).
        `category`, `importance` and `observed_at` (default: when written), like source and
        metadata, apply to every fact of the batch; each fact's topic is read from its text.
        """
        return self.writes.update_many(
            facts,
            user_id=user_id,
            agent_id=agent_id,
            source=source,
            metadata=metadata,
            chunk_size=chunk_size,
            category=category,
            importance=importance,
            observed_at=observed_at,
        )

    def ingest(
        self,
        records: Iterable[Mapping[str, Any]],
        *,
        user_id: str | None = None,
        agent_id: str | None = None,
        source: str | None = None,
        chunk_size: int | None = None,
    ) -> list[UpdateResult | InvalidInputError]:
        """update_many for records of several scopes (`memman ingest`, a merging import).

        A record is a mapping with "fact" and optionally "user_id", "agent_id", "source",
        "metadata", "category", "importance", "subject", "attribute" and "observed_at" (the
        arguments of update_memory); user_id, agent_id and source default to the arguments.
        A bad record gets its InvalidInputError in its place and the others are written.
        Records are decided in order; a run of consecutive records of one scope is written as
        update_many writes a batch (one transaction per chunk, its ADDs together).
        """
        return self.writes.ingest(
            records, user_id=user_id, agent_id=agent_id, source=source, chunk_size=chunk_size
        )

    def pending(
        self, *, user_id: str | None = None, agent_id: str | None = None
    ) -> list[PendingFact]:
        """Facts the decider could not settle yet (every user's if neither id is given)."""
        return self.writes.pending(user_id, agent_id)

    def retry_pending(
        self, *, user_id: str | None = None, agent_id: str | None = None
    ) -> list[UpdateResult]:
        """Decide parked facts again; each leaves `pending` only when its decision is applied.

        Safe to run from several processes at once: each fact is claimed (a lease of lease_s)
        before it is decided, and a fact another worker holds or settled is skipped, so none
        is decided twice. A worker that crashed holds its facts until their leases lapse.
        """
        return self.writes.retry_pending(user_id, agent_id)

    # -- reads (read.py) ---------------------------------------------------------------------------

    def resolve_id(
        self, prefix: str, *, user_id: str | None = None, agent_id: str | None = None
    ) -> str:
        """The full id of the scope's one memory whose id starts with prefix (CLI tables show
        8 chars); a prefix of another scope's memory is not found."""
        return self.reads.resolve_id(prefix, id_scope("resolve_id", user_id, agent_id))

    def get(
        self, memory_id: str, *, user_id: str | None = None, agent_id: str | None = None
    ) -> Memory:
        """The memory with this id in the scope; NotFoundError for a missing id and for one of
        another scope alike (user_id will be required; without it any user's memory is read).
        """
        return self.reads.get(memory_id, id_scope("get", user_id, agent_id))

    def list(
        self,
        *,
        user_id: str,
        agent_id: str | None = None,
        limit: int | None = None,
        offset: int = 0,
        include_inactive: bool = False,
    ) -> list[Memory]:
        """All active memories of a scope, oldest first (every status if include_inactive)."""
        return self.reads.list(
            user_id=user_id,
            agent_id=agent_id,
            limit=limit,
            offset=offset,
            include_inactive=include_inactive,
        )

    def iter_all(
        self, *, user_id: str, agent_id: str | None = None, page: int = 1000
    ) -> Iterator[Memory]:
        return self.reads.iter_all(user_id, agent_id, page)

    def search(
        self,
        query: str,
        *,
        user_id: str,
        agent_id: str | None = None,
        limit: int = 5,
        reinforce: bool = True,
    ) -> builtins.list[SearchHit]:
        """Active memories of the scope, best first, near-duplicates collapsed, reinforced.

        Ranked by a blend of relevance (BM25, and cosine when an embedder is configured),
        recency and importance (see memman/lifecycle/recall.py and the recall_* settings); every
        returned memory's access count and last access are updated, unless not `reinforce`
        (a look that changes nothing: the inspector page's).
        """
        return self.reads.search(
            query, user_id=user_id, agent_id=agent_id, limit=limit, reinforce=reinforce
        )

    def context(
        self,
        query: str,
        *,
        user_id: str,
        agent_id: str | None = None,
        max_tokens: int = 500,
        limit: int = 20,
        reinforce: bool = True,
    ) -> ContextBlock:
        """A memory block for a system prompt: what to always keep in mind, then the best hits.

        Unexpired short-term facts that share a word with the query come first, as a "right
        now" part (`block.short_term`); each one shown counts a recall towards promotion.
        The core part (`block.core`) is shown whatever the query, within context_core_share of
        max_tokens: memories of the protected categories (safety, constraint), pinned ones
        (metadata {"pinned": true}) and the user's single-valued profile (name, residence,
        job...). Then the hits the core does not already show. Related memories are shown
        together, the newest first and the older ones under it marked "earlier", each dated
        when the user said it; `block.left_out` counts what did not fit the budget.
        `str(block)` is `block.text`, the part that goes into the prompt. Not `reinforce`:
        nothing recalled is counted (see search).
        """
        return self.reads.context(
            query,
            user_id=user_id,
            agent_id=agent_id,
            max_tokens=max_tokens,
            limit=limit,
            reinforce=reinforce,
        )

    def history(
        self, memory_id: str, *, user_id: str | None = None, agent_id: str | None = None
    ) -> builtins.list[Event]:
        """Every event that touched a memory of the scope, oldest first: why the bot thinks
        what it thinks. NotFoundError for an unknown id or one of another scope."""
        return self.reads.history(memory_id, id_scope("history", user_id, agent_id))

    def events(
        self, *, user_id: str | None = None, agent_id: str | None = None, limit: int = 50
    ) -> builtins.list[Event]:
        return self.reads.events(user_id, agent_id, limit)

    # -- lifecycle (lifecycle.py) and short_term_memory (short_term.py) ---------------------------

    def observe(
        self,
        messages: builtins.list[dict[str, Any]],
        *,
        user_id: str,
        session_id: str,
        agent_id: str | None = None,
        metadata: dict[str, Any] | None = None,
    ) -> ObserveResult:
        """Buffer chat messages durably; extract facts once the session's cooldown passed.

        A session belongs to its scope: another user's messages under the same session id are
        neither counted, extracted nor reported here. `metadata` (checked as update_memory's)
        is kept with the messages: every fact extracted from them carries it, whichever
        flush, flush_idle or consolidate extracts them (as update_memory's: an ADD stores it,
        an UPDATE or NOOP keeps the memory's own), short-term facts too (as
        remember_short_term's).
        """
        return self.lifecycle.observe(messages, Scope(user_id, agent_id), session_id, metadata)

    def flush(
        self, session_id: str, *, user_id: str | None = None, agent_id: str | None = None
    ) -> ObserveResult:
        """Extract the scope's buffered messages of a session now, whatever the cooldown.

        user_id will be required: without it, every user's messages under that session id
        are extracted and reported together.
        """
        return self.lifecycle.flush(session_id, id_scope("flush", user_id, agent_id))

    def flush_idle(
        self, *, user_id: str | None = None, agent_id: str | None = None
    ) -> builtins.list[SessionExtraction]:
        """Extract every session whose newest buffered message waited extract_cooldown_s.

        For a chat that ended: nobody observes that session again, so its cooldown would
        never be checked. One scope (every user's if neither id is given); each session's
        messages of other scopes are left alone. A failed extraction (`result.error`) leaves its
        messages buffered, as flush() does. consolidate() does this first, too.
        """
        return self.lifecycle.flush_idle(user_id, agent_id)

    def remember_short_term(
        self,
        fact: str,
        *,
        user_id: str,
        session_id: str,
        agent_id: str | None = None,
        category: str | None = None,
        importance: float = 5.0,
        source: str | None = None,
        metadata: dict[str, Any] | None = None,
    ) -> ShortTermFact:
        """Keep a transient fact until its category's TTL; seen again, its expiry renews.

        Validated like update_memory's facts (extracted ones too); category, importance and
        metadata are handed on at promotion. Seen again, the fact keeps its first metadata
        unless this call's is non-empty (then that replaces it).
        """
        return self.short_term_memory.remember(
            fact,
            Scope(user_id, agent_id),
            session_id,
            category,
            importance,
            source,
            metadata=metadata,
        )

    def short_term(
        self, *, user_id: str | None = None, agent_id: str | None = None, unexpired: bool = False
    ) -> builtins.list[ShortTermFact]:
        """Active short-term facts, oldest first (every user's if neither id is given);
        `unexpired`: only those not past their TTL now (consolidate expires the others)."""
        return self.short_term_memory.active(user_id, agent_id, unexpired)

    def get_short_term(
        self, fact_id: int, *, user_id: str | None = None, agent_id: str | None = None
    ) -> ShortTermFact:
        """The short-term fact with this id, whatever its status; NotFoundError for an
        unknown id and one of another scope alike (without user_id: any user's)."""
        scope = id_scope("get_short_term", user_id, agent_id)
        return self.short_term_memory.get(fact_id, scope)

    def search_short_term(
        self, query: str, *, user_id: str, agent_id: str | None = None, limit: int = 5
    ) -> builtins.list[ShortTermHit]:
        """The scope's unexpired short-term facts sharing a word with the query, best first,
        scored on search()'s scale (memman/lifecycle/shortterm.py ranked). Each one returned
        counts a recall towards promotion, as context() counts the ones it shows."""
        return self.short_term_memory.search(query, user_id=user_id, agent_id=agent_id, limit=limit)

    def delete_short_term(
        self,
        fact_id: int,
        *,
        user_id: str,
        agent_id: str | None = None,
        reason: str = "deleted by the user",
    ) -> ShortTermFact:
        """Retire an active short-term fact now (status 'deleted'; the row stays), with an
        audit event as expiry has; NotFoundError if the scope has no active fact with this
        id. The fact as it was."""
        return self.short_term_memory.delete(fact_id, Scope(user_id, agent_id), reason)

    def consolidate(
        self,
        *,
        user_id: str | None = None,
        agent_id: str | None = None,
        dry_run: bool = False,
        max_ops: int = 200,
        progress: Callable[[str, int, int], None] | None = None,
    ) -> ConsolidationReport:
        """Extract idle sessions, expire, promote, merge near-duplicates and decay; see
        memman/lifecycle/consolidate.py.

        Sessions idle for extract_cooldown_s are extracted first, one op each (see
        flush_idle); `report.extracted_sessions` / `extracted_messages` count them (a dry run
        lists them in `report.extractions` without extracting).

        With an LLM configured, ambiguous near-duplicate clusters get one merge call each
        (counted in max_ops); a dry run never calls it. `progress(phase, done, total)` is
        called while merging (the CLI draws a bar with it).
        """
        return self.lifecycle.consolidate(
            user_id, agent_id, dry_run=dry_run, max_ops=max_ops, progress=progress
        )

    # -- upkeep: the whole store, and the user's explicit actions (upkeep.py) ----------------------

    def export(
        self,
        *,
        user_id: str | None = None,
        agent_id: str | None = None,
        include_inactive: bool = False,
    ) -> Iterator[Memory]:
        """Every memory of a scope (every user's if neither id is given), oldest first.

        One read snapshot for the whole iteration, so an export taken while others write is a
        consistent point in time; rows stream from the cursor, so 100k memories never sit in a
        list. Active memories only unless include_inactive (then deleted, superseded and
        archived ones too, with their status).
        """
        return self.upkeep.export(user_id, agent_id, include_inactive)

    def export_events(
        self, *, user_id: str | None = None, agent_id: str | None = None
    ) -> Iterator[Event]:
        """The whole audit trail of a scope (every user's if neither id is given), oldest first."""
        return self.upkeep.export_events(user_id, agent_id)

    def export_jsonl(
        self,
        *,
        user_id: str | None = None,
        agent_id: str | None = None,
        include_inactive: bool = False,
        events: bool = False,
        memories: bool = True,
    ) -> Iterator[str]:
        """The lossless export: every column of every memory, then the scope's parked facts,
        active short-term facts and messages not yet extracted (with include_inactive every
        one of them), then the audit events if asked (only them with memories=False, as
        `memman export --events`) as JSON lines without newlines, which `import_jsonl` reads
        back (memman/storage/transfer.py, export_format.py)."""
        return transfer.export_lines(
            self,
            user_id=user_id,
            agent_id=agent_id,
            include_inactive=include_inactive,
            events=events,
            memories=memories,
        )

    def import_jsonl(
        self, source: str | Path | Iterable[str | bytes], *, raw: bool = False
    ) -> ImportReport:
        """Read a lossless export (a file path, or its lines: text, or bytes as a file opened
        in binary mode gives them) into this store.

        Into an empty store (or scope), or with raw=True, records are copied as they are (ids,
        statuses, counters, stamps, events). Into a scope that holds memories, what it has is
        skipped, inactive memories are copied with their status and active ones go through
        update_memory's decisions in chunks (see ingest). Parked facts, short-term facts and
        buffered messages are copied into their line's scope unless the scope holds them
        already (the same parked text, active short-term fact or message), under a new id
        when the store holds theirs. A bad line is reported (`report.bad`)
        and the rest are imported. Events with no memory before them (an audit trail exported
        alone) raise InvalidInputError before anything is written, unless raw.
        """
        return read_export(self, source, raw)

    def migrate_to(self, target: MemoryManager) -> MigrateReport:
        """Copy this whole store into target, another MemoryManager's empty store (SQLite to
        PostgreSQL or back): every memory in any status, the audit trail with its ids, the
        vectors, parked facts, short-term facts and buffered messages. InvalidInputError if
        target holds anything. The report's differences() lists any table whose row count
        differs afterwards (none: a complete copy). Stop writers to this store first: each
        part is read in its own snapshot."""
        if not isinstance(target, MemoryManager):  # a path: open it with MemoryManager(path)
            raise InvalidInputError(
                f"migrate_to takes another MemoryManager, not {type(target).__name__}"
            )
        return store_copy.migrate(self, target)

    def stats(self, *, user_id: str | None = None, agent_id: str | None = None) -> dict[str, Any]:
        """Counts of a scope (every user's if neither id is given)."""
        return self.upkeep.stats(user_id, agent_id)

    def reindex(
        self, *, batch: int = 256, progress: Callable[[int, int], None] | None = None
    ) -> int:
        """Embed every active memory lacking a vector for the configured model; returns how many.

        Run after configuring an embedder or changing its model: vectors are kept per model, so
        the old model's vectors are never compared with the new one's. `progress(done, total)`
        is called once the total is known (done 0) and after each batch (the CLI draws a bar
        with it). If the embedder fails it stops with EmbeddingError; the batches before stay
        committed and a rerun resumes after them.
        """
        return self.upkeep.reindex(batch, progress)

    def relabel(
        self, *, user_id: str | None = None, agent_id: str | None = None, batch: int = 500
    ) -> RelabelReport:
        """Give a topic to the active memories stored without one (every user's if neither id
        is given) where the reader reads one now.

        A memory is found by topic when a newer fact supersedes it, and its topic is what the
        reader of the day it was stored could read; the reader learns phrasings from release to
        release. Only memories whose attribute is NULL are read: a set label (the caller's, an
        LLM's, an earlier reader's) is never changed. `batch` memories at a time, each batch
        labelled in one transaction; a rerun resumes where a failed one stopped. A whole-store
        run records the reader's version (`report.recorded`), so `check()` stops reporting
        `relabel_due`. Reads every memory without a topic: run it after an upgrade, not on
        every open.
        """
        return self.upkeep.relabel(user_id, agent_id, batch)

    def check(self) -> CheckReport:
        """SQLite integrity, FTS agreement, orphan vectors, stuck pending, rows memman cannot
        read (the active short-term facts' too); see `report.ok`. `report.relabel_due` counts
        the memories without a topic when an older reader labelled the store (see relabel)."""
        return self.upkeep.check()

    def backup(self, path: str | Path) -> Path:
        """Copy the store to a new file with SQLite's online backup, safe while others write."""
        return self.upkeep.backup(path)

    def delete(
        self,
        memory_id: str,
        *,
        user_id: str | None = None,
        agent_id: str | None = None,
        reason: str = "deleted by the user",
    ) -> UpdateResult:
        """Soft-delete a memory of the scope (recoverable with restore; `purge` erases)."""
        scope = id_scope("delete", user_id, agent_id)
        return self.upkeep.set_status(memory_id, scope, Status.DELETED, Op.DELETE, reason)

    def restore(
        self,
        memory_id: str,
        *,
        user_id: str | None = None,
        agent_id: str | None = None,
        reason: str = "restored by the user",
    ) -> UpdateResult:
        """Bring back a deleted, superseded or archived memory, unless its text is active again."""
        scope = id_scope("restore", user_id, agent_id)
        return self.upkeep.set_status(memory_id, scope, Status.ACTIVE, Op.UPDATE, reason)

    def purge(self, memory_id: str, *, user_id: str, agent_id: str | None = None) -> ForgetReport:
        """Erase one memory of the scope for good, with its history and vectors.

        Unlike delete() nothing is kept and there is no audit event (it would keep the text);
        the file is vacuumed and its WAL emptied, as forget() does (memman/lifecycle/erase.py).
        NotFoundError for an unknown id or one of another scope.
        """
        return self.upkeep.purge(memory_id, Scope(user_id, agent_id))

    def forget(self, user_id: str, agent_id: str | None = None) -> ForgetReport:
        """Erase everything of a user, verifiably: the right to be forgotten.

        Every memory of every status, its events, pending and short-term facts, buffered
        messages, vectors and their log rows, of every agent of the user (only agent_id's
        scope if given), in one transaction; then the FTS index is optimised, the file
        vacuumed with secure_delete and the WAL checkpointed to zero bytes, so none of the
        user's words stay in the database or its WAL (`report.wal_truncated` is False if a
        reader held an old snapshot: run it again then). Returns rows erased per table.
        """
        return self.upkeep.forget(user_id, agent_id)
