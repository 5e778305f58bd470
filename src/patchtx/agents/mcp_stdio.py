"""The MCP server's stdio wire, between the client's bytes and the SDK's session: every line looked
at before the SDK reads it (a line that is not one JSON-RPC message, an id the SDK would take for a
notification's: answered, not dropped), the requests in flight counted so that the end of input
waits for their answers, and the client's input claimed from descriptor 0.

``mcp_server`` builds the server and runs it here (``serve_stdio``); this module is loaded only
through it, once the ``mcp`` extra is known to be installed.

stdout belongs to the protocol: nothing else may ever be printed there.
"""

from __future__ import annotations

import asyncio
import json
import os
import stat
from collections import deque
from typing import IO, Any, Protocol, Self, cast

import anyio
from mcp.server.mcpserver import MCPServer
from mcp.server.stdio import stdio_server
from mcp.shared.exceptions import MCPError
from mcp.shared.message import SessionMessage
from mcp.types import ErrorData, JSONRPCError, JSONRPCNotification, JSONRPCRequest, JSONRPCResponse


class _RootsWatcher(Protocol):
    """What the wire tells of the client's roots (``mcp_server.WorkspaceRoot``)."""

    def roots_changed(self) -> None: ...


class _CallBook(Protocol):
    """What the wire tells of each request (``mcp_server.Calls``)."""

    def opened(self, request_id: object) -> None: ...

    def cancelled(self, request_id: object, reason: str | None) -> None: ...

    def answered(self, request_id: object) -> None: ...


# How long the end of input may wait for calls still running (a commit may first wait for the
# workspace lock, up to its lock_timeout).
DRAIN_SECONDS = 120.0


class _InFlight:
    """The ids of the client's requests not yet answered, so that the end of input can wait for
    them: a client may write a tools/call and close stdin at once (``echo ... | patchtx mcp``),
    and the SDK ends the session at end of input, dropping the answer to a patch it may already
    have applied."""

    def __init__(self, workspace: _RootsWatcher | None = None, calls: _CallBook | None = None) -> None:
        self.ids: set[object] = set()
        self.changed = anyio.Event()
        self._workspace = workspace
        self._calls = calls

    def note_incoming(self, message: object) -> None:
        if isinstance(message, JSONRPCRequest):
            self.ids.add(message.id)
            if self._calls is not None:
                self._calls.opened(message.id)
        elif isinstance(message, JSONRPCNotification) and message.method == "notifications/cancelled":
            request_id = (message.params or {}).get("requestId")
            if self._calls is not None and request_id in self.ids:
                reason = (message.params or {}).get("reason")
                self._calls.cancelled(request_id, reason if isinstance(reason, str) else None)
            # A cancelled request may never be answered.
            self.discard(request_id)
        elif (isinstance(message, JSONRPCNotification) and message.method == "notifications/roots/list_changed"
              and self._workspace is not None):
            self._workspace.roots_changed()

    def note_outgoing(self, message: object) -> None:
        if isinstance(message, JSONRPCResponse | JSONRPCError):
            self.discard(message.id)
            if self._calls is not None:
                self._calls.answered(message.id)

    def discard(self, request_id: object) -> None:
        if request_id in self.ids:
            self.ids.discard(request_id)
            self.changed.set()
            self.changed = anyio.Event()

    async def drained(self) -> None:
        with anyio.move_on_after(DRAIN_SECONDS):
            while self.ids:
                await self.changed.wait()


PARSE_ERROR = -32700
INVALID_REQUEST = -32600
INVALID_PARAMS = -32602


async def initialize_first(ctx: Any, call_next: Any) -> Any:
    """A request the SDK refuses because the session is not initialized yet is answered saying so
    (the SDK's own answer is "Invalid request parameters", which sends a client to its
    arguments): JSON-RPC -32600, naming the method and what to send first."""
    try:
        return await call_next(ctx)
    except MCPError as error:
        # (the SDK keeps the handshake's state on the session's connection, not in its public API)
        connection = getattr(ctx.session, "_connection", None)
        if error.error.code != INVALID_PARAMS or getattr(connection, "initialize_accepted", True):
            raise
        raise MCPError(code=INVALID_REQUEST, message=(
            f"Invalid Request: {ctx.method} before initialize. Send the initialize request first (then the "
            "notifications/initialized notification), or, under protocol 2026-07-28, carry the protocol "
            "version in each request's _meta."), data={"method": ctx.method}) from None


