"""How the apply_patch tool is declared to a model: grammar, tool JSON, instructions.

Formats (``tool_spec(format)`` and ``patchtx tool-spec --format FORMAT``):

- ``custom``: an OpenAI Responses custom (freeform) tool whose input is constrained by our Lark
  grammar; the model sends the raw patch text.
- ``function``: a JSON-schema function tool whose patch parameter is ``input`` (Codex's name);
  ``function-patchText`` and ``function-patch`` name it ``patchText`` or ``patch`` for hosts that
  use those names. All three take the same options (``options.TOOL_OPTIONS``: ``allow_delete``,
  ``allow_move``, ``skip_applied``, ``dry_run``, ``workspace_root``, ``intent``, ``extract``,
  ``strip``, ``reverse``), which ``patchtx.agents.tool_call.run_tool_call`` executes.
- ``chat-completions``: the same function tool in the Chat Completions API's shape
  (``{"type": "function", "function": {...}}``).
- ``anthropic``: the same tool as an Anthropic Messages API tool definition
  (``{"name", "description", "input_schema"}``).
- ``json-schema``: the function tool's input schema alone (the patch under ``input``), as the
  edit-protocol tools' ``json-schema`` is theirs.
- ``lark``: the grammar definition exactly as the custom tool carries it.
- ``instructions``: the text that teaches the format and patchtx's semantics.

Both tool declarations carry the instructions as their description, so a host that declares the
tool needs nothing else in its system prompt.
"""

from __future__ import annotations

import argparse
import json
import sys
from functools import cache
from importlib import resources
from typing import Any

from ..options import TOOL_OPTIONS
from .edit_toolspec import FORMATS as EDIT_FORMATS
from .edit_toolspec import TOOLS, edit_tool_spec, json_tool

TOOL_NAME = "apply_patch"
GRAMMAR_RESOURCE = "apply_patch.lark"
INSTRUCTIONS_RESOURCE = "apply_patch_instructions.md"

FUNCTION_PATCH_PARAMETERS = {
    "function": "input",
    "function-patchText": "patchText",
    "function-patch": "patch",
}
FORMATS = ("custom", *FUNCTION_PATCH_PARAMETERS, "chat-completions", "anthropic", "json-schema", "lark",
           "instructions")

FREEFORM_NOTE = (
    "This is a FREEFORM tool: send the patch text itself, from '*** Begin Patch' to "
    "'*** End Patch', not JSON.\n\n"
)

# What the host does with each option (``options.TOOL_OPTIONS``: the one table of options);
# shared by the function tools and the MCP server so that a model sees the same words whichever
# way the tool reaches it.
OPTION_DESCRIPTIONS = {row.name: row.option.tool for row in TOOL_OPTIONS}
PATCH_DESCRIPTION = ("The whole patch, from '*** Begin Patch' to '*** End Patch'; or a unified "
                     "diff as `git diff` writes it (the format is detected).")


def _read_resource(name: str) -> str:
    return resources.files(__package__).joinpath(name).read_text(encoding="utf-8")


@cache
def grammar_definition() -> str:
    """The Lark grammar as sent to a model: the packaged file without its comment lines.

    The comments explain the grammar to maintainers; a model pays for every byte of the
    definition on every request, so they are dropped (blank lines collapse with them).
    """
    lines = [line for line in _read_resource(GRAMMAR_RESOURCE).splitlines()
             if not line.lstrip().startswith("//")]
    text = "\n".join(lines)
    while "\n\n\n" in text:
        text = text.replace("\n\n\n", "\n\n")
    return text.strip() + "\n"


@cache
def instructions() -> str:
    """The text that teaches a model the patch format and how patchtx applies it."""
    return _read_resource(INSTRUCTIONS_RESOURCE)


def custom_tool() -> dict[str, Any]:
    """The Responses API custom tool: raw patch text constrained by the grammar."""
    return {
        "type": "custom",
        "name": TOOL_NAME,
        "description": FREEFORM_NOTE + instructions(),
        "format": {"type": "grammar", "syntax": "lark", "definition": grammar_definition()},
    }


JSON_TYPES = {"bool": "boolean", "str | None": "string", "int | None": "integer"}
"""An option's annotation -> its JSON type (an integer is never negative)."""


def option_properties() -> dict[str, dict[str, Any]]:
    """JSON-schema properties of the options every JSON-argument form of the tool accepts."""
    properties: dict[str, dict[str, Any]] = {}
    for row in TOOL_OPTIONS:
        schema: dict[str, Any] = {"type": JSON_TYPES[row.type]}
        if schema["type"] == "integer":
            schema["minimum"] = 0
        if row.tool_default is not None:
            schema["default"] = row.tool_default
        schema["description"] = row.option.tool
        properties[row.name] = schema
    return properties


