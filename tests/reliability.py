"""Workers and checks shared by the reliability tests and benchmarks/stress.py.

The workers run in other processes (multiprocessing "spawn" writers, or forked writers
killed with SIGKILL), so they live in an importable module and take only plain arguments.

Every fact in the pool has the same number of content words, so the offline decider never
sees one fact strictly extend another: each write is an ADD or a NOOP, the text of every
acknowledged memory never changes, and "present" can be checked by content hash.
"""

from __future__ import annotations

import json
import random
import sqlite3
from dataclasses import dataclass

from memman import MemoryManager
from memman.config import Settings
from memman.models import Op
from memman.text import content_hash

USERS = ("alice", "bob")
_VERBS = ("likes", "owns", "visited", "avoids", "collects")
_NOUNS = (
    "red bicycles", "green teapots", "old maps", "jazz records", "mountain huts",
    "paper kites", "blue orchids", "steam trains", "chess clocks", "wool scarves",
)  # fmt: skip
FACTS = tuple(f"User {verb} {noun}" for verb in _VERBS for noun in _NOUNS)


@dataclass(frozen=True)
class Ack:
    """One write that update_memory acknowledged (returned a result for)."""

    user_id: str
    op: str
    memory_id: str | None
    content: str | None

    def line(self) -> str:
        return json.dumps(self.__dict__)


def pick_facts(seed: int, n: int) -> list[tuple[str, str]]:
    """n (user, fact) pairs from a small pool, so concurrent writers overlap heavily."""
    rng = random.Random(seed)
    return [(rng.choice(USERS), rng.choice(FACTS)) for _ in range(n)]


def offline_manager(path: str) -> MemoryManager:
    """A manager that never calls an LLM, whatever the environment says."""
    return MemoryManager(path, settings=Settings(db=path, decider="offline"))


def write_worker(path: str, seed: int, n: int) -> list[Ack]:
    """n update_memory calls; returns what was acknowledged (exceptions propagate)."""
    acks = []
    with offline_manager(path) as mm:
        for user, fact in pick_facts(seed, n):
            result = mm.update_memory(fact, user_id=user, source=f"w{seed}")
            acks.append(Ack(user, result.op.value, result.memory_id, result.content))
    return acks


@dataclass(frozen=True)
class Audit:
    acknowledged: int
    present: int
    duplicated: int  # (scope, content_hash) pairs stored more than once as active


def audit(path: str, acks: list[Ack]) -> Audit:
    """Is every acknowledged memory active with its text, and is no text active twice?"""
    conn = sqlite3.connect(path)
    try:
        active = {
            (user, agent, digest): memory_id
            for memory_id, user, agent, digest in conn.execute(
                "SELECT id, user_id, agent_id, content_hash FROM long_term WHERE status = 'active'"
            )
        }
        duplicated = conn.execute(
            "SELECT count(*) FROM (SELECT 1 FROM long_term WHERE status = 'active'"
            " GROUP BY user_id, agent_id, content_hash HAVING count(*) > 1)"
        ).fetchone()[0]
    finally:
        conn.close()
    present = sum(
        1
        for ack in acks
        if ack.content is not None
        and active.get((ack.user_id, "", content_hash(ack.content))) == ack.memory_id
    )
    return Audit(len(acks), present, duplicated)


def integrity_problems(path: str) -> list[str]:
    """SQLite's integrity check and the FTS5 index check, straight on the file."""
    conn = sqlite3.connect(path)
    try:
        problems = [r[0] for r in conn.execute("PRAGMA integrity_check") if r[0] != "ok"]
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master")}
        if "long_term_fts" in tables:
            try:
                conn.execute(
                    "INSERT INTO long_term_fts(long_term_fts, rank) VALUES('integrity-check', 1)"
                )
            except sqlite3.DatabaseError as error:
                problems.append(f"fts: {error}")
        return problems
    finally:
        conn.close()


def crash_writer(path: str, mode: str, seed: int, ack_path: str) -> None:
    """Write until killed; each acknowledged write becomes one line in ack_path.

    Every line is flushed to the OS before the next write starts, so a SIGKILL can cut at
    most the line being written, never one already acknowledged.
    """
    with open(ack_path, "w", buffering=1) as out, offline_manager(path) as mm:
        out.write(json.dumps({"opened": True}) + "\n")
        pairs = pick_facts(seed, 100_000)
        if mode == "batch":
            for start in range(0, len(pairs), 20):
                user = pairs[start][0]
                facts = [fact for _, fact in pairs[start : start + 20]]
                for r in mm.update_many(facts, user_id=user, chunk_size=10):
                    out.write(Ack(user, r.op.value, r.memory_id, r.content).line() + "\n")
        elif mode == "single":
            for user, fact in pairs:
                r = mm.update_memory(fact, user_id=user)
                out.write(Ack(user, r.op.value, r.memory_id, r.content).line() + "\n")


def read_acks(ack_path: str) -> list[Ack]:
    """The complete lines a crash_writer wrote (a line cut by the kill is not an ack)."""
    acks = []
    with open(ack_path) as lines:
        text = lines.read()
    for line in text.splitlines():
        try:
            fields = json.loads(line)
        except ValueError:
            continue
        if "op" in fields and fields["op"] != Op.PENDING.value:
            acks.append(Ack(**fields))
    return acks
