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
