"""Recall's score: one blend of relevance, recency and importance for everything a search
returns, so long-term memories and short-term facts ranked together are on one scale."""

from __future__ import annotations

import datetime as dt

from memman.config import Settings


def blend(
    settings: Settings, *, relevance: float, touched: str, importance: float, now: dt.datetime
) -> float:
    """relevance in [0, 1], recency halving every recall_half_life_days since `touched` (a
    stamp), importance out of 10, weighted by the recall_weight_* settings."""
    age_days = max((now - dt.datetime.fromisoformat(touched)).total_seconds() / 86400, 0.0)
    recency = 0.5 ** (age_days / settings.recall_half_life_days)
    return (
        settings.recall_weight_relevance * relevance
        + settings.recall_weight_recency * recency
        + settings.recall_weight_importance * importance / 10
    )
