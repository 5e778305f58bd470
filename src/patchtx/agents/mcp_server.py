"""An MCP server over stdio with eight tools: ``apply_patch``, the read-only ``preview_patch`` and
``log``, and ``undo``; and the edit-protocol tools: the text editor
(``str_replace_based_edit_tool``), its read-only ``view``, edit lists (``edit_files``) and
SEARCH/REPLACE blocks (``replace_in_file``), each writing call one transaction that ``undo`` reverts.

Run it as ``patchtx mcp --root DIR`` or ``python -m patchtx.agents.mcp_server --root DIR``. The
root is fixed when the server starts; every call stays inside it (see ``tool_call``). Every result
carries the one result shape of every patchtx surface as structured content
(``docs/result.schema.json``, the tools' outputSchema) and, for the model, plain text: the summary
and unified diffs, or the error message. A refused call has ``isError`` true; arguments that do not
fit a tool's schema are refused as kind ``invalid_arguments``.

stdout belongs to the protocol: nothing else may ever be printed there.
"""

from __future__ import annotations

import inspect
import os
import sys
import time
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Annotated, Any, Literal
from urllib.parse import unquote, urlsplit

try:
    import anyio
    from mcp.server.caching import CacheHint
    from mcp.server.mcpserver import Context, MCPServer
    from mcp.server.mcpserver.exceptions import ToolError
    from mcp.shared.exceptions import MCPError
    from mcp.types import (
        CallToolResult,
        ListRootsRequest,
        ListRootsResult,
        TextContent,
        ToolAnnotations,
    )
    from pydantic import (
        BaseModel,
        ConfigDict,
        Field,
        RootModel,
        ValidationError,
        ValidatorFunctionWrapHandler,
        WithJsonSchema,
        WrapValidator,
    )
except ImportError as _missing:
    from ..errors import MissingExtraError

    _error = MissingExtraError("The MCP server", "mcp", "mcp")
    if __name__ == "__main__":  # ``python -m patchtx.agents.mcp_server``: a host shows stderr
        sys.stderr.write(f"patchtx: {_error.message}\n")
        sys.exit(3)
    raise _error from _missing

from .._version import __version__
from ..arguments import server_arguments
from ..cancel import Cancellation
from ..errors import INTERRUPTED, InvalidArgumentsError, PatchtxError
from ..options import TOOL_OPTIONS, Declared
from ..render import result_schema
from ..txn.roots import check_root, root_problem
from .edit_toolspec import (
    EDIT_FILE,
    EDIT_FILE_DESCRIPTION,
    EDITOR,
    EDITOR_ARGUMENTS,
    EDITOR_DESCRIPTION,
    EDITOR_REQUIRED,
    EDITS,
    EDITS_DESCRIPTION,
    REPLACE_IN_FILE,
    REPLACE_IN_FILE_DESCRIPTION,
    VIEW,
    VIEW_DESCRIPTION,
    edit_file_schema,
    edits_schema,
    replace_in_file_schema,
)
from .editor import COMMANDS, unknown_command
from .mcp_stdio import INVALID_PARAMS, initialize_first, serve_stdio
from .tool_call import (
    ToolOutcome,
    Watch,
    apply_patch_call,
    edit_file_call,
    editor_call,
    edits_call,
    failure_outcome,
    log_call,
    replace_in_file_call,
    undo_call,
)
from .toolspec import OPTION_DESCRIPTIONS, PATCH_DESCRIPTION, instructions

