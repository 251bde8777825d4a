"""What erasing one user costs, and proof that it erased: `forget` on a store of many users.

    python benchmarks/bench_forget.py [--memories 20000] [--users 20]

Each user gets memories/users facts through update_many (offline), each with a word unique to
the user, then half of them are deleted and the store is checkpointed. One user is forgotten.
Reported: the time of forget (purge transaction + FTS optimize + VACUUM + checkpoint), the file
size before and after, the rows erased, and whether any of the user's words is left in the raw
bytes of the database and its WAL (it must be 0) while another user's words are still there.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from memman import MemoryManager


def raw(path: Path) -> bytes:
    return b"".join(p.read_bytes() for p in (path, Path(f"{path}-wal")) if p.exists())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--memories", type=int, default=20_000)
    parser.add_argument("--users", type=int, default=20)
    args = parser.parse_args()
    per_user = args.memories // args.users
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "forget.db"
        with MemoryManager(str(path)) as mm:
            for u in range(args.users):
                facts = [f"User collects item {n} of kind qzx{u}x{n}" for n in range(per_user)]
                results = mm.update_many(facts, user_id=f"user{u}")
                for result in results[::2]:
                    mm.delete(result.memory_id, user_id=f"user{u}")
            mm.store.scrub()
            size_before = path.stat().st_size
            started = time.perf_counter()
            report = mm.forget("user0")
            elapsed = time.perf_counter() - started
            size_after = path.stat().st_size
            data = raw(path)
            left = sum(f"qzx0x{n}".encode() in data for n in range(per_user))
            kept = sum(f"qzx1x{n}".encode() in data for n in range(per_user))
    print(f"store: {args.users} users x {per_user} memories (half deleted)")
    print(f"forget user0: {elapsed:.2f} s; {report}")
    print(f"file: {size_before / 2**20:.1f} MB before, {size_after / 2**20:.1f} MB after")
    print(f"user0's words left in the bytes: {left} of {per_user}")
    print(f"user1's words present: {kept} of {per_user}")


if __name__ == "__main__":
    main()
