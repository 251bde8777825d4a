"""Memories know what they are about: a new fact finds the memory it supersedes by topic."""

from __future__ import annotations

import datetime as dt

import numpy as np
import pytest

from memman import EmbeddingError, InvalidInputError, MemoryManager, Op, Status, Tier
from memman.language.topic import Topic, about
from tests.decisions import active, answer, kept_apart, llm_manager, replaced_by_topic
from tests.postgres import db_on_each_backend, postgres_url  # noqa: F401


@pytest.mark.parametrize(
    ("text", "topic"),
    [
        ("I live in Berlin", Topic("user", "residence", "berlin")),
        ("I moved to Munich last month", Topic("user", "residence", "munich")),
        ("User no longer lives in Berlin", Topic("user", "residence", "berlin", True)),
        ("I just joined Meta", Topic("user", "employer", "meta")),
        ("I got married in June", Topic("user", "relationship_status", "married")),
        ("I quit caffeine", Topic("user", "drinks", "caffeine", True)),
        ("User is not vegetarian anymore", Topic("user", "diet", "vegetarian", True)),
        ("I have no pets", Topic("user", "pets", None, True)),
        ("My sister lives in Rome", Topic("sister", "residence", "rome")),
        ("Blue is my favorite color", Topic("user", "favorite:color", "blue")),
        ("I have a dog allergy", Topic("user", "allergy", "dog")),
        ("These days I eat meat again", Topic("user", "diet", "omnivore")),
        ("Honestly I'm happily unattached", Topic("user", "relationship_status", "single")),
        ("We adopted a rescue greyhound", Topic("user", "pets", "dog")),
        ("Can you write me a haiku about autumn?", None),
        ("The turtle follows the fish", None),
    ],
)
def test_the_extractor_reads_subject_attribute_and_value(text, topic):
    assert about(text) == topic


# Everyday updates that share no content word with the memory they replace.
MOVES = [
    ("I live in Berlin", "I moved to Munich last month"),
    ("I work at Google", "I just joined Meta"),
    ("I'm single", "I got married in June"),
    ("I drink coffee every morning", "I quit caffeine"),
    ("User is a nurse", "User works as a software developer now"),
    ("I am vegetarian", "I'm not vegetarian anymore"),
    ("I have two kids", "I have three kids"),
    ("I'm vegan", "These days I eat meat again"),
    ("I don't have any pets", "We adopted a rescue greyhound last week"),
]


@pytest.mark.parametrize(("old", "new"), MOVES)
def test_a_new_value_replaces_the_old_with_no_llm_call(db, fake_openai, old, new):
    updated = replaced_by_topic(llm_manager(db, fake_openai.base_url), fake_openai, old, new)
    assert updated.memory_id in updated.scores  # the audit trail names what was compared


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("I have a dog", "I have a cat"),
        ("I like jazz", "I love hiking"),
        ("My sister lives in Rome", "I live in Berlin"),
        ("I work at Google", "My wife works at Apple"),
        ("I have a dog", "I have a dog allergy"),
        ("User speaks German", "User speaks Spanish"),
    ],
)
def test_look_alikes_about_other_values_or_people_both_stay_offline(db, old, new):
    kept_apart(db, old, new)


def test_a_retraction_replaces_only_the_value_it_takes_back(db):
    mm = MemoryManager(db)
    dog = mm.update_memory("I have a dog", user_id="ana")
    cat = mm.update_memory("I have a cat", user_id="ana")
    r = mm.update_memory("I no longer have a cat", user_id="ana")
    assert (r.op, r.tier, r.memory_id) == (Op.UPDATE, Tier.TOPIC, cat.memory_id)
    assert mm.get(dog.memory_id, user_id="ana").content == "I have a dog"
    assert active(mm) == ["I have a dog", "I no longer have a cat"]


def test_taking_back_a_value_that_is_not_the_current_one_changes_nothing(db):
    mm = MemoryManager(db)
    home = mm.update_memory("I live in Munich", user_id="ana")
    r = mm.update_memory("I don't live in Paris anymore", user_id="ana")
    assert (r.op, r.tier, r.memory_id) == (Op.NOOP, Tier.TOPIC, home.memory_id)
    assert active(mm) == ["I live in Munich"]
    assert (
        mm.get(home.memory_id, user_id="ana").repetition_count == 1
    )  # history only, not a repetition
    assert (
        mm.history(home.memory_id, user_id="ana")[-1].candidate == "I don't live in Paris anymore"
    )


def test_an_older_statement_goes_into_history_and_never_overwrites_a_newer_one(db):
    mm = MemoryManager(db)
    march = dt.datetime(2026, 3, 1, tzinfo=dt.UTC)
    home = mm.update_memory("I live in Munich", user_id="ana", observed_at=march)
    r = mm.update_memory("I live in Berlin", user_id="ana", observed_at="2025-06-01T10:00:00")
    assert (r.op, r.memory_id) == (Op.NOOP, home.memory_id)
    assert "before the memory's current text" in r.reason
    memory = mm.get(home.memory_id, user_id="ana")
    assert memory.content == "I live in Munich"
    assert memory.observed_at == "2026-03-01T00:00:00.000+00:00"
    assert mm.history(home.memory_id, user_id="ana")[-1].candidate == "I live in Berlin"
    later = mm.update_memory("I live in Hamburg", user_id="ana", observed_at=dt.date(2026, 4, 1))
    assert (later.op, later.memory_id) == (Op.UPDATE, home.memory_id)
    assert mm.get(home.memory_id, user_id="ana").observed_at == "2026-04-01T00:00:00.000+00:00"


