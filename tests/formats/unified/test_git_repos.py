"""What the project's history lacks, made in small git repositories: renames with edits, copies,
new and deleted files (empty ones too), mode changes, files without a final newline on either
side, names with spaces and non-ASCII characters. For each commit: patchtx applies git's diff
exactly as the commit made it, the diff patchtx prints gives the commit under ``git apply``, and
``--reverse`` of git's diff takes the commit back to its parent."""

from __future__ import annotations

from pathlib import Path

import pytest

from patchtx.api import apply_patch, plan_patch
from patchtx.errors import UnsupportedChangeError
from patchtx.render import diff_texts

from .support import Files, git, git_apply, needs_git, read_tree, write_tree

pytestmark = needs_git

BASE: Files = {
    "src/app.py": ("def main():\n    print('hello')\n    return 0\n\n\nif __name__ == '__main__':\n"
                   "    main()\n", "100644"),
    "src/util.py": ("".join(f"line {i}\n" for i in range(40)), "100644"),
    "tools/run.sh": ("#!/bin/sh\necho run\n", "100755"),
    "notes.txt": ("no final newline", "100644"),
    "old/only.txt": ("alone\n", "100644"),
    "empty.txt": ("", "100644"),
}

# Each commit: the files it writes (None: deletes) on top of BASE.
COMMITS: dict[str, dict[str, tuple[str, str] | None]] = {
    "rename-with-edits": {
        "src/util.py": None,
        "lib/helpers.py": (BASE["src/util.py"][0].replace("line 20\n", "line twenty\n"), "100644"),
    },
    "pure-rename-into-new-folder": {"old/only.txt": None, "new/place/only.txt": ("alone\n", "100644")},
    "new-and-deleted-files": {
        "tools/run.sh": None, "empty.txt": None,
        "docs/guide.md": ("# Guide\n\nRead me.\n", "100644"), "docs/empty.md": ("", "100644"),
    },
    "mode-changes": {
        "tools/run.sh": ("#!/bin/sh\necho run\n", "100644"),
        "src/app.py": (BASE["src/app.py"][0], "100755"),
        "bin/new-tool": ("#!/bin/sh\necho new\n", "100755"),
    },
    "mode-change-with-edit": {"tools/run.sh": ("#!/bin/sh\necho ran\n", "100644")},
    "final-newline-added": {"notes.txt": ("no final newline\n", "100644")},
    "final-newline-removed": {"src/app.py": (BASE["src/app.py"][0].rstrip("\n"), "100644")},
    "no-newline-on-both-sides": {"notes.txt": ("a final line without newline", "100644")},
    "unusual-names": {
        "with space/a b.txt": ("spaced\n", "100644"),
        "café/naïve.txt": ("accents\n", "100644"),
        "tab\tname.txt": ("tab\n", "100644"),
    },
    "copy-with-edit": {
        "src/util_copy.py": (BASE["src/util.py"][0].replace("line 3\n", "line three\n"), "100644"),
    },
    "many-hunks": {
        "src/util.py": ("".join(f"line {i}\n" if i % 9 else f"changed {i}\n" for i in range(40))
                        + "appended\n", "100644"),
    },
}


# What git's diff of each commit must hold, so that each case tests what it is named for.
MARKERS = {
    "rename-with-edits": "rename from src/util.py\nrename to lib/helpers.py\n",
    "pure-rename-into-new-folder": "similarity index 100%\nrename from old/only.txt",
    "new-and-deleted-files": "deleted file mode 100755",
    "mode-changes": "old mode 100755\nnew mode 100644",
    "mode-change-with-edit": "old mode 100755\nnew mode 100644\nindex",
    "final-newline-added": "-no final newline\n\\ No newline at end of file\n+no final newline\n",
    "final-newline-removed": "+    main()\n\\ No newline at end of file",
    "no-newline-on-both-sides": "\\ No newline at end of file\n+a final",
    "unusual-names": '"b/caf\\303\\251/na\\303\\257ve.txt"',
    "copy-with-edit": "copy from src/util.py\ncopy to src/util_copy.py",
    "many-hunks": "@@ -7,7 +7,7 @@",
}


def _commit(root: Path, files: Files) -> None:
    git(root, "add", "-A")
    git(root, "commit", "-q", "--allow-empty", "-m", "x")
    assert read_tree(root) == files


@pytest.fixture(params=sorted(COMMITS))
def history(request: pytest.FixtureRequest, tmp_path: Path) -> tuple[Files, Files, str]:
    """(parent files, commit files, git's diff of the commit)."""
    name = request.param
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q")
    write_tree(repo, BASE)
    _commit(repo, BASE)
    after = dict(BASE)
    for path, value in COMMITS[name].items():
        if value is None:
            del after[path]
            (repo / path).unlink()
        else:
            after[path] = value
    write_tree(repo, {p: v for p, v in after.items() if p not in BASE or BASE[p] != v})
    _commit(repo, after)
    diff = git(repo, "diff", "-M", "-C", "--find-copies-harder", "HEAD~1", "HEAD")
    assert MARKERS[name] in diff, f"git's diff for {name} lacks {MARKERS[name]!r}"
    return BASE, after, diff


def test_patchtx_applies_gits_diff(tmp_path: Path, history: tuple[Files, Files, str]) -> None:
    before, after, diff = history
    root = tmp_path / "work"
    root.mkdir()
    write_tree(root, before)
    apply_patch(diff, root, durable=False)
    assert read_tree(root) == after
    # Folders the diff emptied are gone, as git apply removes them.
    assert not any(p.is_dir() and not any(p.iterdir()) for p in root.rglob("*"))


def test_the_printed_diff_gives_the_commit(tmp_path: Path, history: tuple[Files, Files, str]) -> None:
    before, after, diff = history
    root = tmp_path / "work"
    root.mkdir()
    write_tree(root, before)
    printed = "".join(diff_texts(plan_patch(diff, root)))
    git_apply(root, printed)
    assert read_tree(root) == after


def test_reverse_takes_the_commit_back(tmp_path: Path, history: tuple[Files, Files, str]) -> None:
    before, after, diff = history
    root = tmp_path / "work"
    root.mkdir()
    write_tree(root, after)
    if "\ncopy from " in diff:  # refused: undoing a copy means deleting the copy
        with pytest.raises(UnsupportedChangeError, match="reverse the copy"):
            apply_patch(diff, root, durable=False, reverse=True)
        assert read_tree(root) == after
        return
    apply_patch(diff, root, durable=False, reverse=True)
    assert read_tree(root) == before
