"""How much English memman/language/ and memman/write/ hold as Python code (issue 30).

    python benchmarks/english_lines.py [REV ...]     # default: 4eec583 (the issue's) and HEAD

Counts, per revision, the lines of Python under memman/language/ and memman/write/ that hold a
string literal with a lowercase word of three letters or more: the word lists, patterns and
phrasings written as code. Not counted: docstrings, and the messages of log calls and raised
errors (English for people, not rules for reading text). The rules moved to
memman/language/rules/*.toml are data, counted apart (their lines include each row's examples
and look-alikes). A heuristic: a table's name passed to the rulebook (`rulebook.words("kinds",
...)`) counts as a line too, so the code's figure is an upper bound.
"""

from __future__ import annotations

import ast
import io
import re
import subprocess
import sys
import tokenize
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FOLDERS = ("memman/language", "memman/write")
WORD = re.compile(r"[a-z]{3,}")
MESSAGES = {"debug", "info", "warning", "error", "exception"}


def _docstring_lines(tree: ast.AST) -> set[int]:
    lines: set[int] = set()
    for node in ast.walk(tree):
        kinds = (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)
        if isinstance(node, kinds) and node.body:
            first = node.body[0]
            value = first.value if isinstance(first, ast.Expr) else None
            if isinstance(value, ast.Constant) and isinstance(value.value, str):
                lines.update(range(first.lineno, (first.end_lineno or first.lineno) + 1))
    return lines


def _message_lines(tree: ast.AST) -> set[int]:
    lines: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            name = getattr(node.func, "attr", getattr(node.func, "id", ""))
            if name in MESSAGES or name.endswith("Error"):
                lines.update(range(node.lineno, (node.end_lineno or node.lineno) + 1))
    return lines


def english_lines(source: str) -> int:
    """Lines holding a string literal with an English-looking word, as the module says."""
    tree = ast.parse(source)
    skipped = _docstring_lines(tree) | _message_lines(tree)
    strings = {tokenize.STRING, getattr(tokenize, "FSTRING_MIDDLE", tokenize.STRING)}
    lines: set[int] = set()
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type in strings and WORD.search(token.string):
            lines.update(range(token.start[0], token.end[0] + 1))
    return len(lines - skipped)


def _git(*args: str) -> str:
    return subprocess.run(["git", "-C", str(ROOT), *args], capture_output=True, text=True).stdout


def measure(rev: str) -> dict[str, int]:
    files = _git("ls-tree", "-r", "--name-only", rev, *FOLDERS).split()
    figures = dict.fromkeys(FOLDERS, 0) | {"rules (toml lines)": 0}
    for path in files:
        text = _git("show", f"{rev}:{path}")
        if path.endswith(".py"):
            folder = next(f for f in FOLDERS if path.startswith(f + "/"))
            figures[folder] += english_lines(text)
        elif path.endswith(".toml"):
            figures["rules (toml lines)"] += len(text.splitlines())
    return figures


def main() -> None:
    revs = sys.argv[1:] or ["4eec583", "HEAD"]
    print("| revision | language/ | write/ | code total | rules/*.toml lines |")
    print("|---|---:|---:|---:|---:|")
    for rev in revs:
        f = measure(rev)
        code = f["memman/language"] + f["memman/write"]
        print(
            f"| {rev} | {f['memman/language']} | {f['memman/write']} | {code} |"
            f" {f['rules (toml lines)']} |"
        )


if __name__ == "__main__":
    main()
