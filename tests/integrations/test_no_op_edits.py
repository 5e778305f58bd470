"""An edit that changes nothing is refused as ``no_change`` on every surface and in every protocol
(docs/format.md, "A patch that changes nothing"): no surface reports ``M`` for a file it did not
change, nothing is written, and no transaction is kept in the undo history.

Before the rule, an identical SEARCH/REPLACE block, a context-only Codex section and a unified
hunk that removes a line and adds it back were reported ``M file`` (exit 0), while the text editor
and edit lists refused the same no-op with another kind (``invalid_arguments``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from tests.security.surfaces import cli, mcp

import patchtx
from patchtx import history
from patchtx.agents.editor import TextEditor
from patchtx.agents.tool_call import run_edit_tool_call, run_tool_call
from patchtx.errors import PatchtxError

FILE = "def main():\n    print('hello')\n    return 0\n"

NO_OPS = {
    "codex context only": "*** Begin Patch\n*** Update File: app.py\n@@\n def main():\n"
                          "     print('hello')\n*** End Patch\n",
    "codex line replaced by itself": "*** Begin Patch\n*** Update File: app.py\n@@ def main():\n"
                                     "-    print('hello')\n+    print('hello')\n*** End Patch\n",
    "unified context only": "--- a/app.py\n+++ b/app.py\n@@ -1,2 +1,2 @@\n def main():\n"
                            "     print('hello')\n",
    "unified line removed and added back": "--- a/app.py\n+++ b/app.py\n@@ -1,3 +1,3 @@\n"
                                           " def main():\n-    print('hello')\n+    print('hello')\n"
                                           "     return 0\n",
    "identical block": "app.py\n<<<<<<< SEARCH\n    print('hello')\n=======\n    print('hello')\n"
                       ">>>>>>> REPLACE\n",
    "blocks that undo one another": "app.py\n<<<<<<< SEARCH\n    print('hello')\n=======\n"
                                    "    print('bye')\n>>>>>>> REPLACE\napp.py\n<<<<<<< SEARCH\n"
                                    "    print('bye')\n=======\n    print('hello')\n"
                                    ">>>>>>> REPLACE\n",
    "codex operations that undo one another": "*** Begin Patch\n*** Update File: app.py\n"
                                              "-    return 0\n+    return 1\n*** Update File: app.py\n"
                                              "-    return 1\n+    return 0\n*** End Patch\n",
    # (Issue 37 item 9: reported 'D app.py' and 'A app.py', exit 0, the file as it was.)
    "codex delete and add of the same bytes": "*** Begin Patch\n*** Delete File: app.py\n"
                                              "*** Add File: app.py\n" + "".join(
                                                  f"+{line}\n" for line in FILE.splitlines())
                                              + "*** End Patch\n",
    "unified delete and add of the same bytes": "--- a/app.py\n+++ /dev/null\n@@ -1,3 +0,0 @@\n" + "".join(
        f"-{line}\n" for line in FILE.splitlines()) + "--- /dev/null\n+++ b/app.py\n@@ -0,0 +1,3 @@\n"
        + "".join(f"+{line}\n" for line in FILE.splitlines()),
}


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    (tmp_path / "app.py").write_text(FILE)
    return tmp_path


def untouched(root: Path) -> None:
    assert (root / "app.py").read_text() == FILE
    assert history.log(root) == []  # (no transaction kept: none was made)


@pytest.mark.parametrize("name", NO_OPS)
def test_a_no_op_patch_is_refused_by_the_library_and_the_command_line(tree: Path, name: str) -> None:
    with pytest.raises(PatchtxError) as info:
        patchtx.apply_patch(NO_OPS[name], tree)
    assert info.value.kind == "no_change", info.value.message
    assert "Nothing was changed." in info.value.message
    kind, out = cli(tree, "apply", patch=NO_OPS[name])
    assert kind == "no_change" and out["ok"] is False and not out.get("files")
    untouched(tree)


def test_the_editor_and_edit_lists_refuse_a_no_op_with_the_same_kind(tree: Path) -> None:
    with pytest.raises(PatchtxError) as editor:
        TextEditor(tree).run("str_replace", "app.py", old_str="hello", new_str="hello")
    with pytest.raises(PatchtxError) as edits:
        patchtx.apply_edits([{"path": "app.py", "old_string": "hello", "new_string": "hello"}], tree)
    with pytest.raises(PatchtxError) as undone:
        patchtx.apply_edits([{"path": "app.py", "old_string": "hello", "new_string": "bye"},
                             {"path": "app.py", "old_string": "bye", "new_string": "hello"}], tree)
    assert [error.value.kind for error in (editor, edits, undone)] == ["no_change"] * 3
    # (the reference tools' own words kept, the kind made one)
    assert editor.value.headline.startswith("No replacement was performed. `new_str` and `old_str`")
    assert "No changes to make: old_string and new_string are exactly the same." in edits.value.message
    untouched(tree)


CALLS: list[tuple[str, dict[str, Any]]] = [
    ("apply_patch", {"patch": NO_OPS["codex context only"]}),
    ("apply_patch", {"patch": NO_OPS["identical block"]}),
    ("apply_patch", {"patch": NO_OPS["unified line removed and added back"]}),
    ("str_replace_based_edit_tool", {"command": "str_replace", "path": "app.py", "old_str": "hello",
                                     "new_str": "hello"}),
    ("edit_files", {"edits": [{"path": "app.py", "old_string": "hello", "new_string": "hello"}]}),
    ("replace_in_file", {"path": "app.py", "diff": "------- SEARCH\n    return 0\n=======\n"
                                                   "    return 0\n+++++++ REPLACE\n"}),
]


def test_every_mcp_tool_refuses_a_no_op(tree: Path) -> None:
    outcomes = mcp(tree, CALLS)
    assert [kind for kind, _ in outcomes] == ["no_change"] * len(CALLS), json.dumps(outcomes)[:2000]
    untouched(tree)


def test_tool_calls_refuse_a_no_op(tree: Path) -> None:
    outcomes = [run_tool_call({"input": NO_OPS["codex context only"]}, str(tree))]
    outcomes += [run_edit_tool_call(tool, arguments, str(tree)) for tool, arguments in CALLS[3:]]
    assert [(o.ok, o.payload["error"]["kind"]) for o in outcomes] == [(False, "no_change")] * 4
    assert all("[no_change]" in o.text for o in outcomes), [o.text for o in outcomes]
    untouched(tree)


def test_a_pure_rename_written_with_one_context_section_is_a_change(tree: Path) -> None:
    # (Codex's way to write a rename: the one context-only section under '*** Move to:')
    result = patchtx.apply_patch("*** Begin Patch\n*** Update File: app.py\n*** Move to: main.py\n"
                                 "@@\n def main():\n*** End Patch\n", tree)
    assert result.plan.summary == "A 0, M 0, D 0, R 1"
    assert (tree / "main.py").read_text() == FILE and not (tree / "app.py").exists()


def test_a_skipped_resend_is_still_the_already_applied_answer(tree: Path) -> None:
    patch = ("*** Begin Patch\n*** Update File: app.py\n@@ def main():\n-    print('hello')\n"
             "+    print('bye')\n*** End Patch\n")
    patchtx.apply_patch(patch, tree)
    with pytest.raises(PatchtxError) as info:
        patchtx.apply_patch(patch, tree)
    assert info.value.kind == "already_applied"
    assert patchtx.apply_patch(patch, tree, skip_applied=True).plan.summary == "A 0, M 0, D 0, R 0"


def test_a_delete_and_add_that_changes_the_mode_is_a_change(tree: Path) -> None:
    (tree / "app.py").chmod(0o755)
    patch = NO_OPS["codex delete and add of the same bytes"]
    result = patchtx.apply_patch(patch, tree, durable=False)
    assert [change.kind.value for change in result.plan.changes] == ["D", "A"]
    assert (tree / "app.py").read_text() == FILE and (tree / "app.py").stat().st_mode & 0o111 == 0
