"""The cheap tiers respect meaning: word order, prepositions, compounds, containment.

SICK-style pairs ("the turtle follows the fish" / "the fish follows the turtle") share every
content word, so a bag of words calls them duplicates; benchmarks/bench_pairs.py measures
the same rules on the public pair sets.
"""

from __future__ import annotations

import pytest

from memman import MemoryManager, Op, Tier
from memman.semantic.embed import register_embedder
from tests.decisions import answer, llm_manager
from tests.test_semantic_retrieval import FakeEmbedder

# (stored, candidate): the same content words, different facts.
SAME_WORDS_OTHER_MEANING = [
    ("The turtle follows the fish", "The fish follows the turtle"),
    ("A man gets into the car", "A man gets out of the car"),
    ("Turns the light on", "Turns the light off"),
    ("The cat sleeps in front of the door", "The cat sleeps behind the door"),
    # two roles traded in a statement long enough for a cosine to let clauses move
    (
        "The tall old man from the village follows the small young woman",
        "The small young woman from the village follows the tall old man",
    ),
    # "both" after the pair is a quantifier: the two do something together
    ("Paper is being cut with scissors", "Paper and scissors both cut"),
    # the same person as subject and object: a possessive is its subject form, "him" is not
    ("His brother helps him", "He helps his brother"),
    # one word moved to another noun, too short a statement to let clauses move
    (
        "The man in the hat is smoking a straw cigarette",
        "The man in the straw hat is smoking a cigarette",
    ),
]


@pytest.fixture
def bag_of_words():
    """The semantic tests' fake embedder: these pairs score like paraphrases."""
    register_embedder("fake", lambda settings: FakeEmbedder("fake-1"))


def active(mm: MemoryManager, user_id: str = "u") -> list[str]:
    return sorted(m.content for m in mm.list(user_id=user_id))


def assert_both_kept(mm: MemoryManager, stored: str, candidate: str) -> None:
    """The candidate is written as a fact of its own, the stored one untouched."""
    mm.update_memory(stored, user_id="u")
    assert mm.update_memory(candidate, user_id="u").op is Op.ADD
    assert active(mm) == sorted([stored, candidate])


def assert_lexical_noop(mm: MemoryManager, stored: str, candidate: str) -> None:
    """The candidate is the stored fact again: a NOOP onto it, settled by the lexical tier."""
    first = mm.update_memory(stored, user_id="u")
    again = mm.update_memory(candidate, user_id="u")
    assert (again.op, again.tier, again.memory_id) == (Op.NOOP, Tier.LEXICAL, first.memory_id)


@pytest.mark.parametrize(("stored", "candidate"), SAME_WORDS_OTHER_MEANING)
def test_same_words_in_other_roles_are_not_a_lexical_noop(tmp_path, stored, candidate):
    with MemoryManager(str(tmp_path / "m.db"), noop_jaccard=0.6) as mm:
        assert_both_kept(mm, stored, candidate)


@pytest.mark.parametrize(("stored", "candidate"), SAME_WORDS_OTHER_MEANING)
def test_same_words_in_other_roles_are_not_a_cosine_noop(tmp_path, bag_of_words, stored, candidate):
    with MemoryManager(str(tmp_path / "m.db"), embedder="fake", noop_cosine=0.6) as mm:
        assert_both_kept(mm, stored, candidate)


def test_neighbours_swapped_are_still_the_same_fact(tmp_path):
    with MemoryManager(str(tmp_path / "m.db")) as mm:
        assert_lexical_noop(mm, "Drinks coffee black", "Drinks black coffee")


def test_recall_does_not_fold_a_fact_into_its_role_swap(tmp_path):
    with MemoryManager(str(tmp_path / "m.db")) as mm:
        mm.update_memory("The turtle follows the fish", user_id="u")
        mm.update_memory("The fish follows the turtle", user_id="u")
        hits = mm.search("turtle fish", user_id="u")
    assert sorted(h.memory.content for h in hits) == [
        "The fish follows the turtle",
        "The turtle follows the fish",
    ]
    assert all(h.collapsed_ids == [] for h in hits)


@pytest.mark.parametrize(
    ("stored", "candidate"),
    [("Has a dog", "Has a dog allergy"), ("Likes coffee", "Likes coffee ice cream")],
)
def test_a_compound_noun_is_not_an_extension(tmp_path, stored, candidate):
    with MemoryManager(str(tmp_path / "m.db")) as mm:
        assert_both_kept(mm, stored, candidate)


