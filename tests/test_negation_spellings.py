"""A negation spelled another way is the same negation (text.negations reads "don't", "isn't"
and "no" as "not"): restating a negative fact is a NOOP, not a second memory. Another negation
word ("never"), a modal's ("can't") and a negation added or dropped still tell two facts
apart."""

from __future__ import annotations

import pytest

from memman import MemoryManager, Op
from tests.test_pair_rules import assert_lexical_noop

SAME_NEGATION = [
    ("I don't like jazz", "I do not like jazz"),
    ("User does not eat meat", "User doesn't eat meat"),
    ("The protections do not apply in this case", "The protections don't apply in this case"),
]


@pytest.mark.parametrize(("stored", "candidate"), SAME_NEGATION)
def test_a_negation_spelled_another_way_is_a_lexical_noop(tmp_path, stored, candidate):
    with MemoryManager(str(tmp_path / "m.db")) as mm:
        assert_lexical_noop(mm, stored, candidate)


@pytest.mark.parametrize(
    ("stored", "candidate"),
    [
        ("I never eat meat", "I do not eat meat"),
        ("I do not cook", "I can't cook"),
        ("I like jazz", "I don't like jazz"),
    ],
)
def test_another_negation_is_not_a_noop(tmp_path, stored, candidate):
    with MemoryManager(str(tmp_path / "m.db")) as mm:
        mm.update_memory(stored, user_id="u")
        assert mm.update_memory(candidate, user_id="u").op is not Op.NOOP


@pytest.mark.parametrize(
    ("stored", "candidate"),
    [
        ("User has no car", "User does not have a car"),
        ("I have no siblings", "I don't have any siblings"),
    ],
)
def test_denying_what_a_memory_already_denies_restates_it(tmp_path, stored, candidate):
    """ "has no car" states no car: "does not have a car" is not a take-back of it (it was an
    UPDATE "takes back 'a car', which this memory states" before), but the same fact."""
    with MemoryManager(str(tmp_path / "m.db")) as mm:
        first = mm.update_memory(stored, user_id="u")
        again = mm.update_memory(candidate, user_id="u")
        assert (again.op, again.memory_id) == (Op.NOOP, first.memory_id)
        assert [m.content for m in mm.list(user_id="u")] == [stored]
