"""`memman calibrate` on a small hand-written fixture: sensible thresholds, config, PNG."""

from __future__ import annotations

import json
import sys
import tomllib

import pytest
from typer.testing import CliRunner

from memman.cli import app
from memman.errors import BadLineError, ConfigError, InvalidInputError
from memman.tuning.calibrate import Pair, calibrate, histogram_png, load_pairs, write_thresholds

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


@pytest.mark.parametrize("suffix", [".csv", ".tsv"])
def test_a_pair_that_is_not_utf8_is_a_bad_line_of_a_csv_too(tmp_path, suffix):
    # As of JSON lines: a Latin-1 "café" is refused by its line, never read as "caf\udce9".
    sep = "," if suffix == ".csv" else "\t"
    rows = ["text_a", "text_b", "label"], ["I like caf\xe9", "I like coffee", "same"]
    path = tmp_path / f"p{suffix}"
    path.write_bytes("".join(sep.join(row) + "\n" for row in rows).encode("latin-1"))
    with pytest.raises(BadLineError, match=r":2: text_a: not UTF-8 text \(byte 0xe9"):
        load_pairs(path)


@pytest.mark.parametrize(
    "content",
    ["text_a,text_b,label\na,b,maybe\n", "text_a,text_b,label\na,b,same\n", "x,y\n1,2\n"],
)
def test_bad_pairs_are_refused(tmp_path, content):
    (tmp_path / "p.csv").write_text(content)
    with pytest.raises(InvalidInputError):
        load_pairs(tmp_path / "p.csv")


def test_write_thresholds_keeps_comments_and_other_tables(tmp_path):
    config = tmp_path / "memman.toml"
    config.write_text(
        '# my settings\n[memman]\n# the cheap model\nllm_model = "gpt-4o-mini"\n'
        "noop_jaccard = 0.9  # guessed\n\n[other]\ny = 2\n"
    )
    (report,) = calibrate(load_pairs(write_fixture(tmp_path / "p.jsonl")), None, target=0.0)
    write_thresholds(config, [report])
    text = config.read_text()
    values = tomllib.loads(text)
    assert values["memman"]["llm_model"] == "gpt-4o-mini" and values["other"] == {"y": 2}
    assert values["memman"]["noop_jaccard"] == report.noop
    assert values["memman"]["novel_jaccard"] == report.novel
    for comment in ("# my settings", "# the cheap model", "# guessed"):
        assert comment in text
    config.write_text("[memman\n")
    with pytest.raises(ConfigError):
        write_thresholds(config, [report])
    with pytest.raises(ConfigError, match="cannot write config file"):  # was FileNotFoundError
        write_thresholds(tmp_path / "no-such-folder" / "memman.toml", [report])


def test_cli_writes_the_config_only_with_write(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    pairs = write_fixture(tmp_path / "pairs.jsonl")
    result = CliRunner().invoke(app, ["calibrate", str(pairs), "--target", "0"])
    assert result.exit_code == 0, result.output
    assert "jaccard" in result.output and "precision" in result.output
    assert "add --write" in result.output and not (tmp_path / "memman.toml").exists()
    result = CliRunner().invoke(app, ["calibrate", str(pairs), "--target", "0", "--write"])
    assert result.exit_code == 0, result.output
    settings = tomllib.loads((tmp_path / "memman.toml").read_text())
    assert set(settings) == {"noop_jaccard", "novel_jaccard"}


def test_histogram_is_a_chart_with_axes_labels_and_legend(tmp_path, monkeypatch):
    pytest.importorskip("matplotlib", reason="the plots extra is not installed")
    from matplotlib.figure import Figure

    drawn: list[Figure] = []
    monkeypatch.setattr(Figure, "savefig", lambda self, *a, **k: drawn.append(self))
    (report,) = calibrate(load_pairs(write_fixture(tmp_path / "p.jsonl")), None, target=0.0)
    histogram_png(tmp_path / "chart.png", [report])
    [ax] = drawn[0].axes
    assert (ax.get_xlabel(), ax.get_ylabel()) == ("jaccard score", "pairs")
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    assert legend == ["different", "same", f"novel {report.novel}", f"noop {report.noop}"]
    assert ax.get_title().startswith("jaccard")


def test_histogram_writes_a_png(tmp_path):
    pytest.importorskip("matplotlib", reason="the plots extra is not installed")
    (report,) = calibrate(load_pairs(write_fixture(tmp_path / "p.jsonl")), None, target=0.0)
    histogram_png(tmp_path / "chart.png", [report])
    assert (tmp_path / "chart.png").read_bytes().startswith(b"\x89PNG\r\n\x1a\n")
    with pytest.raises(ConfigError, match="cannot write the histogram"):  # was an OSError
        histogram_png(tmp_path / "no-such-folder" / "chart.png", [report])


def test_without_matplotlib_the_thresholds_still_print(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # as if the plots extra were absent
    pairs = write_fixture(tmp_path / "pairs.jsonl")
    result = CliRunner().invoke(app, ["calibrate", str(pairs), "--target", "0"])
    assert result.exit_code == 0, result.output
    assert "memman[plots]" in result.output and "precision" in result.output
    assert not (tmp_path / "calibration.png").exists()
