"""Where the user is, and where they live (issue 11, session 12).

"I'm in Melbourne" was read as the user's residence, so "I'm in Paris now, the conference is
great" replaced "I live in Berlin" with no LLM call: a trip ended a home. A town said alone
is now where the user is (whereabouts): it never replaces a residence, and a residence said
later replaces it when none is known. A word of home ("these days", "based in", "we moved
here") makes it a residence; a word of a stay ("this week", "for work", "the conference") a
trip, whatever else the message says.
"""

from __future__ import annotations

import pytest

from memman import MemoryManager, Op, Tier
from tests.decisions import active, answer, chat_calls, llm_manager, replaced_offline

STAYS = [
    "I'm in Paris now, the conference is great",
    "I'm in Paris now",
    "I'm in Rome now, back home on Friday",
    "I'm in Oslo, here for a wedding",
    "We're in Lisbon now, the hotel is lovely",
    "I'm in Madrid - on holiday till Sunday",
    "I'm in Vienna",
    "I'm in Dublin now, flight was delayed",
]


@pytest.mark.parametrize("stay", STAYS)
def test_offline_a_stay_never_replaces_a_residence(db, stay):
    mm = MemoryManager(db)
    mm.update_memory("I live in Berlin", user_id="ana")
    r = mm.update_memory(stay, user_id="ana")
    assert r.op is Op.ADD, stay
    assert active(mm) == sorted(["I live in Berlin", stay])


def test_offline_a_stay_in_the_third_person_never_replaces_a_residence(db):
    mm = MemoryManager(db)
    mm.update_memory("User lives in Chicago", user_id="ana")
    mm.update_memory("User is in Boston", user_id="ana")
    assert active(mm) == ["User is in Boston", "User lives in Chicago"]


@pytest.mark.parametrize(
    "home",
    [
        "I'm in Lisbon these days",
        "I'm based in Porto now",
        "I'm in Lisbon now, we moved here in May",
        "I'm in Oslo now, it feels like home",
        "I'm living in Prague",
        "I'm settled in Bergen now",
    ],
)
def test_offline_a_place_with_a_word_of_home_replaces_the_residence(db, home):
    mm = MemoryManager(db)
    first = mm.update_memory("I live in Berlin", user_id="ana")
    r = mm.update_memory(home, user_id="ana")
    assert (r.op, r.tier, r.memory_id) == (Op.UPDATE, Tier.TOPIC, first.memory_id), home
    assert active(mm) == [home]


def test_offline_a_move_replaces_the_residence_not_the_stay(db):
    mm = MemoryManager(db)
    mm.update_memory("I live in Berlin", user_id="ana")
    mm.update_memory("I'm in Paris now", user_id="ana")
    mm.update_memory("I moved to Munich", user_id="ana")
    assert active(mm) == ["I moved to Munich", "I'm in Paris now"]


@pytest.mark.parametrize(
    ("where", "move"),
    [("I'm in Melbourne", "We moved to Perth"), ("User is in Boston", "User relocated to Miami")],
)
def test_offline_a_move_replaces_a_town_alone_when_no_home_is_known(db, where, move):
    replaced_offline(db, where, move)


def test_with_an_llm_a_town_alone_is_the_deciders_with_the_residence_shown(db, fake_openai):
    mm = llm_manager(db, fake_openai.base_url)
    mm.update_memory("I live in Berlin", user_id="ana")
    fake_openai.script(answer("ADD", reason="a trip"))
    r = mm.update_memory("I'm in Paris now", user_id="ana")
    [call] = chat_calls(fake_openai)
    assert "I live in Berlin" in call["json"]["messages"][-1]["content"]
    assert (r.op, r.tier) == (Op.ADD, Tier.LLM)
    assert active(mm) == ["I live in Berlin", "I'm in Paris now"]
