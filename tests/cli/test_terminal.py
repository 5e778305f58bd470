"""What a person sees on a terminal (issue 18): colour on a TTY only (--color, NO_COLOR),
``--stat`` as ``git apply --stat`` prints it, output proportional with -q / --no-diff, wording for
a person, and a reader that leaves early (``patchtx log | head -1``)."""

from __future__ import annotations

import os
import pty
import select
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import patchtx
from patchtx.render import diff_texts, diffstat

PATCHTX = str(Path(sys.executable).parent / "patchtx")
UPDATE = "*** Begin Patch\n*** Update File: a.txt\n@@\n-one\n+ONE\n*** End Patch\n"
GREEN_ADDITION = "\033[32m+ONE\033[0m"


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    (tmp_path / "a.txt").write_text("one\ntwo\n")
    (tmp_path / "p.patch").write_text(UPDATE)
    return tmp_path


def on_a_pty(argv: list[str], cwd: Path, **env: str) -> tuple[int, str]:
    """Run with standard output on a pseudo-terminal; what it showed there."""
    master, slave = pty.openpty()
    child = subprocess.Popen(argv, cwd=cwd, stdin=subprocess.DEVNULL, stdout=slave,
                             stderr=subprocess.PIPE, env={**os.environ, **env})
    os.close(slave)
    seen = b""
    while True:
        try:
            ready, _, _ = select.select([master], [], [], 30)
            chunk = os.read(master, 65536) if ready else b""
        except OSError:  # the child closed the terminal
            break
        if not chunk:
            break
        seen += chunk
    child.wait(timeout=30)
    os.close(master)
    return child.returncode, seen.decode("utf-8", "replace").replace("\r\n", "\n")


def piped(argv: list[str], cwd: Path, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, cwd=cwd, capture_output=True, text=True, timeout=60,
                          env={**os.environ, **env})


def test_diffs_are_coloured_on_a_terminal_only(tree: Path) -> None:
    code, shown = on_a_pty([PATCHTX, "check", "p.patch"], tree, NO_COLOR="")
    assert code == 0 and GREEN_ADDITION in shown and "\033[31m-one\033[0m" in shown
    assert "\033[1m--- a/a.txt\033[0m" in shown and "\033[36m@@" in shown
    assert shown.startswith("Would apply: A 0, M 1, D 0, R 0\n")  # the summary is never coloured
    assert GREEN_ADDITION not in on_a_pty([PATCHTX, "check", "p.patch"], tree, NO_COLOR="1")[1]
    assert GREEN_ADDITION not in on_a_pty([PATCHTX, "check", "--color=never", "p.patch"], tree)[1]
    assert GREEN_ADDITION not in piped([PATCHTX, "check", "p.patch"], tree, NO_COLOR="").stdout
    assert GREEN_ADDITION in piped([PATCHTX, "check", "--color", "always", "p.patch"], tree).stdout
    assert GREEN_ADDITION in piped([PATCHTX, "check", "--color=always", "p.patch"], tree, NO_COLOR="1").stdout
    bogus = piped([PATCHTX, "check", "--color=sometimes", "p.patch"], tree)
    assert bogus.returncode == 2 and "invalid choice: 'sometimes'" in bogus.stderr


def test_undo_output_is_coloured_on_a_terminal_too(tree: Path) -> None:
    patchtx.apply_patch(UPDATE, tree)
    code, shown = on_a_pty([PATCHTX, "undo"], tree, NO_COLOR="")
    assert code == 0 and "\033[32m+one\033[0m" in shown and "\033[31m-ONE\033[0m" in shown


STAT_PATCHES = [
    UPDATE,
    "*** Begin Patch\n*** Add File: n\u00e9w.txt\n+1\n+2\n*** Delete File: gone.txt\n*** End Patch\n",
    "*** Begin Patch\n*** Update File: big.txt\n@@\n" + "".join(f"-{i}\n" for i in range(1, 151))
    + "+one\n*** Update File: a.txt\n@@\n-one\n+uno\n+dos\n*** End Patch\n",
    "*** Begin Patch\n*** Add File: deep/" + "folder/" * 8 + "a_rather_long_file_name.py\n+x\n"
    "*** Update File: a.txt\n@@\n-one\n+1\n*** End Patch\n",
]


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed to compare with")
@pytest.mark.parametrize("patch", STAT_PATCHES)
def test_stat_is_what_git_apply_stat_prints(tree: Path, patch: str) -> None:
    (tree / "gone.txt").write_text("bye\n")
    (tree / "big.txt").write_text("".join(f"{i}\n" for i in range(1, 201)))
    plan = patchtx.plan_patch(patch, tree)
    (tree / "same.diff").write_text("".join(diff_texts(plan)))
    git = subprocess.run(["git", "apply", "--stat", "same.diff"], cwd=tree, capture_output=True,
                         text=True, timeout=60)
    assert git.returncode == 0, git.stderr
    assert diffstat(plan) == git.stdout
    (tree / "p.patch").write_text(patch)
    shown = piped([PATCHTX, "check", "--stat", "p.patch"], tree)
    assert shown.returncode == 0
    assert shown.stdout == "Would apply: " + plan.summary + "\n" + git.stdout


