"""On, at, in and through name one place when one is traded for another (roles._traded_place,
roles._places): STS-B's and SICK's "running through / in the grass", "a back bend on / at the
beach". benchmarks/bench_pairs.py measures the rule on the public pair sets."""

from __future__ import annotations

import pytest

from memman import MemoryManager, Op
from tests.test_pair_rules import assert_both_kept, assert_lexical_noop, bag_of_words  # noqa: F401 (a fixture)

BEACH = "A girl does a back bend on the beach"
BEACH_AGAIN = "A girl does a back bend at the beach"

# (stored, candidate): one place preposition traded for another, the same fact.
PLACE_TRADED = [
    (BEACH, BEACH_AGAIN),
    ("A black dog is running in the grass", "The black dog is running through the grass"),
    ("A passenger train is waiting at a station", "A passenger train is waiting in a station"),
]

# (stored, candidate): a place preposition beside another particle the other text lacks. Where
# a cosine vouches for a rewording (route._vouched), on and at read as in throughout
# (roles._places, unchanged), so these are offline cases.
PLACE_BESIDE_ANOTHER = [
    # "on" is said by both: it stands in no trade, and "in" against "out" is another fact
    (
        "A dog on a leash is walking in the water",
        "The dog is on a leash and walking out of the water",
    ),
    # the candidate's "at" comes with a new clause; the memory's "for" and "to" are gone
    (
        "Police opened fire in the city after a crowd came for jobs they paid bribes to get",
        "Police opened fire in the city after a crowd came and threw stones at officers",
    ),
]


@pytest.mark.parametrize(("stored", "candidate"), PLACE_TRADED)
def test_a_place_preposition_traded_is_a_lexical_noop(tmp_path, stored, candidate):
    with MemoryManager(str(tmp_path / "m.db")) as mm:
        assert_lexical_noop(mm, stored, candidate)


def test_on_or_at_a_place_is_a_noop_with_an_embedder_too(tmp_path, bag_of_words):  # noqa: F811
    with MemoryManager(str(tmp_path / "m.db"), embedder="fake", noop_cosine=0.6) as mm:
        first = mm.update_memory(BEACH, user_id="u")
        again = mm.update_memory(BEACH_AGAIN, user_id="u")
    assert (again.op, again.memory_id) == (Op.NOOP, first.memory_id)


@pytest.mark.parametrize(("stored", "candidate"), PLACE_BESIDE_ANOTHER)
def test_a_place_beside_another_particle_is_kept_beside(tmp_path, stored, candidate):
    with MemoryManager(str(tmp_path / "m.db"), noop_jaccard=0.6) as mm:
        assert_both_kept(mm, stored, candidate)
