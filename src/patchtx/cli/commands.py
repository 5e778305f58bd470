"""The ``patchtx`` command: its argparse command line, the subcommands (apply, check, recover,
log, undo, redo; tool-spec and mcp handed to ``agents``) and how each reports to a person or as
JSON. ``cli.script`` runs ``main`` as the console script.
"""

from __future__ import annotations

import argparse
import errno
import json
import os
import posixpath
import sys
from typing import TYPE_CHECKING, Any, NoReturn

from .._version import __version__
from ..api import apply_plan, patch_text, plan_patch
from ..arguments import (
    add_call_options,
    add_commit_options,
    add_policy_options,
    commit_keywords,
    policy_keywords,
    server_arguments,
)
from ..errors import (
    FilesystemError,
    InternalError,
    MissingExtraError,
    ParseError,
    PatchtxError,
    UsageError,
    workspace_relative,
)
from ..formats.codex import parse
from ..render import (
    change_summary,
    coloured_diff,
    diff_texts,
    diffs_within,
    diffstat,
    error_json,
    log_json,
    log_text,
    numstat,
)
from ..result import Result, human_report, recovery_lines, result_json, summary_line
from ..txn import recover
from ..txn.roots import check_root
from ..workspace.paths import NO_ROOT
from ..workspace.policy import options_for
from .oneshot import leave_for_the_exit
from .progress import TerminalProgress

if TYPE_CHECKING:
    from ..model import Plan


_COMMANDS = ("apply", "check", "recover", "log", "undo", "redo")
EXIT_MISSING_EXTRA = 3
"""Exit status when a command needs an optional extra that is not installed."""


def print_version(prog: str) -> int:
    """``PROG VERSION`` on standard output (``--version`` of patchtx and of the drop-in)."""
    sys.stdout.write(f"{prog} {__version__}\n")
    return 0


def _missing_extra(error: PatchtxError) -> int:
    """One line on standard error (where an MCP host shows a server's output) naming the extra."""
    sys.stderr.write(f"patchtx: {error.message}\n")
    return EXIT_MISSING_EXTRA
_AGENT_COMMANDS = ("tool-spec", "mcp")


def _terminal_columns() -> int:
    """The help text's width, as shutil.get_terminal_size decides it: $COLUMNS, else the
    terminal's, else 80."""
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


MAX_LISTED_FILES = 20
"""Files listed one per line in a person's report; past this, a count (the diffs list them)."""

MAX_SHOWN_DIFF_LINES = 40
"""A written change (apply, undo, redo) shows its diffs when they are at most this many lines, a
screenful; past it the summary and the capped file list stand alone (-v/--diff shows them all),
so that a 3,000-file patch prints some 25 lines, not 21,000. check and --dry-run show them
always: reviewing the change is what they are for."""


def _add_common_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--root", default=".", help="workspace root (default: current directory)")
    p.add_argument("--json", action="store_true", help="print a JSON result")
    p.add_argument("-q", "--quiet", action="store_true",
                   help="print only the summary line, and no progress display")


def _add_output_options(p: argparse.ArgumentParser) -> None:
    """How apply, check, undo and redo print a result for a person."""
    p.add_argument("-v", "--diff", action="store_true",
                   help=f"print the diffs even past {MAX_SHOWN_DIFF_LINES} lines (a written change "
                        f"shows them only up to that; check and --dry-run always)")
    p.add_argument("--no-diff", action="store_true",
                   help=f"print the summary and the files (at most {MAX_LISTED_FILES}, then a count), no diffs")
    p.add_argument("--stat", action="store_true",
                   help="print the summary and a diffstat as `git apply --stat` does, no diffs "
                        "(apply: without writing, unless --apply)")
    p.add_argument("--numstat", action="store_true",
                   help="print the lines added and removed per file as `git apply --numstat` does")
    p.add_argument("--summary", action="store_true",
                   help="print creations, deletions, renames and mode changes as "
                        "`git apply --summary` does")
    p.add_argument("--color", default="auto", choices=("auto", "always", "never"), metavar="WHEN",
                   help="colour the diffs: auto (on a terminal, unless NO_COLOR is set), always, never")


