"""Commands that serve the memory to other programs: mcp, serve."""

from __future__ import annotations

from typing import Annotated

import typer

from memman.cli.common import AgentOption, DbOption
from memman.config import load_settings


def mcp(
    # Required, as for every command that acts on one user's memories: a forgotten --user
    # used to serve (and write to) a user named "default".
    user: Annotated[
        str,
        typer.Option(
            "--user", "-u", help="The user a tool call without user_id acts on (required)."
        ),
    ],
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


def serve(
    db: DbOption = None,
    host: Annotated[
        str | None,
        typer.Option(help="Address to listen on (default 127.0.0.1). Any other needs an API key."),
    ] = None,
    port: Annotated[int | None, typer.Option(help="Port (default 8000).")] = None,
    api_key: Annotated[
        str | None,
        typer.Option(
            "--api-key",
            envvar="MEMMAN_SERVE_API_KEY",
            help="Bearer key every request must carry (16+ characters); prefer the variable.",
            show_envvar=True,
        ),
    ] = None,
    workers: Annotated[
        int, typer.Option(help="Worker processes (more than 1: PostgreSQL stores only).")
    ] = 1,
) -> None:
    """Serve mem0's REST API, memman's own routes and the inspector page over HTTP (needs the
    serve extra)."""
    from memman.serve import run

    settings = load_settings(db=db, serve_host=host, serve_port=port, serve_api_key=api_key)
    run(settings, workers=workers)
