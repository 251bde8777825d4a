"""Measure routing thresholds on labelled pairs instead of guessing them.

Pairs are (text_a, text_b, label) with label `same`, `different` or `contradiction`
(contradictions count as different: merging them would lose the change). For each measure
(lexical Jaccard, and cosine of the configured embedder) the pairs are split into a
calibration part and a held-out part; on the calibration part:

- `noop` is the lowest score at which at most `target` of the different pairs score as high
  (a false merge: a new fact silently dropped as a duplicate);
- `novel` is the highest score below which at most `target` of the same pairs fall (a missed
  duplicate: stored twice without asking the decider).

Precision and recall are then reported on the held-out part, so the numbers are not the ones
the thresholds were fitted to.
"""

from __future__ import annotations

import csv
import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from pydantic import ConfigDict, field_validator
from pydantic.dataclasses import dataclass as pydantic_dataclass

from memman.errors import ConfigError, InvalidInputError
from memman.jsonl import parse_lines, read_lines, records, strict
from memman.language.text import content_tokens, jaccard
from memman.semantic.embed import Embedder

LABELS = ("same", "different", "contradiction")


@pydantic_dataclass(frozen=True, config=ConfigDict(coerce_numbers_to_str=True))
class Pair:
    """One labelled pair, as a JSONL line or a CSV/TSV row holds it (a label of any case)."""

    text_a: str
    text_b: str
    label: str

    @field_validator("label")
    @classmethod
    def _known_label(cls, label: str) -> str:
        if label.lower() not in LABELS:
            raise ValueError(f"label must be one of {LABELS}")
        return label.lower()

    @property
    def same(self) -> bool:
        return self.label == "same"


@dataclass(frozen=True)
class MeasureReport:
    """Thresholds for one measure and how they do on the held-out pairs."""

    measure: str  # "jaccard" or "cosine"
    noop: float
    novel: float
    precision: float  # of "score >= noop means same", held out
    recall: float  # share of held-out same pairs settled as duplicates at noop
    false_merge_rate: float  # held-out different pairs at or above noop
    missed_rate: float  # held-out same pairs below novel
    same_scores: list[float]
    different_scores: list[float]


def load_pairs(path: Path) -> list[Pair]:
    """Pairs from JSONL (objects with text_a, text_b, label) or CSV/TSV with that header;
    BadLineError naming the file and line of the first pair that is not one."""
    lines = read_lines(path)
    if path.suffix == ".jsonl":
        parsed = parse_lines(lines, Pair, source=str(path))
    else:
        dialect = "excel-tab" if path.suffix in (".tsv", ".tab") else "excel"
        rows = csv.DictReader(lines, dialect=dialect)
        parsed = records(((rows.line_num, row) for row in rows), Pair, source=str(path))
    pairs = [pair for _, pair in strict(parsed)]
    if not any(p.same for p in pairs) or all(p.same for p in pairs):
        raise InvalidInputError(f"{path}: need both same and different pairs")
    return pairs


def jaccard_scores(pairs: list[Pair]) -> np.ndarray:
    return np.array(
        [jaccard(content_tokens(p.text_a), content_tokens(p.text_b)) for p in pairs],
        dtype=np.float64,
    )


def cosine_scores(pairs: list[Pair], embedder: Embedder) -> np.ndarray:
    """Row-wise cosine of each pair: two batched embedding calls, not one per pair."""
    a = embedder.embed([p.text_a for p in pairs])
    b = embedder.embed([p.text_b for p in pairs])
    return np.einsum("ij,ij->i", a, b).astype(np.float64)


def _noop_threshold(different: np.ndarray, target: float) -> float:
    """Lowest threshold with at most `target` of the different scores at or above it."""
    ordered = np.sort(different)[::-1]
    allowed = int(np.floor(target * len(ordered)))
    if allowed >= len(ordered):
        return float(ordered[-1])
    return float(np.nextafter(ordered[allowed], np.inf))


def _novel_threshold(same: np.ndarray, target: float) -> float:
    """Highest threshold with at most `target` of the same scores below it."""
    ordered = np.sort(same)
    allowed = int(np.floor(target * len(ordered)))
    return float(ordered[min(allowed, len(ordered) - 1)])


