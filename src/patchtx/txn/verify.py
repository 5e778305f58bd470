"""The verify step: the host's check command, run inside the transaction that wrote the change.

``patchtx apply --verify CMD`` (``verify=`` in the library, ``patchtx mcp --verify CMD`` for a
host; a model can never pass a command) commits as usual up to the point where every new file is in
place and durable, and the journal is still uncommitted (docs/guarantees.md, step 6 done, step 7
not yet). Then ``/bin/sh -c CMD`` runs in the workspace root, with the workspace lock held and a
time limit. The change is kept (the journal is marked committed) only if CMD exits 0 and left every
file the patch wrote as the patch wrote it; otherwise the commit rolls back exactly as any failed
commit does and raises ``VerifyFailedError`` (kind ``verify_failed``) with CMD's exit status and
the end of its output. A crash while CMD runs leaves an uncommitted journal: recovery rolls back.
What CMD does to the workspace, ``.patchtx`` included, cannot undo that roll back: the commit keeps a
copy of the journal outside the workspace while CMD runs (``txn.escrow``), puts back what CMD deleted
of the journal folder before settling, and puts every touched path back by kind (docs/guarantees.md,
section 11).

What CMD gets: the root as its working directory; standard input from /dev/null; standard output
and error into one pipe that patchtx keeps the end of (nothing reaches patchtx's own output, which
under ``patchtx mcp`` is the protocol); no other descriptor of patchtx's (the lock's among them);
its own session and process group, which is killed (KILL) at the time limit and once CMD exits
(what it left running in the background would otherwise outlive the check that started it); on
Linux, the parent-death signal, so that CMD's process group dies with patchtx (a process CMD starts
in a session of its own outlives it); and ``PATCHTX_VERIFYING`` set to the root: a patchtx that CMD runs on the
same workspace fails at once with a clear error instead of waiting for the lock its parent holds.
"""

from __future__ import annotations

import ctypes
import os
import select
import signal
import stat
import subprocess
import sys
import time
from typing import TYPE_CHECKING

from .._record import record, replace
from ..errors import LockTimeoutError, UnsafePathError, VerifyFailedError

if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from ..cancel import Cancellation
    from ..model import Plan

    Progress = Callable[[str, int, int], None]  # (txn.commit's: its abort step imports this module)
    from .dirs import DirectoryHandles
    from .fsops import FileSystemOps

VERIFYING_ENV = "PATCHTX_VERIFYING"
"""Set to the workspace root in the verify command's environment."""
TAIL_LINES = 40
TAIL_BYTES = 8192
"""The end of the command's output that is kept and reported (the rest is read and dropped)."""
_POLL = 0.05
_GUARD = 'trap "kill -KILL 0" TERM HUP; /bin/sh -c "$1" & wait $!'
"""The shell that runs the command (``$1``) in the background and waits for it: told by the
parent-death signal (TERM) that patchtx died, it kills its whole process group, the command's
descendants included (the parent-death signal reaches one process only)."""


@record
class VerifyOutcome:
    """What the verify command did."""

    command: str
    status: int | None
    """Exit status (0: passed); None if it was killed (time limit, or a signal: see ``signal``)."""
    signal: int | None = None
    """The signal that ended it, if one did."""
    timed_out: bool = False
    seconds: float = 0.0
    output_tail: str = ""
    """The last lines of its standard output and error, interleaved as written."""
    changed: tuple[str, ...] = ()
    """Files the patch wrote (or deleted) that the command changed: the change is then not kept."""
    state_restored: tuple[str, ...] = ()
    """Files of patchtx's state folder the command deleted or changed (``git clean -x``), put back
    from patchtx's own copy before the outcome was settled (the undo history from before the
    command is lost with a deleted journal folder)."""

    @property
    def passed(self) -> bool:
        return self.status == 0 and not self.changed

    def to_json(self) -> dict[str, Any]:
        return {"command": self.command, "passed": self.passed, "status": self.status,
                "signal": self.signal, "timed_out": self.timed_out, "seconds": round(self.seconds, 3),
                "output_tail": self.output_tail, "changed": list(self.changed),
                **({"state_restored": list(self.state_restored)} if self.state_restored else {})}

    @property
    def verdict(self) -> str:
        """``exited with status 1``, ``was killed by signal 9``, ``ran past its time limit of 60 s``."""
        if self.timed_out:
            return "ran past its time limit and was stopped"
        if self.signal is not None:
            return f"was killed by signal {self.signal}"
        return f"exited with status {self.status}"


