"""What every command shares: the consoles, the common options and opening the store.

The store is opened through `_open` so a long migration draws its bar the same way for
every command.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TaskID,
    TextColumn,
    TimeRemainingColumn,
)

from memman.api.manager import MemoryManager
from memman.config import load_settings
from memman.errors import ConfigError
from memman.storage.backends import is_postgres_url

# No markup: memories, ids and errors are user text, and "[/bold]" in a fact must print as is.
console = Console(markup=False)
errors = Console(stderr=True, markup=False)  # messages name extras: "memman[postgres]"

DbOption = Annotated[
    str | None,
    typer.Option(
        "--db",
        envvar="MEMMAN_DB",
        help="SQLite file or postgresql+psycopg:// URL (default memman.db).",
    ),
]


AgentOption = Annotated[str | None, typer.Option("--agent", help="Optional agent scope.")]
JsonOption = Annotated[
    bool, typer.Option("--json", help="Print JSON instead of a table (for scripts).")
]


def _print_json(data: object) -> None:
    """One JSON document on stdout, unwrapped and unhighlighted, for scripts to parse."""
    console.print(json.dumps(data, ensure_ascii=False), soft_wrap=True, highlight=False)


# No default user: a forgotten --user would silently read or write a user named "default",
# and an id never reaches another user's memory (the library refuses it as not found).
UserOption = Annotated[
    str, typer.Option("--user", "-u", help="The user whose memories these are (required).")
]


def _sqlite_file(db: str) -> bool:
    """A SQLite file's plain path: not a PostgreSQL URL, ":memory:" or a "file:" URI."""
    return not is_postgres_url(db) and db != ":memory:" and not db.startswith("file:")


class _MigrationBar(logging.Handler):
    """Draws the progress a long migration logs (record.progress = (done, total)) as a bar.

    The bar appears on the first such record only: opening an up-to-date store shows nothing.
    """

    def __init__(self) -> None:
        super().__init__(logging.INFO)
        self.bar: Progress | None = None
        self.task: TaskID | None = None

    def emit(self, record: logging.LogRecord) -> None:
        progress = getattr(record, "progress", None)
        if progress is None:
            return
        done, total = progress
        if self.bar is None or self.task is None:
            self.bar = Progress(
                TextColumn("{task.description}"),
                BarColumn(),
                MofNCompleteColumn(),
                TimeRemainingColumn(),
                console=errors,
            )
            self.bar.start()
            self.task = self.bar.add_task("upgrading the store", total=total)
        self.bar.update(self.task, completed=done, total=total)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.stop()
        super().close()


def _open(db: str | None, *, create: bool = False) -> MemoryManager:
    """The store, migrated if it is older than this memman, with a bar while that runs.

    Only the commands that write facts in (`create`: add, ingest, import, migrate-db's
    target) make a new SQLite file. Any other on a path holding none is refused: a mistyped
    `--db` used to create an empty store there, and `list` showed nothing, `backup` reported
    a backup of it, `forget` said it had erased nobody's memories, all with exit 0.
    """
    settings = load_settings(db=db)
    path = settings.db
    if not create and _sqlite_file(path) and not Path(path).exists():
        raise ConfigError(
            f"no memman store at {path}: check --db (or MEMMAN_DB); add, ingest and import"
            " create one"
        )
    logger = logging.getLogger("memman.storage.migrations")
    bar, level, propagate = _MigrationBar(), logger.level, logger.propagate
    logger.addHandler(bar)
    logger.setLevel(logging.INFO)
    logger.propagate = False  # the bar shows the records; the root handler would print them
    try:
        return MemoryManager(path, settings=settings)  # the settings read once
    finally:
        logger.removeHandler(bar)
        logger.setLevel(level)
        logger.propagate = propagate
        bar.close()
