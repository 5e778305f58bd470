"""How the edit-protocol tools are declared to a model: the text editor
(``str_replace_based_edit_tool``), edit lists (``edit_files``), SEARCH/REPLACE blocks
(``replace_in_file``) and lazy edit snippets (``edit_file``), each as a JSON schema in three shapes.

``patchtx tool-spec --tool NAME --format FORMAT`` prints them: ``function`` (a Responses API
function tool), ``chat-completions`` (the same nested as Chat Completions wants it), ``anthropic``
(an Anthropic Messages API tool: ``{"name", "description", "input_schema"}``), ``json-schema`` (the
input schema alone). For the text editor, ``anthropic`` is the tool Anthropic defines
(``{"type": "text_editor_20250728", "name": "str_replace_based_edit_tool"}``): Claude knows its
schema, and its calls' arguments are the ones ``editor_call`` takes.

The MCP server declares the same tools with these descriptions.
"""

from __future__ import annotations

from typing import Any

EDITOR = "str_replace_based_edit_tool"
VIEW = "view"
"""The read-only tool (MCP) that shows a file or a folder as the editor's ``view`` does."""
EDITS = "edit_files"
REPLACE_IN_FILE = "replace_in_file"
EDIT_FILE = "edit_file"
"""Lazy edit snippets merged into a file (Cursor's ``edit_file``; ``agents.snippet_tool``)."""
TOOLS = (EDITOR, EDITS, REPLACE_IN_FILE, EDIT_FILE)
FORMATS = ("function", "chat-completions", "anthropic", "json-schema")
ANTHROPIC_EDITOR_TYPE = "text_editor_20250728"

EDITOR_DESCRIPTION = (
    "Custom editing tool for viewing, creating and editing files under the workspace root.\n"
    "* `view` shows a file's lines numbered as `cat -n` does (`view_range`: [first, last], -1 for "
    "the end), or a folder's files up to 2 levels deep, hidden ones left out.\n"
    "* `create` makes a new file with `file_text`; it refuses an existing file.\n"
    "* `str_replace` replaces `old_str` with `new_str`: `old_str` must appear in the file exactly "
    "once, white space and line breaks included; include enough context to make it unique.\n"
    "* `insert` puts `insert_text` after line `insert_line` (0: the top of the file).\n"
    "Each edit is one transaction: it lands whole or not at all, and the `undo` tool reverts it. "
    "Paths are absolute inside the root, or relative to it."
)
EDITS_DESCRIPTION = (
    "Edit files by exact text replacement, several edits in one or several files as one "
    "transaction: all of them land or none does. Edits apply in order, each to the files as the "
    "edits before it left them. `old_string` must appear in its file exactly once (or set "
    "`replace_all` to replace every occurrence); it may start and end anywhere in a line, white "
    "space and line breaks included. An empty `old_string` creates the file with `new_string` (or "
    "fills an existing empty one)."
)
REPLACE_IN_FILE_DESCRIPTION = (
    "Replace sections of one file with SEARCH/REPLACE blocks, all of them as one transaction:\n"
    "------- SEARCH\n[exact lines to find]\n=======\n[lines to put in their place]\n"
    "+++++++ REPLACE\n"
    "Each SEARCH must match the file's lines exactly (trailing white space aside; a block "
    "indented as a whole by a different amount is shifted to the file's indentation) and stand "
    "once, after the block before it, and once in the file as the blocks before it leave it: "
    "list blocks in the file's order. An empty SEARCH creates a new file (or fills an empty one), "
    "never one with content. aider's markers (<<<<<<< SEARCH, >>>>>>> REPLACE) are read too."
)