def _parser(only: str | None = None, *, json_errors: bool = False) -> argparse.ArgumentParser:
    """The whole command line, or with ``only`` just that command's subparser (argparse looks up
    message translations for every option it adds, and a run of one command never shows the
    others). With ``json_errors`` (``--json`` was given), a usage error raises UsageError, for
    main to print as JSON, instead of argparse's text and exit."""
    class Parser(argparse.ArgumentParser):
        def error(self, message: str) -> NoReturn:
            if not json_errors:
                super().error(message)
            raise UsageError(f"{self.prog}: {message}.", hint=f"See `{self.prog} --help`.")

    class Formatter(argparse.HelpFormatter):
        # argparse measures the terminal through shutil, which imports a dozen modules a patch run
        # never needs, help shown or not; os answers the same question.
        def __init__(self, prog: str, indent_increment: int = 2, max_help_position: int = 24,
                     width: int | None = None) -> None:
            super().__init__(prog, indent_increment, max_help_position,
                             _terminal_columns() - 2 if width is None else width)

    top = Parser(
        prog="patchtx",
        description="Apply patches (Codex format or unified diffs) to a tree as one crash-safe transaction.",
        formatter_class=Formatter,
        # With one command built, its errors still show every command, as the whole parser does.
        usage=None if only is None else "%(prog)s [-h] [-V] {" + ",".join((*_COMMANDS, *_AGENT_COMMANDS)) + "} ...",
    )
    top.add_argument("-V", "--version", action="version", version=f"%(prog)s {__version__}",
                     help="print the version and exit")
    sub = top.add_subparsers(dest="command", required=True, parser_class=Parser)

    def command(name: str, **options: Any) -> argparse.ArgumentParser:
        return sub.add_parser(name, prog=f"patchtx {name}", formatter_class=Formatter, **options)

    def wanted(name: str) -> bool:
        return only is None or only == name

    for name, helptext in (("apply", "apply patches as one transaction"),
                           ("check", "plan patches and show what would change; write nothing")):
        if not wanted(name):
            continue
        p = command(name, help=helptext)
        p.add_argument("patches", nargs="*", default=["-"], metavar="FILE",
                       help="patch files, applied in order as one transaction ('-' = stdin)")
        _add_common_options(p)
        add_policy_options(p)
        _add_output_options(p)
        add_call_options(p, "extract", "strip", "reverse", "unidiff_zero")
        _refuse_git_options(p)
        if name == "apply":
            add_call_options(p, "dry_run")
            p.add_argument("--apply", action="store_true",
                           help="with --stat, --numstat or --summary: apply as well, as git apply "
                                "--apply does (without it they only show)")
            p.add_argument("--check", action="store_true",
                           help="same as --dry-run, as git apply --check: exit 0 if the patch "
                                "applies, else 1 with the error; write nothing")
            add_commit_options(p)
            add_call_options(p, "intent")
            p.add_argument("--confirm", action="store_true",
                           help="show the summary and diffs on the terminal and ask before writing")
    if wanted("recover"):
        p = command("recover", help="roll back or finish an interrupted transaction")
        _add_common_options(p)
        p.add_argument("--trust-foreign", action="store_true",
                       help="also act on journals this user's patchtx did not sign (after looking at"
                            " them): the same path checks and the policy in force still apply")
    if wanted("log"):
        _add_common_options(command("log", help="list the transactions in the undo history, newest first"))
    for name in ("undo", "redo"):
        if not wanted(name):
            continue
        if name == "undo":
            p = command("undo", help="undo the newest transaction not yet undone (or ID) as a new one; "
                                     "again to go further back")
            p.add_argument("transaction", nargs="?", metavar="ID",
                           help="transaction id, or a unique prefix of one, as `patchtx log` shows it")
        else:
            p = command("redo", help="put back what the last undo took, as a new transaction")
        _add_common_options(p)
        add_call_options(p, "dry_run")
        _add_output_options(p)
        add_policy_options(p, f"A {name} is a change like a patch: checked against this ceiling, which"
                              " the workspace's [tool.patchtx] table can only tighten.")
        add_commit_options(p)
        add_call_options(p, "intent")
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
            if sys.stdin is None:  # (Python started with descriptor 0 closed)
                raise OSError(errno.EBADF, "standard input is closed")
            texts.append(patch_text(sys.stdin.buffer.read()))
        else:
            with open(name, "rb") as handle:
                texts.append(patch_text(handle.read()))
    return texts


