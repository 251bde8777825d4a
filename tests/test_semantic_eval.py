"""`memman eval`: decision cases through the offline decider and a fake OpenAI server."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from memman.cli import app
from memman.config import load_settings
from memman.errors import InvalidInputError
from memman.tuning.evaluate import evaluate, load_cases
from tests.decisions import answer
from tests.test_cli import memman  # noqa: F401 (the CLI runner fixture)

SHIPPED = Path(__file__).resolve().parents[1] / "evals" / "cases.jsonl"
PROMPTS = Path(__file__).resolve().parents[1] / "prompts"


def test_shipped_cases_cover_every_kind():
    cases = load_cases(SHIPPED)
    assert len(cases) >= 60
    assert {c.op for c in cases} == {"ADD", "UPDATE", "DELETE", "NOOP"}
    kinds = {c.name.split()[0] for c in cases}
    assert {"dup", "para", "refine", "contra", "retract", "number", "neg", "new"} <= kinds


def test_offline_run_is_deterministic_and_counts_no_llm_calls():
    cases = load_cases(SHIPPED)
    first, second = (evaluate(cases, load_settings()) for _ in range(2))
    assert [o.op for o in first.outcomes] == [o.op for o in second.outcomes]
    assert first.accuracy_by_op()["ADD"] == (10, 10)  # unrelated facts are always new
    assert sum(o.llm_calls + o.tokens for o in first.outcomes) == 0
    assert sum(sum(row.values()) for row in first.confusion().values()) == len(cases)


def test_llm_run_counts_calls_tokens_and_prompt_hash(tmp_path, fake_openai):
    case = {"existing": ["Lives in Berlin"], "candidate": "Lives in Berlin since 2019"}
    path = tmp_path / "cases.jsonl"
    path.write_text(json.dumps({**case, "op": "ADD", "name": "x"}) + "\n")
    fake_openai.script(answer("ADD"))
    settings = load_settings(
        llm_model="gpt-4o-mini", llm_api_key="badkey", llm_base_url=fake_openai.base_url
    )
    report = evaluate(load_cases(path), settings)
    (outcome,) = report.outcomes
    assert (outcome.op, outcome.tier, outcome.llm_calls, outcome.tokens) == ("ADD", "llm", 1, 120)
    assert len(report.prompt_hashes) == 1 and len(next(iter(report.prompt_hashes))) == 12


def test_cli_compares_two_prompt_folders(tmp_path):
    result = CliRunner().invoke(
        app, ["eval", str(SHIPPED), "--prompts", str(PROMPTS), "--prompts", str(PROMPTS)]
    )
    assert result.exit_code == 0, result.output
    assert "expected op" in result.output and "confusion" in result.output
    assert result.output.count("10/10") == 2


@pytest.mark.parametrize(
    "line",
    [
        '{"existing": [], "candidate": "x", "op": "MERGE"}',
        '{"candidate": "x"}',
        "not json",
        '{"existing": ["a"], "candidate": "x", "op": "NOOP", "target": 3}',
    ],
)
def test_bad_cases_are_refused(tmp_path, line):
    (tmp_path / "c.jsonl").write_text(line + "\n")
    with pytest.raises(InvalidInputError):
        load_cases(tmp_path / "c.jsonl")


@pytest.mark.parametrize("text", ["", "\n\n"])
def test_a_file_of_no_cases_is_one_line_not_a_division_by_zero(tmp_path, memman, text):  # noqa: F811
    path = tmp_path / "cases.jsonl"
    path.write_text(text)
    with pytest.raises(InvalidInputError, match="no decision cases"):
        load_cases(path)
    run = memman("eval", str(path))  # was a ZeroDivisionError traceback
    assert run.code == 1 and run.err.startswith("Error: ") and "no decision cases" in run.err
