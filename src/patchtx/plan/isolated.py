"""A function run in a child process under limits: a crash, a hang or a runaway costs its answer
(``Failed``), never the caller.

What the syntax guard parses with native code it did not write (the tree-sitter grammars: a YAML
file of 300 nested mappings makes one write past a buffer and segfault) runs here, so that no
file's content can end ``patchtx check`` or a ``patchtx mcp`` server. One child serves every call
of a process (started on the first, again after a failure, and in a forked process of its own):
after the first call, a call costs a round trip through two pipes, not an interpreter's start.

The child is the caller's interpreter in isolated mode (``-I``: no environment variables, no user
site, not the working folder on the import path, so a workspace's files cannot stand in for a
module) with the caller's import path, started in ``/`` with its standard error discarded, no core
file and an address-space limit. It reads a request (a line of JSON, then the bytes it names) and
writes one line of JSON back, on a copy of its standard output: what native code prints to its
standard output goes nowhere instead of into an answer. The caller waits at most ``seconds`` for
the answer, then kills it; the child also limits its own CPU time per call, so that one left alone
by a caller killed mid-call ends too (one left idle ends when its input closes). The caller ends
its children when it exits (``stop_all``), which also counts their CPU time in the caller's (what a
benchmark of ``patchtx apply`` reads from the process it waited for).
"""

from __future__ import annotations

import atexit
import importlib
import json
import os
import resource
import select
import signal
import subprocess
import sys
import threading
import time
from typing import Any

_BOOT = ("import json, sys\n"
         "config = json.loads(sys.argv[1])\n"
         "sys.path[:] = config['path']\n"
         "from patchtx.plan.isolated import serve\n"
         "serve(config)\n")
_CHUNK = 1 << 16