def _emit(payload: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(payload, indent=2, ensure_ascii=False) + "\n")


def _fail(error: PatchtxError, as_json: bool, root: str | None = None, *, dry_run: bool = False) -> int:
    leave_for_the_exit(error)
    if as_json:
        _emit(error_json(error, root=root, dry_run=dry_run))
    else:
        sys.stderr.write(f"patchtx: error [{error.kind}]: {_for_a_person(error).message}\n")
    return 1


def _terminal() -> tuple[Any, Any] | None:
    """Where to ask a person (reader, writer): standard input and error if it is a terminal, else
    the controlling terminal (the patch may come on standard input); None without one."""
    if sys.stdin is not None and sys.stdin.isatty():
        return sys.stdin, sys.stderr
    try:
        tty = open("/dev/tty", "r+", encoding="utf-8")  # noqa: SIM115
    except OSError:
        return None
    return tty, tty


def _ask_on_terminal(plan: Plan, reason: str) -> bool:
    """Show the plan with coloured diffs and ask; no terminal means no."""
    terminal = _terminal()
    if terminal is None:
        return False
    reader, writer = terminal
    report = human_report(Result(plan, committed=False, dry_run=True))
    if writer.isatty() and not os.environ.get("NO_COLOR"):
        report = coloured_diff(report)
    why = f" ({reason})" if reason else ""
    writer.write(report.rstrip("\n") + f"\nApply these changes{why}? [y/N] ")
    writer.flush()
    answer = reader.readline().strip().lower()
    return answer in ("y", "yes")


def _for_a_person(error: PatchtxError) -> PatchtxError:
    """The CLI's wording of a refusal whose hint speaks to an agent (a permission it may ask for) or
    to a library caller (the `root` argument)."""
    permission = error.details.get("permission")
    if permission == "allow_delete":
        error.hint = ("Deleting is turned off here, by --no-delete or by allow-delete = false in the "
                      "workspace's [tool.patchtx] table.")
    elif permission == "allow_move":
        error.hint = ("Moving is turned off here, by --no-move or by allow-move = false in the "
                      "workspace's [tool.patchtx] table.")
    elif error.hint == NO_ROOT:
        error.hint = "Pass an existing directory with --root."
    error.hint = error.hint.replace(" (the `root` argument)", "")  # (the library's words: api.py)
    return error


def _terminal_progress(args: argparse.Namespace) -> TerminalProgress | None:
    """A progress display on standard error if it is a terminal and --quiet was not given."""
    if args.quiet or not sys.stderr.isatty():
        return None
    return TerminalProgress(sys.stderr)


def _use_colour(args: argparse.Namespace, stream: Any) -> bool:
    if args.color == "always":
        return True
    if args.color == "never" or os.environ.get("NO_COLOR"):
        return False
    return bool(stream.isatty())


def _report(result: Result, args: argparse.Namespace) -> str:
    """A result as a person reads it: the summary line (-q); the files, capped, and the diffs
    (--no-diff: no diffs; --stat: the diffstat instead), coloured on a terminal. A written
    change past MAX_SHOWN_DIFF_LINES of diff shows them only with -v/--diff."""
    recovery = "".join(line + "\n" for line in recovery_lines(result))
    syntax = "" if result.plan.syntax is None else "".join(line + "\n" for line in result.plan.syntax.lines())
    if args.quiet:
        return recovery + summary_line(result) + syntax
    if args.stat or args.numstat or args.summary:
        rendered = diff_texts(result.plan)
        return (recovery + summary_line(result) + (diffstat(result.plan, rendered) if args.stat else "")
                + (numstat(result.plan, rendered) if args.numstat else "")
                + (change_summary(result.plan) if args.summary else "") + syntax)
    text = human_report(result, diffs=False, max_files=MAX_LISTED_FILES)
    if args.no_diff:
        return text
    shown = diffs_within(result.plan, MAX_SHOWN_DIFF_LINES) \
        if result.committed and not args.diff else "".join(diff_texts(result.plan))
    if shown is None:
        return text + (f"(over {MAX_SHOWN_DIFF_LINES} lines of diff not shown: -v or --diff shows "
                       "them)\n")
    diffs = shown
    if _use_colour(args, sys.stdout):
        diffs = coloured_diff(diffs)
    return text + diffs


