"""Offline observe: questions, requests and chatter to the assistant are skipped, with why."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from memman import MemoryManager
from memman.lifecycle.observe import Skip
from memman.lifecycle.pieces import pieces

LABELLED = Path(__file__).resolve().parents[1] / "evals" / "user_messages.jsonl"

NOT_FACTS = [
    ("Can you write me a haiku about autumn?", "request to the assistant"),
    ("What's 17 * 23?", "question to the assistant"),
    ("Please summarise this article", "request to the assistant"),
    ("How do I fix a flat tyre?", "question to the assistant"),
    ("Tell me a joke", "request to the assistant"),
    ("Could you translate 'hello' to French?", "request to the assistant"),
    ("Write a poem about my cat", "request to the assistant"),  # the cat is the topic
    ("What do you know about me?", "question to the assistant"),
    ("what's the capital of australia", "question to the assistant"),  # no "?" typed
    ("Hi! Can you recommend a podcast?", "request to the assistant"),
    ("I have a question", "chatter"),
    ("ok thanks!", "chatter"),
]
# Kept whole and verbatim: a question tacked on, an indirect question, a request that
# states something about the user in passing, plain statements.
STATEMENTS = [
    "I moved to Munich last month, any tips?",
    "I wonder if I should quit my job",
    "I'm allergic to peanuts.",
    "My name is Ana.",
    "How do I tell my boss I'm quitting?",
    "Do you think I should take the job in Berlin? I'd have to leave my family.",
    "Remember that I'm lactose intolerant.",
    "Can you recommend a restaurant? I'm gluten free.",
]


def test_questions_and_requests_are_not_stored_and_say_why(tmp_path, clock):
    db = str(tmp_path / "m.db")
    chat = [{"role": "user", "content": text} for text, _ in NOT_FACTS]
    chat += [{"role": "user", "content": text} for text in STATEMENTS]
    with MemoryManager(db, clock=clock) as mm:
        mm.observe(chat, user_id="u", session_id="s")
        done = mm.flush("s", user_id="u")
        assert done.offline and done.extracted_messages == len(chat)
        assert [r.content for r in done.results] == STATEMENTS
        assert sorted(m.content for m in mm.list(user_id="u")) == sorted(STATEMENTS)
        assert done.skips == [Skip(text=text, why=why) for text, why in NOT_FACTS]
        assert done.skipped == [text for text, _ in NOT_FACTS]  # as before: the texts
    with sqlite3.connect(db) as conn:  # skipped words stay with the conversation
        assert conn.execute("SELECT count(*) FROM message_buffer").fetchone() == (len(chat),)


def test_no_labelled_statement_is_lost(tmp_path, clock):
    """evals/user_messages.jsonl: every statement is stored, most non-facts are skipped."""
    cases = [json.loads(line) for line in LABELLED.read_text(encoding="utf-8").splitlines()]
    chat = [{"role": "user", "content": c["text"]} for c in cases]
    with MemoryManager(str(tmp_path / "m.db"), clock=clock) as mm:
        mm.observe(chat, user_id="u", session_id="s")
        done = mm.flush("s", user_id="u")
        # a plan for now ("I have a meeting ... tomorrow") is in short-term memory
        stored = {r.content for r in done.results} | {f.content for f in mm.short_term(user_id="u")}
    statements = {c["text"] for c in cases if c["label"] == "statement"}
    others = {c["text"] for c in cases if c["label"] != "statement"}
    # whole, or cut into the clauses that each state a fact of their own (lifecycle/pieces.py:
    # "I'm 34 and I work in marketing." is an age and a job since session 11)
    assert {s for s in statements if s not in stored and not set(pieces(s)) <= stored} == set()
    assert len(others - stored) >= 0.95 * len(others)
    assert {s.text for s in done.skips} == others - stored
