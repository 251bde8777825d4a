"""`MemoryManager`: the public entry point. Every long-term write goes through update_memory.

The manager validates input at the API boundary and hands candidates to the one write path
(memman/writepath.py); reads, recall, lifecycle and maintenance live in their own modules.
"""

from __future__ import annotations

import datetime as dt
import logging
import warnings
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

import sqlalchemy as sa

from memman import consolidate, erase, maintenance, observe, recall, shortterm, transfer
from memman.candidate import Candidate, make_candidate
from memman.config import Settings, load_settings
from memman.consolidate import ConsolidationReport
from memman.decide import Decider, LLMDecider, make_decider
from memman.embed import Embedder, make_embedder
from memman.erase import ForgetReport
from memman.errors import ConfigError, EmbeddingError, InvalidInputError, LeaseLostError
from memman.llm import LLMClient
from memman.maintenance import CheckReport
from memman.models import Event, Memory, Op, PendingFact, SearchHit, Status, Tier, UpdateResult
from memman.observe import ObserveResult, SessionExtraction
from memman.recall import ContextBlock
from memman.scope import Scope, check_id
from memman.shortterm import ShortTermFact
from memman.storage.backends import open_store
from memman.store import Leases
from memman.timestamps import stamp
from memman.transfer import ImportReport
from memman.vectors import count_missing, make_vector_backend, missing_batch, save_vector
from memman.writepath import Also, WritePath

log = logging.getLogger(__name__)
Clock = Callable[[], dt.datetime]

# What an ingest record may say about its fact (MemoryManager.ingest).
INGEST_KEYS = frozenset(
    "fact user_id agent_id source metadata category importance subject attribute"
    " observed_at".split()
)
# Any larger limit or offset overflows SQLite's integer binding (OverflowError, not our error).
MAX_COUNT = 2**31 - 1


def utc_now() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


