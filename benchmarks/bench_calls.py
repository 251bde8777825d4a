"""LLM calls and tokens per fact when one long conversation's facts are written.

    python benchmarks/bench_calls.py [--facts 2500] [--seed 1] [--embedder local] [--batch 8]
        [--offline]

One user states the facts of many MSC personas (train split, first person, distinct texts,
in a seeded order) one after another, as a long-running chat accumulates them. Each fact goes
through update_memory with an LLM configured: the local fake OpenAI-compatible server
(tests/fake_openai.py) answers every decision call with ADD, so the store grows as it would
if the model kept every fact, and the calls it receives are counted. This measures routing
(how often memman asks the LLM, and how much it sends), not decision quality. With
--batch N the facts arrive N at a time through update_many, as one extraction's facts do, so
the independent ambiguous ones of a batch share one decision call; the fake server then answers
every candidate of a batch call with ADD.

With --offline no LLM is configured (the offline decider; no calls): the rows the second
pass adds without any LLM.

Then the same facts are written again: rows added by the second pass (goal 0), its calls,
and the first facts it added (`added_again`).
Reported: calls per fact, prompt tokens per fact (the server's usage counts 100 per call, so
tokens are counted from the prompt text at ~4 characters per token), the tiers that settled
the facts, and the store size.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from memman import MemoryManager, Op  # noqa: E402
from tests.decisions import add_everything  # noqa: E402
from tests.fake_openai import FakeOpenAI  # noqa: E402

DATA = (
    Path(os.environ.get("MEMMAN_DATA", ROOT.parent / "shared" / "data"))
    / "msc"
    / "msc_personas_all.json"
)
CHARS_PER_TOKEN = 4


def persona_facts(count: int, seed: int) -> list[str]:
    data = json.loads(DATA.read_text(encoding="utf-8"))
    personas = [
        facts
        for dialogue in data["train"]
        for name, facts in dialogue.items()
        if name.startswith("Speaker")
    ]
    random.Random(seed).shuffle(personas)
    chosen: list[str] = []
    for facts in personas:
        chosen.extend(f for f in facts if f not in chosen)
        if len(chosen) >= count:
            break
    return chosen[:count]


def write_all(mm: MemoryManager, server: FakeOpenAI, facts: list[str], batch: int) -> dict:
    before = len(server.requests)
    started_cpu, started = time.process_time(), time.perf_counter()
    tiers: Counter[str] = Counter()
    added: list[str] = []
    for start in range(0, len(facts), batch):
        chunk = facts[start : start + batch]
        results = (
            [mm.update_memory(chunk[0], user_id="chat")]
            if batch == 1
            else mm.update_many(chunk, user_id="chat")
        )
        tiers.update(r.tier.value for r in results)
        added.extend(text for text, r in zip(chunk, results, strict=True) if r.op is Op.ADD)
    cpu, wall = time.process_time() - started_cpu, time.perf_counter() - started
    calls = [r for r in server.requests[before:] if r["path"].endswith("/chat/completions")]
    prompt_chars = sum(len(m["content"]) for r in calls for m in r["json"]["messages"])
    return {
        "facts": len(facts),
        "calls": len(calls),
        "calls_per_fact": round(len(calls) / len(facts), 3),
        "prompt_tokens_per_fact": round(prompt_chars / CHARS_PER_TOKEN / len(facts), 1),
        "tiers": dict(tiers.most_common()),
        "active_after": len(mm.list(user_id="chat")),
        "cpu_ms_per_fact": round(cpu * 1000 / len(facts), 2),
        "wall_ms_per_fact": round(wall * 1000 / len(facts), 2),
        "added": added,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--facts", type=int, default=2500)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--embedder", default="none")
    parser.add_argument("--batch", type=int, default=1, help="facts per update_many call")
    parser.add_argument("--offline", action="store_true", help="no LLM: the offline decider")
    parser.add_argument("--json", type=Path, help="also write the figures to this file")
    args = parser.parse_args()

    facts = persona_facts(args.facts, args.seed)
    server = FakeOpenAI(default_reply=add_everything).start()
    try:
        llm = {
            "llm_model": "fake-model",
            "llm_api_key": "x",
            "llm_base_url": server.base_url,
            "llm_mode": "tools",
        }
        with tempfile.TemporaryDirectory() as tmp, MemoryManager(
            str(Path(tmp) / "calls.db"),
            embedder=args.embedder,
            **({"decider": "offline"} if args.offline else llm),
        ) as mm:
            first = write_all(mm, server, facts, args.batch)
            again = write_all(mm, server, facts, args.batch)
    finally:
        server.stop()
    again["rows_added"] = again["active_after"] - first["active_after"]
    again["added_again"] = again["added"][:20]
    del first["added"], again["added"]
    report = {"first pass": first, "same facts again": again}
    for name, figures in report.items():
        print(f"{name}:")
        for key, value in figures.items():
            print(f"  {key}: {value}")
    if args.json:
        args.json.write_text(json.dumps(report, indent=2), encoding="utf-8")


if __name__ == "__main__":
    main()
