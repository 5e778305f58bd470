"""An MCP server over stdio with two tools: ``apply_patch`` and the read-only ``preview_patch``.

Run it as ``patchtx mcp --root DIR`` or ``python -m patchtx.agents.mcp_server --root DIR``. The
root is fixed when the server starts; every call stays inside it (see ``tool_call``). A refused
patch is a tool result with ``isError`` true and structured content
``{"ok": false, "error": ..., "kind": ...}``, so the model reads why and can resend.

stdout belongs to the protocol: nothing else may ever be printed there.
"""

from __future__ import annotations

import json
import os
import sys
from typing import Annotated, Any

from mcp.server.mcpserver import MCPServer
from mcp.types import (
    CallToolResult,
    JSONRPCError,
    JSONRPCNotification,
    JSONRPCRequest,
    JSONRPCResponse,
    TextContent,
    ToolAnnotations,
)
from pydantic import BaseModel, Field

from .. import __version__
from .tool_call import ToolOutcome, apply_patch_call
from .toolspec import OPTION_DESCRIPTIONS, PATCH_DESCRIPTION, instructions

SERVER_INSTRUCTIONS = (
    "Edit files under one workspace root with patches in the '*** Begin Patch' format (unified "
    "diffs as `git diff` writes them are accepted too). "
    "apply_patch applies a patch as one transaction (all of it or nothing); preview_patch shows "
    "what a patch would change without writing anything."
)
APPLY_DESCRIPTION = (
    "Apply a patch to files under this server's workspace root, as one transaction. Pass the "
    "patch text in `patch`: the format below, or a unified diff (`git diff` output, applied as "
    "`git apply` does, but all or nothing).\n\n"
)
PREVIEW_DESCRIPTION = (
    "Check a patch without writing anything: the same checks as apply_patch, then the summary "
    "and the unified diff of every file it would change. The patch format is described in "
    "apply_patch's description."
)


class PatchOutcome(BaseModel):
    """The structured content of both tools (its JSON schema is the tools' outputSchema)."""

    ok: bool = Field(description="True if the patch was applied (or, for a dry run, would apply).")
    dry_run: bool | None = Field(None, description="True if nothing was written.")
    summary: str | None = Field(None, description="Counts of added, modified, deleted and moved "
                                                  "files: 'A x, M y, D z, R w'.")
    files: list[dict[str, str]] | None = Field(
        None, description="One entry per file: path, status (added, modified, deleted, moved), "
                          "from (for a move), diff (unified).")
    error: str | None = Field(None, description="Why the patch was refused; nothing was changed.")
    kind: str | None = Field(None, description="Stable machine-readable kind of the error.")


PatchText = Annotated[str, Field(description=PATCH_DESCRIPTION)]
AllowDelete = Annotated[bool, Field(description=OPTION_DESCRIPTIONS["allow_delete"])]
AllowMove = Annotated[bool, Field(description=OPTION_DESCRIPTIONS["allow_move"])]
WorkspaceRoot = Annotated[str, Field(description=OPTION_DESCRIPTIONS["workspace_root"])]
ToolResult = Annotated[CallToolResult, PatchOutcome]


def _result(outcome: ToolOutcome) -> CallToolResult:
    # A success carries its structured content as JSON text too, as MCP asks for clients that
    # read only text; a refusal carries the message itself, which is what the model must read.
    if outcome.ok:
        text = json.dumps(outcome.payload, indent=2, ensure_ascii=False)
    else:
        text = outcome.text
    return CallToolResult(content=[TextContent(type="text", text=text)],
                          structured_content=outcome.payload, is_error=not outcome.ok)


def build_server(root: str) -> MCPServer:
    """The server for workspace ``root`` (an existing directory), not yet running."""
    if not os.path.isdir(root):
        raise NotADirectoryError(f"The workspace root {root!r} is not a directory.")
    root = os.path.realpath(root)
    server = MCPServer("patchtx", version=__version__, instructions=SERVER_INSTRUCTIONS)

    @server.tool(
        name="apply_patch",
        description=APPLY_DESCRIPTION + instructions(),
        annotations=ToolAnnotations(title="Apply patch", read_only_hint=False,
                                    destructive_hint=True, idempotent_hint=False,
                                    open_world_hint=False),
    )
    def apply_patch(
        patch: PatchText,
        dry_run: Annotated[bool, Field(description=OPTION_DESCRIPTIONS["dry_run"])] = False,
        allow_delete: AllowDelete = False,
        allow_move: AllowMove = True,
        workspace_root: WorkspaceRoot = ".",
        intent: Annotated[str | None, Field(description=OPTION_DESCRIPTIONS["intent"])] = None,
    ) -> ToolResult:
        return _result(apply_patch_call(patch, root, dry_run=dry_run, allow_delete=allow_delete,
                                        allow_move=allow_move, workspace_root=workspace_root,
                                        intent=intent))

    @server.tool(
        name="preview_patch",
        description=PREVIEW_DESCRIPTION,
        annotations=ToolAnnotations(title="Preview patch", read_only_hint=True,
                                    destructive_hint=False, idempotent_hint=True,
                                    open_world_hint=False),
    )
    def preview_patch(
        patch: PatchText,
        allow_delete: AllowDelete = False,
        allow_move: AllowMove = True,
        workspace_root: WorkspaceRoot = ".",
    ) -> ToolResult:
        return _result(apply_patch_call(patch, root, dry_run=True, allow_delete=allow_delete,
                                        allow_move=allow_move, workspace_root=workspace_root))

    return server


