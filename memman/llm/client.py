"""The one place memman talks to an LLM, over any OpenAI-compatible endpoint.

`structured_call` sends one rendered prompt with a `max_tokens` bound, validates the answer
into a pydantic model (re-asking on validation errors) and turns every failure (timeout,
HTTP error, invalid output after the re-asks) into a `DecisionError` carrying attempts and
token usage, so callers can park the work instead of losing it.

Two engines give that contract, chosen once per client by `llm_engine`: instructor (the
`memman[instructor]` extra) and memman's own (memman/llm/structured.py), which needs only openai.
auto takes instructor when it imports: instructor pins an older jiter than the newest openai
needs, so an environment that keeps a newer openai may lack it, and memman must work there.

The structured-output mode: `llm_mode = "auto"` uses tools (function calling) for OpenAI's
own API and json_schema (response_format) for any other server, because local servers
(llama.cpp, Ollama, vLLM) turn a JSON schema into a grammar the model cannot leave, while
their tool calling depends on the model's chat template and on `tool_choice` forms they may
not accept. If the server refuses the chosen mode (HTTP 400 about tools / response_format,
or an answer with no tool call), the client switches once to the other mode for the rest of
its life and the call that switched says so (`CallInfo.fallback`, recorded in the audit
reason). An explicit mode is used as set, never switched.

instructor's `context=` argument is deliberately never used: when given, instructor renders
every message as a Jinja template, and a user's fact containing `{{ }}` would be mangled.
Validation that needs per-call data (the ids shown) uses a per-call model subclass instead.
"""

from __future__ import annotations

import logging
import math
import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, TypeVar
from urllib.parse import urlparse

from pydantic import BaseModel

from memman.config import Settings
from memman.errors import ConfigError, DecisionError
from memman.llm import structured
from memman.llm.prompts import RenderedPrompt

log = logging.getLogger(__name__)
M = TypeVar("M", bound=BaseModel)

# Setting value -> instructor.Mode member. instructor and openai are imported only when an LLM
# is configured: together they are ~66 MB of RSS that an offline store never needs.
MODES = {"tools": "TOOLS", "json_schema": "JSON_SCHEMA", "json": "JSON", "md_json": "MD_JSON"}
AUTO = "auto"
ENGINES = ("instructor", "builtin")  # llm_engine: these, or auto
# auto's one fallback per mode: a server that refuses tools gets a schema-constrained answer;
# one that refuses response_format json_schema can still be asked for JSON in text.
FALLBACK = {"tools": "json_schema", "json_schema": "md_json"}
# Words of a 400 error that mean "this server does not accept the mode", per mode.
REFUSED = {"tools": ("tool",), "json_schema": ("response_format", "json_schema", "schema")}
NO_TOOL_CALL = "no tool call"  # both engines' error when the answer carries no tool call
# Tokens per character of restated text, rounded up: English averages ~4 characters a token;
# 3 leaves room for other languages and JSON escapes.
CHARS_PER_TOKEN = 3


FELL_BACK = "llm_mode auto fell back"  # marks the fallback note in audit reasons


def last_fallback(reasons: Iterable[str | None]) -> str | None:
    """The fallback note in the first of these audit reasons that has one (newest first)."""
    for reason in reasons:
        if reason and FELL_BACK in reason:
            return reason[reason.index(FELL_BACK) :].rstrip("]")
    return None


def resolve_mode(settings: Settings) -> str:
    """The structured-output mode a client starts with (auto: by the server it talks to)."""
    mode = settings.llm_mode
    if mode != AUTO:
        return mode
    host = urlparse(settings.llm_base_url).hostname if settings.llm_base_url else None
    return "tools" if host in (None, "api.openai.com") else "json_schema"


def instructor_usable() -> bool:
    """instructor imports here (installed, and compatible with the installed openai)."""
    try:
        import instructor  # noqa: F401
        from instructor.core import InstructorError  # noqa: F401
    except ImportError as error:
        log.debug("instructor not usable, using memman's engine: %s", error)
        return False
    return True


