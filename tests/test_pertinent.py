"""A fact is compared only with memories about the same thing (write/pertinent.py): a memory
sharing nothing but a word like "like", "love" or "used" costs no LLM call."""

from __future__ import annotations

from memman import Op, Tier
from tests.decisions import add_everything, chat_calls, llm_manager


def prompt_of(request: dict) -> str:
    return "\n".join(m["content"] for m in request["json"]["messages"])


def test_a_fact_sharing_only_relation_words_makes_no_call(db, fake_openai):
    fake_openai.default_reply = add_everything
    mm = llm_manager(db, fake_openai.base_url, llm_mode="tools")
    for fact in ["I love animals.", "I used to work at Monsanto.", "I am a lumberjack."]:
        mm.update_memory(fact, user_id="u")
    calls = len(chat_calls(fake_openai))
    results = [
        mm.update_memory(fact, user_id="u")
        for fact in ["I'd love to visit New York.", "I used to have a cat.", "I am lonely."]
    ]
    assert len(chat_calls(fake_openai)) == calls
    assert [(r.op, r.tier) for r in results] == [(Op.ADD, Tier.NOVEL)] * 3


def test_a_fact_sharing_a_topic_word_still_reaches_the_decider(db, fake_openai):
    fake_openai.default_reply = add_everything
    mm = llm_manager(db, fake_openai.base_url, llm_mode="tools")
    for fact in ["I love animals.", "I watch basketball on TV."]:
        mm.update_memory(fact, user_id="u")
    calls = len(chat_calls(fake_openai))
    result = mm.update_memory("I used to love basketball.", user_id="u")
    asked = chat_calls(fake_openai)[calls:]
    assert (result.op, result.tier, len(asked)) == (Op.ADD, Tier.LLM, 1)
    prompt = prompt_of(asked[0])
    assert "I watch basketball on TV." in prompt
    assert "I love animals." not in prompt  # it shares only "love"


def test_a_memory_of_the_same_attribute_reaches_the_decider_sharing_no_topic_word(
    db, fake_openai
):
    # Both are (user, pets, dog): "chihuahua" may be Toto, so the decider must see Toto's
    # memory though the two share only "have" and "named".
    fake_openai.default_reply = add_everything
    mm = llm_manager(db, fake_openai.base_url, llm_mode="tools")
    mm.update_memory("I have a dog named Toto.", user_id="u")
    calls = len(chat_calls(fake_openai))
    mm.update_memory("I have a chihuahua named Bob.", user_id="u")
    asked = chat_calls(fake_openai)[calls:]
    assert len(asked) == 1
    assert "I have a dog named Toto." in prompt_of(asked[0])