def _check_count(name: str, value: object, *, minimum: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidInputError(f"{name} must be an integer")
    if not minimum <= value <= MAX_COUNT:
        raise InvalidInputError(f"{name} must be from {minimum} to {MAX_COUNT}")


def _all_or_scope(user_id: str | None, agent_id: str | None) -> Scope | None:
    """The scope of a listing call, or None for every user's: only when neither id is given.

    An agent_id without a user_id used to be ignored silently (every user's rows came back);
    "all users" must be asked for by giving neither.
    """
    if user_id is None:
        if agent_id is not None:
            raise InvalidInputError(
                "agent_id needs a user_id; give neither to mean every user's data"
            )
        return None
    return Scope(user_id, agent_id)


def _id_scope(call: str, user_id: str | None, agent_id: str | None) -> Scope | None:
    """The scope a call by id is confined to; None (deprecated) reaches any user's memory."""
    if user_id is None:
        if agent_id is not None:
            raise InvalidInputError("agent_id needs a user_id")
        warnings.warn(
            f"{call}() without user_id reaches any user's memory; pass user_id= (and"
            " agent_id=): it will be required",
            DeprecationWarning,
            stacklevel=3,
        )
        return None
    return Scope(user_id, agent_id)


class MemoryManager:
    """Long-term memory over one SQLite file (or ":memory:").

    Safe to share between threads of one process (each call checks out its own connection,
    writes queue on a lock) and between processes on the same file (WAL + BEGIN IMMEDIATE +
    retry on SQLITE_BUSY).
    """

    def __init__(
        self,
        path: str | None = None,
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
        `embed(texts) -> unit float32 rows` (memman.embed.Embedder); vectors are stored under
        its name, and its cosine thresholds are noop_cosine/novel_cosine (conservative
        defaults for a name memman has not calibrated). `decider` likewise is a setting's name
        ("auto", "offline", "llm") or your own object, checked here rather than at the first
        ambiguous fact.
        """
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
        self.settings = settings or load_settings(db=path, **overrides)
        self.path = path or self.settings.db
        decider = decider or make_decider(self.settings)  # an unknown name fails before opening
        backend = make_vector_backend(
            self.settings.vector_search, cache_mb=self.settings.vector_cache_mb
        )
        self.store = open_store(
            self.path,
            busy_timeout_s=self.settings.busy_timeout_s,
            busy_patience_s=self.settings.busy_patience_s,
            journal_size_limit_mb=self.settings.journal_size_limit_mb,
            dbapi=backend.dbapi,
            prepare=backend.prepare,
        )
        self.vectors = backend.index
        self.clock = clock
        self._leases = Leases(self.store, clock, self.settings.lease_s)
        self._writes = WritePath(
            self.store,
            self.settings,
            decider=decider,
            embedder=custom_embedder or make_embedder(self.settings),
            vectors=self.vectors,
            clock=clock,
        )

    def close(self) -> None:
        self.store.close()

    def __enter__(self) -> MemoryManager:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    @property
    def decider(self) -> Decider:
        """What settles ambiguous facts; fixed at construction (pass `decider=` to change it)."""
        return self._writes.decider

    @property
    def embedder(self) -> Embedder | None:
        """The embedding model, if any; fixed at construction (pass `embedder=`)."""
        return self._writes.embedder

    @property
    def _llm_client(self) -> LLMClient | None:
        """The LLM client extraction and merging call; None offline."""
        return self.decider.client if isinstance(self.decider, LLMDecider) else None

    @property
    def offline(self) -> bool:
        """True when ambiguous cases are settled without an LLM."""
        return self._writes.offline

    def _now(self) -> str:
        return stamp(self.clock())

    def _candidate(
        self,
        fact: Any,
        scope: Scope,
        source: str | None,
        metadata: Any,
        category: Any = None,
        importance: Any = None,
        *,
        observed_at: Any = None,
        subject: Any = None,
        attribute: Any = None,
    ) -> Candidate:
        return make_candidate(
            fact,
            scope=scope,
            settings=self.settings,
            source=source,
            metadata=metadata,
            category=category,
            importance=importance,
            observed_at=observed_at,
            subject=subject,
            attribute=attribute,
        )

    # -- the write path ------------------------------------------------------------------------

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
    ) -> UpdateResult:
        """Decide what one candidate fact does to long-term memory, apply it, record why.

        `category` (lowercased) and `importance` (1-10) go into the memory's columns, which
        recall ranks by and consolidation protects by. An ADD stores them (importance 5 if not
        given); a NOOP or UPDATE keeps the stored category unless there was none and raises the
        importance to the higher of the two (see apply._carry_salience).

        `subject` ("user", or another person: "sister") and `attribute` ("residence",
        "employer", "likes" ...) say what the fact is about; when not given, memman's extractor
        reads them from the text (memman/topic.py). A different value of a single-valued
        attribute (settings.single_valued_attributes) replaces the memory that held it.
        `observed_at` is when the user said it (default: now): a statement older than a
        memory's current one never overwrites it, it goes into that memory's history.

        Never drops the fact: if the decider fails the result is PENDING and the fact waits in
        `pending()` for `retry_pending()`.
        """
        candidate = self._candidate(
            fact,
            Scope(user_id, agent_id),
            source,
            metadata,
            category,
            importance,
            observed_at=observed_at,
            subject=subject,
            attribute=attribute,
        )
        return self._writes.process(candidate)

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
        scope = Scope(user_id, agent_id)
        candidates = []
        for index, fact in enumerate(facts):
            try:
                candidates.append(
                    self._candidate(
                        fact, scope, source, metadata, category, importance, observed_at=observed_at
                    )
                )
            except InvalidInputError as error:
                raise InvalidInputError(f"fact #{index}: {error}") from error
        return self._writes.batch(scope, candidates, chunk_size or self.settings.batch_chunk_size)

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
        size = chunk_size or self.settings.batch_chunk_size
        _check_count("chunk_size", size, minimum=1)
        results: list[UpdateResult | InvalidInputError | None] = []
        run: list[tuple[int, Candidate]] = []

        def write_run() -> None:
            if run:
                written = self._writes.batch(run[0][1].scope, [c for _, c in run], size)
                for (index, _), result in zip(run, written, strict=True):
                    results[index] = result
                run.clear()

        for index, record in enumerate(records):
            results.append(None)
            try:
                candidate = self._record_candidate(record, user_id, agent_id, source)
            except InvalidInputError as error:
                results[index] = error
                continue
            if run and (run[0][1].scope != candidate.scope or len(run) >= size):
                write_run()
            run.append((index, candidate))
        write_run()
        return [result for result in results if result is not None]

    def _record_candidate(
        self,
        record: Mapping[str, Any],
        user_id: str | None,
        agent_id: str | None,
        source: str | None,
    ) -> Candidate:
        """The candidate of one ingest record (InvalidInputError saying what is wrong)."""
        if not isinstance(record, Mapping) or "fact" not in record:
            raise InvalidInputError("expected an object with a 'fact' key")
        unknown = set(record) - INGEST_KEYS
        if unknown:
            raise InvalidInputError(f"unknown keys: {', '.join(sorted(map(str, unknown)))}")
        user = record.get("user_id", user_id)
        if user is None:
            raise InvalidInputError("no user_id: give one in the record or as an argument")
        return self._candidate(
            record["fact"],
            Scope(user, record.get("agent_id", agent_id)),
            record.get("source", source),
            record.get("metadata"),
            record.get("category"),
            record.get("importance"),
            observed_at=record.get("observed_at"),
            subject=record.get("subject"),
            attribute=record.get("attribute"),
        )

    # -- pending -----------------------------------------------------------------------------------

    def pending(
        self, *, user_id: str | None = None, agent_id: str | None = None
    ) -> list[PendingFact]:
        """Facts the decider could not settle yet (every user's if neither id is given)."""
        scope = _all_or_scope(user_id, agent_id)
        with self.store.read() as conn:
            return self.store.list_pending(conn, scope)

    def retry_pending(
        self, *, user_id: str | None = None, agent_id: str | None = None
    ) -> list[UpdateResult]:
        """Decide parked facts again; each leaves `pending` only when its decision is applied.

        Safe to run from several processes at once: each fact is claimed (a lease of lease_s)
        before it is decided, and a fact another worker holds or settled is skipped, so none
        is decided twice. A worker that crashed holds its facts until their leases lapse.
        """
        results = []
        for item in self.pending(user_id=user_id, agent_id=agent_id):
            if not self._leases.claim("pending", [item.id]):
                continue
            candidate = self._candidate(
                item.content,
                Scope(item.user_id, item.agent_id),
                item.source,
                item.metadata,
                item.category,
                item.importance,
                observed_at=item.observed_at or item.created_at,
                subject=item.subject,
                attribute=item.attribute,
            )
            try:
                results.append(self._writes.process(candidate, pending_id=item.id))
            except LeaseLostError as lost:  # this worker's lease lapsed and another settled it
                log.info("%s", lost)
            finally:
                self._leases.release("pending", [item.id])
        return results

    # -- reads ---------------------------------------------------------------------------

    def resolve_id(
        self, prefix: str, *, user_id: str | None = None, agent_id: str | None = None
    ) -> str:
        """The full id of the scope's one memory whose id starts with prefix (CLI tables show
        8 chars); a prefix of another scope's memory is not found."""
        scope = _id_scope("resolve_id", user_id, agent_id)
        with self.store.read() as conn:
            return self.store.resolve_id(conn, prefix, scope)

    def get(
        self, memory_id: str, *, user_id: str | None = None, agent_id: str | None = None
    ) -> Memory:
        """The memory with this id in the scope; NotFoundError for a missing id and for one of
        another scope alike (user_id will be required; without it any user's memory is read).
        """
        scope = _id_scope("get", user_id, agent_id)
        check_id("memory_id", memory_id)
        with self.store.read() as conn:
            return self.store.get(conn, memory_id, scope)

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
        if limit is not None:
            _check_count("limit", limit, minimum=0)
        _check_count("offset", offset, minimum=0)
        statuses = tuple(Status) if include_inactive else (Status.ACTIVE,)
        with self.store.read() as conn:
            return self.store.list(
                conn, Scope(user_id, agent_id), statuses=statuses, limit=limit, offset=offset
            )

    def iter_all(
        self, *, user_id: str, agent_id: str | None = None, page: int = 1000
    ) -> Iterator[Memory]:
        offset = 0
        while batch := self.list(user_id=user_id, agent_id=agent_id, limit=page, offset=offset):
            yield from batch
            offset += len(batch)

    def search(
        self, query: str, *, user_id: str, agent_id: str | None = None, limit: int = 5
    ) -> list[SearchHit]:
        """Active memories of the scope, best first, near-duplicates collapsed, reinforced.

        Ranked by a blend of relevance (BM25, and cosine when an embedder is configured),
        recency and importance (see memman/recall.py and the recall_* settings); every
        returned memory's access count and last access are updated.
        """
        if not isinstance(query, str):
            raise InvalidInputError("query must be a string")
        _check_count("limit", limit, minimum=1)
        return recall.search(
            self.store,
            Scope(user_id, agent_id),
            query,
            limit=limit,
            settings=self.settings,
            now=self.clock(),
            embedder=self.embedder,
            index=self.vectors,
        )

    def context(
        self,
        query: str,
        *,
        user_id: str,
        agent_id: str | None = None,
        max_tokens: int = 500,
        limit: int = 20,
    ) -> ContextBlock:
        """A memory block for a system prompt: what to always keep in mind, then the best hits.

        Unexpired short-term facts that share a word with the query come first, as a "right
        now" part (`block.short_term`); each one shown counts a recall towards promotion.
        The core part (`block.core`) is shown whatever the query, within context_core_share of
        max_tokens: memories of the protected categories (safety, constraint), pinned ones
        (metadata {"pinned": true}) and the user's single-valued profile (name, residence,
        job...). Then the hits the core does not already show. Memories are grouped by topic,
        newest first, each dated when the user said it; `block.left_out` counts what did not
        fit the budget.
        """
        _check_count("max_tokens", max_tokens, minimum=1)
        hits = self.search(query, user_id=user_id, agent_id=agent_id, limit=limit)
        return recall.context(
            self.store,
            Scope(user_id, agent_id),
            query,
            hits,
            max_tokens=max_tokens,
            settings=self.settings,
            now=self.clock(),
        )

    def history(
        self, memory_id: str, *, user_id: str | None = None, agent_id: str | None = None
    ) -> list[Event]:
        """Every event that touched a memory of the scope, oldest first: why the bot thinks
        what it thinks. NotFoundError for an unknown id or one of another scope."""
        scope = _id_scope("history", user_id, agent_id)
        check_id("memory_id", memory_id)
        with self.store.read() as conn:
            self.store.get(conn, memory_id, scope)
            return self.store.events_for_memory(conn, memory_id)

    def events(
        self, *, user_id: str | None = None, agent_id: str | None = None, limit: int = 50
    ) -> list[Event]:
        _check_count("limit", limit, minimum=1)
        scope = _all_or_scope(user_id, agent_id)
        with self.store.read() as conn:
            return self.store.recent_events(conn, scope, limit)

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
        scope = _all_or_scope(user_id, agent_id)
        statuses = tuple(Status) if include_inactive else (Status.ACTIVE,)
        with self.store.read() as conn:
            yield from self.store.iter_memories(conn, scope, statuses=statuses)

    def export_events(
        self, *, user_id: str | None = None, agent_id: str | None = None
    ) -> Iterator[Event]:
        """The whole audit trail of a scope (every user's if neither id is given), oldest first."""
        scope = _all_or_scope(user_id, agent_id)
        with self.store.read() as conn:
            yield from self.store.iter_events(conn, scope)

    def export_jsonl(
        self,
        *,
        user_id: str | None = None,
        agent_id: str | None = None,
        include_inactive: bool = False,
        events: bool = False,
    ) -> Iterator[str]:
        """The lossless export: every column of every memory (then the audit events if asked)
        as JSON lines without newlines, which `import_jsonl` reads back (memman/transfer.py)."""
        return transfer.export_lines(
            self,
            user_id=user_id,
            agent_id=agent_id,
            include_inactive=include_inactive,
            events=events,
        )

    def import_jsonl(
        self, source: str | Path | Iterable[str], *, raw: bool = False
    ) -> ImportReport:
        """Read a lossless export (a file path, or its lines) into this store.

        Into an empty store, or with raw=True, records are copied as they are (ids, statuses,
        counters, stamps, events). Into a store that holds memories, what it already has is
        skipped, inactive memories are copied with their status and active ones go through
        update_memory's decisions in chunks (see ingest). A bad line is reported (`report.bad`)
        and the rest are imported.
        """
        if isinstance(source, str | Path):
            try:
                with open(source, encoding="utf-8") as file:
                    return transfer.import_lines(self, file, raw=raw)
            except (OSError, UnicodeDecodeError) as error:
                raise InvalidInputError(f"cannot read {source}: {error}") from error
        return transfer.import_lines(self, source, raw=raw)

    def stats(self, *, user_id: str | None = None, agent_id: str | None = None) -> dict[str, Any]:
        """Counts of a scope (every user's if neither id is given)."""
        scope = _all_or_scope(user_id, agent_id)
        # Buffered messages whose extraction failed extract_max_tries times.
        stuck = observe.stuck_messages(self.store, self.settings, scope)
        with self.store.read() as conn:
            return {
                "memories": self.store.count_by_status(conn, scope),
                "decisions": self.store.event_counts(conn, scope),
                "pending": len(self.store.list_pending(conn, scope)),
                "extraction_stuck": stuck,
                # The whole file's, whatever the scope: file and -wal bytes, rows per table.
                "storage": self.store.sizes() if self.path != ":memory:" else {},
            }

    # -- operations ------------------------------------------------------------------------------

    def reindex(
        self, *, batch: int = 256, progress: Callable[[int, int], None] | None = None
    ) -> int:
        """Embed every active memory lacking a vector for the configured model; returns how many.

        Run after configuring an embedder or changing its model: vectors are kept per model, so
        the old model's vectors are never compared with the new one's. `progress(done, total)`
        is called after each batch (the CLI draws a bar with it). If the embedder fails it stops
        with EmbeddingError; the batches before stay committed and a rerun resumes after them.
        """
        if self.embedder is None:
            raise ConfigError("no embedder configured: set embedder = 'local' or 'openai'")
        model = self.embedder.name
        with self.store.read() as conn:
            total = count_missing(conn, model)
        done, after = 0, 0
        while True:
            with self.store.read() as conn:
                rows = missing_batch(conn, model, after_pk=after, limit=batch)
            if not rows:
                return done
            try:
                vectors = self.embedder.embed([content for _, _, content in rows])
            except EmbeddingError as error:
                raise EmbeddingError(
                    f"{error} ({done} of {total} memories embedded and kept; rerun to resume)"
                ) from error

            def write(conn: sa.Connection, rows=rows, vectors=vectors) -> None:
                for (_, memory_id, _), vector in zip(rows, vectors, strict=True):
                    save_vector(conn, memory_id, model, vector)

            self.store.write(write)
            done += len(rows)
            after = rows[-1][0]
            if progress is not None:
                progress(done, total)

    def check(self) -> CheckReport:
        """SQLite integrity, FTS agreement, orphan vectors, stuck pending; see `report.ok`."""
        return maintenance.check(self.store)

    def backup(self, path: str | Path) -> Path:
        """Copy the store to a new file with SQLite's online backup, safe while others write."""
        return maintenance.backup(self.store, path)

    # -- lifecycle (memman/observe.py, shortterm.py, consolidate.py) ----------------------------

    def observe(
        self,
        messages: list[dict[str, Any]],
        *,
        user_id: str,
        session_id: str,
        agent_id: str | None = None,
    ) -> ObserveResult:
        """Buffer chat messages durably; extract facts once the session's cooldown passed.

        A session belongs to its scope: another user's messages under the same session id are
        neither counted, extracted nor reported here.
        """
        scope = Scope(user_id, agent_id)
        observe.buffer(
            self.store,
            scope,
            session_id,
            messages,
            self.clock(),
            max_chars=self.settings.max_message_chars,
        )
        if not observe.due(
            self.store,
            session_id,
            scope,
            now=self.clock(),
            cooldown_s=self.settings.extract_cooldown_s,
        ):
            return ObserveResult(
                buffered=observe.waiting_count(self.store, session_id, scope),
                offline=self._llm_client is None,
            )
        return self._flush(session_id, scope)

    def _write_found_fact(
        self,
        fact: str,
        scope: Scope,
        source: str,
        category: str | None,
        importance: float | None,
        also: Also = None,
    ) -> UpdateResult:
        """A fact extraction or promotion found: validated and decided like update_memory's.

        `also` runs in the transaction that applies or parks it (promotion marks its
        short-term row there).
        """
        candidate = self._candidate(fact, scope, source, None, category, importance)
        return self._writes.process(candidate, also=also)

    def _write_found_facts(
        self, scope: Scope, found: list[observe.Found], marks: list[observe.Mark]
    ) -> list[UpdateResult | InvalidInputError]:
        """Facts one extraction batch found, through update_many's path (so their ambiguous
        ones share one decision call); a fact refused as input is returned as its error.
        Each fact's mark runs in the transaction that writes it."""
        refused: list[InvalidInputError | None] = []  # None: a candidate, decided below
        candidates: list[Candidate] = []
        alsos: dict[int, Also] = {}
        for fact, mark in zip(found, marks, strict=True):
            try:
                candidates.append(
                    self._candidate(
                        fact.content,
                        scope,
                        fact.source,
                        None,
                        fact.category,
                        fact.importance,
                        observed_at=fact.observed_at,
                        subject=fact.subject,
                        attribute=fact.attribute,
                    )
                )
            except InvalidInputError as error:
                refused.append(error)
                continue
            if mark is not None:
                alsos[len(candidates) - 1] = mark
            refused.append(None)
        size = self.settings.batch_chunk_size
        decided = iter(self._writes.batch(scope, candidates, size, alsos=alsos))
        return [next(decided) if error is None else error for error in refused]

    def flush(
        self, session_id: str, *, user_id: str | None = None, agent_id: str | None = None
    ) -> ObserveResult:
        """Extract the scope's buffered messages of a session now, whatever the cooldown.

        user_id will be required: without it, every user's messages under that session id
        are extracted and reported together.
        """
        scope = _id_scope("flush", user_id, agent_id)
        check_id("session_id", session_id)
        return self._flush(session_id, scope)

    def flush_idle(
        self, *, user_id: str | None = None, agent_id: str | None = None
    ) -> list[SessionExtraction]:
        """Extract every session whose newest buffered message waited extract_cooldown_s.

        For a chat that ended: nobody observes that session again, so its cooldown would
        never be checked. One scope (every user's if neither id is given); each session's
        messages of other scopes are left alone. A failed extraction (`result.error`) leaves its
        messages buffered, as flush() does. consolidate() does this first, too.
        """
        return observe.extract_idle(
            self.store,
            _all_or_scope(user_id, agent_id),
            now=self.clock(),
            cooldown_s=self.settings.extract_cooldown_s,
            extract=self._flush,
        )

    def _flush(self, session_id: str, only: Scope | None) -> ObserveResult:
        """Extract the session's buffered messages (of the scope `only`, if given)."""
        return observe.extract(
            self.store,
            session_id,
            write_facts=self._write_found_facts,
            remember=lambda fact, scope, source, category, importance: self.remember_short_term(
                fact,
                user_id=scope.user_id,
                agent_id=scope.agent_id,
                session_id=session_id,
                category=category,
                importance=importance,
                source=source,
            ),
            client=self._llm_client,
            settings=self.settings,
            now=self.clock(),
            leases=self._leases,
            only=only,
        )

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
    ) -> ShortTermFact:
        """Keep a transient fact until its category's TTL; seen again, its expiry renews.

        Validated like update_memory's facts (extracted ones too); category and importance
        are handed on at promotion.
        """
        candidate = self._candidate(
            fact, Scope(user_id, agent_id), source, None, category, importance
        )
        check_id("session_id", session_id)
        return self.store.write(
            lambda conn: shortterm.remember(
                self.store,
                conn,
                candidate.scope,
                candidate.content,
                session_id=session_id,
                category=candidate.category,
                importance=importance if candidate.importance is None else candidate.importance,
                source=candidate.source,
                settings=self.settings,
                now=self.clock(),
            )
        )

    def short_term(
        self, *, user_id: str | None = None, agent_id: str | None = None
    ) -> list[ShortTermFact]:
        """Active short-term facts (every user's if neither id is given)."""
        scope = _all_or_scope(user_id, agent_id)
        with self.store.read() as conn:
            return shortterm.active(self.store, conn, scope)

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
        memman/consolidate.py.

        Sessions idle for extract_cooldown_s are extracted first, one op each (see
        flush_idle); `report.extracted_sessions` / `extracted_messages` count them (a dry run
        lists them in `report.extractions` without extracting).

        With an LLM configured, ambiguous near-duplicate clusters get one merge call each
        (counted in max_ops); a dry run never calls it. `progress(phase, done, total)` is
        called while merging (the CLI draws a bar with it).
        """
        _check_count("max_ops", max_ops, minimum=0)
        return consolidate.consolidate(
            self.store,
            _all_or_scope(user_id, agent_id),
            settings=self.settings,
            now=self.clock(),
            dry_run=dry_run,
            max_ops=max_ops,
            promote=self._write_found_fact,
            extract=self._flush,
            client=self._llm_client,
            embedder=self.embedder,
            progress=progress,
        )

    # -- explicit user actions -----------------------------------------------------------------

    def delete(
        self,
        memory_id: str,
        *,
        user_id: str | None = None,
        agent_id: str | None = None,
        reason: str = "deleted by the user",
    ) -> UpdateResult:
        """Soft-delete a memory of the scope (recoverable with restore; `purge` erases)."""
        scope = _id_scope("delete", user_id, agent_id)
        return self._set_status(memory_id, scope, Status.DELETED, Op.DELETE, reason)

    def restore(
        self,
        memory_id: str,
        *,
        user_id: str | None = None,
        agent_id: str | None = None,
        reason: str = "restored by the user",
    ) -> UpdateResult:
        """Bring back a deleted, superseded or archived memory, unless its text is active again."""
        scope = _id_scope("restore", user_id, agent_id)
        return self._set_status(memory_id, scope, Status.ACTIVE, Op.UPDATE, reason)

    def purge(self, memory_id: str, *, user_id: str, agent_id: str | None = None) -> ForgetReport:
        """Erase one memory of the scope for good, with its history and vectors.

        Unlike delete() nothing is kept and there is no audit event (it would keep the text);
        the file is vacuumed and its WAL emptied, as forget() does (memman/erase.py).
        NotFoundError for an unknown id or one of another scope.
        """
        scope = Scope(user_id, agent_id)
        check_id("memory_id", memory_id)
        return erase.purge(self.store, memory_id, scope)

    def forget(self, user_id: str, agent_id: str | None = None) -> ForgetReport:
        """Erase everything of a user, verifiably: the right to be forgotten.

        Every memory of every status, its events, pending and short-term facts, buffered
        messages, vectors and their log rows, of every agent of the user (only agent_id's
        scope if given), in one transaction; then the FTS index is optimised, the file
        vacuumed with secure_delete and the WAL checkpointed to zero bytes, so none of the
        user's words stay in the database or its WAL (`report.wal_truncated` is False if a
        reader held an old snapshot: run it again then). Returns rows erased per table.
        """
        Scope(user_id, agent_id)  # validates both ids
        report = erase.forget(self.store, user_id, agent_id)
        self.vectors.forget(user_id, agent_id)
        return report

    def _set_status(
        self, memory_id: str, only: Scope | None, status: Status, op: Op, reason: str
    ) -> UpdateResult:
        check_id("memory_id", memory_id)

        def change(conn: sa.Connection) -> UpdateResult:
            memory = self.store.get(conn, memory_id, only)
            scope = Scope(memory.user_id, memory.agent_id)
            if status is Status.ACTIVE:
                if memory.status is Status.ACTIVE:
                    raise InvalidInputError(f"memory {memory_id} is already active")
                twin = self.store.active_by_hash(conn, scope, self._hash_of(memory))
                if twin is not None:
                    raise InvalidInputError(
                        f"memory {twin.id} already holds this text; nothing to restore"
                    )
            elif memory.status is not Status.ACTIVE:
                raise InvalidInputError(f"memory {memory_id} is not active ({memory.status})")
            now = self._now()
            self.store.set_status(conn, memory_id, status, now)
            event_id = self.store.insert_event(
                conn,
                scope,
                memory_id=memory_id,
                op=op.value,
                tier=Tier.MANUAL.value,
                candidate=None,
                content_before=memory.content,
                content_after=memory.content,
                reason=reason,
                created_at=now,
            )
            return UpdateResult(
                op=op,
                memory_id=memory_id,
                tier=Tier.MANUAL,
                reason=reason,
                event_id=event_id,
                content=memory.content,
            )

        return self.store.write(change)

    @staticmethod
    def _hash_of(memory: Memory) -> str:
        from memman.text import content_hash

        return content_hash(memory.content)