def resolve_engine(settings: Settings) -> str:
    """The structured-output engine a client uses (auto: instructor when it imports)."""
    engine = settings.llm_engine
    if engine == AUTO:
        return "instructor" if instructor_usable() else "builtin"
    if engine not in ENGINES:
        choices = ", ".join(ENGINES)
        raise ConfigError(f"llm_engine must be {AUTO} or one of {choices}, not {engine!r}")
    if engine == "instructor" and not instructor_usable():
        raise ConfigError(
            "llm_engine instructor needs instructor: pip install 'memman[instructor]'"
        )
    return engine


def answer_budget(settings: Settings, restated_chars: int = 0) -> int:
    """max_tokens for an answer that may restate this many characters of text."""
    return settings.llm_max_tokens + math.ceil(restated_chars / CHARS_PER_TOKEN)


@dataclass(frozen=True)
class CallInfo:
    """What the audit trail records about one structured call (all its attempts)."""

    model: str
    prompt_template: str
    prompt_hash: str
    latency_ms: float
    attempts: int
    tokens: int | None
    mode: str = "tools"
    fallback: str | None = None  # set on the call that switched modes: from, to and why

    def noted(self, reason: str) -> str:
        """An answer's reason as the audit trail records it: with this call's mode fallback."""
        return reason if self.fallback is None else f"{reason} [{self.fallback}]"

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
    """A configured LLM client; cheap to keep, created once per MemoryManager."""

    def __init__(self, settings: Settings):
        if not settings.llm_model:
            raise ConfigError("no LLM model configured (MEMMAN_LLM_MODEL)")
        if settings.llm_mode != AUTO and settings.llm_mode not in MODES:
            raise ConfigError(
                f"llm_mode must be {AUTO} or one of {', '.join(MODES)}, not {settings.llm_mode!r}"
            )
        import openai

        self.engine = resolve_engine(settings)
        self.model = settings.llm_model
        self.max_retries = settings.llm_max_retries
        self.can_fall_back = settings.llm_mode == AUTO
        self.fallback: str | None = None  # what the one fallback was, once it happened
        self._raw = openai.OpenAI(
            api_key=settings.llm_api_key or "not-needed",  # local servers accept any key
            base_url=settings.llm_base_url,
            timeout=settings.llm_timeout_s,
            max_retries=0,  # retries are the engine's re-asks; a failed call parks the fact
        )
        self._switch = threading.Lock()
        self._local = threading.local()  # attempt counter per thread: one client, many threads
        self._use(resolve_mode(settings))

    def _use(self, mode: str) -> None:
        """Ask in this mode from now on (the instructor client is made for one mode)."""
        client = None
        if self.engine == "instructor":
            import instructor

            client = instructor.from_openai(self._raw, mode=instructor.Mode[MODES[mode]])
            client.on("completion:kwargs", self._count_attempt)
        self.mode, self.client = mode, client  # together: other threads read both

    def _count_attempt(self, *args: Any, **kwargs: Any) -> None:
        self._local.attempts += 1

    def structured_call(
        self,
        prompt: RenderedPrompt,
        response_model: type[M],
        *,
        max_tokens: int,
        max_retries: int | None = None,
    ) -> tuple[M, CallInfo]:
        """One validated answer of at most max_tokens tokens (per attempt); DecisionError else.

        `max_retries`: re-asks for this call, at most llm_max_retries (a call with a fallback
        of its own gives up sooner)."""
        started = time.perf_counter()
        mode = self.mode
        retries = self.max_retries if max_retries is None else min(max_retries, self.max_retries)
        try:
            parsed, tokens, attempts = self._create(prompt, response_model, max_tokens, retries)
            fallback = None
        except DecisionError as error:
            switched = self._fall_back(mode, error)
            if switched is None:
                raise
            fallback = switched
            parsed, tokens, attempts = self._create(prompt, response_model, max_tokens, retries)
            attempts += error.attempts
        info = CallInfo(
            model=self.model,
            prompt_template=prompt.template,
            prompt_hash=prompt.template_hash,
            latency_ms=(time.perf_counter() - started) * 1000,
            attempts=attempts,
            tokens=tokens,
            mode=self.mode,
            fallback=fallback,
        )
        log.debug(
            "llm call %s (%s): %s attempts, %s tokens",
            prompt.template,
            info.mode,
            info.attempts,
            info.tokens,
        )
        return parsed, info

    def _create(
        self, prompt: RenderedPrompt, response_model: type[M], max_tokens: int, retries: int
    ) -> tuple[M, int | None, int]:
        """(answer, total tokens, attempts) from the client's engine; DecisionError else,
        naming the fallback when one happened (the audit trail keeps why the mode changed)."""
        try:
            if self.engine == "instructor":
                return self._instructor_create(prompt, response_model, max_tokens, retries)
            return structured.create(
                self._raw,
                model=self.model,
                mode=self.mode,
                prompt_text=prompt.text,
                response_model=response_model,
                max_retries=retries,
                max_tokens=max_tokens,
            )
        except DecisionError as error:
            if self.fallback is None:
                raise
            raise DecisionError(
                f"{error} [{self.fallback}]", attempts=error.attempts, usage=error.usage
            ) from error.__cause__

    def _instructor_create(
        self, prompt: RenderedPrompt, response_model: type[M], max_tokens: int, retries: int
    ) -> tuple[M, int | None, int]:
        import openai
        from instructor.core import InstructorError

        self._local.attempts = 0
        try:
            parsed, completion = self.client.chat.completions.create_with_completion(
                model=self.model,
                messages=[{"role": "user", "content": prompt.text}],
                response_model=response_model,
                max_retries=retries,  # re-asks: instructor makes max_retries + 1 calls
                temperature=0,
                max_tokens=max_tokens,
            )
        except (InstructorError, openai.OpenAIError) as error:
            usage = getattr(error, "total_usage", None)
            tokens = getattr(usage, "total_tokens", None) if usage is not None else None
            raise DecisionError(
                structured.describe(_cause(error)),
                attempts=getattr(error, "n_attempts", None) or self._local.attempts,
                usage={"total_tokens": tokens} if tokens is not None else {},
            ) from error
        usage = getattr(completion, "usage", None)  # instructor sums it over the attempts
        return parsed, getattr(usage, "total_tokens", None), self._local.attempts

    def _fall_back(self, mode: str, error: DecisionError) -> str | None:
        """Switch to the fallback mode if the server refused `mode`; the note, or None."""
        if not self.can_fall_back or mode not in FALLBACK or not _refused(mode, error):
            return None
        with self._switch:
            if self.mode == mode:  # another thread may have switched already
                target = FALLBACK[mode]
                self.fallback = (
                    f"{FELL_BACK} from {mode} to {target}: the server refused"
                    f" {mode} ({str(error)[:200]})"
                )
                log.warning("%s", self.fallback)
                self.can_fall_back = False  # one fallback per client
                self._use(target)
        return self.fallback


