"""An injected clock: lifecycle tests move time by hand instead of sleeping."""

from __future__ import annotations

import datetime as dt

START = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)


class Clock:
    def __init__(self) -> None:
        self.now = START

    def __call__(self) -> dt.datetime:
        return self.now

    def advance(self, **delta: float) -> None:
        self.now += dt.timedelta(**delta)
