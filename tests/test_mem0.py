"""The mem0 facade: mem0's documented usage runs against memman with only the import changed.

`quickstart` and `chat_with_memories` below are mem0's own examples (its quickstart page and
its README's "Basic Usage", mem0ai 2.2.1), word for word but for the import; they run on a
real SQLite file (the autouse fixture puts the working directory in tmp_path, where
`Memory()` opens memman.db). Extraction with an LLM (infer=True) runs against the fake
OpenAI-compatible server.
"""

from __future__ import annotations

import sqlite3

import pytest

from memman import ConfigError, DecisionError, InvalidInputError, MemoryManager, Status
from memman.mem0 import AsyncMemory, Memory
from tests.decisions import decision
from tests.fake_openai import Reply, chat_completion
from tests.test_lifecycle_observe import preferences

MOVIE_CHAT = [
    {"role": "user", "content": "I'm planning to watch a movie tonight. Any recommendations?"},
    {"role": "assistant", "content": "How about thriller movies? They can be quite engaging."},
    {"role": "user", "content": "I'm not a big fan of thriller movies but I love sci-fi movies."},
    {
        "role": "assistant",
        "content": "Got it! I'll avoid thriller recommendations and suggest sci-fi movies in "
        "the future.",
    },
]
ITEM_KEYS = {
    "id",
    "memory",
    "hash",
    "metadata",
    "score",
    "created_at",
    "updated_at",
    "user_id",
    "agent_id",
    "run_id",
}
HISTORY_KEYS = {
    "id",
    "memory_id",
    "old_memory",
    "new_memory",
    "event",
    "created_at",
    "updated_at",
    "is_deleted",
    "actor_id",
    "role",
}


def quickstart():
    """mem0's Python quickstart (docs/open-source/python-quickstart.mdx), call for call; the
    ids its page prints are taken from the results instead."""
    m = Memory()
    messages = [
        {"role": "user", "content": "I'm planning to watch a movie tonight. Any recommendations?"},
        {
            "role": "assistant",
            "content": "How about a thriller movies? They can be quite engaging.",
        },
        {
            "role": "user",
            "content": "I'm not a big fan of thriller movies but I love sci-fi movies.",
        },
        {
            "role": "assistant",
            "content": "Got it! I'll avoid thriller recommendations and suggest sci-fi movies in the future.",  # noqa: E501
        },
    ]
    result = m.add(messages, user_id="alice", metadata={"category": "movie_recommendations"})
    all_memories = m.get_all(user_id="alice")
    memory_id = all_memories["results"][0]["id"]
    specific_memory = m.get(memory_id)
    related_memories = m.search(query="What do you know about me?", user_id="alice")
    related_current = m.search(query="sci-fi movies", filters={"user_id": "alice"}, top_k=3)
    updated = m.update(memory_id=memory_id, data="I love India, it is my favorite country.")
    after_update = m.get(memory_id)
    history = m.history(memory_id=memory_id)
    m.delete(memory_id=memory_id)
    after_delete = m.get_all(user_id="alice")
    m.delete_all(user_id="alice")
    after_delete_all = m.get_all(filters={"user_id": "alice"})
    m.reset()
    return locals()


def test_the_quickstart_runs_unchanged_on_a_sqlite_file(tmp_path):
    run = quickstart()

    assert (tmp_path / "memman.db").exists()
    # Offline, the user's statements are the facts (the assistant's lines are context only);
    # a plan for tonight is short-term (lifecycle/pieces.py), as an LLM's transient facts are,
    # and listed after the long-term memories, marked (tests/test_mem0_short_term.py).
    events = [(r["event"], r["memory"]) for r in run["result"]["results"]]
    assert events == [
        ("ADD", "I'm not a big fan of thriller movies but I love sci-fi movies."),
        ("ADD", "I'm planning to watch a movie tonight. Any recommendations?"),
    ]
    assert all(set(r) >= {"id", "memory", "event", "reason"} for r in run["result"]["results"])
    listed = run["all_memories"]["results"]
    assert [i["memory"] for i in listed] == [text for _, text in events]
    assert all(set(item) == ITEM_KEYS for item in listed)
    assert listed[0]["metadata"] == {"category": "movie_recommendations"}
    assert listed[1]["metadata"]["short_term"] is True
    assert run["specific_memory"] == listed[0]
    # No word of "What do you know about me?" is in a memory: lexical recall finds nothing.
    assert run["related_memories"] == {"results": []}
    hit, *_ = run["related_current"]["results"]
    assert set(hit) == ITEM_KEYS and "sci-fi" in hit["memory"] and 0 < hit["score"] <= 1
    assert len(run["related_current"]["results"]) == 2  # the plan for a movie, too

    # update() went through the write path; the id still answers, with the new text.
    assert run["updated"]["message"] == "Memory updated successfully!"
    assert run["after_update"]["memory"] == "I love India, it is my favorite country."
    history = run["history"]
    assert all(set(entry) >= HISTORY_KEYS for entry in history)
    assert (history[0]["old_memory"], history[0]["new_memory"]) == (None, listed[0]["memory"])
    assert [(h["event"], h["new_memory"]) for h in history[1:]] == [
        ("ADD", "I love India, it is my favorite country."),
        ("DELETE", None),  # the old row, replaced: memman's reason says by which
    ]
    assert history[-1]["reason"].startswith("replaced by update(): now ")
    # delete() of that id deleted the memory holding its text; the plan is still on.
    assert [i["id"] for i in run["after_delete"]["results"]] == [listed[1]["id"]]
    assert run["after_delete_all"] == {"results": []}