SERVER_INSTRUCTIONS = (
    "Edit files under one workspace root with patches in the '*** Begin Patch' format (unified "
    "diffs as `git diff` writes them are accepted too). "
    "apply_patch applies a patch as one transaction (all of it or nothing); preview_patch shows "
    "what a patch would change without writing anything; log lists the transactions that can be "
    "undone and undo reverts one of them. str_replace_based_edit_tool (view, create, str_replace, "
    "insert), edit_files (old_string/new_string edits) and replace_in_file (SEARCH/REPLACE "
    "blocks) and edit_file (a snippet with '// ... existing code ...' placeholders) edit files the "
    "same way, each call one transaction; view shows a file or a folder, reading only."
)
APPLY_DESCRIPTION = (
    "Apply a patch to files under this server's workspace root, as one transaction. Pass the "
    "patch text in `patch`: the format below, or a unified diff (`git diff` output, applied as "
    "`git apply` does, but all or nothing). Deleting files is refused unless `allow_delete` is "
    "true. The result names the transaction, which the `undo` tool can revert.\n\n"
)
PREVIEW_DESCRIPTION = (
    "Check a patch without writing anything: the same checks as apply_patch, then the summary "
    "and the unified diff of every file it would change. The patch format is described in "
    "apply_patch's description."
)
LOG_DESCRIPTION = (
    "List the transactions of this workspace that can be undone, newest first: id, time, "
    "summary, intent. Reads only."
)
UNDO_DESCRIPTION = (
    "Undo one committed transaction (its id from `log` or from apply_patch's result; a unique "
    "prefix will do) as a new transaction: every file it changed is put back as it was. Refused, "
    "writing nothing, if any of those files changed since. Like a patch, an undo that deletes "
    "files (undoing an add) is refused unless `allow_delete` is true. The undo is itself listed in "
    "`log` (undoing it puts the change back); `dry_run` shows the diffs without writing."
)

PatchText = Annotated[str, Field(description=PATCH_DESCRIPTION)]


def _as_sent(value: Any, handler: ValidatorFunctionWrapHandler) -> Any:
    return None if value is None else handler(value)


if TYPE_CHECKING:
    OptionalText = str | None
else:
    OptionalText = Annotated[str, WrapValidator(_as_sent),
                             WithJsonSchema({"anyOf": [{"type": "string"}, {"type": "null"}]})]
"""A string argument that may be omitted (or sent as JSON null: None). Declared to the SDK as
``str``, not ``str | None``: the SDK reads a string sent for an argument of any other type as JSON
first (``FuncMetadata.pre_parse_json``, for clients that send lists as JSON text), which turned
``old_str='["a"]'`` or ``file_text='{}'`` into a list or an object (refused) and ``new_str='null'``
into an omitted argument (a deletion). A string argument arrives as the text sent."""
DryRun = Annotated[bool, Field(strict=True, description=OPTION_DESCRIPTIONS["dry_run"])]
_Tool = Callable[..., Awaitable["CallToolResult"]]
UNDO_OWN_ONLY = (
    " Only transactions made through this server can be undone (`log` shows each one's `origin`:"
    " \"mcp\"); the host decides that.")


def _as_the_result_schema(schema: dict[str, Any]) -> None:
    schema.clear()
    schema.update(result_schema())


class ResultShape(RootModel[dict[str, Any]]):
    """The one result shape (``docs/result.schema.json``) as a tool's output model: a tool returning
    ``Annotated[CallToolResult, ResultShape]`` publishes it as its outputSchema (the SDK's public way
    to give a CallToolResult a schema; it checks only that the structured content is an object)."""

    model_config = ConfigDict(json_schema_extra=_as_the_result_schema)


Shaped = Annotated[CallToolResult, ResultShape]


def _as_the_log_schema(schema: dict[str, Any]) -> None:
    schema.clear()
    schema.update(log_schema())


class LogShape(RootModel[dict[str, Any]]):
    """The ``log`` tool's structured content as its output model (``log_schema``)."""

    model_config = ConfigDict(json_schema_extra=_as_the_log_schema)


Logged = Annotated[CallToolResult, LogShape]
TOOL_LIST_CACHE = CacheHint(ttl_ms=3_600_000, scope="private")
"""How long a 2026-07-28 client may keep the tool list: an hour (it never changes while the
server runs; a restarted server with other options may offer another undo tool)."""