_GIT_ONLY_OPTIONS = {
    ("-3", "--3way"): ("git apply's three-way merge",
                       "patchtx applies a patch exactly or not at all; merge with git apply -3"),
    ("--index", "--cached"): ("git apply's update of git's index",
                              "patchtx changes the work tree only; stage the files with git add"),
    ("--whitespace",): ("git apply's whitespace fixing",
                        "patchtx applies the lines as the diff gives them"),
    ("--reject",): ("git apply's rejected hunks",
                    "patchtx applies every hunk or none and writes no .rej files"),
}
"""git apply's options that patchtx does not have, each refused with the reason in one line."""


def _refuse_git_options(parser: argparse.ArgumentParser) -> None:
    class Refuse(argparse.Action):
        def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace,
                     values: object, option_string: str | None = None) -> None:
            what, why = next(v for names, v in _GIT_ONLY_OPTIONS.items() if option_string in names)
            raise UsageError(f"{parser.prog}: {option_string} ({what}) is not a patchtx option: "
                             f"{why}.", hint="")

    for names in _GIT_ONLY_OPTIONS:
        # (-3 is looked for before parsing: an option that looks like a negative number would
        # make argparse read every negative number as an option.)
        parser.add_argument(*(name for name in names if name != "-3"), action=Refuse,
                            nargs="?" if names == ("--whitespace",) else 0, help=argparse.SUPPRESS)


def _refuse_minus_three(given: list[str], as_json: bool) -> int | None:
    """``-3`` (git apply's three-way merge) among an apply's or a check's arguments: refused."""
    arguments = given[1 : given.index("--")] if "--" in given else given[1:]
    if given[:1] not in (["apply"], ["check"]) or "-3" not in arguments:
        return None
    what, why = _GIT_ONLY_OPTIONS[("-3", "--3way")]
    _fail(UsageError(f"patchtx {given[0]}: -3 ({what}) is not a patchtx option: {why}.", hint=""),
          as_json)
    return 2


def _unknown_options(parser: argparse.ArgumentParser, command: str, unknown: list[str]) -> NoReturn:
    """An argument the command does not take: the command's own usage (not the whole program's)
    and the nearest option it has, as git does (argparse's suggest_on_error is Python 3.14's)."""
    import difflib  # (off a one-line edit's path)

    sub: argparse.ArgumentParser = parser._subparsers._group_actions[0].choices[command]  # type: ignore[union-attr,index]
    options = [flag for action in sub._actions if action.help != argparse.SUPPRESS
               for flag in action.option_strings if flag.startswith("--")]
    message = f"unrecognized arguments: {' '.join(unknown)}"
    for given in unknown:
        near = difflib.get_close_matches(given.split("=", 1)[0], options, n=1, cutoff=0.6)
        if given.startswith("-") and near:
            message += f" (did you mean {near[0]}?)"
            break
    sub.error(message)


