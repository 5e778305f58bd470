"""The command-line contract: apply_patch (Codex's) and patchtx apply/check/recover."""

from __future__ import annotations

import argparse
import json
import os
import pty
import select
import subprocess
import sys
import time
from pathlib import Path

import pytest

BIN = Path(sys.executable).parent
APPLY_PATCH = str(BIN / "apply_patch")
PATCHTX = str(BIN / "patchtx")

UPDATE = "*** Begin Patch\n*** Update File: a.txt\n@@\n-one\n+ONE\n*** End Patch\n"


def run(argv: list[str], cwd: Path, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, cwd=cwd, input=stdin, capture_output=True, text=True, timeout=60)


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    (tmp_path / "a.txt").write_text("one\ntwo\n")
    return tmp_path


def test_apply_patch_argument_and_stdin(tree: Path) -> None:
    done = run([APPLY_PATCH, UPDATE], tree)
    assert (done.returncode, done.stdout, done.stderr) == (
        0, "Success. Updated the following files:\nM a.txt\n", "")
    again = run([APPLY_PATCH], tree, stdin=UPDATE.replace("one", "two").replace("ONE", "TWO"))
    assert again.returncode == 0
    assert (tree / "a.txt").read_text() == "ONE\nTWO\n"


def test_apply_patch_usage_errors(tree: Path) -> None:
    two = run([APPLY_PATCH, UPDATE, "extra"], tree)
    assert (two.returncode, two.stderr) == (2, "Error: apply_patch accepts exactly one argument.\n")
    empty = run([APPLY_PATCH], tree, stdin="")
    assert empty.returncode == 2
    assert empty.stderr == "Usage: apply_patch 'PATCH'\n       echo 'PATCH' | apply_patch\n"
    assert (tree / "a.txt").read_text() == "one\ntwo\n"


def test_apply_patch_refuses_an_argument_that_is_not_utf8(tree: Path) -> None:
    # The bytes of an argument reach Python as lone surrogates; Codex's message, nothing written.
    for bad in (UPDATE.replace("ONE", "O\xffNE").encode("latin-1"), b"\xff" + UPDATE.encode() * 200):
        done = subprocess.run([APPLY_PATCH.encode(), bad], cwd=tree, capture_output=True, text=True, timeout=60)
        assert (done.returncode, done.stdout, done.stderr) == (
            1, "", "Error: apply_patch requires a UTF-8 PATCH argument.\n")
    assert (tree / "a.txt").read_text() == "one\ntwo\n" and not (tree / ".patchtx").exists()


def test_apply_patch_failure_is_one_message_on_stderr_and_exit_1(tree: Path) -> None:
    bad = run([APPLY_PATCH, UPDATE.replace("-one", "-missing")], tree)
    assert bad.returncode == 1 and bad.stdout == ""
    assert bad.stderr.startswith(f"Failed to find expected lines in {tree.resolve()}/a.txt:\nmissing\n")
    assert "Nothing was changed." in bad.stderr
    malformed = run([APPLY_PATCH, "*** Begin Patch\n*** Frobnicate File: x\n*** End Patch"], tree)
    assert malformed.returncode == 1
    assert malformed.stderr.startswith("Invalid patch hunk on line 2: '*** Frobnicate File: x' is not")
    assert (tree / "a.txt").read_text() == "one\ntwo\n"
    assert not (tree / ".patchtx").exists(), "a refused patch creates no state folder"


def test_apply_patch_alias_applypatch(tree: Path) -> None:
    assert run([str(BIN / "applypatch"), UPDATE], tree).returncode == 0
    assert (tree / "a.txt").read_text() == "ONE\ntwo\n"


