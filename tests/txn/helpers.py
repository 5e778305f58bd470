"""Trees, snapshots, plans and an independent model of what a plan should do, for txn tests."""

from __future__ import annotations

import errno
import os
import re
import shutil
import stat
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from patchtx.model import PathTarget, Plan
from patchtx.txn.fsops import Call, FileSystemOps

from ..fsops_testing import CrashingFileSystemOps, SimulatedCrash

STATE_DIR = ".patchtx"


def current_umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


UMASK = current_umask()
NEW_FILE_MODE = 0o666 & ~UMASK
NEW_DIR_MODE = 0o777 & ~UMASK

# A snapshot: path -> ("dir", mode) | ("file", mode, bytes) | ("symlink", target) | ("special", type, mode)
Entry = tuple[object, ...]
Snapshot = dict[str, Entry]


class Dir:
    """Marker in a tree spec: an (empty unless given children) directory with this mode."""

    def __init__(self, mode: int = NEW_DIR_MODE) -> None:
        self.mode = mode


# A tree spec: path -> bytes | (bytes, mode) | Dir
TreeSpec = Mapping[str, "bytes | tuple[bytes, int] | Dir"]


def make_tree(root: Path, spec: TreeSpec) -> None:
    """Create ``root`` afresh holding exactly ``spec`` (parents get NEW_DIR_MODE)."""
    if root.exists():
        shutil.rmtree(root)
    root.mkdir(parents=True)
    for path, value in sorted(spec.items()):
        full = root / path
        full.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(value, Dir):
            full.mkdir(exist_ok=True)
            os.chmod(full, value.mode)
            continue
        data, mode = value if isinstance(value, tuple) else (value, 0o644)
        full.write_bytes(data)
        os.chmod(full, mode)


def snapshot(root: Path) -> Snapshot:
    """Everything under ``root`` except the state folder."""
    out: Snapshot = {}
    for dirpath, dirnames, filenames in os.walk(root):
        rel_dir = os.path.relpath(dirpath, root)
        if rel_dir == ".":
            rel_dir = ""
            if STATE_DIR in dirnames:
                dirnames.remove(STATE_DIR)
        for name in dirnames + filenames:
            rel = f"{rel_dir}/{name}" if rel_dir else name
            st = os.lstat(os.path.join(dirpath, name))
            if stat.S_ISLNK(st.st_mode):
                out[rel] = ("symlink", os.readlink(os.path.join(dirpath, name)))
            elif stat.S_ISDIR(st.st_mode):
                out[rel] = ("dir", stat.S_IMODE(st.st_mode))
            elif not stat.S_ISREG(st.st_mode):  # a FIFO, a socket: never opened
                out[rel] = ("special", stat.S_IFMT(st.st_mode), stat.S_IMODE(st.st_mode))
            else:
                out[rel] = ("file", stat.S_IMODE(st.st_mode), Path(dirpath, name).read_bytes())
    return out


_INTERNAL = re.compile(r"^\.patchtx-.*\.(tmp|restore)$|^\.gitignore\..*\.tmp$")


_KEPT_JOURNAL = re.compile(r"^(?P<txn>[^.]+)\.kept-(0|[1-9][0-9]*)-(0|[1-9][0-9]*)$")
_BEFORE_IMAGE = re.compile(r"^(?P<txn>[^.]+)\.[0-9]+\.before$")


def leftovers(root: Path) -> list[str]:
    """Temporary files anywhere, and anything in the journal folder but undo-history entries (kept
    journals and their before-images)."""
    found = []
    for dirpath, _dirnames, filenames in os.walk(root):
        for name in filenames:
            if _INTERNAL.match(name):
                found.append(os.path.relpath(os.path.join(dirpath, name), root))
    journal = root / STATE_DIR / "journal"
    if journal.is_dir():
        names = os.listdir(journal)
        kept = {m["txn"] for name in names if (m := _KEPT_JOURNAL.match(name))}
        found += [
            f"{STATE_DIR}/journal/{name}"
            for name in names
            if not _KEPT_JOURNAL.match(name) and not ((m := _BEFORE_IMAGE.match(name)) and m["txn"] in kept)
        ]
    return sorted(found)


