"""The tree-sitter grammars run in a process of their own (issue 38): a grammar that crashes,
hangs or runs away costs the file's check (written and reported as not checked, saying why), never
the process that asked: not ``patchtx check``, not a ``patchtx mcp`` server (tests/integrations/
test_mcp.py holds that one). The mechanism, ``patchtx.plan.isolated``, is tested with functions that
misbehave on purpose (isolated_targets.py)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import patchtx
from patchtx.errors import SyntaxGuardError
from patchtx.plan import syntax
from patchtx.plan.isolated import Failed, Isolated
from patchtx.plan.syntax import check_file

from . import need_grammars

PATCHTX = str(Path(sys.executable).parent / "patchtx")
DEEP_YAML = "".join(" " * i + f"k{i}:\n" for i in range(300)) + " " * 300 + "v\n"
"""The issue's file: 46 KB, 300 nested block mappings; tree-sitter-yaml 0.7 segfaults on it."""
TARGETS = "tests.plan.syntax.isolated_targets"


def added(files: dict[str, str]) -> str:
    """A patch adding ``files``."""
    body = "".join(f"*** Add File: {name}\n" + "".join(f"+{line}\n" for line in text.splitlines())
                   for name, text in files.items())
    return f"*** Begin Patch\n{body}*** End Patch\n"


@pytest.fixture
def fresh_grammars(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[int]]:
    """The guard's grammars process as if none had been started in this process, and the pid of
    every process patchtx.plan.isolated starts from now on (each stopped after the test)."""
    monkeypatch.setattr(syntax, "_GRAMMARS", [])
    started: list[int] = []
    real = subprocess.Popen

    def counted(*args: Any, **kwargs: Any) -> subprocess.Popen[bytes]:
        child = real(*args, **kwargs)
        started.append(child.pid)
        return child

    monkeypatch.setattr(subprocess, "Popen", counted)  # (the module patchtx.plan.isolated starts them with)
    yield started
    for worker in syntax._GRAMMARS:
        worker.stop()


def test_a_file_its_grammar_crashes_on_is_written_unchecked() -> None:
    need_grammars()
    assert len(DEEP_YAML) == 46_842
    result = check_file("deep.yaml", None, DEEP_YAML.encode())
    assert result.status == "not_checked", result
    assert result.reason is not None and result.reason.startswith("the YAML grammar crashed (SIG")
    # The next file gets a new process, and is checked.
    assert check_file("ok.yaml", None, b"a: 1\n").status == "ok"
    broken = check_file("bad.yaml", b"a: [1]\n", b"a: [1\n")
    assert broken.status == "errors" and broken.errors[0].line == 1