def test_another_subject_is_not_an_extension(tmp_path):
    with MemoryManager(str(tmp_path / "m.db")) as mm:
        mm.update_memory("Likes jazz", user_id="u")
        result = mm.update_memory("My brother likes jazz", user_id="u")
        assert result.op is Op.ADD
        assert active(mm) == ["Likes jazz", "My brother likes jazz"]


@pytest.mark.parametrize(
    ("stored", "candidate"),
    [
        ("Lives in Berlin", "Lives in Berlin Kreuzberg since 2019"),
        ("Plays tennis", "Plays tennis twice a week at the club"),
        ("Speaks German", "Speaks German fluently and some Italian"),
        ("Has a dog", "Has a dog named Bruno"),
        ("Has a guitar", "Has a guitar and a piano"),
    ],
)
def test_refinements_still_extend_the_memory(tmp_path, stored, candidate):
    with MemoryManager(str(tmp_path / "m.db")) as mm:
        first = mm.update_memory(stored, user_id="u")
        result = mm.update_memory(candidate, user_id="u")
        assert (result.op, result.memory_id) == (Op.UPDATE, first.memory_id)
        assert active(mm) == [candidate]


def test_a_fact_an_update_extended_comes_back_as_a_noop(tmp_path):
    with MemoryManager(str(tmp_path / "m.db")) as mm:
        first = mm.update_memory("Likes jazz", user_id="u")
        mm.update_memory("Likes jazz and blues", user_id="u")
        again = mm.update_memory("likes jazz.", user_id="u")
        assert (again.op, again.tier, again.memory_id) == (Op.NOOP, Tier.LEXICAL, first.memory_id)
        assert "word for word" in again.reason
        assert active(mm) == ["Likes jazz and blues"]


def test_containment_is_settled_before_the_llm(tmp_path, fake_openai):
    fake_openai.script(answer("UPDATE", id=1, content="Likes jazz and blues"))
    mm = llm_manager(str(tmp_path / "m.db"), fake_openai.base_url)
    first = mm.update_memory("Likes jazz", user_id="u")
    assert mm.update_memory("Likes jazz and blues", user_id="u").op is Op.UPDATE
    again = mm.update_memory("Likes jazz", user_id="u")  # a second call would answer 500
    assert (again.op, again.tier, again.memory_id) == (Op.NOOP, Tier.LEXICAL, first.memory_id)
    assert len(fake_openai.requests) == 1
    assert active(mm) == ["Likes jazz and blues"]


def test_the_head_of_a_compound_is_not_contained(tmp_path):
    with MemoryManager(str(tmp_path / "m.db")) as mm:
        mm.update_memory("Has a dog allergy", user_id="u")
        result = mm.update_memory("Has a dog", user_id="u")
        assert result.op is Op.ADD
        assert active(mm) == ["Has a dog", "Has a dog allergy"]


@pytest.mark.parametrize(
    ("stored", "candidate"),
    [
        (  # an attribution moved to the end (MRPC)
            "The president's campaign in 2000 set a standard for disclosure in political fund"
            " raising, and the campaign will again in 2004, campaign spokesman Dan Ronayne said.",
            "The president's campaign in 2000 set a standard for disclosure in political fund"
            " raising and the campaign will again in 2004, said Dan Ronayne, campaign spokesman.",
        ),
        (  # two clauses trading places in a long statement
            "User volunteers at the animal shelter downtown on Saturday mornings and teaches"
            " guitar lessons to neighbourhood kids on Sunday afternoons",
            "User teaches guitar lessons to neighbourhood kids on Sunday afternoons and"
            " volunteers at the animal shelter downtown on Saturday mornings",
        ),
    ],
)
def test_a_long_statement_with_its_clauses_moved_is_still_the_same_fact(
    tmp_path, stored, candidate
):
    with MemoryManager(str(tmp_path / "m.db")) as mm:
        first = mm.update_memory(stored, user_id="u")
        again = mm.update_memory(candidate, user_id="u")
    assert (again.op, again.memory_id) == (Op.NOOP, first.memory_id)


