"""One tool call, however it arrives: real transactions on a real tree, the root as the boundary,
the workspace's policy as a ceiling, and the result shapes hosts rely on."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from agents_support import snapshot

from patchtx.agents.tool_call import apply_patch_call, resolve_workspace_root, run_tool_call
from patchtx.errors import UnsafePathError

EDIT_APP = ("*** Begin Patch\n*** Update File: app.py\n@@ def main():\n-    print('hello')\n"
            "+    print('bye')\n*** End Patch\n")
DELETE_NOTES = "*** Begin Patch\n*** Delete File: notes.txt\n*** End Patch\n"
MOVE_NOTES = "*** Begin Patch\n*** Update File: notes.txt\n*** Move to: docs/notes.txt\n one\n*** End Patch\n"


def files(root: Path) -> dict[str, bytes | None]:
    """The tree as the user sees it (patchtx's own state folder left out)."""
    return {k: v for k, v in snapshot(root).items() if not k.startswith(".patchtx")}


def test_apply_writes_and_reports_what_it_wrote(tree: Path) -> None:
    patch = EDIT_APP.replace("*** End Patch", "*** Add File: pkg/new.py\n+NEW = True\n*** End Patch")
    outcome = apply_patch_call(patch, str(tree))
    assert outcome.ok
    transaction = outcome.payload.pop("transaction")
    assert isinstance(transaction, str) and transaction in outcome.text
    assert outcome.payload == {
        "ok": True, "dry_run": False, "summary": "A 1, M 1, D 0, R 0",
        "counts": {"A": 1, "M": 1, "D": 0, "R": 0}, "recovered": None, "intent": None, "repairs": [],
        "syntax": {"mode": "refuse", "files": [  # the agent surfaces' default: refuse
            {"path": "app.py", "status": "ok", "language": "python", "errors": [], "reason": None},
            {"path": "pkg/new.py", "status": "ok", "language": "python", "errors": [], "reason": None}]},
        "verify": None, "error": None,
        "files": [
            {"path": "app.py", "status": "modified",
             "diff": "diff --git a/app.py b/app.py\n--- a/app.py\n+++ b/app.py\n@@ -1,2 +1,2 @@\n def main():\n"
                     "-    print('hello')\n+    print('bye')\n"},
            {"path": "pkg/new.py", "status": "added",
             "diff": "diff --git a/pkg/new.py b/pkg/new.py\nnew file mode 100644\n"
                     "--- /dev/null\n+++ b/pkg/new.py\n@@ -0,0 +1 @@\n+NEW = True\n"},
        ]}
    assert (tree / "app.py").read_text() == "def main():\n    print('bye')\n"
    assert (tree / "pkg" / "new.py").read_text() == "NEW = True\n"
    assert outcome.text.startswith("Applied: A 1, M 1, D 0, R 0\n  M app.py\n  A pkg/new.py\n"
                                   f"Transaction {transaction} (the undo tool reverts it).\n"
                                   "diff --git a/app.py b/app.py\n--- a/app.py\n")


def test_each_diff_is_rendered_once_for_both_the_payload_and_the_text(
        tree: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import patchtx.render as render

    rendered: list[str] = []
    real = render.unified_diff

    def counting(change, context=3):  # type: ignore[no-untyped-def]
        rendered.append(change.path)
        return real(change, context)

    monkeypatch.setattr(render, "unified_diff", counting)
    patch = EDIT_APP.replace("*** End Patch", "*** Add File: pkg/new.py\n+NEW = True\n*** End Patch")
    outcome = apply_patch_call(patch, str(tree))
    assert outcome.ok
    assert rendered == ["app.py", "pkg/new.py"]  # a big diff costs real time: not twice
    diffs = [entry["diff"] for entry in outcome.payload["files"]]
    assert outcome.text.endswith("".join(diffs)) and diffs[0].startswith("diff --git a/app.py b/app.py\n--- a/app.py")


def test_dry_run_writes_nothing_at_all(tree: Path) -> None:
    before = snapshot(tree)
    outcome = apply_patch_call(EDIT_APP, str(tree), dry_run=True)
    assert outcome.payload["ok"] and outcome.payload["dry_run"] is True
    assert outcome.payload["summary"] == "A 0, M 1, D 0, R 0"
    assert outcome.text.startswith("Dry run: nothing was written.\nWould apply: A 0, M 1, D 0, R 0\n")
    assert snapshot(tree) == before  # not even a .patchtx folder


def test_a_later_failure_leaves_the_tree_unchanged(tree: Path) -> None:
    before = files(tree)
    patch = EDIT_APP.replace("*** End Patch", "*** Update File: notes.txt\n-four\n+FOUR\n*** End Patch")
    outcome = apply_patch_call(patch, str(tree))
    assert outcome.payload["ok"] is False and outcome.payload["error"]["kind"] == "context_not_found"
    assert outcome.payload["files"] == [] and outcome.payload["transaction"] is None
    assert "Nothing was changed." in outcome.payload["error"]["message"]
    assert outcome.text == f"Error [context_not_found]: {outcome.payload['error']['message']}"
    assert files(tree) == before


def test_delete_needs_permission(tree: Path) -> None:
    refused = apply_patch_call(DELETE_NOTES, str(tree))
    assert refused.payload["error"]["kind"] == "policy_violation"
    assert (tree / "notes.txt").exists()
    allowed = apply_patch_call(DELETE_NOTES, str(tree), allow_delete=True)
    assert allowed.payload["summary"] == "A 0, M 0, D 1, R 0"
    assert not (tree / "notes.txt").exists()


def test_move_can_be_refused(tree: Path) -> None:
    assert apply_patch_call(MOVE_NOTES, str(tree), allow_move=False).payload["error"]["kind"] == "policy_violation"
    moved = apply_patch_call(MOVE_NOTES, str(tree))
    assert moved.payload["files"][0]["status"] == "moved"
    assert (tree / "docs" / "notes.txt").read_text() == "one\ntwo\nthree\n"
    assert not (tree / "notes.txt").exists()


def test_the_workspace_policy_is_a_ceiling_the_agent_cannot_raise(tree: Path) -> None:
    (tree / "pyproject.toml").write_text("[tool.patchtx]\nallow-delete = false\nallow-move = false\n")
    before = files(tree)
    assert apply_patch_call(DELETE_NOTES, str(tree), allow_delete=True).payload["error"]["kind"] == "policy_violation"
    assert apply_patch_call(MOVE_NOTES, str(tree), allow_move=True).payload["error"]["kind"] == "policy_violation"
    assert files(tree) == before


def test_protected_paths_hold_under_a_workspace_root(tree: Path) -> None:
    """Planning runs on the host's root, so its protected patterns also bind a sub-root call."""
    (tree / "pyproject.toml").write_text('[tool.patchtx]\nprotected = ["pkg/util.py"]\n')
    patch = "*** Begin Patch\n*** Update File: util.py\n-VALUE = 1\n+VALUE = 2\n*** End Patch\n"
    outcome = apply_patch_call(patch, str(tree), workspace_root="pkg")
    assert outcome.payload["error"]["kind"] == "policy_violation"
    assert (tree / "pkg" / "util.py").read_text() == "VALUE = 1\n"


def test_the_patch_size_limit_holds_under_a_workspace_root(tree: Path) -> None:
    (tree / "pyproject.toml").write_text("[tool.patchtx]\nmax-patch-bytes = 40\n")
    patch = "*** Begin Patch\n*** Add File: big.txt\n+" + "x" * 60 + "\n*** End Patch\n"
    for workspace_root in (".", "pkg"):
        outcome = apply_patch_call(patch, str(tree), workspace_root=workspace_root)
        assert outcome.payload["error"]["kind"] == "policy_violation", workspace_root
        assert "more than the limit of 40" in outcome.payload["error"]["message"]


def test_workspace_root_sets_where_relative_paths_start(tree: Path) -> None:
    patch = ("*** Begin Patch\n*** Update File: util.py\n*** Move to: helpers/util.py\n-VALUE = 1\n"
             "+VALUE = 2\n*** Add File: empty/readme.txt\n+hi\n*** End Patch\n")
    outcome = apply_patch_call(patch, str(tree), workspace_root="pkg")
    assert [(f["path"], f["status"]) for f in outcome.payload["files"]] == [
        ("pkg/helpers/util.py", "moved"), ("pkg/empty/readme.txt", "added")]
    assert (tree / "pkg" / "helpers" / "util.py").read_text() == "VALUE = 2\n"
    assert (tree / "pkg" / "empty" / "readme.txt").read_text() == "hi\n"
    # The transaction ran at the host's root: its lock and journal, not a second set in pkg/.
    assert (tree / ".patchtx").is_dir() and not (tree / "pkg" / ".patchtx").exists()


def test_an_absolute_workspace_root_inside_the_root_is_accepted(tree: Path) -> None:
    patch = "*** Begin Patch\n*** Add File: a.txt\n+a\n*** End Patch\n"
    outcome = apply_patch_call(patch, str(tree), workspace_root=str(tree / "pkg"))
    assert outcome.payload["files"][0]["path"] == "pkg/a.txt"


@pytest.mark.parametrize("workspace_root", ["..", "../ws-other", "/", "pkg/../..", "escape"])
def test_a_workspace_root_outside_the_root_is_refused(tree: Path, workspace_root: str) -> None:
    (tree.parent / "ws-other").mkdir()
    os.symlink(tree.parent / "ws-other", tree / "escape")
    before = files(tree.parent)
    outcome = apply_patch_call("*** Begin Patch\n*** Add File: a.txt\n+a\n*** End Patch\n", str(tree),
                               workspace_root=workspace_root)
    assert outcome.payload["error"]["kind"] == "unsafe_path"
    assert "outside the workspace root" in outcome.payload["error"]["message"]
    assert files(tree.parent) == before


def test_a_workspace_root_that_is_not_a_directory_is_refused(tree: Path) -> None:
    for name in ("missing", "app.py"):
        with pytest.raises(UnsafePathError, match="is not a directory"):
            resolve_workspace_root(str(tree), name)


@pytest.mark.parametrize("path", ["../outside.txt", "pkg/../../outside.txt", "/etc/passwd-patchtx"])
def test_paths_that_leave_the_root_are_refused(tree: Path, path: str) -> None:
    before = files(tree.parent)
    outcome = apply_patch_call(f"*** Begin Patch\n*** Add File: {path}\n+x\n*** End Patch\n", str(tree))
    assert outcome.payload["error"]["kind"] == "unsafe_path"
    assert files(tree.parent) == before


# -- run_tool_call: JSON arguments of the function tools --------------------------------------

@pytest.mark.parametrize("name", ["input", "patchText", "patch"])
def test_run_tool_call_takes_each_patch_argument_name(tree: Path, name: str) -> None:
    outcome = run_tool_call({name: EDIT_APP}, str(tree))
    assert outcome.payload["summary"] == "A 0, M 1, D 0, R 0"
    assert (tree / "app.py").read_text() == "def main():\n    print('bye')\n"


def test_run_tool_call_passes_the_options(tree: Path) -> None:
    outcome = run_tool_call({"input": DELETE_NOTES, "allow_delete": True, "dry_run": True,
                             "workspace_root": ".", "intent": "drop the notes"}, str(tree))
    assert outcome.payload["dry_run"] is True and outcome.payload["summary"] == "A 0, M 0, D 1, R 0"
    assert (tree / "notes.txt").exists()


def test_skip_applied_makes_a_resent_patch_succeed_changing_nothing(tree: Path) -> None:
    assert apply_patch_call(EDIT_APP, str(tree)).ok
    after = files(tree)
    resent = apply_patch_call(EDIT_APP, str(tree))
    assert not resent.ok and resent.payload["error"]["kind"] == "already_applied"
    for outcome in (apply_patch_call(EDIT_APP, str(tree), skip_applied=True),
                    run_tool_call({"input": EDIT_APP, "skip_applied": True}, str(tree))):
        assert outcome.ok and outcome.payload["summary"] == "A 0, M 0, D 0, R 0"
        assert outcome.payload["files"] == [] and outcome.payload["transaction"] is None
    assert files(tree) == after
    # Only a patch applied as a whole is skipped: one applied in part is still refused.
    partly = EDIT_APP.replace("*** End Patch", "*** Add File: pkg/new.py\n+NEW = True\n*** End Patch")
    outcome = run_tool_call({"input": partly, "skip_applied": True}, str(tree))
    assert outcome.payload["error"]["kind"] == "partly_applied"
    # null is "not given": the default, refusing.
    assert run_tool_call({"input": EDIT_APP, "skip_applied": None}, str(tree)).payload["error"]["kind"] == (
        "already_applied")
    assert files(tree) == after


def test_skip_applied_is_the_callers_choice_not_a_workspace_setting(tree: Path) -> None:
    assert apply_patch_call(EDIT_APP, str(tree)).ok
    (tree / ".patchtx.toml").write_text("skip-applied = true\n")
    refused = apply_patch_call(EDIT_APP, str(tree))
    assert refused.payload["error"]["kind"] == "policy_violation"
    assert "unknown key 'skip-applied'" in refused.payload["error"]["message"]
    (tree / ".patchtx.toml").write_text("allow-delete = false\n")  # a tight policy does not turn it off
    assert apply_patch_call(EDIT_APP, str(tree), skip_applied=True).ok


def test_run_tool_call_reads_null_as_not_given(tree: Path) -> None:
    outcome = run_tool_call({"input": DELETE_NOTES, "allow_delete": None, "dry_run": None,
                             "allow_move": None, "workspace_root": None, "intent": None}, str(tree))
    assert outcome.payload["error"]["kind"] == "policy_violation"
    assert run_tool_call({"input": EDIT_APP, "dry_run": None}, str(tree)).payload["dry_run"] is False


@pytest.mark.parametrize(("arguments", "message"), [
    ({}, "needs the patch text"),
    ({"input": EDIT_APP, "patch": EDIT_APP}, "needs the patch text"),
    ({"input": 42}, "needs the patch text"),
    ({"input": EDIT_APP, "force": True}, "Unknown argument(s): force"),
    ({"input": EDIT_APP, "dry_run": "yes"}, "wrong type: dry_run"),
    ({"input": EDIT_APP, "intent": ["x"]}, "wrong type: intent"),
    ({"input": EDIT_APP, "skip_applied": "yes"}, "wrong type: skip_applied"),
])
def test_run_tool_call_refuses_malformed_arguments(tree: Path, arguments: dict[str, object],
                                                   message: str) -> None:
    before = files(tree)
    outcome = run_tool_call(arguments, str(tree))
    assert outcome.payload["error"]["kind"] == "invalid_arguments"
    assert message in outcome.payload["error"]["message"]
    assert files(tree) == before


def test_an_undo_that_deletes_is_gated_by_the_host_ceiling_too(tree: Path) -> None:
    from patchtx.agents.tool_call import undo_call

    added = apply_patch_call("*** Begin Patch\n*** Add File: pkg/new.py\n+NEW = True\n*** End Patch\n", str(tree),
                             origin="mcp")  # (an MCP client undoes its own transactions by default)
    transaction = added.payload["transaction"]
    after = files(tree)
    refused = undo_call(str(tree), transaction, allow_delete=True, host={"allow_delete": False})
    error = refused.payload["error"]
    assert error["kind"] == "policy_violation" and "pkg/new.py" in error["message"]
    assert files(tree) == after
    undone = undo_call(str(tree), transaction, allow_delete=True)
    assert undone.ok and undone.payload["undone"] == transaction and not (tree / "pkg" / "new.py").exists()
