"""Regressions for bugs found in review: each test failed before its fix."""

from __future__ import annotations

import copy
import pickle
import subprocess
import sys
from pathlib import Path

import pytest

import patchtx
from patchtx.errors import NotARegularFileError, ParseError, PolicyError
from patchtx.policy import PlanOptions, protected_by


def test_a_chunk_repeating_its_anchor_line_edits_that_class_not_the_next(tmp_path: Path) -> None:
    # The hunk's lines occur in both classes below 'class A:'; 'class A:' occurs once and its
    # block (by indentation) holds one of them: the block rule takes that one.
    (tmp_path / "m.py").write_text("class A:\n    def f(self):\n        return 1\n\n"
                                   "class B:\n    def f(self):\n        return 1\n")
    patchtx.apply_patch("*** Begin Patch\n*** Update File: m.py\n@@ class A:\n@@     def f(self):\n"
                        "     def f(self):\n-        return 1\n+        return 2\n*** End Patch", tmp_path)
    assert (tmp_path / "m.py").read_text().split("class B:")[0].count("return 2") == 1
    assert (tmp_path / "m.py").read_text().endswith("class B:\n    def f(self):\n        return 1\n")


def test_a_file_and_a_folder_at_one_path_are_refused_at_planning(tmp_path: Path) -> None:
    with pytest.raises(NotARegularFileError):
        patchtx.plan_patch("*** Begin Patch\n*** Add File: x/y/z\n+1\n*** Add File: x/y\n+2\n*** End Patch",
                           tmp_path)


def test_plans_copy_and_pickle(tmp_path: Path) -> None:
    plan = patchtx.plan_patch("*** Begin Patch\n*** Add File: a\n+1\n*** End Patch", tmp_path)
    assert copy.deepcopy(plan) == plan
    assert pickle.loads(pickle.dumps(plan)) == plan


def test_lone_surrogate_in_a_patch_is_a_parse_error(tmp_path: Path) -> None:
    with pytest.raises(ParseError, match="not valid Unicode"):
        patchtx.plan_patch("*** Begin Patch\n*** Add File: a\n+\ud800\n*** End Patch", tmp_path)


def test_protected_names_cover_whole_folders_and_lists_are_accepted() -> None:
    options = PlanOptions().with_overrides(protected=["secrets", "migrations/"])
    assert protected_by(options, "secrets/key") == "secrets"
    assert protected_by(options, "app/migrations/0001.py") == "migrations/"
    assert protected_by(options, "secretsauce.txt") is None


def test_a_tool_key_that_is_not_a_table_is_a_clear_error(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text("# [tool.patchtx]\n[tool]\npatchtx = 5\n")
    with pytest.raises(PolicyError, match=r"\[tool.patchtx\] must be a table"):
        patchtx.plan_patch("*** Begin Patch\n*** Add File: a\n+1\n*** End Patch", tmp_path)


def test_apply_patch_with_stdin_closed_says_so(tmp_path: Path) -> None:
    done = subprocess.run(f"'{Path(sys.executable).parent / 'apply_patch'}' <&-", shell=True, cwd=tmp_path,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 1
    assert done.stderr.startswith("Error: Failed to read PATCH from stdin.")
