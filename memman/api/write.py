"""The write path's calls (MemoryManager.update_memory, update_many, ingest, pending and
retry_pending): each fact becomes a candidate and goes through memman/write/writepath.py.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import logging
from collections.abc import Iterable, Mapping
from typing import Any

from memman.api.arguments import all_or_scope, check_batch, check_count
from memman.api.core import Core
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


class Writes:
    """Every long-term write goes through the write path (memman/write/writepath.py)."""

    def __init__(self, core: Core):
        self.core = core

    def update_memory(
        self,
        fact: str,
        scope: Scope,
        *,
        source: str | None,
        metadata: dict[str, Any] | None,
        category: str | None,
        importance: float | None,
        subject: str | None,
        attribute: str | None,
        observed_at: dt.datetime | str | None,
        replace_metadata: bool,
    ) -> UpdateResult:
        with batch_memo():  # a batch of one: the fact's and its memories' texts are read often
            candidate = self.core.candidate(
                fact,
                scope,
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
            return self.core.write_path.process(candidate)

    def update_many(
        self,
        facts: Iterable[str],
        *,
        user_id: str,
        agent_id: str | None,
        source: str | None,
        metadata: dict[str, Any] | None,
        chunk_size: int | None,
        category: str | None,
        importance: float | None,
        observed_at: dt.datetime | str | None,
    ) -> list[UpdateResult]:
        check_batch("update_many", facts, "facts")
        # A size below 1 wrote the first fact, then failed on the rest with an IndexError.
        size = chunk_size or self.core.settings.batch_chunk_size
        check_count("chunk_size", size, minimum=1)
        scope = Scope(user_id, agent_id)
        candidates = []
        with batch_memo():  # a fact's topic, read in the batch, is read again as a memory
            for index, fact in enumerate(facts):
                try:
                    candidates.append(
                        self.core.candidate(
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
            return self.core.write_path.batch(scope, candidates, size)

    def ingest(
        self,
        records: Iterable[Mapping[str, Any]],
        *,
        user_id: str | None,
        agent_id: str | None,
        source: str | None,
        chunk_size: int | None,
    ) -> list[UpdateResult | InvalidInputError]:
        check_batch("ingest", records, "records")
        size = chunk_size or self.core.settings.batch_chunk_size
        check_count("chunk_size", size, minimum=1)
        results: list[UpdateResult | InvalidInputError | None] = []
        run: list[tuple[int, Candidate]] = []

        def write_run() -> None:
            if run:
                written = self.core.write_path.batch(run[0][1].scope, [c for _, c in run], size)
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
        return self.core.candidate(
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

    def pending(self, user_id: str | None, agent_id: str | None) -> list[PendingFact]:
        scope = all_or_scope(user_id, agent_id)
        with self.core.store.read() as conn:
            return self.core.store.list_pending(conn, scope)

    def retry_pending(self, user_id: str | None, agent_id: str | None) -> list[UpdateResult]:
        leases = self.core.leases
        results = []
        for item in self.pending(user_id, agent_id):
            if not leases.claim("pending", [item.id]):
                continue
            candidate = self.core.candidate(
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
                results.append(self.core.write_path.process(candidate, pending_id=item.id))
            except LeaseLostError as lost:  # this worker's lease lapsed and another settled it
                log.info("%s", lost)
            finally:
                leases.release("pending", [item.id])
        return results
