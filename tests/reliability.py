"""Workers and checks shared by the reliability tests and benchmarks/stress.py.

The workers run in other processes (multiprocessing "spawn" writers, or forked writers
killed with SIGKILL), so they live in an importable module and take only plain arguments.

Every fact in the pool has the same number of content words, so the offline decider never
sees one fact strictly extend another: each write is an ADD or a NOOP, the text of every
acknowledged memory never changes, and "present" can be checked by content hash.
"""

from __future__ import annotations

import datetime as dt
import json
import random
import sqlite3
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import sqlalchemy as sa

from memman import MemoryManager
from memman.config import Settings
from memman.language.text import content_hash
from memman.models import Op
from memman.storage.backends import is_postgres_url
from memman.storage.store import Scope
from tests.fake_openai import Reply, chat_completion
from tests.postgres import direct

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


def pick_facts(seed: int, n: int, users: tuple[str, ...] = USERS) -> list[tuple[str, str]]:
    """n (user, fact) pairs from a small pool, so concurrent writers overlap heavily."""
    rng = random.Random(seed)
    return [(rng.choice(users), rng.choice(FACTS)) for _ in range(n)]


def offline_manager(path: str) -> MemoryManager:
    """A manager that never calls an LLM, whatever the environment says."""
    return MemoryManager(path, settings=Settings(db=path, decider="offline"))


def acked_writes(
    mm: MemoryManager, seed: int, n: int, users: tuple[str, ...] = USERS, source: str | None = None
) -> list[Ack]:
    """n update_memory calls through mm; what was acknowledged: one loop for every writer,
    a process or a thread (exceptions propagate)."""
    acks = []
    for user, fact in pick_facts(seed, n, users):
        result = mm.update_memory(fact, user_id=user, source=source)
        acks.append(Ack(user, result.op.value, result.memory_id, result.content))
    return acks


def write_worker(path: str, seed: int, n: int, users: tuple[str, ...] = USERS) -> list[Ack]:
    """n update_memory calls; returns what was acknowledged (exceptions propagate)."""
    with offline_manager(path) as mm:
        return acked_writes(mm, seed, n, users, source=f"w{seed}")


@dataclass(frozen=True)
class Audit:
    acknowledged: int
    present: int
    duplicated: int  # (scope, content_hash) pairs stored more than once as active


def audit(path: str, acks: list[Ack]) -> Audit:
    """Is every acknowledged memory active with its text, and is no text active twice?

    A writer killed before it created the schema leaves a file with no tables: nothing was
    acknowledged from it, and nothing is there to audit. path: a SQLite file or a PostgreSQL
    URL.
    """
    with direct(path) as conn:
        if not sa.inspect(conn).has_table("long_term"):
            return Audit(len(acks), 0, 0)
        active = {
            (user, agent, digest): memory_id
            for memory_id, user, agent, digest in conn.execute(
                sa.text(
                    "SELECT id, user_id, agent_id, content_hash FROM long_term"
                    " WHERE status = 'active'"
                )
            )
        }
        duplicated = conn.execute(
            sa.text(
                "SELECT count(*) FROM (SELECT 1 FROM long_term WHERE status = 'active'"
                " GROUP BY user_id, agent_id, content_hash HAVING count(*) > 1) AS copies"
            )
        ).scalar()
    present = sum(
        1
        for ack in acks
        if ack.content is not None
        and active.get((ack.user_id, "", content_hash(ack.content))) == ack.memory_id
    )
    return Audit(len(acks), present, duplicated)


def integrity_problems(path: str) -> list[str]:
    """SQLite's integrity check and the FTS5 index check, straight on the file; none for a
    PostgreSQL URL (the server checks its pages; the tsvector is a generated column)."""
    if is_postgres_url(path):
        return []
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