def _malformed_answer(problem: Exception) -> Any:
    """The JSON-RPC error answering a line that is not one JSON-RPC message (id null: it could not
    be read): -32700 if the line is not JSON at all, -32600 for JSON that is not a message (a
    batch, a scalar, ``{}``, nesting too deep to read)."""
    errors: list[Any] = []
    try:
        errors = list(problem.errors())  # type: ignore[attr-defined]  # pydantic's ValidationError
    except Exception:  # noqa: BLE001 - any other exception: describe it by its type only
        pass
    not_json = any(isinstance(e, dict) and e.get("type") == "json_invalid" for e in errors)
    code, what = (PARSE_ERROR, "Parse error: the line is not JSON") if not_json else (
        INVALID_REQUEST, "Invalid Request: the line is not one JSON-RPC 2.0 message object")
    detail = errors[0].get("msg") if errors and isinstance(errors[0], dict) else type(problem).__name__
    error = ErrorData(code=code, message=f"{what} ({str(detail)[:200]}).")
    return SessionMessage(JSONRPCError(jsonrpc="2.0", id=None, error=error))


def _bad_id(line: str) -> str | None:
    """What is wrong with the id of the request on ``line`` (None: nothing, or no request).

    JSON-RPC ids are strings or integers here; the SDK reads a request with any other id (an
    object, a list, a fraction, true, null) as a notification, which it never answers, leaving the
    client waiting. Such a request is answered with an error instead (id null: its own cannot be
    sent back)."""
    if '"id"' not in line:
        return None
    try:
        message = json.loads(line)
    except (ValueError, RecursionError):
        return None  # not JSON: the SDK's reading fails, and that is answered (see _malformed_answer)
    if not isinstance(message, dict) or "id" not in message or "method" not in message:
        return None
    request_id = message["id"]
    if isinstance(request_id, str) or (isinstance(request_id, int) and not isinstance(request_id, bool)):
        return None
    return {dict: "an object", list: "an array", float: "a fraction", bool: "a boolean"}.get(
        type(request_id), "null")


def _bad_id_answer(why: str) -> Any:
    error = ErrorData(code=INVALID_REQUEST,
                      message=f"Invalid Request: the id is {why}; a request's id is a string or an integer.")
    return SessionMessage(JSONRPCError(jsonrpc="2.0", id=None, error=error))


class _CheckedLines:
    """The client's input, a line at a time (the SDK reads ``async for line in stdin``), each looked
    at for an id the SDK would not answer (``_bad_id``): what is found goes to ``verdicts``, one per
    line, in order.

    A pipe or a socket (what a host gives) is read by the event loop itself: ``anyio.wrap_file``,
    which the SDK uses, hands each line to a worker thread and back, and that hand-off was a tenth
    of the SDK's round trip per call (benchmarks/README.md, the MCP guard). Other input (a file, a
    terminal, whose mode a shell shares) is read by a worker thread. Either way a line is decoded
    as the SDK's own reader decodes it: UTF-8 with bad bytes replaced, line ends read as text files
    read them (``\\r\\n`` too; a lone ``\\r``, which MCP does not use, ends a line once a ``\\n``
    follows it)."""

    def __init__(self, raw: IO[bytes], verdicts: deque[str | None]) -> None:
        self._raw = raw
        self._verdicts = verdicts
        self._lines: deque[str] = deque()
        self._pipe: asyncio.StreamReader | None = None
        self._threaded = False

    def __aiter__(self) -> Self:
        return self

    async def __anext__(self) -> str:
        while not self._lines:
            read = await self._read()
            if not read:
                raise StopAsyncIteration
            text = read.decode("utf-8", "replace").replace("\r\n", "\n").replace("\r", "\n")
            *ended, rest = text.split("\n")
            self._lines.extend(f"{line}\n" for line in ended)
            if rest:  # the last line, at the end of input without a line end
                self._lines.append(rest)
        line = self._lines.popleft()
        self._verdicts.append(_bad_id(line))
        return line

    async def _read(self) -> bytes:
        """The input up to and with its next line end (all that is left at its end; b"" after)."""
        if self._pipe is None and not self._threaded:
            kind = os.fstat(self._raw.fileno()).st_mode
            self._threaded = not (stat.S_ISFIFO(kind) or stat.S_ISSOCK(kind))
            if not self._threaded:
                loop = asyncio.get_running_loop()
                pipe = self._pipe = asyncio.StreamReader(limit=_LINE_LIMIT, loop=loop)
                await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(pipe), self._raw)
        if self._pipe is None:
            return await anyio.to_thread.run_sync(self._raw.readline)
        pieces = []  # (a line longer than the reader's buffer comes in pieces: read whole)
        while True:
            try:
                pieces.append(await self._pipe.readuntil(b"\n"))
            except asyncio.IncompleteReadError as end:  # the end of input
                pieces.append(end.partial)
            except asyncio.LimitOverrunError as long_line:
                pieces.append(await self._pipe.readexactly(long_line.consumed))
                continue
            return b"".join(pieces)