def test_a_plan_for_tonight_is_in_short_term_memory_and_in_add_results(tmp_path):
    with Memory(str(tmp_path / "m.db")) as memory:
        added = memory.add(MOVIE_CHAT, user_id="alice")
        assert [r["memory"] for r in added["results"]] == [
            MOVIE_CHAT[2]["content"],
            MOVIE_CHAT[0]["content"],
        ]
        short = memory.manager.short_term(user_id="alice")
        assert [(f.content, f.category) for f in short] == [(MOVIE_CHAT[0]["content"], "plan")]
        assert added["results"][1]["id"] == memory.short_term.item_id(short[0])


def chat_with_memories(memory, reply, message: str, user_id: str = "default_user") -> str:
    """mem0's README chat loop, with the OpenAI call replaced by `reply`."""
    relevant_memories = memory.search(query=message, filters={"user_id": user_id}, top_k=3)
    memories_str = "\n".join(f"- {entry['memory']}" for entry in relevant_memories["results"])
    system_prompt = f"You are a helpful AI. Answer the question based on query and memories.\nUser Memories:\n{memories_str}"  # noqa: E501
    messages = [{"role": "system", "content": system_prompt}, {"role": "user", "content": message}]
    assistant_response = reply(messages)
    messages.append({"role": "assistant", "content": assistant_response})
    memory.add(messages, user_id=user_id)
    return assistant_response


def test_the_readme_chat_loop_remembers_across_turns(tmp_path):
    memory = Memory(str(tmp_path / "chat.db"))
    seen: list[str] = []

    def reply(messages):
        seen.append(messages[0]["content"])
        return "Noted."

    chat_with_memories(memory, reply, "I live in Lisbon and I have a dog named Bruno.")
    chat_with_memories(memory, reply, "Where does my dog Bruno live?")
    # offline, the two first-person facts are stored apart (lifecycle/pieces.py)
    assert "- I have a dog named Bruno." in seen[1] and "- I live in Lisbon" in seen[1]
    # The system prompt and the assistant's answers are never stored as the user's facts.
    stored = [m["memory"] for m in memory.get_all(filters={"user_id": "default_user"})["results"]]
    assert sorted(stored) == ["I have a dog named Bruno.", "I live in Lisbon"]
    memory.close()


def test_infer_false_writes_through_update_memory_and_reports_mem0_events(tmp_path):
    with Memory(str(tmp_path / "m.db")) as m:
        first = m.add("User likes jazz", user_id="bob", infer=False, metadata={"src": "form"})
        again = m.add("user likes  JAZZ.", user_id="bob", infer=False)
        longer = m.add("User likes jazz and blues", user_id="bob", infer=False)
        [added], [same], [updated] = first["results"], again["results"], longer["results"]
        assert (added["event"], same["event"], updated["event"]) == ("ADD", "NONE", "UPDATE")
        assert same["id"] == added["id"] == updated["id"] and same["reason"]
        assert updated["previous_memory"] == "User likes jazz"
        assert updated["memory"] == "User likes jazz and blues"
        assert m.get(added["id"])["metadata"] == {"src": "form"}
        events = [(h["event"], h["old_memory"], h["new_memory"]) for h in m.history(added["id"])]
        assert events == [
            ("ADD", None, "User likes jazz"),
            ("NONE", "User likes jazz", "User likes jazz"),
            ("UPDATE", "User likes jazz", "User likes jazz and blues"),
        ]


