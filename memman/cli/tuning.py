"""Commands that measure and tune the deciders: calibrate, eval."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from memman.cli.common import console, errors
from memman.config import load_settings
from memman.errors import ConfigError


def calibrate(
    pairs: Annotated[Path, typer.Argument(help="Labelled pairs: .jsonl, .csv or .tsv.")],
    target: Annotated[float, typer.Option(help="Allowed false-merge rate.")] = 0.01,
    holdout: Annotated[float, typer.Option(help="Share of pairs held out.")] = 0.3,
    config_file: Annotated[
        Path, typer.Option("--config", help="TOML file to write the thresholds to.")
    ] = Path("memman.toml"),
    plot: Annotated[
        Path, typer.Option(help="Histogram chart (PNG) to write; needs the plots extra.")
    ] = Path("calibration.png"),
    write: Annotated[
        bool, typer.Option("--write", help="Write the thresholds to the config (comments kept).")
    ] = False,
) -> None:
    """Pick Jaccard (and cosine) thresholds for a target false-merge rate on labelled pairs."""
    from memman.semantic.embed import make_embedder
    from memman.tuning import calibrate as calibration

    settings = load_settings()
    loaded = calibration.load_pairs(pairs)
    reports = calibration.calibrate(loaded, make_embedder(settings), target=target, holdout=holdout)
    table = Table(title=f"calibration on {len(loaded)} pairs (held out {holdout:.0%})")
    for column in ("measure", "noop", "novel", "precision", "recall", "false merges", "missed"):
        table.add_column(column)
    for r in reports:
        table.add_row(
            r.measure,
            f"{r.noop:.3f}",
            f"{r.novel:.3f}",
            f"{r.precision:.3f}",
            f"{r.recall:.3f}",
            f"{r.false_merge_rate:.3%}",
            f"{r.missed_rate:.3%}",
        )
    console.print(table)
    try:
        calibration.histogram_png(plot, reports)
        console.print(f"histogram written to {plot}")
    except ConfigError as error:  # no matplotlib: the thresholds still stand
        errors.print(f"no histogram: {error}", soft_wrap=True)
    if write:
        written = calibration.write_thresholds(config_file, reports)
        console.print(f"wrote {written} to {config_file}")
    else:
        console.print(f"not written: add --write to set them in {config_file}")


def eval_cases(
    cases: Annotated[Path, typer.Argument(help="Decision cases, one JSON object a line.")],
    prompts: Annotated[
        list[Path] | None,
        typer.Option("--prompts", help="Prompt folder to compare (repeat for side by side)."),
    ] = None,
) -> None:
    """Run labelled decision cases through the configured decider: accuracy per op."""
    from memman.tuning import evaluate

    settings = load_settings()
    loaded = evaluate.load_cases(cases)
    folders = [str(p) for p in prompts] if prompts else [settings.prompts_dir]
    reports = [
        evaluate.evaluate(loaded, settings.model_copy(update={"prompts_dir": f})) for f in folders
    ]
    summary = Table(title=f"{len(loaded)} cases, decider: {settings.llm_model or 'offline'}")
    summary.add_column("expected op")
    for report in reports:
        summary.add_column(report.prompts_dir or "shipped prompts", overflow="fold")
    for op in evaluate.OPS:
        cells = [r.accuracy_by_op().get(op) for r in reports]
        if any(cells):
            summary.add_row(op, *(f"{c[0]}/{c[1]}" if c else "-" for c in cells))
    summary.add_row("all", *(f"{r.correct}/{len(r.outcomes)}" for r in reports))
    summary.add_row(
        "LLM calls / case",
        *(f"{sum(o.llm_calls for o in r.outcomes) / len(loaded):.2f}" for r in reports),
    )
    summary.add_row(
        "tokens / case",
        *(f"{sum(o.tokens for o in r.outcomes) / len(loaded):.0f}" for r in reports),
    )
    summary.add_row("prompt hash", *(", ".join(sorted(r.prompt_hashes)) or "-" for r in reports))
    console.print(summary)
    for report in reports:
        matrix = Table(title=f"confusion ({report.prompts_dir or 'shipped prompts'})")
        matrix.add_column("expected \\ decided")
        for op in evaluate.OPS:
            matrix.add_column(op)
        for expected, row in report.confusion().items():
            matrix.add_row(expected, *(str(row.get(op, 0)) for op in evaluate.OPS))
        console.print(matrix)
