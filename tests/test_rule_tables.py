"""Every row of the reader's rule tables (memman/language/rules/*.toml) reads its examples and
not its look-alikes: the rows' examples are their tests.

A phrasing row reads an example when it is the row that reads the example's predicate (the
first in precedence whose pattern matches and whose check passes) and the fact is read as
the row's attribute (or the one the example names); it reads a look-alike when it is that
row for any of the look-alike's predicates.
"""

from __future__ import annotations

import pytest

from memman.language import patterns, providers, rulebook, topic, whole
from memman.language.rulebook import Row
from memman.language.speaker import first_person, without_openers
from memman.language.text import words

PHRASINGS = patterns.ROWS
SWITCHES = rulebook.rows("changes", "switch.row")


def _rows_reading(text: str, monkeypatch: pytest.MonkeyPatch) -> list[Row]:
    """The rows that read a predicate of the text while the reader reads it."""
    fired: list[Row] = []
    real = patterns.read_row

    def traced(predicate: str) -> tuple[Row, tuple[str, str | None, bool]] | None:
        read = real(predicate)
        if read is not None:
            fired.append(read[0])
        return read

    with monkeypatch.context() as patch:
        patch.setattr(patterns, "read_row", traced)
        topic._about(text)  # not memoized: every predicate is read again
    return fired


def _name(row: Row) -> str:
    return f"{row.table}:{row.order}:{row.attribute}"


@pytest.mark.parametrize(
    ("row", "text", "reads"),
    [pytest.param(row, text, reads, id=f"{_name(row)}:{text}") for row in PHRASINGS
     for text, reads in row.examples],
)  # fmt: skip
def test_a_row_reads_its_examples(row, text, reads, monkeypatch):
    assert row in _rows_reading(text, monkeypatch)
    read = topic.about(text)
    assert read is not None and read.attribute == reads


@pytest.mark.parametrize(
    ("row", "text"),
    [pytest.param(row, text, id=f"{_name(row)}:{text}") for row in PHRASINGS
     for text in row.lookalikes],
)  # fmt: skip
def test_a_row_does_not_read_its_lookalikes(row, text, monkeypatch):
    assert row not in _rows_reading(text, monkeypatch)


@pytest.mark.parametrize("row", PHRASINGS, ids=_name)
def test_every_phrasing_has_an_example(row):
    assert row.examples


@pytest.mark.parametrize(
    ("row", "text", "matches"),
    [pytest.param(row, text, True, id=f"example:{text}") for row in SWITCHES
     for text, _ in row.examples]
    + [pytest.param(row, text, False, id=f"lookalike:{text}") for row in SWITCHES
       for text in row.lookalikes],
)  # fmt: skip
def test_the_switch_row_reads_its_examples_and_not_its_lookalikes(row, text, matches):
    assert bool(row.pattern.search(" ".join(words(text)))) is matches


def test_a_row_with_a_key_of_no_row_is_refused(tmp_path, monkeypatch):
    (tmp_path / "typo.toml").write_text(
        '[[row]]\npattern = "^x$"\nexmaples = ["x"]\n', encoding="utf-8"
    )
    monkeypatch.setattr(rulebook, "RULES", tmp_path)
    with pytest.raises(ValueError, match="exmaples"):
        rulebook.rows("typo")
    rulebook.table.cache_clear()


def test_a_fragment_nobody_defines_is_named():
    with pytest.raises(KeyError, match="NOPE"):
        rulebook.expand("^am ${NOPE}$", {})


def test_the_version_changes_with_a_table(tmp_path, monkeypatch):
    (tmp_path / "one.toml").write_text('[switch]\nafter = "at in"\n', encoding="utf-8")
    monkeypatch.setattr(rulebook, "RULES", tmp_path)
    rulebook.version.cache_clear()
    try:
        before = rulebook.version()
        (tmp_path / "one.toml").write_text('[switch]\nafter = "at in on"\n', encoding="utf-8")
        rulebook.version.cache_clear()
        assert rulebook.version() != before
    finally:
        monkeypatch.undo()
        rulebook.version.cache_clear()
    assert f"{topic.CODE_VERSION}.{rulebook.version()}" == topic.READER_VERSION


# The single patterns of the tables ([pattern.NAME]): each finds its examples and none of its
# look-alikes, applied as the code applies it (`use`: match, search or fullmatch).
# Pieces a table's patterns take from the code: the roles as one alternation.
_PIECES = {"providers": {"ROLE": providers._ROLE}}
PATTERNS = [
    found
    for path in sorted(rulebook.RULES.glob("*.toml"))
    for found in rulebook.patterns(path.stem, **_PIECES.get(path.stem, {})).values()
]


@pytest.mark.parametrize(
    ("found", "text", "finds"),
    [pytest.param(p, text, True, id=f"{p.table}:{p.name}:example:{text}") for p in PATTERNS
     for text in p.examples]
    + [pytest.param(p, text, False, id=f"{p.table}:{p.name}:lookalike:{text}") for p in PATTERNS
       for text in p.lookalikes],
)  # fmt: skip
def test_a_pattern_finds_its_examples_and_not_its_lookalikes(found, text, finds):
    assert found.finds(text) is finds


@pytest.mark.parametrize("found", PATTERNS, ids=lambda p: f"{p.table}:{p.name}")
def test_every_pattern_has_an_example(found):
    assert found.examples


# The rows of facts read whole (rules/whole.toml): each reads its examples, the first to read
# them, and none of its look-alikes (over the whole fact in the first person, as topic.py
# gives it).
WHOLE = whole._WHOLE


def _spoken(text: str) -> str:
    return first_person(without_openers(words(text)))


@pytest.mark.parametrize(
    ("row", "text", "reads"),
    [pytest.param(row, text, reads, id=f"{_name(row)}:{text}") for row in WHOLE
     for text, reads in row.examples],
)  # fmt: skip
def test_a_whole_row_reads_its_examples(row, text, reads):
    spoken = _spoken(text)
    assert next(r for r in WHOLE if r.pattern.match(spoken)) is row
    read = whole.stated_whole(spoken)
    assert read is not None and read[0] == reads


@pytest.mark.parametrize(
    ("row", "text"),
    [pytest.param(row, text, id=f"{_name(row)}:{text}") for row in WHOLE
     for text in row.lookalikes],
)  # fmt: skip
def test_a_whole_row_does_not_read_its_lookalikes(row, text):
    assert row.pattern.match(_spoken(text)) is None


@pytest.mark.parametrize("row", WHOLE, ids=_name)
def test_every_whole_row_has_an_example(row):
    assert row.examples
