"""One LLM call per extraction batch: the facts the messages state, each decided with them.

With `llm_turn_calls = "one"` (the default) a batch of chat messages costs one structured call
(prompts/extract_and_decide.j2): it shows the messages and the memories they touch (the union a
decision is shown, write/shown.py, retrieved for each user message) and asks for each fact what
extraction asks (content, category, importance, durability, subject, attribute) and its
operation on the memories shown. The answer's structure is validated as a whole (a malformed
one is re-asked once); each fact's decision is then checked on its own (write/decide.checked),
so a bad id or content parks that fact alone. A call that gives no usable answer raises
DecisionError: the caller falls back to extraction alone and the decisions as "two" makes them.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import replace
from typing import Annotated

import sqlalchemy as sa
from pydantic import BaseModel, Field, create_model

from memman.config import Settings
from memman.language.reader import READER
from memman.lifecycle.observe import FACT_TOKENS, ExtractedFact, Found, found_facts
from memman.llm.client import LLMClient, answer_budget
from memman.llm.prompts import render
from memman.write.decide import AddOp, Decided, DeleteOp, NoopOp, UpdateOp, checked, shown_line
from memman.write.retrieval import Retrieved

TEMPLATE = "extract_and_decide.j2"
# Re-asks of the combined call before the batch falls back to two calls: a model that cannot
# answer this schema seldom converges, and the fallback makes the calls it needs.
RETRIES = 1


class DecidedFact(ExtractedFact):
    """A fact about the user and what it does to the memories shown."""

    # Optional in the schema: an answer whose facts come without decisions (a model that only
    # extracts) is an extraction, and its facts are decided as "two" decides them.
    decision: Annotated[AddOp | UpdateOp | DeleteOp | NoopOp, Field(discriminator="op")] | None = (
        None
    )


class DecidedFacts(BaseModel):
    """Facts about the user stated in the conversation (empty if none), each decided."""

    facts: list[DecidedFact]

    @classmethod
    def at_most(cls, count: int) -> type[DecidedFacts]:
        """This model with maxItems on facts (as ExtractedFacts.at_most)."""
        return create_model(
            cls.__name__,
            __base__=cls,
            __doc__=cls.__doc__,
            facts=(list[DecidedFact], Field(max_length=count)),
        )


def ask_turn(
    client: LLMClient,
    rows: list[sa.Row],
    shown: list[Retrieved],
    settings: Settings,
    today: dt.date,
) -> list[tuple[Found, str, Decided | None]]:
    """The batch's facts with their durability and decision (a DecisionError for a fact whose
    decision failed its checks; None for every fact when a durable one came without any: the
    answer is an extraction); DecisionError when the call gives no usable answer."""
    memories = {i: r.memory for i, r in enumerate(shown, start=1)}
    prompt = render(
        TEMPLATE,
        {
            "messages": [{"role": row.role, "content": row.content} for row in rows],
            "memories": [shown_line(i, m) for i, m in memories.items()],
            "today": today.isoformat(),
        },
        directory=settings.prompts_dir,
    )
    count = settings.extract_max_facts
    # Each fact may restate the longest memory it updates.
    longest = max((len(m.content) for m in memories.values()), default=0)
    budget = answer_budget(settings, longest) + count * 2 * FACT_TOKENS
    answer, call = client.structured_call(
        prompt, DecidedFacts.at_most(count), max_tokens=budget, max_retries=RETRIES
    )
    facts = [f for f in answer.facts if READER.normalize(f.content)]
    if facts and call.tokens is not None:
        call = replace(call, tokens=call.tokens // len(facts))  # shared in the audit trail
    found = found_facts(facts, rows)
    if any(f.decision is None and f.durability == "durable" for f in facts):
        return [(fact, durability, None) for fact, durability in found]
    return [
        (fact, durability, checked(f.decision, memories, call, settings.max_fact_chars))
        for (fact, durability), f in zip(found, facts, strict=True)
    ]
