"""Commands that move memories through their life: consolidate, flush, pending, retry,
delete, restore, forget.
"""

from __future__ import annotations

from typing import Annotated

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn
from rich.table import Table

from memman.cli.common import AgentOption, DbOption, UserOption, _open, console, errors
from memman.cli.render import _add_decision, _decisions_table, _mode_line, _short
from memman.errors import InvalidInputError
from memman.lifecycle.observe import ObserveResult


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
    # Idle chats were extracted first: their facts are decisions (history), not changes.
    found = [(e.session.session_id, e.session.user_id, e.result) for e in report.extractions]
    if dry_run and found:
        sessions = ", ".join(f"{session} ({user})" for session, user, _ in found)
        console.print(f"{len(found)} idle sessions would be extracted: {sessions}", soft_wrap=True)
    done = [(session, user, result) for session, user, result in found if result is not None]
    if done:
        _show_extractions(done, f"{len(done)} sessions extracted")


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
    _show_extractions(done, f"{len(done)} sessions flushed")


def _show_extractions(done: list[tuple[str, str, ObserveResult]], title: str) -> None:
    """What flush or consolidate extracted, session by session, and what each skipped; exit
    2 if an extraction failed (its messages stay buffered)."""
    table = Table(title=title)
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


def retry(
    user: Annotated[str | None, typer.Option("--user", "-u")] = None, db: DbOption = None
) -> None:
    """Decide parked facts again."""
    with _open(db) as mm:
        console.print(_mode_line(mm))
        # A fact parked again has no content in its result: show the parked text.
        parked = {item.id: item.content for item in mm.pending(user_id=user)}
        results = mm.retry_pending(user_id=user)
        table = _decisions_table(f"{len(results)} retried")
        for i, r in enumerate(results, start=1):
            _add_decision(table, str(i), r.content or parked.get(r.pending_id or -1, ""), r)
        console.print(table)


def delete(
    memory_id: str, user: UserOption, agent: AgentOption = None, db: DbOption = None
) -> None:
    """Soft-delete a memory of the user (recoverable with restore)."""
    with _open(db) as mm:
        scope = {"user_id": user, "agent_id": agent}
        result = mm.delete(mm.resolve_id(memory_id, **scope), **scope)
        console.print(f"deleted {result.memory_id}: {result.content}")


def restore(
    memory_id: str, user: UserOption, agent: AgentOption = None, db: DbOption = None
) -> None:
    """Bring back a deleted or superseded memory of the user."""
    with _open(db) as mm:
        scope = {"user_id": user, "agent_id": agent}
        result = mm.restore(mm.resolve_id(memory_id, **scope), **scope)
        console.print(f"restored {result.memory_id}: {result.content}")


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
