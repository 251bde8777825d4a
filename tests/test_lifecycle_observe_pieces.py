"""Offline observe reads what a chat message is about: past its greeting and lead words, a
name as a name, clauses that stand alone as facts of their own, a plan for now as short-term."""

from __future__ import annotations

import pytest

from memman import MemoryManager


def chat(mm: MemoryManager, *messages: str, session: str = "s") -> None:
    mm.observe([{"role": "user", "content": m} for m in messages], user_id="u", session_id=session)
    mm.flush(session, user_id="u")


def stored(mm: MemoryManager) -> list[str]:
    return sorted(m.content for m in mm.list(user_id="u"))


@pytest.mark.parametrize("greeting", ["Hi!", "Hello there!", "Hey! Good morning!"])
def test_a_greeting_sentence_does_not_hide_the_fact_after_it(db, clock, greeting):
    with MemoryManager(db, clock=clock) as mm:
        chat(mm, f"{greeting} I live in Berlin.")
        chat(mm, "I moved to Munich last month.", session="t")
        assert stored(mm) == ["I moved to Munich last month."]
        assert [m.content for m in mm.context("hi", user_id="u").core] == stored(mm)


@pytest.mark.parametrize("lead", ["By the way", "Oh and", "Just so you know,", "Hey,", "Fyi"])
def test_lead_words_do_not_hide_the_fact(db, clock, lead):
    with MemoryManager(db, clock=clock) as mm:
        chat(mm, f"{lead} I live in Berlin.")
        chat(mm, "I live in Munich now.", session="t")
        assert stored(mm) == ["I live in Munich now."]


def test_i_am_tom_is_the_users_name_and_a_nationality_is_not(db, clock):
    with MemoryManager(db, clock=clock) as mm:
        chat(mm, "I'm Tom.", "I'm Canadian.")
        assert "I'm Tom." in [m.content for m in mm.context("hi", user_id="u").core]
        mm.update_memory("My name is Thomas.", user_id="u")
        assert stored(mm) == ["I'm Canadian.", "My name is Thomas."]  # the name replaced


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("My wife Ana works as a dentist.", "My wife works as a nurse now."),
        ("My son Leo is 5.", "My son is 6 now."),
    ],
)
def test_a_name_in_apposition_is_no_verb(db, clock, old, new):
    with MemoryManager(db, clock=clock) as mm:
        chat(mm, old)
        mm.update_memory(new, user_id="u")
        assert stored(mm) == [new]


def test_first_person_facts_joined_by_and_i_are_stored_apart(db, clock):
    with MemoryManager(db, clock=clock) as mm:
        chat(mm, "Hi! I'm Tom and I just moved to Lisbon.")
        assert stored(mm) == ["I just moved to Lisbon.", "I'm Tom"]
        chat(mm, "I moved to Porto.", session="t")  # replaces the city, not the name
        assert stored(mm) == ["I moved to Porto.", "I'm Tom"]
        core = [m.content for m in mm.context("hi", user_id="u").core]
        assert sorted(core) == ["I moved to Porto.", "I'm Tom"]


@pytest.mark.parametrize(
    "message",
    [
        "I have a dog and I walk him every day.",  # "him" needs the first clause
        "I got divorced last year and I'm still adjusting.",  # no fact of its own
        "My wife and I moved to Rome.",  # one subject
    ],
)
def test_clauses_that_need_each_other_stay_one_memory(db, clock, message):
    with MemoryManager(db, clock=clock) as mm:
        chat(mm, message)
        assert stored(mm) == [message]


def test_a_plan_for_now_is_short_term_and_a_lasting_plan_long_term(db, clock):
    with MemoryManager(db, clock=clock) as mm:
        chat(
            mm,
            "I think I'll go for a run later.",
            "I'm heading to the airport now.",
            "I'm going to learn Spanish.",
        )
        assert stored(mm) == ["I'm going to learn Spanish."]
        short = {f.content: f.category for f in mm.short_term(user_id="u")}
        assert short == {
            "I think I'll go for a run later.": "plan",
            "I'm heading to the airport now.": "location",
        }
        block = mm.context("when is my run", user_id="u")
        assert [f.content for f in block.short_term] == ["I think I'll go for a run later."]


@pytest.mark.parametrize(
    "message",
    [
        "I'm off to the gym later, I have a bad knee.",  # a clause that is no plan
        "I'm going to the gym tonight and I'm allergic to peanuts.",  # a known attribute
        "I'm driving to California next month.",  # not for now
    ],
)
def test_a_fact_said_with_a_plan_does_not_expire_with_it(db, clock, message):
    with MemoryManager(db, clock=clock) as mm:
        chat(mm, message)
        assert stored(mm) == [message]
        assert mm.short_term(user_id="u") == []


@pytest.mark.parametrize("tail", [" btw", " by the way.", ", just so you know."])
def test_lead_words_said_last_do_not_hide_the_fact(db, clock, tail):
    with MemoryManager(db, clock=clock) as mm:
        chat(mm, f"I have a peanut allergy{tail}")
        core = mm.context("hi", user_id="u").core  # an allergy is a safety fact
        assert [m.content for m in core] == [f"I have a peanut allergy{tail}"]