def test_a_long_statement_with_its_roles_swapped_is_not_the_same_fact(tmp_path):
    """A short role swap is SICK's; a long one has few words in their neighbours' places."""
    with MemoryManager(str(tmp_path / "m.db")) as mm:
        assert_both_kept(
            mm,
            "The lawyer for the driver told the judge the officer lied about the speed radar",
            "The officer told the lawyer the judge lied about the driver and the speed radar",
        )


def test_an_attribution_moved_is_still_the_same_fact(tmp_path):
    """ "..., said X" / "X said ...": who reported it moves, the statement's roles do not."""
    with MemoryManager(str(tmp_path / "m.db")) as mm:
        first = mm.update_memory(
            '"We don\'t have new places to check," said Steve Anderson, a Waco public-information'
            " officer.",
            user_id="u",
        )
        again = mm.update_memory(
            '"We don\'t have new places to check," Waco public information officer Steve Anderson'
            " said.",
            user_id="u",
        )
    assert (again.op, again.memory_id) == (Op.NOOP, first.memory_id)


def test_an_attribution_does_not_hide_a_role_swap(tmp_path):
    with MemoryManager(str(tmp_path / "m.db")) as mm:
        assert_both_kept(
            mm,
            "The lawyer told the judge the officer lied, Anna said",
            "Anna said the officer told the judge the lawyer lied",
        )


LIGHTHOUSE = "The old lighthouse near the harbour was painted white by volunteers last summer"


@pytest.mark.parametrize(
    "candidate",
    [
        "The old lighthouse near the harbour was painted bright white"
        " by local volunteers last summer",
        "Last summer the old lighthouse near the harbour was painted white"
        " by local volunteers from the town",
    ],
)
def test_a_long_statement_said_again_with_a_phrase_added_updates_the_memory(tmp_path, candidate):
    """Every word of the memory in its role, and more in between: nothing of either is lost."""
    with MemoryManager(str(tmp_path / "m.db")) as mm:
        first = mm.update_memory(LIGHTHOUSE, user_id="u")
        result = mm.update_memory(candidate, user_id="u")
        assert (result.op, result.tier, result.memory_id) == (
            Op.UPDATE,
            Tier.OFFLINE,
            first.memory_id,
        )
        assert active(mm) == [candidate]


@pytest.mark.parametrize(
    "candidate",
    [
        # one word added: a refinement may name another thing, as in SICK's neutral pairs
        "The old lighthouse near the harbour was painted white by local volunteers last summer",
        # a role changed on the way: "by" volunteers / "for" volunteers
        "The old lighthouse near the harbour was painted white"
        " for volunteers from the town last summer",
        # a word of the memory dropped
        "The old lighthouse near the harbour was painted bright white by local volunteers",
    ],
)
def test_a_long_statement_that_adds_one_word_or_changes_a_role_is_kept_beside(tmp_path, candidate):
    with MemoryManager(str(tmp_path / "m.db")) as mm:
        assert_both_kept(mm, LIGHTHOUSE, candidate)


# A long statement said again in other words (MRPC / STS-B style): a preposition traded ("near"
# / "by": on, in, at and through are one place even offline, roles._traded_place), a clause
# moved. With an embedder a cosine near 1 settles it; offline the role rules still refuse.
EVIDENCE = (
    "Colombian police found the evidence in two laptop computers discovered with the slain"
    " rebel leader Raul Reyes near the Ecuador border"
)
EVIDENCE_AGAIN = EVIDENCE.replace(" near the ", " by the ")


def test_a_long_statement_restated_is_a_cosine_noop(tmp_path, bag_of_words):
    with MemoryManager(str(tmp_path / "m.db"), embedder="fake", noop_cosine=0.6) as mm:
        first = mm.update_memory(EVIDENCE, user_id="u")
        again = mm.update_memory(EVIDENCE_AGAIN, user_id="u")
        assert (again.op, again.tier, again.memory_id) == (Op.NOOP, Tier.SEMANTIC, first.memory_id)
        assert active(mm) == [EVIDENCE]


@pytest.mark.parametrize(
    "candidate",
    [
        EVIDENCE_AGAIN.replace("two", "three"),  # a number differs
        EVIDENCE_AGAIN.replace("found the", "never found the"),  # a negation differs
    ],
)
def test_a_long_statement_restated_still_keeps_a_number_or_negation(
    tmp_path, bag_of_words, candidate
):
    with MemoryManager(str(tmp_path / "m.db"), embedder="fake", noop_cosine=0.6) as mm:
        mm.update_memory(EVIDENCE, user_id="u")
        assert mm.update_memory(candidate, user_id="u").op is not Op.NOOP
        assert EVIDENCE in active(mm)


