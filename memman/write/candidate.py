"""The first step of the write path: turn raw input into a validated candidate fact.

Bad input stops here with an `InvalidInputError` naming the problem, before anything
touches the store.
"""

from __future__ import annotations

import datetime as dt
import functools
import json
from dataclasses import dataclass, field
from typing import Any

from memman.config import DEFAULT_CONFIDENCE, Settings
from memman.errors import InvalidInputError
from memman.language.reader import READER, Topic
from memman.models import MAX_IMPORTANCE, MIN_IMPORTANCE
from memman.scope import Scope, check_encodable
from memman.timestamps import check_moment

MAX_SOURCE_CHARS = 1000
# A model's reason for a decision, as the audit trail keeps it: its first sentence or two is
# the reason; the rest of a runaway answer (a million characters seen, issue 29) is cut
# rather than refused, since a re-ask for an overlong reason costs a call and may park a
# fact whose decision was sound. Cut texts end with "...".
MAX_REASON_CHARS = 500
MAX_CATEGORY_CHARS = 64
# A memory stored without an importance gets the middle of the scale.
DEFAULT_IMPORTANCE = 5.0


@dataclass(frozen=True)
class Candidate:
    scope: Scope
    content: str
    content_hash: str
    source: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)
    confidence: float = DEFAULT_CONFIDENCE  # stored on ADD
    category: str | None = None  # None: not given (a stored category is kept)
    importance: float | None = None  # None: not given (ADD stores DEFAULT_IMPORTANCE)
    # When the user stated it (a stamp; None: as it is written). "Newest" means newest observed.
    observed_at: str | None = None
    # What the caller said it is about (checked labels; None: not given), see `topic`.
    subject: str | None = None
    attribute: str | None = None
    # The memory it ends in (an UPDATE's, a NOOP's) takes `metadata` in place of its own: an
    # update by id that says what the metadata is now (update_memory's replace_metadata).
    replace_metadata: bool = False

    @functools.cached_property
    def topic(self) -> Topic | None:
        """What it is about (memman/language/topic.py); None: not recognised.

        Read on first use, not when the candidate is made: a fact the hash tier settles never
        needs it, and reading it was a quarter of such a write's CPU (RESULTS.md, "A single write").
        """
        return READER.labelled(self.content, self.subject, self.attribute)


def check_text(name: str, value: Any, max_chars: int) -> str:
    """value stripped, or InvalidInputError: not a string, empty (or only invisible
    characters: language/text.blank), a NUL, not UTF-8, too long."""
    if not isinstance(value, str):
        raise InvalidInputError(f"{name} must be a string, not {type(value).__name__}")
    text = value.strip()
    if "\x00" in text:
        raise InvalidInputError(f"{name} contains a NUL byte")
    if READER.blank(text):
        raise InvalidInputError(f"{name} is empty")
    check_encodable(name, text)
    if len(text) > max_chars:
        raise InvalidInputError(f"{name} is {len(text)} characters; the limit is {max_chars}")
    return text


def model_text(name: str, value: str, max_chars: int) -> str:
    """Text a model wrote to be stored (an UPDATE's or a merge's content) under the checks a
    user's fact passes (check_text); else ValueError worded for the model, which the
    structured-output engine sends back as the re-ask."""
    try:
        return check_text(name, value, max_chars)
    except InvalidInputError as error:
        raise ValueError(
            f"{error}: write the full text as plain words, at most {max_chars} characters."
        ) from None


def model_reason(value: str) -> str:
    """A model's reason as the audit trail keeps it: NUL bytes and lone surrogates dropped
    (they cannot be stored or exported), at most MAX_REASON_CHARS characters."""
    text = value.replace("\x00", "").encode("utf-8", "replace").decode("utf-8").strip()
    if len(text) > MAX_REASON_CHARS:
        text = text[: MAX_REASON_CHARS - 3].rstrip() + "..."
    return text


def _nested_deeper_than(value: Any, limit: int) -> bool:
    """Iterative, so metadata nested thousands deep is refused instead of a RecursionError."""
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if not isinstance(item, dict | list):
            continue
        if depth > limit:
            return True
        children = item.values() if isinstance(item, dict) else item
        stack.extend((child, depth + 1) for child in children)
    return False


def check_metadata(metadata: Any, settings: Settings) -> dict[str, Any]:
    if metadata is None:
        return {}
    if not isinstance(metadata, dict):
        raise InvalidInputError("metadata must be a dict")
    # Depth first: json.dumps of a very deep structure would hit the recursion limit.
    if _nested_deeper_than(metadata, settings.max_metadata_depth):
        raise InvalidInputError(f"metadata is nested deeper than {settings.max_metadata_depth}")
    try:
        encoded = json.dumps(metadata, ensure_ascii=False, allow_nan=False)
        encoded.encode("utf-8")
    except (TypeError, ValueError) as error:
        raise InvalidInputError(f"metadata is not JSON-serialisable: {error}") from error
    if len(encoded.encode("utf-8")) > settings.max_metadata_bytes:
        raise InvalidInputError(f"metadata is larger than {settings.max_metadata_bytes} bytes")
    return json.loads(encoded)


def check_category(category: Any) -> str | None:
    """Lowercased and stripped, so "Safety" is the protected category "safety"."""
    if category is None:
        return None
    return check_text("category", category, MAX_CATEGORY_CHARS).casefold()


def check_importance(importance: Any) -> float | None:
    if importance is None:
        return None
    if isinstance(importance, bool) or not isinstance(importance, int | float):
        raise InvalidInputError("importance must be a number")
    if not MIN_IMPORTANCE <= importance <= MAX_IMPORTANCE:  # also refuses NaN
        raise InvalidInputError(
            f"importance must be from {MIN_IMPORTANCE} to {MAX_IMPORTANCE}, not {importance}"
        )
    return float(importance)


def make_candidate(
    fact: Any,
    *,
    scope: Scope,
    settings: Settings,
    source: str | None = None,
    metadata: dict[str, Any] | None = None,
    category: str | None = None,
    importance: float | None = None,
    observed_at: Any = None,
    subject: Any = None,
    attribute: Any = None,
    now: dt.datetime | None = None,
) -> Candidate:
    """The fact checked and normalised; `now` (the caller's clock) bounds observed_at."""
    content = check_text("fact", fact, settings.max_fact_chars)
    if not READER.normalize(content):
        raise InvalidInputError("fact has no content after normalisation")
    return Candidate(
        scope=scope,
        content=content,
        content_hash=READER.content_hash(content),
        source=None if source is None else check_text("source", source, MAX_SOURCE_CHARS),
        metadata=check_metadata(metadata, settings),
        confidence=settings.default_confidence,
        category=check_category(category),
        importance=check_importance(importance),
        observed_at=None
        if observed_at is None
        else check_moment("observed_at", observed_at, now=now),
        **_check_labels(subject, attribute),
    )


def _check_labels(subject: Any, attribute: Any) -> dict[str, str | None]:
    """The caller's labels normalised, a person filed by one name ("mom" is "mother", as
    the extractor files them), so the caller's and the extractor's subjects meet."""
    try:
        who = READER.check_label("subject", subject)
        return {
            "subject": None if who is None else READER.person(who),
            "attribute": READER.check_label("attribute", attribute),
        }
    except ValueError as error:
        raise InvalidInputError(str(error)) from error