def fit(
    measure: str,
    scores: np.ndarray,
    labels: np.ndarray,
    *,
    target: float,
    holdout: float,
    seed: int = 0,
) -> MeasureReport:
    """Thresholds from a calibration split, rates from the held-out split."""
    order = np.random.default_rng(seed).permutation(len(scores))
    cut = max(1, int(len(order) * (1 - holdout)))
    fit_part, test_part = order[:cut], order[cut:] if cut < len(order) else order[:cut]
    fit_same, fit_diff = scores[fit_part][labels[fit_part]], scores[fit_part][~labels[fit_part]]
    if not len(fit_same) or not len(fit_diff):
        raise InvalidInputError("the calibration split needs both same and different pairs")
    # Rounded for the config file outward, so rounding never admits a false merge.
    noop = min(math.ceil(_noop_threshold(fit_diff, target) * 1e4) / 1e4, 1.0)
    novel = min(math.floor(_novel_threshold(fit_same, target) * 1e4) / 1e4, noop)
    test_scores, test_same = scores[test_part], labels[test_part]
    merged = test_scores >= noop
    true_merges = int(np.sum(merged & test_same))
    return MeasureReport(
        measure=measure,
        noop=noop,
        novel=novel,
        precision=true_merges / int(np.sum(merged)) if np.any(merged) else 1.0,
        recall=true_merges / max(1, int(np.sum(test_same))),
        false_merge_rate=float(np.mean(merged[~test_same])) if np.any(~test_same) else 0.0,
        missed_rate=float(np.mean(test_scores[test_same] < novel)) if np.any(test_same) else 0.0,
        same_scores=scores[labels].tolist(),
        different_scores=scores[~labels].tolist(),
    )


def calibrate(
    pairs: list[Pair],
    embedder: Embedder | None,
    *,
    target: float = 0.01,
    holdout: float = 0.3,
    seed: int = 0,
) -> list[MeasureReport]:
    """A report for Jaccard, and for cosine when an embedder is given."""
    labels = np.array([p.same for p in pairs])
    reports = [
        fit("jaccard", jaccard_scores(pairs), labels, target=target, holdout=holdout, seed=seed)
    ]
    if embedder is not None:
        scores = cosine_scores(pairs, embedder)
        reports.append(fit("cosine", scores, labels, target=target, holdout=holdout, seed=seed))
    return reports


def write_thresholds(path: Path, reports: list[MeasureReport]) -> dict[str, float]:
    """Set noop_/novel_ thresholds in the TOML config, keeping everything else as it was.

    tomlkit edits the parsed document in place, so the user's comments, key order, other
    tables and formatting survive (tomllib only reads; rewriting from a dict would drop them).
    The thresholds go into the [memman] table when the file has one, else at the top level.
    """
    import tomlkit
    from tomlkit.exceptions import TOMLKitError

    try:
        document = tomlkit.parse(path.read_text(encoding="utf-8")) if path.exists() else None
    except (OSError, UnicodeDecodeError, TOMLKitError) as error:
        raise ConfigError(f"cannot read config file {path}: {error}") from error
    document = document if document is not None else tomlkit.document()
    table = document.get("memman", document)
    written = {}
    for report in reports:
        written[f"noop_{report.measure}"] = report.noop
        written[f"novel_{report.measure}"] = report.novel
    table.update(written)
    try:
        path.write_text(tomlkit.dumps(document), encoding="utf-8")
    except OSError as error:
        raise ConfigError(f"cannot write config file {path}: {error}") from error
    return written


def histogram_png(path: Path, reports: list[MeasureReport], bins: int = 50) -> None:
    """One chart per measure: the scores of same and different pairs as overlaid histograms,
    with the novel and noop thresholds as labelled lines, so a reader sees where they cut.

    Needs matplotlib (the `plots` extra); ConfigError without it, or when path cannot be
    written (the CLI then prints the thresholds with a note).
    """
    try:
        import matplotlib

        matplotlib.use("Agg")  # files only: never open a window, work without a display
        import matplotlib.pyplot as plt
    except ImportError as error:
        raise ConfigError("the histogram needs matplotlib: pip install 'memman[plots]'") from error
    figure, axes = plt.subplots(len(reports), 1, figsize=(7, 3 * len(reports)), squeeze=False)
    for ax, report in zip(axes[:, 0], reports, strict=True):
        low = min(0.0, *report.same_scores, *report.different_scores)
        edges = np.linspace(low, 1.0, bins + 1)
        ax.hist(report.different_scores, bins=edges, alpha=0.5, color="tab:red", label="different")
        ax.hist(report.same_scores, bins=edges, alpha=0.5, color="tab:green", label="same")
        ax.axvline(report.novel, color="tab:blue", linestyle="--", label=f"novel {report.novel}")
        ax.axvline(report.noop, color="tab:blue", label=f"noop {report.noop}")
        ax.set_title(f"{report.measure}: scores of labelled pairs")
        ax.set_xlabel(f"{report.measure} score")
        ax.set_ylabel("pairs")
        ax.legend()
    figure.tight_layout()
    try:
        figure.savefig(path, format="png")
    except OSError as error:
        raise ConfigError(f"cannot write the histogram to {path}: {error}") from error
    finally:
        plt.close(figure)
