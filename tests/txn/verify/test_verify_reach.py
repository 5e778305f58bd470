"""What a verify command does to the workspace cannot undo its roll back (issue 38, item 1).

The check runs inside the transaction, in the workspace, with the journal published. Before, a
check that cleaned ignored files (``git clean -xfdq``) deleted ``.patchtx/`` with the journal and
the before-images: patchtx reported "rolled back ... Nothing was changed" while the rejected change
stayed, and the undo history was gone; a check that turned a patched file into a symbolic link or
a folder was reported restored, and was not. Now the commit holds every before-image itself (the
plan's bytes in memory, a copy outside the workspace for recovery: ``txn/escrow.py``), puts the
journal folder back before settling the outcome, and puts every touched path back by kind.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

import patchtx
from patchtx.errors import FilesystemError, VerifyFailedError
from patchtx.history import log, undo
from patchtx.txn import escrow, recover
from patchtx.txn.fsops import FileSystemOps

from ..helpers import leftovers, snapshot

# Updates a.txt, adds sub/new/c.txt (two new folders), deletes old/b.txt (emptying old/).
PATCH = """*** Begin Patch
*** Update File: a.txt
@@
-one
+ONE
*** Add File: sub/new/c.txt
+added
*** Delete File: old/b.txt
*** End Patch
"""


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    (root / "old").mkdir(parents=True)
    (root / "a.txt").write_text("one\n")
    os.chmod(root / "a.txt", 0o640)
    (root / "old" / "b.txt").write_text("bee\n")
    (root / "keep.txt").write_text("kept\n")
    return root


def files(root: Path) -> dict[str, Any]:
    """The tree without patchtx's own folder (and git's, which a check may use)."""
    return {k: v for k, v in snapshot(root).items() if not k.startswith((".patchtx", ".git"))}


def no_copy_left(root: Path) -> bool:
    return not os.path.exists(escrow.folder_of(os.path.realpath(root)))


def git_repo(root: Path) -> None:
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    subprocess.run(["git", "-C", str(root), "add", "-A"], check=True)
    subprocess.run(["git", "-C", str(root), "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "t"],
                   check=True)


needs_git = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")


@needs_git
def test_a_failing_check_that_cleans_ignored_files_still_rolls_back_everything(tree: Path) -> None:
    """The attack of the issue: `git clean -xfdq; exit 1` deleted .patchtx/ (its .gitignore is
    `*`): 'rolled back', yet a.txt said ONE, c.txt stood and b.txt was gone."""
    git_repo(tree)
    patchtx.apply_patch("*** Begin Patch\n*** Add File: earlier.txt\n+e\n*** End Patch\n", tree)
    (tree / "earlier.txt").unlink()  # (an earlier kept change, whose entry the check deletes)
    subprocess.run(["git", "-C", str(tree), "status", "--short"], check=True, capture_output=True)
    before = files(tree)

    with pytest.raises(VerifyFailedError) as raised:
        patchtx.apply_patch(PATCH, tree, allow_delete=True, verify="git clean -xfdq; exit 1")

    assert files(tree) == before  # every path as before the patch, by bytes, mode and kind
    error = raised.value
    assert not error.changed and "Nothing was changed" in error.message
    verify = error.details["verify"]
    assert any(p.endswith(".journal") for p in verify["state_restored"])
    assert "put them back from its own copy" in error.message
    assert set(verify["rolled_back"]["restored"]) == {"a.txt", "old/b.txt"}
    assert verify["rolled_back"]["not_restored"] == []
    assert leftovers(tree) == [] and no_copy_left(tree)
    assert log(tree) == []  # the earlier entry went with the check's clean: none listed that is gone


@needs_git
def test_a_passing_check_that_deleted_the_state_folder_keeps_a_durable_commit_and_an_honest_history(
        tree: Path) -> None:
    git_repo(tree)
    before = files(tree)

    check = "git add -A && git clean -xfdq && grep -q ONE a.txt"
    result = patchtx.apply_patch(PATCH, tree, allow_delete=True, verify=check)

    assert result.verify is not None and result.verify.passed
    assert (tree / "a.txt").read_text() == "ONE\n" and (tree / "sub/new/c.txt").read_text() == "added\n"
    assert result.verify.state_restored  # the journal and its before-images, put back before the mark
    assert "state_restored" in result.to_json()["verify"]
    assert [e.transaction_id for e in log(tree)] == [result.transaction_id]
    assert leftovers(tree) == [] and no_copy_left(tree)
    undo(tree)  # the entry the history lists can be undone: its before-images are whole
    assert files(tree) == before


CHECKS = {
    # What the check does to the paths the patch touched, then its exit status.
    "a patched file made a symbolic link out": 'ln -sf "$OUTSIDE" a.swap && mv -f a.swap a.txt',
    "a patched file made a folder": "rm a.txt && mkdir -p a.txt/deep && echo x > a.txt/deep/f",
    "a patched file made another file": "cp a.txt a.swap && mv a.swap a.txt",
    "a patched file's mode changed": "chmod 600 a.txt",
    "an added file made a folder": "rm sub/new/c.txt && mkdir sub/new/c.txt && touch sub/new/c.txt/x",
    "an added file's folders removed": "rm -rf sub",
    "a created folder filled": "touch sub/new/cache.bin sub/junk",
    "a deleted file made a symbolic link": 'ln -s "$OUTSIDE" old',
    "the state folder deleted too": 'rm -rf .patchtx && ln -sf "$OUTSIDE" a.txt',
    "the state folder made a link": 'rm -rf .patchtx && ln -s "$OUTSIDE_DIR" .patchtx',
    "the before-images altered": 'for f in .patchtx/journal/*.before; do echo evil > "$f"; done; chmod 000 a.txt',
}


LEFT_IN_PLACE = {
    "a created folder filled": (["sub/junk", "sub/new/cache.bin"], ["sub/new", "sub"]),
    "an added file made a folder": (["sub/new/c.txt"], ["sub/new", "sub"]),
}
"""Checks that write into the places the patch created: what they wrote there is not the patch's,
so the roll back leaves it, with the created folders that hold it, and names it (patchtx deletes
only what it can prove it wrote; tests/txn/verify/test_verify_keeps_foreign.py)."""


LEAVES_THE_PATCH = {"a created folder filled", "a patched file made another file", "the state folder made a link"}
"""Checks that leave every path the patch wrote as it wrote it (bytes, mode, presence): with exit
status 0 they pass, and the change is kept (what they wrote beside it is theirs)."""


@pytest.mark.parametrize("status", [1, 0], ids=["fails", "passes"])
@pytest.mark.parametrize("name", sorted(CHECKS))
def test_whatever_the_check_does_every_touched_path_is_put_back_by_kind(
        tree: Path, tmp_path: Path, name: str, status: int) -> None:
    """Exit 1, or exit 0 having changed what the patch wrote (never kept): every path the patch
    touched as before it, by kind (a file a file, with its bytes and mode), nothing written
    outside, the journal and the copy outside gone."""
    outside = tmp_path / "outside.txt"
    outside.write_text("outside\n")
    (tmp_path / "outside-dir").mkdir()
    before = files(tree)
    env = {"OUTSIDE": str(outside), "OUTSIDE_DIR": str(tmp_path / "outside-dir")}
    command = f"{CHECKS[name]}; exit {status}"

    if status == 0 and name in LEAVES_THE_PATCH:
        result = _apply_with(env, lambda: patchtx.apply_patch(PATCH, tree, allow_delete=True, verify=command))
        assert result.verify is not None and result.verify.passed
        assert (tree / "a.txt").read_text() == "ONE\n" and (tree / "sub/new/c.txt").read_text() == "added\n"
        assert not (tree / "old").exists()
        assert [e.transaction_id for e in log(tree)] == [result.transaction_id]
        assert outside.read_text() == "outside\n" and list((tmp_path / "outside-dir").iterdir()) == []
        assert leftovers(tree) == [] and no_copy_left(tree)
        return
    with pytest.raises(VerifyFailedError) as raised:
        _apply_with(env, lambda: patchtx.apply_patch(PATCH, tree, allow_delete=True, verify=command))

    after = files(tree)
    touched = {"a.txt", "old", "old/b.txt", "sub", "sub/new", "sub/new/c.txt"}
    left, kept_dirs = LEFT_IN_PLACE.get(name, ([], []))
    if left:
        touched -= {"sub", "sub/new", "sub/new/c.txt"}
        assert {p for p in after if p.startswith("sub")} == {
            *kept_dirs, *(p for p in after for k in left if p == k or p.startswith(k + "/"))}
    else:
        assert not any(p.startswith("sub") for p in after)
    assert {p: after.get(p) for p in touched} == {p: before.get(p) for p in touched}
    assert outside.read_text() == "outside\n" and list((tmp_path / "outside-dir").iterdir()) == []
    rolled_back = raised.value.details["verify"]["rolled_back"]
    assert rolled_back["not_restored"] == []
    assert rolled_back["left_in_place"] == left and rolled_back["kept_dirs"] == kept_dirs
    assert raised.value.changed == bool(left)
    assert leftovers(tree) == [] and no_copy_left(tree)


def _apply_with(env: dict[str, str], call: Any) -> Any:
    saved = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    try:
        return call()
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def test_a_path_the_check_made_unremovable_is_named_and_recover_finishes_later(tree: Path) -> None:
    """The roll back cannot remove what the check left at a.txt (EPERM on it, as for an immutable
    file): the error names the path and says the journal was kept; once the cause is gone,
    `recover` (here: the filesystem working again) puts everything back."""

    class Stuck(FileSystemOps):
        def _perform(self, call: Any, action: Any) -> Any:
            if call.op in ("unlink", "rmdir") and call.path.startswith("a.txt"):
                raise OSError(1, "Operation not permitted", call.path)
            return super()._perform(call, action)

    before = files(tree)
    plan = patchtx.plan_patch(PATCH, tree, allow_delete=True)
    from patchtx.txn import commit
    from patchtx.txn.verify import Verifier

    with pytest.raises(FilesystemError) as raised:
        commit(plan, fs=Stuck(), check=Verifier("rm a.txt && mkdir a.txt && exit 1", 30))
    assert raised.value.changed and "a.txt" in raised.value.message
    assert "patchtx recover" in raised.value.hint
    assert os.path.isdir(tree / "a.txt")

    report = recover(str(tree))
    assert [t.outcome for t in report.transactions] == ["rolled_back"]
    assert files(tree) == before and leftovers(tree) == [] and no_copy_left(tree)


@pytest.mark.parametrize("chmod", ["", "chmod 600 twin.txt && "], ids=["bytes", "bytes and mode"])
def test_a_hard_linked_file_the_check_replaced_gets_its_original_back_under_every_name(
        tree: Path, chmod: str) -> None:
    """a.txt has another name (twin.txt): the commit rewrites the file in place, so that both names
    see the change. The check puts a new file at a.txt: the roll back puts the original back at
    a.txt, and, through the descriptor the commit held on the file it rewrote, under twin.txt too
    (which otherwise kept the rejected bytes), its mode too when the check changed it (a mutant
    without that fchmod survived the mutation run)."""
    os.link(tree / "a.txt", tree / "twin.txt")
    before = files(tree)

    with pytest.raises(VerifyFailedError) as raised:
        patchtx.apply_patch(PATCH, tree, allow_delete=True,
                            verify=f"grep -q ONE twin.txt && {chmod}cp a.txt a.new && mv a.new a.txt; exit 1")

    assert (tree / "twin.txt").read_text() == "one\n" and (tree / "a.txt").read_text() == "one\n"
    after = files(tree)
    assert after["twin.txt"] == before["twin.txt"] and after["a.txt"] == before["a.txt"]
    assert "a.txt" in raised.value.details["verify"]["rolled_back"]["restored"]
    assert leftovers(tree) == [] and no_copy_left(tree)


def _patchtx() -> list[str]:
    return [sys.executable, "-m", "patchtx"]


@pytest.mark.parametrize("then", ["recover", "apply"])
def test_a_kill_while_the_check_runs_after_it_deleted_the_journal_is_recovered(
        tree: Path, tmp_path: Path, then: str) -> None:
    """The check deletes .patchtx/ and makes a.txt a link out; patchtx is SIGKILLed while it still
    runs. The journal is gone from the workspace: recovery finds the copy outside it (`patchtx
    recover`, or the next commit's own recovery) and puts every path back."""
    outside = tmp_path / "outside.txt"
    outside.write_text("outside\n")
    before = files(tree)
    patch = tmp_path / "change.patch"
    patch.write_text(PATCH)
    check = f'rm -rf .patchtx && ln -sf "{outside}" a.txt && touch running && exec sleep 30'
    proc = subprocess.Popen([*_patchtx(), "apply", "--root", str(tree), "--verify", check,
                             str(patch)], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 20
    while not (tree / "running").exists():
        assert time.monotonic() < deadline and proc.poll() is None, proc.communicate()
        time.sleep(0.02)
    proc.kill()
    proc.wait()
    (tree / "running").unlink()
    assert not (tree / ".patchtx").exists() and os.path.islink(tree / "a.txt")

    if then == "recover":
        done = subprocess.run([*_patchtx(), "recover", "--root", str(tree)], capture_output=True, text=True)
        assert done.returncode == 0 and "Rolled back interrupted transaction" in done.stdout, done
    else:
        other = tmp_path / "other.patch"
        other.write_text("*** Begin Patch\n*** Add File: z.txt\n+z\n*** End Patch\n")
        done = subprocess.run([*_patchtx(), "apply", "--root", str(tree), str(other)], capture_output=True, text=True)
        assert done.returncode == 0 and "rolled back interrupted transaction" in done.stdout, done
        (tree / "z.txt").unlink()
    assert files(tree) == before
    assert outside.read_text() == "outside\n"
    assert leftovers(tree) == [] and no_copy_left(tree)
