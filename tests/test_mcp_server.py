"""`memman mcp` end to end: the official SDK's client spawns `python -m memman mcp` over stdio.

Each test drives one real server process on a SQLite file under tmp_path, then opens the same
file with MemoryManager to check that the tools wrote through the one write path.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

from memman import MemoryManager, Op

pytest.importorskip("mcp.server.mcpserver", reason="the mcp extra (the MCP SDK 2.x) is missing")

from mcp import Client
from mcp.client.stdio import StdioServerParameters

from tests.docs import blocks, section
from tests.test_cli import memman  # noqa: F401 (the CLI runner fixture)

REPO = Path(__file__).resolve().parents[1]
TOOLS = {
    "remember",
    "recall",
    "memory_context",
    "list_memories",
    "memory_history",
    "forget",
    "add_observations",
    "search_nodes",
    "read_graph",
    "delete_observations",
}

Session = Callable[[Client], Awaitable[None]]


def run_server(db: str, session: Session, *args: str) -> None:
    """Spawn the server as an MCP client configuration would, and run `session` against it."""
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "memman", "mcp", "--db", db, *args],
        env={"PYTHONPATH": str(REPO)},  # this checkout's memman, whatever is installed
    )

    async def main() -> None:
        async with Client(params) as client:
            await session(client)

    asyncio.run(main())


async def call(client: Client, tool: str, **arguments: Any) -> dict[str, Any]:
    result = await client.call_tool(tool, arguments)
    assert not result.is_error, result.content
    return result.structured_content


async def refused(client: Client, tool: str, **arguments: Any) -> str:
    result = await client.call_tool(tool, arguments)
    assert result.is_error
    return result.content[0].text


def test_remember_recall_context_history_forget_over_stdio(db):
    seen: dict[str, Any] = {}

    async def session(client: Client) -> None:
        assert {t.name for t in (await client.list_tools()).tools} >= TOOLS

        added = await call(client, "remember", fact="User prefers flat white")
        assert (added["op"], added["reason"]) == ("ADD", "no similar memory")
        repeat = await call(client, "remember", fact="user prefers  FLAT white.")
        assert (repeat["op"], repeat["tier"], repeat["memory_id"]) == (
            "NOOP",
            "hash",
            added["memory_id"],
        )
        extended = await call(client, "remember", fact="User prefers flat white with oat milk")
        assert extended["op"] == "UPDATE"
        assert extended["previous_content"] == "User prefers flat white"
        await call(client, "remember", fact="User is allergic to peanuts", category="safety")
        await call(client, "remember", fact="Bob prefers espresso", user_id="bob")

        hits = (await call(client, "recall", query="flat white"))["memories"]
        assert [h["content"] for h in hits] == ["User prefers flat white with oat milk"]
        assert hits[0]["score"] > 0
        block = await call(client, "memory_context", query="flat white?")
        assert "oat milk" in block["text"] and "peanuts" in block["text"]
        assert "espresso" not in block["text"]

        history = await call(client, "memory_history", memory_id=added["memory_id"][:8])
        assert [e["op"] for e in history["events"]] == ["ADD", "NOOP", "UPDATE"]
        assert history["events"][-1]["after"] == "User prefers flat white with oat milk"

        # Scoped by user: bob sees his memory only, and alice's ids mean nothing to him.
        bobs = (await call(client, "list_memories", user_id="bob"))["memories"]
        assert [m["content"] for m in bobs] == ["Bob prefers espresso"]
        assert (await call(client, "recall", query="flat white", user_id="bob"))["memories"] == []
        assert "no memory" in await refused(
            client, "memory_history", memory_id=added["memory_id"], user_id="bob"
        )
        assert "no memory" in await refused(
            client, "forget", memory_id=added["memory_id"], user_id="bob"
        )

        one = await call(client, "forget", memory_id=added["memory_id"])
        assert [f["op"] for f in one["forgotten"]] == ["DELETE"]
        assert "give memory_id" in await refused(client, "forget")
        rest = await call(client, "forget", everything=True)
        assert [f["content"] for f in rest["forgotten"]] == ["User is allergic to peanuts"]
        assert (await call(client, "list_memories"))["memories"] == []
        seen["id"] = added["memory_id"]

    run_server(db, session, "--user", "alice")

    with MemoryManager(db) as mm:
        assert [m.content for m in mm.list(user_id="bob")] == ["Bob prefers espresso"]
        assert mm.list(user_id="alice") == []
        ops = [e.op for e in mm.history(seen["id"], user_id="alice")]
        assert ops == [Op.ADD, Op.NOOP, Op.UPDATE, Op.DELETE]  # deleted, history kept


def test_bad_input_is_a_readable_tool_error_and_nothing_is_stored(db):
    async def session(client: Client) -> None:
        message = await refused(client, "remember", fact="   ")
        assert message.startswith("Error executing tool remember: ")
        assert "empty" in message
        assert "limit" in await refused(client, "recall", query="x", limit=0)

    run_server(db, session, "--user", "alice")
    with MemoryManager(db) as mm:
        assert mm.list(user_id="alice") == []


def test_reference_memory_server_tool_names(db):
    async def session(client: Client) -> None:
        added = await call(
            client,
            "add_observations",
            observations=[
                {"entityName": "default_user", "contents": ["Lives in Lisbon", "Has a dog"]},
                {"entityName": "Acme", "contents": ["Acme makes rockets"]},
            ],
        )
        assert [r["addedObservations"] for r in added["results"]] == [
            ["Lives in Lisbon", "Has a dog"],
            ["Acme makes rockets"],
        ]
        again = await call(
            client,
            "add_observations",
            observations=[{"entityName": "default_user", "contents": ["lives in lisbon"]}],
        )
        assert again["results"][0]["addedObservations"] == []  # a NOOP: already known
        assert again["results"][0]["decisions"][0]["op"] == "NOOP"

        graph = await call(client, "read_graph")
        assert graph["relations"] == []
        assert {e["name"]: e["observations"] for e in graph["entities"]} == {
            "default_user": ["Lives in Lisbon", "Has a dog"],
            "Acme": ["Acme makes rockets"],
        }
        found = await call(client, "search_nodes", query="rockets")
        assert [(e["name"], e["observations"]) for e in found["entities"]] == [
            ("Acme", ["Acme makes rockets"])
        ]

        gone = await call(
            client,
            "delete_observations",
            deletions=[{"entityName": "default_user", "observations": ["Has a dog."]}],
        )
        assert gone["success"] and "1" in gone["message"]
        names = await call(client, "read_graph")
        assert {e["name"]: e["observations"] for e in names["entities"]}["default_user"] == [
            "Lives in Lisbon"
        ]
        other = await call(client, "read_graph", user_id="someone-else")
        assert other == {"entities": [], "relations": []}

    run_server(db, session, "--user", "u1")
    with MemoryManager(db) as mm:
        assert {m.content for m in mm.list(user_id="u1")} == {
            "Lives in Lisbon",
            "Acme makes rockets",
        }


def test_an_agent_id_without_a_user_id_is_the_server_user_s_agent(db):
    async def session(client: Client) -> None:
        await call(client, "remember", fact="Answer in French", agent_id="helper")
        own = await call(client, "list_memories", agent_id="helper")
        assert [m["content"] for m in own["memories"]] == ["Answer in French"]
        assert (await call(client, "list_memories"))["memories"] == []

    run_server(db, session, "--user", "u1")
    with MemoryManager(db) as mm:
        [memory] = mm.list(user_id="u1", agent_id="helper")
        assert memory.content == "Answer in French"


def test_delete_observations_deletes_from_the_named_entity_only(db):
    async def session(client: Client) -> None:
        await call(
            client,
            "add_observations",
            observations=[{"entityName": "Acme", "contents": ["Makes rockets"]}],
        )
        kept = await call(
            client,
            "delete_observations",
            deletions=[{"entityName": "Globex", "observations": ["Makes rockets"]}],
        )
        assert "Deleted 0" in kept["message"]

    run_server(db, session, "--user", "u1")
    with MemoryManager(db) as mm:
        assert [m.content for m in mm.list(user_id="u1")] == ["Makes rockets"]


def test_add_observations_with_a_bad_text_stores_none_of_them(db):
    async def session(client: Client) -> None:
        message = await refused(
            client,
            "add_observations",
            observations=[{"entityName": "Acme", "contents": ["Has a launch site", "  "]}],
        )
        assert "empty" in message

    run_server(db, session, "--user", "u1")
    with MemoryManager(db) as mm:
        assert mm.list(user_id="u1") == []


def test_a_locked_server_refuses_another_user(db):
    async def session(client: Client) -> None:
        await call(client, "remember", fact="Likes jazz", user_id="u1")
        for tool, arguments in [
            ("recall", {"query": "jazz"}),
            ("remember", {"fact": "Likes chess"}),
            ("list_memories", {}),
            ("read_graph", {}),
        ]:
            message = await refused(client, tool, user_id="u2", **arguments)
            assert "serves user 'u1' only" in message
        listed = await call(client, "list_memories")
        assert [m["content"] for m in listed["memories"]] == ["Likes jazz"]

    run_server(db, session, "--user", "u1", "--lock")
    with MemoryManager(db) as mm:
        assert mm.list(user_id="u2") == []


def test_the_docs_client_config_starts_this_server():
    [block] = blocks(section("docs/integrations.md", "MCP server"), "json")
    config = json.loads(block)
    server = config["mcpServers"]["memory"]
    assert server["command"] == "memman" and server["args"][0] == "mcp"
    assert {"--db", "--user"} <= set(server["args"])


@pytest.mark.parametrize("user", ["", "  "])
def test_a_blank_server_user_is_refused_at_start(memman, db, user):  # noqa: F811
    # `--user ""` (an unset variable in a client's config) started a server whose every
    # tool call then failed with "user_id must be a non-empty string".
    run = memman("mcp", "--user", user, "--db", db)
    assert run.code == 1 and run.err.startswith("Error: user_id") and run.out == ""


def test_the_server_needs_a_user(tmp_path):
    # Without --user the server used to start and act on a user named "default", while
    # every other command that reads or changes one user's memories requires --user.
    db = tmp_path / "m.db"
    done = subprocess.run(
        [sys.executable, "-m", "memman", "mcp", "--db", str(db)],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.splitlines()[-1] == "Error: Missing option '--user' / '-u'."
    assert not db.exists()  # no store was opened, no user "default" written