def log_schema() -> dict[str, Any]:
    """The ``log`` tool's structured content: ``patchtx log --json``'s object, or a refusal in the
    one result shape (``docs/result.schema.json``)."""
    text_or_none = {"type": ["string", "null"]}
    entry = {
        "type": "object",
        "required": ["id", "time", "summary", "counts", "bytes", "files", "paths", "intent", "undoes", "origin"],
        "properties": {
            "id": {"type": "string"}, "time": {"type": "string"}, "summary": {"type": "string"},
            "counts": {"type": "object", "additionalProperties": {"type": "integer"}},
            "bytes": {"type": "integer"}, "files": {"type": "integer"},
            "paths": {"type": "array", "items": {"type": "string"}},
            "intent": text_or_none, "undoes": text_or_none, "origin": text_or_none,
        },
    }
    listed = {
        "type": "object",
        "required": ["ok", "transactions"],
        "properties": {"ok": {"const": True}, "transactions": {"type": "array", "items": entry},
                       "untrusted": {"type": "array", "items": {"type": "string"}}},
        "additionalProperties": False,
    }
    refused = result_schema()  # (no $ref inside: it is valid wherever it stands)
    return {"$schema": refused.pop("$schema"), "$id": "https://patchtx.invalid/log.schema.json",
            "title": "patchtx log", "type": "object",
            "anyOf": [listed, {key: value for key, value in refused.items() if key != "$id"}]}
TransactionId = Annotated[str, Field(description="The transaction's id, as `log` or apply_patch's "
                                                 "result shows it, or a unique prefix of it.")]


def _annotation(row: Declared) -> Any:
    """A tool option's type for the SDK's schema. Strict: JSON true is not the integer 1
    (``strip: true`` would strip one component), nor is the string "yes" a boolean; a value of the
    wrong JSON type is refused as run_tool_call refuses it."""
    description = row.option.tool
    if row.type == "bool":
        return Annotated[bool, Field(strict=True, description=description)]
    if row.type == "int | None":
        return Annotated[int | None, Field(ge=0, strict=True, description=description)]
    return Annotated[str if row.tool_default is not None else OptionalText, Field(description=description)]


def _with_options(first: tuple[str, Any], *names: str) -> Callable[[_Tool], _Tool]:
    """A decorator giving a tool's function the signature the SDK reads its schema from: ``first``
    (name, annotation) and the named tool options of ``options.TOOL_OPTIONS``, with their tool
    defaults, in the table's order."""
    keyword = inspect.Parameter.KEYWORD_ONLY
    parameters = [inspect.Parameter(first[0], keyword, annotation=first[1])]
    parameters += [inspect.Parameter(row.name, keyword, annotation=_annotation(row), default=row.tool_default)
                   for row in TOOL_OPTIONS if row.name in names]

    def decorate(function: _Tool) -> _Tool:
        function.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
            parameters, return_annotation=Shaped)
        return function

    return decorate


_PREVIEW_OPTIONS = tuple(row.name for row in TOOL_OPTIONS if row.name not in ("dry_run", "intent"))


def _described(schema: dict[str, Any], name: str, **extra: Any) -> Any:
    """A parameter's Field with its description from the tool's declared schema (one wording)."""
    return Field(description=schema["properties"][name]["description"], **extra)


_EDITS = edits_schema()
_REPLACE = replace_in_file_schema()
_EDIT_FILE = edit_file_schema()


def _editor_parameter(name: str) -> inspect.Parameter:
    """The MCP tool's parameter for the editor argument ``name``, from its one declaration
    (``edit_toolspec.EDITOR_ARGUMENTS``): strict types (JSON true is no integer), optional ones
    None when left out."""
    schema = EDITOR_ARGUMENTS[name]
    field = Field(description=schema["description"], strict=None if schema["type"] == "string" else True)
    kind: Any
    if "enum" in schema:
        kind = Literal[tuple(schema["enum"])]
    elif schema["type"] == "string":
        kind = str if name in EDITOR_REQUIRED else OptionalText
    elif schema["type"] == "integer":
        kind = int | None
    else:
        kind = list[int] | None
    default = inspect.Parameter.empty if name in EDITOR_REQUIRED else None
    return inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, annotation=Annotated[kind, field],
                             default=default)