def test_patchtx_apply_json_success_and_error(tree: Path) -> None:
    (tree / "p.patch").write_text(UPDATE)
    ok = run([PATCHTX, "apply", "--json", "p.patch"], tree)
    payload = json.loads(ok.stdout)
    assert ok.returncode == 0 and payload["ok"] is True
    assert payload["summary"] == "A 0, M 1, D 0, R 0"
    assert payload["files"][0]["path"] == "a.txt" and payload["files"][0]["status"] == "modified"
    assert "-one\n+ONE\n" in payload["files"][0]["diff"]
    failed = run([PATCHTX, "apply", "--json", "p.patch"], tree)  # sent again
    error = json.loads(failed.stdout)
    assert failed.returncode == 1 and error["ok"] is False
    assert error["error"]["kind"] == "already_applied" and error["error"]["changed"] is False
    skipped = run([PATCHTX, "apply", "--json", "--skip-applied", "p.patch"], tree)
    assert skipped.returncode == 0 and json.loads(skipped.stdout)["summary"] == "A 0, M 0, D 0, R 0"
    (tree / "q.patch").write_text(UPDATE.replace("-one\n+ONE", "-eleven\n+TEN"))
    missed = json.loads(run([PATCHTX, "apply", "--json", "q.patch"], tree).stdout)
    assert missed["error"]["kind"] == "context_not_found" and missed["error"]["changed"] is False


def test_check_writes_nothing_not_even_state(tree: Path) -> None:
    done = run([PATCHTX, "check", "--root", str(tree), "-"], tree, stdin=UPDATE)
    assert done.returncode == 0 and done.stdout.startswith("Would apply: A 0, M 1, D 0, R 0")
    assert (tree / "a.txt").read_text() == "one\ntwo\n"
    assert sorted(p.name for p in tree.iterdir()) == ["a.txt"]


def test_several_patches_are_one_transaction(tree: Path) -> None:
    (tree / "1.patch").write_text("*** Begin Patch\n*** Add File: b.txt\n+bee\n*** End Patch\n")
    (tree / "2.patch").write_text("*** Begin Patch\n*** Update File: b.txt\n@@\n-bee\n+BEE\n*** End Patch\n")
    (tree / "3.patch").write_text("*** Begin Patch\n*** Delete File: nope.txt\n*** End Patch\n")
    failed = run([PATCHTX, "apply", "1.patch", "2.patch", "3.patch"], tree)
    assert failed.returncode == 1 and "[file_not_found]" in failed.stderr
    assert not (tree / "b.txt").exists()
    ok = run([PATCHTX, "apply", "1.patch", "2.patch"], tree)
    assert ok.returncode == 0 and (tree / "b.txt").read_text() == "BEE\n"


def test_no_delete_flag_refuses(tree: Path) -> None:
    done = run([PATCHTX, "apply", "--no-delete", "-"], tree,
               stdin="*** Begin Patch\n*** Delete File: a.txt\n*** End Patch\n")
    assert done.returncode == 1 and "[policy_violation]" in done.stderr
    assert (tree / "a.txt").exists()


def test_recover_with_nothing_to_do(tree: Path) -> None:
    done = run([PATCHTX, "recover", "--root", str(tree), "--json"], tree)
    assert done.returncode == 0
    report = json.loads(done.stdout)
    assert report["ok"] is True and report["nothing_to_do"] is True  # ok, as every --json result


def _confirm_on_pty(tree: Path, answer: bytes) -> tuple[int, str]:
    (tree / "p.patch").write_text(UPDATE)
    master, slave = pty.openpty()
    child = subprocess.Popen([PATCHTX, "apply", "--confirm", "p.patch"], cwd=tree, stdin=slave,
                             stdout=subprocess.PIPE, stderr=slave, env={**os.environ, "NO_COLOR": ""})
    os.close(slave)
    seen = b""
    deadline = time.monotonic() + 30
    while b"[y/N]" not in seen and time.monotonic() < deadline:
        ready, _, _ = select.select([master], [], [], 1)
        if ready:
            seen += os.read(master, 4096)
    os.write(master, answer)
    out, _ = child.communicate(timeout=30)
    try:
        while select.select([master], [], [], 0.2)[0]:
            seen += os.read(master, 4096)
    except OSError:
        pass
    os.close(master)
    assert b"-one" in seen and b"+ONE" in seen, "the diff is shown before asking"
    return child.returncode, seen.decode("utf-8", "replace") + out.decode()


