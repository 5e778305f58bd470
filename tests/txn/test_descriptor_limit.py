"""A 300-file, 150-folder patch under a small RLIMIT_NOFILE: the commit's descriptor caches size
themselves to the limit, so it succeeds; where even that cannot be done, it fails and rolls back
cleanly. Each run is a child process that lowers its own limit with ``resource.setrlimit``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

resource = pytest.importorskip("resource", reason="RLIMIT_NOFILE is a POSIX feature")

FOLDERS = 150

# The child: lower the limit, apply the patch (through the API, or through commit() with syncfs
# disabled so every barrier fsyncs each descriptor, or with the journal refusing hard links so
# every original is a copy held open for its barrier), and report the outcome and open fds.
CHILD = r"""
import errno, json, os, resource, sys
limit, root, variant = int(sys.argv[1]), sys.argv[2], sys.argv[3]
import patchtx
from patchtx.errors import PatchtxError
from patchtx.txn import commit
from patchtx.txn.fsops import FileSystemOps

class NoJournalLinks(FileSystemOps):
    def link(self, src_dir_fd, src, dst_dir_fd, dst):
        self.calls += 1
        raise OSError(errno.EXDEV, "Invalid cross-device link", dst)

lines = ["*** Begin Patch"]
for i in range(int(sys.argv[4])):
    lines += [f"*** Update File: d{i:03}/a.txt", "@@", "-old", "+new"]
    lines += [f"*** Add File: d{i:03}/sub/b.txt", "+added"]
patch = "\n".join(lines + ["*** End Patch"]) + "\n"
plan = patchtx.plan_patch(patch, root)
open_before = len(os.listdir("/dev/fd"))
resource.setrlimit(resource.RLIMIT_NOFILE, (limit, resource.getrlimit(resource.RLIMIT_NOFILE)[1]))
outcome = {"ok": True}
try:
    if variant == "api":
        patchtx.apply_plan(plan)
    elif variant == "no-syncfs":
        commit(plan, fs=FileSystemOps(allow_syncfs=False))
    else:
        commit(plan, fs=NoJournalLinks(allow_syncfs=False))
except PatchtxError as exc:
    outcome = {"ok": False, "kind": exc.kind, "changed": exc.changed, "message": exc.message}
outcome["leaked_fds"] = len(os.listdir("/dev/fd")) - open_before
print(json.dumps(outcome))
"""


def _workspace(root: Path) -> None:
    for i in range(FOLDERS):
        (root / f"d{i:03}").mkdir(parents=True)
        (root / f"d{i:03}" / "a.txt").write_bytes(b"old\n")


def _apply_under_limit(root: Path, limit: int, variant: str) -> dict[str, object]:
    done = subprocess.run([sys.executable, "-c", CHILD, str(limit), str(root), variant, str(FOLDERS)],
                          capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    outcome: dict[str, object] = json.loads(done.stdout)
    return outcome


def _state(root: Path) -> tuple[list[str], list[str]]:
    """Temporary files and folders in the tree (the state folder aside)."""
    temps = sorted(str(p.relative_to(root)) for p in root.rglob(".patchtx-*"))
    folders = sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_dir() and ".patchtx" not in p.parts)
    return temps, folders


@pytest.mark.parametrize("variant", ["api", "no-syncfs", "copies"])
@pytest.mark.parametrize("limit", [160, 200, 260])
def test_a_large_patch_commits_under_a_small_descriptor_limit(tmp_path: Path, limit: int, variant: str) -> None:
    root = tmp_path / "ws"
    _workspace(root)

    outcome = _apply_under_limit(root, limit, variant)

    assert outcome["ok"], outcome
    assert outcome["leaked_fds"] == 0
    assert all((root / f"d{i:03}" / "a.txt").read_bytes() == b"new\n" for i in range(FOLDERS))
    assert all((root / f"d{i:03}" / "sub" / "b.txt").read_bytes() == b"added\n" for i in range(FOLDERS))
    temps, _ = _state(root)
    assert temps == []
    journal = root / ".patchtx" / "journal"
    assert not [p.name for p in journal.iterdir() if p.name.endswith((".journal", ".committed", ".tmp"))]


def test_under_a_limit_too_small_to_commit_nothing_is_changed(tmp_path: Path) -> None:
    # 8 descriptors: the interpreter and the lock leave none to verify the files with.
    root = tmp_path / "ws"
    _workspace(root)
    before = _state(root)

    outcome = _apply_under_limit(root, 8, "api")

    assert outcome["ok"] is False and outcome["changed"] is False, outcome
    assert "EMFILE" in str(outcome["message"]) and "Nothing was changed" in str(outcome["message"])
    assert _state(root) == before  # no temporary file, no new folder
    assert all((root / f"d{i:03}" / "a.txt").read_bytes() == b"old\n" for i in range(FOLDERS))
    assert not [p for p in (root / ".patchtx" / "journal").iterdir()]


# The child: a file replaced by a rename and a file with another hard link (rewritten in place,
# after every rename). Just before that rewrite opens its file, "another thread" takes every
# descriptor the (lowered) limit leaves: the open fails with EMFILE once the tree is half-changed.
# The roll back must still run: recovery is loaded only on a failure, and an import opens files.
HOG_CHILD = r"""
import json, os, resource, sys
root = sys.argv[1]
from patchtx.errors import PatchtxError
from patchtx.model import PathTarget, Plan
from patchtx.txn import commit
from patchtx.txn.fsops import FileSystemOps

