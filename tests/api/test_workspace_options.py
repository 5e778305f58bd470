"""The workspace's [tool.patchtx] options as the planner reads them."""

from __future__ import annotations

from pathlib import Path

import pytest

import patchtx
from patchtx.errors import PolicyError
from patchtx.options import PlanOptions
from patchtx.workspace.policy import protected_by


def test_protected_names_cover_whole_folders_and_lists_are_accepted() -> None:
    options = PlanOptions(protected=("secrets", "migrations/"))
    assert protected_by(options, "secrets/key") == "secrets"
    assert protected_by(options, "app/migrations/0001.py") == "migrations/"
    assert protected_by(options, "secretsauce.txt") is None


def test_a_tool_key_that_is_not_a_table_is_a_clear_error(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text("# [tool.patchtx]\n[tool]\npatchtx = 5\n")
    with pytest.raises(PolicyError, match=r"\[tool.patchtx\] must be a table"):
        patchtx.plan_patch("*** Begin Patch\n*** Add File: a\n+1\n*** End Patch", tmp_path)
