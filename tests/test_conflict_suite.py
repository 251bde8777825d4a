"""The conflict suite is well formed, and the benchmark's scoring counts what it claims.

The scoring runs on three hand-made cases through the public API, offline. Two are labelled
against what any write path does with them (a repeat labelled keep_both, an unrelated fact
labelled noop), so every metric is seen both hitting and missing.
"""

from __future__ import annotations

import json
from collections import Counter

import pytest

from benchmarks.bench_conflicts import (
    EXPECTS,
    KINDS,
    STYLES,
    Case,
    Oracle,
    load_cases,
    run_case,
    score,
)
from memman import MemoryManager
from tests.decisions import llm_manager

EXPECT_OF_KIND = {"lookalike": "keep_both", "paraphrase": "noop"}  # every other kind supersedes


def test_the_suite_is_well_formed():
    cases = load_cases()  # raises on a malformed line

    assert len(cases) >= 150
    assert len({c.name for c in cases}) == len(cases)
    per_kind = Counter(c.kind for c in cases)
    assert set(per_kind) == set(KINDS)
    assert min(per_kind.values()) >= 15
    assert {c.style for c in cases} == set(STYLES)
    assert {c.expect for c in cases} == set(EXPECTS)
    for case in cases:
        assert case.expect == EXPECT_OF_KIND.get(case.kind, "supersede"), case.name
        assert case.target is not None and 0 <= case.target < len(case.existing), case.name
        third = all(t.startswith("User") for t in [*case.existing, case.candidate])
        assert (case.style == "third") == third, case.name


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"target": 1}, "target must index existing"),
        ({"target": None}, "target must index existing"),
        ({"kind": "contradiction"}, "kind must be one of"),
        ({"style": "second"}, "style must be one of"),
        ({"expect": "update"}, "expect must be one of"),
        ({"existing": []}, "existing must be a non-empty list"),
        ({"candidate": " "}, "candidate must be a non-empty string"),
        ({"extra": 1}, "expected exactly the fields"),
    ],
)
def test_a_malformed_line_is_refused_with_its_number(tmp_path, change, message):
    good = {
        "name": "x",
        "kind": "negation",
        "style": "first",
        "existing": ["I am vegan"],
        "candidate": "I'm not vegan",
        "expect": "supersede",
        "target": 0,
    }
    path = tmp_path / "cases.jsonl"
    path.write_text(json.dumps(good) + "\n" + json.dumps(good | change) + "\n")

    with pytest.raises(ValueError, match=f"cases.jsonl:2: {message}"):
        load_cases(path)


def test_scoring_counts_hits_and_misses(tmp_path):
    cases = [
        # Caught by every write path: a plain negation replaces its memory.
        Case("taken back", "negation", "first",
             ["I am vegetarian", "I live in Berlin"], "I am not vegetarian", "supersede", 0),
        # A word-for-word repeat labelled keep_both: the hash tier NOOPs onto the target.
        Case("repeat", "lookalike", "first", ["I have a cat"], "I have a cat", "keep_both", 0),
        # An unrelated fact labelled noop: nothing retrieves the target, the fact is added.
        Case("unrelated", "paraphrase", "first",
             ["I live in Berlin"], "I play the violin", "noop", 0),
    ]  # fmt: skip
    distractors = ["I enjoy hiking.", "I have two brothers."]
    with MemoryManager(str(tmp_path / "m.db")) as mm:  # no LLM configured: offline
        outcomes = [run_case(mm, case, f"user{i}", distractors) for i, case in enumerate(cases)]

    metrics = score(outcomes)

    assert metrics["overall"] == {
        "cases": 3,
        "recall": 0.5,  # the negation's target was scored, the unrelated one's was not
        "still_active": 0.0,
        "false_updates": 1.0,
        "kept_apart": 0.0,
        "noop_accuracy": 0.0,
        "llm_calls_per_candidate": None,
    }
    assert metrics["kind:negation"]["recall"] == 1.0
    assert metrics["kind:paraphrase"]["recall"] == 0.0
    assert metrics["style:first"]["cases"] == 3
    assert set(metrics) == {
        "overall", "kind:negation", "kind:lookalike", "kind:paraphrase", "style:first"
    }  # fmt: skip
    assert [o.op for o in outcomes] == ["UPDATE", "NOOP", "ADD"]


def test_the_llm_mode_fake_answers_as_the_case_expects_when_it_is_shown_the_target(
    db, fake_openai
):
    """The llm mode judges routing: a shown target gets the case's expected decision, so
    a refinement the decider saw is no longer counted as "still active" (an ADD-everything
    fake counted its own answers: 0.22 against 0.08 offline in session 6)."""
    cases = [
        Case("refined", "refinement", "first", ["I like jazz"],
             "I like jazz, especially bebop", "supersede", 0),
        Case("apart", "lookalike", "first", ["I like jazz"], "I like hiking", "keep_both", 0),
    ]  # fmt: skip
    oracle = Oracle()
    fake_openai.default_reply = oracle.reply
    with llm_manager(db, fake_openai.base_url, llm_mode="tools") as mm:
        outcomes = [
            run_case(mm, case, f"user{i}", ["I have two brothers."], None, oracle)
            for i, case in enumerate(cases)
        ]

    assert [(o.op, o.target_intact) for o in outcomes] == [("UPDATE", False), ("ADD", True)]
    assert outcomes[0].tier == "llm" and outcomes[0].shown_target is None
