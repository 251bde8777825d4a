"""Routing: settle the clear cases cheaply and send only the ambiguous rest to a decider."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from enum import StrEnum

from memman.retrieval import Retrieved
from memman.text import polarity_or_number_differs

log = logging.getLogger(__name__)


class RouteKind(StrEnum):
    NOVEL = "novel"  # nothing similar: ADD, no decider
    DUPLICATE = "duplicate"  # near-identical to one memory: NOOP, no decider
    AMBIGUOUS = "ambiguous"  # related memories exist: the decider chooses


@dataclass(frozen=True)
class Route:
    kind: RouteKind
    reason: str
    related: list[Retrieved] = field(default_factory=list)  # shown to the decider, best first

    @property
    def target(self) -> Retrieved | None:
        return self.related[0] if self.kind is RouteKind.DUPLICATE else None

    def scores(self) -> dict[str, dict[str, float]]:
        """Similarity of each related memory, for the audit trail."""
        return {
            r.memory.id: {"jaccard": round(r.jaccard, 4), "bm25": round(r.bm25, 4)}
            for r in self.related
        }


def route(
    candidate: str, retrieved: list[Retrieved], *, noop_jaccard: float, novel_jaccard: float
) -> Route:
    related = sorted(
        (r for r in retrieved if r.jaccard >= novel_jaccard), key=lambda r: r.jaccard, reverse=True
    )
    if not related:
        retrieved_best = max((r.jaccard for r in retrieved), default=0.0)
        reason = (
            "no similar memory"
            if not retrieved
            else f"no memory shares enough words (best Jaccard {retrieved_best:.2f}"
            f" < {novel_jaccard})"
        )
        result = Route(RouteKind.NOVEL, reason)
    elif related[0].jaccard >= noop_jaccard and not polarity_or_number_differs(
        candidate, related[0].memory.content
    ):
        result = Route(
            RouteKind.DUPLICATE,
            f"near-identical to an existing memory (Jaccard {related[0].jaccard:.2f})",
            related[:1],
        )
    else:
        best = related[0]
        why = (
            "a negation or number differs from a near-identical memory"
            if best.jaccard >= noop_jaccard
            else f"{len(related)} related memories (best Jaccard {best.jaccard:.2f})"
        )
        result = Route(RouteKind.AMBIGUOUS, why, related)
    log.debug("route %s: %s", result.kind, result.reason)
    return result