def _editor_arguments(*names: str) -> Callable[[_Tool], _Tool]:
    """A decorator giving an editor tool's function (``**arguments``) the signature the SDK reads its
    schema from: the named editor arguments."""
    def decorate(function: _Tool) -> _Tool:
        function.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
            [_editor_parameter(name) for name in names], return_annotation=Shaped)
        return function

    return decorate


class EditItem(BaseModel):
    """One edit of ``edit_files``."""

    model_config = ConfigDict(extra="forbid")
    path: Annotated[str | None, _described(_EDITS["properties"]["edits"]["items"], "path")] = None
    old_string: Annotated[str, _described(_EDITS["properties"]["edits"]["items"], "old_string")]
    new_string: Annotated[str, _described(_EDITS["properties"]["edits"]["items"], "new_string")]
    replace_all: Annotated[bool, _described(_EDITS["properties"]["edits"]["items"], "replace_all",
                                            strict=True)] = False


def _result(outcome: ToolOutcome) -> CallToolResult:
    # The text is what the model reads: the summary and plain diffs, or the error message; the
    # structured content is the same result as JSON, for programs.
    return CallToolResult(content=[TextContent(type="text", text=outcome.text)],
                          structured_content=outcome.payload, is_error=not outcome.ok)


_TYPE_WORDS = {"bool": "a boolean (true or false)", "string": "a string", "int": "an integer",
               "dict": "an object"}


def _argument_problems(error: ValidationError) -> str:
    """Pydantic's validation errors as one sentence a model can act on."""
    problems = []
    for item in error.errors():
        name = ".".join(str(part) for part in item["loc"]) or "the arguments"
        kind = str(item["type"])
        if kind == "missing":
            problems.append(f"`{name}` is required")
        elif kind in ("extra_forbidden", "unexpected_keyword_argument"):
            problems.append(f"`{name}` is not an argument of this tool")
        else:
            expected = next((words for prefix, words in _TYPE_WORDS.items() if kind.startswith(prefix)), None)
            problems.append(f"`{name}` must be {expected}" if expected else f"`{name}`: {item['msg']}")
    return "; ".join(problems)


class PatchtxMCPServer(MCPServer):
    """The SDK's server, with argument errors answered in the one result shape."""

    workspace: WorkspaceRoot
    calls: Calls

    async def call_tool(self, name: str, arguments: dict[str, Any], context: Context | None = None) -> Any:
        if self._tool_manager.get_tool(name) is None:
            # A name no tool has is a request the server cannot take (JSON-RPC invalid params, as
            # the specification's example of an unknown tool answers), not a tool's failure.
            raise MCPError(code=INVALID_PARAMS, message=f"Unknown tool: {name!r}. The tools are listed by "
                                                        "tools/list.", data={"tool": name})
        declared = self._tool_manager.get_tool(name)
        unknown = sorted(set(arguments or {}) - set({} if declared is None else declared.parameters["properties"]))
        if unknown:
            # The SDK would drop them and run the call: a model that sent `enable_linting` would
            # think it was honoured. Refused as the library and run_tool_call refuse them.
            return _result(failure_outcome(InvalidArgumentsError(
                f"Invalid arguments for {name}: " + "; ".join(f"`{key}` is not an argument of this tool"
                                                              for key in unknown) + ".",
                hint="Resend the call with the tool's own arguments, as its input schema lists them.")))
        command = (arguments or {}).get("command")
        if name == EDITOR and isinstance(command, str) and command not in COMMANDS:
            # (the schema's enum would refuse it first, without the editor's pointer to `undo`)
            return _result(failure_outcome(unknown_command(command)))
        try:
            return await super().call_tool(name, arguments, context)
        except ToolError as exc:
            if not isinstance(exc.__cause__, ValidationError):
                raise
            error = InvalidArgumentsError(
                f"Invalid arguments for {name}: {_argument_problems(exc.__cause__)}.",
                hint="Resend the call with corrected arguments, as the tool's input schema says.")
            return _result(failure_outcome(error))


