"""The `memman` command: a thin typer layer over MemoryManager, rendered with rich.

Each command opens the store, calls one library function and renders the result. Any
MemmanError becomes a one-line message and exit code 1 (see `main`), never a traceback.
"""

from __future__ import annotations

import json
import logging
import sys
from contextlib import nullcontext
from importlib.metadata import version
from pathlib import Path
from typing import Annotated

import typer
from pydantic import TypeAdapter
from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TaskID,
    TextColumn,
    TimeRemainingColumn,
)
from rich.table import Table

from memman.config import load_settings
from memman.demo import DEMO_USER, demo_facts
from memman.errors import ConfigError, InvalidInputError, MemmanError
from memman.maintenance import STUCK_ATTEMPTS
from memman.manager import MemoryManager
from memman.models import Event, Memory, UpdateResult
from memman.recall import ContextBlock

app = typer.Typer(
    help="memman: long-term memory for chatbots that stays small, current and explainable.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)
# No markup: memories, ids and errors are user text, and "[/bold]" in a fact must print as is.
console = Console(markup=False)
errors = Console(stderr=True)

DbOption = Annotated[
    str | None, typer.Option(
        "--db",
        envvar="MEMMAN_DB",
        help="SQLite file or postgresql+psycopg:// URL (default memman.db).",
    )
]
# `memman config` looks for the last recorded llm_mode fallback among this many newest events.
FALLBACK_LOOKBACK = 1000
AgentOption = Annotated[str | None, typer.Option("--agent", help="Optional agent scope.")]
JsonOption = Annotated[
    bool, typer.Option("--json", help="Print JSON instead of a table (for scripts).")
]


def _print_json(data: object) -> None:
    """One JSON document on stdout, unwrapped and unhighlighted, for scripts to parse."""
    console.print(json.dumps(data, ensure_ascii=False), soft_wrap=True, highlight=False)


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


# No default user: a forgotten --user would silently read or write a user named "default",
# and an id never reaches another user's memory (the library refuses it as not found).
UserOption = Annotated[
    str, typer.Option("--user", "-u", help="The user whose memories these are (required).")
]


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


def _open(db: str | None) -> MemoryManager:
    """The store, migrated if it is older than this memman, with a bar while that runs."""
    logger = logging.getLogger("memman.migrations")
    bar, level, propagate = _MigrationBar(), logger.level, logger.propagate
    logger.addHandler(bar)
    logger.setLevel(logging.INFO)
    logger.propagate = False  # the bar shows the records; the root handler would print them
    try:
        return MemoryManager(db)
    finally:
        logger.removeHandler(bar)
        logger.setLevel(level)
        logger.propagate = propagate
        bar.close()


def _short(memory_id: str | None) -> str:
    return memory_id[:8] if memory_id else "-"


def _decisions_table(title: str) -> Table:
    table = Table(title=title, show_lines=False)
    for column in ("#", "fact", "op", "tier", "memory", "reason"):
        table.add_column(column, overflow="fold")
    return table


def _add_decision(table: Table, label: str, fact: str, result: UpdateResult) -> None:
    table.add_row(
        label, fact, result.op.value, result.tier.value, _short(result.memory_id), result.reason
    )


def _memories_table(memories: list[Memory], title: str) -> Table:
    table = Table(title=title)
    for column in ("id", "content", "seen", "updated", "status"):
        table.add_column(column, overflow="fold")
    for m in memories:
        table.add_row(
            _short(m.id), m.content, str(m.repetition_count), m.updated_at[:19], m.status.value
        )
    return table


def _events_table(events: list[Event], title: str) -> Table:
    table = Table(title=title)
    for column in ("event", "time", "op", "tier", "before", "after", "reason"):
        table.add_column(column, overflow="fold")
    for e in events:
        table.add_row(
            str(e.id),
            e.created_at[:19],
            e.op.value,
            e.tier.value,
            e.content_before or "",
            e.content_after or "",
            e.reason + (f" [{e.error}]" if e.error else ""),
        )
    return table


def _mode_line(mm: MemoryManager) -> str:
    if mm.offline:
        return (
            "decider: offline (no LLM configured: extensions and take-backs update a memory,"
            " other ambiguous cases are kept; nothing is deleted)"
        )
    return f"decider: LLM {mm.settings.llm_model} via {mm.settings.llm_base_url or 'OpenAI'}"


@app.command()
def demo(
    db: Annotated[
        str, typer.Option("--db", help="Where to write the demo store (recreated).")
    ] = "memman-demo.db",
) -> None:
    """Run a sample conversation through update_memory and show every decision."""
    path = Path(db)
    for suffix in ("", "-wal", "-shm"):
        Path(f"{path}{suffix}").unlink(missing_ok=True)
    with MemoryManager(str(path)) as mm:
        console.print(_mode_line(mm))
        table = _decisions_table(f"Decisions for user '{DEMO_USER}'")
        for item in demo_facts():
            result = mm.update_memory(item.fact, user_id=DEMO_USER, source=f"demo:turn-{item.turn}")
            _add_decision(table, str(item.turn), item.fact, result)
        console.print(table)
        memories = mm.list(user_id=DEMO_USER)
        console.print(
            _memories_table(memories, f"Long-term memory of '{DEMO_USER}' ({len(memories)} active)")
        )
        console.print(
            f"Stored in {path}. Try: memman --help, or"
            f" memman history <id> --user {DEMO_USER} --db {path}"
        )


@app.command()
def add(
    fact: str,
    user: UserOption,
    agent: AgentOption = None,
    source: Annotated[
        str | None, typer.Option(help="Provenance: where the fact came from.")
    ] = None,
    category: Annotated[
        str | None,
        typer.Option(help="e.g. safety or constraint (kept in every context block), preference."),
    ] = None,
    importance: Annotated[
        float | None, typer.Option(help="1-10 (default 5): ranks recall, protects from decay.")
    ] = None,
    db: DbOption = None,
) -> None:
    """Add one fact through the write path and show the decision."""
    with _open(db) as mm:
        result = mm.update_memory(
            fact,
            user_id=user,
            agent_id=agent,
            source=source,
            category=category,
            importance=importance,
        )
        table = _decisions_table("Decision")
        _add_decision(table, "1", fact, result)
        console.print(table)


@app.command()
def ingest(
    file: Annotated[
        Path,
        typer.Argument(
            help='JSON lines: {"fact": ..., "user_id"?, "agent_id"?, "source"?, "metadata"?}'
            " (lines of `memman export` work too)"
        ),
    ],
    user: Annotated[
        str | None, typer.Option("--user", "-u", help="The user of lines without a user_id.")
    ] = None,
    agent: AgentOption = None,
    db: DbOption = None,
) -> None:
    """Feed a JSONL file of facts through update_memory's decisions, a chunk at a time
    (MemoryManager.ingest); bad lines are reported and skipped."""
    try:
        lines = file.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as error:
        raise InvalidInputError(f"cannot read {file}: {error}") from error
    counts: dict[str, int] = {}
    bad: list[str] = []
    records: list[tuple[int, dict]] = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            records.append((number, _ingest_record(line, f"{file.name}:{number}", user)))
        except (ValueError, MemmanError) as error:  # json.JSONDecodeError is a ValueError
            bad.append(f"line {number}: {error}")
    with (
        _open(db) as mm,
        Progress(
            TextColumn("ingesting"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeRemainingColumn(),
            console=errors,
        ) as progress,
    ):
        task = progress.add_task("ingest", total=len(records))
        step = mm.settings.batch_chunk_size
        for start in range(0, len(records), step):
            part = records[start : start + step]
            decided = mm.ingest([r for _, r in part], user_id=user, agent_id=agent)
            for (number, _), result in zip(part, decided, strict=True):
                if isinstance(result, MemmanError):
                    bad.append(f"line {number}: {result}")
                else:
                    counts[result.op.value] = counts.get(result.op.value, 0) + 1
            progress.advance(task, len(part))
    bad.sort(key=lambda message: int(message.split(":")[0].removeprefix("line ")))
    for message in bad:
        errors.print(message)
    summary = ", ".join(f"{op} {n}" for op, n in sorted(counts.items())) or "nothing"
    console.print(f"{sum(counts.values())} facts decided ({summary}); {len(bad)} bad lines skipped")
    if bad:
        raise typer.Exit(2)


def _ingest_record(line: str, source: str, user: str | None) -> dict:
    """One line of an ingest file as a MemoryManager.ingest record (fact, scope, source,
    metadata); a line of `memman export` gives its content as the fact."""
    record = json.loads(line)
    if isinstance(record, str):
        record = {"fact": record}
    if isinstance(record, dict) and "fact" not in record and "content" in record:
        record["fact"] = record["content"]
    if not isinstance(record, dict) or "fact" not in record:
        raise InvalidInputError("expected an object with a 'fact' key")
    if record.get("user_id", user) is None:
        raise InvalidInputError("no user_id: give one in the line or --user")
    kept = {
        key: record[key] for key in ("fact", "user_id", "agent_id", "metadata") if key in record
    }
    return {**kept, "source": record.get("source", source)}


@app.command()
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


@app.command()
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


@app.command()
def consolidate(
    user: Annotated[str | None, typer.Option("--user", "-u", help="Only this user.")] = None,
    agent: AgentOption = None,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Show, change nothing.")] = False,
    max_ops: Annotated[int, typer.Option("--max-ops", help="At most this many changes.")] = 200,
    db: DbOption = None,
) -> None:
    """Expire and promote short-term facts, merge near-duplicates, decay unused memories."""
    bar = Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeRemainingColumn(),
        console=errors,
    )
    with _open(db) as mm, bar:
        task = bar.add_task("consolidating", total=None)
        report = mm.consolidate(
            user_id=user,
            agent_id=agent,
            dry_run=dry_run,
            max_ops=max_ops,
            progress=lambda phase, done, total: bar.update(
                task, description=phase, completed=done, total=total
            ),
        )
    title = f"{len(report.changes)} changes" + (" (dry run: nothing written)" if dry_run else "")
    table = Table(title=title)
    for column in ("action", "user", "target", "content", "detail"):
        table.add_column(column, overflow="fold")
    for c in report.changes:
        confidence = (
            f" ({c.confidence_before:.2f} -> {c.confidence_after:.2f})"
            if c.confidence_after is not None
            else ""
        )
        related = f" superseding {', '.join(_short(i) for i in c.related)}" if c.related else ""
        target = c.target if c.target.startswith("short_term:") else _short(c.target)
        table.add_row(c.action, c.user_id, target, c.content, c.detail + confidence + related)
    console.print(table)
    asked = [a for a in report.ambiguous_clusters if a.outcome != "no_llm"]
    if asked:
        clusters = Table(title=f"{len(asked)} ambiguous clusters (related, not the same wording)")
        for column in ("outcome", "user", "memories", "detail"):
            clusters.add_column(column, overflow="fold")
        for a in asked:
            pairs = zip(a.ids, a.contents, strict=True)
            memories = "\n".join(f"{_short(i)} {text}" for i, text in pairs)
            clusters.add_row(a.outcome.replace("_", " "), a.user_id, memories, a.detail)
        console.print(clusters)
    offline = len(report.ambiguous_clusters) - len(asked)
    if offline:
        console.print(
            f"{offline} ambiguous clusters left alone: only an LLM may merge them (none configured)"
        )
    if report.rejected_clusters:
        console.print(f"{len(report.rejected_clusters)} clusters left alone (not mutually similar)")
    if report.truncated:
        console.print(f"stopped at --max-ops {max_ops}; run again for the rest")


@app.command()
def flush(
    session: Annotated[
        str | None, typer.Argument(help="The session whose buffered messages to extract.")
    ] = None,
    idle: Annotated[
        bool,
        typer.Option(
            "--idle", help="Every session whose newest message waited extract_cooldown_s."
        ),
    ] = False,
    user: Annotated[
        str | None,
        typer.Option("--user", "-u", help="The SESSION's user; with --idle: only this user."),
    ] = None,
    agent: AgentOption = None,
    db: DbOption = None,
) -> None:
    """Extract facts from buffered chat messages now: one session, or every idle one."""
    if (session is None) == (not idle):
        raise InvalidInputError("give a SESSION or --idle (not both)")
    if session is not None and user is None:
        raise InvalidInputError("a SESSION belongs to a user: give --user")
    if agent is not None and user is None:
        raise InvalidInputError("--agent needs --user")
    with _open(db) as mm:
        if session is not None and user is not None:
            done = [(session, user, mm.flush(session, user_id=user, agent_id=agent))]
        else:
            found = mm.flush_idle(user_id=user, agent_id=agent)
            done = [(e.session.session_id, e.session.user_id, e.result) for e in found if e.result]
    table = Table(title=f"{len(done)} sessions flushed")
    for column in ("session", "user", "messages", "facts", "skipped", "still buffered"):
        table.add_column(column, overflow="fold")
    for session_id, user_id, result in done:
        facts = len(result.results) + len(result.short_term_ids)
        waiting = f"{result.buffered}" + (f" ({result.error})" if result.error else "")
        row = (session_id, user_id, result.extracted_messages, facts, len(result.skips), waiting)
        table.add_row(*(str(cell) for cell in row))
    console.print(table)
    for _, _, result in done:
        for skip in result.skips:
            console.print(f"skipped ({skip.why}): {skip.text}", soft_wrap=True)
    failed = sum(1 for _, _, result in done if result.error)
    if failed:
        errors.print(f"{failed} extractions failed; their messages stay buffered")
        raise typer.Exit(2)


@app.command()
def export(
    output: Annotated[
        Path | None, typer.Option("--output", "-o", help="Write here instead of stdout.")
    ] = None,
    user: Annotated[str | None, typer.Option("--user", "-u", help="Only this user.")] = None,
    agent: AgentOption = None,
    include_inactive: Annotated[
        bool, typer.Option("--all", help="Deleted, superseded and archived memories too.")
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
    """Write memories (every column) as JSON lines; `memman import` reads them back."""
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
    except OSError as error:
        raise InvalidInputError(f"cannot write {output}: {error}") from error
    count = 0
    with _open(db) as mm, sink if output else nullcontext():
        records = (
            (e.model_dump_json() for e in mm.export_events(user_id=user, agent_id=agent))
            if events
            else mm.export_jsonl(
                user_id=user,
                agent_id=agent,
                include_inactive=include_inactive,
                events=with_events,
            )
        )
        for record in records:
            sink.write(record + "\n")
            count += 1
    if output and partial:
        partial.replace(output)
        what = "events" if events else "records" if with_events else "memories"
        console.print(f"{count} {what} written to {output}")


@app.command("import")
def import_file(
    file: Annotated[Path, typer.Argument(help="JSON lines written by `memman export`.")],
    raw: Annotated[
        bool,
        typer.Option("--raw", help="Copy every record as is, even into a store that has some."),
    ] = False,
    db: DbOption = None,
) -> None:
    """Read an export back: a copy into an empty store, else decided against what is there."""
    with _open(db) as mm:
        report = mm.import_jsonl(file, raw=raw)
    for message in report.bad:
        errors.print(message, soft_wrap=True, markup=False)  # the line's text may hold "[...]"
    decided = ", ".join(f"{op} {n}" for op, n in sorted(report.decided.items())) or "none"
    console.print(
        f"{report.copied} memories copied, {report.duplicates} already held, decided: {decided};"
        f" {report.events_copied} events copied, {report.events_skipped} not copied;"
        f" {len(report.bad)} bad lines skipped"
    )
    if report.bad:
        raise typer.Exit(2)


@app.command("list")
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


@app.command()
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


@app.command()
def pending(
    user: Annotated[str | None, typer.Option("--user", "-u")] = None, db: DbOption = None
) -> None:
    """Facts parked because the decider failed."""
    with _open(db) as mm:
        items = mm.pending(user_id=user)
        table = Table(title=f"{len(items)} pending")
        for column in ("#", "user", "fact", "attempts", "error"):
            table.add_column(column, overflow="fold")
        for p in items:
            table.add_row(str(p.id), p.user_id, p.content, str(p.attempts), p.error)
        console.print(table)


@app.command()
def retry(
    user: Annotated[str | None, typer.Option("--user", "-u")] = None, db: DbOption = None
) -> None:
    """Decide parked facts again."""
    with _open(db) as mm:
        console.print(_mode_line(mm))
        results = mm.retry_pending(user_id=user)
        table = _decisions_table(f"{len(results)} retried")
        for i, r in enumerate(results, start=1):
            _add_decision(table, str(i), r.content or "", r)
        console.print(table)


@app.command()
def delete(
    memory_id: str, user: UserOption, agent: AgentOption = None, db: DbOption = None
) -> None:
    """Soft-delete a memory of the user (recoverable with restore)."""
    with _open(db) as mm:
        scope = {"user_id": user, "agent_id": agent}
        result = mm.delete(mm.resolve_id(memory_id, **scope), **scope)
        console.print(f"deleted {result.memory_id}: {result.content}")


@app.command()
def restore(
    memory_id: str, user: UserOption, agent: AgentOption = None, db: DbOption = None
) -> None:
    """Bring back a deleted or superseded memory of the user."""
    with _open(db) as mm:
        scope = {"user_id": user, "agent_id": agent}
        result = mm.restore(mm.resolve_id(memory_id, **scope), **scope)
        console.print(f"restored {result.memory_id}: {result.content}")


@app.command()
def forget(
    user: UserOption,
    agent: Annotated[
        str | None, typer.Option("--agent", help="Only this agent's scope of the user.")
    ] = None,
    yes: Annotated[bool, typer.Option("--yes", help="Confirm: this cannot be undone.")] = False,
    db: DbOption = None,
) -> None:
    """Erase everything of a user for good, scrubbed from the file and its WAL."""
    if not yes:
        raise InvalidInputError(
            f"forget erases every memory, event and message of {user!r} for good; add --yes"
        )
    with _open(db) as mm:
        report = mm.forget(user, agent_id=agent)
    console.print(
        f"forgot {user!r}: {report.memories} memories, {report.events} events,"
        f" {report.pending} pending, {report.short_term} short-term,"
        f" {report.messages} messages, {report.vectors} vectors"
    )
    if not report.wal_truncated:
        errors.print("a reader held an older snapshot: the WAL was not emptied; run it again")
        raise typer.Exit(2)


@app.command()
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
            table.add_row("file bytes", str(storage["file_bytes"]))
            table.add_row("wal bytes", str(storage["wal_bytes"]))
            for name, n in storage["rows"].items():
                table.add_row(f"rows in {name}", str(n))
        console.print(table)


@app.command()
def check(db: DbOption = None) -> None:
    """Check SQLite integrity, FTS agreement, orphan vectors, stuck pending (exit 1 if not ok)."""
    with _open(db) as mm:
        report = mm.check()
        table = Table(title=f"memman check ({mm.store.path})")
    table.add_column("check")
    table.add_column("result", overflow="fold")
    table.add_row("sqlite integrity", "; ".join(report.integrity) or "ok")
    table.add_row("fts index", report.fts_error or "ok")
    table.add_row("pending facts", str(report.pending))
    table.add_row(f"stuck pending (>= {STUCK_ATTEMPTS} failures)", str(report.stuck_pending))
    table.add_row("orphan vectors", str(report.orphan_vectors))
    console.print(table)
    if not report.ok:
        raise typer.Exit(1)


@app.command()
def backup(
    path: Annotated[Path, typer.Argument(help="New file to write the copy to.")],
    db: DbOption = None,
) -> None:
    """Copy the store to PATH with SQLite's online backup (safe while others write)."""
    with _open(db) as mm:
        written = mm.backup(path)
    console.print(f"backed up {mm.store.path} to {written}")


@app.command()
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
    with _open(db) as mm, bar:
        task = bar.add_task("reindex", total=None)
        done = mm.reindex(
            batch=batch, progress=lambda n, total: bar.update(task, completed=n, total=total)
        )
    console.print(f"embedded {done} memories")


@app.command()
def calibrate(
    pairs: Annotated[Path, typer.Argument(help="Labelled pairs: .jsonl, .csv or .tsv.")],
    target: Annotated[float, typer.Option(help="Allowed false-merge rate.")] = 0.01,
    holdout: Annotated[float, typer.Option(help="Share of pairs held out.")] = 0.3,
    config_file: Annotated[
        Path, typer.Option("--config", help="TOML file to write the thresholds to.")
    ] = Path("memman.toml"),
    plot: Annotated[
        Path, typer.Option(help="Histogram chart (PNG) to write; needs the plots extra.")
    ] = Path("calibration.png"),
    write: Annotated[
        bool, typer.Option("--write", help="Write the thresholds to the config (comments kept).")
    ] = False,
) -> None:
    """Pick Jaccard (and cosine) thresholds for a target false-merge rate on labelled pairs."""
    from memman import calibrate as calibration
    from memman.embed import make_embedder

    settings = load_settings()
    loaded = calibration.load_pairs(pairs)
    reports = calibration.calibrate(loaded, make_embedder(settings), target=target, holdout=holdout)
    table = Table(title=f"calibration on {len(loaded)} pairs (held out {holdout:.0%})")
    for column in ("measure", "noop", "novel", "precision", "recall", "false merges", "missed"):
        table.add_column(column)
    for r in reports:
        table.add_row(
            r.measure,
            f"{r.noop:.3f}",
            f"{r.novel:.3f}",
            f"{r.precision:.3f}",
            f"{r.recall:.3f}",
            f"{r.false_merge_rate:.3%}",
            f"{r.missed_rate:.3%}",
        )
    console.print(table)
    try:
        calibration.histogram_png(plot, reports)
        console.print(f"histogram written to {plot}")
    except ConfigError as error:  # no matplotlib: the thresholds still stand
        errors.print(f"no histogram: {error}", soft_wrap=True, markup=False)
    if write:
        written = calibration.write_thresholds(config_file, reports)
        console.print(f"wrote {written} to {config_file}")
    else:
        console.print(f"not written: add --write to set them in {config_file}")


@app.command("eval")
def eval_cases(
    cases: Annotated[Path, typer.Argument(help="Decision cases, one JSON object a line.")],
    prompts: Annotated[
        list[Path] | None,
        typer.Option("--prompts", help="Prompt folder to compare (repeat for side by side)."),
    ] = None,
) -> None:
    """Run labelled decision cases through the configured decider: accuracy per op."""
    from memman import evaluate

    settings = load_settings()
    loaded = evaluate.load_cases(cases)
    folders = [str(p) for p in prompts] if prompts else [settings.prompts_dir]
    reports = [
        evaluate.evaluate(loaded, settings.model_copy(update={"prompts_dir": f})) for f in folders
    ]
    summary = Table(title=f"{len(loaded)} cases, decider: {settings.llm_model or 'offline'}")
    summary.add_column("expected op")
    for report in reports:
        summary.add_column(report.prompts_dir or "shipped prompts", overflow="fold")
    for op in evaluate.OPS:
        cells = [r.accuracy_by_op().get(op) for r in reports]
        if any(cells):
            summary.add_row(op, *(f"{c[0]}/{c[1]}" if c else "-" for c in cells))
    summary.add_row("all", *(f"{r.correct}/{len(r.outcomes)}" for r in reports))
    summary.add_row(
        "LLM calls / case",
        *(f"{sum(o.llm_calls for o in r.outcomes) / len(loaded):.2f}" for r in reports),
    )
    summary.add_row(
        "tokens / case",
        *(f"{sum(o.tokens for o in r.outcomes) / len(loaded):.0f}" for r in reports),
    )
    summary.add_row("prompt hash", *(", ".join(sorted(r.prompt_hashes)) or "-" for r in reports))
    console.print(summary)
    for report in reports:
        matrix = Table(title=f"confusion ({report.prompts_dir or 'shipped prompts'})")
        matrix.add_column("expected \\ decided")
        for op in evaluate.OPS:
            matrix.add_column(op)
        for expected, row in report.confusion().items():
            matrix.add_row(expected, *(str(row.get(op, 0)) for op in evaluate.OPS))
        console.print(matrix)


@app.command()
def mcp(
    user: Annotated[
        str, typer.Option("--user", "-u", help="The user a tool call without user_id acts on.")
    ] = "default",
    agent: AgentOption = None,
    db: DbOption = None,
) -> None:
    """Serve the memory to an MCP client over stdio (needs the mcp extra)."""
    from memman.mcp_server import serve

    serve(db, user_id=user, agent_id=agent)


@app.command()
def config(db: DbOption = None) -> None:
    """Show the effective configuration (API key masked)."""
    from memman.llm import last_fallback, resolve_mode

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


def main() -> None:
    """Entry point: run the typer app, turning memman's typed errors into one clean line."""
    logging.basicConfig(level=logging.CRITICAL)  # library logs stay out of the terminal
    try:
        app()
    except MemmanError as error:
        errors.print(f"Error: {error}", soft_wrap=True)  # one line, never wrapped
        sys.exit(1)
