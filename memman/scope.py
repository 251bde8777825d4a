"""Who a memory belongs to, and the checks every stored id passes: value types at the bottom.

The first stage of the write path (the candidate) needs `Scope` and the id checks but no
storage; keeping them here, importing nothing of memman but its errors, lets it get them
without importing the store, and lets a second storage backend share them.
"""

from __future__ import annotations

from dataclasses import dataclass

from memman.errors import InvalidInputError

MAX_SCOPE_ID_CHARS = 256


def check_id(name: str, value: object) -> str:
    """A user, agent, session or memory id as memman stores and matches it, or
    InvalidInputError: a non-empty string of at most MAX_SCOPE_ID_CHARS characters, no NUL,
    encodable as UTF-8 (a lone surrogate would otherwise fail inside SQLite's driver with an
    untyped UnicodeEncodeError)."""
    if not isinstance(value, str) or not value.strip():
        raise InvalidInputError(f"{name} must be a non-empty string")
    if len(value) > MAX_SCOPE_ID_CHARS or "\x00" in value:
        raise InvalidInputError(f"{name} must be at most {MAX_SCOPE_ID_CHARS} characters, no NUL")
    return check_encodable(name, value)


def check_encodable(name: str, text: str) -> str:
    """text, or InvalidInputError if it cannot be stored as UTF-8 (a lone surrogate, which
    Python strings allow and SQLite's driver refuses with an untyped UnicodeEncodeError)."""
    if not text.isascii():
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:
            raise InvalidInputError(f"{name} is not valid Unicode (lone surrogate?)") from None
    return text


@dataclass(frozen=True)
class Scope:
    """Who a memory belongs to. A hard filter in every query: scopes never mix."""

    user_id: str
    agent_id: str | None = None

    def __post_init__(self) -> None:
        check_id("user_id", self.user_id)
        if self.agent_id is not None:
            check_id("agent_id", self.agent_id)

    @property
    def agent_key(self) -> str:
        """The stored form of agent_id: '' for none, so the unique index sees one value."""
        return self.agent_id or ""
