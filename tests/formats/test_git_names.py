"""A backslash in a unified diff's name is a character of the name, as git and GNU patch read it
(on POSIX); the formats a model writes still refuse it (a Windows path meant elsewhere)."""

from __future__ import annotations

from pathlib import Path

import pytest

import patchtx
from patchtx.render import diff_texts
from patchtx.workspace.paths import BACKSLASH_IS_A_CHARACTER, path_problem

pytestmark = pytest.mark.skipif(not BACKSLASH_IS_A_CHARACTER, reason="a backslash separates folders here")

CREATE = ('diff --git "a/new\\\\name.txt" "b/new\\\\name.txt"\nnew file mode 100644\n'
          '--- /dev/null\n+++ "b/new\\\\name.txt"\n@@ -0,0 +1 @@\n+after\n')


def test_a_git_diff_creates_edits_and_undoes_a_name_with_a_backslash(tmp_path: Path) -> None:
    result = patchtx.apply_patch(CREATE, tmp_path)
    assert (tmp_path / "new\\name.txt").read_text() == "after\n"
    assert '"b/new\\\\name.txt"' in "".join(diff_texts(result.plan))  # (quoted, as git quotes it)
    patchtx.apply_patch("--- new\\name.txt\n+++ new\\name.txt\n@@ -1 +1 @@\n-after\n+again\n",
                        tmp_path, strip=0)
    assert (tmp_path / "new\\name.txt").read_text() == "again\n"
    patchtx.history.undo(tmp_path)
    patchtx.history.undo(tmp_path)
    assert not (tmp_path / "new\\name.txt").exists()
    assert path_problem("new\\name.txt") is None


@pytest.mark.parametrize("patch", [
    "*** Begin Patch\n*** Add File: sub\\x.txt\n+x\n*** End Patch\n",
    "sub\\x.txt\n```\n<<<<<<< SEARCH\n=======\nx\n>>>>>>> REPLACE\n```\n",
])
def test_the_formats_a_model_writes_refuse_a_backslash(tmp_path: Path, patch: str) -> None:
    with pytest.raises(patchtx.PatchtxError) as caught:
        patchtx.apply_patch(patch, tmp_path)
    assert caught.value.kind == "unsafe_path" and "backslash" in caught.value.message
    assert list(tmp_path.iterdir()) == []
