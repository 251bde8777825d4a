"""LLM calls, prompt tokens and wall time per chat turn (issue 28): one `add` per user turn.

    python benchmarks/bench_turns.py [--turns 200] [--seed 1] [--latency] \\
        [--mem0-python /tmp/mem0venv/bin/python]

A chatbot remembers each turn as it happens: the user's message and the assistant's short
reply, once per turn, through memman's mem0 facade (`memman.mem0.Memory.add`, infer=True) and
through `observe` + `flush` on one session, with llm_turn_calls "one" and "two". The user's
messages are real first-person chat text: the MSC persona facts of many speakers, said one
after another by one user (benchmarks/bench_calls.persona_facts), so the store grows as a
long-running chat's does. The local fake OpenAI-compatible server (tests/fake_openai.py)
answers every request as a model that keeps every fact would: each user message is one
durable fact, ADDed (the combined call answers it with its decision, the extraction call with
the fact, a decision call with ADD), and counts what it is sent: calls per turn and prompt
tokens per turn (the request's message text at ~4 characters a token; "with schema" adds the
tool or response_format JSON the model also reads).

--latency makes the server sleep as a model would, 500 ms + 2 ms per 100 prompt tokens, and
reports wall time per turn (a benchmark, not a test). Without it the same latency is computed
from the counted calls and tokens plus memman's own wall time.

With --mem0-python (mem0ai 2.2.1 in its own venv, as bench_vs_mem0.py installs it), mem0's
`Memory.add(infer=True)` runs the same turns in a subprocess against its own fake server
(the same module, stdlib only), its LLM pointed at it and answered with the user's message as
the one extracted memory; its embedder is bench_vs_mem0's hashing fake (no model).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.fake_openai import FakeOpenAI, Reply, chat_completion  # noqa: E402

CHARS_PER_TOKEN = 4
BASE_S, PER_100_TOKENS_S = 0.5, 0.002  # the simulated model's latency
REPLY = "Noted, thanks for telling me."


def turns(count: int, seed: int) -> list[list[dict]]:
    """Each turn: the user's message and the assistant's reply."""
    from bench_calls import persona_facts

    return [
        [{"role": "user", "content": text}, {"role": "assistant", "content": REPLY}]
        for text in persona_facts(count, seed)
    ]


def prompt_tokens(request: dict) -> tuple[float, float]:
    """(the messages' text, the messages and the schema) in tokens."""
    text = sum(len(str(m.get("content") or "")) for m in request.get("messages", []))
    schema = len(json.dumps(request.get("tools") or request.get("response_format") or ""))
    return text / CHARS_PER_TOKEN, (text + schema) / CHARS_PER_TOKEN


def latency_s(tokens: float) -> float:
    return BASE_S + PER_100_TOKENS_S * tokens / 100


def asked(request: dict) -> str:
    if "tools" in request:
        return request["tools"][0]["function"]["name"]
    format_ = request.get("response_format") or {}
    return (format_.get("json_schema") or {}).get("name", "")


def user_lines(prompt: str) -> list[str]:
    """The user's messages quoted in an extraction prompt ('user: "..."')."""
    return [json.loads(m) for m in re.findall(r'^user: (".*")$', prompt, re.M)]


def memman_reply(request: dict, latency: bool) -> Reply:
    """A model that keeps every fact: the user's messages as facts, each an ADD."""
    from tests.decisions import add_everything

    name = asked(request)
    prompt = request["messages"][-1]["content"]
    if name in ("DecidedFacts", "ExtractedFacts"):
        facts = [
            {"content": text, "category": "other", "importance": 5, "durability": "durable"}
            for text in user_lines(prompt)
        ]
        if name == "DecidedFacts":
            facts = [{**f, "op": "ADD", "reason": "new"} for f in facts]
        args = {"facts": facts}
        body = (
            chat_completion(tool_args=args, tool_name=name)
            if "tools" in request
            else chat_completion(content=json.dumps(args))
        )
        reply = Reply(body=body)
    else:
        reply = add_everything(request)
    if latency:
        reply.delay_s = latency_s(prompt_tokens(request)[1])
    return reply


def figures(requests: list[dict], count: int, wall_s: float, cpu_s: float) -> dict[str, Any]:
    calls = [r["json"] for r in requests if r["path"].endswith("/chat/completions")]
    text = sum(prompt_tokens(r)[0] for r in calls)
    schema = sum(prompt_tokens(r)[1] for r in calls)
    simulated = sum(latency_s(prompt_tokens(r)[1]) for r in calls)
    return {
        "turns": count,
        "calls_per_turn": round(len(calls) / count, 3),
        "prompt_tokens_per_turn": round(text / count),
        "with_schema_per_turn": round(schema / count),
        "wall_ms_per_turn": round(wall_s * 1000 / count, 1),
        "cpu_ms_per_turn": round(cpu_s * 1000 / count, 1),
        # the model's simulated latency from the counts (without --latency it is not in wall)
        "simulated_model_ms_per_turn": round(simulated * 1000 / count, 1),
    }


def run_memman(chat: list[list[dict]], calls: str, way: str, latency: bool) -> dict[str, Any]:
    from memman import MemoryManager
    from memman.mem0 import Memory

    server = FakeOpenAI(default_reply=lambda request: memman_reply(request, latency)).start()
    try:
        with tempfile.TemporaryDirectory() as tmp:
            mm = MemoryManager(
                str(Path(tmp) / "turns.db"),
                llm_model="fake-model",
                llm_api_key="x",
                llm_base_url=server.base_url,
                llm_turn_calls=calls,
            )
            facade = Memory(manager=mm)
            cpu, wall = time.process_time(), time.perf_counter()
            for turn in chat:
                if way == "mem0.add":
                    facade.add(turn, user_id="chat")
                else:
                    mm.observe(turn, user_id="chat", session_id="s")
                    done = mm.flush("s", user_id="chat")
                    assert done.error is None, done.error
            cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
            result = figures(server.requests, len(chat), wall, cpu)
            result["active_after"] = len(mm.list(user_id="chat", limit=100_000))
            facade.close()
    finally:
        server.stop()
    return result


def run_mem0(chat: list[list[dict]], latency: bool) -> dict[str, Any]:
    """mem0 2.2.1's add per turn (in mem0's venv), against a fake server of its own."""
    os.environ["MEM0_TELEMETRY"] = "False"
    from bench_vs_mem0 import FakeEmbedding, mem0_config
    from mem0 import Memory

    current = {"text": ""}

    def reply(request: dict) -> Reply:
        body = chat_completion(content=json.dumps({"memory": [{"text": current["text"]}]}))
        return Reply(body=body, delay_s=latency_s(prompt_tokens(request)[1]) if latency else 0)

    server = FakeOpenAI(default_reply=reply).start()
    try:
        with tempfile.TemporaryDirectory() as tmp:
            os.environ.setdefault("MEM0_DIR", str(Path(tmp) / "mem0home"))
            llm = {"api_key": "x", "model": "gpt-4o-mini", "openai_base_url": server.base_url}
            memory = Memory(mem0_config(tmp, llm))
            memory.embedding_model = FakeEmbedding()
            cpu, wall = time.process_time(), time.perf_counter()
            for turn in chat:
                current["text"] = turn[0]["content"]
                memory.add(turn, user_id="chat", infer=True)
            cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
            result = figures(server.requests, len(chat), wall, cpu)
            result["active_after"] = len(
                memory.get_all(filters={"user_id": "chat"}, top_k=100_000)["results"]
            )
    finally:
        server.stop()
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=200)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--latency", action="store_true", help="the server sleeps as a model")
    parser.add_argument("--mem0-python", help="a python with mem0ai 2.2.1 installed")
    parser.add_argument("--child-mem0", help=argparse.SUPPRESS)  # turns file
    args = parser.parse_args()
    if args.child_mem0:
        chat = json.loads(Path(args.child_mem0).read_text())
        print(json.dumps(run_mem0(chat, args.latency)))
        return
    chat = turns(args.turns, args.seed)
    report: dict[str, dict] = {}
    for way in ("mem0.add", "observe+flush"):
        for calls in ("one", "two"):
            report[f"memman {way}, {calls}"] = run_memman(chat, calls, way, args.latency)
            print(json.dumps({f"memman {way}, {calls}": report[f"memman {way}, {calls}"]}))
    if args.mem0_python:
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "turns.json"
            path.write_text(json.dumps(chat))
            child = [args.mem0_python, __file__, "--child-mem0", str(path)]
            env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
            out = subprocess.run(
                child + (["--latency"] if args.latency else []),
                env={**env, "MEM0_TELEMETRY": "False"},
                check=True,
                capture_output=True,
                text=True,
                cwd=Path(__file__).parent,
            ).stdout
        report["mem0 2.2.1 add"] = json.loads(out.strip().splitlines()[-1])
    print(f"\n{args.turns} turns, latency {'slept' if args.latency else 'computed'}")
    print(
        "| run | calls / turn | prompt tokens / turn | with schema | memman/mem0 wall ms / turn"
        " | simulated model ms / turn | active memories |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|")
    for name, f in report.items():
        print(
            f"| {name} | {f['calls_per_turn']} | {f['prompt_tokens_per_turn']} |"
            f" {f['with_schema_per_turn']} | {f['wall_ms_per_turn']} |"
            f" {f['simulated_model_ms_per_turn']} | {f['active_after']} |"
        )


if __name__ == "__main__":
    main()
