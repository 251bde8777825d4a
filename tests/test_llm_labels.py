"""An LLM names attributes in its own words ("location", "occupation", "allergies",
"favorite_color"); memman files them under its own vocabulary, so a fact labelled one way
meets the memory labelled another: the decision shows it first, with the label it was filed
under, and the model's UPDATE replaces it (with an LLM a topic rule only proposes: issue 27)."""

from __future__ import annotations

import pytest

from memman import Op, Tier
from memman.language.attributes import usable_attribute, usable_subject
from tests.decisions import answer
from tests.fake_openai import Reply, chat_completion
from tests.test_lifecycle_observe import llm_manager


def extraction(content: str, attribute: str, subject: str = "user") -> Reply:
    fact = {"content": content, "category": "personal", "importance": 5, "durability": "durable"}
    args = {"facts": [{**fact, "subject": subject, "attribute": attribute}]}
    return Reply(body=chat_completion(tool_args=args, tool_name="ExtractedFacts"))


def first_shown(request: dict) -> str:
    """The line of the memory a decision prompt shows first."""
    prompt = request["json"]["messages"][-1]["content"]
    return next(line for line in prompt.splitlines() if line.startswith("[1] ("))


def said(mm, text: str, session: str):
    mm.observe([{"role": "user", "content": text}], user_id="u", session_id=session)
    return mm.flush(session, user_id="u")


@pytest.mark.parametrize(
    ("old", "old_label", "new", "new_label", "attribute"),
    [
        ("User lives in Porto", "location", "User moved to Lisbon", "residence", "residence"),
        ("User works as a nurse", "occupation", "User is a teacher now", "job", "job"),
        ("User's favorite color is red", "favorite_color", "User's favorite color is blue",
         "Favourite color", "favorite:color"),
    ],
)  # fmt: skip
def test_a_label_in_other_words_meets_the_memory_by_topic(
    db, clock, fake_openai, old, old_label, new, new_label, attribute
):
    fake_openai.script(
        extraction(old, old_label), extraction(new, new_label), answer("UPDATE", id=1, content=new)
    )
    with llm_manager(db, fake_openai.base_url, clock) as mm:
        said(mm, old, "s1")
        [result] = said(mm, new, "s2").results
        assert (result.op, result.tier, result.previous_content) == (Op.UPDATE, Tier.LLM, old)
        [memory] = mm.list(user_id="u")
        assert (memory.content, memory.attribute) == (new, attribute)
    _, _, decided = fake_openai.requests  # the two extractions, then one decision
    assert first_shown(decided).endswith(f', {attribute}) "{old}"')


def test_a_person_named_in_other_words_is_one_subject(db, clock, fake_openai):
    old, new = "User's mom lives in Rome", "User's mother moved to Paris"
    fake_openai.script(
        extraction(old, "residence", subject="the user's mom"),
        extraction(new, "residence", subject="Mother"),
        answer("UPDATE", id=1, content=new),
    )
    with llm_manager(db, fake_openai.base_url, clock) as mm:
        said(mm, old, "s1")
        [result] = said(mm, new, "s2").results
        assert (result.op, result.tier, result.previous_content) == (Op.UPDATE, Tier.LLM, old)
        assert first_shown(fake_openai.requests[-1]).endswith(f', mother: residence) "{old}"')
        [memory] = mm.list(user_id="u")
        assert (memory.subject, memory.attribute) == ("mother", "residence")


@pytest.mark.parametrize(
    ("label", "subject"),
    [("User", "user"), ("the user", "user"), ("me", "user"), ("User's sister", "sister"),
     ("my_brother", "brother"), ("Mum", "mother"), ("Jon", "jon")],
)  # fmt: skip
def test_subjects_are_filed_by_person(label, subject):
    assert usable_subject(label) == subject


@pytest.mark.parametrize(
    ("label", "filed"),
    [
        ("Allergies", "allergy"), ("hobbies", "hobby"), ("pet", "pets"),
        ("marital status", "relationship_status"), ("date_of_birth", "birthday"),
        ("favourite_band", "favorite:band"), ("favorite-food", "favorite:food"),
        ("commute", "commute"), ("location", "residence"), ("vehicle", "car"),
        ("Smartphone", "phone"), ("laptop", "computer"), ("major", "studies"),
    ],
)  # fmt: skip
def test_labels_are_filed_under_the_vocabulary(label, filed):
    assert usable_attribute(label) == filed
