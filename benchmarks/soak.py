"""Issue 29's soak: 8 processes on one SQLite store, random SIGKILLs, then an audit. Run from
the repo root:

    python -m benchmarks.soak [--minutes 30] [--seed 29] [--workdir DIR]
                              [--backend postgres --dsn URL]

A supervisor starts the fake OpenAI-compatible server (tests/fake_openai.py, answering as
bench_turns' model that keeps every fact: extractions return the user's messages, decisions
ADD; a "User now lives in X" candidate shown a "User lives in Y" memory is an UPDATE of it; one
call in 10 answers 500, so facts park and messages wait) and 8 worker processes on one store:

  0 update_memory    unique facts of 4 users, and supersession pairs (one user per pair)
  1 update_many      batches of 5 unique facts
  2 observe + flush  unique user messages in sessions, flush every 3 (extraction + decisions)
  3, 4 search        search and context for the 4 users, timed
  5 consolidate      consolidate() in a loop (it also extracts sessions left idle 30 s)
  6 retry            retry_pending() in a loop
  7 export           export_jsonl (every status, events) to a file, import it into a fresh
                     store (a line it refuses, or a raise, is a corrupt export), check()

Every few seconds (uniform 1-6 s) the supervisor SIGKILLs a random worker and starts it again.
A call is acknowledged when it returned: the worker then appends a journal line (one write,
fsync'd) with the user and text. After --minutes the workers are stopped and the store audited:

  lost        an acknowledged fact with no trace: not parked, and no decision event for it
              whose memory is still there saying it, or was changed later by an event (an
              UPDATE, a merge, a decay: decided away with a record is not lost); a message not
              buffered and not extracted into such a fact
  duplicated  an acknowledged text active twice in its scope
  corrupt     PRAGMA integrity_check / the FTS check / MemoryManager.check() fail, or an
              export cannot be imported again (during the run, and at the end)
  untyped     an exception from the public API that is not a MemmanError

Exit status 1 if any of the four is not 0. Not a test: the figures depend on the machine.
"""

from __future__ import annotations

import argparse
import json
import logging
import multiprocessing
import os
import random
import re
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import traceback
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import sqlalchemy as sa

from benchmarks.bench_turns import memman_reply
from memman import MemmanError, MemoryManager
from memman.storage.maintenance import CheckReport
from tests.decisions import add_everything
from tests.fake_openai import FakeOpenAI, Reply, chat_completion
from tests.postgres import URL_VARIABLE, direct, fresh_database
from tests.reliability import integrity_problems

USERS = ("ana", "ben", "cleo", "dev")
ROLES = ("write", "batch", "observe", "search", "search", "consolidate", "retry", "export")
ACK_KINDS = ("write", "batch", "pair", "observe")
_VERBS = ("likes", "owns", "visited", "avoids", "collects", "repairs", "paints", "sells")
_THINGS = (
    "red bicycles", "green teapots", "old maps", "jazz records", "mountain huts", "paper kites",
    "blue orchids", "steam trains", "chess clocks", "wool scarves", "glass marbles", "brass bells",
)  # fmt: skip
_PLACES = ("Oslo", "Lima", "Perth", "Accra", "Quito", "Hanoi", "Tunis", "Riga", "Cork", "Bern")
# Of the model's calls answered 500: a fact parks (retry_pending decides it later), an
# extraction leaves its messages buffered (the next flush extracts them).
FAIL_SHARE = 0.1
SUPERSEDE = re.compile(r'^Candidate: "User now lives in ', re.M)
SHOWN = re.compile(r'^\[(\d+)\] \([^)]*\) "User lives in ', re.M)


# -- the fake model -------------------------------------------------------------------------------


def model_reply(request: dict, rng: random.Random) -> Reply:
    """bench_turns' model that keeps every fact, with UPDATEs for the supersession pairs and
    one call in 10 failing."""
    prompt = request["messages"][-1]["content"]
    deciding = re.search(r"^Candidate( \d+)?:", prompt, re.M) is not None
    if rng.random() < FAIL_SHARE:
        return Reply(500, {"error": {"message": "soak: the model is down"}})
    moving, shown = SUPERSEDE.search(prompt), SHOWN.search(prompt)
    if deciding and moving and shown:
        line = prompt[moving.start() :].splitlines()[0]
        content = json.loads(line.removeprefix("Candidate: "))
        args = {"decision": {"op": "UPDATE", "id": int(shown.group(1)), "content": content,
                             "reason": "moved"}}  # fmt: skip
        if "tools" in request:
            return Reply(body=chat_completion(tool_args=args))
        return Reply(body=chat_completion(content=json.dumps(args)))
    if deciding:
        return add_everything(request)
    return memman_reply(request, latency=False)