def test_scopes_errors_and_unknown_ids_as_mem0_answers_them(tmp_path):
    with Memory(str(tmp_path / "m.db")) as m:
        with pytest.raises(ValueError, match="user_id"):
            m.add("User likes jazz")
        with pytest.raises(ValueError, match="user_id"):
            m.search("jazz", filters={})
        with pytest.raises(ValueError, match="user_id"):
            m.get_all()
        with pytest.raises(ValueError, match="reset"):
            m.delete_all()
        with pytest.raises(ValueError, match="identifier"):
            m.add("User likes jazz", user_id="  ")
        with pytest.raises(ValueError, match="equal values"):
            m.search("jazz", filters={"user_id": "a", "OR": [{"x": 1}]})
        with pytest.raises(ValueError, match="not found"):
            m.delete("no-such-id")
        with pytest.raises(ValueError, match="not found"):
            m.update("no-such-id", text="x")
        assert m.get("no-such-id") is None and m.history("no-such-id") == []

        # Scopes never mix; an agent's own memories work as in mem0. An id is a string, as the
        # core's are: an int was stored as the user "42" (issue 29).
        m.add("User likes jazz", user_id="ann", infer=False)
        with pytest.raises(InvalidInputError, match="user_id: must be a string, not int"):
            m.add("User likes jazz", user_id=42, infer=False)
        assert m.get_all(user_id="42")["results"] == []
        m.add("Answer in French", agent_id="helper", infer=False)
        [own] = m.get_all(filters={"agent_id": "helper"})["results"]
        assert (own["memory"], own["agent_id"]) == ("Answer in French", "helper")
        assert m.search("french", user_id="ann")["results"] == []

        # Metadata equality filters, threshold and top_k.
        m.add("User plays chess", user_id="ann", infer=False, metadata={"topic": "games"})
        hits = m.search("chess jazz", filters={"user_id": "ann", "topic": "games"})["results"]
        assert [h["memory"] for h in hits] == ["User plays chess"]
        wildcard = m.search("chess jazz", filters={"user_id": "ann", "topic": "*"})["results"]
        assert [h["memory"] for h in wildcard] == ["User plays chess"]
        assert len(m.search("chess jazz", user_id="ann", top_k=1)["results"]) == 1
        assert m.search("chess jazz", user_id="ann", threshold=1.0)["results"] == []
        assert [
            i["memory"] for i in m.get_all(filters={"user_id": "ann", "topic": "games"})["results"]
        ] == ["User plays chess"]


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"threshold": "0.5"}, "threshold must be a valid number"),
        ({"threshold": [0.5]}, "threshold must be a valid number"),
        ({"threshold": 1.5}, "Invalid threshold"),
        ({"top_k": "3"}, "Invalid top_k"),
        # Two different users for one search: neither may win silently.
        ({"filters": {"user_id": "bob"}}, "user_id given twice"),
    ],
)
def test_wrong_search_arguments_raise_value_error_as_mem0_does(tmp_path, arguments, message):
    with Memory(str(tmp_path / "m.db")) as m:
        m.add("User likes jazz", user_id="ann", infer=False)
        with pytest.raises(ValueError, match=message):
            m.search("jazz", user_id="ann", **arguments)


@pytest.mark.parametrize("infer", [True, False])
def test_metadata_that_is_not_a_dict_is_refused_even_when_it_would_be_ignored(tmp_path, infer):
    with Memory(str(tmp_path / "m.db")) as m:
        with pytest.raises(ValueError, match="metadata"):
            m.add("I like jazz", user_id="ann", metadata="music", infer=infer)
        assert m.get_all(user_id="ann") == {"results": []}


def test_delete_all_matches_ids_as_mem0_filters_them(tmp_path):
    """mem0's delete_all(user_id=) deletes the user's memories of every agent, and
    delete_all(agent_id=) the agent's of every user; no other memory is touched."""
    with Memory(str(tmp_path / "m.db")) as m:
        m.add("Likes jazz", user_id="ann", infer=False)
        m.add("Answer in French", user_id="ann", agent_id="helper", infer=False)
        m.add("Answer briefly", user_id="bob", agent_id="helper", infer=False)
        m.add("Likes chess", user_id="bob", infer=False)
        m.add("Be polite", agent_id="helper", infer=False)
        m.delete_all(user_id="ann")
        left = {(x.user_id, x.agent_id) for x in m.manager.export()}
        assert left == {("bob", "helper"), ("bob", None), ("agent:helper", "helper")}
        m.delete_all(agent_id="helper")
        assert [x.content for x in m.manager.export()] == ["Likes chess"]