def _run_apply(args: argparse.Namespace) -> int:
    dry_run = args.command == "check" or getattr(args, "dry_run", False) or getattr(args, "check", False)
    if (args.stat or args.numstat or args.summary) and not getattr(args, "apply", True):
        dry_run = True  # git apply --stat only shows: --apply writes as well
    if getattr(args, "confirm", False) and not dry_run and _terminal() is None:
        sys.stderr.write("patchtx apply: --confirm needs a terminal to ask on, and there is none "
                         "(no terminal on standard input, no controlling terminal). Nothing was "
                         "changed. Run it from a terminal, or review with 'patchtx check' and apply "
                         "without --confirm.\n")
        return 2
    progress = _terminal_progress(args)
    texts: list[str] = []
    try:
        try:
            texts = _read_patches(args.patches)
        except OSError as exc:
            raise FilesystemError(f"Cannot read the patch: {exc}.",
                                  hint="Pass a readable UTF-8 patch file, or '-' for stdin.") \
                from None
        if not any(text.strip() for text in texts):
            # git apply's words for it: a diff user reads the Codex format's "last line must be
            # '*** End Patch'" as a fault of a patch they never meant to write.
            raise ParseError("No valid patches in input: the patch is empty.",
                             hint="Give a unified diff (git diff) or a '*** Begin Patch' patch, as a"
                                  " file or on standard input.")
        if args.extract:
            texts = _extracted(args.patches, texts)
        keywords = policy_keywords(args)
        if keywords["syntax"] is None:
            # The guard is heard on the command line: warn unless the host or workspace says more
            # (off for the library). A file with no grammar still costs no parser (plan/syntax.py).
            keywords["syntax"] = options_for(args.root, {}, defaults={"syntax": "warn"})[0].syntax
        plan = plan_patch(texts, args.root, intent=getattr(args, "intent", None), progress=progress,
                          strip=args.strip, reverse=args.reverse, unidiff_zero=args.unidiff_zero,
                          **keywords)
        if dry_run:
            result = Result(plan, committed=False, dry_run=True)
        else:
            if getattr(args, "confirm", False):
                if progress is not None:
                    progress.close()  # the question goes to the terminal too
                from ..plan.approval import Decision, Verdict, enforce  # (off a one-line edit's path)

                try:
                    enforce(plan, lambda _plan: Verdict(Decision.ASK, ""), _ask_on_terminal)
                except PatchtxError as declined:
                    declined.headline = "Not applied: you answered no."
                    declined.hint = ""
                    raise
            result = apply_plan(plan, progress=progress, **commit_keywords(args), **policy_keywords(args))
    except PatchtxError as exc:
        if progress is not None:
            progress.close(success=False)
        if exc.patch_file is None and not isinstance(exc, FilesystemError):
            exc.patch_file = _patch_file_of(exc, args.patches, texts, args.root)
        return _fail(exc, args.json, args.root, dry_run=dry_run)
    if progress is not None:
        progress.close()
    if args.json:
        _emit(result_json(result))
    else:
        sys.stdout.write(_report(result, args))
    leave_for_the_exit(result)
    return 0


def _extracted(names: list[str], texts: list[str]) -> list[str]:
    out = []
    for name, text in zip(names, texts, strict=True):
        try:
            from ..intake.extract import extract_patch  # (off a one-line edit's path)
            out.append(extract_patch(text))
        except PatchtxError as exc:
            exc.patch_file = None if name == "-" else name
            raise
    return out


def _patch_file_of(error: PatchtxError, names: list[str], texts: list[str], root: str) -> str | None:
    """Which of the patch files ``error`` is in (None for standard input, or when it cannot be
    told): the one file; else the file that fails to parse the same way, or the one file with a
    hunk on the error's path that spans the error's line."""
    if not texts:
        return None
    named = [None if name == "-" else name for name in names]
    if len(texts) == 1:
        return named[0]
    found: list[str | None] = []
    for name, text in zip(named, texts, strict=True):
        try:
            patch = parse(text)
        except ParseError as own:
            if isinstance(error, ParseError) and (own.line, own.headline) == (error.line, error.headline):
                found.append(name)
            continue
        if isinstance(error, ParseError) or error.line is None or error.path is None:
            continue
        def relative(path: str) -> str:
            return posixpath.normpath(workspace_relative(path, root) or "")

        wanted = relative(error.path)
        starts = [hunk.line for hunk in patch.hunks] + [text.count("\n") + 2]
        for index, hunk in enumerate(patch.hunks):
            paths = {relative(hunk.path), relative(getattr(hunk, "move_to", None) or hunk.path)}
            if wanted in paths and starts[index] <= error.line < starts[index + 1]:
                found.append(name)
                break
    return found[0] if len(found) == 1 else None


def _run_recover(args: argparse.Namespace) -> int:
    try:
        report = recover(args.root, trust_foreign=args.trust_foreign)
    except PatchtxError as exc:
        return _fail(exc, args.json, args.root)
    if args.json:
        _emit({"ok": True, **report.to_json()})
    else:
        sys.stdout.write(report.summary + "\n")
    return 0


