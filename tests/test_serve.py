"""`memman serve` run for real (uvicorn on 127.0.0.1, a free port) and driven over HTTP with
httpx as mem0's REST clients call mem0's server: each route, the scoping of calls by id, the
API key, the guard against other hosts and origins, the body limit and the JSON errors.
Offline (no LLM): each user message is a fact."""

from __future__ import annotations

import base64
import json
import threading

import httpx
import pytest

pytest.importorskip("starlette", reason="the serve extra is not installed")
pytest.importorskip("uvicorn", reason="the serve extra is not installed")
from starlette.datastructures import Headers

from memman import MemoryManager
from memman.config import load_settings
from memman.errors import (
    ConfigError,
    DecisionError,
    InvalidInputError,
    LeaseLostError,
    NotFoundError,
    StoreBusyError,
    StoreCorruptError,
    StoreFullError,
)
from memman.mem0 import Memory
from memman.serve.app import make_app
from memman.serve.failures import HttpProblem, status_of
from memman.serve.guard import Guard, check_bind, is_loopback, key_matches
from tests.liveserver import running

KEY = "k" * 8 + "-0123456789abcdef"


@pytest.fixture
def db(tmp_path) -> str:
    return str(tmp_path / "served.db")


@pytest.fixture
def client(db):
    with running(make_app(load_settings(db=db))) as url, httpx.Client(base_url=url) as http:
        yield http


def add(client: httpx.Client, text: str, **ids: str) -> dict:
    ids = ids or {"user_id": "alice"}
    answer = client.post("/memories", json={"messages": [{"role": "user", "content": text}], **ids})
    assert answer.status_code == 200, answer.text
    return answer.json()


def only_id(client: httpx.Client, text: str, **ids: str) -> str:
    (result,) = add(client, text, **ids)["results"]
    assert result["event"] == "ADD"
    return result["id"]


ITEM_KEYS = {
    "id", "memory", "hash", "metadata", "score", "created_at", "updated_at", "user_id",
    "agent_id", "run_id",
}  # fmt: skip


# -- mem0's routes, as its clients call them -----------------------------------------------


def test_create_from_messages_then_list(client):
    body = {
        "messages": [
            {"role": "user", "content": "I live in Lisbon"},
            {"role": "assistant", "content": "Noted!"},
        ],
        "user_id": "alice",
        "metadata": {"topic": "home"},
    }
    answer = client.post("/memories", json=body)
    assert answer.status_code == 200
    (result,) = answer.json()["results"]
    assert (result["memory"], result["event"]) == ("I live in Lisbon", "ADD")
    assert result["reason"]
    listed = client.get("/memories", params={"user_id": "alice"}).json()["results"]
    assert [item["memory"] for item in listed] == ["I live in Lisbon"]
    assert set(listed[0]) == ITEM_KEYS
    assert listed[0]["metadata"] == {"topic": "home"}
    assert client.get("/memories", params={"user_id": "bob"}).json() == {"results": []}


def test_add_without_inference_and_with_top_k(client):
    body = {
        "messages": [
            {"role": "user", "content": "Likes tea"},
            {"role": "user", "content": "Has a cat"},
        ],
        "user_id": "alice",
        "infer": False,
    }
    assert [r["event"] for r in client.post("/memories", json=body).json()["results"]] == [
        "ADD",
        "ADD",
    ]
    listed = client.get("/memories", params={"user_id": "alice", "top_k": 1}).json()["results"]
    assert len(listed) == 1