_LINE_LIMIT = 64 * 1024
"""The pipe reader's buffer, in bytes: it stops reading ahead at twice this, so a client that
writes and never reads the answers is held back as a blocking read holds it. A longer line is
still read whole (the tools refuse a patch over their own limit, with an answer)."""


class _Wrapped:
    """A stream of the SDK's, wrapped: closing (and leaving ``async with``) closes it."""

    def __init__(self, inner: Any, in_flight: _InFlight) -> None:
        self._inner = inner
        self._in_flight = in_flight

    async def aclose(self) -> None:
        await self._inner.aclose()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()


class _DrainingReader(_Wrapped):
    """The client's messages; at their end, waits until every request read has been answered.

    A line that is not a JSON-RPC message reaches here as the exception that reading it raised;
    it is answered with a JSON-RPC error at once, and the next line read (the SDK would only log
    it, leaving the client waiting). So is a request whose id the SDK would take for a
    notification's (``verdicts``: one per line, from ``_CheckedLines``)."""

    def __init__(self, inner: Any, in_flight: _InFlight, answers: Any = None, verdicts: Any = None) -> None:
        super().__init__(inner, in_flight)
        self._answers = answers
        self._verdicts = verdicts

    @property
    def last_context(self) -> Any:  # the SDK restores the sender's context from this
        return getattr(self._inner, "last_context", None)

    async def receive(self) -> Any:
        while True:
            try:
                item = await self._inner.receive()
            except anyio.EndOfStream:
                await self._in_flight.drained()
                raise
            bad_id = self._verdicts.popleft() if self._verdicts else None
            if isinstance(item, Exception) and self._answers is not None:
                await self._answers.send(_malformed_answer(item))
                continue
            if bad_id is not None and self._answers is not None:
                await self._answers.send(_bad_id_answer(bad_id))
                continue
            self._in_flight.note_incoming(getattr(item, "message", None))
            return item

    def __aiter__(self) -> _DrainingReader:
        return self

    async def __anext__(self) -> Any:
        try:
            return await self.receive()
        except anyio.EndOfStream:
            raise StopAsyncIteration from None


class _AnsweringWriter(_Wrapped):
    """The server's messages, each answer noted as such."""

    async def send(self, item: Any, /) -> None:
        await self._inner.send(item)
        self._in_flight.note_outgoing(getattr(item, "message", None))


async def serve_stdio(server: MCPServer) -> None:
    # A private attribute of the SDK, as its own run_stdio_async uses it: MCPServer has no public
    # way to run over streams other than its own, and its own end the session at end of input with
    # calls still running (modelcontextprotocol/python-sdk#2678, open), so the streams are wrapped.
    lowlevel = server._lowlevel_server
    verdicts: deque[str | None] = deque()
    with _claimed_stdin() as wire:
        stdin = cast("anyio.AsyncFile[str]", _CheckedLines(wire, verdicts))
        async with stdio_server(stdin=stdin) as (read_stream, write_stream):
            in_flight = _InFlight(getattr(server, "workspace", None), getattr(server, "calls", None))
            await lowlevel.run(_DrainingReader(read_stream, in_flight, write_stream, verdicts),
                               _AnsweringWriter(write_stream, in_flight),
                               lowlevel.create_initialization_options())


class _claimed_stdin:  # lower case: used as ``with _claimed_stdin() as wire``
    """The client's input (descriptor 0) read through a duplicate, while descriptor 0 itself reads
    the null device: nothing else in the process (a child it runs) can take the client's bytes.
    (The SDK does the same for the input it opens itself; this input is given to it, to be
    looked at on the way.) The event loop reads a pipe without blocking, a mode every holder of
    the pipe shares: it is set back on the way out."""

    def __enter__(self) -> Any:
        self._wire = os.dup(0)
        self._blocking = os.get_blocking(self._wire)
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        os.close(null)
        return os.fdopen(self._wire, "rb", closefd=False)

    def __exit__(self, *exc_info: object) -> None:
        os.set_blocking(self._wire, self._blocking)
        os.dup2(self._wire, 0)  # (the duplicate stays open: a reader thread may still block on it)
