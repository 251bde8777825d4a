"""The rich tables commands print: decisions, memories, events, and the decider line.

Shared by the write, read and lifecycle commands, so a memory looks the same in each.
"""

from __future__ import annotations

from rich.table import Table

from memman.api.manager import MemoryManager
from memman.models import Event, Memory, UpdateResult


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
