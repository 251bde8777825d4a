"""Synthesise the cassettes of tests/test_llm_decider.py, test_llm_extraction.py,
test_embed_openai.py and test_lifecycle_merge.py without a model.

Runs each test, unchanged, against the local fake OpenAI server with scripted answers while
vcrpy records, then rewrites the recorded address to https://api.openai.com/v1. The request
side of every cassette is therefore exactly what memman sends; the response side is a
hand-written answer in the OpenAI chat.completion format, or the fake server's own
embeddings (bag-of-words vectors of text-embedding-3-small's 1,536 dimensions).

    python tests/cassettes/record_cassettes.py [NAME ...]

To record real answers instead, see README.md in this folder.
"""

from __future__ import annotations

import inspect
import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

import vcr

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))  # run as a script from anywhere: import the tests package

from tests import test_embed_openai as e  # noqa: E402
from tests import test_lifecycle_merge as mg  # noqa: E402
from tests import test_llm_decider as t  # noqa: E402
from tests import test_llm_extraction as x  # noqa: E402
from tests.decisions import decision  # noqa: E402
from tests.fake_openai import FakeOpenAI, Reply, chat_completion  # noqa: E402

CASSETTES = ROOT / "tests" / "cassettes"
OPENAI_BASE = "https://api.openai.com/v1"
MODEL_VERSION = "gpt-4o-mini-2024-07-18"


def as_served(body: dict[str, Any], prompt_tokens: int) -> Reply:
    """A scripted answer with the fields OpenAI's server adds (id, tier, fingerprint): one
    shape for the decisions' and the extractions' recordings."""
    body.update(id=f"chatcmpl-memman{prompt_tokens}", service_tier="default")
    body["system_fingerprint"] = "fp_synthetic"
    return Reply(body=body)


def reply(*, tools: bool = True, prompt_tokens: int = 760, **fields: Any) -> Reply:
    """One OpenAI answer carrying a decision: a tool call (TOOLS mode) or JSON text."""
    arguments = decision(**fields)
    body = (
        chat_completion(tool_args=arguments, model=MODEL_VERSION, prompt_tokens=prompt_tokens)
        if tools
        else chat_completion(
            content=json.dumps(arguments), model=MODEL_VERSION, prompt_tokens=prompt_tokens
        )
    )
    return as_served(body, prompt_tokens)


# cassette name -> (test function, its extra arguments, the scripted answers in order)
RECORDINGS: dict[str, tuple[Any, dict[str, Any], list[Reply]]] = {
    "test_contradiction_updates_to_the_current_truth": (
        t.test_contradiction_updates_to_the_current_truth,
        {},
        [
            reply(
                op="UPDATE",
                id=1,
                content="User uses a sitting desk (switched back from a standing desk)",
                reason="The user switched back, so the standing desk is no longer true.",
            )
        ],
    ),
    "test_refinement_updates": (
        t.test_refinement_updates,
        {},
        [
            reply(
                op="UPDATE",
                id=1,
                content="User likes coffee, especially oat-milk flat whites",
                reason="The candidate makes the coffee preference more specific.",
            )
        ],
    ),
    "test_paraphrase_is_noop": (
        t.test_paraphrase_is_noop,
        {},
        [reply(op="NOOP", id=1, reason="Memory 1 already says the user prefers a flat white.")],
    ),
    "test_retraction_is_a_soft_delete": (
        t.test_retraction_is_a_soft_delete,
        {},
        [reply(op="DELETE", id=1, reason="The user retracted memory 1; nothing is left.")],
    ),
    "test_hallucinated_id_is_reasked_then_applied": (
        t.test_hallucinated_id_is_reasked_then_applied,
        {},
        [
            reply(op="UPDATE", id=9, content="User uses a sitting desk", reason="Switched."),
            reply(
                op="UPDATE",
                id=1,
                content="User uses a sitting desk (switched back from a standing desk)",
                reason="Memory 1 is the desk memory; the user switched back.",
                prompt_tokens=850,
            ),
        ],
    ),
    "test_hallucinated_id_twice_parks_the_fact": (
        t.test_hallucinated_id_twice_parks_the_fact,
        {},
        [
            reply(op="DELETE", id=9, reason="The desk memory is outdated."),
            reply(op="DELETE", id=9, reason="The desk memory is outdated.", prompt_tokens=850),
        ],
    ),
    "test_template_syntax_in_a_fact_reaches_the_model_verbatim": (
        t.test_template_syntax_in_a_fact_reaches_the_model_verbatim,
        {},
        [reply(op="ADD", reason="The exact template text is new information.")],
    ),
    "test_structured_output_modes[json_schema]": (
        t.test_structured_output_modes,
        {"mode": "json_schema"},
        [
            reply(
                tools=False,
                op="UPDATE",
                id=1,
                content="User lives in Lisbon (moved from Berlin)",
                reason="The user moved; Lisbon is the current city.",
            )
        ],
    ),
    "test_structured_output_modes[json]": (
        t.test_structured_output_modes,
        {"mode": "json"},
        [
            reply(
                tools=False,
                op="UPDATE",
                id=1,
                content="User lives in Lisbon (moved from Berlin)",
                reason="The user moved; Lisbon is the current city.",
            )
        ],
    ),
}


