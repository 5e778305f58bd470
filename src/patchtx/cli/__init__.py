"""Command-line entry points: the console scripts ``patchtx`` and the drop-in ``apply_patch`` /
``applypatch``.

Agents call ``apply_patch`` once per edit, so this module holds the drop-in whole (its input, its
output as Codex prints it, its exit codes) and imports only what a run needs, late. The
``patchtx`` command (argparse, its subcommands and reports) is in ``commands``, loaded only by a
``patchtx`` run.
"""

from __future__ import annotations

import os
import sys
from typing import NoReturn

from ..api import apply_patch
from ..errors import InternalError, PatchtxError
from ..result import codex_summary, repair_lines
from .oneshot import leave_for_the_exit, one_shot

APPLY_PATCH_USAGE = "Usage: apply_patch 'PATCH'\n       echo 'PATCH' | apply_patch"


def _has_surrogates(text: str) -> bool:
    """Whether an argument held bytes that are not UTF-8 (Python decodes them to lone surrogates,
    which UTF-8 cannot encode: the encoder finds them at C speed)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def apply_patch_main(argv: list[str] | None = None) -> int:
    """Codex's ``apply_patch`` contract: the patch as the one argument or on stdin."""
    args = sys.argv[1:] if argv is None else argv
    if args == ["--version"]:  # no patch starts with it, so Codex's contract is not narrowed
        from .commands import print_version  # (off a one-line edit's path)

        return print_version("apply_patch")
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
    try:
        os.getcwd()
    except OSError as exc:
        sys.stderr.write(f"Error: Failed to determine current directory.\n{exc}\n")
        return 1
    try:
        result = apply_patch(text, ".")
    except PatchtxError as exc:
        sys.stderr.write(exc.message + "\n")
        leave_for_the_exit(exc)
        return 1
    except Exception as exc:  # noqa: BLE001 - never a traceback
        sys.stderr.write(InternalError.wrapping(exc).message + "\n")
        return 1
    sys.stdout.write(codex_summary(result.plan))
    if result.plan.repairs:  # (standard output stays Codex's text)
        sys.stderr.write("".join(line + "\n" for line in repair_lines(result)))
    leave_for_the_exit(result)
    return 0


def apply_patch_script() -> NoReturn:
    """The ``apply_patch`` / ``applypatch`` console scripts: ``apply_patch_main`` as a process."""
    one_shot(apply_patch_main, program="apply_patch")


def script() -> NoReturn:
    """The ``patchtx`` console script (``commands.main``). The MCP server is long-lived: it keeps
    the collector and the normal exit."""
    if sys.argv[1:2] == ["mcp"]:
        sys.exit(_run_patchtx())
    one_shot(_run_patchtx)


def _run_patchtx() -> int:
    from .commands import main  # (off a one-line edit's path)

    return main()


if __name__ == "__main__":
    script()