def test_delete_and_reset_are_soft_and_audited(tmp_path):
    path = str(tmp_path / "m.db")
    with Memory(path) as m:
        [a] = m.add("User likes jazz", user_id="ann", infer=False)["results"]
        m.add("User likes tea", user_id="bob", infer=False)
        assert m.delete(a["id"]) == {"message": "Memory deleted successfully!"}
        assert m.get(a["id"]) is None
        assert m.history(a["id"])[-1]["event"] == "DELETE"
        m.reset()
        assert m.get_all(user_id="bob") == {"results": []}
    with MemoryManager(path) as mm:  # recoverable: nothing was erased
        statuses = {x.content: x.status for x in mm.export(include_inactive=True)}
        assert statuses == {"User likes jazz": Status.DELETED, "User likes tea": Status.DELETED}


def llm_config(tmp_path, base_url: str) -> dict:
    """A mem0 config dict, as mem0's docs write one for an OpenAI-compatible server."""
    return {
        "llm": {
            "provider": "openai",
            "config": {"model": "fake-model", "openai_base_url": base_url, "api_key": "test"},
        },
        "history_db_path": str(tmp_path / "history.db"),
    }


def test_infer_extracts_now_and_decides_each_fact_with_the_llm(tmp_path, fake_openai):
    fake_openai.script(
        preferences("User loves sci-fi movies", "User dislikes thriller movies"),
        Reply(body=chat_completion(tool_args=decision("ADD", reason="another genre"))),
        preferences("User loves sci-fi movies and documentaries"),
        Reply(
            body=chat_completion(
                tool_args=decision(
                    "UPDATE",
                    id=1,
                    content="User loves sci-fi movies and documentaries",
                    reason="the new statement adds documentaries",
                )
            )
        ),
    )
    m = Memory.from_config(llm_config(tmp_path, fake_openai.base_url))
    first = m.add(MOVIE_CHAT, user_id="alice")
    assert [(r["event"], r["memory"], r["reason"]) for r in first["results"]] == [
        ("ADD", "User loves sci-fi movies", "no similar memory"),
        ("ADD", "User dislikes thriller movies", "another genre"),
    ]
    second = m.add(
        "Actually I love documentaries too, besides sci-fi.", user_id="alice", run_id="evening"
    )
    [update] = second["results"]
    assert update["event"] == "UPDATE" and update["id"] == first["results"][0]["id"]
    assert update["previous_memory"] == "User loves sci-fi movies"
    assert update["reason"] == "the new statement adds documentaries"
    assert len(fake_openai.requests) == 4  # two extractions, two decisions: no cooldown waited
    assert (tmp_path / "history.db").exists()
    [entry] = [h for h in m.history(update["id"]) if h["event"] == "UPDATE"]
    assert entry["old_memory"] == "User loves sci-fi movies"
    m.close()


def test_a_failed_extraction_raises_and_keeps_the_messages(tmp_path, fake_openai):
    fake_openai.script(Reply(500, {"error": {"message": "boom"}}))
    config = llm_config(tmp_path, fake_openai.base_url)
    config["llm"]["config"]["max_tokens"] = 100  # mem0 keys memman has no use for are ignored
    m = Memory(config)
    with pytest.raises(DecisionError, match="stay buffered in session chat-1"):
        m.add(MOVIE_CHAT, user_id="alice", run_id="chat-1")
    with sqlite3.connect(tmp_path / "history.db") as conn:
        [(waiting,)] = conn.execute(
            "SELECT count(*) FROM message_buffer WHERE extracted_at IS NULL"
        ).fetchall()
    assert waiting == 4
    m.close()


