"""Write overhead against mem0: CPU per novel write at 5,000 memories, model cost removed.

Both libraries get one user holding N memories (MSC persona facts) and then write the same
held-out novel facts one at a time. mem0 2.x runs ``Memory.add(infer=True)`` with an
in-process fake LLM (swapped in after construction; it returns the message as the one
extracted fact, no I/O) and a fake hashing embedder (64 dims), over its default store (local
Qdrant in a temporary directory) and its SQLite history. memman runs ``update_memory`` with
the offline decider (in-process, no LLM call) on a SQLite file. What remains on both sides
is the library's own bookkeeping.

mem0 lives in its own venv (it pins its own dependencies), so its side runs in a subprocess:

    python3 -m venv /tmp/mem0venv && /tmp/mem0venv/bin/pip install mem0ai==2.2.1
    MEMMAN_DATA=/work/shared/data python benchmarks/bench_vs_mem0.py --mem0-python \\
        /tmp/mem0venv/bin/python --memories 5000 --ops 100 --rounds 3

With `--old TREE` (a `git archive` of memman before a change) each round also writes with
that tree, each memman in its own process (benchmarks/sides.py), alternating which goes first.
CPU time (time.process_time) is the figure; wall time is beside it. mem0's spaCy extras are
not installed, so its lemmatisation and entity linking fall back to no-ops (cheaper for mem0).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import uuid
from collections import Counter
from pathlib import Path
from typing import Any

from sides import run_child, tree_options
from timing import medians, timed

DIMS = 64
FILL_BATCH = 500


def _vector(text: str) -> list[float]:
    """A deterministic 64-dim vector from the text's hash: an embedder that costs nothing."""
    digest = hashlib.sha512(text.encode()).digest()
    return [b / 255.0 for b in digest[:DIMS]]


class FakeEmbedding:
    """mem0 embedder provider: hashing vectors, no model."""

    def __init__(self, config=None):
        self.config = config

    def embed(self, text, memory_action=None):
        return _vector(text if isinstance(text, str) else json.dumps(text))

    def embed_batch(self, texts, memory_action="add"):
        return [self.embed(t, memory_action) for t in texts]


class FakeLLM:
    """mem0 LLM provider: the newest message is the one extracted fact, no I/O."""

    def __init__(self, config=None):
        self.config = config

    current = ""  # the fact being added, set by the caller before Memory.add

    def generate_response(self, messages, **kwargs):
        return json.dumps({"memory": [{"text": FakeLLM.current}]})


def mem0_config(workdir: str, llm: dict) -> Any:
    """mem0's MemoryConfig: an OpenAI LLM with this config, an OpenAI embedder of DIMS
    (replaced by FakeEmbedding once built), local Qdrant and the history in workdir."""
    from mem0.configs.base import MemoryConfig

    return MemoryConfig(
        llm={"provider": "openai", "config": llm},
        embedder={"provider": "openai", "config": {"api_key": "unused", "embedding_dims": DIMS}},
        vector_store={
            "provider": "qdrant",
            "config": {"path": str(Path(workdir) / "qdrant"), "embedding_model_dims": DIMS},
        },
        history_db_path=str(Path(workdir) / "history.db"),
    )


def _mem0_round(workdir: str, texts: dict) -> dict:
    """One mem0 round: a fresh store filled with the stored facts, then timed novel adds."""
    os.environ.setdefault("MEM0_TELEMETRY", "False")
    from mem0 import Memory

    # mem0 validates provider names against its own list, so it is built with OpenAI clients
    # (constructed offline, never called) and the fakes are put in their place, as mem0's own
    # tests mock them.
    memory = Memory(mem0_config(workdir, {"api_key": "unused"}))
    memory.llm, memory.embedding_model = FakeLLM(), FakeEmbedding()
    user = "user-0"
    stored = texts["stored"]
    for start in range(0, len(stored), FILL_BATCH):
        chunk = stored[start : start + FILL_BATCH]
        memory.vector_store.insert(
            vectors=[_vector(t) for t in chunk],
            ids=[str(uuid.uuid4()) for _ in chunk],
            payloads=[
                {"data": t, "hash": hashlib.md5(t.encode()).hexdigest(), "user_id": user}
                for t in chunk
            ],
        )

    def add(text: str) -> None:
        FakeLLM.current = text
        result = memory.add([{"role": "user", "content": text}], user_id=user, infer=True)
        if not result["results"]:
            raise RuntimeError(f"mem0 stored nothing for {text!r}")

    for text in texts["warm"]:
        add(text)
    return medians([timed(lambda t=t: add(t)) for t in texts["novel"]])


