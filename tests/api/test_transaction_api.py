"""The scripting API: Transaction blocks, staged reads, multi-patch atomicity, policy tables."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

import patchtx
from patchtx.errors import ChangedSincePlanningError, PatchtxError, PolicyError


def snapshot(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file() and ".patchtx" not in p.parts}


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    (tmp_path / "src").mkdir()
    (tmp_path / "src/a.py").write_text("alpha = 1\nbeta = 2\n")
    (tmp_path / "src/b.py").write_text("gamma = 3\n")
    return tmp_path


def test_block_commits_everything_at_once(tree: Path) -> None:
    with patchtx.Transaction(tree) as tx:
        tx.write_text("src/new.py", "delta = 4\n")
        tx.apply_patch("*** Begin Patch\n*** Update File: src/a.py\n@@\n-beta = 2\n+beta = 20\n*** End Patch")
        tx.move("src/b.py", "lib/b.py")
        assert tx.read_text("src/a.py") == "alpha = 1\nbeta = 20\n"
        assert tx.exists("lib/b.py") and not tx.exists("src/b.py")
        assert (tree / "src/b.py").exists(), "nothing is written before the block ends"
    assert tx.result is not None and tx.result.summary == "A 1, M 1, D 0, R 1"
    assert snapshot(tree) == {"lib/b.py": b"gamma = 3\n", "src/a.py": b"alpha = 1\nbeta = 20\n",
                              "src/new.py": b"delta = 4\n"}


def test_exception_in_block_commits_nothing(tree: Path) -> None:
    before = snapshot(tree)
    with pytest.raises(KeyError):
        with patchtx.Transaction(tree) as tx:
            tx.write_text("src/a.py", "changed\n")
            tx.delete("src/b.py")
            raise KeyError("boom")
    assert snapshot(tree) == before
    assert not (tree / ".patchtx").exists()


def test_failed_patch_inside_block_stages_none_of_its_hunks(tree: Path) -> None:
    with patchtx.Transaction(tree) as tx:
        with pytest.raises(PatchtxError):
            tx.apply_patch("*** Begin Patch\n*** Add File: src/c.py\n+c = 5\n"
                           "*** Update File: src/a.py\n@@\n-nothere\n+x\n*** End Patch")
        assert not tx.exists("src/c.py"), "the failed patch's Add is not staged"
        tx.write_text("src/ok.py", "ok\n")
    assert (tree / "src/ok.py").exists() and not (tree / "src/c.py").exists()


def test_external_edit_between_staging_and_commit_aborts(tree: Path) -> None:
    with pytest.raises(ChangedSincePlanningError):
        with patchtx.Transaction(tree) as tx:
            tx.write_text("src/a.py", tx.read_text("src/a.py").upper())
            (tree / "src/a.py").write_text("edited by someone else\n")
    assert (tree / "src/a.py").read_text() == "edited by someone else\n"


def test_preview_shows_diffs_without_writing(tree: Path) -> None:
    tx = patchtx.Transaction(tree)
    tx.write_text("src/a.py", "alpha = 1\n")
    plan = tx.preview()
    assert plan.summary == "A 0, M 1, D 0, R 0"
    assert plan.targets[0].after == b"alpha = 1\n"
    assert (tree / "src/a.py").read_text() == "alpha = 1\nbeta = 2\n"
    tx.rollback()
    with pytest.raises(PatchtxError, match="already ended"):
        tx.write_text("src/a.py", "x")


def test_multi_patch_order_and_atomicity(tree: Path) -> None:
    add = "*** Begin Patch\n*** Add File: notes.md\n+one\n*** End Patch"
    edit = "*** Begin Patch\n*** Update File: notes.md\n@@\n-one\n+two\n*** End Patch"
    broken = "*** Begin Patch\n*** Update File: src/b.py\n@@\n-nope\n+x\n*** End Patch"
    before = snapshot(tree)
    with pytest.raises(PatchtxError):
        patchtx.apply_patch([add, edit, broken], tree)
    assert snapshot(tree) == before
    result = patchtx.apply_patch([add, edit], tree)
    assert result.summary == "A 1, M 0, D 0, R 0"
    assert (tree / "notes.md").read_text() == "two\n"


def test_workspace_policy_table(tree: Path) -> None:
    (tree / "pyproject.toml").write_text(
        '[tool.patchtx]\nallow-delete = false\nprotected = ["src/b.py", "*.lock"]\nmax-files = 2\n')
    with pytest.raises(PolicyError, match="deleting files is not allowed"):
        patchtx.apply_patch("*** Begin Patch\n*** Delete File: src/a.py\n*** End Patch", tree)
    with pytest.raises(PolicyError, match="protected by the pattern 'src/b.py'"):
        patchtx.apply_patch("*** Begin Patch\n*** Update File: src/b.py\n@@\n-gamma = 3\n+g = 3\n"
                            "*** End Patch", tree)
    with pytest.raises(PolicyError, match="protected by the pattern '\\*.lock'"):
        patchtx.apply_patch("*** Begin Patch\n*** Add File: deep/er/poetry.lock\n+x\n*** End Patch", tree)
    with pytest.raises(PolicyError, match="changes 3 files, more than the limit of 2"):
        patchtx.apply_patch("*** Begin Patch\n*** Add File: 1\n+\n*** Add File: 2\n+\n*** Add File: 3\n+\n"
                            "*** End Patch", tree)
    # The table is the workspace's: it tightens the caller's options, an explicit argument cannot
    # loosen it (issue 15: a workspace may only narrow what the host allows).
    with pytest.raises(PolicyError, match="deleting files is not allowed"):
        patchtx.apply_patch("*** Begin Patch\n*** Delete File: src/a.py\n*** End Patch", tree, allow_delete=True)
    assert (tree / "src/a.py").exists()


def test_invalid_policy_table_is_a_clear_error(tree: Path) -> None:
    (tree / "pyproject.toml").write_text("[tool.patchtx]\nallow-delete = 'no'\n")
    with pytest.raises(PolicyError, match="'allow-delete' must be true or false"):
        patchtx.plan_patch("*** Begin Patch\n*** Add File: x\n+\n*** End Patch", tree)


def test_max_patch_bytes(tree: Path) -> None:
    (tree / "pyproject.toml").write_text("[tool.patchtx]\nmax-patch-bytes = 40\n")
    with pytest.raises(PolicyError, match="more than the limit of 40"):
        patchtx.plan_patch("*** Begin Patch\n*** Add File: x\n+" + "y" * 50 + "\n*** End Patch", tree)


def test_mode_kept_through_transaction_write(tree: Path) -> None:
    os.chmod(tree / "src/a.py", 0o755)
    with patchtx.Transaction(tree) as tx:
        tx.write_text("src/a.py", "x = 1\n")
    assert (tree / "src/a.py").stat().st_mode & 0o777 == 0o755


@pytest.mark.parametrize("ending", ["commit", "rollback", "raise"])
def test_an_ended_transaction_holds_no_descriptors(tree: Path, ending: str) -> None:
    def open_descriptors() -> set[str]:
        return set(os.listdir("/proc/self/fd"))

    if not os.path.isdir("/proc/self/fd"):
        pytest.skip("no /proc/self/fd on this platform to count descriptors with")
    before = open_descriptors()
    tx = patchtx.Transaction(tree)
    tx.apply_patch("*** Begin Patch\n*** Update File: src/a.py\n@@\n-beta = 2\n+beta = 20\n*** End Patch")
    assert open_descriptors() != before  # reading the workspace keeps its folders open
    if ending == "raise":
        with pytest.raises(ValueError), tx:
            raise ValueError("the script failed")
    else:
        getattr(tx, ending)()
    assert open_descriptors() == before  # while tx itself is still alive