@pytest.mark.parametrize(
    ("config", "message"),
    [
        ({"llm": {"provider": "anthropic", "config": {"model": "x"}}}, "not supported"),
        ({"embedder": {"provider": "gemini", "config": {}}}, "not supported"),
        ({"vector_store": {"provider": "qdrant", "config": {}}}, "own SQLite file"),
        ({"graph_store": {"provider": "neo4j"}}, "graph_store"),
        ({"llm": {"provider": "openai"}, "colour": "blue"}, "unknown mem0 config keys: colour"),
        # mem0's config classes refuse a key they do not know; ignoring it would send the
        # calls to api.openai.com instead of the server the user named.
        (
            {"llm": {"provider": "openai", "config": {"base_url": "http://127.0.0.1:9/v1"}}},
            "llm.config base_url: not supported",
        ),
        ({"llm": {"provider": "openai", "config": {"modle": "gpt-4o"}}}, "llm.config modle"),
        # mem0 would call gpt-5-mini; memman must not quietly run offline instead.
        ({"llm": {"provider": "openai", "config": {"api_key": "sk-x"}}}, "names no model"),
        (
            {"embedder": {"provider": "ollama", "config": {"http_client_proxies": "http://p"}}},
            "embedder.config http_client_proxies",
        ),
    ],
)
def test_config_that_cannot_map_is_a_clear_error(config, message):
    with pytest.raises(ConfigError, match=message):
        Memory.from_config(config)


@pytest.mark.parametrize(
    ("make", "message"),
    [
        pytest.param(lambda: Memory.from_config("x"), "config dict, not str", id="from-config-str"),
        pytest.param(
            lambda: AsyncMemory.from_config("x"), "config dict, not str", id="async-from-config"
        ),
        pytest.param(
            lambda: Memory.from_config(
                {"vector_store": {"provider": "sqlite", "config": {"path": 5}}}
            ),
            "vector_store.config.path must be a file path",
            id="vector-store-path-int",
        ),
        pytest.param(
            lambda: Memory.from_config({"history_db_path": 5}),
            "history_db_path must be a file path",
            id="history-path-int",
        ),
        pytest.param(
            lambda: Memory({"history_db_path": ["m.db"]}),
            "history_db_path must be a file path",
            id="history-path-list",
        ),
    ],
)
def test_what_the_core_refuses_the_facade_refuses_and_makes_no_file(tmp_path, make, message):
    """Issue 29: Memory.from_config("x") and a vector-store path of 5 made files named "x"
    and "5" in the working directory (the tests run in tmp_path)."""
    with pytest.raises(ConfigError, match=message):
        make()
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("ids", [{"user_id": 5}, {"agent_id": 7}, {"run_id": 1.5}])
def test_an_id_that_is_no_string_is_refused_by_the_facade(tmp_path, ids):
    with Memory(str(tmp_path / "m.db")) as m:
        with pytest.raises(InvalidInputError, match="must be a string"):
            m.add("User likes jazz", infer=False, **ids)
        with pytest.raises(InvalidInputError, match="must be a string"):
            m.search("jazz", **ids)
        assert m.manager.export() is not None and list(m.manager.export()) == []


def test_config_maps_to_memman_settings(tmp_path):
    config = {
        "llm": {
            "provider": "ollama",
            "config": {
                "model": "qwen2.5:7b",
                "ollama_base_url": "http://localhost:11434",
                "temperature": 0.1,  # sampling options memman has no use for: ignored
                "max_tokens": 2000,
                "enable_vision": False,  # asks for nothing
            },
        },
        "vector_store": {"provider": "memman", "config": {"path": str(tmp_path / "v.db")}},
        "version": "v1.1",
    }
    with Memory.from_config(config) as m:
        settings = m.manager.settings
        assert (settings.llm_model, settings.llm_base_url) == (
            "qwen2.5:7b",
            "http://localhost:11434/v1",
        )
        assert m.manager.path == str(tmp_path / "v.db")


def test_an_id_keeps_standing_for_its_memory_through_updates(tmp_path):
    with Memory(str(tmp_path / "m.db")) as m:
        [jazz] = m.add("User likes jazz", user_id="ann", infer=False)["results"]
        [tea] = m.add("User drinks green tea", user_id="ann", infer=False)["results"]
        # Extends the memory: an UPDATE in place, same id.
        same = m.update(jazz["id"], text="User likes jazz and blues")
        assert (same["event"], same["id"]) == ("UPDATE", jazz["id"])
        # Unrelated text: stored under a new id; the old id follows it, twice over.
        moved = m.update(jazz["id"], text="User collects vinyl records")
        again = m.update(jazz["id"], text="User plays the cello")
        assert moved["id"] != jazz["id"] and again["id"] not in (jazz["id"], moved["id"])
        assert m.get(jazz["id"])["memory"] == "User plays the cello"
        texts = [i["memory"] for i in m.get_all(user_id="ann")["results"]]
        assert sorted(texts) == ["User drinks green tea", "User plays the cello"]
        # Text another memory already holds: that memory keeps it, nothing is duplicated.
        m.update(jazz["id"], text="User drinks green tea")
        assert m.get(jazz["id"])["id"] == tea["id"]
        assert [i["memory"] for i in m.get_all(user_id="ann")["results"]] == [tea["memory"]]
        m.delete(jazz["id"])
        assert m.get(tea["id"]) is None and m.get_all(user_id="ann") == {"results": []}
        with pytest.raises(ValueError, match="not found"):
            m.delete(jazz["id"])


