"""Each protocol's cases, one line each: the file before, what the model sent, the file after (or
the refusal's kind, the file unchanged). As LibCST's ``assertCodemod(before, after)``: a case is
read at a glance, and a new case is one line. The behaviour behind each is documented in
docs/format.md (patches and blocks), docs/edit-file.md (snippets) and docs/integrations.md (the
editor); the deeper tests of each rule live beside its module.

Every case runs through the public surface a caller uses (``apply_patch`` for patches and blocks,
``apply_edits`` for edit lists, ``run_editor`` for the text editor, ``edit_file`` for snippets),
as one transaction on a fresh one-file workspace ``f.py``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import patchtx
from patchtx.agents.editor import run_editor
from patchtx.errors import PatchtxError

F = "f.py"


def codex(*body: str) -> str:
    return "*** Begin Patch\n*** Update File: f.py\n" + "".join(line + "\n" for line in body) + "*** End Patch\n"


def unified(header: str, *body: str) -> str:
    return f"--- a/f.py\n+++ b/f.py\n{header}\n" + "".join(line + "\n" for line in body)


def block(search: str, replace: str) -> str:
    return f"f.py\n<<<<<<< SEARCH\n{search}=======\n{replace}>>>>>>> REPLACE\n"


# (before, sent, after: the new file, or a refusal's kind)
CODEX = [
    ("a\nb\nc\n", codex("@@", " a", "-b", "+B", " c"), "a\nB\nc\n"),
    ("a\nb\nc\n", codex("@@", "-b", "+B"), "a\nB\nc\n"),
    ("a\nb\nc\n", codex("@@", " a", "+x"), "a\nx\nb\nc\n"),
    ("def f():\n    b\n", codex("@@ def f():", "-    b", "+    B"), "def f():\n    B\n"),
    ("a\nb\nc\n", codex("@@", "-c", "+C", "*** End of File"), "a\nb\nC\n"),
    ("  a\n  b\n", codex("@@", " a", "-b", "+B"), "  a\n  B\n"),  # (indentation as the file's)
    ("a\n  b\n", codex("@@", " a", "-b", "+B"), "ambiguous_context"),  # (not shifted alike)
    ("b\nb\n", codex("@@", "-b", "+B"), "ambiguous_context"),
    ("a\nb\n", codex("@@", "-z", "+Z"), "context_not_found"),
    ("a\nB\n", codex("@@", " a", "-b", "+B"), "already_applied"),
    ("a\nb\n", codex("@@", " a", "-b", "+b"), "no_change"),
    ("a\nb\n", codex("@@", " a", "-b", "+# ... existing code ..."), "placeholder"),
]

UNIFIED = [
    ("a\nb\nc\n", unified("@@ -1,3 +1,3 @@", " a", "-b", "+B", " c"), "a\nB\nc\n"),
    ("x\na\nb\nc\n", unified("@@ -1,3 +1,3 @@", " a", "-b", "+B", " c"), "x\na\nB\nc\n"),  # (offset 1)
    ("a\nb\nc\n", unified("@@ -2,0 +3 @@", "+x"), "a\nb\nx\nc\n"),  # (-U0: after its stated line)
    ("a\nb\nc\n", unified("@@ -1,2 +1,3 @@", " a", "+x", " b"), "a\nx\nb\nc\n"),
    ("a\nb\n", unified("@@ -1,2 +1,1 @@", " a", "-b"), "a\n"),
    ("a\nb\nc\n", unified("@@ -1,3 +1,3 @@", " a", "-z", "+Z", " c"), "context_not_found"),
    ("a\nB\nc\n", unified("@@ -1,3 +1,3 @@", " a", "-b", "+B", " c"), "already_applied"),
    ("a\nb\n", unified("@@ -1,2 +1,2 @@", " a", "-b", "+b\r"), "a\nb\r\n"),  # (endings byte for byte)
]

BLOCKS = [
    ("a\nb\nc\n", block("b\n", "B\n"), "a\nB\nc\n"),
    ("a\nb\nc\n", block("a\nb\n", "a\nx\nb\n"), "a\nx\nb\nc\n"),
    ("def f():\n    b\n", block("  b\n", "  B\n"), "def f():\n    B\n"),  # (shifted as a whole)
    ("b\nb\n", block("b\n", "B\n"), "ambiguous_context"),
    ("a\nb\n", block("z\n", "Z\n"), "context_not_found"),
    ("a\nb\nc\n", block("a\n...\nc\n", "A\n...\nC\n"), "placeholder"),  # (aider's elision)
    ("a\nb\n", block("b\n", "b\n"), "no_change"),
]

EDIT_LISTS = [
    ("a\nb\nc\n", [{"old_string": "b", "new_string": "B"}], "a\nB\nc\n"),
    ("a b a\n", [{"old_string": "a", "new_string": "x", "replace_all": True}], "x b x\n"),
    ("a\nb\n", [{"old_string": "a", "new_string": "A"}, {"old_string": "b", "new_string": "B"}], "A\nB\n"),
    ("a a\n", [{"old_string": "a", "new_string": "x"}], "ambiguous_context"),
    ("a\n", [{"old_string": "z", "new_string": "x"}], "context_not_found"),
    ("a\n", [{"old_string": "a", "new_string": "a"}], "no_change"),
]

EDITOR = [
    ("a\nb\n", {"command": "str_replace", "old_str": "b", "new_str": "B"}, "a\nB\n"),
    ("a\nb\n", {"command": "insert", "insert_line": 1, "new_str": "x"}, "a\nx\nb\n"),
    ("a a\n", {"command": "str_replace", "old_str": "a", "new_str": "x"}, "ambiguous_context"),
    ("a\n", {"command": "str_replace", "old_str": "z", "new_str": "x"}, "context_not_found"),
]

SNIPPETS = [
    ("def f():\n    a = 1\n    b = 2\n    return a + b\n\n\ndef g():\n    return 0\n",
     "def f():\n    a = 1\n    b = 3\n    return a + b\n# ... existing code ...\n",
     "def f():\n    a = 1\n    b = 3\n    return a + b\n\n\ndef g():\n    return 0\n"),
    ("x = 1\ny = 2\n", "x = 1\n# ... existing code ...\n", "no_change"),
]


def _run(tmp_path: Path, before: str, work: Any, after: str) -> None:
    target = tmp_path / F
    target.write_bytes(before.encode())
    if "\n" in after or after == "":
        work()
        assert target.read_bytes() == after.encode()
        return
    with pytest.raises(PatchtxError) as refused:
        work()
    assert refused.value.kind == after, refused.value.message
    assert target.read_bytes() == before.encode()  # (nothing was changed)


@pytest.mark.parametrize(("before", "patch", "after"), CODEX)
def test_codex(tmp_path: Path, before: str, patch: str, after: str) -> None:
    _run(tmp_path, before, lambda: patchtx.apply_patch(patch, tmp_path, durable=False), after)


@pytest.mark.parametrize(("before", "patch", "after"), UNIFIED)
def test_unified(tmp_path: Path, before: str, patch: str, after: str) -> None:
    _run(tmp_path, before, lambda: patchtx.apply_patch(patch, tmp_path, durable=False), after)


@pytest.mark.parametrize(("before", "patch", "after"), BLOCKS)
def test_search_replace(tmp_path: Path, before: str, patch: str, after: str) -> None:
    _run(tmp_path, before, lambda: patchtx.apply_patch(patch, tmp_path, durable=False), after)


@pytest.mark.parametrize(("before", "edits", "after"), EDIT_LISTS)
def test_edit_list(tmp_path: Path, before: str, edits: list[dict[str, Any]], after: str) -> None:
    _run(tmp_path, before, lambda: patchtx.apply_edits(edits, tmp_path, file_path=F, durable=False), after)


@pytest.mark.parametrize(("before", "call", "after"), EDITOR)
def test_text_editor(tmp_path: Path, before: str, call: dict[str, Any], after: str) -> None:
    _run(tmp_path, before, lambda: run_editor({**call, "path": F}, tmp_path, durable=False), after)


@pytest.mark.parametrize(("before", "snippet", "after"), SNIPPETS)
def test_edit_file_snippet(tmp_path: Path, before: str, snippet: str, after: str) -> None:
    _run(tmp_path, before, lambda: patchtx.edit_file(F, snippet, tmp_path, durable=False), after)
