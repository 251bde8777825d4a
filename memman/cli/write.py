"""Commands that write facts through update_memory: demo, add, ingest."""

from __future__ import annotations

from contextlib import closing
from pathlib import Path
from typing import Annotated, Any

import typer
from pydantic import BaseModel, ConfigDict, model_validator
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

from memman.api.manager import MemoryManager
from memman.api.write import INGEST_KEYS
from memman.cli.common import AgentOption, DbOption, UserOption, _open, console, errors
from memman.cli.demo import DEMO_USER, demo_facts
from memman.cli.render import _add_decision, _decisions_table, _memories_table, _mode_line
from memman.errors import BadLineError, InvalidInputError, MemmanError
from memman.jsonl import parse_lines, read_lines


def demo(
    db: Annotated[
        str, typer.Option("--db", help="Where to write the demo store (recreated).")
    ] = "memman-demo.db",
) -> None:
    """Run a sample conversation through update_memory and show every decision."""
    path = Path(db)
    if path.exists():
        _only_the_demo(path)
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


def _only_the_demo(path: Path) -> None:
    """The demo recreates its file: refuse one that holds another user's memories (`--db
    memman.db` erased the user's own store) or is no memman store (StoreError)."""
    with MemoryManager(str(path)) as mm, closing(mm.export(include_inactive=True)) as memories:
        other = next((m.user_id for m in memories if m.user_id != DEMO_USER), None)
    if other is not None:
        raise InvalidInputError(
            f"{path} holds memories of {other!r}: the demo recreates its file, so it writes"
            " only to a new file or an earlier demo's (default memman-demo.db)"
        )


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
    with _open(db, create=True) as mm:
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


def ingest(
    file: Annotated[
        Path,
        typer.Argument(
            help='JSON lines: {"fact": ..., "user_id"?, "agent_id"?, "source"?, "metadata"?,'
            ' "category"?, "importance"?, "subject"?, "attribute"?, "observed_at"?}'
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
    counts: dict[str, int] = {}
    bad: list[str] = []
    records: list[tuple[int, dict]] = []
    for number, line in parse_lines(read_lines(file), _IngestLine):
        if isinstance(line, BadLineError):
            bad.append(str(line))
        elif line.user_id is None and user is None:
            bad.append(f"line {number}: no user_id: give one in the line or --user")
        else:
            record = line.model_dump(exclude_none=True)
            records.append((number, {"source": f"{file.name}:{number}", **record}))
    with (
        _open(db, create=True) as mm,
        Progress(
            TextColumn("ingesting"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeRemainingColumn(),
            console=errors,
            disable=not records,  # every line bad (or none): no 0/0 bar above the report
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


# An export's lines that are no memory: each would be read as one by its "content".
_EXPORT_ROWS = {
    "pending": "a parked fact",
    "short_term": "a short-term fact",
    "message_buffer": "a buffered chat message",
    "vector": "a vector",
}


class _IngestLine(BaseModel):
    """One line of an ingest file: an object with a "fact" and what MemoryManager.ingest takes
    with it (a misspelt key is a bad line, not dropped), a bare JSON string (the fact), or a
    line of `memman export` of an active memory (its content is the fact; of its other
    columns, those ingest takes are kept)."""

    model_config = ConfigDict(extra="forbid")

    fact: str
    user_id: str | None = None
    agent_id: str | None = None
    source: str | None = None
    metadata: dict[str, Any] | None = None
    category: str | None = None
    importance: float | None = None
    subject: str | None = None
    attribute: str | None = None
    observed_at: str | None = None

    @model_validator(mode="before")
    @classmethod
    def _the_fact(cls, line: Any) -> Any:
        if isinstance(line, str):
            return {"fact": line}
        if isinstance(line, dict) and {"memory_id", "op"} <= line.keys():  # `export --events`
            raise ValueError("an audit event of an export, not a fact: nothing to ingest")
        if isinstance(line, dict) and line.get("kind") in _EXPORT_ROWS:  # read as a memory, an
            # agent's buffered assistant message became the user's fact
            what = _EXPORT_ROWS[line["kind"]]
            raise ValueError(f"{what} of an export: `memman import` copies those")
        if isinstance(line, dict) and "fact" not in line and "content" in line:
            status = line.get("status", "active")
            if status != "active":  # ingested, a deleted or replaced memory would be current
                raise ValueError(f"a {status} memory of an export: `memman import` copies those")
            kept = {key: line[key] for key in INGEST_KEYS & line.keys()}
            return {**kept, "fact": line["content"]}
        return line
