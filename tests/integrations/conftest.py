"""Fixtures for the agent-integration tests: a real temporary tree."""

from __future__ import annotations

from pathlib import Path

import pytest
from agents_support import write_tree


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    """A small workspace: a module, a notes file, a nested package and an empty folder."""
    root = write_tree(tmp_path / "ws", {
        "app.py": "def main():\n    print('hello')\n",
        "notes.txt": "one\ntwo\nthree\n",
        "pkg/util.py": "VALUE = 1\n",
    })
    (root / "pkg" / "empty").mkdir()
    return root
