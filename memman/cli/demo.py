"""The bundled sample conversation behind `memman demo`: paraphrases, a refinement,
contradictions and a retraction, as facts extracted turn by turn."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from importlib import resources

DEMO_USER = "sam"


@dataclass(frozen=True)
class DemoFact:
    turn: int
    message: str
    fact: str


def demo_facts() -> Iterator[DemoFact]:
    text = resources.files("memman").joinpath("data/demo_conversation.jsonl").read_text("utf-8")
    for line in text.splitlines():
        turn = json.loads(line)
        for fact in turn["facts"]:
            yield DemoFact(turn["turn"], turn["message"], fact)
