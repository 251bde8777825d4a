"""The one stored form of a moment, and turning what a caller passes into it."""

from __future__ import annotations

import datetime as dt

from memman.errors import InvalidInputError


def stamp(moment: dt.datetime) -> str:
    """UTC ISO 8601 with milliseconds: sorts as text in the order of time."""
    return moment.astimezone(dt.UTC).isoformat(timespec="milliseconds")


# How far ahead of the clock a stated moment may be: a naive local time read as UTC, or a
# client's clock running fast, is hours ahead, never days.
FUTURE_SLACK = dt.timedelta(days=1)


def check_moment(name: str, value: object, *, now: dt.datetime | None = None) -> str:
    """A caller's moment (datetime, date or ISO 8601 text) as a stamp; naive means UTC.

    With `now`, a moment more than FUTURE_SLACK after it is refused: "newest observed wins",
    and a fact dated 9999 (a client's milliseconds read as seconds) stayed the current value
    against every later statement."""
    if isinstance(value, str):
        try:
            value = dt.datetime.fromisoformat(value.strip())
        except ValueError as error:
            raise InvalidInputError(f"{name} is not an ISO 8601 time: {value!r}") from error
    elif isinstance(value, dt.date) and not isinstance(value, dt.datetime):
        value = dt.datetime.combine(value, dt.time(), dt.UTC)
    if not isinstance(value, dt.datetime):
        raise InvalidInputError(f"{name} must be a datetime or ISO 8601 text")
    if value.tzinfo is None:
        value = value.replace(tzinfo=dt.UTC)
    try:
        stamped = stamp(value)
    except (OverflowError, ValueError) as error:  # year 1 in a zone east of UTC
        raise InvalidInputError(f"{name} is out of range: {value!r}") from error
    if now is not None and value > now + FUTURE_SLACK:
        raise InvalidInputError(f"{name} {stamped} is in the future (now: {stamp(now)})")
    return stamped
