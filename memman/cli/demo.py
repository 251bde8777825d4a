"""The bundled sample conversation behind `memman demo`: paraphrases, a refinement,
contradictions and a retraction, as facts extracted turn by turn."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from importlib import resources

from pydantic import BaseModel

from memman.jsonl import read_jsonl

DEMO_USER = "sam"


@dataclass(frozen=True)
class DemoFact:
    turn: int
    message: str
    fact: str


class _Turn(BaseModel):
    """One line of data/demo_conversation.jsonl: a user message and the facts it states."""

    turn: int
    message: str
    facts: list[str]


def demo_facts() -> Iterator[DemoFact]:
    path = resources.files("memman").joinpath("data/demo_conversation.jsonl")
    for turn in read_jsonl(path, _Turn):
        for fact in turn.facts:
            yield DemoFact(turn.turn, turn.message, fact)
