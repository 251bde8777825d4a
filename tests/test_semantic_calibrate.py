"""`memman calibrate` on a small hand-written fixture: sensible thresholds, config, PNG."""

from __future__ import annotations

import json
import tomllib

import pytest
from typer.testing import CliRunner

from memman.calibrate import Pair, calibrate, load_pairs, write_thresholds
from memman.cli import app
from memman.errors import ConfigError, InvalidInputError

SAME = [
    ("Lives in Berlin", "Lives in Berlin now"),
    ("Has two cats", "Has two cats at home"),
    ("Works as a nurse", "Works as a nurse in Leeds"),
    ("Loves hiking in the Alps", "Loves hiking in the Alps in summer"),
    ("Drinks black coffee", "Drinks coffee black"),
    ("Plays the cello", "Plays the cello every day"),
    ("Allergic to peanuts", "Is allergic to peanuts"),
    ("Speaks fluent Spanish", "Speaks Spanish fluently"),
] * 3
DIFFERENT = [
    ("Lives in Berlin", "Works at a bank"),
    ("Has two cats", "Plays the cello"),
    ("Works as a nurse", "Drinks black coffee"),
    ("Loves hiking in the Alps", "Speaks fluent Spanish"),
    ("Drinks black coffee", "Has a red bicycle"),
    ("Plays the cello", "Allergic to peanuts"),
    ("Allergic to peanuts", "Lives near the sea"),
    ("Speaks fluent Spanish", "Owns a small boat"),
] * 3


def write_fixture(path):
    rows = [{"text_a": a, "text_b": b, "label": "same"} for a, b in SAME]
    rows += [{"text_a": a, "text_b": b, "label": "different"} for a, b in DIFFERENT]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_thresholds_separate_the_fixture(tmp_path):
    pairs = load_pairs(write_fixture(tmp_path / "pairs.jsonl"))
    (report,) = calibrate(pairs, None, target=0.0, holdout=0.3)
    assert report.measure == "jaccard"
    # Every different pair shares no word (Jaccard 0) and every same pair shares most.
    assert 0 < report.noop <= 0.5
    assert report.novel <= report.noop
    assert report.false_merge_rate == 0 and report.precision == 1.0 and report.recall == 1.0


def test_csv_and_tsv_load_like_jsonl(tmp_path):
    (tmp_path / "p.csv").write_text("text_a,text_b,label\na b,a b,same\nc,d,contradiction\n")
    (tmp_path / "p.tsv").write_text("text_a\ttext_b\tlabel\na b\ta b\tSame\nc\td\tdifferent\n")
    assert load_pairs(tmp_path / "p.csv") == [
        Pair("a b", "a b", "same"),
        Pair("c", "d", "contradiction"),
    ]
    assert [p.same for p in load_pairs(tmp_path / "p.tsv")] == [True, False]


@pytest.mark.parametrize(
    "content",
    ["text_a,text_b,label\na,b,maybe\n", "text_a,text_b,label\na,b,same\n", "x,y\n1,2\n"],
)
def test_bad_pairs_are_refused(tmp_path, content):
    (tmp_path / "p.csv").write_text(content)
    with pytest.raises(InvalidInputError):
        load_pairs(tmp_path / "p.csv")


def test_write_thresholds_keeps_other_keys(tmp_path):
    config = tmp_path / "memman.toml"
    config.write_text('[memman]\nllm_model = "gpt-4o-mini"\nnoop_jaccard = 0.9\n')
    (report,) = calibrate(load_pairs(write_fixture(tmp_path / "p.jsonl")), None, target=0.0)
    write_thresholds(config, [report])
    values = tomllib.loads(config.read_text())["memman"]
    assert values["llm_model"] == "gpt-4o-mini"
    assert values["noop_jaccard"] == report.noop and values["novel_jaccard"] == report.novel
    config.write_text("[memman]\nx = 1\n[other]\ny = 2\n")
    with pytest.raises(ConfigError):
        write_thresholds(config, [report])


def test_cli_prints_writes_config_and_png(tmp_path):
    pairs = write_fixture(tmp_path / "pairs.jsonl")
    result = CliRunner().invoke(app, ["calibrate", str(pairs), "--target", "0"])
    assert result.exit_code == 0, result.output
    assert "jaccard" in result.output and "precision" in result.output
    settings = tomllib.loads((tmp_path / "memman.toml").read_text())
    assert set(settings) == {"noop_jaccard", "novel_jaccard"}
    assert (tmp_path / "calibration.png").read_bytes().startswith(b"\x89PNG\r\n\x1a\n")
