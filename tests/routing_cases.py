"""The routing sets (evals/<set>_personas.jsonl, evals/<set>_cases.jsonl): loading a set,
storing a persona verbatim, and the fixed clock that keeps decision prompts the same text from
run to run. Shared by benchmarks/bench_routing.py and tests/test_capable_model.py."""

from __future__ import annotations

import datetime as dt
import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from memman import MemoryManager
from memman.jsonl import read_jsonl
from memman.models import Memory

EVALS = Path(__file__).resolve().parents[1] / "evals"
NOW = dt.datetime(2026, 6, 1, 12, 0, tzinfo=dt.UTC)  # the write; a fixed day keeps prompts equal
SEEDED = dt.datetime(2025, 1, 1, 9, 0, tzinfo=dt.UTC)  # the first stored memory, a day apart


@dataclass(frozen=True)
class Outcome:
    op: str  # supersede, add, noop
    targets: list[str] = field(default_factory=list)
    keep: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Case:
    name: str
    persona: str
    existing: list[str]
    message: str
    facts: list[str]
    outcomes: list[Outcome]
    question: str | None
    current: str | None


@dataclass(frozen=True)
class Persona:
    persona: str
    memories: list[str]


def load_set(name: str) -> tuple[dict[str, list[str]], list[Case]]:
    """A set's personas (name -> memories) and cases; a case whose outcomes do not match its
    facts or name a text the user does not hold raises ValueError."""
    personas = {
        p.persona: p.memories for p in read_jsonl(EVALS / f"{name}_personas.jsonl", Persona)
    }
    cases = read_jsonl(EVALS / f"{name}_cases.jsonl", Case)
    for case in cases:
        stored = set(personas[case.persona]) | set(case.existing)
        named = {t for o in case.outcomes for t in (*o.targets, *o.keep)}
        if len(case.outcomes) != len(case.facts) or not named <= stored:
            raise ValueError(
                f"{name}/{case.name}: one outcome per fact, naming stored texts"
                f" (not stored: {sorted(named - stored)})"
            )
    return personas, cases


def fixed_clock() -> Callable[[], dt.datetime]:
    """NOW, a millisecond later at each reading (stamps stay ordered, the day stays fixed)."""
    ticks = iter(range(10**9))
    return lambda: NOW + dt.timedelta(milliseconds=next(ticks))


def seed(mm: MemoryManager, user_id: str, texts: list[str]) -> dict[str, str]:
    """Store texts verbatim for user_id (an export-format import, then relabel); text -> id."""
    ids: dict[str, str] = {}
    lines = []
    for i, text in enumerate(dict.fromkeys(texts)):
        when = (SEEDED + dt.timedelta(days=i)).isoformat(timespec="milliseconds")
        memory = Memory(
            id=hashlib.sha256(f"{user_id}/{text}".encode()).hexdigest()[:32],
            user_id=user_id,
            content=text,
            created_at=when,
            updated_at=when,
            observed_at=when,
        )
        ids[text] = memory.id
        lines.append(json.dumps({"kind": "memory", **memory.model_dump(mode="json")}))
    report = mm.import_jsonl(lines)
    if report.bad:
        raise RuntimeError(f"{user_id}: seeding refused lines: {report.bad[:3]}")
    mm.relabel(user_id=user_id)
    # An import copies no vector it was not given: with an embedder the seeded memories are
    # embedded here, as a store written through update_memory would hold them (without this
    # the local modes retrieved by meaning only the case's own facts).
    if mm.settings.embedder != "none":
        mm.reindex()
    held = {m.content for m in mm.list(user_id=user_id)}
    if held != set(ids):
        raise RuntimeError(f"{user_id}: seeding did not store the texts verbatim")
    return ids
