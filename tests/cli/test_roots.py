"""A workspace root is never the whole disk, the home folder or a state folder of patchtx's: the
command line refuses such a root with one line saying what to pass, before it reads anything."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from patchtx.txn.roots import root_problem

ADD = "*** Begin Patch\n*** Add File: planted.txt\n+x\n*** End Patch\n"


def test_the_rule(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home = tmp_path / "home"
    (home / "project" / ".patchtx" / "journal").mkdir(parents=True)
    state = tmp_path / "state"
    (state / "inner").mkdir(parents=True)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("PATCHTX_STATE_HOME", str(state))
    assert root_problem("/") == "it is the whole disk"
    assert root_problem(str(home)) == "it is your home folder"
    assert root_problem(str(home / "project" / "..")) == "it is your home folder"  # (its real path)
    assert root_problem(str(home / "project")) is None
    for folder in (home / "project" / ".patchtx", home / "project" / ".patchtx" / "journal"):
        assert root_problem(str(folder)) == "it is patchtx's state folder .patchtx of a workspace, or inside one"
    for folder in (state, state / "inner"):
        assert root_problem(str(folder)) == f"it is patchtx's per-user state folder {state}, or inside it"
    # A folder that holds the per-user state folder is refused when a commit signs a journal
    # (tests/security/test_hostile_provenance.py), not as a root: its files may still be read.
    assert root_problem(str(tmp_path)) is None
    link = tmp_path / "disk"
    link.symlink_to("/")
    assert root_problem(str(link)) == "it is the whole disk"


def _patchtx(*args: str, cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "patchtx.cli", *args], cwd=cwd, input=ADD, capture_output=True,
                          text=True, timeout=60, env={**os.environ, **(env or {})})


@pytest.mark.parametrize("command", [["apply", "-"], ["check", "-"], ["log"], ["recover"]])
def test_the_command_line_refuses_the_whole_disk(command: list[str], tmp_path: Path) -> None:
    done = _patchtx(*command, "--root", "/", cwd=tmp_path)
    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr == ("patchtx: error [unsafe_path]: Refusing the workspace root /: it is the whole disk. "
                           "Nothing was changed. Pass --root with the project's folder.\n")
    assert not Path("/planted.txt").exists()


def test_the_home_folder_is_refused_as_the_default_root(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    done = _patchtx("apply", "-", cwd=home, env={"HOME": str(home)})  # --root . by default
    assert done.returncode == 1
    assert f"Refusing the workspace root {home}: it is your home folder." in done.stderr
    assert list(home.iterdir()) == []
    done = _patchtx("apply", "-", "--json", "--root", str(home / ".patchtx"), cwd=tmp_path)
    payload = json.loads(done.stdout)
    assert done.returncode == 1 and payload["error"]["kind"] == "unsafe_path"
    assert payload["error"]["hint"] == "Pass --root with the project's folder."
    assert _patchtx("apply", "-", "--root", str(home), cwd=tmp_path).returncode == 0  # (HOME is elsewhere)
    assert (home / "planted.txt").read_text() == "x\n"


def test_a_bind_mount_of_the_home_folder_is_the_home_folder(tmp_path: Path) -> None:
    """A bind mount of the home folder (or of /) has a real path of its own: the rule compares the
    folder itself (device and inode), not only its name. Before, `--root` of a bind mount of / was
    served as a project. (The test mounts a folder of its own, never /: a mount left behind by a
    killed test would be under a temporary folder that is later deleted recursively.)"""
    home, bind = tmp_path / "home", tmp_path / "bind"
    home.mkdir()
    bind.mkdir()
    mounted = subprocess.run(["mount", "--bind", str(home), str(bind)], capture_output=True, check=False)
    if mounted.returncode != 0:
        pytest.skip("this machine lets the tests make no bind mount")
    try:
        assert os.path.realpath(bind) != os.path.realpath(home)
        done = _patchtx("apply", "-", "--root", str(bind), cwd=tmp_path, env={"HOME": str(home)})
        assert done.returncode == 1 and f"Refusing the workspace root {bind}: it is your home folder." in done.stderr
        assert list(home.iterdir()) == []
    finally:
        subprocess.run(["umount", str(bind)], capture_output=True, check=False)


def test_a_root_whose_real_path_cannot_be_read_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    """os.path.realpath raises when a link on the way may not be read (/proc/1/root in a
    container): the root is refused with one line, not an internal_error."""
    def denied(path: str, *args: object, **kwargs: object) -> str:
        raise PermissionError(13, "Permission denied", path)

    monkeypatch.setattr("patchtx.txn.roots.os.path.realpath", denied)
    assert root_problem("/proc/1/root") == "its real path cannot be read (Permission denied)"
