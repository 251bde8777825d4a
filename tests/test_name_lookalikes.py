"""Offline, a sentence that only looks like a name or an ending never replaces the user's name
(found while moving the reader's phrasings into tables: "call me later" read as the name
"later", "put my name down for the race" as something given up)."""

from __future__ import annotations

import pytest

from memman import MemoryManager, Status

NAME = "My name is Ana"


@pytest.mark.parametrize(
    "said",
    [
        "Call me later, I'm driving.",
        "My friends call me often.",
        "Call me crazy but I like pineapple on pizza.",
        "I put my name down for the race in May.",
        "I put my name down on the list for the allotment.",
    ],
)
def test_a_lookalike_of_a_name_leaves_the_name(tmp_path, said):
    with MemoryManager(str(tmp_path / "m.db")) as mm:
        name = mm.update_memory(NAME, user_id="u").memory_id
        mm.observe([{"role": "user", "content": said}], user_id="u", session_id="s")
        mm.flush("s", user_id="u")
        kept = mm.get(name, user_id="u")
        assert (kept.content, kept.status) == (NAME, Status.ACTIVE)


@pytest.mark.parametrize("said", ["Please call me Annie.", "Everyone calls me Annie these days."])
def test_a_name_said_still_replaces_the_name(tmp_path, said):
    with MemoryManager(str(tmp_path / "m.db")) as mm:
        name = mm.update_memory(NAME, user_id="u").memory_id
        mm.observe([{"role": "user", "content": said}], user_id="u", session_id="s")
        mm.flush("s", user_id="u")
        assert "Annie" in mm.get(name, user_id="u").content  # updated to the name said