EDIT_FILE_DESCRIPTION = (
    "Edit one file by showing only what changes: `code_edit` holds the changed lines with a "
    "placeholder comment in the file's syntax (`// ... existing code ...`, `# ... existing code "
    "...`) standing for each run of unchanged lines, also before the first and after the last "
    "change unless the snippet starts or ends where the file does. Around each change show 3 "
    "unchanged lines before and after it, exactly as the file has them, at least one of them "
    "found once in the file (a function's signature); never put a changed line next to a "
    "placeholder. To delete lines, show the unchanged lines on both sides of them with nothing "
    "between. The snippet is merged only when the file's text decides the result; otherwise "
    "nothing is written and the error says which unchanged lines to add where. Each call is one "
    "transaction, which the `undo` tool reverts. A file that does not exist is created with "
    "`code_edit` as its content."
)

VIEW_DESCRIPTION = (
    "Show a file's lines numbered as `cat -n` does (`view_range`: [first, last], -1 for the end), or "
    "a folder's files up to 2 levels deep, hidden ones left out, under the workspace root. Reads "
    "only: the same as str_replace_based_edit_tool's `view`, for hosts that offer read-only tools "
    "alone (plan and ask modes). Paths are absolute inside the root, or relative to it."
)


EDITOR_ARGUMENTS: dict[str, dict[str, Any]] = {
    "command": {"type": "string", "enum": ["view", "create", "str_replace", "insert"],
                "description": "The command to run."},
    "path": {"type": "string", "description": "The file or folder: absolute inside the workspace root, "
             "or relative to it."},
    "file_text": {"type": "string", "description": "`create`: the new file's content."},
    "old_str": {"type": "string", "description": "`str_replace`: the exact text to replace; it must "
                "appear in the file once."},
    "new_str": {"type": "string", "description": "`str_replace`: the text to put in its place (empty: "
                "delete it)."},
    "insert_line": {"type": "integer", "minimum": 0, "description": "`insert`: the line the text goes "
                    "after (0: the top of the file)."},
    "insert_text": {"type": "string", "description": "`insert`: the text to insert."},
    "view_range": {"type": "array", "items": {"type": "integer"}, "minItems": 2, "maxItems": 2,
                   "description": "`view` of a file: [first, last] line, 1-based; -1 as last for the "
                   "end of the file."},
    "max_characters": {"type": "integer", "minimum": 1, "description": "`view`: show at most this many "
                       "characters (default 16000)."},
}
"""THE declaration of the text editor's nine arguments, each as its JSON schema: the tool's schema
(``editor_schema``), the editor's check of a call (``editor.ARGUMENTS``) and the MCP tool's
signature (``mcp_server``) are built from it."""
EDITOR_REQUIRED = ("command", "path")


def editor_schema() -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {name: dict(schema) for name, schema in EDITOR_ARGUMENTS.items()},
        "required": list(EDITOR_REQUIRED),
        "additionalProperties": False,
    }


def edits_schema() -> dict[str, Any]:
    edit = {
        "type": "object",
        "properties": {
            "path": {"type": "string", "description": "The file, relative to the workspace root "
                     "(or absolute inside it); default: `file_path`."},
            "old_string": {"type": "string", "description": "The exact text to replace (empty: "
                           "create the file)."},
            "new_string": {"type": "string", "description": "The text to put in its place."},
            "replace_all": {"type": "boolean", "default": False,
                            "description": "Replace every occurrence of old_string."},
        },
        "required": ["old_string", "new_string"],
        "additionalProperties": False,
    }
    return {
        "type": "object",
        "properties": {
            "edits": {"type": "array", "minItems": 1, "items": edit,
                      "description": "The edits, applied in order."},
            "file_path": {"type": "string", "description": "The file of the edits that name "
                          "none (as Claude Code's MultiEdit takes one file)."},
            "dry_run": {"type": "boolean", "default": False, "description": "Check the edits "
                        "and show the diffs without writing anything."},
            "intent": {"type": "string", "description": "One sentence saying why; recorded with "
                       "the change."},
        },
        "required": ["edits"],
        "additionalProperties": False,
    }


def replace_in_file_schema() -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {
            "path": {"type": "string", "description": "The file, relative to the workspace root "
                     "(or absolute inside it)."},
            "diff": {"type": "string", "description": "One or more SEARCH/REPLACE blocks."},
        },
        "required": ["path", "diff"],
        "additionalProperties": False,
    }


