"""A candidate that restates one of several near memories is a NOOP of that one, even when
the nearest differs from it (write/route.py, _near_route): found replaying a conversation
twice, where "I do not have a car." came back as a new row beside "I don't have a car."."""

from __future__ import annotations

from memman import Op, Tier
from tests.decisions import add_everything, chat_calls, llm_manager


def test_a_restatement_of_a_near_memory_is_its_noop_when_the_nearest_differs(db, fake_openai):
    fake_openai.default_reply = add_everything  # the store holds both sides, as a model may
    mm = llm_manager(db, fake_openai.base_url, llm_mode="tools")
    # Labelled as a model may label them: read by the extractor, "I have a car." is the car and
    # replaces "I don't have a car." by topic (session 10), leaving no two sides to choose from.
    for fact in ["I don't have a car.", "I have a car.", "I have a green car."]:
        mm.update_memory(fact, user_id="u", subject="user", attribute="verb:have")
    said = next(m for m in mm.list(user_id="u") if m.content == "I don't have a car.")
    rows, calls = len(mm.list(user_id="u")), len(chat_calls(fake_openai))

    result = mm.update_memory("I do not have a car.", user_id="u")

    assert (result.op, result.tier, result.memory_id) == (Op.NOOP, Tier.LEXICAL, said.id)
    assert len(chat_calls(fake_openai)) == calls
    assert len(mm.list(user_id="u")) == rows


def test_the_nearest_memory_still_settles_when_it_is_the_one_restated(db, fake_openai):
    fake_openai.default_reply = add_everything
    mm = llm_manager(db, fake_openai.base_url, llm_mode="tools")
    for fact in ["I have a car.", "I don't have a car.", "I have a green car."]:  # as above
        mm.update_memory(fact, user_id="u", subject="user", attribute="verb:have")
    memories = {m.content: m.id for m in mm.list(user_id="u")}

    result = mm.update_memory("I have a car!", user_id="u")

    assert (result.op, result.memory_id) == (Op.NOOP, memories["I have a car."])
