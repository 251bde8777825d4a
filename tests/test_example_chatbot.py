"""examples/chatbot.py runs its chat loop against an OpenAI-compatible server (the fake one)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

from tests.fake_openai import Reply, chat_completion
from tests.test_lifecycle_observe import preferences

EXAMPLE = Path(__file__).parent.parent / "examples" / "chatbot.py"


def load_example():
    spec = importlib.util.spec_from_file_location("chatbot_example", EXAMPLE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_chat_loop_remembers_between_turns(tmp_path, fake_openai, monkeypatch):
    monkeypatch.setenv("MEMMAN_LLM_MODEL", "fake-model")
    monkeypatch.setenv("OPENAI_BASE_URL", fake_openai.base_url)
    fake_openai.script(
        Reply(body=chat_completion(content="Lovely, oat milk it is.")),  # turn 1: the answer
        preferences("User drinks flat whites with oat milk"),  # turn 1: memory
        Reply(body=chat_completion(content="A flat white with oat milk.")),  # turn 2: answer
        preferences(),  # turn 2: a question states nothing new
    )
    said = iter(["I drink flat whites with oat milk.", "Which milk goes in my flat white?", "exit"])
    shown: list[str] = []

    load_example().main(
        ["--user", "alice", "--db", str(tmp_path / "chat.db")],
        read=lambda prompt: next(said),
        write=shown.append,
    )

    assert "AI: Lovely, oat milk it is." in shown
    assert any(line.startswith("  [memory] ADD 'User drinks flat whites") for line in shown)
    second_turn = fake_openai.requests[2]["json"]["messages"]
    assert "- User drinks flat whites with oat milk" in second_turn[0]["content"]
    assert shown[-1] == "Goodbye!"
