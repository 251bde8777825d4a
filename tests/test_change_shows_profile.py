"""Every decision shows the user's profile (issues 11 and 27).

"User just signed a lease in Austin" shares no word with "User lives in Denver" and the
reader files it under no named attribute: it was ADDed as novel with no call, and both
reached the prompt. With an LLM configured every fact the cheap tiers cannot settle is
decided with the user's single-valued memories shown (memman/write/shown.py); issue 11 showed
them only to facts the reader took for a change, and a change said without a change word
("User reads before bed" may end "User never reads") was ADDed unseen.
"""

from __future__ import annotations

import json

import pytest

from memman import MemoryManager, Op, Tier
from tests.decisions import active, answer, chat_calls, llm_manager, seed


def shown(call: dict) -> str:
    """The memories a decision call quoted (its prompt's "Memories:" part)."""
    prompt = call["json"]["messages"][-1]["content"]
    return prompt.partition("Memories:")[2].partition("Candidate:")[0]


def test_an_unfiled_change_is_decided_with_the_profile_shown(db, fake_openai):
    home_id, _ = seed(db, ["User lives in Denver", "User plays tennis"])
    mm = llm_manager(db, fake_openai.base_url)
    fake_openai.script(answer("UPDATE", id=1, content="User just signed a lease in Austin"))

    r = mm.update_memory("User just signed a lease in Austin", user_id="ana")

    [call] = chat_calls(fake_openai)
    assert "User lives in Denver" in shown(call)
    assert "User plays tennis" not in shown(call)  # multi-valued: not the profile
    assert (r.op, r.tier, r.memory_id) == (Op.UPDATE, Tier.LLM, home_id)
    assert active(mm) == ["User just signed a lease in Austin", "User plays tennis"]
    # The model gave no labels: the memory stays filed under what it updated, so the next
    # move ("User moved to Boston") finds it by topic.
    updated = mm.get(home_id, user_id="ana")
    assert (updated.subject, updated.attribute) == ("user", "residence")
    fake_openai.script(answer("UPDATE", id=1, content="User moved to Boston"))
    moved = mm.update_memory("User moved to Boston", user_id="ana")
    assert (moved.op, moved.tier, moved.memory_id) == (Op.UPDATE, Tier.LLM, home_id)
    assert shown(chat_calls(fake_openai)[-1]).strip().splitlines()[0].endswith(
        '"User just signed a lease in Austin"'
    )


def test_a_fact_announcing_no_change_is_decided_with_the_profile_shown(db, fake_openai):
    seed(db, ["User lives in Denver"])
    mm = llm_manager(db, fake_openai.base_url)
    fake_openai.script(answer("ADD"))
    r = mm.update_memory("User reads before bed", user_id="ana")
    [call] = chat_calls(fake_openai)
    assert "User lives in Denver" in shown(call)
    assert (r.op, r.tier) == (Op.ADD, Tier.LLM)


def test_a_memory_no_reader_labels_is_shown_though_it_shares_no_word(db, fake_openai):
    """The reader files neither text; they share no word; the model reads them together."""
    old = "User's mobile provider is giffgaff"
    [old_id] = seed(db, [old, "User lives in Denver"])[:1]
    mm = llm_manager(db, fake_openai.base_url)
    news = "User's phone network is now Three"
    fake_openai.script(answer("UPDATE", id=2, content=news))
    r = mm.update_memory(news, user_id="ana")
    [call] = chat_calls(fake_openai)
    [second] = [line for line in shown(call).splitlines() if line.startswith("[2] (")]
    assert second.endswith(json.dumps(old))  # the profile, newest first: Denver is [1]
    assert (r.op, r.memory_id) == (Op.UPDATE, old_id)
    assert active(mm) == ["User lives in Denver", news]


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


def test_a_change_filed_where_no_memory_is_decided_with_the_profile_shown(db, fake_openai):
    """The reader files the news as a household, which no memory holds: the residence it
    ends is in the profile, so the decider sees it (before: ADDed as novel, no call)."""
    [home_id] = seed(db, ["User lives in York"])
    mm = llm_manager(db, fake_openai.base_url)
    news = "User now shares a flat with two friends in Leeds"
    fake_openai.script(answer("UPDATE", id=1, content=news))

    r = mm.update_memory(news, user_id="ana")

    [call] = chat_calls(fake_openai)
    assert "User lives in York" in shown(call)
    assert (r.op, r.tier, r.memory_id) == (Op.UPDATE, Tier.LLM, home_id)
    assert active(mm) == [news]


def test_a_filed_fact_is_decided_with_the_memory_of_its_topic_shown_first(db, fake_openai):
    """The reader files the news as a household: the rule's proposal, the household memory,
    is shown first; the residence beside it (the profile), and the model decides."""
    _, parents = seed(db, ["User lives in York", "User lives with her parents"])
    mm = llm_manager(db, fake_openai.base_url)
    news = "User now shares a flat with two friends"
    fake_openai.script(answer("UPDATE", id=1, content=news))
    r = mm.update_memory(news, user_id="ana")
    [call] = chat_calls(fake_openai)
    assert shown(call).strip().splitlines()[0].endswith('"User lives with her parents"')
    assert "User lives in York" in shown(call)
    assert (r.op, r.tier, r.memory_id) == (Op.UPDATE, Tier.LLM, parents)


def test_a_change_sent_to_the_llm_shows_what_its_words_retrieved(db, fake_openai):
    """"go" is all the news shares with the church memory, a word of how one relates to a
    thing (language/bearing.py), too little for the router to ask about it; the call is made
    for the change anyway, so the decider is shown it (before: the profile alone, and the
    news was ADDed beside the church)."""
    _, church_id = seed(db, ["I live in York", "I go to St Mark's church"])
    mm = llm_manager(db, fake_openai.base_url)
    news = "I started going to a mosque now"
    # The profile's York is 1; the church, found by "go" alone, is shown last: 2.
    fake_openai.script(answer("UPDATE", id=2, content=news))

    r = mm.update_memory(news, user_id="ana")

    [call] = chat_calls(fake_openai)
    assert "I go to St Mark's church" in shown(call)
    assert (r.op, r.tier, r.memory_id) == (Op.UPDATE, Tier.LLM, church_id)
    assert active(mm) == ["I live in York", news]