def test_no_diff_and_quiet_keep_the_output_proportional(tmp_path: Path) -> None:
    count = 300
    patch = "*** Begin Patch\n" + "".join(f"*** Add File: f{i:03}.txt\n+{i}\n" for i in range(count)) + \
        "*** End Patch\n"
    (tmp_path / "many.patch").write_text(patch)
    listed = piped([PATCHTX, "check", "--no-diff", "many.patch"], tmp_path)
    lines = listed.stdout.splitlines()
    assert lines[0] == f"Would apply: A {count}, M 0, D 0, R 0"
    assert lines[1:21] == [f"  A f{i:03}.txt" for i in range(20)]
    assert lines[21:] == [f"  ... and {count - 20} more files (--stat or --json lists them all)"]
    quiet = piped([PATCHTX, "apply", "-q", "many.patch"], tmp_path)
    assert quiet.returncode == 0 and quiet.stdout == f"Applied: A {count}, M 0, D 0, R 0\n"
    assert quiet.stderr == ""
    small = piped([PATCHTX, "undo", "--no-diff"], tmp_path)
    assert len(small.stdout.splitlines()) == 1 + 1 + 20 + 1


def test_refusals_speak_to_a_person(tree: Path) -> None:
    (tree / "gone.txt").write_text("x\n")
    (tree / "d.patch").write_text("*** Begin Patch\n*** Delete File: gone.txt\n*** End Patch\n")
    refused = piped([PATCHTX, "apply", "--no-delete", "d.patch"], tree)
    assert refused.returncode == 1
    assert "--no-delete" in refused.stderr and "allow_delete" not in refused.stderr
    assert "Resend" not in refused.stderr and "Nothing was changed." in refused.stderr
    as_json = piped([PATCHTX, "apply", "--no-delete", "--json", "d.patch"], tree)
    assert '"permission": "allow_delete"' in as_json.stdout


def _into_a_closed_pipe(argv: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    """Standard output is a pipe nobody reads any more (``... | head -1`` after head left)."""
    reader, writer = os.pipe()
    os.close(reader)
    try:
        return subprocess.run(argv, cwd=cwd, stdout=writer, stderr=subprocess.PIPE, text=True, timeout=60)
    finally:
        os.close(writer)


def test_a_closed_pipe_ends_quietly_with_the_real_status(tree: Path) -> None:
    applied = patchtx.apply_patch(UPDATE, tree)
    log = _into_a_closed_pipe([PATCHTX, "log"], tree)
    assert (log.returncode, log.stderr) == (0, "")
    undo = _into_a_closed_pipe([PATCHTX, "undo"], tree)
    assert (undo.returncode, undo.stderr) == (0, "")
    assert (tree / "a.txt").read_text() == "one\ntwo\n"  # the undo was committed
    assert patchtx.history.log(tree)[0].undoes == applied.transaction_id
    failing = _into_a_closed_pipe([PATCHTX, "undo", "nope"], tree)
    assert failing.returncode == 1 and "[unknown_transaction]" in failing.stderr
    shell = subprocess.run(f"'{PATCHTX}' log | head -1; echo \"${{PIPESTATUS[0]}}\"", shell=True,
                           executable="/bin/bash", cwd=tree, capture_output=True, text=True, timeout=60)
    assert shell.stdout.splitlines()[-1] == "0" and shell.stderr == ""


def test_stat_of_a_move_counts_only_its_hunks(tmp_path: Path) -> None:
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "old.txt").write_text("a\nb\n")
    plan = patchtx.plan_patch("*** Begin Patch\n*** Update File: docs/old.txt\n*** Move to: docs/new.txt\n"
                              "@@\n a\n-b\n+B\n*** End Patch\n", tmp_path)
    assert "rename from" in diff_texts(plan)[0]  # git-style headers before the hunk: not counted
    # As git apply --stat prints the same rename (git 2.39): the new name, its line counts.
    assert diffstat(plan) == (" docs/new.txt |    2 +-\n"
                              " 1 file changed, 1 insertion(+), 1 deletion(-)\n")


