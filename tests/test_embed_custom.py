"""Bring your own embedder: any object with name, dim and embed() drives the semantic tier."""

from __future__ import annotations

import zlib

import numpy as np
import pytest

from memman import ConfigError, Embedder, EmbeddingError, MemoryManager, Op, Tier
from tests.test_pair_rules import assert_lexical_noop

# Words that mean the same share a direction; every other word gets its own.
SYNONYMS = {"shellfish": "seafood", "prawns": "seafood", "loves": "likes", "enjoys": "likes"}


class WordVectors:
    name = "test-word-vectors"
    dim = 64

    def __init__(self) -> None:
        self.calls: list[list[str]] = []
        self.failing = False

    def embed(self, texts: list[str]) -> np.ndarray:
        if self.failing:
            raise EmbeddingError("the test model is down")
        self.calls.append(list(texts))
        rows = np.zeros((len(texts), self.dim), dtype=np.float32)
        for row, text in zip(rows, texts, strict=True):
            for word in text.lower().split():
                row[zlib.crc32(SYNONYMS.get(word, word).encode()) % self.dim] += 1.0
        return rows / np.linalg.norm(rows, axis=1, keepdims=True)


def test_a_custom_embedder_finds_a_paraphrase_that_shares_no_word(tmp_path):
    model = WordVectors()
    with MemoryManager(str(tmp_path / "m.db"), embedder=model) as mm:
        stored = mm.update_memory("User loves shellfish", user_id="u")
        assert isinstance(model, Embedder)
        assert mm.embedder is model and model.calls == [["User loves shellfish"]]
        hits = mm.search("enjoys prawns", user_id="u")
        assert [hit.memory.id for hit in hits] == [stored.memory_id]
        # Its vectors are kept under its own name, so another model never compares with them.
        assert mm.reindex() == 0


def test_a_custom_embedder_that_fails_parks_the_fact(tmp_path):
    model = WordVectors()
    with MemoryManager(str(tmp_path / "m.db"), embedder=model) as mm:
        model.failing = True
        parked = mm.update_memory("User keeps bees", user_id="u")
        assert parked.op is Op.PENDING
        model.failing = False
        assert [r.op for r in mm.retry_pending()] == [Op.ADD]


def test_an_embedder_that_is_neither_a_name_nor_an_embedder_is_refused(tmp_path):
    with pytest.raises(ConfigError, match="embedder must be"):
        MemoryManager(str(tmp_path / "m.db"), embedder=object())


def test_the_embedder_cannot_be_swapped_behind_the_write_paths_back(tmp_path):
    # Assigning a new model after construction would leave the write path on the old one and
    # mix two models' vectors under one name; the manager refuses instead.
    with MemoryManager(str(tmp_path / "m.db")) as mm:
        with pytest.raises(AttributeError):
            mm.embedder = WordVectors()
        with pytest.raises(AttributeError):
            mm.decider = None
        assert mm.embedder is None


def test_a_word_for_word_restatement_is_a_duplicate_whatever_the_cosine(tmp_path):
    # "really" moves the vector (cosine 0.87, under noop_cosine) but is no new word: the
    # lexical tier settles it, as it does without an embedder.
    with MemoryManager(str(tmp_path / "m.db"), embedder=WordVectors()) as mm:
        assert_lexical_noop(mm, "User likes jazz", "User really likes jazz.")
        negated = mm.update_memory("User never likes jazz", user_id="u")
        assert negated.op is not Op.NOOP  # a negation is never a copy


class Apart:
    """Every text its own direction: no cosine relates two different texts."""

    name = "test-apart"
    dim = 64

    def embed(self, texts: list[str]) -> np.ndarray:
        rows = np.zeros((len(texts), self.dim), dtype=np.float32)
        for row, text in zip(rows, texts, strict=True):
            row[zlib.crc32(text.encode()) % self.dim] = 1.0
        return rows


@pytest.mark.parametrize(
    ("stored", "said"),
    [
        ("User's favourite band is Radiohead", "User saw Radiohead live in Paris"),
        ("User drives a blue Ford Fiesta", "The Ford Fiesta failed its MOT"),
    ],
)
def test_an_embedder_never_hides_a_memory_the_words_relate(tmp_path, stored, said):
    """Each signal keeps its own bar: a memory sharing the fact's words is shown to the
    decider (and in the audit scores) even when the embedder finds them unalike, as it would
    be with no embedder (issue 27: an embedder lowered recall below the lexical path)."""
    with MemoryManager(str(tmp_path / "m.db"), embedder=Apart()) as mm:
        old = mm.update_memory(stored, user_id="u")
        new = mm.update_memory(said, user_id="u")
        assert new.tier is not Tier.NOVEL, new.reason
        [event] = [e for e in mm.history(new.memory_id, user_id="u") if e.op == "ADD"]
        assert old.memory_id in event.scores
