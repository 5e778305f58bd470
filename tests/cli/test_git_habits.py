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
