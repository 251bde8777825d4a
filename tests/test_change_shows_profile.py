"""A change the offline reader cannot file reaches the LLM with the user's profile (issue 11).

"User just signed a lease in Austin" shares no word with "User lives in Denver" and the
reader files it under no named attribute: it was ADDed as novel with no call, and both
reached the prompt. With an LLM configured it is now decided with the user's single-valued memories
shown (memman/write/profile.py); a fact that announces no change still costs no call.
"""

from __future__ import annotations

import pytest

from memman import MemoryManager, Op, Tier
from tests.decisions import active, answer, chat_calls, llm_manager


def shown(call: dict) -> str:
    """The memories a decision call quoted (its prompt's "Memories:" part)."""
    prompt = call["json"]["messages"][-1]["content"]
    return prompt.partition("Memories:")[2].partition("Candidate:")[0]


def test_an_unfiled_change_is_decided_with_the_profile_shown(db, fake_openai):
    mm = llm_manager(db, fake_openai.base_url)
    home = mm.update_memory("User lives in Denver", user_id="ana")
    mm.update_memory("User plays tennis", user_id="ana")
    assert chat_calls(fake_openai) == []  # both novel
    fake_openai.script(answer("UPDATE", id=1, content="User just signed a lease in Austin"))

    r = mm.update_memory("User just signed a lease in Austin", user_id="ana")

    [call] = chat_calls(fake_openai)
    assert "User lives in Denver" in shown(call)
    assert "User plays tennis" not in shown(call)  # multi-valued: not the profile
    assert (r.op, r.tier, r.memory_id) == (Op.UPDATE, Tier.LLM, home.memory_id)
    assert active(mm) == ["User just signed a lease in Austin", "User plays tennis"]
    # The model gave no labels: the memory stays filed under what it updated, so the next
    # move ("User moved to Boston") finds it by topic.
    updated = mm.get(home.memory_id, user_id="ana")
    assert (updated.subject, updated.attribute) == ("user", "residence")
    moved = mm.update_memory("User moved to Boston", user_id="ana")
    assert (moved.op, moved.tier, moved.memory_id) == (Op.UPDATE, Tier.TOPIC, home.memory_id)


def test_a_fact_announcing_no_change_costs_no_call(db, fake_openai):
    mm = llm_manager(db, fake_openai.base_url)
    mm.update_memory("User lives in Denver", user_id="ana")
    r = mm.update_memory("User reads before bed", user_id="ana")
    assert (r.op, r.tier) == (Op.ADD, Tier.NOVEL)
    assert chat_calls(fake_openai) == []


def test_another_users_profile_is_never_shown(db, fake_openai):
    mm = llm_manager(db, fake_openai.base_url)
    mm.update_memory("User lives in Denver", user_id="bob")
    r = mm.update_memory("User just signed a lease in Austin", user_id="ana")
    assert (r.op, r.tier) == (Op.ADD, Tier.NOVEL)
    assert chat_calls(fake_openai) == []


@pytest.mark.parametrize(
    "news", ["We just had a baby boy!", "I am a mother of three", "Our second child was born"]
)
def test_offline_a_statement_about_a_daughter_stays_beside_the_children(db, news):
    mm = MemoryManager(db)
    mm.update_memory("I have a daughter named Ava", user_id="ana")
    mm.update_memory(news, user_id="ana")
    assert active(mm) == sorted(["I have a daughter named Ava", news])


def test_offline_a_new_count_of_daughters_replaces_the_old(db):
    mm = MemoryManager(db)
    mm.update_memory("I have one daughter", user_id="ana")
    mm.update_memory("I have two daughters now", user_id="ana")
    assert active(mm) == ["I have two daughters now"]
