"""The structured-output engines (issue 13, "Dependencies"): instructor (memman[instructor]) and
memman's own (memman/llm/structured.py), chosen by llm_engine. Against the local fake server.

- Without instructor, auto uses memman's engine and decisions work; asking for instructor
  then is a ConfigError naming the extra.
- Both engines put the same request on the wire in every mode, take the last JSON of an
  md_json answer, re-ask with the validation error and do not re-ask a cut-off answer.
The other LLM modules run with MEMMAN_LLM_ENGINE=builtin in .ci/run as well.
"""

from __future__ import annotations

import json
import sys

import pytest

from memman import Op
from memman.errors import ConfigError
from memman.llm.client import instructor_usable
from tests.decisions import CURRENT, NEW, OLD, answer, decision, llm_manager
from tests.fake_openai import Reply, chat_completion

# instructor is an extra: where it is absent (.ci/run's venv beside the newest openai) only
# memman's own engine is tested.
NO_INSTRUCTOR = pytest.mark.skipif(not instructor_usable(), reason="memman[instructor] absent")
ENGINES = [pytest.param("instructor", marks=NO_INSTRUCTOR), "builtin"]


@pytest.fixture
def without_instructor(monkeypatch):
    """instructor cannot be imported, as in an environment that kept a newer openai."""
    monkeypatch.setitem(sys.modules, "instructor", None)


@pytest.fixture
def primed(tmp_path, fake_openai):
    """A store holding OLD, whose next related fact goes to the fake server."""

    def make(**settings):
        mm = llm_manager(str(tmp_path / "memory.db"), fake_openai.base_url, **settings)
        mm.update_memory(OLD, user_id="alice")  # novel: no LLM call
        return mm

    return make


def test_without_instructor_auto_decides_with_memmans_engine(
    primed, fake_openai, without_instructor
):
    mm = primed(llm_mode="tools", llm_max_retries=0)
    fake_openai.script(answer("UPDATE", id=1, content=CURRENT, reason="switched back"))
    result = mm.update_memory(NEW, user_id="alice")
    assert (result.op, result.content) == (Op.UPDATE, CURRENT)
    (request,) = fake_openai.requests
    name = request["json"]["tools"][0]["function"]["name"]
    assert request["json"]["tool_choice"] == {"type": "function", "function": {"name": name}}
    event = mm.events(user_id="alice", limit=1)[0]
    assert (event.attempts, event.tokens) == (1, 120)


def test_asking_for_instructor_without_it_names_the_extra(tmp_path, without_instructor):
    with pytest.raises(ConfigError, match=r"memman\[instructor\]"):
        llm_manager(str(tmp_path / "memory.db"), None, llm_engine="instructor")


def test_an_unknown_engine_is_a_config_error(tmp_path):
    with pytest.raises(ConfigError, match="llm_engine must be auto or one of"):
        llm_manager(str(tmp_path / "memory.db"), None, llm_engine="magic")


@NO_INSTRUCTOR
@pytest.mark.parametrize("mode", ["tools", "json_schema", "json", "md_json"])
def test_both_engines_ask_alike_in_every_mode(tmp_path, fake_openai, mode):
    requests = {}
    for engine in ("instructor", "builtin"):
        mm = llm_manager(str(tmp_path / f"{engine}.db"), fake_openai.base_url,
                         llm_engine=engine, llm_mode=mode, llm_max_retries=0)  # fmt: skip
        mm.update_memory(OLD, user_id="alice")
        fake_openai.script(answer("UPDATE", id=1, content=CURRENT))
        assert mm.update_memory(NEW, user_id="alice").op is Op.UPDATE
        mm.close()
        requests[engine] = fake_openai.requests.pop()["json"]
    ours, theirs = requests["builtin"], requests["instructor"]
    assert sorted(ours) == sorted(theirs)
    for key in ("tools", "tool_choice", "response_format", "max_tokens", "temperature"):
        assert ours.get(key) == theirs.get(key), key
    roles = [[m["role"] for m in r["messages"]] for r in (ours, theirs)]
    assert roles[0] == roles[1]
    if mode in ("json", "md_json"):  # the schema travels in a system message
        assert '"MemoryDecision"' in ours["messages"][0]["content"]


@pytest.mark.parametrize("engine", ENGINES)
def test_md_json_takes_the_last_json_of_the_answer(primed, fake_openai, engine):
    mm = primed(llm_engine=engine, llm_mode="md_json", llm_max_retries=0)
    quoted = json.dumps(decision("DELETE", id=1))  # JSON the model quotes before answering
    final = json.dumps(decision("UPDATE", id=1, content=CURRENT))
    text = f"The fact is not {quoted}, so:\n```json\n{final}\n```"
    fake_openai.script(Reply(body=chat_completion(content=text)))
    result = mm.update_memory(NEW, user_id="alice")
    assert (result.op, result.content) == (Op.UPDATE, CURRENT)


@pytest.mark.parametrize("engine", ENGINES)
def test_reask_sends_the_validation_error_and_sums_tokens(primed, fake_openai, engine):
    mm = primed(llm_engine=engine, llm_mode="tools", llm_max_retries=1)
    fake_openai.script(
        Reply(body=chat_completion(tool_args=decision("DELETE", id=9))),
        answer("UPDATE", id=1, content=CURRENT),
    )
    result = mm.update_memory(NEW, user_id="alice")
    assert (result.op, result.content) == (Op.UPDATE, CURRENT)
    reask = fake_openai.requests[1]["json"]["messages"]
    assert "not one of the memories shown" in str(reask)
    # An OpenAI server refuses an assistant tool call with no tool reply after it.
    for index, message in enumerate(reask):
        if message.get("tool_calls"):
            assert reask[index + 1]["role"] == "tool"
    event = mm.events(user_id="alice", limit=1)[0]
    assert (event.attempts, event.tokens) == (2, 240)


@pytest.mark.parametrize("engine", ENGINES)
def test_an_answer_cut_off_at_max_tokens_is_parked_not_reasked(primed, fake_openai, engine):
    mm = primed(llm_engine=engine, llm_mode="json_schema", llm_max_retries=2)
    body = chat_completion(content='{"decision": {"op": "UPDATE", "id": 1, "content": "User')
    body["choices"][0]["finish_reason"] = "length"
    fake_openai.script(Reply(body=body))
    result = mm.update_memory(NEW, user_id="alice")
    assert result.op is Op.PENDING and len(fake_openai.requests) == 1
    assert mm.pending(user_id="alice")[0].content == NEW


@pytest.mark.parametrize("engine", ENGINES)
def test_both_engines_validate_strictly(primed, fake_openai, engine):
    """instructor validates strictly; memman's engine too: "1" is not the id 1."""
    mm = primed(llm_engine=engine, llm_mode="tools", llm_max_retries=0)
    fake_openai.script(answer("DELETE", id="1"))
    assert mm.update_memory(NEW, user_id="alice").op is Op.PENDING
    assert "valid integer" in mm.pending(user_id="alice")[0].error