def test_confirm_yes_applies(tree: Path) -> None:
    code, _ = _confirm_on_pty(tree, b"y\n")
    assert code == 0 and (tree / "a.txt").read_text() == "ONE\ntwo\n"


def test_confirm_no_writes_nothing(tree: Path) -> None:
    code, shown = _confirm_on_pty(tree, b"n\n")
    assert code == 1 and "patchtx: error [rejected]: Not applied: you answered no. Nothing was changed." in shown
    assert (tree / "a.txt").read_text() == "one\ntwo\n"


def test_confirm_without_terminal_refuses(tree: Path) -> None:
    (tree / "p.patch").write_text(UPDATE)
    child = subprocess.run([PATCHTX, "apply", "--confirm", "p.patch"], cwd=tree, capture_output=True,
                           stdin=subprocess.DEVNULL, text=True, start_new_session=True, timeout=60)
    assert child.returncode == 2 and child.stdout == ""
    assert child.stderr.startswith("patchtx apply: --confirm needs a terminal to ask on")
    assert child.stderr.count("\n") == 1 and "Nothing was changed." in child.stderr
    assert (tree / "a.txt").read_text() == "one\ntwo\n"


# Modules an agent's small edit must not load: each is milliseconds of start-up on every edit
# (enum, re and json also pull in functools and collections). Checked by name, not by timing, so
# that a regression fails on any machine. Modules the interpreter itself loaded before patchtx
# (site customisations) are not held against it.
# What a small edit through the installed apply_patch does not load. (json is loaded: the journal
# is written with it, and with it re and the modules re needs, which the console-script wrapper
# loads anyway; so is hashlib, for the journal's digests and hmac's signature.)
_NOT_ON_THE_TINY_PATH = (
    "dataclasses",
    "inspect", "difflib", "argparse", "tomllib", "datetime", "filelock",
    "concurrent.futures", "threading", "ctypes", "resource", "patchtx.txn.recovery", "patchtx.place.hints",
    "patchtx.history", "patchtx.cli.progress", "patchtx.plan.approval", "patchtx.txn.kept", "patchtx.workspace.globs",
    "unicodedata", "bisect",
    # the patchtx command, its diffs and its other subcommands
    "patchtx.cli.commands", "patchtx.render", "importlib.resources", "patchtx.agents.toolspec",
    # the other formats and placers, the repair step's second half, the checks asked for
    "patchtx.formats.unified", "patchtx.formats.search_replace", "patchtx.formats.block_placement",
    "patchtx.formats.text_placement", "patchtx.formats.heredoc", "patchtx.formats.edits",
    "patchtx.formats.gitbinary",
    "patchtx.intake.repair_update", "patchtx.intake.decorations", "patchtx.intake.extract",
    "patchtx.plan.syntax", "patchtx.plan.isolated", "ast", "difflib", "importlib.util",
    "patchtx.txn.verify",
)


def _imported_off_the_tiny_path() -> set[str]:
    """The modules that src/ imports inside a function marked ``(off a one-line edit's path)``
    (docs/architecture.md, "Imports")."""
    import ast

    package = Path(__file__).resolve().parents[2] / "src" / "patchtx"
    found = set()
    for path in package.rglob("*.py"):
        text = path.read_text(encoding="utf-8")
        lines = text.splitlines()
        here = ".".join(("patchtx", *path.relative_to(package).parent.parts))
        for node in ast.walk(ast.parse(text)):
            if not isinstance(node, ast.Import | ast.ImportFrom) or \
                    "(off a one-line edit's path" not in lines[node.lineno - 1]:
                continue
            if isinstance(node, ast.Import):
                found.update(alias.name for alias in node.names)
            elif not node.level:
                found.add(node.module or "")
            else:
                base = here.rsplit(".", node.level - 1)[0] if node.level > 1 else here
                found.update([f"{base}.{node.module}"] if node.module else
                             (f"{base}.{alias.name}" for alias in node.names))
    return found


