"""memman/write/ holds no English: its word lists and phrase patterns are the reader's tables
(memman/language/rules/), asked through memman.language.reader (issue 30); write/ and
lifecycle/ import nothing else of memman.language.

A heuristic over the string literals of memman/write/*.py: a literal split into words
("was were went".split()), a collection of three or more plain words, or a regular expression
choosing among words ("switched|changed") is vocabulary, and vocabulary is data. Docstrings,
comments and messages are prose, not vocabulary, and are not read.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

import memman.write

WRITE = Path(memman.write.__file__).parent
_WORD = re.compile(r"^[a-z]+$")
_ALTERNATION = re.compile(r"[a-z]{2,}\|[a-z]{2,}")
_REGEX_CALLS = frozenset("compile search match fullmatch findall finditer sub split".split())


def vocabulary(source: str) -> list[str]:
    """The English vocabulary held in a module's code: each as its line and literal."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            target = node.func.value
            if (
                node.func.attr == "split"
                and isinstance(target, ast.Constant)
                and isinstance(target.value, str)
                and len(target.value.split()) >= 3
            ):
                found.append(f"{node.lineno}: {target.value[:40]!r}.split()")
            if (
                node.func.attr in _REGEX_CALLS
                and isinstance(target, ast.Name)
                and target.id == "re"
                and node.args
            ):
                pattern = "".join(
                    n.value
                    for n in ast.walk(node.args[0])
                    if isinstance(n, ast.Constant) and isinstance(n.value, str)
                )
                if _ALTERNATION.search(pattern):
                    found.append(f"{node.lineno}: re.{node.func.attr}({pattern[:40]!r})")
        if isinstance(node, ast.Set | ast.List | ast.Tuple):
            texts = [e.value for e in node.elts if isinstance(e, ast.Constant)]
            if len(texts) >= 3 and all(isinstance(t, str) and _WORD.match(t) for t in texts):
                found.append(f"{node.lineno}: {texts[:4]}")
    return found


def test_the_heuristic_sees_a_word_list_and_a_pattern_of_words():
    held = """
import re
_PAST = frozenset("was were went got".split())
_SWITCH = re.compile(r"(?:switched|changed) to (?P<new>.+)$")
_LEADING = {"a", "an", "the"}
AUDIT = ("model", "prompt_template", "attempts")
"""
    assert sorted(int(line.split(":")[0]) for line in vocabulary(held)) == [3, 4, 5]


@pytest.mark.parametrize("path", sorted(WRITE.glob("*.py")), ids=lambda p: p.name)
def test_write_holds_no_english(path):
    assert vocabulary(path.read_text(encoding="utf-8")) == []


@pytest.mark.parametrize(
    "path",
    sorted([*WRITE.glob("*.py"), *(WRITE.parent / "lifecycle").glob("*.py")]),
    ids=lambda p: f"{p.parent.name}/{p.name}",
)
def test_write_and_lifecycle_ask_language_only_through_the_reader(path):
    """memman.language.reader is the door: no import of the reader's internals."""
    imported = {
        node.module
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.ImportFrom) and node.module
    } | {
        alias.name
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.Import)
        for alias in node.names
    }
    inside = {m for m in imported if m.startswith("memman.language")}
    assert inside <= {"memman.language.reader"}


# The reader's modules whose English is all in its tables (memman/language/rules/*.toml): the
# same heuristic finds no vocabulary left in their code.
LANGUAGE = WRITE.parent / "language"
_TABLED = (
    "attributes beside chatter labels names negation providers roles switches takebacks values"
    " whole wording"
).split()


@pytest.mark.parametrize("name", _TABLED)
def test_a_tabled_language_module_holds_no_english(name):
    assert vocabulary((LANGUAGE / f"{name}.py").read_text(encoding="utf-8")) == []