def test_get_update_history_delete_by_id(client):
    memory_id = only_id(client, "I live in Paris")
    scope = {"user_id": "alice"}
    item = client.get(f"/memories/{memory_id}", params=scope).json()
    assert (item["id"], item["memory"], item["user_id"]) == (memory_id, "I live in Paris", "alice")

    updated = client.put(f"/memories/{memory_id}", params=scope, json={"text": "I live in Lyon"})
    assert updated.status_code == 200
    assert updated.json()["message"] == "Memory updated successfully!"
    assert (updated.json()["event"], updated.json()["memory"]) == ("UPDATE", "I live in Lyon")
    assert client.get(f"/memories/{memory_id}", params=scope).json()["memory"] == "I live in Lyon"

    history = client.get(f"/memories/{memory_id}/history", params=scope).json()
    assert [(h["event"], h["old_memory"], h["new_memory"]) for h in history] == [
        ("ADD", None, "I live in Paris"),
        ("UPDATE", "I live in Paris", "I live in Lyon"),
    ]
    assert all(h["reason"] and h["tier"] for h in history)

    deleted = client.delete(f"/memories/{memory_id}", params=scope)
    assert deleted.json() == {"message": "Memory deleted successfully"}
    gone = client.get(f"/memories/{memory_id}", params=scope)
    assert gone.status_code == 404 and "not found" in gone.json()["detail"]
    assert client.delete(f"/memories/{memory_id}", params=scope).status_code == 404
    assert client.put(f"/memories/{memory_id}", params=scope, json={"text": "x"}).status_code == 404
    # The audit trail outlives the delete.
    assert (
        client.get(f"/memories/{memory_id}/history", params=scope).json()[-1]["event"] == "DELETE"
    )


def test_search_in_both_of_mem0s_shapes(client):
    only_id(client, "I drink flat white coffee")
    only_id(client, "My sister lives in Rome")
    current = {"query": "coffee", "filters": {"user_id": "alice"}, "top_k": 1}
    (hit,) = client.post("/search", json=current).json()["results"]
    assert hit["memory"] == "I drink flat white coffee" and hit["score"] > 0
    older = {"query": "Rome", "user_id": "alice"}  # the deprecated top-level id
    assert [h["memory"] for h in client.post("/search", json=older).json()["results"]] == [
        "My sister lives in Rome"
    ]
    assert client.post("/search", json={"query": "coffee", "user_id": "bob"}).json() == {
        "results": []
    }
    empty = client.post("/search", json={"query": " ", "user_id": "alice"})
    assert empty.status_code == 400 and "query" in empty.json()["detail"]


def test_delete_all_of_a_user_then_reset(client):
    only_id(client, "I like jazz")
    only_id(client, "I like tea", user_id="bob")
    answer = client.delete("/memories", params={"user_id": "alice"})
    assert answer.json() == {"message": "All relevant memories deleted"}
    assert client.get("/memories", params={"user_id": "alice"}).json()["results"] == []
    assert len(client.get("/memories", params={"user_id": "bob"}).json()["results"]) == 1
    assert client.delete("/memories").status_code == 400  # no id: mem0's server refuses too
    assert client.post("/reset").json() == {"message": "All memories reset"}
    assert client.get("/memories", params={"user_id": "bob"}).json()["results"] == []


def test_short_term_facts_by_id(client):
    """Offline, a plan for tonight is a short-term fact: listed, and reachable by its id in
    its own scope only."""
    (result,) = add(client, "I'm planning to watch a movie tonight")["results"]
    assert result["id"].startswith("short_term:")
    scope = {"user_id": "alice"}
    assert (
        client.get(f"/memories/{result['id']}", params=scope).json()["memory"] == result["memory"]
    )
    assert client.get(f"/memories/{result['id']}", params={"user_id": "bob"}).status_code == 404
    assert client.delete(f"/memories/{result['id']}", params={"user_id": "bob"}).status_code == 404
    assert client.delete(f"/memories/{result['id']}", params=scope).status_code == 200


def test_configure(client):
    settings = client.get("/configure").json()
    assert settings["db"].endswith("served.db")
    refused = client.post("/configure", json={"llm": {"provider": "openai"}})
    assert refused.status_code == 501 and "restart" in refused.json()["detail"]


# -- scoping ------------------------------------------------------------------------------


