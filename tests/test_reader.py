"""The Reader protocol (memman/language/reader.py): the offline reader implements it, every
question write/ and lifecycle/ ask is one of its members, and another reader installed with
use_reader is the one the write path asks."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from memman import MemoryManager
from memman.language import reader as reading
from memman.language.reader import READER, OfflineReader, Reader, Topic, use_reader

MEMMAN = Path(reading.__file__).parents[1]
_ASKED = re.compile(r"\bREADER\.(\w+)")


def _members() -> set[str]:
    return {name for name in dir(Reader) if not name.startswith("_")}


def test_the_offline_reader_is_a_reader():
    assert isinstance(OfflineReader(), Reader)
    assert _members() <= set(dir(OfflineReader))


@pytest.mark.parametrize("package", ["write", "lifecycle"])
def test_every_question_asked_is_a_member_of_the_protocol(package):
    asked = {
        name
        for path in (MEMMAN / package).glob("*.py")
        for name in _ASKED.findall(path.read_text(encoding="utf-8"))
    }
    assert asked and asked <= _members()


class _EveryFactIsAMood(OfflineReader):
    """A reader that reads every fact as the user's mood (as a model's labels would)."""

    def about(self, text: str) -> Topic | None:
        return Topic("user", "mood", text.split()[-1].casefold())


def test_the_write_path_asks_the_installed_reader(tmp_path):
    old = use_reader(_EveryFactIsAMood())
    try:
        with MemoryManager(str(tmp_path / "m.db")) as mm:
            first = mm.update_memory("Feeling great today", user_id="u")
            assert mm.get(first.memory_id, user_id="u").attribute == "mood"
    finally:
        use_reader(old)
    assert READER.about("I live in Berlin") == Topic("user", "residence", "berlin")


class _FilesWhereaboutsAsResidence(OfflineReader):
    """A reader with its own vocabulary for the labels a model gives."""

    def model_label(self, name: str, value: object) -> str | None:
        if name == "attribute" and value == "whereabouts":
            return "residence"
        return super().model_label(name, value)


def test_the_labels_a_model_gives_are_filed_by_the_installed_reader(tmp_path, fake_openai):
    from tests.decisions import llm_manager
    from tests.fake_openai import Reply, chat_completion

    fact = {"content": "User is based in Lisbon", "category": "profile", "importance": 5}
    fact |= {"durability": "durable", "subject": "me", "attribute": "whereabouts", "op": "ADD"}
    answer = chat_completion(tool_args={"facts": [fact]}, tool_name="DecidedFacts")
    fake_openai.default_reply = Reply(body=answer)
    for installed, filed in ((None, "whereabouts"), (_FilesWhereaboutsAsResidence(), "residence")):
        old = use_reader(installed) if installed is not None else None
        try:
            with llm_manager(str(tmp_path / f"{filed}.db"), fake_openai.base_url) as mm:
                said = [{"role": "user", "content": "I'm based in Lisbon now"}]
                mm.observe(said, user_id="u", session_id="s")
                [written] = mm.flush("s", user_id="u").results
                memory = mm.get(written.memory_id, user_id="u")
                assert (memory.subject, memory.attribute) == ("user", filed)
        finally:
            if old is not None:
                use_reader(old)
