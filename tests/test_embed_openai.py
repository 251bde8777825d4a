"""The `openai` embedder over real HTTP: the local fake server, and one cassette for the wire.

The fake server (tests/fake_openai.py) embeds each input as a bag of words, not unit length,
and sends the rows in reverse order with their `index`, so ordering and normalisation are
the client's job here. `test_wire_format_of_a_batch` replays a synthetic vcrpy cassette (see
tests/cassettes/README.md).
"""

from __future__ import annotations

import json
import math
import sqlite3
from collections.abc import Callable

import numpy as np
import pytest

from memman import MemoryManager, Op, Tier
from memman.config import load_settings
from memman.errors import ConfigError, EmbeddingError
from memman.semantic.embed import OpenAIEmbedder
from tests.conftest import API_KEY
from tests.fake_openai import Reply, embedding_body, fake_vector

MODEL = "text-embedding-3-small"
BATCH = 256  # OpenAIEmbedder's default batch

EmbedderFactory = Callable[..., MemoryManager]


@pytest.fixture
def openai_embedder(tmp_path) -> EmbedderFactory:
    """A MemoryManager embedding through OpenAI's API (a cassette replays the answers)."""

    def make(**settings) -> MemoryManager:
        return MemoryManager(
            str(tmp_path / "memory.db"),
            embedder="openai",
            embedding_model=MODEL,
            llm_api_key=API_KEY,
            **settings,
        )

    return make


def unit(vector: list[float]) -> np.ndarray:
    array = np.asarray(vector, dtype=np.float32)
    return array / np.linalg.norm(array)


def stored_vectors(path) -> dict[str, np.ndarray]:
    with sqlite3.connect(path) as conn:
        rows = conn.execute(
            "SELECT l.content, v.vector FROM memory_vectors v JOIN long_term l"
            " ON l.pk = v.memory_pk"
        ).fetchall()
    return {content: np.frombuffer(blob, dtype=np.float32) for content, blob in rows}


def embeddings_sent(fake) -> list[list[str]]:
    return [r["json"]["input"] for r in fake.requests if r["path"].endswith("/embeddings")]


def test_batch_of_n_facts_is_ceil_n_over_batch_requests_in_order(tmp_path, fake_openai):
    facts = [f"Fact {i} about topic{i}" for i in range(600)]
    path = tmp_path / "m.db"
    with MemoryManager(str(path), embedder="openai", llm_base_url=fake_openai.base_url) as mm:
        results = mm.update_many(facts, user_id="u", chunk_size=1000)
    assert [r.op for r in results] == [Op.ADD] * 600
    sent = embeddings_sent(fake_openai)
    assert [len(batch) for batch in sent] == [BATCH, BATCH, 600 - 2 * BATCH]
    assert len(sent) == math.ceil(600 / BATCH)
    assert [text for batch in sent for text in batch] == facts
    assert {r["path"] for r in fake_openai.requests} == {"/v1/embeddings"}
    assert {r["json"]["encoding_format"] for r in fake_openai.requests} == {"float"}
    vectors = stored_vectors(path)
    for fact in (facts[0], facts[300], facts[-1]):  # rows came reversed: matched by index
        assert np.allclose(vectors[fact], unit(fake_vector(fact, fake_openai.embedding_dim)))


def test_vectors_are_unit_length_and_the_dim_is_learned(fake_openai):
    fake_openai.embedding_dim = 24
    embedder = OpenAIEmbedder(load_settings(llm_base_url=fake_openai.base_url))
    assert embedder.dim == 0
    matrix = embedder.embed(["Loves shellfish", "Has two cats", "Plays the cello"])
    assert matrix.shape == (3, 24) and matrix.dtype == np.float32
    assert np.allclose(np.linalg.norm(matrix, axis=1), 1.0)
    assert np.allclose(matrix[1], unit(fake_vector("Has two cats", 24)))
    assert embedder.dim == 24
    assert embedder.embed([]).shape == (0, 24)


def test_server_error_parks_the_facts_and_retry_embeds_them(tmp_path, fake_openai):
    path = tmp_path / "m.db"
    fake_openai.embedding_replies.append(Reply(503, {"error": {"message": "model loading"}}))
    with MemoryManager(str(path), embedder="openai", llm_base_url=fake_openai.base_url) as mm:
        results = mm.update_many(["Loves shellfish", "Has two cats"], user_id="u")
        assert [r.op for r in results] == [Op.PENDING, Op.PENDING]
        assert len(fake_openai.requests) == 1  # no client-side retries: the facts wait instead
        (first, _) = mm.pending()
        assert "InternalServerError" in first.error and "model loading" in first.error
        assert stored_vectors(path) == {}
        assert [r.op for r in mm.retry_pending()] == [Op.ADD, Op.ADD]
    assert set(stored_vectors(path)) == {"Loves shellfish", "Has two cats"}


def test_unreachable_server_parks_the_fact(tmp_path):
    with MemoryManager(
        str(tmp_path / "m.db"), embedder="openai", llm_base_url="http://127.0.0.1:9/v1"
    ) as mm:
        result = mm.update_memory("Loves shellfish", user_id="u")
    assert result.op is Op.PENDING and "APIConnectionError" in result.reason


def body(texts, **changes) -> dict:
    answer = embedding_body(texts, model=MODEL, dim=4)
    answer.update(changes)
    return answer


