"""patchtx's command-line options, built for argparse from the one table of options
(``options.OPTIONS``): the host's policy (``PlanOptions``), how a commit is made
(``CommitOptions``) and what one call asks (``CallOptions``). ``patchtx apply``, ``check``,
``undo``, ``redo`` (in ``commands``) and ``patchtx mcp`` (``server_arguments``, read before the
MCP SDK is imported: a usage error does not wait for it) take them from here.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from .options import OPTIONS, UNDO_SCOPES, CallOptions, CommitOptions, PlanOptions

if TYPE_CHECKING:
    from .options import Declared


def count(value: str) -> int:
    """A non-negative integer (named for argparse's message: "invalid count value")."""
    number = int(value)
    if number < 0:
        raise ValueError(value)
    return number


def seconds(value: str) -> float:
    """A non-negative, finite number (named for argparse's message: "invalid seconds value")."""
    number = float(value)
    if not 0 <= number < float("inf"):
        raise ValueError(value)
    return number


def _add(group: Any, row: Declared) -> None:
    flags, surfaces = row.option.flag, row.option
    dest: dict[str, Any] = {"dest": row.name}
    if row.type == "bool":
        group.add_argument(*flags, action="store_true", help=surfaces.help, **dest)
    elif row.type.startswith("tuple"):
        group.add_argument(*flags, action="append", default=[], metavar=surfaces.metavar,
                           help=surfaces.help, **dest)
    else:
        kind = {"float": seconds, "str | None": str, "str": str}.get(row.type, count)
        if surfaces.choices:  # (argparse names the valid values in its one-line error)
            dest["choices"] = surfaces.choices
        group.add_argument(*flags, type=kind, metavar=surfaces.metavar, help=surfaces.help, **dest)


def _given(args: argparse.Namespace, row: Declared) -> Any:
    """The option's keyword as parsed: None when not given. A ``--no-`` flag gives False."""
    value = getattr(args, row.name)
    if row.type == "bool":
        return (not row.default) if value else None
    if row.type.startswith("tuple"):
        return tuple(value) or None
    return value


def add_options(parser: argparse.ArgumentParser, owner: type, *, title: str | None = None,
                description: str | None = None, names: tuple[str, ...] | None = None) -> None:
    """The command-line flags of ``owner``'s options (``names`` only, if given), in a group."""
    group = parser.add_argument_group(title, description) if title else parser
    for row in OPTIONS:
        if row.owner is owner and row.option.flag and (names is None or row.name in names):
            _add(group, row)


def keywords(args: argparse.Namespace, owner: type) -> dict[str, Any]:
    """The keywords of ``owner``'s options that ``add_options`` parsed (None: not given)."""
    return {row.name: _given(args, row) for row in OPTIONS
            if row.owner is owner and row.option.flag and hasattr(args, row.name)}


def add_policy_options(parser: argparse.ArgumentParser, description: str = "A ceiling that the workspace's"
                       " [tool.patchtx] table can only tighten.") -> None:
    """The host's policy (``PlanOptions``): ``patchtx apply``, ``check`` and ``mcp``."""
    add_options(parser, PlanOptions, title="host policy", description=description)


def policy_keywords(args: argparse.Namespace) -> dict[str, Any]:
    return keywords(args, PlanOptions)


def add_commit_options(parser: argparse.ArgumentParser) -> None:
    """How a commit is made (``CommitOptions``): ``patchtx apply``, ``undo``, ``redo`` and ``mcp``.
    An option left out keeps the config's and the workspace's history limits."""
    add_options(parser, CommitOptions, title="commit")


def commit_keywords(args: argparse.Namespace) -> dict[str, Any]:
    return keywords(args, CommitOptions)


def add_call_options(parser: argparse.ArgumentParser, *names: str) -> None:
    """What one call asks (``CallOptions``): the named ones."""
    add_options(parser, CallOptions, names=names)


def server_arguments(argv: list[str] | None = None) -> tuple[str | None, dict[str, Any]]:
    """``patchtx mcp``'s command line: the root (None: not given), and the host's options as
    ``patchtx.apply_patch`` keywords (those of ``patchtx apply`` that a tool call may not set; see
    docs/integrations.md)."""
    parser = argparse.ArgumentParser(
        prog="patchtx mcp",
        description="Serve the apply_patch, preview_patch, log and undo tools, and the edit tools "
                    "(str_replace_based_edit_tool, edit_files, replace_in_file), over MCP (stdio).",
    )
    parser.add_argument("--root", default=None,
                        help="workspace root the tools may edit (default: the client's first root"
                             " (MCP roots), else the current directory; never /, the home folder or"
                             " a state folder)")
    add_policy_options(parser, "A ceiling on what tool calls may do: the workspace's [tool.patchtx]"
                               " table and the calls' own options can only tighten it.")
    add_commit_options(parser)
    parser.add_argument("--undo", choices=UNDO_SCOPES, default="own",
                        help="what the undo tool may undo: any transaction, only those made through"
                             " this server (default: own), or nothing (no undo tool)")
    args = parser.parse_args(argv)
    host = {**policy_keywords(args), **commit_keywords(args)}
    host = {name: value for name, value in host.items() if value is not None}
    if args.undo != "own":
        host["undo"] = args.undo
    return args.root, host