def _memman_round(workdir: str, texts: dict) -> dict:
    """One memman round: a fresh file filled with the stored facts, then timed novel writes."""
    from bench_scale import _fill

    from memman import MemoryManager
    from memman.config import load_settings

    path = str(Path(workdir) / "memman.db")
    _fill(path, [texts["stored"]])
    settings = load_settings(db=path, decider="offline")
    ops: list[str] = []
    with MemoryManager(path, settings=settings) as mm:

        def write(text: str) -> None:
            ops.append(mm.update_memory(text, user_id="user-0").op.value)

        for text in texts["warm"]:
            write(text)
        del ops[:]
        samples = [timed(lambda t=t: write(t)) for t in texts["novel"]]
    adds = [s for s, op in zip(samples, ops, strict=True) if op == "ADD"]
    return {**medians(samples), "add_only": medians(adds), "ops": Counter(ops)}


def _texts(memories: int, ops: int) -> dict:
    from bench_update import load_corpus

    facts, held_out = load_corpus()
    return {"stored": facts[:memories], "warm": held_out[:10], "novel": held_out[10 : 10 + ops]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--memories", type=int, default=5000)
    parser.add_argument("--ops", type=int, default=100, help="timed writes per round")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--mem0-python", default="/tmp/mem0venv/bin/python")
    tree_options(parser)  # --old: memman before a change, run beside this one each round
    parser.add_argument("--child-mem0", help=argparse.SUPPRESS)  # texts file
    parser.add_argument("--child-memman", help=argparse.SUPPRESS)  # texts file
    args = parser.parse_args()
    if args.child_mem0:
        texts = json.loads(Path(args.child_mem0).read_text())
        with tempfile.TemporaryDirectory() as tmp:
            os.environ.setdefault("MEM0_DIR", str(Path(tmp) / "mem0home"))
            print(json.dumps(_mem0_round(tmp, texts)))
        return
    if args.child_memman:
        with tempfile.TemporaryDirectory() as work:
            texts = json.loads(Path(args.child_memman).read_text())
            print(json.dumps(_memman_round(work, texts)))
        return
    texts = _texts(args.memories, args.ops)
    rounds: dict[str, list[dict]] = {"memman": [], "mem0": []}
    if args.old:
        rounds["memman, old tree"] = []
    with tempfile.TemporaryDirectory() as tmp:
        texts_path = Path(tmp) / "texts.json"
        texts_path.write_text(json.dumps(texts))
        for r in range(args.rounds):
            if args.old:  # each tree in its own process, the old one first in even rounds
                trees = [("memman, old tree", args.old), ("memman", args.new)]
                for side, tree in trees if r % 2 == 0 else trees[::-1]:
                    child = ["--child-memman", str(texts_path)]
                    rounds[side].append(run_child(tree, __file__, child))
            else:
                with tempfile.TemporaryDirectory() as work:
                    rounds["memman"].append(_memman_round(work, texts))
            env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
            env["MEM0_TELEMETRY"] = "False"
            out = subprocess.run(
                [args.mem0_python, __file__, "--child-mem0", str(texts_path)],
                env=env,
                check=True,
                capture_output=True,
                text=True,
                cwd=Path(__file__).parent,
            ).stdout
            rounds["mem0"].append(json.loads(out.strip().splitlines()[-1]))
            latest = {side: per[-1] for side, per in rounds.items()}
            print(json.dumps({"round": r, **latest}), file=sys.stderr)
    summary = {
        side: {m: statistics.median(x[m] for x in per) for m in ("cpu", "wall")}
        for side, per in rounds.items()
    }
    print(f"{args.memories} memories, median of {args.rounds} rounds x {args.ops} novel writes")
    print("| library | CPU ms / write | wall ms / write |")
    print("|---|---:|---:|")
    for side in [side for side in rounds if side != "mem0"]:
        summary[f"{side}, ADD decisions only"] = {
            m: statistics.median(x["add_only"][m] for x in rounds[side]) for m in ("cpu", "wall")
        }
    for side, fig in summary.items():
        print(f"| {side} | {fig['cpu']:.3f} | {fig['wall']:.3f} |")
    for side in [side for side in rounds if side != "mem0"]:
        mix = sum((Counter(x["ops"]) for x in rounds[side]), Counter())
        print(f"\n{side} decisions over all rounds: {dict(mix)} (mem0: every write an ADD)")
        ratio = summary["mem0"]["cpu"] / max(summary[side]["cpu"], 1e-9)
        print(f"mem0 / {side} CPU per write: {ratio:.1f}x")


if __name__ == "__main__":
    main()
