"""memman on a capable model's answers (issue 27): the dev routing set's cases replayed from
cassettes whose answers a capable model gave to memman's own decision requests.

Hand-scripted answers test plumbing; these test behaviour on realistic answers: the model
reads the memories memman shows it (by topic, words and the user's profile) and answers as it
will (an UPDATE that keeps the rest of a memory, `also` for a value stated twice, ADD for a
look-alike), and memman must apply that so the case's labels hold: every memory the new fact
makes out of date is no longer active, every look-alike is untouched, a restatement adds
nothing. Where the answers came from, and how to refresh them when a prompt changes, is in
tests/cassettes/README.md ("Answers of a capable model").
"""

from __future__ import annotations

from pathlib import Path

import pytest

from memman import MemoryManager, Op, UpdateResult
from memman.models import Status
from tests.routing_cases import Case, fixed_clock, load_set, seed
from tests.test_llm_decider import llm  # noqa: F401 (fixture)

SET = "routing_dev"
PERSONAS, CASES = load_set(SET)
BY_NAME = {case.name.split()[0]: case for case in CASES}
# The cases whose cassettes hold a capable model's answers (tests/cassettes/record_capable.py
# lists those it left out, and why).
CASSETTES = Path(__file__).parent / "cassettes" / "test_capable_model"
TEST = "test_a_capable_models_answers_keep_memory_current"


def recorded(test: str) -> list[str]:
    """The case names of a test's cassettes (pytest-recording's file names: test[case].yaml)."""
    paths = CASSETTES.glob(f"{test}[[]*.yaml")
    return sorted(path.stem.removeprefix(f"{test}[").removesuffix("]") for path in paths)


RECORDED = recorded(TEST)


@pytest.fixture
def vcr_config(vcr_config):
    """conftest's, matching the body too: the answers were given to these very prompts, so a
    request whose body differs (a prompt or what a decision is shown changed) finds no answer
    and fails, until re-recorded."""
    return vcr_config | {"match_on": ["method", "path", "body"]}


def write_case(
    llm,  # noqa: F811 (the fixture's factory)
    name: str,
) -> tuple[MemoryManager, Case, dict[str, str], list[UpdateResult]]:
    """Store the case's persona verbatim (text -> id), then write its facts with one
    update_many."""
    case = BY_NAME[name]
    mm = llm(clock=fixed_clock(), llm_mode="tools", llm_max_retries=0)
    ids = seed(mm, "u", [*PERSONAS[case.persona], *case.existing])
    return mm, case, ids, mm.update_many(case.facts, user_id="u")


@pytest.mark.vcr
@pytest.mark.parametrize("name", RECORDED)
def test_a_capable_models_answers_keep_memory_current(llm, vcr, name):  # noqa: F811
    mm, case, ids, results = write_case(llm, name)
    assert [r.op for r in results if r.op is Op.PENDING] == []  # every answer applied
    memories = {m.id: m for m in mm.list(user_id="u", include_inactive=True)}
    for fact, outcome in zip(case.facts, case.outcomes, strict=True):
        for text in outcome.keep:
            kept = memories[ids[text]]
            assert (kept.content, kept.status) == (text, Status.ACTIVE), (fact, text)
        if outcome.op == "supersede":
            for text in outcome.targets:
                old = memories[ids[text]]
                assert old.status is not Status.ACTIVE or old.content != text, (fact, text)
        if outcome.op == "noop":
            [text] = outcome.targets
            assert memories[ids[text]].status is Status.ACTIVE, (fact, text)
    if all(o.op == "noop" for o in case.outcomes):
        assert len([m for m in memories.values() if m.status is Status.ACTIVE]) == len(ids)
    assert len(vcr.requests) >= 1  # the model was asked: these are its answers


def test_the_capable_models_cassettes_are_there():
    """An empty folder would leave the tests here with no case, skipped rather than failed."""
    assert len(RECORDED) >= 15, RECORDED
    assert len(TURN_RECORDED) >= 15, TURN_RECORDED


# -- one call per chat turn (issue 28) ----------------------------------------------------------
# The combined call (llm_turn_calls "one", prompts/extract_and_decide.j2): the case's chat
# message, not its facts, goes through observe + flush, and the model extracts and decides in
# one answer. Cases of blind set G, read once (session 15) and a dev set since; the answers
# are evals/routing_blind_g_capable_answers.jsonl.

TURN_SET = "routing_blind_g"
TURN_PERSONAS, TURN_CASES = load_set(TURN_SET)
TURN_BY_NAME = {case.name.split("_")[0].replace("/", "-"): case for case in TURN_CASES}
TURN_TEST = "test_a_capable_models_combined_answers_keep_memory_current"
TURN_RECORDED = recorded(TURN_TEST)


def say_case(
    llm,  # noqa: F811 (the fixture's factory)
    name: str,
) -> tuple[MemoryManager, Case, dict[str, str], list[UpdateResult]]:
    """Store the case's persona verbatim (text -> id), then say its message in a session and
    flush it: one call extracts the facts and decides them."""
    case = TURN_BY_NAME[name]
    mm = llm(clock=fixed_clock(), llm_mode="tools", llm_max_retries=0, llm_turn_calls="one")
    ids = seed(mm, "u", [*TURN_PERSONAS[case.persona], *case.existing])
    said = [{"role": "user", "content": case.message}]
    observed = mm.observe(said, user_id="u", session_id="s")
    flushed = mm.flush("s", user_id="u")
    assert observed.error is None and flushed.error is None, (observed.error, flushed.error)
    return mm, case, ids, [*observed.results, *flushed.results]


@pytest.mark.vcr
@pytest.mark.parametrize("name", TURN_RECORDED)
def test_a_capable_models_combined_answers_keep_memory_current(llm, vcr, name):  # noqa: F811
    mm, case, ids, results = say_case(llm, name)
    assert [r.op for r in results if r.op is Op.PENDING] == []  # every answer applied
    memories = {m.id: m for m in mm.list(user_id="u", include_inactive=True)}
    changed = {
        i
        for text, i in ids.items()
        if (memories[i].content, memories[i].status) != (text, Status.ACTIVE)
    }
    named = set()
    for outcome in case.outcomes:
        named |= {ids[t] for t in (*outcome.targets, *outcome.keep)}
        for text in outcome.keep:
            assert ids[text] not in changed, (case.message, text)
        if outcome.op == "supersede":
            for text in outcome.targets:
                assert ids[text] in changed, (case.message, text)
        if outcome.op == "noop":
            assert not {ids[t] for t in outcome.targets} & changed, case.message
    assert changed <= named, [memories[i].content for i in changed - named]  # nothing unrelated
    new = [m for i, m in memories.items() if i not in set(ids.values())]
    adds = sum(o.op == "add" for o in case.outcomes)
    assert len([m for m in new if m.status is Status.ACTIVE]) >= adds, case.message
    # The combined call first; then a decision call for each fact whose own route found a
    # memory the combined call never listed (llm_turn_recheck).
    combined, *rechecks = vcr.requests
    assert b"DecidedFacts" in combined.body
    assert all(b"MemoryDecision" in asked.body for asked in rechecks)
    assert len(rechecks) <= len(results)
