"""Placeholders written as code are refused on every surface (issue 37 item 13, issue 44 item 2):
an edit that replaces code with ``# ... existing code ...`` (or adds such a line to a new file)
is refused as ``placeholder``, naming the line, nothing written, whichever protocol carries it:
a Codex patch, a unified diff, SEARCH/REPLACE blocks, an edit list, the text editor's
``str_replace``, ``create`` and ``insert``; through the library, the command line, MCP and the
tool calls. Before, the line was written into the file and the lines it replaced were lost.
``allow_placeholders`` (``--allow-placeholders``) lets the host write it; aider's ``...`` elision
in a SEARCH block is refused saying so."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from tests.security.surfaces import cli, mcp

import patchtx
from patchtx.agents.editor import TextEditor
from patchtx.agents.tool_call import run_edit_tool_call, run_tool_call
from patchtx.errors import PatchtxError

CALC = "def total(items):\n    count = 0\n    for item in items:\n        count += item\n    return count\n"
LAZY = "    # ... existing code ..."

PATCHES = {
    "codex": "*** Begin Patch\n*** Update File: calc.py\n@@ def total(items):\n-    count = 0\n"
             f"-    for item in items:\n-        count += item\n+{LAZY}\n     return count\n*** End Patch\n",
    "unified": "--- a/calc.py\n+++ b/calc.py\n@@ -1,5 +1,3 @@\n def total(items):\n-    count = 0\n"
               f"-    for item in items:\n-        count += item\n+{LAZY}\n     return count\n",
    "blocks": "calc.py\n<<<<<<< SEARCH\n    count = 0\n    for item in items:\n        count += item\n"
              f"    return count\n=======\n{LAZY}\n    return count * 2\n>>>>>>> REPLACE\n",
    "codex, a new JavaScript file": "*** Begin Patch\n*** Add File: util.js\n+export function f() {\n"
                                    "+  // ... rest of the function unchanged ...\n+}\n*** End Patch\n",
    "codex, a bare ellipsis in Rust": "*** Begin Patch\n*** Add File: lib.rs\n+fn f() {\n+    ...\n+}\n"
                                      "*** End Patch\n",
}


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    (tmp_path / "calc.py").write_text(CALC)
    return tmp_path


def untouched(root: Path) -> None:
    assert (root / "calc.py").read_text() == CALC
    assert sorted(p.name for p in root.iterdir() if p.name != ".patchtx") == ["calc.py"]


@pytest.mark.parametrize("name", PATCHES)
def test_a_patch_that_writes_a_placeholder_is_refused(tree: Path, name: str) -> None:
    with pytest.raises(PatchtxError) as info:
        patchtx.apply_patch(PATCHES[name], tree, durable=False)
    error = info.value
    assert error.kind == "placeholder", error.message
    assert "a placeholder for code left out" in error.message and "Nothing was changed." in error.message
    assert error.details["placeholder"].strip() in PATCHES[name]
    untouched(tree)


@pytest.mark.parametrize("name", ["codex", "unified", "blocks"])
def test_the_host_may_allow_it(tree: Path, name: str) -> None:
    patchtx.apply_patch(PATCHES[name], tree, durable=False, allow_placeholders=True)
    assert LAZY in (tree / "calc.py").read_text()


def test_the_command_line_refuses_it_and_its_flag_allows_it(tree: Path) -> None:
    kind, out = cli(tree, "apply", patch=PATCHES["codex"])
    assert kind == "placeholder" and out["error"]["placeholder"] == LAZY
    untouched(tree)
    kind, _ = cli(tree, "apply", "--allow-placeholders", patch=PATCHES["codex"])
    assert kind == "applied" and LAZY in (tree / "calc.py").read_text()


def test_the_editor_and_edit_lists_refuse_it(tree: Path) -> None:
    editor = TextEditor(tree, durable=False)
    calls: list[tuple[str, str, dict[str, Any]]] = [
        ("str_replace", "calc.py", {"old_str": "    count = 0\n    for item in items:\n        count += item",
                                    "new_str": LAZY}),
        ("create", "util.ts", {"file_text": "export const f = () => {\n  // ... existing code ...\n};\n"}),
        ("insert", "calc.py", {"insert_line": 1, "insert_text": "    # rest of the function remains unchanged"}),
    ]
    kinds = []
    for command, path, arguments in calls:
        with pytest.raises(PatchtxError) as info:
            editor.run(command, path, **arguments)
        kinds.append(info.value.kind)
    with pytest.raises(PatchtxError) as edits:
        patchtx.apply_edits([{"path": "calc.py", "old_string": "        count += item\n",
                              "new_string": "        # ... existing code ...\n"}], tree, durable=False)
    assert kinds + [edits.value.kind] == ["placeholder"] * 4
    untouched(tree)


def test_mcp_and_tool_calls_refuse_it(tree: Path) -> None:
    calls: list[tuple[str, dict[str, Any]]] = [
        ("apply_patch", {"patch": PATCHES["codex"]}),
        ("str_replace_based_edit_tool", {"command": "str_replace", "path": "calc.py",
                                         "old_str": "        count += item", "new_str": LAZY}),
        ("edit_files", {"edits": [{"path": "calc.py", "old_string": "    count = 0", "new_string": LAZY}]}),
        ("replace_in_file", {"path": "calc.py", "diff": "------- SEARCH\n    count = 0\n=======\n"
                                                        f"{LAZY}\n+++++++ REPLACE\n"}),
    ]
    outcomes = mcp(tree, calls)
    assert [kind for kind, _ in outcomes] == ["placeholder"] * len(calls), json.dumps(outcomes)[:2000]
    called = [run_tool_call({"input": PATCHES["codex"]}, str(tree))]
    called += [run_edit_tool_call(tool, arguments, str(tree)) for tool, arguments in calls[1:]]
    assert [o.payload["error"]["kind"] for o in called] == ["placeholder"] * 4
    untouched(tree)


def test_no_false_alarm_on_code_that_holds_ellipses(tree: Path) -> None:
    # Python's Ellipsis as a body, a comment that ends in '...', a file's own placeholders.
    (tree / "stubs.py").write_text("class P:\n    pass\n")
    patchtx.apply_patch("*** Begin Patch\n*** Update File: stubs.py\n@@ class P:\n-    pass\n"
                        "+    def f(self) -> int: ...\n+    def g(self) -> int:\n+        ...\n"
                        "+    # Loading the rest of the batch...\n*** End Patch\n", tree, durable=False)
    (tree / "tutorial.py").write_text("def f():\n    # ... existing code ...\n    return 1\n")
    patchtx.apply_patch("*** Begin Patch\n*** Update File: tutorial.py\n@@ def f():\n-    return 1\n"
                        "+    # ... existing code ...\n+    return 2\n*** End Patch\n", tree, durable=False)
    (tree / "README.md").write_text("# Title\n")
    patchtx.apply_patch("*** Begin Patch\n*** Update File: README.md\n@@ # Title\n+\n+...\n"
                        "+```js\n+// ... existing code ...\n+```\n*** End Patch\n", tree, durable=False)


def test_aiders_elision_in_a_search_block_is_refused_saying_so(tree: Path) -> None:
    blocks = ("calc.py\n<<<<<<< SEARCH\ndef total(items):\n...\n    return count\n=======\n"
              "def total(items):\n...\n    return count * 2\n>>>>>>> REPLACE\n")
    with pytest.raises(PatchtxError) as info:
        patchtx.apply_patch(blocks, tree, durable=False)
    assert info.value.kind == "placeholder"
    assert "aider's way to leave out the lines between, which patchtx does not expand" in info.value.message
    untouched(tree)
    (tree / "stub.py").write_text("def f():\n    ...\n")  # (a file holding '...' itself: the mark may be text)
    with pytest.raises(PatchtxError) as stub:
        patchtx.apply_patch(blocks.replace("calc.py", "stub.py"), tree, durable=False)
    assert stub.value.kind == "context_not_found" and "aider's way to leave out" in stub.value.message
