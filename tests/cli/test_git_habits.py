"""git apply habits on patchtx's command line (issue 25): --check answers whether a patch applies
and writes nothing; git apply's options patchtx does not have are refused in one line each, with
nothing changed, never read as a file name."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

PATCHTX = str(Path(sys.executable).parent / "patchtx")
DIFF = "--- a/a.txt\n+++ b/a.txt\n@@ -1,2 +1,2 @@\n-one\n+ONE\n two\n"


def run(tree: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([PATCHTX, *argv], cwd=tree, input=DIFF, capture_output=True, text=True,
                          timeout=60)


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    (tmp_path / "a.txt").write_text("one\ntwo\n")
    return tmp_path


def test_apply_check_writes_nothing_and_says_whether_it_applies(tree: Path) -> None:
    done = run(tree, "apply", "--check", "-")
    assert done.returncode == 0, done.stderr
    assert (tree / "a.txt").read_text() == "one\ntwo\n"
    (tree / "a.txt").write_text("other\ntwo\n")
    done = run(tree, "apply", "--check", "-")
    assert done.returncode == 1 and "context_not_found" in done.stderr
    assert (tree / "a.txt").read_text() == "other\ntwo\n"


@pytest.mark.parametrize("option", ["-3", "--3way", "--index", "--cached", "--whitespace=fix",
                                    "--whitespace", "--reject"])
@pytest.mark.parametrize("command", ["apply", "check"])
def test_git_options_patchtx_lacks_are_refused_in_one_line(tree: Path, command: str, option: str) -> None:
    done = run(tree, command, option, "-")
    assert done.returncode == 2
    [line] = done.stderr.splitlines()
    assert f"{option.split('=')[0]} (git apply's " in line and "is not a patchtx option" in line
    assert line.endswith("Nothing was changed.")
    assert (tree / "a.txt").read_text() == "one\ntwo\n"


def test_a_refused_option_under_json_is_a_usage_error(tree: Path) -> None:
    done = run(tree, "apply", "--json", "--index", "-")
    assert done.returncode == 2
    error = json.loads(done.stdout)["error"]
    assert error["kind"] == "usage_error" and "git's index" in error["message"]


def test_two_commits_of_format_patch_on_one_file_list_it_once(tmp_path: Path) -> None:
    """Issue 42 item 10: `git format-patch` of two commits that change one file listed it twice
    under "M 1"; it is one modified file, its diff from the first commit's before to the second's
    after (text, --json and --stat alike)."""
    (tmp_path / "f.txt").write_text("a\nb\nc\n")
    two_commits = ("From 1 Mon Sep 17 00:00:00 2001\nSubject: [PATCH 1/2] one\n\n---\n"
                   "diff --git a/f.txt b/f.txt\n--- a/f.txt\n+++ b/f.txt\n@@ -1,3 +1,3 @@\n-a\n+A\n b\n c\n"
                   "-- \n2.39.0\n\n"
                   "From 2 Mon Sep 17 00:00:00 2001\nSubject: [PATCH 2/2] two\n\n---\n"
                   "diff --git a/f.txt b/f.txt\n--- a/f.txt\n+++ b/f.txt\n@@ -1,3 +1,3 @@\n A\n b\n-c\n+C\n"
                   "-- \n2.39.0\n")
    (tmp_path / "two.patch").write_text(two_commits)
    stat = subprocess.run([PATCHTX, "apply", "--stat", "two.patch"], cwd=tmp_path, capture_output=True,
                          text=True, timeout=60)
    assert stat.returncode == 0 and stat.stdout.count("f.txt") == 1, stat.stdout
    assert " 1 file changed, 2 insertions(+), 2 deletions(-)" in stat.stdout
    done = subprocess.run([PATCHTX, "apply", "--json", "two.patch"], cwd=tmp_path, capture_output=True,
                          text=True, timeout=60)
    payload = json.loads(done.stdout)
    assert payload["summary"] == "A 0, M 1, D 0, R 0"
    assert [entry["path"] for entry in payload["files"]] == ["f.txt"]
    assert "-a\n+A\n b\n-c\n+C\n" in payload["files"][0]["diff"]
    assert (tmp_path / "f.txt").read_text() == "A\nb\nC\n"
    shown = subprocess.run([PATCHTX, "apply", "-R", "two.patch"], cwd=tmp_path, capture_output=True,
                           text=True, timeout=60)
    assert shown.returncode == 0 and shown.stdout.count("  M f.txt") == 1, shown.stdout