# How long the end of input may wait for calls still running (a commit waits for the workspace
# lock for up to 30 s by default).
DRAIN_SECONDS = 120.0


class _InFlight:
    """The ids of the client's requests not yet answered, so that the end of input can wait for
    them: a client may write a tools/call and close stdin at once (``echo ... | patchtx mcp``),
    and the SDK ends the session at end of input, dropping the answer to a patch it may already
    have applied."""

    def __init__(self) -> None:
        import anyio

        self.ids: set[object] = set()
        self.changed = anyio.Event()

    def note_incoming(self, message: object) -> None:
        if isinstance(message, JSONRPCRequest):
            self.ids.add(message.id)
        elif isinstance(message, JSONRPCNotification) and message.method == "notifications/cancelled":
            # A cancelled request may never be answered.
            self.discard((message.params or {}).get("requestId"))

    def note_outgoing(self, message: object) -> None:
        if isinstance(message, JSONRPCResponse | JSONRPCError):
            self.discard(message.id)

    def discard(self, request_id: object) -> None:
        import anyio

        if request_id in self.ids:
            self.ids.discard(request_id)
            self.changed.set()
            self.changed = anyio.Event()

    async def drained(self) -> None:
        import anyio

        with anyio.move_on_after(DRAIN_SECONDS):
            while self.ids:
                await self.changed.wait()


class _DrainingReader:
    """The client's messages; at their end, waits until every request read has been answered."""

    def __init__(self, inner: Any, in_flight: _InFlight) -> None:
        self._inner = inner
        self._in_flight = in_flight

    @property
    def last_context(self) -> Any:  # the SDK restores the sender's context from this
        return getattr(self._inner, "last_context", None)

    async def receive(self) -> Any:
        import anyio

        try:
            item = await self._inner.receive()
        except anyio.EndOfStream:
            await self._in_flight.drained()
            raise
        self._in_flight.note_incoming(getattr(item, "message", None))
        return item

    async def aclose(self) -> None:
        await self._inner.aclose()

    def __aiter__(self) -> _DrainingReader:
        return self

    async def __anext__(self) -> Any:
        import anyio

        try:
            return await self.receive()
        except anyio.EndOfStream:
            raise StopAsyncIteration from None

    async def __aenter__(self) -> _DrainingReader:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()


class _AnsweringWriter:
    """The server's messages, each answer noted as such."""

    def __init__(self, inner: Any, in_flight: _InFlight) -> None:
        self._inner = inner
        self._in_flight = in_flight

    async def send(self, item: Any, /) -> None:
        await self._inner.send(item)
        self._in_flight.note_outgoing(getattr(item, "message", None))

    async def aclose(self) -> None:
        await self._inner.aclose()

    async def __aenter__(self) -> _AnsweringWriter:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()


async def _serve_stdio(server: MCPServer) -> None:
    from mcp.server.stdio import stdio_server

    lowlevel = server._lowlevel_server  # the SDK's own run_stdio_async uses it the same way
    async with stdio_server() as (read_stream, write_stream):
        in_flight = _InFlight()
        await lowlevel.run(_DrainingReader(read_stream, in_flight),
                           _AnsweringWriter(write_stream, in_flight),
                           lowlevel.create_initialization_options())


def run_mcp_server(root: str) -> None:
    """Serve workspace ``root`` over stdio until the client closes the connection (answering
    every request read before that)."""
    import anyio

    anyio.run(_serve_stdio, build_server(root))


def mcp_main(argv: list[str] | None = None) -> int:
    """``patchtx mcp [--root DIR]``: the MCP server on stdin/stdout."""
    import argparse

    parser = argparse.ArgumentParser(
        prog="patchtx mcp",
        description="Serve the apply_patch and preview_patch tools over MCP (stdio).",
    )
    parser.add_argument("--root", default=".",
                        help="workspace root the tools may edit (default: current directory)")
    args = parser.parse_args(argv)
    try:
        server = build_server(args.root)
    except NotADirectoryError as exc:
        sys.stderr.write(f"patchtx mcp: {exc}\n")
        return 2
    import anyio

    anyio.run(_serve_stdio, server)
    return 0


if __name__ == "__main__":
    sys.exit(mcp_main())
