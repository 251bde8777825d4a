"""The reader's rules as data: the TOML tables under rules/, and the small engine that loads them.

A table file holds word lists (a section's keys whose values are words, one string split on
white space) and rows. A row is a phrasing: its `pattern` (a regular expression over the text
as the reader's step has it, named group `v` the value), the `attribute` it states, and the
`examples` it must read and the `lookalikes` it must not (tests/test_rule_tables.py runs both
for every row: they are its tests). Precedence is file order: the rows of a table are tried
top to bottom and the first that reads the text wins, so a more specific phrasing stands
above a general one; nothing else orders them.

A table file may also hold, besides rows: ordered lists (`listed`: a TOML array kept as
written, or a string of words in their order), maps (`mapping`: a [section] of word = word;
`word_sets`: a [section] of name = "words ..."), and single patterns (`pattern`: a
[pattern.NAME] with its `pattern`, a string or a list of pieces joined, the `examples` it must
find and the `lookalikes` it must not, found as `use` says: "match" (the default), "search" or
"fullmatch"; `ignorecase = true` for re.IGNORECASE).

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


def _section(name: str, section: str) -> dict[str, Any]:
    """A [section] of a table; dotted ("map.statuses") for a section's own."""
    found: Any = table(name)
    for key in section.split("."):
        found = found[key]
    return found


def words(name: str, section: str, key: str) -> frozenset[str]:
    """A word list of a table: [section] key = "words ..." (split on white space)."""
    return frozenset(_section(name, section)[key].split())


def listed(name: str, section: str, key: str) -> tuple[str, ...]:
    """An ordered list of a table: [section] key = [ "...", ... ] as written, or a string of
    words in their order."""
    value = _section(name, section)[key]
    return tuple(value.split() if isinstance(value, str) else value)


def mapping(name: str, section: str) -> dict[str, str]:
    """A map of a table, in file order: [section] word = "word"."""
    return dict(_section(name, section))


def word_sets(name: str, section: str) -> dict[str, frozenset[str]]:
    """Named word lists of a table, in file order: [section] name = "words ..."."""
    return {key: frozenset(value.split()) for key, value in _section(name, section).items()}


@dataclass(frozen=True)
class Pattern:
    """One pattern of a table ([pattern.NAME]), compiled, with the texts that test it."""

    table: str
    name: str
    pattern: re.Pattern[str]
    use: str = "match"  # how the code applies it: match, search or fullmatch
    examples: tuple[str, ...] = ()
    lookalikes: tuple[str, ...] = ()

    def finds(self, text: str) -> bool:
        """Whether the pattern finds the text as the code applies it."""
        return getattr(self.pattern, self.use)(text) is not None


_PATTERN_KEYS = frozenset({"pattern", "use", "ignorecase", "examples", "lookalikes"})


@functools.cache
def patterns(name: str, **pieces: str) -> dict[str, Pattern]:
    """Every [pattern.NAME] of a table, by name in file order, expanded with the file's
    [fragments] and `pieces` and compiled."""
    data = table(name)
    fragments = {**data.get("fragments", {}), **pieces}
    found: dict[str, Pattern] = {}
    for key, raw in data.get("pattern", {}).items():
        if isinstance(raw, str):
            raw = {"pattern": raw}
        if not raw.keys() <= _PATTERN_KEYS or "pattern" not in raw:
            raise ValueError(f"rules/{name}.toml [pattern.{key}]: keys {sorted(raw)}")
        if raw.get("use", "match") not in ("match", "search", "fullmatch"):
            raise ValueError(f"rules/{name}.toml [pattern.{key}]: use {raw['use']!r}")
        found[key] = Pattern(
            table=name,
            name=key,
            pattern=re.compile(
                expand(_joined(raw["pattern"]), fragments),
                re.IGNORECASE if raw.get("ignorecase") else 0,
            ),
            use=raw.get("use", "match"),
            examples=tuple(raw.get("examples", ())),
            lookalikes=tuple(raw.get("lookalikes", ())),
        )
    return found


def pattern(name: str, key: str, **pieces: str) -> re.Pattern[str]:
    """The compiled pattern [pattern.<key>] of a table (see `patterns`)."""
    return patterns(name, **pieces)[key].pattern


def fragment(name: str, key: str) -> str:
    """A fragment of a table's [fragments], itself expanded."""
    fragments = table(name).get("fragments", {})
    return expand(fragments[key], fragments)


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
            pattern=re.compile(expand(_joined(raw["pattern"]), fragments)),
            attribute=raw.get("attribute"),
            fixed=raw.get("fixed"),
            examples=tuple(_example(e, raw.get("attribute")) for e in raw.get("examples", ())),
            lookalikes=tuple(raw.get("lookalikes", ())),
        )
        for order, raw in enumerate(listed or ())
    ]


def _joined(pattern: str | list[str]) -> str:
    """A pattern written as one string, or as a list of its pieces one after another."""
    return pattern if isinstance(pattern, str) else "".join(pattern)


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
