"""Deciders: given a candidate and the related memories the router found, choose one of
ADD, UPDATE(id), DELETE(id) or NOOP.

Two deciders, chosen by a small registry: `llm` (one structured call through instructor,
prompt `prompts/update_memory.j2`) and `offline` (deterministic and conservative, used when
no LLM is configured). Both return a `Decision` naming the real memory, never a model's id.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from typing import Annotated, Any, ClassVar, Literal, Protocol

from pydantic import (
    BaseModel,
    Field,
    ValidationError,
    field_validator,
    model_validator,
)

from memman.config import Settings
from memman.errors import ConfigError, DecisionError
from memman.language.reader import READER, USER, TopicLabels
from memman.llm.client import CallInfo, LLMClient, answer_budget
from memman.llm.per_call import at_most, with_values
from memman.llm.prompts import render
from memman.models import Memory, Op, Tier
from memman.write.candidate import Candidate, model_reason, model_text
from memman.write.retrieval import Retrieved


@dataclass(frozen=True)
class Decision:
    op: Op
    reason: str
    tier: Tier
    target: Memory | None = None  # the memory an UPDATE/DELETE/NOOP acts on
    content: str | None = None  # the new content of an UPDATE
    call: CallInfo | None = None  # set when an LLM made the decision
    reinforce: bool = True  # a NOOP that only records the candidate in history: False
    about: tuple[str, str] | None = None  # (subject, attribute) the LLM gave for the text
    # Other memories an UPDATE or DELETE also ends: they stated the same old value ("User
    # lives in Leeds" and "User walks to work across Leeds" when the user moves away).
    also: tuple[Memory, ...] = ()
    # The memories the deciding call listed, by id (None: not an LLM's decision). A decision
    # made for several facts at once was shown what the messages touch, not each fact's own.
    shown: frozenset[str] | None = None


class Decider(Protocol):
    name: str

    def decide(self, candidate: Candidate, related: list[Retrieved], *, today: dt.date) -> Decision:
        """Choose an operation; raise DecisionError when no valid decision can be had."""
        ...


# -- offline ------------------------------------------------------------------------------


class OfflineDecider:
    """No LLM: never deletes; updates a memory the candidate strictly extends or negates; else ADD.

    "User likes coffee" -> "User likes coffee with oat milk" extends the memory (see
    wording.extends; "has a dog" -> "has a dog allergy" does not), so the memory is updated.
    "User is vegetarian" -> "User is not vegetarian" says the opposite of it (see negates):
    the newer statement is the current truth, so it
    replaces the memory (the old text stays in its history), and the prompt never gets both.
    Any other contradiction or a paraphrase cannot be told apart from a new fact without
    understanding ("visited Paris in 2019" / "in 2022" are both true), so both are kept (ADD)
    and the reason says the decision was offline.
    """

    name = "offline"

    def __init__(self, settings: Settings):
        self.settings = settings

    def decide(self, candidate: Candidate, related: list[Retrieved], *, today: dt.date) -> Decision:
        extended = [
            r.memory
            for r in related
            if READER.extends(candidate.content, r.memory.content)
            or READER.elaborates(candidate.content, r.memory.content)
        ]
        negated = [r.memory for r in related if negates(candidate.content, r.memory.content)]
        if len(extended) == 1 and not negated:
            why = "offline: the candidate strictly extends this memory"
            return Decision(
                Op.UPDATE, why, Tier.OFFLINE, target=extended[0], content=candidate.content
            )
        if len(negated) == 1 and not extended:
            why = "offline: the candidate negates this memory; the newer statement replaces it"
            return Decision(
                Op.UPDATE, why, Tier.OFFLINE, target=negated[0], content=candidate.content
            )
        if extended or negated:
            why = (
                f"offline: extends or negates {len(extended) + len(negated)} memories, keeping all"
            )
        elif related:
            closest = related[0]
            why = (
                f"offline: related to memory {closest.memory.id[:8]} (Jaccard "
                f"{closest.jaccard:.2f}) but no LLM to compare them; kept as new"
            )
        else:
            why = "offline: no related memory"
        return Decision(Op.ADD, why, Tier.OFFLINE)


def negates(candidate: str, memory: str) -> bool:
    """One of the two is negated and otherwise they say the same words in the same order.

    "User is not vegetarian" / "User is vegetarian", "User doesn't like cilantro" / "User
    likes cilantro" (wording.affirmed). "Does not eat pork" / "Never eats pork" are both negated,
    and "I am not from Japan" / "I am in Japan" differ in a word: neither is a flip.
    """
    said = READER.affirmed(candidate)
    return (
        bool(said)
        and said == READER.affirmed(memory)
        and READER.numbers(memory) == READER.numbers(candidate)
        and bool(READER.negations(memory)) != bool(READER.negations(candidate))
    )


# -- LLM ----------------------------------------------------------------------------------

_REASON = Field(description="One short sentence: why this operation.")


def _also() -> Any:
    return Field(
        default_factory=list,
        description="Other shown memories that state the same old value and are out of date"
        " now (they are retired with this decision); [] when none.",
    )


class AddOp(TopicLabels):
    """The candidate is a new fact; none of the shown memories says it."""

    op: Literal["ADD"]
    reason: str = _REASON
    _reason = field_validator("reason")(model_reason)


class UpdateOp(TopicLabels):
    """The candidate refines, corrects or contradicts memory `id`; `content` is the new truth."""

    op: Literal["UPDATE"]
    id: int = Field(description="The id of the shown memory to update.")
    content: str = Field(description="The full new text of that memory: the current truth.")
    also: list[int] = _also()
    reason: str = _REASON
    _reason = field_validator("reason")(model_reason)


class DeleteOp(BaseModel):
    """The candidate retracts memory `id` and leaves nothing true to keep."""

    op: Literal["DELETE"]
    id: int = Field(description="The id of the shown memory the candidate retracts.")
    also: list[int] = _also()
    reason: str = _REASON
    _reason = field_validator("reason")(model_reason)


class NoopOp(BaseModel):
    """Memory `id` already says what the candidate says."""

    op: Literal["NOOP"]
    id: int | None = Field(default=None, description="The id of the memory that already says it.")
    reason: str = _REASON
    _reason = field_validator("reason")(model_reason)


class MemoryDecision(BaseModel):
    """The decision for one candidate fact."""

    decision: Annotated[AddOp | UpdateOp | DeleteOp | NoopOp, Field(discriminator="op")]

    # Filled per call by `for_shown`: the short ids shown and their texts, the content limit.
    shown: ClassVar[dict[int, str]] = {}
    max_chars: ClassVar[int] = 4000

    @model_validator(mode="after")
    def _check_against_shown(self) -> MemoryDecision:
        # The messages below are read by the model: instructor sends them back as the re-ask.
        d = self.decision
        ids = getattr(d, "id", None)
        valid = ", ".join(str(i) for i in self.shown)
        if ids is not None and ids not in self.shown:
            raise ValueError(
                f"id {ids} is not one of the memories shown (valid ids: {valid}). "
                "Use one of those ids, or ADD if none of them is affected."
            )
        if isinstance(d, UpdateOp | DeleteOp) and ids is None:
            raise ValueError(f"{d.op} needs the id of one of the memories shown ({valid}).")
        if isinstance(d, UpdateOp | DeleteOp):
            unknown = [i for i in d.also if i not in self.shown]
            if unknown:
                raise ValueError(
                    f"also names ids not shown ({', '.join(map(str, unknown))}; valid ids:"
                    f" {valid}). List only shown memories that state the same old value."
                )
            d.also = [i for i in dict.fromkeys(d.also) if i != ids]
        if isinstance(d, UpdateOp):
            # The checks a user's fact passes (no NUL, not only invisible characters, ...).
            content = model_text("UPDATE content", d.content, self.max_chars)
            if READER.normalize(content) == READER.normalize(self.shown[d.id]):
                # Not invalid: the model says memory d.id stays as it is, which is a NOOP.
                # Re-asking does not converge (small models repeat the same UPDATE).
                self.decision = NoopOp(
                    op="NOOP",
                    id=d.id,
                    reason=f"UPDATE with the memory's own text, applied as NOOP: {d.reason}",
                )
        return self

    @classmethod
    def for_shown(cls, shown: dict[int, str], max_chars: int) -> type[MemoryDecision]:
        return with_values(cls, shown=shown, max_chars=max_chars)


class BatchItem(BaseModel):
    """The decision for candidate `number` of the batch."""

    number: int = Field(description="The number of the candidate this decision is for.")
    decision: Annotated[AddOp | UpdateOp | DeleteOp | NoopOp, Field(discriminator="op")]


class BatchDecisions(BaseModel):
    """One decision per candidate of the batch."""

    decisions: list[BatchItem]

    @classmethod
    def at_most(cls, count: int) -> type[BatchDecisions]:
        """The model for a batch of `count` candidates: the list holds at most that many."""
        return at_most(cls, "decisions", count, "One decision per candidate.")


# What decide_many returns per candidate: a decision, or why none could be had (the fact parks).
Decided = Decision | DecisionError


class LLMDecider:
    """One structured-output call per ambiguous candidate, or one for a batch of them."""

    name = "llm"
    template = "update_memory.j2"
    batch_template = "update_memory_batch.j2"

    def __init__(self, settings: Settings, client: LLMClient | None = None):
        self.settings = settings
        self.client = client or LLMClient(settings)

    def decide(self, candidate: Candidate, related: list[Retrieved], *, today: dt.date) -> Decision:
        shown = Shown.numbered(r.memory for r in related)
        prompt = render(
            self.template,
            {"candidate": candidate.content, **shown.prompt_context(today)},
            directory=self.settings.prompts_dir,
        )
        # An UPDATE restates the memory with the candidate's news: room for both texts.
        budget = answer_budget(self.settings, len(candidate.content) + shown.longest)
        model = shown.model(self.settings.max_fact_chars)
        answer, call = self.client.structured_call(prompt, model, max_tokens=budget)
        return shown.decision(answer.decision, call)

    def decide_many(
        self, items: list[tuple[Candidate, list[Retrieved]]], *, today: dt.date
    ) -> list[Decided]:
        """Decide several candidates in one call, each against its own related memories.

        The answer's structure is validated as a whole (instructor re-asks a malformed one);
        each candidate's decision is then checked on its own against the ids shown for it, so
        one invalid or missing decision parks that fact alone. The call's tokens are shared
        among the candidates in the audit trail.
        """
        if not items:
            return []
        if len(items) == 1:
            candidate, related = items[0]
            try:
                return [self.decide(candidate, related, today=today)]
            except DecisionError as error:
                return [error]
        # Every memory shown once, with one short id, and each candidate may act on any of
        # them: the profile and the memories two facts share are not repeated per candidate,
        # and a fact may replace a memory the router found for its neighbour.
        memories: list[Memory] = []
        for _, related in items:
            for r in related:
                if r.memory not in memories:
                    memories.append(r.memory)
        shown = Shown.numbered(memories)
        prompt = render(
            self.batch_template,
            {
                "items": [
                    {"number": number, "candidate": candidate.content}
                    for number, (candidate, _) in enumerate(items, 1)
                ],
                **shown.prompt_context(today),
            },
            directory=self.settings.prompts_dir,
        )
        restated = sum(len(c.content) + shown.longest for c, _ in items)
        budget = answer_budget(self.settings, restated) * 2 + 32 * len(items)
        try:
            answer, call = self.client.structured_call(
                prompt, BatchDecisions.at_most(len(items)), max_tokens=budget
            )
        except DecisionError as error:
            return [error] * len(items)
        share = None if call.tokens is None else call.tokens // len(items)
        call = replace(call, tokens=share)
        given = {}
        for item in answer.decisions:
            given.setdefault(item.number, item.decision)
        return [
            checked(given.get(number), shown, call, self.settings.max_fact_chars)
            for number in range(1, len(items) + 1)
        ]


Answer = AddOp | UpdateOp | DeleteOp | NoopOp


@dataclass(frozen=True)
class Shown:
    """The memories a decision call shows, by short id (1, 2, ...): models copy "2" reliably
    and cannot guess a real id from it. What the prompt lists, what an answer's ids are checked
    against (`model`), and the real memories they name (`decision`)."""

    memories: dict[int, Memory]

    @classmethod
    def numbered(cls, memories: Iterable[Memory]) -> Shown:
        return cls(dict(enumerate(memories, start=1)))

    def prompt_context(self, today: dt.date) -> dict[str, Any]:
        """The memories and the date, as every decision prompt is given them."""
        lines = [shown_line(i, m) for i, m in self.memories.items()]
        return {"memories": lines, "today": today.isoformat()}

    @property
    def longest(self) -> int:
        """The longest text shown: an UPDATE may restate it."""
        return max((len(m.content) for m in self.memories.values()), default=0)

    def model(self, max_chars: int) -> type[MemoryDecision]:
        """The response model that checks an answer against these ids and texts."""
        return MemoryDecision.for_shown({i: m.content for i, m in self.memories.items()}, max_chars)

    def decision(self, d: Answer, call: CallInfo) -> Decision:
        """A validated answer as a Decision on the real memories its short ids name."""
        short_id = getattr(d, "id", None)  # ADD has no id field
        target = self.memories.get(short_id) if short_id is not None else None
        also = tuple(self.memories[i] for i in getattr(d, "also", ()))
        content = d.content.strip() if isinstance(d, UpdateOp) else None
        reason = call.noted(d.reason)
        about = d.about() if isinstance(d, TopicLabels) else None
        return Decision(
            Op(d.op),
            reason,
            Tier.LLM,
            target=target,
            content=content,
            call=call,
            about=about,
            also=also,
            shown=frozenset(m.id for m in self.memories.values()),
        )


def checked(
    answered: Answer | DecisionError | None, shown: Shown, call: CallInfo, max_chars: int
) -> Decided:
    """One fact's answer from a call that decided several (a batch, the one-call extraction),
    checked on its own against the memories shown, as a single decision's answer is checked
    (`Shown.model`): a bad one is that fact's DecisionError (it parks), never the call's. An
    answer already refused (an operation missing what it needs) is that error."""
    if isinstance(answered, DecisionError):
        return answered
    if answered is None:
        return DecisionError("the batch answer had no decision for this fact", attempts=1)
    try:
        d = shown.model(max_chars).model_validate({"decision": answered.model_dump()}).decision
    except ValidationError as error:
        problem = "; ".join(e["msg"] for e in error.errors())
        return DecisionError(f"invalid decision in the batch answer: {problem}", attempts=1)
    return shown.decision(d, call)


def shown_line(short_id: int, memory: Memory) -> dict[str, str | int | None]:
    """One memory as a decision prompt lists it: its short id, text, date and, when stored,
    what it is about ("residence", "sister: job"), so the model meets the memory a fact
    replaces even when the two share no word."""
    about = None
    if memory.attribute is not None and not READER.is_verb_topic(memory.attribute):
        person = memory.subject if memory.subject not in (None, USER) else None
        about = f"{person}: {memory.attribute}" if person else memory.attribute
    return {
        "id": short_id,
        "content": memory.content,
        "date": memory.updated_at[:10],
        "about": about,
    }


DECIDERS: dict[str, Callable[[Settings], Decider]] = {
    "offline": OfflineDecider,
    "llm": LLMDecider,
}


def make_decider(settings: Settings) -> Decider:
    name = settings.decider
    if name == "auto":
        name = "llm" if settings.llm_configured else "offline"
    if name not in DECIDERS:
        raise ConfigError(f"decider must be auto or one of {', '.join(DECIDERS)}, not {name!r}")
    return DECIDERS[name](settings)


def decide_all(
    decider: Decider, items: list[tuple[Candidate, list[Retrieved]]], *, today: dt.date
) -> list[Decided]:
    """Each candidate's decision, in one call where the decider can batch (`decide_many`)."""
    many = getattr(decider, "decide_many", None)
    if many is not None:
        return many(items, today=today)
    decided: list[Decided] = []
    for candidate, related in items:
        try:
            decided.append(decider.decide(candidate, related, today=today))
        except DecisionError as error:
            decided.append(error)
    return decided
