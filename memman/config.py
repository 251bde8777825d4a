"""Effective configuration: defaults, then a TOML file, then environment, then arguments.

The TOML file is `$MEMMAN_CONFIG` if set, else `memman.toml` in the working directory if it
exists. Keys are the field names below (a `[memman]` table or top level). Each setting is also
the variable MEMMAN_<SETTING> (lists and tables as JSON; empty means unset), and
OTHER_VARIABLES names those that predate that rule.
"""

from __future__ import annotations

import difflib
import logging
import os
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Any, Literal
from urllib.parse import urlparse, urlsplit, urlunsplit

from pydantic import Field, ValidationError, field_validator
from pydantic_settings import (
    BaseSettings,
    InitSettingsSource,
    SettingsConfigDict,
    SettingsError,
    TomlConfigSettingsSource,
)

from memman.errors import ConfigError, validation_problems
from memman.language.attributes import SINGLE_VALUED, check_label

DEFAULT_DB = "memman.db"
# Confidence of a memory written by update_memory. Below protected_confidence on purpose: at
# 1.0 every automatic fact would be protected and consolidation could never merge or decay it.
DEFAULT_CONFIDENCE = 0.8
# The longest time span a setting may name. Spans become timedeltas added to now, and past
# about 8,000 years (or at infinity) Python's datetime overflows: an infinite lease or a TTL
# of 1e12 hours was accepted, then every flush or short-term fact raised an untyped
# OverflowError. A century outlives any store.
CENTURY_DAYS = 36525.0
CENTURY_HOURS = CENTURY_DAYS * 24
CENTURY_S = CENTURY_HOURS * 3600

log = logging.getLogger(__name__)


