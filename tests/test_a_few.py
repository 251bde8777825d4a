""" "a few" is "some" (roles._counts): "A few children are jumping on a trampoline" restates
"Some children are jumping on a trampoline". "few" alone says "not many" and stays apart."""

from __future__ import annotations

from memman import MemoryManager, Op, Tier
from tests.test_pair_rules import assert_both_kept


def test_a_few_is_some(tmp_path):
    with MemoryManager(str(tmp_path / "m.db")) as mm:
        first = mm.update_memory("Some children are jumping on a trampoline", user_id="u")
        again = mm.update_memory("A few children are jumping on a trampoline", user_id="u")
    assert (again.op, again.tier, again.memory_id) == (Op.NOOP, Tier.LEXICAL, first.memory_id)


def test_few_alone_is_not_some(tmp_path):
    with MemoryManager(str(tmp_path / "m.db"), noop_jaccard=0.6) as mm:
        assert_both_kept(mm, "Some people came to the party", "Few people came to the party")
