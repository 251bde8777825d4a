"""A chat loop with long-term memory, against any OpenAI-compatible endpoint.

    export MEMMAN_LLM_MODEL=qwen2.5:7b OPENAI_BASE_URL=http://localhost:11434/v1
    python examples/chatbot.py --user alice --db chat-memory.db

The memory calls are mem0's README example, with one line changed (the import): memman
extracts the facts of each turn at once and decides, for each, ADD, UPDATE, DELETE or NONE
(printed with the reason as `[memory] ...`). The same model answers the chat and extracts;
set MEMMAN_CHAT_MODEL to chat with another one.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable

from openai import OpenAI

from memman.mem0 import Memory  # was: from mem0 import Memory


def chat_with_memories(
    client: OpenAI, memory: Memory, model: str, message: str, user_id: str
) -> tuple[str, list[dict]]:
    """One turn: recall, answer, remember. Returns the answer and memory's decisions."""
    relevant_memories = memory.search(query=message, filters={"user_id": user_id}, top_k=3)
    memories_str = "\n".join(f"- {entry['memory']}" for entry in relevant_memories["results"])
    system_prompt = (
        "You are a helpful AI. Answer the question based on query and memories.\n"
        f"User Memories:\n{memories_str}"
    )
    messages = [{"role": "system", "content": system_prompt}, {"role": "user", "content": message}]
    response = client.chat.completions.create(model=model, messages=messages)
    assistant_response = response.choices[0].message.content or ""
    messages.append({"role": "assistant", "content": assistant_response})
    decisions = memory.add(messages, user_id=user_id)["results"]
    return assistant_response, decisions


def main(
    argv: list[str] | None = None,
    *,
    read: Callable[[str], str] = input,
    write: Callable[[str], None] = print,
) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--user", default="default_user")
    parser.add_argument("--db", default="chat-memory.db")
    args = parser.parse_args(argv)
    model = os.environ.get("MEMMAN_CHAT_MODEL") or os.environ.get("MEMMAN_LLM_MODEL")
    if not model:
        parser.error("set MEMMAN_LLM_MODEL (and OPENAI_BASE_URL for a local server)")
    client = OpenAI(api_key=os.environ.get("OPENAI_API_KEY") or "not-needed")
    with Memory(args.db) as memory:
        write("Chat with AI (type 'exit' to quit)")
        while True:
            try:
                user_input = read("You: ").strip()
            except EOFError:
                break
            if user_input.lower() == "exit":
                break
            answer, decisions = chat_with_memories(client, memory, model, user_input, args.user)
            write(f"AI: {answer}")
            for d in decisions:
                write(f"  [memory] {d['event']} {d['memory']!r}: {d['reason']}")
    write("Goodbye!")


if __name__ == "__main__":
    main()
