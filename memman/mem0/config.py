"""mem0's config dict translated into MemoryManager settings, for `Memory.from_config`.

What memman cannot reproduce (a graph store, a reranker, custom prompts, a provider that is
not OpenAI-compatible) is refused with a ConfigError rather than ignored.
"""

from __future__ import annotations

import os
from typing import Any

from memman.errors import ConfigError

# OpenAI-compatible providers of mem0's llm/embedder config, and where each keeps its URL.
BASE_URL_KEYS = {
    "openai": ("openai_base_url", None),
    "ollama": ("ollama_base_url", "/v1"),  # mem0 gives Ollama's root; its OpenAI API is /v1
    "vllm": ("vllm_base_url", None),
    "lmstudio": ("lmstudio_base_url", None),
}
LOCAL_EMBEDDING_MODELS = {"all-MiniLM-L6-v2", "sentence-transformers/all-MiniLM-L6-v2"}
# Options of mem0's llm/embedder configs that tune what memman does its own way (sampling,
# vector size, Vertex embedding types): accepted and ignored. Any other key memman does not
# read is refused, as mem0's config classes refuse an unknown one: ignoring `base_url` or a
# proxy would send the calls somewhere the user did not configure.
IGNORED_OPTIONS = {
    "llm": {
        "temperature",
        "max_tokens",
        "top_p",
        "top_k",
        "reasoning_effort",
        "is_reasoning_model",
        "vision_details",
        "lmstudio_response_format",
    },
    "embedder": {
        "embedding_dims",
        "memory_add_embedding_type",
        "memory_update_embedding_type",
        "memory_search_embedding_type",
    },
}
# mem0 config keys that would change behaviour memman cannot reproduce: refused, not ignored.
UNSUPPORTED_CONFIG = (
    "graph_store",
    "reranker",
    "custom_fact_extraction_prompt",
    "custom_update_memory_prompt",
    "custom_instructions",
)


def _provider(section: Any, name: str) -> tuple[str, dict[str, Any]]:
    if not isinstance(section, dict):
        raise ConfigError(f"{name} must be a mapping with provider and config")
    provider = section.get("provider", "openai")
    config = section.get("config") or {}
    if not isinstance(config, dict):
        raise ConfigError(f"{name}.config must be a mapping")
    return provider, config


def _check_options(provider: str, config: dict[str, Any], name: str) -> None:
    """Refuse a key of the section's config that memman neither reads nor may ignore (a key
    set to None or False asks for nothing and passes)."""
    read = {"model", "api_key", BASE_URL_KEYS.get(provider, ("",))[0]}
    unknown = sorted(
        key
        for key, value in config.items()
        if key not in read | IGNORED_OPTIONS[name] and value not in (None, False)
    )
    if unknown:
        raise ConfigError(
            f"{name}.config {', '.join(unknown)}: not supported by memman's mem0 facade for "
            f"provider {provider!r} (it reads {', '.join(sorted(read - {''}))})"
        )


def _base_url(provider: str, config: dict[str, Any], name: str) -> str | None:
    if provider not in BASE_URL_KEYS:
        raise ConfigError(
            f"{name} provider {provider!r} is not supported by memman: use an OpenAI-compatible "
            f"one ({', '.join(BASE_URL_KEYS)}) with its base URL"
        )
    key, suffix = BASE_URL_KEYS[provider]
    url = config.get(key)
    if url and suffix and not url.rstrip("/").endswith(suffix):
        url = url.rstrip("/") + suffix
    return url


def config_dict(value: Any) -> dict[str, Any]:
    """from_config's argument: a mem0 config dict, else ConfigError (a string was taken for a
    path and made a file of that name, issue 29)."""
    if not isinstance(value, dict):
        raise ConfigError(
            f"from_config takes a mem0 config dict, not {type(value).__name__}: "
            "Memory(path) opens a store file"
        )
    return value


def settings_from_config(config: dict[str, Any]) -> dict[str, Any]:
    """MemoryManager keyword arguments for a mem0 config dict (`Memory.from_config`).

    Maps `llm` (an OpenAI-compatible provider: model, api_key, base URL), `embedder`
    (OpenAI-compatible, or huggingface all-MiniLM-L6-v2 -> memman's local model),
    `history_db_path` or `vector_store.config.path` (the SQLite file). `version` is ignored.
    """
    if not isinstance(config, dict):
        raise ConfigError("a mem0 config must be a dict")
    refused = [key for key in UNSUPPORTED_CONFIG if config.get(key)]
    if refused:
        raise ConfigError(f"memman's mem0 facade does not support {', '.join(refused)}")
    unknown = set(config) - {
        "llm",
        "embedder",
        "vector_store",
        "history_db_path",
        "version",
        *UNSUPPORTED_CONFIG,
    }
    if unknown:
        raise ConfigError(f"unknown mem0 config keys: {', '.join(sorted(unknown))}")
    settings: dict[str, Any] = {}
    urls: dict[str, str] = {}
    if "llm" in config:
        provider, llm = _provider(config["llm"], "llm")
        if url := _base_url(provider, llm, "llm"):
            urls["llm"] = settings["llm_base_url"] = url
        _check_options(provider, llm, "llm")
        if llm.get("model"):
            settings["llm_model"] = llm["model"]
        if llm.get("api_key"):
            settings["llm_api_key"] = llm["api_key"]
    if "embedder" in config:
        provider, embedder = _provider(config["embedder"], "embedder")
        _check_options(provider, embedder, "embedder")
        if provider == "huggingface":
            if embedder.get("model", "all-MiniLM-L6-v2") not in LOCAL_EMBEDDING_MODELS:
                raise ConfigError("memman's local embedder is all-MiniLM-L6-v2 only")
            settings["embedder"] = "local"
        else:
            if url := _base_url(provider, embedder, "embedder"):
                if urls.get("llm", url) != url:
                    raise ConfigError("memman uses one base URL for the LLM and the embedder")
                settings["llm_base_url"] = url
            settings["embedder"] = "openai"
            if embedder.get("model"):
                settings["embedding_model"] = embedder["model"]
            if embedder.get("api_key") and "llm_api_key" not in settings:
                settings["llm_api_key"] = embedder["api_key"]
    store = config.get("vector_store")
    if store:
        provider, store_config = _provider(store, "vector_store")
        if provider not in ("memman", "sqlite"):
            raise ConfigError(
                f"vector_store provider {provider!r}: memman keeps memories and vectors in its "
                "own SQLite file; give its path as history_db_path"
            )
        if store_config.get("path") is not None:
            settings["path"] = _path(store_config["path"], "vector_store.config.path")
    if config.get("history_db_path") is not None:
        settings["path"] = _path(config["history_db_path"], "history_db_path")
    return settings


def _path(value: Any, name: str) -> str:
    """A store path from the config: a non-empty string or path. A number was made a file
    named "5" in the working directory (issue 29)."""
    if isinstance(value, os.PathLike):
        value = os.fspath(value)
    if not isinstance(value, str) or not value.strip():
        raise ConfigError(f"{name} must be a file path (a string), not {value!r}")
    return value
