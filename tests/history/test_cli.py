"""``patchtx log`` / ``patchtx undo`` on the command line, and progress on a terminal only."""

from __future__ import annotations

import json
import os
import pty
import select
import subprocess
import sys
from pathlib import Path

BIN = Path(sys.executable).parent
PATCHTX = str(BIN / "patchtx")


def run(argv: list[str], cwd: Path, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([PATCHTX, *argv], cwd=cwd, input=stdin, capture_output=True, text=True, timeout=60)


def _update(path: str, old: str, new: str) -> str:
    return f"*** Begin Patch\n*** Update File: {path}\n@@\n-{old}\n+{new}\n*** End Patch\n"


def test_log_lists_newest_first_with_intent_and_undo_restores(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("one\n")
    assert run(["apply", "--intent", "shout the first line"], tmp_path, _update("a.txt", "one", "ONE")).returncode == 0
    assert run(["apply"], tmp_path, "*** Begin Patch\n*** Add File: b.txt\n+bee\n*** End Patch\n").returncode == 0

    listed = run(["log", "--json"], tmp_path)
    assert listed.returncode == 0 and listed.stderr == ""
    transactions = json.loads(listed.stdout)["transactions"]
    assert [(t["summary"], t["intent"], t["bytes"]) for t in transactions] == [
        ("A 1, M 0, D 0, R 0", None, 0),
        ("A 0, M 1, D 0, R 0", "shout the first line", 4),
    ]
    assert all(t["time"].endswith("Z") and t["undoes"] is None for t in transactions)
    assert [t["paths"] for t in transactions] == [["b.txt"], ["a.txt"]]
    human = run(["log"], tmp_path).stdout.splitlines()
    assert len(human) == 4  # each transaction, then the files it changed
    assert human[0].startswith(transactions[0]["id"]) and "A 1, M 0, D 0, R 0" in human[0]
    assert human[1] == "    b.txt"
    assert human[2].startswith(transactions[1]["id"]) and human[2].endswith("4 B  shout the first line")
    assert human[3] == "    a.txt"

    undone = run(["undo", "--json"], tmp_path)
    payload = json.loads(undone.stdout)
    assert undone.returncode == 0 and payload["ok"] is True
    assert payload["undone"] == transactions[0]["id"] and payload["transaction"] not in (
        transactions[0]["id"], transactions[1]["id"])
    assert payload["summary"] == "A 0, M 0, D 1, R 0"
    assert [(f["path"], f["status"]) for f in payload["files"]] == [("b.txt", "deleted")]
    assert not (tmp_path / "b.txt").exists()

    # A unique prefix (six of the eight hex digits: the undo just made may share the second and two)
    second = run(["undo", transactions[1]["id"][:-2], "--no-diff"], tmp_path)
    assert second.returncode == 0
    assert second.stdout.startswith(f"Undid transaction {transactions[1]['id']} as transaction ")
    assert "  M a.txt" in second.stdout and "---" not in second.stdout
    assert (tmp_path / "a.txt").read_text() == "one\n"
    newest = json.loads(run(["log", "--json"], tmp_path).stdout)["transactions"][0]
    assert newest["intent"] == f"undo {transactions[1]['id']}: shout the first line"
    assert newest["undoes"] == transactions[1]["id"]


def test_undo_refused_after_an_edit_reports_the_files_as_json(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("one\n")
    run(["apply"], tmp_path, _update("a.txt", "one", "two"))
    (tmp_path / "a.txt").write_text("edited\n")

    refused = run(["undo", "--json"], tmp_path)

    assert refused.returncode == 1
    error = json.loads(refused.stdout)["error"]
    assert error["kind"] == "changed_since_planning" and error["changed"] is False
    assert error["paths"] == ["a.txt"] and "a.txt (its contents differ" in error["message"]
    assert (tmp_path / "a.txt").read_text() == "edited\n"
    human = run(["undo"], tmp_path)
    assert human.returncode == 1 and human.stderr.startswith("patchtx: error [changed_since_planning]: Cannot undo")


def test_log_and_undo_on_a_workspace_without_history(tmp_path: Path) -> None:
    assert run(["log"], tmp_path).stdout == "The undo history is empty.\n"
    assert json.loads(run(["log", "--json"], tmp_path).stdout) == {"ok": True, "transactions": []}
    nothing = run(["undo", "--json"], tmp_path)
    assert nothing.returncode == 1 and json.loads(nothing.stdout)["error"]["kind"] == "nothing_to_undo"
    assert sorted(os.listdir(tmp_path)) == []


def test_undo_dry_run_writes_nothing(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("one\n")
    run(["apply"], tmp_path, _update("a.txt", "one", "two"))
    shown = run(["undo", "--dry-run"], tmp_path)
    assert shown.returncode == 0 and shown.stdout.startswith("Would undo transaction ")
    assert "-two\n+one\n" in shown.stdout
    assert (tmp_path / "a.txt").read_text() == "two\n"
    assert len(json.loads(run(["log", "--json"], tmp_path).stdout)["transactions"]) == 1


# -- progress --------------------------------------------------------------------------------------

MANY = 12


def _many_files_patch(tree: Path) -> str:
    for i in range(MANY):
        (tree / f"f{i}.txt").write_text(f"line {i}\n")
    hunks = "".join(f"*** Update File: f{i}.txt\n@@\n-line {i}\n+LINE {i}\n" for i in range(MANY))
    return f"*** Begin Patch\n{hunks}*** End Patch\n"


def _run_with_stderr_on_a_terminal(argv: list[str], cwd: Path, stdin: str) -> tuple[int, str, str]:
    """Run patchtx with stderr on a pseudo-terminal (stdin and stdout piped)."""
    master, slave = pty.openpty()
    env = {**os.environ, "PATCHTX_PROGRESS_DELAY": "0"}
    child = subprocess.Popen([PATCHTX, *argv], cwd=cwd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                             stderr=slave, env=env)
    os.close(slave)
    out, _ = child.communicate(stdin.encode(), timeout=60)
    seen = b""
    try:
        while select.select([master], [], [], 0.5)[0]:
            chunk = os.read(master, 65536)
            if not chunk:
                break
            seen += chunk
    except OSError:  # EIO once the child's side is closed and drained
        pass
    os.close(master)
    return child.returncode, out.decode(), seen.decode("utf-8", "replace")


def test_progress_is_drawn_on_a_terminal(tmp_path: Path) -> None:
    patch = _many_files_patch(tmp_path)

    code, out, terminal = _run_with_stderr_on_a_terminal(["apply", "--no-diff"], tmp_path, patch)

    assert code == 0 and out.startswith("Applied: A 0, M 12, D 0, R 0")
    lines = terminal.replace("\r\n", "\n").split("\n")
    finished = [line.rpartition("\r")[2].replace("\x1b[K", "") for line in lines if line]
    assert finished == [
        f"Planning files: {MANY}/{MANY} (100%), done.",
        f"Checking files: {MANY}/{MANY} (100%), done.",
        f"Writing files: {MANY}/{MANY} (100%), done.",
    ]
    # Drawn as it went, not only at the end: the first state of each phase is always drawn.
    assert "\rPlanning files: 1/12 (8%)\x1b[K" in terminal and "\rWriting files: 0/12 (0%)\x1b[K" in terminal
    assert "Planning" not in out  # progress never goes to standard output

    code, out, terminal = _run_with_stderr_on_a_terminal(["undo", "--no-diff"], tmp_path, "")
    assert code == 0 and f"Writing files: {MANY}/{MANY} (100%), done." in terminal.replace("\x1b[K", "")


def test_no_progress_when_quiet_or_when_stderr_is_not_a_terminal(tmp_path: Path) -> None:
    patch = _many_files_patch(tmp_path)
    code, _out, terminal = _run_with_stderr_on_a_terminal(["apply", "--quiet", "--no-diff"], tmp_path, patch)
    assert code == 0 and terminal == ""

    piped = subprocess.run([PATCHTX, "undo", "--no-diff"], cwd=tmp_path, capture_output=True, text=True,
                           env={**os.environ, "PATCHTX_PROGRESS_DELAY": "0"}, timeout=60)
    assert piped.returncode == 0 and piped.stderr == ""
    assert (tmp_path / "f0.txt").read_text() == "line 0\n"


def test_undo_twice_goes_further_back_and_redo_puts_back(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("0\n")
    for old, new in (("0", "1"), ("1", "2")):
        assert run(["apply"], tmp_path, _update("a.txt", old, new)).returncode == 0
    first = run(["undo", "--no-diff"], tmp_path)
    assert first.returncode == 0 and (tmp_path / "a.txt").read_text() == "1\n"
    second = run(["undo", "--no-diff"], tmp_path)
    assert second.returncode == 0 and (tmp_path / "a.txt").read_text() == "0\n"
    third = run(["undo"], tmp_path)
    assert third.returncode == 1 and "[nothing_to_undo]" in third.stderr
    redone = run(["redo", "--json"], tmp_path)
    payload = json.loads(redone.stdout)
    assert redone.returncode == 0 and payload["ok"] is True and payload["redone"]
    assert (tmp_path / "a.txt").read_text() == "1\n"
    shown = run(["redo", "--dry-run", "--no-diff"], tmp_path)
    assert shown.stdout.startswith("Would redo transaction ") and (tmp_path / "a.txt").read_text() == "1\n"
    again = run(["redo", "--no-diff"], tmp_path)
    assert again.stdout.startswith("Redid transaction ") and (tmp_path / "a.txt").read_text() == "2\n"
    assert run(["redo"], tmp_path).returncode == 1


def test_quiet_undo_and_redo_print_one_summary_line(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("one\n")
    run(["apply"], tmp_path, _update("a.txt", "one", "two"))
    applied = json.loads(run(["log", "--json"], tmp_path).stdout)["transactions"][0]["id"]
    assert run(["undo", "-q", "--dry-run"], tmp_path).stdout == (
        f"Would undo transaction {applied}: A 0, M 1, D 0, R 0\n")
    undone = run(["undo", "-q"], tmp_path).stdout
    assert undone.startswith(f"Undid transaction {applied} as transaction ") and undone.count("\n") == 1
    assert undone.endswith(": A 0, M 1, D 0, R 0\n")
    redone = run(["redo", "-q"], tmp_path).stdout
    assert redone.startswith(f"Redid transaction {applied} as transaction ") and redone.count("\n") == 1
    assert (tmp_path / "a.txt").read_text() == "two\n"


def test_log_names_at_most_five_files_of_a_transaction(tmp_path: Path) -> None:
    patch = "*** Begin Patch\n" + "".join(f"*** Add File: f{n}.txt\n+{n}\n" for n in range(7)) + "*** End Patch\n"
    assert run(["apply"], tmp_path, patch).returncode == 0
    lines = run(["log"], tmp_path).stdout.splitlines()
    assert lines[1] == "    f0.txt, f1.txt, f2.txt, f3.txt, f4.txt and 2 more"
