"""Helpers shared by the agent-integration tests (imported as a plain module from this folder)."""

from __future__ import annotations

import os
import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
FENCE = re.compile(r"^```([^\n]*)\n(.*?)^```\s*$", re.S | re.M)


def server_environment() -> dict[str, str]:
    """The PATCHTX_* variables (the tests' own per-user state, tests/conftest.py) for an MCP
    server: the SDK's client starts a server with only a few safe variables of its own."""
    return {name: value for name, value in os.environ.items() if name.startswith("PATCHTX_")}


def snapshot(root: Path) -> dict[str, bytes | None]:
    """Every file (content) and directory (None) under ``root``, by relative path."""
    out: dict[str, bytes | None] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames:
            out[os.path.relpath(os.path.join(dirpath, name), root)] = None
        for name in filenames:
            path = os.path.join(dirpath, name)
            out[os.path.relpath(path, root)] = Path(path).read_bytes()
    return out


def write_tree(root: Path, files: dict[str, str]) -> Path:
    for name, content in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(content, encoding="utf-8")
    return root


def fenced_blocks(text: str, info: str) -> list[str]:
    """The bodies of the Markdown code blocks whose info string is ``info`` ("" for none)."""
    return [m.group(2) for m in FENCE.finditer(text) if m.group(1).strip() == info]
