"""CPU and wall time of one operation, and their medians: the benchmarks' one timer.

Stdlib only, so a benchmark's child process in another venv (bench_vs_mem0's mem0 side)
imports it too. CPU time (`time.process_time`) is the figure to trust on a shared machine;
wall time is reported beside it.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable


def timed(fn: Callable[[], object]) -> tuple[float, float]:
    """(CPU ms, wall ms) of one call."""
    cpu, wall = time.process_time(), time.perf_counter()
    fn()
    return (time.process_time() - cpu) * 1000, (time.perf_counter() - wall) * 1000


def medians(samples: list[tuple[float, float]]) -> dict[str, float]:
    """{"cpu": median CPU ms, "wall": median wall ms} of timed() samples."""
    return {
        "cpu": statistics.median(s[0] for s in samples),
        "wall": statistics.median(s[1] for s in samples),
    }