def extracted(*facts: tuple[str, str, int, str], prompt_tokens: int = 420) -> Reply:
    """One OpenAI answer carrying ExtractedFacts: (content, category, importance, durability)."""
    arguments = {
        "facts": [
            {"content": c, "category": cat, "importance": imp, "durability": d}
            for c, cat, imp, d in facts
        ]
    }
    body = chat_completion(
        tool_args=arguments,
        tool_name="ExtractedFacts",
        model=MODEL_VERSION,
        prompt_tokens=prompt_tokens,
    )
    return as_served(body, prompt_tokens)


EXTRACTION_RECORDINGS: dict[str, tuple[Any, dict[str, Any], list[Reply]]] = {
    "test_extraction_routes_durable_and_transient_facts": (
        x.test_extraction_routes_durable_and_transient_facts,
        {},
        [
            extracted(
                ("User is at the airport right now", "location", 3, "transient"),
                ("User lives in Porto", "location", 6, "durable"),
                ("User is allergic to peanuts", "safety", 9, "durable"),
            ),
            # The allergy is decided with the profile shown (the home just stored): ADD.
            reply(op="ADD", prompt_tokens=1100),
        ],
    ),
    "test_an_extracted_change_is_decided_against_the_stored_fact": (
        x.test_an_extracted_change_is_decided_against_the_stored_fact,
        {},
        [
            # The topic rule proposes the old home; the decision call replaces it.
            extracted(("User lives in Lisbon now", "location", 7, "durable")),
            reply(op="UPDATE", id=1, content="User lives in Lisbon now", prompt_tokens=1100),
        ],
    ),
}


# The embedding cassettes: the fake server answers /v1/embeddings itself, nothing scripted.
EMBEDDING_RECORDINGS: dict[str, tuple[Any, dict[str, Any], list[Reply]]] = {
    "test_wire_format_of_a_batch": (e.test_wire_format_of_a_batch, {}, []),
}
EMBEDDING_DIM = 1536  # text-embedding-3-small's


def merge_answer(op: str, reason: str, content: str | None = None) -> Reply:
    """One OpenAI answer carrying a MergeDecision tool call (consolidate's merge.j2)."""
    fields = {"op": op, "reason": reason} | ({"content": content} if content else {})
    body = chat_completion(
        tool_args={"decision": fields}, tool_name="MergeDecision", model=MODEL_VERSION,
        prompt_tokens=640,
    )  # fmt: skip
    body.update(id="chatcmpl-memman-merge", service_tier="default")
    body["system_fingerprint"] = "fp_synthetic"
    return Reply(body=body)


