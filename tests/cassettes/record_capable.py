"""Record tests/test_capable_model.py's cassettes from a capable model's answers.

No model is reachable here, so a helper agent plays the model: it is given only memman's
rendered requests (the messages and the tool's JSON schema; never the case's labels or
memman's code) and writes one answer per request. Two steps:

    python tests/cassettes/record_capable.py requests OUT.jsonl [ANSWERS.jsonl]
        runs every case of the dev routing set against the fake server answering ADD (or
        from ANSWERS where it has the request) and writes each decision request it sent
        that ANSWERS lacks: {"key", "tool", "messages", "schema"}
    python tests/cassettes/record_capable.py cassettes ANSWERS.jsonl [--turn [N]]
        runs every case again with the fake server answering from ANSWERS.jsonl (lines
        {"key", "answer", "source"}) while vcrpy records, one cassette per case, the address
        rewritten to api.openai.com. A case whose request has no answer, or whose answers do
        not give the case's labels (the model read it otherwise), gets no cassette: it is
        listed with the reason. A real answer can change what a later request of the same
        case shows: run `requests` again with the new answers' cases and answer the rest.

With --turn (both steps) the cases are test_capable_model's TURN_SET's, each chat message
said and flushed with llm_turn_calls "one" (the combined call, prompts/extract_and_decide.j2),
and the cassettes (beside the others, named after their test): at most N (20), the first N cases
in the set's order whose answers give their labels.

Refresh both steps whenever prompts/update_memory*.j2, prompts/extract_and_decide.j2 or what a
decision is shown changes.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

import vcr

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from tests import test_capable_model as c  # noqa: E402
from tests.cassettes.record_cassettes import OPENAI_BASE, _drop_server_headers  # noqa: E402
from tests.decisions import add_everything  # noqa: E402
from tests.fake_openai import FakeOpenAI, Reply, chat_completion  # noqa: E402
from tests.test_llm_decider import API_KEY, MODEL  # noqa: E402


def request_key(request: dict) -> str:
    """sha256 of the request's message contents joined by newlines (bench_routing's key)."""
    joined = "\n".join(str(m.get("content") or "") for m in request["messages"])
    return hashlib.sha256(joined.encode()).hexdigest()


def _factory(folder: str, base_url: str):
    def llm(**settings: Any) -> c.MemoryManager:
        return c.MemoryManager(
            str(Path(folder) / "memory.db"),
            llm_model=MODEL,
            llm_api_key=API_KEY,
            llm_base_url=base_url,
            **settings,
        )

    return llm


def _variant(turn: bool) -> tuple[dict, Any, Path, str, Any]:
    """The cases, how one is run, the cassettes' folder, the test's name and the test."""
    if turn:
        test = c.test_a_capable_models_combined_answers_keep_memory_current
        return c.TURN_BY_NAME, c.say_case, c.CASSETTES, c.TURN_TEST, test
    test = c.test_a_capable_models_answers_keep_memory_current
    return c.BY_NAME, c.write_case, c.CASSETTES, c.TEST, test


def requests(out: Path, answered: Path | None = None, *, turn: bool = False) -> None:
    cases, run, *_ = _variant(turn)
    known = _answers(answered) if answered else {}

    def reply(request: dict) -> Reply:
        row = known.get(request_key(request))
        return _reply(request, row) if row else add_everything(request)

    fake = FakeOpenAI(default_reply=reply).start()
    rows = {}
    try:
        for name in cases:
            fake.requests.clear()
            # An extraction answered with no facts yet fails the case; its requests stay.
            with tempfile.TemporaryDirectory() as folder, contextlib.suppress(AssertionError):
                run(_factory(folder, fake.base_url), name)
            for sent in fake.requests:
                request = sent["json"]
                tool = request["tools"][0]["function"]
                if request_key(request) in known:
                    continue
                rows[request_key(request)] = {
                    "key": request_key(request),
                    "tool": tool["name"],
                    "messages": request["messages"],
                    "schema": tool["parameters"],
                }
    finally:
        fake.stop()
    out.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows.values()))
    print(f"{len(rows)} requests written to {out}")


def _answers(path: Path) -> dict[str, dict]:
    rows = (json.loads(line) for line in path.read_text(encoding="utf-8").splitlines())
    return {row["key"]: row for row in rows}


def _reply(request: dict, row: dict) -> Reply:
    """The recorded answer as the tool call of an OpenAI chat.completion."""
    tool = request["tools"][0]["function"]["name"]
    body = chat_completion(tool_args=row["answer"], tool_name=tool, model=MODEL)
    body["system_fingerprint"] = "fp_capable_stand_in"
    return Reply(body=body)


def cassettes(answers_path: Path, *, turn: bool = False, most: int = 20) -> None:
    cases, _, folder_of, test_name, test = _variant(turn)
    answers = _answers(answers_path)
    missing: set[str] = set()

    def reply(request: dict) -> Reply:
        key = request_key(request)
        if key not in answers:
            missing.add(key)
            return Reply(500, {"error": {"message": "no recorded answer"}})
        return _reply(request, answers[key])

    fake = FakeOpenAI(default_reply=reply).start()
    recorder = vcr.VCR(
        record_mode="all",
        filter_headers=["authorization", "openai-organization"],
        before_record_response=_drop_server_headers,
    )
    folder_of.mkdir(parents=True, exist_ok=True)
    for old in folder_of.glob(f"{test_name}[[]*.yaml"):
        old.unlink()
    left_out = {}
    written = 0
    try:
        for name in cases:
            if turn and written >= most:
                break
            path = folder_of / f"{test_name}[{name}].yaml"
            missing.clear()
            with tempfile.TemporaryDirectory() as folder:
                llm = _factory(folder, fake.base_url)
                try:
                    with recorder.use_cassette(str(path)) as cassette:
                        test(llm, cassette, name)
                except AssertionError as failed:
                    why = "no recorded answer" if missing else f"labels not met: {failed}"
                    left_out[name] = why[:200]
                    path.unlink(missing_ok=True)
                    continue
            host = fake.base_url.removeprefix("http://").removesuffix("/v1")
            text = path.read_text(encoding="utf-8")
            path.write_text(
                text.replace(fake.base_url, OPENAI_BASE).replace(host, "api.openai.com"),
                encoding="utf-8",
            )
            written += 1
            print(f"wrote {path.relative_to(ROOT)}")
    finally:
        fake.stop()
    for name, why in left_out.items():
        print(f"left out {name}: {why}")


def main() -> None:
    for variable in list(os.environ):  # the same isolation the tests have
        if variable.startswith(("MEMMAN_", "OPENAI_")):
            del os.environ[variable]
    args = sys.argv[1:]
    turn = "--turn" in args
    if turn:
        at = args.index("--turn")
        most = int(args[at + 1]) if len(args) > at + 1 and args[at + 1].isdigit() else 20
        args = [a for i, a in enumerate(args) if i != at and not (i == at + 1 and a.isdigit())]
    step, path, *answered = args
    if step == "requests":
        requests(Path(path), Path(answered[0]) if answered else None, turn=turn)
    else:
        cassettes(Path(path), turn=turn, most=most if turn else 0)


if __name__ == "__main__":
    main()
