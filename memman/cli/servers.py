"""Commands that serve the memory to other programs: mcp."""

from __future__ import annotations

from typing import Annotated

import typer

from memman.cli.common import AgentOption, DbOption


def mcp(
    user: Annotated[
        str, typer.Option("--user", "-u", help="The user a tool call without user_id acts on.")
    ] = "default",
    agent: AgentOption = None,
    db: DbOption = None,
    lock: Annotated[
        bool,
        typer.Option("--lock", help="Refuse a tool call that names a user other than --user."),
    ] = False,
) -> None:
    """Serve the memory to an MCP client over stdio (needs the mcp extra)."""
    from memman.mcp_server import serve

    serve(db, user_id=user, agent_id=agent, locked=lock)