class Settings(BaseSettings):
    model_config = SettingsConfigDict(
        extra="forbid",
        frozen=True,
        env_prefix="MEMMAN_",
        env_ignore_empty=True,
        allow_inf_nan=False,  # "inf" MB or seconds became an int conversion error at first use
    )

    db: str = DEFAULT_DB

    # The LLM decider. No model configured means the offline (deterministic) decider.
    llm_model: str | None = None
    llm_base_url: str | None = None
    llm_api_key: str | None = None
    # structured-output mode: "tools" for OpenAI-style function calling, "json_schema" for servers
    # with response_format json_schema (vLLM, llama.cpp, Ollama), "json" / "md_json" for
    # models that only manage to write JSON in text. "auto": tools for OpenAI's own API (no
    # base URL, or api.openai.com), json_schema for any other server, and one fallback if the
    # server refuses that mode (memman/llm/client.py); an explicit mode is used as set.
    llm_mode: str = "auto"
    # The structured-output engine: "instructor" (the memman[instructor] extra), "builtin"
    # (memman/llm/structured.py, openai only) or "auto": instructor when it imports. Same modes,
    # re-asks, attempts and tokens either way; builtin lets a newer openai stay installed.
    llm_engine: str = "auto"
    llm_max_retries: int = Field(default=2, ge=0, le=10)  # re-asks after invalid output
    llm_timeout_s: float = Field(default=30.0, gt=0, le=CENTURY_S)
    # max_tokens for the fixed part of every answer (op, id, reason); each call adds room for
    # the text it may restate (an UPDATE or MERGE text) or extract (extract_max_facts facts).
    # Without it a local server generates until the timeout when the grammar does not close.
    llm_max_tokens: int = Field(default=256, ge=16)
    extract_max_facts: int = Field(default=20, ge=1)  # maxItems of one extraction answer
    # A failed extraction batch waits extract_retry_backoff_s, doubling with each failure
    # (at most an hour), and after extract_max_tries failures is split in halves; a single
    # message that still fails is reported (stats) and retried only at the slowest pace.
    extract_max_tries: int = Field(default=3, ge=1)
    extract_retry_backoff_s: float = Field(default=60.0, ge=0, le=CENTURY_S)
    decider: str = "auto"  # auto | offline | llm
    # update_many and extraction decide up to this many independent ambiguous facts in one
    # LLM call (prompts/update_memory_batch.j2), each checked on its own.
    llm_batch_size: int = Field(default=10, ge=1, le=50)
    # LLM calls per extraction batch (observe + flush, the mem0 facade's add): "one" asks for
    # the facts and their decisions together, shown the memories the messages touch
    # (prompts/extract_and_decide.j2); "two" extracts, then decides as update_many does. A
    # model that cannot answer the combined schema falls back to "two" for that batch.
    llm_turn_calls: Literal["one", "two"] = "one"
    # With "one": a fact whose own route finds a memory the combined call never listed (the
    # call is shown what the messages touch; the fact, worded by the model, may touch another:
    # "Down to about ten layers" / "User keeps about 20 laying hens") is decided again on its
    # own, shown its own memories, as "two" decides it: one more call on such turns. False:
    # strictly one call a batch.
    llm_turn_recheck: bool = True

    # Routing (docs/concepts.md, "How decisions are routed": the data behind these defaults).
    top_k: int = Field(default=8, ge=1, le=100)
    # With an LLM: how many memories one decision is shown at most (memman/write/shown.py):
    # those of the fact's topic, the top_k by words and the top_k by meaning, then the user's
    # profile (their newest memory of each single-valued attribute, and those no reader could
    # label), in that order. 32: on the routing dev sets 24 -> 32 -> 40 showed the replaced
    # memory 0.83 -> 0.86 -> 0.87 (no embedder) for 1,160 -> 1,230 -> 1,280 prompt tokens a
    # fact (benchmarks/RESULTS.md, "Routing (issue 27)").
    decision_memories: int = Field(default=32, ge=1, le=200)
    noop_jaccard: float = Field(default=0.8, gt=0, le=1)
    novel_jaccard: float = Field(default=0.1, ge=0, le=1)
    # Attributes that hold one current value (memman/language/attributes.py): a fact stating a
    # different value replaces the memory, with no LLM call. Others (likes, pets ...) hold several.
    single_valued_attributes: list[str] = Field(default_factory=lambda: sorted(SINGLE_VALUED))

    # Embeddings (optional): none | local | openai. The cosine thresholds default per model
    # (memman/semantic/embed.py COSINE_THRESHOLDS, measured with `memman calibrate`).
    embedder: str = "none"
    embedding_model: str | None = None
    noop_cosine: float | None = Field(default=None, gt=0, le=1)
    novel_cosine: float | None = Field(default=None, ge=-1, le=1)
    # auto: pgvector where the PostgreSQL database has it installed (HNSW on the server,
    # approximate), else numpy | numpy (exact, cached matrix, the fast default) | sqlite-vec
    # (exact SQL scan, nothing cached; the vec extra) | pgvector (memman/semantic/vectors.py).
    vector_search: str = "auto"
    # numpy keeps each searched scope's matrix in memory; least recently searched scopes are
    # dropped beyond this many MB (512: about 350k 384-dim memories).
    vector_cache_mb: float = Field(default=512.0, gt=0)

    # Input limits: a fact is a sentence or a short paragraph, not a document.
    max_fact_chars: int = Field(default=4000, ge=1)
    max_metadata_bytes: int = Field(default=16384, ge=2)
    max_metadata_depth: int = Field(default=8, ge=1)

    # Recall ranking: score = relevance x w_rel + recency x w_rec + importance/10 x w_imp.
    # Relevance dominates (a recent but unrelated memory should not outrank the answer);
    # recency halves every recall_half_life_days since the memory was last written or
    # recalled; importance (1-10) breaks ties between equally relevant facts.
    recall_weight_relevance: float = Field(default=0.6, ge=0)
    recall_weight_recency: float = Field(default=0.25, ge=0)
    recall_weight_importance: float = Field(default=0.15, ge=0)
    recall_half_life_days: float = Field(default=30.0, gt=0, le=CENTURY_DAYS)
    # With an embedder, a memory found by cosine alone (no shared word) is recalled only at or
    # above this cosine: hybrid retrieval always returns the k nearest vectors, related or not.
    recall_min_cosine: float = Field(default=0.3, ge=-1, le=1)
    # search() ranks a lexical pool this many times larger than the limit asked for.
    recall_pool_factor: int = Field(default=4, ge=1, le=50)

    # context() starts with a core block (safety and constraint facts, pinned memories, the
    # user's profile) shown whatever the query, in at most this share of max_tokens; the rest
    # (and whatever the core leaves unused) goes to the query's hits.
    context_core_share: float = Field(default=0.3, ge=0, le=1)
    # Facts of these attributes join the core as safety facts whoever they are about ("my son
    # is allergic to bee stings"), with no category: the topic reader names them offline.
    safety_attributes: list[str] = Field(default_factory=lambda: ["allergy"])

    # Lifecycle (memman/lifecycle/observe.py, shortterm.py, consolidate.py).
    # observe() extracts a session's buffered messages once the oldest waited this long.
    extract_cooldown_s: float = Field(default=120.0, ge=0, le=CENTURY_S)
    # One extraction call sees at most this many characters of messages (~6k tokens): a
    # backlog is extracted in several calls instead of one prompt too long for the model.
    extract_batch_chars: int = Field(default=24000, ge=1)
    # Short-term TTL in hours by category; "default" for any other category.
    short_term_ttl_hours: dict[str, Annotated[float, Field(gt=0, le=CENTURY_HOURS)]] = Field(
        default_factory=lambda: {"default": 24.0, "location": 6.0, "plan": 72.0}
    )
    promote_min_sessions: int = Field(default=2, ge=1)  # seen in this many sessions: long-term
    # ... or recalled (put into a context block) on this many occasions, where recalls closer
    # together than promote_recall_spacing_hours count once. A chat calls context() every turn:
    # one conversation about the airport shows "User is at the airport" again and again, which
    # is one use, not a lasting fact. At the defaults a fact must matter on 3 occasions spread
    # over 8+ hours, longer than a location's TTL (6 h) unless the user keeps repeating it.
    promote_min_recalls: int = Field(default=3, ge=1)
    promote_recall_spacing_hours: float = Field(default=4.0, ge=0, le=CENTURY_HOURS)
    # Never merged or decayed automatically: these categories, and confidence >= this.
    protected_categories: list[str] = Field(default_factory=lambda: ["constraint", "safety"])
    protected_confidence: float = Field(default=0.95, gt=0, le=1)
    default_confidence: float = Field(default=DEFAULT_CONFIDENCE, gt=0, le=1)
    decay_rate: float = Field(default=0.01, ge=0, lt=1)  # per day since last access
    decay_floor: float = Field(default=0.05, ge=0, le=1)
    archive_below: float = Field(default=0.1, ge=0, le=1)  # decayed under this: archived
    # consolidate: memories with the same wording merge without an LLM; from this token Jaccard
    # up (same negations and numbers) they may be one fact, and only the LLM may merge them.
    merge_related_jaccard: float = Field(default=0.8, gt=0, le=1)

    prompts_dir: str | None = None
    batch_chunk_size: int = Field(default=500, ge=1)
    busy_timeout_s: float = Field(default=5.0, gt=0, le=CENTURY_S)
    busy_patience_s: float = Field(default=60.0, gt=0, le=CENTURY_S)
    # retry_pending and flush claim a row for this long before working on it; a worker that
    # crashed holds it no longer (then another process takes the row). Longer than one LLM
    # decision or extraction, or a slow worker's row could be taken from it.
    lease_s: float = Field(default=300.0, gt=0, le=CENTURY_S)
    # Bounded growth: extracted chat messages are deleted after this many days (consolidate);
    # a chat message longer than max_message_chars is refused like a fact over max_fact_chars;
    # the WAL file is truncated back to journal_size_limit_mb after a checkpoint.
    message_retention_days: float = Field(default=30.0, ge=0, le=CENTURY_DAYS)
    max_message_chars: int = Field(default=100_000, ge=1)
    journal_size_limit_mb: float = Field(default=64.0, ge=0)

    # `memman serve` (memman/serve/): where it listens, and the key every request must carry
    # as a bearer token (MEMMAN_SERVE_API_KEY); without a key it binds to a loopback address
    # only. A request body larger than serve_max_body_bytes is refused (413) unread.
    serve_host: str = "127.0.0.1"
    serve_port: int = Field(default=8000, ge=0, le=65535)
    serve_api_key: str | None = Field(default=None, min_length=16)
    serve_max_body_bytes: int = Field(default=1_000_000, ge=1024)

    @field_validator("db")
    @classmethod
    def _a_store(cls, db: str) -> str:
        """SQLite opens "" as a private temporary database, deleted at close: a fact written
        there (`--db "$UNSET"`) was reported stored, then lost."""
        if not db.strip():
            raise ValueError("is empty: give a file path, ':memory:' or a PostgreSQL URL")
        if "\x00" in db:  # no file can be named so; opening it raised os's untyped ValueError
            raise ValueError("holds a NUL byte")
        return db

    @field_validator("protected_categories")
    @classmethod
    def _as_categories_are_stored(cls, categories: list[str]) -> list[str]:
        """Lowercased and stripped, as update_memory stores a category: "Medical" as written
        matched no stored "medical", and the facts it was to protect were decayed."""
        stored = [category.strip().casefold() for category in categories]
        if not all(stored):
            raise ValueError("a category is empty")
        return stored

    @field_validator("safety_attributes", "single_valued_attributes")
    @classmethod
    def _as_attributes_are_stored(cls, attributes: list[str]) -> list[str]:
        """Labels, as attributes are stored ("Relationship Status" -> "relationship_status"):
        written otherwise, an attribute matched no memory and the setting did nothing."""
        return [check_label("an attribute", attribute) or "" for attribute in attributes]

    @field_validator("llm_base_url")
    @classmethod
    def _an_http_url(cls, url: str | None) -> str | None:
        """A base URL without its scheme ("localhost:11434/v1") failed every call, each fact
        parked with a connection error that never named the typo: refused when loaded."""
        if url is not None and urlparse(url).scheme not in ("http", "https"):
            raise ValueError(f"must be an http:// or https:// URL, not {url!r}")
        return url

    @property
    def llm_configured(self) -> bool:
        return bool(self.llm_model)

    def redacted(self) -> dict[str, Any]:
        """The settings as a dict, safe to print: the API key is masked, and so is the
        password of the db URL and of the base URL (as the store's messages mask it)."""
        values = self.model_dump()
        if key := values["llm_api_key"]:  # a short key is shown as nothing of itself
            values["llm_api_key"] = key[:3] + "…" if len(key) > 12 else "…"
        if values["serve_api_key"]:  # memman's own key: nothing of it shown
            values["serve_api_key"] = "…"
        for name in ("db", "llm_base_url"):
            values[name] = _without_password(values[name])
        return values

    @classmethod
    def settings_customise_sources(cls, settings_cls, init_settings, env_settings, **_):
        """Arguments, MEMMAN_* variables, OTHER_VARIABLES, the file: no .env, no secrets dir."""
        other = {f: os.environ[v] for v, f in OTHER_VARIABLES.items() if os.environ.get(v)}
        other_variables = InitSettingsSource(settings_cls, other)
        return init_settings, env_settings, other_variables, _ConfigFile(cls)


