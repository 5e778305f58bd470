"""Issue 42 item 6/7: an empty patch input gets git apply's words, "No valid patches in input", on
patchtx apply (the apply_patch drop-in keeps Codex's message: parity); a diff applied from a
subdirectory of the repository it was made in is told to give --root with the folder its paths
start at, not "-p 0"."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

import patchtx
from patchtx.errors import FileNotFoundPatchError

PATCHTX = str(Path(sys.executable).parent / "patchtx")


@pytest.mark.parametrize("given", ["", "\n  \n"])
def test_an_empty_patch_is_no_valid_patches_in_input(tmp_path: Path, given: str) -> None:
    done = subprocess.run([PATCHTX, "apply", "-"], cwd=tmp_path, input=given, capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 1
    assert done.stderr.startswith("patchtx: error [parse_error]: No valid patches in input")
    assert "End Patch'" not in done.stderr.split("Give", 1)[0]
    assert "Nothing was changed." in done.stderr


DIFF = "diff --git a/pkg/inner/f.txt b/pkg/inner/f.txt\n--- a/pkg/inner/f.txt\n+++ b/pkg/inner/f.txt\n" \
       "@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n"


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    (tmp_path / ".git").mkdir()  # (the top of a repository: how far up the hint looks)
    (tmp_path / "pkg" / "inner").mkdir(parents=True)
    (tmp_path / "pkg" / "inner" / "f.txt").write_text("a\nb\nc\n")
    (tmp_path / "fix.diff").write_text(DIFF)
    return tmp_path


@pytest.mark.parametrize(("subdir", "parent"), [("pkg", ".."), ("pkg/inner", "../..")])
def test_a_diff_applied_from_a_subdirectory_is_told_the_root(repo: Path, subdir: str, parent: str) -> None:
    done = subprocess.run([PATCHTX, "apply", str(repo / "fix.diff")], cwd=repo / subdir, capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 1 and "[file_not_found]" in done.stderr
    assert f"give --root {parent}." in done.stderr and "-p 0" not in done.stderr
    assert "`root` argument" not in done.stderr  # (the library's words)
    assert (repo / "pkg" / "inner" / "f.txt").read_text() == "a\nb\nc\n"
    fixed = subprocess.run([PATCHTX, "apply", "--root", parent, str(repo / "fix.diff")], cwd=repo / subdir,
                           capture_output=True, text=True, timeout=60)
    assert fixed.returncode == 0, fixed.stderr
    assert (repo / "pkg" / "inner" / "f.txt").read_text() == "a\nB\nc\n"


def test_the_library_names_the_folder_absolute_when_the_caller_is_elsewhere(repo: Path) -> None:
    with pytest.raises(FileNotFoundPatchError) as raised:
        patchtx.apply_patch(DIFF, repo / "pkg")
    assert f"give --root {repo} (the `root` argument)" in str(raised.value)


def test_no_parent_hint_outside_a_repository_or_when_no_parent_holds_the_file(tmp_path: Path) -> None:
    (tmp_path / "pkg" / "inner").mkdir(parents=True)
    (tmp_path / "pkg" / "inner" / "f.txt").write_text("a\nb\nc\n")
    with pytest.raises(FileNotFoundPatchError) as raised:  # no .git above: the search stops at once
        patchtx.apply_patch(DIFF, tmp_path / "pkg")
    assert "--root" not in str(raised.value) and "-p 0" in str(raised.value)
    (tmp_path / ".git").mkdir()
    with pytest.raises(FileNotFoundPatchError) as raised:  # a repository, no such file in it
        patchtx.apply_patch(DIFF.replace("inner/f.txt", "inner/g.txt"), tmp_path / "pkg")
    assert "--root" not in str(raised.value)