MALFORMED = [
    pytest.param(Reply(body=body(["a"])), "2 texts", id="too-few-rows"),
    pytest.param(
        Reply(body=body(["a", "b"], data=[{"index": 0, "embedding": "AACAPw=="}] * 2)),
        "indexes",
        id="duplicate-index",
    ),
    pytest.param(
        Reply(
            body=body(
                ["a", "b"],
                data=[{"index": 0, "embedding": "AACAPw=="}, {"index": 1, "embedding": "AA=="}],
            )
        ),
        "base64",
        id="base64-rows",
    ),
    pytest.param(
        Reply(
            body=body(
                ["a", "b"],
                data=[{"index": 0, "embedding": [1.0, 2.0]}, {"index": 1, "embedding": [1.0]}],
            )
        ),
        "malformed",
        id="ragged-rows",
    ),
    pytest.param(
        Reply(
            body=body(
                ["a", "b"],
                data=[{"index": 0, "embedding": [0.0, 0.0]}, {"index": 1, "embedding": [1.0, 0]}],
            )
        ),
        "zero vector",
        id="zero-vector",
    ),
    pytest.param(Reply(body={"object": "list"}), "malformed", id="no-data"),
    pytest.param(Reply(body="{not json"), "JSONDecodeError", id="garbage-body"),
]


@pytest.mark.parametrize(("reply", "error_text"), MALFORMED)
def test_malformed_answer_is_an_embedding_error_and_parks_the_fact(
    tmp_path, fake_openai, reply, error_text
):
    fake_openai.embedding_replies.append(reply)
    embedder = OpenAIEmbedder(load_settings(llm_base_url=fake_openai.base_url))
    with pytest.raises(EmbeddingError, match=error_text):
        embedder.embed(["Loves shellfish", "Has two cats"])
    fake_openai.embedding_replies.append(reply)
    with MemoryManager(
        str(tmp_path / "m.db"), embedder="openai", llm_base_url=fake_openai.base_url
    ) as mm:
        results = mm.update_many(["Loves shellfish", "Has two cats"], user_id="u")
        assert [r.op for r in results] == [Op.PENDING, Op.PENDING]
        assert mm.list(user_id="u") == []


def test_a_changed_dimension_is_refused(fake_openai):
    embedder = OpenAIEmbedder(load_settings(llm_base_url=fake_openai.base_url))
    embedder.embed(["Loves shellfish"])
    fake_openai.embedding_dim = 32
    with pytest.raises(EmbeddingError, match="32 dimensions, earlier 16"):
        embedder.embed(["Has two cats"])


def test_no_api_key_works_against_a_keyless_local_server(tmp_path, fake_openai):
    with MemoryManager(
        str(tmp_path / "m.db"), embedder="openai", llm_base_url=fake_openai.base_url
    ) as mm:
        assert mm.settings.llm_api_key is None
        assert mm.update_memory("Loves shellfish", user_id="u").op is Op.ADD
    (request,) = fake_openai.requests
    assert request["headers"].get("authorization") == "Bearer not-needed"  # ignored by it


def test_a_configured_key_is_sent(tmp_path, fake_openai):
    with MemoryManager(
        str(tmp_path / "m.db"),
        embedder="openai",
        llm_base_url=fake_openai.base_url,
        llm_api_key="sk-test",
    ) as mm:
        mm.update_memory("Loves shellfish", user_id="u")
    assert fake_openai.requests[0]["headers"]["authorization"] == "Bearer sk-test"


def test_openai_without_base_url_or_key_is_a_config_error(tmp_path):
    with pytest.raises(ConfigError, match="OPENAI_BASE_URL"):
        MemoryManager(str(tmp_path / "m.db"), embedder="openai")


def test_ollama_style_server(tmp_path, fake_openai):
    """Ollama: base URL http://host:11434/v1/ (slash and all), its model name, no usage."""
    answer = embedding_body(["Loves shellfish"], model="nomic-embed-text", dim=8)
    del answer["usage"]
    fake_openai.embedding_replies.append(Reply(body=answer))
    with MemoryManager(
        str(tmp_path / "m.db"),
        embedder="openai",
        llm_base_url=fake_openai.base_url + "/",
        embedding_model="nomic-embed-text",
    ) as mm:
        result = mm.update_memory("Loves shellfish", user_id="u")
        assert (result.op, mm.embedder.name, mm.embedder.dim) == (Op.ADD, "nomic-embed-text", 8)
    (request,) = fake_openai.requests
    assert request["path"] == "/v1/embeddings"
    assert request["json"]["model"] == "nomic-embed-text"


@pytest.mark.vcr
def test_wire_format_of_a_batch(openai_embedder, vcr):
    facts = ["Loves shellfish", "Has two cats", "Plays the cello"]
    mm = openai_embedder()
    results = mm.update_many(facts, user_id="alice")
    assert [(r.op, r.tier) for r in results] == [(Op.ADD, Tier.NOVEL)] * 3
    (request,) = vcr.requests
    assert (request.method, request.path) == ("POST", "/v1/embeddings")
    assert json.loads(request.body) == {"input": facts, "model": MODEL, "encoding_format": "float"}
    (response,) = vcr.responses
    rows = json.loads(response["body"]["string"])["data"]
    by_index = {row["index"]: row["embedding"] for row in rows}
    vectors = stored_vectors(mm.path)
    for i, fact in enumerate(facts):
        assert np.allclose(vectors[fact], unit(by_index[i]))
        assert len(vectors[fact]) == 1536
    mm.close()
