"""Typed errors: raised where a problem is detected, explained where it is shown (the CLI)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pydantic import ValidationError


class MemmanError(Exception):
    """Base class: the CLI turns any of these into a one-line message and exit code 1."""


class InvalidInputError(MemmanError, ValueError):
    """A fact, query, scope or metadata value that memman refuses to store or use."""


class BadLineError(InvalidInputError):
    """A line of a JSON-lines (or CSV) input that is not a valid record: the message names the
    file, when there is one, and the line, so the user can find and fix it."""

    def __init__(self, number: int, why: str, source: str | None = None):
        super().__init__(f"{source}:{number}: {why}" if source else f"line {number}: {why}")
        self.number = number


class NotFoundError(MemmanError, KeyError):
    """No memory, event or pending item with that id."""

    def __str__(self) -> str:  # KeyError would otherwise repr() the message
        return str(self.args[0]) if self.args else "not found"


class ConfigError(MemmanError):
    """The configuration (environment, TOML file or arguments) cannot be used."""


class DecisionError(MemmanError):
    """The decider could not produce a valid decision (LLM down, timeout, invalid output).

    `update_memory` never lets this escape: it parks the fact in `pending` instead.
    It carries what the audit trail needs about the failed call.
    """

    def __init__(self, message: str, *, attempts: int = 0, usage: dict | None = None):
        super().__init__(message)
        self.attempts = attempts
        self.usage = usage or {}


class StoreError(MemmanError):
    """The file cannot be opened as a memman store (not SQLite, damaged schema, no access)."""


class StoreFullError(StoreError):
    """A write failed because the disk (or the file's size limit) is full; nothing of it was
    stored. Reads keep working; free space and write again."""


class StoreReadOnlyError(StoreError):
    """A write to a store opened read-only (a read-only file or medium, or a mode=ro URI)."""


class StoreCorruptError(StoreError):
    """A read or write met a damaged page of the file (SQLite: "database disk image is
    malformed"): nothing of the write was stored. `reason` is SQLite's own words, for
    `memman check`'s report."""

    def __init__(self, message: str, reason: str):
        super().__init__(message)
        self.reason = reason


class StoreBusyError(MemmanError):
    """The database stayed locked by other writers longer than the configured patience."""


class LeaseLostError(MemmanError):
    """Another worker settled the parked fact this one was deciding (its lease had lapsed):
    the change is rolled back, so the fact is applied once."""


class EmbeddingError(DecisionError):
    """The embedding backend failed (server down, timeout, malformed answer, model error).

    A DecisionError: without the fact's vector the semantic tier cannot route it, so
    `update_memory` parks the fact in `pending` like any failed decision. Raised as is to
    callers of `Embedder.embed` and by `reindex`.
    """


def one_line(error: BaseException) -> str:
    """An error as one short line for the pending table and the audit trail."""
    return f"{type(error).__name__}: {' '.join(str(error).split())[:500]}"


def validation_problems(error: ValidationError) -> str:
    """A pydantic ValidationError as one line: `field.path: message; ...` (a validator's own
    message without pydantic's "Value error, " in front of it)."""
    return "; ".join(
        ": ".join(filter(None, (".".join(map(str, e["loc"])), _message(e["msg"]))))
        for e in error.errors()
    )


def _message(text: str) -> str:
    return text.removeprefix("Value error, ")
