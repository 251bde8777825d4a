"""The first step of the write path: turn raw input into a validated candidate fact.

Bad input stops here with an `InvalidInputError` naming the problem, before anything
touches the store.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from memman.config import Settings
from memman.errors import InvalidInputError
from memman.store import Scope
from memman.text import content_hash, normalize

MAX_SOURCE_CHARS = 1000


@dataclass(frozen=True)
class Candidate:
    scope: Scope
    content: str
    content_hash: str
    source: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)


def _check_text(name: str, value: Any, max_chars: int) -> str:
    if not isinstance(value, str):
        raise InvalidInputError(f"{name} must be a string, not {type(value).__name__}")
    text = value.strip()
    if not text:
        raise InvalidInputError(f"{name} is empty")
    if "\x00" in text:
        raise InvalidInputError(f"{name} contains a NUL byte")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as error:
        raise InvalidInputError(f"{name} is not valid Unicode (lone surrogate?)") from error
    if len(text) > max_chars:
        raise InvalidInputError(f"{name} is {len(text)} characters; the limit is {max_chars}")
    return text


def _depth(value: Any) -> int:
    if isinstance(value, dict):
        return 1 + max((_depth(v) for v in value.values()), default=0)
    if isinstance(value, list):
        return 1 + max((_depth(v) for v in value), default=0)
    return 0


def check_metadata(metadata: Any, settings: Settings) -> dict[str, Any]:
    if metadata is None:
        return {}
    if not isinstance(metadata, dict):
        raise InvalidInputError("metadata must be a dict")
    # Depth first: json.dumps of a very deep structure would hit the recursion limit.
    if _depth(metadata) > settings.max_metadata_depth:
        raise InvalidInputError(f"metadata is nested deeper than {settings.max_metadata_depth}")
    try:
        encoded = json.dumps(metadata, ensure_ascii=False, allow_nan=False)
        encoded.encode("utf-8")
    except (TypeError, ValueError) as error:
        raise InvalidInputError(f"metadata is not JSON-serialisable: {error}") from error
    if len(encoded.encode("utf-8")) > settings.max_metadata_bytes:
        raise InvalidInputError(f"metadata is larger than {settings.max_metadata_bytes} bytes")
    return json.loads(encoded)


def make_candidate(
    fact: Any,
    *,
    scope: Scope,
    settings: Settings,
    source: str | None = None,
    metadata: dict[str, Any] | None = None,
) -> Candidate:
    content = _check_text("fact", fact, settings.max_fact_chars)
    if not normalize(content):
        raise InvalidInputError("fact has no content after normalisation")
    return Candidate(
        scope=scope,
        content=content,
        content_hash=content_hash(content),
        source=None if source is None else _check_text("source", source, MAX_SOURCE_CHARS),
        metadata=check_metadata(metadata, settings),
    )
