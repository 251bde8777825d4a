"""Prompt templates are files: rendered with data, hashed for the audit trail, editable live."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from memman.llm.prompts import render

SHIPPED = Path(__file__).resolve().parents[1] / "prompts"


def test_an_edited_template_is_used_and_hashed_anew_without_a_restart(tmp_path):
    folder = tmp_path / "prompts"
    shutil.copytree(SHIPPED, folder)
    facts = [{"content": "User likes {{ tea }}", "date": "1 January 2026"}]
    context = {"memories": [{"label": None, "facts": facts}], "core": [], "left_out": 0}
    first = render("recall.j2", {**context, "right_now": []}, directory=str(folder))
    assert "User likes {{ tea }}" in first.text  # user text is data, never template syntax
    template = folder / "recall.j2"
    template.write_text("{{ memories | length }} memories\n", encoding="utf-8")
    stat = template.stat()
    os.utime(template, (stat.st_atime, stat.st_mtime + 5))  # a later edit, without sleeping
    second = render("recall.j2", {**context, "right_now": []}, directory=str(folder))
    assert second.text == "1 memories\n"
    assert second.template_hash != first.template_hash
