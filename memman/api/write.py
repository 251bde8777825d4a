"""The write path's calls: update_memory, update_many, ingest, and the pending facts."""

from __future__ import annotations

import dataclasses
import datetime as dt
import logging
from collections.abc import Iterable, Mapping
from typing import Any

from memman.api.arguments import all_or_scope, check_batch, check_count
from memman.api.parts import Parts
from memman.errors import InvalidInputError, LeaseLostError
from memman.memo import batch_memo
from memman.models import PendingFact, UpdateResult
from memman.scope import Scope
from memman.write.candidate import Candidate

log = logging.getLogger(__name__)


# What an ingest record may say about its fact (MemoryManager.ingest).
INGEST_KEYS = frozenset(
    "fact user_id agent_id source metadata category importance subject attribute"
    " observed_at".split()
)


class WriteCalls(Parts):
    """Every long-term write goes through update_memory's path (memman/write/writepath.py)."""

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
        with batch_memo():  # a batch of one: the fact's and its memories' texts are read often
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
            if replace_metadata:
                candidate = dataclasses.replace(candidate, replace_metadata=True)
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
        check_batch("update_many", facts, "facts")
        # A size below 1 wrote the first fact, then failed on the rest with an IndexError.
        size = chunk_size or self.settings.batch_chunk_size
        check_count("chunk_size", size, minimum=1)
        scope = Scope(user_id, agent_id)
        candidates = []
        with batch_memo():  # a fact's topic, read in the batch, is read again as a memory
            for index, fact in enumerate(facts):
                try:
                    candidates.append(
                        self._candidate(
                            fact,
                            scope,
                            source,
                            metadata,
                            category,
                            importance,
                            observed_at=observed_at,
                        )
                    )
                except InvalidInputError as error:
                    raise InvalidInputError(f"fact #{index}: {error}") from error
            return self._writes.batch(scope, candidates, size)

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
        check_batch("ingest", records, "records")
        size = chunk_size or self.settings.batch_chunk_size
        check_count("chunk_size", size, minimum=1)
        results: list[UpdateResult | InvalidInputError | None] = []
        run: list[tuple[int, Candidate]] = []

        def write_run() -> None:
            if run:
                written = self._writes.batch(run[0][1].scope, [c for _, c in run], size)
                for (index, _), result in zip(run, written, strict=True):
                    results[index] = result
                run.clear()

        with batch_memo():  # see update_many
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
        scope = all_or_scope(user_id, agent_id)
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