def test_what_src_marks_off_the_tiny_path_is_checked_to_be_off_it() -> None:
    # A late import's mark is a claim; the test below checks it for each module marked.
    marked = _imported_off_the_tiny_path()
    assert {"patchtx.formats.unified", "patchtx.txn.recovery", "tomllib"} <= marked
    assert sorted(marked - set(_NOT_ON_THE_TINY_PATH)) == []


def _modules_loaded_by_apply_patch(cwd: Path, patch: str) -> list[str]:
    code = (
        "import sys\n"
        "before = set(sys.modules)\n"
        "from patchtx.cli import apply_patch_main\n"
        f"code = apply_patch_main([{patch!r}])\n"
        f"print(sorted(m for m in {_NOT_ON_THE_TINY_PATH!r} if m in sys.modules and m not in before),"
        " file=sys.stderr)\n"
        "sys.exit(code)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], cwd=cwd, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return done.stderr.strip().splitlines()


def test_a_small_edit_imports_nothing_it_does_not_need(tree: Path) -> None:
    # The first transaction creates .patchtx/; the second finds an undo history to keep within its
    # limits (reading entries back); the third follows a journal left behind by a crash, which
    # does need recovery.
    assert _modules_loaded_by_apply_patch(tree, UPDATE) == ["[]"]
    second = UPDATE.replace("-one\n+ONE", "-two\n+TWO")
    assert _modules_loaded_by_apply_patch(tree, second) == ["[]"]
    assert (tree / "a.txt").read_text() == "ONE\nTWO\n"
    journal = tree / ".patchtx" / "journal"
    (journal / "20250101T000000-0000abcd.journal.tmp").write_bytes(b"torn")
    third = UPDATE.replace("-one\n+ONE", "-ONE\n+one")
    assert _modules_loaded_by_apply_patch(tree, third) == ["['patchtx.txn.recovery']"]
    # Only the three undo-history entries remain: the kept journals and their before-images.
    kinds = sorted(p.name.partition(".")[2] for p in journal.iterdir() if not p.name.endswith(".before"))
    assert kinds == ["kept-1-8", "kept-2-8", "kept-3-8"]


def _one_shot_process(body: str) -> subprocess.CompletedProcess[str]:
    code = "import sys\nfrom patchtx.cli import commands, oneshot\n" + body
    # Buffered output, as a script's is by default (this suite may run under PYTHONUNBUFFERED).
    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, env=env)


def test_a_one_shot_command_flushes_its_output_before_the_fast_exit() -> None:
    # Piped output is block-buffered: without the flush, os._exit would drop it.
    done = _one_shot_process("sys.stdout.write('out'); sys.stderr.write('err'); oneshot.one_shot(lambda: 3)")
    assert (done.returncode, done.stdout, done.stderr) == (3, "out", "err")


def test_a_one_shot_command_skips_the_collector_and_the_normal_exit() -> None:
    # An exit handler runs only on the normal exit; the collector is off while the command runs.
    done = _one_shot_process(
        "import atexit, gc\natexit.register(lambda: print('normal exit'))\n"
        "oneshot.one_shot(lambda: print('collector on:', gc.isenabled()) or 0)")
    assert (done.returncode, done.stdout) == (0, "collector on: False\n")


def test_a_one_shot_failure_leaves_what_its_traceback_holds_to_the_exit() -> None:
    # A failed plan's objects (a large file's decoded lines) are not freed one by one just before
    # the process ends: the reported failure is kept, with its traceback, until the fast exit.
    done = _one_shot_process(
        "from patchtx.errors import PatchtxError\n"
        "class Built:\n    def __del__(self): print('freed one by one')\n"
        "def plan():\n    built = Built()\n    raise PatchtxError('It failed.')\n"
        "def run():\n    try:\n        plan()\n    except PatchtxError as exc:\n"
        "        return commands._fail(exc, False)\n"
        "oneshot.one_shot(run)")
    assert (done.returncode, done.stdout) == (1, "")
    assert "It failed." in done.stderr


