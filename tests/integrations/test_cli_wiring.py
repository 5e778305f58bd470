"""The installed ``patchtx`` command exposes the agent entry points: ``patchtx tool-spec`` and
``patchtx mcp`` (the MCP config in docs/integrations.md names the latter)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from agents_support import server_environment
from mcp import Client, StdioServerParameters

from patchtx.agents.toolspec import tool_spec

PATCHTX = Path(sys.executable).parent / "patchtx"


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(PATCHTX), *args], capture_output=True, text=True, timeout=120)


def test_patchtx_tool_spec_prints_each_format() -> None:
    custom = run("tool-spec", "--format", "custom")
    assert custom.returncode == 0, custom.stderr
    assert json.loads(custom.stdout) == tool_spec("custom")
    lark = run("tool-spec", "--format", "lark")
    assert (lark.returncode, lark.stdout) == (0, tool_spec("lark"))
    assert json.loads(run("tool-spec").stdout) == tool_spec("custom")
    bad = run("tool-spec", "--format", "xml")
    assert bad.returncode == 2 and "invalid choice" in bad.stderr


def test_patchtx_help_lists_the_agent_commands() -> None:
    shown = run("--help")
    assert shown.returncode == 0
    assert "tool-spec" in shown.stdout and "mcp" in shown.stdout


@pytest.mark.anyio
@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_patchtx_mcp_serves_the_tools(tmp_path: Path, anyio_backend: str) -> None:
    (tmp_path / "a.txt").write_text("one\n")
    params = StdioServerParameters(command=str(PATCHTX), args=["mcp", "--root", "."], cwd=str(tmp_path),
                                   env=server_environment())
    async with Client(params) as client:
        names = sorted(tool.name for tool in (await client.list_tools()).tools)
        result = await client.call_tool("apply_patch", {
            "patch": "*** Begin Patch\n*** Update File: a.txt\n-one\n+two\n*** End Patch\n"})
    assert names == ["apply_patch", "edit_file", "edit_files", "log", "preview_patch", "replace_in_file",
                     "str_replace_based_edit_tool", "undo", "view"]
    assert result.is_error is False
    assert (tmp_path / "a.txt").read_text() == "two\n"
