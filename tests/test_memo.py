"""The batch memo (memman/memo.py): results derived once inside a batch, nothing kept after it,
never more than MEMO_ENTRIES at a time; a batch whose memo starts over decides the same."""

from __future__ import annotations

from collections.abc import Callable

import memman.memo
from memman.memo import batch_memo, memoized, recall
from tests.test_bulk_ingest import CORPUS, seeded, snapshot


def counting() -> tuple[list[str], Callable[[str], str]]:
    calls: list[str] = []

    @memoized
    def upper(text: str) -> str:
        calls.append(text)
        return text.upper()

    return calls, upper


def test_a_text_is_derived_once_per_batch_and_again_outside_one():
    calls, upper = counting()
    assert upper("a") == upper("a") == "A"
    assert calls == ["a", "a"]  # no batch: computed every time
    calls.clear()
    with batch_memo():
        assert [upper("a"), upper("b"), upper("a")] == ["A", "B", "A"]
        with batch_memo():  # an inner batch shares the outer memo
            upper("b")
    assert calls == ["a", "b"]
    calls.clear()
    with batch_memo():
        upper("a")
    assert calls == ["a"]  # the last batch's results were dropped with it


def test_the_memo_starts_over_when_full(monkeypatch):
    monkeypatch.setattr(memman.memo, "MEMO_ENTRIES", 3)
    calls, upper = counting()
    with batch_memo():
        for text in "abcd":
            upper(text)
        assert recall("key", lambda: 1) == 1
        assert recall("key", lambda: 2) == 1
        upper("a")
    assert calls == ["a", "b", "c", "d", "a"]  # "d" started it over: "a" was derived again


def test_a_batch_whose_memo_starts_over_decides_as_one_at_a_time(tmp_path, clock, monkeypatch):
    with seeded(str(tmp_path / "single.db"), clock) as single:
        one_by_one = [single.update_memory(fact, user_id="u") for fact in CORPUS]
        expected = snapshot(single)
    monkeypatch.setattr(memman.memo, "MEMO_ENTRIES", 5)
    with seeded(str(tmp_path / "bulk.db"), clock) as bulk:
        together = bulk.update_many(CORPUS, user_id="u")
        assert snapshot(bulk) == expected
    assert [(r.op, r.tier) for r in together] == [(r.op, r.tier) for r in one_by_one]
