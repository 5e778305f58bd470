"""The options of patchtx's command lines, declared once for argparse: the host's policy
(``PlanOptions``) and how a commit is made (``CommitOptions``). ``patchtx apply``, ``check``,
``undo``, ``redo`` (in ``commands``) and ``patchtx mcp`` (in ``agents.mcp_server``) take them from here.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse
    from typing import Any


def add_policy_options(parser: argparse.ArgumentParser, description: str = "A ceiling that the workspace's"
                       " [tool.patchtx] table can only tighten.") -> None:
    """The host's policy (``PlanOptions``). ``patchtx apply``, ``check`` and ``mcp`` take these;
    ``policy_keywords`` reads them."""
    p = parser.add_argument_group("host policy", description)
    p.add_argument("--allow-overwrite", action="store_true",
                   help="let Add and Move replace existing files (as Codex does)")
    p.add_argument("--no-delete", action="store_true", help="refuse patches that delete")
    p.add_argument("--no-move", action="store_true", help="refuse patches that move")
    p.add_argument("--first-match", action="store_true",
                   help="take the first match of an ambiguous hunk (as Codex does)")
    p.add_argument("--protect", action="append", default=[], metavar="GLOB",
                   help="refuse patches touching paths that match GLOB (repeatable)")
    p.add_argument("--max-files", type=count, metavar="N", help="refuse patches that change more than N files")
    p.add_argument("--max-bytes", type=count, metavar="N", help="refuse patches that change more than N bytes")
    p.add_argument("--max-patch-bytes", type=count, metavar="N", help="refuse patch texts longer than N bytes")
    p.add_argument("--allow-policy-edit", action="store_true",
                   help="let patches change the workspace's patchtx policy ([tool.patchtx], .patchtx.toml)")
    p.add_argument("--syntax", choices=("off", "warn", "refuse"), metavar="MODE",
                   help="the syntax guard: off, warn (apply and report new syntax errors) or refuse"
                        " (refuse a patch that leaves a file unparseable); default: the config's, else"
                        " off for apply, warn for check, refuse for mcp")


def policy_keywords(args: argparse.Namespace) -> dict[str, Any]:
    """The ``PlanOptions`` keywords that ``add_policy_options`` parsed (None: not given)."""
    return {
        "allow_overwrite": args.allow_overwrite or None,
        "allow_delete": False if args.no_delete else None,
        "allow_move": False if args.no_move else None,
        "first_match": args.first_match or None,
        "protected": tuple(args.protect) or None,
        "max_files": args.max_files,
        "max_bytes": args.max_bytes,
        "max_patch_bytes": args.max_patch_bytes,
        "allow_policy_edit": args.allow_policy_edit or None,
        "syntax": args.syntax,
    }


def count(value: str) -> int:
    """A non-negative integer (named for argparse's message: "invalid count value")."""
    number = int(value)
    if number < 0:
        raise ValueError(value)
    return number


def add_commit_options(parser: argparse.ArgumentParser) -> None:
    """How a commit is made (``CommitOptions``): ``patchtx apply``, ``undo``, ``redo`` and ``mcp``
    take these; ``commit_keywords`` reads them. Defaults (shown in --help) are those of
    ``CommitOptions``; an option left out keeps the config's and the workspace's history limits."""
    from .options import DEFAULT_COMMIT

    p = parser.add_argument_group("commit")
    p.add_argument("--no-fsync", action="store_true",
                   help="skip fsync (throw-away trees): keeps atomicity, drops durability")
    p.add_argument("--lock-timeout", type=float, metavar="SECONDS",
                   help="how long to wait for another transaction's lock "
                        f"(default: {DEFAULT_COMMIT.lock_timeout:g})")
    p.add_argument("--history-count", type=count, metavar="N",
                   help="keep at most N transactions in the undo history, 0 for none "
                        f"(default: the workspace's history-count, else {DEFAULT_COMMIT.history_count})")
    p.add_argument("--history-bytes", type=count, metavar="N",
                   help="keep at most N bytes of originals in the undo history (default: the "
                        f"workspace's history-bytes, else {DEFAULT_COMMIT.history_bytes // 2**20} MiB)")


def commit_keywords(args: argparse.Namespace) -> dict[str, Any]:
    """The ``CommitOptions`` keywords that ``add_commit_options`` parsed (None: not given)."""
    return {
        "durable": False if args.no_fsync else None,
        "lock_timeout": args.lock_timeout,
        "history_count": args.history_count,
        "history_bytes": args.history_bytes,
    }


def add_verify_options(parser: argparse.ArgumentParser) -> None:
    """The verify step (``CommitOptions.verify``): ``patchtx apply`` and ``patchtx mcp`` take
    these (a host's choice: no tool call can pass a command); ``verify_keywords`` reads them."""
    from .options import DEFAULT_COMMIT

    p = parser.add_argument_group("verify")
    p.add_argument("--verify", metavar="CMD",
                   help="run CMD (a shell command, in the root) once the change is written, before it"
                        " is committed: keep the change only if CMD exits 0, else roll it back")
    p.add_argument("--verify-timeout", type=float, metavar="SECONDS",
                   help=f"stop CMD and roll back after SECONDS (default: {DEFAULT_COMMIT.verify_timeout:g})")


def verify_keywords(args: argparse.Namespace) -> dict[str, Any]:
    """The ``CommitOptions`` keywords that ``add_verify_options`` parsed (None: not given)."""
    return {"verify": args.verify, "verify_timeout": args.verify_timeout}