def function_tool(patch_parameter: str = "input", format: str = "function", *,
                  strict: bool = False) -> dict[str, Any]:
    """The tool with the patch as the JSON argument ``patch_parameter``, beside the options: a
    Responses API function tool, or in another JSON ``format`` (``edit_toolspec.json_tool``; its
    ``strict`` form with ``strict``)."""
    properties: dict[str, Any] = {
        patch_parameter: {"type": "string", "description": PATCH_DESCRIPTION},
        **option_properties(),
    }
    parameters = {"type": "object", "properties": properties, "required": [patch_parameter],
                  "additionalProperties": False}
    return json_tool(TOOL_NAME, instructions(), parameters, format, strict=strict)


STRICT_FORMATS = (*FUNCTION_PATCH_PARAMETERS, "chat-completions", "anthropic", "json-schema")
"""The formats that are a JSON schema, which ``strict`` turns into its strict form."""


def tool_spec(format: str = "custom", *, strict: bool = False) -> dict[str, Any] | str:
    """The declaration in ``format`` (one of ``FORMATS``): a JSON-ready dict, or text for
    ``lark`` and ``instructions``. ``strict`` (the formats of ``STRICT_FORMATS``): the providers'
    strict form: every argument required, the optional ones nullable, no defaults, no other
    properties, ``strict: true`` (``edit_toolspec.strict_schema``)."""
    if strict and format not in STRICT_FORMATS:
        raise ValueError(f"the {format} format has no strict form; strict applies to: {', '.join(STRICT_FORMATS)}")
    if format == "custom":
        return custom_tool()
    if format in FUNCTION_PATCH_PARAMETERS:
        return function_tool(FUNCTION_PATCH_PARAMETERS[format], strict=strict)
    if format in ("chat-completions", "anthropic"):
        return function_tool(format=format, strict=strict)
    if format == "json-schema":
        return dict(function_tool(strict=strict)["parameters"])
    if format == "lark":
        return grammar_definition()
    if format == "instructions":
        return instructions()
    raise ValueError(f"unknown tool-spec format {format!r}; choose one of: {', '.join(FORMATS)}")


def tool_spec_main(argv: list[str] | None = None) -> int:
    """``patchtx tool-spec [--format FORMAT]``: print a declaration (JSON or text) on stdout."""
    parser = argparse.ArgumentParser(
        prog="patchtx tool-spec",
        description="Print a tool declaration for a model host: apply_patch (the default), or an "
                    "edit-protocol tool.",
    )
    parser.add_argument("--tool", choices=(TOOL_NAME, *TOOLS), default=TOOL_NAME,
                        help="apply_patch (the default); str_replace_based_edit_tool (the text "
                             "editor), edit_files (edit lists) or replace_in_file "
                             "(SEARCH/REPLACE blocks)")
    parser.add_argument("--format", choices=sorted({*FORMATS, *EDIT_FORMATS}), default=None,
                        help="for apply_patch: custom (freeform tool with grammar, the default), "
                             "function, function-patchText, function-patch (JSON-schema tools for "
                             "the Responses API), chat-completions (the function tool for Chat "
                             "Completions), anthropic (an Anthropic tool definition), json-schema "
                             "(the function tool's input schema alone), lark "
                             "(the grammar alone), instructions (the text alone); for the other "
                             "tools: function (the default), chat-completions, anthropic, "
                             "json-schema (the input schema alone)")
    parser.add_argument("--strict", action="store_true",
                        help="the providers' strict form (OpenAI strict: true, Anthropic strict tools): "
                             "every argument required, the optional ones nullable, no defaults; for the "
                             "JSON formats (apply_patch's default is then function)")
    args = parser.parse_args(argv)
    if args.tool == TOOL_NAME:
        if args.format is not None and args.format not in FORMATS:
            parser.error(f"--format {args.format} is not a format of apply_patch's declaration")
        format = args.format or ("function" if args.strict else "custom")
        if args.strict and format not in STRICT_FORMATS:
            parser.error(f"--strict applies to the JSON formats ({', '.join(STRICT_FORMATS)}), not {format}")
        spec = tool_spec(format, strict=args.strict)
    else:
        if args.format is not None and args.format not in EDIT_FORMATS:
            parser.error(f"--format {args.format} is not a format of {args.tool}'s declaration")
        spec = edit_tool_spec(args.tool, args.format or "function", strict=args.strict)
    text = spec if isinstance(spec, str) else json.dumps(spec, indent=2, ensure_ascii=False) + "\n"
    sys.stdout.write(text)
    return 0