def _without_password(url: str | None) -> str | None:
    """The URL with its password shown as ***; anything else (a file path) as it is."""
    parts = urlsplit(url) if url else None
    if parts is None or parts.password is None:
        return url
    userinfo, _, host = parts.netloc.rpartition("@")
    return urlunsplit(parts._replace(netloc=f"{userinfo.partition(':')[0]}:***@{host}"))


# Variables older than the MEMMAN_<setting> names, and the setting each one fills.
OTHER_VARIABLES = {
    "OPENAI_BASE_URL": "llm_base_url",
    "OPENAI_API_KEY": "llm_api_key",
    "MEMMAN_LLM_TIMEOUT": "llm_timeout_s",
}


# MEMMAN_* variables memman reads that fill no setting: the config file's path, the CLI's
# store (cli/common.py); and those its own tests, benchmarks and CI read (the data sets, a
# throwaway server's directory and URLs, re-recording cassettes), which would otherwise be
# named on every run of them.
_READ_ELSEWHERE = frozenset(
    {"MEMMAN_CONFIG", "MEMMAN_DB", "MEMMAN_DATA", "MEMMAN_PG_DIR", "MEMMAN_RECORD_REAL"}
)
_TESTS_OWN = "MEMMAN_TEST_"
_warned: set[str] = set()  # names ignored_variables' warning has named in this process