def test_patchtx_check_survives_it(tmp_path: Path) -> None:
    need_grammars()
    patch = "*** Begin Patch\n*** Add File: deep.yaml\n" + "".join(f"+{line}\n" for line in DEEP_YAML.splitlines())
    (tmp_path / "p.patch").write_text(patch + "*** End Patch\n")
    done = subprocess.run([PATCHTX, "check", "--json", "--syntax", "refuse", "p.patch"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, (done.returncode, done.stderr)  # was -11: killed by SIGSEGV
    (entry,) = json.loads(done.stdout)["syntax"]["files"]
    assert entry["status"] == "not_checked" and "crashed" in entry["reason"]
    assert not (tmp_path / "core").exists()


def test_patchtx_apply_survives_it_and_checks_the_other_files(tmp_path: Path) -> None:
    """The same file in a patch with others: the crash costs that file's check only. Beside a file
    that parses, the patch applies; beside one the patch breaks, it is refused, nothing written."""
    need_grammars()
    (tmp_path / "p.patch").write_text(added({"deep.yaml": DEEP_YAML, "ok.yaml": "a: 1\n"}))
    done = subprocess.run([PATCHTX, "apply", "--json", "--syntax", "refuse", "p.patch"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, (done.returncode, done.stderr)  # was -11, nothing written
    files = {entry["path"]: entry for entry in json.loads(done.stdout)["syntax"]["files"]}
    assert files["deep.yaml"]["status"] == "not_checked" and "crashed" in files["deep.yaml"]["reason"]
    assert files["ok.yaml"]["status"] == "ok"
    assert (tmp_path / "deep.yaml").read_text() == DEEP_YAML
    (tmp_path / "q.patch").write_text(added({"deep2.yaml": DEEP_YAML, "bad.yaml": "a: [1\n"}))
    done = subprocess.run([PATCHTX, "apply", "--syntax", "refuse", "q.patch"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 1 and "[syntax_error]" in done.stderr and "bad.yaml" in done.stderr
    assert "Traceback" not in done.stderr
    assert not (tmp_path / "deep2.yaml").exists() and not (tmp_path / "bad.yaml").exists()
    assert not (tmp_path / "core").exists()


def test_one_process_serves_a_whole_patch_and_the_next_ones(tmp_path: Path, fresh_grammars: list[int]) -> None:
    """Not a process per file: one for every file of a patch, kept for the next call; a crash
    costs one more, for the files after it."""
    need_grammars()
    patchtx.plan_patch(added({"a.py": "x = 1\n", "b.json": "{}\n", "c.toml": "a = 1\n"}), tmp_path, syntax="refuse")
    assert fresh_grammars == []  # Python, JSON and TOML: parsed in this process
    files = {f"f{i}.yaml": f"k{i}: [1, 2]\n" for i in range(6)}
    plan = patchtx.plan_patch(added(files), tmp_path, syntax="refuse")
    assert plan.syntax is not None and {f.status for f in plan.syntax.files} == {"ok"}
    assert len(fresh_grammars) == 1
    patchtx.plan_patch(added({"g.js": "let a = 1;\n", "h.rs": "fn f() {}\n"}), tmp_path, syntax="refuse")
    assert len(fresh_grammars) == 1
    files["f3.yaml"] = DEEP_YAML
    plan = patchtx.plan_patch(added(files), tmp_path, syntax="refuse")
    assert plan.syntax is not None
    assert [f.status for f in plan.syntax.files] == ["ok"] * 3 + ["not_checked"] + ["ok"] * 2
    assert len(fresh_grammars) == 2
    files["f5.yaml"] = "k5: [1, 2\n"
    with pytest.raises(SyntaxGuardError) as refused:  # the files after the crash are still checked
        patchtx.plan_patch(added(files), tmp_path, syntax="refuse")
    assert refused.value.path == "f5.yaml"


def test_a_grammar_parses_the_old_version_only_when_the_new_one_has_errors(monkeypatch: pytest.MonkeyPatch) -> None:
    """The tree-sitter side of the guard at the cost of one parse (issue 38, item 3), in this
    process, with a parser that counts what it is given."""
    need_grammars()
    real = syntax._tree_sitter_parser("javascript")
    parsed: list[bytes] = []

    class Counting:
        def parse(self, data: bytes) -> Any:
            parsed.append(data)
            return real.parse(data)

    monkeypatch.setattr(syntax, "_tree_sitter_parser", lambda language: Counting())
    args = {"path": "a.js", "language": "javascript"}
    good, broken = b"let a = 1;\n", b"let a = (1;\n"
    assert syntax.grammar_check(args, good, b"let a = 2;\n")["status"] == "ok"
    assert parsed == [b"let a = 2;\n"]
    parsed.clear()
    assert syntax.grammar_check(args, good, broken)["status"] == "errors"
    assert parsed == [broken, good]


def test_what_the_child_prints_is_not_an_answer() -> None:
    """A grammar or its bindings printing on standard output cannot forge or garble an answer."""
    worker = Isolated(f"{TARGETS}:chatter", seconds=30, memory=1 << 30)
    assert worker.call("one")["args"] == "one"
    assert worker.call("two")["args"] == "two"
    worker.stop()


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


def test_a_child_that_exits_is_reported_by_its_own_status() -> None:
    """Not killed once its output closed, which reported any exit as "crashed (SIGKILL)"."""
    for _ in range(3):
        worker = Isolated(f"{TARGETS}_missing:echo", seconds=30, memory=1 << 30)
        with pytest.raises(Failed) as failed:
            worker.call(None)
        assert failed.value.reason == "stopped (exit status 1)"


def test_a_hang_costs_the_time_limit_and_the_process() -> None:
    # A call's limit covers the start of a process when it starts one: the calls that do have a
    # limit no loaded machine reaches (a start took more than 2 s in a full parallel run).
    worker = Isolated(f"{TARGETS}:hang", seconds=60, memory=1 << 30)
    first = worker.call("warm")
    worker.seconds = 2
    with pytest.raises(Failed) as failed:
        worker.call("hang")
    assert failed.value.reason == "took more than 2 s"
    with pytest.raises(ProcessLookupError):
        os.kill(first["pid"], 0)  # killed and reaped
    worker.seconds = 60
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


@pytest.mark.parametrize("end", ["", "from patchtx.cli.oneshot import finish_process; finish_process(0)"])
def test_a_caller_ends_its_child_when_it_exits(end: str) -> None:
    """At the interpreter's exit and at a one-shot command's (os._exit, which skips atexit), so
    that the child's CPU time is counted in its caller's, as a benchmark reads it from the process
    it waited for (an orphan's went uncounted), and no child outlives its caller."""
    code = (f"from patchtx.plan.isolated import Isolated\n"
            f"print(Isolated('{TARGETS}:burn', seconds=30, memory=1 << 30).call(1.0)['pid'], flush=True)\n{end}\n")
    caller = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True,
                              env={**os.environ, "PYTHONPATH": str(Path(__file__).parents[3])})
    _, status, usage = os.wait4(caller.pid, 0)
    assert caller.stdout is not None
    child = int(caller.stdout.read())
    caller.stdout.close()
    assert os.waitstatus_to_exitcode(status) == 0
    assert usage.ru_utime + usage.ru_stime >= 0.95  # the child's second of CPU included
    with pytest.raises(ProcessLookupError):
        os.kill(child, 0)


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
