"""Patches made by the real ``git diff`` from two trees, for the tests of what git writes
(non-UTF-8 text files, binary patches): the bytes git wrote, and the before tree to apply them to."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

needs_git = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")

Tree = dict[str, bytes]


def _git(repo: Path, *args: str) -> bytes:
    env = {**os.environ, "GIT_CEILING_DIRECTORIES": str(repo.parent), "LC_ALL": "C",
           "GIT_CONFIG_NOSYSTEM": "1", "HOME": str(repo.parent)}
    return subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", "-c",
                           "core.autocrlf=false", *args], cwd=repo, env=env, check=True,
                          capture_output=True).stdout


def write(root: Path, tree: Tree) -> None:
    for name, data in tree.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_bytes(data)


def read(root: Path) -> Tree:
    out: Tree = {}
    for folder, dirs, names in os.walk(root):
        dirs[:] = [d for d in dirs if d not in (".git", ".patchtx")]
        for name in names:
            full = Path(folder, name)
            out[full.relative_to(root).as_posix()] = full.read_bytes()
    return out


def git_diff(scratch: Path, before: Tree, after: Tree, *options: str) -> bytes:
    """``git diff OPTIONS`` from ``before`` to ``after`` (every path of either), made in a
    repository under ``scratch``."""
    repo = scratch / "made"
    repo.mkdir()
    _git(repo, "init", "-q")
    write(repo, before)
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "--allow-empty", "-m", "before")
    for name in before:
        (repo / name).unlink()
    write(repo, after)
    _git(repo, "add", "-A")
    patch = _git(repo, "diff", "--cached", *options)
    shutil.rmtree(repo)
    return patch


def git_apply(scratch: Path, before: Tree, patch: bytes, *options: str) -> Tree | None:
    """What ``git apply OPTIONS`` makes of ``before`` (None: refused)."""
    root = scratch / "git-applied"
    root.mkdir()
    write(root, before)
    (scratch / "p.diff").write_bytes(patch)
    env = {**os.environ, "GIT_CEILING_DIRECTORIES": str(scratch), "LC_ALL": "C"}
    done = subprocess.run(["git", "apply", *options, str(scratch / "p.diff")], cwd=root, env=env,
                          capture_output=True)
    tree = read(root) if done.returncode == 0 else None
    shutil.rmtree(root)
    return tree
