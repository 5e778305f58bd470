"""Shared by the peer wrappers: read the patch the way Codex's apply_patch does (the one argument,
or stdin), and split a ``*** Begin Patch`` envelope into per-file operations."""

from __future__ import annotations

import sys


def read_patch() -> str:
    if len(sys.argv) > 2:
        sys.stderr.write("usage: wrapper [PATCH]  (or the patch on stdin)\n")
        sys.exit(2)
    if len(sys.argv) == 2:
        return sys.argv[1]
    return sys.stdin.read()


def split_operations(text: str) -> list[dict[str, object]]:
    """[{"kind": "add"|"delete"|"update", "path": str, "move_to": str|None, "body": [lines]}]."""
    lines = text.strip().splitlines()
    if not lines or lines[0].strip() != "*** Begin Patch" or lines[-1].strip() != "*** End Patch":
        raise ValueError("the patch must start with '*** Begin Patch' and end with '*** End Patch'")
    ops: list[dict[str, object]] = []
    for line in lines[1:-1]:
        for marker, kind in (("*** Add File: ", "add"), ("*** Delete File: ", "delete"),
                             ("*** Update File: ", "update")):
            if line.startswith(marker):
                ops.append({"kind": kind, "path": line[len(marker):].strip(), "move_to": None,
                            "body": []})
                break
        else:
            if line.startswith("*** Move to: ") and ops and ops[-1]["kind"] == "update":
                ops[-1]["move_to"] = line[len("*** Move to: "):].strip()
            elif ops:
                ops[-1]["body"].append(line)  # type: ignore[union-attr]
            else:
                raise ValueError(f"unexpected line before the first file operation: {line!r}")
    return ops
