"""The degraded items of issue 24: each a clear refusal or the right behaviour, never an
internal_error, through the library, the CLI and (where it takes part) the MCP server."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

import patchtx
from patchtx import history
from patchtx.errors import PatchtxError
from patchtx.txn import commit, recover

from .surfaces import cli, cli_apply, everywhere, library
from .test_boundary import snapshot

UPDATE = "*** Begin Patch\n*** Update File: a.txt\n@@\n-one\n+ONE\n*** End Patch\n"


@pytest.fixture
def root(tmp_path: Path) -> Path:
    folder = tmp_path / "ws"
    folder.mkdir()
    (folder / "a.txt").write_text("one\n")
    return folder


def test_the_lock_file_is_private(root: Path) -> None:
    """Any local user could flock a 0644 lock and block the workspace."""
    patchtx.apply_patch(UPDATE, root)
    lock = root / ".patchtx" / "lock"
    assert stat.S_IMODE(lock.stat().st_mode) == 0o600
    lock.chmod(0o644)  # as older versions made it
    patchtx.apply_patch(UPDATE.replace("-one\n+ONE", "-ONE\n+one"), root)
    assert stat.S_IMODE(lock.stat().st_mode) == 0o600


PLANNING_CHILD = r"""
import json, resource, sys
import patchtx
from patchtx.errors import PatchtxError
root, limit = sys.argv[1], int(sys.argv[2])
lines = ["*** Begin Patch"]
for i in range(500):
    lines += [f"*** Update File: d{i % 100:03}/f{i:03}.txt", "@@", "-old", "+new"]
patch = "\n".join(lines + ["*** End Patch"]) + "\n"
resource.setrlimit(resource.RLIMIT_NOFILE, (limit, resource.getrlimit(resource.RLIMIT_NOFILE)[1]))
try:
    result = patchtx.apply_patch(patch, root, durable=False)
    print(json.dumps({"ok": True, "summary": result.plan.summary}))
except PatchtxError as exc:
    print(json.dumps({"ok": False, "kind": exc.kind, "message": exc.message}))