def _run_log(args: argparse.Namespace) -> int:
    try:
        from ..history import log, untrusted  # (off a one-line edit's path)
        entries = log(args.root)
        foreign = untrusted(args.root)
    except PatchtxError as exc:
        return _fail(exc, args.json, args.root)
    if args.json:
        _emit(log_json(entries, foreign))
        return 0
    if foreign:
        sys.stderr.write(f"patchtx: {len(foreign)} undo-history entr{'y' if len(foreign) == 1 else 'ies'} in"
                         " .patchtx/journal not written by this user's patchtx, not listed and never undone: "
                         + ", ".join(foreign) + "\n")
    sys.stdout.write(log_text(entries))
    return 0


def _run_undo(args: argparse.Namespace) -> int:
    """``patchtx undo [ID]`` and ``patchtx redo``."""
    from ..history import redo, undo  # (off a one-line edit's path)

    progress = _terminal_progress(args)
    options = {"dry_run": args.dry_run, "intent": args.intent, "progress": progress, **commit_keywords(args),
               **policy_keywords(args)}
    try:
        if args.command == "redo":
            result = redo(args.root, **options)
        else:
            result = undo(args.root, args.transaction, **options)
    except PatchtxError as exc:
        if progress is not None:
            progress.close(success=False)
        return _fail(exc, args.json, args.root, dry_run=args.dry_run)
    if progress is not None:
        progress.close()
    undone = result.undone
    if args.json:
        _emit(result_json(result))
        return 0
    redone = result.redone
    if args.quiet:  # the summary line only, as for apply: which undo (or redo), and what it did
        verb = (("Would redo" if result.dry_run else "Redid") if redone is not None
                else ("Would undo" if result.dry_run else "Undid"))
        done = "" if result.dry_run else f" as transaction {result.transaction_id}"
        sys.stdout.write("".join(line + "\n" for line in recovery_lines(result))
                         + f"{verb} transaction {redone or undone}{done}: {result.summary}\n")
        return 0
    if redone is not None:
        sys.stdout.write(f"Would redo transaction {redone} (undoing undo {undone}).\n" if result.dry_run
                         else f"Redid transaction {redone} (undid undo {undone}) as transaction "
                              f"{result.transaction_id}.\n")
    elif result.dry_run:
        sys.stdout.write(f"Would undo transaction {undone}.\n")
    else:
        sys.stdout.write(f"Undid transaction {undone} as transaction {result.transaction_id}.\n")
    sys.stdout.write(_report(result, args))
    return 0


def main(argv: list[str] | None = None) -> int:
    """``patchtx``: every failure is an error with a kind (JSON under --json), never a traceback."""
    given = sys.argv[1:] if argv is None else argv
    try:
        return _dispatch(given)
    except Exception as exc:  # noqa: BLE001 - the last line of defence against a traceback
        return _fail(InternalError.wrapping(exc), "--json" in given)


def _dispatch(given: list[str]) -> int:
    if given[:1] == ["tool-spec"]:
        from ..agents.toolspec import tool_spec_main  # (off a one-line edit's path)
        return tool_spec_main(given[1:])
    if given[:1] == ["mcp"]:
        root, host = server_arguments(given[1:])  # (first: importing the MCP SDK takes 2 s of CPU)
        try:
            from ..agents.mcp_server import serve  # (optional extra)
        except MissingExtraError as missing:
            return _missing_extra(missing)
        return serve(root, host)
    if given[:1] in (["--version"], ["-V"]):
        return print_version("patchtx")
    as_json = "--json" in given
    refused = _refuse_minus_three(given, as_json)
    if refused is not None:
        return refused
    try:
        parser = _parser(given[0] if given[:1] and given[0] in _COMMANDS else None,
                         json_errors=as_json)
        args, unknown = parser.parse_known_args(given)
        if unknown:
            _unknown_options(parser, args.command, unknown)
    except PatchtxError as exc:  # a usage error, under --json
        _fail(exc, as_json)
        return 2
    try:
        check_root(args.root)  # (the whole disk, the home folder, a state folder: never a root)
    except PatchtxError as exc:
        return _fail(exc, args.json)
    if args.command in ("apply", "check"):
        return _run_apply(args)
    if args.command == "log":
        return _run_log(args)
    if args.command in ("undo", "redo"):
        return _run_undo(args)
    return _run_recover(args)
