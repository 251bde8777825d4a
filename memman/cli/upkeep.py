"""Commands that look after the store file: stats, check, backup, reindex, relabel, config."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn
from rich.table import Table

from memman.cli.common import (
    AgentOption,
    DbOption,
    JsonOption,
    _open,
    _print_json,
    console,
    errors,
)
from memman.config import ignored_variables, load_settings
from memman.storage.maintenance import STUCK_ATTEMPTS

# `memman config` looks for the last recorded llm_mode fallback among this many newest events.
FALLBACK_LOOKBACK = 1000


def stats(
    user: Annotated[str | None, typer.Option("--user", "-u")] = None,
    as_json: JsonOption = False,
    db: DbOption = None,
) -> None:
    """Counts of memories by status and of decisions by op and tier; file, WAL and table sizes."""
    with _open(db) as mm:
        data = mm.stats(user_id=user)
        if as_json:
            _print_json(data)
            return
        table = Table(title=f"memman stats ({mm.store.path})")
        table.add_column("what")
        table.add_column("count", justify="right")
        for status, n in sorted(data["memories"].items()):
            table.add_row(f"memories {status}", str(n))
        for op, tiers in sorted(data["decisions"].items()):
            for tier, n in sorted(tiers.items()):
                table.add_row(f"decisions {op} by {tier}", str(n))
        table.add_row("pending", str(data["pending"]))
        table.add_row("messages failing extraction", str(data["extraction_stuck"]))
        storage = data["storage"]
        if storage:
            table.add_row("opened", storage["opened"])
            table.add_row("file bytes", str(storage["file_bytes"]))
            table.add_row("wal bytes", str(storage["wal_bytes"]))
            for name, n in storage["rows"].items():
                table.add_row(f"rows in {name}", str(n))
        vectors = data["vectors"]
        table.add_row("embedding model", vectors["embedding_model"] or "none (no vectors)")
        stored = f"vectors stored as {vectors['stored_as']}"
        table.add_row("vector search", f"{vectors['search']}, {stored}")
        if "pgvector" in vectors:
            table.add_row("pgvector on the server", vectors["pgvector"])
        console.print(table)


def check(db: DbOption = None) -> None:
    """Check SQLite integrity, FTS agreement, orphan vectors, memories without history, stuck
    pending, rows memman cannot read (exit 1 if not ok), and whether memories await
    `memman relabel`."""
    with _open(db) as mm:
        report = mm.check()
        table = Table(title=f"memman check ({mm.store.path})")
    table.add_column("check")
    table.add_column("result", overflow="fold")
    not_run = report.not_run  # checks the backend has no need of: say why, not "ok"
    table.add_row("integrity", not_run.get("integrity") or "; ".join(report.integrity) or "ok")
    table.add_row("fts index", not_run.get("fts") or report.fts_error or "ok")
    table.add_row("pending facts", str(report.pending))
    table.add_row(f"stuck pending (>= {STUCK_ATTEMPTS} failures)", str(report.stuck_pending))
    table.add_row("orphan vectors", str(report.orphan_vectors))
    table.add_row("memories without history", str(report.without_history))
    table.add_row("rows memman cannot read", "; ".join(report.unreadable) or "none")
    table.add_row("topics", _labels_note(report.relabel_due, report.reader_version))
    console.print(table)
    if not report.ok:
        raise typer.Exit(1)


def _labels_note(due: int, version: str) -> str:
    """What check says of the topics: advice when an older reader left memories unlabelled."""
    if not due:
        return "ok"
    return (
        f"{due} memories were labelled by an older reader (version {version}): run memman relabel"
    )


def backup(
    path: Annotated[Path, typer.Argument(help="New file to write the copy to.")],
    db: DbOption = None,
) -> None:
    """Copy the store to PATH with SQLite's online backup (safe while others write)."""
    with _open(db) as mm:
        written = mm.backup(path)
    console.print(f"backed up {mm.store.path} to {written}")


def reindex(
    db: DbOption = None,
    batch: Annotated[int, typer.Option(min=1, help="Memories embedded per call.")] = 256,
) -> None:
    """Embed every active memory lacking a vector for the configured embedding model."""
    bar = Progress(
        TextColumn("embedding"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeRemainingColumn(),
        console=errors,
    )
    task = bar.add_task("reindex", total=None)

    def step(done: int, total: int) -> None:
        bar.start()  # on the first report: a store with no embedder errs before any bar
        bar.update(task, completed=done, total=total)

    with _open(db) as mm:
        try:
            done = mm.reindex(batch=batch, progress=step)
        finally:
            if bar.live.is_started:  # stopping a bar never drawn prints a blank line
                bar.stop()
    console.print(f"embedded {done} memories")


def relabel(
    user: Annotated[str | None, typer.Option("--user", "-u", help="Only this user.")] = None,
    agent: AgentOption = None,
    db: DbOption = None,
) -> None:
    """Give a topic to the memories stored without one where this memman's reader reads one
    (after an upgrade: `memman check` says when); a set topic is never changed."""
    with _open(db) as mm:
        report = mm.relabel(user_id=user, agent_id=agent)
    recorded = f"; store at reader version {report.reader_version}" if report.recorded else ""
    console.print(f"labelled {report.labelled} of {report.read} memories without a topic{recorded}")


def config(db: DbOption = None) -> None:
    """Show the effective configuration (API key and URL passwords masked), and each MEMMAN_*
    variable that no setting reads."""
    from memman.llm.client import last_fallback, resolve_mode

    settings = load_settings(db=db)
    table = Table(title="memman configuration")
    table.add_column("setting")
    table.add_column("value", overflow="fold")
    for key, value in settings.redacted().items():
        table.add_row(key, "" if value is None else str(value))
    if settings.llm_configured:
        table.add_row("llm mode in use", resolve_mode(settings))
        if Path(settings.db).exists():
            with _open(settings.db) as mm:
                note = last_fallback(e.reason for e in mm.events(limit=FALLBACK_LOOKBACK))
            table.add_row("last llm_mode fallback", note or "none recorded")
    console.print(table)
    for why in ignored_variables().values():
        console.print(why, soft_wrap=True, markup=False, highlight=False)
