"""Conversations in: buffer chat messages durably, extract candidate facts, route them.

observe() first writes the messages to `message_buffer` (one transaction), then extracts
from a session once its oldest buffered message has waited `extract_cooldown_s` (flush()
forces it). A message is marked extracted only after its facts were written, so a crash
or an LLM failure in between leaves it buffered for the next attempt; re-extracting a
message is harmless because the write path turns a repeated fact into a NOOP.
The buffer itself is memman/lifecycle/buffer.py; failed batches and their backoff,
memman/lifecycle/extraction_failures.py; sessions nobody flushes, memman/lifecycle/idle.py.

Offline, the candidates are the user's own messages, verbatim, except those that state nothing
about the user (lifecycle/utterance.py): chatter ("ok thanks!", "hmm", "hi"), questions ("What's
17 * 23?") and requests ("Tell me a joke") to the assistant are listed, with why, in
`ObserveResult.skips` (their texts in `skipped`) instead; a message of facts that stand alone
is stored as its clauses, a plan for now goes to short-term memory (lifecycle/pieces.py).
With an LLM, one structured call per batch returns facts with a category, an importance and a
durability: durable facts are written with their category and importance (into the memory's
columns), transient ones go to short-term memory. With `llm_turn_calls = "one"` that call also
decides each fact against the memories the messages touch (lifecycle/turn.py,
`prompts/extract_and_decide.j2`) and the decisions are applied as they are (write/told.py);
with "two", or when the model cannot answer that schema, it only extracts
(`prompts/extract_facts.j2`) and the facts are decided as update_many decides them.
Assistant and system messages are context, never stored as the user's facts.
"""

from __future__ import annotations

import datetime as dt
import json
import logging
from collections.abc import Callable
from functools import partial
from typing import Any, Literal, NamedTuple

import sqlalchemy as sa
from pydantic import BaseModel, ConfigDict, Field, field_validator

from memman.config import Settings
from memman.errors import DecisionError, InvalidInputError
from memman.language.reader import READER, TopicLabels
from memman.lifecycle.buffer import prune_extracted, rows_by_scope, waiting_count, waiting_rows
from memman.lifecycle.extraction_failures import (
    EXTRACT_TEMPLATE,
    TURN_TEMPLATE,
    backing_off,
    batches,
    note_failure,
    past_failures,
    singled_out,
)
from memman.lifecycle.pieces import IMPORTANCE, pieces, transient
from memman.lifecycle.shortterm import ShortTermFact
from memman.lifecycle.utterance import Why, skip_reason
from memman.llm.client import LLMClient, unanswerable
from memman.llm.per_call import at_most
from memman.llm.prompts import render
from memman.models import UpdateResult
from memman.scope import Scope
from memman.storage.pending import Leases
from memman.storage.store import Store
from memman.timestamps import stamp
from memman.write.candidate import check_category
from memman.write.decide import Decided

log = logging.getLogger(__name__)

# max_tokens per extracted fact: its JSON keys (~25 tokens) and a sentence of ~100 characters.
FACT_TOKENS = 64

Mark = Callable[[sa.Connection], None] | None


# One scope's found facts written, results in order (a refused fact: its error): decided as
# update_many decides them, or as the one-call extraction decided each (its decisions, in the
# facts' order). Each fact's mark (or None) runs in the transaction that writes that fact.
WriteFacts = Callable[
    [Scope, list["Found"], list[Mark], list[Decided] | None],
    list[UpdateResult | InvalidInputError],
]


class Found(NamedTuple):
    """A durable fact extraction found, with what it came with."""

    content: str
    source: str
    category: str | None = None
    importance: float | None = None
    observed_at: str | None = None  # when the user said it (the message's time)
    subject: str | None = None  # what it is about, when the LLM said so
    attribute: str | None = None
    metadata: dict[str, Any] | None = None  # given to observe() with its messages