def test_another_user_cannot_reach_a_memory_by_id(client):
    memory_id = only_id(client, "My PIN hint is my cat's name")
    for user in ("bob", "alice2"):
        scope = {"user_id": user}
        for answer in (
            client.get(f"/memories/{memory_id}", params=scope),
            client.put(f"/memories/{memory_id}", params=scope, json={"text": "hacked"}),
            client.delete(f"/memories/{memory_id}", params=scope),
            client.get(f"/memories/{memory_id}/history", params=scope),
            client.get(f"/memman/memories/{memory_id}/events", params=scope),
        ):
            assert answer.status_code == 404, answer.text
            assert answer.json() == {"detail": f"no memory with id {memory_id!r}"}
    # An agent's scope is not the user's own, as in the core.
    agent = {"user_id": "alice", "agent_id": "helper"}
    assert client.get(f"/memories/{memory_id}", params=agent).status_code == 404
    # No scope at all: 400, never a global lookup.
    unscoped = client.get(f"/memories/{memory_id}")
    assert unscoped.status_code == 400 and "user_id" in unscoped.json()["detail"]
    owned = client.get(f"/memories/{memory_id}", params={"user_id": "alice"}).json()
    assert owned["memory"] == "My PIN hint is my cat's name"


def test_agent_and_run_scopes(client):
    memory_id = only_id(client, "Prefers short answers", user_id="alice", agent_id="helper")
    scope = {"user_id": "alice", "agent_id": "helper"}
    assert client.get(f"/memories/{memory_id}", params=scope).status_code == 200
    run_only = only_id(client, "Booked a table for two", run_id="r1")
    assert client.get(f"/memories/{run_only}", params={"run_id": "r1"}).status_code == 200
    assert client.get(f"/memories/{run_only}", params={"run_id": "r2"}).status_code == 404


# -- memman's own routes ------------------------------------------------------------------


def test_context_pending_retry_events_export_forget(client):
    memory_id = only_id(client, "I am allergic to peanuts")
    only_id(client, "I live in Oslo")
    block = client.post("/memman/context", json={"query": "what to cook?", "user_id": "alice"})
    assert "allergic to peanuts" in block.json()["context"]
    assert memory_id in block.json()["memory_ids"]
    assert client.get("/memman/pending", params={"user_id": "alice"}).json() == {"results": []}
    assert client.post("/memman/retry", json={"user_id": "alice"}).json() == {"results": []}
    (event,) = client.get(
        f"/memman/memories/{memory_id}/events", params={"user_id": "alice"}
    ).json()["results"]
    assert (event["op"], event["tier"], event["content_after"]) == (
        "ADD",
        "novel",
        "I am allergic to peanuts",
    )
    exported = client.get("/memman/export", params={"user_id": "alice", "events": "true"})
    assert exported.headers["content-type"].startswith("application/x-ndjson")
    lines = [json.loads(line) for line in exported.text.splitlines()]
    assert {line["kind"] for line in lines} >= {"memory", "event"}
    forgotten = client.post("/memman/forget", json={"user_id": "alice"}).json()["forgotten"]
    assert forgotten["memories"] == 2
    assert client.get("/memories", params={"user_id": "alice"}).json()["results"] == []


def test_openapi_document(client):
    document = client.get("/openapi.json").json()
    assert document["openapi"].startswith("3.")
    routes = {(path, method) for path, ops in document["paths"].items() for method in ops}
    assert routes >= {
        ("/memories", "post"), ("/memories", "get"), ("/memories", "delete"),
        ("/memories/{memory_id}", "get"), ("/memories/{memory_id}", "put"),
        ("/memories/{memory_id}", "delete"), ("/memories/{memory_id}/history", "get"),
        ("/search", "post"), ("/reset", "post"), ("/memman/context", "post"),
    }  # fmt: skip
    schemas = document["components"]["schemas"]
    body = document["paths"]["/memories"]["post"]["requestBody"]["content"]["application/json"]
    create = schemas[body["schema"]["$ref"].rsplit("/", 1)[1]]
    assert {"messages", "user_id", "agent_id", "run_id", "metadata"} <= set(create["properties"])
    get_one = document["paths"]["/memories/{memory_id}"]["get"]
    assert {p["name"] for p in get_one["parameters"]} >= {"memory_id", "user_id"}


# -- bad input, limits and errors ---------------------------------------------------------


