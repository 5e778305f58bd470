"""Per-call time of the edit-protocol tools through a running ``patchtx mcp``, against one process of
Codex's binary doing the same one-line edit: the MCP guard (≤ 0.75× one Codex process) for the text
editor, edit lists and SEARCH/REPLACE blocks.

In one run, on copies of the tiny-edit workload's tree (50 small modules, and a counter file each
call edits), after ``warm.WARM_UP`` untimed calls:

- ``codex``: one run of Codex's ``apply_patch`` per edit (a patch changing the counter's line);
- ``apply_patch``: the ``apply_patch`` tool with the same patch (for comparison);
- ``str_replace``: ``str_replace_based_edit_tool`` with ``command: str_replace`` on the counter;
- ``insert``: ``str_replace_based_edit_tool`` with ``command: insert`` after the counter's line;
- ``view``: ``str_replace_based_edit_tool`` with ``command: view`` of a module (reads only);
- ``edit_files``: one ``old_string``/``new_string`` edit of the counter;
- ``replace_in_file``: one SEARCH/REPLACE block on the counter.

Every writing call is a durable transaction (journal, fsyncs, undo history), checked afterwards
(the counter went through every call). ``python benchmarks/edit_tools.py [CALLS]`` prints the
medians and each tool's ratio to Codex as JSON (Codex from ``--codex`` or
``$PATCHTX_CODEX_APPLY_PATCH``, else scripts/install-codex-reference.sh's cache).
"""

from __future__ import annotations

import asyncio
import json
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

COUNTER = warm.COUNTER
GUARD = 0.75


def tree_copy(base: Path, into: Path) -> Path:
    tree = into / f"tree-{len(list(into.iterdir()))}"
    shutil.copytree(base, tree)
    warm.prepare(tree)
    return tree


def codex_per_run(tree: Path, runs: int, codex: Path) -> list[float]:
    times = []
    for i in range(runs + warm.WARM_UP):
        started = time.perf_counter()
        subprocess.run([str(codex), warm.edit(i)], cwd=tree, check=True, capture_output=True)
        if i >= warm.WARM_UP:
            times.append(time.perf_counter() - started)
    return times


def _value(i: int) -> str:
    return f"value = {i}"


TOOLS: dict[str, tuple[str, Callable[[int], dict[str, Any]]]] = {
    "apply_patch": ("apply_patch", lambda i: {"patch": warm.edit(i)}),
    "str_replace": ("str_replace_based_edit_tool", lambda i: {
        "command": "str_replace", "path": COUNTER, "old_str": _value(i), "new_str": _value(i + 1)}),
    "insert": ("str_replace_based_edit_tool", lambda i: {
        "command": "insert", "path": COUNTER, "insert_line": 1, "insert_text": f"# call {i}"}),
    "view": ("str_replace_based_edit_tool", lambda i: {
        "command": "view", "path": "app/module_007.py"}),
    "edit_files": ("edit_files", lambda i: {"edits": [
        {"path": COUNTER, "old_string": _value(i), "new_string": _value(i + 1)}]}),
    "replace_in_file": ("replace_in_file", lambda i: {
        "path": COUNTER, "diff": f"------- SEARCH\n{_value(i)}\n=======\n{_value(i + 1)}\n+++++++ REPLACE\n"}),
}


async def _calls(tree: Path, calls: int, patchtx: str, tool: str,
                 arguments: Callable[[int], dict[str, Any]]) -> list[float]:
    from mcp import Client, StdioServerParameters

    params = StdioServerParameters(command=patchtx, args=["mcp", "--root", str(tree)], cwd=str(tree))
    times = []
    async with Client(params) as client:
        for i in range(calls + warm.WARM_UP):
            started = time.perf_counter()
            result = await client.call_tool(tool, arguments(i))
            elapsed = time.perf_counter() - started
            if result.is_error:
                raise RuntimeError(f"{tool} call {i} failed: {result.content}")
            if i >= warm.WARM_UP:
                times.append(elapsed)
    return times


def measure(calls: int, codex: Path | None, patchtx: str) -> dict[str, Any]:
    work = wl.tiny()
    scratch = Path(tempfile.mkdtemp(prefix="patchtx-edit-tools-"))
    try:
        base = scratch / "base"
        wl.write_tree(base, work.input)
        trees = scratch / "trees"
        trees.mkdir()
        out: dict[str, Any] = {"calls": calls}
        # Round-robin twice over the tools, so that a change in the machine's load touches all.
        samples: dict[str, list[float]] = {name: [] for name in ("codex", *TOOLS)}
        for _round in range(2):
            if codex is not None:
                samples["codex"] += codex_per_run(tree_copy(base, trees), calls, codex)
            for name, (tool, arguments) in TOOLS.items():
                tree = tree_copy(base, trees)
                samples[name] += asyncio.run(_calls(tree, calls, patchtx, tool, arguments))
                text = (tree / COUNTER).read_text()
                expected = {"insert": "value = 0\n" + "".join(
                    f"# call {i}\n" for i in reversed(range(calls + warm.WARM_UP))), "view": "value = 0\n"}
                if text != expected.get(name, f"value = {calls + warm.WARM_UP}\n"):
                    raise RuntimeError(f"{name}: wrong result {text[:80]!r}")
        codex_median = statistics.median(samples["codex"]) if samples["codex"] else None
        for name, times in samples.items():
            if not times:
                continue
            median = statistics.median(times)
            out[name] = {"median_s": median,
                         "ratio_to_codex": None if codex_median is None else median / codex_median}
        out["guard"] = GUARD
        out["met"] = None if codex_median is None else all(
            out[name]["ratio_to_codex"] <= GUARD for name in TOOLS)
        return out
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def main(argv: list[str]) -> int:
    calls = int(argv[0]) if argv else 30
    codex = appliers.find_codex(None)
    patchtx = str(Path(sys.executable).parent / "patchtx")
    print(json.dumps(measure(calls, codex, patchtx), indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