# A clause or phrase moved, no two words trading roles (MRPC's "Hines died of cancer Saturday
# in Los Angeles" / "Hines died yesterday in Los Angeles of cancer"): a cosine near 1 settles
# it; offline, and below that cosine, the order rule still refuses.
HINES = "Hines died of cancer on Saturday in Los Angeles, his publicist said"
HINES_AGAIN = "Hines died on Saturday in Los Angeles of cancer, his publicist said"


def test_a_clause_moved_is_a_cosine_noop(tmp_path, bag_of_words):
    with MemoryManager(str(tmp_path / "m.db"), embedder="fake", noop_cosine=0.6) as mm:
        first = mm.update_memory(HINES, user_id="u")
        again = mm.update_memory(HINES_AGAIN, user_id="u")
        assert (again.op, again.tier, again.memory_id) == (Op.NOOP, Tier.SEMANTIC, first.memory_id)
        assert active(mm) == [HINES]


def test_a_clause_moved_at_a_cosine_just_past_noop_is_kept_beside(tmp_path, bag_of_words):
    # The fake embedder puts the two at 0.884: a NOOP cosine, short of the 10 % towards 1 that
    # vouches for a rewording.
    with MemoryManager(str(tmp_path / "m.db"), embedder="fake", noop_cosine=0.88) as mm:
        assert_both_kept(mm, HINES, HINES_AGAIN)


def test_a_clause_moved_is_kept_beside_offline(tmp_path):
    with MemoryManager(str(tmp_path / "m.db"), noop_jaccard=0.6) as mm:
        assert_both_kept(mm, HINES, HINES_AGAIN)


def test_a_possessive_names_the_same_one_as_its_subject_form(tmp_path):
    with MemoryManager(str(tmp_path / "m.db"), noop_jaccard=0.6) as mm:
        assert_lexical_noop(
            mm,
            "The company said it moved the office to Berlin",
            "The company said its office moved to Berlin",
        )


def test_both_before_a_pair_it_names_adds_nothing(tmp_path):
    with MemoryManager(str(tmp_path / "m.db"), noop_jaccard=0.6) as mm:
        assert_lexical_noop(mm, "Likes jazz and blues", "Likes both jazz and blues")


MODIFIERS_MOVED = [
    (
        "The black and white dog is running in the park",
        "The dog, which is black and white, is running in the park",
    ),
    (
        "The cheerleaders are wearing black, pink and white uniforms",
        "The cheerleaders are wearing uniforms which are black, pink and white",
    ),
    (
        "A small guinea pig is eating a piece of carrot",
        "A guinea pig, which is small, is eating a piece of carrot",
    ),
]
# A passive: the same roles the other way round (the verb's form differs, so a cosine says so).
PASSIVES = [
    ("A monkey is pulling a dog's tail", "A dog's tail is being pulled by a monkey"),
    (
        "A player is on the court and another one is grabbing the ball",
        "A player is on the court and the ball is being grabbed by another one",
    ),
]


@pytest.mark.parametrize(("stored", "candidate"), MODIFIERS_MOVED)
def test_a_modifier_in_a_relative_clause_is_the_same_fact(tmp_path, stored, candidate):
    with MemoryManager(str(tmp_path / "m.db")) as mm:
        assert_lexical_noop(mm, stored, candidate)


def test_a_relative_clause_with_a_role_is_not_a_modifier(tmp_path):
    """ "the dog which is chasing the cat" says who chases whom: not moved before "dog"."""
    with MemoryManager(str(tmp_path / "m.db")) as mm:
        assert_both_kept(
            mm, "The cat chasing the dog is brown", "The dog which is chasing the cat is brown"
        )


@pytest.mark.parametrize(("stored", "candidate"), PASSIVES)
def test_a_passive_is_the_same_fact(tmp_path, bag_of_words, stored, candidate):
    with MemoryManager(str(tmp_path / "m.db"), embedder="fake", noop_cosine=0.6) as mm:
        first = mm.update_memory(stored, user_id="u")
        again = mm.update_memory(candidate, user_id="u")
    assert (again.op, again.tier, again.memory_id) == (Op.NOOP, Tier.SEMANTIC, first.memory_id)
