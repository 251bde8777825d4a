"""Response models made for one call, keeping the name and docstring the schema shows.

instructor's `context=` is never used (memman/llm/client.py), so what a validator needs to know
about the call (the ids shown, the longest acceptable text) is set on a subclass made for it,
and a list the answer may hold is bounded in the schema itself (maxItems), so a grammar-bound
model that repeats one item is stopped by the schema, not by the timeout.
"""

from __future__ import annotations

from typing import Any, TypeVar, cast

from pydantic import BaseModel, Field, create_model

M = TypeVar("M", bound=BaseModel)


def with_values(model: type[M], **values: Any) -> type[M]:
    """`model` with these class attributes (read by its validators) for one call."""
    return cast(type[M], type(model.__name__, (model,), {**values, "__doc__": model.__doc__}))


def at_most(model: type[M], field: str, count: int, description: str | None = None) -> type[M]:
    """`model` with at most `count` items in its list `field` (maxItems in the schema)."""
    annotation = model.model_fields[field].annotation
    bounded: dict[str, Any] = {
        field: (annotation, Field(max_length=count, description=description))
    }
    return create_model(model.__name__, __base__=model, __doc__=model.__doc__, **bounded)
