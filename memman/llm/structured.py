"""memman's own structured-output engine: validated answers from chat.completions, no instructor.

Every instructor release pins `jiter<0.15` while `openai` 3.4 and later need `jiter>=0.16`, so
with instructor installed pip downgrades a user's newer openai. This engine needs only `openai`
and pydantic, and gives the contract `LLMClient.structured_call` relies on: one request per
attempt in the configured mode, the answer validated with the response model, a re-ask carrying
the validation error as a new user message (the validators' messages are written for the
model), at most `max_retries` re-asks, attempts counted and token usage summed over them.

Validation is strict, as instructor's is. The modes ask for the answer as instructor's do, so
a server behaves alike under both engines: tools (a function made from the model's JSON schema,
forced with tool_choice), json_schema (response_format json_schema), json (response_format
json_object, the schema in a system message) and md_json (the schema in a system message, JSON
in a fenced block of the text).
The prompt text is sent as it was rendered: nothing here treats it as a template.
"""

from __future__ import annotations

import json
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from memman.errors import DecisionError

M = TypeVar("M", bound=BaseModel)

SCHEMA_INSTRUCTION = (
    "Answer with one JSON object (an instance, not the schema itself) that matches this JSON"
    " schema:\n\n{schema}"
)
MD_JSON_REQUEST = "Return the JSON answer in a ```json code block."
REASK = "Your answer was not valid. Correct it, based on these errors:\n{errors}"


class UnparsableAnswer(ValueError):
    """The answer holds nothing to validate (no tool call, no JSON); re-asked like invalid JSON."""


class IncompleteAnswer(ValueError):
    """The answer stopped at max_tokens: a re-ask would stop there again, so it is not re-asked."""


def request_options(mode: str, response_model: type[BaseModel]) -> dict[str, Any]:
    """The chat.completions arguments that ask for the answer in this mode."""
    schema = response_model.model_json_schema()
    if mode == "tools":
        name = schema.get("title", response_model.__name__)
        function = {
            "name": name,
            "description": schema.get("description") or f"Answer as `{name}`.",
            "parameters": {k: v for k, v in schema.items() if k not in ("title", "description")},
        }
        return {
            "tools": [{"type": "function", "function": function}],
            "tool_choice": {"type": "function", "function": {"name": name}},
        }
    if mode == "json_schema":
        schema_format = {"name": response_model.__name__, "schema": schema}
        return {"response_format": {"type": "json_schema", "json_schema": schema_format}}
    if mode == "json":
        return {"response_format": {"type": "json_object"}}
    return {}


def first_messages(mode: str, prompt_text: str, response_model: type[BaseModel]) -> list[dict]:
    """The conversation of the first attempt: the prompt, with the schema where the mode
    does not carry it (json, md_json)."""
    if mode == "md_json":
        prompt_text = f"{prompt_text}\n\n{MD_JSON_REQUEST}"
    messages = [{"role": "user", "content": prompt_text}]
    if mode in ("json", "md_json"):
        schema = json.dumps(response_model.model_json_schema(), indent=2, ensure_ascii=False)
        messages.insert(0, {"role": "system", "content": SCHEMA_INSTRUCTION.format(schema=schema)})
    return messages


def answer_text(mode: str, completion: Any) -> str:
    """The JSON text of the answer; UnparsableAnswer or IncompleteAnswer if there is none."""
    choices = getattr(completion, "choices", None)
    if not choices:
        raise UnparsableAnswer("No choices in the answer")
    choice = choices[0]
    if choice.finish_reason == "length":
        raise IncompleteAnswer("The answer was cut off at max_tokens (finish_reason length)")
    message = choice.message
    if getattr(message, "refusal", None):
        raise UnparsableAnswer(f"The model refused: {message.refusal}")
    if mode == "tools":
        calls = message.tool_calls or []
        if not calls:
            raise UnparsableAnswer("No tool calls in the answer")
        return calls[0].function.arguments or ""
    text = message.content or ""
    return last_json(text) if mode == "md_json" else text


def last_json(text: str) -> str:
    """The last JSON object or array in a text: the model's answer comes after any JSON it
    quoted from the prompt (a user's fact may contain JSON)."""
    decoder = json.JSONDecoder()
    found, position = None, 0
    while position < len(text):
        starts = [i for i in (text.find("{", position), text.find("[", position)) if i >= 0]
        if not starts:
            break
        start = min(starts)
        try:
            _, end = decoder.raw_decode(text, start)
        except json.JSONDecodeError:
            position = start + 1
            continue
        found, position = text[start:end], end
    if found is None:
        raise UnparsableAnswer("No JSON object in the answer")
    return found


def create(
    client: Any,
    *,
    model: str,
    mode: str,
    prompt_text: str,
    response_model: type[M],
    max_retries: int,
    max_tokens: int,
) -> tuple[M, int | None, int]:
    """(validated answer, total tokens or None, attempts); DecisionError on any failure."""
    import openai

    messages = first_messages(mode, prompt_text, response_model)
    options = request_options(mode, response_model)
    attempts, tokens = 0, None
    while True:
        attempts += 1
        try:
            completion = client.chat.completions.create(
                model=model, messages=messages, temperature=0, max_tokens=max_tokens, **options
            )
        except (openai.OpenAIError, json.JSONDecodeError) as error:  # a garbage body: JSON
            raise failure(error, attempts, tokens) from error
        usage = getattr(completion, "usage", None)
        if getattr(usage, "total_tokens", None) is not None:
            tokens = (tokens or 0) + usage.total_tokens
        text = ""
        try:
            text = answer_text(mode, completion)
            # strict, as instructor validates: "1" is not the id 1, nor "true" a boolean
            return response_model.model_validate_json(text, strict=True), tokens, attempts
        except (ValidationError, UnparsableAnswer) as error:
            if attempts > max_retries:
                raise failure(error, attempts, tokens) from error
            messages = [
                *messages,
                {"role": "assistant", "content": text},
                {"role": "user", "content": REASK.format(errors=error)},
            ]
        except IncompleteAnswer as error:
            raise failure(error, attempts, tokens) from error


def failure(error: Exception, attempts: int, tokens: int | None) -> DecisionError:
    """The DecisionError for a failed call: what failed, the attempts and the tokens spent."""
    return DecisionError(
        describe(error),
        attempts=attempts,
        usage={"total_tokens": tokens} if tokens is not None else {},
    )


def describe(error: BaseException) -> str:
    """A one-line description of an LLM failure for the pending table and the audit trail."""
    text = " ".join(str(error).split())
    return f"{type(error).__name__}: {text[:500]}"
