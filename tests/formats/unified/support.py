"""Trees as ``{path: (text, git mode)}``, written to and read from disk, and ``git`` helpers."""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
from pathlib import Path

import pytest

Files = dict[str, tuple[str, str]]
"""path -> (text, "100644" or "100755")"""

needs_git = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")


def write_tree(root: Path, files: Files) -> None:
    for path, (text, mode) in files.items():
        full = root / path
        full.parent.mkdir(parents=True, exist_ok=True)
        full.write_bytes(text.encode("utf-8"))
        full.chmod(0o755 if mode == "100755" else 0o644)


def read_tree(root: Path) -> Files:
    """Every regular file under ``root`` but the .git and .patchtx folders."""
    out: Files = {}
    for folder, dirs, names in os.walk(root):
        dirs[:] = [d for d in dirs if d not in (".git", ".patchtx")]
        for name in names:
            full = Path(folder, name)
            mode = "100755" if full.stat().st_mode & stat.S_IXUSR else "100644"
            out[full.relative_to(root).as_posix()] = (full.read_bytes().decode("utf-8"), mode)
    return out


def git(root: Path, *args: str, stdin: str | None = None) -> str:
    env = {**os.environ, "GIT_CEILING_DIRECTORIES": str(root.parent), "GIT_AUTHOR_NAME": "t",
           "GIT_AUTHOR_EMAIL": "t@example.com", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@example.com"}
    done = subprocess.run(["git", "-C", str(root), "-c", "core.quotepath=true",
                           "-c", "core.autocrlf=false", *args], input=stdin,
                          capture_output=True, text=True, env=env)
    if done.returncode:
        raise AssertionError(f"git {' '.join(args)} failed: {done.stderr}")
    return done.stdout


def git_apply(root: Path, diff: str, *extra: str) -> None:
    """``git apply`` the diff to the tree at ``root`` (made a repository if it is not one)."""
    if not (root / ".git").exists():
        git(root, "init", "-q")
    git(root, "apply", *extra, "-", stdin=diff)


# What `git diff --cached -M -C --find-copies-harder` printed for one commit of a small tree.
EVERY_OPERATION = """\
diff --git a/c b/d
similarity index 66%
copy from c
copy to d
index fd585bc..6645ebc 100644
--- a/c
+++ b/d
@@ -1,3 +1,3 @@
 c1
 c2
-c3
+C3
diff --git a/g b/g
deleted file mode 100644
index b023018..0000000
--- a/g
+++ /dev/null
@@ -1 +0,0 @@
-bye
diff --git a/m b/m
old mode 100644
new mode 100755
diff --git a/n b/n
new file mode 100644
index 0000000..3e75765
--- /dev/null
+++ b/n
@@ -0,0 +1 @@
+new
diff --git a/r b/s
similarity index 66%
rename from r
rename to s
index 74c047b..8b35541 100644
--- a/r
+++ b/s
@@ -1,3 +1,3 @@
 r1
-r2
+R2
 r3
diff --git a/x b/x
index a6e0e24..09822cf 100644
--- a/x
+++ b/x
@@ -1,7 +1,7 @@
 l1
 l2
 l3
-l4
+L4
 l5
 l6
 l7
"""
BEFORE = {"x": ("l1\nl2\nl3\nl4\nl5\nl6\nl7\n", "100644"), "r": ("r1\nr2\nr3\n", "100644"),
          "m": ("m\n", "100644"), "c": ("c1\nc2\nc3\n", "100644"), "g": ("bye\n", "100644")}
AFTER = {"x": ("l1\nl2\nl3\nL4\nl5\nl6\nl7\n", "100644"), "s": ("r1\nR2\nr3\n", "100644"),
         "m": ("m\n", "100755"), "c": ("c1\nc2\nc3\n", "100644"), "d": ("c1\nc2\nC3\n", "100644"),
         "n": ("new\n", "100644")}
