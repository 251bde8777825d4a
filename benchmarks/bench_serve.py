"""`memman serve` under concurrent clients: N clients x M mixed requests, on 127.0.0.1 only.

    PYTHONPATH=$PWD python benchmarks/bench_serve.py [--clients 8] [--requests 200]
    .ci/postgres run env PYTHONPATH=$PWD python benchmarks/bench_serve.py --pg --workers 4

Starts the real command (`python -m memman serve`) in a subprocess on a free loopback port
with a fresh store (a SQLite file in a temp folder, one worker; or with --pg a fresh
database on the server MEMMAN_TEST_PG_URL names, --workers processes), waits until it
answers, then runs `clients` threads, each with its own httpx client and its own user, each
sending `requests` requests: add 40% (POST /memories, a new fact each time, infer=False),
search 30% (POST /search), list 20% (GET /memories), get 10% (GET /memories/{id} of one of its
own). Offline decider, no LLM. Reports errors (any status but 200), lost writes (ADDs
acknowledged but not listed afterwards), and p50/p99 latency (ms, wall, client side) per kind,
and requests per second. Bounded: every request has a timeout, the server is stopped at the end.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import random
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # tests.postgres: a fresh database on the test server

KINDS = (("add", 0.4), ("search", 0.3), ("list", 0.2), ("get", 0.1))
WORDS = "jazz tea chess hiking sushi piano cycling opera kayaking pottery salsa origami".split()
START_DEADLINE_S = 60.0


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start(db: str, port: int, workers: int) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    command = [sys.executable, "-m", "memman", "serve", "--db", db, "--port", str(port)]
    server = subprocess.Popen(
        [*command, "--workers", str(workers)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + START_DEADLINE_S
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise SystemExit(f"memman serve exited: {server.stderr.read()}")
        try:
            if httpx.get(f"http://127.0.0.1:{port}/openapi.json", timeout=2).is_success:
                return server
        except httpx.TransportError:
            time.sleep(0.1)  # the server is still starting: nothing else to wait on
    server.terminate()
    raise SystemExit("memman serve did not answer in time")


def client(url: str, number: int, requests: int, seed: int, out: dict) -> None:
    rng = random.Random(seed * 1000 + number)
    user = f"client-{number}"
    times: dict[str, list[float]] = {kind: [] for kind, _ in KINDS}
    errors: list[str] = []
    added: list[str] = []
    with httpx.Client(base_url=url, timeout=60) as http:
        for n in range(requests):
            kind = rng.choices([k for k, _ in KINDS], [w for _, w in KINDS])[0]
            if kind == "get" and not added:
                kind = "add"
            began = time.perf_counter()
            if kind == "add":
                fact = f"Fact {n} of {user}: likes {rng.choice(WORDS)} number {n}"
                body = {
                    "messages": [{"role": "user", "content": fact}],
                    "user_id": user,
                    "infer": False,
                }
                answer = http.post("/memories", json=body)
            elif kind == "search":
                query = {"query": rng.choice(WORDS), "filters": {"user_id": user}, "top_k": 5}
                answer = http.post("/search", json=query)
            elif kind == "list":
                answer = http.get("/memories", params={"user_id": user, "top_k": 50})
            else:
                answer = http.get(f"/memories/{rng.choice(added)}", params={"user_id": user})
            times[kind].append((time.perf_counter() - began) * 1000)
            if answer.status_code != 200:
                errors.append(f"{kind} {answer.status_code} {answer.text[:200]}")
            elif kind == "add":
                added += [r["id"] for r in answer.json()["results"] if r["event"] == "ADD"]
        listed = http.get("/memories", params={"user_id": user, "top_k": 1000}).json()
    found = {item["id"] for item in listed["results"]}
    out[number] = {"times": times, "errors": errors, "lost": len(set(added) - found)}


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))] if ordered else float("nan")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--requests", type=int, default=200)
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--pg", action="store_true", help="a fresh database on the test server")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()

    with contextlib.ExitStack() as stack:
        if args.pg:
            from tests.postgres import URL_VARIABLE, fresh_database

            if not os.environ.get(URL_VARIABLE):
                raise SystemExit(f"--pg needs {URL_VARIABLE}: run under .ci/postgres run")
            db = stack.enter_context(fresh_database(os.environ[URL_VARIABLE]))
        else:
            db = str(Path(stack.enter_context(tempfile.TemporaryDirectory())) / "served.db")
        port = free_port()
        server = start(db, port, args.workers)
        try:
            out: dict[int, dict] = {}
            url = f"http://127.0.0.1:{port}"
            threads = [
                threading.Thread(target=client, args=(url, n, args.requests, args.seed, out))
                for n in range(args.clients)
            ]
            began = time.perf_counter()
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join()
            wall = time.perf_counter() - began
        finally:
            server.terminate()
            server.wait(30)

    store = "PostgreSQL" if args.pg else "SQLite"
    total = args.clients * args.requests
    errors = [e for result in out.values() for e in result["errors"]]
    print(f"{store}, {args.workers} worker(s), {args.clients} clients x {args.requests} requests")
    print(f"requests: {total} in {wall:.1f} s = {total / wall:.0f}/s")
    print(f"errors: {len(errors)}  lost writes: {sum(r['lost'] for r in out.values())}")
    for line in errors[:5]:
        print("  ", line)
    print("| kind | n | p50 ms | p99 ms | mean ms |")
    print("|---|---|---|---|---|")
    for kind, _ in KINDS:
        values = [t for result in out.values() for t in result["times"][kind]]
        print(
            f"| {kind} | {len(values)} | {percentile(values, 0.5):.1f} | "
            f"{percentile(values, 0.99):.1f} | {statistics.fmean(values):.1f} |"
        )


if __name__ == "__main__":
    main()