@dataclass(frozen=True)
class Scenario:
    """A tree and the changes to make to it: path -> new bytes (None: delete), new modes."""

    name: str
    tree: TreeSpec
    changes: Mapping[str, bytes | None]
    modes: Mapping[str, int] | None = None
    remove_dirs: tuple[str, ...] | None = None
    """None: computed like the planner does (directories the deletions empty)."""


def build_plan(root: Path, scenario: Scenario) -> Plan:
    """A Plan as the planner would make it, from the tree as it is on disk now."""
    targets = []
    modes = scenario.modes or {}
    for path in sorted(scenario.changes):
        full = root / path
        before = full.read_bytes() if full.is_file() else None
        before_mode = stat.S_IMODE(full.stat().st_mode) if before is not None else None
        after = scenario.changes[path]
        after_mode = modes.get(path, before_mode) if after is not None else None
        targets.append(PathTarget(path, before, after, before_mode, after_mode))
    remove_dirs = scenario.remove_dirs
    if remove_dirs is None:
        remove_dirs = emptied_dirs(snapshot(root), scenario.changes)
    return Plan(root=str(root), changes=(), targets=tuple(targets), remove_dirs=remove_dirs)


def without_identities(plan: Plan) -> Plan:
    """``plan`` as if hand-built: no file's inode recorded. For a plan made once by the planner and
    committed again over trees rebuilt anew (new inodes, the same bytes), as crash tests do: the
    commit otherwise refuses each rebuilt file as another file (``PathTarget.before_identity``)."""
    from patchtx._record import replace

    return replace(plan, targets=tuple(replace(t, before_identity=None) for t in plan.targets))


def emptied_dirs(before: Snapshot, changes: Mapping[str, bytes | None]) -> tuple[str, ...]:
    deleted = {p for p, v in changes.items() if v is None}
    after_files = {p for p, e in before.items() if e[0] != "dir" and p not in deleted}
    after_files |= {p for p, v in changes.items() if v is not None}
    candidates = {_parent(p) for p in deleted}
    for path in list(candidates):
        while path:
            candidates.add(path)
            path = _parent(path)
    candidates.discard("")
    emptied = []
    for folder in candidates:
        prefix = folder + "/"
        if not any(p.startswith(prefix) for p in after_files) and not any(
            p.startswith(prefix) and e[0] == "dir" and p not in candidates for p, e in before.items()
        ):
            emptied.append(folder)
    return tuple(sorted(emptied, key=lambda d: (-d.count("/"), d)))


def expected_after(before: Snapshot, plan: Plan) -> Snapshot:
    """The model: what the tree must look like once ``plan`` is committed."""
    after = dict(before)
    for t in plan.targets:
        if t.after is None:
            after.pop(t.path, None)
            continue
        if t.after_mode is not None:
            mode = t.after_mode
        elif t.before_mode is not None:
            mode = t.before_mode
        else:
            mode = NEW_FILE_MODE
        after[t.path] = ("file", mode, t.after)
        parent = _parent(t.path)
        while parent and parent not in after:
            after[parent] = ("dir", NEW_DIR_MODE)
            parent = _parent(parent)
    for folder in plan.remove_dirs:  # deepest first
        prefix = folder + "/"
        if folder in after and not any(p.startswith(prefix) for p in after):
            del after[folder]
    return after


def _parent(path: str) -> str:
    return path.rpartition("/")[0]


def describe_difference(actual: Snapshot, *expected: Snapshot) -> str:
    lines = []
    for i, exp in enumerate(expected):
        diff = sorted((p, actual.get(p), exp.get(p)) for p in set(actual) | set(exp) if actual.get(p) != exp.get(p))
        lines.append(f"vs expected #{i}: " + "; ".join(f"{p}: {a!r} != {e!r}" for p, a, e in diff[:6]))
    return "\n".join(lines)