def ignored_variables(environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """Each MEMMAN_* variable that memman does not read, with a sentence saying so (and the
    setting's variable whose name is nearest, when one is close).

    pydantic-settings skips a MEMMAN_ name that is no setting, so a typo ("MEMMAN_LLM_MODLE")
    left the model unset without a word. Such a name is shown, not refused: a user's own
    tooling may have names of its own under the prefix (memman's tests and benchmarks do, and
    are known). Names are read as pydantic-settings reads them, in any case."""
    environ = os.environ if environ is None else environ
    settings = {f"MEMMAN_{name.upper()}": name for name in Settings.model_fields}
    known = settings.keys() | _READ_ELSEWHERE | OTHER_VARIABLES.keys()
    ignored = {}
    for variable in sorted(environ):
        name = variable.upper()
        if not name.startswith("MEMMAN_") or name in known or name.startswith(_TESTS_OWN):
            continue
        why = f"{variable} is ignored: memman has no setting of that name"
        if nearest := _nearest(name.removeprefix("MEMMAN_").lower(), list(settings.values())):
            why += f" (did you mean MEMMAN_{nearest.upper()}?)"
        ignored[variable] = why
    return ignored


def _nearest(name: str, settings: list[str]) -> str | None:
    """The setting whose name is closest to `name` by difflib's ratio, or None when none is
    close; among close ones, one with the very same letters first: difflib ranks a swap of
    two letters ("llm_modle") below a dropped one ("llm_mode"), yet a swap is the likelier
    typo."""
    close = difflib.get_close_matches(name, settings, n=3, cutoff=0.75)
    return max(close, key=lambda setting: sorted(setting) == sorted(name), default=None)


def _warn_of_ignored() -> None:
    """A warning for each ignored MEMMAN_* variable, once per process: a program opening a
    manager per user would otherwise repeat the same lines at every open."""
    for variable, why in ignored_variables().items():
        if variable not in _warned:
            _warned.add(variable)
            log.warning(why)


class _ConfigFile(TomlConfigSettingsSource):
    """$MEMMAN_CONFIG, else ./memman.toml if there; keys at top level or under [memman]."""

    def __init__(self, settings_cls: type[BaseSettings]):
        named = os.environ.get("MEMMAN_CONFIG")
        if named and not Path(named).is_file():  # the source would skip it without a word
            why = "a folder, not a file" if Path(named).is_dir() else "no such file"
            raise ConfigError(f"cannot read config file {named}: {why}")
        super().__init__(settings_cls, toml_file=named or "memman.toml")

    def _read_file(self, file_path: Path) -> dict[str, Any]:  # type: ignore[override]
        try:
            data = super()._read_file(file_path)
        except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as error:
            raise ConfigError(f"cannot read config file {file_path}: {error}") from error
        return data.get("memman", data)


def load_settings(**overrides: Any) -> Settings:
    """Defaults < TOML file < environment < keyword arguments (None means "not given").
    A MEMMAN_* variable that is no setting is logged as a warning (ignored_variables)."""
    _warn_of_ignored()
    try:
        return Settings(**{k: v for k, v in overrides.items() if v is not None})
    except SettingsError as error:  # a list or table variable that is not JSON
        raise ConfigError(f"invalid configuration: {error}") from error
    except ValidationError as error:
        raise ConfigError(f"invalid configuration: {validation_problems(error)}") from error
