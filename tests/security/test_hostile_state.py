"""A workspace is untrusted input: journals and undo-history entries planted by a repository.

Each attack of issue 15 as a repository author would commit it (checksum recomputed, since it is a
plain SHA-256): recovery, apply, the CLI, MCP and undo must refuse it with a clear error, write and
delete nothing, and act on it only when the user explicitly asks (``recover --trust-foreign``), and
even then only within the rules of a patch's paths.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import patchtx
from patchtx import history
from patchtx.agents.tool_call import apply_patch_call, log_call
from patchtx.errors import JournalError, PatchtxError, UntrustedStateError
from patchtx.txn import commit, recover
from patchtx.txn.provenance import sign

from ..fsops_testing import RecordingFileSystemOps
from .test_boundary import snapshot

TXN = "20260101T000000-0000abcd"
HOOK = b"#!/bin/sh\ntouch /tmp/pwned-by-patchtx-test\n"
PATCH = "*** Begin Patch\n*** Add File: new.txt\n+hello\n*** End Patch\n"


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def entry(path: str, *, before: bytes | None = None, after: bytes | None = None, index: int = 0,
          temp: str | None = None, backup: str | None = None) -> dict[str, Any]:
    return {
        "path": path,
        "before_sha256": None if before is None else sha(before),
        "after_sha256": None if after is None else sha(after),
        "before_mode": None if before is None else 0o755,
        "after_mode": None if after is None else 0o644,
        "owner": None if before is None else [os.getuid(), os.getgid()],
        "backup": backup if backup is not None else (None if before is None else f"{TXN}.{index}.before"),
        "backup_kind": None if before is None else "copy",
        "temp": temp,
    }


def forge(root: Path, entries: list[dict[str, Any]], *, backups: dict[str, bytes] | None = None,
          removed_dirs: list[dict[str, Any]] | None = None, history: dict[str, Any] | None = None,
          signed: bool = False, name: str | None = None) -> Path:
    """Plant a journal as a repository would commit it; ``signed``: as if this user's patchtx had
    written it (which an attacker cannot do)."""
    journal_dir = root / ".patchtx" / "journal"
    journal_dir.mkdir(parents=True, exist_ok=True)
    (root / ".patchtx" / ".gitignore").write_text("*\n")
    body: dict[str, Any] = {"format": "patchtx-journal", "version": 1, "transaction": TXN, "entries": entries,
                            "created_dirs": [], "removed_dirs": removed_dirs or [], "intent": None}
    if history is not None:
        body["history"] = history
    canonical = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=True).encode()
    body["checksum"] = sha(canonical)
    if signed:
        body["mac"] = sign(canonical, os.path.realpath(root))
    path = journal_dir / (name or f"{TXN}.journal")
    path.write_text(json.dumps(body))
    for backup, data in (backups or {}).items():
        (journal_dir / backup).write_bytes(data)
        (journal_dir / backup).chmod(0o755)
    return path


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    (root / ".git" / "hooks").mkdir(parents=True)
    (root / ".git" / "config").write_text("[core]\n")
    (root / ".git").chmod(0o755)
    (root / "src").mkdir()
    (root / "src" / "app.py").write_text("print('hi')\n")
    (root / "src" / "keep.txt").write_text("precious\n")
    return root


def outside_state(root: Path) -> dict[str, bytes | str]:
    """Everything but the state folder (which the refusal leaves as found, checked separately)."""
    return {k: v for k, v in snapshot(root).items() if not k.startswith(".patchtx")}


def without_lock(tree: dict[str, bytes | str]) -> dict[str, bytes | str]:
    """The lock file is created to look at the journal folder under the lock: that is all."""
    return {k: v for k, v in tree.items() if k not in ("lock", ".patchtx/lock")}


def all_refuse(root: Path, kind: str) -> None:
    """recover, apply (API, CLI apply_patch, MCP tool call) all refuse with ``kind``; nothing changes."""
    before, state = without_lock(snapshot(root)), snapshot(root / ".patchtx")
    with pytest.raises(PatchtxError) as caught:
        recover(str(root))
    assert caught.value.kind == kind
    with pytest.raises(PatchtxError) as caught:
        patchtx.apply_patch(PATCH, root)
    assert caught.value.kind == kind
    assert "Nothing was changed" in caught.value.message
    run = subprocess.run([sys.executable, "-m", "patchtx.cli", "apply", "--json", "-"], input=PATCH, cwd=root,
                         capture_output=True, text=True, check=False)
    assert run.returncode == 1 and "Traceback" not in run.stderr
    assert json.loads(run.stdout)["error"]["kind"] == kind
    outcome = apply_patch_call(PATCH, str(root))
    assert not outcome.ok and outcome.payload["error"]["kind"] == kind
    assert without_lock(snapshot(root)) == before
    assert without_lock(snapshot(root / ".patchtx")) == state
    assert not Path("/tmp/pwned-by-patchtx-test").exists()


def test_forged_journal_planting_a_git_hook_is_refused(repo: Path) -> None:
    forge(repo, [entry(".git/hooks/pre-commit", before=HOOK)], backups={f"{TXN}.0.before": HOOK})
    all_refuse(repo, "journal_damaged")
    assert not (repo / ".git/hooks/pre-commit").exists()
    # Even an explicit --trust-foreign applies the path rules.
    with pytest.raises(JournalError, match=r"\.git folder"):
        recover(str(repo), trust_foreign=True)
    assert not (repo / ".git/hooks/pre-commit").exists()


def test_forged_journal_with_a_harmless_looking_path_is_untrusted(repo: Path) -> None:
    forge(repo, [entry("src/app.py", before=HOOK)], backups={f"{TXN}.0.before": HOOK})
    all_refuse(repo, "untrusted_state")
    with pytest.raises(UntrustedStateError) as caught:
        recover(str(repo))
    message = caught.value.message
    assert "not written by this user's patchtx" in message and "src/app.py" in message
    assert "--trust-foreign" in message and f"cat .patchtx/journal/{TXN}.journal" in message
    assert caught.value.details["paths"] == ["src/app.py"]
    assert (repo / "src/app.py").read_text() == "print('hi')\n"


def test_trust_foreign_rolls_back_a_foreign_journal_within_the_rules(repo: Path) -> None:
    forge(repo, [entry("src/app.py", before=b"old\n", after=b"print('hi')\n")], backups={f"{TXN}.0.before": b"old\n"})
    report = recover(str(repo), trust_foreign=True)
    assert [t.outcome for t in report.transactions] == ["rolled_back"]
    assert (repo / "src/app.py").read_bytes() == b"old\n"
    assert list((repo / ".patchtx/journal").iterdir()) == []


def test_temp_field_cannot_delete_git_config(repo: Path) -> None:
    forge(repo, [entry(".git/x", after=b"x", temp="config")])
    all_refuse(repo, "journal_damaged")
    assert (repo / ".git/config").read_text() == "[core]\n"


@pytest.mark.parametrize("signed", [False, True])
def test_temp_field_must_be_patchtx_naming(repo: Path, signed: bool) -> None:
    # Signed or not, a temporary that is not ``.patchtx-<txn>-<n>.tmp`` is never deleted.
    forge(repo, [entry("src/app.py", after=b"x", temp="keep.txt")], signed=signed)
    all_refuse(repo, "journal_damaged")
    with pytest.raises(JournalError, match="temporary name 'keep.txt'"):
        recover(str(repo), trust_foreign=True)
    assert (repo / "src/keep.txt").read_text() == "precious\n"


def test_backup_field_must_be_patchtx_naming(repo: Path) -> None:
    forge(repo, [entry("src/app.py", before=HOOK, backup="../../.git/config")], signed=True)
    all_refuse(repo, "journal_damaged")


def test_removed_dirs_cannot_remode_git(repo: Path) -> None:
    forge(repo, [], removed_dirs=[{"path": ".git", "mode": 0o777, "owner": [os.getuid(), os.getgid()]}])
    all_refuse(repo, "journal_damaged")
    with pytest.raises(JournalError):
        recover(str(repo), trust_foreign=True)
    assert stat.S_IMODE((repo / ".git").stat().st_mode) == 0o755


def test_removed_dirs_of_a_foreign_journal_remode_nothing(repo: Path) -> None:
    (repo / "src").chmod(0o755)
    forge(repo, [], removed_dirs=[{"path": "src", "mode": 0o777, "owner": [os.getuid(), os.getgid()]}])
    all_refuse(repo, "untrusted_state")
    assert stat.S_IMODE((repo / "src").stat().st_mode) == 0o755


def _history(size: int) -> dict[str, Any]:
    return {"sequence": 1, "bytes": size, "committed_at": "2026-01-01T00:00:00Z", "summary": "A 0, M 0, D 1, R 0",
            "counts": {"A": 0, "M": 0, "D": 1, "R": 0}, "undoes": None, "sizes": [size], "moves": []}


@pytest.mark.parametrize(("path", "kind"), [(".git/hooks/pre-push", "nothing_to_undo"),
                                            ("hooks/pre-push", "untrusted_state")])
def test_forged_history_entry_cannot_be_undone(repo: Path, path: str, kind: str) -> None:
    """Never listed; named by its id, refused (as untrusted, or unknown: a path in .git makes the
    entry damaged whoever wrote it)."""
    forge(repo, [entry(path, before=HOOK)], backups={f"{TXN}.0.before": HOOK}, history=_history(len(HOOK)),
          name=f"{TXN}.kept-1-{len(HOOK)}")
    before = outside_state(repo)
    assert history.log(repo) == []  # never listed
    with pytest.raises(PatchtxError) as caught:
        history.undo(repo)
    assert caught.value.kind == "nothing_to_undo"
    with pytest.raises(PatchtxError) as caught:
        history.undo(repo, TXN)
    assert caught.value.kind == kind
    assert kind != "untrusted_state" or TXN in caught.value.message
    run = subprocess.run([sys.executable, "-m", "patchtx.cli", "undo", "--json"], cwd=repo,
                         capture_output=True, text=True, check=False)
    assert run.returncode == 1 and "Traceback" not in run.stderr
    assert json.loads(run.stdout)["error"]["kind"] == "nothing_to_undo"
    run = subprocess.run([sys.executable, "-m", "patchtx.cli", "log", "--json"], cwd=repo,
                         capture_output=True, text=True, check=False)
    listed = json.loads(run.stdout)
    assert listed["transactions"] == []
    assert listed.get("untrusted", []) == ([] if kind == "nothing_to_undo" else [f"{TXN}.kept-1-{len(HOOK)}"])
    logged = log_call(str(repo))  # the MCP log tool says the same
    assert logged.payload["transactions"] == [] and logged.payload.get("untrusted", []) == listed.get("untrusted", [])
    assert ("never undone" in logged.text) is bool(listed.get("untrusted"))
    # A patch still applies: a kept entry is not an interrupted transaction.
    patchtx.apply_patch(PATCH, repo)
    assert (repo / "new.txt").read_text() == "hello\n"
    assert not (repo / path).exists()
    assert {k: v for k, v in outside_state(repo).items() if k != "new.txt"} == before


def _interrupt_a_transaction(repo: Path) -> None:
    """Leave a real (signed) journal of an update of src/app.py, crashed after its rename."""
    from ..fsops_testing import CrashingFileSystemOps, SimulatedCrash

    update = "*** Begin Patch\n*** Update File: src/app.py\n@@\n-print('hi')\n+print('bye')\n*** End Patch\n"
    plan = patchtx.plan_patch(update, repo)
    (repo / ".patchtx/journal").mkdir(parents=True, exist_ok=True)  # as the crashing run will find it
    (repo / ".patchtx/.gitignore").write_text("*\n")
    recording = RecordingFileSystemOps()
    commit(plan, fs=recording, durable=False)
    (repo / "src/app.py").write_text("print('hi')\n")
    for path in (repo / ".patchtx/journal").iterdir():
        path.unlink()
    plan = patchtx.plan_patch(update, repo)  # of the file now there (the commit checks its inode)
    mark = [c.index for c in recording.log if c.op == "rename" and (c.target or "").endswith(".committed")]
    with pytest.raises(SimulatedCrash):
        commit(plan, fs=CrashingFileSystemOps(crash_at=mark[0]), durable=False)
    assert (repo / "src/app.py").read_text() == "print('bye')\n"  # half-way: recovery must roll back


def test_a_real_interrupted_transaction_is_recovered_and_reported(repo: Path) -> None:
    """The result of the next patch says that recovery ran first (API, JSON, text, MCP, CLI)."""
    from patchtx.result import human_report, result_json

    _interrupt_a_transaction(repo)
    result = patchtx.apply_patch(PATCH, repo)
    assert (repo / "src/app.py").read_text() == "print('hi')\n"
    assert result.recovered and result.recovery is not None
    assert result_json(result)["recovered"][0]["outcome"] == "rolled_back"
    assert human_report(result).startswith("Before applying, rolled back interrupted transaction")

    _interrupt_a_transaction(repo)
    outcome = apply_patch_call(PATCH.replace("new.txt", "new2.txt"), str(repo))
    assert outcome.ok and list(outcome.payload["recovered"][0]["restored"]) == ["src/app.py"]
    assert "Before applying, rolled back" in outcome.text

    _interrupt_a_transaction(repo)
    run = subprocess.run([sys.executable, "-m", "patchtx.cli", "apply", "--json", "-"],
                         input=PATCH.replace("new.txt", "new3.txt"), cwd=repo, capture_output=True, text=True,
                         check=False)
    assert run.returncode == 0 and json.loads(run.stdout)["recovered"][0]["outcome"] == "rolled_back"
    assert (repo / "src/app.py").read_text() == "print('hi')\n"

    _interrupt_a_transaction(repo)  # even the quietest output says so
    run = subprocess.run([sys.executable, "-m", "patchtx.cli", "apply", "-q", "-"],
                         input=PATCH.replace("new.txt", "new4.txt"), cwd=repo, capture_output=True, text=True,
                         check=False)
    assert run.returncode == 0 and run.stdout.startswith("Before applying, rolled back interrupted transaction")
    assert run.stdout.endswith("Applied: A 1, M 0, D 0, R 0\n")


@pytest.mark.parametrize("message", [b"", b"journal", b"x" * 100_000])
def test_signature_is_standard_hmac_sha256(message: bytes) -> None:
    import hmac

    from patchtx.txn.provenance import user_secret, verify

    workspace = "/some/workspace"
    mac = hmac.new(user_secret(), b"patchtx journal 2\0" + workspace.encode() + b"\0" + message, "sha256").hexdigest()
    assert sign(message, workspace) == mac and verify(message, mac, workspace)
    assert not verify(message, mac[:-1] + ("0" if mac[-1] != "0" else "1"), workspace)
    assert not verify(message, None, workspace) and not verify(message, mac, workspace + "/other")


def test_secret_is_private_and_outside_the_workspace(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from patchtx.txn import provenance

    home = tmp_path / "state"
    monkeypatch.setenv("PATCHTX_STATE_HOME", str(home))
    secret = provenance.user_secret()
    path = home / "secret"
    assert len(secret) == 32 and bytes.fromhex(path.read_text()) == secret
    assert stat.S_IMODE(path.stat().st_mode) == 0o600 and stat.S_IMODE(home.stat().st_mode) == 0o700
    # Another user's state home, or a secret others may read, is refused, never used.
    provenance._cache.clear()
    path.chmod(0o644)
    with pytest.raises(PatchtxError, match="others may read or write it"):
        provenance.user_secret()
    provenance._cache.clear()


# -- the state folder itself ---------------------------------------------------------------------


def _tamper(root: Path, outside: Path, how: str) -> None:
    state = root / ".patchtx"
    if how == "state folder is a symlink":
        state.symlink_to(outside, target_is_directory=True)
        return
    (state / "journal").mkdir(parents=True)
    (state / ".gitignore").write_text("*\n")
    if how == "lock is a symlink":
        (state / "lock").symlink_to(outside / "lock")
    elif how == "lock is a dangling symlink":
        (state / "lock").symlink_to(outside / "missing" / "lock")
    elif how == "lock is a folder":
        (state / "lock").mkdir()
    elif how == "lock is a FIFO":
        os.mkfifo(state / "lock")
    elif how == "journal folder is a symlink":
        (state / "journal").rmdir()
        (state / "journal").symlink_to(outside, target_is_directory=True)
    elif how == "gitignore is a symlink":
        (state / ".gitignore").unlink()
        (state / ".gitignore").symlink_to(outside / "gitignore")
    else:
        raise AssertionError(how)


TAMPERING = ["state folder is a symlink", "lock is a symlink", "lock is a dangling symlink", "lock is a folder",
             "lock is a FIFO", "journal folder is a symlink", "gitignore is a symlink"]


@pytest.mark.parametrize("how", TAMPERING)
def test_a_tampered_state_folder_is_a_clear_error(tmp_path: Path, how: str) -> None:
    root, outside = tmp_path / "root", tmp_path / "outside"
    root.mkdir()
    outside.mkdir()
    (root / "a.txt").write_text("a\n")
    _tamper(root, outside, how)
    before = snapshot(root)
    with pytest.raises(PatchtxError) as caught:
        patchtx.apply_patch(PATCH, root)
    assert caught.value.kind in ("unsafe_state_folder", "unsafe_path")
    assert "Nothing was changed" in caught.value.message
    with pytest.raises(PatchtxError):
        recover(str(root))
    run = subprocess.run([sys.executable, "-m", "patchtx.cli", "apply", "--json", "-"], input=PATCH, cwd=root,
                         capture_output=True, text=True, check=False, timeout=60)
    assert run.returncode == 1 and "Traceback" not in run.stderr
    assert json.loads(run.stdout)["error"]["kind"] == caught.value.kind
    run = subprocess.run([sys.executable, "-m", "patchtx.cli", "log"], cwd=root, capture_output=True, text=True,
                         check=False, timeout=60)
    assert "Traceback" not in run.stderr
    assert snapshot(root) == before
    assert list(outside.iterdir()) == []  # nothing created outside the root


@pytest.mark.skipif(os.geteuid() != 0, reason="giving a folder to another user needs root")
def test_a_state_folder_owned_by_another_user_is_refused(tmp_path: Path) -> None:
    root = tmp_path / "root"
    (root / ".patchtx" / "journal").mkdir(parents=True)
    os.chown(root / ".patchtx", 54321, 54321)
    with pytest.raises(PatchtxError, match="belongs to user id 54321") as caught:
        patchtx.apply_patch(PATCH, root)
    assert caught.value.kind == "unsafe_state_folder"
    assert not (root / "new.txt").exists()


def test_swapping_the_state_folder_for_a_symlink_never_escapes(tmp_path: Path) -> None:
    """A loop swaps .patchtx for a symlink to a folder outside while patches are applied: each
    apply succeeds or fails with a PatchtxError, and nothing ever appears outside the root."""
    import threading

    root, outside = tmp_path / "root", tmp_path / "outside"
    root.mkdir()
    outside.mkdir()
    patchtx.apply_patch(PATCH, root)  # creates the state folder
    state, parked, link = root / ".patchtx", root / "parked", root / "link"
    link.symlink_to(outside, target_is_directory=True)
    stop = threading.Event()

    def swap() -> None:
        while not stop.is_set():
            try:
                os.rename(state, parked)
                os.rename(link, state)
                os.rename(state, link)
                os.rename(parked, state)
            except OSError:
                pass

    swapper = threading.Thread(target=swap)
    swapper.start()
    outcomes = set()
    try:
        for index in range(150):
            patch = f"*** Begin Patch\n*** Add File: f{index}.txt\n+{index}\n*** End Patch\n"
            try:
                patchtx.apply_patch(patch, root, durable=False)
                outcomes.add("applied")
            except PatchtxError as exc:
                outcomes.add(exc.kind)
    finally:
        stop.set()
        swapper.join()
    assert list(outside.iterdir()) == []
    assert outcomes <= {"applied", "unsafe_state_folder", "unsafe_path", "io_error"}
