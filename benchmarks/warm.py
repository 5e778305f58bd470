"""Per-call time of a tiny durable edit in a process that is already running.

An agent host should keep patchtx running (the library in its own process, or ``patchtx mcp``),
so that start-up is paid once; this measures what each edit then costs:

- ``library``: ``patchtx.apply_patch`` called again and again in one warm Python process;
- ``mcp``: ``apply_patch`` tool calls to one running ``patchtx mcp --root TREE`` server, driven by
  the official MCP client over stdio (the round trip a host pays: JSON-RPC, validation, the
  transaction, the result).

Each call is one durable transaction that changes one line of a small tree (the tiny-edit
workload's tree plus a counter file), the next call changing it again. Run alone:
``python benchmarks/warm.py TREE`` prints the medians as JSON, with ``mcp_floor``: the same calls
to a ``patchtx mcp`` whose tool returns a canned result of the same shape and size without doing
anything, so the floor under ``mcp`` that the SDK's round trip sets (JSON-RPC over stdio, argument
validation, the worker thread, the client validating the result against the outputSchema).
"""

from __future__ import annotations

import asyncio
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

COUNTER = "counter.txt"
WARM_UP = 3


def edit(i: int) -> str:
    return (f"*** Begin Patch\n*** Update File: {COUNTER}\n@@\n-value = {i}\n+value = {i + 1}\n"
            "*** End Patch\n")


def prepare(tree: Path) -> None:
    (tree / COUNTER).write_text("value = 0\n")
    os.sync()


def _library_child(tree: str, calls: int) -> None:
    """Runs in a fresh interpreter: import once, then time each call."""
    import patchtx

    times = []
    for i in range(calls + WARM_UP):
        started = time.perf_counter()
        patchtx.apply_patch(edit(i), tree)
        if i >= WARM_UP:
            times.append(time.perf_counter() - started)
    print(json.dumps(times))


def library_per_call(tree: Path, calls: int, python: str = sys.executable) -> list[float]:
    prepare(tree)
    done = subprocess.run([python, __file__, "--library-child", str(tree), str(calls)],
                          capture_output=True, text=True, check=True)
    return [float(t) for t in json.loads(done.stdout)]


async def _mcp_calls(tree: Path, calls: int, server: list[str]) -> list[float]:
    from mcp import Client, StdioServerParameters

    params = StdioServerParameters(command=server[0], args=[*server[1:], "--root", str(tree)],
                                   cwd=str(tree))
    times = []
    async with Client(params) as client:
        for i in range(calls + WARM_UP):
            started = time.perf_counter()
            result = await client.call_tool("apply_patch", {"patch": edit(i)})
            elapsed = time.perf_counter() - started
            if result.is_error:
                raise RuntimeError(f"call {i} failed: {result.content}")
            if i >= WARM_UP:
                times.append(elapsed)
    return times


def mcp_per_call(tree: Path, calls: int, patchtx_bin: str) -> list[float]:
    prepare(tree)
    return asyncio.run(_mcp_calls(tree, calls, [patchtx_bin, "mcp"]))


def mcp_minimal_per_call(tree: Path, calls: int, patchtx_bin: str) -> list[float]:
    """``mcp_per_call`` through a minimal JSON-RPC client over stdio (a line written, lines read
    until the answer with its id): what the server costs per call, the guard of issue 39's
    decision, without the official client's own validation and task machinery."""
    prepare(tree)
    server = subprocess.Popen([patchtx_bin, "mcp", "--root", str(tree)], cwd=tree, stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    assert server.stdin is not None and server.stdout is not None
    stdin, stdout = server.stdin, server.stdout

    def ask(ident: int, method: str, params: dict[str, object]) -> dict[str, object]:
        stdin.write(json.dumps({"jsonrpc": "2.0", "id": ident, "method": method, "params": params}).encode() + b"\n")
        stdin.flush()
        while True:
            answer = json.loads(stdout.readline())
            if answer.get("id") == ident:
                return answer  # type: ignore[no-any-return]

    try:
        ask(0, "initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                              "clientInfo": {"name": "warm.py", "version": "1"}})
        stdin.write(b'{"jsonrpc": "2.0", "method": "notifications/initialized"}\n')
        stdin.flush()
        times = []
        for i in range(calls + WARM_UP):
            started = time.perf_counter()
            answer = ask(i + 1, "tools/call", {"name": "apply_patch", "arguments": {"patch": edit(i)}})
            elapsed = time.perf_counter() - started
            result = answer.get("result")
            if not isinstance(result, dict) or result.get("isError"):
                raise RuntimeError(f"call {i} failed: {answer}")
            if i >= WARM_UP:
                times.append(elapsed)
        return times
    finally:
        stdin.close()
        server.wait(timeout=30)


def mcp_floor_per_call(tree: Path, calls: int, python: str = sys.executable) -> list[float]:
    """``mcp_per_call`` against a server whose tool answers at once (see ``_canned_server``)."""
    return asyncio.run(_mcp_calls(tree, calls, [python, __file__, "--canned-server"]))


def _canned_server(argv: list[str]) -> int:
    """``patchtx mcp`` with the same tools, whose apply_patch returns the result of a one-line edit
    (a durable commit's payload and text, made once at start in a scratch tree, so that its shape
    is always the real one) without reading or writing anything."""
    import tempfile

    from patchtx.agents import mcp_server

    with tempfile.TemporaryDirectory() as scratch:
        prepare(Path(scratch))
        canned = mcp_server.apply_patch_call(edit(0), scratch, origin="mcp")
    assert canned.payload["ok"], canned.text
    mcp_server.apply_patch_call = lambda *args, **options: canned  # type: ignore[attr-defined]
    return mcp_server.mcp_main(argv)


def check(tree: Path, calls: int) -> bool:
    """The counter went through every call (each was a real transaction)."""
    return (tree / COUNTER).read_text() == f"value = {calls + WARM_UP}\n"


def main(argv: list[str]) -> int:
    if argv[:1] == ["--library-child"]:
        _library_child(argv[1], int(argv[2]))
        return 0
    if argv[:1] == ["--canned-server"]:
        return _canned_server(argv[1:])
    tree = Path(argv[0]).resolve()
    calls = int(argv[1]) if len(argv) > 1 else 20
    here = Path(sys.executable).parent
    out = {"library": statistics.median(library_per_call(tree, calls))}
    out["library_ok"] = check(tree, calls)
    out["mcp"] = statistics.median(mcp_per_call(tree, calls, str(here / "patchtx")))
    out["mcp_ok"] = check(tree, calls)
    out["mcp_floor"] = statistics.median(mcp_floor_per_call(tree, calls))
    out["mcp_minimal"] = statistics.median(mcp_minimal_per_call(tree, calls, str(here / "patchtx")))
    out["mcp_minimal_ok"] = check(tree, calls)
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
