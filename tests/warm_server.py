"""MCP servers for the tests, started from a warm process: each server is still a real, separate
process that runs ``python -m patchtx.agents.mcp_server ARGS`` from its first line (the module is
executed afresh as ``__main__``, in the working folder and environment the test gives, on the
descriptors the SDK's client opened), talks over real pipes and exits; only the imports it shares
with every other server (the ``mcp`` SDK, pydantic, patchtx) are already done.

Why: importing the ``mcp`` SDK costs 2.5 to 3 s of CPU per process on the project's 2-core machine
(it builds its pydantic models at import), and the tests start dozens of servers: tests/security
alone took 142 s of CPU with a fresh interpreter per server, 89 s with servers forked from a warm
one (one process, the 2-core machine under load). A fresh interpreter per server stays one option
away: pytest's ``--fresh-servers`` (or ``PATCHTX_TEST_FRESH_SERVERS=1``) starts every server as
``python -m patchtx.agents.mcp_server`` again. Tests of how a host starts the command itself
(``patchtx mcp`` in tests/integrations/test_cli_wiring.py, the raw JSON-RPC tests) always start it
fresh.

How: one "zygote" per test process (each xdist worker) imports the server's modules once, then
waits on a UNIX socket. ``parameters()`` returns the SDK's StdioServerParameters for a small
launcher (this file run with ``python -S``, standard library only) that passes its standard
input, output and error descriptors, argument list, working folder and environment to the zygote;
the zygote forks, the child puts them in place and runs the server module as ``__main__``; the
launcher relays signals to the server and exits with its status. The zygote holds no state of a
test: it only imported modules (patchtx reads its environment when called, never at import).
"""

from __future__ import annotations

import array
import atexit
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile

SERVER_MODULE = "patchtx.agents.mcp_server"
_FRESH_VARIABLE = "PATCHTX_TEST_FRESH_SERVERS"
_MAX_MESSAGE = 1 << 20


# -- the test side -----------------------------------------------------------------------------------

_zygote: tuple[subprocess.Popen[bytes], str] | None = None  # (the zygote's Popen, its socket path), per test process


def parameters(args: list[str], *, cwd: str, env: dict[str, str] | None = None) -> object:
    """The SDK's StdioServerParameters for ``python -m patchtx.agents.mcp_server ARGS``."""
    from mcp import StdioServerParameters

    if os.environ.get(_FRESH_VARIABLE) == "1":
        return StdioServerParameters(command=sys.executable, args=["-m", SERVER_MODULE, *args], cwd=cwd, env=env)
    return StdioServerParameters(command=sys.executable, args=["-S", __file__, "launch", _zygote_socket(), *args],
                                 cwd=cwd, env=env)


def _zygote_socket() -> str:
    global _zygote
    if _zygote is not None and _zygote[0].poll() is None:
        return _zygote[1]
    path = os.path.join(tempfile.mkdtemp(prefix="patchtx-zygote-"), "socket")
    # Standard input is a pipe that only this process holds: at its end (the test process exits,
    # however it exits), the zygote sees end of input and stops.
    process = subprocess.Popen([sys.executable, __file__, "serve", path], stdin=subprocess.PIPE,
                               stdout=subprocess.PIPE, env=os.environ.copy())
    assert process.stdout is not None
    ready = process.stdout.readline()
    assert ready == b"ready\n", f"the MCP server zygote did not start ({ready!r})"
    _zygote = (process, path)
    atexit.register(_stop, process)
    return path


def _stop(process: subprocess.Popen[bytes]) -> None:
    """End the zygote with the test process (and account for its time there)."""
    assert process.stdin is not None
    process.stdin.close()
    process.wait(timeout=30)


# -- the zygote --------------------------------------------------------------------------------------