class WorkspaceRoot:
    """The server's workspace root: ``--root``'s, checked when the server starts; without one, the
    client's first root (MCP ``roots/list``, asked at the first call and again after the client's
    ``notifications/roots/list_changed``) when the client offers roots on a connection that lets the
    server ask; else the folder the host started the server in. Whichever it is, a root that
    ``roots.root_problem`` refuses (the whole disk, the home folder, a state folder) is refused:
    at start for ``--root``, else on every call, each answer saying what to pass."""

    ROOTS_SECONDS = 10.0
    """How long a call waits for the client's roots before it takes the working folder."""

    def __init__(self, given: str | None) -> None:
        if given is not None and ("\0" in given or not os.path.isdir(given)):
            raise NotADirectoryError(f"The workspace root {given!r} is not a directory.")
        self.given = None if given is None else check_root(given)
        self.cwd = os.getcwd()
        self._taken: str | None = None
        """The root taken from the client's roots or the working folder (None: not yet asked)."""
        self._asked_at = 0
        self._changes = 0

    def first_line(self) -> str:
        """The server's first line on standard error: which root it serves."""
        if self.given is not None:
            return f"patchtx mcp: workspace root {self.given} (--root)"
        why = root_problem(self.cwd)
        refused = f" (refused as a root: {why}; pass --root)" if why else ""
        return (f"patchtx mcp: workspace root: the client's first root (MCP roots), else the working"
                f" folder {self.cwd}{refused}")

    def roots_changed(self) -> None:
        """The client said its roots changed: the next call asks again."""
        self._changes += 1

    async def resolve(self, ctx: Context) -> str:
        """The root this call works in; UnsafePathError if it may not be a root."""
        if self.given is not None:
            return self.given
        if self._taken is None or self._asked_at != self._changes:
            self._asked_at = self._changes
            taken, how = await self._from_client(ctx)
            if taken is None:
                taken, how = self.cwd, "the working folder: the client offers no roots"
            if taken != self._taken:
                sys.stderr.write(f"patchtx mcp: workspace root {taken} ({how})\n")
            self._taken = taken
        hint = (f"--root with the project's folder, an absolute path, in the server's configuration"
                f" (the host started it in {self.cwd})" if self._taken == self.cwd else
                "a project's folder as the client's first root, or --root with it")
        return check_root(self._taken, pass_what=hint)

    async def _from_client(self, ctx: Context) -> tuple[str | None, str]:
        """The client's first root that is a local folder (None when it offers none), and how."""
        request = _request_of(ctx)
        if request is None:
            return None, ""
        session = request.session
        capabilities = session.client_capabilities
        if capabilities is None or capabilities.roots is None or not session.can_send_request:
            return None, ""
        with anyio.move_on_after(self.ROOTS_SECONDS):
            try:
                # (session.list_roots warns that 2026-07-28 deprecates roots; hosts still send them)
                listed = (await session.send_request(ListRootsRequest(), ListRootsResult)).roots
            except Exception:  # noqa: BLE001 - a client that cannot answer: as one without roots
                return None, ""
            folders = [path for path in map(_local_folder, (str(root.uri) for root in listed)) if path]
            if not folders:
                return None, ""
            others = f"; not served: {', '.join(folders[1:])}" if folders[1:] else ""
            return folders[0], f"the client's first root{others}"
        return None, ""


