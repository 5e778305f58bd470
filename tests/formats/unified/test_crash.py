"""A unified diff's plan (a mode-only change, a rename with edits, a new executable file, a delete)
goes through the same crash-safe commit: a crash at any call, then recovery, leaves the tree
exactly as before or exactly as after."""

from __future__ import annotations

from pathlib import Path

from patchtx.api import plan_patch
from patchtx.model import Plan

from ...txn.helpers import crash_at_every_call
from .support import write_tree

DIFF = """\
diff --git a/run.sh b/run.sh
old mode 100644
new mode 100755
diff --git a/src/a.py b/lib/a.py
similarity index 80%
rename from src/a.py
rename to lib/a.py
--- a/src/a.py
+++ b/lib/a.py
@@ -1,2 +1,2 @@
 one
-two
+TWO
diff --git a/tool b/tool
new file mode 100755
--- /dev/null
+++ b/tool
@@ -0,0 +1 @@
+#!/bin/sh
diff --git a/old.txt b/old.txt
deleted file mode 100644
--- a/old.txt
+++ /dev/null
@@ -1 +0,0 @@
-bye
"""
TREE = {"run.sh": ("echo\n", "100644"), "src/a.py": ("one\ntwo\n", "100644"),
        "old.txt": ("bye\n", "100644")}


def _fresh(root: Path) -> Plan:
    root.mkdir()
    write_tree(root, TREE)
    return plan_patch(DIFF, root)


def test_crash_at_every_call_then_recover(tmp_path: Path) -> None:
    _before, after = crash_at_every_call(_fresh, tmp_path)
    assert after["run.sh"][1] & 0o111 and after["tool"][1] & 0o111 and "src" not in after
    assert after["lib/a.py"][2] == b"one\nTWO\n" and "old.txt" not in after