# -- the workers ------------------------------------------------------------------------------


class Journal:
    """A worker's journal: one JSON line per os.write on an O_APPEND file, fsync'd for acks, so
    a SIGKILL cuts at most the line being written (the reader skips a cut line)."""

    def __init__(self, path: Path):
        self.fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)

    def write(self, sync: bool = True, **fields: Any) -> None:
        os.write(self.fd, (json.dumps(fields) + "\n").encode())
        if sync:
            os.fsync(self.fd)


def fact(rng: random.Random, nonce: str) -> str:
    return (
        f"User {rng.choice(_VERBS)} {rng.choice(_THINGS)} from {rng.choice(_PLACES)}, lot {nonce}"
    )


def manager(path: str, base_url: str) -> MemoryManager:
    return MemoryManager(
        path,
        llm_model="fake-model",
        llm_api_key="soak",
        llm_base_url=base_url,
        llm_max_retries=0,
        llm_timeout_s=10,
        extract_cooldown_s=30,  # consolidate extracts the sessions a kill left behind
        lease_s=20,  # a killed worker's parked facts and sessions are free again soon
        # The fake model returns every message as a fact: a batch of at most ~30 messages
        # (a backlog after kills and failed calls) stays within an answer's maxItems.
        extract_batch_chars=2000,
        extract_max_facts=50,
        extract_retry_backoff_s=5,  # a failed extraction (one call in 10) waits 5 s, 10 s ...
    )


def worker(slot: int, life: int, path: str, base_url: str, journal_path: str) -> None:
    """One incarnation of a worker: its role's calls in a loop until killed."""
    logging.disable(logging.CRITICAL)
    role = ROLES[slot]
    rng = random.Random(f"{slot}-{life}-{os.getpid()}")
    journal = Journal(Path(journal_path))
    tag = f"{slot}x{life}"
    count = 0

    def call(name: str, run, *args: Any, **kwargs: Any):
        """run(*args, **kwargs) and its result; None after a typed error (journalled, not
        fatal) or an untyped one (journalled with its traceback)."""
        try:
            return run(*args, **kwargs)
        except MemmanError as error:
            journal.write(False, kind="typed", call=name, error=type(error).__name__)
        except Exception as error:  # the figure this soak exists to show is 0
            journal.write(
                kind="untyped",
                call=name,
                error=f"{type(error).__name__}: {error}",
                tb=traceback.format_exc(),
            )
        return None

    mm = call("open", manager, path, base_url)
    while mm is None:
        time.sleep(0.5)
        mm = call("open", manager, path, base_url)
    journal.write(False, kind="start", role=role)
    session = f"s{tag}"
    while True:
        count += 1
        nonce = f"{tag}x{count}"
        if role == "write":
            if count % 8 == 0:  # a supersession pair in a scope of its own
                user = f"p{nonce}"
                for text in (
                    f"User lives in {rng.choice(_PLACES)}",
                    f"User now lives in {rng.choice(_PLACES)} city",
                ):
                    r = call("update_memory", mm.update_memory, text, user_id=user)
                    if r is None:
                        break
                    journal.write(kind="pair", user=user, text=text, op=r.op.value, id=r.memory_id)
            else:
                user, text = rng.choice(USERS), fact(rng, nonce)
                r = call("update_memory", mm.update_memory, text, user_id=user)
                if r is not None:
                    journal.write(kind="write", user=user, text=text, op=r.op.value, id=r.memory_id)
        elif role == "batch":
            user = rng.choice(USERS)
            texts = [fact(rng, f"{nonce}x{n}") for n in range(5)]
            results = call("update_many", mm.update_many, texts, user_id=user)
            for text, r in zip(texts, results or [], strict=True):
                journal.write(kind="batch", user=user, text=text, op=r.op.value, id=r.memory_id)
        elif role == "observe":
            user = USERS[count % len(USERS)]
            text = fact(rng, nonce)
            message = [{"role": "user", "content": text}]
            if call("observe", mm.observe, message, user_id=user, session_id=session):
                journal.write(kind="observe", user=user, text=text, session=session)
            if count % 3 == 0:
                for who in USERS:
                    call("flush", mm.flush, session, user_id=who)
        elif role == "search":
            user = rng.choice(USERS)
            query = f"{rng.choice(_VERBS)} {rng.choice(_THINGS)} {rng.choice(_PLACES)}"
            started = time.perf_counter()
            if count % 4 == 0:
                done = call("context", mm.context, query, user_id=user)
            else:
                done = call("search", mm.search, query, user_id=user)
            if done is not None:
                ms = (time.perf_counter() - started) * 1000
                journal.write(False, kind="search", ms=round(ms, 3))
        elif role == "consolidate":
            report = call("consolidate", mm.consolidate, max_ops=100)
            if report is not None:
                journal.write(False, kind="consolidated")
            time.sleep(1.0)
        elif role == "retry":
            results = call("retry_pending", mm.retry_pending)
            if results is not None:
                journal.write(False, kind="retried", n=len(results))
            time.sleep(0.5)
        elif role == "export":
            export_round(mm, Path(journal_path).with_name(f"export-{life}.jsonl"), journal, call)
            time.sleep(2.0)


