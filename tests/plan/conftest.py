"""Shared fixtures for the core-engine tests: a real temporary tree to plan patches against.

Planning must never write: every ``Tree.plan``/``Tree.fail`` call snapshots the tree before and
after and asserts that nothing on disk changed.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from patchtx.errors import PatchtxError
from patchtx.formats.codex import parse
from patchtx.model import Plan
from patchtx.options import PlanOptions
from patchtx.plan.planner import plan

BEGIN = "*** Begin Patch"
END = "*** End Patch"


def wrap(body: str) -> str:
    """Put a patch body between the Begin/End markers."""
    return f"{BEGIN}\n{body}\n{END}"


def snapshot(root: Path) -> dict[str, tuple[str, bytes | str, int]]:
    """Every entry under ``root``: kind, content (or link target) and mode."""
    out: dict[str, tuple[str, bytes | str, int]] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            full = os.path.join(dirpath, name)
            rel = os.path.relpath(full, root)
            st = os.lstat(full)
            if stat.S_ISLNK(st.st_mode):
                out[rel] = ("link", os.readlink(full), 0)
            elif stat.S_ISDIR(st.st_mode):
                out[rel] = ("dir", b"", stat.S_IMODE(st.st_mode))
            else:
                with open(full, "rb") as fh:
                    out[rel] = ("file", fh.read(), stat.S_IMODE(st.st_mode))
    return out


class Tree:
    """A workspace root on disk, with helpers to write files and plan patches against it."""

    def __init__(self, root: Path) -> None:
        self.root = root.resolve()

    def path(self, rel: str) -> str:
        return os.path.join(str(self.root), rel)

    def write(self, rel: str, data: bytes | str, mode: int | None = None) -> Path:
        full = self.root / rel
        full.parent.mkdir(parents=True, exist_ok=True)
        full.write_bytes(data.encode("utf-8") if isinstance(data, str) else data)
        if mode is not None:
            os.chmod(full, mode)
        return full

    def mkdir(self, rel: str) -> Path:
        full = self.root / rel
        full.mkdir(parents=True, exist_ok=True)
        return full

    def symlink(self, rel: str, target: str) -> None:
        full = self.root / rel
        full.parent.mkdir(parents=True, exist_ok=True)
        os.symlink(target, full)

    def read(self, rel: str) -> bytes:
        return (self.root / rel).read_bytes()

    def plan(self, text: str, **options: bool) -> Plan:
        patch_text = text if text.lstrip().startswith(BEGIN) else wrap(text)
        before = snapshot(self.root)
        try:
            return plan(parse(patch_text), str(self.root), PlanOptions(**options))
        finally:
            assert snapshot(self.root) == before, "planning changed the tree"

    def fail(self, text: str, **options: bool) -> PatchtxError:
        with pytest.raises(PatchtxError) as info:
            self.plan(text, **options)
        return info.value

    def after(self, text: str, rel: str = "f.txt", **options: bool) -> bytes | None:
        """Plan ``text`` and return what ``rel`` will hold afterwards (None: absent)."""
        return result_of(self.plan(text, **options), self, rel)


def result_of(planned: Plan, tree: Tree, rel: str) -> bytes | None:
    for target in planned.targets:
        if target.path == rel:
            return target.after
    full = tree.root / rel
    return full.read_bytes() if full.is_file() else None


@pytest.fixture
def tree(tmp_path: Path) -> Tree:
    root = tmp_path / "root"
    root.mkdir()
    return Tree(root)


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """A directory next to the workspace root, holding a file the patch must never reach."""
    out = tmp_path / "outside"
    out.mkdir()
    (out / "secret.txt").write_bytes(b"secret\n")
    return out.resolve()
