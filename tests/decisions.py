"""Shared by the decision tests: scripted decider answers, a manager wired to an endpoint,
and the offline "the new fact replaces the old" / "both stay" checks."""

from __future__ import annotations

import json
import re
from typing import Any

from memman import Event, MemoryManager, Op, Tier
from tests.fake_openai import Reply, chat_completion

# The pair the LLM tests use as "only an LLM can settle this": the same verb, a new object,
# and nothing in the words says whether the old one still holds (a fan may follow two
# clubs). No deterministic tier decides it, so the next write after OLD goes to the decider.
OLD = "User supports Arsenal"
NEW = "User supports Chelsea now"
CURRENT = "User supports Chelsea (switched from Arsenal)"


def decision(op: str, *, reason: str = "x", **given: Any):
    """The tool-call arguments of one MemoryDecision, as a model would send them (id,
    content, subject, attribute where given)."""
    fields: dict[str, Any] = {"op": op, "reason": reason}
    fields.update((name, value) for name, value in given.items() if value is not None)
    return {"decision": fields}


def answer(op: str, **fields: Any) -> Reply:
    """A 200 reply whose tool call carries one decision (instructor TOOLS mode)."""
    return Reply(body=chat_completion(tool_args=decision(op, **fields)))


def llm_manager(path: str, base_url: str | None, **settings: Any) -> MemoryManager:
    """A MemoryManager whose ambiguous cases go to the LLM decider at base_url."""
    settings.setdefault("llm_model", "gpt-4o-mini")
    settings.setdefault("llm_api_key", "badkey")
    return MemoryManager(path, llm_base_url=base_url, **settings)


def seed(path: str, facts: list[str], user: str = "ana") -> list[str]:
    """Store facts with no LLM (an offline manager on the same file), so a test's LLM calls
    are its own: with an LLM, a fact is decided with the user's profile shown, so seeding
    through the LLM manager would call the model for every fact after the first. The ids."""
    offline = MemoryManager(path)
    return [offline.update_memory(fact, user_id=user).memory_id for fact in facts]


def chat_calls(fake_openai: Any) -> list[dict]:
    """The chat-completion requests the fake server has received (the decider's calls)."""
    return [r for r in fake_openai.requests if r["path"].endswith("/chat/completions")]


def active(mm: MemoryManager, user: str = "ana") -> list[str]:
    """The texts of a user's active memories, sorted."""
    return sorted(m.content for m in mm.list(user_id=user))


def replaced_offline(db: str, old: str, new: str) -> None:
    """Write old, then new, for user "ana" with no LLM configured: new must replace old in
    place by the topic tier, leaving only new active."""
    mm = MemoryManager(db)
    first = mm.update_memory(old, user_id="ana")
    r = mm.update_memory(new, user_id="ana")
    assert (r.op, r.tier, r.memory_id) == (Op.UPDATE, Tier.TOPIC, first.memory_id), (old, new)
    assert active(mm) == [new]


def kept_apart(db: str, old: str, new: str) -> None:
    """Write old, then new, for user "ana" with no LLM configured: both must stay active."""
    mm = MemoryManager(db)
    mm.update_memory(old, user_id="ana")
    r = mm.update_memory(new, user_id="ana")
    assert r.op is Op.ADD, (old, new)
    assert active(mm) == sorted([old, new])


def replaced_by_topic(mm: MemoryManager, fake_openai: Any, old: str, new: str) -> Event:
    """The topic rule replaces old with new. Offline it settles alone: tier topic, in place,
    only new active. With an LLM (mm's decider at fake_openai) a rule only proposes: the one
    call shows old first, and the model's UPDATE of it applies. Returns the offline UPDATE's
    audit event."""
    offline = MemoryManager(":memory:")
    first = offline.update_memory(old, user_id="ana")
    r = offline.update_memory(new, user_id="ana")
    assert (r.op, r.tier, r.memory_id) == (Op.UPDATE, Tier.TOPIC, first.memory_id), (old, new)
    assert active(offline) == [new]
    [_, updated] = offline.history(first.memory_id, user_id="ana")
    assert (updated.content_before, updated.content_after) == (old, new)

    stored = mm.update_memory(old, user_id="ana")
    fake_openai.script(answer("UPDATE", id=1, content=new))
    r = mm.update_memory(new, user_id="ana")
    [call] = chat_calls(fake_openai)
    prompt = call["json"]["messages"][-1]["content"]
    [first_shown] = [line for line in prompt.splitlines() if line.startswith("[1] (")]
    assert first_shown.endswith(json.dumps(old, ensure_ascii=False)), (first_shown, old)
    assert (r.op, r.tier, r.memory_id) == (Op.UPDATE, Tier.LLM, stored.memory_id)
    assert active(mm) == [new]
    return updated


def add_everything(request: dict) -> Reply:
    """ADD for every candidate the request asks about: one decision, or one per candidate of
    a batch call (its prompt numbers them "Candidate N:"); as a tool call, or as JSON text
    when the request asks for a JSON schema instead of a tool."""
    prompt = request["messages"][0]["content"]
    numbers = [int(n) for n in re.findall(r"^Candidate (\d+):", prompt, re.M)]
    if numbers:
        tool = "BatchDecisions"
        args: dict = {
            "decisions": [
                {"number": n, "decision": {"op": "ADD", "reason": "kept"}} for n in numbers
            ]
        }
    else:
        tool, args = "MemoryDecision", {"decision": {"op": "ADD", "reason": "kept"}}
    if "tools" in request:
        return Reply(body=chat_completion(tool_args=args, tool_name=tool))
    return Reply(body=chat_completion(content=json.dumps(args)))


def asks_a_decision(request: dict) -> bool:
    """A decision request (one candidate or a batch), not an extraction or a merge."""
    prompt = request["messages"][0]["content"]
    return re.search(r"^Candidate( \d+)?:", prompt, re.M) is not None