def test_apply_patch_with_stdin_closed_says_so(tmp_path: Path) -> None:
    done = subprocess.run(f"'{Path(sys.executable).parent / 'apply_patch'}' <&-", shell=True, cwd=tmp_path,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 1
    assert done.stderr.startswith("Error: Failed to read PATCH from stdin.")


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed to compare with")
def test_stat_of_a_git_diff_is_what_git_apply_stat_prints(tmp_path: Path) -> None:
    # A copy with an edit, a delete, a mode change alone, an add, a rename with an edit, an edit.
    from tests.formats.unified.support import BEFORE, EVERY_OPERATION, write_tree

    write_tree(tmp_path, BEFORE)
    (tmp_path / "all.diff").write_text(EVERY_OPERATION)
    plan = patchtx.plan_patch(EVERY_OPERATION, tmp_path)
    (tmp_path / "same.diff").write_text("".join(diff_texts(plan)))
    for diff in ("all.diff", "same.diff"):  # the diff given, and patchtx's own rendering of it
        git = subprocess.run(["git", "apply", "--stat", diff], cwd=tmp_path, capture_output=True,
                             text=True, timeout=60)
        assert git.returncode == 0, git.stderr
        assert diffstat(plan) == git.stdout
    shown = piped([PATCHTX, "check", "--stat", "all.diff"], tmp_path)
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout == "Would apply: A 2, M 2, D 1, R 1\n" + diffstat(plan)
    assert " m |    0 \n" in shown.stdout and " d |    2 +-\n" in shown.stdout


def test_colours_follow_the_git_header_and_the_hunks() -> None:
    from patchtx.render import coloured_diff

    text = ("Applied: A 0, M 1, D 0, R 1\n  R a -> b\ndiff --git a/a b/b\nold mode 100644\n"
            "new mode 100755\nrename from a\nrename to b\n--- a/a\n+++ b/b\n@@ -1,2 +1,2 @@\n"
            "--- a rule\n+++ a sum\n kept\n")
    bold, red, green, cyan, reset = "\033[1m", "\033[31m", "\033[32m", "\033[36m", "\033[0m"
    assert coloured_diff(text).splitlines() == [
        "Applied: A 0, M 1, D 0, R 1", "  R a -> b",
        *(f"{bold}{line}{reset}" for line in ("diff --git a/a b/b", "old mode 100644", "new mode 100755",
                                               "rename from a", "rename to b", "--- a/a", "+++ b/b")),
        f"{cyan}@@ -1,2 +1,2 @@{reset}",
        f"{red}--- a rule{reset}",  # a removed line, not a header, however it starts
        f"{green}+++ a sum{reset}", " kept"]


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed to compare with")
@pytest.mark.parametrize("inside", ["\r", "\x0c", "\x1c", "\x85", "\u2028"])
def test_stat_counts_git_lines_whatever_a_line_holds(tmp_path: Path, inside: str) -> None:
    """A context or changed line holding a CR, a form feed or U+2028 followed by '-' or '+' is one
    line to git; the stat once counted the text after such a character as a line of its own."""
    (tmp_path / "f.txt").write_bytes(f"keep{inside}-not removed\nold\nx{inside}+y\n".encode())
    with patchtx.Transaction(tmp_path) as tx:
        tx.write_bytes("f.txt", f"keep{inside}-not removed\nnew{inside}-z\nx{inside}+y\n".encode())
        plan = tx.preview()
        tx.rollback()
    diff = "".join(diff_texts(plan))
    git = subprocess.run(["git", "apply", "--stat", "-"], cwd=tmp_path, input=diff.encode(),
                         capture_output=True, timeout=60)
    assert git.returncode == 0, git.stderr
    assert diffstat(plan) == git.stdout.decode() == " f.txt |    2 +-\n 1 file changed, 1 insertion(+), 1 deletion(-)\n"


@pytest.mark.parametrize("name", ["x\u200btxt.exe", "nb\u00a0space.txt", "tab\tname.txt"])
def test_a_file_name_that_would_disguise_its_report_line_is_quoted(tmp_path: Path, name: str) -> None:
    """A patch chooses its paths: a zero-width space, a no-break space or a tab in one, printed raw,
    could make the report line show another name than the file written. (A CR, an escape sequence,
    a C1 control, U+2028 or a bidirectional override is refused in a path before anything is
    reported: tests/security/test_boundary.py.)"""
    patch = f"*** Begin Patch\n*** Add File: {name}\n+x\n*** End Patch\n"
    from patchtx.result import human_report

    report = human_report(patchtx.Result(patchtx.plan_patch(patch, tmp_path), committed=False))
    listed = report.splitlines()[1]
    assert listed.isprintable() and listed.startswith('  A "') and "\\" in listed