# The one call for a batch of a scope's messages (lifecycle/turn.py): each fact with its
# durability and decision (None: decided as "two" decides); DecisionError when the call
# gives no usable answer.
Turn = list[tuple[Found, str, Decided | None]]
AskTurn = Callable[[Scope, list[sa.Row]], Turn]
FellBack = Callable[[DecisionError], None]  # records that the one call failed, and why


# remember_short_term for the session extracted (a transient Found's content, source,
# category, importance and metadata), with the Mark run in the transaction that writes it.
RememberFact = Callable[["Found", Scope, Mark], ShortTermFact]


class ExtractedFact(TopicLabels):
    content: str = Field(min_length=1, description='One fact, "User ..."')
    category: str = Field(description="One lowercase word")
    importance: int = Field(ge=1, le=10)
    durability: Literal["durable", "transient"]

    @field_validator("category")
    @classmethod
    def _one_word(cls, value: str) -> str:
        """Checked here, so a bad category is re-asked instead of failing the write later."""
        try:
            return check_category(value) or ""
        except InvalidInputError as error:
            raise ValueError(f"{error}: give one short lowercase word") from error


class ExtractedFacts(BaseModel):
    """Facts about the user stated in the conversation (empty if none)."""

    facts: list[ExtractedFact]

    @classmethod
    def at_most(cls, count: int) -> type[ExtractedFacts]:
        """This model with maxItems on facts: a grammar-bound small model that repeats one
        fact is stopped by the schema, not by the timeout."""
        return at_most(cls, "facts", count)


class Skip(BaseModel):
    """A user message offline extraction did not store, and why."""

    model_config = ConfigDict(frozen=True)

    text: str
    why: Why  # "chatter", "question to the assistant" or "request to the assistant"


class ObserveResult(BaseModel):
    """What observe() / flush() did with a session's messages."""

    model_config = ConfigDict(frozen=True)

    buffered: int  # messages waiting in the buffer after this call
    extracted_messages: int = 0
    results: list[UpdateResult] = Field(default_factory=list)  # durable facts, in order
    short_term_ids: list[int] = Field(default_factory=list)  # transient facts
    offline: bool = False  # True: candidates are the user's messages verbatim
    error: str | None = None  # extraction failed; the messages stay buffered
    # Candidates the write path refused (too long, invalid text): reported, not retried. The
    # messages they came from stay in message_buffer, so the user's words are not lost.
    rejected: list[str] = Field(default_factory=list)
    # Offline only: user messages that state nothing about the user (chatter, questions and
    # requests to the assistant; lifecycle/utterance.py). Not stored as memories; they stay in
    # message_buffer. `skipped` lists their texts, `skips` the same messages with why.
    skipped: list[str] = Field(default_factory=list)
    skips: list[Skip] = Field(default_factory=list)


