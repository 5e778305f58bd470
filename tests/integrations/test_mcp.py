"""The MCP server, driven as a client would drive it: a real subprocess over stdio
(``python -m patchtx.agents.mcp_server --root DIR``), the official SDK's client, a real tree."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from agents_support import server_environment, snapshot
from mcp import Client
from tests.plan.syntax import need_grammars
from tests.warm_server import parameters

from patchtx.render import result_schema

pytestmark = pytest.mark.anyio

EDIT = ("*** Begin Patch\n*** Update File: app.py\n@@ def main():\n-    print('hello')\n"
        "+    print('bye')\n*** Add File: pkg/new.py\n+NEW = True\n*** End Patch\n")
DELETE = "*** Begin Patch\n*** Delete File: notes.txt\n*** End Patch\n"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@asynccontextmanager
async def connect(root: Path) -> AsyncIterator[Client]:
    params = parameters(["--root", str(root)], cwd=str(root.parent), env=server_environment())
    async with Client(params) as client:
        yield client


def files(root: Path) -> dict[str, bytes | None]:
    return {k: v for k, v in snapshot(root).items() if not k.startswith(".patchtx")}


def assert_tree_matches(before: dict[str, bytes | None], after: dict[str, bytes | None],
                        reported: list[dict[str, str]]) -> None:
    """The files that changed on disk are exactly the ones the result lists, each as it says."""
    changed = {path for path in before.keys() | after.keys()
               if before.get(path) != after.get(path) and (after.get(path) or before.get(path)) is not None}
    expected: set[str] = set()
    for entry in reported:
        expected.add(entry["path"])
        if entry["status"] == "deleted":
            assert entry["path"] not in after
        else:
            assert after.get(entry["path"]) is not None, entry["path"]
        if entry["status"] == "moved":
            expected.add(entry["from"])
            assert entry["from"] not in after
    assert changed == expected


async def call(client: Client, tool: str, arguments: dict[str, Any]) -> tuple[bool, dict[str, Any], str]:
    result = await client.call_tool(tool, arguments)
    assert len(result.content) == 1 and result.content[0].type == "text"
    assert isinstance(result.structured_content, dict)
    return bool(result.is_error), result.structured_content, result.content[0].text


async def test_skip_applied_covers_an_insertion_written_as_a_replacement(tmp_path: Path) -> None:
    # Issue 37, item 6: '-    return y' '+    log(y)' '+    return y' finds its old line again once
    # applied; sent again through the tool (anchor, bare '@@', no header), it changes nothing.
    (tmp_path / "a.py").write_text("def f(x):\n    y = x\n    return y\n")
    once = "def f(x):\n    y = x\n    log(y)\n    return y\n"
    async with connect(tmp_path) as client:
        for header in ("@@ def f(x):\n", "@@\n", ""):
            fix = (f"*** Begin Patch\n*** Update File: a.py\n{header}-    return y\n+    log(y)\n"
                   "+    return y\n*** End Patch\n")
            if not header.startswith("@@ def"):
                (tmp_path / "a.py").write_text("def f(x):\n    y = x\n    return y\n")
            is_error, content, _ = await call(client, "apply_patch", {"patch": fix})
            assert not is_error, content
            for _ in range(2):
                is_error, content, _ = await call(client, "apply_patch", {"patch": fix, "skip_applied": True})
                assert not is_error and content["files"] == [], content
            assert (tmp_path / "a.py").read_text() == once


async def test_lists_both_tools_with_schemas_and_annotations(tree: Path) -> None:
    async with connect(tree) as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
    assert set(tools) == {"apply_patch", "preview_patch", "log", "undo",
                          "str_replace_based_edit_tool", "view", "edit_files", "replace_in_file",
                          "edit_file"}
    apply, preview = tools["apply_patch"], tools["preview_patch"]

    schema = apply.input_schema
    assert schema["required"] == ["patch"]
    assert schema["properties"]["patch"]["type"] == "string"
    assert {name: prop.get("default") for name, prop in schema["properties"].items()} == {
        "patch": None, "dry_run": False, "allow_delete": False, "allow_move": True,
        "workspace_root": ".", "intent": None, "extract": False, "skip_applied": False,
        "strip": None, "reverse": False}
    assert set(preview.input_schema["properties"]) == {"patch", "allow_delete", "allow_move",
                                                       "workspace_root", "extract", "skip_applied",
                                                       "strip", "reverse"}
    assert apply.output_schema == preview.output_schema == tools["undo"].output_schema == result_schema()

    assert apply.annotations is not None and preview.annotations is not None
    assert (apply.annotations.read_only_hint, apply.annotations.destructive_hint,
            apply.annotations.idempotent_hint, apply.annotations.open_world_hint) == (
        False, True, False, False)
    assert preview.annotations.read_only_hint is True
    assert preview.annotations.open_world_hint is False
    assert "*** Begin Patch" in (apply.description or "")


async def test_apply_dry_run_and_permissions_in_one_session(tree: Path) -> None:
    """One server, several calls, the tree checked after each (a server start costs ~2 s)."""
    async with connect(tree) as client:
        before = snapshot(tree)
        dry = await call(client, "apply_patch", {"patch": EDIT, "dry_run": True})
        preview = await call(client, "preview_patch", {"patch": EDIT})
        assert snapshot(tree) == before
        for is_error, content, _ in (dry, preview):
            assert not is_error and content["dry_run"] is True
            assert content["summary"] == "A 1, M 1, D 0, R 0"
        assert dry[1] == preview[1]

        before = files(tree)
        is_error, content, text = await call(client, "apply_patch", {"patch": EDIT, "intent": "greet"})
        assert not is_error
        assert_tree_matches(before, files(tree), content["files"])
        assert content["ok"] is True and content["dry_run"] is False
        assert content["summary"] == "A 1, M 1, D 0, R 0"
        assert [(f["path"], f["status"]) for f in content["files"]] == [("app.py", "modified"),
                                                                        ("pkg/new.py", "added")]
        assert "+    print('bye')\n" in content["files"][0]["diff"]
        # The model reads the summary and plain diffs, not escaped JSON.
        assert text.startswith("Applied: A 1, M 1, D 0, R 0\n  M app.py\n  A pkg/new.py\n")
        assert "+    print('bye')\n" in text and "\\n" not in text
        assert (tree / "app.py").read_text() == "def main():\n    print('bye')\n"
        assert (tree / "pkg" / "new.py").read_text() == "NEW = True\n"
        assert content["files"] == dry[1]["files"]  # the dry run told the truth

        # Sent again: refused, unless the call says an applied patch is fine.
        is_error, content, _ = await call(client, "apply_patch", {"patch": EDIT})
        assert is_error and content["error"]["kind"] == "already_applied"
        for tool in ("apply_patch", "preview_patch"):
            is_error, content, _ = await call(client, tool, {"patch": EDIT, "skip_applied": True})
            assert not is_error and content["summary"] == "A 0, M 0, D 0, R 0" and content["files"] == []
        assert (tree / "app.py").read_text() == "def main():\n    print('bye')\n"

        is_error, content, text = await call(client, "apply_patch", {"patch": DELETE})
        assert is_error
        assert set(content) == set(result_schema()["required"])
        assert content["ok"] is False and content["error"]["kind"] == "policy_violation"
        assert text == f"Error [policy_violation]: {content['error']['message']}"
        assert (tree / "notes.txt").read_text() == "one\ntwo\nthree\n"
        before = files(tree)
        is_error, content, _ = await call(client, "apply_patch", {"patch": DELETE, "allow_delete": True})
        assert_tree_matches(before, files(tree), content["files"])
        assert not is_error and content["files"] == [
            {"path": "notes.txt", "status": "deleted",
             "diff": "diff --git a/notes.txt b/notes.txt\ndeleted file mode 100644\n"
                     "--- a/notes.txt\n+++ /dev/null\n@@ -1,3 +0,0 @@\n-one\n-two\n-three\n"}]
        assert not (tree / "notes.txt").exists()

        before = files(tree)
        failing = ("*** Begin Patch\n*** Add File: later.txt\n+x\n*** Update File: app.py\n"
                   "-    print('four')\n+    print(4)\n*** End Patch\n")
        is_error, content, text = await call(client, "apply_patch", {"patch": failing})
        assert is_error and content["error"]["kind"] == "context_not_found"
        assert "Nothing was changed." in text and "app.py" in text
        is_error, content, text = await call(client, "apply_patch", {"dry_run": True})
        assert is_error and content["error"]["kind"] == "invalid_arguments"
        assert text == ("Error [invalid_arguments]: Invalid arguments for apply_patch: `patch` is required. "
                        "Nothing was changed. Resend the call with corrected arguments, as the tool's "
                        "input schema says.")
        is_error, content, text = await call(client, "apply_patch", {"patch": 42, "allow_delete": "maybe"})
        assert is_error and content["error"]["kind"] == "invalid_arguments"
        assert "`patch` must be a string" in text and "`allow_delete` must be a boolean (true or false)" in text
        assert "pydantic" not in text and "validation error" not in text
        assert files(tree) == before


async def test_nothing_outside_the_root_is_reachable(tree: Path) -> None:
    (tree.parent / "outside.txt").write_text("keep\n")
    escape = "*** Begin Patch\n*** Update File: ../outside.txt\n-keep\n+gone\n*** End Patch\n"
    absolute = f"*** Begin Patch\n*** Add File: {tree.parent}/planted.txt\n+x\n*** End Patch\n"
    add = "*** Begin Patch\n*** Add File: planted.txt\n+x\n*** End Patch\n"
    async with connect(tree) as client:
        before = files(tree.parent)
        results = [await call(client, "apply_patch", {"patch": escape}),
                   await call(client, "apply_patch", {"patch": absolute}),
                   await call(client, "apply_patch", {"patch": add, "workspace_root": ".."}),
                   await call(client, "preview_patch", {"patch": add, "workspace_root": str(tree.parent)})]
        for is_error, content, _ in results:
            assert is_error and content["error"]["kind"] == "unsafe_path", content
        assert "outside the workspace root" in results[2][1]["error"]["message"]
        assert files(tree.parent) == before

        patch = ("*** Begin Patch\n*** Update File: util.py\n*** Move to: lib/util.py\n-VALUE = 1\n"
                 "+VALUE = 2\n*** End Patch\n")
        before = files(tree)
        is_error, content, _ = await call(client, "apply_patch", {"patch": patch, "workspace_root": "pkg"})
        assert not is_error and content["files"][0]["path"] == "pkg/lib/util.py"
        assert_tree_matches(before, files(tree), content["files"])
        assert (tree / "pkg" / "lib" / "util.py").read_text() == "VALUE = 2\n"


def test_the_server_refuses_a_root_that_is_not_a_directory(tmp_path: Path,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    from patchtx.agents.mcp_server import mcp_main

    assert mcp_main(["--root", str(tmp_path / "missing")]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and "is not a directory" in captured.err


def _requests_then_end_of_input(patch: str) -> str:
    import json

    messages = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize",
         "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                    "clientInfo": {"name": "pipe", "version": "1"}}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
         "params": {"name": "apply_patch", "arguments": {"patch": patch}}},
    ]
    return "".join(json.dumps(m) + "\n" for m in messages)


def test_a_call_written_just_before_end_of_input_is_still_answered(tree: Path) -> None:
    # `echo REQUESTS | patchtx mcp`: stdin ends while the call runs; the SDK alone ends the
    # session there and drops the answer to a patch it has applied.
    import json
    import subprocess

    patchtx = str(Path(sys.executable).parent / "patchtx")
    done = subprocess.run([patchtx, "mcp", "--root", str(tree)], input=_requests_then_end_of_input(EDIT),
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    answers = {m["id"]: m for m in map(json.loads, done.stdout.splitlines())}
    assert sorted(answers) == [1, 2]
    result = answers[2]["result"]
    assert not result.get("isError") and result["structuredContent"]["summary"] == "A 1, M 1, D 0, R 0"
    assert (tree / "pkg" / "new.py").read_text() == "NEW = True\n"


@pytest.mark.parametrize(("stdin", "line_end"), [("pipe", "\r\n"), ("file", "\r")])
def test_requests_are_read_from_a_pipe_or_a_file_with_any_line_end(tree: Path, tmp_path: Path,
                                                                   stdin: str, line_end: str) -> None:
    # A pipe is read by the server's event loop, which sets it non-blocking: a mode every holder
    # of the pipe shares (a terminal's shell), set back at the end. A file is read by a thread.
    # Either way a line may end as text files end them.
    requests = _requests_then_end_of_input(EDIT).replace("\n", line_end).encode()
    patchtx = str(Path(sys.executable).parent / "patchtx")
    if stdin == "pipe":
        read_end, write_end = os.pipe()
        with open(write_end, "wb") as writing:
            writing.write(requests)  # (smaller than a pipe's buffer)
        with open(read_end, "rb") as reading:
            done = subprocess.run([patchtx, "mcp", "--root", str(tree)], stdin=reading,
                                  capture_output=True, text=True, timeout=60)
            assert os.get_blocking(reading.fileno())
    else:
        (tmp_path / "requests").write_bytes(requests)
        with open(tmp_path / "requests", "rb") as reading:
            done = subprocess.run([patchtx, "mcp", "--root", str(tree)], stdin=reading,
                                  capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    answers = {m["id"]: m for m in map(json.loads, done.stdout.splitlines())}
    assert sorted(answers) == [1, 2]
    assert answers[2]["result"]["structuredContent"]["summary"] == "A 1, M 1, D 0, R 0"


def test_a_request_longer_than_the_pipe_readers_buffer_is_read_whole(tree: Path) -> None:
    # The pipe reader buffers 64 KiB (so that a client that never reads is held back); a longer
    # line (a patch of 300 KB) comes in pieces and is read whole.
    big = "".join(f"+line {i} {'x' * 60}\n" for i in range(4500))
    patch = f"*** Begin Patch\n*** Add File: big.txt\n{big}*** End Patch\n"
    patchtx = str(Path(sys.executable).parent / "patchtx")
    done = subprocess.run([patchtx, "mcp", "--root", str(tree)], input=_requests_then_end_of_input(patch),
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    answers = {m["id"]: m for m in map(json.loads, done.stdout.splitlines())}
    assert answers[2]["result"]["structuredContent"]["summary"] == "A 1, M 0, D 0, R 0"
    assert len((tree / "big.txt").read_bytes()) > 256 * 1024


def test_ctrl_c_ends_the_server_with_one_line(tree: Path) -> None:
    import signal

    patchtx = str(Path(sys.executable).parent / "patchtx")
    server = subprocess.Popen([patchtx, "mcp", "--root", str(tree)], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert server.stdin is not None and server.stdout is not None
    server.stdin.write(_requests_then_end_of_input(EDIT).splitlines(keepends=True)[0].encode())
    server.stdin.flush()
    assert json.loads(server.stdout.readline())["id"] == 1  # serving
    server.send_signal(signal.SIGINT)
    _, errors = server.communicate(timeout=60)
    assert server.returncode == 130
    first, interrupted = errors.decode().splitlines()
    assert first == f"patchtx mcp: workspace root {tree} (--root)"
    assert interrupted.startswith("patchtx mcp: interrupted.") and "Traceback" not in errors.decode()


def test_a_cancelled_request_does_not_hold_the_end_of_input() -> None:
    from mcp.types import JSONRPCNotification, JSONRPCRequest, JSONRPCResponse

    from patchtx.agents.mcp_stdio import _InFlight

    in_flight = _InFlight()
    for request_id in (7, 8):
        in_flight.note_incoming(JSONRPCRequest(jsonrpc="2.0", id=request_id, method="tools/call"))
    in_flight.note_incoming(JSONRPCNotification(jsonrpc="2.0", method="notifications/cancelled",
                                                params={"requestId": 7}))
    assert in_flight.ids == {8}
    in_flight.note_outgoing(JSONRPCResponse(jsonrpc="2.0", id=8, result={}))
    assert in_flight.ids == set()


async def test_log_and_undo_tools(tree: Path) -> None:
    import jsonschema

    validator = jsonschema.Draft202012Validator(result_schema())
    async with connect(tree) as client:
        is_error, empty, text = await call(client, "log", {})
        assert not is_error and empty == {"ok": True, "transactions": []}
        assert text == "The undo history is empty.\n"

        is_error, applied, _ = await call(client, "apply_patch", {"patch": EDIT, "intent": "greet"})
        assert not is_error
        validator.validate(applied)
        is_error, listed, text = await call(client, "log", {})
        assert [t["id"] for t in listed["transactions"]] == [applied["transaction"]]
        # The one shape: the tool's JSON is `patchtx log --json`'s, the changed paths included.
        cli = subprocess.run([sys.executable, "-m", "patchtx.cli", "log", "--json", "--root", str(tree)],
                             capture_output=True, text=True, check=True)
        assert listed == json.loads(cli.stdout)
        assert listed["transactions"][0]["paths"] == ["app.py", "pkg/new.py"]
        first, files_line = text.splitlines()  # the entry, then the files it changed
        assert first.startswith(applied["transaction"]) and first.endswith("greet")
        assert files_line.startswith("    ") and "pkg/new.py" in files_line

        before = files(tree)
        # Undoing it deletes pkg/new.py: gated as a patch's deletes are, dry run included.
        for arguments in ({"transaction": applied["transaction"]},
                          {"transaction": applied["transaction"], "dry_run": True}):
            is_error, refused, text = await call(client, "undo", arguments)
            assert is_error and refused["error"]["kind"] == "policy_violation"
            assert refused["error"]["path"] == "pkg/new.py" and "allow_delete" in text
            validator.validate(refused)
        assert files(tree) == before

        is_error, shown, text = await call(client, "undo", {"transaction": applied["transaction"][:17],
                                                            "dry_run": True, "allow_delete": True})
        assert not is_error and shown["dry_run"] is True and files(tree) == before
        assert text.startswith(f"Would undo transaction {applied['transaction']}.\nDry run")
        is_error, undone, text = await call(client, "undo", {"transaction": applied["transaction"],
                                                             "allow_delete": True})
        assert not is_error
        validator.validate(undone)
        assert undone["undone"] == applied["transaction"] and undone["transaction"]
        assert text.startswith(f"Undid transaction {applied['transaction']} as transaction "
                               f"{undone['transaction']}.\nApplied: A 0, M 1, D 1, R 0\n")
        assert "-    print('bye')\n+    print('hello')\n" in text
        assert (tree / "app.py").read_text() == "def main():\n    print('hello')\n"
        assert not (tree / "pkg" / "new.py").exists()

        is_error, unknown, text = await call(client, "undo", {"transaction": "nope"})
        assert is_error and unknown["error"]["kind"] == "unknown_transaction"
        is_error, wrong, text = await call(client, "undo", {})
        assert is_error and wrong["error"]["kind"] == "invalid_arguments" and "`transaction` is required" in text


async def test_the_history_keeps_its_limit_through_the_server(tree: Path) -> None:
    # Each call's commit prunes what no longer fits: the history never lists more than its limit,
    # and nothing of a pruned entry is left.
    params = parameters(["--root", str(tree), "--history-count", "2"], cwd=str(tree.parent),
                        env=server_environment())
    async with Client(params) as client:
        for value in range(5):
            patch = f"*** Begin Patch\n*** Add File: counter{value}.txt\n+{value}\n*** End Patch\n"
            is_error, applied, _ = await call(client, "apply_patch", {"patch": patch})
            assert not is_error, applied
            is_error, listed, _ = await call(client, "log", {})
            assert [t["id"] for t in listed["transactions"]][:1] == [applied["transaction"]]
            assert len(listed["transactions"]) == min(value + 1, 2)
    journal = tree / ".patchtx" / "journal"
    names = sorted(path.name for path in journal.iterdir())
    assert not [name for name in names if name.endswith(".pruned")], names
    kept = {name.partition(".")[0] for name in names}
    assert len(kept) == 2 and all(name.endswith((".before", "-0")) or ".kept-" in name for name in names)


async def test_a_call_that_commits_nothing_leaves_the_state_folder_alone(tree: Path) -> None:
    # A read, a dry run or a refused patch neither deletes what lies in .patchtx/journal (here,
    # files a repository planted under a pruned entry's names) nor creates the lock.
    journal = tree / ".patchtx" / "journal"
    journal.mkdir(parents=True)
    planted = ["20260101T000000-0123abcd.pruned", "20260101T000000-0123abcd.0.before"]
    for name in planted:
        (journal / name).write_text("planted\n")
    async with connect(tree) as client:
        is_error, _, _ = await call(client, "str_replace_based_edit_tool", {"command": "view", "path": "app.py"})
        assert not is_error
        is_error, _, _ = await call(client, "apply_patch", {"patch": EDIT, "dry_run": True})
        assert not is_error
        is_error, _, _ = await call(client, "apply_patch", {"patch": DELETE})
        assert is_error  # refused: deleting needs allow_delete
    assert sorted(path.name for path in journal.iterdir()) == sorted(planted)
    assert not (tree / ".patchtx" / "lock").exists()


async def test_a_file_that_crashes_a_grammar_does_not_end_the_server(tree: Path) -> None:
    """Issue 38: the YAML grammar segfaults on 300 nested block mappings. The guard (refuse, the
    server's default) parsed in the server's process: the call died with it, and every later call
    of the agent. Now the grammar runs in a child: the file is written unchecked, saying so."""
    need_grammars()
    deep = "".join(" " * i + f"k{i}:\n" for i in range(300)) + " " * 300 + "v\n"
    patch = ("*** Begin Patch\n*** Add File: deep.yaml\n" + "".join(f"+{line}\n" for line in deep.splitlines())
             + "*** End Patch\n")
    async with connect(tree) as client:
        is_error, content, _ = await call(client, "apply_patch", {"patch": patch})
        assert not is_error, content
        (entry,) = content["syntax"]["files"]
        assert entry["status"] == "not_checked" and "crashed" in entry["reason"]
        assert (tree / "deep.yaml").read_text() == deep
        broken = "*** Begin Patch\n*** Add File: bad.yaml\n+a: [1\n*** End Patch\n"
        is_error, content, _ = await call(client, "apply_patch", {"patch": broken})
        assert is_error and content["error"]["kind"] == "syntax_error"  # the next file is checked
        is_error, _, _ = await call(client, "apply_patch", {"patch": EDIT})
        assert not is_error


def test_every_answered_request_is_forgotten() -> None:
    # A long session must not keep a cancellation per request it ever read.
    from mcp.types import JSONRPCNotification, JSONRPCRequest, JSONRPCResponse

    from patchtx.agents.mcp_server import Calls
    from patchtx.agents.mcp_stdio import _InFlight

    calls = Calls()
    in_flight = _InFlight(None, calls)
    for request_id in range(100):
        in_flight.note_incoming(JSONRPCRequest(jsonrpc="2.0", id=request_id, method="ping"))
        in_flight.note_outgoing(JSONRPCResponse(jsonrpc="2.0", id=request_id, result={}))
    assert calls._by_id == {}
    in_flight.note_incoming(JSONRPCRequest(jsonrpc="2.0", id="c", method="tools/call"))
    in_flight.note_incoming(JSONRPCNotification(jsonrpc="2.0", method="notifications/cancelled",
                                                params={"requestId": "c"}))
    cancellation = calls.cancellation("c")  # (the call starting after its cancel: still cancelled)
    assert cancellation.requested
    calls.finished("c", cancellation)
    assert calls._by_id == {}
