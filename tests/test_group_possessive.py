"""A group's possessive is "its" or "their" by style (roles._OWNER): "the company sells its
products online" restates "the company sells their products online". "it" and "they" as
subjects still name different ones."""

from __future__ import annotations

from memman import MemoryManager, Op, Tier
from tests.test_pair_rules import assert_both_kept


def test_its_and_their_name_the_same_owner(tmp_path):
    with MemoryManager(str(tmp_path / "m.db")) as mm:
        first = mm.update_memory("The company sells their products online", user_id="u")
        again = mm.update_memory("The company sells its products online", user_id="u")
    assert (again.op, again.tier, again.memory_id) == (Op.NOOP, Tier.LEXICAL, first.memory_id)


def test_it_and_they_as_subjects_stay_apart(tmp_path):
    with MemoryManager(str(tmp_path / "m.db"), noop_jaccard=0.6) as mm:
        assert_both_kept(mm, "Says it is too late to apply", "Says they are too late to apply")
