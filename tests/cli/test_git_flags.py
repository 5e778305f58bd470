"""Issue 42 item 3: git apply's --stat, --numstat and --summary show without applying (--apply
does both, as git), print what git prints; an option patchtx apply does not take is answered with
patchtx apply's usage and the nearest option."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

PATCHTX = str(Path(sys.executable).parent / "patchtx")
DIFF = ("diff --git a/a.txt b/a.txt\n--- a/a.txt\n+++ b/a.txt\n@@ -1,2 +1,2 @@\n-one\n+ONE\n two\n"
        "diff --git a/d/old.txt b/d/new.txt\nsimilarity index 100%\nrename from d/old.txt\n"
        "rename to d/new.txt\n"
        "diff --git a/gone.txt b/gone.txt\ndeleted file mode 100644\n--- a/gone.txt\n+++ /dev/null\n"
        "@@ -1 +0,0 @@\n-bye\n"
        "diff --git a/new.txt b/new.txt\nnew file mode 100755\n--- /dev/null\n+++ b/new.txt\n"
        "@@ -0,0 +1,2 @@\n+x\n+y\n")


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    (tmp_path / "a.txt").write_text("one\ntwo\n")
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "old.txt").write_text("same\n")
    (tmp_path / "gone.txt").write_text("bye\n")
    (tmp_path / "p.diff").write_text(DIFF)
    return tmp_path


def run(tree: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([PATCHTX, *argv], cwd=tree, capture_output=True, text=True, timeout=60)


def _git(tree: Path, *argv: str) -> str:
    done = subprocess.run(["git", "apply", *argv, "p.diff"], cwd=tree, capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.mark.parametrize("flags", [["--stat"], ["--numstat"], ["--summary"],
                                   ["--stat", "--numstat", "--summary"]])
def test_show_flags_write_nothing(tree: Path, flags: list[str]) -> None:
    done = run(tree, "apply", *flags, "p.diff")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("Would apply: ")
    assert (tree / "a.txt").read_text() == "one\ntwo\n" and not (tree / "new.txt").exists()


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed to compare with")
@pytest.mark.parametrize("flag", ["--numstat", "--summary"])
def test_numstat_and_summary_are_what_git_prints(tree: Path, flag: str) -> None:
    done = run(tree, "apply", flag, "p.diff")
    assert done.stdout.split("\n", 1)[1] == _git(tree, flag)


def test_apply_with_a_show_flag_does_both(tree: Path) -> None:
    done = run(tree, "apply", "--stat", "--apply", "p.diff")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("Applied: ") and " 4 files changed" in done.stdout
    assert (tree / "a.txt").read_text() == "ONE\ntwo\n" and (tree / "new.txt").exists()


def test_an_unknown_option_gets_apply_usage_and_the_nearest_option(tree: Path) -> None:
    done = run(tree, "apply", "--numstatt", "p.diff")
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.startswith("usage: patchtx apply ")
    assert done.stderr.endswith("patchtx apply: error: unrecognized arguments: --numstatt "
                                "(did you mean --numstat?)\n")
    assert (tree / "a.txt").read_text() == "one\ntwo\n"
