"""The OpenAPI 3.1 document of the JSON routes, read from the route table (routing.Api): each
route's summary, its docstring, its path and query parameters and its body's pydantic schema."""

from __future__ import annotations

import inspect
import re
from collections.abc import Iterable
from typing import Any

from memman.serve.routing import Api

ERROR_STATUSES = {
    "400": "Bad input: not JSON, a missing or invalid field, no user_id/agent_id/run_id",
    "401": "The API key is missing or wrong",
    "404": "No such memory in this scope",
    "413": "The body is over serve_max_body_bytes",
    "503": "Busy: the store stayed locked, or the LLM failed; try again",
}
REF = "#/components/schemas/{model}"


def document(routes: Iterable[Api], *, version: str, keyed: bool) -> dict[str, Any]:
    schemas: dict[str, Any] = {
        "Error": {
            "type": "object",
            "properties": {"detail": {"type": "string"}},
            "required": ["detail"],
        }
    }
    paths: dict[str, dict[str, Any]] = {}
    for api in routes:
        paths.setdefault(api.path, {})[api.method.lower()] = _operation(api, schemas)
    doc: dict[str, Any] = {
        "openapi": "3.1.0",
        "info": {
            "title": "memman serve",
            "version": version,
            "description": "mem0's self-hosted REST routes over memman, and memman's own.",
        },
        "paths": paths,
        "components": {"schemas": schemas},
    }
    if keyed:
        doc["components"]["securitySchemes"] = {"bearer": {"type": "http", "scheme": "bearer"}}
        doc["security"] = [{"bearer": []}]
    return doc


def _operation(api: Api, schemas: dict[str, Any]) -> dict[str, Any]:
    error = {"application/json": {"schema": {"$ref": REF.format(model="Error")}}}
    operation: dict[str, Any] = {
        "operationId": api.endpoint.__name__,
        "summary": api.summary,
        "description": inspect.cleandoc(api.endpoint.__doc__ or ""),
        "tags": [api.tag],
        "parameters": [
            {"name": name, "in": "path", "required": True, "schema": {"type": "string"}}
            for name in re.findall(r"{(\w+)}", api.path)
        ],
        "responses": {
            "200": {"description": "OK", "content": {"application/json": {}}},
            **{
                status: {"description": why, "content": error}
                for status, why in ERROR_STATUSES.items()
            },
        },
    }
    if api.query is not None:
        properties = api.query.model_json_schema()["properties"]
        operation["parameters"] += [
            {
                "name": name,
                "in": "query",
                "required": field.is_required(),
                "schema": properties[name],
            }
            for name, field in api.query.model_fields.items()
        ]
    if api.body is not None:
        schema = api.body.model_json_schema(ref_template=REF)
        schemas.update(schema.pop("$defs", {}))
        schemas[api.body.__name__] = schema
        reference = {"$ref": REF.format(model=api.body.__name__)}
        operation["requestBody"] = {
            "required": True,
            "content": {"application/json": {"schema": reference}},
        }
    return operation
