"""Commands that read a user's memory: search, context, list, history."""

from __future__ import annotations

from typing import Annotated

import typer
from pydantic import TypeAdapter
from rich.table import Table

from memman.cli.common import (
    AgentOption,
    DbOption,
    JsonOption,
    UserOption,
    _open,
    _print_json,
    console,
)
from memman.cli.render import _events_table, _memories_table, _short
from memman.lifecycle.block import ContextBlock


def search(
    query: str,
    user: UserOption,
    agent: AgentOption = None,
    limit: Annotated[int, typer.Option(help="How many hits.")] = 5,
    as_json: JsonOption = False,
    db: DbOption = None,
) -> None:
    """Search a user's active memories."""
    with _open(db) as mm:
        hits = mm.search(query, user_id=user, agent_id=agent, limit=limit)
        if as_json:
            _print_json([hit.model_dump(mode="json") for hit in hits])
            return
        table = Table(title=f"{len(hits)} hits for {query!r}")
        for column in ("id", "score", "content"):
            table.add_column(column, overflow="fold")
        for hit in hits:
            table.add_row(_short(hit.id), f"{hit.score:.3f}", hit.content)
        console.print(table)


def context(
    query: str,
    user: UserOption,
    agent: AgentOption = None,
    max_tokens: Annotated[
        int, typer.Option("--max-tokens", help="Budget, approximated as characters / 4.")
    ] = 500,
    as_json: JsonOption = False,
    db: DbOption = None,
) -> None:
    """Print the memory block for a system prompt: relevant memories with their dates."""
    with _open(db) as mm:
        block = mm.context(query, user_id=user, agent_id=agent, max_tokens=max_tokens)
        if as_json:
            _print_json(TypeAdapter(ContextBlock).dump_python(block, mode="json"))
            return
        # soft_wrap: the block goes into a prompt as is, never broken at the terminal width.
        console.print(block.text, highlight=False, soft_wrap=True, end="")


def list_memories(
    user: UserOption,
    agent: AgentOption = None,
    limit: Annotated[int | None, typer.Option(help="At most this many.")] = None,
    all_statuses: Annotated[
        bool, typer.Option("--all", help="Include deleted and superseded.")
    ] = False,
    as_json: JsonOption = False,
    db: DbOption = None,
) -> None:
    """List a user's memories (active ones unless --all)."""
    with _open(db) as mm:
        memories = mm.list(user_id=user, agent_id=agent, limit=limit, include_inactive=all_statuses)
        if as_json:
            _print_json([m.model_dump(mode="json") for m in memories])
            return
        console.print(_memories_table(memories, f"{len(memories)} memories of '{user}'"))


def history(
    memory_id: str,
    user: UserOption,
    agent: AgentOption = None,
    as_json: JsonOption = False,
    db: DbOption = None,
) -> None:
    """Every decision that touched a memory (a full id or a unique prefix) of the user."""
    with _open(db) as mm:
        scope = {"user_id": user, "agent_id": agent}
        memory = mm.get(mm.resolve_id(memory_id, **scope), **scope)
        if as_json:
            events = [e.model_dump(mode="json") for e in mm.history(memory.id, **scope)]
            _print_json({"memory": memory.model_dump(mode="json"), "events": events})
            return
        console.print(f"{memory.id} [{memory.status.value}] {memory.content}")
        console.print(_events_table(mm.history(memory.id, **scope), "History"))
