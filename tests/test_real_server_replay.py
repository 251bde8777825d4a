"""The recorded real-server exchanges (tests/cassettes/real_server/) replayed, no server.

Recorded from llama-server with SmolLM2-135M by `MEMMAN_RECORD_REAL=1 pytest
tests/test_real_server.py` (tests/cassettes/README.md): real response bytes, so this keeps
the parsing of a real local server's answers (json_schema mode, usage, finish reasons)
tested on machines without the server.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import vcr

from tests import test_real_server as real

CASSETTES = Path(__file__).parent / "cassettes" / "real_server"


def replaying(name: str):
    path = CASSETTES / f"{name}.yaml"
    if not path.exists():
        pytest.fail(f"{path} is missing: record it (tests/cassettes/README.md)")
    return vcr.VCR(record_mode="none").use_cassette(str(path))


def test_recorded_decisions_replay(tmp_path):
    with replaying("decisions") as cassette, real.manager(tmp_path / "m.db", real.REPLAY_URL) as mm:
        real.check_decisions(mm, real.decide(mm))
        real.bounded(cassette)
        assert cassette.all_played


def test_recorded_extraction_replays(tmp_path):
    with (
        replaying("extraction") as cassette,
        real.manager(tmp_path / "m.db", real.REPLAY_URL, llm_turn_calls="two") as mm,
    ):
        real.check_extraction(mm, real.extract(mm))
        real.bounded(cassette)
        assert cassette.all_played


def test_recorded_extraction_and_decisions_in_one_call_replay(tmp_path):
    with (
        replaying("turn") as cassette,
        real.manager(tmp_path / "m.db", real.REPLAY_URL) as mm,
    ):
        real.check_turn(mm, real.extract_and_decide(mm))
        real.bounded(cassette)
        assert cassette.all_played
