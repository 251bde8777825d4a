"""What a batch of writes derives from a text, derived once for the batch.

Deciding one fact reads the texts of the memories it is compared with many times over: their
words, content tokens, topic (topic.about), wording, negations and numbers, and the Memory
built from each row read. Across an update_many the same memories come back for fact after
fact (persona facts share "like", "love", "dog"), and the facts written early are the
memories read later, so without a memo a batch spent about 1 ms of Python per fact redoing
that work (RESULTS.md, "Bulk ingest").

The memo is opened for one batch (`batch_memo`: update_many, ingest, a promotion, and
update_memory as a batch of one: deciding a single fact reads each text about ten times)
and dropped with it, and it never holds more than MEMO_ENTRIES results (it starts empty
again when full): not a process-wide lru_cache that grows with every text a long-running
service has seen. Outside a batch the memoised functions compute as before.

It is reached through a ContextVar rather than passed as an argument because the functions
it serves are pure functions of text, deep under the router, the topic rules and the
Decider protocol; each thread or task sees only its own memo. Only pure functions of their
arguments may be memoised, and their results must be immutable, since one result is handed
to every caller in the batch. Pairs (extends, negates of two texts) are not memoised: a
batch almost never compares the same two texts twice.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Hashable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, ParamSpec, TypeVar

P = ParamSpec("P")
R = TypeVar("R")

# About 10 results per fact written (its texts' and the retrieved rows'): some 3,000 facts
# before the memo starts over, and ~25-35 MB (peak RSS of an update_many of 5,000 / 20,000
# MSC facts: +4 / +30 MB before the memo, +27 / +65 MB with it). 50,000 results held
# ~55 MB for 1-2 % less CPU (RESULTS.md, "Bulk ingest").
MEMO_ENTRIES = 30_000


class _Memo(dict[Hashable, Any]):
    """The results of one batch, emptied when it reaches MEMO_ENTRIES."""

    def keep(self, key: Hashable, value: R) -> R:
        if len(self) >= MEMO_ENTRIES:
            self.clear()
        self[key] = value
        return value


_MEMO: ContextVar[_Memo | None] = ContextVar("memman_batch_memo", default=None)


@contextmanager
def batch_memo() -> Iterator[None]:
    """Memoise the pure functions below (see `memoized`, `recall`) until the block ends. A
    block inside another one shares the outer memo."""
    if _MEMO.get() is not None:
        yield
        return
    token = _MEMO.set(_Memo())
    try:
        yield
    finally:
        _MEMO.reset(token)


def memoized(function: Callable[P, R]) -> Callable[P, R]:
    """`function`, answered from the open batch memo when it has seen these arguments."""

    @functools.wraps(function)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        memo = _MEMO.get()
        if memo is None or kwargs:
            return function(*args, **kwargs)
        key = (function, *args)
        try:
            return memo[key]
        except KeyError:
            return memo.keep(key, function(*args))

    return wrapper


def recall(key: Hashable, make: Callable[[], R]) -> R:
    """make() once per key while a batch memo is open (e.g. a Memory per row read); the key
    must say everything make() depends on. Computes every time outside a batch, or when the
    key cannot be hashed."""
    memo = _MEMO.get()
    if memo is None:
        return make()
    try:
        return memo[key]
    except KeyError:
        return memo.keep(key, make())
    except TypeError:  # an unhashable value in the key (a driver's JSON column, say)
        return make()
