"""The one place memman talks to an LLM: instructor over any OpenAI-compatible endpoint.

`structured_call` sends one rendered prompt, validates the answer into a pydantic model
(instructor re-asks on validation errors) and turns every failure (timeout, HTTP error,
invalid output after the re-asks) into a `DecisionError` carrying attempts and token usage,
so callers can park the work instead of losing it.

instructor's `context=` argument is deliberately never used: when given, instructor renders
every message as a Jinja template, and a user's fact containing `{{ }}` would be mangled.
Validation that needs per-call data (the ids shown) uses a per-call model subclass instead.
"""

from __future__ import annotations

import logging
import threading
import time
from dataclasses import dataclass
from typing import Any, TypeVar

from pydantic import BaseModel

from memman.config import Settings
from memman.errors import ConfigError, DecisionError
from memman.prompts import RenderedPrompt

log = logging.getLogger(__name__)
M = TypeVar("M", bound=BaseModel)

# Setting value -> instructor.Mode member. instructor and openai are imported only when an LLM
# is configured: together they are ~66 MB of RSS that an offline store never needs.
MODES = {"tools": "TOOLS", "json_schema": "JSON_SCHEMA", "json": "JSON", "md_json": "MD_JSON"}


@dataclass(frozen=True)
class CallInfo:
    """What the audit trail records about one structured call (all its attempts)."""

    model: str
    prompt_template: str
    prompt_hash: str
    latency_ms: float
    attempts: int
    tokens: int | None

    def audit_columns(self) -> dict[str, object]:
        """The `events` columns that record this call (write path and consolidation alike)."""
        return {
            "model": self.model,
            "prompt_template": self.prompt_template,
            "prompt_hash": self.prompt_hash,
            "latency_ms": self.latency_ms,
            "attempts": self.attempts,
            "tokens": self.tokens,
        }


class LLMClient:
    """A configured instructor client; cheap to keep, created once per MemoryManager."""

    def __init__(self, settings: Settings):
        if not settings.llm_model:
            raise ConfigError("no LLM model configured (MEMMAN_LLM_MODEL)")
        if settings.llm_mode not in MODES:
            raise ConfigError(
                f"llm_mode must be one of {', '.join(MODES)}, not {settings.llm_mode!r}"
            )
        import instructor
        import openai

        self.model = settings.llm_model
        self.max_retries = settings.llm_max_retries
        raw = openai.OpenAI(
            api_key=settings.llm_api_key or "not-needed",  # local servers accept any key
            base_url=settings.llm_base_url,
            timeout=settings.llm_timeout_s,
            max_retries=0,  # retries are instructor's re-asks; a failed call parks the fact
        )
        self.client = instructor.from_openai(raw, mode=instructor.Mode[MODES[settings.llm_mode]])
        self._local = threading.local()  # attempt counter per thread: one client, many threads
        self.client.on("completion:kwargs", self._count_attempt)

    def _count_attempt(self, *args: Any, **kwargs: Any) -> None:
        self._local.attempts += 1

    def structured_call(
        self, prompt: RenderedPrompt, response_model: type[M]
    ) -> tuple[M, CallInfo]:
        import openai
        from instructor.core import InstructorError

        self._local.attempts = 0
        started = time.perf_counter()
        try:
            parsed, completion = self.client.chat.completions.create_with_completion(
                model=self.model,
                messages=[{"role": "user", "content": prompt.text}],
                response_model=response_model,
                max_retries=self.max_retries,  # re-asks: instructor makes max_retries + 1 calls
                temperature=0,
            )
        except (InstructorError, openai.OpenAIError) as error:
            usage = getattr(error, "total_usage", None)
            tokens = getattr(usage, "total_tokens", None) if usage is not None else None
            raise DecisionError(
                _describe(error),
                attempts=getattr(error, "n_attempts", None) or self._local.attempts,
                usage={"total_tokens": tokens} if tokens is not None else {},
            ) from error
        usage = getattr(completion, "usage", None)
        info = CallInfo(
            model=self.model,
            prompt_template=prompt.template,
            prompt_hash=prompt.template_hash,
            latency_ms=(time.perf_counter() - started) * 1000,
            attempts=self._local.attempts,
            tokens=getattr(usage, "total_tokens", None),
        )
        log.debug(
            "llm call %s: %s attempts, %s tokens", prompt.template, info.attempts, info.tokens
        )
        return parsed, info


def _describe(error: Exception) -> str:
    """A one-line description of an LLM failure for the pending table and the audit trail."""
    cause = error
    failed = getattr(error, "failed_attempts", None)
    if failed:
        cause = failed[-1].exception
    elif error.__cause__ is not None:
        cause = error.__cause__
    text = " ".join(str(cause).split())
    return f"{type(cause).__name__}: {text[:500]}"
