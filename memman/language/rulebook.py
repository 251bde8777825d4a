"""The reader's rules as data: the TOML tables under rules/, and the small engine that loads them.

A table file holds word lists (a section's keys whose values are words, one string split on
white space) and rows. A row is a phrasing: its `pattern` (a regular expression over the text
as the reader's step has it, named group `v` the value), the `attribute` it states, and the
`examples` it must read and the `lookalikes` it must not (tests/test_rule_tables.py runs both
for every row: they are its tests). Precedence is file order: the rows of a table are tried
top to bottom and the first that reads the text wins, so a more specific phrasing stands
above a general one; nothing else orders them.

A pattern names shared pieces as `${NAME}`: the file's `[fragments]` or the ones the caller
passes (pieces built from word tables kept in code). `version()` hashes every table, so the
reader's version changes whenever a row or a word does (topic.READER_VERSION).
"""

from __future__ import annotations

import functools
import hashlib
import re
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

RULES = Path(__file__).parent / "rules"
_PIECE = re.compile(r"\$\{(\w+)\}")
_KEYS = frozenset({"pattern", "attribute", "fixed", "examples", "lookalikes"})


@dataclass(frozen=True)
class Row:
    """One phrasing of a table, its pattern compiled, with the texts that test it."""

    table: str
    order: int  # its place in the table: the first row that reads a text wins
    pattern: re.Pattern[str]
    attribute: str | None = None
    fixed: str | None = None  # a value the phrasing states, or a check ("pet?": kinds.py)
    # (text, the attribute it reads): the row's own, or the one its check files it under
    examples: tuple[tuple[str, str | None], ...] = ()
    lookalikes: tuple[str, ...] = ()


@functools.cache
def table(name: str) -> dict[str, Any]:
    """The parsed TOML table rules/<name>.toml."""
    with (RULES / f"{name}.toml").open("rb") as file:
        return tomllib.load(file)


def words(name: str, section: str, key: str) -> frozenset[str]:
    """A word list of a table: [section] key = "words ..." (split on white space)."""
    return frozenset(table(name)[section][key].split())


def expand(pattern: str, fragments: dict[str, str]) -> str:
    """The pattern with every ${NAME} replaced by its fragment (itself expanded first);
    KeyError names a piece no fragment defines."""

    def piece(found: re.Match[str]) -> str:
        return expand(fragments[found.group(1)], fragments)

    return _PIECE.sub(piece, pattern)


def rows(name: str, section: str = "row", **pieces: str) -> list[Row]:
    """The rows of a table ([[section]], dotted for a section's own) in their order, each
    pattern expanded with the file's [fragments] and `pieces` (the caller's, built from
    tables in code) and compiled."""
    data = table(name)
    fragments = {**data.get("fragments", {}), **pieces}
    listed: Any = data
    for key in section.split("."):  # "switch.row": the rows of [switch]
        listed = listed.get(key, {})
    for order, raw in enumerate(listed or ()):
        if not raw.keys() <= _KEYS or "pattern" not in raw:  # "exmaples" would test nothing
            raise ValueError(f"rules/{name}.toml [[{section}]] {order}: keys {sorted(raw)}")
    return [
        Row(
            table=name,
            order=order,
            pattern=re.compile(expand(raw["pattern"], fragments)),
            attribute=raw.get("attribute"),
            fixed=raw.get("fixed"),
            examples=tuple(_example(e, raw.get("attribute")) for e in raw.get("examples", ())),
            lookalikes=tuple(raw.get("lookalikes", ())),
        )
        for order, raw in enumerate(listed or ())
    ]


def _example(example: str | dict[str, str], attribute: str | None) -> tuple[str, str | None]:
    """An example as (text, the attribute it reads): a string reads as its row's attribute,
    `{ text = ..., reads = ... }` as the attribute named."""
    if isinstance(example, str):
        return example, attribute
    return example["text"], example["reads"]


@functools.cache
def version() -> str:
    """A short hash of every table's bytes, in file-name order."""
    digest = hashlib.sha256()
    for path in sorted(RULES.glob("*.toml")):
        digest.update(path.name.encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()[:12]