class Failed(Exception):
    """The call got no answer: ``reason`` says why, as the end of a sentence ("crashed (SIGSEGV)",
    "took more than 10 s")."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class Isolated:
    """Calls of ``target`` (``"module:function"``, a function of a JSON value and bytes that
    returns a JSON value) in a child process, one at a time."""

    def __init__(self, target: str, *, seconds: float, memory: int, cpu: int | None = None) -> None:
        """``seconds``: how long the caller waits for an answer; ``memory``: the child's address
        space in bytes; ``cpu``: the CPU seconds the child allows itself per call (twice
        ``seconds`` unless given), for when its caller was killed while it worked."""
        self.target = target
        self.seconds = seconds
        self.memory = memory
        self.cpu = cpu if cpu is not None else max(1, int(seconds * 2))
        self._lock = threading.Lock()
        self._child: subprocess.Popen[bytes] | None = None
        self._owner = 0  # the process that started the child: a fork starts its own
        self._pending = b""

    def call(self, args: Any, *blobs: bytes | None) -> Any:
        """``target(args, *blobs)`` as the child answers it. Raises Failed."""
        header = json.dumps({"args": args, "sizes": [None if b is None else len(b) for b in blobs]})
        request = b"".join([header.encode(), b"\n", *(b for b in blobs if b)])
        with self._lock:
            child = self._running()
            deadline = time.monotonic() + self.seconds
            try:
                self._send(child, request, deadline)
                answer = self._answer(child, deadline)
            except TimeoutError:
                self.stop()
                raise Failed(f"took more than {self.seconds:g} s") from None
            except OSError:  # the child is gone (a broken pipe, its output closed)
                raise Failed(_ended(self.stop(grace=1.0))) from None
        try:
            answered = json.loads(answer)
        except ValueError:  # (only the child's loop writes there; a reply of no known shape is no answer)
            self.stop()
            raise Failed("answered something unreadable") from None
        if not isinstance(answered, dict) or not ("answer" in answered or "raised" in answered):
            self.stop()
            raise Failed("answered something unreadable")
        if "raised" in answered:
            raise Failed(f"failed ({answered['raised']})")
        return answered["answer"]

    def stop(self, grace: float = 0.0) -> int | None:
        """End the child (if any), after waiting up to ``grace`` seconds for it to end by itself
        (one whose output closed is ending: its own status says how, a kill would say SIGKILL);
        its exit status (negative: the signal that ended it)."""
        child, self._child, self._pending = self._child, None, b""
        if child is None or self._owner != os.getpid():
            return None
        try:
            child.wait(grace)
        except subprocess.TimeoutExpired:
            child.kill()
        status = child.wait()
        for pipe in (child.stdin, child.stdout):
            if pipe is not None:
                try:
                    pipe.close()
                except OSError:  # (the buffer of a pipe whose reader is gone)
                    pass
        return status

    def _running(self) -> subprocess.Popen[bytes]:
        if self._child is not None and self._owner == os.getpid() and self._child.poll() is None:
            return self._child
        if self._owner == os.getpid():
            self.stop()  # (one that ended between calls: reaped)
        self._child, self._pending = None, b""
        config = {"path": [p for p in sys.path if os.path.isabs(p)], "target": self.target,
                  "memory": self.memory, "cpu": self.cpu}
        try:
            child = subprocess.Popen([sys.executable, "-I", "-c", _BOOT, json.dumps(config)], cwd="/",
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                     close_fds=True)
        except OSError as exc:
            raise Failed(f"could not start a process to run in ({exc.strerror or exc})") from None
        assert child.stdin is not None and child.stdout is not None
        os.set_blocking(child.stdin.fileno(), False)
        _CALLERS.add(self)
        self._child, self._owner = child, os.getpid()
        return child

    def _send(self, child: subprocess.Popen[bytes], data: bytes, deadline: float) -> None:
        assert child.stdin is not None
        fd, view, sent = child.stdin.fileno(), memoryview(data), 0
        while sent < len(data):
            _wait(fd, select.POLLOUT, deadline)
            try:
                sent += os.write(fd, view[sent:sent + _CHUNK])
            except BlockingIOError:
                continue

    def _answer(self, child: subprocess.Popen[bytes], deadline: float) -> bytes:
        assert child.stdout is not None
        fd = child.stdout.fileno()
        while b"\n" not in self._pending:
            _wait(fd, select.POLLIN, deadline)
            chunk = os.read(fd, _CHUNK)
            if not chunk:
                raise BrokenPipeError("the child closed its output")
            self._pending += chunk
        line, _, self._pending = self._pending.partition(b"\n")
        return line


_CALLERS: set[Isolated] = set()
"""Every Isolated that started a child, held to the end (a process makes one for its grammars)."""


def stop_all() -> None:
    """End every child of this process: at its exit (the interpreter's, and a one-shot command's
    ``os._exit``, which skips it: ``oneshot.finish_process``), so that no child outlives its caller
    and the children's CPU time is counted in the caller's."""
    for caller in list(_CALLERS):
        caller.stop()  # (a child of another process, after a fork, is left alone)


atexit.register(stop_all)


def _wait(fd: int, event: int, deadline: float) -> None:
    """Until ``fd`` is ready for ``event`` (or closed), at most until ``deadline``: TimeoutError.
    poll, not select: select cannot watch a descriptor numbered 1024 or more."""
    poller = select.poll()
    poller.register(fd, event)
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError
        if poller.poll(max(1, int(left * 1000))):
            return


def _ended(status: int | None) -> str:
    if status is not None and status < 0:
        try:
            name = signal.Signals(-status).name
        except ValueError:
            name = f"signal {-status}"
        return f"crashed ({name})"
    return f"stopped (exit status {status})"


# -- the child ---------------------------------------------------------------------------------------

def serve(config: dict[str, Any]) -> None:
    """The child's loop: a request on standard input, the answer on standard output, until its
    input closes."""
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))  # a crash must leave no core file anywhere
    _set_soft(resource.RLIMIT_AS, config["memory"])
    # The answers go out on a copy of standard output; descriptor 1 itself (sys.stdout's too) points
    # at nothing, so that what a grammar or its bindings print cannot be read as an answer.
    answers = os.fdopen(os.dup(1), "wb")
    nowhere = os.open(os.devnull, os.O_WRONLY)
    os.dup2(nowhere, 1)
    os.close(nowhere)
    module, _, name = config["target"].partition(":")
    target = getattr(importlib.import_module(module), name)
    given = sys.stdin.buffer
    while True:
        header = given.readline()
        if not header:
            return
        request = json.loads(header)
        blobs = [None if size is None else given.read(size) for size in request["sizes"]]
        used = resource.getrusage(resource.RUSAGE_SELF)
        _set_soft(resource.RLIMIT_CPU, int(used.ru_utime + used.ru_stime) + config["cpu"])
        try:
            answer = {"answer": target(request["args"], *blobs)}
        except Exception as exc:  # (MemoryError included: the limit above)
            answer = {"raised": f"{type(exc).__name__}: {str(exc)[:200]}"}
        answers.write(json.dumps(answer).encode() + b"\n")
        answers.flush()


def _set_soft(limit: int, soft: int) -> None:
    """Set ``limit``'s soft value to ``soft`` (never above its hard value)."""
    _, hard = resource.getrlimit(limit)
    resource.setrlimit(limit, (soft if hard == resource.RLIM_INFINITY else min(soft, hard), hard))
