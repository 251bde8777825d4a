"""The `memman` command: a thin typer layer over MemoryManager, rendered with rich.

Each command opens the store, calls one library function and renders the result. Any
MemmanError becomes a one-line message and exit code 1 (see `main`), never a traceback.
The commands live in modules by theme (write, read, lifecycle, transfer, upkeep, tuning,
servers); they are registered here, in one list, so `memman --help` keeps their order.
"""

from __future__ import annotations

import logging
import sys
from importlib.metadata import version
from typing import Annotated

import typer

from memman.cli import lifecycle, read, servers, transfer, tuning, upkeep, write
from memman.cli.common import console, errors
from memman.errors import MemmanError

app = typer.Typer(
    help="memman: long-term memory for chatbots that stays small, current and explainable.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)


def _version(value: bool) -> None:
    if value:
        console.print(f"memman {version('memman')}")
        raise typer.Exit()


@app.callback()
def _main_options(
    show_version: Annotated[
        bool,
        typer.Option(
            "--version", callback=_version, is_eager=True, help="Show memman's version and exit."
        ),
    ] = False,
) -> None:
    """memman: long-term memory for chatbots that stays small, current and explainable."""


# In the order `memman --help` lists them.
for command, name in (
    (write.demo, None),
    (write.add, None),
    (write.ingest, None),
    (read.search, None),
    (read.context, None),
    (lifecycle.consolidate, None),
    (lifecycle.flush, None),
    (transfer.export, None),
    (transfer.import_file, "import"),
    (transfer.migrate_db, "migrate-db"),
    (read.list_memories, "list"),
    (read.history, None),
    (lifecycle.pending, None),
    (lifecycle.retry, None),
    (lifecycle.delete, None),
    (lifecycle.restore, None),
    (lifecycle.forget, None),
    (upkeep.stats, None),
    (upkeep.check, None),
    (upkeep.backup, None),
    (upkeep.reindex, None),
    (upkeep.relabel, None),
    (tuning.calibrate, None),
    (tuning.eval_cases, "eval"),
    (servers.mcp, None),
    (servers.serve, None),
    (upkeep.config, None),
):
    app.command(name)(command)


def main() -> None:
    """Entry point: run the typer app, turning memman's typed errors into one clean line."""
    logging.basicConfig(level=logging.CRITICAL)  # library logs stay out of the terminal
    try:
        app()
    except MemmanError as error:
        errors.print(f"Error: {error}", soft_wrap=True)  # one line, never wrapped
        sys.exit(1)