class Verifier:
    """The commit's check (``txn.commit(check=...)``): runs the command, compares what it left,
    and raises ``VerifyFailedError`` to roll back. ``outcome`` holds what happened, for the
    result, whichever way it went."""

    def __init__(self, command: str, timeout: float, *, progress: Progress | None = None,
                 cancel: Cancellation | None = None) -> None:
        self.command = command
        self.timeout = timeout
        self.progress = progress
        self.cancel = cancel
        self.outcome: VerifyOutcome | None = None

    def __call__(self, fs: FileSystemOps, dirs: DirectoryHandles, plan: Plan) -> None:
        outcome = run_command(self.command, plan.root, self.timeout, progress=self.progress, cancel=self.cancel)
        dirs.close_all()  # the command may have replaced any folder: each is looked up anew
        changed = changed_by_check(fs, dirs, plan)
        if changed:
            outcome = replace(outcome, changed=changed)
        self.outcome = outcome
        if not outcome.passed:
            raise verify_failed(outcome)


def verify_failed(outcome: VerifyOutcome, left: frozenset[str] = frozenset()) -> VerifyFailedError:
    """The error of a check that did not pass. ``left``: paths the roll back left in place (what the
    check made of a file the patch added is not patchtx's to delete): not said to be put back."""
    put_back = [path for path in outcome.changed if path not in left]
    if outcome.status == 0:
        what = (f"The check `{outcome.command}` passed but changed {', '.join(outcome.changed)}, which the"
                " patch wrote: a verify command must leave the patched files as they are, so the change"
                " was rolled back")
        if put_back == list(outcome.changed):
            what += ", " + ("that file" if len(outcome.changed) == 1 else "those files") + " included."
        else:
            what += (", " + ", ".join(put_back) + " included.") if put_back else "."
        hint = "Run formatters or generators before applying, and verify with a command that only checks."
    else:
        what = (f"The check `{outcome.command}` {outcome.verdict} after {outcome.seconds:.1f} s: the change"
                " was rolled back.")
        if outcome.changed:
            what += " It also changed " + ", ".join(outcome.changed) + ", which the patch wrote"
            if put_back == list(outcome.changed):
                what += ": put back as they were before the patch too."
            else:
                what += (": " + ", ".join(put_back) + " put back as before the patch too.") if put_back else "."
        hint = "Fix the patch (or the check) and apply again."
    if outcome.output_tail:
        hint += " The check's output ended with:\n" + outcome.output_tail.rstrip("\n")
    else:
        hint += " The check printed nothing."
    return VerifyFailedError(what, hint=hint, details={"verify": outcome.to_json()})


def run_command(command: str, root: str, timeout: float, *, progress: Progress | None = None,
                cancel: Cancellation | None = None) -> VerifyOutcome:
    """Run ``/bin/sh -c command`` in ``root`` as described above; never raises for what the
    command does (a shell that cannot start is an OSError). ``progress`` is told the seconds it has
    run (phase "verifying", out of ``timeout``); a ``cancel`` requested while it runs kills its
    process group and raises ``CancelledError`` (the commit then rolls back)."""
    env = dict(os.environ)
    env[VERIFYING_ENV] = root
    # Python caches bytecode by the source's size and mtime in whole seconds: a check that cached
    # a version the roll back then removed would run it again for a same-sized fix written within
    # that second (and pass or fail on the wrong code). A check writes no bytecode.
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    started = time.monotonic()
    proc = subprocess.Popen(
        ["/bin/sh", "-c", _GUARD, "patchtx-verify", command], cwd=root, env=env, stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, close_fds=True, start_new_session=True,
        preexec_fn=_die_with_parent(),  # noqa: PLW1509 - a prctl, nothing that takes a lock
    )
    assert proc.stdout is not None
    reader = _Tail(proc.stdout.fileno())
    timed_out = False
    try:
        deadline = started + timeout
        while proc.poll() is None:
            now = time.monotonic()
            left = deadline - now
            if left <= 0 or (cancel is not None and cancel.requested):
                timed_out = left <= 0
                _kill_group(proc.pid, signal.SIGKILL)
                proc.wait()
                break
            if progress is not None:
                progress("verifying", int(now - started), int(timeout))
            reader.read_for(min(_POLL, left))
        _kill_group(proc.pid, signal.SIGKILL)  # what it left running in its process group
        reader.drain(0.5)
    finally:
        if proc.poll() is None:  # an exception (Ctrl-C) while it ran: it must not outlive us
            _kill_group(proc.pid, signal.SIGKILL)
            proc.wait()
        proc.stdout.close()
    if cancel is not None:
        cancel.check(f"running the check `{command}` (stopped)")
    status = proc.returncode
    return VerifyOutcome(
        command=command,
        status=None if status is None or status < 0 else status,
        signal=-status if status is not None and status < 0 else None,
        timed_out=timed_out,
        seconds=time.monotonic() - started,
        output_tail=reader.text(),
    )


