"""Commands that carry a store's memories out and in: export, import, migrate-db."""

from __future__ import annotations

import sys
from contextlib import nullcontext
from pathlib import Path
from typing import Annotated

import typer

from memman.cli.common import AgentOption, DbOption, _open, console, errors
from memman.errors import InvalidInputError
from memman.storage.backends import is_postgres_url


def export(
    output: Annotated[
        Path | None,
        typer.Option(
            "--output", "-o", help="Write to this new file instead of stdout (never overwritten)."
        ),
    ] = None,
    user: Annotated[str | None, typer.Option("--user", "-u", help="Only this user.")] = None,
    agent: AgentOption = None,
    include_inactive: Annotated[
        bool,
        typer.Option(
            "--all",
            help="Deleted, superseded and archived memories (expired short-term facts,"
            " extracted messages) too.",
        ),
    ] = False,
    events: Annotated[
        bool, typer.Option("--events", help="Export the audit trail instead of the memories.")
    ] = False,
    with_events: Annotated[
        bool,
        typer.Option("--with-events", help="The memories, then their audit trail, in one file."),
    ] = False,
    db: DbOption = None,
) -> None:
    """Write memories (every column), parked and short-term facts and buffered messages as
    JSON lines; `memman import` reads them back."""
    if agent is not None and user is None:
        raise InvalidInputError("--agent needs --user")
    if events and with_events:
        raise InvalidInputError("--events or --with-events, not both")
    # Written beside the output and renamed once complete: an export killed half way leaves
    # no truncated file that looks whole, and the next run is not refused because it exists.
    partial = output.with_name(f".{output.name}.partial") if output else None
    try:
        if output and output.exists():
            raise FileExistsError("the file exists")
        sink = partial.open("w", encoding="utf-8") if partial else sys.stdout
    except OSError as error:  # its strerror: str(error) named the hidden partial file
        raise InvalidInputError(f"cannot write {output}: {error.strerror or error}") from error
    count = 0
    try:
        with _open(db) as mm, sink if output else nullcontext():
            records = mm.export_jsonl(
                user_id=user,
                agent_id=agent,
                include_inactive=include_inactive,
                events=events or with_events,
                memories=not events,
            )
            for record in records:
                sink.write(record + "\n")
                count += 1
    except BaseException:  # no half export left behind in a hidden file nobody looks for
        if partial:
            partial.unlink(missing_ok=True)
        raise
    if output and partial:
        partial.replace(output)
        what = "events" if events else "records" if with_events else "memories"
        console.print(f"{count} {what} written to {output}")


def import_file(
    file: Annotated[Path, typer.Argument(help="JSON lines written by `memman export`.")],
    raw: Annotated[
        bool,
        typer.Option("--raw", help="Copy every record as is, even into a store that has some."),
    ] = False,
    db: DbOption = None,
) -> None:
    """Read an export back: a copy into an empty store or scope, else decided against it."""
    _refuse_what_is_no_export(file)  # before the store is opened: a refusal creates nothing
    with _open(db, create=True) as mm:
        report = mm.import_jsonl(file, raw=raw)
    for message in report.bad:
        errors.print(message, soft_wrap=True)
    decided = ", ".join(f"{op} {n}" for op, n in sorted(report.decided.items())) or "none"
    console.print(
        f"{report.copied} memories copied, {report.duplicates} already held, decided: {decided};"
        + (
            f" {len(report.renamed)} under a new id (another user's id here);"
            if report.renamed
            else ""
        )
        + f" {report.events_copied} events copied, {report.events_skipped} not copied,"
        f" {report.events_written} written for memories that came without one;"
        f" {len(report.bad)} bad lines skipped"
        + (f"; {_rows(report.rows_copied)} copied" if report.rows_copied else "")
        + (f" ({report.rows_renumbered} under a new id)" if report.rows_renumbered else "")
        + (
            f"; {report.rows_held} parked, short-term or buffered already held"
            if report.rows_held
            else ""
        )
        + (f"; {report.rows_skipped} vectors not copied" if report.rows_skipped else "")
        + (f"; {report.events_held} events already held" if report.events_held else "")
    )
    for old, new in report.renamed.items():
        console.print(f"memory {old} copied as {new}: the store holds {old} for another user")
    if report.bad:
        raise typer.Exit(2)


# A SQLite database file starts with these 16 bytes (sqlite.org/fileformat.html).
_SQLITE_HEADER = b"SQLite format 3\x00"


def _refuse_what_is_no_export(file: Path) -> None:
    """InvalidInputError, in one line, for a file that is plainly no JSON lines: a SQLite
    store (read line by line it gave a bad line for every few hundred bytes) or another
    binary file (a NUL byte in its first 4 KiB). A file that cannot be read is left to
    import_jsonl, which says why."""
    try:
        with file.open("rb") as handle:
            head = handle.read(4096)
    except OSError:
        return
    if head.startswith(_SQLITE_HEADER):
        raise InvalidInputError(
            f"{file} is a SQLite store, not a memman export (JSON lines); to copy a store:"
            f" memman migrate-db --from {file} --to TARGET"
        )
    if b"\x00" in head:
        raise InvalidInputError(
            f"{file} is not a memman export (JSON lines): it holds NUL bytes (binary, or not UTF-8)"
        )


def _rows(copied: dict[str, int]) -> str:
    """Rows copied by table, as `2 pending, 1 short_term`."""
    return ", ".join(f"{n} {table}" for table, n in sorted(copied.items()))


def migrate_db(
    source: Annotated[
        str, typer.Option("--from", help="The store to copy: a SQLite file or a postgresql:// URL.")
    ],
    target: Annotated[
        str, typer.Option("--to", help="An empty store to copy into (a new file, or a URL).")
    ],
) -> None:
    """Copy a whole store to another backend (SQLite <-> PostgreSQL), rows compared after."""
    if source == target:
        raise InvalidInputError("--from and --to name the same store")
    if not is_postgres_url(source) and not Path(source).is_file():
        raise InvalidInputError(f"no store at {source}")
    with _open(source) as old, _open(target, create=True) as new:
        report = old.migrate_to(new)
        where = (old.store.path, new.store.path)  # URLs without their passwords
    for message in report.imported.bad:
        errors.print(message, soft_wrap=True)
    for table, count in report.source_rows.items():
        console.print(f"{table}: {count} -> {report.target_rows.get(table, 0)}")
    problems = report.differences()
    if report.imported.bad:
        problems.append(f"{len(report.imported.bad)} bad lines")
    if problems:
        errors.print(f"Error: the copy is incomplete: {'; '.join(problems)}", soft_wrap=True)
        raise typer.Exit(1)
    console.print(f"copied {where[0]} to {where[1]}: every table's rows match", soft_wrap=True)
