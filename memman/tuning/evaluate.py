"""Run labelled decision cases through the configured decider: is a prompt change better?

A case is one JSON line: `existing` memories (stored as they are, no routing), a `candidate`
fact, the expected `op` and, for UPDATE / DELETE / NOOP, the index of the `target` memory in
`existing`. Each case runs on a fresh in-memory store through the real write path
(`update_memory`), so retrieval, routing and the decider are evaluated together.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import BaseModel, Field, field_validator, model_validator

from memman.api.manager import MemoryManager
from memman.config import Settings
from memman.errors import InvalidInputError
from memman.jsonl import parse_lines, read_lines, strict
from memman.language.text import content_hash
from memman.language.topic import about
from memman.models import Op, Tier
from memman.scope import Scope
from memman.storage.changes import ChangeSet, NewMemory
from memman.storage.memories import memory_row, new_memory_id
from memman.write.commit import commit

EVAL_USER = "eval"
STORED_AT = "2026-01-01T00:00:00.000+00:00"  # existing memories' timestamp
OPS = [op.value for op in Op]


@dataclass(frozen=True)
class Case:
    name: str
    existing: list[str]
    candidate: str
    op: str
    target: int | None = None


@dataclass(frozen=True)
class Outcome:
    case: Case
    op: str
    target: int | None
    tier: str
    llm_calls: int
    tokens: int

    @property
    def correct(self) -> bool:
        return self.op == self.case.op and (
            self.case.target is None or self.target == self.case.target
        )


@dataclass
class EvalReport:
    prompts_dir: str | None
    prompt_hashes: set[str] = field(default_factory=set)
    outcomes: list[Outcome] = field(default_factory=list)

    def accuracy_by_op(self) -> dict[str, tuple[int, int]]:
        """expected op -> (correct, total)."""
        totals: Counter[str] = Counter(o.case.op for o in self.outcomes)
        right: Counter[str] = Counter(o.case.op for o in self.outcomes if o.correct)
        return {op: (right[op], totals[op]) for op in OPS if totals[op]}

    def confusion(self) -> dict[str, Counter[str]]:
        """expected op -> Counter of decided ops."""
        matrix: dict[str, Counter[str]] = {}
        for o in self.outcomes:
            matrix.setdefault(o.case.op, Counter())[o.op] += 1
        return matrix

    @property
    def correct(self) -> int:
        return sum(o.correct for o in self.outcomes)


class _CaseLine(BaseModel):
    """One line of a cases file, checked: a known op, a target that indexes `existing`."""

    name: str | None = None  # default: "case <line number>"
    existing: list[str]
    candidate: str
    op: str
    target: int | None = Field(default=None, ge=0)

    @field_validator("op")
    @classmethod
    def _known_op(cls, op: str) -> str:
        if op.upper() not in OPS:
            raise ValueError(f"op must be one of {OPS}")
        return op.upper()

    @model_validator(mode="after")
    def _target_exists(self) -> _CaseLine:
        if self.target is not None and self.target >= len(self.existing):
            raise ValueError("target must index a memory of existing")
        return self


def load_cases(path: Path) -> list[Case]:
    """The file's cases; BadLineError naming the file and line of the first malformed one."""
    lines = parse_lines(read_lines(path), _CaseLine, source=str(path))
    cases = [
        Case(c.name or f"case {number}", c.existing, c.candidate, c.op, c.target)
        for number, c in strict(lines)
    ]
    if not cases:  # every per-case figure would divide by zero
        raise InvalidInputError(f"{path} holds no decision cases")
    return cases


def _seed(text: str) -> ChangeSet:
    """One of a case's existing memories, stored as given with its ADD event."""
    topic = about(text)
    row = memory_row(
        memory_id=new_memory_id(),
        content=text,
        content_hash=content_hash(text),
        now=STORED_AT,
        source="eval",
        metadata={},
        subject=topic and topic.subject,
        attribute=topic and topic.attribute,
    )
    event = {
        "memory_id": row["id"],
        "op": Op.ADD.value,
        "tier": Tier.MANUAL.value,
        "candidate": text,
        "content_before": None,
        "content_after": text,
        "reason": "an evaluation case's existing memory",
        "source": "eval",
        "created_at": STORED_AT,
    }
    return ChangeSet(event, (NewMemory(row),))


def run_case(case: Case, settings: Settings) -> tuple[Outcome, str | None]:
    """The case's outcome and the prompt hash its LLM call used (None offline)."""
    with MemoryManager(":memory:", settings=settings.model_copy(update={"db": ":memory:"})) as mm:
        scope = Scope(EVAL_USER)
        seeds = [_seed(text) for text in case.existing]
        mm.store.write(lambda conn: commit(mm.store, conn, scope, seeds))
        ids = [seed.event["memory_id"] for seed in seeds]
        if mm.embedder is not None:
            mm.reindex()
        result = mm.update_memory(case.candidate, user_id=EVAL_USER)
        (event,) = mm.events(user_id=EVAL_USER, limit=1)
    llm = event.tier in (Tier.LLM, Tier.PENDING) and event.model is not None
    return Outcome(
        case=case,
        op=result.op.value,
        target=ids.index(result.memory_id) if result.memory_id in ids else None,
        tier=result.tier.value,
        llm_calls=(event.attempts or 1) if llm else 0,
        tokens=event.tokens or 0,
    ), event.prompt_hash


def evaluate(cases: list[Case], settings: Settings) -> EvalReport:
    report = EvalReport(prompts_dir=settings.prompts_dir)
    for case in cases:
        outcome, prompt_hash = run_case(case, settings)
        report.outcomes.append(outcome)
        if prompt_hash:
            report.prompt_hashes.add(prompt_hash)
    return report
