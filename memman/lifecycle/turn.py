"""One LLM call per extraction batch: the facts the messages state, each decided with them.

With `llm_turn_calls = "one"` (the default) a batch of chat messages costs one structured call
(prompts/extract_and_decide.j2): it shows the messages and the memories they touch (the union
a decision is shown, write/shown.py, for each user message: by topic, words and meaning) and
asks for each fact what extraction asks (content, category, importance, durability, subject,
attribute) and its operation on the memories shown. The answer's structure is validated as a
whole (a malformed one is re-asked once); each fact's decision is then checked on its own
(write/decide.checked), so a bad id or content parks that fact alone, and a fact whose own
route finds a memory the call never listed is decided again alone (write/told.py,
`llm_turn_recheck`). A call that gives no usable answer raises DecisionError: the caller falls
back to extraction alone and the decisions as "two" makes them.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import replace
from typing import Any, Literal

import sqlalchemy as sa
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from memman.config import Settings
from memman.errors import DecisionError
from memman.language.reader import READER
from memman.lifecycle.observe import FACT_TOKENS, ExtractedFact, Found, found_facts
from memman.llm.client import LLMClient, answer_budget
from memman.llm.per_call import at_most
from memman.llm.prompts import render
from memman.write.decide import AddOp, Decided, DeleteOp, NoopOp, Shown, UpdateOp, checked
from memman.write.retrieval import Retrieved

TEMPLATE = "extract_and_decide.j2"
# Re-asks of the combined call before the batch falls back to two calls: a model that cannot
# answer this schema seldom converges, and the fallback makes the calls it needs.
RETRIES = 1


OPS = {"ADD": AddOp, "UPDATE": UpdateOp, "DELETE": DeleteOp, "NOOP": NoopOp}


def _untitled(schema: dict[str, Any]) -> None:
    """Drop the properties' titles (their names again): the schema is part of every prompt.
    The object's own title stays: instructor names the tool after it."""
    for prop in schema.get("properties", {}).values():
        prop.pop("title", None)


class DecidedFact(ExtractedFact):
    """A fact about the user and its op on the memories listed."""

    # One flat object per fact (the operation's fields side by side, not a union of four
    # objects): a third of the schema's tokens, and as easy for a small model's grammar. The
    # operation is optional: an answer whose facts come without one (a model that only
    # extracts) is an extraction, and its facts are decided as "two" decides them.
    model_config = ConfigDict(json_schema_extra=_untitled)

    op: Literal["ADD", "UPDATE", "DELETE", "NOOP"] | None = Field(
        default=None, description="What the fact does to the memories listed"
    )
    id: int | None = Field(default=None, description="UPDATE, DELETE, NOOP: the memory's id")
    also: list[int] = Field(
        default_factory=list, description="UPDATE, DELETE: other ids out of date with it"
    )
    memory: str = Field(default="", description="UPDATE: the memory's full new text")
    reason: str = Field(default="", description="One short sentence: why")

    def decision(self) -> AddOp | UpdateOp | DeleteOp | NoopOp | DecisionError | None:
        """The operation as the decision call's models state it (None: no operation given);
        an operation missing what it needs (an UPDATE without its text) is this fact's
        DecisionError."""
        if self.op is None:
            return None
        fields: dict[str, Any] = {"op": self.op, "reason": self.reason or "(no reason given)"}
        if self.op in ("ADD", "UPDATE"):
            fields |= {"subject": self.subject, "attribute": self.attribute}
        if self.op != "ADD" and self.id is not None:
            fields["id"] = self.id
        if self.op in ("UPDATE", "DELETE"):
            fields["also"] = self.also
        if self.op == "UPDATE" and self.memory:
            fields["content"] = self.memory
        try:
            return OPS[self.op].model_validate(fields)
        except ValidationError as error:
            first = error.errors()[0]
            where = ".".join(str(part) for part in first["loc"])
            return DecisionError(f"{self.op} answer: {where}: {first['msg']}", attempts=1)


class DecidedFacts(BaseModel):
    """The user's facts in the conversation, each decided (empty if none)."""

    model_config = ConfigDict(json_schema_extra=_untitled)

    facts: list[DecidedFact]

    @classmethod
    def at_most(cls, count: int) -> type[DecidedFacts]:
        """This model with maxItems on facts (as ExtractedFacts.at_most)."""
        return at_most(cls, "facts", count)


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
    memories = Shown.numbered(r.memory for r in shown)
    prompt = render(
        TEMPLATE,
        {
            "messages": [{"role": row.role, "content": row.content} for row in rows],
            **memories.prompt_context(today),
        },
        directory=settings.prompts_dir,
    )
    count = settings.extract_max_facts
    # Each fact may restate the longest memory it updates.
    budget = answer_budget(settings, memories.longest) + count * 2 * FACT_TOKENS
    answer, call = client.structured_call(
        prompt, DecidedFacts.at_most(count), max_tokens=budget, max_retries=RETRIES
    )
    facts = [f for f in answer.facts if READER.normalize(f.content)]
    if facts and call.tokens is not None:
        call = replace(call, tokens=call.tokens // len(facts))  # shared in the audit trail
    found = found_facts(facts, rows)
    if any(f.op is None and f.durability == "durable" for f in facts):
        return [(fact, durability, None) for fact, durability in found]
    return [
        (fact, durability, checked(f.decision(), memories, call, settings.max_fact_chars))
        for (fact, durability), f in zip(found, facts, strict=True)
    ]