def test_bad_json_and_bad_shapes_are_400(client):
    for body, says in (
        (b"{not json", "not JSON"),
        (b"[1, 2]", "JSON object"),
        (b'{"user_id": "alice"}', "messages"),
        (b'{"messages": "hi", "user_id": "alice"}', "messages"),
        (b'{"messages": [], "user_id": "alice", "colour": "red"}', "colour"),
        (b'{"messages": [{"role": "user", "content": "x"}]}', "user_id"),
        (
            b'{"messages": [{"role": "user", "content": "x"}], "user_id": "a", "expiration_date": '
            b'"2030-01-01"}',
            "expire",
        ),
    ):
        answer = client.post(
            "/memories", content=body, headers={"content-type": "application/json"}
        )
        assert answer.status_code == 400, body
        assert answer.headers["content-type"] == "application/json"
        assert says in answer.json()["detail"], answer.json()
        assert "Traceback" not in answer.text
    assert client.get("/memories", params={"user_id": "a", "top_k": "many"}).status_code == 400
    twice = client.get("/memories?user_id=a&user_id=b")
    assert twice.status_code == 400 and "twice" in twice.json()["detail"]


def test_unknown_route_and_method_are_json(client):
    missing = client.get("/nowhere")
    assert (missing.status_code, missing.json()) == (404, {"detail": "Not Found"})
    assert client.patch("/memories").status_code == 405


def test_a_body_over_the_limit_is_413(client):
    big = {"messages": [{"role": "user", "content": "x" * 1_100_000}], "user_id": "alice"}
    answer = client.post("/memories", json=big)
    assert answer.status_code == 413 and "1000000 bytes" in answer.json()["detail"]

    def chunks():  # no Content-Length: the limit is counted while reading
        for _ in range(200):
            yield b"x" * 10_000

    streamed = client.post("/memories", content=chunks())
    assert streamed.status_code == 413
    # A length that is no number (HTTP clients will not send one; the check does not trust it).
    guard = Guard(None, api_key=None, loopback=True, max_body_bytes=1024)
    with pytest.raises(HttpProblem) as refused:
        guard.check("POST", "/memories", Headers({"host": "127.0.0.1", "content-length": "-2"}))
    assert refused.value.status == 400
    assert client.get("/memories", params={"user_id": "alice"}).json()["results"] == []


@pytest.mark.parametrize(
    ("error", "status"),
    [
        (NotFoundError("x"), 404),
        (InvalidInputError("x"), 400),
        (StoreBusyError("x"), 503),
        (DecisionError("x"), 503),
        (LeaseLostError("x"), 409),
        (StoreFullError("x"), 507),
        (StoreCorruptError("x", "y"), 500),
        (ConfigError("x"), 500),
    ],
)
def test_each_error_type_has_its_status(error, status):
    assert status_of(error) == status


def test_a_busy_store_is_503_and_a_crash_500_without_traceback(db, monkeypatch):
    manager = MemoryManager(db)

    def busy(**_):
        raise StoreBusyError("the store stayed locked for 60 s")

    def crash(*_, **__):
        raise RuntimeError("secret internals /home/x")

    monkeypatch.setattr(manager, "list", busy)
    monkeypatch.setattr(manager, "search", crash)
    app = make_app(memory=Memory(manager=manager))
    with running(app) as url, httpx.Client(base_url=url) as http:
        answer = http.get("/memories", params={"user_id": "alice"})
        assert answer.status_code == 503 and "locked" in answer.json()["detail"]
        failed = http.post("/search", json={"query": "x", "user_id": "alice"})
        assert failed.status_code == 500
        assert failed.json() == {
            "detail": "RuntimeError: the server could not do this (see its log)"
        }
    manager.close()


# -- the key, the bind, the host and the origin ----------------------------------------------


