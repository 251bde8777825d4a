"""The LLM decider against a real OpenAI-compatible server: is the wire path sound?

    MEMMAN_LLM_MODEL=smollm2 OPENAI_BASE_URL=http://127.0.0.1:PORT/v1 \
        python benchmarks/bench_llm_server.py [--cases evals/cases.jsonl]

Runs the demo conversation's facts (memman demo) and the labelled eval cases (memman eval)
through update_memory with the configured settings and reports, per set, the decisions that
reached the LLM, how many were valid (applied, not parked), the parked count, and calls,
tokens and seconds per LLM decision. Accuracy is printed for reference only: a 135M model
decides poorly; this judges the wire path (valid, bounded, parked on failure).
Works against older memman trees too (`PYTHONPATH=/path/to/old/tree`), for before/after.
"""

from __future__ import annotations

import argparse
import time
from dataclasses import dataclass, field
from pathlib import Path

from memman import MemoryManager
from memman.cli.demo import DEMO_USER, demo_facts
from memman.config import load_settings
from memman.tuning.evaluate import load_cases, run_case

ROOT = Path(__file__).resolve().parents[1]


@dataclass
class Tally:
    decisions: int = 0  # reached the LLM decider
    parked: int = 0
    calls: int = 0
    tokens: int = 0
    seconds: float = 0.0
    correct: list[bool] = field(default_factory=list)

    def line(self, name: str) -> str:
        n = max(self.decisions, 1)
        valid = self.decisions - self.parked
        extra = f", correct {sum(self.correct)}/{len(self.correct)}" if self.correct else ""
        return (
            f"{name}: {self.decisions} LLM decisions, valid {valid}/{self.decisions}"
            f" ({100 * valid / n:.0f} %), parked {self.parked}; per decision"
            f" {self.calls / n:.2f} calls, {self.tokens / n:.0f} tokens,"
            f" {self.seconds / n:.1f} s{extra}"
        )


def demo(settings) -> Tally:
    tally = Tally()
    with MemoryManager(":memory:", settings=settings.model_copy(update={"db": ":memory:"})) as mm:
        for item in demo_facts():
            started = time.perf_counter()
            result = mm.update_memory(item.fact, user_id=DEMO_USER)
            took = time.perf_counter() - started
            (event,) = mm.events(user_id=DEMO_USER, limit=1)
            if event.model is None:  # settled before the LLM (hash, novel, lexical)
                continue
            tally.decisions += 1
            tally.parked += result.op.value == "PENDING"
            tally.calls += event.attempts or 1
            tally.tokens += event.tokens or 0
            tally.seconds += took
    return tally


def cases(settings, path: Path) -> Tally:
    tally = Tally()
    for case in load_cases(path):
        started = time.perf_counter()
        outcome, _ = run_case(case, settings)
        took = time.perf_counter() - started
        if not outcome.llm_calls:
            continue
        tally.decisions += 1
        tally.parked += outcome.op == "PENDING"
        tally.calls += outcome.llm_calls
        tally.tokens += outcome.tokens
        tally.seconds += took
        tally.correct.append(outcome.correct)
    return tally


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=Path, default=ROOT / "evals" / "cases.jsonl")
    args = parser.parse_args()
    settings = load_settings()
    print(f"model {settings.llm_model} at {settings.llm_base_url}, llm_mode {settings.llm_mode}")
    started = time.perf_counter()
    print(demo(settings).line("demo"))
    print(cases(settings, args.cases).line("eval cases"))
    print(f"total {time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