def export_round(mm: MemoryManager, out: Path, journal: Journal, call) -> None:
    """Export everything, import it into a fresh store, check the shared store."""
    with out.open("w", encoding="utf-8") as file:
        lines = call("export_jsonl", export_lines, mm)
        if lines is None:
            return
        file.writelines(line + "\n" for line in lines)
    problems = reimport_problems(out)
    report = call("check", mm.check)
    if report is not None:
        problems += damage(report, "check")
    journal.write(kind="exported", lines=len(lines), problems=problems)
    out.unlink()


def export_lines(mm: MemoryManager) -> list[str]:
    return list(mm.export_jsonl(include_inactive=True, events=True))


def reimport_problems(export: Path) -> list[str]:
    """Why an export does not import into a fresh store (none: it does)."""
    with tempfile.TemporaryDirectory() as tmp:
        try:
            with MemoryManager(str(Path(tmp) / "copy.db")) as copy:
                report = copy.import_jsonl(str(export))
                checked = copy.check()
        except MemmanError as error:
            return [f"import raised {type(error).__name__}: {error}"]
    problems = [f"import: {bad}" for bad in report.bad[:5]]
    return problems + damage(checked, "imported copy")


def damage(report: CheckReport, where: str) -> list[str]:
    """What check() found damaged. Not its stuck_pending: a fact the model failed on three
    times is parked, as it should be, and counted apart."""
    found = {
        "integrity": report.integrity,
        "fts": report.fts_error,
        "orphan vectors": report.orphan_vectors,
        "unreadable": report.unreadable,
        "without history": report.without_history,
    }
    return [f"{where}: {name} {value}" for name, value in found.items() if value]


# -- the audit ------------------------------------------------------------------------------------


@dataclass
class Audit:
    acknowledged: Counter = field(default_factory=Counter)  # per kind
    lost: list[str] = field(default_factory=list)
    duplicated: list[str] = field(default_factory=list)
    decided_twice: int = 0  # an acknowledged text with two non-PENDING decision events
    parked: int = 0  # acknowledged facts still in pending at the end


def read_journal(paths: list[Path]) -> list[dict]:
    lines = []
    for path in paths:
        for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
            try:
                lines.append(json.loads(line))
            except ValueError:
                continue  # the line a kill cut: never an ack
    return lines


