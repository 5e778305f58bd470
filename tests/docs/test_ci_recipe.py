"""docs/ci.md: the CI step is run as written, in a real git repository, for the outcomes a bot
meets: the patch applies (only the change is committed), the job runs again (a no-op), the code
moved on (warning, nothing changed), the patch is broken (error, nothing changed)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

DOC = (Path(__file__).resolve().parents[2] / "docs" / "ci.md").read_text(encoding="utf-8")
[STEP] = re.findall(r"^```bash ci-step\n(.*?)^```$", DOC, re.S | re.M)
FIX = "*** Begin Patch\n*** Update File: app.py\n@@\n-    return 1\n+    return 2\n*** End Patch\n"


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True, text=True).stdout


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q")
    git(root, "config", "user.name", "fix bot")
    git(root, "config", "user.email", "bot@example.invalid")
    (root / "app.py").write_text("def answer():\n    return 1\n")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "start")
    return root


def run_step(repo: Path, patch: str) -> tuple[subprocess.CompletedProcess[str], str]:
    (repo / "fix.patch").write_text(patch)
    outputs = repo.parent / "github_output"
    outputs.write_text("")
    env = {**os.environ, "FIX_TITLE": "Return 2 from answer()", "RUNNER_TEMP": str(repo.parent),
           "GITHUB_OUTPUT": str(outputs),
           "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    done = subprocess.run(["bash", "-c", STEP], cwd=repo, env=env, capture_output=True, text=True, timeout=120)
    return done, outputs.read_text()


def test_a_fix_that_applies_is_committed_with_its_transaction(repo: Path) -> None:
    (repo / ".git" / "info").mkdir(exist_ok=True)
    done, outputs = run_step(repo, FIX)
    assert done.returncode == 0, done.stderr
    assert outputs == "applied=true\n"
    subject, body = git(repo, "log", "-1", "--format=%s%n%b").split("\n", 1)
    assert subject == "Return 2 from answer()"
    transaction = re.search(r"transaction (\S+)\.", body)
    assert transaction is not None
    import patchtx

    assert patchtx.history.log(repo)[0].transaction_id == transaction.group(1)
    assert (repo / "app.py").read_text() == "def answer():\n    return 2\n"
    assert git(repo, "show", "--stat", "--format=", "HEAD").split("|")[0].strip() == "app.py"
    committed = git(repo, "ls-files")
    assert ".patchtx" not in committed and "fix.patch" not in committed
    # Only the patch file is left untracked (.patchtx/ is excluded, the change committed).
    assert git(repo, "status", "--porcelain") == "?? fix.patch\n"


def test_a_rerun_of_the_job_is_a_no_op(repo: Path) -> None:
    (repo / "notes.txt").write_text("a file of someone else's\n")
    done, _ = run_step(repo, FIX)
    assert done.returncode == 0, done.stderr
    head = git(repo, "rev-parse", "HEAD")
    assert "notes.txt" not in git(repo, "show", "--stat", "--format=", "HEAD")
    again, outputs = run_step(repo, FIX)
    assert again.returncode == 0, again.stderr
    assert outputs == "applied=already\n"
    assert "::notice title=patch already applied::" in again.stdout
    assert git(repo, "rev-parse", "HEAD") == head
    assert (repo / "app.py").read_text() == "def answer():\n    return 2\n"


@pytest.mark.parametrize("header", ["@@ def answer():\n", "@@\n", ""], ids=["anchor", "bare", "no-header"])
def test_a_rerun_of_an_insertion_written_as_a_replacement_is_a_no_op(header: str, repo: Path) -> None:
    # Issue 37, item 6: the new side stands over the old line once applied, so the re-run finds
    # it in place instead of writing 'log(1)' again.
    fix = (f"*** Begin Patch\n*** Update File: app.py\n{header}-    return 1\n+    log(1)\n"
           "+    return 1\n*** End Patch\n")
    done, outputs = run_step(repo, fix)
    assert done.returncode == 0 and outputs == "applied=true\n", done.stderr
    head = git(repo, "rev-parse", "HEAD")
    again, outputs = run_step(repo, fix)
    assert again.returncode == 0 and outputs == "applied=already\n", again.stdout + again.stderr
    assert git(repo, "rev-parse", "HEAD") == head
    assert (repo / "app.py").read_text() == "def answer():\n    log(1)\n    return 1\n"


def test_a_renamed_file_is_committed_under_both_names(repo: Path) -> None:
    move = FIX.replace("*** Update File: app.py\n", "*** Update File: app.py\n*** Move to: lib/app.py\n")
    done, outputs = run_step(repo, move)
    assert done.returncode == 0, done.stderr
    assert outputs == "applied=true\n"
    assert git(repo, "ls-files").split() == ["lib/app.py"]
    assert git(repo, "status", "--porcelain") == "?? fix.patch\n"


def test_a_stale_fix_is_a_warning_and_changes_nothing(repo: Path) -> None:
    (repo / "app.py").write_text("def answer():\n    return 42\n")
    git(repo, "commit", "-q", "-am", "moved on")
    head = git(repo, "rev-parse", "HEAD")
    done, outputs = run_step(repo, FIX)
    assert done.returncode == 0, done.stderr
    assert outputs == "applied=false\n"
    assert done.stdout.splitlines() == ["Nothing to recover.", done.stdout.splitlines()[1]]
    assert done.stdout.splitlines()[1].startswith(
        "::warning title=patch is stale (context_not_found)::Failed to find expected lines in ")
    assert "%0A" in done.stdout  # the message's line breaks, as a workflow command writes them
    assert git(repo, "rev-parse", "HEAD") == head
    assert (repo / "app.py").read_text() == "def answer():\n    return 42\n"


def test_a_broken_fix_fails_the_job_and_changes_nothing(repo: Path) -> None:
    head = git(repo, "rev-parse", "HEAD")
    done, outputs = run_step(repo, FIX.replace("*** Update File", "*** Frobnicate File"))
    assert done.returncode == 1
    assert outputs == "applied=false\n"
    assert done.stdout.splitlines()[1].startswith("::error title=patch refused (parse_error)::")
    assert git(repo, "rev-parse", "HEAD") == head
    assert (repo / "app.py").read_text() == "def answer():\n    return 1\n"


def test_the_workflow_runs_the_step_with_the_title() -> None:
    [workflow] = re.findall(r"^```yaml\n(.*?)^```$", DOC, re.S | re.M)
    assert "FIX_TITLE: ${{ inputs.title }}" in workflow
    assert "bash .github/patchtx-apply.sh" in workflow
    assert "steps.apply.outputs.applied == 'true'" in workflow