def crash_in_child(run: Callable[[FileSystemOps], object], fs: CrashingFileSystemOps) -> int:
    """Fork; the child calls ``run(fs)`` where ``fs`` os._exit()s before its crash call.

    Returns the child's exit code: ``fs.exit_code`` if it crashed, 0 if it finished without
    reaching the crash call, 3 if it raised.
    """
    assert fs.how == "exit"
    pid = os.fork()
    if pid == 0:  # pragma: no cover - runs in the child
        code = 0
        try:
            run(fs)
        except BaseException:
            code = 3
        os._exit(code)
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status)


def crash_in_process(run: Callable[[FileSystemOps], object], crash_at: int | CrashingFileSystemOps) -> bool:
    """Call ``run(fs)`` with a fs that raises SimulatedCrash before call ``crash_at``.

    True if it crashed, False if it finished first.
    """
    fs = crash_at if isinstance(crash_at, CrashingFileSystemOps) else CrashingFileSystemOps(crash_at)
    try:
        run(fs)
    except SimulatedCrash:
        return True
    return False


def index_of(log: Iterable[object], predicate: object) -> int:
    assert callable(predicate)
    for call in log:
        if predicate(call):
            return int(call.index)  # type: ignore[attr-defined]
    raise AssertionError("no such call")


_FS = TypeVar("_FS", bound=FileSystemOps)


class _Quirks:
    """Mixin for a FileSystemOps class: optionally skip real syncs, or refuse journal links."""

    real_sync = True
    journal_links = True

    def _perform(self, call: Call, action: Callable[[], Any]) -> Any:
        if not self.real_sync and call.op in ("fsync", "syncfs"):
            action = _do_nothing
        elif not self.journal_links and call.op == "link" and (call.target or "").startswith(".patchtx/journal/"):

            def action() -> None:
                raise OSError(errno.EXDEV, "Invalid cross-device link", call.target)

        return super()._perform(call, action)  # type: ignore[misc]


def _do_nothing() -> None:
    return None


def variant(base: type[_FS], *, real_sync: bool = True, journal_links: bool = True) -> type[_FS]:
    """``base`` whose fsync/syncfs calls are still numbered but do nothing (``real_sync=False``:
    for process-crash tests, where a sync changes nothing a surviving kernel shows, and which it
    would only slow down), or whose journal folder refuses hard links like another filesystem
    would (``journal_links=False``: forces the copy fallback)."""
    name = f"{base.__name__}{'' if real_sync else 'NoSync'}{'' if journal_links else 'NoLinks'}"
    return type(name, (_Quirks, base), {"real_sync": real_sync, "journal_links": journal_links})


def crash_at_every_call(fresh: Callable[[Path], Plan], scratch: Path) -> tuple[Snapshot, Snapshot]:
    """Commit the plan ``fresh`` makes in a new tree, crashing it at each filesystem call in turn
    (one tree per call, in ``scratch``), then recover: every tree ends as before or as after,
    nothing left behind, both seen (crashes before and after the commit point). Returns the
    (before, after) snapshots of an uncrashed run, for the caller's own checks of ``after``."""
    from patchtx.txn import commit, recover

    from ..fsops_testing import RecordingFileSystemOps

    reference = scratch / "reference"
    plan = fresh(reference)
    before = snapshot(reference)
    recording = variant(RecordingFileSystemOps, real_sync=False)()
    commit(plan, fs=recording)
    after = snapshot(reference)
    crashing = variant(CrashingFileSystemOps, real_sync=False)
    outcomes = set()
    for crash_at in range(1, len(recording.log) + 1):
        root = scratch / f"crash-{crash_at}"
        plan = fresh(root)
        assert crash_in_process(lambda fs: commit(plan, fs=fs), crashing(crash_at))  # noqa: B023
        recover(str(root))
        state = snapshot(root)
        assert state in (before, after), f"crash before call {crash_at}: {state}"
        outcomes.add(state == after)
        assert leftovers(root) == []
    assert outcomes == {False, True}
    return before, after