class FlakyEmbedder:
    """Bag-of-words vectors; fails while `down` is set (so a write parks its fact)."""

    name, dim = "flaky-bow", 64
    down = False

    def embed(self, texts: list[str]) -> np.ndarray:
        if self.down:
            raise EmbeddingError("embedding service down")
        rows = np.zeros((len(texts), self.dim), dtype=np.float32)
        for row, text in zip(rows, texts, strict=True):
            for word in text.lower().split():
                row[hash(word) % self.dim] += 1.0
        return rows / np.maximum(np.linalg.norm(rows, axis=1, keepdims=True), 1e-9)


def test_a_fact_parked_for_a_day_never_overwrites_a_value_stated_meanwhile(db, clock):
    embedder = FlakyEmbedder()
    mm = MemoryManager(db, embedder=embedder, clock=clock)
    home = mm.update_memory("I live in Berlin", user_id="ana")
    clock.advance(hours=1)
    embedder.down = True
    parked = mm.update_memory("I moved to Munich", user_id="ana")
    assert parked.op is Op.PENDING
    embedder.down = False
    clock.advance(hours=2)
    mm.update_memory("I moved to Hamburg", user_id="ana")
    clock.advance(days=1)
    [retried] = mm.retry_pending()
    assert (retried.op, retried.memory_id) == (Op.NOOP, home.memory_id)
    assert active(mm) == ["I moved to Hamburg"]
    assert mm.pending() == []


def test_the_callers_subject_and_attribute_are_stored_and_used(db):
    mm = MemoryManager(db, single_valued_attributes=["commute"])
    first = mm.update_memory(
        "Takes the 7:40 train to work", user_id="ana", subject="User", attribute="Commute"
    )
    memory = mm.get(first.memory_id, user_id="ana")
    assert (memory.subject, memory.attribute) == ("user", "commute")
    r = mm.update_memory("Cycles to the office", user_id="ana", attribute="commute")
    assert (r.op, r.tier, r.memory_id) == (Op.UPDATE, Tier.TOPIC, first.memory_id)
    # A custom list replaces the built-in one: residence now holds several values.
    mm.update_memory("I live in Berlin", user_id="ana")
    assert mm.update_memory("I live in Lisbon", user_id="ana").op is Op.ADD


@pytest.mark.parametrize(
    ("field", "value"),
    [("attribute", ""), ("attribute", 3), ("subject", "  "), ("observed_at", "yesterday")],
)
def test_bad_topic_or_time_is_a_typed_error(db, field, value):
    mm = MemoryManager(db)
    with pytest.raises(InvalidInputError):
        mm.update_memory("I live in Berlin", user_id="ana", **{field: value})
    assert mm.list(user_id="ana") == []


def test_a_multi_valued_repeat_in_other_words_is_still_compared_not_added_blindly(db, fake_openai):
    mm = llm_manager(db, fake_openai.base_url)
    fake_openai.script(answer("NOOP", id=1, reason="the same fact"))
    first = mm.update_memory("I like jazz", user_id="ana")
    r = mm.update_memory("I love jazz", user_id="ana")
    assert (r.op, r.memory_id) == (Op.NOOP, first.memory_id)
    assert len(fake_openai.requests) == 1
    assert mm.get(first.memory_id, user_id="ana").status is Status.ACTIVE


def test_a_new_count_of_the_same_value_replaces_the_old_offline(db):
    mm = MemoryManager(db)
    dog = mm.update_memory("I have a dog", user_id="ana")
    cats = mm.update_memory("I have two cats", user_id="ana")
    r = mm.update_memory("I have three cats since we adopted a kitten", user_id="ana")
    assert (r.op, r.tier, r.memory_id) == (Op.UPDATE, Tier.TOPIC, cats.memory_id)
    assert mm.get(dog.memory_id, user_id="ana").content == "I have a dog"


def test_the_deciders_subject_and_attribute_label_a_fact_the_extractor_cannot_read(
    db, fake_openai
):
    mm = llm_manager(db, fake_openai.base_url, llm_mode="tools")
    fake_openai.script(answer("ADD", subject="user", attribute="Lake House"))
    mm.update_memory("The lake house has a leaky roof", user_id="ana")
    r = mm.update_memory("The lake house roof was fixed in May", user_id="ana")
    assert (r.op, r.tier) == (Op.ADD, Tier.LLM)
    stored = mm.get(r.memory_id, user_id="ana")
    assert (stored.subject, stored.attribute) == ("user", "lake_house")
