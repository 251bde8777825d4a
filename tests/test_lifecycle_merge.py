"""consolidate()'s LLM merge of ambiguous clusters: cassettes for the wire format, the fake
server for faults, budgets, dry runs and the embedder; offline, nothing ambiguous merges.

The cassettes in tests/cassettes/test_lifecycle_merge/ were synthesised by
tests/cassettes/record_cassettes.py (see the README there): the tests taking `llm` and `vcr`
are run unchanged against the local fake server while vcrpy records.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable

import numpy as np
import pytest

from memman import MemoryManager, Op, Status, Tier
from memman.language.text import content_hash
from memman.storage.store import Scope
from tests.conftest import API_KEY
from tests.decisions import llm_manager
from tests.fake_openai import Reply, chat_completion
from tests.test_cli import memman  # noqa: F401 (the CLI runner fixture)
from tests.test_llm_decider import sent_prompts
from tests.test_semantic_retrieval import FakeEmbedder, fake_embedder  # noqa: F401 (fixture)

MODEL = "gpt-4o-mini"
# Related (Jaccard 5/6) but not the same wording: only an LLM may merge them.
RELATED = [
    "User grows tomatoes basil and peppers on the balcony",
    "User grows tomatoes, basil and peppers on a balcony garden",
]
MERGED = "User grows tomatoes, basil and peppers in a balcony garden"
# Related (Jaccard 4/5) and distinct: about different people.
DISTINCT = ["I live in Salt Lake City.", "My girlfriend lives in Salt Lake City."]
TEMPLATE_SYNTAX = [
    "User's gamer nickname is {{ nick }} in every online game",
    "User's gamer nickname is {{ nick }} in every online game {% lobby %}",
]

LLMFactory = Callable[..., MemoryManager]


@pytest.fixture
def llm(tmp_path) -> LLMFactory:
    def make(**settings) -> MemoryManager:
        return MemoryManager(
            str(tmp_path / "memory.db"),
            llm_model=MODEL,
            llm_api_key=API_KEY,
            **settings,
        )

    return make


def seed(mm: MemoryManager, facts: list[str]) -> list[str]:
    """Store facts as an old import would: no dedup, confidence below the protected level."""
    stamp = mm.clock().isoformat(timespec="milliseconds")

    def write(conn) -> list[str]:
        return [
            mm.store.insert_memory(conn, Scope("u"), content=f, content_hash=content_hash(f),
                                   now=stamp, source=None, metadata={}, confidence=0.9)
            for f in facts
        ]  # fmt: skip

    return mm.store.write(write)


def dump(path: str) -> list[str]:
    with sqlite3.connect(path) as conn:
        return list(conn.iterdump())


def merge_reply(content: str, reason: str = "One fact stated twice.") -> Reply:
    arguments = {"decision": {"op": "MERGE", "content": content, "reason": reason}}
    return Reply(body=chat_completion(tool_args=arguments, tool_name="MergeDecision"))


def keep_reply(reason: str = "Different facts.") -> Reply:
    arguments = {"decision": {"op": "KEEP_SEPARATE", "reason": reason}}
    return Reply(body=chat_completion(tool_args=arguments, tool_name="MergeDecision"))


# -- cassettes: the wire format ---------------------------------------------------------------


@pytest.mark.vcr
def test_llm_merges_an_ambiguous_cluster(llm, vcr):
    mm = llm()
    seed(mm, RELATED)
    report = mm.consolidate()
    [cluster] = report.ambiguous_clusters
    assert (cluster.outcome, cluster.contents) == ("merged", RELATED)
    [change] = [c for c in report.changes if c.action == "merge"]
    kept, [gone_id] = mm.get(change.target, user_id="u"), change.related
    assert kept.content == MERGED and kept.status is Status.ACTIVE
    gone = mm.get(gone_id, user_id="u")
    assert gone.status is Status.SUPERSEDED and gone.metadata["superseded_by"] == kept.id
    event = mm.history(kept.id, user_id="u")[-1]
    assert (event.op, event.tier, event.source) == (Op.UPDATE, Tier.LIFECYCLE, "consolidation")
    assert (event.content_after, event.model, event.prompt_template) == (MERGED, MODEL, "merge.j2")
    assert event.attempts == 1 and event.tokens and event.prompt_hash
    assert event.content_before in RELATED
    assert mm.history(gone_id, user_id="u")[-1].content_after == MERGED
    # The FTS index follows the new text: "in" a garden, one hit.
    assert [h.id for h in mm.search("balcony garden", user_id="u")] == [kept.id]
    (prompt,) = sent_prompts(vcr)
    assert all(f'"{fact}"' in prompt for fact in RELATED)
    assert mm.consolidate().ambiguous_clusters == []  # nothing left to ask about
    mm.restore(gone_id, user_id="u")  # lineage kept: the superseded text comes back


@pytest.mark.vcr
def test_distinct_facts_are_kept_separate_and_not_asked_again(llm, vcr):
    mm = llm()
    ids = seed(mm, DISTINCT)
    before = [m.content for m in mm.list(user_id="u")]
    [cluster] = mm.consolidate().ambiguous_clusters
    assert cluster.outcome == "kept_separate"
    assert [m.content for m in mm.list(user_id="u")] == before
    verdict = mm.history(ids[0], user_id="u")[-1]
    assert (verdict.op, verdict.model, verdict.prompt_template) == (Op.NOOP, MODEL, "merge.j2")
    assert verdict.scores["cluster"] == ids
    # The verdict is remembered: the same cluster is not asked about (nor paid for) again.
    assert mm.consolidate().ambiguous_clusters == []
    (prompt,) = sent_prompts(vcr)
    assert "girlfriend" in prompt


@pytest.mark.vcr
def test_template_syntax_in_a_memory_reaches_the_model_verbatim(llm, vcr):
    mm = llm()
    seed(mm, TEMPLATE_SYNTAX)
    [cluster] = mm.consolidate().ambiguous_clusters
    assert cluster.outcome == "kept_separate"
    (prompt,) = sent_prompts(vcr)
    assert "{{ nick }}" in prompt and "{% lobby %}" in prompt


# -- the fake server: faults, budget, dry run, embedder ----------------------------------------


def manager(tmp_path, fake_openai, **settings) -> MemoryManager:
    settings.setdefault("llm_max_retries", 0)
    settings.setdefault("llm_timeout_s", 0.5)
    return llm_manager(str(tmp_path / "m.db"), fake_openai.base_url, **settings)


FAULTS = [
    pytest.param([Reply(delay_s=1.5, body=chat_completion())], "APITimeoutError", id="timeout"),
    pytest.param([Reply(500, {"error": {"message": "boom"}})], "InternalServerError", id="500"),
    pytest.param([Reply(200, "{not json at all")], "JSONDecodeError", id="garbage"),
    pytest.param([merge_reply("   ")], "empty", id="empty-merge"),
    pytest.param([merge_reply(f"{MERGED} " * 3)], "too long", id="too-long"),
    pytest.param([merge_reply(MERGED.replace("grows", "grows 3"))], "number", id="new-number"),
    pytest.param([merge_reply(f"User never {MERGED[5:]}")], "negation", id="new-negation"),
]


@pytest.mark.parametrize(("replies", "error_text"), FAULTS)
def test_llm_failure_leaves_the_cluster_untouched_and_reported(
    tmp_path, fake_openai, replies, error_text
):
    mm = manager(tmp_path, fake_openai)
    ids = seed(mm, RELATED)
    before = dump(mm.path)
    fake_openai.script(*replies)
    report = mm.consolidate()
    [cluster] = report.ambiguous_clusters
    assert (cluster.outcome, cluster.ids) == ("failed", ids)
    assert error_text in cluster.detail
    assert dump(mm.path) == before  # nothing written, nothing lost
    assert report.changes == []


def test_offline_an_ambiguous_cluster_is_listed_never_merged(tmp_path):
    with MemoryManager(str(tmp_path / "m.db")) as mm:
        assert mm.offline
        ids = seed(mm, RELATED)
        before = dump(mm.path)
        report = mm.consolidate()
        [cluster] = report.ambiguous_clusters
        assert (cluster.outcome, cluster.ids) == ("no_llm", ids)
        assert report.changes == [] and dump(mm.path) == before


# Blocking queries the FTS index for each pair's rarest shared token (ties: alphabetical):
# here "activitie" (our stem; FTS's porter stems "activities" to "act") and "im" (FTS splits
# "I'm" into "i" and "m"). Found only because the index is asked for the words as written.
@pytest.mark.parametrize(
    "pair",
    [
        ["I like outdoor activities.", "I like activities outdoors."],
        ["I'm into jazz and kayaks.", "Kayaks and jazz, I'm into."],
    ],
)
def test_blocking_finds_pairs_whatever_the_index_tokenizer_makes_of_them(tmp_path, pair):
    with MemoryManager(str(tmp_path / "m.db")) as mm:
        ids = seed(mm, pair)
        [cluster] = mm.consolidate().ambiguous_clusters
        assert sorted(cluster.ids) == sorted(ids)


def test_dry_run_spends_nothing_on_the_llm(tmp_path, fake_openai):
    mm = manager(tmp_path, fake_openai)
    seed(mm, RELATED)
    before = dump(mm.path)
    [cluster] = mm.consolidate(dry_run=True).ambiguous_clusters
    assert cluster.outcome == "would_ask_llm"
    assert fake_openai.requests == [] and dump(mm.path) == before


def test_llm_calls_are_capped_by_max_ops(tmp_path, fake_openai):
    mm = manager(tmp_path, fake_openai)
    seed(mm, [*RELATED, *DISTINCT, *TEMPLATE_SYNTAX])
    fake_openai.script(keep_reply(), keep_reply())
    report = mm.consolidate(max_ops=2)
    assert report.truncated and len(fake_openai.requests) == 2
    assert [c.outcome for c in report.ambiguous_clusters] == ["kept_separate"] * 2
    fake_openai.script(keep_reply())
    [third] = mm.consolidate().ambiguous_clusters  # the two verdicts are remembered
    assert third.outcome == "kept_separate" and len(fake_openai.requests) == 3


def test_merged_text_equal_to_a_member_keeps_that_member(tmp_path, fake_openai):
    mm = manager(tmp_path, fake_openai)
    first, second = seed(mm, RELATED)
    fake_openai.script(merge_reply(RELATED[1]))
    [change] = mm.consolidate().changes
    assert (change.target, change.related) == (second, [first])
    assert mm.get(second, user_id="u").content == RELATED[1]
    assert mm.get(first, user_id="u").metadata["superseded_by"] == second
    assert mm.history(second, user_id="u")[-1].op is Op.NOOP  # its text did not change


def test_merge_refreshes_the_representatives_vector(tmp_path, fake_openai, fake_embedder):  # noqa: F811
    mm = manager(tmp_path, fake_openai, embedder="fake")
    [first, _] = seed(mm, RELATED)
    fake_openai.script(merge_reply(MERGED))
    [change] = mm.consolidate().changes
    assert change.target == first
    with sqlite3.connect(mm.path) as conn:
        (blob,) = conn.execute(
            "SELECT v.vector FROM memory_vectors v JOIN long_term l ON l.pk = v.memory_pk"
            " WHERE l.id = ?",
            (first,),
        ).fetchone()
    expected = FakeEmbedder("fake-1").embed([MERGED])[0]
    assert np.array_equal(np.frombuffer(blob, dtype=np.float32), expected)


def test_cli_shows_progress_and_the_ambiguous_clusters(tmp_path, fake_openai, memman, monkeypatch):  # noqa: F811
    db = str(tmp_path / "m.db")
    with MemoryManager(db) as mm:
        seed(mm, RELATED)
    offline = memman("consolidate", "--db", db)
    assert offline.code == 0 and "1 ambiguous clusters left alone" in offline.out
    monkeypatch.setenv("MEMMAN_LLM_MODEL", MODEL)
    monkeypatch.setenv("OPENAI_BASE_URL", fake_openai.base_url)
    dry = memman("consolidate", "--db", db, "--dry-run")
    assert "would ask llm" in dry.out and fake_openai.requests == []
    assert "ambiguous clusters" in dry.err and "1/1" in dry.err  # the progress bar
    fake_openai.script(merge_reply(MERGED))
    real = memman("consolidate", "--db", db)
    assert real.code == 0 and "merged by the LLM" in real.out and MERGED in real.out