MERGE_RECORDINGS: dict[str, tuple[Any, dict[str, Any], list[Reply]]] = {
    "test_llm_merges_an_ambiguous_cluster": (
        mg.test_llm_merges_an_ambiguous_cluster,
        {},
        [merge_answer("MERGE", "Both say the user grows these on the balcony.", mg.MERGED)],
    ),
    "test_distinct_facts_are_kept_separate_and_not_asked_again": (
        mg.test_distinct_facts_are_kept_separate_and_not_asked_again,
        {},
        [merge_answer("KEEP_SEPARATE", "One is about the user, the other about a girlfriend.")],
    ),
    "test_template_syntax_in_a_memory_reaches_the_model_verbatim": (
        mg.test_template_syntax_in_a_memory_reaches_the_model_verbatim,
        {},
        [merge_answer("KEEP_SEPARATE", "The second has a lobby marker the first lacks.")],
    ),
}

# cassette folder (the test module) -> its recordings
MODULES = {
    "test_llm_decider": RECORDINGS,
    "test_llm_extraction": EXTRACTION_RECORDINGS,
    "test_embed_openai": EMBEDDING_RECORDINGS,
    "test_lifecycle_merge": MERGE_RECORDINGS,
}


def _drop_server_headers(response: dict[str, Any]) -> dict[str, Any]:
    """The fake server's Date and Server headers would only make every re-run differ."""
    for header in ("Date", "Server", "date", "server"):
        response["headers"].pop(header, None)
    return response


def record(name: str, fake: FakeOpenAI) -> None:
    module = next(m for m, recordings in MODULES.items() if name in recordings)
    test, arguments, replies = MODULES[module][name]
    path = CASSETTES / module / f"{name}.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.unlink(missing_ok=True)
    fake.script(*replies)
    recorder = vcr.VCR(
        record_mode="all",
        filter_headers=["authorization", "openai-organization"],
        before_record_response=_drop_server_headers,
    )
    with tempfile.TemporaryDirectory() as folder:

        def llm(**settings: Any) -> t.MemoryManager:
            # The replay has no base URL (OpenAI): llm_mode auto means tools there.
            settings.setdefault("llm_mode", "tools")
            return t.MemoryManager(
                str(Path(folder) / "memory.db"),
                llm_model=t.MODEL,
                llm_api_key=t.API_KEY,
                llm_base_url=fake.base_url,
                **settings,
            )

        def openai_embedder(**settings: Any) -> e.MemoryManager:
            return e.MemoryManager(
                str(Path(folder) / "memory.db"),
                embedder="openai",
                embedding_model=e.MODEL,
                llm_api_key=e.API_KEY,
                llm_base_url=fake.base_url,
                **settings,
            )

        factories = {"llm": llm, "openai_embedder": openai_embedder}
        wanted = {p: factories[p] for p in inspect.signature(test).parameters if p in factories}
        with recorder.use_cassette(str(path)) as cassette:
            test(vcr=cassette, **wanted, **arguments)
    if fake.replies:
        raise SystemExit(f"{name}: {len(fake.replies)} scripted answers were not used")
    text = path.read_text(encoding="utf-8")
    host = fake.base_url.removeprefix("http://").removesuffix("/v1")
    path.write_text(
        text.replace(fake.base_url, OPENAI_BASE).replace(host, "api.openai.com"),
        encoding="utf-8",
    )
    print(f"wrote {path.relative_to(ROOT)}")


def main() -> None:
    for variable in list(os.environ):  # the same isolation the tests have
        if variable.startswith(("MEMMAN_", "OPENAI_")):
            del os.environ[variable]
    fake = FakeOpenAI(embedding_dim=EMBEDDING_DIM).start()
    try:
        for name in sys.argv[1:] or [n for recordings in MODULES.values() for n in recordings]:
            record(name, fake)
    finally:
        fake.stop()


if __name__ == "__main__":
    main()
