"""Optional embeddings: an `Embedder` protocol and a tiny registry of backends (name -> factory).

`none` is the default and the core never imports torch or onnxruntime: the `local` backend
(semantic/local_model.py) imports them only when it is built (install `memman[local]`), and the
`openai` backend talks to any OpenAI-compatible `/v1/embeddings` (Ollama, vLLM, ...). Every backend
embeds a batch per call, so an ingest of N facts is N / batch requests, never N.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import AbstractContextManager, nullcontext
from typing import Generic, Protocol, TypeVar, runtime_checkable

import numpy as np

from memman.config import Settings
from memman.errors import ConfigError, EmbeddingError, one_line
from memman.semantic.local_model import LOCAL_MODEL, LocalEmbedder

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
    """Turns texts into unit-length float32 vectors, one row per text.

    A backend that cannot embed raises `EmbeddingError` (never anything else): update_memory
    then parks the facts in `pending` instead of losing them.
    """

    name: str  # vectors are stored per (memory, name): models never mix
    dim: int

    def embed(self, texts: list[str]) -> np.ndarray: ...


def unit_rows(matrix: np.ndarray) -> np.ndarray:
    """float32 rows scaled to length 1, so cosine similarity is a dot product."""
    matrix = np.asarray(matrix, dtype=np.float32)
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    return matrix / np.where(norms == 0, 1, norms)


class OpenAIEmbedder:
    """Any OpenAI-compatible /v1/embeddings endpoint (OpenAI, Ollama, vLLM, llama.cpp, ...).

    `batch_size` texts per request, rows put back in input order by their `index`, scaled to
    unit length; the dimension is learned from the first answer. No API key is needed for a
    local server: without one a placeholder is sent, which keyless servers ignore. Requests
    are not retried by the client (like the LLM client): a failure raises EmbeddingError at
    once, and update_memory parks the fact for retry_pending() instead of holding up the chat
    turn through back-offs.
    """

    def __init__(self, settings: Settings, batch_size: int = 256):
        if settings.llm_base_url is None and not settings.llm_api_key:
            raise ConfigError(
                "embedder 'openai' without a base URL would call api.openai.com, which needs "
                "OPENAI_API_KEY; for a keyless local server set OPENAI_BASE_URL (Ollama: "
                "http://localhost:11434/v1), or use embedder 'local'"
            )
        import openai

        self._client = openai.OpenAI(
            base_url=settings.llm_base_url,
            api_key=settings.llm_api_key or "not-needed",  # keyless local servers ignore it
            timeout=settings.llm_timeout_s,
            max_retries=0,
        )
        self.name = settings.embedding_model or OPENAI_MODEL
        self.dim = 0  # known after the first answer: the server decides
        self.batch_size = batch_size

    def embed(self, texts: list[str]) -> np.ndarray:
        import openai

        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        batches = []
        for start in range(0, len(texts), self.batch_size):
            batch = texts[start : start + self.batch_size]
            try:
                # "float" explicitly: the SDK otherwise asks for base64, which some servers
                # refuse (vLLM answered 400, vllm-project/vllm#6174) or ignore.
                response = self._client.embeddings.create(
                    model=self.name, input=batch, encoding_format="float"
                )
            except (openai.OpenAIError, ValueError) as error:  # ValueError: a body not JSON
                raise EmbeddingError(f"embedding request failed: {one_line(error)}") from error
            batches.append(self._rows(response, len(batch)))
        return np.concatenate(batches)

    def _rows(self, response: object, expected: int) -> np.ndarray:
        """The answer's vectors in input order, unit length; EmbeddingError if it is malformed."""
        data = getattr(response, "data", None)
        try:
            items = sorted(data, key=lambda item: item.index)  # type: ignore[arg-type]
            if [item.index for item in items] != list(range(expected)):
                raise ValueError(f"{len(items)} rows for {expected} texts, or indexes out of order")
            if any(isinstance(item.embedding, str | bytes) for item in items):
                raise ValueError("base64 rows although floats were asked for")
            matrix = np.array([item.embedding for item in items], dtype=np.float32)
        except (AttributeError, TypeError, ValueError) as error:
            raise EmbeddingError(f"malformed embeddings answer: {one_line(error)}") from error
        if matrix.ndim != 2 or not np.isfinite(matrix).all():
            raise EmbeddingError("malformed embeddings answer: rows are not finite vectors")
        if not np.linalg.norm(matrix, axis=1).all():
            raise EmbeddingError("malformed embeddings answer: a zero vector")
        if self.dim and matrix.shape[1] != self.dim:
            raise EmbeddingError(
                f"the server answered {matrix.shape[1]} dimensions, earlier {self.dim}: the "
                f"model behind {self.name!r} changed; set a new embedding_model and reindex"
            )
        self.dim = matrix.shape[1]
        return unit_rows(matrix)


T = TypeVar("T")


class Lookahead(Generic[T]):
    """Computes `work` on consecutive batches of `items`, one batch ahead of the consumer.

    update_many writes one chunk while the next one is embedded on a background thread:
    torch and sqlite both release the GIL, so the two overlap on two cores. Embedding
    depends only on the text, so computing it early never changes a decision, wherever
    the consumer's chunks end. At most the batches being read plus one are kept.
    """

    def __init__(self, work: Callable[[Sequence[T]], list], items: Sequence[T], batch: int):
        self._work, self._items, self._batch = work, items, batch
        self._futures: dict[int, Future[list]] = {}
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="memman-embed")
        self._blas: AbstractContextManager = nullcontext()

    def take(self, start: int, stop: int) -> list:
        """The results for items[start:stop], waiting for them; starts the batch after."""
        first, last = start // self._batch, (stop - 1) // self._batch
        for i in range(first, last + 2):
            if i not in self._futures and i * self._batch < len(self._items):
                batch = self._items[i * self._batch : (i + 1) * self._batch]
                self._futures[i] = self._pool.submit(self._work, batch)
        for i in [i for i in self._futures if i < first]:  # the consumer has moved past them
            del self._futures[i]
        rows = [row for i in range(first, last + 1) for row in self._futures[i].result()]
        offset = first * self._batch
        return rows[start - offset : stop - offset]

    def close(self) -> None:
        self._pool.shutdown(wait=True, cancel_futures=True)

    def __enter__(self) -> Lookahead[T]:
        self._blas = _one_blas_thread()  # threadpoolctl applies its limit when made
        self._blas.__enter__()
        return self

    def __exit__(self, *exc_info: object) -> None:
        try:
            self.close()
        finally:
            self._blas.__exit__(None, None, None)


def _one_blas_thread() -> AbstractContextManager:
    """Single-threaded BLAS while the model computes beside the writes (threadpoolctl, which
    the local extra brings; without it, nothing changes).

    The write path's cosine search is one BLAS matrix-vector product per fact, which
    OpenBLAS splits over every core; while the local model keeps those cores busy, its
    threads spin-wait for each other. Full local ingest, taking turns: 288-309 facts/s with
    BLAS threads, 327-333 with one. It applies process-wide for the duration of the batch.
    """
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:
        return nullcontext()
    return threadpool_limits(limits=1, user_api="blas")


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