def test_a_public_bind_needs_a_key(db, monkeypatch):
    for host in ("127.0.0.1", "127.0.0.2", "::1", "localhost"):
        assert is_loopback(host)
        check_bind(host, None)
    for host in ("0.0.0.0", "192.168.1.5", "::", "example.org"):
        assert not is_loopback(host)
        with pytest.raises(ConfigError, match="needs an API key"):
            check_bind(host, None)
        check_bind(host, KEY)
    with pytest.raises(ConfigError, match="needs an API key"):
        make_app(load_settings(db=db, serve_host="0.0.0.0"))
    monkeypatch.setenv("MEMMAN_SERVE_HOST", "0.0.0.0")
    monkeypatch.setenv("MEMMAN_SERVE_API_KEY", KEY)
    settings = load_settings(db=db)
    assert settings.serve_api_key == KEY
    make_app(settings).state.memory.close()
    assert settings.redacted()["serve_api_key"] == "…"
    with pytest.raises(ConfigError, match="serve_api_key"):
        load_settings(serve_api_key="short")


def test_key_matching():
    basic = base64.b64encode(f"anyone:{KEY}".encode()).decode()
    assert key_matches(f"Bearer {KEY}", KEY)
    assert key_matches(f"bearer  {KEY} ", KEY)
    assert key_matches(f"Basic {basic}", KEY)
    for wrong in (None, "", KEY, f"Bearer {KEY}x", "Bearer", f"Token {KEY}", "Basic !!"):
        assert not key_matches(wrong, KEY)


def test_with_a_key_every_request_carries_it(db):
    app = make_app(load_settings(db=db, serve_api_key=KEY))
    with running(app) as url, httpx.Client(base_url=url) as http:
        for headers in ({}, {"authorization": "Bearer wrong-key-0123456789"}):
            refused = http.get("/memories", params={"user_id": "a"}, headers=headers)
            assert refused.status_code == 401
            assert refused.headers["www-authenticate"] == "Bearer"
            assert "API key" in refused.json()["detail"]
        page = http.get("/ui")
        assert page.status_code == 401 and page.headers["www-authenticate"].startswith("Basic")
        keyed = {"authorization": f"Bearer {KEY}"}
        assert http.get("/memories", params={"user_id": "a"}, headers=keyed).status_code == 200
        assert http.get("/openapi.json", headers=keyed).json()["security"] == [{"bearer": []}]
        assert http.get("/ui", auth=("me", KEY)).status_code == 200


def test_other_hosts_and_origins_are_refused(client):
    rebound = client.get("/memories", params={"user_id": "a"}, headers={"host": "evil.example"})
    assert rebound.status_code == 400 and "loopback" in rebound.json()["detail"]
    body = {"messages": [{"role": "user", "content": "I like tea"}], "user_id": "a"}
    foreign = client.post("/memories", json=body, headers={"origin": "http://evil.example"})
    assert foreign.status_code == 403
    own = client.post("/memories", json=body, headers={"origin": str(client.base_url).rstrip("/")})
    assert own.status_code == 200
    assert client.get(
        "/memories", params={"user_id": "a"}, headers={"host": "localhost"}
    ).is_success


def test_the_command_refuses_a_public_bind_without_a_key_and_workers_on_sqlite(
    db, monkeypatch, capsys
):
    from memman.cli import main

    for args, says in (
        (["--host", "0.0.0.0"], "serving on 0.0.0.0 needs an API key"),
        (["--workers", "2"], "several workers need a PostgreSQL store"),
        (["--api-key", "short"], "serve_api_key"),
    ):
        monkeypatch.setattr("sys.argv", ["memman", "serve", "--db", db, *args])
        with pytest.raises(SystemExit) as exit_:
            main()
        assert exit_.value.code == 1
        error = capsys.readouterr().err
        assert error.startswith("Error: ") and says in error and "Traceback" not in error


# -- one worker, many clients ---------------------------------------------------------------


def test_concurrent_clients_lose_no_write(client):
    users, facts = 6, 5

    def write(user: int) -> None:
        with httpx.Client(base_url=client.base_url) as own:
            for n in range(facts):
                add(
                    own,
                    f"Fact number {n} of person {user}: likes item{user}x{n}",
                    user_id=f"u{user}",
                )

    threads = [threading.Thread(target=write, args=(u,)) for u in range(users)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    for user in range(users):
        listed = client.get("/memories", params={"user_id": f"u{user}"}).json()["results"]
        assert len(listed) == facts