def edit_file_schema() -> dict[str, Any]:
    """Cursor's ``edit_file`` arguments (``agents.snippet_tool`` also takes Morph's and Relace's
    names for them)."""
    return {
        "type": "object",
        "properties": {
            "target_file": {"type": "string", "description": "The file to edit, relative to the "
                            "workspace root (or absolute inside it)."},
            "instructions": {"type": "string", "description": "One sentence saying what the "
                             "edit does; recorded with the change."},
            "code_edit": {"type": "string", "description": "The changed lines, with a "
                          "placeholder comment such as `// ... existing code ...` for each run of "
                          "unchanged lines."},
        },
        "required": ["target_file", "code_edit"],
        "additionalProperties": False,
    }


SPECS = {
    EDITOR: (EDITOR_DESCRIPTION, editor_schema),
    EDITS: (EDITS_DESCRIPTION, edits_schema),
    REPLACE_IN_FILE: (REPLACE_IN_FILE_DESCRIPTION, replace_in_file_schema),
    EDIT_FILE: (EDIT_FILE_DESCRIPTION, edit_file_schema),
}


def edit_tool_spec(tool: str, format: str = "function", *, strict: bool = False) -> dict[str, Any]:
    """The declaration of ``tool`` (one of ``TOOLS``) in ``format`` (one of ``FORMATS``); with
    ``strict``, its schema in the providers' strict form (``strict_schema``)."""
    if tool not in SPECS:
        raise ValueError(f"unknown tool {tool!r}; choose one of: {', '.join(TOOLS)}")
    description, schema = SPECS[tool]
    if format == "json-schema":
        return strict_schema(schema()) if strict else schema()
    if format == "anthropic" and tool == EDITOR and not strict:
        return {"type": ANTHROPIC_EDITOR_TYPE, "name": EDITOR}
    if format not in FORMATS:
        raise ValueError(f"unknown format {format!r} for {tool}; choose one of: {', '.join(FORMATS)}")
    return json_tool(tool, description, schema(), format, strict=strict)


def strict_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """``schema`` as the providers' strict modes take it (OpenAI's ``strict: true``, Anthropic's
    strict tools, the Agents SDK's strict converter): every object lists every property as
    required and allows no other; an optional property may be null instead (which the tools read
    as "not given"); no defaults (the description says what leaving it null does)."""
    out = {key: value for key, value in schema.items() if key != "default"}
    if "properties" in out:
        required = set(out.get("required", ()))
        properties = {}
        for name, value in out["properties"].items():
            value = strict_schema(value)
            properties[name] = value if name in required else _nullable(value)
        out.update(properties=properties, required=list(properties), additionalProperties=False)
    if isinstance(out.get("items"), dict):
        out["items"] = strict_schema(out["items"])
    return out


def _nullable(schema: dict[str, Any]) -> dict[str, Any]:
    kind = schema.get("type")
    out = dict(schema, type=[kind, "null"]) if isinstance(kind, str) else dict(schema)
    if "enum" in out and None not in out["enum"]:
        out["enum"] = [*out["enum"], None]
    return out


def json_tool(name: str, description: str, parameters: dict[str, Any], format: str, *,
              strict: bool = False) -> dict[str, Any]:
    """A tool whose arguments are JSON of the schema ``parameters``, in ``format``: ``function`` (a
    Responses API function tool), ``chat-completions`` (the same nested as Chat Completions wants
    it) or ``anthropic`` (an Anthropic Messages API tool). ``strict`` off: optional arguments stay
    optional; on: the schema in its strict form (``strict_schema``) and ``strict: true``."""
    if strict:
        parameters = strict_schema(parameters)
    if format == "anthropic":
        tool = {"name": name, "description": description, "input_schema": parameters}
        return {**tool, "strict": True} if strict else tool
    function = {"type": "function", "name": name, "description": description, "strict": strict,
                "parameters": parameters}
    if format == "chat-completions":
        return {"type": "function", "function": {key: function[key] for key in
                                                 ("name", "description", "parameters", "strict")}}
    return function