class Calls:
    """The client's requests in progress, each with its ``Cancellation``: made when the request is
    read, set when the client cancels it (``notifications/cancelled``, which SDK clients also send
    when their own time limit runs out), looked at by the call's work on its worker thread (the
    planner, the commit and its verify command, up to the commit point: ``patchtx.cancel``). All
    of it on the event loop's thread, in the order the client's messages came."""

    def __init__(self) -> None:
        self._by_id: dict[object, Cancellation] = {}

    def opened(self, request_id: object) -> None:
        self._by_id[request_id] = Cancellation()

    def cancelled(self, request_id: object, reason: str | None) -> None:
        cancellation = self._by_id.get(request_id)
        if cancellation is not None:
            cancellation.cancel(f"the client cancelled the call ({reason})" if reason else
                                "the client cancelled the call")

    def cancellation(self, request_id: object) -> Cancellation:
        """The request's cancellation (a new one for a request not read through ``opened``)."""
        return self._by_id.setdefault(request_id, Cancellation())

    def finished(self, request_id: object, cancellation: Cancellation) -> None:
        if self._by_id.get(request_id) is cancellation:
            del self._by_id[request_id]

    def answered(self, request_id: object) -> None:
        """The request was answered (any request: a ping, a tools/list too): forget it. (A
        cancelled one is never answered: its call forgets it when it ends, ``finished``.)"""
        self._by_id.pop(request_id, None)


_PHASES = {"planning": "Planning files", "checking": "Checking files", "writing": "Writing files"}


class _Progress:
    """A call's ``progress(phase, done, total)`` (from its worker thread) sent to the client as
    ``notifications/progress``, when the request carries a progress token. ``progress`` counts the
    units of work done so far in the call (paths planned, files checked and written, seconds of
    the check), so it only grows; ``message`` says the phase with its counts (``Writing files:
    530/1070``). At most one notification every ``INTERVAL`` seconds within a phase, and one at
    each phase's end, each only if the count grew: enough for a host that resets its time limit on
    progress."""

    INTERVAL = 0.25

    def __init__(self, ctx: Context) -> None:
        self._ctx = ctx
        self._phase: str | None = None
        self._base = 0  # the units of the phases before this one
        self._done = 0
        self._sent = 0  # the last progress value sent
        self._sent_at = 0.0

    @classmethod
    def for_call(cls, ctx: Context) -> _Progress | None:
        request = _request_of(ctx)
        meta = (None if request is None else request.meta) or {}
        wanted = meta.get("progress_token", meta.get("progressToken"))
        return None if wanted is None else cls(ctx)

    def __call__(self, phase: str, done: int, total: int) -> None:
        now = time.monotonic()
        if phase != self._phase:
            self._base += self._done
            self._phase, self._done = phase, 0
            due = True
        else:
            due = done >= total or now - self._sent_at >= self.INTERVAL
        self._done = max(self._done, done)
        units = self._base + self._done
        if not due or units <= self._sent:  # (progress must grow from one notification to the next)
            return
        self._sent, self._sent_at = units, now
        message = (f"Running the check: {done} s (time limit {total} s)" if phase == "verifying"
                   else f"{_PHASES.get(phase, phase)}: {done}/{total}")
        try:
            anyio.from_thread.run(self._ctx.report_progress, units, None, message)
        except BaseException:  # noqa: BLE001 - progress never fails a call (a closed connection, a cancelled one)
            pass


def _request_of(ctx: Context) -> Any:
    """The request a tool call came in (None for a call made in the process, ``call_tool``)."""
    try:
        return ctx.request_context
    except ValueError:
        return None


def _local_folder(uri: str) -> str | None:
    """The folder a ``file://`` root names (None for another scheme, a remote host, no folder)."""
    parts = urlsplit(uri)
    if parts.scheme != "file" or parts.netloc not in ("", "localhost"):
        return None
    path = unquote(parts.path)
    return os.path.realpath(path) if path and "\0" not in path and os.path.isdir(path) else None


