"""A roll back deletes only what patchtx can prove it wrote (issue 38, item 1 follow-up).

The roll back after a check puts every path the transaction touched back as it was; the folders
the patch created are removed. Before, the folders went *with their contents*: a failing check
that wrote a file into a folder the patch had created (a test's report, a cache, a user's note
written while the check ran) lost it, and the error said "Nothing was changed"; `patchtx recover`
after a kill while the check ran did the same to whatever the check, or the user since the kill,
had put there. Now a file in a place the patch created goes only if it holds what the patch wrote
there (its recorded hash); a created folder goes only once empty; anything else is left in place
and reported (``left_in_place``, the folders kept for it in ``kept_dirs``), and the error says so
instead of "Nothing was changed".
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

import patchtx
from patchtx.errors import NOTHING_CHANGED, VerifyFailedError
from patchtx.history import log
from patchtx.txn import escrow

from ..helpers import leftovers, snapshot

# Updates a.txt, adds sub/new/c.txt (two new folders, sub and sub/new), deletes old/b.txt.
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
CREATED = ("sub", "sub/new")
TOUCHED = ("a.txt", "old", "old/b.txt", "sub/new/c.txt")


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    (root / "old").mkdir(parents=True)
    (root / "a.txt").write_text("one\n")
    (root / "old" / "b.txt").write_text("bee\n")
    (root / "keep.txt").write_text("kept\n")
    return root


def files(root: Path) -> dict[str, Any]:
    return {k: v for k, v in snapshot(root).items() if not k.startswith(".patchtx")}


def no_copy_left(root: Path) -> bool:
    return not os.path.exists(escrow.folder_of(os.path.realpath(root)))


# What a failing check writes in the places the patch created: the check's files (kept byte for
# byte), what ``left_in_place`` names (the shallowest thing found that patchtx did not write), the
# created folders kept for them (deepest first), and every path under sub/ after the roll back.
WRITES: dict[str, tuple[str, dict[str, bytes], list[str], list[str], set[str]]] = {
    "a file beside the added one": (
        "echo keep > sub/new/user.txt",
        {"sub/new/user.txt": b"keep\n"}, ["sub/new/user.txt"], ["sub/new", "sub"],
        {"sub", "sub/new", "sub/new/user.txt"}),
    "a file in the outer new folder": (
        "echo keep > sub/user.txt",
        {"sub/user.txt": b"keep\n"}, ["sub/user.txt"], ["sub"],
        {"sub", "sub/user.txt"}),
    "a deeper folder of its own": (
        "mkdir -p sub/new/deeper/still && echo keep > sub/new/deeper/still/u.txt",
        {"sub/new/deeper/still/u.txt": b"keep\n"}, ["sub/new/deeper"], ["sub/new", "sub"],
        {"sub", "sub/new", "sub/new/deeper", "sub/new/deeper/still", "sub/new/deeper/still/u.txt"}),
    "the added file rewritten": (
        "echo mine > sub/new/c.txt",
        {"sub/new/c.txt": b"mine\n"}, ["sub/new/c.txt"], ["sub/new", "sub"],
        {"sub", "sub/new", "sub/new/c.txt"}),
    "a folder in the added file's place": (
        "rm sub/new/c.txt && mkdir sub/new/c.txt && echo keep > sub/new/c.txt/x",
        {"sub/new/c.txt/x": b"keep\n"}, ["sub/new/c.txt"], ["sub/new", "sub"],
        {"sub", "sub/new", "sub/new/c.txt", "sub/new/c.txt/x"}),
    "a link in a created folder's place": (
        "rm -rf sub/new && ln -s ../keep.txt sub/new",
        {}, ["sub/new"], ["sub"],
        {"sub", "sub/new"}),
}


@pytest.mark.parametrize("status", [1, 0], ids=["fails", "passes-having-changed-the-patch"])
@pytest.mark.parametrize("name", sorted(WRITES))
def test_a_failing_check_keeps_what_it_wrote_in_the_patchs_new_folders(tree: Path, name: str, status: int) -> None:
    command, kept, left, kept_dirs, under_sub = WRITES[name]
    if status == 0:
        # Exit 0 with the patch's own files as written keeps the change (tested elsewhere): here
        # the check also changes a.txt, so that the change is rolled back all the same.
        command += " && echo other > a.txt"
    before = files(tree)

    with pytest.raises(VerifyFailedError) as raised:
        patchtx.apply_patch(PATCH, tree, allow_delete=True, verify=f"{command}; exit {status}")

    after = files(tree)
    for path, data in kept.items():  # the check's files, byte for byte
        assert after[path][-1] == data, (path, after.get(path))
    assert {p: after.get(p) for p in before} == before  # what existed before: as before
    assert {p for p in after if p.startswith("sub")} == under_sub
    error = raised.value
    rolled_back = error.details["verify"]["rolled_back"]
    assert rolled_back["left_in_place"] == left
    assert rolled_back["kept_dirs"] == kept_dirs
    assert rolled_back["not_restored"] == []
    assert NOTHING_CHANGED not in error.message
    assert "left in place" in error.message.lower() and all(p in error.message for p in left)
    assert error.changed  # the workspace is not exactly as it was: the error must not say it is
    assert error.to_json()["changed"] is True
    if set(left) & set(error.details["verify"]["changed"]):  # never said to be put back
        assert not any(claim in error.message for claim in (
            "that file included", "those files included", "put back as they were", *(f"{p} included" for p in left),
            *(f"{p} put back" for p in left)))
    assert leftovers(tree) == [] and no_copy_left(tree) and log(tree) == []


def test_the_added_file_as_the_patch_wrote_it_still_goes_and_empty_new_folders_too(tree: Path) -> None:
    """What patchtx wrote (the added file, its hash recorded) goes, and the folders it created once
    empty: a failing check that writes nothing there leaves nothing behind, 'Nothing was changed'."""
    before = files(tree)

    with pytest.raises(VerifyFailedError) as raised:
        patchtx.apply_patch(PATCH, tree, allow_delete=True, verify="exit 1")

    assert files(tree) == before
    rolled_back = raised.value.details["verify"]["rolled_back"]
    assert rolled_back["left_in_place"] == [] and rolled_back["kept_dirs"] == []
    assert rolled_back["removed"] == ["sub/new/c.txt"] and rolled_back["removed_dirs"] == ["sub/new", "sub"]
    assert not raised.value.changed and NOTHING_CHANGED in raised.value.message


def test_the_brief_case_mkdir_p_into_a_new_folder(tree: Path) -> None:
    """`mkdir -p newdir && echo keep > newdir/user.txt; exit 1` where the patch creates newdir."""
    patch = "*** Begin Patch\n*** Add File: newdir/deep/n.txt\n+n\n*** End Patch\n"

    with pytest.raises(VerifyFailedError) as raised:
        patchtx.apply_patch(patch, tree, verify="mkdir -p newdir && echo keep > newdir/user.txt; exit 1")

    assert (tree / "newdir/user.txt").read_text() == "keep\n"
    assert not (tree / "newdir/deep").exists()  # the patch's file and its emptied folder went
    message = raised.value.message
    assert "Nothing was changed" not in message and "newdir/user.txt" in message
    assert raised.value.details["verify"]["rolled_back"]["left_in_place"] == ["newdir/user.txt"]


def _patchtx() -> list[str]:
    return [sys.executable, "-m", "patchtx"]


def _kill_while_checking(tree: Path, tmp_path: Path, check: str) -> None:
    patch = tmp_path / "change.patch"
    patch.write_text(PATCH)
    proc = subprocess.Popen([*_patchtx(), "apply", "--root", str(tree), "--verify",
                             f"{check} && touch running && exec sleep 30", str(patch)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 20
    while not (tree / "running").exists():
        assert time.monotonic() < deadline and proc.poll() is None, proc.communicate()
        time.sleep(0.02)
    assert (tree / "sub/new/c.txt").read_text() == "added\n"  # the change is in place while it runs
    proc.kill()
    proc.wait()
    assert proc.returncode == -9
    (tree / "running").unlink()


@pytest.mark.parametrize("then", ["recover", "apply"])
@pytest.mark.parametrize("deletes_state", [False, True], ids=["journal-in-place", "journal-deleted-by-the-check"])
def test_recovery_after_a_kill_during_the_check_keeps_the_files_in_the_patchs_new_folders(
        tree: Path, tmp_path: Path, then: str, deletes_state: bool) -> None:
    """SIGKILL while the check runs: the check had written into the folders the patch created, and
    the user writes there too before recovering. Recovery puts every touched path back, removes
    the added file (it holds what the patch wrote) and keeps everything else, saying so."""
    before = files(tree)
    check = "mkdir -p sub/new/deeper && echo check > sub/new/deeper/report.txt && echo note > sub/note.txt"
    if deletes_state:
        check = "rm -rf .patchtx && " + check
    _kill_while_checking(tree, tmp_path, check)
    (tree / "sub/new/after-the-kill.txt").write_text("the user kept working\n")

    if then == "recover":
        done = subprocess.run([*_patchtx(), "recover", "--root", str(tree), "--json"], capture_output=True, text=True)
        assert done.returncode == 0, done
        [txn] = json.loads(done.stdout)["transactions"]
        human = subprocess.run([*_patchtx(), "recover", "--root", str(tree)], capture_output=True, text=True)
        assert human.returncode == 0 and "Nothing to recover." in human.stdout
    else:
        other = tmp_path / "other.patch"
        other.write_text("*** Begin Patch\n*** Add File: z.txt\n+z\n*** End Patch\n")
        done = subprocess.run([*_patchtx(), "apply", "--root", str(tree), "--json", str(other)],
                              capture_output=True, text=True)
        assert done.returncode == 0, done
        [txn] = json.loads(done.stdout)["recovered"]
        (tree / "z.txt").unlink()
    after = files(tree)
    assert after["sub/new/deeper/report.txt"][-1] == b"check\n"
    assert after["sub/note.txt"][-1] == b"note\n"
    assert after["sub/new/after-the-kill.txt"][-1] == b"the user kept working\n"
    assert "sub/new/c.txt" not in after
    assert {p: after[p] for p in before} == before  # every path that existed: as before the patch
    assert txn["outcome"] == "rolled_back"
    assert txn["left_in_place"] == ["sub/new/after-the-kill.txt", "sub/new/deeper", "sub/note.txt"]
    assert txn["kept_dirs"] == ["sub/new", "sub"]
    assert txn["removed"] == ["sub/new/c.txt"]
    assert leftovers(tree) == [] and no_copy_left(tree)


def test_the_recovery_summary_says_what_was_left_in_place(tree: Path, tmp_path: Path) -> None:
    _kill_while_checking(tree, tmp_path, "echo keep > sub/new/user.txt")

    done = subprocess.run([*_patchtx(), "recover", "--root", str(tree)], capture_output=True, text=True)

    assert done.returncode == 0, done
    assert (tree / "sub/new/user.txt").read_text() == "keep\n"
    assert "Rolled back interrupted transaction" in done.stdout
    assert "sub/new/user.txt" in done.stdout and "left in place" in done.stdout.lower()
