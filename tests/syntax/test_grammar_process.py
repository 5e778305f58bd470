"""The tree-sitter grammars run in a process of their own (issue 38): a grammar that crashes,
hangs or runs away costs the file's check (written and reported as not checked, saying why), never
the process that asked: not ``patchtx check``, not a ``patchtx mcp`` server (tests/integrations/
test_mcp.py holds that one). The mechanism, ``patchtx.isolated``, is tested with functions that
misbehave on purpose (isolated_targets.py)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from patchtx import syntax
from patchtx.isolated import Failed, Isolated
from patchtx.syntax import check_file

PATCHTX = str(Path(sys.executable).parent / "patchtx")
DEEP_YAML = "".join(" " * i + f"k{i}:\n" for i in range(300)) + " " * 300 + "v\n"
"""The issue's file: 46 KB, 300 nested block mappings; tree-sitter-yaml 0.7 segfaults on it."""
TARGETS = "tests.syntax.isolated_targets"


def test_a_file_its_grammar_crashes_on_is_written_unchecked() -> None:
    pytest.importorskip("tree_sitter_language_pack")
    assert len(DEEP_YAML) == 46_842
    result = check_file("deep.yaml", None, DEEP_YAML.encode())
    assert result.status == "not_checked", result
    assert result.reason is not None and result.reason.startswith("the YAML grammar crashed (SIG")
    # The next file gets a new process, and is checked.
    assert check_file("ok.yaml", None, b"a: 1\n").status == "ok"
    broken = check_file("bad.yaml", b"a: [1]\n", b"a: [1\n")
    assert broken.status == "errors" and broken.errors[0].line == 1


def test_patchtx_check_survives_it(tmp_path: Path) -> None:
    pytest.importorskip("tree_sitter_language_pack")
    patch = "*** Begin Patch\n*** Add File: deep.yaml\n" + "".join(f"+{line}\n" for line in DEEP_YAML.splitlines())
    (tmp_path / "p.patch").write_text(patch + "*** End Patch\n")
    done = subprocess.run([PATCHTX, "check", "--json", "--syntax", "refuse", "p.patch"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, (done.returncode, done.stderr)  # was -11: killed by SIGSEGV
    (entry,) = json.loads(done.stdout)["syntax"]["files"]
    assert entry["status"] == "not_checked" and "crashed" in entry["reason"]
    assert not (tmp_path / "core").exists()


def test_a_crash_is_an_answer_and_the_next_call_a_new_process() -> None:
    worker = Isolated(f"{TARGETS}:crash", seconds=30, memory=1 << 30)
    first = worker.call("hello", b"abc", None)
    assert first["args"] == "hello" and first["sizes"] == [3, None]
    with pytest.raises(Failed) as failed:
        worker.call("crash")
    assert failed.value.reason == "crashed (SIGSEGV)"
    again = worker.call("again", b"")
    assert again["sizes"] == [0] and again["pid"] != first["pid"]
    worker.stop()


def test_a_hang_costs_the_time_limit_and_the_process() -> None:
    worker = Isolated(f"{TARGETS}:hang", seconds=2, memory=1 << 30)
    first = worker.call("warm")  # (the first call starts the process within the same limit)
    with pytest.raises(Failed) as failed:
        worker.call("hang")
    assert failed.value.reason == "took more than 2 s"
    with pytest.raises(ProcessLookupError):
        os.kill(first["pid"], 0)  # killed and reaped
    assert worker.call("after")["pid"] != first["pid"]
    worker.stop()


def test_memory_and_cpu_are_limited() -> None:
    worker = Isolated(f"{TARGETS}:allocate", seconds=30, memory=512 << 20)
    assert worker.call(1 << 20) == 1 << 20
    with pytest.raises(Failed) as failed:
        worker.call(1 << 30)
    assert failed.value.reason.startswith("failed (MemoryError")
    worker.stop()
    # Its own CPU limit per call (by default twice the caller's time limit) ends a child that its
    # caller stopped watching; here it is the shorter one, so it ends the call.
    spinner = Isolated(f"{TARGETS}:spin", seconds=60, memory=1 << 30, cpu=1)
    with pytest.raises(Failed) as failed:
        spinner.call(None)
    assert failed.value.reason == "crashed (SIGXCPU)"


def test_the_child_runs_isolated_from_the_workspace(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """In /, without the working folder on its import path: a workspace's file named like the
    target's module is not what runs."""
    (tmp_path / "json.py").write_text("raise SystemExit('the workspace was imported')\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PYTHONPATH", str(tmp_path))
    worker = Isolated(f"{TARGETS}:echo", seconds=30, memory=1 << 30)
    assert worker.call(None)["cwd"] == "/"
    worker.stop()


def test_without_the_extra_a_grammars_language_is_not_checked(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(syntax, "_grammars_installed", lambda: False)
    result = check_file("main.go", None, b"package main\nfunc main() {\n")
    assert result.status == "not_checked" and "patchtx[syntax]" in (result.reason or "")
