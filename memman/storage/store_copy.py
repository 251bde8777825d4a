"""A whole-store copy (`memman migrate-db`, SQLite <-> PostgreSQL): an export of everything.

It carries what an export of every scope leaves out: `{"kind": "vector", ...}` lines (a
memory's id, model, dim and its float32 bytes in base64: the row it hangs on is numbered
differently in another store), which transfer.import_lines reads back into an empty store only
(or with `raw`). Parked facts, short-term facts and buffered messages are an export's own lines
(export_format.py). Rows per table are then compared.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from dataclasses import dataclass

from memman.errors import InvalidInputError
from memman.storage.export_format import VECTOR
from memman.storage.transfer import ImportReport, Manager, export_lines, import_lines

# Tables a copy does not compare: the target's triggers write its own change log.
DERIVED_TABLES = frozenset({"vector_log"})


@dataclass
class MigrateReport:
    """What `migrate` copied: rows per table in the source and in the target afterwards."""

    source_rows: dict[str, int]
    target_rows: dict[str, int]
    imported: ImportReport

    def differences(self) -> list[str]:
        """The tables whose counts differ (empty: a complete copy), derived ones aside."""
        return [
            f"{table}: {count} rows in the source, {self.target_rows.get(table, 0)} in the target"
            for table, count in self.source_rows.items()
            if table not in DERIVED_TABLES and count != self.target_rows.get(table, 0)
        ]


def store_lines(mm: Manager) -> Iterator[str]:
    """The whole store as JSON lines: every memory (any status), every parked, short-term
    fact and buffered message and every event (export_lines of no scope, include_inactive),
    then every vector. Each part is one read snapshot: copy a store nobody writes to, or the
    parts may disagree."""
    yield from export_lines(mm, include_inactive=True, events=True)
    store = mm.store
    with store.read() as conn:
        for memory_id, model, dim, blob in store.vector_rows(conn):
            vector = base64.b64encode(blob).decode("ascii")
            yield json.dumps(
                {"kind": VECTOR, "memory_id": memory_id, "model": model, "dim": dim}
                | {"vector": vector}
            )


def migrate(source: Manager, target: Manager) -> MigrateReport:
    """Copy source's whole store into target, which must be empty (InvalidInputError
    otherwise), through store_lines and import_lines; the report compares rows per table."""
    held = {table: n for table, n in _rows(target).items() if n}
    if held:
        counts = ", ".join(f"{n} rows in {table}" for table, n in held.items())
        raise InvalidInputError(
            f"{target.store.path} is not empty ({counts}): migrate-db copies into an empty"
            " store only"
        )
    imported = import_lines(target, store_lines(source), raw=True)
    return MigrateReport(_rows(source), _rows(target), imported)


def _rows(mm: Manager) -> dict[str, int]:
    rows: dict[str, int] = mm.store.sizes()["rows"]
    return {table: n for table, n in rows.items() if table not in DERIVED_TABLES}