class _Tail:
    """The command's output, of which the last TAIL_BYTES are kept."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.open = True
        self.data = bytearray()

    def _ready(self, seconds: float) -> bool:
        """Whether the pipe has something to read (or is closed) within ``seconds``. poll, not
        select: select cannot watch a descriptor numbered 1024 or more, which a process with many
        files open hands out."""
        poller = select.poll()
        poller.register(self.fd, select.POLLIN)
        return bool(poller.poll(max(0, int(seconds * 1000))))

    def read_for(self, seconds: float) -> None:
        if not self.open:
            time.sleep(seconds)  # output closed (by a command that still runs): just wait
            return
        if self._ready(seconds):
            self._read()

    def _read(self) -> None:
        chunk = os.read(self.fd, 65536)
        if not chunk:
            self.open = False
            return
        self.data += chunk
        if len(self.data) > 2 * TAIL_BYTES:
            del self.data[:-TAIL_BYTES]

    def drain(self, seconds: float) -> None:
        """What is left in the pipe, for at most ``seconds`` (a process that escaped the group may
        hold it open)."""
        deadline = time.monotonic() + seconds
        while self.open:
            left = deadline - time.monotonic()
            if left <= 0 or not self._ready(left):
                return
            self._read()

    def text(self) -> str:
        data = bytes(self.data[-TAIL_BYTES:])
        text = data.decode("utf-8", "replace")
        lines = text.splitlines(keepends=True)
        if len(data) < len(self.data) or len(lines) > TAIL_LINES:
            lines = ["[...]\n", *lines[-TAIL_LINES:]]
        return "".join(lines)


def _kill_group(pgid: int, sig: int) -> None:
    try:
        os.killpg(pgid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def _die_with_parent() -> Any:
    """A preexec function that asks Linux to send TERM to the command's guard shell (``_GUARD``)
    when patchtx dies (None elsewhere): a crashed transaction must not leave its check running on
    a tree that recovery rolls back."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        prctl = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None
    parent = os.getpid()
    pr_set_pdeathsig = 1

    def die_with_parent() -> None:
        prctl(pr_set_pdeathsig, int(signal.SIGTERM), 0, 0, 0)
        if os.getppid() != parent:  # the parent died before the prctl: nobody waits for us
            os._exit(1)

    return die_with_parent


def changed_by_check(fs: FileSystemOps, dirs: DirectoryHandles, plan: Plan) -> tuple[str, ...]:
    """The plan's paths that no longer hold what the commit made of them (bytes, mode, presence),
    and the folders it removed that are there again."""
    changed = []
    for target in plan.targets:
        parent, _, name = target.path.rpartition("/")
        try:
            parent_fd = dirs.open(parent)
        except (OSError, UnsafePathError):  # gone, a file, or a link now
            if target.after is not None:
                changed.append(target.path)
            continue
        if target.after is None:
            if fs.lstat(parent_fd, name) is not None:
                changed.append(target.path)
            continue
        try:
            contents = fs.read_file(parent_fd, name, expected=target.after)
        except OSError:
            changed.append(target.path)
            continue
        if contents.data != target.after or (
                target.after_mode is not None
                and stat.S_IMODE(contents.stat.st_mode) != stat.S_IMODE(target.after_mode)):
            changed.append(target.path)
    for folder in plan.remove_dirs:  # a folder the patch removed: still absent (not a link out)
        parent, _, name = folder.rpartition("/")
        try:
            parent_fd = dirs.open(parent)
        except (OSError, UnsafePathError):
            continue
        if fs.lstat(parent_fd, name) is not None:
            changed.append(folder)
    return tuple(changed)


def refuse_inside_own_check(root: str, lock_file: str) -> None:
    """Called when the workspace lock is taken: if this process runs inside the verify command of
    a transaction on this very workspace, that transaction holds the lock until the command ends,
    so waiting for it can only time out. Say so at once."""
    if os.environ.get(VERIFYING_ENV) != root:
        return
    raise LockTimeoutError(
        f"patchtx is running inside the verify command of a transaction on {root}, which holds the"
        f" workspace lock {lock_file} until that command ends: a verify command cannot change the"
        " workspace it checks.",
        hint="Let the verify command only check (tests, linters, `patchtx check`); apply other"
             " patches before or after the verified one.",
        path=lock_file,
        details={"lock_file": lock_file, "inside_verify": True},
    )
