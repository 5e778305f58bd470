"""Command-line entry points: ``patchtx`` and the drop-in ``apply_patch`` / ``applypatch``.

Agents call ``apply_patch`` once per edit, so this module imports only what a run needs, late.
"""

from __future__ import annotations

import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse
    from collections.abc import Callable
    from typing import Any, NoReturn

    from .errors import PatchtxError
    from .model import Plan
    from .progress import TerminalProgress

APPLY_PATCH_USAGE = "Usage: apply_patch 'PATCH'\n       echo 'PATCH' | apply_patch"


def _has_surrogates(text: str) -> bool:
    return any("\udc80" <= c <= "\udcff" for c in text)


def apply_patch_main(argv: list[str] | None = None) -> int:
    """Codex's ``apply_patch`` contract: the patch as the one argument or on stdin."""
    args = sys.argv[1:] if argv is None else argv
    if len(args) > 1:
        sys.stderr.write("Error: apply_patch accepts exactly one argument.\n")
        return 2
    if args:
        text = args[0]
        if _has_surrogates(text):
            sys.stderr.write("Error: apply_patch requires a UTF-8 PATCH argument.\n")
            return 1
    else:
        try:
            if sys.stdin is None:
                raise OSError("standard input is closed")
            text = sys.stdin.buffer.read().decode("utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            sys.stderr.write(f"Error: Failed to read PATCH from stdin.\n{exc}\n")
            return 1
        if not text:
            sys.stderr.write(APPLY_PATCH_USAGE + "\n")
            return 2
    import os

    try:
        os.getcwd()
    except OSError as exc:
        sys.stderr.write(f"Error: Failed to determine current directory.\n{exc}\n")
        return 1
    from .api import apply_patch
    from .errors import PatchtxError

    try:
        result = apply_patch(text, ".")
    except PatchtxError as exc:
        sys.stderr.write(exc.message + "\n")
        return 1
    from .render import codex_summary

    sys.stdout.write(codex_summary(result.plan))
    return 0


_COMMANDS = ("apply", "check", "recover", "log", "undo")
_AGENT_COMMANDS = ("tool-spec", "mcp")


def _terminal_columns() -> int:
    """The help text's width, as shutil.get_terminal_size decides it: $COLUMNS, else the
    terminal's, else 80."""
    import os

    try:
        columns = int(os.environ.get("COLUMNS", ""))
    except ValueError:
        columns = 0
    if columns > 0:
        return columns
    try:
        return os.get_terminal_size(sys.__stdout__.fileno()).columns or 80  # type: ignore[union-attr]
    except (AttributeError, ValueError, OSError):
        return 80


# The options of ``patchtx apply`` / ``check``, declared once for argparse (``_parser``) and for the
# plain command-line parse (``_plain_run_arguments``): (flags, attribute, default, value type
# (None: a flag, stored as True), metavar, help).
if TYPE_CHECKING:
    _Option = tuple[tuple[str, ...], str, Any, Callable[[str], Any] | None, str | None, str | None]
_COMMON_OPTIONS: tuple[_Option, ...] = (
    (("--root",), "root", ".", str, None, "workspace root (default: current directory)"),
    (("--json",), "json", False, None, None, "print a JSON result"),
    (("-q", "--quiet"), "quiet", False, None, None,
     "no progress display on the terminal (it is only shown on one)"),
)
_RUN_OPTIONS: tuple[_Option, ...] = (
    *_COMMON_OPTIONS,
    (("--allow-overwrite",), "allow_overwrite", False, None, None,
     "let Add and Move replace existing files (as Codex does)"),
    (("--no-delete",), "no_delete", False, None, None, "refuse patches that delete"),
    (("--no-move",), "no_move", False, None, None, "refuse patches that move"),
    (("--first-match",), "first_match", False, None, None,
     "take the first match of an ambiguous hunk (as Codex does)"),
    (("--no-diff",), "no_diff", False, None, None, "print the summary only"),
    (("-p", "--strip"), "strip", None, int, "N",
     "unified diffs: remove N leading path components (default: git's a/ b/, else 1)"),
    (("-R", "--reverse"), "reverse", False, None, None, "unified diffs: apply in reverse"),
)
_APPLY_OPTIONS: tuple[_Option, ...] = (
    *_RUN_OPTIONS,
    (("--dry-run",), "dry_run", False, None, None, "same as 'patchtx check'"),
    (("--no-fsync",), "no_fsync", False, None, None,
     "skip fsync (throw-away trees): keeps atomicity, drops durability"),
    (("--lock-timeout",), "lock_timeout", 30.0, float, "SECONDS", None),
    (("--intent",), "intent", None, str, None, "why this edit is made (recorded with it)"),
    (("--confirm",), "confirm", False, None, None,
     "show the summary and diffs on the terminal and ask before writing"),
)


def _add_options(p: argparse.ArgumentParser, options: tuple[_Option, ...]) -> None:
    for flags, _name, default, value_type, metavar, helptext in options:
        if value_type is None:
            p.add_argument(*flags, action="store_true", help=helptext)
        elif value_type is str and default is not None:
            p.add_argument(*flags, default=default, help=helptext)
        elif value_type is str:
            p.add_argument(*flags, help=helptext)
        else:
            p.add_argument(*flags, type=value_type, default=default, metavar=metavar, help=helptext)


def _parser(only: str | None = None) -> argparse.ArgumentParser:
    """The whole command line, or with ``only`` just that command's subparser: building the
    others cost ~5 ms per run (argparse looks up message translations for every option), and a
    run of one command never shows them."""
    import argparse

    class Formatter(argparse.HelpFormatter):
        # argparse measures the terminal through shutil, whose import (bz2, lzma, fnmatch...) cost
        # ~4 ms of every run, help shown or not; os answers the same question.
        def __init__(self, prog: str, indent_increment: int = 2, max_help_position: int = 24,
                     width: int | None = None) -> None:
            super().__init__(prog, indent_increment, max_help_position,
                             _terminal_columns() - 2 if width is None else width)

    top = argparse.ArgumentParser(
        prog="patchtx",
        description="Apply patches (Codex format or unified diffs) to a tree as one crash-safe transaction.",
        formatter_class=Formatter,
        # With one command built, its errors still show every command, as the whole parser does.
        usage=None if only is None else "%(prog)s [-h] {" + ",".join((*_COMMANDS, *_AGENT_COMMANDS)) + "} ...",
    )
    sub = top.add_subparsers(dest="command", required=True)

    def command(name: str, **options: Any) -> argparse.ArgumentParser:
        return sub.add_parser(name, prog=f"patchtx {name}", formatter_class=Formatter, **options)

    def common(p: argparse.ArgumentParser) -> None:
        _add_options(p, _COMMON_OPTIONS)

    def wanted(name: str) -> bool:
        return only is None or only == name

    for name, helptext in (("apply", "apply patches as one transaction"),
                           ("check", "plan patches and show what would change; write nothing")):
        if not wanted(name):
            continue
        p = command(name, help=helptext)
        p.add_argument("patches", nargs="*", default=["-"], metavar="FILE",
                       help="patch files, applied in order as one transaction ('-' = stdin)")
        _add_options(p, _APPLY_OPTIONS if name == "apply" else _RUN_OPTIONS)
    for name, helptext in (("recover", "roll back or finish an interrupted transaction"),
                           ("log", "list the transactions in the undo history, newest first")):
        if wanted(name):
            common(command(name, help=helptext))
    if not wanted("undo"):
        return top
    p = command("undo", help="undo a committed transaction (default: the newest) as a new one")
    p.add_argument("transaction", nargs="?", metavar="ID",
                   help="transaction id, or a unique prefix of one, as `patchtx log` shows it")
    common(p)
    p.add_argument("--dry-run", action="store_true", help="show what would be restored; write nothing")
    p.add_argument("--no-diff", action="store_true", help="print the summary only")
    p.add_argument("--no-fsync", action="store_true",
                   help="skip fsync (throw-away trees): keeps atomicity, drops durability")
    p.add_argument("--lock-timeout", type=float, default=30.0, metavar="SECONDS")
    p.add_argument("--intent", help="why the undo is made (default: 'undo ID: <its intent>')")
    if only is None:
        # Listed for --help only: main() hands their arguments to the agents package untouched.
        command("tool-spec", add_help=False,
                       help="print the apply_patch tool declaration for a model host")
        command("mcp", add_help=False, help="serve apply_patch over MCP on stdin/stdout")
    return top


def _read_patches(names: list[str]) -> list[str]:
    texts = []
    for name in names:
        if name == "-":
            texts.append(sys.stdin.buffer.read().decode("utf-8"))
        else:
            with open(name, "rb") as handle:
                texts.append(handle.read().decode("utf-8"))
    return texts


def _emit(payload: dict[str, Any]) -> None:
    import json

    sys.stdout.write(json.dumps(payload, indent=2, ensure_ascii=False) + "\n")


def _fail(error: PatchtxError, as_json: bool) -> int:
    if as_json:
        from .render import error_json

        _emit(error_json(error))
    else:
        sys.stderr.write(f"patchtx: error [{error.kind}]: {error.message}\n")
    return 1


def _ask_on_terminal(plan: Plan, reason: str) -> bool:
    """Show the plan with coloured diffs and ask; no terminal means no."""
    import os

    from .model import Result
    from .render import human_report

    if sys.stdin.isatty():
        reader, writer = sys.stdin, sys.stderr
    else:
        try:
            reader = writer = open("/dev/tty", "r+", encoding="utf-8")  # noqa: SIM115
        except OSError:
            return False
    colour = writer.isatty() and not os.environ.get("NO_COLOR")
    report = human_report(Result(plan, committed=False, dry_run=True))
    lines = []
    for line in report.splitlines():
        if colour and line.startswith(("+++", "---")):
            line = f"\033[1m{line}\033[0m"
        elif colour and line.startswith("+"):
            line = f"\033[32m{line}\033[0m"
        elif colour and line.startswith("-"):
            line = f"\033[31m{line}\033[0m"
        elif colour and line.startswith("@@"):
            line = f"\033[36m{line}\033[0m"
        lines.append(line)
    why = f" ({reason})" if reason else ""
    writer.write("\n".join(lines) + f"\nApply these changes{why}? [y/N] ")
    writer.flush()
    answer = reader.readline().strip().lower()
    return answer in ("y", "yes")


def _terminal_progress(args: argparse.Namespace) -> TerminalProgress | None:
    """A progress display on standard error if it is a terminal and --quiet was not given."""
    if args.quiet or not sys.stderr.isatty():
        return None
    from .progress import TerminalProgress

    return TerminalProgress(sys.stderr)


def _run_apply(args: argparse.Namespace) -> int:
    from .api import apply_plan, plan_patch
    from .errors import FilesystemError, PatchtxError
    from .model import Result
    from .render import human_report, result_json

    dry_run = args.command == "check" or getattr(args, "dry_run", False)
    progress = _terminal_progress(args)
    try:
        try:
            texts = _read_patches(args.patches)
        except (OSError, UnicodeDecodeError) as exc:
            raise FilesystemError(f"Cannot read the patch: {exc}.",
                                  hint="Pass a readable UTF-8 patch file, or '-' for stdin.") \
                from None
        plan = plan_patch(
            texts, args.root, allow_overwrite=args.allow_overwrite or None,
            allow_delete=False if args.no_delete else None,
            allow_move=False if args.no_move else None,
            first_match=args.first_match or None, intent=getattr(args, "intent", None),
            progress=progress, strip=args.strip, reverse=args.reverse,
        )
        if dry_run:
            result = Result(plan, committed=False, dry_run=True)
        else:
            if getattr(args, "confirm", False):
                from .approval import Decision, Verdict, enforce

                if progress is not None:
                    progress.close()  # the question goes to the terminal too
                enforce(plan, lambda _plan: Verdict(Decision.ASK, ""), _ask_on_terminal)
            result = apply_plan(plan, durable=not args.no_fsync, lock_timeout=args.lock_timeout,
                                progress=progress)
    except PatchtxError as exc:
        if progress is not None:
            progress.close(success=False)
        return _fail(exc, args.json)
    if progress is not None:
        progress.close()
    if args.json:
        _emit(result_json(result))
    else:
        sys.stdout.write(human_report(result, diffs=not args.no_diff))
    return 0


def _run_recover(args: argparse.Namespace) -> int:
    from .errors import PatchtxError
    from .txn import recover

    try:
        report = recover(args.root)
    except PatchtxError as exc:
        return _fail(exc, args.json)
    if args.json:
        _emit(report.to_json())
    else:
        sys.stdout.write(report.describe() + "\n")
    return 0


def _run_log(args: argparse.Namespace) -> int:
    from .errors import PatchtxError
    from .history import log

    try:
        entries = log(args.root)
    except PatchtxError as exc:
        return _fail(exc, args.json)
    if args.json:
        _emit({"ok": True, "transactions": [entry.to_json() for entry in entries]})
        return 0
    if not entries:
        sys.stdout.write("The undo history is empty.\n")
        return 0
    from datetime import datetime

    for entry in entries:
        when = datetime.fromisoformat(entry.committed_at).astimezone().strftime("%Y-%m-%d %H:%M:%S")
        intent = f"  {entry.intent}" if entry.intent else ""
        sys.stdout.write(f"{entry.transaction_id}  {when}  {entry.summary}  {_size(entry.bytes):>9}{intent}\n")
    return 0


def _size(count: int) -> str:
    if count < 1024:
        return f"{count} B"
    value = count / 1024
    for unit in ("KiB", "MiB"):
        if value < 1024:
            return f"{value:.1f} {unit}"
        value /= 1024
    return f"{value:.1f} GiB"


def _run_undo(args: argparse.Namespace) -> int:
    from .errors import PatchtxError
    from .history import undo
    from .render import human_report, result_json

    progress = _terminal_progress(args)
    try:
        result = undo(args.root, args.transaction, dry_run=args.dry_run, durable=not args.no_fsync,
                      lock_timeout=args.lock_timeout, intent=args.intent, progress=progress)
    except PatchtxError as exc:
        if progress is not None:
            progress.close(success=False)
        return _fail(exc, args.json)
    if progress is not None:
        progress.close()
    undone = result.extra["undone"]
    if args.json:
        _emit({**result_json(result), "undone": undone})
        return 0
    if result.dry_run:
        sys.stdout.write(f"Would undo transaction {undone}.\n")
    else:
        sys.stdout.write(f"Undid transaction {undone} as transaction {result.transaction_id}.\n")
    sys.stdout.write(human_report(result, diffs=not args.no_diff))
    return 0


class _Arguments:
    """The parsed command line as the run functions read it (argparse's Namespace, without
    argparse)."""

    def __init__(self, **values: Any) -> None:
        self.__dict__.update(values)




def _plain_run_arguments(given: list[str]) -> _Arguments | None:
    """What ``_parser`` parses ``patchtx apply|check ...`` into, for a command line made only of
    its options spelled in full and one run of patch files: None for anything else (help, an
    abbreviated or unknown option, ``--``, a value or file starting with '-', files on both sides
    of an option), which argparse then parses and words the errors for, as before.

    Importing argparse costs ~6 ms and ~20 modules (re, enum, gettext, locale...), as much as
    planning a 1,000-line patch; every patch run paid it.
    """
    if not given or given[0] not in ("apply", "check"):
        return None
    options = _APPLY_OPTIONS if given[0] == "apply" else _RUN_OPTIONS
    flags = {flag: option for option in options for flag in option[0]}
    values: dict[str, Any] = {"command": given[0]}
    values.update((name, default) for _flags, name, default, *_rest in options)
    patches: list[str] = []
    files_ended = False  # a run of files, then an option: argparse refuses a later file
    index = 1
    while index < len(given):
        word = given[index]
        index += 1
        if word != "-" and word.startswith("-"):
            flag, equals, attached = word.partition("=")
            known = flags.get(flag)
            if known is None or (equals and known[3] is None):
                return None
            _flags, name, _default, value_type, *_rest = known
            if value_type is None:
                values[name] = True
            else:
                if not equals:
                    if index == len(given) or given[index].startswith("-"):
                        return None
                    attached = given[index]
                    index += 1
                try:
                    values[name] = value_type(attached)
                except ValueError:
                    return None
            files_ended = bool(patches)
            continue
        if files_ended:
            return None
        patches.append(word)
    values["patches"] = patches or ["-"]
    return _Arguments(**values)


def main(argv: list[str] | None = None) -> int:
    given = sys.argv[1:] if argv is None else argv
    plain = _plain_run_arguments(given)
    if plain is not None:
        return _run_apply(plain)  # type: ignore[arg-type]
    if given[:1] == ["tool-spec"]:
        from .agents.toolspec import tool_spec_main

        return tool_spec_main(given[1:])
    if given[:1] == ["mcp"]:
        from .agents.mcp_server import mcp_main

        return mcp_main(given[1:])
    args = _parser(given[0] if given[:1] and given[0] in _COMMANDS else None).parse_args(given)
    if args.command in ("apply", "check"):
        return _run_apply(args)
    if args.command == "log":
        return _run_log(args)
    if args.command == "undo":
        return _run_undo(args)
    return _run_recover(args)


def _finish_process(code: int) -> NoReturn:
    """End a one-shot command the fast way once its output is flushed.

    The normal exit tears down every module and object one by one (~5 ms for what a patch run
    imports, a quarter of the interpreter's own start-up) though the process is about to vanish:
    every file was written with os-level calls and closed, the lock released, nothing is left in
    a Python buffer but stdout and stderr. If flushing those fails (a closed pipe), the normal
    exit runs instead and reports it as Python always does.
    """
    try:
        for stream in (sys.stdout, sys.stderr):
            if stream is not None:  # None when Python started with that descriptor closed
                stream.flush()
    except (OSError, ValueError):
        sys.exit(code)
    import os

    os._exit(code)


def _one_shot(run: Callable[[], int]) -> NoReturn:
    # A one-shot run allocates many tuples and lists and frees few cycles; the collector's passes
    # over them cost ~2 ms on the tiny edit and tens of milliseconds on a 1,000-file patch, and
    # the memory comes back when the process ends moments later.
    import gc

    gc.disable()
    _finish_process(run())


def apply_patch_script() -> NoReturn:
    """The ``apply_patch`` / ``applypatch`` console scripts: ``apply_patch_main`` as a process."""
    _one_shot(apply_patch_main)


def script() -> NoReturn:
    """The ``patchtx`` console script. The MCP server is long-lived: it keeps the collector and
    the normal exit."""
    if sys.argv[1:2] == ["mcp"]:
        sys.exit(main())
    _one_shot(main)


if __name__ == "__main__":
    script()