"""


def test_planning_keeps_to_the_descriptor_budget(tmp_path: Path) -> None:
    """A 500-file patch over 100 folders planned (and committed) under RLIMIT_NOFILE 12: planning
    kept a folder descriptor per folder, and was refused below ~110."""
    pytest.importorskip("resource")
    root = tmp_path / "ws"
    for i in range(500):
        (root / f"d{i % 100:03}").mkdir(parents=True, exist_ok=True)
        (root / f"d{i % 100:03}" / f"f{i:03}.txt").write_text("old\n")
    done = subprocess.run([sys.executable, "-c", PLANNING_CHILD, str(root), "12"], capture_output=True, text=True,
                          timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    outcome = json.loads(done.stdout)
    assert outcome == {"ok": True, "summary": "A 0, M 500, D 0, R 0"}, outcome
    assert (root / "d042" / "f142.txt").read_text() == "new\n"


def test_a_deeply_nested_pyproject_is_an_invalid_policy(root: Path) -> None:
    (root / "pyproject.toml").write_text("[tool.patchtx]\nprotected = " + "[" * 100_000 + "]" * 100_000 + "\n")
    outcomes = everywhere(root, UPDATE)
    assert set(outcomes.values()) == {"policy_violation"}, outcomes
    with pytest.raises(PatchtxError, match="nested too deeply"):
        patchtx.apply_patch(UPDATE, root)
    assert (root / "a.txt").read_text() == "one\n"


@pytest.fixture
def deep_root(root: Path) -> Iterator[Path]:
    """``root``, emptied from the bottom up afterwards: shutil.rmtree (pytest's clean-up of every
    run's folders, everyone's) recurses once per folder and would fail on a thousand."""
    yield root
    folders, todo = [], [root]
    while todo:  # (os.walk recurses too, before Python 3.12)
        folder = todo.pop()
        folders.append(folder)
        todo += [entry for entry in folder.iterdir() if entry.is_dir() and not entry.is_symlink()]
    for folder in reversed(folders):
        for entry in folder.iterdir():
            if entry.is_symlink() or not entry.is_dir():
                entry.unlink()
        if folder != root:
            folder.rmdir()


def test_a_path_a_thousand_folders_deep(deep_root: Path) -> None:
    root = deep_root
    deep = "/".join(["d"] * 1000)
    patch = f"*** Begin Patch\n*** Add File: {deep}/leaf.txt\n+leaf\n*** End Patch\n"
    assert library(root, patch) == "applied"
    assert (root / deep / "leaf.txt").read_text() == "leaf\n"
    assert cli_apply(root, patch.replace("leaf.txt", "leaf2.txt")) == "applied"
    update = f"*** Begin Patch\n*** Update File: {deep}/leaf.txt\n@@\n-leaf\n+LEAF\n*** End Patch\n"
    assert library(root, update) == "applied"
    assert history.undo(root).undone is not None
    assert (root / deep / "leaf.txt").read_text() == "leaf\n"


def test_the_work_of_workspace_globs_is_bounded(root: Path) -> None:
    """20,000 patterns used to make a 2,000-file check take ten minutes."""
    patterns = [f"**x{i}**y**z**q" for i in range(20_000)]
    (root / ".patchtx.toml").write_text("protected = " + json.dumps(patterns) + "\n")
    patch = "*** Begin Patch\n" + "".join(f"*** Add File: d/f{i}.txt\n+x\n" for i in range(2000)) + "*** End Patch\n"
    started = time.monotonic()
    with pytest.raises(PatchtxError) as caught:
        patchtx.apply_patch(patch, root)
    assert caught.value.kind == "policy_violation" and "1000 patterns" in caught.value.message
    # Within the bound on their number, the work of matching is bounded too.
    (root / ".patchtx.toml").write_text("protected = " + json.dumps(
        ["**" + "a**" * 300 + "b"] * 1000) + "\n")
    long_paths = "*** Begin Patch\n" + "".join(
        f"*** Add File: b{'a' * 100}/{i}{'a' * 100}.txt\n+x\n" for i in range(2000)) + "*** End Patch\n"
    with pytest.raises(PatchtxError) as caught:
        patchtx.apply_patch(long_paths, root)
    assert caught.value.kind == "policy_violation" and "costs too much" in caught.value.message
    assert time.monotonic() - started < 120
    assert not (root / "d").exists()


def test_a_policy_file_linked_inside_the_workspace_is_read_and_protected(root: Path) -> None:
    (root / "config").mkdir()
    (root / "config" / "shared.toml").write_text('[tool.patchtx]\nprotected = ["a.txt"]\n')
    (root / "pyproject.toml").symlink_to("config/shared.toml")
    outcomes = everywhere(root, UPDATE)
    assert set(outcomes.values()) == {"policy_violation"}, outcomes  # its policy applies
    lift = ("*** Begin Patch\n*** Update File: config/shared.toml\n@@\n-protected = [\"a.txt\"]\n"
            "+protected = []\n*** End Patch\n")
    assert set(everywhere(root, lift).values()) == {"policy_violation"}  # and is protected
    other = "*** Begin Patch\n*** Add File: b.txt\n+b\n*** End Patch\n"
    assert library(root, other) == "applied"  # other patches go through


def test_a_nul_byte_in_an_update_is_refused_as_in_an_add(root: Path) -> None:
    before = snapshot(root)
    outcomes = everywhere(root, UPDATE.replace("+ONE", "+O\0NE"))
    assert set(outcomes.values()) == {"binary_file"}, outcomes
    assert snapshot(root) == before


def test_log_shows_terminal_escapes_escaped(root: Path) -> None:
    intent = "fix \x1b]0;pwned\x07\x1b[2J\x1b[1A\rall good\u202e"
    patchtx.apply_patch(UPDATE, root, intent=intent)
    done = subprocess.run([str(Path(sys.executable).parent / "patchtx"), "log", "--root", str(root)],
                          capture_output=True, text=True, check=True)
    assert "\x1b" not in done.stdout and "\r" not in done.stdout and "\u202e" not in done.stdout
    assert "]0;pwned" in done.stdout  # shown, quoted as git quotes a name
    kind, out = cli(root, "log")
    assert kind == "applied" and out["transactions"][0]["intent"] == intent  # JSON carries it as it is


def test_every_json_rpc_id_gets_an_answer(root: Path) -> None:
    client = {"name": "t", "version": "1"}
    hello = [{"jsonrpc": "2.0", "id": "init", "method": "initialize",
              "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": client}},
             {"jsonrpc": "2.0", "method": "notifications/initialized"}]
    odd = [{"a": 1}, [1], 1.5, True, None]
    lines = [*map(json.dumps, hello), *(json.dumps({"jsonrpc": "2.0", "id": i, "method": "ping"}) for i in odd),
             json.dumps({"jsonrpc": "2.0", "id": 7, "method": "ping"})]
    done = subprocess.run([str(Path(sys.executable).parent / "patchtx"), "mcp", "--root", str(root)],
                          input="\n".join(lines) + "\n", capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0 and "Traceback" not in done.stderr
    answers = [json.loads(line) for line in done.stdout.splitlines()]
    errors = [a for a in answers if "error" in a]
    assert len(errors) == len(odd)
    assert all(e["id"] is None and e["error"]["code"] == -32600 for e in errors)
    assert answers[-1] == {"jsonrpc": "2.0", "id": 7, "result": {}}


def test_undo_refuses_to_revert_a_chmod_made_since(root: Path) -> None:
    done = patchtx.apply_patch(UPDATE, root)
    (root / "a.txt").chmod(0o755)
    with pytest.raises(PatchtxError) as caught:
        history.undo(root, done.transaction_id)
    assert caught.value.kind == "changed_since_planning" and "mode is now 755" in caught.value.message
    assert (root / "a.txt").read_text() == "ONE\n" and stat.S_IMODE((root / "a.txt").stat().st_mode) == 0o755


def test_a_roll_back_in_place_goes_only_into_the_file_rewritten(root: Path) -> None:
    """An update of a file with hard links is written in place; interrupted, its roll back writes
    the original back into that file, never into another one that took its name since."""
    from ..fsops_testing import CrashingFileSystemOps, RecordingFileSystemOps, SimulatedCrash

    probe = root.parent / "probe"
    for folder in (root, probe):
        folder.mkdir(exist_ok=True)
        (folder / "a.txt").write_text("one\n")
        os.link(folder / "a.txt", folder / "twin.txt")
    plan = patchtx.plan_patch(UPDATE, root)
    recording = RecordingFileSystemOps()
    commit(patchtx.plan_patch(UPDATE, probe), fs=recording, durable=False)
    mark = [c.index for c in recording.log if c.op == "rename" and (c.target or "").endswith(".committed")]
    with pytest.raises(SimulatedCrash):
        commit(plan, fs=CrashingFileSystemOps(crash_at=mark[0]), durable=False)
    assert (root / "twin.txt").read_text() == "ONE\n"  # written in place: both names
    # Someone replaces a.txt by a new file with the same bytes before recovery runs.
    (root / "a.txt").unlink()
    (root / "a.txt").write_text("ONE\n")
    report = recover(str(root))
    assert report.transactions[0].conflicts == ("a.txt",)
    assert (root / "a.txt").read_text() == "ONE\n"
