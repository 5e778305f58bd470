"""A refusal that names the model's own earlier edit (issue 37, item 12): a hunk whose lines were
changed by a recent transaction of the undo history (a model patching from its memory of the file
before its own last edit) is refused as ``context_not_found`` naming that transaction (its id and
time) and showing the lines as they stand now. The history is only read: a few of the newest
kept journals, only this user's signed ones (one copied from elsewhere is never named)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

import patchtx
from patchtx.agents.editor import TextEditor
from patchtx.errors import PatchtxError
from patchtx.txn.kept import recent_originals
from tests.security.surfaces import cli

CALC = "def total(items):\n    count = 0\n    for item in items:\n        count += item\n    return count\n"
USE_SUM = ("*** Begin Patch\n*** Update File: calc.py\n@@ def total(items):\n-    count = 0\n"
           "-    for item in items:\n-        count += item\n+    count = sum(items)\n*** End Patch\n")
FROM_MEMORY = ("*** Begin Patch\n*** Update File: calc.py\n@@\n     for item in items:\n"
               "-        count += item\n+        count += item * 2\n*** End Patch\n")


@pytest.fixture
def edited(tmp_path: Path) -> tuple[Path, str]:
    (tmp_path / "calc.py").write_text(CALC)
    done = patchtx.apply_patch(USE_SUM, tmp_path, durable=False, intent="sum the items")
    assert done.transaction_id is not None
    return tmp_path, done.transaction_id


def refusal(root: Path, patch: str = FROM_MEMORY) -> PatchtxError:
    with pytest.raises(PatchtxError) as info:
        patchtx.apply_patch(patch, root, durable=False)
    assert info.value.kind == "context_not_found"
    return info.value


def test_a_hunk_from_before_the_last_edit_names_it_and_shows_the_lines_now(edited: tuple[Path, str]) -> None:
    root, transaction = edited
    error = refusal(root)
    message = error.message
    assert f"before transaction {transaction} (committed 20" in message and "'sum the items'" in message
    assert "which changed these lines: it was written from the file before that edit" in message
    assert message.endswith("      2 |     count = sum(items)\n      3 |     return count")
    assert "No line of the file" not in message and "has the file changed" not in message
    assert error.details["earlier_transaction"]["id"] == transaction
    assert error.file_line == 1
    kind, out = cli(root, "apply", patch=FROM_MEMORY)  # (the command line's JSON names it too)
    assert kind == "context_not_found" and out["error"]["earlier_transaction"]["id"] == transaction
    assert (root / "calc.py").read_text() == CALC.replace(
        "    count = 0\n    for item in items:\n        count += item\n", "    count = sum(items)\n")


def test_the_editor_names_it_too(edited: tuple[Path, str]) -> None:
    root, transaction = edited
    with pytest.raises(PatchtxError) as info:
        TextEditor(root, durable=False).run("str_replace", "calc.py", old_str="        count += item",
                                            new_str="        count += item * 2")
    assert info.value.message.startswith("No replacement was performed, old_str")
    assert f"before transaction {transaction}" in info.value.message


def test_the_newest_of_several_edits_that_explains_the_miss_is_named(edited: tuple[Path, str]) -> None:
    root, first = edited
    second = patchtx.apply_patch("*** Begin Patch\n*** Update File: calc.py\n@@\n-    return count\n"
                                 "+    return count or 0\n*** End Patch\n", root, durable=False)
    # (the hunk matches the file before the first edit only: its lines are not those the second touched)
    error = refusal(root)
    assert f"before transaction {first}" in error.message and str(second.transaction_id) not in error.message


def test_a_change_the_history_already_made_is_said_to_be_in_place(tmp_path: Path) -> None:
    (tmp_path / "calc.py").write_text(CALC)
    delete = ("*** Begin Patch\n*** Update File: calc.py\n@@\n-    for item in items:\n"
              "-        count += item\n*** End Patch\n")
    done = patchtx.apply_patch(delete, tmp_path, durable=False)
    error = refusal(tmp_path, delete)  # (lines only removed: their absence proves no replay)
    assert f"before transaction {done.transaction_id}" in error.message
    assert "which made this very change: it is in place already" in error.message


def test_a_history_this_user_did_not_sign_is_never_named(edited: tuple[Path, str], tmp_path: Path) -> None:
    root, transaction = edited
    copy = tmp_path / "copy"
    shutil.copytree(root, copy, symlinks=True)  # (a repository may hold another's .patchtx)
    error = refusal(copy)
    assert transaction not in error.message and "earlier_transaction" not in error.details
    assert recent_originals(str(copy), "calc.py") == []


def test_without_history_the_miss_is_as_before(tmp_path: Path) -> None:
    (tmp_path / "calc.py").write_text(CALC)
    patchtx.apply_patch(USE_SUM, tmp_path, durable=False, history_count=0)
    error = refusal(tmp_path)
    assert "transaction" not in error.message and "earlier_transaction" not in error.details


def test_the_history_read_is_bounded(edited: tuple[Path, str]) -> None:
    root, transaction = edited
    for number in range(3):
        (root / f"other{number}.txt").write_text("x\n")
        patchtx.apply_patch(f"*** Begin Patch\n*** Update File: other{number}.txt\n-x\n+y\n*** End Patch\n",
                            root, durable=False)
    # The edit of calc.py is the fourth newest kept journal: read among 4, not among 3.
    assert [entry.transaction_id for entry, _ in recent_originals(str(root), "calc.py", scan=4)] == [transaction]
    assert recent_originals(str(root), "calc.py", scan=3) == []
    assert recent_originals(str(root), "calc.py", scan=4)[0][1] == CALC.encode()
