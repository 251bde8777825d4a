"""The documentation is tested: its Python examples run, its CLI reference is current, its
links resolve and the set-up it promises is the README's (sqlite-utils' tests/test_docs.py
is the model).

`mkdocs build --strict` (.ci/run) checks the site's own links and anchors; these tests need
no mkdocs.
"""

from __future__ import annotations

import ast
import asyncio
import importlib.util
import re

import pytest

from tests.docs import DOCS, PAGES, REPO, examples, read, section

EXAMPLES = examples("python")


def test_the_pages_have_examples():
    pages = {e.page.name for e in EXAMPLES}
    assert {"README.md", "getting-started.md", "integrations.md", "index.md"} <= pages


@pytest.mark.parametrize("example", EXAMPLES, ids=[e.id for e in EXAMPLES])
def test_python_example_runs(example):
    """Each block runs on its own, offline, in a fresh directory (the autouse fixture's
    tmp_path); a block with top-level `await` / `async with` runs in an event loop."""
    if not example.run:
        pytest.skip("marked: not run")
    if example.requires:
        pytest.importorskip(example.requires)
    code = compile(
        example.code, example.id, "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT, dont_inherit=True
    )
    namespace: dict = {"__name__": "__docs__"}
    result = eval(code, namespace)  # a coroutine when the block awaits
    if asyncio.iscoroutine(result):
        asyncio.run(result)


def _gen_cli():
    spec = importlib.util.spec_from_file_location("gen_cli", DOCS / "gen_cli.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_cli_reference_is_current():
    gen_cli = _gen_cli()
    page = read("docs/cli.md")
    assert gen_cli.updated(page) == page, "docs/cli.md is out of date: run python docs/gen_cli.py"


def test_the_getting_started_set_up_is_the_readme_s():
    readme = section("README.md", "Set-up: two commands")
    page = section("docs/getting-started.md", "Set-up: two commands")
    commands = re.findall(r"```bash\n(.*?)```", readme, re.S)
    assert len(commands) == 2, "the README's set-up is two commands"
    assert commands == re.findall(r"```bash\n(.*?)```", page, re.S)


_LINK = re.compile(r"\]\(([^)\s]+)\)")


@pytest.mark.parametrize("page", PAGES, ids=[str(p.relative_to(REPO)) for p in PAGES])
def test_relative_links_resolve(page):
    """Links between the README and the pages are relative, so they work on GitHub too."""
    text = page.read_text(encoding="utf-8")
    for target in _LINK.findall(text):
        if re.match(r"[a-z]+:", target) or target.startswith("#"):
            continue
        path, _, anchor = target.partition("#")
        resolved = (page.parent / path).resolve()
        assert resolved.exists(), f"{page.name} links to {target}, which does not exist"
        if anchor and resolved.suffix == ".md":
            headings = re.findall(r"^#{1,6} (.+)$", resolved.read_text(encoding="utf-8"), re.M)
            slugs = {
                re.sub(r"[\s]+", "-", re.sub(r"[^\w\s-]", "", h).strip().lower()) for h in headings
            }
            assert anchor in slugs, f"{page.name} links to {target}: no such heading"
