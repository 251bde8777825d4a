""" "a few" is "some" (roles._counts): "A few children are jumping on a trampoline" restates
"Some children are jumping on a trampoline". "few" alone says "not many" and stays apart."""

from __future__ import annotations

from memman import MemoryManager
from tests.test_pair_rules import assert_both_kept, assert_lexical_noop


def test_a_few_is_some(tmp_path):
    with MemoryManager(str(tmp_path / "m.db")) as mm:
        assert_lexical_noop(
            mm,
            "Some children are jumping on a trampoline",
            "A few children are jumping on a trampoline",
        )


def test_few_alone_is_not_some(tmp_path):
    with MemoryManager(str(tmp_path / "m.db"), noop_jaccard=0.6) as mm:
        assert_both_kept(mm, "Some people came to the party", "Few people came to the party")
