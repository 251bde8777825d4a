"""The storage boundary: Store offers every operation of the Storage protocol, and the stages
moved behind it write no SQL of their own."""

from __future__ import annotations

import ast
import inspect
import re
from pathlib import Path

import pytest

import memman
from memman.storage.protocol import Storage
from memman.storage.store import Store

# Every public operation of Storage (and of any Protocol it may be built from) counts.
OPERATIONS = sorted(
    {
        name
        for part in inspect.getmro(Storage)
        for name, member in vars(part).items()
        if inspect.isfunction(member) and not name.startswith("_")
    }
)
PACKAGE = Path(memman.__file__).parent
STAGES = sorted(
    path.relative_to(PACKAGE).as_posix()
    for path in PACKAGE.rglob("*.py")
    if path.relative_to(PACKAGE).parts[0] != "storage"
)
SQL_CALLS = {"text", "exec_driver_sql", "run_sql", "execute", "executemany"}
# "UPDATE <table> SET", not a decision's reason ("UPDATE the active memory ...").
SQL_WORDS = re.compile(r"^\s*((SELECT|INSERT|DELETE|PRAGMA|VACUUM|BEGIN) |UPDATE \w+ SET)")
TABLE_OBJECTS = {"long_term", "events", "pending", "engine"}


def _shape(function) -> list[tuple[str, inspect._ParameterKind]]:
    return [(p.name, p.kind) for p in inspect.signature(function).parameters.values()]


def test_the_protocol_lists_the_operations():
    assert len(OPERATIONS) > 50, OPERATIONS


@pytest.mark.parametrize("name", OPERATIONS)
def test_store_implements_each_operation_with_its_parameters(name):
    assert callable(getattr(Store, name, None)), f"Store has no {name}"
    assert _shape(getattr(Store, name)) == _shape(getattr(Storage, name))


def _sql_in(source: str) -> list[str]:
    """What in this source writes SQL or reaches into the store's tables."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call):
            func = node.func
            called = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            if called in SQL_CALLS:
                found.append(f"line {node.lineno}: {called}()")
        elif isinstance(node, ast.Attribute) and node.attr in TABLE_OBJECTS:
            owner = node.value
            name = owner.attr if isinstance(owner, ast.Attribute) else getattr(owner, "id", "")
            if name == "store":  # store.long_term: the store's table objects
                found.append(f"line {node.lineno}: store.{node.attr}")
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            if SQL_WORDS.match(node.value):
                found.append(f"line {node.lineno}: {node.value[:40]!r}")
        elif isinstance(node, ast.ImportFrom | ast.Import):
            names = [getattr(node, "module", None) or ""] + [a.name for a in node.names]
            if any(n.startswith("sqlite") for n in names):
                found.append(f"line {node.lineno}: imports {names}")
    return found


@pytest.mark.parametrize("module", STAGES)
def test_the_stage_writes_no_sql(module):
    assert _sql_in((PACKAGE / module).read_text(encoding="utf-8")) == []


def test_the_check_sees_sql():
    source = (
        "import sqlalchemy as sa\n"
        "def f(conn, store):\n"
        "    conn.execute(sa.text('SELECT 1'))\n"
        "    return store.long_term\n"
    )
    assert len(_sql_in(source)) == 4  # execute(), text(), the SELECT, store.long_term