def audit(path: str, lines: list[dict]) -> Audit:
    """Is every acknowledged write and message in the store, once? See the module docstring."""
    result = Audit()
    with direct(path) as conn:

        def rows(sql: str) -> list[tuple]:
            return [tuple(row) for row in conn.execute(sa.text(sql))]

        memories = {
            memory_id: (user, status, content)
            for memory_id, user, status, content in rows(
                "SELECT id, user_id, status, content FROM long_term WHERE agent_id = ''"
            )
        }
        decisions: dict[tuple[str, str], list[tuple[int, str, str | None]]] = {}
        later: dict[str, int] = {}  # memory id -> its newest event id
        for event_id, user, op, candidate, memory_id in rows(
            "SELECT id, user_id, op, candidate, memory_id FROM events ORDER BY id"
        ):
            if candidate is not None and op != "PENDING":
                decisions.setdefault((user, candidate), []).append((event_id, op, memory_id))
            if memory_id is not None:
                later[memory_id] = event_id
        parked = Counter(rows("SELECT user_id, content FROM pending"))
        buffered = {
            (user, content): extracted
            for user, content, extracted in rows(
                "SELECT user_id, content, extracted_at FROM message_buffer"
            )
        }
        active = Counter(rows("SELECT user_id, content FROM long_term WHERE status = 'active'"))

    def traced(user: str, text: str, memory_id: str | None) -> bool:
        """A decision for the text whose memory still says it or was changed by a later event
        (when memory_id is given: that memory's decision), or the text is parked."""
        if parked[(user, text)]:
            return True
        for event_id, op, decided in decisions.get((user, text), []):
            if memory_id is not None and decided != memory_id:
                continue
            if op in ("NOOP", "DELETE") and (decided is None or decided in memories):
                return True
            row = memories.get(decided)
            if (
                row is not None
                and row[0] == user
                and ((row[1], row[2]) == ("active", text) or later.get(decided, 0) > event_id)
            ):
                return True
        return False

    for line in lines:
        kind = line.get("kind")
        if kind not in ACK_KINDS:
            continue
        result.acknowledged[kind] += 1
        user, text = line["user"], line["text"]
        if kind == "observe":
            extracted = buffered.get((user, text), "gone")
            ok = extracted is None or traced(user, text, None)
        else:
            op = line["op"]
            memory_id = line["id"] if op in ("ADD", "UPDATE") else None
            ok = traced(user, text, memory_id)
            # An UPDATE acknowledged into a memory: the fact's own decision names that memory.
        if not ok:
            result.lost.append(f"{kind} {user}: {text!r} ({line.get('op', 'buffered')})")
        if active[(user, text)] > 1:
            result.duplicated.append(f"{user}: {text!r} active {active[(user, text)]} times")
        applied = [op for _, op, _ in decisions.get((user, text), [])]
        result.decided_twice += len(applied) > 1
        result.parked += parked[(user, text)] > 0
    result.duplicated = sorted(set(result.duplicated))
    return result


# -- the supervisor ---------------------------------------------------------------------------


def percentile(samples: list[float], share: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(len(ordered) * share))] if ordered else 0.0


def commit() -> str:
    done = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, check=False
    )
    dirty = subprocess.run(["git", "status", "--porcelain", "memman"], capture_output=True,
                           text=True, check=False).stdout.strip()  # fmt: skip
    return done.stdout.strip() + (" (memman modified)" if dirty else "")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=float, default=30.0)
    parser.add_argument("--seed", type=int, default=29)
    parser.add_argument("--workdir", type=Path, help="keep the store and journals here")
    parser.add_argument("--backend", choices=["sqlite", "postgres"], default="sqlite")
    parser.add_argument(
        "--dsn",
        default=os.environ.get(URL_VARIABLE),
        help="postgres: a server's URL; the soak runs in a fresh database on it (dropped after)",
    )
    args = parser.parse_args()
    logging.disable(logging.CRITICAL)
    workdir = args.workdir or Path(tempfile.mkdtemp(prefix="soak-"))
    workdir.mkdir(parents=True, exist_ok=True)
    if args.backend == "sqlite":
        return soak(str(workdir / "soak.db"), args, workdir)
    if not args.dsn:
        parser.error(f"--backend postgres needs --dsn (or {URL_VARIABLE})")
    with fresh_database(args.dsn) as url:
        return soak(url, args, workdir)