def build_server(root: str | None, host: dict[str, Any] | None = None, *,
                 undo_scope: str = "own") -> PatchtxMCPServer:
    """The server for workspace ``root`` (an existing directory; None: the client's first root,
    else the working folder, see ``WorkspaceRoot``), not yet running. ``host`` is the host's
    policy (``plan_patch`` keywords: ``protected``, ``hidden``, ``allow_delete``, ``max_files``...), a ceiling
    that neither the workspace's policy nor a tool call can lift (undo included). ``undo_scope``:
    what the undo tool may undo (``any``; ``own``, the transactions made through this server;
    ``none``: no undo tool; ``server_arguments`` puts ``--undo`` in ``host``). Raises
    NotADirectoryError, or UnsafePathError for a root that may not be one (``roots``)."""
    host = dict(host or {})
    undo_scope = host.pop("undo", undo_scope)
    workspace = WorkspaceRoot(root)
    # The tool list is fixed for the server's life: no list-change notifications or subscriptions
    # are advertised (none is ever sent), and under 2026-07-28 a client may cache the list.
    server = PatchtxMCPServer("patchtx", version=__version__, instructions=SERVER_INSTRUCTIONS,
                              subscriptions=False, cache_hints={"tools/list": TOOL_LIST_CACHE},
                              middleware=[initialize_first])
    server.workspace = workspace
    server.calls = Calls()

    def writes(title: str) -> ToolAnnotations:
        return ToolAnnotations(title=title, read_only_hint=False, destructive_hint=True,
                               idempotent_hint=False, open_world_hint=False)

    def reads(title: str) -> ToolAnnotations:
        return ToolAnnotations(title=title, read_only_hint=True, destructive_hint=False,
                               idempotent_hint=True, open_world_hint=False)

    async def run(ctx: Context, work: Callable[[str, Watch], ToolOutcome]) -> CallToolResult:
        """A call's work, given its root and its watch (progress, cancellation), on a worker thread:
        the event loop keeps serving, and sees a cancellation while the work runs."""
        request = _request_of(ctx)
        request_id = None if request is None else request.request_id
        cancel = server.calls.cancellation(request_id)
        try:
            call_root = await workspace.resolve(ctx)
            watch = Watch(progress=_Progress.for_call(ctx), cancel=cancel)
            return _result(await anyio.to_thread.run_sync(work, call_root, watch))
        except PatchtxError as error:
            return _result(failure_outcome(error))
        finally:
            server.calls.finished(request_id, cancel)

    @server.tool(name="apply_patch", description=APPLY_DESCRIPTION + instructions(),
                 annotations=writes("Apply patch"))
    @_with_options(("patch", PatchText), *(row.name for row in TOOL_OPTIONS))
    async def apply_patch(ctx: Context, patch: str, **options: Any) -> Shaped:
        return await run(ctx, lambda at, watch: apply_patch_call(patch, at, host=host, origin="mcp", watch=watch,
                                                                 **options))

    @server.tool(name="preview_patch", description=PREVIEW_DESCRIPTION,
                 annotations=reads("Preview patch"))
    @_with_options(("patch", PatchText), *_PREVIEW_OPTIONS)
    async def preview_patch(ctx: Context, patch: str, **options: Any) -> Shaped:
        return await run(ctx, lambda at, watch: apply_patch_call(patch, at, host=host, watch=watch, **options,
                                                                 dry_run=True))

    @server.tool(name="log", description=LOG_DESCRIPTION, annotations=reads("Undo history"))
    async def log(ctx: Context) -> Logged:
        return await run(ctx, lambda at, _watch: log_call(at))

    @_with_options(("transaction", TransactionId), "dry_run", "allow_delete")
    async def undo(ctx: Context, transaction: str, dry_run: bool, allow_delete: bool) -> Shaped:
        return await run(ctx, lambda at, watch: undo_call(at, transaction, dry_run=dry_run, allow_delete=allow_delete,
                                                          host=host, scope=undo_scope, watch=watch))

    if undo_scope != "none":
        described = UNDO_DESCRIPTION + (UNDO_OWN_ONLY if undo_scope == "own" else "")
        server.tool(name="undo", description=described, annotations=writes("Undo transaction"))(undo)

    @server.tool(name=EDITOR, description=EDITOR_DESCRIPTION, annotations=writes("Text editor"))
    @_editor_arguments(*EDITOR_ARGUMENTS)
    async def str_replace_based_edit_tool(ctx: Context, **arguments: Any) -> Shaped:
        given = {k: v for k, v in arguments.items() if v is not None}
        return await run(ctx, lambda at, watch: editor_call(given, at, host=host, origin="mcp", watch=watch))

    @server.tool(name=VIEW, description=VIEW_DESCRIPTION, annotations=reads("View file"))
    @_editor_arguments("path", "view_range", "max_characters")
    async def view(ctx: Context, **arguments: Any) -> Shaped:
        given = {"command": "view"} | {k: v for k, v in arguments.items() if v is not None}
        return await run(ctx, lambda at, watch: editor_call(given, at, host=host, origin="mcp", watch=watch))

    @server.tool(name=EDITS, description=EDITS_DESCRIPTION, annotations=writes("Edit files"))
    async def edit_files(
        ctx: Context,
        edits: Annotated[list[EditItem], _described(_EDITS, "edits")],
        file_path: Annotated[OptionalText, _described(_EDITS, "file_path")] = None,
        dry_run: DryRun = False,
        intent: Annotated[OptionalText, _described(_EDITS, "intent")] = None,
    ) -> Shaped:
        items = [edit.model_dump(exclude_none=True) for edit in edits]
        return await run(ctx, lambda at, watch: edits_call(items, at, file_path=file_path, dry_run=dry_run,
                                                           intent=intent, host=host, origin="mcp", watch=watch))

    @server.tool(name=REPLACE_IN_FILE, description=REPLACE_IN_FILE_DESCRIPTION,
                 annotations=writes("Replace in file"))
    async def replace_in_file(
        ctx: Context,
        path: Annotated[str, _described(_REPLACE, "path")],
        diff: Annotated[str, _described(_REPLACE, "diff")],
    ) -> Shaped:
        return await run(ctx, lambda at, watch: replace_in_file_call(path, diff, at, host=host, origin="mcp",
                                                                     watch=watch))

    @server.tool(name=EDIT_FILE, description=EDIT_FILE_DESCRIPTION, annotations=writes("Edit file"))
    async def edit_file(
        ctx: Context,
        target_file: Annotated[str, _described(_EDIT_FILE, "target_file")],
        code_edit: Annotated[str, _described(_EDIT_FILE, "code_edit")],
        instructions: Annotated[OptionalText, _described(_EDIT_FILE, "instructions")] = None,
    ) -> Shaped:
        arguments = {"target_file": target_file, "code_edit": code_edit, "instructions": instructions}
        given = {k: v for k, v in arguments.items() if v is not None}
        return await run(ctx, lambda at, watch: edit_file_call(given, at, host=host, origin="mcp", watch=watch))

    for declared in server._tool_manager.list_tools():
        # What call_tool refuses, the input schema says: no argument the tool does not declare.
        declared.parameters["additionalProperties"] = False
    return server


def mcp_main(argv: list[str] | None = None) -> int:
    """``patchtx mcp [--root DIR] [--undo any|own|none] [host options]``: the MCP server on
    stdin/stdout."""
    return serve(*server_arguments(argv))


def serve(root: str | None, host: dict[str, Any]) -> int:
    """The MCP server of ``root`` (None: see ``WorkspaceRoot``) on stdin/stdout, with the host's
    options (``server_arguments``). Its first line on standard error names its root."""
    try:
        server = build_server(root, host)
    except (NotADirectoryError, PatchtxError) as exc:
        reason = f"{exc.headline} {exc.hint}" if isinstance(exc, PatchtxError) else str(exc)
        sys.stderr.write(f"patchtx mcp: {reason}\n")
        return 2
    sys.stderr.write(server.workspace.first_line() + "\n")
    try:
        anyio.run(serve_stdio, server)
    except KeyboardInterrupt:  # Ctrl-C: one line, not a traceback
        sys.stderr.write(f"patchtx mcp: interrupted. {INTERRUPTED}\n")
        return 130
    return 0


if __name__ == "__main__":
    sys.exit(mcp_main())