hogged = []

class DescriptorsTakenMeanwhile(FileSystemOps):
    def open_for_rewrite(self, dir_fd, name):
        while True:
            try:
                hogged.append(os.open(os.devnull, os.O_RDONLY))
            except OSError:
                break
        return super().open_for_rewrite(dir_fd, name)

plan = Plan(root=root, changes=(), targets=(
    PathTarget("a.txt", b"a1\n", b"a2\n", 0o644, 0o644),
    PathTarget("h.txt", b"h1\n", b"h2\n", 0o644, 0o644),
))
resource.setrlimit(resource.RLIMIT_NOFILE, (64, resource.getrlimit(resource.RLIMIT_NOFILE)[1]))
loaded_before = "patchtx.txn.recovery" in sys.modules
try:
    commit(plan, fs=DescriptorsTakenMeanwhile())
    outcome = {"ok": True}
except PatchtxError as exc:
    outcome = {"ok": False, "kind": exc.kind, "changed": exc.changed, "message": exc.message}
for fd in hogged:
    os.close(fd)
outcome["hogged"] = len(hogged)
outcome["recovery_loaded_before"] = loaded_before
print(json.dumps(outcome))
"""


def test_running_out_of_descriptors_half_way_still_rolls_back(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    for name, data in (("a.txt", b"a1\n"), ("h.txt", b"h1\n")):
        (root / name).write_bytes(data)
        os.chmod(root / name, 0o644)
    os.link(root / "h.txt", root / "h-link.txt")

    done = subprocess.run([sys.executable, "-c", HOG_CHILD, str(root)],
                          capture_output=True, text=True, timeout=120, check=False)

    assert done.returncode == 0, done.stderr
    outcome = json.loads(done.stdout)
    assert outcome["hogged"] > 0 and outcome["recovery_loaded_before"] is False
    assert outcome["ok"] is False and outcome["changed"] is False, outcome
    assert "EMFILE" in outcome["message"] and "Nothing was changed" in outcome["message"], outcome
    assert (root / "a.txt").read_bytes() == b"a1\n"
    assert (root / "h.txt").read_bytes() == b"h1\n" and os.path.samefile(root / "h.txt", root / "h-link.txt")
    assert not [p.name for p in (root / ".patchtx" / "journal").iterdir()]
    assert not list(root.glob(".patchtx-*"))
