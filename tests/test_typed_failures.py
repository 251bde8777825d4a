"""Typed failures on bad arguments, busy, full, newer, read-only files; reads keep working."""

from __future__ import annotations

import pytest

from memman import MemoryManager, Op
from memman.decide import OfflineDecider
from memman.errors import ConfigError


def test_a_decider_name_is_accepted_and_parks_nothing_by_mistake(tmp_path):
    with MemoryManager(str(tmp_path / "m.db"), decider="offline") as mm:
        assert isinstance(mm.decider, OfflineDecider)
        mm.update_memory("User likes green tea", user_id="u")
        # An ambiguous fact is decided offline, not an AttributeError on a string.
        result = mm.update_memory("User likes green tea with honey", user_id="u")
        assert result.op in {Op.ADD, Op.UPDATE, Op.NOOP}


@pytest.mark.parametrize("decider", ["wizard", 42])
def test_an_unknown_decider_is_refused_at_construction(tmp_path, decider):
    with pytest.raises(ConfigError, match="decider must be"):
        MemoryManager(str(tmp_path / "m.db"), decider=decider)
    assert not (tmp_path / "m.db").exists()
