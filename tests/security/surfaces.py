"""One attack, tried through every surface: the library, the command line and the MCP server (driven
by the official ``mcp`` SDK client, as a host drives it). Each returns what happened: ``"applied"``
or the error's kind, so a test can say "refused as X on every surface" in one line."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio

import patchtx
from patchtx.errors import PatchtxError

BIN = Path(sys.executable).parent


def library(root: Path, patch: str, **options: Any) -> str:
    try:
        patchtx.apply_patch(patch, root, **options)
    except PatchtxError as exc:
        return exc.kind
    return "applied"


def cli(root: Path, *argv: str, patch: str | None = None,
        env: dict[str, str] | None = None) -> tuple[str, dict[str, Any]]:
    """``patchtx ARGV --json`` in ``root`` (the patch on standard input): its outcome and JSON."""
    done = subprocess.run([str(BIN / "patchtx"), *argv, "--json", *(["-"] if patch is not None else [])],
                          input=patch, cwd=root, capture_output=True, text=True, check=False, timeout=120,
                          env={**os.environ, **(env or {})})
    assert "Traceback" not in done.stderr, done.stderr
    out = json.loads(done.stdout)
    if done.returncode == 0:
        return "applied", out
    return out["error"]["kind"], out


def cli_apply(root: Path, patch: str, *args: str, env: dict[str, str] | None = None) -> str:
    return cli(root, "apply", *args, patch=patch, env=env)[0]


def mcp(root: Path, calls: list[tuple[str, dict[str, Any]]], *args: str,
        env: dict[str, str] | None = None) -> list[tuple[str, dict[str, Any]]]:
    """Start ``patchtx mcp --root ROOT ARGS`` and make ``calls`` (tool, arguments) in one session
    through the official SDK client; each call's outcome and structured content."""
    from mcp import Client

    from tests.warm_server import parameters

    params = parameters(["--root", str(root), *args], cwd=str(root), env={**os.environ, **(env or {})})
    outcomes: list[tuple[str, dict[str, Any]]] = []

    async def session() -> None:
        async with Client(params) as client:
            for tool, arguments in calls:
                result = await client.call_tool(tool, arguments)
                content = result.structured_content or {}
                if result.is_error:
                    outcomes.append((content.get("error", {}).get("kind", "error"), content))
                else:
                    outcomes.append(("applied", content))

    anyio.run(session)
    return outcomes


def mcp_apply(root: Path, patch: str, *args: str, env: dict[str, str] | None = None) -> str:
    return mcp(root, [("apply_patch", {"patch": patch, "allow_delete": True})], *args, env=env)[0][0]


def everywhere(root: Path, patch: str, *, cli_args: tuple[str, ...] = (), mcp_args: tuple[str, ...] = (),
               env: dict[str, str] | None = None, **options: Any) -> dict[str, str]:
    """The outcome of ``patch`` through the library, the CLI and MCP, in that order, on ``root``."""
    saved = {name: os.environ.get(name) for name in env or {}}
    os.environ.update(env or {})
    try:
        from patchtx.txn import provenance

        provenance._cache.clear()
        via_library = library(root, patch, **options)
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
    return {"library": via_library, "cli": cli_apply(root, patch, *cli_args, env=env),
            "mcp": mcp_apply(root, patch, *mcp_args, env=env)}
