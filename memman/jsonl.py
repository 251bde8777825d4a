"""One reader for JSON lines (and CSV rows): each record validated into the caller's type.

Exports, ingest files, calibration pairs, decision cases and the demo conversation are all
one JSON value per line. Each reader used to parse them its own way, with its own errors;
here a line is validated by pydantic (JSON syntax included) and a bad one becomes a
BadLineError naming the file and line. Blank lines are skipped.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from importlib.abc import Traversable
from pathlib import Path
from typing import Any, TypeVar

from pydantic import TypeAdapter, ValidationError

from memman.errors import BadLineError, InvalidInputError, validation_problems

T = TypeVar("T")


def read_lines(path: Path | Traversable) -> list[str]:
    """The lines of a UTF-8 text file (a byte-order mark is dropped), or InvalidInputError.

    Split at line feeds only: JSON keeps U+2028, NEL and the other characters
    str.splitlines() also breaks at unescaped, so an exported fact holding one stays one line.
    A line that is not UTF-8 keeps its bytes as lone surrogates (surrogateescape), for
    records() to report as that line's error instead of refusing the whole file."""
    try:
        text = path.read_bytes().decode("utf-8-sig", errors="surrogateescape")
    except OSError as error:
        raise InvalidInputError(f"cannot read {path}: {error}") from error
    return [line.removesuffix("\r") for line in text.split("\n")]


def _not_utf8(row: str) -> str | None:
    """Why a line read with surrogateescape is not UTF-8 text, or None when it is."""
    if row.isascii():
        return None
    try:
        row.encode("utf-8")
    except UnicodeEncodeError as error:
        code = ord(row[error.start]) - 0xDC00  # surrogateescape keeps byte b as U+DC00 + b
        what = f"byte 0x{code:02x}" if 0x80 <= code <= 0xFF else "a lone surrogate"
        return f"not UTF-8 text ({what} at character {error.start + 1})"
    return None


def _row_not_utf8(row: str | Mapping[str, Any]) -> str | None:
    """Why a row read with surrogateescape is not UTF-8 text: a JSON line, or a field of a
    CSV row (csv.DictReader splits the line before anyone looks at its bytes)."""
    if isinstance(row, str):
        return _not_utf8(row)
    for key, value in row.items():
        if isinstance(value, str) and (why := _not_utf8(value)) is not None:
            return f"{key}: {why}"
    return None


def records(
    rows: Iterable[tuple[int, Any]],
    model: type[T],
    *,
    source: str | None = None,
) -> Iterator[tuple[int, T | BadLineError]]:
    """Each numbered row as a `model`, or the BadLineError saying why it is not one: a
    string row is JSON, a mapping (a CSV row) is validated as it is. Lenient readers (import,
    ingest) report the errors and go on; strict ones use read_jsonl."""
    adapter = TypeAdapter(model)
    for number, row in rows:
        try:
            if not isinstance(row, str | Mapping):
                why = f"not a line of text but {type(row).__name__}"
                yield number, BadLineError(number, why, source)
            elif (why := _row_not_utf8(row)) is not None:
                yield number, BadLineError(number, why, source)
            elif isinstance(row, str):
                yield number, adapter.validate_json(row)
            else:
                yield number, adapter.validate_python(row)
        except ValidationError as error:
            yield number, BadLineError(number, validation_problems(error), source)


def parse_lines(
    lines: Iterable[str | bytes], model: type[T], *, source: str | None = None
) -> Iterator[tuple[int, T | BadLineError]]:
    """records() of JSON lines numbered from 1, blank lines skipped. A line of bytes (a file
    opened in binary mode) is decoded as read_lines decodes a file; a line that is neither
    (an int in a list) is that line's BadLineError."""
    decoded = (
        (number, line.decode("utf-8-sig", errors="surrogateescape"))
        if isinstance(line, bytes)
        else (number, line)
        for number, line in enumerate(lines, 1)
    )
    numbered = ((n, line) for n, line in decoded if not isinstance(line, str) or line.strip())
    return records(numbered, model, source=source)


def strict(parsed: Iterable[tuple[int, T | BadLineError]]) -> Iterator[tuple[int, T]]:
    """Each numbered record, until the first bad line: its BadLineError is raised."""
    for number, record in parsed:
        if isinstance(record, BadLineError):
            raise record
        yield number, record


def read_jsonl(path: Path | Traversable, model: type[T]) -> list[T]:
    """Every record of a JSONL file; InvalidInputError if it cannot be read, BadLineError
    (with the file and line) at the first line that is not a `model`."""
    return [record for _, record in strict(parse_lines(read_lines(path), model, source=str(path)))]