def serve(path: str) -> None:
    """Import the server's modules, then fork one server per launcher that connects to ``path``."""
    import importlib
    import selectors

    importlib.import_module(SERVER_MODULE)
    # Forget the module itself (everything it imported stays): each server executes it afresh as
    # __main__, as ``python -m`` does, so no module-level state is shared.
    del sys.modules[SERVER_MODULE]
    package = sys.modules[SERVER_MODULE.rpartition(".")[0]]
    if hasattr(package, "mcp_server"):
        delattr(package, "mcp_server")

    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)
    listener.listen(64)
    wake_read, wake_write = os.pipe()
    os.set_blocking(wake_read, False)
    os.set_blocking(wake_write, False)
    signal.set_wakeup_fd(wake_write)
    signal.signal(signal.SIGCHLD, lambda *_: None)
    selector = selectors.DefaultSelector()
    selector.register(listener, selectors.EVENT_READ, "connect")
    selector.register(wake_read, selectors.EVENT_READ, "child")
    selector.register(0, selectors.EVENT_READ, "parent")
    launchers: dict[int, socket.socket] = {}
    sys.stdout.write("ready\n")
    sys.stdout.flush()
    while True:
        for key, _ in selector.select():
            if key.data == "parent":
                if not os.read(0, 4096):  # the test process has gone
                    os.unlink(path)
                    return
            elif key.data == "child":
                while True:
                    try:
                        os.read(wake_read, 4096)
                    except BlockingIOError:
                        break
                _reap(launchers)
            else:
                conn, _ = listener.accept()
                message, fds = _receive(conn)
                pid = os.fork()
                if pid == 0:  # pragma: no cover - the server process
                    selector.close()
                    listener.close()
                    os.close(wake_read)
                    os.close(wake_write)
                    for other in launchers.values():
                        other.close()
                    _become_server(conn, message, fds)  # never returns
                for fd in fds:
                    os.close(fd)
                conn.sendall(b"%d\n" % pid)
                launchers[pid] = conn
        _reap(launchers)


def _reap(launchers: dict[int, socket.socket]) -> None:
    while launchers:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
        conn = launchers.pop(pid, None)
        if conn is not None:
            try:
                conn.sendall(b"%d\n" % status)
            except OSError:
                pass
            conn.close()


def _become_server(conn: socket.socket, message: dict[str, object], fds: list[int]) -> None:
    signal.set_wakeup_fd(-1)
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    conn.close()
    for target, fd in enumerate(fds):
        os.dup2(fd, target)
    for fd in fds:
        if fd > 2:
            os.close(fd)
    os.chdir(str(message["cwd"]))
    os.environ.clear()
    os.environ.update(message["env"])  # type: ignore[arg-type]
    # As ``python -m``: the module's folder search starts at the working folder.
    sys.path[0] = os.getcwd()
    import runpy

    sys.argv = ["-m", *message["argv"]]  # type: ignore[misc]
    # Raises SystemExit (the server's exit status), which ends this process as it ends any
    # interpreter: atexit handlers, threads joined, output flushed.
    runpy.run_module(SERVER_MODULE, run_name="__main__", alter_sys=True)
    sys.exit(0)


def _receive(conn: socket.socket) -> tuple[dict[str, object], list[int]]:
    fds = array.array("i")
    data, ancillary, _flags, _addr = conn.recvmsg(_MAX_MESSAGE, socket.CMSG_LEN(3 * fds.itemsize))
    for level, kind, payload in ancillary:
        if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
            fds.frombytes(payload[: len(payload) - len(payload) % fds.itemsize])
    while not data.endswith(b"\n"):
        more = conn.recv(_MAX_MESSAGE)
        if not more:
            break
        data += more
    return json.loads(data), list(fds)


# -- the launcher (the command the SDK's client starts) -----------------------------------------------


def launch(path: str, argv: list[str]) -> None:
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    conn.connect(path)
    message = json.dumps({"argv": argv, "cwd": os.getcwd(), "env": dict(os.environ)}).encode() + b"\n"
    conn.sendmsg([message], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", [0, 1, 2]))])
    reader = conn.makefile("rb")
    pid = int(reader.readline())

    def relay(signum: int, _frame: object) -> None:
        try:
            os.kill(pid, signum)
        except ProcessLookupError:
            pass

    for signum in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(signum, relay)
    line = reader.readline()
    if not line.strip():
        sys.stderr.write("tests/warm_server.py: the zygote ended before the server did\n")
        os._exit(70)
    status = int(line)
    if os.WIFSIGNALED(status):
        signum = os.WTERMSIG(status)
        signal.signal(signum, signal.SIG_DFL)
        os.kill(os.getpid(), signum)
    os._exit(os.waitstatus_to_exitcode(status))


if __name__ == "__main__":
    if sys.argv[1] == "serve":
        serve(sys.argv[2])
    else:
        launch(sys.argv[2], sys.argv[3:])
