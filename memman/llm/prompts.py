"""Prompt templates are files (`prompts/*.j2`); this module finds and renders them.

Search order: `MEMMAN_PROMPTS_DIR` / the `prompts_dir` setting, then the copy a regular
install carries inside the package, then the repository's top-level `prompts/` (source
checkouts and editable installs).
"""

from __future__ import annotations

import functools
import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jinja2

from memman.errors import ConfigError

_PACKAGE_DIR = Path(__file__).resolve().parent.parent  # memman/, where a wheel carries prompts/


def prompts_dir(override: str | None = None) -> Path:
    if override:
        path = Path(override)
        if not path.is_dir():
            raise ConfigError(f"prompts directory does not exist: {path}")
        return path
    for candidate in (_PACKAGE_DIR / "prompts", _PACKAGE_DIR.parent / "prompts"):
        if candidate.is_dir():
            return candidate
    raise ConfigError("cannot find memman's prompts directory; set MEMMAN_PROMPTS_DIR")


def check_folder(directory: str) -> None:
    """A configured prompts folder must hold every shipped template, each one parsing: a typo
    in the path or a folder with only the edited template would otherwise fail at the first
    ambiguous fact or context call, long after start-up. Checked when a manager opens."""
    folder = prompts_dir(directory)
    names = sorted(path.name for path in prompts_dir().glob("*.j2"))
    missing = [name for name in names if not (folder / name).is_file()]
    if missing:
        raise ConfigError(
            f"prompts directory {folder} lacks {', '.join(missing)}: copy the whole shipped"
            " folder, then edit"
        )
    for name in names:
        try:
            _environment(folder).get_template(name)
        except (OSError, jinja2.TemplateError) as error:
            raise ConfigError(f"cannot read prompt {folder / name}: {error}") from error


@dataclass(frozen=True)
class RenderedPrompt:
    text: str
    template: str  # file name, recorded in the audit trail
    template_hash: str  # first 12 hex digits of sha256 of the template source


@functools.lru_cache(maxsize=16)
def _environment(folder: Path) -> jinja2.Environment:
    """One environment per prompts folder: templates compile once, not on every LLM call.

    Jinja's loader still checks each template's modification time, so an edited prompt is
    picked up without a restart.
    """
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(folder),
        undefined=jinja2.StrictUndefined,
        autoescape=False,
        keep_trailing_newline=True,
    )
    # `quote` renders user text as a JSON string: delimited, one line, readable Unicode.
    env.filters["quote"] = lambda value: json.dumps(value, ensure_ascii=False)
    return env


def render(name: str, context: dict[str, Any], *, directory: str | None = None) -> RenderedPrompt:
    """Render a template with a typed context; user text is passed as data, never as template."""
    folder = prompts_dir(directory)
    try:
        source = (folder / name).read_text(encoding="utf-8")
        text = _environment(folder).get_template(name).render(**context)
    except (OSError, jinja2.TemplateError) as error:
        raise ConfigError(f"cannot render prompt {folder / name}: {error}") from error
    return RenderedPrompt(text, name, hashlib.sha256(source.encode()).hexdigest()[:12])
