"""Prompt templates are files: rendered with data, hashed for the audit trail, editable live."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from memman import MemoryManager
from memman.errors import ConfigError
from memman.llm.prompts import render

SHIPPED = Path(__file__).resolve().parents[1] / "prompts"


def test_an_edited_template_is_used_and_hashed_anew_without_a_restart(tmp_path):
    folder = tmp_path / "prompts"
    shutil.copytree(SHIPPED, folder)
    fact = {"content": "User likes {{ tea }}", "date": "1 January 2026"}
    context = {"memories": [{"newest": [fact], "earlier": []}], "core": [], "left_out": 0}
    first = render("recall.j2", {**context, "right_now": []}, directory=str(folder))
    assert "User likes {{ tea }}" in first.text  # user text is data, never template syntax
    template = folder / "recall.j2"
    template.write_text("{{ memories | length }} memories\n", encoding="utf-8")
    stat = template.stat()
    os.utime(template, (stat.st_atime, stat.st_mtime + 5))  # a later edit, without sleeping
    second = render("recall.j2", {**context, "right_now": []}, directory=str(folder))
    assert second.text == "1 memories\n"
    assert second.template_hash != first.template_hash


def test_a_prompts_folder_that_cannot_serve_is_refused_when_the_manager_opens(tmp_path):
    # A typo in MEMMAN_PROMPTS_DIR, or a folder holding only the edited template, used to
    # fail at the first ambiguous fact (or context call), long after start-up.
    partial = tmp_path / "partial"
    partial.mkdir()
    shutil.copy(SHIPPED / "update_memory.j2", partial)
    broken = tmp_path / "broken"
    shutil.copytree(SHIPPED, broken)
    (broken / "merge.j2").write_text("{{ unclosed\n", encoding="utf-8")
    for folder, why in (
        (tmp_path / "typo", "does not exist"),
        (partial, "lacks _decision_rules.j2, extract_and_decide.j2, extract_facts.j2"),
        (broken, "merge.j2"),
    ):
        with pytest.raises(ConfigError, match=why):
            MemoryManager(str(tmp_path / "m.db"), prompts_dir=str(folder))
    assert not (tmp_path / "m.db").exists()
    shutil.copytree(SHIPPED, tmp_path / "whole")
    MemoryManager(str(tmp_path / "m.db"), prompts_dir=str(tmp_path / "whole")).close()