def crash_writer(
    path: str,
    mode: str,
    seed: int,
    ack_path: str,
    opened: Any = None,
    acked: Any = None,
) -> None:
    """Write until killed; each acknowledged write becomes one line in ack_path.

    Every line is flushed to the OS before the next write starts, so a SIGKILL can cut at
    most the line being written, never one already acknowledged. `opened` and `acked`
    (multiprocessing Events) are set once the store is open and once a write is acknowledged,
    so a kill meant for the writes, or for after one, waits for it.
    """
    with open(ack_path, "w", buffering=1) as out, offline_manager(path) as mm:
        out.write(json.dumps({"opened": True}) + "\n")
        if opened is not None:
            opened.set()

        def acknowledge(user: str, r: Any) -> None:
            out.write(Ack(user, r.op.value, r.memory_id, r.content).line() + "\n")
            if acked is not None:
                acked.set()

        pairs = pick_facts(seed, 100_000)
        if mode == "batch":
            for start in range(0, len(pairs), 20):
                user = pairs[start][0]
                facts = [fact for _, fact in pairs[start : start + 20]]
                for r in mm.update_many(facts, user_id=user, chunk_size=10):
                    acknowledge(user, r)
        elif mode == "single":
            for user, fact in pairs:
                acknowledge(user, mm.update_memory(fact, user_id=user))


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


# Crash trials during consolidation and during LLM extraction.

_WORDS = tuple(
    a + b for a in ("zor", "bel", "kim", "dun", "pax", "vor", "lum", "tar") for b in "aeiou"
)  # 40 invented words: seeded facts share few of them


def seed_near_duplicates(path: str, clock: Callable[[], dt.datetime], pairs: int) -> list[str]:
    """pairs facts, each stored twice in the same wording ("Also, the ..."): a merge.

    Stored as a loose import would (no dedup), two users, confidence under the protected
    level; every fifth pair so low that a month of decay archives it.
    """
    rng = random.Random(f"near-{pairs}")
    stamp = clock().isoformat(timespec="milliseconds")
    with MemoryManager(path, clock=clock) as mm:

        def seed(conn) -> list[str]:
            ids = []
            for n in range(pairs):
                base = "User keeps " + " ".join(rng.sample(_WORDS, 7))
                for text in (base, f"Also, the {base}."):
                    memory_id = mm.store.insert_memory(
                        conn,
                        Scope(USERS[n % 2]),
                        content=text,
                        content_hash=content_hash(text),
                        now=stamp,
                        source=None,
                        metadata={},
                    )
                    ids.append(memory_id)
            return ids

        ids = mm.store.write(seed)
    with direct(path) as conn:
        conn.execute(sa.text("UPDATE long_term SET confidence = 0.9"))
        conn.execute(sa.text("UPDATE long_term SET confidence = 0.105 WHERE pk % 10 IN (1, 2)"))
    return ids


def consolidate_writer(path: str, when: str, ack_path: str, midway: Any = None) -> None:
    """Run one consolidation (a month after seeding, so decay and archiving run too).

    With `midway` (a multiprocessing Event) it sets the event at the first progress report,
    after the first scope's merges are committed and before the rest, and waits there to be
    killed: a kill that lands mid-consolidation for certain, whatever the machine's load.
    """
    moment = dt.datetime.fromisoformat(when)

    def hold(phase: str, done: int, total: int) -> None:
        midway.set()
        threading.Event().wait()  # never set: the parent kills the process here

    with (
        open(ack_path, "w", buffering=1) as out,
        MemoryManager(
            path, settings=Settings(db=path, decider="offline"), clock=lambda: moment
        ) as mm,
    ):
        out.write(json.dumps({"opened": True}) + "\n")
        report = mm.consolidate(max_ops=100_000, progress=hold if midway is not None else None)
        out.write(json.dumps({"merged": report.count("merge")}) + "\n")


