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
