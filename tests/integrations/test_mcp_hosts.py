"""The MCP server as hosts really run it: started in any folder (Claude Desktop: /), told its
workspace by the client's roots, cancelled, timed out, asked for progress, read-only in read modes.
Through the official Python SDK's client, a real server process each time (tests/warm_server.py)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

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