def test_history_of_an_id_shows_every_text_it_stood_for(tmp_path):
    # The id an app holds moved twice (two update() calls stored under new ids): its history
    # showed its own events and the last memory's, and the middle text was nowhere.
    with Memory(str(tmp_path / "m.db")) as m:
        [jazz] = m.add("User likes jazz", user_id="ann", infer=False)["results"]
        m.update(jazz["id"], text="User collects vinyl records")
        m.update(jazz["id"], text="User plays the cello")
        history = m.history(jazz["id"])
        added = [entry["new_memory"] for entry in history if entry["event"] == "ADD"]
        assert added == ["User likes jazz", "User collects vinyl records", "User plays the cello"]
        assert [entry["id"] for entry in history] == sorted(entry["id"] for entry in history)


def test_infer_false_takes_an_agent_transcript_as_it_is(tmp_path):
    # An agent loop's messages: a tool-call turn has content None and a user turn may be a
    # list of content parts. mem0 skips the first; memman refused the whole add
    # ("every message content must be a string"), though observe (infer=True) takes both.
    transcript = [
        {"role": "system", "content": "You are a helpful assistant."},
        {"role": "user", "content": [{"type": "text", "text": "I moved to Lisbon"}]},
        {"role": "assistant", "content": None, "tool_calls": [{"id": "c1", "type": "function"}]},
        {"role": "tool", "tool_call_id": "c1", "content": "Lisbon: 21 degrees"},
    ]
    with Memory(str(tmp_path / "m.db")) as m:
        results = m.add(transcript, user_id="ann", infer=False)["results"]
        assert [r["memory"] for r in results] == ["I moved to Lisbon", "Lisbon: 21 degrees"]
        with pytest.raises(ValueError, match="content"):
            m.add([{"role": "user", "content": 5}], user_id="ann", infer=False)


def test_an_id_that_is_not_valid_unicode_is_an_unknown_id(tmp_path):
    # get, history, delete and update raised UnicodeEncodeError from the database driver.
    with Memory(str(tmp_path / "m.db")) as m:
        m.add("User likes jazz", user_id="ann", infer=False)
        bad = "ab\ud800cd"
        assert m.get(bad) is None and m.history(bad) == []
        with pytest.raises(ValueError, match="not found"):
            m.delete(bad)
        with pytest.raises(ValueError, match="not found"):
            m.update(bad, data="User likes blues")
        assert [i["memory"] for i in m.get_all(user_id="ann")["results"]] == ["User likes jazz"]


def test_newer_mem0_keywords_are_taken_or_refused_by_name(tmp_path):
    """add(memory_type=, prompt=) and search(rerank=) were TypeErrors: code written for a
    newer mem0 failed on the switch. None (their default) and rerank are taken; a value
    memman cannot honour is an InvalidInputError naming it, nothing written."""
    m = Memory(str(tmp_path / "m.db"))
    added = m.add("I live in Oslo", user_id="u", infer=False, memory_type=None, prompt=None)
    assert [r["event"] for r in added["results"]] == ["ADD"]
    found = m.search("Oslo", user_id="u", rerank=True)["results"]
    assert [r["memory"] for r in found] == ["I live in Oslo"]
    with pytest.raises(InvalidInputError, match=r"add\(memory_type=...\) is mem0's"):
        m.add("Book flights on Fridays", user_id="u", memory_type="procedural_memory")
    with pytest.raises(InvalidInputError, match=r"add\(prompt=...\) is mem0's.*prompts_dir"):
        m.add("I like tea", user_id="u", prompt="Extract facts.")
    assert [r["memory"] for r in m.get_all(user_id="u")["results"]] == ["I live in Oslo"]
