"""The documentation as the tests read it: README.md and the pages under docs/.

Examples are fenced blocks. An HTML comment on the line before a fence speaks to the tests
(and renders as nothing on GitHub or the site):

    <!-- example: requires langgraph -->         run it where that module imports, else skip
    <!-- example: not run (needs a server) -->   shown, never executed
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DOCS = REPO / "docs"
PAGES = [REPO / "README.md", *sorted(DOCS.glob("*.md"))]

_FENCE = re.compile(r"^```(\w*)\n(.*?)^```\n", re.M | re.S)
_MARK = re.compile(r"<!-- example: (requires (?P<module>[\w.]+)|not run.*?) -->\n$")


def read(page: str) -> str:
    """A page's text by its path from the repository root: "README.md", "docs/mem0.md"."""
    return (REPO / page).read_text(encoding="utf-8")


def section(page: str, heading: str) -> str:
    """The text under `## heading` (or `# heading`) up to the next heading of level 2."""
    text = read(page)
    start = re.search(rf"^#{{1,2}} {re.escape(heading)}\n", text, re.M)
    assert start, f"{page} has no heading {heading!r}"
    rest = text[start.end() :]
    end = re.search(r"^## ", rest, re.M)
    return rest[: end.start()] if end else rest


def blocks(text: str, lang: str) -> list[str]:
    """The code of every fenced block of `lang` in `text`, in order."""
    return [m.group(2) for m in _FENCE.finditer(text) if m.group(1) == lang]


@dataclass(frozen=True)
class Example:
    page: Path
    line: int
    code: str
    requires: str | None  # a module the example needs (an extra)
    run: bool

    @property
    def id(self) -> str:
        return f"{self.page.relative_to(REPO)}:{self.line}"


def examples(lang: str = "python") -> list[Example]:
    """Every fenced `lang` block of README.md and docs/*.md, with what its marker says."""
    found = []
    for page in PAGES:
        text = page.read_text(encoding="utf-8")
        for m in _FENCE.finditer(text):
            if m.group(1) != lang:
                continue
            before = text[: m.start()]
            mark = _MARK.search(before[-200:])
            found.append(
                Example(
                    page=page,
                    line=before.count("\n") + 1,
                    code=m.group(2),
                    requires=mark.group("module") if mark else None,
                    run=not (mark and mark.group(0).startswith("<!-- example: not run")),
                )
            )
    return found