def soak(path: str, args: argparse.Namespace, workdir: Path) -> int:
    rng = random.Random(args.seed)
    model_rng = random.Random(f"model-{args.seed}")
    server = FakeOpenAI(default_reply=lambda request: model_reply(request, model_rng)).start()
    with manager(path, server.base_url):
        pass  # make the store, and import the LLM client, before forking
    fork = multiprocessing.get_context("fork")
    lives = [0] * len(ROLES)
    journals = [workdir / f"journal-{slot}.jsonl" for slot in range(len(ROLES))]

    def start(slot: int) -> multiprocessing.Process:
        lives[slot] += 1
        proc = fork.Process(
            target=worker,
            args=(slot, lives[slot], path, server.base_url, str(journals[slot])),
            daemon=True,
        )
        proc.start()
        return proc

    print(f"soak: {workdir}, memman {commit()}, {args.minutes} minutes, {args.backend}", flush=True)
    procs = [start(slot) for slot in range(len(ROLES))]
    began = time.monotonic()
    kills = requests = 0
    try:
        while time.monotonic() - began < args.minutes * 60:
            time.sleep(rng.uniform(1.0, 6.0))
            slot = rng.randrange(len(ROLES))
            procs[slot].kill()
            procs[slot].join()
            kills += 1
            procs[slot] = start(slot)
            answered = len(server.requests)  # counted, not kept: 30 minutes of prompts
            requests += answered
            del server.requests[:answered]
            if kills % 50 == 0:
                minutes = (time.monotonic() - began) / 60
                print(f"  {minutes:5.1f} min, {kills} kills", flush=True)
    finally:
        for proc in procs:
            proc.kill()
            proc.join()
        server.stop()
    ran = (time.monotonic() - began) / 60
    return report(path, journals, ran, kills, requests + len(server.requests), workdir)


def report(
    path: str, journals: list[Path], minutes: float, kills: int, requests: int, workdir: Path
) -> int:
    lines = read_journal(journals)
    result = audit(path, lines)
    corrupt = integrity_problems(path)
    with MemoryManager(path) as mm:
        checked = mm.check()
        corrupt += damage(checked, "check")
        export = workdir / "final.jsonl"
        export.write_text(
            "".join(line + "\n" for line in mm.export_jsonl(include_inactive=True, events=True)),
            encoding="utf-8",
        )
        stats = mm.stats()
    corrupt += reimport_problems(export)
    exports = [line for line in lines if line.get("kind") == "exported"]
    corrupt += [p for line in exports for p in line["problems"]]
    untyped = [line for line in lines if line.get("kind") == "untyped"]
    typed = Counter(
        f"{line['call']}: {line['error']}" for line in lines if line.get("kind") == "typed"
    )
    searches = [line["ms"] for line in lines if line.get("kind") == "search"]
    done = Counter(line.get("kind") for line in lines)
    rows = [
        ("minutes", f"{minutes:.1f}"),
        ("kills (SIGKILL + restart)", kills),
        *((f"acknowledged: {kind}", result.acknowledged[kind]) for kind in ACK_KINDS),
        ("lost", len(result.lost)),
        ("duplicated (active twice)", len(result.duplicated)),
        ("corrupt", len(corrupt)),
        ("untyped errors", len(untyped)),
        ("typed errors", dict(typed) or 0),
        ("searches + contexts", len(searches)),
        (
            "search p50 / p99 ms",
            f"{statistics.median(searches or [0]):.1f} / {percentile(searches, 0.99):.1f}",
        ),
        (
            "consolidations / retry rounds / exports checked",
            f"{done['consolidated']} / {done['retried']} / {len(exports)}",
        ),
        ("acknowledged facts parked at the end", result.parked),
        ("parked facts check() calls stuck (3+ failures)", checked.stuck_pending),
        ("acknowledged texts decided twice (info)", result.decided_twice),
        ("model requests", requests),
        ("memories by status", stats["memories"]),
    ]
    width = max(len(name) for name, _ in rows)
    for name, value in rows:
        print(f"  {name:<{width}}  {value}")
    for title, items in (("lost", result.lost), ("duplicated", result.duplicated),
                         ("corrupt", corrupt)):  # fmt: skip
        for item in items[:10]:
            print(f"  {title}: {item}")
    for line in untyped[:3]:
        print(f"  untyped in {line['call']}: {line['error']}\n{line['tb']}")
    failed = result.lost or result.duplicated or corrupt or untyped
    return 1 if failed else 0


if __name__ == "__main__":
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))
    sys.exit(main())
