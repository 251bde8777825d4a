"""The package's layout: every module imports, and the import graph has no cycles.

The graph is read from the source (every `import` statement, at module level or inside a
function or an `if TYPE_CHECKING:` block), so a cycle cannot hide behind a lazy import: a
module that needs something of a module that needs it back wants a lower module holding it.
"""

from __future__ import annotations

import ast
import importlib
import os
import pkgutil
import subprocess
import sys
from pathlib import Path

import pytest

import memman
from memman.errors import ConfigError

PACKAGE = Path(memman.__file__).parent


def _modules() -> dict[str, Path]:
    """Every module of the package by dotted name, packages by their __init__.py."""
    found = {}
    for path in PACKAGE.rglob("*.py"):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        found[".".join(parts)] = path
    return found


MODULES = _modules()


def _imports(name: str, path: Path) -> set[str]:
    """The package's modules that `name` imports, anywhere in its source."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    targets: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            targets.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = ".".join(package.split(".")[: len(package.split(".")) - node.level + 1])
                module = f"{base}.{node.module}" if node.module else base
            else:
                module = node.module or ""
            for alias in node.names:  # `from memman import store` imports the submodule
                submodule = f"{module}.{alias.name}"
                targets.add(submodule if submodule in MODULES else module)
    return {target for target in targets if target in MODULES and target != name}


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in sorted(graph[node]):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def _graph() -> dict[str, set[str]]:
    return {name: _imports(name, path) for name, path in MODULES.items()}


def _reachable(graph: dict[str, set[str]], start: str) -> set[str]:
    seen, todo = set(), [start]
    while todo:
        for target in graph[todo.pop()] - seen:
            seen.add(target)
            todo.append(target)
    return seen


# Importing memman.__main__ runs the CLI; it is in the graph all the same.
@pytest.mark.parametrize("name", sorted(set(MODULES) - {"memman.__main__"}))
def test_every_module_imports(name):
    try:
        importlib.import_module(name)
    except ConfigError as error:  # an integration whose extra is not installed says which
        assert "pip install 'memman[" in str(error), error
        pytest.skip(str(error))
    # A package whose extra is missing (memman.serve) cannot be walked into; its modules
    # skipped above, and any other module's import error was raised there.
    walked = {
        m.name for m in pkgutil.walk_packages(memman.__path__, "memman.", onerror=lambda _: None)
    }
    assert name == "memman" or name in walked


def test_the_import_graph_has_no_cycles():
    graph = _graph()
    assert graph["memman.api.manager"], "the graph reader found no imports at all"
    cycles = _cycles(graph)
    detail = [{member: sorted(graph[member] & set(cycle)) for member in cycle} for cycle in cycles]
    assert not cycles, f"import cycles (module -> what it imports within the cycle): {detail}"


def test_the_reader_sees_a_cycle_behind_a_lazy_import():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert _cycles(graph) == [["a", "b", "c"]]


def test_value_types_sit_at_the_bottom():
    """Scope and the id checks import nothing but the errors, and the write path's first
    stage (the candidate) gets them without importing storage."""
    graph = _graph()
    assert _reachable(graph, "memman.scope") <= {"memman.errors"}
    assert "memman.storage.store" not in _reachable(graph, "memman.write.candidate")


# The package's groups in the order of the flow: a module imports only from its own group or
# the ones before it, so the folders read bottom-up (docs/concepts.md, "How decisions are routed").
LAYERS = [
    {"errors", "scope", "timestamps", "models", "jsonl", "memo"},  # value types, readers, memo
    {"language"},  # reading a fact's text: words, hash, topic
    {"config"},
    {"storage"},
    {"semantic"},
    {"llm"},
    {"write"},
    {"lifecycle"},
    {"api"},
    {"tuning"},
    {"cli", "mem0", "langgraph", "mcp_server", "serve", "aio", "__main__", ""},  # adapters
]


def _layer(module: str) -> int:
    group = module.split(".")[1] if "." in module else ""
    return next(rank for rank, groups in enumerate(LAYERS) if group in groups)


def _upward(graph: dict[str, set[str]]) -> list[str]:
    return sorted(
        f"{name} -> {target}"
        for name, targets in graph.items()
        for target in targets
        if _layer(target) > _layer(name)
    )


def test_each_group_imports_only_the_groups_before_it():
    assert {_layer(name) for name in MODULES} == set(range(len(LAYERS)))  # every group exists
    assert _upward(_graph()) == []


def test_the_layer_check_sees_an_upward_import():
    assert _upward({"memman.storage.store": {"memman.write.apply"}}) == [
        "memman.storage.store -> memman.write.apply"
    ]


def test_the_core_imports_no_model_runtime():
    """embed imports local_model at module level (no cycle, no lazy import); local_model
    imports torch and onnxruntime only when a LocalEmbedder is built, so the core stays
    light. A fresh interpreter: this one may have imported them for other tests."""
    heavy = ("torch", "onnxruntime", "sentence_transformers", "transformers", "onnx")
    code = (
        "import sys, memman.api.manager, memman.cli, memman.semantic.embed,"
        " memman.semantic.local_model\n"
        f"print(','.join(m for m in {heavy!r} if m in sys.modules))"
    )
    env = {**os.environ, "PYTHONPATH": str(PACKAGE.parent)}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == ""
