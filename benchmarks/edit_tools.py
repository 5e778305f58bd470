"""Per-call time of the edit-protocol tools through a running ``patchtx mcp``, against one process of
Codex's binary doing the same one-line edit: the MCP guard (≤ 0.75× one Codex process) for the text
editor, edit lists and SEARCH/REPLACE blocks.

In one run, on the tiny-edit workload's tree (50 small modules, and one counter file per tool that
its calls edit), after ``warm.WARM_UP`` untimed rounds; each round makes one call of every tool to
one running server and runs Codex's binary once, in turn, so that a change in the machine's load
touches all of them alike:

- ``codex``: one run of Codex's ``apply_patch`` per edit (a patch changing the counter's line);
- ``apply_patch``: the ``apply_patch`` tool with the same patch (for comparison);
- ``str_replace``: ``str_replace_based_edit_tool`` with ``command: str_replace`` on the counter;
- ``insert``: ``str_replace_based_edit_tool`` with ``command: insert`` after the counter's line;
- ``view``: ``str_replace_based_edit_tool`` with ``command: view`` of a module (reads only);
- ``edit_files``: one ``old_string``/``new_string`` edit of the counter;
- ``replace_in_file``: one SEARCH/REPLACE block on the counter.

Every writing call is a durable transaction (journal, fsyncs, undo history), checked afterwards
(each counter went through every call). ``python benchmarks/edit_tools.py [CALLS]`` prints the
medians and each tool's ratio to Codex as JSON (Codex from ``--codex`` or
``$PATCHTX_CODEX_APPLY_PATCH``, else scripts/install-codex-reference.sh's cache).
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import appliers  # noqa: E402
import warm  # noqa: E402
import workloads as wl  # noqa: E402

GUARD = 0.75


def counter(name: str) -> str:
    return f"counter_{name}.txt"


def _value(i: int) -> str:
    return f"value = {i}"


TOOLS: dict[str, tuple[str, Callable[[int], dict[str, Any]]]] = {
    "apply_patch": ("apply_patch", lambda i: {"patch": (
        f"*** Begin Patch\n*** Update File: {counter('apply_patch')}\n@@\n-{_value(i)}\n+{_value(i + 1)}\n"
        "*** End Patch\n")}),
    "str_replace": ("str_replace_based_edit_tool", lambda i: {
        "command": "str_replace", "path": counter("str_replace"), "old_str": _value(i),
        "new_str": _value(i + 1)}),
    "insert": ("str_replace_based_edit_tool", lambda i: {
        "command": "insert", "path": counter("insert"), "insert_line": 1, "insert_text": f"# call {i}"}),
    "view": ("str_replace_based_edit_tool", lambda i: {
        "command": "view", "path": "app/module_007.py"}),
    "edit_files": ("edit_files", lambda i: {"edits": [
        {"path": counter("edit_files"), "old_string": _value(i), "new_string": _value(i + 1)}]}),
    "replace_in_file": ("replace_in_file", lambda i: {
        "path": counter("replace_in_file"),
        "diff": f"------- SEARCH\n{_value(i)}\n=======\n{_value(i + 1)}\n+++++++ REPLACE\n"}),
}


def codex_run(tree: Path, codex: Path, i: int) -> float:
    patch = (f"*** Begin Patch\n*** Update File: {counter('codex')}\n@@\n-{_value(i)}\n+{_value(i + 1)}\n"
             "*** End Patch\n")
    started = time.perf_counter()
    subprocess.run([str(codex), patch], cwd=tree, check=True, capture_output=True)
    return time.perf_counter() - started


async def _interleaved(tree: Path, calls: int, patchtx: str, codex: Path | None) -> dict[str, list[float]]:
    """Each round: one call of every tool to the running server, and one Codex process, in turn,
    so that a change in the machine's load touches all of them alike."""
    from mcp import Client, StdioServerParameters

    params = StdioServerParameters(command=patchtx, args=["mcp", "--root", str(tree)], cwd=str(tree))
    samples: dict[str, list[float]] = {name: [] for name in ("codex", *TOOLS)}
    async with Client(params) as client:
        for i in range(calls + warm.WARM_UP):
            for name, (tool, arguments) in TOOLS.items():
                started = time.perf_counter()
                result = await client.call_tool(tool, arguments(i))
                elapsed = time.perf_counter() - started
                if result.is_error:
                    raise RuntimeError(f"{name} call {i} failed: {result.content}")
                if i >= warm.WARM_UP:
                    samples[name].append(elapsed)
            if codex is not None:
                elapsed = codex_run(tree, codex, i)
                if i >= warm.WARM_UP:
                    samples["codex"].append(elapsed)
    return samples


def check(tree: Path, calls: int, codex: bool) -> None:
    """Every writing call was a real transaction: each counter went through every call."""
    total = calls + warm.WARM_UP
    for name in ("apply_patch", "str_replace", "edit_files", "replace_in_file", *(["codex"] * codex)):
        text = (tree / counter(name)).read_text()
        if text != f"value = {total}\n":
            raise RuntimeError(f"{name}: wrong result {text[:80]!r}")
    inserted = "value = 0\n" + "".join(f"# call {i}\n" for i in reversed(range(total)))
    if (tree / counter("insert")).read_text() != inserted:
        raise RuntimeError("insert: wrong result")


def measure(calls: int, codex: Path | None, patchtx: str) -> dict[str, Any]:
    tree = Path(tempfile.mkdtemp(prefix="patchtx-edit-tools-")) / "tree"
    try:
        wl.write_tree(tree, wl.tiny().input)
        for name in ("codex", *TOOLS):
            (tree / counter(name)).write_text("value = 0\n")
        os.sync()
        samples = asyncio.run(_interleaved(tree, calls, patchtx, codex))
        check(tree, calls, codex is not None)
        codex_median = statistics.median(samples["codex"]) if samples["codex"] else None
        out: dict[str, Any] = {"calls": calls}
        for name, times in samples.items():
            if times:
                median = statistics.median(times)
                out[name] = {"median_ms": round(median * 1000, 2), "ratio_to_codex": None
                             if codex_median is None else round(median / codex_median, 3)}
        out["guard"] = GUARD
        out["met"] = None if codex_median is None else all(
            out[name]["ratio_to_codex"] <= GUARD for name in TOOLS)
        return out
    finally:
        shutil.rmtree(tree.parent, ignore_errors=True)


def main(argv: list[str]) -> int:
    calls = int(argv[0]) if argv else 30
    codex = appliers.find_codex(None)
    patchtx = str(Path(sys.executable).parent / "patchtx")
    print(json.dumps(measure(calls, codex, patchtx), indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
