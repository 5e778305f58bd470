"""Issue 42 item 2: a written change prints what a person reads. The summary and the capped file
list always; the diffs when they are a screenful (MAX_SHOWN_DIFF_LINES) or on request
(-v/--diff); check shows them always; JSON keeps the full result."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from patchtx.cli.commands import MAX_LISTED_FILES, MAX_SHOWN_DIFF_LINES

PATCHTX = str(Path(sys.executable).parent / "patchtx")


def run(tree: Path, patch: str, *argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([PATCHTX, *argv, "-"], cwd=tree, input=patch, capture_output=True,
                          text=True, timeout=60)


def _many(tree: Path, files: int) -> str:
    """A diff changing one line in each of ``files`` files (6 diff lines each)."""
    patch = []
    for i in range(files):
        (tree / f"f{i}.txt").write_text("one\n")
        patch.append(f"--- a/f{i}.txt\n+++ b/f{i}.txt\n@@ -1 +1 @@\n-one\n+ONE\n")
    return "".join(patch)


def test_a_long_apply_prints_the_summary_and_the_capped_list_only(tmp_path: Path) -> None:
    done = run(tmp_path, _many(tmp_path, 100), "apply")
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "f99.txt").read_text() == "ONE\n"
    out = done.stdout.splitlines()
    assert out[0].startswith("Applied") or "M 100" in out[0]
    assert "@@" not in done.stdout and "+ONE" not in done.stdout
    assert "... and 80 more files" in done.stdout
    assert "lines of diff not shown: -v or --diff shows them" in out[-1]
    assert len(out) <= MAX_LISTED_FILES + 4


def test_diffs_on_request_and_when_short(tmp_path: Path) -> None:
    for flag in ("-v", "--diff"):
        tree = tmp_path / flag
        tree.mkdir()
        done = run(tree, _many(tree, 30), "apply", flag)
        assert done.returncode == 0, done.stderr
        assert done.stdout.count("+ONE\n") == 30
    short = tmp_path / "short"
    short.mkdir()
    files = MAX_SHOWN_DIFF_LINES // 8  # a git diff adds a `diff --git` line: under the threshold
    done = run(short, _many(short, files), "apply")
    assert done.returncode == 0 and done.stdout.count("+ONE\n") == files


def test_check_and_json_keep_everything(tmp_path: Path) -> None:
    patch = _many(tmp_path, 30)
    done = run(tmp_path, patch, "check")
    assert done.stdout.count("+ONE\n") == 30
    done = run(tmp_path, patch, "apply", "--json")
    result = json.loads(done.stdout)
    assert len(result["files"]) == 30 and all("+ONE" in f["diff"] for f in result["files"])


def test_diffs_within_is_the_rendered_diff_up_to_its_limit_and_none_past_it(tmp_path: Path) -> None:
    """The limit counts the rendered lines: a diff of exactly ``limit`` lines is shown, one line
    fewer allowed is not, whether the change is one file of many hunks (refused from its planned
    line ranges alone) or many small files (refused once the rendered lines pass the limit)."""
    from patchtx import plan_patch
    from patchtx.render import diff_texts, diffs_within

    (tmp_path / "big.txt").write_text("".join(f"line {i}\n" for i in range(400)))
    hunks = "".join(f"@@ -{i} +{i} @@\n-line {i - 1}\n+LINE {i - 1}\n" for i in range(1, 400, 10))
    one_file = plan_patch(f"--- a/big.txt\n+++ b/big.txt\n{hunks}", tmp_path)
    many_files = plan_patch(_many(tmp_path, 12), tmp_path)
    for plan in (one_file, many_files):
        whole = "".join(diff_texts(plan))
        length = whole.count("\n")
        assert diffs_within(plan, length) == whole
        assert diffs_within(plan, length - 1) is None
