"""A person has one name as a subject: "my mom" and "my mother" are the same person, so a
newer fact about one settles the memory about the other by topic, offline, whoever labelled
it (the extractor, the caller, an LLM: tests/test_llm_labels.py), and stores written before
have their subjects filed the same way (m027 / p008)."""

from __future__ import annotations

import pytest

from memman import MemoryManager, Op, Tier
from tests.postgres import db_on_each_backend, postgres_url, undo_migration  # noqa: F401


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("My mom lives in Rome", "My mother moved to Paris"),
        ("My dad works at IBM", "My father just joined Google"),
        ("My mum is a nurse", "My mom became a teacher"),
        ("User's grandma lives in Ohio", "User's grandmother moved to Texas"),
    ],
)
def test_one_person_named_two_ways_is_one_subject(db, old, new):
    with MemoryManager(db) as mm:
        first = mm.update_memory(old, user_id="u")
        r = mm.update_memory(new, user_id="u")
        assert (r.op, r.tier, r.memory_id) == (Op.UPDATE, Tier.TOPIC, first.memory_id)
        assert [m.content for m in mm.list(user_id="u")] == [new]


def test_a_callers_subject_is_filed_by_person_too(db):
    with MemoryManager(db) as mm:
        first = mm.update_memory("Lives in Rome", user_id="u", subject="Mom", attribute="residence")
        assert mm.get(first.memory_id, user_id="u").subject == "mother"
        r = mm.update_memory("My mother moved to Paris", user_id="u")
        assert (r.op, r.memory_id) == (Op.UPDATE, first.memory_id)


def test_subjects_stored_before_are_filed_by_the_migration(db):
    """A store written when "mom" was a subject of its own (made so by undoing m027 / p008 on
    a new one): opened, its rows are filed under "mother" and the newer fact meets them."""
    with MemoryManager(db) as mm:
        first = mm.update_memory("My mom lives in Rome", user_id="u")
    undo_migration(
        db, "m027_kin_subjects", "p008_kin_subjects", "UPDATE long_term SET subject = 'mom'"
    )
    with MemoryManager(db) as mm:
        assert mm.get(first.memory_id, user_id="u").subject == "mother"
        r = mm.update_memory("My mother moved to Paris", user_id="u")
        assert (r.op, r.tier, r.memory_id) == (Op.UPDATE, Tier.TOPIC, first.memory_id)