def lost_by_consolidation(path: str, ids: list[str]) -> list[str]:
    """Seeded memories that vanished, or whose status is not what a merge or decay leaves.

    A superseded memory must point at a representative still kept (active, or archived by
    the same run's decay) and have its audit event: status and event are one transaction.
    """
    with direct(path) as conn:
        rows = {
            memory_id: (status, json.loads(metadata).get("superseded_by"))
            for memory_id, status, metadata in conn.execute(
                sa.text("SELECT id, status, metadata FROM long_term")
            )
        }
        audited = set(
            conn.execute(
                sa.text("SELECT memory_id FROM events WHERE source = 'consolidation'")
            ).scalars()
        )
    problems = []
    for memory_id in ids:
        status, by = rows.get(memory_id, (None, None))
        if status not in {"active", "superseded", "archived"}:
            problems.append(f"{memory_id}: {status}")
        elif status == "superseded" and (
            rows.get(by, ("",))[0] not in {"active", "archived"} or memory_id not in audited
        ):
            problems.append(f"{memory_id}: superseded by {by}, event {memory_id in audited}")
    return problems


def extraction_reply(n: int, delay_s: float) -> Reply:
    """A slow extraction answer with one durable and one transient fact, unique per n."""
    words = random.Random(f"extract-{n}").sample(_WORDS, 6)
    facts = [
        {"content": f"User keeps {' '.join(words)}", "category": "misc", "importance": 5,
         "durability": "durable"},
        {"content": f"User is near {words[0]} now", "category": "misc", "importance": 2,
         "durability": "transient"},
    ]  # fmt: skip
    return Reply(
        body=chat_completion(tool_args={"facts": facts}, tool_name="ExtractedFacts"),
        delay_s=delay_s,
    )


def extract_writer(path: str, base_url: str, seed: int, ack_path: str) -> None:
    """observe() messages (cooldown never passes) and flush() every 3; ack each buffered one."""
    settings = Settings(
        db=path, llm_model="fake-model", llm_base_url=base_url, llm_api_key="test",
        llm_max_retries=0, llm_timeout_s=5, extract_cooldown_s=3600,
        novel_jaccard=0.99,  # every reply is an extraction: never ask the LLM to decide
    )  # fmt: skip
    session = f"s{seed}"
    with open(ack_path, "w", buffering=1) as out, MemoryManager(path, settings=settings) as mm:
        for n in range(100_000):
            content = f"message {seed}-{n}"
            mm.observe([{"role": "user", "content": content}], user_id="alice", session_id=session)
            out.write(json.dumps({"buffered": content}) + "\n")
            if n % 3 == 2:
                mm.flush(session, user_id="alice")


def lost_messages(path: str, ack_path: str) -> list[str]:
    """Acknowledged messages neither still buffered nor extracted into a written fact.

    Extracted means marked, and an audit event or short-term fact names the message's id
    in its source ("extraction:<ids>"): marking happens only after the facts were written.
    """
    with open(ack_path) as lines:
        acked = [
            json.loads(line)["buffered"]
            for line in lines.read().splitlines()
            if line.endswith("}") and "buffered" in line
        ]
    with direct(path) as conn:
        rows = {
            content: (i, extracted)
            for i, content, extracted in conn.execute(
                sa.text("SELECT id, content, extracted_at FROM message_buffer")
            )
        }
        sources = list(
            conn.execute(
                sa.text(
                    "SELECT source FROM events WHERE source LIKE 'extraction:%'"
                    " UNION ALL SELECT source FROM short_term WHERE source LIKE 'extraction:%'"
                )
            ).scalars()
        )
    written = {int(i) for s in sources for i in s.removeprefix("extraction:").split(",")}
    lost = []
    for content in acked:
        if content not in rows:
            lost.append(f"{content}: not in the buffer")
        elif rows[content][1] is not None and rows[content][0] not in written:
            lost.append(f"{content}: marked extracted, no fact written")
    return lost


def extracted_messages(path: str) -> int:
    """How many buffered messages an extraction has finished with (marked extracted)."""
    with direct(path) as conn:
        return conn.execute(
            sa.text("SELECT count(*) FROM message_buffer WHERE extracted_at IS NOT NULL")
        ).scalar_one()
