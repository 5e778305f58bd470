"""The MCP server as hosts really run it: started in any folder (Claude Desktop: /), told its
workspace by the client's roots, cancelled, timed out, asked for progress, read-only in read modes.
Through the official Python SDK's client, a real server process each time (tests/warm_server.py)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from agents_support import server_environment
from mcp import Client
from mcp import types as mcp_types
from tests.warm_server import parameters

pytestmark = pytest.mark.anyio

PATCHTX = str(Path(sys.executable).parent / "patchtx")
VIEW_NAME = {"command": "view", "path": "name.txt"}


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


async def text_of(client: Client, tool: str, arguments: dict[str, Any]) -> tuple[bool, str, dict[str, Any]]:
    result = await client.call_tool(tool, arguments)
    assert result.content[0].type == "text"
    return bool(result.is_error), result.content[0].text, result.structured_content or {}


# -- 1. a root that cannot be the disk ----------------------------------------------------------------


def test_a_root_of_the_whole_disk_is_refused_at_start(tmp_path: Path) -> None:
    done = subprocess.run([PATCHTX, "mcp", "--root", "/"], input="", capture_output=True, text=True,
                          timeout=60, cwd=tmp_path)
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == ("patchtx mcp: Refusing the workspace root /: it is the whole disk. Pass --root with "
                           "the project's folder.\n")
    home = tmp_path / "home"
    home.mkdir()
    done = subprocess.run([PATCHTX, "mcp", "--root", "."], input="", capture_output=True, text=True,
                          timeout=60, cwd=home, env={**server_environment(), "HOME": str(home), "PATH": "/usr/bin"})
    assert done.returncode == 2 and done.stderr.splitlines() == [
        f"patchtx mcp: Refusing the workspace root {home}: it is your home folder. Pass --root with the "
        "project's folder."]


def test_the_first_line_names_the_root(tree: Path) -> None:
    done = subprocess.run([PATCHTX, "mcp", "--root", str(tree)], input="", capture_output=True, text=True,
                          timeout=60, cwd="/")
    assert done.returncode == 0 and done.stderr.splitlines()[0] == f"patchtx mcp: workspace root {tree} (--root)"
    done = subprocess.run([PATCHTX, "mcp"], input="", capture_output=True, text=True, timeout=60, cwd="/")
    assert done.returncode == 0 and done.stderr.splitlines()[0] == (
        "patchtx mcp: workspace root: the client's first root (MCP roots), else the working folder / "
        "(refused as a root: it is the whole disk; pass --root)")


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_started_in_the_disk_without_roots_every_call_is_refused(mode: str) -> None:
    # As Claude Desktop starts servers (working folder /) with the documented `--root .` left out
    # and a client that offers no roots (2026-07-28 has none): nothing under / is ever read.
    params = parameters([], cwd="/", env=server_environment())
    async with Client(params, mode=mode) as client:  # type: ignore[arg-type]
        for tool, arguments in (("str_replace_based_edit_tool", {"command": "view", "path": "etc/hostname"}),
                                ("preview_patch", {"patch": "*** Begin Patch\n*** Add File: tmp/x\n+x\n"
                                                            "*** End Patch\n"}),
                                ("log", {})):
            is_error, text, content = await text_of(client, tool, arguments)
            assert is_error and content["error"]["kind"] == "unsafe_path"
            assert text == ("Error [unsafe_path]: Refusing the workspace root /: it is the whole disk. Nothing "
                            "was changed. Pass --root with the project's folder, an absolute path, in the "
                            "server's configuration (the host started it in /).")


async def test_the_workspace_is_the_clients_first_root_and_follows_its_changes(tmp_path: Path) -> None:
    first, second, third = (tmp_path / name for name in ("first", "second", "third"))
    for folder in (first, second, third):
        folder.mkdir()
        (folder / "name.txt").write_text(f"{folder.name}\n")
    listed: list[list[str]] = [[(tmp_path / "gone").as_uri(), first.as_uri(), second.as_uri()]]

    async def roots(_context: object) -> mcp_types.ListRootsResult:
        return mcp_types.ListRootsResult(roots=[mcp_types.Root(uri=uri) for uri in listed[-1]])

    params = parameters([], cwd="/", env=server_environment())
    async with Client(params, mode="legacy", list_roots_callback=roots) as client:
        is_error, text, _ = await text_of(client, "str_replace_based_edit_tool", VIEW_NAME)
        assert not is_error and "first" in text
        # The other roots are not served: a path into one is outside the workspace.
        is_error, _, content = await text_of(client, "apply_patch", {"patch": (
            f"*** Begin Patch\n*** Update File: {second}/name.txt\n-second\n+2\n*** End Patch\n")})
        assert is_error and content["error"]["kind"] == "unsafe_path"
        is_error, _, content = await text_of(client, "apply_patch", {"patch": (
            "*** Begin Patch\n*** Update File: name.txt\n-first\n+1\n*** End Patch\n")})
        assert not is_error and (first / "name.txt").read_text() == "1\n"
        # Roots that change: the next call asks again; a root of / is refused like a working folder of /.
        listed.append(["file:///", third.as_uri()])
        await client.send_roots_list_changed()
        is_error, text, content = await text_of(client, "log", {})
        assert is_error and text.startswith("Error [unsafe_path]: Refusing the workspace root /: it is the whole disk.")
        listed.append([third.as_uri()])
        await client.send_roots_list_changed()
        is_error, text, _ = await text_of(client, "str_replace_based_edit_tool", VIEW_NAME)
        assert not is_error and "third" in text
        listed.append([])  # no roots at all: the working folder, here / (refused)
        await client.send_roots_list_changed()
        is_error, text, _ = await text_of(client, "log", {})
        assert is_error and "(the host started it in /)" in text
    assert (second / "name.txt").read_text() == "second\n"


async def test_a_given_root_wins_over_the_clients_roots(tree: Path, tmp_path: Path) -> None:
    asked: list[object] = []

    async def roots(context: object) -> mcp_types.ListRootsResult:
        asked.append(context)
        return mcp_types.ListRootsResult(roots=[mcp_types.Root(uri=tmp_path.as_uri())])

    params = parameters(["--root", str(tree)], cwd="/", env=server_environment())
    async with Client(params, mode="legacy", list_roots_callback=roots) as client:
        is_error, text, _ = await text_of(client, "str_replace_based_edit_tool", {"command": "view", "path": "app.py"})
        assert not is_error and "print('hello')" in text
    assert asked == []


# -- 2. cancel means no write; 3. progress --------------------------------------------------------------


def many_files(count: int) -> str:
    adds = "".join(f"*** Add File: d{i % 20}/f{i}.txt\n+line {i}\n" for i in range(count))
    return f"*** Begin Patch\n{adds}*** End Patch\n"


FENCE = "*** Begin Patch\n*** Add File: fence.txt\n+fence\n*** End Patch\n"


def tree_files(root: Path) -> dict[str, bytes]:
    return {str(path.relative_to(root)): path.read_bytes() for path in root.rglob("*")
            if path.is_file() and ".patchtx" not in path.parts}


async def cancelled_then_fenced(client: Client, arguments: dict[str, Any], *, when: Any) -> list[str]:
    """Call apply_patch with ``arguments`` and cancel it (as a host does: the SDK sends
    notifications/cancelled) once ``when(message)`` is true of a progress message (or a float: after
    that many seconds); then apply a one-file patch, which takes the workspace lock after the
    cancelled call (the lock is held from its commit's start to its end). The progress messages seen."""
    seen: list[str] = []
    with anyio.CancelScope() as scope:
        async def progress(_value: float, _total: float | None, message: str | None) -> None:
            seen.append(message or "")
            if callable(when) and when(message or ""):
                scope.cancel()

        if isinstance(when, float):
            scope.deadline = anyio.current_time() + when
        result = await client.call_tool("apply_patch", arguments, progress_callback=progress)
        seen.append(f"finished: error={result.is_error}")
    is_error, _, _ = await text_of(client, "apply_patch", {"patch": FENCE})
    assert not is_error
    return seen


@pytest.mark.parametrize("phase", ["Planning files", "Writing files", "Running the check"])
async def test_a_cancel_before_the_commit_point_leaves_the_tree_as_it_was(tree: Path, tmp_path: Path,
                                                                         phase: str) -> None:
    marker = tmp_path / "check-ran"
    # (the check is long only for the patch: not for the fence, which runs it too)
    check = f"if [ -e d0/f0.txt ]; then touch {marker}; sleep 30; touch {marker}.after; fi"
    params = parameters(["--root", str(tree), "--verify", check], cwd=str(tree.parent), env=server_environment())
    before = tree_files(tree)
    async with Client(params) as client:
        seen = await cancelled_then_fenced(client, {"patch": many_files(1500)},
                                           when=lambda message: message.startswith(phase))
        assert any(message.startswith(phase) for message in seen) and not seen[-1].startswith("finished"), seen
        _, text, listed = await text_of(client, "log", {})
    assert tree_files(tree) == {**before, "fence.txt": b"fence\n"}
    assert [entry["paths"] for entry in listed["transactions"]] == [["fence.txt"]], text
    if phase == "Running the check":
        assert marker.exists()
    assert not Path(f"{marker}.after").exists()  # the check was stopped (or never run), not waited for


async def test_a_cancel_at_any_instant_leaves_all_or_nothing(tree: Path) -> None:
    # Cancelled at instants from the start to past the end: each time the tree is the patch's
    # whole change (the call was past its commit point: `log` lists it) or none of it.
    params = parameters(["--root", str(tree)], cwd=str(tree.parent), env=server_environment())
    outcomes = set()
    async with Client(params) as client:
        for attempt, delay in enumerate((0.0, 0.02, 0.05, 0.1, 0.2, 0.4, 0.8, 3.0)):
            before = tree_files(tree)
            patch = many_files(400).replace("*** Add File: d", f"*** Add File: a{attempt}/d")
            await cancelled_then_fenced(client, {"patch": patch}, when=delay)
            after = tree_files(tree)
            _, _, listed = await text_of(client, "log", {})
            added = set(after) - set(before) - {"fence.txt"}
            committed = any(any(path.startswith(f"a{attempt}/") for path in entry["paths"])
                            for entry in listed["transactions"])
            assert len(added) in (0, 400) and committed == (len(added) == 400), (delay, len(added))
            outcomes.add(committed)
            (tree / "fence.txt").unlink()
    assert True in outcomes  # (the last instant is past the end)


async def test_a_host_timeout_cancels_and_writes_nothing(tree: Path, tmp_path: Path) -> None:
    marker = tmp_path / "check-ran"
    check = f"if [ -e d0/f0.txt ]; then touch {marker}; sleep 30; fi"
    params = parameters(["--root", str(tree), "--verify", check], cwd=str(tree.parent), env=server_environment())
    before = tree_files(tree)
    async with Client(params) as client:
        with pytest.raises(Exception, match="[Tt]imed out"):
            await client.call_tool("apply_patch", {"patch": many_files(50)}, read_timeout_seconds=2.0)
        is_error, _, _ = await text_of(client, "apply_patch", {"patch": FENCE})  # (after the lock)
        assert not is_error
    assert marker.exists()  # the check was running when the client gave up
    assert tree_files(tree) == {**before, "fence.txt": b"fence\n"}


async def test_progress_counts_every_phase_of_a_long_call(tree: Path) -> None:
    params = parameters(["--root", str(tree), "--verify", "sleep 1.6"], cwd=str(tree.parent),
                        env=server_environment())
    seen: list[tuple[float, str]] = []

    async def progress(value: float, total: float | None, message: str | None) -> None:
        assert total is None
        seen.append((value, message or ""))

    async with Client(params) as client:
        result = await client.call_tool("apply_patch", {"patch": many_files(1000)}, progress_callback=progress)
        assert not result.is_error
        quiet: list[tuple[float, str]] = []
        result = await client.call_tool("apply_patch", {"patch": FENCE})  # no progress token: none sent
    values = [value for value, _ in seen]
    assert values == sorted(set(values)), values  # each notification counts more than the one before
    messages = [message for _, message in seen]
    assert messages[0].startswith("Planning files: ") and "Planning files: 1000/1000" in messages
    assert "Checking files: 1000/1000" in messages and "Writing files: 1000/1000" in messages
    assert messages[-1] == "Running the check: 1 s (time limit 600 s)"
    assert values[messages.index("Writing files: 1000/1000")] == 3000  # planned, checked, written
    assert quiet == []


# -- 4. a read-only view tool ------------------------------------------------------------------------


async def test_view_is_a_read_only_tool_beside_the_editor(tree: Path) -> None:
    import jsonschema

    from patchtx.render import result_schema

    params = parameters(["--root", str(tree)], cwd=str(tree.parent), env=server_environment())
    async with Client(params) as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
        view, editor = tools["view"], tools["str_replace_based_edit_tool"]
        assert view.annotations is not None and editor.annotations is not None
        assert (view.annotations.read_only_hint, view.annotations.destructive_hint,
                view.annotations.idempotent_hint, view.annotations.open_world_hint) == (True, False, True, False)
        assert editor.annotations.read_only_hint is False  # (it keeps `view` for the clients that use it)
        assert view.input_schema["required"] == ["path"]
        assert set(view.input_schema["properties"]) == {"path", "view_range", "max_characters"}
        assert view.output_schema == editor.output_schema == result_schema()
        before = tree_files(tree)
        for arguments in ({"path": "app.py"}, {"path": "notes.txt", "view_range": [2, -1]}, {"path": "pkg"},
                          {"path": "notes.txt", "max_characters": 5}):
            shown = await client.call_tool("view", arguments)
            through_editor = await client.call_tool("str_replace_based_edit_tool", {"command": "view", **arguments})
            assert not shown.is_error and shown.content == through_editor.content, arguments
            jsonschema.validate(shown.structured_content, result_schema())
            assert shown.structured_content == through_editor.structured_content
        # Arguments of the editor's writing commands are not the view's: refused, nothing is ever written.
        shown = await client.call_tool("view", {"path": "new.txt", "command": "create", "file_text": "x"})
        assert shown.is_error and (shown.structured_content or {})["error"]["kind"] == "invalid_arguments"
        assert "`command` is not an argument of this tool" in shown.content[0].text  # type: ignore[union-attr]
        missing = await client.call_tool("view", {})
        assert missing.is_error and "`path` is required" in missing.content[0].text  # type: ignore[union-attr]
    assert tree_files(tree) == before


# -- 7. the smaller protocol items --------------------------------------------------------------------


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_an_unknown_tool_is_a_json_rpc_invalid_params_error(tree: Path, mode: str) -> None:
    from mcp.shared.exceptions import MCPError

    params = parameters(["--root", str(tree)], cwd=str(tree.parent), env=server_environment())
    async with Client(params, mode=mode) as client:  # type: ignore[arg-type]
        with pytest.raises(MCPError) as refused:
            await client.call_tool("apply_pach", {"patch": FENCE})
        assert refused.value.error.code == -32602
        assert refused.value.error.message == "Unknown tool: 'apply_pach'. The tools are listed by tools/list."
    assert not (tree / "fence.txt").exists()


async def test_under_2026_07_28_nothing_is_advertised_that_is_never_sent(tree: Path) -> None:
    params = parameters(["--root", str(tree)], cwd=str(tree.parent), env=server_environment())
    async with Client(params) as client:  # (the SDK's client probes server/discover: 2026-07-28)
        assert client.protocol_version == "2026-07-28"
        capabilities = client.session.server_capabilities
        assert capabilities is not None and capabilities.tools is not None
        assert not capabilities.tools.list_changed
        for other in (capabilities.prompts, capabilities.resources):
            assert other is None or not other.list_changed
        assert capabilities.resources is None or not capabilities.resources.subscribe
        listed = await client.list_tools()
        assert listed.ttl_ms == 3_600_000  # a static list may be kept; ttlMs 0 said "stale at once"


async def test_every_tool_declares_the_shape_of_its_structured_content(tree: Path) -> None:
    import jsonschema

    params = parameters(["--root", str(tree)], cwd=str(tree.parent), env=server_environment())
    async with Client(params, mode="legacy") as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
        assert all(tool.output_schema for tool in tools.values()), [n for n, t in tools.items() if not t.output_schema]
        calls = [("log", {}), ("apply_patch", {"patch": FENCE}), ("log", {}),
                 ("str_replace_based_edit_tool", {"command": "view", "path": "fence.txt"}),
                 ("str_replace_based_edit_tool", {"command": "str_replace", "path": "fence.txt", "old_str": "fence",
                                                  "new_str": "wall"}),
                 ("str_replace_based_edit_tool", {"command": "view", "path": "nowhere.txt"}),
                 ("log", {})]
        for tool, arguments in calls:
            result = await client.call_tool(tool, arguments)
            jsonschema.Draft202012Validator(tools[tool].output_schema).validate(result.structured_content)
        assert isinstance(result.structured_content, dict) and len(result.structured_content["transactions"]) == 2
        with pytest.raises(jsonschema.ValidationError):  # (the schema can fail)
            jsonschema.validate({"ok": True, "transactions": [{"id": 1}]}, tools["log"].output_schema)


def test_a_request_before_initialize_is_told_to_initialize_first(tree: Path) -> None:
    import json

    request = {"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": "log", "arguments": {}}}
    done = subprocess.run([PATCHTX, "mcp", "--root", str(tree)], input=json.dumps(request) + "\n",
                          capture_output=True, text=True, timeout=60)
    (answer,) = map(json.loads, done.stdout.splitlines())
    assert answer["id"] == 7 and answer["error"]["code"] == -32600
    assert answer["error"]["message"].startswith("Invalid Request: tools/call before initialize. Send the "
                                                 "initialize request first")
