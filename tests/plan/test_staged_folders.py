"""Folders while planning: those a failed patch implied are forgotten, staged files block the name
of a folder, and the folders a plan empties are found."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

import patchtx
from patchtx.errors import NotARegularFileError, PatchtxError


def test_a_failed_patch_forgets_the_folders_its_adds_implied(tmp_path: Path) -> None:
    with patchtx.Transaction(tmp_path) as tx:
        with pytest.raises(PatchtxError):
            tx.apply_patch("*** Begin Patch\n*** Add File: d/inner.txt\n+x\n"
                           "*** Delete File: missing.txt\n*** End Patch")
        # Nothing of the failed patch is staged, so 'd' may now be a file.
        tx.write_text("d", "a file\n")
    assert (tmp_path / "d").read_text() == "a file\n"


def test_a_staged_file_inside_a_folder_still_blocks_a_file_of_that_name(tmp_path: Path) -> None:
    with patchtx.Transaction(tmp_path) as tx:
        tx.write_text("d/inner.txt", "x\n")
        with pytest.raises(NotARegularFileError, match="inside a folder named"):
            tx.apply_patch("*** Begin Patch\n*** Add File: d\n+y\n*** End Patch")
        tx.delete("d/inner.txt")
        tx.apply_patch("*** Begin Patch\n*** Add File: d\n+y\n*** End Patch")
    assert (tmp_path / "d").read_text() == "y\n"


_TREE_PATHS = ["a", "a/b", "a/b/c", "a/bc", "a/b/d", "ab/x", "a-b/y", "a/b-c/z", "a/b/e/f", "q/r/s"]


@given(st.dictionaries(st.sampled_from(_TREE_PATHS), st.booleans(), max_size=7),
       st.sets(st.sampled_from(_TREE_PATHS)))
def test_emptied_folders_found_by_bisection_as_by_scanning_every_kept_path(
        effects: dict[str, bool], on_disk: set[str]) -> None:
    from patchtx.model import PathTarget
    from patchtx.options import PlanOptions
    from patchtx.plan.planner import Stager

    class View:
        def list_dir(self, rel: str) -> list[str]:
            prefix = rel + "/"
            return sorted({p[len(prefix):].split("/")[0] for p in on_disk if p.startswith(prefix)})

    # A path kept (True: written, maybe added, so not listed on disk) or removed (False), in any
    # order.
    targets = [PathTarget(p, b"x", b"y" if kept else None) for p, kept in effects.items()]
    stager = Stager(View(), PlanOptions())  # type: ignore[arg-type]
    # Definition: a folder holding a removed path is emptied when no kept path lies inside it
    # and every entry it lists is removed or an emptied folder (deepest first).
    removed = {t.path for t in targets if t.after is None}
    kept = [t.path for t in targets if t.after is not None]
    folders = {"/".join(p.split("/")[:d]) for p in removed for d in range(1, p.count("/") + 1)}
    emptied: set[str] = set()
    for folder in sorted(folders, key=lambda d: d.count("/"), reverse=True):
        prefix = folder + "/"
        if not any(p.startswith(prefix) for p in kept) and all(
                prefix + e in removed or prefix + e in emptied for e in View().list_dir(folder)):
            emptied.add(folder)
    assert stager.emptied_dirs(targets) == sorted(emptied, key=lambda d: (-d.count("/"), d))