def extract(
    store: Store,
    session_id: str,
    *,
    write_facts: WriteFacts,
    remember: RememberFact,
    client: LLMClient | None,
    settings: Settings,
    now: dt.datetime,
    leases: Leases,
    only: Scope | None = None,
    ask_turn: AskTurn | None = None,
) -> ObserveResult:
    """Extract every buffered message of the session (of that scope `only`, if given); mark
    them only once written.

    Messages go to the LLM in batches of at most `extract_batch_chars` characters, oldest
    first: a backlog that piled up while the LLM was down must not become one prompt too long
    for the model, failing on every flush. A failed batch stops the run; it and the later
    ones stay buffered, the batches before are written and marked. Messages another worker
    has claimed (`leases`) are left to it. With `ask_turn` each batch is first asked in one
    call that also decides its facts; when that gives no usable answer the batch is
    extracted alone and its facts decided as update_many decides them.
    """
    results: list[UpdateResult] = []
    short_ids: list[int] = []
    rejected: list[str] = []
    skips: list[Skip] = []
    extracted = 0
    error: str | None = None
    stop = False  # a batch failed or backs off: later ones wait, in order
    # Claimed first: a flush running in another process extracts none of the same messages.
    # A claim that is not given back (this process died) lapses after lease_s.
    buffered = waiting_rows(store, session_id, only)
    claimed = leases.claim("message_buffer", [row.id for row in buffered])
    extracting = rows_by_scope([row for row in buffered if row.id in claimed])
    try:
        for scope, rows in extracting.items():
            failures = past_failures(store, scope) if client is not None else {}
            alone = singled_out(failures, settings)
            for batch in batches(rows, settings.extract_batch_chars, alone):
                ids = [row.id for row in batch]
                # Whatever is written from the batch is written in a transaction that finds
                # its messages still there (check_buffered, or mark_extracted which checks
                # too): a forget() that erased the user while the LLM answered, from any
                # process, has taken them, and nothing extracted from them may outlive it.
                guard: Mark = partial(store.check_buffered, scope=scope, ids=ids)
                decided: list[Decided] | None = None  # one call: each fact's, in order
                if client is None:
                    facts, skipped = _offline_candidates(batch)
                    skips += skipped
                else:
                    waiting = backing_off(batch, failures, settings, now)
                    if waiting is not None:
                        error = error or waiting
                        if batch[0].id in alone:
                            continue  # reported in stats; must not hold the session's others
                        stop = True
                        break
                    try:
                        turn = _asked_turn(
                            ask_turn,
                            scope,
                            batch,
                            lambda f, s=scope, b=batch: store.write(
                                lambda conn: note_failure(
                                    conn, store, s, b, f, client, now, template=TURN_TEMPLATE
                                ),
                                scope=s,
                            ),
                        )
                        if turn is None:
                            facts = found_facts(_ask(client, batch, settings).facts, batch)
                        else:
                            facts = [(found, durability) for found, durability, _ in turn]
                            given = [d for _, durable, d in turn if durable != "transient"]
                            if all(d is not None for d in given):
                                decided = given
                    except DecisionError as failure:
                        log.warning("extraction failed, messages stay buffered: %s", failure)
                        error, stop = str(failure), True
                        store.write(
                            lambda conn, s=scope, b=batch, f=failure: note_failure(
                                conn, store, s, b, f, client, now
                            ),
                            scope=scope,
                        )
                        break
                durable: list[Found] = []
                marks: list[Mark] = []
                last = max((i for i, (_, d) in enumerate(facts) if d != "transient"), default=-1)
                for position, (found, durability) in enumerate(facts):
                    if durability == "transient":
                        try:
                            short = remember(found, scope, guard)
                            short_ids.append(short.id)
                        except InvalidInputError as refused:
                            rejected.append(_refused(found, refused))
                        continue
                    # The messages a fact comes from are marked in the transaction that writes
                    # it (offline: its message and those before it; from the LLM: the batch,
                    # with its last durable fact), so a worker killed between the two cannot
                    # have them extracted again; the LLM's other facts are guarded. The mark
                    # after the loop covers what no fact marked.
                    upto = ids[: ids.index(_message_id(found)) + 1] if client is None else ids
                    durable.append(found)
                    marks.append(
                        (lambda conn, s=scope, u=upto: store.mark_extracted(conn, s, u, stamp(now)))
                        if client is None or position == last
                        else guard
                    )
                # Decided by the one call, or one update_many: the ambiguous facts of the batch
                # share one decision call.
                written = write_facts(scope, durable, marks, decided)
                for found, outcome in zip(durable, written, strict=True):
                    if isinstance(outcome, InvalidInputError):
                        # One unusable candidate (a pasted 10 kB document, a NUL byte) must not
                        # block the session: every later flush would fail on it again.
                        rejected.append(_refused(found, outcome))
                    else:
                        results.append(outcome)
                store.write(
                    lambda conn, s=scope, ids=ids: store.mark_extracted(conn, s, ids, stamp(now)),
                    scope=scope,
                )
                extracted += len(ids)
            if stop:
                break
    finally:  # those not extracted (a failure, an erasure): the next try's
        leases.release("message_buffer", sorted(claimed))
    if extracted:
        for scope in extracting:
            prune_extracted(store, scope, settings, now)
    return ObserveResult(
        buffered=waiting_count(store, session_id, only),
        extracted_messages=extracted,
        results=results,
        short_term_ids=short_ids,
        offline=client is None,
        error=error,
        rejected=rejected,
        skipped=[skip.text for skip in skips],
        skips=skips,
    )