# The first words of a failed call's error (structured.describe) when the server answered, but
# not in the schema (invalid, unparsable or cut-off output), or refused the request itself
# (400): a simpler request may still succeed. A transport failure (connection, timeout, 5xx,
# 429) would fail any other request alike.
_UNANSWERED = (
    "validationerror",
    "unparsableanswer",
    "incompleteanswer",
    "incompleteoutputexception",
    "instructorretryexception",
    "jsondecodeerror",
    "badrequesterror",
)


def unanswerable(error: DecisionError) -> bool:
    """The model could not answer this request's schema (see _UNANSWERED), as opposed to the
    server being unreachable or failing."""
    return str(error).lower().startswith(_UNANSWERED)


def _refused(mode: str, error: DecisionError) -> bool:
    """The server does not accept this mode: a 400 naming it, or (tools) no tool call."""
    text = str(error).lower()
    if mode == "tools" and NO_TOOL_CALL in text:
        return True
    return text.startswith("badrequesterror") and any(word in text for word in REFUSED[mode])


def _cause(error: Exception) -> BaseException:
    """What made an instructor call fail: the last attempt's error, or the wrapped one."""
    failed = getattr(error, "failed_attempts", None)
    if failed:
        return failed[-1].exception
    return error.__cause__ if error.__cause__ is not None else error
