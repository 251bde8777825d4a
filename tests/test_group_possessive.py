"""A group's possessive is "its" or "their" by style (roles._OWNER): "the company sells its
products online" restates "the company sells their products online". "it" and "they" as
subjects still name different ones."""

from __future__ import annotations

from memman import MemoryManager
from tests.test_pair_rules import assert_both_kept, assert_lexical_noop


def test_its_and_their_name_the_same_owner(tmp_path):
    with MemoryManager(str(tmp_path / "m.db")) as mm:
        assert_lexical_noop(
            mm, "The company sells their products online", "The company sells its products online"
        )


def test_it_and_they_as_subjects_stay_apart(tmp_path):
    with MemoryManager(str(tmp_path / "m.db"), noop_jaccard=0.6) as mm:
        assert_both_kept(mm, "Says it is too late to apply", "Says they are too late to apply")