def test_a_one_shot_result_is_left_to_the_exit(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("one\n")
    patch = "*** Begin Patch\n*** Update File: a.txt\n@@\n-one\n+ONE\n*** End Patch\n"
    (tmp_path / "patch.txt").write_text(patch)
    done = _one_shot_process(
        "from patchtx.result import Result\n"
        "Result.__del__ = lambda self: print('freed one by one')\n"
        f"sys.argv[1:] = ['apply', '--root', {str(tmp_path)!r}, {str(tmp_path / 'patch.txt')!r}]\n"
        "oneshot.one_shot(commands.main)")
    assert done.returncode == 0, done.stderr
    assert "M a.txt" in done.stdout and "freed" not in done.stdout
    assert (tmp_path / "a.txt").read_text() == "ONE\n"


def test_a_failure_reported_in_a_longer_lived_process_is_not_kept(capsys: pytest.CaptureFixture[str]) -> None:
    from patchtx.cli import commands, oneshot
    from patchtx.errors import PatchtxError

    assert commands._fail(PatchtxError("It failed."), False) == 1
    assert oneshot._left_for_the_exit is None
    assert "It failed." in capsys.readouterr().err


def test_a_failed_flush_falls_back_to_the_normal_exit() -> None:
    done = _one_shot_process(
        "import atexit\natexit.register(lambda: sys.__stderr__.write('normal exit'))\n"
        "class Closed:\n    def write(self, text): pass\n"
        "    def flush(self): raise BrokenPipeError(32, 'Broken pipe')\n"
        "sys.stdout = Closed()\noneshot.finish_process(4)")
    # Python's own exit then fails to flush too and says so, with its exit status 120.
    assert done.returncode == 120
    assert done.stderr.startswith("normal exit") and "BrokenPipeError" in done.stderr


def test_the_mcp_server_keeps_the_collector_and_the_normal_exit(monkeypatch: pytest.MonkeyPatch) -> None:
    from patchtx import cli
    from patchtx.cli import commands

    seen: list[object] = []
    monkeypatch.setattr(sys, "argv", ["patchtx", "mcp", "--root", "."])
    monkeypatch.setattr(commands, "main", lambda: seen.append("main") or 0)
    monkeypatch.setattr(cli, "one_shot", lambda run: seen.append("one-shot"))
    with pytest.raises(SystemExit) as exited:
        cli.script()
    assert (exited.value.code, seen) == (0, ["main"])


def test_patchtx_builds_only_the_command_it_runs_with_the_same_messages(tree: Path) -> None:
    from patchtx.cli import commands

    whole = commands._parser()
    for name in commands._COMMANDS:
        alone = commands._parser(name)
        assert alone.format_usage() == whole.format_usage()
        assert alone._subparsers._group_actions[0].choices[name].format_help() == \
            whole._subparsers._group_actions[0].choices[name].format_help()
    bogus = run([PATCHTX, "apply", "--bogus"], tree)
    assert bogus.returncode == 2
    # (issue 42: an option the command does not take gets that command's usage, not the program's)
    assert bogus.stderr.startswith("usage: patchtx apply [-h] [--root ROOT]")
    assert bogus.stderr.endswith("patchtx apply: error: unrecognized arguments: --bogus\n")


def test_every_option_of_apply_and_check_is_declared_in_the_one_table() -> None:
    """A flag that changes what a patch does is a row of ``options.OPTIONS`` (docs/architecture.md,
    "Options"), so the library, the policy files and the tools see it too; the command's own are
    how it reads its arguments and prints, and git's refused ones (hidden from --help)."""
    from patchtx.cli import commands
    from patchtx.options import OPTIONS

    own = {"-h", "--help", "--root", "--json", "-q", "--quiet", "--no-diff", "--stat", "--color",
           "--check", "--confirm", "-v", "--diff", "--numstat", "--summary", "--apply"}
    declared = {flag: row for row in OPTIONS for flag in row.option.flag}
    for name in ("apply", "check"):
        parser = commands._parser(name)._subparsers._group_actions[0].choices[name]
        for action in parser._actions:
            if action.help == argparse.SUPPRESS:
                continue
            for flag in action.option_strings:
                assert flag in own or flag in declared, f"patchtx {name} {flag} is not in options.OPTIONS"
                if flag in declared:
                    assert (action.dest, action.help) == (declared[flag].name, declared[flag].option.help)
    assert declared["--unidiff-zero"].name == "unidiff_zero"


def test_help_follows_columns(tree: Path) -> None:
    narrow = subprocess.run([PATCHTX, "apply", "--help"], capture_output=True, text=True, timeout=60,
                            env={**os.environ, "COLUMNS": "50"})
    assert narrow.returncode == 0 and max(map(len, narrow.stdout.splitlines())) <= 50




@pytest.mark.parametrize("command", [["apply", "p.patch"], ["mcp"]])
@pytest.mark.parametrize("option", ["--max-files", "--max-bytes", "--max-patch-bytes"])
def test_a_negative_cap_is_a_usage_error_before_anything_runs(tmp_path: Path, command: list[str],
                                                              option: str) -> None:
    (tmp_path / "a.txt").write_text("a\n")
    (tmp_path / "p.patch").write_text("*** Begin Patch\n*** Update File: a.txt\n@@\n-a\n+b\n*** End Patch\n")
    done = run([PATCHTX, command[0], option, "-1", *command[1:]], tmp_path, stdin="")
    assert done.returncode == 2
    assert f"argument {option}: invalid count value: '-1'" in done.stderr
    assert (tmp_path / "a.txt").read_text() == "a\n"


@pytest.mark.parametrize("command", [["apply", "p.patch"], ["apply", "--json", "p.patch"], ["mcp"]])
@pytest.mark.parametrize(("option", "value", "says"), [
    ("--syntax", "bogus", "argument --syntax: invalid choice: 'bogus' (choose from 'off', 'warn', 'refuse')"),
    ("--lock-timeout", "-1", "argument --lock-timeout: invalid seconds value: '-1'"),
    ("--verify-timeout", "nan", "argument --verify-timeout: invalid seconds value: 'nan'"),
])
def test_an_invalid_option_value_is_one_usage_line_naming_what_is_valid(
        tmp_path: Path, command: list[str], option: str, value: str, says: str) -> None:
    # Checked by the command line as every other value is (exit 2, before anything runs), not
    # reported later by the library function it calls ("plan_patch() got syntax='bogus'").
    (tmp_path / "a.txt").write_text("a\n")
    (tmp_path / "p.patch").write_text("*** Begin Patch\n*** Update File: a.txt\n@@\n-a\n+b\n*** End Patch\n")
    done = run([PATCHTX, command[0], option, value, *command[1:]], tmp_path, stdin="")
    assert done.returncode == 2
    if "--json" in command:
        error = json.loads(done.stdout)["error"]
        assert error["kind"] == "usage_error"
        assert error["message"] == f"patchtx apply: {says}. Nothing was changed. See `patchtx apply --help`."
    else:
        assert done.stderr.endswith(f"error: {says}\n")
    assert "got " not in done.stdout + done.stderr
    assert (tmp_path / "a.txt").read_text() == "a\n" and not (tmp_path / ".patchtx").exists()


def _run_with_streams(argv: list[str], cwd: Path, stdin: str, *, stdout: object = subprocess.PIPE,
                      closed: int | None = None) -> subprocess.CompletedProcess[str]:
    """``argv`` with standard output sent to ``stdout`` (a file object or PIPE), or with the
    descriptor ``closed`` (0, 1 or 2) closed before the program starts."""
    close = None if closed is None else (lambda: os.close(closed))
    return subprocess.run(argv, cwd=cwd, input=stdin, stdout=stdout, stderr=subprocess.PIPE, text=True,
                          timeout=60, preexec_fn=close, check=False)


OUTPUT_LOST = "error [output_failed]: Could not write the command's output to standard output"
STANDS = "What the command did stands (a patch it applied stays applied"


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full (Linux)")
@pytest.mark.parametrize("argv", [[APPLY_PATCH], [PATCHTX, "apply", "-"], [PATCHTX, "apply", "--json", "-"]])
def test_output_to_a_full_disk_is_one_error_saying_the_patch_stands(tree: Path, argv: list[str]) -> None:
    # Not a traceback, and not "internal_error ... Nothing was changed" for a patch that was applied.
    with open("/dev/full", "w") as full:
        done = _run_with_streams(argv, tree, UPDATE, stdout=full)

    assert (tree / "a.txt").read_text() == "ONE\ntwo\n"
    assert done.returncode == 1
    assert OUTPUT_LOST in done.stderr and "disk full (ENOSPC)" in done.stderr and STANDS in done.stderr
    assert "Traceback" not in done.stderr and "Nothing was changed" not in done.stderr
    assert done.stderr.count("\n") == 1


@pytest.mark.parametrize("argv", [[APPLY_PATCH], [PATCHTX, "apply", "-"],
                                  [sys.executable, "-m", "patchtx", "apply", "-"]])
def test_a_closed_standard_output_is_one_error_saying_the_patch_stands(tree: Path, argv: list[str]) -> None:
    done = _run_with_streams(argv, tree, UPDATE, closed=1)

    assert (tree / "a.txt").read_text() == "ONE\ntwo\n"
    assert done.returncode == 1
    assert OUTPUT_LOST in done.stderr and "(EBADF)" in done.stderr and STANDS in done.stderr
    assert "Traceback" not in done.stderr and "Nothing was changed" not in done.stderr


@pytest.mark.parametrize("argv", [[APPLY_PATCH], [PATCHTX, "apply", "-"], [PATCHTX, "apply", "--json", "-"]])
def test_a_closed_standard_error_does_not_stop_a_patch(tree: Path, argv: list[str]) -> None:
    done = _run_with_streams(argv, tree, UPDATE, closed=2)

    assert done.returncode == 0
    assert (tree / "a.txt").read_text() == "ONE\ntwo\n"
    assert "a.txt" in done.stdout


def test_a_failing_patch_with_a_full_output_keeps_its_own_error_and_status(tree: Path) -> None:
    with open(os.devnull if not os.path.exists("/dev/full") else "/dev/full", "w") as full:
        done = _run_with_streams([PATCHTX, "apply", "-"], tree, UPDATE.replace("-one", "-nope"), stdout=full)

    assert done.returncode == 1 and "error [context_not_found]" in done.stderr
    assert "output_failed" not in done.stderr  # (nothing was written to standard output)
    assert (tree / "a.txt").read_text() == "one\ntwo\n"


def test_ctrl_c_in_a_one_shot_command_is_one_line_and_status_130() -> None:
    done = _one_shot_process("def run():\n    raise KeyboardInterrupt\noneshot.one_shot(run, program='apply_patch')")
    assert done.returncode == 130
    assert done.stderr.startswith("apply_patch: interrupted. A transaction it had not committed is rolled back")
    assert "Traceback" not in done.stderr and done.stderr.count("\n") == 1


def test_a_patch_asked_for_on_a_closed_standard_input_is_a_clear_error(tree: Path) -> None:
    done = _run_with_streams([PATCHTX, "apply", "-"], tree, "", closed=0)

    assert done.returncode == 1
    assert done.stderr.startswith("patchtx: error [io_error]: Cannot read the patch:")
    assert "standard input is closed" in done.stderr and "Nothing was changed." in done.stderr
    assert "internal_error" not in done.stderr