def _ask(client: LLMClient, rows: list[sa.Row], settings: Settings) -> ExtractedFacts:
    """One structured extraction call over these messages (prompts/extract_facts.j2)."""
    messages = [{"role": row.role, "content": row.content} for row in rows]
    prompt = render(EXTRACT_TEMPLATE, {"messages": messages}, directory=settings.prompts_dir)
    count = settings.extract_max_facts
    answer, _ = client.structured_call(
        prompt,
        ExtractedFacts.at_most(count),
        max_tokens=settings.llm_max_tokens + count * FACT_TOKENS,
    )
    return answer


def _asked_turn(
    ask_turn: AskTurn | None, scope: Scope, batch: list[sa.Row], fell_back: FellBack
) -> Turn | None:
    """The one call's answer for the batch; None without one (llm_turn_calls "two") or when
    the model could not answer its schema (logged and audited by `fell_back`: the batch then
    takes the two calls). DecisionError when the server failed (unreachable, timeout, 5xx):
    extraction alone would fail alike, so the batch stays buffered as a failed extraction
    does."""
    if ask_turn is None:
        return None
    try:
        return ask_turn(scope, batch)
    except DecisionError as failure:
        if not unanswerable(failure):
            raise
        log.warning("the combined extraction call failed, extracting alone: %s", failure)
        fell_back(failure)
        return None


def _offline_candidates(rows: list[sa.Row]) -> tuple[list[tuple[Found, str]], list[Skip]]:
    """The user's messages that may state something about the user, verbatim (as of the
    message's time; a message of facts standing alone as its clauses, a plan for now or
    where the user is now transient: lifecycle/pieces.py); the others."""
    facts: list[tuple[Found, str]] = []
    skips: list[Skip] = []
    for row in rows:
        if row.role != "user" or not READER.normalize(row.content):
            continue
        why = skip_reason(row.content)
        if why is not None:
            skips.append(Skip(text=row.content, why=why))
            continue
        source, said = f"extraction:{row.id}", _said_at(row)
        for piece in pieces(row.content):
            category = transient(piece)
            if category is None:
                found = Found(piece, source, observed_at=said, metadata=_metadata(row))
                facts.append((found, "durable"))
            else:  # "I'll go for a run later": short-term, as the LLM's transient facts
                found = Found(piece, source, category, IMPORTANCE, said, metadata=_metadata(row))
                facts.append((found, "transient"))
    return facts, skips


def found_facts(facts: list[ExtractedFact], rows: list[sa.Row]) -> list[tuple[Found, str]]:
    """The LLM's facts (but those with no text), each as of the newest message of the batch
    it came from, with the batch's metadata (one per batch: extraction_failures.batches)."""
    source = "extraction:" + ",".join(str(row.id) for row in rows)
    said = max(_said_at(row) for row in rows)
    metadata = _metadata(rows[0])
    return [
        (
            Found(
                f.content, source, f.category, f.importance, said, f.subject, f.attribute, metadata
            ),
            f.durability,
        )
        for f in facts
        if READER.normalize(f.content)
    ]


def _message_id(found: Found) -> int:
    """The buffered message an offline fact is (its source is "extraction:<id>")."""
    return int(found.source.removeprefix("extraction:"))


def _said_at(row: sa.Row) -> str:
    """When a buffered message was said: its own timestamp if it came with one."""
    return row.observed_at or row.created_at


def _metadata(row: sa.Row) -> dict[str, Any] | None:
    """The metadata observe() was given with a buffered message (None: none)."""
    return None if row.metadata is None else json.loads(row.metadata)


def _refused(found: Found, error: InvalidInputError) -> str:
    log.warning("extracted fact refused (%s): %s", found.source, error)
    return f"{found.source}: {error}"
