"""docs/integrations.md, "Each host's configuration": every host's snippet read as that host reads
it (JSON, Codex's TOML, the `claude mcp add` command line), its variables expanded as the host
expands them, the command line it starts checked by patchtx's own parser, and servers started from
them in the working folder the host uses (Claude Desktop's is /)."""

from __future__ import annotations

import json
import shlex
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest
from agents_support import REPO, server_environment
from mcp import Client, StdioServerParameters

from patchtx.arguments import server_arguments

DOC = (REPO / "docs" / "integrations.md").read_text(encoding="utf-8")
SECTION = DOC.split("### Each host's configuration", 1)[1].split("\n### ", 1)[0]


def block(info: str) -> str:
    opening = f"```{info}\n"
    assert SECTION.count(opening) == 1, info
    return SECTION.split(opening, 1)[1].split("```", 1)[0]


def server(host: str) -> dict[str, Any]:
    """The patchtx entry of ``host``'s configuration, read as the host reads it."""
    if host == "codex":
        return tomllib.loads(block("toml codex"))["mcp_servers"]["patchtx"]
    if host == "claude-code":
        words = shlex.split(block("sh claude-code"))
        assert words[:5] == ["claude", "mcp", "add", "--scope", "project"]
        name, rest = words[5], words[words.index("--") + 1:]
        assert name == "patchtx"
        return {"type": "stdio", "command": rest[0], "args": rest[1:]}
    files = {"claude-desktop": "claude_desktop_config.json", "claude-code-file": ".mcp.json",
             "cursor": ".cursor/mcp.json", "vscode": ".vscode/mcp.json", "zed": "zed-settings.json",
             "windsurf": "mcp_config.json", "cline": "cline_mcp_settings.json"}
    config = json.loads(block(f"json {files[host]}"))
    key = {"vscode": "servers", "zed": "context_servers"}.get(host, "mcpServers")
    assert list(config) == [key], host  # VS Code: servers; Zed: context_servers; the rest: mcpServers
    return config[key]["patchtx"]


HOSTS = ["claude-code", "claude-code-file", "claude-desktop", "cursor", "vscode", "codex", "zed", "windsurf",
         "cline"]


def expanded(args: list[str], workspace: str) -> list[str]:
    """The arguments with the host's variables expanded (Cursor's and VS Code's ${workspaceFolder})."""
    return [arg.replace("${workspaceFolder}", workspace) for arg in args]


@pytest.mark.parametrize("host", HOSTS)
def test_each_hosts_snippet_reads_as_its_host_reads_it(host: str) -> None:
    entry = server(host)
    assert entry["command"] == "patchtx" and entry["args"][:1] == ["mcp"]
    if host in ("vscode", "claude-code", "claude-code-file"):
        assert entry["type"] == "stdio"
    if host == "zed":
        assert entry["source"] == "custom" and entry["env"] == {}
    if host == "cline":
        assert set(entry["autoApprove"]) == {"view", "preview_patch", "log"} and entry["disabled"] is False
    if host == "codex":
        assert set(entry) == {"command", "args", "tool_timeout_sec"}
    root, host_options = server_arguments(expanded(entry["args"][1:], "/home/me/project"))
    assert host_options == {}
    if host in ("cursor", "vscode"):
        assert "${workspaceFolder}" in entry["args"] and root == "/home/me/project"
    elif host in ("claude-code", "claude-code-file", "codex"):
        assert root == "."  # (these hosts start their servers in the project's folder)
    else:  # started elsewhere (Claude Desktop: /), or one file for every project: an absolute path
        assert root is not None and root.startswith("/") and len(root) > 1


def test_the_claude_code_command_writes_the_file_shown() -> None:
    assert server("claude-code") == server("claude-code-file")


@pytest.mark.anyio
@pytest.mark.parametrize("anyio_backend", ["asyncio"])
@pytest.mark.parametrize("host", ["claude-desktop", "vscode"])
async def test_a_server_started_as_the_host_starts_it_serves_the_project(host: str, tree: Path,
                                                                        anyio_backend: str) -> None:
    entry = server(host)
    documented = "/Users/me/src/project"
    args = [arg.replace(documented, str(tree)) for arg in expanded(entry["args"], str(tree))]
    patchtx = str(Path(sys.executable).parent / entry["command"])
    # Claude Desktop starts its servers in /; VS Code in a folder of its own.
    params = StdioServerParameters(command=patchtx, args=args, cwd="/", env=server_environment())
    async with Client(params) as client:
        result = await client.call_tool("view", {"path": "app.py"})
    assert not result.is_error and "print('hello')" in result.content[0].text  # type: ignore[union-attr]


def test_the_documented_claude_desktop_setup_with_root_dot_would_be_refused(tmp_path: Path) -> None:
    # What the page used to show for Claude Desktop (`--root .`), started in /: refused at once.
    import subprocess

    patchtx = str(Path(sys.executable).parent / "patchtx")
    done = subprocess.run([patchtx, "mcp", "--root", "."], input="", capture_output=True, text=True, cwd="/",
                          timeout=60)
    assert done.returncode == 2 and "Refusing the workspace root /: it is the whole disk." in done.stderr
