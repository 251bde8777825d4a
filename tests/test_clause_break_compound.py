"""A word after a clause break makes no compound of the word before it (wording._broken_after):
"gang raped in India, say police" extends "gang raped in India" ("India say" is no thing),
while "has a dog allergy" still does not extend "has a dog". benchmarks/bench_pairs.py and
RESULTS.md (session 10) measure the rule on the public pair sets."""

from __future__ import annotations

import pytest

from memman import MemoryManager, Op, Tier

# (stored, candidate): the candidate adds a phrase after a comma or a dash.
EXTENDED_AFTER_A_BREAK = [
    ("Swiss tourist gang raped in India", "Swiss tourist gang raped in India, say police"),
    ("User has a dog", "User has a dog, walks it every morning"),
    ("User collects stamps", "User collects stamps - spends weekends at fairs"),
]


@pytest.mark.parametrize(("stored", "candidate"), EXTENDED_AFTER_A_BREAK)
def test_a_phrase_after_a_break_extends_the_memory(tmp_path, stored, candidate):
    with MemoryManager(str(tmp_path / "m.db")) as mm:
        first = mm.update_memory(stored, user_id="u")
        again = mm.update_memory(candidate, user_id="u")
        active = [m.content for m in mm.list(user_id="u")]
    assert (again.op, again.tier, again.memory_id) == (Op.UPDATE, Tier.OFFLINE, first.memory_id)
    assert active == [candidate]


def test_a_memory_holding_the_statement_before_a_break_already_says_it(tmp_path):
    with MemoryManager(str(tmp_path / "m.db")) as mm:
        first = mm.update_memory("User has a dog, walks it every morning", user_id="u")
        again = mm.update_memory("User has a dog", user_id="u")
    assert (again.op, again.memory_id) == (Op.NOOP, first.memory_id)


def test_a_noun_right_after_the_run_still_opens_a_compound(tmp_path):
    with MemoryManager(str(tmp_path / "m.db")) as mm:
        mm.update_memory("User has a dog", user_id="u")
        again = mm.update_memory("User has a dog allergy", user_id="u")
        active = sorted(m.content for m in mm.list(user_id="u"))
    assert again.op is Op.ADD
    assert active == ["User has a dog", "User has a dog allergy"]
